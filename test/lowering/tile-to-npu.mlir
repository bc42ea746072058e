// RUN: pto-opt %S/../../examples/sk03_standard.mlir -p 'pto-classify-skeleton,pto-to-tile,tile-unroll{factors=128},tile-annotate-cache,tile-assign-shapes,tile-to-npu' | filecheck %s --check-prefix=STD
// RUN: pto-opt %S/../../examples/indexer_query_linear_int8.mlir --pass-pipeline='builtin.module(pto-sk03-pipeline)' 2>&1 >/dev/null | filecheck %s --check-prefix=ROWS
// RUN: pto-opt %S/../../examples/indexer_query_linear_int8.mlir -p 'pto-classify-skeleton,pto-to-tile,tile-unroll{factors=16},tile-annotate-cache,tile-assign-shapes,tile-to-npu' | filecheck %s --check-prefix=INT8
// RUN: pto-opt %S/../../examples/mla_wqa_qrmsnorm.mlir -p 'pto-classify-skeleton,pto-to-tile,tile-unroll,tile-annotate-cache,tile-assign-shapes,tile-to-npu' | filecheck %s --check-prefix=CV
// RUN: pto-opt %S/../../examples/hc_pre.mlir -p 'pto-classify-skeleton,pto-to-tile,tile-unroll,tile-annotate-cache,tile-assign-shapes,tile-to-npu' 2>%t.err | filecheck %s --check-prefix=MHC
// RUN: not grep warning %t.err
// RUN: pto-opt %S/../../examples/hc_pre.mlir --pass-pipeline='builtin.module(pto-sk03-pipeline{factors=128,64,16})' 2>/dev/null | filecheck %s --check-prefix=SPLIT
// RUN: pto-opt %s --split-input-file --verify-diagnostics -p tile-to-npu | filecheck %s --check-prefix=CONST

