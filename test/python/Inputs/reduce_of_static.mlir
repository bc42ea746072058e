// A tile-level kernel whose vector stage reduces a static tensor (a fuzzed mutation of
// test/passes/tile-unroll.mlir): tile-to-npu emitted a vreduce its verifier rejected.
func.func @dynamic(%x: tensor<?x64xf32>, %g: tensor<1x64xf32>, %w: tensor<64x32xf32>, %out: tensor<?x32xf32>, %smax: tensor<?x1xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xf32>
  tile.token_loop %i = %c0 to %t step 1 {
    %xt = tile.load %x[%i] : tensor<?x64xf32> -> tensor<1x64xf32>
    %gt = tile.load %g : tensor<1x64xf32> -> tensor<1x64xf32>
    %n, %s = tile.vec_stage "norm" -> (tensor<1x64xf32>, tensor<1x1xf32>) {
      %a = tile.mul %xt, %gt : tensor<1x64xf32>, tensor<1x64xf32> -> tensor<1x64xf32>
      %r = tile.reduce max %g : tensor<1x64xf32> -> tensor<1x1xf32>
      tile.yield %a, %r : tensor<1x64xf32>, tensor<1x1xf32>
    }
    %y = tile.cube_stage "linear" -> (tensor<1x32xf32>) {
      %m = tile.matmul %n, %w : tensor<1x64xf32>, tensor<64x32xf32> -> tensor<1x32xf32>
      tile.yield %m : tensor<1x32xf32>
    }
    tile.store %y, %out[%i] : tensor<1x32xf32> -> tensor<?x32xf32>
    tile.store %s, %smax[%i] : tensor<1x1xf32> -> tensor<?x1xf32>
  }
  func.return
}

