// RUN: pto-opt %s --split-input-file --verify-diagnostics
// Every verifier rule of the pto dialect, one chunk each.
func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{result: shape ?x64 differs from ?x32}}
  %0 = pto.rms_norm %a eps = 1.0e-06 : tensor<?x64xf32> -> tensor<?x32xf32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{needs a float input, got i32}}
  %0 = pto.rms_norm %i eps = 1.0e-06 : tensor<?x64xi32> -> tensor<?x64xi32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{result must be f32 or bf16, got f16}}
  %0 = pto.rms_norm %b eps = 1.0e-06 : tensor<?x64xbf16> -> tensor<?x64xf16>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{eps must be positive}}
  %0 = pto.rms_norm %a eps = 0.0 : tensor<?x64xf32> -> tensor<?x64xf32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{gamma must be a vector of length 64}}
  %0 = pto.rms_norm %a, %v32 eps = 1.0e-06 : tensor<?x64xf32>, tensor<32xf32> -> tensor<?x64xf32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{gamma must be float}}
  %0 = pto.rms_norm %a, %iv eps = 1.0e-06 : tensor<?x64xf32>, tensor<64xi32> -> tensor<?x64xf32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{lhs must be rank 2, got rank 1}}
  %0 = pto.matmul %v, %w : tensor<64xf32>, tensor<64x16xf32> -> tensor<?x16xf32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{reduction dims differ: lhs K = 64, rhs K = 16}}
  %0 = pto.matmul %a, %w b_trans : tensor<?x64xf32>, tensor<64x16xf32> -> tensor<?x64xf32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{result must be ?x16, got ?x32}}
  %0 = pto.matmul %a, %w : tensor<?x64xf32>, tensor<64x16xf32> -> tensor<?x32xf32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{operand element types differ: bf16 vs f32}}
  %0 = pto.matmul %b, %w : tensor<?x64xbf16>, tensor<64x16xf32> -> tensor<?x16xf32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{the cube takes bf16, f16, i8 or f32 inputs, got i32}}
  %0 = pto.matmul %i, %iw : tensor<?x64xi32>, tensor<64x16xi32> -> tensor<?x16xi32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{i8 inputs give i32 results, got f32}}
  %0 = pto.matmul %q, %qw : tensor<?x64xi8>, tensor<64x16xi8> -> tensor<?x16xf32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{result: shape ?x64 differs from ?x32}}
  %0 = pto.cast %a rint : tensor<?x64xf32> -> tensor<?x32xbf16>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{no hardware conversion from f32 to i8 (quantize through f32 -> i32 -> f16 -> i8)}}
  %0 = pto.cast %a rint : tensor<?x64xf32> -> tensor<?x64xi8>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{conversion f32 -> f32 rounds: give a round mode (rint, round, trunc, floor, ceil)}}
  %0 = pto.cast %a none : tensor<?x64xf32> -> tensor<?x64xf32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{no hardware conversion from bf16 to f16}}
  %0 = pto.cast %b rint : tensor<?x64xbf16> -> tensor<?x64xf16>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{conversion bf16 -> f32 is exact: round mode must be 'none', got 'rint'}}
  %0 = pto.cast %b rint : tensor<?x64xbf16> -> tensor<?x64xf32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{conversion bf16 -> f32 is exact: saturation does not apply}}
  %0 = pto.cast %b none sat : tensor<?x64xbf16> -> tensor<?x64xf32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>) {
  // expected-error@+1 {{saturation applies to integer destinations only, not bf16}}
  %0 = pto.cast %a rint sat : tensor<?x64xf32> -> tensor<?x64xbf16>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{conversion f32 -> bf16 rounds: give a round mode}}
  %0 = pto.cast %a none : tensor<?x64xf32> -> tensor<?x64xbf16>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{lhs shape ?x32 does not broadcast to result shape ?x64}}
  %0 = pto.add %a32, %a : tensor<?x32xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{operands and result must share one element type}}
  %0 = pto.mul %a, %b : tensor<?x64xf32>, tensor<?x64xbf16> -> tensor<?x64xf32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{works on bf16, f16, f32 or i32}}
  %0 = pto.add %q, %q : tensor<?x64xi8>, tensor<?x64xi8> -> tensor<?x64xi8>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{result type must equal the input type}}
  %0 = pto.sqrt %a : tensor<?x64xf32> -> tensor<?x64xbf16>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{'pto.rsqrt' needs a float input}}
  %0 = pto.rsqrt %i : tensor<?x64xi32> -> tensor<?x64xi32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{result type must equal the input type}}
  %0 = pto.muls %a, 2.0 : tensor<?x64xf32> -> tensor<?x32xf32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{'pto.adds' needs a float input}}
  %0 = pto.adds %i, 2.0 : tensor<?x64xi32> -> tensor<?x64xi32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{result must be ?x1, got ?x64}}
  %0 = pto.reduce sum %a : tensor<?x64xf32> -> tensor<?x64xf32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{result element type must equal the input's}}
  %0 = pto.reduce max %a : tensor<?x64xf32> -> tensor<?x1xbf16>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{'pto.reduce' needs a float input}}
  %0 = pto.reduce sum %i : tensor<?x64xi32> -> tensor<?x1xi32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{'pto.quant' needs a float input}}
  %0, %1 = pto.quant %i : tensor<?x64xi32> -> tensor<?x64xi8>, tensor<?x1xf32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{quantized result: shape ?x64 differs from ?x32}}
  %0, %1 = pto.quant %a : tensor<?x64xf32> -> tensor<?x32xi8>, tensor<?x1xf32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{quantized result must be i8}}
  %0, %1 = pto.quant %a : tensor<?x64xf32> -> tensor<?x64xi32>, tensor<?x1xf32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{scale must be ?x1xf32}}
  %0, %1 = pto.quant %a : tensor<?x64xf32> -> tensor<?x64xi8>, tensor<?x64xf32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>) {
  // expected-error@+1 {{'pto.quant' order must be one of scale_first, divide_first, reciprocal_first, reciprocal_scale_first, got 'first'}}
  %0, %1 = pto.quant %a order "first" : tensor<?x64xf32> -> tensor<?x64xi8>, tensor<?x1xf32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{'pto.dequant' input must be rank 2}}
  %0 = pto.dequant %v, %s : tensor<64xf32>, tensor<?x1xf32> -> tensor<64xf32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{input must be i32 or f32}}
  %0 = pto.dequant %b, %s : tensor<?x64xbf16>, tensor<?x1xf32> -> tensor<?x64xf32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{result: shape ?x64 differs from ?x32}}
  %0 = pto.dequant %i, %s : tensor<?x64xi32>, tensor<?x1xf32> -> tensor<?x32xf32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{'pto.dequant' result must be f32}}
  %0 = pto.dequant %i, %s : tensor<?x64xi32>, tensor<?x1xf32> -> tensor<?x64xbf16>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{act_scale must be ?x1xf32}}
  %0 = pto.dequant %i, %v : tensor<?x64xi32>, tensor<64xf32> -> tensor<?x64xf32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{w_scale must be 64x1, 1x64 or 64 f32}}
  %0 = pto.dequant %i, %s, %v32 : tensor<?x64xi32>, tensor<?x1xf32>, tensor<32xf32> -> tensor<?x64xf32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{'pto.dequant' w_scale_first and scales_product need a w_scale}}
  %0 = pto.dequant %i, %s w_scale_first : tensor<?x64xi32>, tensor<?x1xf32> -> tensor<?x64xf32>
  func.return
}

