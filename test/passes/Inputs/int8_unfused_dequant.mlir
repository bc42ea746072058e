// An int8 matmul whose dequant, written from primitives, truncates the accumulator to f32
// (pto.dequant rounds it, rint): pto-fuse-stages remarks where the dequant form broke, and
// pto-classify-skeleton refuses the matmul, saying what it needs and where the i32 result goes.
func.func @int8_unfused_dequant(%q: tensor<?x64xi8>, %w: tensor<64x64xi8>, %s: tensor<?x1xf32>, %ws: tensor<1x64xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{an int8 matmul in SK-03 (the AT-11 quant form) needs a pto.dequant of its result: its i32 values cast to f32 (rint) times the [M, 1] activation scale}}
  %y = pto.matmul %q, %w : tensor<?x64xi8>, tensor<64x64xi8> -> tensor<?x64xi32>
  // expected-note@+2 {{the i32 result is read here, by 'pto.cast'}}
  // expected-remark@+1 {{not fused into pto.dequant: expected a 'rint' cast of the i32 accumulator to f32, found a 'trunc' cast}}
  %f = pto.cast %y trunc : tensor<?x64xi32> -> tensor<?x64xf32>
  %a = pto.mul %f, %s : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  %d = pto.mul %a, %ws : tensor<?x64xf32>, tensor<1x64xf32> -> tensor<?x64xf32>
  func.return %d : tensor<?x64xf32>
}
