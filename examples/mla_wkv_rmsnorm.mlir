// DeepSeek-V4 mla_prolog_v4, wkv-linear -> rmsnorm (C -> V, N = 512).
// x [t, 4096], wkv [4096, 512], gamma_ckv [512], all bf16; cube m=[32,32] k=[256,256]
// n=[128,128]; vector tile (4, 64) as in the reference kernel.
func.func @mla_wkv_rmsnorm(%x: tensor<?x4096xbf16>, %wkv: tensor<4096x512xbf16>, %gamma_ckv: tensor<512xbf16>) -> tensor<?x512xbf16>
    attributes {pto.target = "ascend910b1", pto.unroll = array<i64: 128, 64, 32, 16, 1>} {
  %kv = pto.matmul %x, %wkv {pto.label = "wkv-linear", pto.cube_tile = #pto.cube_tile<m = [32, 32], k = [256, 256], n = [128, 128]>} : tensor<?x4096xbf16>, tensor<4096x512xbf16> -> tensor<?x512xbf16>
  %n = pto.rms_norm %kv, %gamma_ckv eps = 1.0e-06 {pto.label = "kv-rmsnorm", pto.vec_tile = array<i64: 4, 64>} : tensor<?x512xbf16>, tensor<512xbf16> -> tensor<?x512xf32>
  %o = pto.cast %n rint : tensor<?x512xf32> -> tensor<?x512xbf16>
  func.return %o : tensor<?x512xbf16>
}
