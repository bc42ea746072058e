// --split-input-file goes on after a failing chunk (as mlir-opt does), prints the
// chunks that succeed separated by `// -----`, reports errors at file lines, and
// exits non-zero when any chunk failed.
// RUN: not pto-opt %s --split-input-file 2>%t.err | filecheck %s
// RUN: filecheck %s --check-prefix=ERR < %t.err

// CHECK: func.func @first
func.func @first(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = pto.abs %x : tensor<4xf32> -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

// ERR: split-input-file.mlir:[[# @LINE + 2]]:3: error: 'pto.sqrt' needs a float input
func.func @second(%x: tensor<4xi32>) {
  %0 = pto.sqrt %x : tensor<4xi32> -> tensor<4xi32>
  func.return
}

// -----

// CHECK: // -----
// CHECK: func.func @third
func.func @third() {
  func.return
}
