// tilelang-ascend mhc_pre kernel A1 at hc = 4, h = 2560: out = x @ fn.T with x [n, 10240]
// bf16 and fn [24, 10240] cast to bf16 on the host (as that kernel does), f32 out.
func.func @mhc_pre_gemm(%x: tensor<?x10240xbf16>, %fn: tensor<24x10240xbf16>) -> tensor<?x24xf32>
    attributes {pto.target = "ascend910b1"} {
  %y = pto.matmul %x, %fn b_trans {pto.label = "gemm"} : tensor<?x10240xbf16>, tensor<24x10240xbf16> -> tensor<?x24xf32>
  func.return %y : tensor<?x24xf32>
}
