// RUN: pto-opt %s --split-input-file --verify-diagnostics -p tile-assign-shapes | filecheck %s --check-prefix=RAGGED
// RUN: pto-opt %S/../../examples/sk03_standard.mlir -p pto-classify-skeleton,pto-to-tile,tile-unroll,tile-annotate-cache,tile-apply-settings,tile-assign-shapes | filecheck %s --check-prefix=STD
// RUN: pto-opt %S/../lowering/Inputs/w8a16.mlir -p pto-classify-skeleton,pto-to-tile,tile-assign-shapes 2>&1 | filecheck %s --check-prefix=W8
// RUN: pto-opt %S/Inputs/weight_stage.mlir -p tile-assign-shapes | filecheck %s --check-prefix=WS
// RUN: pto-opt %S/Inputs/weight_stage_rank1.mlir -p tile-assign-shapes,tile-to-npu | filecheck %s --check-prefix=WSR1
// Each task of the weight stage loads its [16, 32] tile of the weight and its columns of gamma.
// WSR1: npu.tasks "weight" vector (%{{.*}}, %{{.*}}) in (%{{.*}}, 4) {
// WSR1: npu.dma mte2 %w[%row, %col] -> %{{.*}}[0, 0] : !npu.buf<64x32xf32, gm> -> !npu.buf<16x32xf32, ub>
// WSR1: npu.dma mte2 %g[%col] -> %{{.*}}[0] : !npu.buf<32xf32, gm> -> !npu.buf<32xf32, ub>
// WSR1: npu.vmul %{{.*}}, %{{.*}} -> %{{.*}} : !npu.buf<16x32xf32, ub>, !npu.buf<32xf32, ub> -> !npu.buf<16x32xf32, ub>
// RUN: pto-opt %S/../../examples/mla_wqa_qrmsnorm.mlir -p pto-classify-skeleton,pto-to-tile,tile-unroll,tile-annotate-cache,tile-apply-settings,tile-assign-shapes | filecheck %s --check-prefix=PINNED
// RUN: pto-opt %S/../../examples/hc_pre.mlir -p 'pto-classify-skeleton,pto-to-tile,tile-unroll{factors=128,64,16},tile-annotate-cache,tile-apply-settings,tile-assign-shapes' | filecheck %s --check-prefix=MHC
// RUN: pto-opt %S/../../examples/sk03_standard.mlir -p 'pto-classify-skeleton,pto-to-tile,tile-unroll{factors=16},tile-annotate-cache,tile-apply-settings,tile-assign-shapes{target=ascend950}' | filecheck %s --check-prefix=T950
// RUN: pto-opt %s --split-input-file --verify-diagnostics -p tile-assign-shapes | filecheck %s --check-prefix=PLAN
// RUN: pto-opt %S/../../examples/indexer_query_linear_int8.mlir -p pto-fuse-stages,pto-classify-skeleton,pto-to-tile,tile-unroll,tile-annotate-cache,tile-apply-settings,tile-assign-shapes 2>&1 | filecheck %s --check-prefix=KEEP
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
// RUN: pto-opt %S/Inputs/post_phase_cut.mlir -p tile-assign-shapes 2>%t.cut | filecheck %s --check-prefix=CUT
// RUN: filecheck %s --check-prefix=CUTWARN < %t.cut
// RUN: pto-opt %S/Inputs/post_phase_cut.mlir -p tile-assign-shapes,tile-to-npu 2>/dev/null | filecheck %s --check-prefix=CUTNPU
// HTKN: error: 'pto.host_transpose' on a weight the matmul reads as [K, N] already (no b_trans): only a whole [N, K] weight used with b_trans is passed transposed

// The standard kernel: whole rows in the vector stage, as many as UB holds with its
// double buffering; cube tiles for 128-row tiles, N halved until the 24 cores have work.
// STD: tile.token_loop {{.*}} step 128 {
// STD: tile.vec_stage "rmsnorm" tile [4, 4096] nbuffer 2 phase <rows = 4, copies = 1>
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

// A tile narrower than a block, widened (narrow below).
// PLAN-LABEL: func.func @narrow
// PLAN: tile.vec_stage "norm" tile [1, 16] phase

// A row no tile of which fits UB whole is cut into column chunks (nothing pinned: no warning).
// PLAN-LABEL: func.func @ub_row_columns
// PLAN: tile.vec_stage "norm" tile [1, 65536] nbuffer 2 phase <rows = 1, copies = 1, chunk = 32768 of 65536>

// A reduction of a normalised row: three passes over the columns (@three_passes below).
// PLAN-LABEL: func.func @three_passes
// PLAN: tile.vec_stage "norm" tile [4, 64] phase <rows = 4, copies = 1, chunk = 64 of 256>

// A tile width that does not divide the row (ragged_tile below).
// PLAN-LABEL: func.func @ragged_tile
// PLAN: tile.vec_stage "norm" tile [4, 96] phase <rows = 4, copies = 1, chunk = 64 of 256>

