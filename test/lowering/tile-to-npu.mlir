// RUN: pto-opt %S/../../examples/sk03_standard.mlir -p 'pto-classify-skeleton,pto-to-tile,tile-unroll{factors=128},tile-annotate-cache,tile-apply-settings,tile-assign-shapes,tile-to-npu' | filecheck %s --check-prefix=STD
// RUN: pto-opt %S/../../examples/indexer_query_linear_int8.mlir --pass-pipeline='builtin.module(pto-sk03-pipeline)' 2>%t.rows >/dev/null
// RUN: not grep warning %t.rows
// RUN: pto-opt %S/../../examples/indexer_query_linear_int8.mlir -p 'pto-classify-skeleton,pto-to-tile,tile-unroll{factors=16},tile-annotate-cache,tile-apply-settings,tile-assign-shapes,tile-to-npu' | filecheck %s --check-prefix=INT8
// RUN: pto-opt %S/../../examples/mla_wqa_qrmsnorm.mlir -p 'pto-classify-skeleton,pto-to-tile,tile-unroll,tile-annotate-cache,tile-apply-settings,tile-assign-shapes,tile-to-npu' | filecheck %s --check-prefix=CV
// RUN: pto-opt %S/../../examples/hc_pre.mlir -p 'pto-classify-skeleton,pto-to-tile,tile-unroll,tile-annotate-cache,tile-apply-settings,tile-assign-shapes,tile-to-npu' 2>%t.err | filecheck %s --check-prefix=MHC
// RUN: not grep warning %t.err
// RUN: pto-opt %S/../../examples/hc_pre.mlir --pass-pipeline='builtin.module(pto-sk03-pipeline{factors=128,64,16})' 2>/dev/null | filecheck %s --check-prefix=SPLIT
// RUN: pto-opt %s --split-input-file --verify-diagnostics -p tile-to-npu | filecheck %s --check-prefix=CONST
// RUN: pto-opt %S/../../examples/levels/sk03_standard.tile.mlir -p tile-assign-shapes,tile-to-npu | filecheck %s --check-prefix=LEVEL
// W8A16: the weight stage is a vector group in no token loop, one task per [128, 256]
// tile (MTE2 brings the int8 part and the scale's columns, the vector unit widens and
// scales, MTE3 stores to a GM workspace); every cube group reads the workspace and waits
// for the whole group.
// RUN: pto-opt %S/Inputs/w8a16.mlir --pass-pipeline='builtin.module(pto-sk03-pipeline{factors=16,1})' 2>/dev/null | filecheck %s --check-prefix=W8
// W8:      npu.graph
// W8-NEXT:   %wb = npu.alloc gm : !npu.buf<512x256xf16, gm>
// W8-NEXT:   %[[ONE:.*]] = arith.constant 1 : index
// W8-NEXT:   npu.tasks "weight" vector (%{{.*}}, %{{.*}}) in (%[[ONE]], 4) {
// W8:          npu.dma mte2 %w[%row, %col] -> %[[WU:.*]][0, 0] : !npu.buf<512x256xi8, gm> -> !npu.buf<128x256xi8, ub>
// W8:          npu.dma mte2 %s[0, %col] -> %[[SU:.*]][0, 0] : !npu.buf<1x256xf16, gm> -> !npu.buf<1x256xf16, ub>
// W8:          npu.vcast %[[WU]] -> %[[WF:.*]] none : !npu.buf<128x256xi8, ub> -> !npu.buf<128x256xf16, ub>
// W8-NEXT:     %[[WS:.*]] = npu.alloc ub
// W8-NEXT:     npu.vmul %[[WF]], %[[SU]] -> %[[WS]]
// W8:          npu.dma mte3 %[[WS]][0, 0] -> %wb[%row, %col] : !npu.buf<128x256xf16, ub> -> !npu.buf<512x256xf16, gm>
// W8:        npu.tasks "linear.16" cube {{.*}} after ["weight"]
// W8:          npu.dma mte2 %wb[
// W8:        npu.tasks "linear.1" cube {{.*}} after ["weight"]
// W8:          npu.dma mte2 %wb[

// Rows of a weight are an npu.view of its gm buffer, read with the weight's L2 policy.
// RUN: pto-opt %S/Inputs/weight_views.mlir --pass-pipeline='builtin.module(pto-sk03-pipeline{factors=8})' | filecheck %s --check-prefix=ROWS
// ROWS: %[[G:.*]] = npu.view %gammas at [64] : !npu.buf<128xbf16, gm> -> !npu.buf<64xbf16, gm>
// ROWS: %[[W:.*]] = npu.view %w at [32, 0] : !npu.buf<64x64xbf16, gm> -> !npu.buf<32x64xbf16, gm>
// ROWS: npu.dma mte2 %[[G]][0] -> %{{.*}}[0] : !npu.buf<64xbf16, gm> -> !npu.buf<64xbf16, ub>
// ROWS: npu.dma mte2 %[[W]][%{{.*}}, %{{.*}}] -> %{{.*}}[0, 0] cache none_cacheable : !npu.buf<32x64xbf16, gm> -> !npu.buf<32x64xbf16, l1>
// The loops of a remainder cascade cover disjoint rows and share one workspace; a loop
// that does not continue the cascade (its lower bound is not the last upper bound) may
// run over the same rows at the same time and gets its own.
// RUN: pto-opt %S/../../examples/levels/sk03_standard.tile.mlir -p tile-assign-shapes,tile-to-npu | grep -c "npu.alloc gm" | filecheck %s --check-prefix=WS1
// WS1: {{^}}1{{$}}
// RUN: sed 's/token_loop %i = %end to/token_loop %i = %c0 to/' %S/../../examples/levels/sk03_standard.tile.mlir | pto-opt -p tile-assign-shapes,tile-to-npu | grep -c "npu.alloc gm" | filecheck %s --check-prefix=WS2
// WS2: {{^}}2{{$}}

// A weight loaded inside the cube stage (the tile-level example) is read where it lives,
// with the load's cache policy.
// LEVEL: npu.tasks "linear.128" cube
// LEVEL: npu.dma mte2 %w[%col, %{{.*}}] -> %{{.*}}[0, 0] cache none_cacheable
// RUN: pto-opt %S/../../examples/sk03_standard.mlir -p 'pto-classify-skeleton,pto-to-tile,tile-unroll{factors=128},tile-annotate-cache,tile-apply-settings,tile-assign-shapes,tile-to-npu{l1-buffers=1}' | filecheck %s --check-prefix=L1X1
// RUN: not pto-opt %S/../../examples/sk03_standard.mlir -p 'pto-classify-skeleton,pto-to-tile,tile-annotate-cache,tile-apply-settings,tile-assign-shapes,tile-to-npu{l0-buffers=3}' 2>&1 | filecheck %s --check-prefix=BADOPT

// With l1-buffers=1 one L1 copy of each operand: a K slice loads after the previous
// one has gone to L0 (events 0 and 4), with no second slice in the loop body.
// L1X1: npu.alloc l1 [0] : !npu.buf<128x512xbf16, l1>
// L1X1-NEXT: npu.alloc l1 [131072] : !npu.buf<64x512xbf16, l1>
// L1X1-NEXT: npu.alloc l0a
// L1X1: npu.wait_flag mte1 -> mte2, 0
// L1X1-NEXT: npu.dma mte2 %ws
// L1X1-NEXT: npu.wait_flag mte1 -> mte2, 4
// L1X1-NEXT: npu.dma mte2 %w
// L1X1-NOT: npu.wait_flag mte1 -> mte2, 1
// BADOPT: pto-opt: error: bad pass pipeline {{.*}}: tile-to-npu: l0-buffers must be 1 or 2, got 3

