// RUN: pto-opt %s --split-input-file --verify-diagnostics -p tile-assign-shapes > /dev/null
// RUN: pto-opt %S/../../examples/sk03_standard.mlir -p pto-classify-skeleton,pto-to-tile,tile-unroll,tile-annotate-cache,tile-apply-settings,tile-assign-shapes | filecheck %s --check-prefix=STD
// RUN: pto-opt %S/../../examples/mla_wqa_qrmsnorm.mlir -p pto-classify-skeleton,pto-to-tile,tile-unroll,tile-annotate-cache,tile-apply-settings,tile-assign-shapes | filecheck %s --check-prefix=PINNED
// RUN: pto-opt %S/../../examples/hc_pre.mlir -p 'pto-classify-skeleton,pto-to-tile,tile-unroll{factors=128,64,16},tile-annotate-cache,tile-apply-settings,tile-assign-shapes' | filecheck %s --check-prefix=MHC
// RUN: pto-opt %S/../../examples/sk03_standard.mlir -p 'pto-classify-skeleton,pto-to-tile,tile-unroll{factors=16},tile-annotate-cache,tile-apply-settings,tile-assign-shapes{target=ascend950}' | filecheck %s --check-prefix=T950
// RUN: not pto-opt %S/../../examples/sk03_standard.mlir -p 'pto-classify-skeleton,pto-to-tile,tile-assign-shapes{target=h100}' 2>&1 | filecheck %s --check-prefix=NOTARGET
// The `pto.host_transpose` argument hint: true passes a b_trans weight [K, N] in any
// form, false keeps the mhc_pre variant's weight as it is, a weight already [K, N] is an error.
// RUN: sed 's/#pto.cache<none_cacheable>}/#pto.cache<none_cacheable>, pto.host_transpose = true}/' %S/../../examples/sk03_standard.mlir | pto-opt -p pto-classify-skeleton,pto-to-tile,tile-unroll,tile-annotate-cache,tile-apply-settings,tile-assign-shapes | filecheck %s --check-prefix=HT
// HT: tile.load %w cache none_cacheable host_transpose : tensor<1024x4096xbf16> -> tensor<4096x1024xbf16>
// HT-NOT: b_trans
// RUN: sed 's/%hc_fn: tensor<24x16384xf32>/%hc_fn: tensor<24x16384xf32> {pto.host_transpose = false}/' %S/../../examples/hc_pre.mlir | pto-opt -p pto-classify-skeleton,pto-to-tile,tile-unroll,tile-annotate-cache,tile-apply-settings,tile-assign-shapes | filecheck %s --check-prefix=NOHT
// NOHT-NOT: host_transpose :
// NOHT: tile.matmul %{{.*}}, %hc_fn_tile b_trans
// RUN: not pto-opt %S/Inputs/host_transpose_kn.mlir -p pto-classify-skeleton,pto-to-tile,tile-assign-shapes 2>&1 | filecheck %s --check-prefix=HTKN
// HTKN: error: 'pto.host_transpose' on a weight the matmul reads as [K, N] already (no b_trans): only a whole [N, K] weight used with b_trans is passed transposed

// The standard kernel: whole rows in the vector stage, as many as UB holds with its
// double buffering; cube tiles for 128-row tiles, N halved until the 24 cores have work.
// STD: tile.token_loop {{.*}} step 128 {
// STD: tile.vec_stage "rmsnorm" tile [2, 4096] nbuffer 2
// STD: tile.cube_stage "linear" tiles <m = [128, 128], k = [256, 512], n = [64, 64]> l1_reuse 2 nbuffer 1
// STD: tile.token_loop {{.*}} step 1 {
// STD: tile.vec_stage "rmsnorm" tile [1, 4096] nbuffer 2
// STD: tile.cube_stage "linear" tiles <m = [16, 16], k = [512, 1024], n = [64, 64]>

