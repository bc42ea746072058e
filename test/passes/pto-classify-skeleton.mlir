// RUN: pto-opt %s --split-input-file --verify-diagnostics -p pto-classify-skeleton | filecheck %s
// RUN: pto-opt %S/Inputs/int8_unfused_dequant.mlir --verify-diagnostics -p pto-fuse-stages,pto-classify-skeleton
// RUN: pto-opt %S/../../examples/sk03_standard.mlir -p pto-classify-skeleton | filecheck %s --check-prefix=EX-STD
// RUN: pto-opt %S/../../examples/mla_wqa_qrmsnorm.mlir -p pto-classify-skeleton | filecheck %s --check-prefix=EX-CV
// RUN: pto-opt %S/../../examples/mla_wkv_rmsnorm.mlir -p pto-classify-skeleton | filecheck %s --check-prefix=EX-CV
// RUN: pto-opt %S/../../examples/indexer_query_linear_int8.mlir -p pto-classify-skeleton | filecheck %s --check-prefix=EX-QUANT
// RUN: pto-opt %S/../../examples/hc_pre.mlir -p pto-classify-skeleton | filecheck %s --check-prefix=EX-MHC
// A function of a lower level keeps its pto hints but is not a kernel to classify.
// RUN: pto-opt %S/../../examples/levels/sk03_standard.tile.mlir -p pto-classify-skeleton | filecheck %s --check-prefix=TILE
// TILE: tile.token_loop
// TILE-NOT: pto.form
// EX-STD: pto.form = #pto.form<standard>
// EX-CV: pto.form = #pto.form<c_v>
// EX-QUANT: pto.form = #pto.form<quant>
// EX-MHC: pto.form = #pto.form<mhc_pre>

// mla_prolog's wkv-linear -> kv-rmsnorm with a RoPE tail: the matmul's row split by
// column slices, an RMSNorm of one part, RoPE of the other, concatenated: C -> V.
// CHECK-LABEL: func.func @c_v_rope_tail
// CHECK-SAME: pto.form = #pto.form<c_v>
func.func @c_v_rope_tail(%x: tensor<?x64xbf16>, %w: tensor<576x64xbf16>, %g: tensor<512xbf16>,
                         %cos: tensor<?x64xf32>, %sin: tensor<?x64xf32>) -> tensor<?x576xf32> {
  %kv = pto.matmul %x, %w b_trans : tensor<?x64xbf16>, tensor<576x64xbf16> -> tensor<?x576xf32>
  %c = pto.slice %kv at 0 : tensor<?x576xf32> -> tensor<?x512xf32>
  %n = pto.rms_norm %c, %g eps = 1.0e-06 : tensor<?x512xf32>, tensor<512xbf16> -> tensor<?x512xf32>
  %pe = pto.slice %kv at 512 : tensor<?x576xf32> -> tensor<?x64xf32>
  %x1 = pto.slice %pe at 0 : tensor<?x64xf32> -> tensor<?x32xf32>
  %x2 = pto.slice %pe at 32 : tensor<?x64xf32> -> tensor<?x32xf32>
  %m2 = pto.muls %x2, -1.0 : tensor<?x32xf32> -> tensor<?x32xf32>
  %rot = pto.concat %m2, %x1 : tensor<?x32xf32>, tensor<?x32xf32> -> tensor<?x64xf32>
  %a = pto.mul %pe, %cos : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  %b = pto.mul %rot, %sin : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  %r = pto.add %a, %b : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  %o = pto.concat %n, %r : tensor<?x512xf32>, tensor<?x64xf32> -> tensor<?x576xf32>
  func.return %o : tensor<?x576xf32>
}

// -----

