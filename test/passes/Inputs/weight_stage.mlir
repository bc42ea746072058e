func.func @weight_stage_unpinned(%w: tensor<1024x1024xi8>) {
  %ww = tile.load %w : tensor<1024x1024xi8> -> tensor<1024x1024xi8>
  %wf = tile.vec_stage "weight" -> (tensor<1024x1024xf16>) {
    %c = tile.cast %ww none : tensor<1024x1024xi8> -> tensor<1024x1024xf16>
    tile.yield %c : tensor<1024x1024xf16>
  }
  func.return
}