// RMSNorm and quant, column-tiled (norm_quant_columns below).
// PLAN-LABEL: func.func @norm_quant_columns
// PLAN: tile.vec_stage "norm" tile [4, 4096] phase <rows = 4, copies = 1, chunk = 2048 of 4096>

// The gate and up halves of one matmul, views of its columns in GM (gate_up_columns below).
// PLAN-LABEL: func.func @gate_up_columns
// PLAN: tile.vec_stage "swiglu" tile [4, 64] phase <rows = 4, copies = 1, chunk = 64 of 128>

// A pinned plan is kept (column chunks of 1024 on 4096-wide rows).
// PLAN-LABEL: func.func @pinned_columns
// PLAN: tile.vec_stage "norm" tile [4, 4096] phase <rows = 4, copies = 1, chunk = 1024 of 4096>

// vec_nbuffer_setting {0: 2} pinned, the rows not: the rows are halved to keep both copies,
// silently (8 rows fit once, not twice, in the fused norm + quant phase).
// KEEP-NOT: warning
// KEEP: tile.vec_stage "q-rmsnorm" tile [8, 1024] nbuffer 2 phase <rows = 4, copies = 2>

// T950: func.func @linear_projection{{.*}}pto.target = "ascend950"
// T950: tile.vec_stage "rmsnorm" tile [4, 4096] nbuffer 2 phase <rows = 4, copies = 1>
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
    // PyPTO runs L1 tiles larger than L1: halved here until they fit, with a warning.
    // expected-warning@+1 {{cube stage 'linear': pinned tiles changed to run here: kL1 2048 -> 1024 (L1 holds 524288 bytes)}}
    %y = tile.cube_stage "linear" tiles <m = [128, 128], k = [128, 2048], n = [128, 128]> l1_reuse 2 -> (tensor<128x256xf32>) {
      %m = tile.matmul %xt, %w : tensor<128x8192xbf16>, tensor<8192x256xbf16> -> tensor<128x256xf32>
      tile.yield %m : tensor<128x256xf32>
    }
    tile.store %y, %out[%i] : tensor<128x256xf32> -> tensor<?x256xf32>
  }
  func.return
}

// -----

// PyPTO splits K of an int8 matmul too; here its i32 partial sums are not added:
// split-K off, with a warning (the i32 sum is exact: the same numbers).
func.func @split_k_i32(%x: tensor<?x2048xi8>, %w: tensor<2048x256xi8>, %out: tensor<?x256xi32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x2048xi8>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x2048xi8> -> tensor<16x2048xi8>
    // expected-warning@+1 {{cube stage 'linear': pinned tiles changed to run here: split-K off (partial sums of an i32 accumulator are not modelled; the same numbers)}}
    %y = tile.cube_stage "linear" tiles <m = [16, 16], k = [256, 512], n = [128, 128], split_k> -> (tensor<16x256xi32>) {
      %m = tile.matmul %xt, %w : tensor<16x2048xi8>, tensor<2048x256xi8> -> tensor<16x256xi32>
      tile.yield %m : tensor<16x256xi32>
    }
    tile.store %y, %out[%i] : tensor<16x256xi32> -> tensor<?x256xi32>
  }
  func.return
}

// -----

// N = 1000, N = 513 (PyPTO's test_matmul_l0c2ub) and K = 255 (its test_matmul_quant):
// no tile divides them, and the pinned tiles are kept as PyPTO keeps them, the last tile
// of each axis a ragged tail (tile-to-npu cuts it): no warning.
func.func @ragged_tails(%x: tensor<?x255xi8>, %w: tensor<1000x255xi8>, %out: tensor<?x1000xi32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x255xi8>
  tile.token_loop %i = %c0 to %t step 64 {
    %xt = tile.load %x[%i] : tensor<?x255xi8> -> tensor<64x255xi8>
    %y = tile.cube_stage "linear" tiles <m = [64, 64], k = [64, 128], n = [128, 128]> -> (tensor<64x1000xi32>) {
      %m = tile.matmul %xt, %w b_trans : tensor<64x255xi8>, tensor<1000x255xi8> -> tensor<64x1000xi32>
      tile.yield %m : tensor<64x1000xi32>
    }
    tile.store %y, %out[%i] : tensor<64x1000xi32> -> tensor<?x1000xi32>
  }
  func.return
}
// RAGGED-LABEL: func.func @ragged_tails
// RAGGED: tile.cube_stage "linear" tiles <m = [64, 64], k = [64, 128], n = [128, 128]>

// -----

// Split-K of a ragged K is kept: its last run holds the ragged slice.
func.func @split_ragged(%x: tensor<?x1000xf16>, %w: tensor<1000x128xf16>, %out: tensor<?x128xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x1000xf16>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x1000xf16> -> tensor<16x1000xf16>
    %y = tile.cube_stage "linear" tiles <m = [16, 16], k = [128, 256], n = [128, 128], split_k> -> (tensor<16x128xf32>) {
      %m = tile.matmul %xt, %w : tensor<16x1000xf16>, tensor<1000x128xf16> -> tensor<16x128xf32>
      tile.yield %m : tensor<16x128xf32>
    }
    tile.store %y, %out[%i] : tensor<16x128xf32> -> tensor<?x128xf32>
  }
  func.return
}
// RAGGED-LABEL: func.func @split_ragged
// RAGGED: tile.cube_stage "linear" tiles <m = [16, 16], k = [128, 256], n = [128, 128], split_k>

