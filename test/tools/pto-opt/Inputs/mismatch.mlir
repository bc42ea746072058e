func.func @f(%x: tensor<4xi32>) {
  // expected-error@+2 {{a message nobody emits}}
  %0 = pto.sqrt %x : tensor<4xi32> -> tensor<4xi32>
  func.return
  // expected-note@-3 {{nor this}}
}
