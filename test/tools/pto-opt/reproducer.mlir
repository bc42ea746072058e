// On a pass failure the reproducer holds the failing pass's input and pipeline.
// RUN: not pto-opt %S/Inputs/simple.mlir -p cse,test-pass-failure --mlir-pass-pipeline-crash-reproducer=%t.repro.mlir 2>&1 | filecheck %s
// CHECK: wrote a reproducer of the failing pass 'test-pass-failure'
// CHECK: simple.mlir:1:1: error: test-pass-failure rejects 'func.func'

// RUN: filecheck %s --check-prefix=REPRO < %t.repro.mlir
// REPRO: // configuration: --pass-pipeline='builtin.module(test-pass-failure)'
// The input is what cse left: one pto.abs.
// REPRO-COUNT-1: pto.abs
// REPRO-NOT: pto.abs

// Running the reproducer fails the same way.
// RUN: not pto-opt --run-reproducer %t.repro.mlir 2>&1 | filecheck %s --check-prefix=AGAIN
// AGAIN: error: test-pass-failure rejects 'func.func'

// A crash writes one too.
// RUN: not pto-opt %S/Inputs/simple.mlir -p test-pass-crash --mlir-pass-pipeline-crash-reproducer=%t.crash.mlir 2>&1 | filecheck %s --check-prefix=CRASH
// CRASH: internal error
// RUN: filecheck %s --check-prefix=CRASHREPRO < %t.crash.mlir
// CRASHREPRO: // configuration: --pass-pipeline='builtin.module(test-pass-crash)'
