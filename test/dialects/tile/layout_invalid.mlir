// RUN: pto-opt %s --split-input-file --verify-diagnostics
// The rules of `tile.load ... layout nz`, one chunk each.

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<32x64xbf16>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 16 {
    // expected-error@+1 {{'tile.load' layout nz is a whole weight's, not a token tile's or host_transpose's}}
    %xt = tile.load %x[%i] layout nz : tensor<?x64xbf16> -> tensor<16x64xbf16>
    %y = tile.cube_stage "linear" -> (tensor<16x32xf32>) {
      %m = tile.matmul %xt, %w b_trans : tensor<16x64xbf16>, tensor<32x64xbf16> -> tensor<16x32xf32>
      tile.yield %m : tensor<16x32xf32>
    }
  }
  func.return
}

// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<32x64xbf16>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<16x64xbf16>
    // expected-error@+1 {{'tile.load' layout nz is a whole weight's, not a token tile's or host_transpose's}}
    %wt = tile.load %w host_transpose layout nz : tensor<32x64xbf16> -> tensor<64x32xbf16>
    %y = tile.cube_stage "linear" -> (tensor<16x32xf32>) {
      %m = tile.matmul %xt, %wt : tensor<16x64xbf16>, tensor<64x32xbf16> -> tensor<16x32xf32>
      tile.yield %m : tensor<16x32xf32>
    }
  }
  func.return
}

// -----

func.func @f(%x: tensor<?x40xbf16>, %w: tensor<32x40xbf16>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x40xbf16>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x40xbf16> -> tensor<16x40xbf16>
    // expected-error@+1 {{'tile.load' an NZ bf16 tensor is whole 16x16 fractals: 32x40 is not a multiple of them}}
    %wt = tile.load %w layout nz : tensor<32x40xbf16> -> tensor<32x40xbf16>
    %y = tile.cube_stage "linear" -> (tensor<16x32xf32>) {
      %m = tile.matmul %xt, %wt b_trans : tensor<16x40xbf16>, tensor<32x40xbf16> -> tensor<16x32xf32>
      tile.yield %m : tensor<16x32xf32>
    }
  }
  func.return
}

// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<32x64xbf16>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<16x64xbf16>
    // expected-error@+1 {{'tile.load' layout nz: a window 16x64 at [8, 0] of an NZ bf16 tensor cuts its 16x16 fractals}}
    %wt = tile.load %w layout nz : tensor<32x64xbf16> -> tensor<32x64xbf16>
    %y = tile.cube_stage "linear" -> (tensor<16x16xf32>) {
      %h = tile.view %wt at [8, 0] : tensor<32x64xbf16> -> tensor<16x64xbf16>
      %m = tile.matmul %xt, %h b_trans : tensor<16x64xbf16>, tensor<16x64xbf16> -> tensor<16x16xf32>
      tile.yield %m : tensor<16x16xf32>
    }
  }
  func.return
}

// -----

// A window of whole fractals is read, in turn, only as a matmul's weight.
func.func @f(%x: tensor<?x64xbf16>, %w: tensor<32x64xbf16>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<16x64xbf16>
    // expected-error@+1 {{'tile.load' layout nz is read only as a tile.matmul's weight operand, not by 'tile.cast'}}
    %wt = tile.load %w layout nz : tensor<32x64xbf16> -> tensor<32x64xbf16>
    %y = tile.vec_stage "pre" -> (tensor<16x64xf32>) {
      %h = tile.view %wt at [16, 0] : tensor<32x64xbf16> -> tensor<16x64xbf16>
      %c = tile.cast %h none : tensor<16x64xbf16> -> tensor<16x64xf32>
      tile.yield %c : tensor<16x64xf32>
    }
    %z = tile.cube_stage "linear" -> (tensor<16x32xf32>) {
      %m = tile.matmul %xt, %wt b_trans : tensor<16x64xbf16>, tensor<32x64xbf16> -> tensor<16x32xf32>
      tile.yield %m : tensor<16x32xf32>
    }
  }
  func.return
}

// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<32x64xbf16>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<16x64xbf16>
    // expected-error@+1 {{Expected `nd`, or `nz`}}
    %wt = tile.load %w layout zn : tensor<32x64xbf16> -> tensor<32x64xbf16>
  }
  func.return
}
