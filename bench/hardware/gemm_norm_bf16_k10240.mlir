// tilelang-ascend mhc_pre kernels A1 + A2/B1 at hc = 4, h = 2560, as one SK-03 kernel:
// out = x @ fn_t (bf16, f32 out) scaled per row by rsqrt(mean(x^2) + eps), the GEMM as A1
// runs it (gemm_bf16_k10240.mlir: fn_t [10240, 32], its cube tiles, the entry's npu options).
// pto-ir has no vector-only kernel, so the norm is predicted together with the GEMM it scales.
// The norm runs as the measured A2+B1 kernel runs (tile-ai/tilelang-ascend,
// examples/mhc_pre/benchmark_zh.md at 1c94fb09, section 3: "A2+B1 (fused) | sqrsum +
// RMSNorm | Vector (dual V core) | sqr_h_blk=4096, T.Pipelined, in-kernel tail", the
// sqrsum kept in UB; the kernels it fuses, mhc_pre_sqrsum and mhc_pre_rmsnorm of
// examples/mhc_pre/example_mhc_pre.py at f467639a): one token per vector core per block
// (T.Kernel(ceil(n / 2)), bid = cid * 2 + vid), so one row per vector task and one copy
// (vec_nbuffer_setting 0 = 1); x read once, in 4096-column chunks (SQRSUM_H_BLK), the
// squares summed chunk by chunk, then the row's scale applied to its 32 GEMM outputs.
// tilelang runs 10240 columns as 4096, 4096 and a masked 2048 tail; pto-ir's chunks divide
// the row, so it runs the pinned 4096 as four of 2560 (its warning says so). The chunk
// loop's second copy (T.Pipelined, num_stages = 2) is not modelled: pto-ir's chunks of a
// row wait for each other (docs/model.md, "Against hardware measurements").
func.func @mhc_pre_gemm_norm(%x: tensor<?x10240xbf16>, %fn_t: tensor<10240x32xbf16>) -> tensor<?x32xf32>
    attributes {pto.target = "ascend910b1", pto.options = {vec_nbuffer_setting = {"0" = 1}}} {
  %y = pto.matmul %x, %fn_t {pto.label = "gemm", pto.cube_tile = #pto.cube_tile<m = [128, 128], k = [128, 512], n = [32, 32]>} : tensor<?x10240xbf16>, tensor<10240x32xbf16> -> tensor<?x32xf32>
  %xf = pto.cast %x none : tensor<?x10240xbf16> -> tensor<?x10240xf32>
  %sq = pto.mul %xf, %xf : tensor<?x10240xf32>, tensor<?x10240xf32> -> tensor<?x10240xf32>
  %ms = pto.reduce mean %sq {pto.label = "norm", pto.vec_tile = array<i64: 1, 4096>} : tensor<?x10240xf32> -> tensor<?x1xf32>
  %e = pto.adds %ms, 1.0e-06 : tensor<?x1xf32> -> tensor<?x1xf32>
  %r = pto.rsqrt %e : tensor<?x1xf32> -> tensor<?x1xf32>
  %o = pto.mul %y, %r : tensor<?x32xf32>, tensor<?x1xf32> -> tensor<?x32xf32>
  func.return %o : tensor<?x32xf32>
}
