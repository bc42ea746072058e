// Rows of weights passed whole: the second gamma of two, the second half of a weight.
func.func @weight_rows(%x: tensor<?x64xbf16>, %gammas: tensor<128xbf16>, %w: tensor<64x64xbf16>) -> tensor<?x32xbf16> {
  %g = pto.view %gammas at [64] : tensor<128xbf16> -> tensor<64xbf16>
  %n = pto.rms_norm %x, %g eps = 1.0e-06 : tensor<?x64xbf16>, tensor<64xbf16> -> tensor<?x64xf32>
  %nb = pto.cast %n rint : tensor<?x64xf32> -> tensor<?x64xbf16>
  %w1 = pto.view %w at [32, 0] : tensor<64x64xbf16> -> tensor<32x64xbf16>
  %a = pto.matmul %nb, %w1 b_trans : tensor<?x64xbf16>, tensor<32x64xbf16> -> tensor<?x32xf32>
  %c = pto.cast %a rint : tensor<?x32xf32> -> tensor<?x32xbf16>
  func.return %c : tensor<?x32xbf16>
}