// A RoPE tail without the norm: V after C, the standard form's post-processing stage.
// CHECK-LABEL: func.func @standard_rope_tail
// CHECK-SAME: pto.form = #pto.form<standard>
func.func @standard_rope_tail(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>) -> tensor<?x64xf32> {
  %kv = pto.matmul %x, %w b_trans : tensor<?x64xbf16>, tensor<64x64xbf16> -> tensor<?x64xf32>
  %x1 = pto.slice %kv at 0 : tensor<?x64xf32> -> tensor<?x32xf32>
  %x2 = pto.slice %kv at 32 : tensor<?x64xf32> -> tensor<?x32xf32>
  %o = pto.concat %x2, %x1 : tensor<?x32xf32>, tensor<?x32xf32> -> tensor<?x64xf32>
  func.return %o : tensor<?x64xf32>
}

// -----

// V -> C -> V: a post-processing stage after the matmul keeps the standard form.
// CHECK-LABEL: func.func @standard_with_post
// CHECK-SAME: pto.form = #pto.form<standard>
func.func @standard_with_post(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>) -> tensor<?x4x16xf32> {
  %n = pto.rms_norm %x eps = 1.0e-06 : tensor<?x64xbf16> -> tensor<?x64xf32>
  %nb = pto.cast %n rint : tensor<?x64xf32> -> tensor<?x64xbf16>
  %y = pto.matmul %nb, %w : tensor<?x64xbf16>, tensor<64x64xbf16> -> tensor<?x64xf32>
  %h = pto.reshape %y inplace : tensor<?x64xf32> -> tensor<?x4x16xf32>
  %o = pto.rms_norm %h eps = 1.0e-06 {pto.label = "per-head-norm"} : tensor<?x4x16xf32> -> tensor<?x4x16xf32>
  func.return %o : tensor<?x4x16xf32>
}

// -----

// A norm on both sides is still V -> C -> V.
// CHECK-LABEL: func.func @norm_both_sides
// CHECK-SAME: pto.form = #pto.form<standard>
func.func @norm_both_sides(%x: tensor<?x64xf32>, %w: tensor<64x64xf32>) -> tensor<?x64xf32> {
  %n = pto.rms_norm %x eps = 1.0e-06 : tensor<?x64xf32> -> tensor<?x64xf32>
  %y = pto.matmul %n, %w : tensor<?x64xf32>, tensor<64x64xf32> -> tensor<?x64xf32>
  %o = pto.rms_norm %y eps = 1.0e-06 : tensor<?x64xf32> -> tensor<?x64xf32>
  func.return %o : tensor<?x64xf32>
}

// -----

// N = 64 and K = 2^14 in f32 is the mhc_pre variant; N = 65 is not.
// CHECK-LABEL: func.func @mhc_edge
// CHECK-SAME: pto.form = #pto.form<mhc_pre>
func.func @mhc_edge(%x: tensor<?x16384xf32>, %w: tensor<16384x64xf32>) -> tensor<?x64xf32> {
  %y = pto.matmul %x, %w : tensor<?x16384xf32>, tensor<16384x64xf32> -> tensor<?x64xf32>
  func.return %y : tensor<?x64xf32>
}
// CHECK-LABEL: func.func @not_mhc_wide
// CHECK-SAME: pto.form = #pto.form<standard>
func.func @not_mhc_wide(%x: tensor<?x16384xf32>, %w: tensor<16384x65xf32>) -> tensor<?x65xf32> {
  %y = pto.matmul %x, %w : tensor<?x16384xf32>, tensor<16384x65xf32> -> tensor<?x65xf32>
  func.return %y : tensor<?x65xf32>
}
// CHECK-LABEL: func.func @not_mhc_bf16
// CHECK-SAME: pto.form = #pto.form<standard>
func.func @not_mhc_bf16(%x: tensor<?x16384xbf16>, %w: tensor<16384x24xbf16>) -> tensor<?x24xf32> {
  %y = pto.matmul %x, %w : tensor<?x16384xbf16>, tensor<16384x24xbf16> -> tensor<?x24xf32>
  func.return %y : tensor<?x24xf32>
}

// -----

