// RUN: pto-opt %s --split-input-file --verify-diagnostics
// An operand must be defined before its use (MLIR's dominance rule; xDSL 0.74's verifier
// does not check it, and the lowering then met a value with no buffer: issue 10).

func.func @use_before_def(%x: tensor<?x64xbf16>, %w: tensor<32x64xbf16>) -> tensor<?x32xbf16> {
  // expected-error@+1 {{operand #0 does not dominate this use}}
  %o = pto.cast %acc rint : tensor<?x32xf32> -> tensor<?x32xbf16>
  // expected-note@+1 {{operand defined here}}
  %acc = pto.matmul %x, %w b_trans : tensor<?x64xbf16>, tensor<32x64xbf16> -> tensor<?x32xf32>
  func.return %o : tensor<?x32xbf16>
}

// -----

func.func @self_use(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  // expected-error@+2 {{operand #1 does not dominate this use}}
  // expected-note@+1 {{operand defined here}}
  %a = pto.add %x, %a : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  func.return %a : tensor<?x64xf32>
}

// -----

func.func @return_before_def(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{operand #0 does not dominate this use}}
  func.return %a : tensor<?x64xf32>
  // expected-note@+1 {{operand defined here}}
  %a = pto.abs %x : tensor<?x64xf32> -> tensor<?x64xf32>
}