// The standard kernel: GM buffers for the tensors, one task graph for the kernel, a GM
// workspace for the normalised activations. Each 128-token body is a vector group
// (RMSNorm tiles into the workspace) and a cube group after it, body by body: a cube
// task streams K through L1 and L0 into L0C and casts it out through the fixpipe.
// STD-LABEL: func.func @linear_projection(%x: !npu.buf<?x4096xbf16, gm>, %gamma: !npu.buf<4096xbf16, gm>, %w: !npu.buf<1024x4096xbf16, gm> {pto.cache = #pto.cache<none_cacheable>}, %out: !npu.buf<?x1024xbf16, gm> {pto.output})
// STD: %tokens = npu.dim %x, 0 : !npu.buf<?x4096xbf16, gm>
// STD: npu.graph cube 24 vector 48 {
// STD: %bodies128 = arith.ceildivui
// STD: %ws = npu.alloc gm (%tokens) : !npu.buf<?x4096xbf16, gm>
// 128 rows in 4-row vector tiles; two merged tiles (vec_nbuffer_setting {0: 2}) would not
// fit UB, so each task is one tile of whole rows (the plan: phase <rows = 4, copies = 1>).
// STD: npu.tasks "rmsnorm.128" vector (%body, %task) in (%bodies128, 32) succ 1 {
// STD: %start = arith.addi %c0, %{{.*}} : index
// STD: %end = arith.minui %{{.*}}, %end128 : index
// STD: npu.dma mte2 %x[%row, 0] -> %{{.*}}[0, 0] rows %rows : !npu.buf<?x4096xbf16, gm> -> !npu.buf<4x4096xbf16, ub>
// STD: npu.dma mte2 %gamma[0] -> %{{.*}}[0] : !npu.buf<4096xbf16, gm> -> !npu.buf<4096xbf16, ub>
// STD: npu.vcast {{.*}} none : !npu.buf<4x4096xbf16, ub> -> !npu.buf<4x4096xf32, ub>
// STD: npu.vreduce sum {{.*}} -> %[[S:.*]] : !npu.buf<4x4096xf32, ub> -> !npu.buf<4x1xf32, ub>
// STD: npu.vdup 4.096000e+03 -> %[[K:[0-9]+]]
// STD: npu.vdiv %[[S]], %[[K]] -> %[[S]]
// STD: npu.vadds %[[S]], 1.000000e-06
// STD: npu.vsqrt %[[S]]
// STD: npu.vdiv %{{.*}}, %[[S]]
// STD: npu.vcast {{.*}} rint : !npu.buf<4x4096xf32, ub> -> !npu.buf<4x4096xbf16, ub>
// STD: npu.dma mte3 %{{.*}}[0, 0] -> %ws[%row, 0] rows %rows
// STD-NOT: npu.set_flag mte2 -> vector, 2
// 8 output tiles (128 x 64, the L0 tile: PyPTO's task) per body, each after the body's
// vector tasks; with a single row tile there is nothing for l1_reuse to merge. Every cube
// task needs every vector task of the body, 64 x 16 pairs: through a HUB in PyPTO.
// STD: npu.tasks "linear.128" cube (%body_1, %task_1) in (%bodies128, 16) after ["rmsnorm.128"] hub succ 0 {
// Two L1 copies of each operand (PyPTO's cube tasks copy K slices in back to back: the
// next slice loads while this one is consumed), one L0 copy (64 KiB each: two do not fit).
// STD: npu.alloc l1 [0] : !npu.buf<128x512xbf16, l1>
// STD-NEXT: npu.alloc l1 [131072] : !npu.buf<128x512xbf16, l1>
// STD-NEXT: npu.alloc l1 [262144] : !npu.buf<64x512xbf16, l1>
// STD-NEXT: npu.alloc l1 [327680] : !npu.buf<64x512xbf16, l1>
// STD-NEXT: npu.alloc l0a [0] : !npu.buf<128x256xbf16, l0a>
// STD-NEXT: npu.alloc l0b [0] : !npu.buf<256x64xbf16, l0b>
// STD-NEXT: npu.alloc l0c [0] : !npu.buf<128x64xf32, l0c>
// STD: scf.for
// STD: npu.wait_flag mte1 -> mte2, 0
// STD-NEXT: npu.dma mte2 %ws[%row_1, %{{.*}}] -> %{{.*}}[0, 0] rows %rows_1 : !npu.buf<?x4096xbf16, gm> -> !npu.buf<128x512xbf16, l1>
// STD-NEXT: npu.wait_flag mte1 -> mte2, 4
// STD-NEXT: npu.dma mte2 %w[%col, %{{.*}}] -> %{{.*}}[0, 0] cache none_cacheable
// STD: npu.set_flag mte2 -> mte1, 0
// STD: npu.dma mte1 {{.*}} transpose : !npu.buf<64x512xbf16, l1> -> !npu.buf<256x64xbf16, l0b>
// STD: npu.mmad %{{.*}}, %{{.*}} -> %{{.*}} rows %rows_1 acc %{{.*}} : !npu.buf<128x256xbf16, l0a>, !npu.buf<256x64xbf16, l0b> -> !npu.buf<128x64xf32, l0c>
// STD: scf.if
// STD-NEXT: npu.wait_flag mte1 -> mte2, 1
// STD-NEXT: npu.dma mte2 %ws
// STD-NEXT: npu.wait_flag mte1 -> mte2, 5
// STD: npu.fixpipe %{{.*}}[0, 0] -> %out[%row_1, %col] rows %rows_1 round rint : !npu.buf<128x64xf32, l0c> -> !npu.buf<?x1024xbf16, gm>
// The one-token remainder loop: its cube M tile is the body, 16-padded.
// STD: npu.tasks "rmsnorm.1" vector (%body_2, %task_2) in (%bodies1, 1) succ 16 {
// STD: npu.tasks "linear.1" cube (%body_3, %task_3) in (%bodies1, 16) after ["rmsnorm.1"] succ 0 {
// STD: npu.alloc l0c [0] : !npu.buf<16x64xf32, l0c>

// The quant form: the int8 cast chain, an i32 accumulator, and the dequant in the vector
// group after the cube group, with the [N, 1] weight scale loaded transposed as [1, N];
// two 8192-wide rows per dequant task (planned by liveness: the bf16 result takes the
// bytes of the dead i32 input).
// INT8: npu.tasks "q-rmsnorm.128" vector
// INT8: npu.vreduce absmax
// INT8: npu.vcast {{.*}} rint : {{.*}}xf32, ub> -> {{.*}}xi32, ub>
// INT8: npu.vcast {{.*}} round : {{.*}}xi32, ub> -> {{.*}}xf16, ub>
// INT8: npu.vcast {{.*}} trunc sat : {{.*}}xf16, ub> -> {{.*}}xi8, ub>
// INT8: npu.tasks "Query-Linear.128" cube (%body_1, %task_1) in (%bodies128, 32) after ["q-rmsnorm.128"] hub succ 1 {
// INT8: npu.mmad {{.*}} -> !npu.buf<128x256xi32, l0c>
// INT8: npu.fixpipe {{.*}} : !npu.buf<128x256xi32, l0c> -> !npu.buf<?x8192xi32, gm>
// INT8: npu.tasks "Query-Dequant.128" vector (%body_2, %task_2) in (%bodies128, 64) after ["Query-Linear.128"] hub succ 0 {
// INT8: npu.dma mte2 %w_scale[0, 0] -> %{{.*}}[0, 0] transpose : !npu.buf<8192x1xf32, gm> -> !npu.buf<1x8192xf32, ub>
// INT8: npu.vcast {{.*}} rint : {{.*}}xi32, ub> -> {{.*}}xf32, ub>

// C -> V: the cube group reads x directly and waits for nothing; the vector group
// waits for the cube tasks of its body; a vector task merges the two 8-row tiles that
// vec_nbuffer_setting asks for. Its tasks of each 64-row M tile need that tile's cube
// tasks only: a HUB per M tile (`hub [...]`: each task's place behind its HUB).
// CV: npu.tasks "wqa-linear.128" cube (%body, %task) in (%bodies128, 32) succ 1 {
// CV: npu.dma mte2 %x[%row
// CV: npu.tasks "q-rmsnorm.128" vector (%body_1, %task_1) in (%bodies128, 8) after ["wqa-linear.128"] hub [0, 1, 2, 3, 0, 1, 2, 3] succ 0 {

// mhc_pre: the weight arrives host-transposed, the in-place reshape is a GM view.
// MHC: func.func @hc_pre(%x: !npu.buf<?x4x4096xbf16, gm>, %hc_fn: !npu.buf<16384x24xf32, gm> {npu.host_transpose}, %out: !npu.buf<?x24xf32, gm> {pto.output})
// MHC: npu.reshape %x : !npu.buf<?x4x4096xbf16, gm> -> !npu.buf<?x16384xbf16, gm>
// Column tiling (vector tiles [8, 2048] on 16384-wide rows; the in-place reshape is a
// view, no UB buffer): the cast of the flattened x is elementwise, so each 8x2048 tile
// is a task of its own, as in PyPTO (2 row tiles x 8 chunks per body, two merged per
// task: 8), the chunk loop one trip.
// MHC: npu.tasks "pre.16" vector (%body, %task) in (%bodies16, 8) succ 1 {
// MHC: %[[CH:.*]] = arith.remui
// MHC: %[[LO:.*]] = arith.muli %[[CH]], %{{.*}} : index
// MHC: %[[HI:.*]] = arith.addi %[[LO]], %{{.*}} : index
// MHC: scf.for %{{.*}} = %[[LO]] to %[[HI]] step
// MHC: npu.alloc ub [0] : !npu.buf<8x2048xbf16, ub>
// MHC-NEXT: npu.dma mte2 %{{.*}}[%row, %[[C:[0-9]+]]] -> %{{.*}}[0, 0] rows %rows : !npu.buf<?x16384xbf16, gm> -> !npu.buf<8x2048xbf16, ub>
// MHC: npu.vcast {{.*}} : !npu.buf<8x2048xbf16, ub> -> !npu.buf<8x2048xf32, ub>
// MHC: npu.dma mte3 %{{.*}}[0, 0] -> %ws[%row, %[[C]]] rows %rows : !npu.buf<8x2048xf32, ub> -> !npu.buf<?x16384xf32, gm>
// MHC: npu.tasks "hc-linear.16" cube (%body_1, %task_1) in (%bodies16, 1) after ["pre.16"] succ 2 {
// MHC: npu.mmad {{.*}} : !npu.buf<16x512xf32, l0a>, !npu.buf<512x24xf32, l0b> -> !npu.buf<16x24xf32, l0c>
// The norm accumulates the sum of squares chunk by chunk, then runs the [8, 1] and
// [8, 24] work once per task.
// MHC: npu.tasks "hc-norm.16" vector (%body_2, %task_2) in (%bodies16, 2) after ["hc-linear.16"] succ 0 {
// MHC: npu.dma mte2 %ws_1[%row_3, 0] -> %{{.*}}[0, 0] rows %rows_3 : !npu.buf<?x24xf32, gm> -> !npu.buf<8x24xf32, ub>
// MHC: npu.vdup 0.000000e+00 -> %[[ACC:.*]] : !npu.buf<8x1xf32, ub>
// MHC: scf.for
// MHC: npu.dma mte2 %ws[%row_3, %{{.*}}] -> %{{.*}}[0, 0] rows %rows_3 : !npu.buf<?x16384xf32, gm> -> !npu.buf<8x2048xf32, ub>
// MHC: npu.vreduce sum {{.*}} : !npu.buf<8x2048xf32, ub> -> !npu.buf<8x1xf32, ub>
// MHC-NEXT: npu.vadd %[[ACC]], %{{.*}} -> %[[ACC]]
// MHC: npu.vdup 1.638400e+04 -> %[[K:[0-9]+]]
// MHC: npu.vdiv %[[ACC]], %[[K]] -> %[[ACC]]
// MHC: npu.vsqrt
// MHC: npu.vdiv {{.*}} : !npu.buf<8x24xf32, ub>, !npu.buf<8x1xf32, ub> -> !npu.buf<8x24xf32, ub>
// With tile heights 128 and 64 the mhc_pre variant splits K into runs of one kL1 slice
// (f32: 8 here), no row tiles merged (PyPTO merges none under split-K): 8 row tiles x 8
// runs per body, each writing its partial sums into its run's block of a workspace; a
// vector group adds the runs up per output tile (8 per body), one copy-in per run. A run
// reads only the column tiles of its K range and a sum task only its tile's runs: no
// dependence is all-to-all, so none goes through a HUB.
// Each task's successors (`succ`, resolved one by one by PyPTO's schedulers) follow the
// footprints: a pre task's 2048-column chunk is read by the 2 runs of 1024 columns in it,
// a run's tile by its output tile's sum task; the last group hands on to nothing. And
// each task waits only for those (`needs`): run 0 of row tile 0 for the pre tasks 0 and 4
// (row tiles 0 and 1 of its chunk), a sum task for its tile's 8 runs.
// SPLIT: npu.tasks "pre.128" vector (%body, %task) in (%bodies128, 64) succ 2 {
// SPLIT: %psum = npu.alloc gm (%{{.*}}) : !npu.buf<?x24xf32, gm>
// SPLIT: npu.tasks "hc-linear.128" cube (%body_1, %task_1) in (%bodies128, 64) after ["pre.128"] succ 1 needs {{\[}}[0, 4], [8, 12], [16, 20],
// SPLIT-NOT: atomic_add
// SPLIT: npu.fixpipe {{.*}} -> %psum[%{{.*}}, %col] rows %rows_2 : !npu.buf<16x24xf32, l0c>
// SPLIT: npu.tasks "hc-linear.128.sum" vector (%body_2, %task_2) in (%bodies128, 8) after ["hc-linear.128"] succ 1 needs {{\[}}[0, 8, 16, 24, 32, 40, 48, 56], [1, 9,
// SPLIT-COUNT-8: npu.dma mte2 %psum
// SPLIT-NOT: npu.dma mte2 %psum
// SPLIT: npu.dma mte3 %{{.*}}[0, 0] -> %ws_1[%row_3, %col_1] rows %rows_3
// The rows tile-assign-shapes chose fit once the stages are fused, though not with a
// second merged tile: the rows are kept (one tile per task), and nothing is said.

