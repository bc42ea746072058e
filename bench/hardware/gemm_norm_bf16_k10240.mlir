// tilelang-ascend mhc_pre kernels A1 + A2/B1 at hc = 4, h = 2560, as one SK-03 kernel:
// out = x @ fn.T (bf16, f32 out) scaled per row by rsqrt(mean(x^2) + eps). pto-ir has no
// vector-only kernel, so the norm is predicted together with the GEMM it scales.
func.func @mhc_pre_gemm_norm(%x: tensor<?x10240xbf16>, %fn: tensor<24x10240xbf16>) -> tensor<?x24xf32>
    attributes {pto.target = "ascend910b1"} {
  %y = pto.matmul %x, %fn b_trans {pto.label = "gemm"} : tensor<?x10240xbf16>, tensor<24x10240xbf16> -> tensor<?x24xf32>
  %xf = pto.cast %x none : tensor<?x10240xbf16> -> tensor<?x10240xf32>
  %sq = pto.mul %xf, %xf : tensor<?x10240xf32>, tensor<?x10240xf32> -> tensor<?x10240xf32>
  %ms = pto.reduce mean %sq {pto.label = "norm"} : tensor<?x10240xf32> -> tensor<?x1xf32>
  %e = pto.adds %ms, 1.0e-06 : tensor<?x1xf32> -> tensor<?x1xf32>
  %r = pto.rsqrt %e : tensor<?x1xf32> -> tensor<?x1xf32>
  %o = pto.mul %y, %r : tensor<?x24xf32>, tensor<?x1xf32> -> tensor<?x24xf32>
  func.return %o : tensor<?x24xf32>
}
