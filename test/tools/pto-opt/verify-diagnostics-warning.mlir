// expected-warning matches warnings emitted by passes.
// RUN: pto-opt %s --verify-diagnostics -p 'test-pass-failure{op="pto.abs" warn_only=true}' | filecheck %s

// CHECK: pto.abs
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-warning@+1 {{test-pass-failure saw 'pto.abs'}}
  %0 = pto.abs %x : tensor<4xf32> -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
