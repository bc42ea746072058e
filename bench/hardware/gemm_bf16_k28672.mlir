// tilelang-ascend mhc_pre kernel A1 at hc = 4, h = 7168: out = x @ fn.T with x [n, 28672]
// bf16 and fn [24, 28672] cast to bf16 on the host (as that kernel does), f32 out.
func.func @mhc_pre_gemm(%x: tensor<?x28672xbf16>, %fn: tensor<24x28672xbf16>) -> tensor<?x24xf32>
    attributes {pto.target = "ascend910b1"} {
  %y = pto.matmul %x, %fn b_trans {pto.label = "gemm"} : tensor<?x28672xbf16>, tensor<24x28672xbf16> -> tensor<?x24xf32>
  func.return %y : tensor<?x24xf32>
}
