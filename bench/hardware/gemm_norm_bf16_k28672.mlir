// tilelang-ascend mhc_pre kernels A1 + A2 + B1 at hc = 4, h = 7168, as one SK-03 kernel:
// out = x @ fn_t (bf16, f32 out) scaled per row by rsqrt(mean(x^2) + eps), the GEMM as A1
// runs it (gemm_bf16_k28672.mlir: fn_t [28672, 32], its cube tiles, the entry's npu options).
// pto-ir has no vector-only kernel, so the norm is predicted together with the GEMM it scales.
func.func @mhc_pre_gemm_norm(%x: tensor<?x28672xbf16>, %fn_t: tensor<28672x32xbf16>) -> tensor<?x32xf32>
    attributes {pto.target = "ascend910b1"} {
  %y = pto.matmul %x, %fn_t {pto.label = "gemm", pto.cube_tile = #pto.cube_tile<m = [128, 128], k = [128, 512], n = [32, 32]>} : tensor<?x28672xbf16>, tensor<28672x32xbf16> -> tensor<?x32xf32>
  %xf = pto.cast %x none : tensor<?x28672xbf16> -> tensor<?x28672xf32>
  %sq = pto.mul %xf, %xf : tensor<?x28672xf32>, tensor<?x28672xf32> -> tensor<?x28672xf32>
  %ms = pto.reduce mean %sq {pto.label = "norm"} : tensor<?x28672xf32> -> tensor<?x1xf32>
  %e = pto.adds %ms, 1.0e-06 : tensor<?x1xf32> -> tensor<?x1xf32>
  %r = pto.rsqrt %e : tensor<?x1xf32> -> tensor<?x1xf32>
  %o = pto.mul %y, %r : tensor<?x32xf32>, tensor<?x1xf32> -> tensor<?x32xf32>
  func.return %o : tensor<?x32xf32>
}
