// RUN: pto-opt %s | pto-opt | filecheck %s
// RUN: %ROUNDTRIP | filecheck %s

// The standard SK-03 body, as the tile level writes it: a remainder cascade of two
// token loops (128 rows, then one row at a time).
// CHECK-LABEL: func.func @standard
func.func @standard(%x: tensor<?x4096xbf16>, %gamma: tensor<4096xbf16>, %w: tensor<1024x4096xbf16>,
                    %out: tensor<?x1024xbf16>) attributes {pto.target = "ascend910b1"} {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x4096xbf16>
  %c128 = arith.constant 128 : index
  %rem = arith.remui %t, %c128 : index
  %end = arith.subi %t, %rem : index
  // CHECK: tile.token_loop %{{.*}} = %{{.*}} to %{{.*}} step 128 {
  tile.token_loop %i = %c0 to %end step 128 {
    // CHECK: tile.load %{{.*}}[%{{.*}}] : tensor<?x4096xbf16> -> tensor<128x4096xbf16>
    %xt = tile.load %x[%i] : tensor<?x4096xbf16> -> tensor<128x4096xbf16>
    // CHECK: tile.load %{{.*}} : tensor<4096xbf16> -> tensor<4096xbf16>
    %g = tile.load %gamma : tensor<4096xbf16> -> tensor<4096xbf16>
    // CHECK: tile.load %{{.*}} cache normal host_transpose : tensor<1024x4096xbf16> -> tensor<4096x1024xbf16>
    %wkn = tile.load %w cache normal host_transpose : tensor<1024x4096xbf16> -> tensor<4096x1024xbf16>
    // CHECK: tile.vec_stage "rmsnorm" tile [4, 4096] nbuffer 2 -> (tensor<128x4096xbf16>) {
    %bt = tile.vec_stage "rmsnorm" tile [4, 4096] nbuffer 2 -> (tensor<128x4096xbf16>) {
      // CHECK: tile.rms_norm
      %nt = tile.rms_norm %xt, %g eps = 1.0e-06 : tensor<128x4096xbf16>, tensor<4096xbf16> -> tensor<128x4096xf32>
      // CHECK: tile.cast %{{.*}} rint
      %b = tile.cast %nt rint : tensor<128x4096xf32> -> tensor<128x4096xbf16>
      // CHECK: tile.yield %{{.*}} : tensor<128x4096xbf16>
      tile.yield %b : tensor<128x4096xbf16>
    }
    // CHECK: tile.cube_stage "linear" tiles <m = [128, 128], k = [256, 1024], n = [256, 256]> l1_reuse 2 nbuffer 1 -> (tensor<128x1024xbf16>) {
    %yt = tile.cube_stage "linear" tiles <m = [128, 128], k = [256, 1024], n = [256, 256]> l1_reuse 2 nbuffer 1 -> (tensor<128x1024xbf16>) {
      // CHECK: tile.load %{{.*}} cache none_cacheable : tensor<1024x4096xbf16> -> tensor<1024x4096xbf16>
      %wt = tile.load %w cache none_cacheable : tensor<1024x4096xbf16> -> tensor<1024x4096xbf16>
      // CHECK: tile.matmul %{{.*}}, %{{.*}} b_trans
      %y = tile.matmul %bt, %wt b_trans : tensor<128x4096xbf16>, tensor<1024x4096xbf16> -> tensor<128x1024xf32>
      %o = tile.cast %y rint : tensor<128x1024xf32> -> tensor<128x1024xbf16>
      tile.yield %o : tensor<128x1024xbf16>
    }
    // CHECK: tile.store %{{.*}}, %{{.*}}[%{{.*}}] : tensor<128x1024xbf16> -> tensor<?x1024xbf16>
    tile.store %yt, %out[%i] : tensor<128x1024xbf16> -> tensor<?x1024xbf16>
    // An output assembled in column windows: a store per window.
    %left:2 = tile.vec_stage "split" -> (tensor<128x448xbf16>, tensor<128x576xbf16>) {
      %l = tile.slice %yt at 0 : tensor<128x1024xbf16> -> tensor<128x448xbf16>
      %r = tile.slice %yt at 448 : tensor<128x1024xbf16> -> tensor<128x576xbf16>
      tile.yield %l, %r : tensor<128x448xbf16>, tensor<128x576xbf16>
    }
    // CHECK: tile.store %{{.*}}, %{{.*}}[%{{.*}}, 448] : tensor<128x576xbf16> -> tensor<?x1024xbf16>
    tile.store %left#1, %out[%i, 448] : tensor<128x576xbf16> -> tensor<?x1024xbf16>
  }
  // CHECK: tile.token_loop %{{.*}} = %{{.*}} to %{{.*}} step 1 {
  tile.token_loop %i = %end to %t step 1 {
    %xt = tile.load %x[%i] : tensor<?x4096xbf16> -> tensor<1x4096xbf16>
    %bt = tile.vec_stage "rmsnorm" -> (tensor<1x4096xbf16>) {
      %nt = tile.rms_norm %xt eps = 1.0e-06 : tensor<1x4096xbf16> -> tensor<1x4096xf32>
      %b = tile.cast %nt rint : tensor<1x4096xf32> -> tensor<1x4096xbf16>
      tile.yield %b : tensor<1x4096xbf16>
    }
    %yt = tile.cube_stage "linear" -> (tensor<1x1024xbf16>) {
      %y = tile.matmul %bt, %w b_trans : tensor<1x4096xbf16>, tensor<1024x4096xbf16> -> tensor<1x1024xf32>
      %o = tile.cast %y rint : tensor<1x1024xf32> -> tensor<1x1024xbf16>
      tile.yield %o : tensor<1x1024xbf16>
    }
    tile.store %yt, %out[%i] : tensor<1x1024xbf16> -> tensor<?x1024xbf16>
  }
  func.return
}

