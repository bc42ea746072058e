// RUN: pto-opt %s --split-input-file --verify-diagnostics
// Every verifier rule of the tile dialect, one chunk each.

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>, %s4: tensor<4x64xbf16>, %out: tensor<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  // expected-error@+1 {{'tile.token_loop' step must be positive}}
  tile.token_loop %i = %c0 to %t step 0 {
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<8x64xbf16>
    %y = tile.cube_stage "mm" -> (tensor<8x64xf32>) {
      %m = tile.matmul %xt, %w : tensor<8x64xbf16>, tensor<64x64xbf16> -> tensor<8x64xf32>
      tile.yield %m : tensor<8x64xf32>
    }
  }
  func.return
}
// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>, %s4: tensor<4x64xbf16>, %out: tensor<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  // expected-error@+1 {{an SK-03 loop body holds exactly one cube stage, found 2}}
  tile.token_loop %i = %c0 to %t step 8 {
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<8x64xbf16>
    %y = tile.cube_stage "mm" -> (tensor<8x64xf32>) {
      %m = tile.matmul %xt, %w : tensor<8x64xbf16>, tensor<64x64xbf16> -> tensor<8x64xf32>
      tile.yield %m : tensor<8x64xf32>
    }
    %y2 = tile.cube_stage "mm" -> (tensor<8x64xf32>) {
      %m = tile.matmul %xt, %w : tensor<8x64xbf16>, tensor<64x64xbf16> -> tensor<8x64xf32>
      tile.yield %m : tensor<8x64xf32>
    }
  }
  func.return
}
// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>, %s4: tensor<4x64xbf16>, %out: tensor<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  // expected-error@+1 {{an SK-03 loop body holds exactly one cube stage, found 0}}
  tile.token_loop %i = %c0 to %t step 8 {
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<8x64xbf16>
  }
  func.return
}
// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>, %s4: tensor<4x64xbf16>, %out: tensor<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 8 {
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<8x64xbf16>
    %y = tile.cube_stage "mm" -> (tensor<8x64xf32>) {
      %m = tile.matmul %xt, %w : tensor<8x64xbf16>, tensor<64x64xbf16> -> tensor<8x64xf32>
      tile.yield %m : tensor<8x64xf32>
    }
    // expected-error@+1 {{SK-03 has a single token loop: 'tile.token_loop' cannot nest}}
    tile.token_loop %j = %c0 to %t step 8 {
    %xj = tile.load %x[%j] : tensor<?x64xbf16> -> tensor<8x64xbf16>
    %yj = tile.cube_stage "mm" -> (tensor<8x64xf32>) {
      %mj = tile.matmul %xj, %w : tensor<8x64xbf16>, tensor<64x64xbf16> -> tensor<8x64xf32>
      tile.yield %mj : tensor<8x64xf32>
    }
    }
  }
  func.return
}
// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>, %s4: tensor<4x64xbf16>, %out: tensor<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 8 {
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<8x64xbf16>
    %y = tile.cube_stage "mm" -> (tensor<8x64xf32>) {
      %m = tile.matmul %xt, %w : tensor<8x64xbf16>, tensor<64x64xbf16> -> tensor<8x64xf32>
      tile.yield %m : tensor<8x64xf32>
    }
    // expected-error@+2 {{'tile.abs' must be inside a tile.vec_stage or tile.cube_stage}}
    // (reported at the op, found by the loop's verifier)
    %a = tile.abs %y : tensor<8x64xf32> -> tensor<8x64xf32>
  }
  func.return
}
// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>, %s4: tensor<4x64xbf16>, %out: tensor<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  // expected-error@+1 {{'tile.vec_stage' must be inside a tile.token_loop (outside, only a tile.vec_stage of weight-only work: a weight stage)}}
  tile.vec_stage "v" -> () {
    tile.yield
  }
  func.return
}
// -----

// A stage outside the loops that reads token rows is not a weight stage.
func.func @f(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>, %s4: tensor<4x64xbf16>, %out: tensor<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %xt = tile.load %x[%c0] : tensor<?x64xbf16> -> tensor<8x64xbf16>
  // expected-error@+1 {{'tile.vec_stage' must be inside a tile.token_loop}}
  %v = tile.vec_stage "v" -> (tensor<8x64xf32>) {
    %c = tile.cast %xt none : tensor<8x64xbf16> -> tensor<8x64xf32>
    tile.yield %c : tensor<8x64xf32>
  }
  func.return
}
// -----

