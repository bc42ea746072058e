// RUN: pto-opt %S/Inputs/simple.mlir -p cse,dce --mlir-print-ir-after-all 2>&1 >/dev/null | filecheck %s --check-prefix=AFTER
// AFTER: // -----// IR Dump After cse //----- //
// AFTER-NEXT: builtin.module {
// AFTER: // -----// IR Dump After dce //----- //

// RUN: pto-opt %S/Inputs/simple.mlir -p cse --mlir-print-ir-before-all 2>&1 >/dev/null | filecheck %s --check-prefix=BEFORE
// BEFORE: // -----// IR Dump Before cse //----- //
// BEFORE-COUNT-2: pto.abs

// RUN: rm -rf %t.dir
// RUN: pto-opt %S/Inputs/simple.mlir -p cse,dce --mlir-print-ir-tree-dir=%t.dir > /dev/null
// RUN: ls %t.dir | filecheck %s --check-prefix=TREE
// TREE: 0_cse.mlir
// TREE-NEXT: 1_dce.mlir
// RUN: filecheck %s --check-prefix=TREECSE < %t.dir/0_cse.mlir
// TREECSE-COUNT-1: pto.abs

// xdsl-opt's spellings: --print-between-passes dumps like --mlir-print-ir-after-all;
// --time-passes prints one line per pass.
// RUN: pto-opt %S/Inputs/simple.mlir -p cse,dce --print-between-passes 2>&1 >/dev/null | filecheck %s --check-prefix=BETWEEN
// BETWEEN: // -----// IR Dump After cse //----- //
// RUN: pto-opt %S/Inputs/simple.mlir -p cse,dce --time-passes 2>&1 >/dev/null | filecheck %s --check-prefix=TIME
// TIME: pto-opt: pass cse: {{[0-9.]+}} s
// TIME-NEXT: pto-opt: pass dce: {{[0-9.]+}} s
