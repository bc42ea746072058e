// RMSNorm and the cast to bf16 as two labelled vector stages before the matmul, as
// PyPTO's standard template writes them.
func.func @std(%x: tensor<?x64xbf16>, %g: tensor<64xbf16>, %w: tensor<32x64xbf16>) -> tensor<?x32xbf16>
    attributes {pto.target = "ascend910b1", pto.unroll = array<i64: 8, 1>} {
  %r = pto.rms_norm %x, %g eps = 1.0e-06 {pto.label = "rmsnorm", pto.vec_tile = array<i64: 4, 64>} : tensor<?x64xbf16>, tensor<64xbf16> -> tensor<?x64xf32>
  %b = pto.cast %r rint {pto.label = "cast", pto.vec_tile = array<i64: 4, 64>} : tensor<?x64xf32> -> tensor<?x64xbf16>
  %y = pto.matmul %b, %w b_trans {pto.label = "linear"} : tensor<?x64xbf16>, tensor<32x64xbf16> -> tensor<?x32xbf16>
  func.return %y : tensor<?x32xbf16>
}