func.func @f(%x: tensor<?x64xf16>, %w: tensor<64x64xi8>, %out: tensor<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xf16>
  %ww = tile.load %w : tensor<64x64xi8> -> tensor<64x64xi8>
  // expected-error@+1 {{a weight stage's result is read by a whole tile.load (it lives in GM), not by 'tile.matmul'}}
  %wf = tile.vec_stage "weight" -> (tensor<64x64xf16>) {
    %c = tile.cast %ww none : tensor<64x64xi8> -> tensor<64x64xf16>
    tile.yield %c : tensor<64x64xf16>
  }
  tile.token_loop %i = %c0 to %t step 8 {
    %xt = tile.load %x[%i] : tensor<?x64xf16> -> tensor<8x64xf16>
    %y = tile.cube_stage "mm" -> (tensor<8x64xf32>) {
      %m = tile.matmul %xt, %wf : tensor<8x64xf16>, tensor<64x64xf16> -> tensor<8x64xf32>
      tile.yield %m : tensor<8x64xf32>
    }
    tile.store %y, %out[%i] : tensor<8x64xf32> -> tensor<?x64xf32>
  }
  func.return
}
// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<64x64xi8>, %out: tensor<?x64xf32>) {
  %ww = tile.load %w : tensor<64x64xi8> -> tensor<64x64xi8>
  // expected-error@+1 {{a weight stage (a tile.vec_stage outside the loops) has no phase: it reads no rows}}
  %wf = tile.vec_stage "weight" tile [8, 64] nbuffer 1 phase <rows = 8, copies = 1> -> (tensor<64x64xf16>) {
    %c = tile.cast %ww none : tensor<64x64xi8> -> tensor<64x64xf16>
    tile.yield %c : tensor<64x64xf16>
  }
  func.return
}
// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>, %s4: tensor<4x64xbf16>, %out: tensor<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 8 {
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<8x64xbf16>
    %y = tile.cube_stage "mm" -> (tensor<8x64xf32>) {
      %m = tile.matmul %xt, %w : tensor<8x64xbf16>, tensor<64x64xbf16> -> tensor<8x64xf32>
      tile.yield %m : tensor<8x64xf32>
    }
    tile.vec_stage "v" -> () {
      // expected-error@+1 {{'tile.vec_stage' cannot nest inside another stage}}
      tile.vec_stage "v2" -> () {
        tile.yield
      }
      tile.yield
    }
  }
  func.return
}
// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>, %s4: tensor<4x64xbf16>, %out: tensor<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 8 {
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<8x64xbf16>
    %y = tile.cube_stage "mm" -> (tensor<8x64xf32>) {
      %m = tile.matmul %xt, %w : tensor<8x64xbf16>, tensor<64x64xbf16> -> tensor<8x64xf32>
      tile.yield %m : tensor<8x64xf32>
    }
    // expected-error@+1 {{'tile.vec_stage' yields () but its results are (tensor<8x64xf32>)}}
    %v = tile.vec_stage "v" -> (tensor<8x64xf32>) {
      tile.yield
    }
  }
  func.return
}
// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>, %s4: tensor<4x64xbf16>, %out: tensor<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 8 {
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<8x64xbf16>
    %y = tile.cube_stage "mm" -> (tensor<8x64xf32>) {
      %m = tile.matmul %xt, %w : tensor<8x64xbf16>, tensor<64x64xbf16> -> tensor<8x64xf32>
      tile.yield %m : tensor<8x64xf32>
    }
    // expected-error@+1 {{'tile.vec_stage' needs a non-empty semantic label}}
    tile.vec_stage "" -> () {
      tile.yield
    }
  }
  func.return
}
// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>, %s4: tensor<4x64xbf16>, %out: tensor<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 8 {
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<8x64xbf16>
    %y = tile.cube_stage "mm" -> (tensor<8x64xf32>) {
      %m = tile.matmul %xt, %w : tensor<8x64xbf16>, tensor<64x64xbf16> -> tensor<8x64xf32>
      tile.yield %m : tensor<8x64xf32>
    }
    // expected-error@+1 {{'tile.vec_stage' nbuffer must be at least 1}}
    tile.vec_stage "v" nbuffer 0 -> () {
      tile.yield
    }
  }
  func.return
}
// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>, %s4: tensor<4x64xbf16>, %out: tensor<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 8 {
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<8x64xbf16>
    %y = tile.cube_stage "mm" -> (tensor<8x64xf32>) {
      %m = tile.matmul %xt, %w : tensor<8x64xbf16>, tensor<64x64xbf16> -> tensor<8x64xf32>
      tile.yield %m : tensor<8x64xf32>
    }
    // expected-error@+1 {{'tile.matmul' belongs in a tile.cube_stage, not a vector stage}}
    %v = tile.vec_stage "v" -> (tensor<8x64xf32>) {
      %m = tile.matmul %xt, %w : tensor<8x64xbf16>, tensor<64x64xbf16> -> tensor<8x64xf32>
      tile.yield %m : tensor<8x64xf32>
    }
  }
  func.return
}
// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>, %s4: tensor<4x64xbf16>, %out: tensor<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 8 {
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<8x64xbf16>
    %y = tile.cube_stage "mm" -> (tensor<8x64xf32>) {
      %m = tile.matmul %xt, %w : tensor<8x64xbf16>, tensor<64x64xbf16> -> tensor<8x64xf32>
      tile.yield %m : tensor<8x64xf32>
    }
    // expected-error@+1 {{'tile.vec_stage' tile sizes must be positive}}
    tile.vec_stage "v" tile [0, 64] -> () {
      tile.yield
    }
  }
  func.return
}
// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>, %s4: tensor<4x64xbf16>, %out: tensor<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 8 {
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<8x64xbf16>
    %y = tile.cube_stage "mm" -> (tensor<8x64xf32>) {
      %m = tile.matmul %xt, %w : tensor<8x64xbf16>, tensor<64x64xbf16> -> tensor<8x64xf32>
      tile.yield %m : tensor<8x64xf32>
    }
    // expected-error@+1 {{vector tile [4] has rank 1 but 'tile.abs' works on rank-2 data}}
    %v = tile.vec_stage "v" tile [4] -> (tensor<8x64xf32>) {
      %a = tile.abs %y : tensor<8x64xf32> -> tensor<8x64xf32>
      tile.yield %a : tensor<8x64xf32>
    }
  }
  func.return
}
// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>, %s4: tensor<4x64xbf16>, %out: tensor<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 8 {
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<8x64xbf16>
    // expected-error@+1 {{'tile.cube_stage' l1_reuse must be at least 1}}
    %y = tile.cube_stage "mm" l1_reuse 0 -> (tensor<8x64xf32>) {
      %m = tile.matmul %xt, %w : tensor<8x64xbf16>, tensor<64x64xbf16> -> tensor<8x64xf32>
      tile.yield %m : tensor<8x64xf32>
    }
  }
  func.return
}
// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>, %s4: tensor<4x64xbf16>, %out: tensor<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 8 {
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<8x64xbf16>
    // expected-error@+1 {{a cube stage holds exactly one tile.matmul, found 0}}
    tile.cube_stage "mm" -> () {
      tile.yield
    }
  }
  func.return
}
// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>, %s4: tensor<4x64xbf16>, %out: tensor<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 8 {
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<8x64xbf16>
    // expected-error@+1 {{cube tile axis 'k' size 8 is 16 bytes of bf16, not a multiple of the 32-byte block}}
    %y = tile.cube_stage "mm" tiles <m = [8, 8], k = [8, 64], n = [64, 64]> -> (tensor<8x64xf32>) {
      %m = tile.matmul %xt, %w : tensor<8x64xbf16>, tensor<64x64xbf16> -> tensor<8x64xf32>
      tile.yield %m : tensor<8x64xf32>
    }
  }
  func.return
}
// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>, %s4: tensor<4x64xbf16>, %out: tensor<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 8 {
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<8x64xbf16>
    // expected-error@+1 {{cube tile axis 'n' size 8 is 16 bytes of bf16, not a multiple of the 32-byte block}}
    %y = tile.cube_stage "mm" tiles <m = [8, 8], k = [64, 64], n = [8, 64]> -> (tensor<8x64xf32>) {
      %m = tile.matmul %xt, %w : tensor<8x64xbf16>, tensor<64x64xbf16> -> tensor<8x64xf32>
      tile.yield %m : tensor<8x64xf32>
    }
  }
  func.return
}
// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>, %s4: tensor<4x64xbf16>, %out: tensor<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 8 {
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<8x64xbf16>
    // expected-error@+1 {{cube tile axis 'm': L0 size 16 exceeds L1 size 8}}
    %y = tile.cube_stage "mm" tiles <m = [16, 8], k = [64, 64], n = [64, 64]> -> (tensor<8x64xf32>) {
      %m = tile.matmul %xt, %w : tensor<8x64xbf16>, tensor<64x64xbf16> -> tensor<8x64xf32>
      tile.yield %m : tensor<8x64xf32>
    }
  }
  func.return
}
// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>, %s4: tensor<4x64xbf16>, %out: tensor<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 8 {
    // expected-error@+1 {{'tile.load' tile type must be static}}
    %h = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<?x64xbf16>
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<8x64xbf16>
    %y = tile.cube_stage "mm" -> (tensor<8x64xf32>) {
      %m = tile.matmul %xt, %w : tensor<8x64xbf16>, tensor<64x64xbf16> -> tensor<8x64xf32>
      tile.yield %m : tensor<8x64xf32>
    }
  }
  func.return
}
// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>, %s4: tensor<4x64xbf16>, %out: tensor<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 8 {
    // expected-error@+1 {{'tile.load' cannot change the element type}}
    %h = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<8x64xf32>
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<8x64xbf16>
    %y = tile.cube_stage "mm" -> (tensor<8x64xf32>) {
      %m = tile.matmul %xt, %w : tensor<8x64xbf16>, tensor<64x64xbf16> -> tensor<8x64xf32>
      tile.yield %m : tensor<8x64xf32>
    }
  }
  func.return
}
// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>, %s4: tensor<4x64xbf16>, %out: tensor<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 8 {
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<8x64xbf16>
    // expected-error@+1 {{'tile.load' without a row offset loads the whole tensor: types must match}}
    %wt = tile.load %w : tensor<64x64xbf16> -> tensor<8x64xbf16>
    %y = tile.cube_stage "mm" -> (tensor<8x64xf32>) {
      %m = tile.matmul %xt, %w : tensor<8x64xbf16>, tensor<64x64xbf16> -> tensor<8x64xf32>
      tile.yield %m : tensor<8x64xf32>
    }
  }
  func.return
}
// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>, %s4: tensor<4x64xbf16>, %out: tensor<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 8 {
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<8x64xbf16>
    // expected-error@+1 {{'tile.load' 'valid' needs a row offset}}
    %wt = tile.load %w valid %t : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %y = tile.cube_stage "mm" -> (tensor<8x64xf32>) {
      %m = tile.matmul %xt, %w : tensor<8x64xbf16>, tensor<64x64xbf16> -> tensor<8x64xf32>
      tile.yield %m : tensor<8x64xf32>
    }
  }
  func.return
}
// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>, %s4: tensor<4x64xbf16>, %out: tensor<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 8 {
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<8x64xbf16>
    // expected-error@+1 {{'tile.load' a token tile keeps every dim but the first: ?x64 vs 8x32}}
    %h = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<8x32xbf16>
    %y = tile.cube_stage "mm" -> (tensor<8x64xf32>) {
      %m = tile.matmul %xt, %w : tensor<8x64xbf16>, tensor<64x64xbf16> -> tensor<8x64xf32>
      tile.yield %m : tensor<8x64xf32>
    }
  }
  func.return
}
// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>, %s4: tensor<4x64xbf16>, %out: tensor<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 8 {
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<8x64xbf16>
    // expected-error@+1 {{'tile.load' tile of 8 rows exceeds the 4 rows of the tensor}}
    %h = tile.load %s4[%i] : tensor<4x64xbf16> -> tensor<8x64xbf16>
    %y = tile.cube_stage "mm" -> (tensor<8x64xf32>) {
      %m = tile.matmul %xt, %w : tensor<8x64xbf16>, tensor<64x64xbf16> -> tensor<8x64xf32>
      tile.yield %m : tensor<8x64xf32>
    }
  }
  func.return
}
// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>, %s4: tensor<4x64xbf16>, %out: tensor<?x32xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 8 {
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<8x64xbf16>
    %y = tile.cube_stage "mm" -> (tensor<8x64xf32>) {
      %m = tile.matmul %xt, %w : tensor<8x64xbf16>, tensor<64x64xbf16> -> tensor<8x64xf32>
      tile.yield %m : tensor<8x64xf32>
    }
    // expected-error@+1 {{'tile.store' a token tile keeps every dim but the first}}
    tile.store %y, %out[%i] : tensor<8x64xf32> -> tensor<?x32xf32>
  }
  func.return
}
// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>, %s4: tensor<4x64xbf16>, %out: tensor<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 8 {
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<8x64xbf16>
    %y = tile.cube_stage "mm" -> (tensor<8x64xf32>) {
      %m = tile.matmul %xt, %w : tensor<8x64xbf16>, tensor<64x64xbf16> -> tensor<8x64xf32>
      tile.yield %m : tensor<8x64xf32>
    }
    // expected-error@+1 {{'tile.store' cannot change the element type}}
    tile.store %y, %x[%i] : tensor<8x64xf32> -> tensor<?x64xbf16>
  }
  func.return
}
// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>, %s4: tensor<4x64xbf16>, %out: tensor<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 8 {
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<8x64xbf16>
    %y = tile.cube_stage "mm" -> (tensor<?x64xf32>) {
      // expected-error@+1 {{'tile.matmul' works on static tile shapes, got tensor<?x64xf32>}}
      %m = tile.matmul %xt, %w : tensor<8x64xbf16>, tensor<64x64xbf16> -> tensor<?x64xf32>
      tile.yield %m : tensor<?x64xf32>
    }
  }
  func.return
}
// -----

