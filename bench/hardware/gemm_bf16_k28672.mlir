// tilelang-ascend mhc_pre kernel A1 at hc = 4, h = 7168 as that kernel runs it
// (examples/mhc_pre/example_mhc_pre.py, mhc_pre_gemm): out = x @ fn_t with x [n, 28672] bf16
// and fn_t [28672, 32] bf16 (fn cast, transposed and its 24 rows padded to 32 on the host,
// prepare_fn), f32 out [n, 32]; one block per 128 tokens (token_block), K in 512-wide L1
// slices (h_blk) fed to L0 128 at a time (gemm_v0's kL0Size). Its single L1/L0 copies:
// the entry's npu options in measurements.toml.
func.func @mhc_pre_gemm(%x: tensor<?x28672xbf16>, %fn_t: tensor<28672x32xbf16>) -> tensor<?x32xf32>
    attributes {pto.target = "ascend910b1", pto.unroll = array<i64: 128>} {
  %y = pto.matmul %x, %fn_t {pto.label = "gemm", pto.cube_tile = #pto.cube_tile<m = [128, 128], k = [128, 512], n = [32, 32]>} : tensor<?x28672xbf16>, tensor<28672x32xbf16> -> tensor<?x32xf32>
  func.return %y : tensor<?x32xf32>
}