// The standard kernel: GM buffers for the tensors, a GM workspace for the normalised
// activations, one launch per token loop. The vector program normalises row tiles
// (RMSNorm as vcast, vmul, vreduce, vmuls 1/K, vadds eps, vrsqrt, vmul, gamma) into the
// workspace and counts them on flag 0; the cube program waits for all of them, then
// streams K through L1 and L0 into L0C and casts it out to %out through the fixpipe.
// STD-LABEL: func.func @linear_projection(%x: !npu.buf<?x4096xbf16, gm>, %gamma: !npu.buf<4096xbf16, gm>, %w: !npu.buf<1024x4096xbf16, gm> {pto.cache = #pto.cache<none_cacheable>}, %out: !npu.buf<?x1024xbf16, gm> {pto.output})
// STD: %tokens = npu.dim %x, 0 : !npu.buf<?x4096xbf16, gm>
// STD: %ws = npu.alloc gm (%tokens) : !npu.buf<?x4096xbf16, gm>
// STD: npu.launch cube 24 (%core) {
// STD: npu.cross_core_wait 0, %{{.*}}
// STD: npu.alloc l1 [0] : !npu.buf<128x512xbf16, l1>
// l1_reuse [2, 1]: two activation copies in L1, one weight copy after them.
// STD: npu.alloc l1 [131072] : !npu.buf<128x512xbf16, l1>
// STD: npu.alloc l1 [262144] : !npu.buf<64x512xbf16, l1>
// STD: npu.alloc l0a [0] : !npu.buf<128x256xbf16, l0a>
// STD: npu.alloc l0c [0] : !npu.buf<128x64xf32, l0c>
// STD: scf.for
// STD: npu.dma mte2 %ws[%row, %{{.*}}] -> %{{.*}}[0, 0] rows %rows : !npu.buf<?x4096xbf16, gm> -> !npu.buf<128x512xbf16, l1>
// STD: npu.dma mte2 %w[%col, %{{.*}}] -> %{{.*}}[0, 0] cache none_cacheable
// STD: npu.set_flag mte2 -> mte1, 0
// STD: npu.dma mte1 {{.*}} transpose : !npu.buf<64x512xbf16, l1> -> !npu.buf<256x64xbf16, l0b>
// STD: npu.mmad %{{.*}}, %{{.*}} -> %{{.*}} acc %{{.*}} : !npu.buf<128x256xbf16, l0a>, !npu.buf<256x64xbf16, l0b> -> !npu.buf<128x64xf32, l0c>
// The second K slice of an iteration loads into the other activation copy as soon as that
// copy is free (event 1), while the shared weight copy waits for event 4.
// STD: scf.if
// STD: npu.wait_flag mte1 -> mte2, 1
// STD-NEXT: npu.dma mte2 %ws[%row, %{{.*}}] -> %{{.*}}[0, 0] rows %rows : !npu.buf<?x4096xbf16, gm> -> !npu.buf<128x512xbf16, l1>
// STD-NEXT: npu.wait_flag mte1 -> mte2, 4
// STD: npu.fixpipe %{{.*}}[0, 0] -> %out[%row, %col] rows %rows round rint : !npu.buf<128x64xf32, l0c> -> !npu.buf<?x1024xbf16, gm>
// STD: npu.cross_core_set 1
// STD: } vector 48 (%v) {
// Two rows of 4096 with their second UB copy do not fit whole: the phase is column-tiled
// in 1024-wide chunks (loop 1: the sum of squares; loop 2: normalise, gamma, cast, store).
// STD: npu.vdup 0.000000e+00 -> %[[ACC:.*]] : !npu.buf<2x1xf32, ub>
// STD: npu.dma mte2 %x[%row_1, %[[C1:[0-9]+]]] -> %{{.*}}[0, 0] rows %rows_1 : !npu.buf<?x4096xbf16, gm> -> !npu.buf<2x1024xbf16, ub>
// STD: npu.vcast {{.*}} none : !npu.buf<2x1024xbf16, ub> -> !npu.buf<2x1024xf32, ub>
// STD: npu.vreduce sum {{.*}} -> !npu.buf<2x1xf32, ub>
// STD: npu.vadd %[[ACC]], %{{.*}} -> %[[ACC]]
// STD: npu.vmuls %[[ACC]], 0.000244140625
// STD: npu.vadds %[[ACC]], 1.000000e-06
// STD: npu.vrsqrt %[[ACC]]
// STD: npu.dma mte2 %x[%row_1, %[[C2:[0-9]+]]] -> %{{.*}}[0, 0] rows %rows_1 : !npu.buf<?x4096xbf16, gm> -> !npu.buf<2x1024xbf16, ub>
// STD: npu.dma mte2 %gamma[%[[C2]]] -> %{{.*}}[0] : !npu.buf<4096xbf16, gm> -> !npu.buf<1024xbf16, ub>
// STD: npu.vmul {{.*}}, %[[ACC]] -> {{.*}} : !npu.buf<2x1024xf32, ub>, !npu.buf<2x1xf32, ub> -> !npu.buf<2x1024xf32, ub>
// STD: npu.vmul {{.*}} !npu.buf<2x1024xf32, ub>, !npu.buf<1024xf32, ub> -> !npu.buf<2x1024xf32, ub>
// STD: npu.vcast {{.*}} rint : !npu.buf<2x1024xf32, ub> -> !npu.buf<2x1024xbf16, ub>
// STD: npu.dma mte3 %{{.*}}[0, 0] -> %ws[%row_1, %[[C2]]] rows %rows_1
// STD: npu.cross_core_set 0
// The first vector stage is double-buffered (vec_nbuffer_setting {0: 2}): each core takes
// a second task per iteration, in its own UB copy with its own event ids.
// STD: scf.if
// STD: npu.alloc ub [51264] : !npu.buf<2x1xf32, ub>
// STD: npu.set_flag mte2 -> vector, 2
// STD: npu.set_flag vector -> mte3, 2
// STD: npu.set_flag mte3 -> mte2, 3
// STD: npu.cross_core_set 0

// The quant form: the int8 cast chain, an i32 accumulator, and the dequant in the second
// vector phase after the cube, with the [N, 1] weight scale loaded transposed as [1, N].
// INT8: npu.mmad {{.*}} -> !npu.buf<128x256xi32, l0c>
// INT8: npu.fixpipe {{.*}} : !npu.buf<128x256xi32, l0c> -> !npu.buf<?x8192xi32, gm>
// INT8: } vector 48 (%v) {
// INT8: npu.vreduce absmax
// INT8: npu.vcast {{.*}} rint : {{.*}}xf32, ub> -> {{.*}}xi32, ub>
// INT8: npu.vcast {{.*}} round : {{.*}}xi32, ub> -> {{.*}}xf16, ub>
// INT8: npu.vcast {{.*}} trunc sat : {{.*}}xf16, ub> -> {{.*}}xi8, ub>
// INT8: npu.cross_core_wait 1, %{{.*}}
// INT8: npu.dma mte2 %w_scale[0, 0] -> %{{.*}}[0, 0] transpose : !npu.buf<8192x1xf32, gm> -> !npu.buf<1x8192xf32, ub>
// INT8: npu.vcast {{.*}} rint : {{.*}}xi32, ub> -> {{.*}}xf32, ub>

