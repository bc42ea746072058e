// REQUIRES: mlir-opt
// RUN: pto-opt %S/../../examples/levels/sk03_standard.npu.mlir --mlir-print-op-generic | %mlir-opt --allow-unregistered-dialect --mlir-print-op-generic > %t.a
// RUN: pto-opt %t.a --mlir-print-op-generic | %mlir-opt --allow-unregistered-dialect --mlir-print-op-generic > %t.b
// RUN: diff %t.a %t.b
// RUN: %canonical %S/../../examples/levels/sk03_standard.npu.mlir > %t.own
// RUN: %canonical %t.a > %t.back
// RUN: diff %t.own %t.back
// What comes back from mlir-opt is the same kernel: it runs to the same figures.
// RUN: filecheck %s --input-file %t.a --check-prefix=GENERIC
// RUN: pto-run %S/../../examples/levels/sk03_standard.npu.mlir --random-inputs --tokens 20 | head -3 > %t.r1
// RUN: pto-run %t.a --random-inputs --tokens 20 | head -3 > %t.r2
// RUN: diff %t.r1 %t.r2
// RUN: filecheck %s --input-file %t.r2 --check-prefix=MODEL
// RUN: pto-opt %S/../../examples/levels/sk03_standard.tile.mlir --mlir-print-op-generic | %mlir-opt --allow-unregistered-dialect > /dev/null
// RUN: pto-opt %S/../../examples/hc_pre.mlir --mlir-print-op-generic | %mlir-opt --allow-unregistered-dialect > /dev/null
// RUN: pto-opt %S/../../examples/indexer_query_linear_int8.mlir --mlir-print-op-generic | %mlir-opt --allow-unregistered-dialect > /dev/null
// What the pipeline writes, at the npu level, is read by mlir-opt too.
// RUN: pto-opt %S/../../examples/indexer_query_linear_int8.mlir --pass-pipeline='builtin.module(pto-sk03-pipeline{factors=16})' --mlir-print-op-generic | %mlir-opt --allow-unregistered-dialect --mlir-print-op-generic > %t.c
// RUN: pto-opt %t.c --mlir-print-op-generic | %mlir-opt --allow-unregistered-dialect --mlir-print-op-generic > %t.d
// RUN: diff %t.c %t.d
// RUN: filecheck %s --input-file %t.c --check-prefix=QUANT

// GENERIC: "npu.graph"
// GENERIC: "npu.tasks"
// GENERIC: "npu.mmad"
// GENERIC: "npu.fixpipe"
// GENERIC: "npu.vsqrt"
// MODEL: target ascend910b1
// MODEL-NEXT: total: {{[0-9]+}} cycles
// MODEL-NEXT: L2: {{[0-9]+}} hits
// QUANT: "npu.graph"
// QUANT: "npu.mmad"
// QUANT: "npu.fixpipe"
