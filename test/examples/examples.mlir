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
// NPU: npu.launch cube 24 ({{.*}}) {
// NPU: } vector 48 ({{.*}}) {
