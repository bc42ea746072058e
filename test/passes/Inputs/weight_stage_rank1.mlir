// A weight stage reading a rank-1 weight: tile-assign-shapes tiles it (the [N] weight aligned
// with the last axis), and tile-to-npu loads each task's columns of it (tile-assign-shapes.mlir).
func.func @weight_stage_rank1(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>, %g: tensor<32xf32>, %out: tensor<?x32xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xf32>
  %ww = tile.load %w : tensor<64x32xf32> -> tensor<64x32xf32>
  %gg = tile.load %g : tensor<32xf32> -> tensor<32xf32>
  %s = tile.vec_stage "weight" tile [16, 32] nbuffer 1 -> (tensor<64x32xf32>) {
    %r = tile.mul %ww, %gg : tensor<64x32xf32>, tensor<32xf32> -> tensor<64x32xf32>
    tile.yield %r : tensor<64x32xf32>
  }
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x64xf32> -> tensor<16x64xf32>
    %st = tile.load %s : tensor<64x32xf32> -> tensor<64x32xf32>
    %y = tile.cube_stage "linear" tiles <m = [16, 16], k = [64, 64], n = [32, 32]> -> (tensor<16x32xf32>) {
      %m = tile.matmul %xt, %st : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
      tile.yield %m : tensor<16x32xf32>
    }
    tile.store %y, %out[%i] : tensor<16x32xf32> -> tensor<?x32xf32>
  }
  func.return
}