// Split-K into one f32 result: K = 64 in runs of kL1 = 16 f32 elements, 4 cube tasks
// per body, each writing its partial sums into its run's block of the workspace
// (token count x 4 rows); a vector task per output tile adds the four blocks up.
// CONST-LABEL: func.func @split_k
// CONST: %[[R:.*]] = arith.muli %t, %{{.*}} : index
// CONST: %psum = npu.alloc gm (%[[R]]) : !npu.buf<?x32xf32, gm>
// CONST: npu.tasks "linear.16" cube (%body, %task) in (%bodies16, 4) succ 1 {
// CONST: npu.fixpipe {{.*}} -> %psum[%{{.*}}, %col] rows %rows : !npu.buf<16x32xf32, l0c> -> !npu.buf<?x32xf32, gm>
// CONST: npu.tasks "linear.16.sum" vector (%body_1, %task_1) in (%bodies16, 1) after ["linear.16"] succ 0 {
// CONST: npu.dma mte2 %psum[%row_1, %col_1] -> %[[ACC:.*]][0, 0] rows %rows_1
// CONST: npu.dma mte2 %psum[%{{.*}}, %col_1] -> %[[PART:.*]][0, 0] rows %rows_1
// CONST: npu.vadd %[[ACC]], %[[PART]] -> %[[ACC]]
// CONST: npu.vadd %[[ACC]], %[[PART]] -> %[[ACC]]
// CONST: npu.vadd %[[ACC]], %[[PART]] -> %[[ACC]]
// CONST-NOT: npu.vadd
// CONST: npu.vmuls %[[ACC]], 1.0
// CONST: npu.dma mte3 %{{.*}}[0, 0] -> %out[%row_1, %col_1] rows %rows_1
func.func @split_k(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>, %out: tensor<?x32xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xf32>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x64xf32> -> tensor<16x64xf32>
    %y = tile.cube_stage "linear" tiles <m = [16, 16], k = [16, 16], n = [32, 32], split_k> -> (tensor<16x32xf32>) {
      %m = tile.matmul %xt, %w : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
      tile.yield %m : tensor<16x32xf32>
    }
    tile.store %y, %out[%i] : tensor<16x32xf32> -> tensor<?x32xf32>
  }
  func.return
}

// -----

// ... and into a bf16 result: the vector task that adds the partial sums casts them.
func.func @split_k_bf16(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>, %out: tensor<?x32xbf16> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xf32>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x64xf32> -> tensor<16x64xf32>
    %y = tile.cube_stage "linear" tiles <m = [16, 16], k = [16, 16], n = [32, 32], split_k> -> (tensor<16x32xbf16>) {
      %m = tile.matmul %xt, %w : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
      %o = tile.cast %m rint : tensor<16x32xf32> -> tensor<16x32xbf16>
      tile.yield %o : tensor<16x32xbf16>
    }
    tile.store %y, %out[%i] : tensor<16x32xbf16> -> tensor<?x32xbf16>
  }
  func.return
}
// CONST-LABEL: func.func @split_k_bf16
// CONST: %psum = npu.alloc gm
// CONST: npu.tasks "linear.16" cube
// CONST: npu.fixpipe {{.*}} -> %psum[%{{.*}}, %col] rows %rows : !npu.buf<16x32xf32, l0c> -> !npu.buf<?x32xf32, gm>
// CONST: npu.tasks "linear.16.sum" vector (%body_1, %task_1) in (%bodies16, 1) after ["linear.16"] succ 0 {
// CONST: npu.dma mte2 %psum[%row_1, %col_1] -> %{{.*}}[0, 0] rows %rows_1 : !npu.buf<?x32xf32, gm> -> !npu.buf<16x32xf32, ub>
// CONST: npu.vcast {{.*}} rint : !npu.buf<16x32xf32, ub> -> !npu.buf<16x32xbf16, ub>
// CONST: npu.dma mte3 %{{.*}}[0, 0] -> %out[%row_1, %col_1] rows %rows_1

// -----

// Two copies of the activation slice and of the weight slice would not fit L1
// (2 x (128 + 256) KiB): the activation gets two copies and the weight slice is loaded
// in halves, two copies of a half, each half freed once its kL0 steps are done.
func.func @l1_weight_halves(%x: tensor<?x1024xbf16>, %w: tensor<1024x256xbf16>, %out: tensor<?x256xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x1024xbf16>
  tile.token_loop %i = %c0 to %t step 128 {
    %xt = tile.load %x[%i] : tensor<?x1024xbf16> -> tensor<128x1024xbf16>
    %y = tile.cube_stage "linear" tiles <m = [128, 128], k = [128, 512], n = [256, 256]> -> (tensor<128x256xf32>) {
      %m = tile.matmul %xt, %w : tensor<128x1024xbf16>, tensor<1024x256xbf16> -> tensor<128x256xf32>
      tile.yield %m : tensor<128x256xf32>
    }
    tile.store %y, %out[%i] : tensor<128x256xf32> -> tensor<?x256xf32>
  }
  func.return
}
// CONST-LABEL: func.func @l1_weight_halves
// CONST: npu.alloc l1 [0] : !npu.buf<128x512xbf16, l1>
// CONST-NEXT: npu.alloc l1 [131072] : !npu.buf<128x512xbf16, l1>
// CONST-NEXT: npu.alloc l1 [262144] : !npu.buf<256x256xbf16, l1>
// CONST-NEXT: npu.alloc l1 [393216] : !npu.buf<256x256xbf16, l1>
// CONST-NEXT: npu.alloc l0a
// CONST: scf.for %[[K:.*]] = 
// CONST-NEXT: npu.wait_flag mte1 -> mte2, 0
// CONST-NEXT: npu.dma mte2 %x[%row, %[[K]]] -> %{{.*}}[0, 0] rows %rows : !npu.buf<?x1024xbf16, gm> -> !npu.buf<128x512xbf16, l1>
// CONST-NEXT: npu.wait_flag mte1 -> mte2, 4
// CONST-NEXT: npu.dma mte2 %w[%[[K]], %col] -> %{{.*}}[0, 0] : !npu.buf<1024x256xbf16, gm> -> !npu.buf<256x256xbf16, l1>
// CONST-NEXT: npu.set_flag mte2 -> mte1, 0
// CONST: scf.for
// CONST: npu.set_flag mte1 -> mte2, 4
// CONST: npu.wait_flag mte1 -> mte2, 5
// CONST-NEXT: npu.dma mte2 %w[%{{.*}}, %col] -> %{{.*}}[0, 0] : !npu.buf<1024x256xbf16, gm> -> !npu.buf<256x256xbf16, l1>
// CONST-NEXT: npu.set_flag mte2 -> mte1, 1
// CONST: npu.set_flag mte1 -> mte2, 5
// CONST-NEXT: npu.set_flag mte1 -> mte2, 0

