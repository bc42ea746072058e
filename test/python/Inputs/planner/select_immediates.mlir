// A select with three immediates after the matmul (a top-1 mask, then a ReLU written as
// where(x > 0, x, 0)): each immediate a one-element vdup, planned where it is emitted.
func.func @k(%x: tensor<?x256xf32>, %w: tensor<96x256xf32>) -> tensor<?x96xf32> {
  %y = pto.matmul %x, %w b_trans : tensor<?x256xf32>, tensor<96x256xf32> -> tensor<?x96xf32>
  %m = pto.reduce max %y {pto.vec_tile = array<i64: 8, 96>} : tensor<?x96xf32> -> tensor<?x1xf32>
  %hot = pto.select eq %y, %m, 1.0, 0.0 {pto.vec_tile = array<i64: 8, 96>} : tensor<?x96xf32>, tensor<?x1xf32> -> tensor<?x96xf32>
  %r = pto.select gt %y, 0.0, %y, 0.0 {pto.vec_tile = array<i64: 8, 96>} : tensor<?x96xf32>, tensor<?x96xf32> -> tensor<?x96xf32>
  %o = pto.add %hot, %r {pto.vec_tile = array<i64: 8, 96>} : tensor<?x96xf32>, tensor<?x96xf32> -> tensor<?x96xf32>
  func.return %o : tensor<?x96xf32>
}
