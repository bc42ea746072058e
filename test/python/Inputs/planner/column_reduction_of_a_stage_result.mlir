func.func @k(%x: tensor<?x4096xbf16>, %gamma: tensor<4096xbf16>, %w: tensor<256x4096xbf16>,
             %out: tensor<?x256xbf16> {pto.output}) attributes {pto.target = "ascend910b1"} {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x4096xbf16>
  tile.token_loop %i = %c0 to %t step 16 tail {
    %xt = tile.load %x[%i] : tensor<?x4096xbf16> -> tensor<16x4096xbf16>
    %g = tile.load %gamma : tensor<4096xbf16> -> tensor<4096xbf16>
    %xf0 = tile.vec_stage "a" tile [4, 1024] -> (tensor<16x4096xf32>) {
      %xf = tile.cast %xt none : tensor<16x4096xbf16> -> tensor<16x4096xf32>
      tile.yield %xf : tensor<16x4096xf32>
    }
    %bt = tile.vec_stage "b" tile [4, 1024] -> (tensor<16x4096xbf16>) {
      %nt = tile.rms_norm %xf0, %g eps = 1.0e-06 : tensor<16x4096xf32>, tensor<4096xbf16> -> tensor<16x4096xf32>
      %b = tile.cast %nt rint : tensor<16x4096xf32> -> tensor<16x4096xbf16>
      tile.yield %b : tensor<16x4096xbf16>
    }
    %yt = tile.cube_stage "linear" -> (tensor<16x256xbf16>) {
      %y = tile.matmul %bt, %w b_trans : tensor<16x4096xbf16>, tensor<256x4096xbf16> -> tensor<16x256xf32>
      %o = tile.cast %y rint : tensor<16x256xf32> -> tensor<16x256xbf16>
      tile.yield %o : tensor<16x256xbf16>
    }
    tile.store %yt, %out[%i] : tensor<16x256xbf16> -> tensor<?x256xbf16>
  }
  func.return
}