// A single factor with a partial last tile, the quant form (V -> Quant -> C -> Dequant).
// CHECK-LABEL: func.func @quant_tail
func.func @quant_tail(%x: tensor<?x1024xbf16>, %w: tensor<8192x1024xi8>, %ws: tensor<8192x1xf32>, %out: tensor<?x8192xbf16>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x1024xbf16>
  // CHECK: tile.token_loop %{{.*}} = %{{.*}} to %{{.*}} step 16 tail {
  tile.token_loop %i = %c0 to %t step 16 tail {
    // CHECK: tile.load %{{.*}}[%{{.*}}] valid %{{.*}} : tensor<?x1024xbf16> -> tensor<16x1024xbf16>
    %xt = tile.load %x[%i] valid %t : tensor<?x1024xbf16> -> tensor<16x1024xbf16>
    %q, %s = tile.vec_stage "quant" tile [4, 1024] -> (tensor<16x1024xi8>, tensor<16x1xf32>) {
      %n = tile.rms_norm %xt eps = 1.0e-06 : tensor<16x1024xbf16> -> tensor<16x1024xf32>
      // CHECK: tile.quant
      %q0, %s0 = tile.quant %n : tensor<16x1024xf32> -> tensor<16x1024xi8>, tensor<16x1xf32>
      tile.yield %q0, %s0 : tensor<16x1024xi8>, tensor<16x1xf32>
    }
    %acc = tile.cube_stage "Query-Linear" tiles <m = [16, 16], k = [256, 1024], n = [256, 256], split_k> -> (tensor<16x8192xi32>) {
      %wt = tile.load %w cache none_cacheable : tensor<8192x1024xi8> -> tensor<8192x1024xi8>
      %y = tile.matmul %q, %wt b_trans : tensor<16x1024xi8>, tensor<8192x1024xi8> -> tensor<16x8192xi32>
      tile.yield %y : tensor<16x8192xi32>
    }
    %o = tile.vec_stage "Query-Dequant" tile [1, 8192] -> (tensor<16x8192xbf16>) {
      %wst = tile.load %ws : tensor<8192x1xf32> -> tensor<8192x1xf32>
      // CHECK: tile.dequant
      %d = tile.dequant %acc, %s, %wst : tensor<16x8192xi32>, tensor<16x1xf32>, tensor<8192x1xf32> -> tensor<16x8192xf32>
      %o0 = tile.cast %d rint : tensor<16x8192xf32> -> tensor<16x8192xbf16>
      tile.yield %o0 : tensor<16x8192xbf16>
    }
    // CHECK: tile.store %{{.*}}, %{{.*}}[%{{.*}}] valid %{{.*}}
    tile.store %o, %out[%i] valid %t : tensor<16x8192xbf16> -> tensor<?x8192xbf16>
  }
  func.return
}

