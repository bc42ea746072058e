// RUN: pto-opt %s --verify-diagnostics -p pto-to-tile
// expected-error@+1 {{'f' has no pto.form: run pto-classify-skeleton first}}
func.func @f(%x: tensor<?x64xf32>, %w: tensor<64x64xf32>) -> tensor<?x64xf32> {
  %y = pto.matmul %x, %w : tensor<?x64xf32>, tensor<64x64xf32> -> tensor<?x64xf32>
  func.return %y : tensor<?x64xf32>
}
