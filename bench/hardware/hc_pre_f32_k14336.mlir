// The GEMM and norm of DeepSeek-V4 hc_pre (as examples/hc_pre.mlir) at hc = 4, D = 3584:
// x [t, 4, 3584] bf16 reshaped to [t, 14336] and cast to f32, times hc_fn [24, 14336] f32
// (b_trans), divided per row by sqrt(mean(x^2) + 1e-6). The Sinkhorn and the apply of a
// whole mhc_pre are not SK-03 and not here.
func.func @hc_pre(%x: tensor<?x4x3584xbf16>, %hc_fn: tensor<24x14336xf32>) -> tensor<?x24xf32>
    attributes {pto.target = "ascend910b1"} {
  %flat = pto.reshape %x inplace : tensor<?x4x3584xbf16> -> tensor<?x14336xbf16>
  %xf = pto.cast %flat none : tensor<?x14336xbf16> -> tensor<?x14336xf32>
  %y = pto.matmul %xf, %hc_fn b_trans {pto.label = "hc-linear"} : tensor<?x14336xf32>, tensor<24x14336xf32> -> tensor<?x24xf32>
  %sq = pto.mul %xf, %xf : tensor<?x14336xf32>, tensor<?x14336xf32> -> tensor<?x14336xf32>
  %ms = pto.reduce mean %sq {pto.label = "hc-norm"} : tensor<?x14336xf32> -> tensor<?x1xf32>
  %e = pto.adds %ms, 1.0e-06 : tensor<?x1xf32> -> tensor<?x1xf32>
  %r = pto.sqrt %e : tensor<?x1xf32> -> tensor<?x1xf32>
  %o = pto.div %y, %r : tensor<?x24xf32>, tensor<?x1xf32> -> tensor<?x24xf32>
  func.return %o : tensor<?x24xf32>
}
