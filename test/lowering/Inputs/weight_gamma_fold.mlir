// A weight scaled by a rank-1 gamma in the kernel, once per launch (a weight stage):
// corpus23's k211 folds RMSNorm's gamma into the projection. gamma's cast has the
// leading size of the (8, 256) tile set (PyPTO's rule for a rank-1 op); the stage takes
// the rank-2 tile, and each task loads its columns of gamma.
func.func @fold(%x: tensor<?x256xbf16>, %w: tensor<128x256xf32>, %g: tensor<256xbf16>) -> tensor<?x128xf32> {
  %gf = pto.cast %g none {pto.vec_tile = array<i64: 8>} : tensor<256xbf16> -> tensor<256xf32>
  %m = pto.mul %w, %gf {pto.vec_tile = array<i64: 8, 256>} : tensor<128x256xf32>, tensor<256xf32> -> tensor<128x256xf32>
  %wb = pto.cast %m rint {pto.vec_tile = array<i64: 8, 256>} : tensor<128x256xf32> -> tensor<128x256xbf16>
  %y = pto.matmul %x, %wb b_trans : tensor<?x256xbf16>, tensor<128x256xbf16> -> tensor<?x128xf32>
  func.return %y : tensor<?x128xf32>
}
