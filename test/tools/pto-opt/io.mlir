// Output options and input from stdin.
// RUN: pto-opt %S/Inputs/simple.mlir --mlir-print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: pto-opt %S/Inputs/simple.mlir --print-op-generic | filecheck %s --check-prefix=GENERIC
// GENERIC: "func.func"() <{
// GENERIC: "pto.abs"(%{{.*}}) : (tensor<?x64xf32>) -> tensor<?x64xf32>

// RUN: pto-opt < %S/Inputs/simple.mlir | filecheck %s --check-prefix=CUSTOM
// RUN: pto-opt - < %S/Inputs/simple.mlir | filecheck %s --check-prefix=CUSTOM
// RUN: pto-opt %S/Inputs/simple.mlir -o %t.out.mlir
// RUN: filecheck %s --check-prefix=CUSTOM < %t.out.mlir
// CUSTOM: %{{.*}} = pto.abs %{{.*}} : tensor<?x64xf32> -> tensor<?x64xf32>

// Errors read from stdin are reported against <stdin>.
// RUN: not pto-opt < %S/Inputs/bad-verify.mlir 2>&1 | filecheck %s --check-prefix=STDIN
// STDIN: <stdin>:3:3: error: 'pto.matmul' reduction dims differ

// RUN: pto-opt --list-passes | filecheck %s --check-prefix=LIST
// LIST: Available passes:
// LIST: cse {{ +}}Eliminate common subexpressions.
// LIST: test-pass-failure {{ +}}Test pass: fails with an error

// RUN: pto-opt --version | filecheck %s --check-prefix=VERSION
// VERSION: pto-opt {{[0-9.]+}} (xDSL 0.74.0)

// An input of only comments (or nothing) is an empty module, as in mlir-opt.
// RUN: pto-opt %S/Inputs/empty.mlir | filecheck %s --check-prefix=EMPTY
// EMPTY: builtin.module {