// W8A16: a weight stage before the loop (the int8 weight cast once per launch); the
// loop loads its result as the weight.
// CHECK-LABEL: func.func @weight_stage
// CHECK:      %wf = tile.vec_stage "weight" tile [64, 256] nbuffer 1 -> (tensor<256x256xf16>) {
// CHECK:      tile.token_loop
// CHECK-NEXT:   %wt = tile.load %wf cache none_cacheable : tensor<256x256xf16> -> tensor<256x256xf16>
func.func @weight_stage(%x: tensor<?x256xf16>, %w: tensor<256x256xi8>, %out: tensor<?x256xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x256xf16>
  %ww = tile.load %w : tensor<256x256xi8> -> tensor<256x256xi8>
  %wf = tile.vec_stage "weight" tile [64, 256] nbuffer 1 -> (tensor<256x256xf16>) {
    %c = tile.cast %ww none : tensor<256x256xi8> -> tensor<256x256xf16>
    tile.yield %c : tensor<256x256xf16>
  }
  tile.token_loop %i = %c0 to %t step 16 tail {
    %wt = tile.load %wf cache none_cacheable : tensor<256x256xf16> -> tensor<256x256xf16>
    %xt = tile.load %x[%i] valid %t : tensor<?x256xf16> -> tensor<16x256xf16>
    %y = tile.cube_stage "linear" -> (tensor<16x256xf32>) {
      %m = tile.matmul %xt, %wt : tensor<16x256xf16>, tensor<256x256xf16> -> tensor<16x256xf32>
      tile.yield %m : tensor<16x256xf32>
    }
    tile.store %y, %out[%i] valid %t : tensor<16x256xf32> -> tensor<?x256xf32>
  }
  func.return
}

// Every tile compute op once, inside a vector stage (C -> V order: matmul first).
// CHECK-LABEL: func.func @all_vector_ops
func.func @all_vector_ops(%x: tensor<?x64xf32>, %w: tensor<64x64xf32>, %out: tensor<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xf32>
  tile.token_loop %i = %c0 to %t step 8 {
    %xt = tile.load %x[%i] : tensor<?x64xf32> -> tensor<8x64xf32>
    %y = tile.cube_stage "wqa-linear" -> (tensor<8x64xf32>) {
      %m = tile.matmul %xt, %w : tensor<8x64xf32>, tensor<64x64xf32> -> tensor<8x64xf32>
      tile.yield %m : tensor<8x64xf32>
    }
    %r = tile.vec_stage "post" tile [8, 64] -> (tensor<8x64xf32>) {
      // CHECK: tile.add
      %0 = tile.add %y, %y : tensor<8x64xf32>, tensor<8x64xf32> -> tensor<8x64xf32>
      // CHECK: tile.sub
      %1 = tile.sub %0, %y : tensor<8x64xf32>, tensor<8x64xf32> -> tensor<8x64xf32>
      // CHECK: tile.mul
      %2 = tile.mul %1, %1 : tensor<8x64xf32>, tensor<8x64xf32> -> tensor<8x64xf32>
      // CHECK: tile.reduce mean
      %3 = tile.reduce mean %2 : tensor<8x64xf32> -> tensor<8x1xf32>
      // CHECK: tile.adds
      %4 = tile.adds %3, 1.0e-06 : tensor<8x1xf32> -> tensor<8x1xf32>
      // CHECK: tile.sqrt
      %5 = tile.sqrt %4 : tensor<8x1xf32> -> tensor<8x1xf32>
      // CHECK: tile.div
      %6 = tile.div %1, %5 : tensor<8x64xf32>, tensor<8x1xf32> -> tensor<8x64xf32>
      // CHECK: tile.rsqrt
      %7 = tile.rsqrt %4 : tensor<8x1xf32> -> tensor<8x1xf32>
      // CHECK: tile.abs
      %8 = tile.abs %6 : tensor<8x64xf32> -> tensor<8x64xf32>
      // CHECK: tile.exp %{{.*}} : tensor<8x64xf32> -> tensor<8x64xf32>
      %e = tile.exp %6 : tensor<8x64xf32> -> tensor<8x64xf32>
      // CHECK: tile.log %{{.*}} : tensor<8x64xf32> -> tensor<8x64xf32>
      %ln = tile.log %e : tensor<8x64xf32> -> tensor<8x64xf32>
      // CHECK: tile.reciprocal %{{.*}} : tensor<8x64xf32> -> tensor<8x64xf32>
      %rc = tile.reciprocal %6 : tensor<8x64xf32> -> tensor<8x64xf32>
      // CHECK: tile.muls
      %9 = tile.muls %8, 2.0 : tensor<8x64xf32> -> tensor<8x64xf32>
      // CHECK: tile.max %{{.*}}, %{{.*}} : tensor<8x64xf32>, tensor<8x1xf32> -> tensor<8x64xf32>
      %mx = tile.max %1, %5 : tensor<8x64xf32>, tensor<8x1xf32> -> tensor<8x64xf32>
      // CHECK: tile.min
      %mn = tile.min %1, %5 : tensor<8x64xf32>, tensor<8x1xf32> -> tensor<8x64xf32>
      // CHECK: tile.maxs %{{.*}}, 0.000000e+00
      %relu = tile.maxs %8, 0.0 : tensor<8x64xf32> -> tensor<8x64xf32>
      // CHECK: tile.mins %{{.*}}, 6.000000e+00
      %cap = tile.mins %8, 6.0 : tensor<8x64xf32> -> tensor<8x64xf32>
      // CHECK: tile.select ne %{{.*}}, 0.000000e+00, %{{.*}}, 1.000000e+00 : tensor<8x64xf32>, tensor<8x64xf32> -> tensor<8x64xf32>
      %sel = tile.select ne %8, 0.0, %8, 1.0 : tensor<8x64xf32>, tensor<8x64xf32> -> tensor<8x64xf32>
      // CHECK: tile.rdivs %{{.*}}, 1.270000e+02
      %rdv = tile.rdivs %8, 127.0 : tensor<8x64xf32> -> tensor<8x64xf32>
      // CHECK: tile.reshape %{{.*}} inplace : tensor<8x64xf32> -> tensor<8x4x16xf32>
      %10 = tile.reshape %9 inplace : tensor<8x64xf32> -> tensor<8x4x16xf32>
      %11 = tile.reshape %10 inplace : tensor<8x4x16xf32> -> tensor<8x64xf32>
      tile.yield %11 : tensor<8x64xf32>
    }
    tile.store %r, %out[%i] : tensor<8x64xf32> -> tensor<?x64xf32>
  }
  func.return
}

