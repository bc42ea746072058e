// A tile-level kernel whose one token loop has a tail: the last body has fewer rows
// than its step (tests: test_interp_e2e.py::test_tail_body).
func.func @k(%x: tensor<?x256xbf16>, %g: tensor<256xbf16>, %w: tensor<64x256xbf16>, %out: tensor<?x64xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x256xbf16>
  tile.token_loop %i = %c0 to %t step 32 tail {
    %xt = tile.load %x[%i] : tensor<?x256xbf16> -> tensor<32x256xbf16>
    %gt = tile.load %g : tensor<256xbf16> -> tensor<256xbf16>
    %n = tile.vec_stage "norm" tile [4, 256] -> (tensor<32x256xbf16>) {
      %r = tile.rms_norm %xt, %gt eps = 1.0e-06 : tensor<32x256xbf16>, tensor<256xbf16> -> tensor<32x256xf32>
      %b = tile.cast %r rint : tensor<32x256xf32> -> tensor<32x256xbf16>
      tile.yield %b : tensor<32x256xbf16>
    }
    %y = tile.cube_stage "linear" tiles <m = [16, 16], k = [64, 256], n = [64, 64]> -> (tensor<32x64xf32>) {
      %m = tile.matmul %n, %w b_trans : tensor<32x256xbf16>, tensor<64x256xbf16> -> tensor<32x64xf32>
      tile.yield %m : tensor<32x64xf32>
    }
    tile.store %y, %out[%i] : tensor<32x64xf32> -> tensor<?x64xf32>
  }
  func.return
}
