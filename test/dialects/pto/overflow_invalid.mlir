// RUN: pto-opt %s --split-input-file --verify-diagnostics
// Numbers too large for their attribute are errors at the literal (issue 10): xDSL
// raised an OverflowError for an f32 eps of 1e39 and wrapped 2^63 in a cube tile.

func.func @f(%a: tensor<?x64xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{floating point value 1.0e+39 is too large for its type}}
  %0 = pto.rms_norm %a eps = 1.0e+39 : tensor<?x64xf32> -> tensor<?x64xf32>
  func.return %0 : tensor<?x64xf32>
}

// -----

func.func @f(%a: tensor<?x64xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{eps must be positive and finite}}
  %0 = pto.rms_norm %a eps = 1.0e+400 : tensor<?x64xf32> -> tensor<?x64xf32>
  func.return %0 : tensor<?x64xf32>
}

// -----

func.func @f(%a: tensor<?x64xbf16>, %w: tensor<64x64xbf16>) -> tensor<?x64xf32> {
  // expected-error@+1 {{integer 9223372036854775808 does not fit in i64}}
  %0 = pto.matmul %a, %w {pto.cube_tile = #pto.cube_tile<m = [16, 16], k = [64, 64], n = [32, 9223372036854775808]>} : tensor<?x64xbf16>, tensor<64x64xbf16> -> tensor<?x64xf32>
  func.return %0 : tensor<?x64xf32>
}

// -----

func.func @f(%a: tensor<?x64xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{out of range for type i64}}
  %0 = pto.rms_norm %a eps = 1.0e-06 {pto.vec_tile = array<i64: 4, 18446744073709551616>} : tensor<?x64xf32> -> tensor<?x64xf32>
  func.return %0 : tensor<?x64xf32>
}
