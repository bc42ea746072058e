func.func @k(%x: tensor<?x64xf32>, %g: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> tensor<?x64xf32> attributes {pto.target = "ascend910b1"} {
  %m = pto.reduce mean %g : tensor<64x64xf32> -> tensor<64x1xf32>
  %mr = pto.reshape %m : tensor<64x1xf32> -> tensor<1x64xf32>
  %y = pto.mul %x, %mr {pto.label = "scale"} : tensor<?x64xf32>, tensor<1x64xf32> -> tensor<?x64xf32>
  %o = pto.matmul %y, %w b_trans {pto.label = "linear"} : tensor<?x64xf32>, tensor<64x64xf32> -> tensor<?x64xf32>
  func.return %o : tensor<?x64xf32>
}
