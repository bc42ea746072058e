// RUN: python -c "import numpy as np; np.save('%t.npy', np.zeros((8, 64), np.float32))"
// RUN: not pto-run %s --input %t.npy 2>&1 | filecheck %s

// An npu-level kernel that reads past the end of its input: the error names the op,
// the buffer and its size, at the op's location.
func.func @oob(%x: !npu.buf<8x64xf32, gm>, %out: !npu.buf<8x64xf32, gm> {pto.output}) {
  npu.launch vector 1 (%v) {
    %a = npu.alloc ub [0] : !npu.buf<8x64xf32, ub>
    %i = arith.constant 4 : index
    npu.dma mte2 %x[%i, 0] -> %a[0, 0] : !npu.buf<8x64xf32, gm> -> !npu.buf<8x64xf32, ub>
  }
  func.return
}
// CHECK: runtime-errors.mlir:10:5: error: 'npu.dma' source [4, +8) of axis 0 is outside x (8x64, 2048 bytes)
// CHECK-NEXT: npu.dma mte2 %x[%i, 0]
// CHECK-NEXT: ^
