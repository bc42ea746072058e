// A post-cube phase whose one-row task does not fit UB (a [1, 32768] f32 row and two
// [1, 16384] halves of it, made in UB: slices of the cube's result itself would be views
// of its columns in GM): tile-assign-shapes cuts it into phases that each fit.
func.func @cut_after_the_cube(%x: tensor<?x64xf32>, %w: tensor<64x32768xf32>,
             %out: tensor<?x16384xf32> {pto.output}) attributes {pto.target = "ascend910b1"} {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xf32>
  tile.token_loop %i = %c0 to %t step 16 tail {
    %xt = tile.load %x[%i] : tensor<?x64xf32> -> tensor<16x64xf32>
    %yt = tile.cube_stage "linear" -> (tensor<16x32768xf32>) {
      %y = tile.matmul %xt, %w : tensor<16x64xf32>, tensor<64x32768xf32> -> tensor<16x32768xf32>
      tile.yield %y : tensor<16x32768xf32>
    }
    %ot = tile.vec_stage "post" -> (tensor<16x16384xf32>) {
      %s = tile.muls %yt, 2.0 : tensor<16x32768xf32> -> tensor<16x32768xf32>
      %a = tile.slice %s at 0 : tensor<16x32768xf32> -> tensor<16x16384xf32>
      %b = tile.slice %s at 16384 : tensor<16x32768xf32> -> tensor<16x16384xf32>
      %c = tile.mul %a, %b : tensor<16x16384xf32>, tensor<16x16384xf32> -> tensor<16x16384xf32>
      tile.yield %c : tensor<16x16384xf32>
    }
    tile.store %ot, %out[%i] : tensor<16x16384xf32> -> tensor<?x16384xf32>
  }
  func.return
}
