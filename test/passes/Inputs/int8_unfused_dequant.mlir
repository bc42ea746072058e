// An int8 matmul whose dequant, written from primitives, multiplies by the product of the
// scales (which rounds): pto-fuse-stages remarks where the dequant form broke, and
// pto-classify-skeleton refuses the matmul, saying what it needs and where the i32 result goes.
func.func @int8_unfused_dequant(%q: tensor<?x64xi8>, %w: tensor<64x64xi8>, %s: tensor<?x1xf32>, %ws: tensor<1x64xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{an int8 matmul in SK-03 (the AT-11 quant form) needs a pto.dequant of its result: its i32 values cast to f32 (rint) times the [M, 1] activation scale}}
  %y = pto.matmul %q, %w : tensor<?x64xi8>, tensor<64x64xi8> -> tensor<?x64xi32>
  // expected-note@+1 {{the i32 result is read here, by 'pto.cast'}}
  %f = pto.cast %y rint : tensor<?x64xi32> -> tensor<?x64xf32>
  %sw = pto.mul %s, %ws : tensor<?x1xf32>, tensor<1x64xf32> -> tensor<?x64xf32>
  // expected-remark@+1 {{not fused into pto.dequant: expected a multiply by the [M, 1] activation scale, found 'pto.mul' by a tensor<?x64xf32>}}
  %d = pto.mul %f, %sw : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  func.return %d : tensor<?x64xf32>
}
