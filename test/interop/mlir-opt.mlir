// Upstream mlir-opt reads every level's generic form, and pto-opt reads mlir-opt's
// output back to the same IR: A = mlir-opt(pto-opt(src)), B = mlir-opt(pto-opt(A)),
// and A == B (mlir-opt's printing normalises names and attribute order).
// REQUIRES: mlir-opt

// RUN: pto-opt %S/../dialects/pto/ops.mlir --mlir-print-op-generic | %mlir-opt --allow-unregistered-dialect --mlir-print-op-generic > %t.pto.a
// RUN: pto-opt %t.pto.a --mlir-print-op-generic | %mlir-opt --allow-unregistered-dialect --mlir-print-op-generic > %t.pto.b
// RUN: diff %t.pto.a %t.pto.b

// RUN: pto-opt %S/../dialects/tile/ops.mlir --mlir-print-op-generic | %mlir-opt --allow-unregistered-dialect --mlir-print-op-generic > %t.tile.a
// RUN: pto-opt %t.tile.a --mlir-print-op-generic | %mlir-opt --allow-unregistered-dialect --mlir-print-op-generic > %t.tile.b
// RUN: diff %t.tile.a %t.tile.b

// RUN: pto-opt %S/../dialects/npu/ops.mlir --mlir-print-op-generic | %mlir-opt --allow-unregistered-dialect --mlir-print-op-generic > %t.npu.a
// RUN: pto-opt %t.npu.a --mlir-print-op-generic | %mlir-opt --allow-unregistered-dialect --mlir-print-op-generic > %t.npu.b
// RUN: diff %t.npu.a %t.npu.b

// And the custom form pto-opt prints from mlir-opt's output is pto-opt's own, up to
// value names and dictionary order (A == B alone would hold for an empty module).
// RUN: %canonical %S/../dialects/pto/ops.mlir > %t.pto.own
// RUN: %canonical %t.pto.a > %t.pto.back
// RUN: diff %t.pto.own %t.pto.back
// RUN: %canonical %S/../dialects/tile/ops.mlir > %t.tile.own
// RUN: %canonical %t.tile.a > %t.tile.back
// RUN: diff %t.tile.own %t.tile.back
// RUN: %canonical %S/../dialects/npu/ops.mlir > %t.npu.own
// RUN: %canonical %t.npu.a > %t.npu.back
// RUN: diff %t.npu.own %t.npu.back