// A pinned form the kernel can take is kept (here: standard instead of mhc_pre).
// CHECK-LABEL: func.func @pinned
// CHECK-SAME: pto.form = #pto.form<standard>
func.func @pinned(%x: tensor<?x16384xf32>, %w: tensor<16384x24xf32>) -> tensor<?x24xf32> attributes {pto.form = #pto.form<standard>} {
  %y = pto.matmul %x, %w : tensor<?x16384xf32>, tensor<16384x24xf32> -> tensor<?x24xf32>
  func.return %y : tensor<?x24xf32>
}

// -----

// Functions without pto ops are left alone.
// CHECK-LABEL: func.func @helper
// CHECK-NOT: pto.form
func.func @helper() {
  func.return
}

// -----

// expected-error@+1 {{pinned form 'quant' does not fit: the quant form needs an int8 matmul, this one takes f32}}
func.func @pinned_bad(%x: tensor<?x64xf32>, %w: tensor<64x64xf32>) -> tensor<?x64xf32> attributes {pto.form = #pto.form<quant>} {
  %y = pto.matmul %x, %w : tensor<?x64xf32>, tensor<64x64xf32> -> tensor<?x64xf32>
  func.return %y : tensor<?x64xf32>
}

// -----

// expected-error@+1 {{pinned form 'c_v' does not fit: the C -> V form needs an RMSNorm after the matmul}}
func.func @pinned_bad_cv(%x: tensor<?x64xf32>, %w: tensor<64x64xf32>) -> tensor<?x64xf32> attributes {pto.form = #pto.form<c_v>} {
  %y = pto.matmul %x, %w : tensor<?x64xf32>, tensor<64x64xf32> -> tensor<?x64xf32>
  func.return %y : tensor<?x64xf32>
}

// -----

// expected-error@+1 {{'vector_only' is not SK-03: it has no pto.matmul (a vector-only kernel, as SK-13)}}
func.func @vector_only(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %n = pto.rms_norm %x eps = 1.0e-06 : tensor<?x64xf32> -> tensor<?x64xf32>
  func.return %n : tensor<?x64xf32>
}

// -----

// A function with no pto op is still a kernel when its pto hints say so (it was passed
// through unlowered, issue 10).
// expected-error@+1 {{'hints_only' is not SK-03: it has no pto.matmul}}
func.func @hints_only(%x: tensor<?x64xbf16>) -> tensor<?x64xbf16> attributes {pto.unroll = array<i64: 4, 1>} {
  func.return %x : tensor<?x64xbf16>
}

// -----

// Returning an argument left its output buffer unwritten (all NaN, issue 10).
func.func @returns_argument(%x: tensor<?x64xbf16>, %w: tensor<32x64xbf16>) -> (tensor<?x32xf32>, tensor<?x64xbf16>) {
  %a = pto.matmul %x, %w b_trans : tensor<?x64xbf16>, tensor<32x64xbf16> -> tensor<?x32xf32>
  // expected-error@+1 {{result #1 is the argument %x itself: an SK-03 kernel computes each of its results}}
  func.return %a, %x : tensor<?x32xf32>, tensor<?x64xbf16>
}

// -----

// A matmul nothing depends on was lowered into a cube stage with no result (an internal
// error, issue 10's fuzzing).
func.func @dead_matmul(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>) -> tensor<?x64xf32> {
  %n = pto.rms_norm %x eps = 1.0e-06 : tensor<?x64xbf16> -> tensor<?x64xf32>
  %nb = pto.cast %n rint : tensor<?x64xf32> -> tensor<?x64xbf16>
  // expected-error@+1 {{'dead_matmul' is not SK-03: no result of the kernel depends on its matmul (an unused matmul)}}
  %y = pto.matmul %nb, %w : tensor<?x64xbf16>, tensor<64x64xbf16> -> tensor<?x64xf32>
  func.return %n : tensor<?x64xf32>
}

// -----

