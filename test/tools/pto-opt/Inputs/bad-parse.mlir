func.func @f(%x: tensor<4xf32>) {
  %0 = pto.nosuch %x : tensor<4xf32>
  func.return
}
