// RUN: pto-opt %s -p canonicalize | filecheck %s

// `canonicalize` is xDSL's: the canonicalization patterns of the ops that have them
// (arith's; the pto, tile and npu ops have none), constant folding, and dead code
// elimination, which removes an unused op only if it is pure. Every pto op and tile
// compute op is pure; tile loads, stages and stores are not, and the npu ops declare
// no effects: they are all kept.

// An unused pto op goes; the rest is left as it is.
// CHECK-LABEL: func.func @pto_level
// CHECK-NEXT:    %y = pto.matmul %x, %w b_trans : tensor<?x64xf32>, tensor<32x64xf32> -> tensor<?x32xf32>
// CHECK-NEXT:    func.return %y : tensor<?x32xf32>
// CHECK-NEXT:  }
func.func @pto_level(%x: tensor<?x64xf32>, %w: tensor<32x64xf32>) -> tensor<?x32xf32> {
  %dead = pto.abs %x : tensor<?x64xf32> -> tensor<?x64xf32>
  %y = pto.matmul %x, %w b_trans : tensor<?x64xf32>, tensor<32x64xf32> -> tensor<?x32xf32>
  func.return %y : tensor<?x32xf32>
}

// A loop bound of constants is folded; an unused tensor.dim and an unused tile op in a
// stage go; loads (an unused one too), stages and stores stay.
// CHECK-LABEL: func.func @tile_level
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %end = arith.constant 16 : index
// CHECK-NEXT:    tile.token_loop %i = %c0 to %end step 16 {
// CHECK-NEXT:      %xt = tile.load %x[%i] : tensor<?x64xf32> -> tensor<16x64xf32>
// CHECK-NEXT:      %wt = tile.load %w : tensor<64x32xf32> -> tensor<64x32xf32>
// CHECK-NEXT:      %y = tile.cube_stage "linear" -> (tensor<16x32xf32>) {
// CHECK-NEXT:        %m = tile.matmul %xt, %w : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
// CHECK-NEXT:        tile.yield %m : tensor<16x32xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      tile.store %y, %out[%i] : tensor<16x32xf32> -> tensor<?x32xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
func.func @tile_level(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>, %out: tensor<?x32xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %end = arith.addi %c8, %c8 : index
  %unused = tensor.dim %x, %c0 : tensor<?x64xf32>
  tile.token_loop %i = %c0 to %end step 16 {
    %xt = tile.load %x[%i] : tensor<?x64xf32> -> tensor<16x64xf32>
    %wt = tile.load %w : tensor<64x32xf32> -> tensor<64x32xf32>
    %y = tile.cube_stage "linear" -> (tensor<16x32xf32>) {
      %m = tile.matmul %xt, %w : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
      %d = tile.abs %m : tensor<16x32xf32> -> tensor<16x32xf32>
      tile.yield %m : tensor<16x32xf32>
    }
    tile.store %y, %out[%i] : tensor<16x32xf32> -> tensor<?x32xf32>
  }
  func.return
}

// Index arithmetic in a core program is folded (4 * 0 -> 0); unused npu ops stay.
// CHECK-LABEL: func.func @npu_level
// CHECK-NEXT:    npu.launch vector 1 (%v) {
// CHECK-NEXT:      %r = arith.constant 0 : index
// CHECK-NEXT:      %n = npu.dim %x, 0 : !npu.buf<8x64xf32, gm>
// CHECK-NEXT:      %u = npu.alloc ub [0] : !npu.buf<8x64xf32, ub>
// CHECK-NEXT:      %a = npu.alloc ub [2048] : !npu.buf<8x64xf32, ub>
// CHECK-NEXT:      %h = npu.view %x at [4, 0] : !npu.buf<8x64xf32, gm> -> !npu.buf<4x64xf32, gm>
// CHECK-NEXT:      npu.dma mte2 %x[%r, 0] -> %a[0, 0] : !npu.buf<8x64xf32, gm> -> !npu.buf<8x64xf32, ub>
// CHECK-NEXT:      npu.set_flag mte2 -> mte3, 0
// CHECK-NEXT:      npu.wait_flag mte2 -> mte3, 0
// CHECK-NEXT:      npu.dma mte3 %a[0, 0] -> %out[0, 0] : !npu.buf<8x64xf32, ub> -> !npu.buf<8x64xf32, gm>
// CHECK-NEXT:    }
func.func @npu_level(%x: !npu.buf<8x64xf32, gm>, %out: !npu.buf<8x64xf32, gm> {pto.output}) {
  npu.launch vector 1 (%v) {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %r = arith.muli %c4, %c0 : index
    %n = npu.dim %x, 0 : !npu.buf<8x64xf32, gm>
    %u = npu.alloc ub [0] : !npu.buf<8x64xf32, ub>
    %a = npu.alloc ub [2048] : !npu.buf<8x64xf32, ub>
    %h = npu.view %x at [4, 0] : !npu.buf<8x64xf32, gm> -> !npu.buf<4x64xf32, gm>
    npu.dma mte2 %x[%r, 0] -> %a[0, 0] : !npu.buf<8x64xf32, gm> -> !npu.buf<8x64xf32, ub>
    npu.set_flag mte2 -> mte3, 0
    npu.wait_flag mte2 -> mte3, 0
    npu.dma mte3 %a[0, 0] -> %out[0, 0] : !npu.buf<8x64xf32, ub> -> !npu.buf<8x64xf32, gm>
  }
  func.return
}
