// Every user error is one clear line (or an MLIR-style diagnostic) and a non-zero
// exit, never a Python traceback.
// RUN: not pto-opt --no-such-flag %s 2>&1 | filecheck %s --check-prefix=FLAG
// FLAG: pto-opt: error: unrecognized arguments: --no-such-flag
// FLAG-NOT: Traceback

// RUN: not pto-opt -p no-such-pass %s 2>&1 | filecheck %s --check-prefix=PASS
// PASS: pto-opt: error: unknown pass 'no-such-pass' (see pto-opt --list-passes)

// RUN: not pto-opt --pass-pipeline='builtin.module(test-pass-failure{warn_only=maybe})' %s 2>&1 | filecheck %s --check-prefix=OPTVAL
// OPTVAL: pto-opt: error: bad pass pipeline 'test-pass-failure{warn_only=maybe}': Incompatible types

// RUN: not pto-opt -p 'test-pass-failure{colour=1}' %s 2>&1 | filecheck %s --check-prefix=OPTNAME
// OPTNAME: pto-opt: error: bad pass pipeline {{.*}} ["colour"] not found in expected arguments

// RUN: not pto-opt -p 'cse{' %s 2>&1 | filecheck %s --check-prefix=SYNTAX
// SYNTAX: pto-opt: error: bad pass pipeline 'cse{': Expected argument name here (at column 5)
// SYNTAX-NOT: Traceback

// RUN: not pto-opt --pass-pipeline='func.func(cse)' %s 2>&1 | filecheck %s --check-prefix=ANCHOR
// ANCHOR: pto-opt: error: pass pipeline anchor 'func.func' is not supported; use 'builtin.module(...)'

// RUN: not pto-opt -p cse --pass-pipeline='builtin.module(cse)' %s 2>&1 | filecheck %s --check-prefix=BOTH
// BOTH: pto-opt: error: give either -p or --pass-pipeline, not both

// RUN: not pto-opt %S/no-such-file.mlir 2>&1 | filecheck %s --check-prefix=NOFILE
// NOFILE: pto-opt: error: cannot read '{{.*}}no-such-file.mlir': No such file or directory

// RUN: not pto-opt %S/Inputs 2>&1 | filecheck %s --check-prefix=DIR
// DIR: pto-opt: error: cannot read '{{.*}}Inputs': Is a directory

// A parse error and a verifier error both point at the source with a caret.
// RUN: not pto-opt %S/Inputs/bad-parse.mlir 2>&1 | filecheck %s --check-prefix=PARSE
// PARSE: bad-parse.mlir:2:8: error: operation 'pto.nosuch' is not registered
// PARSE-NEXT: {{^}}  %0 = pto.nosuch %x : tensor<4xf32>
// PARSE-NEXT: {{^}}       ^
// PARSE-NOT: Traceback
// RUN: not pto-opt %S/Inputs/bad-verify.mlir 2>&1 | filecheck %s --check-prefix=VERIFY
// VERIFY: bad-verify.mlir:3:3: error: 'pto.matmul' reduction dims differ: lhs K = 64, rhs K = 32
// VERIFY-NEXT: {{^}}  %0 = pto.matmul
// VERIFY-NEXT: {{^}}  ^
// VERIFY-NOT: Traceback

// An internal error says so in one line, points at the reproducer flag.
// RUN: not pto-opt -p test-pass-crash %S/Inputs/simple.mlir 2>&1 | filecheck %s --check-prefix=CRASH
// CRASH: pto-opt: internal error: pass 'test-pass-crash' crashed: RuntimeError: deliberate crash in test-pass-crash (a bug in pto-ir; rerun with --mlir-pass-pipeline-crash-reproducer=FILE to capture the failing input)
// CRASH-NOT: Traceback

// Unwritable output locations are user errors too.
// RUN: not pto-opt %S/Inputs/simple.mlir -o %S/Inputs/simple.mlir/x.mlir 2>&1 | filecheck %s --check-prefix=OUT
// OUT: pto-opt: error: cannot write '{{.*}}x.mlir': Not a directory
// RUN: not pto-opt %S/Inputs/simple.mlir -p cse --mlir-print-ir-tree-dir=%S/Inputs/simple.mlir/d 2>&1 | filecheck %s --check-prefix=TREE
// TREE: pto-opt: error: cannot write '{{.*}}0_cse.mlir': Not a directory
// TREE-NOT: Traceback

// xdsl-opt flags this driver does not implement are refused, not ignored.
// RUN: not pto-opt --parsing-diagnostics %S/Inputs/simple.mlir 2>&1 | filecheck %s --check-prefix=XFLAG
// XFLAG: pto-opt: error: --parsing-diagnostics is not supported by pto-opt
