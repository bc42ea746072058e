func.func @f(%a: tensor<?x64xf32>, %w: tensor<32x16xf32>) {
  // the K dims do not agree
  %0 = pto.matmul %a, %w : tensor<?x64xf32>, tensor<32x16xf32> -> tensor<?x16xf32>
  func.return
}