// C -> V: the cube reads x directly (no first phase, no wait), the vector program
// waits for the cube's tiles.
// CV: npu.launch cube 24 (%core) {
// CV-NOT: npu.cross_core_wait 0
// CV: npu.dma mte2 %x[%row
// CV: } vector 48 (%v) {
// CV: npu.cross_core_wait 1, %{{.*}}

// mhc_pre: the weight arrives host-transposed, the in-place reshape is a GM view.
// MHC: func.func @hc_pre(%x: !npu.buf<?x4x4096xbf16, gm>, %hc_fn: !npu.buf<16384x24xf32, gm> {npu.host_transpose}, %out: !npu.buf<?x24xf32, gm> {pto.output})
// MHC: npu.reshape %x : !npu.buf<?x4x4096xbf16, gm> -> !npu.buf<?x16384xbf16, gm>
// MHC: npu.mmad {{.*}} : !npu.buf<16x512xf32, l0a>, !npu.buf<512x24xf32, l0b> -> !npu.buf<16x24xf32, l0c>
// With tile heights 128 and 64 the mhc_pre variant splits K (by 4 here): the first split
// writes, the others wait for it and add.
// SPLIT: npu.fixpipe {{.*}} -> %ws_1[%row, %col] rows %rows : !npu.buf<16x24xf32, l0c>
// SPLIT: npu.fixpipe {{.*}} atomic_add : !npu.buf<16x24xf32, l0c>
// The rows tile-assign-shapes chose do not fit once the stages are fused with their second
// UB copy, and the quant stage cannot be column-tiled: the rows are cut, said once for the
// source op though every unrolled loop with 8-row tiles cuts them.
// ROWS: indexer_query_linear_int8.mlir:10:3: warning: vector tile rows 8 -> 4: the fused phase (2 stage(s), 2 copies) does not fit in UB with more
// ROWS-NOT: warning
// Column tiling (vector tiles [2, 2048] and [8, 2048] on 16384-wide rows): the cast of
// the flattened x streams 2048-column chunks to the workspace; the norm accumulates the
// sum of squares chunk by chunk, then runs the [8, 1] and [8, 24] work once per task.
// MHC: } vector 48 (%v) {
// MHC: npu.alloc ub [0] : !npu.buf<2x2048xbf16, ub>
// MHC-NEXT: npu.dma mte2 %{{.*}}[%row_1, %[[C:[0-9]+]]] -> %{{.*}}[0, 0] rows %rows_1 : !npu.buf<?x16384xbf16, gm> -> !npu.buf<2x2048xbf16, ub>
// MHC: npu.vcast {{.*}} : !npu.buf<2x2048xbf16, ub> -> !npu.buf<2x2048xf32, ub>
// MHC: npu.dma mte3 %{{.*}}[0, 0] -> %ws[%row_1, %[[C]]] rows %rows_1 : !npu.buf<2x2048xf32, ub> -> !npu.buf<?x16384xf32, gm>
// MHC: npu.cross_core_wait 1
// MHC: npu.dma mte2 %ws_1[%row_3, 0] -> %{{.*}}[0, 0] rows %rows_3 : !npu.buf<?x24xf32, gm> -> !npu.buf<8x24xf32, ub>
// MHC: npu.vdup 0.000000e+00 -> %[[ACC:.*]] : !npu.buf<8x1xf32, ub>
// MHC: scf.for
// MHC: npu.dma mte2 %ws[%row_3, %{{.*}}] -> %{{.*}}[0, 0] rows %rows_3 : !npu.buf<?x16384xf32, gm> -> !npu.buf<8x2048xf32, ub>
// MHC: npu.vreduce sum {{.*}} : !npu.buf<8x2048xf32, ub> -> !npu.buf<8x1xf32, ub>
// MHC-NEXT: npu.vadd %[[ACC]], %{{.*}} -> %[[ACC]]
// MHC: npu.vmuls %[[ACC]], 6.10351562e-05 -> %[[ACC]]
// MHC: npu.vsqrt
// MHC: npu.vdiv {{.*}} : !npu.buf<8x24xf32, ub>, !npu.buf<8x1xf32, ub> -> !npu.buf<8x24xf32, ub>