// -----

// When the slice does not halve on kL0 steps (kL1 = 3 kL0), only the activation gets
// two copies, and is loaded first.
func.func @l1_weight_once(%x: tensor<?x768xbf16>, %w: tensor<768x256xbf16>, %out: tensor<?x256xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x768xbf16>
  tile.token_loop %i = %c0 to %t step 128 {
    %xt = tile.load %x[%i] : tensor<?x768xbf16> -> tensor<128x768xbf16>
    %y = tile.cube_stage "linear" tiles <m = [128, 128], k = [128, 384], n = [256, 256]> -> (tensor<128x256xf32>) {
      %m = tile.matmul %xt, %w : tensor<128x768xbf16>, tensor<768x256xbf16> -> tensor<128x256xf32>
      tile.yield %m : tensor<128x256xf32>
    }
    tile.store %y, %out[%i] : tensor<128x256xf32> -> tensor<?x256xf32>
  }
  func.return
}
// CONST-LABEL: func.func @l1_weight_once
// CONST: npu.alloc l1 [0] : !npu.buf<128x384xbf16, l1>
// CONST-NEXT: npu.alloc l1 [98304] : !npu.buf<128x384xbf16, l1>
// CONST-NEXT: npu.alloc l1 [196608] : !npu.buf<384x256xbf16, l1>
// CONST-NEXT: npu.alloc l0a
// CONST: scf.if
// CONST-NEXT: npu.wait_flag mte1 -> mte2, 1
// CONST-NEXT: npu.dma mte2 %x
// CONST-NEXT: npu.wait_flag mte1 -> mte2, 4
// CONST-NEXT: npu.dma mte2 %w

// -----

// The kernel's runtime option stitch_function_max_num becomes the graph's `stitch`.
func.func @stitched(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>, %out: tensor<?x32xf32> {pto.output})
    attributes {pto.runtime = {stitch_function_max_num = 4}} {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xf32>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x64xf32> -> tensor<16x64xf32>
    %y = tile.cube_stage "linear" tiles <m = [16, 16], k = [16, 64], n = [32, 32]> -> (tensor<16x32xf32>) {
      %m = tile.matmul %xt, %w : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
      tile.yield %m : tensor<16x32xf32>
    }
    tile.store %y, %out[%i] : tensor<16x32xf32> -> tensor<?x32xf32>
  }
  func.return
}
// CONST-LABEL: func.func @stitched
// CONST: npu.graph cube 24 vector 48 stitch 4 {

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

// mL0 < mL1 and nL0 < nL1: as in PyPTO, each L0 block of the output is a task (the
// [32, 32] L1 tile is 2x2 tasks of 16x16).
func.func @m_sub_tiles(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>, %out: tensor<?x32xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xf32>
  tile.token_loop %i = %c0 to %t step 32 {
    %xt = tile.load %x[%i] : tensor<?x64xf32> -> tensor<32x64xf32>
    %y = tile.cube_stage "linear" tiles <m = [16, 32], k = [16, 64], n = [16, 32]> -> (tensor<32x32xf32>) {
      %m = tile.matmul %xt, %w : tensor<32x64xf32>, tensor<64x32xf32> -> tensor<32x32xf32>
      tile.yield %m : tensor<32x32xf32>
    }
    tile.store %y, %out[%i] : tensor<32x32xf32> -> tensor<?x32xf32>
  }
  func.return
}
// CONST-LABEL: func.func @m_sub_tiles
// CONST: npu.tasks "linear.32" cube (%body, %task) in (%bodies32, 4) succ 0 {
// CONST: npu.alloc l1 [0] : !npu.buf<16x64xf32, l1>
// CONST: npu.alloc l0c [0] : !npu.buf<16x16xf32, l0c>
// CONST: npu.mmad {{.*}} : !npu.buf<16x16xf32, l0a>, !npu.buf<16x16xf32, l0b> -> !npu.buf<16x16xf32, l0c>
// CONST: npu.fixpipe %{{.*}}[0, 0] -> %out[%row, %col] rows %rows : !npu.buf<16x16xf32, l0c> -> !npu.buf<?x32xf32, gm>

// -----

func.func @ragged_tails(%x: tensor<?x72xf32>, %w: tensor<72x48xf32>, %out: tensor<?x48xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x72xf32>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x72xf32> -> tensor<16x72xf32>
    %y = tile.cube_stage "linear" tiles <m = [16, 16], k = [16, 64], n = [32, 32]> -> (tensor<16x48xf32>) {
      %m = tile.matmul %xt, %w : tensor<16x72xf32>, tensor<72x48xf32> -> tensor<16x48xf32>
      tile.yield %m : tensor<16x48xf32>
    }
    tile.store %y, %out[%i] : tensor<16x48xf32> -> tensor<?x48xf32>
  }
  func.return
}
// N = 48 in nL0 = 32 tiles and K = 72 in kL1 = 64 slices, as PyPTO cuts them: the last
// tile of each holds the rest (16 columns, 8 of K), its loads zero-fill past them and the
// fixpipe stores only them.
// CONST-LABEL: func.func @ragged_tails
// CONST: npu.tasks "linear.16" cube (%body, %task) in (%bodies16, 2) succ 0 {
// CONST: %ncols = arith.minui
// CONST: %kcols = arith.minui
// CONST: npu.dma mte2 %x[%row, %{{.*}}] -> %{{.*}}[0, 0] rows %rows cols %kcols : !npu.buf<?x72xf32, gm> -> !npu.buf<16x64xf32, l1>
// CONST: npu.dma mte2 %w[%{{.*}}, %col] -> %{{.*}}[0, 0] rows %kcols cols %ncols : !npu.buf<72x48xf32, gm> -> !npu.buf<64x32xf32, l1>
// CONST: scf.for %{{.*}} = %{{.*}} to %kcols step
// CONST: npu.fixpipe %{{.*}}[0, 0] -> %out[%row, %col] rows %rows cols %ncols : !npu.buf<16x32xf32, l0c> -> !npu.buf<?x48xf32, gm>

// -----

func.func @split_ragged(%x: tensor<?x72xf32>, %w: tensor<72x32xf32>, %out: tensor<?x32xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x72xf32>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x72xf32> -> tensor<16x72xf32>
    %y = tile.cube_stage "linear" tiles <m = [16, 16], k = [16, 32], n = [32, 32], split_k> -> (tensor<16x32xf32>) {
      %m = tile.matmul %xt, %w : tensor<16x72xf32>, tensor<72x32xf32> -> tensor<16x32xf32>
      tile.yield %m : tensor<16x32xf32>
    }
    tile.store %y, %out[%i] : tensor<16x32xf32> -> tensor<?x32xf32>
  }
  func.return
}
// Split-K of K = 72 in kL1 = 32 slices (f32: runs of one slice, PyPTO's cut): three runs,
// the last one's 8 columns of K ragged, then the sum group.
// CONST-LABEL: func.func @split_ragged
// CONST: npu.tasks "linear.16" cube (%body, %task) in (%bodies16, 3) succ 1 {
// CONST: npu.dma mte2 %x[%row, %{{.*}}] -> %{{.*}}[0, 0] rows %rows cols %kcols : !npu.buf<?x72xf32, gm> -> !npu.buf<16x32xf32, l1>
// CONST: npu.tasks "linear.16.sum" vector (%body_1, %task_1) in (%bodies16, 1) after ["linear.16"] succ 0 {

// -----

func.func @computed_reshape(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>, %out: tensor<?x2x16xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xf32>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x64xf32> -> tensor<16x64xf32>
    %y = tile.cube_stage "linear" tiles <m = [16, 16], k = [16, 64], n = [32, 32]> -> (tensor<16x32xf32>) {
      %m = tile.matmul %xt, %w : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
      tile.yield %m : tensor<16x32xf32>
    }
    // A computed tile's reshape is a view of its UB buffer; a rank-3 one is stored into the
    // rank-3 output as its rank-2 rows.
    %r = tile.vec_stage "post" tile [4, 32] phase <rows = 4, copies = 1> -> (tensor<16x2x16xf32>) {
      %h = tile.reshape %y inplace : tensor<16x32xf32> -> tensor<16x2x16xf32>
      tile.yield %h : tensor<16x2x16xf32>
    }
    tile.store %r, %out[%i] : tensor<16x2x16xf32> -> tensor<?x2x16xf32>
  }
  func.return
}
// CONST-LABEL: func.func @computed_reshape
// CONST: %[[V:.*]] = npu.reshape %{{.*}} : !npu.buf<4x2x16xf32, ub> -> !npu.buf<4x32xf32, ub>
// CONST: %[[O:.*]] = npu.reshape %out : !npu.buf<?x2x16xf32, gm> -> !npu.buf<?x32xf32, gm>
// CONST: npu.dma mte3 %[[V]][0, 0] -> %[[O]][%{{row.*}}, 0] rows %{{rows.*}} : !npu.buf<4x32xf32, ub> -> !npu.buf<?x32xf32, gm>

// -----