// -----

func.func @l1_unfixable(%x: tensor<?x2560xbf16>, %w: tensor<2560x256xbf16>, %out: tensor<?x256xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x2560xbf16>
  tile.token_loop %i = %c0 to %t step 128 {
    %xt = tile.load %x[%i] : tensor<?x2560xbf16> -> tensor<128x2560xbf16>
    // (half of kL1 = 1280 is not a multiple of kL0 = 256)
    // expected-error@+1 {{cube stage 'linear': L1 tiles m=128 x k=1280 + n=128 x k=1280 of bf16 needs 655360 bytes of l1, but ascend910b1 has 524288}}
    %y = tile.cube_stage "linear" tiles <m = [128, 128], k = [256, 1280], n = [128, 128]> -> (tensor<128x256xf32>) {
      %m = tile.matmul %xt, %w : tensor<128x2560xbf16>, tensor<2560x256xbf16> -> tensor<128x256xf32>
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
    // expected-warning@+1 {{vector stage 'norm': pinned whole rows -> column chunks of 2048: the fused phase (1 stage(s)) needs 2097152 bytes of ub as pinned, ascend910b1 has 196608}}
    %n = tile.vec_stage "norm" tile [8, 16384] nbuffer 2 -> (tensor<16x16384xf32>) {
      %a = tile.abs %xt : tensor<16x16384xf32> -> tensor<16x16384xf32>
      %b = tile.add %a, %xt : tensor<16x16384xf32>, tensor<16x16384xf32> -> tensor<16x16384xf32>
      tile.yield %b : tensor<16x16384xf32>
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
// is not one the hardware runs (it used to cut every row into chunk tasks for minutes):
// widened to one block, and said (PyPTO 0.2.0 accepts it).
func.func @narrow(%x: tensor<?x256xbf16>, %w: tensor<256x16xbf16>, %out: tensor<?x16xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x256xbf16>
  tile.token_loop %i = %c0 to %t step 2 {
    %xt = tile.load %x[%i] : tensor<?x256xbf16> -> tensor<2x256xbf16>
    // expected-warning@+1 {{vector stage 'norm': tile [1, 4] is narrower than a 32-byte block of its data (16 elements): widened to [1, 16] (where a tile of more sizes was set, a 2-D op takes its first ones, as in PyPTO)}}
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

// A row far too long for UB even one row at a time, in a phase that cannot be cut into
// column chunks (tile.slice is not column-tiled), is rejected, not silently mistiled.
func.func @ub_row(%x: tensor<?x65536xf32>, %w: tensor<32768x16xf32>, %out: tensor<?x16xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x65536xf32>
  tile.token_loop %i = %c0 to %t step 1 {
    %xt = tile.load %x[%i] : tensor<?x65536xf32> -> tensor<1x65536xf32>
    // expected-error@+1 {{vector stage 'norm': even a one-row tile of the fused phase (1 stage(s)) needs 393216 bytes of ub (largest buffer [1, 65536] f32 (input of tile.slice))}}
    %n = tile.vec_stage "norm" nbuffer 2 -> (tensor<1x32768xf32>) {
      %a = tile.slice %xt at 32768 : tensor<1x65536xf32> -> tensor<1x32768xf32>
      tile.yield %a : tensor<1x32768xf32>
    }
    %y = tile.cube_stage "linear" -> (tensor<1x16xf32>) {
      %m = tile.matmul %n, %w : tensor<1x32768xf32>, tensor<32768x16xf32> -> tensor<1x16xf32>
      tile.yield %m : tensor<1x16xf32>
    }
    tile.store %y, %out[%i] : tensor<1x16xf32> -> tensor<?x16xf32>
  }
  func.return
}
// -----

// The same row through an elementwise op is cut into column chunks instead.
func.func @ub_row_columns(%x: tensor<?x65536xf32>, %w: tensor<65536x16xf32>, %out: tensor<?x16xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x65536xf32>
  tile.token_loop %i = %c0 to %t step 1 {
    %xt = tile.load %x[%i] : tensor<?x65536xf32> -> tensor<1x65536xf32>
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

// -----


// A reduction of a normalised row: three passes over the columns (the sum of squares,
// the max of the normalised chunks, the normalised chunks stored), no whole rows.
func.func @three_passes(%x: tensor<?x256xf32>, %w: tensor<256x32xf32>, %out: tensor<?x32xf32> {pto.output},
                      %out1: tensor<?x1xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x256xf32>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x256xf32> -> tensor<16x256xf32>
    %n, %s = tile.vec_stage "norm" tile [4, 64] -> (tensor<16x256xf32>, tensor<16x1xf32>) {
      %y = tile.rms_norm %xt eps = 1.0e-06 : tensor<16x256xf32> -> tensor<16x256xf32>
      %m = tile.reduce max %y : tensor<16x256xf32> -> tensor<16x1xf32>
      tile.yield %y, %m : tensor<16x256xf32>, tensor<16x1xf32>
    }
    %z = tile.cube_stage "linear" tiles <m = [16, 16], k = [64, 256], n = [32, 32]> -> (tensor<16x32xf32>) {
      %mm = tile.matmul %n, %w : tensor<16x256xf32>, tensor<256x32xf32> -> tensor<16x32xf32>
      tile.yield %mm : tensor<16x32xf32>
    }
    tile.store %z, %out[%i] : tensor<16x32xf32> -> tensor<?x32xf32>
    tile.store %s, %out1[%i] : tensor<16x1xf32> -> tensor<?x1xf32>
  }
  func.return
}

// -----

// A tile width that does not divide the row (96 of 256: PyPTO runs a last, narrower
// chunk): the widest equal chunks that do, and said.
func.func @ragged_tile(%x: tensor<?x256xf32>, %w: tensor<256x32xf32>, %out: tensor<?x32xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x256xf32>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x256xf32> -> tensor<16x256xf32>
    // expected-warning@+1 {{vector tile [4, 96]: its width 96 does not divide the 256-column row: column chunks of 64}}
    %n = tile.vec_stage "norm" tile [4, 96] -> (tensor<16x256xf32>) {
      %y = tile.rms_norm %xt eps = 1.0e-06 : tensor<16x256xf32> -> tensor<16x256xf32>
      tile.yield %y : tensor<16x256xf32>
    }
    %z = tile.cube_stage "linear" tiles <m = [16, 16], k = [64, 256], n = [32, 32]> -> (tensor<16x32xf32>) {
      %mm = tile.matmul %n, %w : tensor<16x256xf32>, tensor<256x32xf32> -> tensor<16x32xf32>
      tile.yield %mm : tensor<16x32xf32>
    }
    tile.store %z, %out[%i] : tensor<16x32xf32> -> tensor<?x32xf32>
  }
  func.return
}

// -----

// Fused, the norm and the quant stages do not fit UB at 4 rows of 4096 f32: the phase is
// column-tiled (three passes: the squares, the normalised rows' amax, the quantised
// rows), its 4 rows kept, and said.
func.func @norm_quant_columns(%x: tensor<?x4096xf32>, %w: tensor<4096x32xi8>, %out: tensor<?x32xi32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x4096xf32>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x4096xf32> -> tensor<16x4096xf32>
    // expected-warning@+1 {{vector stage 'norm': pinned whole rows -> column chunks of 2048: the fused phase (2 stage(s)) needs 262208 bytes of ub as pinned, ascend910b1 has 196608 (in the 16-token body)}}
    %n = tile.vec_stage "norm" tile [4, 4096] -> (tensor<16x4096xf32>) {
      %r = tile.rms_norm %xt eps = 1.0e-06 : tensor<16x4096xf32> -> tensor<16x4096xf32>
      tile.yield %r : tensor<16x4096xf32>
    }
    %q, %s = tile.vec_stage "quant" tile [4, 4096] -> (tensor<16x4096xi8>, tensor<16x1xf32>) {
      %q0, %s0 = tile.quant %n : tensor<16x4096xf32> -> tensor<16x4096xi8>, tensor<16x1xf32>
      tile.yield %q0, %s0 : tensor<16x4096xi8>, tensor<16x1xf32>
    }
    %y = tile.cube_stage "linear" tiles <m = [16, 16], k = [512, 512], n = [32, 32]> -> (tensor<16x32xi32>) {
      %m = tile.matmul %q, %w : tensor<16x4096xi8>, tensor<4096x32xi8> -> tensor<16x32xi32>
      tile.yield %m : tensor<16x32xi32>
    }
    tile.store %y, %out[%i] : tensor<16x32xi32> -> tensor<?x32xi32>
  }
  func.return
}

// -----

// A vector tile narrower than the row does not column-tile slices (of a value in UB: a
// slice of the cube's result itself would be a view of it in GM) and concatenations:
// whole rows, and said.
func.func @rope_narrow_tile(%x: tensor<?x64xbf16>, %w: tensor<128x64xbf16>, %out: tensor<?x128xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<16x64xbf16>
    %y = tile.cube_stage "linear" tiles <m = [16, 16], k = [64, 64], n = [128, 128]> -> (tensor<16x128xf32>) {
      %m = tile.matmul %xt, %w b_trans : tensor<16x64xbf16>, tensor<128x64xbf16> -> tensor<16x128xf32>
      tile.yield %m : tensor<16x128xf32>
    }
    // expected-warning@+1 {{vector tile [4, 64] is narrower than the 128-column row, but a column slice of a value computed in the phase is not cut into column chunks: each task processes whole rows}}
    %r = tile.vec_stage "rope" tile [4, 64] -> (tensor<16x128xf32>) {
      %ys = tile.muls %y, 2.0 : tensor<16x128xf32> -> tensor<16x128xf32>
      %pe = tile.slice %ys at 64 : tensor<16x128xf32> -> tensor<16x64xf32>
      %x1 = tile.slice %pe at 0 : tensor<16x64xf32> -> tensor<16x32xf32>
      %x2 = tile.slice %pe at 32 : tensor<16x64xf32> -> tensor<16x32xf32>
      %n2 = tile.muls %x2, -1.0 : tensor<16x32xf32> -> tensor<16x32xf32>
      %rot = tile.concat %n2, %x1 : tensor<16x32xf32>, tensor<16x32xf32> -> tensor<16x64xf32>
      %kv = tile.slice %ys at 0 : tensor<16x128xf32> -> tensor<16x64xf32>
      %o = tile.concat %kv, %rot : tensor<16x64xf32>, tensor<16x64xf32> -> tensor<16x128xf32>
      tile.yield %o : tensor<16x128xf32>
    }
    tile.store %r, %out[%i] : tensor<16x128xf32> -> tensor<?x128xf32>
  }
  func.return
}

// -----

// The gate and up halves of one matmul are views of its columns in GM: a tile narrower
// than a half column-tiles the phase, without a warning.
func.func @gate_up_columns(%x: tensor<?x64xbf16>, %w: tensor<256x64xbf16>, %out: tensor<?x128xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<16x64xbf16>
    %y = tile.cube_stage "linear" tiles <m = [16, 16], k = [64, 64], n = [128, 128]> -> (tensor<16x256xf32>) {
      %m = tile.matmul %xt, %w b_trans : tensor<16x64xbf16>, tensor<256x64xbf16> -> tensor<16x256xf32>
      tile.yield %m : tensor<16x256xf32>
    }
    %r = tile.vec_stage "swiglu" tile [4, 64] -> (tensor<16x128xf32>) {
      %g = tile.slice %y at 0 : tensor<16x256xf32> -> tensor<16x128xf32>
      %u = tile.slice %y at 128 : tensor<16x256xf32> -> tensor<16x128xf32>
      %e = tile.exp %g : tensor<16x128xf32> -> tensor<16x128xf32>
      %o = tile.mul %e, %u : tensor<16x128xf32>, tensor<16x128xf32> -> tensor<16x128xf32>
      tile.yield %o : tensor<16x128xf32>
    }
    tile.store %r, %out[%i] : tensor<16x128xf32> -> tensor<?x128xf32>
  }
  func.return
}

// The phase plan: fewer copies than a pinned vec_nbuffer_setting asks for is said;
// a pinned plan is checked, not replaced; nbuffer is bounded by the flags' event ids.
// -----

func.func @fewer_copies(%x: tensor<?x4096xf32>, %w: tensor<4096x16xf32>, %out: tensor<?x16xf32>) attributes {pto.options = {vec_nbuffer_setting = {"0" = 2}}} {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x4096xf32>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x4096xf32> -> tensor<16x4096xf32>
    // expected-warning@+1 {{vector stage 'norm': vec_nbuffer_setting 2 -> 1 tiles merged per task (each in a UB copy of its own): the fused phase (1 stage(s)) needs 262144 bytes of ub as pinned, ascend910b1 has 196608}}
    %n = tile.vec_stage "norm" tile [4, 4096] nbuffer 2 -> (tensor<16x4096xf32>) {
      %a = tile.abs %xt : tensor<16x4096xf32> -> tensor<16x4096xf32>
      %b = tile.add %a, %xt : tensor<16x4096xf32>, tensor<16x4096xf32> -> tensor<16x4096xf32>
      tile.yield %b : tensor<16x4096xf32>
    }
    %y = tile.cube_stage "linear" -> (tensor<16x16xf32>) {
      %m = tile.matmul %n, %w : tensor<16x4096xf32>, tensor<4096x16xf32> -> tensor<16x16xf32>
      tile.yield %m : tensor<16x16xf32>
    }
    tile.store %y, %out[%i] : tensor<16x16xf32> -> tensor<?x16xf32>
  }
  func.return
}

// -----

func.func @pinned_plan(%x: tensor<?x4096xf32>, %w: tensor<4096x16xf32>, %out: tensor<?x16xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x4096xf32>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x4096xf32> -> tensor<16x4096xf32>
    // expected-error@+1 {{vector stage 'norm': phase <4 rows, 2 copies> needs 262144 bytes of ub (largest buffer [4, 4096] f32 (tile.add)), but ascend910b1 has 196608}}
    %n = tile.vec_stage "norm" tile [4, 4096] nbuffer 2 phase <rows = 4, copies = 2> -> (tensor<16x4096xf32>) {
      %a = tile.abs %xt : tensor<16x4096xf32> -> tensor<16x4096xf32>
      %b = tile.add %a, %xt : tensor<16x4096xf32>, tensor<16x4096xf32> -> tensor<16x4096xf32>
      tile.yield %b : tensor<16x4096xf32>
    }
    %y = tile.cube_stage "linear" -> (tensor<16x16xf32>) {
      %m = tile.matmul %n, %w : tensor<16x4096xf32>, tensor<4096x16xf32> -> tensor<16x16xf32>
      tile.yield %m : tensor<16x16xf32>
    }
    tile.store %y, %out[%i] : tensor<16x16xf32> -> tensor<?x16xf32>
  }
  func.return
}

// -----

func.func @too_many_copies(%x: tensor<?x4096xf32>, %w: tensor<4096x16xf32>, %out: tensor<?x16xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x4096xf32>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x4096xf32> -> tensor<16x4096xf32>
    // expected-error@+1 {{vector stage 'norm': nbuffer 5 (at most 4: two event ids per copy)}}
    %n = tile.vec_stage "norm" tile [1, 4096] nbuffer 5 -> (tensor<16x4096xf32>) {
      %a = tile.abs %xt : tensor<16x4096xf32> -> tensor<16x4096xf32>
      tile.yield %a : tensor<16x4096xf32>
    }
    %y = tile.cube_stage "linear" -> (tensor<16x16xf32>) {
      %m = tile.matmul %n, %w : tensor<16x4096xf32>, tensor<4096x16xf32> -> tensor<16x16xf32>
      tile.yield %m : tensor<16x16xf32>
    }
    tile.store %y, %out[%i] : tensor<16x16xf32> -> tensor<?x16xf32>
  }
  func.return
}

