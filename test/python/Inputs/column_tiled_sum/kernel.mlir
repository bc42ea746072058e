// A fuzzed kernel (bench/fuzz.py seed 12, case 11201): the [8, 64] vector tile column-tiles
// the 128-wide sum of squares, whose order flips a few bf16 roundings of the normalised
// row; the f32 output is only as precise as that bf16 value (interp/golden.py golden_elem).
func.func @kernel(%x: tensor<?x128xbf16>, %w: tensor<128x16xbf16> {pto.cache = #pto.cache<none_cacheable>}) -> (tensor<?x16xf32>)
    attributes {pto.target = "ascend910b1", pto.unroll = array<i64: 5, 5, 1>} {
  %v1 = pto.rms_norm %x eps = 1.000000e-05 {pto.vec_tile = array<i64: 8, 64>} : tensor<?x128xbf16> -> tensor<?x128xf32>
  %v2 = pto.cast %v1 rint : tensor<?x128xf32> -> tensor<?x128xbf16>
  %v3 = pto.matmul %v2, %w : tensor<?x128xbf16>, tensor<128x16xbf16> -> tensor<?x16xf32>
  func.return %v3 : tensor<?x16xf32>
}
