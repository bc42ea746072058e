// A select in a column-tiled phase (a (8, 64) tile on 256-wide rows): a ReLU written as a
// select and a mask by a per-row threshold, chunk by chunk, before the norm's sum.
func.func @k(%x: tensor<?x256xf32>, %w: tensor<96x256xf32>) -> tensor<?x96xf32> {
  %r = pto.select gt %x, 0.0, %x, 0.0 {pto.vec_tile = array<i64: 8, 64>} : tensor<?x256xf32>, tensor<?x256xf32> -> tensor<?x256xf32>
  %s = pto.reduce sum %r {pto.vec_tile = array<i64: 8, 64>} : tensor<?x256xf32> -> tensor<?x1xf32>
  %m = pto.select lt %r, %s, %r, %s {pto.vec_tile = array<i64: 8, 64>} : tensor<?x256xf32>, tensor<?x1xf32>, tensor<?x256xf32>, tensor<?x1xf32> -> tensor<?x256xf32>
  %y = pto.matmul %m, %w b_trans : tensor<?x256xf32>, tensor<96x256xf32> -> tensor<?x96xf32>
  func.return %y : tensor<?x96xf32>
}