// Constant loop bounds (no tensor.dim): the workspace is sized by the token argument's dim 0.
func.func @constant_bounds(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>, %out: tensor<?x32xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  tile.token_loop %i = %c0 to %c8 step 8 {
    %xt = tile.load %x[%i] : tensor<?x64xf32> -> tensor<8x64xf32>
    %n = tile.vec_stage "norm" tile [8, 64] phase <rows = 8, copies = 1> -> (tensor<8x64xf32>) {
      %a = tile.abs %xt : tensor<8x64xf32> -> tensor<8x64xf32>
      tile.yield %a : tensor<8x64xf32>
    }
    %y = tile.cube_stage "linear" tiles <m = [16, 16], k = [16, 64], n = [32, 32]> -> (tensor<8x32xf32>) {
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

// Two L0A/L0B copies when they fit (double buffering, whatever the merge count nbuffer 2
// says: with one output tile per body there is nothing to merge); K step i of an L1
// slice uses copy i % 2, so MTE1 fills one while the cube multiplies the other
// (CUBE -> MTE1 event j frees copy j).
func.func @cube_nbuffer(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>, %out: tensor<?x32xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xf32>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x64xf32> -> tensor<16x64xf32>
    %y = tile.cube_stage "linear" tiles <m = [16, 16], k = [16, 64], n = [32, 32]> nbuffer 2 -> (tensor<16x32xf32>) {
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
// CONST-NEXT: npu.dma mte1 %{{.*}}[%[[K]], 0] -> %{{.*}}[0, 0] : !npu.buf<64x32xf32, l1> -> !npu.buf<16x32xf32, l0b>
// CONST-NEXT: npu.dma mte1 %{{.*}}[0, %[[K]]] -> %[[A0:.*]][0, 0]
// CONST: npu.mmad %[[A0]], %{{.*}} -> %{{.*}} rows %{{.*}} acc
// CONST-NEXT: npu.set_flag cube -> mte1, 0
// CONST: scf.if
// CONST: npu.wait_flag cube -> mte1, 1
// CONST: npu.mmad
// CONST-NEXT: npu.set_flag cube -> mte1, 1
// At the end of the task (the task body's own indentation), both copies are drained.
// CONST: {{^        }}npu.wait_flag cube -> mte1, 0
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
    %n, %s = tile.vec_stage "norm" tile [4, 64] phase <rows = 4, copies = 1> -> (tensor<16x256xf32>, tensor<16x1xf32>) {
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
// CONST-LABEL: func.func @no_columns
// CONST: npu.vreduce max {{.*}} : !npu.buf<4x256xf32, ub> -> !npu.buf<4x1xf32, ub>

// -----

// A 64x256 f32 L0 tile fits L0C (its 128x512 L1 tile would not): four tasks per body.
func.func @l0c_blocks(%x: tensor<?x64xf32>, %w: tensor<64x512xf32>, %out: tensor<?x512xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xf32>
  tile.token_loop %i = %c0 to %t step 128 {
    %xt = tile.load %x[%i] : tensor<?x64xf32> -> tensor<128x64xf32>
    %y = tile.cube_stage "linear" tiles <m = [64, 128], k = [16, 64], n = [256, 512]> -> (tensor<128x512xf32>) {
      %m = tile.matmul %xt, %w : tensor<128x64xf32>, tensor<64x512xf32> -> tensor<128x512xf32>
      tile.yield %m : tensor<128x512xf32>
    }
    tile.store %y, %out[%i] : tensor<128x512xf32> -> tensor<?x512xf32>
  }
  func.return
}

// CONST-LABEL: func.func @l0c_blocks
// CONST: npu.tasks "linear.128" cube (%body, %task) in (%bodies128, 4) succ 0 {
// CONST: npu.alloc l0c [0] : !npu.buf<64x256xf32, l0c>

// -----

// Fused, the norm and the quant stages do not fit UB at 4 rows of 4096 f32, and the quant
// is not column-tiled with these pinned rows: the rows are cut, and said.
func.func @cut_rows(%x: tensor<?x4096xf32>, %w: tensor<4096x32xi8>, %out: tensor<?x32xi32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x4096xf32>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x4096xf32> -> tensor<16x4096xf32>
    %n = tile.vec_stage "norm" tile [4, 4096] phase <rows = 2, copies = 1> -> (tensor<16x4096xf32>) {
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
// CONST-LABEL: func.func @cut_rows
// CONST: npu.tasks "norm.16" vector (%body, %task) in (%bodies16, 8) succ 1 {

// -----

// kL1 = 512 past K = 320 is the kL0 steps that hold K, 384 columns: one slice, its last
// step ragged (64 of K's columns): its loads copy K's columns and zero-fill the rest.
func.func @k_clipped(%x: tensor<?x320xf32>, %w: tensor<320x32xf32>, %out: tensor<?x32xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x320xf32>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x320xf32> -> tensor<16x320xf32>
    %y = tile.cube_stage "linear" tiles <m = [16, 16], k = [128, 512], n = [32, 32]> -> (tensor<16x32xf32>) {
      %m = tile.matmul %xt, %w : tensor<16x320xf32>, tensor<320x32xf32> -> tensor<16x32xf32>
      tile.yield %m : tensor<16x32xf32>
    }
    tile.store %y, %out[%i] : tensor<16x32xf32> -> tensor<?x32xf32>
  }
  func.return
}
// CONST-LABEL: func.func @k_clipped
// CONST: npu.dma mte2 %x[%row, %{{.*}}] -> %{{.*}}[0, 0] rows %rows cols %kcols : !npu.buf<?x320xf32, gm> -> !npu.buf<16x384xf32, l1>

// -----

// RoPE's column ops: a slice of the cube's result is a view of its columns in GM, loaded
// as a tile of its own; a slice of a value in UB is one npu.vcopy into a new buffer, a
// concatenation one vcopy per input into a new buffer as wide as their sum.
func.func @rope_columns(%x: tensor<?x64xbf16>, %w: tensor<128x64xbf16>, %out: tensor<?x128xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<16x64xbf16>
    %y = tile.cube_stage "linear" tiles <m = [16, 16], k = [64, 64], n = [128, 128]> -> (tensor<16x128xf32>) {
      %m = tile.matmul %xt, %w b_trans : tensor<16x64xbf16>, tensor<128x64xbf16> -> tensor<16x128xf32>
      tile.yield %m : tensor<16x128xf32>
    }
    %r = tile.vec_stage "rope" tile [4, 128] phase <rows = 4, copies = 1> -> (tensor<16x128xf32>) {
      %pe = tile.slice %y at 64 : tensor<16x128xf32> -> tensor<16x64xf32>
      %x1 = tile.slice %pe at 0 : tensor<16x64xf32> -> tensor<16x32xf32>
      %x2 = tile.slice %pe at 32 : tensor<16x64xf32> -> tensor<16x32xf32>
      %n2 = tile.muls %x2, -1.0 : tensor<16x32xf32> -> tensor<16x32xf32>
      %rot = tile.concat %n2, %x1 : tensor<16x32xf32>, tensor<16x32xf32> -> tensor<16x64xf32>
      %kv = tile.slice %y at 0 : tensor<16x128xf32> -> tensor<16x64xf32>
      %o = tile.concat %kv, %rot : tensor<16x64xf32>, tensor<16x64xf32> -> tensor<16x128xf32>
      tile.yield %o : tensor<16x128xf32>
    }
    tile.store %r, %out[%i] : tensor<16x128xf32> -> tensor<?x128xf32>
  }
  func.return
}
// CONST-LABEL: func.func @rope_columns
// CONST: %[[PEV:.*]] = npu.view %[[WS:.*]] at [0, 64] : !npu.buf<?x128xf32, gm> -> !npu.buf<?x64xf32, gm>
// CONST: %[[KVV:.*]] = npu.view %[[WS]] at [0, 0] : !npu.buf<?x128xf32, gm> -> !npu.buf<?x64xf32, gm>
// CONST: npu.tasks "rope.16" vector
// CONST: npu.dma mte2 %[[PEV]][%{{.*}}, 0] -> %[[PE:.*]][0, 0] rows %{{.*}} : !npu.buf<?x64xf32, gm> -> !npu.buf<4x64xf32, ub>
// CONST: npu.dma mte2 %[[KVV]][%{{.*}}, 0] -> %[[KV:.*]][0, 0] rows %{{.*}} : !npu.buf<?x64xf32, gm> -> !npu.buf<4x64xf32, ub>
// CONST: npu.vcopy %[[PE]][cols 0] -> %[[X1:.*]][cols 0] width 32 : !npu.buf<4x64xf32, ub> -> !npu.buf<4x32xf32, ub>
// CONST: npu.vcopy %[[PE]][cols 32] -> %[[X2:.*]][cols 0] width 32
// CONST: npu.vmuls %[[X2]], -1.000000e+00 -> %[[N2:.*]] :
// CONST: npu.vcopy %[[N2]][cols 0] -> %[[ROT:.*]][cols 0] width 32 : !npu.buf<4x32xf32, ub> -> !npu.buf<4x64xf32, ub>
// CONST: npu.vcopy %[[X1]][cols 0] -> %[[ROT]][cols 32] width 32 : !npu.buf<4x32xf32, ub> -> !npu.buf<4x64xf32, ub>
// CONST: npu.vcopy %[[KV]][cols 0] -> %[[O:.*]][cols 0] width 64 : !npu.buf<4x64xf32, ub> -> !npu.buf<4x128xf32, ub>
// CONST: npu.vcopy %[[ROT]][cols 0] -> %[[O]][cols 64] width 64 : !npu.buf<4x64xf32, ub> -> !npu.buf<4x128xf32, ub>
// CONST: npu.dma mte3 %[[O]][0, 0] -> %{{.*}}[%{{.*}}, 0] rows %{{.*}} : !npu.buf<4x128xf32, ub> -> !npu.buf<?x128xf32, gm>

// -----

// A vector tile narrower than the row does not column-tile slices and concatenations:
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
    %r = tile.vec_stage "rope" tile [4, 64] phase <rows = 4, copies = 1> -> (tensor<16x128xf32>) {
      %pe = tile.slice %y at 64 : tensor<16x128xf32> -> tensor<16x64xf32>
      %x1 = tile.slice %pe at 0 : tensor<16x64xf32> -> tensor<16x32xf32>
      %x2 = tile.slice %pe at 32 : tensor<16x64xf32> -> tensor<16x32xf32>
      %n2 = tile.muls %x2, -1.0 : tensor<16x32xf32> -> tensor<16x32xf32>
      %rot = tile.concat %n2, %x1 : tensor<16x32xf32>, tensor<16x32xf32> -> tensor<16x64xf32>
      %kv = tile.slice %y at 0 : tensor<16x128xf32> -> tensor<16x64xf32>
      %o = tile.concat %kv, %rot : tensor<16x64xf32>, tensor<16x64xf32> -> tensor<16x128xf32>
      tile.yield %o : tensor<16x128xf32>
    }
    tile.store %r, %out[%i] : tensor<16x128xf32> -> tensor<?x128xf32>
  }
  func.return
}
// CONST-LABEL: func.func @rope_narrow_tile
// CONST: npu.tasks "rope.16" vector
// CONST-NOT: scf.for
// CONST: npu.vcopy %{{.*}}[cols 0] -> %{{.*}}[cols 64] width 64 : !npu.buf<4x64xf32, ub> -> !npu.buf<4x128xf32, ub>

// -----

// SwiGLU on the gate and up halves of one matmul (`pypto.view`s of its result): the
// halves are views of the result's columns in GM, so a vector tile narrower than a half
// column-tiles the phase (an elementwise one: a task per chunk), each chunk loading its
// columns of both halves.
func.func @gate_up_columns(%x: tensor<?x64xbf16>, %w: tensor<256x64xbf16>, %out: tensor<?x128xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<16x64xbf16>
    %y = tile.cube_stage "linear" tiles <m = [16, 16], k = [64, 64], n = [128, 128]> -> (tensor<16x256xf32>) {
      %m = tile.matmul %xt, %w b_trans : tensor<16x64xbf16>, tensor<256x64xbf16> -> tensor<16x256xf32>
      tile.yield %m : tensor<16x256xf32>
    }
    %r = tile.vec_stage "swiglu" tile [4, 64] phase <rows = 4, copies = 1, chunk = 64 of 128> -> (tensor<16x128xf32>) {
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
// CONST-LABEL: func.func @gate_up_columns
// CONST: %[[G:.*]] = npu.view %[[WS:.*]] at [0, 0] : !npu.buf<?x256xf32, gm> -> !npu.buf<?x128xf32, gm>
// CONST: %[[U:.*]] = npu.view %[[WS]] at [0, 128] : !npu.buf<?x256xf32, gm> -> !npu.buf<?x128xf32, gm>
// CONST: npu.tasks "swiglu.16" vector (%{{.*}}, %{{.*}}) in (%{{.*}}, 8) after ["linear.16"]
// CONST: scf.for %[[C:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CONST: npu.dma mte2 %[[G]][%{{.*}}, %[[C]]] -> %[[GB:.*]][0, 0] rows %{{.*}} : !npu.buf<?x128xf32, gm> -> !npu.buf<4x64xf32, ub>
// CONST: npu.dma mte2 %[[U]][%{{.*}}, %[[C]]] -> %[[UB:.*]][0, 0] rows %{{.*}} : !npu.buf<?x128xf32, gm> -> !npu.buf<4x64xf32, ub>
// CONST: npu.vexp %[[GB]]
// CONST: npu.vmul
// CONST: npu.dma mte3 %{{.*}}[0, 0] -> %{{.*}}[%{{.*}}, %[[C]]] rows %{{.*}} : !npu.buf<4x64xf32, ub> -> !npu.buf<?x128xf32, gm>

// -----

// A quant column-tiled: one pass folds each chunk's max |x| into the row's amax, the scale
// is amax / 127 once, the next pass quantises each chunk by that amax (the whole row's
// chain: x * 127 / amax, rint -> i32, round -> f16, trunc sat -> i8) and stores it.
func.func @quant_columns(%x: tensor<?x256xbf16>, %w: tensor<256x32xi8>, %out: tensor<?x32xi32> {pto.output},
                         %out1: tensor<?x1xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x256xbf16>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x256xbf16> -> tensor<16x256xbf16>
    %q, %s = tile.vec_stage "quant" tile [4, 64] phase <rows = 4, copies = 1, chunk = 64 of 256> -> (tensor<16x256xi8>, tensor<16x1xf32>) {
      %q0, %s0 = tile.quant %xt : tensor<16x256xbf16> -> tensor<16x256xi8>, tensor<16x1xf32>
      tile.yield %q0, %s0 : tensor<16x256xi8>, tensor<16x1xf32>
    }
    %y = tile.cube_stage "linear" tiles <m = [16, 16], k = [256, 256], n = [32, 32]> -> (tensor<16x32xi32>) {
      %m = tile.matmul %q, %w : tensor<16x256xi8>, tensor<256x32xi8> -> tensor<16x32xi32>
      tile.yield %m : tensor<16x32xi32>
    }
    tile.store %y, %out[%i] : tensor<16x32xi32> -> tensor<?x32xi32>
    tile.store %s, %out1[%i] : tensor<16x1xf32> -> tensor<?x1xf32>
  }
  func.return
}
// CONST-LABEL: func.func @quant_columns
// CONST: npu.tasks "quant.16" vector
// CONST: %[[AMAX:.*]] = npu.alloc ub {{.*}} : !npu.buf<4x1xf32, ub>
// CONST: npu.vdup 0.000000e+00 -> %[[AMAX]]
// CONST: scf.for
// CONST: npu.dma mte2 %x[%{{.*}}, %{{.*}}] -> %[[X:.*]][0, 0] rows %{{.*}} : !npu.buf<?x256xbf16, gm> -> !npu.buf<4x64xbf16, ub>
// CONST: npu.vcast %[[X]] -> %[[XF:.*]] none
// CONST: npu.vreduce absmax %[[XF]] -> %[[PART:.*]] :
// CONST: npu.vmax %[[AMAX]], %[[PART]] -> %[[AMAX]]
// CONST: }
// CONST: npu.vdup 1.270000e+02
// CONST: npu.vdiv %[[AMAX]], %{{.*}} -> %[[SCALE:.*]] :
// CONST: scf.for %[[C:.*]] = 
// CONST: npu.vmuls %{{.*}}, 1.270000e+02 -> %[[T:.*]] :
// CONST: npu.vdiv %[[T]], %[[AMAX]] -> %[[T]]
// CONST: npu.vcast %[[T]] -> %[[I:.*]] rint
// CONST: npu.vcast %[[I]] -> %[[H:.*]] round
// CONST: npu.vcast %[[H]] -> %[[Q:.*]] trunc sat
// CONST: npu.dma mte3 %[[Q]][0, 0] -> %{{.*}}[%{{.*}}, %[[C]]]
// CONST: }
// CONST: npu.dma mte3 %[[SCALE]][0, 0] -> %out1

// -----

// The interleaved RoPE's de-interleave: a token tile's reshapes are npu.reshape views of
// its UB buffer (its rows stay, each row's columns one contiguous run); the transpose of
// the last two dims is one npu.vtranspose into a new buffer, on the vector pipe.
func.func @rope_interleave(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>, %out: tensor<?x64xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<16x64xbf16>
    %y = tile.cube_stage "linear" tiles <m = [16, 16], k = [64, 64], n = [64, 64]> -> (tensor<16x64xf32>) {
      %m = tile.matmul %xt, %w b_trans : tensor<16x64xbf16>, tensor<64x64xbf16> -> tensor<16x64xf32>
      tile.yield %m : tensor<16x64xf32>
    }
    %r = tile.vec_stage "rope" tile [4, 64] phase <rows = 4, copies = 1> -> (tensor<16x64xf32>) {
      %p = tile.reshape %y : tensor<16x64xf32> -> tensor<16x32x2xf32>
      %q = tile.transpose %p : tensor<16x32x2xf32> -> tensor<16x2x32xf32>
      %o = tile.reshape %q : tensor<16x2x32xf32> -> tensor<16x64xf32>
      %s = tile.mul %o, %y : tensor<16x64xf32>, tensor<16x64xf32> -> tensor<16x64xf32>
      tile.yield %s : tensor<16x64xf32>
    }
    tile.store %r, %out[%i] : tensor<16x64xf32> -> tensor<?x64xf32>
  }
  func.return
}
// CONST-LABEL: func.func @rope_interleave
// CONST: npu.tasks "rope.16" vector
// CONST: npu.dma mte2 %{{.*}}[%{{.*}}, 0] -> %[[Y:.*]][0, 0] rows %{{.*}} : !npu.buf<?x64xf32, gm> -> !npu.buf<4x64xf32, ub>
// CONST: %[[P:.*]] = npu.reshape %[[Y]] : !npu.buf<4x64xf32, ub> -> !npu.buf<4x32x2xf32, ub>
// CONST: %[[Q:.*]] = npu.alloc ub [{{.*}}] : !npu.buf<4x2x32xf32, ub>
// CONST-NEXT: npu.vtranspose %[[P]] -> %[[Q]] : !npu.buf<4x32x2xf32, ub> -> !npu.buf<4x2x32xf32, ub>
// CONST-NEXT: %[[O:.*]] = npu.reshape %[[Q]] : !npu.buf<4x2x32xf32, ub> -> !npu.buf<4x64xf32, ub>
// CONST: npu.vmul %[[O]], %[[Y]] -> %[[S:.*]] :
// CONST: npu.dma mte3 %[[S]][0, 0] -> %{{.*}}[%{{.*}}, 0] rows %{{.*}} : !npu.buf<4x64xf32, ub> -> !npu.buf<?x64xf32, gm>

// -----

// A rank-3 token tile is only a view or a transpose of a tile in UB: one stored to (or
// loaded from) global memory is refused, as is any other op on it.
func.func @rank3_elsewhere(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>, %out: tensor<?x32x2xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<16x64xbf16>
    %y = tile.cube_stage "linear" tiles <m = [16, 16], k = [64, 64], n = [64, 64]> -> (tensor<16x64xf32>) {
      %m = tile.matmul %xt, %w b_trans : tensor<16x64xbf16>, tensor<64x64xbf16> -> tensor<16x64xf32>
      tile.yield %m : tensor<16x64xf32>
    }
    %r = tile.vec_stage "rope" tile [4, 32, 2] phase <rows = 4, copies = 1> -> (tensor<16x32x2xf32>) {
      %p = tile.reshape %y : tensor<16x64xf32> -> tensor<16x32x2xf32>
      // expected-error@+1 {{tile-to-npu does not support rank-3 tiles (rank 3 only as a tile.reshape or tile.transpose result) yet}}
      %s = tile.muls %p, 2.0 : tensor<16x32x2xf32> -> tensor<16x32x2xf32>
      tile.yield %s : tensor<16x32x2xf32>
    }
    tile.store %r, %out[%i] : tensor<16x32x2xf32> -> tensor<?x32x2xf32>
  }
  func.return
}

// -----

// A dequant of a float value (not an i32 accumulator): copied into the result buffer
// (x * 1.0), then scaled.
func.func @float_dequant(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>, %s: tensor<?x1xf32>, %out: tensor<?x32xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xf32>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x64xf32> -> tensor<16x64xf32>
    %st = tile.load %s[%i] : tensor<?x1xf32> -> tensor<16x1xf32>
    %y = tile.cube_stage "linear" tiles <m = [16, 16], k = [16, 64], n = [32, 32]> -> (tensor<16x32xf32>) {
      %m = tile.matmul %xt, %w : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
      tile.yield %m : tensor<16x32xf32>
    }
    %d = tile.vec_stage "dequant" tile [16, 32] phase <rows = 16, copies = 1> -> (tensor<16x32xf32>) {
      %e = tile.dequant %y, %st : tensor<16x32xf32>, tensor<16x1xf32> -> tensor<16x32xf32>
      tile.yield %e : tensor<16x32xf32>
    }
    tile.store %d, %out[%i] : tensor<16x32xf32> -> tensor<?x32xf32>
  }
  func.return
}
// CONST-LABEL: func.func @float_dequant
// CONST: npu.tasks "dequant.16" vector
// CONST: npu.dma mte2 %ws[%{{.*}}, 0] -> %[[Y:.*]][0, 0] rows %{{.*}} : !npu.buf<?x32xf32, gm> -> !npu.buf<16x32xf32, ub>
// CONST: npu.dma mte2 %s[%{{.*}}, 0] -> %[[S:.*]][0, 0] rows %{{.*}} : !npu.buf<?x1xf32, gm> -> !npu.buf<16x1xf32, ub>
// CONST: npu.vmuls %[[Y]], 1.000000e+00 -> %[[D:.*]] : !npu.buf<16x32xf32, ub> -> !npu.buf<16x32xf32, ub>
// CONST-NEXT: npu.vmul %[[D]], %[[S]] -> %[[D]] : !npu.buf<16x32xf32, ub>, !npu.buf<16x1xf32, ub> -> !npu.buf<16x32xf32, ub>
// CONST-NOT: npu.vcast

// -----

// A dequant with the weight scale first multiplies by it first: the f32 products
// round differently in the other order.
func.func @dequant_w_scale_first(%x: tensor<?x64xi8>, %w: tensor<64x32xi8>, %s: tensor<?x1xf32>, %ws: tensor<1x32xf32>, %out: tensor<?x32xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xi8>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x64xi8> -> tensor<16x64xi8>
    %st = tile.load %s[%i] : tensor<?x1xf32> -> tensor<16x1xf32>
    %y = tile.cube_stage "linear" tiles <m = [16, 16], k = [32, 64], n = [32, 32]> -> (tensor<16x32xi32>) {
      %m = tile.matmul %xt, %w : tensor<16x64xi8>, tensor<64x32xi8> -> tensor<16x32xi32>
      tile.yield %m : tensor<16x32xi32>
    }
    %d = tile.vec_stage "dequant" tile [16, 32] phase <rows = 16, copies = 1> -> (tensor<16x32xf32>) {
      %e = tile.dequant %y, %st, %ws w_scale_first : tensor<16x32xi32>, tensor<16x1xf32>, tensor<1x32xf32> -> tensor<16x32xf32>
      tile.yield %e : tensor<16x32xf32>
    }
    tile.store %d, %out[%i] : tensor<16x32xf32> -> tensor<?x32xf32>
  }
  func.return
}
// CONST-LABEL: func.func @dequant_w_scale_first
// CONST: npu.tasks "dequant.16" vector
// CONST-DAG: npu.dma mte2 %s[%{{.*}}, 0] -> %[[S:.*]][0, 0] rows %{{.*}} : !npu.buf<?x1xf32, gm> -> !npu.buf<16x1xf32, ub>
// CONST-DAG: npu.dma mte2 %ws[0, 0] -> %[[W:.*]][0, 0] : !npu.buf<1x32xf32, gm> -> !npu.buf<1x32xf32, ub>
// CONST: npu.vcast %{{.*}} -> %[[D:.*]] rint : !npu.buf<16x32xi32, ub> -> !npu.buf<16x32xf32, ub>
// CONST-NEXT: npu.vmul %[[D]], %[[W]] -> %[[D]] : !npu.buf<16x32xf32, ub>, !npu.buf<1x32xf32, ub> -> !npu.buf<16x32xf32, ub>
// CONST-NEXT: npu.vmul %[[D]], %[[S]] -> %[[D]] : !npu.buf<16x32xf32, ub>, !npu.buf<16x1xf32, ub> -> !npu.buf<16x32xf32, ub>

// -----

// A weight stage's tasks run element-wise ops on parts of the weight: a reduction over it
// would need every part.
func.func @weight_stage_reduce(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>, %out: tensor<?x1xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xf32>
  %ww = tile.load %w : tensor<64x32xf32> -> tensor<64x32xf32>
  %s = tile.vec_stage "weight" tile [16, 32] nbuffer 1 -> (tensor<64x1xf32>) {
    // expected-error@+1 {{tile-to-npu does not support 'tile.reduce' in a weight stage (element-wise ops only) yet}}
    %r = tile.reduce sum %ww : tensor<64x32xf32> -> tensor<64x1xf32>
    tile.yield %r : tensor<64x1xf32>
  }
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x64xf32> -> tensor<16x64xf32>
    %st = tile.load %s : tensor<64x1xf32> -> tensor<64x1xf32>
    %y = tile.cube_stage "linear" tiles <m = [16, 16], k = [64, 64], n = [16, 16]> -> (tensor<16x1xf32>) {
      %m = tile.matmul %xt, %st : tensor<16x64xf32>, tensor<64x1xf32> -> tensor<16x1xf32>
      tile.yield %m : tensor<16x1xf32>
    }
    tile.store %y, %out[%i] : tensor<16x1xf32> -> tensor<?x1xf32>
  }
  func.return
}

