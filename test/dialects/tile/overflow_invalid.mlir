// RUN: pto-opt %s --split-input-file --verify-diagnostics
// Sizes that do not fit in i64 are parse errors at the literal (issue 10): xDSL raised
// a Python exception for 2^64 and silently wrapped 2^63 to a negative L1 size.

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>, %out: tensor<?x64xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<16x64xbf16>
    // expected-error@+1 {{integer 18446744073709551616 does not fit in i64}}
    %yt = tile.cube_stage "mm" tiles <m = [16, 18446744073709551616], k = [64, 64], n = [32, 64]> -> (tensor<16x64xf32>) {
      %m = tile.matmul %xt, %w : tensor<16x64xbf16>, tensor<64x64xbf16> -> tensor<16x64xf32>
      tile.yield %m : tensor<16x64xf32>
    }
    tile.store %yt, %out[%i] : tensor<16x64xf32> -> tensor<?x64xf32>
  }
  func.return
}

// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>, %out: tensor<?x64xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<16x64xbf16>
    // expected-error@+1 {{integer 9223372036854775808 does not fit in i64}}
    %yt = tile.cube_stage "mm" tiles <m = [16, 16], k = [64, 64], n = [32, 9223372036854775808]> -> (tensor<16x64xf32>) {
      %m = tile.matmul %xt, %w : tensor<16x64xbf16>, tensor<64x64xbf16> -> tensor<16x64xf32>
      tile.yield %m : tensor<16x64xf32>
    }
    tile.store %yt, %out[%i] : tensor<16x64xf32> -> tensor<?x64xf32>
  }
  func.return
}

// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>, %out: tensor<?x64xf32> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<16x64xbf16>
    // expected-error@+1 {{integer 100000000000000000000 does not fit in i64}}
    %yt = tile.cube_stage "mm" tiles <m = [16, 16], k = [64, 64], n = [32, 64]> l1_reuse 100000000000000000000 -> (tensor<16x64xf32>) {
      %m = tile.matmul %xt, %w : tensor<16x64xbf16>, tensor<64x64xbf16> -> tensor<16x64xf32>
      tile.yield %m : tensor<16x64xf32>
    }
    tile.store %yt, %out[%i] : tensor<16x64xf32> -> tensor<?x64xf32>
  }
  func.return
}

// -----

func.func @f(%x: tensor<?x64xbf16>, %out: tensor<?x64xbf16> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<16x64xbf16>
    // expected-error@+1 {{integer 18446744073709551616 does not fit in i64}}
    %yt = tile.vec_stage "v" tile [4, 64] nbuffer 18446744073709551616 -> (tensor<16x64xbf16>) {
      tile.yield %xt : tensor<16x64xbf16>
    }
    tile.store %yt, %out[%i] : tensor<16x64xbf16> -> tensor<?x64xbf16>
  }
  func.return
}

// -----

func.func @f(%x: tensor<?x64xbf16>, %out: tensor<?x64xbf16> {pto.output}) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  // expected-error@+1 {{integer 18446744073709551616 does not fit in i64}}
  tile.token_loop %i = %c0 to %t step 18446744073709551616 {
  }
  func.return
}

// -----

// A pto-level kernel ended by a stage's terminator (an AssertionError in pto-to-tile).
func.func @f(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{'tile.yield' terminates a tile.vec_stage or tile.cube_stage, not a func.func (a kernel ends with func.return)}}
  tile.yield %x : tensor<?x64xf32>
}