// expected-error@+1 {{'chained' is not SK-03: it has 2 chained matmuls; SK-03 has exactly one (chained matmuls are SK-04/SK-05/SK-14)}}
func.func @chained(%x: tensor<?x64xbf16>, %wa: tensor<64x64xbf16>, %wb: tensor<64x32xbf16>) -> tensor<?x32xbf16> {
  // expected-note@+1 {{matmul here}}
  %a = pto.matmul %x, %wa : tensor<?x64xbf16>, tensor<64x64xbf16> -> tensor<?x64xbf16>
  // expected-note@+1 {{matmul here}}
  %b = pto.matmul %a, %wb : tensor<?x64xbf16>, tensor<64x32xbf16> -> tensor<?x32xbf16>
  func.return %b : tensor<?x32xbf16>
}

// -----

// Partial products of K slices computed each on its own (a hand-written split-K whose
// slices are not views of one tensor), then summed.
// expected-error@+1 {{it has 2 summed matmuls; SK-03 has exactly one (a sum of matmuls over K slices is one matmul when each reads columns [.., k:k + KC] of one activation tensor and rows [k:k + KC, ..] of one weight: slices of one value, not each computed on its own)}}
func.func @summed(%x0: tensor<?x32xbf16>, %x1: tensor<?x32xbf16>, %w0: tensor<32x16xbf16>, %w1: tensor<32x16xbf16>) -> tensor<?x16xf32> {
  // expected-note@+1 {{matmul here}}
  %a = pto.matmul %x0, %w0 : tensor<?x32xbf16>, tensor<32x16xbf16> -> tensor<?x16xf32>
  // expected-note@+1 {{matmul here}}
  %b = pto.matmul %x1, %w1 : tensor<?x32xbf16>, tensor<32x16xbf16> -> tensor<?x16xf32>
  %s = pto.add %a, %b : tensor<?x16xf32>, tensor<?x16xf32> -> tensor<?x16xf32>
  func.return %s : tensor<?x16xf32>
}

// -----

// expected-error@+1 {{it has 2 independent matmuls; SK-03 has exactly one (matmuls of one activation: join their weights into one and split its result with views)}}
func.func @independent(%x: tensor<?x64xbf16>, %wa: tensor<64x64xbf16>, %wb: tensor<64x32xbf16>) -> (tensor<?x64xbf16>, tensor<?x32xbf16>) {
  // expected-note@+1 {{matmul here}}
  %a = pto.matmul %x, %wa : tensor<?x64xbf16>, tensor<64x64xbf16> -> tensor<?x64xbf16>
  // expected-note@+1 {{matmul here}}
  %b = pto.matmul %x, %wb : tensor<?x64xbf16>, tensor<64x32xbf16> -> tensor<?x32xbf16>
  func.return %a, %b : tensor<?x64xbf16>, tensor<?x32xbf16>
}

// -----

// N windows of one weight that miss columns: not the one matmul (pto-join-n-windows left them).
// expected-error@+1 {{it has 2 independent matmuls; SK-03 has exactly one (the matmuls of one activation read N windows of one weight, [0, 32), [32, 64) of N = 96: they are its one matmul when they cover all of it, each column once)}}
func.func @windows_missing_columns(%x: tensor<?x64xbf16>, %w: tensor<96x64xbf16>) -> tensor<?x64xf32> {
  %w0 = pto.view %w at [0, 0] : tensor<96x64xbf16> -> tensor<32x64xbf16>
  // expected-note@+1 {{matmul here}}
  %a = pto.matmul %x, %w0 b_trans : tensor<?x64xbf16>, tensor<32x64xbf16> -> tensor<?x32xf32>
  %w1 = pto.view %w at [32, 0] : tensor<96x64xbf16> -> tensor<32x64xbf16>
  // expected-note@+1 {{matmul here}}
  %b = pto.matmul %x, %w1 b_trans : tensor<?x64xbf16>, tensor<32x64xbf16> -> tensor<?x32xf32>
  %o = pto.concat %a, %b : tensor<?x32xf32>, tensor<?x32xf32> -> tensor<?x64xf32>
  func.return %o : tensor<?x64xf32>
}

// -----