// -----

func.func @f(%i: tensor<?x64xi32>, %s: tensor<?x1xf32>, %ws: tensor<1x64xf32>) {
  // expected-error@+1 {{'pto.dequant' is w_scale_first or scales_product, not both}}
  %0 = pto.dequant %i, %s, %ws w_scale_first scales_product : tensor<?x64xi32>, tensor<?x1xf32>, tensor<1x64xf32> -> tensor<?x64xf32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{cannot change the element type}}
  %0 = pto.reshape %a : tensor<?x64xf32> -> tensor<?x64xbf16>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{a dynamic dim must be dim 0 of both input and result}}
  %0 = pto.reshape %a : tensor<?x64xf32> -> tensor<64x?xf32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{element count differs: ?x64 vs ?x4x8}}
  %0 = pto.reshape %a inplace : tensor<?x64xf32> -> tensor<?x4x8xf32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{cube tile axis 'm' needs 2 sizes [L0, L1], got 3}}
  %0 = pto.matmul %a, %w {pto.cube_tile = #pto.cube_tile<m = [16, 16, 16], k = [64, 64], n = [16, 16]>} : tensor<?x64xf32>, tensor<64x16xf32> -> tensor<?x16xf32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{cube tile axis 'k': L0 size must be positive, got 0}}
  %0 = pto.matmul %a, %w {pto.cube_tile = #pto.cube_tile<m = [16, 16], k = [0, 64], n = [16, 16]>} : tensor<?x64xf32>, tensor<64x16xf32> -> tensor<?x16xf32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{cube tile axis 'n': L0 size 32 exceeds L1 size 16}}
  %0 = pto.matmul %a, %w {pto.cube_tile = #pto.cube_tile<m = [16, 16], k = [64, 64], n = [32, 16]>} : tensor<?x64xf32>, tensor<64x16xf32> -> tensor<?x16xf32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{cube tile axis 'k': L1 size 96 is not a multiple of L0 size 64}}
  %0 = pto.matmul %a, %w {pto.cube_tile = #pto.cube_tile<m = [16, 16], k = [64, 96], n = [16, 16]>} : tensor<?x64xf32>, tensor<64x16xf32> -> tensor<?x16xf32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{'pto.cube_tile' belongs on a pto.matmul}}
  %0 = pto.abs %a {pto.cube_tile = #pto.cube_tile<m = [16, 16], k = [64, 64], n = [16, 16]>} : tensor<?x64xf32> -> tensor<?x64xf32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{'pto.cube_tile' must be a #pto.cube_tile<...>}}
  %0 = pto.matmul %a, %w {pto.cube_tile = 3} : tensor<?x64xf32>, tensor<64x16xf32> -> tensor<?x16xf32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{'pto.label' must be a non-empty string}}
  %0 = pto.abs %a {pto.label = ""} : tensor<?x64xf32> -> tensor<?x64xf32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{'pto.vec_tile' has rank 1 but the op's data has rank 2}}
  %0 = pto.abs %a {pto.vec_tile = array<i64: 4>} : tensor<?x64xf32> -> tensor<?x64xf32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{'pto.vec_tile' must be an array<i64: ...> of positive sizes}}
  %0 = pto.abs %a {pto.vec_tile = array<i64: 0, 4>} : tensor<?x64xf32> -> tensor<?x64xf32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{unknown pto hint 'pto.colour'}}
  %0 = pto.abs %a {pto.colour = 1} : tensor<?x64xf32> -> tensor<?x64xf32>
  func.return
}

// -----

func.func @f(%a: tensor<?x64xf32>, %a32: tensor<?x32xf32>, %b: tensor<?x64xbf16>, %i: tensor<?x64xi32>, %q: tensor<?x64xi8>, %v: tensor<64xf32>, %v32: tensor<32xf32>, %iv: tensor<64xi32>, %w: tensor<64x16xf32>, %iw: tensor<64x16xi32>, %qw: tensor<64x16xi8>, %s: tensor<?x1xf32>) {
  // expected-error@+1 {{'pto.cache' must be a #pto.cache<...>}}
  %0 = pto.abs %a {pto.cache = 1} : tensor<?x64xf32> -> tensor<?x64xf32>
  func.return
}

// -----

// expected-error@+1 {{unknown target 'nosuch' (known: ascend910b1, ascend910b1-pypto020, ascend950)}}
func.func @t() attributes {pto.target = "nosuch"} {
  func.return
}

// -----

// expected-error@+1 {{'pto.unroll' must be a non-empty array<i64: ...> of positive factors}}
func.func @t() attributes {pto.unroll = array<i64: 4, 0>} {
  func.return
}

// -----

// expected-error@+1 {{unknown pass option 'fast_mode' (known: cube_l1_reuse_setting, vec_nbuffer_setting, cube_nbuffer_setting)}}
func.func @t() attributes {pto.options = {fast_mode = {}}} {
  func.return
}

// -----

// expected-error@+1 {{pass option 'vec_nbuffer_setting': key 'x' is not an integer group id}}
func.func @t() attributes {pto.options = {vec_nbuffer_setting = {x = 2}}} {
  func.return
}

// -----

// expected-error@+1 {{pass option 'vec_nbuffer_setting': value for '0' must be a positive integer}}
func.func @t() attributes {pto.options = {vec_nbuffer_setting = {"0" = 0}}} {
  func.return
}

// -----

// expected-error@+1 {{pass option 'cube_nbuffer_setting' must be a dictionary}}
func.func @t() attributes {pto.options = {cube_nbuffer_setting = 2}} {
  func.return
}

// -----

// expected-error@+1 {{unknown runtime option 'device_sched_mode' (known: stitch_function_max_num)}}
func.func @t() attributes {pto.runtime = {device_sched_mode = 1}} {
  func.return
}

// -----

// expected-error@+1 {{runtime option 'stitch_function_max_num' must be a positive integer}}
func.func @t() attributes {pto.runtime = {stitch_function_max_num = 0}} {
  func.return
}

// -----

// expected-error@+1 {{'pto.runtime' must be a dictionary}}
func.func @t() attributes {pto.runtime = 2} {
  func.return
}

// -----

// expected-error@+1 {{'pto.tail' is a unit attribute of a func.func}}
func.func @t() attributes {pto.tail = 1} {
  func.return
}

// -----

// expected-error@+1 {{'pto.options' must be a dictionary}}
func.func @t() attributes {pto.options = 2} {
  func.return
}

// -----

// expected-error@+1 {{'pto.target' must be a string}}
func.func @t() attributes {pto.target = 1} {
  func.return
}

// -----

// expected-error@+1 {{argument 0: unknown pto argument hint 'pto.label'}}
func.func @t(%x: tensor<4xf32> {pto.label = "x"}) {
  func.return
}

// -----

// expected-error@+1 {{argument 0: 'pto.cache' must be a #pto.cache<...>}}
func.func @t(%x: tensor<4xf32> {pto.cache = 1}) {
  func.return
}

// -----

// expected-error@+1 {{argument 0: 'pto.host_transpose' is true or false}}
func.func @t(%x: tensor<4x4xf32> {pto.host_transpose}) {
  func.return
}

// -----

func.func @t(%x: tensor<4xf32>) {
  // expected-error@+1 {{Expected `normal`, or `none_cacheable`}}
  %0 = pto.abs %x {pto.x = #pto.cache<sometimes>} : tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @t(%x: tensor<4xf32>) {
  // expected-error@+1 {{'pto.form' must be a #pto.form<...> on a func.func}}
  %0 = pto.abs %x {pto.form = #pto.form<standard>} : tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

// Ops along the last axis of a rank-0 tensor (an IndexError in the verifier, fuzzing).
func.func @t(%x: tensor<f32>, %g: tensor<4xf32>) {
  // expected-error@+1 {{'pto.rms_norm' works along the last axis: its input needs rank >= 1, got rank 0}}
  %0 = pto.rms_norm %x, %g eps = 1.0e-06 : tensor<f32>, tensor<4xf32> -> tensor<f32>
  func.return
}

// -----

func.func @t(%x: tensor<f32>) {
  // expected-error@+1 {{'pto.reduce' works along the last axis: its input needs rank >= 1, got rank 0}}
  %0 = pto.reduce sum %x : tensor<f32> -> tensor<1xf32>
  func.return
}

// -----

func.func @t(%x: tensor<f32>) {
  // expected-error@+1 {{'pto.quant' works along the last axis: its input needs rank >= 1, got rank 0}}
  %q, %s = pto.quant %x : tensor<f32> -> tensor<i8>, tensor<1xf32>
  func.return
}

// -----

func.func @t(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{'pto.by_unroll' key 'x' is not a positive unroll factor}}
  %0 = pto.abs %x {pto.by_unroll = {x = {pto.vec_tile = array<i64: 2, 64>}}} : tensor<?x64xf32> -> tensor<?x64xf32>
  func.return %0 : tensor<?x64xf32>
}

// -----

func.func @t(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{'pto.by_unroll' entry '2' holds 'pto.label': only pto.vec_tile and pto.cube_tile}}
  %0 = pto.abs %x {pto.by_unroll = {"2" = {pto.label = "a"}}} : tensor<?x64xf32> -> tensor<?x64xf32>
  func.return %0 : tensor<?x64xf32>
}

// -----

func.func @t(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{'pto.vec_tile' has rank 1 but the op's data has rank 2}}
  %0 = pto.abs %x {pto.by_unroll = {"2" = {pto.vec_tile = array<i64: 2>}}} : tensor<?x64xf32> -> tensor<?x64xf32>
  func.return %0 : tensor<?x64xf32>
}

// -----

func.func @t(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{'pto.by_unroll' entry '2' must be a non-empty dictionary of tile hints}}
  %0 = pto.abs %x {pto.by_unroll = {"2" = 3}} : tensor<?x64xf32> -> tensor<?x64xf32>
  func.return %0 : tensor<?x64xf32>
}

// -----

func.func @t(%x: tensor<?x576xbf16>) -> tensor<?x64xbf16> {
  // expected-error@+1 {{'pto.slice' columns [520, 584) are outside the input's 576 columns}}
  %0 = pto.slice %x at 520 : tensor<?x576xbf16> -> tensor<?x64xbf16>
  func.return %0 : tensor<?x64xbf16>
}

// -----

func.func @t(%x: tensor<?x576xbf16>) -> tensor<?x64xbf16> {
  // expected-error@+1 {{'pto.slice' offset must be >= 0, got -1}}
  %0 = pto.slice %x at -1 : tensor<?x576xbf16> -> tensor<?x64xbf16>
  func.return %0 : tensor<?x64xbf16>
}

// -----

func.func @t(%x: tensor<?x576xbf16>) -> tensor<?x64xf32> {
  // expected-error@+1 {{'pto.slice' input element type bf16 differs from the result's f32}}
  %0 = pto.slice %x at 0 : tensor<?x576xbf16> -> tensor<?x64xf32>
  func.return %0 : tensor<?x64xf32>
}

// -----

func.func @t(%x: tensor<?x576xbf16>) -> tensor<8x64xbf16> {
  // expected-error@+1 {{'pto.slice' input ?x576 and result 8x64 must have the same leading dims (only the last axis differs)}}
  %0 = pto.slice %x at 0 : tensor<?x576xbf16> -> tensor<8x64xbf16>
  func.return %0 : tensor<8x64xbf16>
}

// -----

func.func @t(%a: tensor<?x512xbf16>, %b: tensor<?x64xbf16>) -> tensor<?x512xbf16> {
  // expected-error@+1 {{'pto.concat' result has 512 columns, but the inputs' widths sum to 576}}
  %0 = pto.concat %a, %b : tensor<?x512xbf16>, tensor<?x64xbf16> -> tensor<?x512xbf16>
  func.return %0 : tensor<?x512xbf16>
}

// -----

func.func @t(%a: tensor<?x512xbf16>, %b: tensor<?x64xf32>) -> tensor<?x576xbf16> {
  // expected-error@+1 {{'pto.concat' input 1 element type f32 differs from the result's bf16}}
  %0 = pto.concat %a, %b : tensor<?x512xbf16>, tensor<?x64xf32> -> tensor<?x576xbf16>
  func.return %0 : tensor<?x576xbf16>
}

// -----

func.func @t(%a: tensor<?x512xbf16>, %b: tensor<8x64xbf16>) -> tensor<?x576xbf16> {
  // expected-error@+1 {{'pto.concat' input 1 8x64 and result ?x576 must have the same leading dims (only the last axis differs)}}
  %0 = pto.concat %a, %b : tensor<?x512xbf16>, tensor<8x64xbf16> -> tensor<?x576xbf16>
  func.return %0 : tensor<?x576xbf16>
}

// -----

func.func @t(%a: tensor<?x512xbf16>) -> tensor<?x512xbf16> {
  // expected-error@+1 {{'pto.concat' needs at least 2 inputs, got 1}}
  %0 = pto.concat %a : tensor<?x512xbf16> -> tensor<?x512xbf16>
  func.return %0 : tensor<?x512xbf16>
}

// -----

func.func @t(%w: tensor<64x32xbf16>) -> tensor<16x32xbf16> {
  // expected-error@+1 {{'pto.view' [56, 72) of dim 0 is outside the input's 64}}
  %0 = pto.view %w at [56, 0] : tensor<64x32xbf16> -> tensor<16x32xbf16>
  func.return %0 : tensor<16x32xbf16>
}

// -----

func.func @t(%w: tensor<64x32xbf16>) -> tensor<16x32xbf16> {
  // expected-error@+1 {{'pto.view' [-1, 15) of dim 0 is outside the input's 64}}
  %0 = pto.view %w at [-1, 0] : tensor<64x32xbf16> -> tensor<16x32xbf16>
  func.return %0 : tensor<16x32xbf16>
}

// -----

func.func @t(%w: tensor<64x32xbf16>) -> tensor<16x16xbf16> {
  // expected-error@+1 {{'pto.view' needs one offset per dim and the input's rank: 1 offsets, 64x32 -> 16x16}}
  %0 = pto.view %w at [0] : tensor<64x32xbf16> -> tensor<16x16xbf16>
  func.return %0 : tensor<16x16xbf16>
}

// -----

func.func @t(%w: tensor<64x32xbf16>) -> tensor<16x32xf32> {
  // expected-error@+1 {{'pto.view' cannot change the element type}}
  %0 = pto.view %w at [0, 0] : tensor<64x32xbf16> -> tensor<16x32xf32>
  func.return %0 : tensor<16x32xf32>
}

// -----

func.func @t(%x: tensor<?x32xbf16>) -> tensor<16x32xbf16> {
  // expected-error@+1 {{'pto.view' views a weight: input and result need static shapes}}
  %0 = pto.view %x at [0, 0] : tensor<?x32xbf16> -> tensor<16x32xbf16>
  func.return %0 : tensor<16x32xbf16>
}

// -----

func.func @t(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{'pto.by_unroll' must be a dictionary {"factor" = {hints}}}}
  %0 = pto.abs %x {pto.by_unroll = [2, 64]} : tensor<?x64xf32> -> tensor<?x64xf32>
  func.return %0 : tensor<?x64xf32>
}

// -----

func.func @t(%x: tensor<?x64xf32>) -> tensor<64x?xf32> {
  // expected-error@+1 {{'pto.transpose' swaps the last two dims of a tensor of rank >= 3 (dim 0 the tokens), got rank 2}}
  %0 = pto.transpose %x : tensor<?x64xf32> -> tensor<64x?xf32>
  func.return %0 : tensor<64x?xf32>
}

// -----

func.func @t(%x: tensor<?x32x2xf32>) -> tensor<?x32x2xf32> {
  // expected-error@+1 {{'pto.transpose' result ?x32x2 is not the input ?x32x2 with its last two dims swapped}}
  %0 = pto.transpose %x : tensor<?x32x2xf32> -> tensor<?x32x2xf32>
  func.return %0 : tensor<?x32x2xf32>
}

// -----

func.func @t(%x: tensor<?x32x2xf32>) -> tensor<?x2x32xbf16> {
  // expected-error@+1 {{'pto.transpose' cannot change the element type}}
  %0 = pto.transpose %x : tensor<?x32x2xf32> -> tensor<?x2x32xbf16>
  func.return %0 : tensor<?x2x32xbf16>
}

// -----

func.func @t(%x: tensor<4x?x2xf32>) -> tensor<4x2x?xf32> {
  // expected-error@+1 {{'pto.transpose' needs static last two dims, got 4x?x2}}
  %0 = pto.transpose %x : tensor<4x?x2xf32> -> tensor<4x2x?xf32>
  func.return %0 : tensor<4x2x?xf32>
}

// -----

func.func @s(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{'pto.select' predicate must be one of eq, ne, lt, le, gt, ge}}
  %0 = pto.select oeq %x, 0.0, 1.0, 0.0 : tensor<?x64xf32> -> tensor<?x64xf32>
  func.return %0 : tensor<?x64xf32>
}

// -----

func.func @s(%x: tensor<?x64xf32>, %y: tensor<?x32xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{'pto.select' rhs shape ?x32 does not broadcast to result shape ?x64}}
  %0 = pto.select eq %x, %y, 1.0, 0.0 : tensor<?x64xf32>, tensor<?x32xf32> -> tensor<?x64xf32>
  func.return %0 : tensor<?x64xf32>
}

