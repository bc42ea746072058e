// Every bundled example parses and verifies at its level, and upstream mlir-opt reads
// its generic form.
// RUN: pto-opt %S/../../examples/sk03_standard.mlir | filecheck %s --check-prefix=STD
// STD: func.func @linear_projection
// RUN: pto-opt %S/../../examples/mla_wqa_qrmsnorm.mlir | filecheck %s --check-prefix=WQA
// WQA: pto.matmul {{.*}}pto.label = "wqa-linear"
// RUN: pto-opt %S/../../examples/mla_wkv_rmsnorm.mlir | filecheck %s --check-prefix=WKV
// WKV: pto.rms_norm {{.*}}pto.label = "kv-rmsnorm"
// RUN: pto-opt %S/../../examples/indexer_query_linear_int8.mlir | filecheck %s --check-prefix=INT8
// INT8: pto.quant
// INT8: pto.dequant
// RUN: pto-opt %S/../../examples/hc_pre.mlir | filecheck %s --check-prefix=HC
// HC: pto.reshape {{.*}} inplace
// RUN: pto-opt %S/../../examples/levels/sk03_standard.tile.mlir | filecheck %s --check-prefix=TILE
// TILE-COUNT-2: tile.token_loop
// RUN: pto-opt %S/../../examples/levels/sk03_standard.npu.mlir | filecheck %s --check-prefix=NPU
// One task graph for both token loops; each cube group waits for its body's vector group.
// NPU: npu.graph cube 24 vector 48 {
// NPU: npu.tasks "rmsnorm.128" vector ({{.*}}) in (%bodies128, 64) {
// NPU: npu.tasks "linear.128" cube ({{.*}}) in (%bodies128, 16) after ["rmsnorm.128"] hub {
// NPU: npu.mmad
// NPU: npu.fixpipe {{.*}} -> %out[
// NPU: npu.tasks "rmsnorm.1" vector ({{.*}}) in (%bodies1, 1) {
// NPU: npu.tasks "linear.1" cube ({{.*}}) in (%bodies1, 16) after ["rmsnorm.1"] {
// No launches, no cross-core flags: the graph's dependences order the tasks.
// RUN: pto-opt %S/../../examples/levels/sk03_standard.npu.mlir | filecheck %s --check-prefix=NPUNOT
// NPUNOT-NOT: npu.launch
// NPUNOT-NOT: npu.cross_core