// -----

func.func @pinned_columns(%x: tensor<?x4096xf32>, %w: tensor<4096x16xf32>, %out: tensor<?x16xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x4096xf32>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x4096xf32> -> tensor<16x4096xf32>
    
    %n = tile.vec_stage "norm" tile [4, 4096] phase <rows = 4, copies = 1, chunk = 1024 of 4096> -> (tensor<16x4096xf32>) {
      %a = tile.abs %xt : tensor<16x4096xf32> -> tensor<16x4096xf32>
      tile.yield %a : tensor<16x4096xf32>
    }
    %y = tile.cube_stage "linear" -> (tensor<16x16xf32>) {
      %m = tile.matmul %n, %w : tensor<16x4096xf32>, tensor<4096x16xf32> -> tensor<16x16xf32>
      tile.yield %m : tensor<16x16xf32>
    }
    tile.store %y, %out[%i] : tensor<16x16xf32> -> tensor<?x16xf32>
  }
  func.return
}

// -----

// The L1 entries of M and N size no buffer (a task is one mL0 x nL0 block): the
// lightning indexer's `[32, 64], [h // 4, h], [16, 16]` fits with 32 rows of A in L1.
func.func @l1_l0_rows(%x: tensor<?x4096xbf16>, %w: tensor<4096x64xbf16>, %out: tensor<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x4096xbf16>
  tile.token_loop %i = %c0 to %t step 128 {
    %xt = tile.load %x[%i] : tensor<?x4096xbf16> -> tensor<128x4096xbf16>
    %y = tile.cube_stage "linear" tiles <m = [32, 64], k = [1024, 4096], n = [16, 16]> -> (tensor<128x64xf32>) {
      %m = tile.matmul %xt, %w : tensor<128x4096xbf16>, tensor<4096x64xbf16> -> tensor<128x64xf32>
      tile.yield %m : tensor<128x64xf32>
    }
    tile.store %y, %out[%i] : tensor<128x64xf32> -> tensor<?x64xf32>
  }
  func.return
}
// PLAN-LABEL: func.func @l1_l0_rows
// PLAN: tiles <m = [32, 64], k = [1024, 4096], n = [16, 16]>