// Split-K is lowered for one f32 result (the partial sums are added in GM)...
// CONST-LABEL: func.func @split_k
// CONST: npu.cross_core_set 2
// CONST: npu.cross_core_wait 2, %{{.*}}
// CONST: npu.fixpipe {{.*}} atomic_add : !npu.buf<16x32xf32, l0c> -> !npu.buf<?x32xf32, gm>
func.func @split_k(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>, %out: tensor<?x32xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xf32>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x64xf32> -> tensor<16x64xf32>
    %y = tile.cube_stage "linear" m [16, 16] k [16, 16] n [32, 32] split_k -> (tensor<16x32xf32>) {
      %m = tile.matmul %xt, %w : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
      tile.yield %m : tensor<16x32xf32>
    }
    tile.store %y, %out[%i] : tensor<16x32xf32> -> tensor<?x32xf32>
  }
  func.return
}

// -----

// ... but not into a bf16 result, which the fixpipe cannot add to.
func.func @split_k_bf16(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>, %out: tensor<?x32xbf16> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xf32>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x64xf32> -> tensor<16x64xf32>
    // expected-error@+1 {{tile-to-npu does not support split-K into anything but one f32 result (partial sums are added in GM) yet}}
    %y = tile.cube_stage "linear" m [16, 16] k [16, 16] n [32, 32] split_k -> (tensor<16x32xbf16>) {
      %m = tile.matmul %xt, %w : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
      %o = tile.cast %m rint : tensor<16x32xf32> -> tensor<16x32xbf16>
      tile.yield %o : tensor<16x32xbf16>
    }
    tile.store %y, %out[%i] : tensor<16x32xbf16> -> tensor<?x32xbf16>
  }
  func.return
}

// -----

func.func @no_tiles(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>, %out: tensor<?x32xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xf32>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x64xf32> -> tensor<16x64xf32>
    // expected-error@+1 {{tile-to-npu needs cube tile shapes: run tile-assign-shapes first}}
    %y = tile.cube_stage "linear" -> (tensor<16x32xf32>) {
      %m = tile.matmul %xt, %w : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
      tile.yield %m : tensor<16x32xf32>
    }
    tile.store %y, %out[%i] : tensor<16x32xf32> -> tensor<?x32xf32>
  }
  func.return
}

// -----

// mL0 < mL1 and nL0 < nL1: the [32, 32] L1 tile is 2x2 L0 blocks, each accumulating in
// its own L0C buffer; the A block stays in L0A while the B blocks pass; each block's
// fixpipe writes its rows of the tile (those that exist in a tail).
func.func @m_sub_tiles(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>, %out: tensor<?x32xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xf32>
  tile.token_loop %i = %c0 to %t step 32 {
    %xt = tile.load %x[%i] : tensor<?x64xf32> -> tensor<32x64xf32>
    %y = tile.cube_stage "linear" m [16, 32] k [16, 64] n [16, 32] -> (tensor<32x32xf32>) {
      %m = tile.matmul %xt, %w : tensor<32x64xf32>, tensor<64x32xf32> -> tensor<32x32xf32>
      tile.yield %m : tensor<32x32xf32>
    }
    tile.store %y, %out[%i] : tensor<32x32xf32> -> tensor<?x32xf32>
  }
  func.return
}
// CONST-LABEL: func.func @m_sub_tiles
// CONST: npu.alloc l0a [0] : !npu.buf<16x16xf32, l0a>
// CONST-NEXT: npu.alloc l0b [0] : !npu.buf<16x16xf32, l0b>
// CONST-NEXT: %[[A00:.*]] = npu.alloc l0c [0] : !npu.buf<16x16xf32, l0c>
// CONST-NEXT: %[[A01:.*]] = npu.alloc l0c [1024] : !npu.buf<16x16xf32, l0c>
// CONST-NEXT: %[[A10:.*]] = npu.alloc l0c [2048] : !npu.buf<16x16xf32, l0c>
// CONST-NEXT: %[[A11:.*]] = npu.alloc l0c [3072] : !npu.buf<16x16xf32, l0c>
// CONST: npu.dma mte1 %{{.*}}[0, %{{.*}}] -> %{{.*}}[0, 0] : !npu.buf<32x64xf32, l1> -> !npu.buf<16x16xf32, l0a>
// CONST: npu.mmad {{.*}} -> %[[A00]]
// CONST-NOT: npu.dma mte1 {{.*}} -> !npu.buf<16x16xf32, l0a>
// CONST: npu.dma mte1 %{{.*}}[%{{.*}}, 16] -> %{{.*}}[0, 0] : !npu.buf<64x32xf32, l1> -> !npu.buf<16x16xf32, l0b>
// CONST: npu.mmad {{.*}} -> %[[A01]]
// CONST: npu.dma mte1 %{{.*}}[16, %{{.*}}] -> %{{.*}}[0, 0] : !npu.buf<32x64xf32, l1> -> !npu.buf<16x16xf32, l0a>
// CONST: npu.mmad {{.*}} -> %[[A10]]
// CONST: npu.mmad {{.*}} -> %[[A11]]
// CONST: npu.fixpipe %[[A00]][0, 0] -> %out[%row, %col] rows %{{.*}}
// CONST: npu.fixpipe %[[A01]][0, 0] -> %out[%row, %{{.*}}] rows %{{.*}}
// CONST: npu.fixpipe %[[A10]][0, 0] -> %out[%{{.*}}, %col] rows %{{.*}}
// CONST: npu.fixpipe %[[A11]]

