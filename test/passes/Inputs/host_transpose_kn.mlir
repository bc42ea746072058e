// A weight the matmul reads as [K, N] (no b_trans) with the host-transpose hint.
func.func @kn(%x: tensor<?x64xbf16>, %w: tensor<64x32xbf16> {pto.host_transpose = true}) -> tensor<?x32xf32> {
  %y = pto.matmul %x, %w : tensor<?x64xbf16>, tensor<64x32xbf16> -> tensor<?x32xf32>
  func.return %y : tensor<?x32xf32>
}