// Windows that do cover N, classified without pto-join-n-windows before it: says to run it.
// expected-error@+1 {{it has 2 independent matmuls; SK-03 has exactly one (matmuls of N windows that cover one weight are its one matmul: run pto-join-n-windows first)}}
func.func @windows_not_joined(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>) -> tensor<?x64xf32> {
  %w0 = pto.view %w at [0, 0] : tensor<64x64xbf16> -> tensor<32x64xbf16>
  // expected-note@+1 {{matmul here}}
  %a = pto.matmul %x, %w0 b_trans : tensor<?x64xbf16>, tensor<32x64xbf16> -> tensor<?x32xf32>
  %w1 = pto.view %w at [32, 0] : tensor<64x64xbf16> -> tensor<32x64xbf16>
  // expected-note@+1 {{matmul here}}
  %b = pto.matmul %x, %w1 b_trans : tensor<?x64xbf16>, tensor<32x64xbf16> -> tensor<?x32xf32>
  %o = pto.concat %a, %b : tensor<?x32xf32>, tensor<?x32xf32> -> tensor<?x64xf32>
  func.return %o : tensor<?x64xf32>
}

// -----

// Windows feeding a second matmul: the chain is what is not SK-03, not the windows.
// expected-error@+1 {{it has 3 chained matmuls; SK-03 has exactly one (chained matmuls are SK-04/SK-05/SK-14)}}
func.func @windows_then_chain(%x: tensor<?x64xbf16>, %w: tensor<96x64xbf16>, %w2: tensor<64x32xbf16>) -> tensor<?x32xf32> {
  %w0 = pto.view %w at [0, 0] : tensor<96x64xbf16> -> tensor<32x64xbf16>
  %w1 = pto.view %w at [32, 0] : tensor<96x64xbf16> -> tensor<32x64xbf16>
  // expected-note@+1 {{matmul here}}
  %a = pto.matmul %x, %w0 b_trans : tensor<?x64xbf16>, tensor<32x64xbf16> -> tensor<?x32xf32>
  // expected-note@+1 {{matmul here}}
  %b = pto.matmul %x, %w1 b_trans : tensor<?x64xbf16>, tensor<32x64xbf16> -> tensor<?x32xf32>
  %o = pto.concat %a, %b : tensor<?x32xf32>, tensor<?x32xf32> -> tensor<?x64xf32>
  %ob = pto.cast %o rint : tensor<?x64xf32> -> tensor<?x64xbf16>
  // expected-note@+1 {{matmul here}}
  %y = pto.matmul %ob, %w2 : tensor<?x64xbf16>, tensor<64x32xbf16> -> tensor<?x32xf32>
  func.return %y : tensor<?x32xf32>
}

// -----

// An int8 matmul whose i32 product is the kernel's output (PyPTO's int8 matmul tests):
// nothing to dequantise, the standard form.
// CHECK-LABEL: func.func @int8_output
// CHECK-SAME: pto.form = #pto.form<standard>
func.func @int8_output(%q: tensor<?x64xi8>, %w: tensor<64x64xi8>) -> tensor<?x64xi32> {
  %y = pto.matmul %q, %w : tensor<?x64xi8>, tensor<64x64xi8> -> tensor<?x64xi32>
  func.return %y : tensor<?x64xi32>
}

// -----

// Or it plus an i32 tensor (PyPTO's test_onboard_new_front `matmul_add`): integers all
// the way, exact, the standard form.
// CHECK-LABEL: func.func @int8_output_plus_i32
// CHECK-SAME: pto.form = #pto.form<standard>
func.func @int8_output_plus_i32(%q: tensor<?x64xi8>, %w: tensor<64x64xi8>, %c: tensor<?x64xi32>) -> tensor<?x64xi32> {
  %y = pto.matmul %q, %w : tensor<?x64xi8>, tensor<64x64xi8> -> tensor<?x64xi32>
  %s = pto.add %y, %c : tensor<?x64xi32>, tensor<?x64xi32> -> tensor<?x64xi32>
  func.return %s : tensor<?x64xi32>
}

// -----

