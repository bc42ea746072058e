func.func @k(%x: tensor<?x1024xbf16>, %gamma: tensor<1024xbf16>, %w: tensor<256x1024xbf16>,
             %out: tensor<?x256xbf16> {pto.output}, %out2: tensor<?x1024xbf16> {pto.output}) attributes {pto.target = "ascend910b1"} {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x1024xbf16>
  tile.token_loop %i = %c0 to %t step 16 tail {
    %xt = tile.load %x[%i] : tensor<?x1024xbf16> -> tensor<16x1024xbf16>
    %x2t = tile.load %x[%i] : tensor<?x1024xbf16> -> tensor<16x1024xbf16>
    %g = tile.load %gamma : tensor<1024xbf16> -> tensor<1024xbf16>
    %bt, %xc = tile.vec_stage "norm" -> (tensor<16x1024xbf16>, tensor<16x1024xbf16>) {
      %nt = tile.rms_norm %xt, %g eps = 1.0e-06 : tensor<16x1024xbf16>, tensor<1024xbf16> -> tensor<16x1024xf32>
      %b = tile.cast %nt rint : tensor<16x1024xf32> -> tensor<16x1024xbf16>
      tile.yield %b, %x2t : tensor<16x1024xbf16>, tensor<16x1024xbf16>
    }
    %yt = tile.cube_stage "linear" -> (tensor<16x256xbf16>) {
      %y = tile.matmul %bt, %w b_trans : tensor<16x1024xbf16>, tensor<256x1024xbf16> -> tensor<16x256xf32>
      %o = tile.cast %y rint : tensor<16x256xf32> -> tensor<16x256xbf16>
      tile.yield %o : tensor<16x256xbf16>
    }
    tile.store %yt, %out[%i] : tensor<16x256xbf16> -> tensor<?x256xbf16>
    tile.store %xc, %out2[%i] : tensor<16x1024xbf16> -> tensor<?x1024xbf16>
  }
  func.return
}
