// DeepSeek-V4 mla_prolog_v4, wqa-linear -> q-rmsnorm: the C -> V order (matmul first).
// x [t, 4096] bf16, wq_a [4096, 1024] bf16, gamma_cq [1024]; out qr [t, 1024] bf16.
// Pinned as in the reference kernel: unroll [128,64,32,16,1], cube m=[32,32]
// k=[512,512] n=[64,64], vector tile (8, 1024).
func.func @mla_wqa_qrmsnorm(%x: tensor<?x4096xbf16>, %wq_a: tensor<4096x1024xbf16>, %gamma_cq: tensor<1024xbf16>) -> tensor<?x1024xbf16>
    attributes {pto.target = "ascend910b1", pto.unroll = array<i64: 128, 64, 32, 16, 1>} {
  %q = pto.matmul %x, %wq_a {pto.label = "wqa-linear", pto.cube_tile = #pto.cube_tile<m = [32, 32], k = [512, 512], n = [64, 64]>} : tensor<?x4096xbf16>, tensor<4096x1024xbf16> -> tensor<?x1024xbf16>
  %qr = pto.rms_norm %q, %gamma_cq eps = 1.0e-06 {pto.label = "q-rmsnorm", pto.vec_tile = array<i64: 8, 1024>} : tensor<?x1024xbf16>, tensor<1024xbf16> -> tensor<?x1024xf32>
  %o = pto.cast %qr rint : tensor<?x1024xf32> -> tensor<?x1024xbf16>
  func.return %o : tensor<?x1024xbf16>
}
