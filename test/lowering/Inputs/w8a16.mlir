// W8A16: an int8 weight widened to f16 and scaled per output channel in the kernel,
// once per launch (a weight stage), then read by the matmul.
func.func @w8a16(%x: tensor<?x512xf16>, %w: tensor<512x256xi8>, %s: tensor<1x256xf16>) -> tensor<?x256xf32> {
  %wc = pto.cast %w none {pto.vec_tile = array<i64: 512, 256>} : tensor<512x256xi8> -> tensor<512x256xf16>
  %wb = pto.mul %wc, %s : tensor<512x256xf16>, tensor<1x256xf16> -> tensor<512x256xf16>
  %y = pto.matmul %x, %wb : tensor<?x512xf16>, tensor<512x256xf16> -> tensor<?x256xf32>
  func.return %y : tensor<?x256xf32>
}