// The RoPE tail's column ops on one token tile.
// CHECK-LABEL: func.func @columns
func.func @columns(%x: tensor<?x64xbf16>, %w: tensor<576x64xbf16>, %out: tensor<?x576xbf16>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 8 {
    %x8 = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<8x64xbf16>
    %xt = tile.cube_stage "wkv" -> (tensor<8x576xbf16>) {
      %m = tile.matmul %x8, %w b_trans : tensor<8x64xbf16>, tensor<576x64xbf16> -> tensor<8x576xbf16>
      tile.yield %m : tensor<8x576xbf16>
    }
    %r = tile.vec_stage "rope" tile [8, 576] -> (tensor<8x576xbf16>) {
      // CHECK: tile.slice %{{.*}} at 512 : tensor<8x576xbf16> -> tensor<8x64xbf16>
      %k = tile.slice %xt at 512 : tensor<8x576xbf16> -> tensor<8x64xbf16>
      // CHECK: tile.slice %{{.*}} at 0 : tensor<8x576xbf16> -> tensor<8x512xbf16>
      %c = tile.slice %xt at 0 : tensor<8x576xbf16> -> tensor<8x512xbf16>
      // CHECK: tile.concat %{{.*}}, %{{.*}} : tensor<8x64xbf16>, tensor<8x512xbf16> -> tensor<8x576xbf16>
      %o = tile.concat %k, %c : tensor<8x64xbf16>, tensor<8x512xbf16> -> tensor<8x576xbf16>
      tile.yield %o : tensor<8x576xbf16>
    }
    tile.store %r, %out[%i] : tensor<8x576xbf16> -> tensor<?x576xbf16>
  }
  func.return
}