// -----

func.func @n_not_multiple(%x: tensor<?x64xf32>, %w: tensor<64x48xf32>, %out: tensor<?x48xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xf32>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x64xf32> -> tensor<16x64xf32>
    // expected-error@+1 {{tile-to-npu does not support N = 48 or K = 64 not a multiple of its L1 tile (32, 64) yet}}
    %y = tile.cube_stage "linear" m [16, 16] k [16, 64] n [32, 32] -> (tensor<16x48xf32>) {
      %m = tile.matmul %xt, %w : tensor<16x64xf32>, tensor<64x48xf32> -> tensor<16x48xf32>
      tile.yield %m : tensor<16x48xf32>
    }
    tile.store %y, %out[%i] : tensor<16x48xf32> -> tensor<?x48xf32>
  }
  func.return
}

// -----

func.func @computed_reshape(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>, %out: tensor<?x2x16xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xf32>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x64xf32> -> tensor<16x64xf32>
    %y = tile.cube_stage "linear" m [16, 16] k [16, 64] n [32, 32] -> (tensor<16x32xf32>) {
      %m = tile.matmul %xt, %w : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
      tile.yield %m : tensor<16x32xf32>
    }
    %r = tile.vec_stage "post" tile [4, 32] -> (tensor<16x2x16xf32>) {
      // expected-error@+1 {{tile-to-npu does not support reshapes yet}}
      %h = tile.reshape %y inplace : tensor<16x32xf32> -> tensor<16x2x16xf32>
      tile.yield %h : tensor<16x2x16xf32>
    }
    tile.store %r, %out[%i] : tensor<16x2x16xf32> -> tensor<?x2x16xf32>
  }
  func.return
}

// -----

// Constant loop bounds (no tensor.dim): the workspace is sized by the token argument's dim 0.
func.func @constant_bounds(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>, %out: tensor<?x32xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  tile.token_loop %i = %c0 to %c8 step 8 {
    %xt = tile.load %x[%i] : tensor<?x64xf32> -> tensor<8x64xf32>
    %n = tile.vec_stage "norm" tile [8, 64] -> (tensor<8x64xf32>) {
      %a = tile.abs %xt : tensor<8x64xf32> -> tensor<8x64xf32>
      tile.yield %a : tensor<8x64xf32>
    }
    %y = tile.cube_stage "linear" m [16, 16] k [16, 64] n [32, 32] -> (tensor<8x32xf32>) {
      %m = tile.matmul %n, %w : tensor<8x64xf32>, tensor<64x32xf32> -> tensor<8x32xf32>
      tile.yield %m : tensor<8x32xf32>
    }
    tile.store %y, %out[%i] : tensor<8x32xf32> -> tensor<?x32xf32>
  }
  func.return
}
// CONST-LABEL: func.func @constant_bounds
// CONST: %tokens = npu.dim %x, 0 : !npu.buf<?x64xf32, gm>
// CONST: npu.alloc gm (%tokens) : !npu.buf<?x64xf32, gm>

// -----

