// A mismatch in either direction fails the run, naming both sides.
// RUN: not pto-opt %S/Inputs/mismatch.mlir --verify-diagnostics 2>&1 | filecheck %s
// CHECK-DAG: mismatch.mlir:3:3: error: unexpected error: 'pto.sqrt' needs a float input
// CHECK-DAG: mismatch.mlir:2: error: expected error "a message nobody emits" was not produced
// CHECK-DAG: mismatch.mlir:5: error: expected note "nor this" was not produced