// -----

func.func @weight_stage_rank1(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>, %g: tensor<32xf32>, %out: tensor<?x32xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xf32>
  %ww = tile.load %w : tensor<64x32xf32> -> tensor<64x32xf32>
  %gg = tile.load %g : tensor<32xf32> -> tensor<32xf32>
  // CONST: npu.dma mte2 %g[%col] -> %{{.*}}[0] : !npu.buf<32xf32, gm> -> !npu.buf<32xf32, ub>
  %s = tile.vec_stage "weight" tile [16, 32] nbuffer 1 -> (tensor<64x32xf32>) {
    %r = tile.mul %ww, %gg : tensor<64x32xf32>, tensor<32xf32> -> tensor<64x32xf32>
    tile.yield %r : tensor<64x32xf32>
  }
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x64xf32> -> tensor<16x64xf32>
    %st = tile.load %s : tensor<64x32xf32> -> tensor<64x32xf32>
    %y = tile.cube_stage "linear" tiles <m = [16, 16], k = [64, 64], n = [32, 32]> -> (tensor<16x32xf32>) {
      %m = tile.matmul %xt, %st : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
      tile.yield %m : tensor<16x32xf32>
    }
    tile.store %y, %out[%i] : tensor<16x32xf32> -> tensor<?x32xf32>
  }
  func.return
}

