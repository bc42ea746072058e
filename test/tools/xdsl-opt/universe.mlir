// The xdsl.universe entry point makes stock xdsl-opt see the pto dialects too.
// RUN: xdsl-opt %S/../../../examples/sk03_standard.mlir | filecheck %s
// CHECK: pto.rms_norm
// CHECK: pto.matmul
