// RUN: pto-opt %s --split-input-file -p tile-apply-settings | filecheck %s
// RUN: pto-opt %s --split-input-file -p 'tile-apply-settings{vec_nbuffer_setting="0:3,-1:2" cube_l1_reuse_setting="-1:1,1:2" cube_nbuffer_setting="-1:2"}' | filecheck %s --check-prefix=OPTS
// RUN: pto-opt %S/../../examples/indexer_query_linear_int8.mlir -p 'pto-classify-skeleton,pto-to-tile,tile-apply-settings{vec_nbuffer_setting="0:3"}' | filecheck %s --check-prefix=PINNED
// RUN: not pto-opt %s --split-input-file -p 'tile-apply-settings{vec_nbuffer_setting="0:x"}' 2>&1 | filecheck %s --check-prefix=BADVAL
// RUN: not pto-opt %s --split-input-file -p 'tile-apply-settings{cube_l1_reuse_setting="-1:0"}' 2>&1 | filecheck %s --check-prefix=BADKEY

// The defaults: two vector tiles of the first stage and two cube tiles that load the
// same activation rows are merged into one task each; the cache policies are
// tile-annotate-cache's (none here).
// CHECK-LABEL: func.func @standard
// CHECK: tile.load %w : tensor<64x32xf32> -> tensor<64x32xf32>
// CHECK: tile.vec_stage "norm" nbuffer 2
// CHECK: tile.cube_stage "linear" l1_reuse 2 nbuffer 1
// CHECK: tile.vec_stage "post" nbuffer 1
// OPTS-LABEL: func.func @standard
// OPTS: tile.vec_stage "norm" nbuffer 3
// OPTS: tile.cube_stage "linear" l1_reuse 1 nbuffer 2
// OPTS: tile.vec_stage "post" nbuffer 2
func.func @standard(%x: tensor<?x64xf32>, %g: tensor<64xf32>, %w: tensor<64x32xf32>, %out: tensor<?x32xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xf32>
  tile.token_loop %i = %c0 to %t step 1 {
    %xt = tile.load %x[%i] : tensor<?x64xf32> -> tensor<1x64xf32>
    %gt = tile.load %g : tensor<64xf32> -> tensor<64xf32>
    %wt = tile.load %w : tensor<64x32xf32> -> tensor<64x32xf32>
    %n = tile.vec_stage "norm" -> (tensor<1x64xf32>) {
      %a = tile.rms_norm %xt, %gt eps = 1.0e-06 : tensor<1x64xf32>, tensor<64xf32> -> tensor<1x64xf32>
      tile.yield %a : tensor<1x64xf32>
    }
    %y = tile.cube_stage "linear" -> (tensor<1x32xf32>) {
      %m = tile.matmul %n, %wt : tensor<1x64xf32>, tensor<64x32xf32> -> tensor<1x32xf32>
      tile.yield %m : tensor<1x32xf32>
    }
    %o = tile.vec_stage "post" -> (tensor<1x32xf32>) {
      %b = tile.abs %y : tensor<1x32xf32> -> tensor<1x32xf32>
      tile.yield %b : tensor<1x32xf32>
    }
    tile.store %o, %out[%i] : tensor<1x32xf32> -> tensor<?x32xf32>
  }
  func.return
}

// -----

// Stage settings already present are kept.
// CHECK-LABEL: func.func @pinned
// CHECK: tile.vec_stage "norm" nbuffer 4
// CHECK: tile.cube_stage "linear" l1_reuse 1 nbuffer 3
func.func @pinned(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>, %out: tensor<?x32xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xf32>
  tile.token_loop %i = %c0 to %t step 1 {
    %xt = tile.load %x[%i] : tensor<?x64xf32> -> tensor<1x64xf32>
    %wt = tile.load %w cache normal : tensor<64x32xf32> -> tensor<64x32xf32>
    %n = tile.vec_stage "norm" nbuffer 4 -> (tensor<1x64xf32>) {
      %a = tile.abs %xt : tensor<1x64xf32> -> tensor<1x64xf32>
      tile.yield %a : tensor<1x64xf32>
    }
    %y = tile.cube_stage "linear" l1_reuse 1 nbuffer 3 -> (tensor<1x32xf32>) {
      %m = tile.matmul %n, %wt : tensor<1x64xf32>, tensor<64x32xf32> -> tensor<1x32xf32>
      tile.yield %m : tensor<1x32xf32>
    }
    tile.store %y, %out[%i] : tensor<1x32xf32> -> tensor<?x32xf32>
  }
  func.return
}

// The kernel's pinned pto.options win over the pass option.
// PINNED: tile.vec_stage "q-rmsnorm" nbuffer 2
// BADVAL: pto-opt: error: bad pass pipeline {{.*}}: tile-apply-settings: vec_nbuffer_setting: '0:x' is not 'group:count'
// BADKEY: pto-opt: error: bad pass pipeline {{.*}}: tile-apply-settings: cube_l1_reuse_setting: '-1:0' needs a positive count