// A ReLU and a per-tensor scale after the i32 product (and an i32 bias): PyPTO's
// matmul `extend_params={"bias_tensor": b, "scale": s, "relu_type": RELU}`, the quant form.
// CHECK-LABEL: func.func @int8_fixpipe_dequant
// CHECK-SAME: pto.form = #pto.form<quant>
func.func @int8_fixpipe_dequant(%q: tensor<?x64xi8>, %w: tensor<64x64xi8>, %b: tensor<1x64xi32>) -> tensor<?x64xf16> {
  %y = pto.matmul %q, %w : tensor<?x64xi8>, tensor<64x64xi8> -> tensor<?x64xi32>
  %yb = pto.add %y, %b : tensor<?x64xi32>, tensor<1x64xi32> -> tensor<?x64xi32>
  %f = pto.cast %yb rint : tensor<?x64xi32> -> tensor<?x64xf32>
  %r = pto.maxs %f, 0.0 : tensor<?x64xf32> -> tensor<?x64xf32>
  %d = pto.muls %r, 0.375 : tensor<?x64xf32> -> tensor<?x64xf32>
  %h = pto.cast %d rint : tensor<?x64xf32> -> tensor<?x64xf16>
  func.return %h : tensor<?x64xf16>
}

// -----

func.func @int8_no_dequant(%q: tensor<?x64xi8>, %w: tensor<64x64xi8>) -> tensor<?x64xf32> {
  // expected-error@+1 {{an int8 matmul in SK-03 (the AT-11 quant form) needs a pto.dequant of its result: its i32 values cast to f32 (rint) times the [M, 1] activation scale, then the weight scale (or the weight scale first)}}
  %y = pto.matmul %q, %w : tensor<?x64xi8>, tensor<64x64xi8> -> tensor<?x64xi32>
  // expected-note@+1 {{the i32 result is read here, by 'pto.cast'}}
  %f = pto.cast %y rint : tensor<?x64xi32> -> tensor<?x64xf32>
  func.return %f : tensor<?x64xf32>
}

// -----

// GLM-4.5's static quant: the activation was quantised with static per-channel scales, so
// the i32 result (plus an i32 bias) is cast to f32 and scaled per channel only; it runs as
// written after the matmul.
// CHECK-LABEL: func.func @int8_static_dequant
// CHECK-SAME: pto.form = #pto.form<quant>
func.func @int8_static_dequant(%q: tensor<?x64xi8>, %w: tensor<64x64xi8>, %b: tensor<1x64xi32>, %ds: tensor<1x64xf32>) -> tensor<?x64xf32> {
  %y = pto.matmul %q, %w : tensor<?x64xi8>, tensor<64x64xi8> -> tensor<?x64xi32>
  %yb = pto.add %y, %b : tensor<?x64xi32>, tensor<1x64xi32> -> tensor<?x64xi32>
  %f = pto.cast %yb rint : tensor<?x64xi32> -> tensor<?x64xf32>
  %d = pto.mul %f, %ds : tensor<?x64xf32>, tensor<1x64xf32> -> tensor<?x64xf32>
  func.return %d : tensor<?x64xf32>
}

// -----

// A dequant written from primitives and not fused (here pto-fuse-stages does not run;
// Inputs/int8_unfused_dequant.mlir: a form it does not fuse, with its remark saying why).
func.func @int8_unfused_dequant(%q: tensor<?x64xi8>, %w: tensor<64x64xi8>, %s: tensor<?x1xf32>, %ws: tensor<1x64xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{needs a pto.dequant of its result}}
  %y = pto.matmul %q, %w : tensor<?x64xi8>, tensor<64x64xi8> -> tensor<?x64xi32>
  // expected-note@+1 {{the i32 result is read here, by 'pto.cast'}}
  %f = pto.cast %y rint : tensor<?x64xi32> -> tensor<?x64xf32>
  %sw = pto.mul %s, %ws : tensor<?x1xf32>, tensor<1x64xf32> -> tensor<?x64xf32>
  %d = pto.mul %f, %sw : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  func.return %d : tensor<?x64xf32>
}