// -----

func.func @s(%x: tensor<?x64xf32>, %y: tensor<?x64xbf16>) -> tensor<?x64xf32> {
  // expected-error@+1 {{'pto.select' compares two values of one float type}}
  %0 = pto.select lt %x, %y, 1.0, 0.0 : tensor<?x64xf32>, tensor<?x64xbf16> -> tensor<?x64xf32>
  func.return %0 : tensor<?x64xf32>
}

// -----

func.func @s(%x: tensor<?x64xf32>, %y: tensor<?x64xbf16>) -> tensor<?x64xf32> {
  // expected-error@+1 {{'pto.select' selects values of the result's float type}}
  %0 = pto.select lt %x, 0.0, %y, 0.0 : tensor<?x64xf32>, tensor<?x64xbf16> -> tensor<?x64xf32>
  func.return %0 : tensor<?x64xf32>
}

// -----

func.func @s(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{'pto.select' form must be 4 of t (a tensor) or s (an immediate), lhs a tensor}}
  %0 = "pto.select"(%x) <{predicate = "eq", form = "tss", scalars = array<f32: 1.0, 0.0>}> : (tensor<?x64xf32>) -> tensor<?x64xf32>
  func.return %0 : tensor<?x64xf32>
}

// -----

func.func @s(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{'pto.select' has 1 operands and form tsts}}
  %0 = "pto.select"(%x) <{predicate = "eq", form = "tsts", scalars = array<f32: 1.0, 0.0>}> : (tensor<?x64xf32>) -> tensor<?x64xf32>
  func.return %0 : tensor<?x64xf32>
}

// -----

func.func @s(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{'pto.select' takes lhs, rhs, on_true, on_false: 4 items, got 3}}
  %0 = pto.select eq %x, 0.0, 1.0 : tensor<?x64xf32> -> tensor<?x64xf32>
  func.return %0 : tensor<?x64xf32>
}