func.func @f(%x: tensor<?x64xbf16>) {
  %c0 = arith.constant 0 : index
  // expected-error@+1 {{'tile.token_loop' body takes exactly one index argument}}
  "tile.token_loop"(%c0, %c0) <{step = 8 : index}> ({
  ^bb0(%i: i32):
  }) : (index, index) -> ()
  func.return
}
// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 8 {
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<8x64xbf16>
    // expected-error@+1 {{'tile.cube_stage' nbuffer must be at least 1}}
    %y = tile.cube_stage "mm" nbuffer 0 -> (tensor<8x64xf32>) {
      %m = tile.matmul %xt, %w : tensor<8x64xbf16>, tensor<64x64xbf16> -> tensor<8x64xf32>
      tile.yield %m : tensor<8x64xf32>
    }
  }
  func.return
}

// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 8 {
    // expected-error@+1 {{'tile.load' host_transpose applies to a whole rank-2 tensor}}
    %xt = tile.load %x[%i] host_transpose : tensor<?x64xbf16> -> tensor<8x64xbf16>
    %y = tile.cube_stage "mm" -> (tensor<8x64xf32>) {
      %m = tile.matmul %xt, %w : tensor<8x64xbf16>, tensor<64x64xbf16> -> tensor<8x64xf32>
      tile.yield %m : tensor<8x64xf32>
    }
  }
  func.return
}

// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<576x64xbf16>, %out: tensor<?x64xbf16>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 8 {
    %x8 = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<8x64xbf16>
    %xt = tile.cube_stage "wkv" -> (tensor<8x576xbf16>) {
      %m = tile.matmul %x8, %w b_trans : tensor<8x64xbf16>, tensor<576x64xbf16> -> tensor<8x576xbf16>
      tile.yield %m : tensor<8x576xbf16>
    }
    %r = tile.vec_stage "rope" -> (tensor<8x64xbf16>) {
      // expected-error@+1 {{'tile.slice' columns [540, 604) are outside the input's 576 columns}}
      %k = tile.slice %xt at 540 : tensor<8x576xbf16> -> tensor<8x64xbf16>
      tile.yield %k : tensor<8x64xbf16>
    }
    tile.store %r, %out[%i] : tensor<8x64xbf16> -> tensor<?x64xbf16>
  }
  func.return
}

// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<576x64xbf16>, %out: tensor<?x576xbf16>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 8 {
    %x8 = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<8x64xbf16>
    %xt = tile.cube_stage "wkv" -> (tensor<8x576xbf16>) {
      %m = tile.matmul %x8, %w b_trans : tensor<8x64xbf16>, tensor<576x64xbf16> -> tensor<8x576xbf16>
      tile.yield %m : tensor<8x576xbf16>
    }
    %r = tile.vec_stage "rope" -> (tensor<?x576xbf16>) {
      // expected-error@+1 {{'tile.concat' works on static tile shapes, got tensor<?x576xbf16>}}
      %o = tile.concat %xt : tensor<8x576xbf16> -> tensor<?x576xbf16>
      tile.yield %o : tensor<?x576xbf16>
    }
  }
  func.return
}

// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<32x64xbf16>, %out: tensor<?x32xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 8 {
    %x8 = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<8x64xbf16>
    %y = tile.cube_stage "linear" -> (tensor<4x32xf32>) {
      // expected-error@+1 {{'tile.view' views a weight: its input must be a whole tile.load (no token row, not host_transpose)}}
      %h = tile.view %x8 at [4, 0] : tensor<8x64xbf16> -> tensor<4x64xbf16>
      %m = tile.matmul %h, %w b_trans : tensor<4x64xbf16>, tensor<32x64xbf16> -> tensor<4x32xf32>
      tile.yield %m : tensor<4x32xf32>
    }
  }
  func.return
}

// -----

// A tile stage carries its per-factor hints for tile-unroll unchecked against its data,
// but each must be of its kind.
func.func @f(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>, %out: tensor<?x32xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xf32>
  tile.token_loop %i = %c0 to %t step 8 {
    %x8 = tile.load %x[%i] : tensor<?x64xf32> -> tensor<8x64xf32>
    // expected-error@+1 {{'pto.by_unroll' entry '4': pto.cube_tile of the wrong kind}}
    %y = tile.cube_stage "linear" -> (tensor<8x32xf32>) attributes {pto.by_unroll = {"4" = {pto.cube_tile = array<i64: 16, 16>}}} {
      %m = tile.matmul %x8, %w : tensor<8x64xf32>, tensor<64x32xf32> -> tensor<8x32xf32>
      tile.yield %m : tensor<8x32xf32>
    }
  }
  func.return
}

