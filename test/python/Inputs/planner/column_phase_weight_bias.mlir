// DeepSeek-V4 hc_pre, the mhc_pre variant: a huge reduction and a tiny output.
// x [t, 4, 4096] bf16 is reshaped in place to [t, 16384] and cast to f32;
// hc_fn [24, 16384] f32 is used with b_trans; the [t, 24] f32 result is divided per
// row by sqrt(mean(x^2) + 1e-6). hc_fn is reused by every token tile and fits in L2:
// it must NOT be NONE_CACHEABLE.
func.func @hc_pre(%x: tensor<?x4x4096xbf16>, %hc_fn: tensor<24x16384xf32>, %bias: tensor<1x24xf32>) -> tensor<?x24xf32>
    attributes {pto.target = "ascend910b1"} {
  %flat = pto.reshape %x inplace : tensor<?x4x4096xbf16> -> tensor<?x16384xbf16>
  %xf = pto.cast %flat none : tensor<?x16384xbf16> -> tensor<?x16384xf32>
  %y = pto.matmul %xf, %hc_fn b_trans {pto.label = "hc-linear"} : tensor<?x16384xf32>, tensor<24x16384xf32> -> tensor<?x24xf32>
  %sq = pto.mul %xf, %xf : tensor<?x16384xf32>, tensor<?x16384xf32> -> tensor<?x16384xf32>
  %ms = pto.reduce mean %sq {pto.label = "hc-norm"} : tensor<?x16384xf32> -> tensor<?x1xf32>
  %e = pto.adds %ms, 1.0e-06 : tensor<?x1xf32> -> tensor<?x1xf32>
  %r = pto.sqrt %e : tensor<?x1xf32> -> tensor<?x1xf32>
  %o = pto.div %y, %r : tensor<?x24xf32>, tensor<?x1xf32> -> tensor<?x24xf32>
  %o2 = pto.add %o, %bias : tensor<?x24xf32>, tensor<1x24xf32> -> tensor<?x24xf32>
  func.return %o2 : tensor<?x24xf32>
}
