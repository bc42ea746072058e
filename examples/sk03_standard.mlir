// SK-03, the standard form (V -> C): RMSNorm -> bf16 -> MatMul (b_trans) -> bf16.
// x [t, 4096] bf16, gamma [4096], weight [1024, 4096] read once per token tile, so
// it is marked NONE_CACHEABLE (it need not occupy L2 and evict activations).
func.func @linear_projection(%x: tensor<?x4096xbf16>, %gamma: tensor<4096xbf16>,
                             %w: tensor<1024x4096xbf16> {pto.cache = #pto.cache<none_cacheable>}) -> tensor<?x1024xbf16>
    attributes {pto.target = "ascend910b1"} {
  %n = pto.rms_norm %x, %gamma eps = 1.0e-06 {pto.label = "rmsnorm"} : tensor<?x4096xbf16>, tensor<4096xbf16> -> tensor<?x4096xf32>
  %nb = pto.cast %n rint : tensor<?x4096xf32> -> tensor<?x4096xbf16>
  %y = pto.matmul %nb, %w b_trans {pto.label = "linear"} : tensor<?x4096xbf16>, tensor<1024x4096xbf16> -> tensor<?x1024xf32>
  %o = pto.cast %y rint : tensor<?x1024xf32> -> tensor<?x1024xbf16>
  func.return %o : tensor<?x1024xbf16>
}
