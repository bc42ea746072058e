// RUN: pto-opt %s --split-input-file --verify-diagnostics | filecheck %s
// `#tile.phase` (the vector phase plan on a phase's first stage): parse, print, verifier.

// CHECK: tile.vec_stage "norm" tile [4, 512] nbuffer 2 phase <rows = 4, copies = 2> -> (tensor<8x512xf32>)
// CHECK: tile.vec_stage "norm" tile [4, 128] nbuffer 1 phase <rows = 8, copies = 1, chunk = 128 of 512> -> (tensor<8x512xf32>)
func.func @f(%x: tensor<?x512xbf16>, %w: tensor<512x64xbf16>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x512xbf16>
  tile.token_loop %i = %c0 to %t step 8 {
    %xt = tile.load %x[%i] : tensor<?x512xbf16> -> tensor<8x512xbf16>
    %a = tile.vec_stage "norm" tile [4, 512] nbuffer 2 phase <rows = 4, copies = 2> -> (tensor<8x512xf32>) {
      %c = tile.cast %xt none : tensor<8x512xbf16> -> tensor<8x512xf32>
      tile.yield %c : tensor<8x512xf32>
    }
    %b = tile.vec_stage "norm" tile [4, 128] nbuffer 1 phase <rows = 8, copies = 1, chunk = 128 of 512> -> (tensor<8x512xf32>) {
      %c = tile.cast %xt none : tensor<8x512xbf16> -> tensor<8x512xf32>
      tile.yield %c : tensor<8x512xf32>
    }
    %m = tile.cube_stage "mm" -> (tensor<8x64xf32>) {
      %mm = tile.matmul %xt, %w : tensor<8x512xbf16>, tensor<512x64xbf16> -> tensor<8x64xf32>
      tile.yield %mm : tensor<8x64xf32>
    }
  }
  func.return
}
// -----

func.func @f(%x: tensor<?x512xbf16>, %w: tensor<512x64xbf16>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x512xbf16>
  tile.token_loop %i = %c0 to %t step 8 {
    %xt = tile.load %x[%i] : tensor<?x512xbf16> -> tensor<8x512xbf16>
    // expected-error@+1 {{'tile.vec_stage' phase copies 2 exceed nbuffer 1}}
    %a = tile.vec_stage "norm" nbuffer 1 phase <rows = 4, copies = 2> -> (tensor<8x512xf32>) {
      %c = tile.cast %xt none : tensor<8x512xbf16> -> tensor<8x512xf32>
      tile.yield %c : tensor<8x512xf32>
    }
    %m = tile.cube_stage "mm" -> (tensor<8x64xf32>) {
      %mm = tile.matmul %xt, %w : tensor<8x512xbf16>, tensor<512x64xbf16> -> tensor<8x64xf32>
      tile.yield %mm : tensor<8x64xf32>
    }
  }
  func.return
}
// -----

func.func @f(%x: tensor<?x512xbf16>, %w: tensor<512x64xbf16>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x512xbf16>
  tile.token_loop %i = %c0 to %t step 8 {
    %xt = tile.load %x[%i] : tensor<?x512xbf16> -> tensor<8x512xbf16>
    // expected-error@+1 {{'tile.vec_stage' phase rows 16 exceed the body's 8 rows}}
    %a = tile.vec_stage "norm" phase <rows = 16, copies = 1> -> (tensor<8x512xf32>) {
      %c = tile.cast %xt none : tensor<8x512xbf16> -> tensor<8x512xf32>
      tile.yield %c : tensor<8x512xf32>
    }
    %m = tile.cube_stage "mm" -> (tensor<8x64xf32>) {
      %mm = tile.matmul %xt, %w : tensor<8x512xbf16>, tensor<512x64xbf16> -> tensor<8x64xf32>
      tile.yield %mm : tensor<8x64xf32>
    }
  }
  func.return
}
// -----