// -----

func.func @a_trans(%x: tensor<64x16xf32>, %w: tensor<64x32xf32>, %out: tensor<16x32xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  tile.token_loop %i = %c0 to %c16 step 16 {
    %xt = tile.load %x : tensor<64x16xf32> -> tensor<64x16xf32>
    %y = tile.cube_stage "linear" tiles <m = [16, 16], k = [16, 64], n = [32, 32]> -> (tensor<16x32xf32>) {
      // expected-error@+1 {{tile-to-npu does not support a_trans yet}}
      %m = tile.matmul %xt, %w a_trans : tensor<64x16xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
      tile.yield %m : tensor<16x32xf32>
    }
    tile.store %y, %out[%i] : tensor<16x32xf32> -> tensor<16x32xf32>
  }
  func.return
}

// -----

// Split-K of an int8 matmul: the runs' partial sums would be added as f32.
func.func @split_k_i32(%x: tensor<?x256xi8>, %w: tensor<256x32xi8>, %out: tensor<?x32xi32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x256xi8>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x256xi8> -> tensor<16x256xi8>
    // expected-error@+1 {{tile-to-npu does not support split-K with an i32 accumulator (partial sums are added as f32) yet}}
    %y = tile.cube_stage "linear" tiles <m = [16, 16], k = [32, 32], n = [32, 32], split_k> -> (tensor<16x32xi32>) {
      %m = tile.matmul %xt, %w : tensor<16x256xi8>, tensor<256x32xi8> -> tensor<16x32xi32>
      tile.yield %m : tensor<16x32xi32>
    }
    tile.store %y, %out[%i] : tensor<16x32xi32> -> tensor<?x32xi32>
  }
  func.return
}

