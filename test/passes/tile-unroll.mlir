// RUN: pto-opt %s --split-input-file -p 'tile-unroll{factors=4,3}' | filecheck %s --check-prefix=STATIC43
// RUN: pto-opt %s --split-input-file -p 'tile-unroll{factors=16,12}' | filecheck %s --check-prefix=SMALL
// RUN: pto-opt %s --split-input-file -p 'tile-unroll{factors=5,2}' | filecheck %s --check-prefix=FIVE
// RUN: pto-opt %s --split-input-file -p 'tile-unroll' | filecheck %s --check-prefix=DEFAULT

// T = 10 with [4,3,1]: 4 covers [0,8), 3 cannot fit in the 2 left, 1 covers [8,10).
// (PyPTO 0.2.0 would schedule a 3-token tile at 8 and overrun.)
// STATIC43-LABEL: func.func @static10
// STATIC43:      %c10 = arith.constant 10 : index
// STATIC43-NEXT: %[[A:.*]] = arith.constant 0 : index
// STATIC43-NEXT: %[[B:.*]] = arith.constant 8 : index
// STATIC43-NEXT: %[[C:.*]] = arith.constant 8 : index
// STATIC43-NEXT: %[[D:.*]] = arith.constant 10 : index
// STATIC43-NEXT: tile.token_loop %{{.*}} = %[[A]] to %[[B]] step 4 {
// STATIC43:        tile.load %x[%{{.*}}] : tensor<?x64xf32> -> tensor<4x64xf32>
// STATIC43:        tile.matmul {{.*}} -> tensor<4x32xf32>
// STATIC43:        tile.store {{.*}} : tensor<4x32xf32> -> tensor<?x32xf32>
// STATIC43:      tile.token_loop %{{.*}} = %[[C]] to %[[D]] step 1 {
// STATIC43-NOT:  step 3
// STATIC43-NOT:  tile.token_loop
// With [16,12], T = 10 is smaller than every factor: one loop of single tokens.
// SMALL-LABEL: func.func @static10
// SMALL-NOT: step 16
// SMALL-NOT: step 12
// SMALL: tile.token_loop {{.*}} step 1 {
// SMALL-NOT: tile.token_loop
// SMALL: func.func @empty
// [5,2]: two 5-token tiles cover all 10; nothing is left for 2 or 1.
// FIVE-LABEL: func.func @static10
// FIVE: tile.token_loop {{.*}} step 5 {
// FIVE-NOT: tile.token_loop
// FIVE: func.func @empty
// The seed's candidates by default: only 8 and 1 fit T = 10.
// DEFAULT-LABEL: func.func @static10
// DEFAULT: arith.constant 8 : index
// DEFAULT: step 8
// DEFAULT: step 1
// DEFAULT-NOT: tile.token_loop
// DEFAULT: func.func @empty
func.func @static10(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>, %out: tensor<?x32xf32>) {
  %c0 = arith.constant 0 : index
  %c10 = arith.constant 10 : index
  tile.token_loop %i = %c0 to %c10 step 1 {
    %xt = tile.load %x[%i] : tensor<?x64xf32> -> tensor<1x64xf32>
    %y = tile.cube_stage "linear" -> (tensor<1x32xf32>) {
      %m = tile.matmul %xt, %w : tensor<1x64xf32>, tensor<64x32xf32> -> tensor<1x32xf32>
      tile.yield %m : tensor<1x32xf32>
    }
    tile.store %y, %out[%i] : tensor<1x32xf32> -> tensor<?x32xf32>
  }
  func.return
}

// -----

// T = 0: no loop at all.
// STATIC43-LABEL: func.func @empty
// STATIC43-NOT: tile.token_loop
// STATIC43: func.return
func.func @empty(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>, %out: tensor<?x32xf32>) {
  %c0 = arith.constant 0 : index
  tile.token_loop %i = %c0 to %c0 step 1 {
    %xt = tile.load %x[%i] : tensor<?x64xf32> -> tensor<1x64xf32>
    %y = tile.cube_stage "linear" -> (tensor<1x32xf32>) {
      %m = tile.matmul %xt, %w : tensor<1x64xf32>, tensor<64x32xf32> -> tensor<1x32xf32>
      tile.yield %m : tensor<1x32xf32>
    }
    tile.store %y, %out[%i] : tensor<1x32xf32> -> tensor<?x32xf32>
  }
  func.return
}

// -----

