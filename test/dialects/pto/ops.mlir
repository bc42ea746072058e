// RUN: pto-opt %s | pto-opt | filecheck %s
// RUN: %ROUNDTRIP | filecheck %s

// CHECK-LABEL: func.func @standard
// CHECK-SAME: {pto.cache = #pto.cache<none_cacheable>, pto.host_transpose = true}
// CHECK-SAME: pto.target = "ascend910b1"
// CHECK-SAME: pto.unroll = array<i64: 128, 64, 1>
// CHECK-SAME: cube_l1_reuse_setting = {"-1" = 2 : i64, "1" = 1 : i64}
func.func @standard(%x: tensor<?x4096xbf16>, %gamma: tensor<4096xbf16>,
                    %w: tensor<1024x4096xbf16> {pto.cache = #pto.cache<none_cacheable>, pto.host_transpose = true}) -> tensor<?x1024xbf16>
    attributes {pto.target = "ascend910b1", pto.unroll = array<i64: 128, 64, 1>,
                pto.options = {cube_l1_reuse_setting = {"-1" = 2, "1" = 1}, vec_nbuffer_setting = {"0" = 2},
                               cube_nbuffer_setting = {"-1" = 4}}} {
  // CHECK: pto.rms_norm %{{.*}}, %{{.*}} eps = 1.000000e-06 {pto.label = "rmsnorm", pto.vec_tile = array<i64: 4, 4096>} : tensor<?x4096xbf16>, tensor<4096xbf16> -> tensor<?x4096xf32>
  %n = pto.rms_norm %x, %gamma eps = 1.0e-06 {pto.label = "rmsnorm", pto.vec_tile = array<i64: 4, 4096>} : tensor<?x4096xbf16>, tensor<4096xbf16> -> tensor<?x4096xf32>
  // CHECK: pto.cast %{{.*}} rint : tensor<?x4096xf32> -> tensor<?x4096xbf16>
  %nb = pto.cast %n rint : tensor<?x4096xf32> -> tensor<?x4096xbf16>
  // CHECK: pto.matmul %{{.*}}, %{{.*}} b_trans {pto.cube_tile = #pto.cube_tile<m = [128, 128], k = [256, 1024], n = [256, 256]>}
  %y = pto.matmul %nb, %w b_trans {pto.cube_tile = #pto.cube_tile<m = [128, 128], k = [256, 1024], n = [256, 256]>} : tensor<?x4096xbf16>, tensor<1024x4096xbf16> -> tensor<?x1024xf32>
  // An f32 -> f32 cast rounds to an integral value in its mode (pypto.round, floor, ...).
  // CHECK: pto.cast %{{.*}} floor : tensor<?x1024xf32> -> tensor<?x1024xf32>
  %f = pto.cast %y floor : tensor<?x1024xf32> -> tensor<?x1024xf32>
  // CHECK: pto.cast %{{.*}} rint : tensor<?x1024xf32> -> tensor<?x1024xbf16>
  %o = pto.cast %f rint : tensor<?x1024xf32> -> tensor<?x1024xbf16>
  func.return %o : tensor<?x1024xbf16>
}

// CHECK-LABEL: func.func @quant
// CHECK-SAME: attributes {pto.form = #pto.form<quant>}
func.func @quant(%x: tensor<?x1024xbf16>, %w: tensor<8192x1024xi8>, %ws: tensor<8192x1xf32>) -> tensor<?x8192xbf16> attributes {pto.form = #pto.form<quant>} {
  // CHECK: pto.rms_norm %{{.*}} eps = 1.000000e-06 : tensor<?x1024xbf16> -> tensor<?x1024xf32>
  %n = pto.rms_norm %x eps = 1.0e-06 : tensor<?x1024xbf16> -> tensor<?x1024xf32>
  // CHECK: %{{.*}}, %{{.*}} = pto.quant %{{.*}} : tensor<?x1024xf32> -> tensor<?x1024xi8>, tensor<?x1xf32>
  %q, %s = pto.quant %n : tensor<?x1024xf32> -> tensor<?x1024xi8>, tensor<?x1xf32>
  // CHECK: %{{.*}}, %{{.*}} = pto.quant %{{.*}} wrap : tensor<?x1024xf32> -> tensor<?x1024xi8>, tensor<?x1xf32>
  %qw, %sw = pto.quant %n wrap : tensor<?x1024xf32> -> tensor<?x1024xi8>, tensor<?x1xf32>
  // CHECK: %{{.*}}, %{{.*}} = pto.quant %{{.*}} order "scale_first" : tensor<?x1024xf32> -> tensor<?x1024xi8>, tensor<?x1xf32>
  %qo, %so = pto.quant %n order "scale_first" : tensor<?x1024xf32> -> tensor<?x1024xi8>, tensor<?x1xf32>
  // CHECK: pto.matmul %{{.*}}, %{{.*}} b_trans : tensor<?x1024xi8>, tensor<8192x1024xi8> -> tensor<?x8192xi32>
  %acc = pto.matmul %q, %w b_trans : tensor<?x1024xi8>, tensor<8192x1024xi8> -> tensor<?x8192xi32>
  // CHECK: pto.dequant %{{.*}}, %{{.*}}, %{{.*}} : tensor<?x8192xi32>, tensor<?x1xf32>, tensor<8192x1xf32> -> tensor<?x8192xf32>
  %d = pto.dequant %acc, %s, %ws : tensor<?x8192xi32>, tensor<?x1xf32>, tensor<8192x1xf32> -> tensor<?x8192xf32>
  // CHECK: pto.dequant %{{.*}}, %{{.*}} : tensor<?x8192xi32>, tensor<?x1xf32> -> tensor<?x8192xf32>
  %d2 = pto.dequant %acc, %s : tensor<?x8192xi32>, tensor<?x1xf32> -> tensor<?x8192xf32>
  // CHECK: pto.dequant %{{.*}}, %{{.*}}, %{{.*}} w_scale_first : tensor<?x8192xi32>, tensor<?x1xf32>, tensor<8192x1xf32> -> tensor<?x8192xf32>
  %d3 = pto.dequant %acc, %s, %ws w_scale_first : tensor<?x8192xi32>, tensor<?x1xf32>, tensor<8192x1xf32> -> tensor<?x8192xf32>
  // CHECK: pto.dequant %{{.*}}, %{{.*}}, %{{.*}} scales_product : tensor<?x8192xi32>, tensor<?x1xf32>, tensor<8192x1xf32> -> tensor<?x8192xf32>
  %d4 = pto.dequant %acc, %s, %ws scales_product : tensor<?x8192xi32>, tensor<?x1xf32>, tensor<8192x1xf32> -> tensor<?x8192xf32>
  %o = pto.cast %d rint : tensor<?x8192xf32> -> tensor<?x8192xbf16>
  func.return %o : tensor<?x8192xbf16>
}

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%a: tensor<?x64xf32>, %row: tensor<?x1xf32>, %col: tensor<64xf32>, %h: tensor<?x64xf16>, %i: tensor<?x64xi32>, %k: tensor<?x64xi8>) {
  // CHECK: pto.add %{{.*}}, %{{.*}} : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  %0 = pto.add %a, %row : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  // CHECK: pto.sub
  %1 = pto.sub %a, %col : tensor<?x64xf32>, tensor<64xf32> -> tensor<?x64xf32>
  // CHECK: pto.mul
  %2 = pto.mul %a, %a : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  // CHECK: pto.div
  %3 = pto.div %a, %row : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  // CHECK: pto.max %{{.*}}, %{{.*}} : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  %mx = pto.max %a, %row : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  // CHECK: pto.min %{{.*}}, %{{.*}} : tensor<?x64xf32>, tensor<64xf32> -> tensor<?x64xf32>
  %mn = pto.min %a, %col : tensor<?x64xf32>, tensor<64xf32> -> tensor<?x64xf32>
  // CHECK: pto.maxs %{{.*}}, 0.000000e+00 : tensor<?x64xf32> -> tensor<?x64xf32>
  %relu = pto.maxs %a, 0.0 : tensor<?x64xf32> -> tensor<?x64xf32>
  // CHECK: pto.mins %{{.*}}, 6.000000e+00 : tensor<?x64xf32> -> tensor<?x64xf32>
  %cap = pto.mins %a, 6.0 : tensor<?x64xf32> -> tensor<?x64xf32>
  // CHECK: pto.rdivs %{{.*}}, 1.270000e+02 : tensor<?x64xf32> -> tensor<?x64xf32>
  %rd = pto.rdivs %a, 127.0 : tensor<?x64xf32> -> tensor<?x64xf32>
  // A top-1 mask, a ReLU by a comparison with a number, a select of two tensors:
  // CHECK: pto.select eq %{{.*}}, %{{.*}}, 1.000000e+00, 0.000000e+00 : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  %hot = pto.select eq %a, %row, 1.0, 0.0 : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  // CHECK: pto.select gt %{{.*}}, 0.000000e+00, %{{.*}}, -2.500000e-01 : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  %leaky = pto.select gt %a, 0, %a, -0.25 : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  // CHECK: pto.select le %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<?x64xf32>, tensor<64xf32>, tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  %pick = pto.select le %a, %col, %a, %row : tensor<?x64xf32>, tensor<64xf32>, tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  // CHECK: pto.sqrt %{{.*}} : tensor<?x64xf32> -> tensor<?x64xf32>
  %4 = pto.sqrt %a : tensor<?x64xf32> -> tensor<?x64xf32>
  // CHECK: pto.rsqrt
  %5 = pto.rsqrt %a : tensor<?x64xf32> -> tensor<?x64xf32>
  // CHECK: pto.abs
  %6 = pto.abs %a : tensor<?x64xf32> -> tensor<?x64xf32>
  // CHECK: pto.exp %{{.*}} : tensor<?x64xf32> -> tensor<?x64xf32>
  %e = pto.exp %a : tensor<?x64xf32> -> tensor<?x64xf32>
  // CHECK: pto.log %{{.*}} : tensor<?x64xf32> -> tensor<?x64xf32>
  %ln = pto.log %e : tensor<?x64xf32> -> tensor<?x64xf32>
  // CHECK: pto.reciprocal %{{.*}} : tensor<?x64xf32> -> tensor<?x64xf32>
  %rc = pto.reciprocal %a : tensor<?x64xf32> -> tensor<?x64xf32>
  // CHECK: pto.muls %{{.*}}, 1.562500e-02 : tensor<?x64xf32> -> tensor<?x64xf32>
  %7 = pto.muls %a, 0.015625 : tensor<?x64xf32> -> tensor<?x64xf32>
  // CHECK: pto.adds %{{.*}}, 1.000000e-06
  %8 = pto.adds %a, 1.0e-06 : tensor<?x64xf32> -> tensor<?x64xf32>
  // CHECK: pto.reduce sum %{{.*}} : tensor<?x64xf32> -> tensor<?x1xf32>
  %9 = pto.reduce sum %a : tensor<?x64xf32> -> tensor<?x1xf32>
  // CHECK: pto.reduce max
  %10 = pto.reduce max %a : tensor<?x64xf32> -> tensor<?x1xf32>
  // CHECK: pto.reduce min
  %11 = pto.reduce min %a : tensor<?x64xf32> -> tensor<?x1xf32>
  // CHECK: pto.reduce mean
  %12 = pto.reduce mean %a : tensor<?x64xf32> -> tensor<?x1xf32>
  // CHECK: pto.reduce absmax
  %13 = pto.reduce absmax %a : tensor<?x64xf32> -> tensor<?x1xf32>
  // CHECK: pto.reshape %{{.*}} inplace : tensor<?x64xf32> -> tensor<?x4x16xf32>
  %14 = pto.reshape %a inplace : tensor<?x64xf32> -> tensor<?x4x16xf32>
  // CHECK: pto.reshape %{{.*}} : tensor<?x4x16xf32> -> tensor<?x64xf32>
  %15 = pto.reshape %14 : tensor<?x4x16xf32> -> tensor<?x64xf32>
  // The quant cast chain: f32 -> i32 (rint) -> f16 (round) -> i8 (trunc, saturated).
  // CHECK: pto.cast %{{.*}} rint : tensor<?x64xf32> -> tensor<?x64xi32>
  %16 = pto.cast %a rint : tensor<?x64xf32> -> tensor<?x64xi32>
  // CHECK: pto.cast %{{.*}} round : tensor<?x64xi32> -> tensor<?x64xf16>
  %17 = pto.cast %16 round : tensor<?x64xi32> -> tensor<?x64xf16>
  // CHECK: pto.cast %{{.*}} trunc sat : tensor<?x64xf16> -> tensor<?x64xi8>
  %18 = pto.cast %17 trunc sat : tensor<?x64xf16> -> tensor<?x64xi8>
  // CHECK: pto.cast %{{.*}} none : tensor<?x64xi8> -> tensor<?x64xf16>
  %19 = pto.cast %k none : tensor<?x64xi8> -> tensor<?x64xf16>
  // CHECK: pto.cast %{{.*}} none : tensor<?x64xf16> -> tensor<?x64xf32>
  %20 = pto.cast %h none : tensor<?x64xf16> -> tensor<?x64xf32>
  // CHECK: pto.cast %{{.*}} floor : tensor<?x64xf32> -> tensor<?x64xf16>
  %21 = pto.cast %a floor : tensor<?x64xf32> -> tensor<?x64xf16>
  // CHECK: pto.cast %{{.*}} ceil : tensor<?x64xi32> -> tensor<?x64xf32>
  %22 = pto.cast %i ceil : tensor<?x64xi32> -> tensor<?x64xf32>
  func.return
}

// CHECK-LABEL: func.func @trans_and_split
func.func @trans_and_split(%a: tensor<16384x?xf32>, %w: tensor<16384x24xf32>) -> tensor<?x24xf32> {
  // CHECK: pto.matmul %{{.*}}, %{{.*}} a_trans {pto.cube_tile = #pto.cube_tile<m = [16, 16], k = [512, 1024, 1024], n = [128, 128], split_k>}
  %y = pto.matmul %a, %w a_trans {pto.cube_tile = #pto.cube_tile<m = [16, 16], k = [512, 1024, 1024], n = [128, 128], split_k>} : tensor<16384x?xf32>, tensor<16384x24xf32> -> tensor<?x24xf32>
  func.return %y : tensor<?x24xf32>
}

// The RoPE tail's column ops: slice the last axis, concatenate along it.
// CHECK-LABEL: func.func @columns
func.func @columns(%kv: tensor<?x576xbf16>, %x: tensor<4x8x64xf32>) -> (tensor<?x576xbf16>, tensor<4x8x96xf32>) {
  // CHECK: %[[C:.*]] = pto.slice %{{.*}} at 0 : tensor<?x576xbf16> -> tensor<?x512xbf16>
  %c = pto.slice %kv at 0 : tensor<?x576xbf16> -> tensor<?x512xbf16>
  // CHECK: %[[K:.*]] = pto.slice %{{.*}} at 512 {pto.label = "rope"} : tensor<?x576xbf16> -> tensor<?x64xbf16>
  %k = pto.slice %kv at 512 {pto.label = "rope"} : tensor<?x576xbf16> -> tensor<?x64xbf16>
  // CHECK: pto.concat %[[C]], %[[K]] : tensor<?x512xbf16>, tensor<?x64xbf16> -> tensor<?x576xbf16>
  %o = pto.concat %c, %k : tensor<?x512xbf16>, tensor<?x64xbf16> -> tensor<?x576xbf16>
  // CHECK: pto.slice %{{.*}} at 32 : tensor<4x8x64xf32> -> tensor<4x8x32xf32>
  %h = pto.slice %x at 32 : tensor<4x8x64xf32> -> tensor<4x8x32xf32>
  // CHECK: pto.concat %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x8x32xf32>, tensor<4x8x32xf32>, tensor<4x8x32xf32> -> tensor<4x8x96xf32>
  %t = pto.concat %h, %h, %h : tensor<4x8x32xf32>, tensor<4x8x32xf32>, tensor<4x8x32xf32> -> tensor<4x8x96xf32>
  func.return %o, %t : tensor<?x576xbf16>, tensor<4x8x96xf32>
}

// The interleaved RoPE's per-token column permutation: [t, D/2, 2] -> [t, 2, D/2].
// CHECK-LABEL: func.func @interleave
func.func @interleave(%k: tensor<?x64xf32>) -> tensor<?x64xf32> {
  // CHECK: %[[P:.*]] = pto.reshape %{{.*}} : tensor<?x64xf32> -> tensor<?x32x2xf32>
  %p = pto.reshape %k : tensor<?x64xf32> -> tensor<?x32x2xf32>
  // CHECK: %[[T:.*]] = pto.transpose %[[P]] {pto.label = "rope"} : tensor<?x32x2xf32> -> tensor<?x2x32xf32>
  %t = pto.transpose %p {pto.label = "rope"} : tensor<?x32x2xf32> -> tensor<?x2x32xf32>
  // CHECK: pto.reshape %[[T]] inplace : tensor<?x2x32xf32> -> tensor<?x64xf32>
  %r = pto.reshape %t inplace : tensor<?x2x32xf32> -> tensor<?x64xf32>
  func.return %r : tensor<?x64xf32>
}

// Rows of a weight, read in place: part of a stacked weight, a gamma among several.
// CHECK-LABEL: func.func @weight_rows
func.func @weight_rows(%w: tensor<1024x4096xbf16>, %g: tensor<8192xbf16>) -> (tensor<512x4096xbf16>, tensor<4096xbf16>) {
  // CHECK: pto.view %{{.*}} at [512, 0] : tensor<1024x4096xbf16> -> tensor<512x4096xbf16>
  %h = pto.view %w at [512, 0] : tensor<1024x4096xbf16> -> tensor<512x4096xbf16>
  // CHECK: pto.view %{{.*}} at [4096] : tensor<8192xbf16> -> tensor<4096xbf16>
  %g1 = pto.view %g at [4096] : tensor<8192xbf16> -> tensor<4096xbf16>
  func.return %h, %g1 : tensor<512x4096xbf16>, tensor<4096xbf16>
}