func.func @f(%x: tensor<?x512xbf16>, %w: tensor<512x64xbf16>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x512xbf16>
  tile.token_loop %i = %c0 to %t step 8 {
    %xt = tile.load %x[%i] : tensor<?x512xbf16> -> tensor<8x512xbf16>
    // expected-error@+1 {{'tile.vec_stage' phase chunks rows 1024 wide, but no value of the stage is that wide}}
    %a = tile.vec_stage "norm" phase <rows = 8, copies = 1, chunk = 128 of 1024> -> (tensor<8x512xf32>) {
      %c = tile.cast %xt none : tensor<8x512xbf16> -> tensor<8x512xf32>
      tile.yield %c : tensor<8x512xf32>
    }
    %m = tile.cube_stage "mm" -> (tensor<8x64xf32>) {
      %mm = tile.matmul %xt, %w : tensor<8x512xbf16>, tensor<512x64xbf16> -> tensor<8x64xf32>
      tile.yield %mm : tensor<8x64xf32>
    }
  }
  func.return
}
// -----

func.func @f(%x: tensor<?x512xbf16>, %w: tensor<512x64xbf16>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x512xbf16>
  tile.token_loop %i = %c0 to %t step 8 {
    %xt = tile.load %x[%i] : tensor<?x512xbf16> -> tensor<8x512xbf16>
    // expected-error@+1 {{phase chunk 96 must divide the row width 512 (and be narrower)}}
    %a = tile.vec_stage "norm" phase <rows = 8, copies = 1, chunk = 96 of 512> -> (tensor<8x512xf32>) {
      %c = tile.cast %xt none : tensor<8x512xbf16> -> tensor<8x512xf32>
      tile.yield %c : tensor<8x512xf32>
    }
    %m = tile.cube_stage "mm" -> (tensor<8x64xf32>) {
      %mm = tile.matmul %xt, %w : tensor<8x512xbf16>, tensor<512x64xbf16> -> tensor<8x64xf32>
      tile.yield %mm : tensor<8x64xf32>
    }
  }
  func.return
}
// -----

func.func @f(%x: tensor<?x512xbf16>, %w: tensor<512x64xbf16>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x512xbf16>
  tile.token_loop %i = %c0 to %t step 8 {
    %xt = tile.load %x[%i] : tensor<?x512xbf16> -> tensor<8x512xbf16>
    // expected-error@+1 {{phase rows and copies must be at least 1}}
    %a = tile.vec_stage "norm" phase <rows = 0, copies = 1> -> (tensor<8x512xf32>) {
      %c = tile.cast %xt none : tensor<8x512xbf16> -> tensor<8x512xf32>
      tile.yield %c : tensor<8x512xf32>
    }
    %m = tile.cube_stage "mm" -> (tensor<8x64xf32>) {
      %mm = tile.matmul %xt, %w : tensor<8x512xbf16>, tensor<512x64xbf16> -> tensor<8x64xf32>
      tile.yield %mm : tensor<8x64xf32>
    }
  }
  func.return
}
// -----

func.func @f(%x: tensor<?x512xbf16>, %w: tensor<512x64xbf16>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x512xbf16>
  tile.token_loop %i = %c0 to %t step 8 {
    %xt = tile.load %x[%i] : tensor<?x512xbf16> -> tensor<8x512xbf16>
    // expected-error@+1 {{phase chunk -2 of 512: both positive, or neither given (whole rows)}}
    %a = tile.vec_stage "norm" phase <rows = 8, copies = 1, chunk = -2 of 512> -> (tensor<8x512xf32>) {
      %c = tile.cast %xt none : tensor<8x512xbf16> -> tensor<8x512xf32>
      tile.yield %c : tensor<8x512xf32>
    }
    %m = tile.cube_stage "mm" -> (tensor<8x64xf32>) {
      %mm = tile.matmul %xt, %w : tensor<8x512xbf16>, tensor<512x64xbf16> -> tensor<8x64xf32>
      tile.yield %mm : tensor<8x64xf32>
    }
  }
  func.return
}
