func.func @f(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %0 = pto.abs %x : tensor<?x64xf32> -> tensor<?x64xf32>
  %1 = pto.abs %x : tensor<?x64xf32> -> tensor<?x64xf32>
  %2 = pto.add %0, %1 : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  func.return %2 : tensor<?x64xf32>
}