// Pinned shapes (the reference kernel's) are kept, but an M tile never exceeds the
// body: the 16-token body (and the 1-token one, 16-padded) gets m [16, 16].
// PINNED: tile.cube_stage "wqa-linear" tiles <m = [32, 32], k = [512, 512], n = [64, 64]>
// PINNED: step 16 {
// PINNED: tile.cube_stage "wqa-linear" tiles <m = [16, 16], k = [512, 512], n = [64, 64]>
// PINNED: step 1 {
// PINNED: tile.cube_stage "wqa-linear" tiles <m = [16, 16], k = [512, 512], n = [64, 64]>
// PINNED: tile.vec_stage "q-rmsnorm" tile [8, 1024]

// The mhc_pre variant, by tile height: <= 32 no split-K, <= 64 split-K, larger k=[512,2048];
// the weight is transposed once on the host instead of b_trans; long vector scans.
// MHC: tile.token_loop {{.*}} step 128 {
// MHC: tile.load %hc_fn cache normal host_transpose : tensor<24x16384xf32> -> tensor<16384x24xf32>
// MHC: tile.vec_stage "pre" tile [{{[0-9]+}}, 2048]
// MHC: tile.cube_stage "hc-linear" tiles <m = [16, 16], k = [512, 2048], n = [128, 128], split_k>
// MHC-NEXT: tile.matmul {{.*}} : tensor<128x16384xf32>, tensor<16384x24xf32> -> tensor<128x24xf32>
// MHC: step 64 {
// MHC: tile.cube_stage "hc-linear" tiles <m = [16, 16], k = [512, 1024], n = [128, 128], split_k>
// MHC: step 16 {
// MHC: tile.cube_stage "hc-linear" tiles <m = [16, 16], k = [512, 1024], n = [128, 128]> l1_reuse
// MHC: step 1 {

// T950: func.func @linear_projection{{.*}}pto.target = "ascend950"
// T950: tile.vec_stage "rmsnorm" tile [2, 4096]
// NOTARGET: pto-opt: error: bad pass pipeline {{.*}}: unknown target 'h100' (known: ascend910b1, ascend910b1-pypto020, ascend950)

// -----

// Capacity violations name the buffer, its level, and bytes needed vs available.
func.func @l0a(%x: tensor<?x512xbf16>, %w: tensor<512x128xbf16>, %out: tensor<?x128xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x512xbf16>
  tile.token_loop %i = %c0 to %t step 128 {
    %xt = tile.load %x[%i] : tensor<?x512xbf16> -> tensor<128x512xbf16>
    // expected-error@+1 {{cube stage 'linear': L0A tile m=128 x k=512 bf16 needs 131072 bytes of l0a, but ascend910b1 has 65536}}
    %y = tile.cube_stage "linear" tiles <m = [128, 128], k = [512, 512], n = [64, 64]> -> (tensor<128x128xf32>) {
      %m = tile.matmul %xt, %w : tensor<128x512xbf16>, tensor<512x128xbf16> -> tensor<128x128xf32>
      tile.yield %m : tensor<128x128xf32>
    }
    tile.store %y, %out[%i] : tensor<128x128xf32> -> tensor<?x128xf32>
  }
  func.return
}

// -----

func.func @l0c(%x: tensor<?x64xbf16>, %w: tensor<64x512xbf16>, %out: tensor<?x512xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 128 {
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<128x64xbf16>
    // expected-error@+1 {{cube stage 'linear': L0C tile m=128 x n=512 accumulator needs 262144 bytes of l0c, but ascend910b1 has 131072}}
    %y = tile.cube_stage "linear" tiles <m = [128, 128], k = [64, 64], n = [512, 512]> nbuffer 2 -> (tensor<128x512xf32>) {
      %m = tile.matmul %xt, %w : tensor<128x64xbf16>, tensor<64x512xbf16> -> tensor<128x512xf32>
      tile.yield %m : tensor<128x512xf32>
    }
    tile.store %y, %out[%i] : tensor<128x512xf32> -> tensor<?x512xf32>
  }
  func.return
}

// -----

