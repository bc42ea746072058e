// REQUIRES: mlir-opt
// RUN: pto-opt %S/../../examples/levels/sk03_standard.npu.mlir --mlir-print-op-generic | %mlir-opt --allow-unregistered-dialect --mlir-print-op-generic > %t.a
// RUN: pto-opt %t.a --mlir-print-op-generic | %mlir-opt --allow-unregistered-dialect --mlir-print-op-generic > %t.b
// RUN: diff %t.a %t.b
// RUN: pto-opt %S/../../examples/levels/sk03_standard.tile.mlir --mlir-print-op-generic | %mlir-opt --allow-unregistered-dialect > /dev/null
// RUN: pto-opt %S/../../examples/hc_pre.mlir --mlir-print-op-generic | %mlir-opt --allow-unregistered-dialect > /dev/null
// RUN: pto-opt %S/../../examples/indexer_query_linear_int8.mlir --mlir-print-op-generic | %mlir-opt --allow-unregistered-dialect > /dev/null