// A cube nbuffer of 2: two L0A/L0B copies; K step i of an L1 slice uses copy i % 2, so
// MTE1 fills one while the cube multiplies the other (CUBE -> MTE1 event j frees copy j).
func.func @cube_nbuffer(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>, %out: tensor<?x32xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xf32>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x64xf32> -> tensor<16x64xf32>
    %y = tile.cube_stage "linear" m [16, 16] k [16, 64] n [32, 32] nbuffer 2 -> (tensor<16x32xf32>) {
      %m = tile.matmul %xt, %w : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
      tile.yield %m : tensor<16x32xf32>
    }
    tile.store %y, %out[%i] : tensor<16x32xf32> -> tensor<?x32xf32>
  }
  func.return
}
// CONST-LABEL: func.func @cube_nbuffer
// CONST: npu.alloc l0a [0] : !npu.buf<16x16xf32, l0a>
// CONST-NEXT: npu.alloc l0a [1024] : !npu.buf<16x16xf32, l0a>
// CONST-NEXT: npu.alloc l0b [0] : !npu.buf<16x32xf32, l0b>
// CONST-NEXT: npu.alloc l0b [2048] : !npu.buf<16x32xf32, l0b>
// CONST: npu.set_flag cube -> mte1, 0
// CONST-NEXT: npu.set_flag cube -> mte1, 1
// CONST: %[[C32:.*]] = arith.constant 32 : index
// CONST-NEXT: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %[[C32]] {
// CONST: npu.wait_flag cube -> mte1, 0
// CONST-NEXT: npu.dma mte1 %{{.*}}[0, %[[K]]] -> %[[A0:.*]][0, 0]
// CONST: npu.mmad %[[A0]], %{{.*}} -> %{{.*}} acc
// CONST-NEXT: npu.set_flag cube -> mte1, 0
// CONST: scf.if
// CONST: npu.wait_flag cube -> mte1, 1
// CONST: npu.mmad
// CONST-NEXT: npu.set_flag cube -> mte1, 1
// CONST: npu.wait_flag cube -> mte1, 0
// CONST-NEXT: npu.wait_flag cube -> mte1, 1
// CONST-NEXT: npu.set_flag cube -> fixpipe, 3

// -----

// A phase that would need a third pass over the columns (a reduction of a normalised
// row) is not column-tiled: said, and processed as whole rows.
func.func @no_columns(%x: tensor<?x256xf32>, %w: tensor<256x32xf32>, %out: tensor<?x32xf32> {pto.output},
                      %out1: tensor<?x1xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x256xf32>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x256xf32> -> tensor<16x256xf32>
    // expected-warning@+1 {{vector tile [4, 64] is narrower than the 256-column row but the phase is not column-tiled (a reduction needs a value that itself needs a reduction): tile-to-npu processes whole rows}}
    %n, %s = tile.vec_stage "norm" tile [4, 64] -> (tensor<16x256xf32>, tensor<16x1xf32>) {
      %y = tile.rms_norm %xt eps = 1.0e-06 : tensor<16x256xf32> -> tensor<16x256xf32>
      %m = tile.reduce max %y : tensor<16x256xf32> -> tensor<16x1xf32>
      tile.yield %y, %m : tensor<16x256xf32>, tensor<16x1xf32>
    }
    %z = tile.cube_stage "linear" m [16, 16] k [64, 256] n [32, 32] -> (tensor<16x32xf32>) {
      %mm = tile.matmul %n, %w : tensor<16x256xf32>, tensor<256x32xf32> -> tensor<16x32xf32>
      tile.yield %mm : tensor<16x32xf32>
    }
    tile.store %z, %out[%i] : tensor<16x32xf32> -> tensor<?x32xf32>
    tile.store %s, %out1[%i] : tensor<16x1xf32> -> tensor<?x1xf32>
  }
  func.return
}
// CONST-LABEL: func.func @no_columns
// CONST: npu.vreduce max {{.*}} : !npu.buf<4x256xf32, ub> -> !npu.buf<4x1xf32, ub>

// -----

// The L0 blocks of an L1 tile accumulate at once: all of them must fit in L0C.
func.func @l0c_blocks(%x: tensor<?x64xf32>, %w: tensor<64x512xf32>, %out: tensor<?x512xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xf32>
  tile.token_loop %i = %c0 to %t step 128 {
    %xt = tile.load %x[%i] : tensor<?x64xf32> -> tensor<128x64xf32>
    // expected-error@+1 {{tile-to-npu does not support 2x2 L0 blocks of !npu.buf<64x256xf32, l0c> accumulating at once: they need 262144 bytes of l0c, which has 131072 yet}}
    %y = tile.cube_stage "linear" m [64, 128] k [16, 64] n [256, 512] -> (tensor<128x512xf32>) {
      %m = tile.matmul %xt, %w : tensor<128x64xf32>, tensor<64x512xf32> -> tensor<128x512xf32>
      tile.yield %m : tensor<128x512xf32>
    }
    tile.store %y, %out[%i] : tensor<128x512xf32> -> tensor<?x512xf32>
  }
  func.return
}
