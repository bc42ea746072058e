// tilelang-ascend mhc_pre kernels A1 + A2 + B1 at hc = 4, h = 7168, as one SK-03 kernel:
// out = x @ fn_t (bf16, f32 out) scaled per row by rsqrt(mean(x^2) + eps), the GEMM as A1
// runs it (gemm_bf16_k28672.mlir: fn_t [28672, 32], its cube tiles, the entry's npu options).
// pto-ir has no vector-only kernel, so the norm is predicted together with the GEMM it scales.
// The norm runs as the measured A2 and B1 kernels run (tile-ai/tilelang-ascend,
// examples/mhc_pre/example_mhc_pre.py at f467639a, mhc_pre_sqrsum and mhc_pre_rmsnorm;
// examples/mhc_pre/benchmark.md at b52d5c6b, section 3: "A2 | Vector (dual-V-core) |
// h_blk=4096, T.Pipelined"): one token per vector core per block (both kernels:
// T.Kernel(ceil(n / 2)), bid = cid * 2 + vid), so one row per vector task and one copy
// (vec_nbuffer_setting 0 = 1); x read once, by A2, in 4096-column chunks (SQRSUM_H_BLK:
// 7 of them), the squares summed chunk by chunk; B1 then scales the row's 32 GEMM outputs
// by rsqrt(sqrsum / (hc * h) + eps). A2's sqrsum goes through GM to B1, a few bytes per
// token, which one fused phase keeps in UB. The chunk loop's second copy (T.Pipelined,
// num_stages = 2) is not modelled: pto-ir's chunks of a row wait for each other
// (docs/model.md, "Against hardware measurements").
func.func @mhc_pre_gemm_norm(%x: tensor<?x28672xbf16>, %fn_t: tensor<28672x32xbf16>) -> tensor<?x32xf32>
    attributes {pto.target = "ascend910b1", pto.options = {vec_nbuffer_setting = {"0" = 1}}} {
  %y = pto.matmul %x, %fn_t {pto.label = "gemm", pto.cube_tile = #pto.cube_tile<m = [128, 128], k = [128, 512], n = [32, 32]>} : tensor<?x28672xbf16>, tensor<28672x32xbf16> -> tensor<?x32xf32>
  %xf = pto.cast %x none : tensor<?x28672xbf16> -> tensor<?x28672xf32>
  %sq = pto.mul %xf, %xf : tensor<?x28672xf32>, tensor<?x28672xf32> -> tensor<?x28672xf32>
  %ms = pto.reduce mean %sq {pto.label = "norm", pto.vec_tile = array<i64: 1, 4096>} : tensor<?x28672xf32> -> tensor<?x1xf32>
  %e = pto.adds %ms, 1.0e-06 : tensor<?x1xf32> -> tensor<?x1xf32>
  %r = pto.rsqrt %e : tensor<?x1xf32> -> tensor<?x1xf32>
  %o = pto.mul %y, %r : tensor<?x32xf32>, tensor<?x1xf32> -> tensor<?x32xf32>
  func.return %o : tensor<?x32xf32>
}