// -----

// K = 128 is one run of kL1 = 32 f32-sized elements (4 x 32 int8): refused all the same,
// not quietly lowered without a split.
func.func @split_k_i32_one_run(%x: tensor<?x128xi8>, %w: tensor<128x32xi8>, %out: tensor<?x32xi32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x128xi8>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x128xi8> -> tensor<16x128xi8>
    // expected-error@+1 {{tile-to-npu does not support split-K with an i32 accumulator (partial sums are added as f32) yet}}
    %y = tile.cube_stage "linear" tiles <m = [16, 16], k = [32, 32], n = [32, 32], split_k> -> (tensor<16x32xi32>) {
      %m = tile.matmul %xt, %w : tensor<16x128xi8>, tensor<128x32xi8> -> tensor<16x32xi32>
      tile.yield %m : tensor<16x32xi32>
    }
    tile.store %y, %out[%i] : tensor<16x32xi32> -> tensor<?x32xi32>
  }
  func.return
}

// -----

func.func @rank3(%x: tensor<?x2x32xf32>, %z: tensor<?x64xf32>, %w: tensor<64x32xf32>,
                 %out: tensor<?x2x32xf32> {pto.output}, %out2: tensor<?x32xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x2x32xf32>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x2x32xf32> -> tensor<16x2x32xf32>
    %n = tile.vec_stage "norm" tile [4, 2, 32] phase <rows = 4, copies = 1> -> (tensor<16x2x32xf32>) {
      // expected-error@+1 {{tile-to-npu does not support rank-3 tiles loaded from global memory yet}}
      %a = tile.abs %xt : tensor<16x2x32xf32> -> tensor<16x2x32xf32>
      tile.yield %a : tensor<16x2x32xf32>
    }
    %zt = tile.load %z[%i] : tensor<?x64xf32> -> tensor<16x64xf32>
    %y = tile.cube_stage "linear" tiles <m = [16, 16], k = [16, 64], n = [32, 32]> -> (tensor<16x32xf32>) {
      %m = tile.matmul %zt, %w : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
      tile.yield %m : tensor<16x32xf32>
    }
    tile.store %n, %out[%i] : tensor<16x2x32xf32> -> tensor<?x2x32xf32>
    tile.store %y, %out2[%i] : tensor<16x32xf32> -> tensor<?x32xf32>
  }
  func.return
}

// -----

// The host transposes kernel arguments only.
func.func @host_transpose_computed(%x: tensor<?x64xf32>, %w: tensor<32x64xf32>, %out: tensor<?x32xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xf32>
  // expected-error@+1 {{tile-to-npu does not support host-transposing a computed value yet}}
  %wr = tile.reshape %w inplace : tensor<32x64xf32> -> tensor<64x32xf32>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x64xf32> -> tensor<16x64xf32>
    %wt = tile.load %wr host_transpose : tensor<64x32xf32> -> tensor<32x64xf32>
    %y = tile.cube_stage "linear" tiles <m = [16, 16], k = [16, 64], n = [32, 32]> -> (tensor<16x32xf32>) {
      %m = tile.matmul %xt, %wt b_trans : tensor<16x64xf32>, tensor<32x64xf32> -> tensor<16x32xf32>
      tile.yield %m : tensor<16x32xf32>
    }
    tile.store %y, %out[%i] : tensor<16x32xf32> -> tensor<?x32xf32>
  }
  func.return
}

// -----

// The vector task that adds split-K partial sums holds two f32 rows of the N tile and
// a row of each output: 32768 columns (2 x 131072 + 131072 bytes) exceed UB.
// expected-error@+1 {{tile-to-npu: a row of the split-K sum (393216 bytes) does not fit in ub}}
func.func @split_k_sum_row(%x: tensor<?x64xf32>, %w: tensor<64x32768xf32>, %out: tensor<?x32768xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xf32>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x64xf32> -> tensor<16x64xf32>
    %y = tile.cube_stage "linear" tiles <m = [16, 16], k = [16, 16], n = [32768, 32768], split_k> -> (tensor<16x32768xf32>) {
      %m = tile.matmul %xt, %w : tensor<16x64xf32>, tensor<64x32768xf32> -> tensor<16x32768xf32>
      tile.yield %m : tensor<16x32768xf32>
    }
    tile.store %y, %out[%i] : tensor<16x32768xf32> -> tensor<?x32768xf32>
  }
  func.return
}

// -----

// A plan written by hand that tile-assign-shapes has not checked, too big for UB: refused,
// naming the stage, the plan and the bytes.
func.func @unchecked_plan(%x: tensor<?x4096xf32>, %w: tensor<4096x16xf32>, %out: tensor<?x16xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x4096xf32>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x4096xf32> -> tensor<16x4096xf32>
    // expected-error@+1 {{vector stage 'norm': its phase plan <4 rows, 2 copies> needs 262144 bytes of ub, but ascend910b1 has 196608 (tile-assign-shapes checks a plan before tile-to-npu)}}
    %n = tile.vec_stage "norm" tile [4, 4096] nbuffer 2 phase <rows = 4, copies = 2> -> (tensor<16x4096xf32>) {
      %a = tile.abs %xt : tensor<16x4096xf32> -> tensor<16x4096xf32>
      %b = tile.add %a, %xt : tensor<16x4096xf32>, tensor<16x4096xf32> -> tensor<16x4096xf32>
      tile.yield %b : tensor<16x4096xf32>
    }
    %y = tile.cube_stage "linear" tiles <m = [16, 16], k = [512, 512], n = [16, 16]> -> (tensor<16x16xf32>) {
      %m = tile.matmul %n, %w : tensor<16x4096xf32>, tensor<4096x16xf32> -> tensor<16x16xf32>
      tile.yield %m : tensor<16x16xf32>
    }
    tile.store %y, %out[%i] : tensor<16x16xf32> -> tensor<?x16xf32>
  }
  func.return
}

// -----

// A reciprocal and `c / x` divide a one-element vdup of the constant by x, so each result
// takes the buffer of the operand that dies at it (offset 0 throughout), as the adds' does.
func.func @reciprocal_in_place(%x: tensor<?x64xf32>, %w: tensor<64x64xf32>, %out: tensor<?x64xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xf32>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x64xf32> -> tensor<16x64xf32>
    %n = tile.vec_stage "pre" tile [16, 64] phase <rows = 16, copies = 1> -> (tensor<16x64xf32>) {
      %a = tile.adds %xt, 1.0 : tensor<16x64xf32> -> tensor<16x64xf32>
      %r = tile.reciprocal %a : tensor<16x64xf32> -> tensor<16x64xf32>
      %d = tile.rdivs %r, 2.0 : tensor<16x64xf32> -> tensor<16x64xf32>
      tile.yield %d : tensor<16x64xf32>
    }
    %y = tile.cube_stage "linear" tiles <m = [16, 16], k = [64, 64], n = [64, 64]> -> (tensor<16x64xf32>) {
      %m = tile.matmul %n, %w : tensor<16x64xf32>, tensor<64x64xf32> -> tensor<16x64xf32>
      tile.yield %m : tensor<16x64xf32>
    }
    tile.store %y, %out[%i] : tensor<16x64xf32> -> tensor<?x64xf32>
  }
  func.return
}
// CONST-LABEL: func.func @reciprocal_in_place
// CONST: %[[X:.*]] = npu.alloc ub [0] : !npu.buf<16x64xf32, ub>
// CONST: %[[A:.*]] = npu.alloc ub [0] : !npu.buf<16x64xf32, ub>
// CONST-NEXT: npu.vadds %[[X]], 1.000000e+00 -> %[[A]]
// CONST-NEXT: %[[R:.*]] = npu.alloc ub [0] : !npu.buf<16x64xf32, ub>
// CONST-NEXT: %[[C:.*]] = npu.alloc ub [4096] : !npu.buf<1x1xf32, ub>
// CONST-NEXT: npu.vdup 1.000000e+00 -> %[[C]] : !npu.buf<1x1xf32, ub>
// CONST-NEXT: npu.vdiv %[[C]], %[[A]] -> %[[R]]
// CONST-NEXT: %[[D:.*]] = npu.alloc ub [0] : !npu.buf<16x64xf32, ub>
// CONST-NEXT: %[[C2:.*]] = npu.alloc ub [4096] : !npu.buf<1x1xf32, ub>
// CONST-NEXT: npu.vdup 2.000000e+00 -> %[[C2]]
// CONST-NEXT: npu.vdiv %[[C2]], %[[R]] -> %[[D]]
