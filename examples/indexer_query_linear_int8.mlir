// DeepSeek-V4 lightning_indexer_prolog_quant_v4, Query-Linear (AT-11: V -> Quant -> C ->
// Dequant). qr [t, 1024] bf16 is normalised and quantised per token to int8; the int8
// weight idx_wq_b [8192, 1024] (b_trans, NONE_CACHEABLE) gives int32, dequantised by
// the per-token scale and the per-channel weight scale [8192, 1] f32.
func.func @query_linear_int8(%qr: tensor<?x1024xbf16>, %gamma: tensor<1024xbf16>,
                             %w: tensor<8192x1024xi8> {pto.cache = #pto.cache<none_cacheable>},
                             %w_scale: tensor<8192x1xf32>) -> tensor<?x8192xbf16>
    attributes {pto.target = "ascend910b1", pto.unroll = array<i64: 128, 64, 32, 16, 8, 1>,
                pto.options = {cube_l1_reuse_setting = {"-1" = 2, "1" = 1}, vec_nbuffer_setting = {"0" = 2}}} {
  %n = pto.rms_norm %qr, %gamma eps = 1.0e-06 {pto.label = "q-rmsnorm"} : tensor<?x1024xbf16>, tensor<1024xbf16> -> tensor<?x1024xf32>
  %q, %s = pto.quant %n {pto.label = "Query-Quant"} : tensor<?x1024xf32> -> tensor<?x1024xi8>, tensor<?x1xf32>
  %acc = pto.matmul %q, %w b_trans {pto.label = "Query-Linear", pto.cube_tile = #pto.cube_tile<m = [128, 128], k = [256, 1024], n = [256, 256]>} : tensor<?x1024xi8>, tensor<8192x1024xi8> -> tensor<?x8192xi32>
  %d = pto.dequant %acc, %s, %w_scale {pto.label = "Query-Dequant"} : tensor<?x8192xi32>, tensor<?x1xf32>, tensor<8192x1xf32> -> tensor<?x8192xf32>
  %o = pto.cast %d rint : tensor<?x8192xf32> -> tensor<?x8192xbf16>
  func.return %o : tensor<?x8192xbf16>
}