// The interleaved RoPE's permutation of each token's columns: the stage's rank-2 tile
// gives the rows of the rank-3 reshape and transpose (they move whole rows).
// CHECK-LABEL: func.func @interleave
func.func @interleave(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>, %out: tensor<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 8 {
    %xb = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<8x64xbf16>
    %x8 = tile.cube_stage "mm" -> (tensor<8x64xf32>) {
      %m = tile.matmul %xb, %w : tensor<8x64xbf16>, tensor<64x64xbf16> -> tensor<8x64xf32>
      tile.yield %m : tensor<8x64xf32>
    }
    %r = tile.vec_stage "rope" tile [4, 64] -> (tensor<8x64xf32>) {
      // CHECK: %[[P:.*]] = tile.reshape %{{.*}} : tensor<8x64xf32> -> tensor<8x32x2xf32>
      %p = tile.reshape %x8 : tensor<8x64xf32> -> tensor<8x32x2xf32>
      // CHECK: %[[T:.*]] = tile.transpose %[[P]] : tensor<8x32x2xf32> -> tensor<8x2x32xf32>
      %q = tile.transpose %p : tensor<8x32x2xf32> -> tensor<8x2x32xf32>
      // CHECK: tile.reshape %[[T]] : tensor<8x2x32xf32> -> tensor<8x64xf32>
      %o = tile.reshape %q : tensor<8x2x32xf32> -> tensor<8x64xf32>
      %y = tile.mul %o, %x8 : tensor<8x64xf32>, tensor<8x64xf32> -> tensor<8x64xf32>
      tile.yield %y : tensor<8x64xf32>
    }
    tile.store %r, %out[%i] : tensor<8x64xf32> -> tensor<?x64xf32>
  }
  func.return
}

// Rows of loaded weights, viewed in the stages that read them.
// CHECK-LABEL: func.func @weight_rows
func.func @weight_rows(%x: tensor<?x64xbf16>, %g: tensor<128xbf16>, %w: tensor<64x64xbf16>, %out: tensor<?x32xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xbf16>
  tile.token_loop %i = %c0 to %t step 8 {
    %x8 = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<8x64xbf16>
    %gl = tile.load %g : tensor<128xbf16> -> tensor<128xbf16>
    %wl = tile.load %w cache none_cacheable : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %n = tile.vec_stage "rmsnorm" tile [8, 64] -> (tensor<8x64xbf16>) {
      // CHECK: tile.view %{{.*}} at [64] : tensor<128xbf16> -> tensor<64xbf16>
      %g1 = tile.view %gl at [64] : tensor<128xbf16> -> tensor<64xbf16>
      %r = tile.rms_norm %x8, %g1 eps = 1.0e-06 : tensor<8x64xbf16>, tensor<64xbf16> -> tensor<8x64xbf16>
      tile.yield %r : tensor<8x64xbf16>
    }
    %y = tile.cube_stage "linear" -> (tensor<8x32xf32>) {
      // CHECK: tile.view %{{.*}} at [32, 0] : tensor<64x64xbf16> -> tensor<32x64xbf16>
      %w1 = tile.view %wl at [32, 0] : tensor<64x64xbf16> -> tensor<32x64xbf16>
      %m = tile.matmul %n, %w1 b_trans : tensor<8x64xbf16>, tensor<32x64xbf16> -> tensor<8x32xf32>
      tile.yield %m : tensor<8x32xf32>
    }
    tile.store %y, %out[%i] : tensor<8x32xf32> -> tensor<?x32xf32>
  }
  func.return
}

// A cube tile of a whole ragged axis (N = 1000 of f16, 2000 bytes: not whole 32-byte
// blocks) is valid: it ends where the weight's rows do.
// CHECK-LABEL: func.func @ragged_whole_n
// CHECK: tile.cube_stage "mm" tiles <m = [16, 16], k = [32, 256], n = [1000, 1000]>
func.func @ragged_whole_n(%x: tensor<?x1024xf16>, %w: tensor<1024x1000xf16>, %out: tensor<?x1000xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x1024xf16>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x1024xf16> -> tensor<16x1024xf16>
    %y = tile.cube_stage "mm" tiles <m = [16, 16], k = [32, 256], n = [1000, 1000]> -> (tensor<16x1000xf32>) {
      %m = tile.matmul %xt, %w : tensor<16x1024xf16>, tensor<1024x1000xf16> -> tensor<16x1000xf32>
      tile.yield %m : tensor<16x1000xf32>
    }
    tile.store %y, %out[%i] : tensor<16x1000xf32> -> tensor<?x1000xf32>
  }
  func.return
}