// -----

// The phase's nbuffer is its stages' largest, recorded with the plan on its first stage.
func.func @nbuffer_of_a_later_stage(%x: tensor<?x1024xbf16>, %gamma: tensor<1024xbf16>, %w: tensor<256x1024xbf16>,
             %out: tensor<?x256xbf16> {pto.output}) attributes {pto.target = "ascend910b1"} {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x1024xbf16>
  tile.token_loop %i = %c0 to %t step 16 tail {
    %xt = tile.load %x[%i] : tensor<?x1024xbf16> -> tensor<16x1024xbf16>
    %g = tile.load %gamma : tensor<1024xbf16> -> tensor<1024xbf16>
    %nt0 = tile.vec_stage "norm"  -> (tensor<16x1024xf32>) {
      %nt = tile.rms_norm %xt, %g eps = 1.0e-06 : tensor<16x1024xbf16>, tensor<1024xbf16> -> tensor<16x1024xf32>
      tile.yield %nt : tensor<16x1024xf32>
    }
    %bt = tile.vec_stage "cast" nbuffer 2 -> (tensor<16x1024xbf16>) {
      %b = tile.cast %nt0 rint : tensor<16x1024xf32> -> tensor<16x1024xbf16>
      tile.yield %b : tensor<16x1024xbf16>
    }
    %yt = tile.cube_stage "linear" -> (tensor<16x256xbf16>) {
      %y = tile.matmul %bt, %w b_trans : tensor<16x1024xbf16>, tensor<256x1024xbf16> -> tensor<16x256xf32>
      %o = tile.cast %y rint : tensor<16x256xf32> -> tensor<16x256xbf16>
      tile.yield %o : tensor<16x256xbf16>
    }
    tile.store %yt, %out[%i] : tensor<16x256xbf16> -> tensor<?x256xbf16>
  }
  func.return
}

