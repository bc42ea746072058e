// The standard SK-03 kernel (examples/sk03_standard.mlir) at the tile level: outputs
// become trailing arguments; a remainder cascade of two token loops (128-row tiles,
// then one row at a time); in each body a vector stage (RMSNorm, cast) and a cube
// stage (the matmul) with their labels and tile shapes.
func.func @linear_projection(%x: tensor<?x4096xbf16>, %gamma: tensor<4096xbf16>, %w: tensor<1024x4096xbf16>,
                    %out: tensor<?x1024xbf16> {pto.output}) attributes {pto.target = "ascend910b1"} {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x4096xbf16>
  %c128 = arith.constant 128 : index
  %rem = arith.remui %t, %c128 : index
  %end = arith.subi %t, %rem : index
  tile.token_loop %i = %c0 to %end step 128 {
    %xt = tile.load %x[%i] : tensor<?x4096xbf16> -> tensor<128x4096xbf16>
    %g = tile.load %gamma : tensor<4096xbf16> -> tensor<4096xbf16>
    %bt = tile.vec_stage "rmsnorm" tile [4, 4096] nbuffer 2 -> (tensor<128x4096xbf16>) {
      %nt = tile.rms_norm %xt, %g eps = 1.0e-06 : tensor<128x4096xbf16>, tensor<4096xbf16> -> tensor<128x4096xf32>
      %b = tile.cast %nt rint : tensor<128x4096xf32> -> tensor<128x4096xbf16>
      tile.yield %b : tensor<128x4096xbf16>
    }
    %yt = tile.cube_stage "linear" tiles <m = [128, 128], k = [128, 512], n = [256, 256]> l1_reuse 2 nbuffer 1 -> (tensor<128x1024xbf16>) {
      %wt = tile.load %w cache none_cacheable : tensor<1024x4096xbf16> -> tensor<1024x4096xbf16>
      %y = tile.matmul %bt, %wt b_trans : tensor<128x4096xbf16>, tensor<1024x4096xbf16> -> tensor<128x1024xf32>
      %o = tile.cast %y rint : tensor<128x1024xf32> -> tensor<128x1024xbf16>
      tile.yield %o : tensor<128x1024xbf16>
    }
    tile.store %yt, %out[%i] : tensor<128x1024xbf16> -> tensor<?x1024xbf16>
  }
  tile.token_loop %i = %end to %t step 1 {
    %xt = tile.load %x[%i] : tensor<?x4096xbf16> -> tensor<1x4096xbf16>
    %g = tile.load %gamma : tensor<4096xbf16> -> tensor<4096xbf16>
    %bt = tile.vec_stage "rmsnorm" tile [1, 4096] -> (tensor<1x4096xbf16>) {
      %nt = tile.rms_norm %xt, %g eps = 1.0e-06 : tensor<1x4096xbf16>, tensor<4096xbf16> -> tensor<1x4096xf32>
      %b = tile.cast %nt rint : tensor<1x4096xf32> -> tensor<1x4096xbf16>
      tile.yield %b : tensor<1x4096xbf16>
    }
    %yt = tile.cube_stage "linear" tiles <m = [16, 16], k = [512, 1024], n = [64, 64]> -> (tensor<1x1024xbf16>) {
      %y = tile.matmul %bt, %w b_trans : tensor<1x4096xbf16>, tensor<1024x4096xbf16> -> tensor<1x1024xf32>
      %o = tile.cast %y rint : tensor<1x1024xf32> -> tensor<1x1024xbf16>
      tile.yield %o : tensor<1x1024xbf16>
    }
    tile.store %yt, %out[%i] : tensor<1x1024xbf16> -> tensor<?x1024xbf16>
  }
  func.return
}

