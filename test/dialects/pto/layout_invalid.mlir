// RUN: pto-opt %s --split-input-file --verify-diagnostics
// The rules of an NZ argument (`pto.layout = #pto.layout<nz>`), one chunk each.

// expected-error@+1 {{argument 1: 'pto.layout' must be a #pto.layout<...>}}
func.func @f(%x: tensor<?x32xbf16>, %w: tensor<16x32xbf16> {pto.layout = "nz"}) {
  func.return
}

// -----

// expected-error@+1 {{Expected `nd`, or `nz`}}
func.func @f(%x: tensor<?x32xbf16>, %w: tensor<16x32xbf16> {pto.layout = #pto.layout<zn>}) {
  func.return
}

// -----

// expected-error@+1 {{argument 1: an NZ tensor holds bf16, f16, i8 (PyPTO's matmul refuses NZ f32), got f32}}
func.func @f(%x: tensor<?x32xf32>, %w: tensor<16x32xf32> {pto.layout = #pto.layout<nz>}) {
  func.return
}

// -----

// expected-error@+1 {{argument 0: an NZ tensor is a static 2-D matrix (a weight), got ?x32}}
func.func @f(%x: tensor<?x32xbf16> {pto.layout = #pto.layout<nz>}) {
  func.return
}

// -----

// expected-error@+1 {{argument 0: an NZ tensor is a static 2-D matrix (a weight), got 512}}
func.func @f(%g: tensor<512xbf16> {pto.layout = #pto.layout<nz>}) {
  func.return
}

// -----

// expected-error@+1 {{argument 0: an NZ i8 tensor is whole 16x32 fractals: 16x48 is not a multiple of them}}
func.func @f(%w: tensor<16x48xi8> {pto.layout = #pto.layout<nz>}) {
  func.return
}

// -----

// expected-error@+1 {{argument 0: an NZ bf16 tensor is whole 16x16 fractals: 24x32 is not a multiple of them}}
func.func @f(%w: tensor<24x32xbf16> {pto.layout = #pto.layout<nz>}) {
  func.return
}

// -----

// expected-error@+1 {{argument 0: an NZ weight is not host-transposed (its fractals are fixed)}}
func.func @f(%w: tensor<16x32xbf16> {pto.layout = #pto.layout<nz>, pto.host_transpose = true}) {
  func.return
}

// -----

func.func @f(%w: tensor<16x32xbf16> {pto.layout = #pto.layout<nz>}, %v: tensor<16x32xbf16>) -> tensor<16x16xf32> {
  // expected-error@+1 {{'pto.matmul' reads the NZ argument #0: an NZ tensor is only its weight operand (the second)}}
  %y = pto.matmul %w, %v b_trans : tensor<16x32xbf16>, tensor<16x32xbf16> -> tensor<16x16xf32>
  func.return %y : tensor<16x16xf32>
}

// -----

func.func @f(%x: tensor<?x32xbf16>, %w: tensor<16x32xbf16> {pto.layout = #pto.layout<nz>}) -> tensor<16x32xf32> {
  // expected-error@+1 {{'pto.cast' reads the NZ argument #1: an NZ tensor is only a pto.matmul's weight operand}}
  %c = pto.cast %w none : tensor<16x32xbf16> -> tensor<16x32xf32>
  func.return %c : tensor<16x32xf32>
}

// -----

// A window of an NZ weight is whole fractals.
func.func @f(%x: tensor<?x16xbf16>, %w: tensor<32x32xbf16> {pto.layout = #pto.layout<nz>}) -> tensor<?x16xf32> {
  // expected-error@+1 {{'pto.view' a window 16x16 at [8, 0] of an NZ bf16 tensor cuts its 16x16 fractals: its rows must start and end at multiples of 16, its columns of 16}}
  %v = pto.view %w at [8, 0] : tensor<32x32xbf16> -> tensor<16x16xbf16>
  %y = pto.matmul %x, %v b_trans : tensor<?x16xbf16>, tensor<16x16xbf16> -> tensor<?x16xf32>
  func.return %y : tensor<?x16xf32>
}

// -----

// A window of an NZ weight is read only as a matmul's weight, as the weight is.
func.func @f(%x: tensor<?x16xbf16>, %w: tensor<32x32xbf16> {pto.layout = #pto.layout<nz>}) -> tensor<16x16xf32> {
  %v = pto.view %w at [16, 16] : tensor<32x32xbf16> -> tensor<16x16xbf16>
  // expected-error@+1 {{'pto.cast' reads the NZ argument #1: an NZ tensor is only a pto.matmul's weight operand}}
  %c = pto.cast %v none : tensor<16x16xbf16> -> tensor<16x16xf32>
  func.return %c : tensor<16x16xf32>
}

// -----

// The fractal comes from the kernel's target.
// expected-error@+1 {{argument 0: an NZ bf16 tensor is whole 16x16 fractals: 16x8 is not a multiple of them}}
func.func @f(%w: tensor<16x8xbf16> {pto.layout = #pto.layout<nz>}) attributes {pto.target = "ascend950"} {
  func.return
}