// -----

// Pinned rows cut because a fused stage's own rows are fewer: said, with the pinned rows' bytes.
func.func @pinned_rows_cut(%x: tensor<?x4096xbf16>, %gamma: tensor<4096xbf16>, %w: tensor<256x4096xbf16>,
             %out: tensor<?x256xbf16> {pto.output}) attributes {pto.target = "ascend910b1"} {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x4096xbf16>
  tile.token_loop %i = %c0 to %t step 16 tail {
    %xt = tile.load %x[%i] : tensor<?x4096xbf16> -> tensor<16x4096xbf16>
    %g = tile.load %gamma : tensor<4096xbf16> -> tensor<4096xbf16>
    // expected-warning@+1 {{vector stage 'a': tile rows 8 -> 4: the fused phase (2 stage(s)) needs 335872 bytes of ub as pinned, ascend910b1 has 196608}}
    %xf0 = tile.vec_stage "a" tile [8, 4096] -> (tensor<16x4096xf32>) {
      %xf = tile.cast %xt none : tensor<16x4096xbf16> -> tensor<16x4096xf32>
      tile.yield %xf : tensor<16x4096xf32>
    }
    %bt = tile.vec_stage "b" -> (tensor<16x4096xbf16>) {
      %nt = tile.rms_norm %xf0, %g eps = 1.0e-06 : tensor<16x4096xf32>, tensor<4096xbf16> -> tensor<16x4096xf32>
      %b = tile.cast %nt rint : tensor<16x4096xf32> -> tensor<16x4096xbf16>
      tile.yield %b : tensor<16x4096xbf16>
    }
    %yt = tile.cube_stage "linear" -> (tensor<16x256xbf16>) {
      %y = tile.matmul %bt, %w b_trans : tensor<16x4096xbf16>, tensor<256x4096xbf16> -> tensor<16x256xf32>
      %o = tile.cast %y rint : tensor<16x256xf32> -> tensor<16x256xbf16>
      tile.yield %o : tensor<16x256xbf16>
    }
    tile.store %yt, %out[%i] : tensor<16x256xbf16> -> tensor<?x256xbf16>
  }
  func.return
}

