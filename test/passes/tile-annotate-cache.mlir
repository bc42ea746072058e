// RUN: pto-opt %s --split-input-file -p tile-annotate-cache | filecheck %s
// RUN: pto-opt %S/../../examples/hc_pre.mlir -p pto-classify-skeleton,pto-to-tile,tile-unroll,tile-annotate-cache | filecheck %s --check-prefix=MHC

// The standard form: the matmul's weight is streamed once per token tile -> none_cacheable;
// gamma keeps the default. The buffering settings are tile-apply-settings' (none here).
// CHECK-LABEL: func.func @standard
// CHECK: tile.load %g : tensor<64xf32> -> tensor<64xf32>
// CHECK: tile.load %w cache none_cacheable : tensor<64x32xf32> -> tensor<64x32xf32>
// CHECK: tile.vec_stage "norm" -> (tensor<1x64xf32>)
// CHECK: tile.cube_stage "linear" -> (tensor<1x32xf32>)
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

// A pinned policy is kept.
// CHECK-LABEL: func.func @pinned
// CHECK: tile.load %w cache normal
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

// -----

// The mhc_pre variant keeps a weight that fits in L2 cacheable, but not one that does not
// fit (256 MiB of f32 against the 192 MiB of ascend910b1's L2).
// CHECK-LABEL: func.func @mhc_huge
// CHECK: tile.load %w cache none_cacheable
func.func @mhc_huge(%x: tensor<?x16384xf32>, %w: tensor<16384x4096xf32>, %out: tensor<?x4096xf32>) attributes {pto.form = #pto.form<mhc_pre>} {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x16384xf32>
  tile.token_loop %i = %c0 to %t step 1 {
    %xt = tile.load %x[%i] : tensor<?x16384xf32> -> tensor<1x16384xf32>
    %wt = tile.load %w : tensor<16384x4096xf32> -> tensor<16384x4096xf32>
    %y = tile.cube_stage "linear" -> (tensor<1x4096xf32>) {
      %m = tile.matmul %xt, %wt : tensor<1x16384xf32>, tensor<16384x4096xf32> -> tensor<1x4096xf32>
      tile.yield %m : tensor<1x4096xf32>
    }
    tile.store %y, %out[%i] : tensor<1x4096xf32> -> tensor<?x4096xf32>
  }
  func.return
}

// MHC-COUNT-2: tile.load %hc_fn{{.*}} cache normal