// A dynamic T: bounds computed at run time, each factor starting where the last stopped.
// STATIC43-LABEL: func.func @dynamic
// STATIC43:      %[[T:.*]] = tensor.dim
// STATIC43:      %[[F4:.*]] = arith.constant 4 : index
// STATIC43-NEXT: %[[L4:.*]] = arith.subi %[[T]], %c0 : index
// STATIC43-NEXT: %[[N4:.*]] = arith.divui %[[L4]], %[[F4]] : index
// STATIC43-NEXT: %[[W4:.*]] = arith.muli %[[N4]], %[[F4]] : index
// STATIC43-NEXT: %[[E4:.*]] = arith.addi %c0, %[[W4]] : index
// STATIC43-NEXT: %[[F3:.*]] = arith.constant 3 : index
// STATIC43-NEXT: %[[L3:.*]] = arith.subi %[[T]], %[[E4]] : index
// STATIC43-NEXT: %[[N3:.*]] = arith.divui %[[L3]], %[[F3]] : index
// STATIC43-NEXT: %[[W3:.*]] = arith.muli %[[N3]], %[[F3]] : index
// STATIC43-NEXT: %[[E3:.*]] = arith.addi %[[E4]], %[[W3]] : index
// STATIC43-NEXT: tile.token_loop %{{.*}} = %c0 to %[[E4]] step 4 {
// STATIC43:      tile.token_loop %{{.*}} = %[[E4]] to %[[E3]] step 3 {
// STATIC43:      tile.vec_stage "norm" -> (tensor<3x64xf32>, tensor<3x1xf32>)
// STATIC43:      tile.reduce max %{{.*}} : tensor<3x64xf32> -> tensor<3x1xf32>
// STATIC43:      tile.token_loop %{{.*}} = %[[E3]] to %[[T]] step 1 {
// Static tensors keep their shapes even when their first dim equals the old tile height.
// STATIC43:      tile.load %g : tensor<1x64xf32> -> tensor<1x64xf32>
func.func @dynamic(%x: tensor<?x64xf32>, %g: tensor<1x64xf32>, %w: tensor<64x32xf32>, %out: tensor<?x32xf32>, %smax: tensor<?x1xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xf32>
  tile.token_loop %i = %c0 to %t step 1 {
    %xt = tile.load %x[%i] : tensor<?x64xf32> -> tensor<1x64xf32>
    %gt = tile.load %g : tensor<1x64xf32> -> tensor<1x64xf32>
    %n, %s = tile.vec_stage "norm" -> (tensor<1x64xf32>, tensor<1x1xf32>) {
      %a = tile.mul %xt, %gt : tensor<1x64xf32>, tensor<1x64xf32> -> tensor<1x64xf32>
      %r = tile.reduce max %a : tensor<1x64xf32> -> tensor<1x1xf32>
      tile.yield %a, %r : tensor<1x64xf32>, tensor<1x1xf32>
    }
    %y = tile.cube_stage "linear" -> (tensor<1x32xf32>) {
      %m = tile.matmul %n, %w : tensor<1x64xf32>, tensor<64x32xf32> -> tensor<1x32xf32>
      tile.yield %m : tensor<1x32xf32>
    }
    tile.store %y, %out[%i] : tensor<1x32xf32> -> tensor<?x32xf32>
    tile.store %s, %smax[%i] : tensor<1x1xf32> -> tensor<?x1xf32>
  }
  func.return
}

// -----

// A pinned pto.unroll wins over the option; duplicates go, 1 is appended.
// STATIC43-LABEL: func.func @pinned
// STATIC43: step 64
// STATIC43: step 2
// STATIC43: step 1
// STATIC43-NOT: step 4
func.func @pinned(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>, %out: tensor<?x32xf32>) attributes {pto.unroll = array<i64: 2, 64, 2>} {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xf32>
  tile.token_loop %i = %c0 to %t step 1 {
    %xt = tile.load %x[%i] : tensor<?x64xf32> -> tensor<1x64xf32>
    %y = tile.cube_stage "linear" -> (tensor<1x32xf32>) {
      %m = tile.matmul %xt, %w : tensor<1x64xf32>, tensor<64x32xf32> -> tensor<1x32xf32>
      tile.yield %m : tensor<1x32xf32>
    }
    tile.store %y, %out[%i] : tensor<1x32xf32> -> tensor<?x32xf32>
  }
  func.return
}

// -----