// -----

func.func @plan_on_a_later_stage(%x: tensor<?x1024xbf16>, %gamma: tensor<1024xbf16>, %w: tensor<256x1024xbf16>,
             %out: tensor<?x256xbf16> {pto.output}) attributes {pto.target = "ascend910b1"} {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x1024xbf16>
  tile.token_loop %i = %c0 to %t step 16 tail {
    %xt = tile.load %x[%i] : tensor<?x1024xbf16> -> tensor<16x1024xbf16>
    %g = tile.load %gamma : tensor<1024xbf16> -> tensor<1024xbf16>
    %nt0 = tile.vec_stage "norm"  -> (tensor<16x1024xf32>) {
      %nt = tile.rms_norm %xt, %g eps = 1.0e-06 : tensor<16x1024xbf16>, tensor<1024xbf16> -> tensor<16x1024xf32>
      tile.yield %nt : tensor<16x1024xf32>
    }
    // expected-error@+1 {{vector stage 'cast': a phase plan goes on its phase's first stage 'norm'}}
    %bt = tile.vec_stage "cast" nbuffer 1 phase <rows = 1, copies = 1> -> (tensor<16x1024xbf16>) {
      %b = tile.cast %nt0 rint : tensor<16x1024xf32> -> tensor<16x1024xbf16>
      tile.yield %b : tensor<16x1024xbf16>
    }
    %yt = tile.cube_stage "linear" -> (tensor<16x256xbf16>) {
      %y = tile.matmul %bt, %w b_trans : tensor<16x1024xbf16>, tensor<256x1024xbf16> -> tensor<16x256xf32>
      %o = tile.cast %y rint : tensor<16x256xf32> -> tensor<16x256xbf16>
      tile.yield %o : tensor<16x256xbf16>
    }
    tile.store %yt, %out[%i] : tensor<16x256xbf16> -> tensor<?x256xbf16>
  }
  func.return
}

// -----

