// A quantized linear layer of DeepSeek-V4-Flash decode on Ascend 950 (QuantBatchMatmulV3,
// x [1, 4096], w [1024, 4096]): 8-bit operands, i32 accumulate, dequantized per token and
// per output channel to bf16. The measured kernel takes MXFP8 (8-bit, scaled per 32-element
// block); pto-ir's 8-bit cube type is i8, the same bytes and the same cube rate per byte.
func.func @quant_matmul(%x: tensor<?x4096xi8>, %xs: tensor<?x1xf32>, %w: tensor<1024x4096xi8>, %ws: tensor<1024x1xf32>) -> tensor<?x1024xbf16>
    attributes {pto.target = "ascend950"} {
  %a = pto.matmul %x, %w b_trans {pto.label = "linear"} : tensor<?x4096xi8>, tensor<1024x4096xi8> -> tensor<?x1024xi32>
  %d = pto.dequant %a, %xs, %ws {pto.label = "dequant"} : tensor<?x1024xi32>, tensor<?x1xf32>, tensor<1024x1xf32> -> tensor<?x1024xf32>
  %o = pto.cast %d rint : tensor<?x1024xf32> -> tensor<?x1024xbf16>
  func.return %o : tensor<?x1024xbf16>
}