// With pto.tail (PyPTO's pypto.loop over TILE-row views with a valid_shape) no 1 is
// appended: the last factor's loop takes the remainder as one partial tile.
// STATIC43-LABEL: func.func @tail
// STATIC43:      %[[F8:.*]] = arith.constant 8 : index
// STATIC43:      %[[E8:.*]] = arith.addi %c0, %{{.*}} : index
// STATIC43-NEXT: tile.token_loop %{{.*}} = %c0 to %[[E8]] step 8 {
// STATIC43:      tile.token_loop %{{.*}} = %[[E8]] to %t step 4 tail {
// STATIC43-NOT:  step 1
// STATIC43-LABEL: func.func @tail10
// STATIC43:      %[[A:[0-9]+]] = arith.constant 0 : index
// STATIC43-NEXT: %[[B:[0-9]+]] = arith.constant 10 : index
// STATIC43-NEXT: tile.token_loop %{{.*}} = %[[A]] to %[[B]] step 4 tail {
// STATIC43-NOT:  tile.token_loop
func.func @tail(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>, %out: tensor<?x32xf32>) attributes {pto.unroll = array<i64: 4, 8>, pto.tail} {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xf32>
  tile.token_loop %i = %c0 to %t step 1 {
    %xt = tile.load %x[%i] : tensor<?x64xf32> -> tensor<1x64xf32>
    %y = tile.cube_stage "linear" -> (tensor<1x32xf32>) {
      %m = tile.matmul %xt, %w : tensor<1x64xf32>, tensor<64x32xf32> -> tensor<1x32xf32>
      tile.yield %m : tensor<1x32xf32>
    }
    tile.store %y, %out[%i] : tensor<1x32xf32> -> tensor<?x32xf32>
  }
  func.return
}
func.func @tail10(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>, %out: tensor<?x32xf32>) attributes {pto.unroll = array<i64: 4>, pto.tail} {
  %c0 = arith.constant 0 : index
  %c10 = arith.constant 10 : index
  tile.token_loop %i = %c0 to %c10 step 1 {
    %xt = tile.load %x[%i] : tensor<?x64xf32> -> tensor<1x64xf32>
    %y = tile.cube_stage "linear" -> (tensor<1x32xf32>) {
      %m = tile.matmul %xt, %w : tensor<1x64xf32>, tensor<64x32xf32> -> tensor<1x32xf32>
      tile.yield %m : tensor<1x32xf32>
    }
    tile.store %y, %out[%i] : tensor<1x32xf32> -> tensor<?x32xf32>
  }
  func.return
}

// -----

// A stage's tile shapes pinned per unroll factor (pto.by_unroll, from a PyPTO kernel
// that chooses them from its factor) become that factor's loop's; the others keep the
// stage's own.
// STATIC43-LABEL: func.func @by_unroll
// STATIC43:      step 4 {
// STATIC43:      tile.cube_stage "linear" tiles <m = [16, 16], k = [32, 64], n = [32, 32]>
// STATIC43:      step 3 {
// STATIC43:      tile.cube_stage "linear" tiles <m = [16, 16], k = [64, 64], n = [32, 32]>
// STATIC43:      step 1 {
// STATIC43:      tile.cube_stage "linear" tiles <m = [16, 16], k = [64, 64], n = [16, 32]>
// STATIC43-NOT:  pto.by_unroll
func.func @by_unroll(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>, %out: tensor<?x32xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xf32>
  tile.token_loop %i = %c0 to %t step 1 {
    %xt = tile.load %x[%i] : tensor<?x64xf32> -> tensor<1x64xf32>
    %y = tile.cube_stage "linear" tiles <m = [16, 16], k = [64, 64], n = [32, 32]> -> (tensor<1x32xf32>)
        attributes {pto.by_unroll = {"4" = {pto.cube_tile = #pto.cube_tile<m = [16, 16], k = [32, 64], n = [32, 32]>},
                                     "1" = {pto.cube_tile = #pto.cube_tile<m = [16, 16], k = [64, 64], n = [16, 32]>}}} {
      %m = tile.matmul %xt, %w : tensor<1x64xf32>, tensor<64x32xf32> -> tensor<1x32xf32>
      tile.yield %m : tensor<1x32xf32>
    }
    tile.store %y, %out[%i] : tensor<1x32xf32> -> tensor<?x32xf32>
  }
  func.return
}

// -----

// ... and a vector stage's tile (pto.vec_tile) the same way.
// STATIC43-LABEL: func.func @by_unroll_vec
// STATIC43:      step 4 {
// STATIC43:      tile.vec_stage "norm" tile [1, 64] -> (tensor<4x64xf32>) {
// STATIC43:      step 3 {
// STATIC43:      tile.vec_stage "norm" tile [3, 32] -> (tensor<3x64xf32>) {
// STATIC43:      step 1 {
// STATIC43:      tile.vec_stage "norm" tile [1, 64] -> (tensor<1x64xf32>) {
// STATIC43-NOT:  pto.by_unroll
func.func @by_unroll_vec(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>, %out: tensor<?x32xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xf32>
  tile.token_loop %i = %c0 to %t step 1 {
    %xt = tile.load %x[%i] : tensor<?x64xf32> -> tensor<1x64xf32>
    %n = tile.vec_stage "norm" tile [1, 64] -> (tensor<1x64xf32>)
        attributes {pto.by_unroll = {"3" = {pto.vec_tile = array<i64: 3, 32>}}} {
      %a = tile.abs %xt : tensor<1x64xf32> -> tensor<1x64xf32>
      tile.yield %a : tensor<1x64xf32>
    }
    %y = tile.cube_stage "linear" -> (tensor<1x32xf32>) {
      %m = tile.matmul %n, %w : tensor<1x64xf32>, tensor<64x32xf32> -> tensor<1x32xf32>
      tile.yield %m : tensor<1x32xf32>
    }
    tile.store %y, %out[%i] : tensor<1x32xf32> -> tensor<?x32xf32>
  }
  func.return
}
