// MLIR's --pass-pipeline spelling and xDSL's -p give the same result.
// RUN: pto-opt %S/Inputs/simple.mlir --pass-pipeline='builtin.module(cse)' | filecheck %s
// RUN: pto-opt %S/Inputs/simple.mlir -p cse | filecheck %s
// RUN: pto-opt %S/Inputs/simple.mlir --pass-pipeline='builtin.module(cse,dce)' | filecheck %s
// An empty pipeline only parses, verifies and prints.
// RUN: pto-opt %S/Inputs/simple.mlir --pass-pipeline='builtin.module()' | filecheck %s --check-prefix=NONE

// CHECK: %[[A:.*]] = pto.abs
// CHECK-NOT: pto.abs
// CHECK: pto.add %[[A]], %[[A]]

// NONE-COUNT-2: pto.abs