// -----

func.func @f(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>, %out: tensor<?x32xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xf32>
  tile.token_loop %i = %c0 to %t step 8 {
    %x8 = tile.load %x[%i] : tensor<?x64xf32> -> tensor<8x64xf32>
    // expected-error@+1 {{'pto.by_unroll' entry '4': pto.vec_tile of the wrong kind}}
    %n = tile.vec_stage "norm" -> (tensor<8x64xf32>) attributes {pto.by_unroll = {"4" = {pto.vec_tile = [4, 64]}}} {
      %a = tile.abs %x8 : tensor<8x64xf32> -> tensor<8x64xf32>
      tile.yield %a : tensor<8x64xf32>
    }
    %y = tile.cube_stage "linear" -> (tensor<8x32xf32>) {
      %m = tile.matmul %n, %w : tensor<8x64xf32>, tensor<64x32xf32> -> tensor<8x32xf32>
      tile.yield %m : tensor<8x32xf32>
    }
  }
  func.return
}

// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>, %out: tensor<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 8 {
    %xb = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<8x64xbf16>
    %x8 = tile.cube_stage "mm" -> (tensor<8x64xf32>) {
      %m = tile.matmul %xb, %w : tensor<8x64xbf16>, tensor<64x64xbf16> -> tensor<8x64xf32>
      tile.yield %m : tensor<8x64xf32>
    }
    %r = tile.vec_stage "rope" -> (tensor<8x64xf32>) {
      %p = tile.reshape %x8 : tensor<8x64xf32> -> tensor<8x32x2xf32>
      // expected-error@+1 {{'tile.transpose' works on static tile shapes, got tensor<?x2x32xf32>}}
      %q = tile.transpose %p : tensor<8x32x2xf32> -> tensor<?x2x32xf32>
      %o = tile.reshape %p : tensor<8x32x2xf32> -> tensor<8x64xf32>
      tile.yield %o : tensor<8x64xf32>
    }
    tile.store %r, %out[%i] : tensor<8x64xf32> -> tensor<?x64xf32>
  }
  func.return
}

// -----

func.func @f(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>, %out: tensor<?x96xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 8 {
    %xt = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<8x64xbf16>
    %y = tile.cube_stage "mm" -> (tensor<8x64xf32>) {
      %m = tile.matmul %xt, %w : tensor<8x64xbf16>, tensor<64x64xbf16> -> tensor<8x64xf32>
      tile.yield %m : tensor<8x64xf32>
    }
    // expected-error@+1 {{'tile.store' columns [48, 112) exceed the output's 96 columns}}
    tile.store %y, %out[%i, 48] : tensor<8x64xf32> -> tensor<?x96xf32>
  }
  func.return
}