func.func @l1(%x: tensor<?x8192xbf16>, %w: tensor<8192x256xbf16>, %out: tensor<?x256xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x8192xbf16>
  tile.token_loop %i = %c0 to %t step 128 {
    %xt = tile.load %x[%i] : tensor<?x8192xbf16> -> tensor<128x8192xbf16>
    // expected-error@+1 {{cube stage 'linear': L1 tiles m=128 x k=2048 + n=128 x k=2048 of bf16 needs 1048576 bytes of l1, but ascend910b1 has 524288}}
    %y = tile.cube_stage "linear" tiles <m = [64, 128], k = [128, 2048], n = [64, 128]> l1_reuse 2 -> (tensor<128x256xf32>) {
      %m = tile.matmul %xt, %w : tensor<128x8192xbf16>, tensor<8192x256xbf16> -> tensor<128x256xf32>
      tile.yield %m : tensor<128x256xf32>
    }
    tile.store %y, %out[%i] : tensor<128x256xf32> -> tensor<?x256xf32>
  }
  func.return
}

// -----

func.func @ub(%x: tensor<?x16384xf32>, %w: tensor<16384x16xf32>, %out: tensor<?x16xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x16384xf32>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x16384xf32> -> tensor<16x16384xf32>
    // expected-error@+1 {{vector stage 'norm': tile [8, 16384] needs 1048576 bytes of ub (largest buffer tensor<16x16384xf32> (tile.abs)), but ascend910b1 has 196608}}
    %n = tile.vec_stage "norm" tile [8, 16384] nbuffer 2 -> (tensor<16x16384xf32>) {
      %a = tile.abs %xt : tensor<16x16384xf32> -> tensor<16x16384xf32>
      tile.yield %a : tensor<16x16384xf32>
    }
    %y = tile.cube_stage "linear" -> (tensor<16x16xf32>) {
      %m = tile.matmul %n, %w : tensor<16x16384xf32>, tensor<16384x16xf32> -> tensor<16x16xf32>
      tile.yield %m : tensor<16x16xf32>
    }
    tile.store %y, %out[%i] : tensor<16x16xf32> -> tensor<?x16xf32>
  }
  func.return
}

// -----

// A pinned vector tile narrower than a 32-byte block of its data (4 bf16 elements of 16)
// is not one the hardware runs; it used to cut every row into chunk tasks for minutes.
func.func @narrow(%x: tensor<?x256xbf16>, %w: tensor<256x16xbf16>, %out: tensor<?x16xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x256xbf16>
  tile.token_loop %i = %c0 to %t step 2 {
    %xt = tile.load %x[%i] : tensor<?x256xbf16> -> tensor<2x256xbf16>
    // expected-error@+1 {{vector stage 'norm': tile [1, 4] is narrower than a 32-byte block of its data (16 elements)}}
    %n = tile.vec_stage "norm" tile [1, 4] -> (tensor<2x256xbf16>) {
      %a = tile.abs %xt : tensor<2x256xbf16> -> tensor<2x256xbf16>
      tile.yield %a : tensor<2x256xbf16>
    }
    %y = tile.cube_stage "linear" -> (tensor<2x16xf32>) {
      %m = tile.matmul %n, %w : tensor<2x256xbf16>, tensor<256x16xbf16> -> tensor<2x16xf32>
      tile.yield %m : tensor<2x16xf32>
    }
    tile.store %y, %out[%i] : tensor<2x16xf32> -> tensor<?x16xf32>
  }
  func.return
}

// -----

// A row far too long for UB even one row at a time is rejected, not silently mistiled.
func.func @ub_row(%x: tensor<?x65536xf32>, %w: tensor<65536x16xf32>, %out: tensor<?x16xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x65536xf32>
  tile.token_loop %i = %c0 to %t step 1 {
    %xt = tile.load %x[%i] : tensor<?x65536xf32> -> tensor<1x65536xf32>
    // expected-error@+1 {{vector stage 'norm': even a one-row tile needs 1048576 bytes of ub}}
    %n = tile.vec_stage "norm" nbuffer 2 -> (tensor<1x65536xf32>) {
      %a = tile.abs %xt : tensor<1x65536xf32> -> tensor<1x65536xf32>
      tile.yield %a : tensor<1x65536xf32>
    }
    %y = tile.cube_stage "linear" -> (tensor<1x16xf32>) {
      %m = tile.matmul %n, %w : tensor<1x65536xf32>, tensor<65536x16xf32> -> tensor<1x16xf32>
      tile.yield %m : tensor<1x16xf32>
    }
    tile.store %y, %out[%i] : tensor<1x16xf32> -> tensor<?x16xf32>
  }
  func.return
}
