// MLIR's inline expectations: the run succeeds iff the emitted diagnostics match.
// RUN: pto-opt %s --split-input-file --verify-diagnostics

// Same line.
func.func @same_line(%x: tensor<4xi32>) {
  %0 = pto.sqrt %x : tensor<4xi32> -> tensor<4xi32> // expected-error {{needs a float input}}
  func.return
}

// -----

func.func @minus(%x: tensor<4xi32>) {
  %0 = pto.sqrt %x : tensor<4xi32> -> tensor<4xi32>
  // expected-error@-1 {{needs a float input}}
  func.return
}

// -----

func.func @above(%x: tensor<4xi32>) {
  %0 = pto.sqrt %x : tensor<4xi32> -> tensor<4xi32>

  // expected-error@above {{'pto.sqrt' needs a float input}}
  func.return
}

// -----

func.func @below(%x: tensor<4xi32>) {
  // expected-error@below {{'pto.sqrt' needs a float input}}

  %0 = pto.sqrt %x : tensor<4xi32> -> tensor<4xi32>
  func.return
}

// -----

// A parse error is an expected error too.
func.func @parse(%x: tensor<4xf32>) {
  // expected-error@+1 {{operation 'pto.nosuch' is not registered}}
  %0 = pto.nosuch %x : tensor<4xf32>
  func.return
}