func.func @pinned_plan_copies(%x: tensor<?x1024xbf16>, %gamma: tensor<1024xbf16>, %w: tensor<256x1024xbf16>,
             %out: tensor<?x256xbf16> {pto.output}) attributes {pto.target = "ascend910b1"} {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x1024xbf16>
  tile.token_loop %i = %c0 to %t step 16 tail {
    %xt = tile.load %x[%i] : tensor<?x1024xbf16> -> tensor<16x1024xbf16>
    %g = tile.load %gamma : tensor<1024xbf16> -> tensor<1024xbf16>
    // expected-error@+1 {{vector stage 'norm': nbuffer 5 (at most 4: two event ids per copy)}}
    %nt0 = tile.vec_stage "norm" tile [1, 1024] nbuffer 5 phase <rows = 1, copies = 5> -> (tensor<16x1024xf32>) {
      %nt = tile.rms_norm %xt, %g eps = 1.0e-06 : tensor<16x1024xbf16>, tensor<1024xbf16> -> tensor<16x1024xf32>
      tile.yield %nt : tensor<16x1024xf32>
    }
    %bt = tile.vec_stage "cast"  -> (tensor<16x1024xbf16>) {
      %b = tile.cast %nt0 rint : tensor<16x1024xf32> -> tensor<16x1024xbf16>
      tile.yield %b : tensor<16x1024xbf16>
    }
    %yt = tile.cube_stage "linear" -> (tensor<16x256xbf16>) {
      %y = tile.matmul %bt, %w b_trans : tensor<16x1024xbf16>, tensor<256x1024xbf16> -> tensor<16x256xf32>
      %o = tile.cast %y rint : tensor<16x256xf32> -> tensor<16x256xbf16>
      tile.yield %o : tensor<16x256xbf16>
    }
    tile.store %yt, %out[%i] : tensor<16x256xbf16> -> tensor<?x256xbf16>
  }
  func.return
}
// PLAN-LABEL: func.func @nbuffer_of_a_later_stage
// PLAN: tile.vec_stage "norm" tile [8, 1024] nbuffer 2 phase <rows = 8, copies = 2>

// The phase after the cube is cut where its one-row task does not fit: each part is a
// phase of its own (its plan on its first stage), the values between them through GM.
// CUTWARN: warning: vector stage 'post': one row of the fused phase needs 262144 bytes of ub (ascend910b1 has 196608): cut into 3 phases, their values through GM
// CUT:      %[[S:.*]], %[[A:.*]] = tile.vec_stage "post" tile [1, 32768] phase <rows = 1, copies = 1>
// CUT-NEXT:   tile.muls
// CUT-NEXT:   tile.slice %{{.*}} at 0
// CUT:      %[[B:.*]] = tile.vec_stage "post.1" tile [1, 32768] phase <rows = 1, copies = 1>
// CUT-NEXT:   tile.slice %[[S]] at 16384
// CUT:      tile.vec_stage "post.2" tile [1, 16384] phase <rows = 1, copies = 1>
// CUT-NEXT:   tile.mul %[[A]], %[[B]]
// CUTNPU: npu.tasks "post.16" vector {{.*}} after ["linear.16"]
// CUTNPU: npu.tasks "post.1.16" vector {{.*}} after ["linear.16", "post.16"]
// CUTNPU: npu.tasks "post.2.16" vector {{.*}} after ["linear.16", "post.16", "post.1.16"]

// A weight stage's tile: the pinned [512, 256] needs 655872 bytes of UB (the int8 part,
// its f16 cast and the scaled f16 result, each in a buffer of its own): rows are cut to
// the most that divide the weight and fit.
// W8: w8a16.mlir:4:3: warning: weight stage 'weight': tile [512, 256] cut to [128, 256] (it needs 655872 bytes of ub, ascend910b1 has 196608)
// W8: tile.vec_stage "weight" tile [128, 256] nbuffer 1 -> (tensor<512x256xf16>)
// Without a pinned tile, a weight stage takes whole rows, as many as fit (3072 bytes each).
// WS: tile.vec_stage "weight" tile [64, 1024] nbuffer 1 -> (tensor<1024x1024xf16>)

// -----

// A pinned weight-stage tile that does not divide the weight: the most rows that do.
func.func @weight_stage_not_dividing(%w: tensor<512x256xi8>) {
  %ww = tile.load %w : tensor<512x256xi8> -> tensor<512x256xi8>
  // expected-warning@+1 {{weight stage 'weight': tile [100, 256] cut to [64, 256] (it does not divide the [512, 256] weight)}}
  %wf = tile.vec_stage "weight" tile [100, 256] -> (tensor<512x256xf16>) {
    %c = tile.cast %ww none : tensor<512x256xi8> -> tensor<512x256xf16>
    tile.yield %c : tensor<512x256xf16>
  }
  func.return
}

// -----

// A row of a prime width has no narrower tile of whole blocks that divides it.
func.func @weight_stage_too_wide(%w: tensor<1x50021xf16>) {
  %ww = tile.load %w : tensor<1x50021xf16> -> tensor<1x50021xf16>
  // expected-error@+1 {{weight stage 'weight': a tile [1, 50021] needs 300160 bytes of ub, but ascend910b1 has 196608}}
  %wf = tile.vec_stage "weight" -> (tensor<1x50021xf32>) {
    %c = tile.cast %ww none : tensor<1x50021xf16> -> tensor<1x50021xf32>
    tile.yield %c : tensor<1x50021xf32>
  }
  func.return
}

// -----

func.func @weight_stage_rank1(%g: tensor<64xf16>) {
  %gg = tile.load %g : tensor<64xf16> -> tensor<64xf16>
  // expected-error@+1 {{a weight stage of one rank-2 result is tiled here, got tensor<64xf32>}}
  %gf = tile.vec_stage "weight" -> (tensor<64xf32>) {
    %c = tile.cast %gg none : tensor<64xf16> -> tensor<64xf32>
    tile.yield %c : tensor<64xf32>
  }
  func.return
}
