// Reductions of every kind and a late elementwise op in a phase whose vector tile
// (4, 64) is narrower than its 256-column rows: tile-to-npu column-tiles it.
func.func @reds(%x: tensor<?x256xf32>, %w: tensor<32x256xf32>) -> (tensor<?x32xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>) {
  %m = pto.reduce max %x {pto.vec_tile = array<i64: 4, 64>} : tensor<?x256xf32> -> tensor<?x1xf32>
  %n = pto.reduce min %x {pto.vec_tile = array<i64: 4, 64>} : tensor<?x256xf32> -> tensor<?x1xf32>
  %a = pto.reduce absmax %x {pto.vec_tile = array<i64: 4, 64>} : tensor<?x256xf32> -> tensor<?x1xf32>
  %d = pto.div %x, %a {pto.vec_tile = array<i64: 4, 64>} : tensor<?x256xf32>, tensor<?x1xf32> -> tensor<?x256xf32>
  %y = pto.matmul %d, %w b_trans : tensor<?x256xf32>, tensor<32x256xf32> -> tensor<?x32xf32>
  func.return %y, %m, %n, %a : tensor<?x32xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>
}
