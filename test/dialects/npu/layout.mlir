// RUN: pto-opt %s | pto-opt | filecheck %s
// RUN: %ROUNDTRIP | filecheck %s
// An NZ weight at the npu level: its GM buffer is marked, and the cube's copy-in reads it.

// CHECK-LABEL: func.func @k
// CHECK-SAME: %w: !npu.buf<32x64xbf16, gm> {npu.layout = #pto.layout<nz>}
func.func @k(%w: !npu.buf<32x64xbf16, gm> {npu.layout = #pto.layout<nz>}) {
  npu.launch cube 1 (%c) {
    %b = npu.alloc l1 [0] : !npu.buf<32x32xbf16, l1>
    // CHECK: npu.dma mte2 %w[0, 32] -> %{{.*}}[0, 0] : !npu.buf<32x64xbf16, gm> -> !npu.buf<32x32xbf16, l1>
    npu.dma mte2 %w[0, 32] -> %b[0, 0] : !npu.buf<32x64xbf16, gm> -> !npu.buf<32x32xbf16, l1>
  }
  func.return
}
