// Every example lowers from pto to verified npu IR through the named pipeline, and
// the pipeline's options reach its passes.
// RUN: pto-opt %S/../../examples/sk03_standard.mlir --pass-pipeline='builtin.module(pto-sk03-pipeline)' | filecheck %s --check-prefix=STD
// RUN: pto-opt %S/../../examples/mla_wqa_qrmsnorm.mlir --pass-pipeline='builtin.module(pto-sk03-pipeline)' | filecheck %s --check-prefix=NPU
// RUN: pto-opt %S/../../examples/mla_wkv_rmsnorm.mlir --pass-pipeline='builtin.module(pto-sk03-pipeline)' 2>/dev/null | filecheck %s --check-prefix=NPU
// RUN: pto-opt %S/../../examples/indexer_query_linear_int8.mlir --pass-pipeline='builtin.module(pto-sk03-pipeline)' | filecheck %s --check-prefix=NPU
// RUN: pto-opt %S/../../examples/hc_pre.mlir --pass-pipeline='builtin.module(pto-sk03-pipeline)' 2>/dev/null | filecheck %s --check-prefix=NPU
// RUN: pto-opt %S/../../examples/sk03_standard.mlir --pass-pipeline='builtin.module(pto-sk03-pipeline{target=ascend950 factors=4,3})' | filecheck %s --check-prefix=OPTS

// The default candidates give six token loops, so one task graph of six vector and six
// cube groups.
// STD: npu.graph cube 24 vector 48 {
// STD-COUNT-6: npu.tasks "linear.{{[0-9]+}}" cube
// STD-NOT: tile.
// NPU: npu.graph cube 24 vector 48 {
// NPU-NOT: tile.
// NPU-NOT: pto.{{[a-z_]+}} %
// OPTS: pto.target = "ascend950"
// OPTS: npu.graph cube 28 vector 56 {
// OPTS-COUNT-3: npu.tasks "linear.{{[0-9]+}}" cube

// The six factor loops cover disjoint token rows, so they share one GM workspace for
// the normalised activations (not one [tokens, K] copy per factor).
// RUN: pto-opt %S/../../examples/sk03_standard.mlir --pass-pipeline='builtin.module(pto-sk03-pipeline)' | grep -c "npu.alloc gm" | filecheck %s --check-prefix=WS
// WS: {{^}}1{{$}}

// Two vector stages of one phase (rmsnorm, then the cast the cube reads): the f32
// RMSNorm result stays in UB; only the bf16 the cube reads goes to a workspace, and no
// task reads a workspace before it is written.
// RUN: pto-opt %S/Inputs/two_vector_stages.mlir --pass-pipeline='builtin.module(pto-sk03-pipeline)' | filecheck %s --check-prefix=PHASE
// PHASE: %ws = npu.alloc gm (%tokens) : !npu.buf<?x64xbf16, gm>
// PHASE-NOT: npu.alloc gm
// PHASE: npu.tasks "rmsnorm.8" vector
// PHASE-NOT: npu.dma mte2 %ws
// PHASE-NOT: f32, gm>
// PHASE: npu.dma mte3 %{{.*}} -> %ws[%row, 0] rows %rows : !npu.buf<4x64xbf16, ub>
// PHASE-NOT: npu.dma mte2 %ws
// PHASE-NOT: f32, gm>
// PHASE: npu.tasks "linear.8" cube

// The lowering is deterministic: two runs print the same npu IR.
// RUN: pto-opt %S/../../examples/indexer_query_linear_int8.mlir --pass-pipeline='builtin.module(pto-sk03-pipeline)' > %t.1 2>/dev/null
// RUN: pto-opt %S/../../examples/indexer_query_linear_int8.mlir --pass-pipeline='builtin.module(pto-sk03-pipeline)' > %t.2 2>/dev/null
// RUN: diff %t.1 %t.2
