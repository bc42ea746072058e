// RUN: pto-opt %s --split-input-file --verify-diagnostics -p pto-fuse-stages | filecheck %s
// A chain that looks like a stage but is not fused gets a remark at the op that broke
// the match (--verify-diagnostics: every chunk's remarks are the expected ones).
// The pass is a no-op on the bundled examples (they use the fused ops already, and
// hc_pre's norm divides the matmul result, not the squared tensor).
// RUN: pto-opt %S/../../examples/hc_pre.mlir > %t.before
// RUN: pto-opt %S/../../examples/hc_pre.mlir -p pto-fuse-stages | diff %t.before -
// RUN: pto-opt %S/../../examples/indexer_query_linear_int8.mlir > %t.before
// RUN: pto-opt %S/../../examples/indexer_query_linear_int8.mlir -p pto-fuse-stages | diff %t.before -
// RUN: pto-opt %S/../../examples/sk03_standard.mlir > %t.before
// RUN: pto-opt %S/../../examples/sk03_standard.mlir -p pto-fuse-stages | diff %t.before -
// RUN: pto-opt %S/../../examples/mla_wqa_qrmsnorm.mlir > %t.before
// RUN: pto-opt %S/../../examples/mla_wqa_qrmsnorm.mlir -p pto-fuse-stages | diff %t.before -
// RUN: pto-opt %S/../../examples/mla_wkv_rmsnorm.mlir > %t.before
// RUN: pto-opt %S/../../examples/mla_wkv_rmsnorm.mlir -p pto-fuse-stages | diff %t.before -

// ================================================================ RMSNorm, positive

// PyPTO's own rms_norm formula: sum(x * x * (1/K)), sqrt, div.
// CHECK-LABEL: func.func @rms_pypto_formula
// CHECK-NEXT:    %n = pto.rms_norm %x eps = 1.000000e-06 : tensor<?x64xbf16> -> tensor<?x64xf32>
// CHECK-NEXT:    func.return %n
func.func @rms_pypto_formula(%x: tensor<?x64xbf16>) -> tensor<?x64xf32> {
  %xf = pto.cast %x none : tensor<?x64xbf16> -> tensor<?x64xf32>
  %sq = pto.mul %xf, %xf : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  %sk = pto.muls %sq, 0.015625 : tensor<?x64xf32> -> tensor<?x64xf32>
  %s = pto.reduce sum %sk : tensor<?x64xf32> -> tensor<?x1xf32>
  %e = pto.adds %s, 1.0e-06 : tensor<?x1xf32> -> tensor<?x1xf32>
  %q = pto.sqrt %e : tensor<?x1xf32> -> tensor<?x1xf32>
  %n = pto.div %xf, %q : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  func.return %n : tensor<?x64xf32>
}

// -----

// A pto.rms_norm of casts to f32 (SK03.md's template casts gamma before the loop)
// reads the uncast input and gamma: rms_norm casts both itself.
// CHECK-LABEL: func.func @rms_of_casts
// CHECK-NEXT:    %n = pto.rms_norm %x, %g eps = 1.000000e-06 : tensor<?x64xbf16>, tensor<64xbf16> -> tensor<?x64xf32>
// CHECK-NEXT:    func.return %n
func.func @rms_of_casts(%x: tensor<?x64xbf16>, %g: tensor<64xbf16>) -> tensor<?x64xf32> {
  %gf = pto.cast %g none : tensor<64xbf16> -> tensor<64xf32>
  %xf = pto.cast %x none : tensor<?x64xbf16> -> tensor<?x64xf32>
  %n = pto.rms_norm %xf, %gf eps = 1.0e-06 : tensor<?x64xf32>, tensor<64xf32> -> tensor<?x64xf32>
  func.return %n : tensor<?x64xf32>
}

// -----

// The input's cast is read elsewhere too: it stays for that reader.
// CHECK-LABEL: func.func @rms_of_a_shared_cast
// CHECK-NEXT:    %xf = pto.cast %x none
// CHECK-NEXT:    %n = pto.rms_norm %x eps
// CHECK-NEXT:    %a = pto.abs %xf
func.func @rms_of_a_shared_cast(%x: tensor<?x64xbf16>) -> (tensor<?x64xf32>, tensor<?x64xf32>) {
  %xf = pto.cast %x none : tensor<?x64xbf16> -> tensor<?x64xf32>
  %n = pto.rms_norm %xf eps = 1.0e-06 : tensor<?x64xf32> -> tensor<?x64xf32>
  %a = pto.abs %xf : tensor<?x64xf32> -> tensor<?x64xf32>
  func.return %n, %a : tensor<?x64xf32>, tensor<?x64xf32>
}

// -----


// bf16 x cast to f32, sum * 1/K, rsqrt (first operand), a bf16 gamma cast to f32 and
// reshaped in place to [1, K]: one rms_norm of x with the original [K] gamma. The
// last op has no label, so the first labelled op's wins; the vec_tile of the last
// op wins over the earlier one.
// CHECK-LABEL: func.func @rms_sum_rsqrt_gamma
// CHECK-NEXT:    %o = pto.rms_norm %x, %g eps = 1.000000e-06 {pto.label = "first", pto.vec_tile = array<i64: 4, 64>} : tensor<?x64xbf16>, tensor<64xbf16> -> tensor<?x64xf32>
// CHECK-NEXT:    func.return %o : tensor<?x64xf32>
func.func @rms_sum_rsqrt_gamma(%x: tensor<?x64xbf16>, %g: tensor<64xbf16>) -> tensor<?x64xf32> {
  %xf = pto.cast %x none : tensor<?x64xbf16> -> tensor<?x64xf32>
  %sq = pto.mul %xf, %xf {pto.label = "first", pto.vec_tile = array<i64: 2, 64>} : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  %s = pto.reduce sum %sq : tensor<?x64xf32> -> tensor<?x1xf32>
  %m = pto.muls %s, 0.015625 : tensor<?x1xf32> -> tensor<?x1xf32>
  %e = pto.adds %m, 1.0e-06 {pto.label = "second"} : tensor<?x1xf32> -> tensor<?x1xf32>
  %r = pto.rsqrt %e : tensor<?x1xf32> -> tensor<?x1xf32>
  %n = pto.mul %r, %xf : tensor<?x1xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  %gf = pto.cast %g none : tensor<64xbf16> -> tensor<64xf32>
  %gr = pto.reshape %gf inplace : tensor<64xf32> -> tensor<1x64xf32>
  %o = pto.mul %n, %gr {pto.vec_tile = array<i64: 4, 64>} : tensor<?x64xf32>, tensor<1x64xf32> -> tensor<?x64xf32>
  func.return %o : tensor<?x64xf32>
}

// -----

// f32 x (no cast), reduce mean, sqrt and div, no gamma; the last op's label wins.
// CHECK-LABEL: func.func @rms_mean_sqrt_div
// CHECK-NEXT:    %n = pto.rms_norm %x eps = 1.000000e-05 {pto.label = "norm"} : tensor<?x128xf32> -> tensor<?x128xf32>
// CHECK-NEXT:    func.return %n
func.func @rms_mean_sqrt_div(%x: tensor<?x128xf32>) -> tensor<?x128xf32> {
  %sq = pto.mul %x, %x {pto.label = "sq"} : tensor<?x128xf32>, tensor<?x128xf32> -> tensor<?x128xf32>
  %m = pto.reduce mean %sq : tensor<?x128xf32> -> tensor<?x1xf32>
  %e = pto.adds %m, 1.0e-05 : tensor<?x1xf32> -> tensor<?x1xf32>
  %q = pto.sqrt %e : tensor<?x1xf32> -> tensor<?x1xf32>
  %n = pto.div %x, %q {pto.label = "norm"} : tensor<?x128xf32>, tensor<?x1xf32> -> tensor<?x128xf32>
  func.return %n : tensor<?x128xf32>
}

// -----

// 1/K for K = 96 is not exact: an immediate equal to it at f32 precision matches. The
// rsqrt is the second operand, the [K] f32 gamma the first of its multiply.
// CHECK-LABEL: func.func @rms_k96_gamma_first
// CHECK-NEXT:    %o = pto.rms_norm %x, %g eps = 1.000000e-06 : tensor<?x96xf16>, tensor<96xf32> -> tensor<?x96xf32>
// CHECK-NEXT:    func.return %o
func.func @rms_k96_gamma_first(%x: tensor<?x96xf16>, %g: tensor<96xf32>) -> tensor<?x96xf32> {
  %xf = pto.cast %x none : tensor<?x96xf16> -> tensor<?x96xf32>
  %sq = pto.mul %xf, %xf : tensor<?x96xf32>, tensor<?x96xf32> -> tensor<?x96xf32>
  %s = pto.reduce sum %sq : tensor<?x96xf32> -> tensor<?x1xf32>
  %m = pto.muls %s, 0.0104166669 : tensor<?x1xf32> -> tensor<?x1xf32>
  %e = pto.adds %m, 1.0e-06 : tensor<?x1xf32> -> tensor<?x1xf32>
  %r = pto.rsqrt %e : tensor<?x1xf32> -> tensor<?x1xf32>
  %n = pto.mul %xf, %r : tensor<?x96xf32>, tensor<?x1xf32> -> tensor<?x96xf32>
  %o = pto.mul %g, %n : tensor<96xf32>, tensor<?x96xf32> -> tensor<?x96xf32>
  func.return %o : tensor<?x96xf32>
}

// -----

// A gamma reshaped from [1, K] and then cast: the [K] value behind it is the bf16
// reshape, which stays (rms_norm takes a [K] gamma; the reshape was there already).
// The bf16 [1, K] argument itself is not a gamma rms_norm takes.
// CHECK-LABEL: func.func @rms_gamma_reshape_then_cast
// CHECK-NEXT:    %gr = pto.reshape %g inplace : tensor<1x64xbf16> -> tensor<64xbf16>
// CHECK-NEXT:    %o = pto.rms_norm %x, %gr eps = 1.000000e-06 : tensor<?x64xbf16>, tensor<64xbf16> -> tensor<?x64xf32>
// CHECK-NEXT:    func.return %o
func.func @rms_gamma_reshape_then_cast(%x: tensor<?x64xbf16>, %g: tensor<1x64xbf16>) -> tensor<?x64xf32> {
  %xf = pto.cast %x none : tensor<?x64xbf16> -> tensor<?x64xf32>
  %sq = pto.mul %xf, %xf : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  %m = pto.reduce mean %sq : tensor<?x64xf32> -> tensor<?x1xf32>
  %e = pto.adds %m, 1.0e-06 : tensor<?x1xf32> -> tensor<?x1xf32>
  %r = pto.rsqrt %e : tensor<?x1xf32> -> tensor<?x1xf32>
  %n = pto.mul %xf, %r : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  %gr = pto.reshape %g inplace : tensor<1x64xbf16> -> tensor<64xbf16>
  %gf = pto.cast %gr none : tensor<64xbf16> -> tensor<64xf32>
  %o = pto.mul %n, %gf : tensor<?x64xf32>, tensor<64xf32> -> tensor<?x64xf32>
  func.return %o : tensor<?x64xf32>
}

// -----

// A [1, K] gamma argument has no [K] form: the norm is fused, the multiply stays.
// CHECK-LABEL: func.func @rms_gamma_1xk_argument
// CHECK-NEXT:    %n = pto.rms_norm %x eps = 1.000000e-06 : tensor<?x64xf32> -> tensor<?x64xf32>
// CHECK-NEXT:    %o = pto.mul %n, %g : tensor<?x64xf32>, tensor<1x64xf32> -> tensor<?x64xf32>
// CHECK-NEXT:    func.return %o
func.func @rms_gamma_1xk_argument(%x: tensor<?x64xf32>, %g: tensor<1x64xf32>) -> tensor<?x64xf32> {
  %sq = pto.mul %x, %x : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  %m = pto.reduce mean %sq : tensor<?x64xf32> -> tensor<?x1xf32>
  %e = pto.adds %m, 1.0e-06 : tensor<?x1xf32> -> tensor<?x1xf32>
  %r = pto.rsqrt %e : tensor<?x1xf32> -> tensor<?x1xf32>
  %n = pto.mul %x, %r : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  %o = pto.mul %n, %g : tensor<?x64xf32>, tensor<1x64xf32> -> tensor<?x64xf32>
  func.return %o : tensor<?x64xf32>
}

// -----

// The cast of x is also read by the matmul (as in hc_pre): it stays for the matmul,
// and the norm reads the bf16 x. The normalised value is read twice, so the gamma
// multiply is not absorbed.
// CHECK-LABEL: func.func @rms_cast_shared
// CHECK-NEXT:    %xf = pto.cast %x none
// CHECK-NEXT:    %y = pto.matmul %xf, %w
// CHECK-NEXT:    %n = pto.rms_norm %x eps = 1.000000e-06 : tensor<?x64xbf16> -> tensor<?x64xf32>
// CHECK-NEXT:    %o = pto.mul %n, %g
// CHECK-NEXT:    %a = pto.add %o, %n
// CHECK-NEXT:    %z = pto.add %a, %y
func.func @rms_cast_shared(%x: tensor<?x64xbf16>, %w: tensor<64x64xf32>, %g: tensor<64xf32>) -> tensor<?x64xf32> {
  %xf = pto.cast %x none : tensor<?x64xbf16> -> tensor<?x64xf32>
  %y = pto.matmul %xf, %w : tensor<?x64xf32>, tensor<64x64xf32> -> tensor<?x64xf32>
  %sq = pto.mul %xf, %xf : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  %m = pto.reduce mean %sq : tensor<?x64xf32> -> tensor<?x1xf32>
  %e = pto.adds %m, 1.0e-06 : tensor<?x1xf32> -> tensor<?x1xf32>
  %r = pto.rsqrt %e : tensor<?x1xf32> -> tensor<?x1xf32>
  %n = pto.mul %xf, %r : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  %o = pto.mul %n, %g : tensor<?x64xf32>, tensor<64xf32> -> tensor<?x64xf32>
  %a = pto.add %o, %n : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  %z = pto.add %a, %y : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  func.return %z : tensor<?x64xf32>
}

// -----

// A per-head norm over the last axis of a rank-3 tensor, gamma [1, 16] of a [16].
// CHECK-LABEL: func.func @rms_rank3
// CHECK-NEXT:    %o = pto.rms_norm %x, %g eps = 1.000000e-06 : tensor<?x4x16xf32>, tensor<16xf32> -> tensor<?x4x16xf32>
// CHECK-NEXT:    func.return %o
func.func @rms_rank3(%x: tensor<?x4x16xf32>, %g: tensor<16xf32>) -> tensor<?x4x16xf32> {
  %sq = pto.mul %x, %x : tensor<?x4x16xf32>, tensor<?x4x16xf32> -> tensor<?x4x16xf32>
  %s = pto.reduce sum %sq : tensor<?x4x16xf32> -> tensor<?x4x1xf32>
  %m = pto.muls %s, 0.0625 : tensor<?x4x1xf32> -> tensor<?x4x1xf32>
  %e = pto.adds %m, 1.0e-06 : tensor<?x4x1xf32> -> tensor<?x4x1xf32>
  %q = pto.sqrt %e : tensor<?x4x1xf32> -> tensor<?x4x1xf32>
  %n = pto.div %x, %q : tensor<?x4x16xf32>, tensor<?x4x1xf32> -> tensor<?x4x16xf32>
  %gr = pto.reshape %g inplace : tensor<16xf32> -> tensor<1x16xf32>
  %o = pto.mul %n, %gr : tensor<?x4x16xf32>, tensor<1x16xf32> -> tensor<?x4x16xf32>
  func.return %o : tensor<?x4x16xf32>
}

// -----

// x cast again at each use (a helper that casts the tile it is given, as PyPTO kernels
// write it): casts of one value alike hold the same values. The norm reads x, and
// every cast goes.
// CHECK-LABEL: func.func @rms_recast
// CHECK-NEXT:    %o = pto.rms_norm %x, %g eps = 1.000000e-06 : tensor<?x64xbf16>, tensor<64xf32> -> tensor<?x64xf32>
// CHECK-NEXT:    func.return %o
func.func @rms_recast(%x: tensor<?x64xbf16>, %g: tensor<64xf32>) -> tensor<?x64xf32> {
  %xa = pto.cast %x none : tensor<?x64xbf16> -> tensor<?x64xf32>
  %xb = pto.cast %x none : tensor<?x64xbf16> -> tensor<?x64xf32>
  %xc = pto.cast %x none : tensor<?x64xbf16> -> tensor<?x64xf32>
  %sq = pto.mul %xb, %xc : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  %s = pto.reduce sum %sq : tensor<?x64xf32> -> tensor<?x1xf32>
  %m = pto.muls %s, 0.015625 : tensor<?x1xf32> -> tensor<?x1xf32>
  %e = pto.adds %m, 1.0e-06 : tensor<?x1xf32> -> tensor<?x1xf32>
  %r = pto.rsqrt %e : tensor<?x1xf32> -> tensor<?x1xf32>
  %n = pto.mul %xa, %r : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  %o = pto.mul %n, %g : tensor<?x64xf32>, tensor<64xf32> -> tensor<?x64xf32>
  func.return %o : tensor<?x64xf32>
}

// -----

// x * reciprocal(sqrt(.)): 1 / sqrt(.), each step rounded, as rsqrt computes it: the
// rsqrt form.
// CHECK-LABEL: func.func @rms_reciprocal_sqrt
// CHECK-NEXT:    %n = pto.rms_norm %x eps = 1.000000e-06 : tensor<?x64xf32> -> tensor<?x64xf32>
// CHECK-NEXT:    func.return %n
func.func @rms_reciprocal_sqrt(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %sq = pto.mul %x, %x : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  %m = pto.reduce mean %sq : tensor<?x64xf32> -> tensor<?x1xf32>
  %e = pto.adds %m, 1.0e-06 : tensor<?x1xf32> -> tensor<?x1xf32>
  %q = pto.sqrt %e : tensor<?x1xf32> -> tensor<?x1xf32>
  %r = pto.reciprocal %q : tensor<?x1xf32> -> tensor<?x1xf32>
  %n = pto.mul %r, %x : tensor<?x1xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  func.return %n : tensor<?x64xf32>
}

// -----

// ================================================================ RMSNorm, negative

// 1/63 is not 1/K for K = 64.
// CHECK-LABEL: func.func @rms_wrong_scalar
// CHECK-NOT:     pto.rms_norm
// CHECK:         pto.muls %s, 0.015873
// CHECK:         pto.rsqrt
func.func @rms_wrong_scalar(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %sq = pto.mul %x, %x : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  %s = pto.reduce sum %sq : tensor<?x64xf32> -> tensor<?x1xf32>
  // expected-remark@+1 {{not fused into pto.rms_norm: expected a multiply by 1/64 = 0.015625, found 'pto.muls' 0.015873017}}
  %m = pto.muls %s, 0.015873016 : tensor<?x1xf32> -> tensor<?x1xf32>
  %e = pto.adds %m, 1.0e-06 : tensor<?x1xf32> -> tensor<?x1xf32>
  %r = pto.rsqrt %e : tensor<?x1xf32> -> tensor<?x1xf32>
  %n = pto.mul %x, %r : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  func.return %n : tensor<?x64xf32>
}

// -----

// The mean of squares is also returned: an intermediate with another use.
// CHECK-LABEL: func.func @rms_extra_use
// CHECK-NOT:     pto.rms_norm
// CHECK:         pto.reduce mean
// CHECK:         pto.rsqrt
// CHECK:         func.return %n, %m
func.func @rms_extra_use(%x: tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<?x1xf32>) {
  %sq = pto.mul %x, %x : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  // (a result of the kernel: said at the op, as the return has no line of its own in a traced kernel)
  // expected-remark@+1 {{expected the mean of squares ('pto.reduce mean', or 'pto.reduce sum' and a multiply by 1/K) read by the stage only, found it returned as a result of the kernel too}}
  %m = pto.reduce mean %sq : tensor<?x64xf32> -> tensor<?x1xf32>
  %e = pto.adds %m, 1.0e-06 : tensor<?x1xf32> -> tensor<?x1xf32>
  %r = pto.rsqrt %e : tensor<?x1xf32> -> tensor<?x1xf32>
  %n = pto.mul %x, %r : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  func.return %n, %m : tensor<?x64xf32>, tensor<?x1xf32>
}

// -----

// The norm of x divides y: the squares are of another value (hc_pre's form, with the
// divided value from a matmul there).
// CHECK-LABEL: func.func @rms_reduce_of_other
// CHECK-NOT:     pto.rms_norm
// CHECK:         pto.div %y, %q
func.func @rms_reduce_of_other(%x: tensor<?x64xf32>, %y: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %sq = pto.mul %x, %x : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  %m = pto.reduce mean %sq : tensor<?x64xf32> -> tensor<?x1xf32>
  %e = pto.adds %m, 1.0e-06 : tensor<?x1xf32> -> tensor<?x1xf32>
  %q = pto.sqrt %e : tensor<?x1xf32> -> tensor<?x1xf32>
  %n = pto.div %y, %q : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  func.return %n : tensor<?x64xf32>
}

// -----

// x * y squared: not a square.
// CHECK-LABEL: func.func @rms_not_a_square
// CHECK-NOT:     pto.rms_norm
// CHECK:         pto.mul %x, %y
func.func @rms_not_a_square(%x: tensor<?x64xf32>, %y: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %sq = pto.mul %x, %y : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  %m = pto.reduce mean %sq : tensor<?x64xf32> -> tensor<?x1xf32>
  %e = pto.adds %m, 1.0e-06 : tensor<?x1xf32> -> tensor<?x1xf32>
  %r = pto.rsqrt %e : tensor<?x1xf32> -> tensor<?x1xf32>
  %n = pto.mul %x, %r : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  func.return %n : tensor<?x64xf32>
}

// -----

// eps added after the root, and eps added to the squares before the mean.
// CHECK-LABEL: func.func @rms_eps_after_root
// CHECK-NOT:     pto.rms_norm
// CHECK:         pto.adds %q, 1.0
// CHECK-LABEL: func.func @rms_eps_before_mean
// CHECK-NOT:     pto.rms_norm
// CHECK:         pto.adds %sq, 1.0
func.func @rms_eps_after_root(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %sq = pto.mul %x, %x : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  %m = pto.reduce mean %sq : tensor<?x64xf32> -> tensor<?x1xf32>
  %q = pto.sqrt %m : tensor<?x1xf32> -> tensor<?x1xf32>
  // expected-remark@+1 {{expected x divided by sqrt(mean(x^2) + eps): a 'pto.sqrt', found 'pto.adds'}}
  %e = pto.adds %q, 1.0e-06 : tensor<?x1xf32> -> tensor<?x1xf32>
  %n = pto.div %x, %e : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  func.return %n : tensor<?x64xf32>
}
func.func @rms_eps_before_mean(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %sq = pto.mul %x, %x : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  %se = pto.adds %sq, 1.0e-06 : tensor<?x64xf32> -> tensor<?x64xf32>
  // expected-remark@+1 {{expected mean(x^2) + eps: a 'pto.adds' under the root, found 'pto.reduce'}}
  %m = pto.reduce mean %se : tensor<?x64xf32> -> tensor<?x1xf32>
  %q = pto.sqrt %m : tensor<?x1xf32> -> tensor<?x1xf32>
  %n = pto.div %x, %q : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  func.return %n : tensor<?x64xf32>
}

// -----

// An eps of 0 (rms_norm needs a positive one).
// CHECK-LABEL: func.func @rms_zero_eps
// CHECK-NOT:     pto.rms_norm
// CHECK:         pto.adds %m, 0.0
func.func @rms_zero_eps(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %sq = pto.mul %x, %x : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  %m = pto.reduce mean %sq : tensor<?x64xf32> -> tensor<?x1xf32>
  // expected-remark@+1 {{expected a 'pto.adds' of eps > 0, found 'pto.adds' 0.0}}
  %e = pto.adds %m, 0.0 : tensor<?x1xf32> -> tensor<?x1xf32>
  %r = pto.rsqrt %e : tensor<?x1xf32> -> tensor<?x1xf32>
  %n = pto.mul %x, %r : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  func.return %n : tensor<?x64xf32>
}

// -----

// Not the last axis: the mean over a row of 4 x 16 (1/64) reduced over 16 only, and
// a reduction of a reshaped square (the norm is then over groups of 16 of x's 64).
// CHECK-LABEL: func.func @rms_scalar_of_whole_row
// CHECK-NOT:     pto.rms_norm
// CHECK:         pto.muls %s, 1.562500e-02
// CHECK-LABEL: func.func @rms_reduce_of_reshape
// CHECK-NOT:     pto.rms_norm
// CHECK:         pto.reshape %sq
func.func @rms_scalar_of_whole_row(%x: tensor<?x4x16xf32>) -> tensor<?x4x16xf32> {
  %sq = pto.mul %x, %x : tensor<?x4x16xf32>, tensor<?x4x16xf32> -> tensor<?x4x16xf32>
  %s = pto.reduce sum %sq : tensor<?x4x16xf32> -> tensor<?x4x1xf32>
  // expected-remark@+1 {{expected a multiply by 1/16 = 0.0625, found 'pto.muls' 0.015625}}
  %m = pto.muls %s, 0.015625 : tensor<?x4x1xf32> -> tensor<?x4x1xf32>
  %e = pto.adds %m, 1.0e-06 : tensor<?x4x1xf32> -> tensor<?x4x1xf32>
  %r = pto.rsqrt %e : tensor<?x4x1xf32> -> tensor<?x4x1xf32>
  %n = pto.mul %x, %r : tensor<?x4x16xf32>, tensor<?x4x1xf32> -> tensor<?x4x16xf32>
  func.return %n : tensor<?x4x16xf32>
}
func.func @rms_reduce_of_reshape(%x: tensor<?x64xf32>, %h: tensor<?x4x16xf32>) -> tensor<?x4x16xf32> {
  %sq = pto.mul %x, %x : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  %sh = pto.reshape %sq inplace : tensor<?x64xf32> -> tensor<?x4x16xf32>
  %m = pto.reduce mean %sh : tensor<?x4x16xf32> -> tensor<?x4x1xf32>
  %e = pto.adds %m, 1.0e-06 : tensor<?x4x1xf32> -> tensor<?x4x1xf32>
  %r = pto.rsqrt %e : tensor<?x4x1xf32> -> tensor<?x4x1xf32>
  %n = pto.mul %h, %r : tensor<?x4x16xf32>, tensor<?x4x1xf32> -> tensor<?x4x16xf32>
  func.return %n : tensor<?x4x16xf32>
}

// -----

// gamma multiplied before the normalisation: (x * g) / sqrt(.) rounds differently from
// pto.rms_norm's (x / sqrt(.)) * g, so it is not fused (the ops run as written), with a
// remark at the gamma multiply. Also with rsqrt, x cast at each use.
// CHECK-LABEL: func.func @rms_gamma_first
// CHECK-NOT:     pto.rms_norm
// CHECK:         pto.div %xg, %q
// CHECK-LABEL: func.func @rms_gamma_first_rsqrt
// CHECK-NOT:     pto.rms_norm
// CHECK:         pto.mul %xg, %r
func.func @rms_gamma_first(%x: tensor<?x64xf32>, %g: tensor<64xf32>) -> tensor<?x64xf32> {
  // expected-remark@+1 {{not fused into pto.rms_norm: expected gamma multiplied after the normalisation, as pto.rms_norm does (normalising x * gamma rounds differently), found this multiply of x by gamma before it}}
  %xg = pto.mul %x, %g : tensor<?x64xf32>, tensor<64xf32> -> tensor<?x64xf32>
  %sq = pto.mul %x, %x : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  %m = pto.reduce mean %sq : tensor<?x64xf32> -> tensor<?x1xf32>
  %e = pto.adds %m, 1.0e-06 : tensor<?x1xf32> -> tensor<?x1xf32>
  %q = pto.sqrt %e : tensor<?x1xf32> -> tensor<?x1xf32>
  %n = pto.div %xg, %q : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  func.return %n : tensor<?x64xf32>
}
func.func @rms_gamma_first_rsqrt(%x: tensor<?x64xbf16>, %g: tensor<1x64xf32>) -> tensor<?x64xf32> {
  %xa = pto.cast %x none : tensor<?x64xbf16> -> tensor<?x64xf32>
  // expected-remark@+1 {{expected gamma multiplied after the normalisation}}
  %xg = pto.mul %xa, %g : tensor<?x64xf32>, tensor<1x64xf32> -> tensor<?x64xf32>
  %xb = pto.cast %x none : tensor<?x64xbf16> -> tensor<?x64xf32>
  %sq = pto.mul %xb, %xb : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  %s = pto.reduce sum %sq : tensor<?x64xf32> -> tensor<?x1xf32>
  %m = pto.muls %s, 0.015625 : tensor<?x1xf32> -> tensor<?x1xf32>
  %e = pto.adds %m, 1.0e-06 : tensor<?x1xf32> -> tensor<?x1xf32>
  %r = pto.rsqrt %e : tensor<?x1xf32> -> tensor<?x1xf32>
  %n = pto.mul %xg, %r : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  func.return %n : tensor<?x64xf32>
}

// -----

// The squares of a cast of another value: not x's mean square (casts are the same
// value only when they cast one value alike). No remark: the root divides a value
// other than the one squared, as hc_pre's does.
// CHECK-LABEL: func.func @rms_casts_of_two_values
// CHECK-NOT:     pto.rms_norm
// CHECK:         pto.mul %xa, %r
func.func @rms_casts_of_two_values(%x: tensor<?x64xbf16>, %y: tensor<?x64xbf16>) -> tensor<?x64xf32> {
  %xa = pto.cast %x none : tensor<?x64xbf16> -> tensor<?x64xf32>
  %yb = pto.cast %y none : tensor<?x64xbf16> -> tensor<?x64xf32>
  %sq = pto.mul %yb, %yb : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  %m = pto.reduce mean %sq : tensor<?x64xf32> -> tensor<?x1xf32>
  %e = pto.adds %m, 1.0e-06 : tensor<?x1xf32> -> tensor<?x1xf32>
  %r = pto.rsqrt %e : tensor<?x1xf32> -> tensor<?x1xf32>
  %n = pto.mul %xa, %r : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  func.return %n : tensor<?x64xf32>
}

// -----

// A dynamic K: rms_norm's 1/K and its lowering need a static one.
// CHECK-LABEL: func.func @rms_dynamic_k
// CHECK-NOT:     pto.rms_norm
func.func @rms_dynamic_k(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %sq = pto.mul %x, %x : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %m = pto.reduce mean %sq : tensor<?x?xf32> -> tensor<?x1xf32>
  %e = pto.adds %m, 1.0e-06 : tensor<?x1xf32> -> tensor<?x1xf32>
  %q = pto.sqrt %e : tensor<?x1xf32> -> tensor<?x1xf32>
  // expected-remark@+1 {{not fused into pto.rms_norm: expected a static last dim, found a dynamic one}}
  %n = pto.div %x, %q : tensor<?x?xf32>, tensor<?x1xf32> -> tensor<?x?xf32>
  func.return %n : tensor<?x?xf32>
}

// -----

// Math in bf16 rounds every step: not what rms_norm computes.
// CHECK-LABEL: func.func @rms_bf16_math
// CHECK-NOT:     pto.rms_norm
// CHECK:         pto.rsqrt
func.func @rms_bf16_math(%x: tensor<?x64xbf16>) -> tensor<?x64xbf16> {
  %sq = pto.mul %x, %x : tensor<?x64xbf16>, tensor<?x64xbf16> -> tensor<?x64xbf16>
  %m = pto.reduce mean %sq : tensor<?x64xbf16> -> tensor<?x1xbf16>
  %e = pto.adds %m, 1.0e-06 : tensor<?x1xbf16> -> tensor<?x1xbf16>
  %r = pto.rsqrt %e : tensor<?x1xbf16> -> tensor<?x1xbf16>
  // expected-remark@+1 {{expected the math in f32, as pto.rms_norm's, found bf16 math}}
  %n = pto.mul %x, %r : tensor<?x64xbf16>, tensor<?x1xbf16> -> tensor<?x64xbf16>
  func.return %n : tensor<?x64xbf16>
}

// ================================================================ dequant

// Both scales; the weight scale is an in-place reshape of an [N, 1] argument, which
// pto.dequant takes as it is. Hints move as for the norm.
// CHECK-LABEL: func.func @dequant_both
// CHECK-NEXT:    %b = pto.dequant %acc, %s, %ws {pto.label = "dq"} : tensor<?x256xi32>, tensor<?x1xf32>, tensor<256x1xf32> -> tensor<?x256xf32>
// CHECK-NEXT:    func.return %b
func.func @dequant_both(%acc: tensor<?x256xi32>, %s: tensor<?x1xf32>, %ws: tensor<256x1xf32>) -> tensor<?x256xf32> {
  %f = pto.cast %acc rint {pto.label = "dq"} : tensor<?x256xi32> -> tensor<?x256xf32>
  %a = pto.mul %f, %s : tensor<?x256xf32>, tensor<?x1xf32> -> tensor<?x256xf32>
  %wr = pto.reshape %ws inplace : tensor<256x1xf32> -> tensor<1x256xf32>
  %b = pto.mul %a, %wr : tensor<?x256xf32>, tensor<1x256xf32> -> tensor<?x256xf32>
  func.return %b : tensor<?x256xf32>
}

// -----

// Only the activation scale (first operand), and the weight scale [N] (first operand)
// and [1, N] arguments as they are.
// CHECK-LABEL: func.func @dequant_act_only
// CHECK-NEXT:    %a = pto.dequant %acc, %s : tensor<?x256xi32>, tensor<?x1xf32> -> tensor<?x256xf32>
// CHECK-NEXT:    func.return %a
// CHECK-LABEL: func.func @dequant_w_vector
// CHECK-NEXT:    %b = pto.dequant %acc, %s, %ws : tensor<?x256xi32>, tensor<?x1xf32>, tensor<256xf32> -> tensor<?x256xf32>
// CHECK-LABEL: func.func @dequant_w_row
// CHECK-NEXT:    %b = pto.dequant %acc, %s, %ws : tensor<?x256xi32>, tensor<?x1xf32>, tensor<1x256xf32> -> tensor<?x256xf32>
func.func @dequant_act_only(%acc: tensor<?x256xi32>, %s: tensor<?x1xf32>) -> tensor<?x256xf32> {
  %f = pto.cast %acc rint : tensor<?x256xi32> -> tensor<?x256xf32>
  %a = pto.mul %s, %f : tensor<?x1xf32>, tensor<?x256xf32> -> tensor<?x256xf32>
  func.return %a : tensor<?x256xf32>
}
func.func @dequant_w_vector(%acc: tensor<?x256xi32>, %s: tensor<?x1xf32>, %ws: tensor<256xf32>) -> tensor<?x256xf32> {
  %f = pto.cast %acc rint : tensor<?x256xi32> -> tensor<?x256xf32>
  %a = pto.mul %f, %s : tensor<?x256xf32>, tensor<?x1xf32> -> tensor<?x256xf32>
  %b = pto.mul %ws, %a : tensor<256xf32>, tensor<?x256xf32> -> tensor<?x256xf32>
  func.return %b : tensor<?x256xf32>
}
func.func @dequant_w_row(%acc: tensor<?x256xi32>, %s: tensor<?x1xf32>, %ws: tensor<1x256xf32>) -> tensor<?x256xf32> {
  %f = pto.cast %acc rint : tensor<?x256xi32> -> tensor<?x256xf32>
  %a = pto.mul %f, %s : tensor<?x256xf32>, tensor<?x1xf32> -> tensor<?x256xf32>
  %b = pto.mul %a, %ws : tensor<?x256xf32>, tensor<1x256xf32> -> tensor<?x256xf32>
  func.return %b : tensor<?x256xf32>
}

// -----

// An [N] weight scale reshaped to [1, N] that something else also reads: the dequant
// takes the [N] argument and the reshape stays for the other reader.
// CHECK-LABEL: func.func @dequant_reshape_shared
// CHECK-NEXT:    %wr = pto.reshape %ws inplace
// CHECK-NEXT:    %b = pto.dequant %acc, %s, %ws : tensor<?x256xi32>, tensor<?x1xf32>, tensor<256xf32> -> tensor<?x256xf32>
// CHECK-NEXT:    %c = pto.mul %b, %wr
func.func @dequant_reshape_shared(%acc: tensor<?x256xi32>, %s: tensor<?x1xf32>, %ws: tensor<256xf32>) -> tensor<?x256xf32> {
  %f = pto.cast %acc rint : tensor<?x256xi32> -> tensor<?x256xf32>
  %a = pto.mul %f, %s : tensor<?x256xf32>, tensor<?x1xf32> -> tensor<?x256xf32>
  %wr = pto.reshape %ws inplace : tensor<256xf32> -> tensor<1x256xf32>
  %b = pto.mul %a, %wr : tensor<?x256xf32>, tensor<1x256xf32> -> tensor<?x256xf32>
  %c = pto.mul %b, %wr : tensor<?x256xf32>, tensor<1x256xf32> -> tensor<?x256xf32>
  func.return %c : tensor<?x256xf32>
}

// -----

// The weight scale first, in either operand order, [1, N] or an [N, 1] reshaped in
// place: the dequant keeps that order (w_scale_first), as the products round
// differently in the other.
// CHECK-LABEL: func.func @dequant_w_first
// CHECK-NEXT:    %b = pto.dequant %acc, %s, %ws w_scale_first : tensor<?x256xi32>, tensor<?x1xf32>, tensor<1x256xf32> -> tensor<?x256xf32>
// CHECK-NEXT:    func.return %b
// CHECK-LABEL: func.func @dequant_w_first_swapped
// CHECK-NEXT:    %b = pto.dequant %acc, %s, %ws w_scale_first : tensor<?x256xi32>, tensor<?x1xf32>, tensor<256x1xf32> -> tensor<?x256xf32>
// CHECK-NEXT:    func.return %b
func.func @dequant_w_first(%acc: tensor<?x256xi32>, %s: tensor<?x1xf32>, %ws: tensor<1x256xf32>) -> tensor<?x256xf32> {
  %f = pto.cast %acc rint : tensor<?x256xi32> -> tensor<?x256xf32>
  %a = pto.mul %f, %ws : tensor<?x256xf32>, tensor<1x256xf32> -> tensor<?x256xf32>
  %b = pto.mul %a, %s : tensor<?x256xf32>, tensor<?x1xf32> -> tensor<?x256xf32>
  func.return %b : tensor<?x256xf32>
}
func.func @dequant_w_first_swapped(%acc: tensor<?x256xi32>, %s: tensor<?x1xf32>, %ws: tensor<256x1xf32>) -> tensor<?x256xf32> {
  %f = pto.cast %acc rint : tensor<?x256xi32> -> tensor<?x256xf32>
  %wr = pto.reshape %ws inplace : tensor<256x1xf32> -> tensor<1x256xf32>
  %a = pto.mul %wr, %f : tensor<1x256xf32>, tensor<?x256xf32> -> tensor<?x256xf32>
  %b = pto.mul %s, %a : tensor<?x1xf32>, tensor<?x256xf32> -> tensor<?x256xf32>
  func.return %b : tensor<?x256xf32>
}

// -----

// Not a dequant: a cast that truncates, a cast read twice, a per-token scale of the
// wrong shape (no remarks: the accumulators are arguments, not an int8 matmul's).
// CHECK-LABEL: func.func @dequant_trunc
// CHECK-NOT:     pto.dequant
// CHECK:         pto.cast %acc trunc
// CHECK-LABEL: func.func @dequant_cast_shared
// CHECK-NOT:     pto.dequant
// CHECK:         func.return %a, %f
// CHECK-LABEL: func.func @dequant_scale_shape
// CHECK-NOT:     pto.dequant
// CHECK:         pto.mul %f, %s
func.func @dequant_trunc(%acc: tensor<?x256xi32>, %s: tensor<?x1xf32>) -> tensor<?x256xf32> {
  %f = pto.cast %acc trunc : tensor<?x256xi32> -> tensor<?x256xf32>
  %a = pto.mul %f, %s : tensor<?x256xf32>, tensor<?x1xf32> -> tensor<?x256xf32>
  func.return %a : tensor<?x256xf32>
}
func.func @dequant_cast_shared(%acc: tensor<?x256xi32>, %s: tensor<?x1xf32>) -> (tensor<?x256xf32>, tensor<?x256xf32>) {
  %f = pto.cast %acc rint : tensor<?x256xi32> -> tensor<?x256xf32>
  %a = pto.mul %f, %s : tensor<?x256xf32>, tensor<?x1xf32> -> tensor<?x256xf32>
  func.return %a, %f : tensor<?x256xf32>, tensor<?x256xf32>
}
func.func @dequant_scale_shape(%acc: tensor<?x256xi32>, %s: tensor<?x256xf32>) -> tensor<?x256xf32> {
  %f = pto.cast %acc rint : tensor<?x256xi32> -> tensor<?x256xf32>
  %a = pto.mul %f, %s : tensor<?x256xf32>, tensor<?x256xf32> -> tensor<?x256xf32>
  func.return %a : tensor<?x256xf32>
}

// -----

// The scales multiplied together first (their product rounds): pto.dequant keeps that
// order (scales_product). Not as pto.dequant computes it: a truncating cast, the f32
// accumulator read twice, a second weight scale where the activation scale should
// follow. A remark at the op that broke the match (pto-classify-skeleton then refuses
// the int8 matmul without a dequant).
// CHECK-LABEL: func.func @dequant_scales_product
// CHECK:         pto.dequant %acc, %s, %ws scales_product : tensor<?x256xi32>, tensor<?x1xf32>, tensor<1x256xf32> -> tensor<?x256xf32>
// CHECK-LABEL: func.func @dequant_trunc_of_matmul
// CHECK-NOT:     pto.dequant
// CHECK-LABEL: func.func @dequant_acc_read_twice
// CHECK-NOT:     pto.dequant
// CHECK-LABEL: func.func @dequant_two_weight_scales
// CHECK-NOT:     pto.dequant
func.func @dequant_scales_product(%q: tensor<?x64xi8>, %w: tensor<256x64xi8>, %s: tensor<?x1xf32>, %ws: tensor<1x256xf32>) -> tensor<?x256xf32> {
  %acc = pto.matmul %q, %w b_trans : tensor<?x64xi8>, tensor<256x64xi8> -> tensor<?x256xi32>
  %f = pto.cast %acc rint : tensor<?x256xi32> -> tensor<?x256xf32>
  %sw = pto.mul %s, %ws : tensor<?x1xf32>, tensor<1x256xf32> -> tensor<?x256xf32>
  %d = pto.mul %f, %sw : tensor<?x256xf32>, tensor<?x256xf32> -> tensor<?x256xf32>
  func.return %d : tensor<?x256xf32>
}
func.func @dequant_trunc_of_matmul(%q: tensor<?x64xi8>, %w: tensor<256x64xi8>, %s: tensor<?x1xf32>) -> tensor<?x256xf32> {
  %acc = pto.matmul %q, %w b_trans : tensor<?x64xi8>, tensor<256x64xi8> -> tensor<?x256xi32>
  // expected-remark@+1 {{not fused into pto.dequant: expected a 'rint' cast of the i32 accumulator to f32, found a 'trunc' cast}}
  %f = pto.cast %acc trunc : tensor<?x256xi32> -> tensor<?x256xf32>
  %d = pto.mul %f, %s : tensor<?x256xf32>, tensor<?x1xf32> -> tensor<?x256xf32>
  func.return %d : tensor<?x256xf32>
}
func.func @dequant_acc_read_twice(%q: tensor<?x64xi8>, %w: tensor<256x64xi8>, %s: tensor<?x1xf32>) -> (tensor<?x256xf32>, tensor<?x256xf32>) {
  %acc = pto.matmul %q, %w b_trans : tensor<?x64xi8>, tensor<256x64xi8> -> tensor<?x256xi32>
  %f = pto.cast %acc rint : tensor<?x256xi32> -> tensor<?x256xf32>
  %d = pto.mul %f, %s : tensor<?x256xf32>, tensor<?x1xf32> -> tensor<?x256xf32>
  // expected-remark@+1 {{not fused into pto.dequant: expected a multiply by the [M, 1] activation scale, the only reader, found 'func.return' reading it too}}
  func.return %d, %f : tensor<?x256xf32>, tensor<?x256xf32>
}
func.func @dequant_two_weight_scales(%q: tensor<?x64xi8>, %w: tensor<256x64xi8>, %ws: tensor<1x256xf32>, %ws2: tensor<256xf32>) -> tensor<?x256xf32> {
  %acc = pto.matmul %q, %w b_trans : tensor<?x64xi8>, tensor<256x64xi8> -> tensor<?x256xi32>
  %f = pto.cast %acc rint : tensor<?x256xi32> -> tensor<?x256xf32>
  %a = pto.mul %f, %ws : tensor<?x256xf32>, tensor<1x256xf32> -> tensor<?x256xf32>
  // expected-remark@+1 {{not fused into pto.dequant: expected the [M, 1] activation scale multiplied in after the weight scale, found 'pto.mul' by a tensor<256xf32>}}
  %b = pto.mul %a, %ws2 : tensor<?x256xf32>, tensor<256xf32> -> tensor<?x256xf32>
  func.return %b : tensor<?x256xf32>
}

// ================================================================ quant

// absmax, (y / amax) * 127, the three casts; the scale's readers get pto.quant's scale.
// The quotient keeps the order written (each f32 step rounds).
// CHECK-LABEL: func.func @quant_absmax
// CHECK-NEXT:    %q, %s = pto.quant %y order "divide_first" {pto.label = "Query-Quant"} : tensor<?x128xf32> -> tensor<?x128xi8>, tensor<?x1xf32>
// CHECK-NEXT:    func.return %q, %s
func.func @quant_absmax(%y: tensor<?x128xf32>) -> (tensor<?x128xi8>, tensor<?x1xf32>) {
  %am = pto.reduce absmax %y {pto.label = "Query-Quant"} : tensor<?x128xf32> -> tensor<?x1xf32>
  %s = pto.muls %am, 0.00787401571 : tensor<?x1xf32> -> tensor<?x1xf32>
  %d = pto.div %y, %am : tensor<?x128xf32>, tensor<?x1xf32> -> tensor<?x128xf32>
  %yq = pto.muls %d, 127.0 : tensor<?x128xf32> -> tensor<?x128xf32>
  %i = pto.cast %yq rint : tensor<?x128xf32> -> tensor<?x128xi32>
  %h = pto.cast %i round : tensor<?x128xi32> -> tensor<?x128xf16>
  %q = pto.cast %h trunc sat : tensor<?x128xf16> -> tensor<?x128xi8>
  func.return %q, %s : tensor<?x128xi8>, tensor<?x1xf32>
}

// -----

// max of abs, y * 127 / amax, the scale computed after the casts; the fused op goes
// where the first op of the chain was. The i32 -> f16 cast in any mode (a cast written
// without one is 'rint'): int8 codes are exact in f16.
// CHECK-LABEL: func.func @quant_max_abs
// CHECK-NEXT:    %y = pto.add %a, %b
// CHECK-NEXT:    %q, %s = pto.quant %y : tensor<?x128xf32> -> tensor<?x128xi8>, tensor<?x1xf32>
// CHECK-NEXT:    func.return %q, %s
func.func @quant_max_abs(%a: tensor<?x128xf32>, %b: tensor<?x128xf32>) -> (tensor<?x128xi8>, tensor<?x1xf32>) {
  %y = pto.add %a, %b : tensor<?x128xf32>, tensor<?x128xf32> -> tensor<?x128xf32>
  %m = pto.muls %y, 127.0 : tensor<?x128xf32> -> tensor<?x128xf32>
  %ab = pto.abs %y : tensor<?x128xf32> -> tensor<?x128xf32>
  %am = pto.reduce max %ab : tensor<?x128xf32> -> tensor<?x1xf32>
  %yq = pto.div %m, %am : tensor<?x128xf32>, tensor<?x1xf32> -> tensor<?x128xf32>
  %i = pto.cast %yq rint sat : tensor<?x128xf32> -> tensor<?x128xi32>
  %h = pto.cast %i rint : tensor<?x128xi32> -> tensor<?x128xf16>
  %q = pto.cast %h trunc sat : tensor<?x128xf16> -> tensor<?x128xi8>
  %s = pto.muls %am, 0.00787401571 : tensor<?x1xf32> -> tensor<?x1xf32>
  func.return %q, %s : tensor<?x128xi8>, tensor<?x1xf32>
}

// -----

// max(|y|) computed twice (a helper called for the division and again for the scale):
// an exact repeat, so one quant, and both computations go.
// CHECK-LABEL: func.func @quant_amax_twice
// CHECK-NEXT:    %q, %s = pto.quant %y : tensor<?x128xf32> -> tensor<?x128xi8>, tensor<?x1xf32>
// CHECK-NEXT:    func.return %q, %s
func.func @quant_amax_twice(%y: tensor<?x128xf32>) -> (tensor<?x128xi8>, tensor<?x1xf32>) {
  %m = pto.muls %y, 127.0 : tensor<?x128xf32> -> tensor<?x128xf32>
  %ab = pto.abs %y : tensor<?x128xf32> -> tensor<?x128xf32>
  %am = pto.reduce max %ab : tensor<?x128xf32> -> tensor<?x1xf32>
  %yq = pto.div %m, %am : tensor<?x128xf32>, tensor<?x1xf32> -> tensor<?x128xf32>
  %am2 = pto.reduce absmax %y : tensor<?x128xf32> -> tensor<?x1xf32>
  %s = pto.muls %am2, 0.00787401571 : tensor<?x1xf32> -> tensor<?x1xf32>
  %i = pto.cast %yq rint : tensor<?x128xf32> -> tensor<?x128xi32>
  %h = pto.cast %i round : tensor<?x128xi32> -> tensor<?x128xf16>
  %q = pto.cast %h trunc sat : tensor<?x128xf16> -> tensor<?x128xi8>
  func.return %q, %s : tensor<?x128xi8>, tensor<?x1xf32>
}

// -----

// y * (reciprocal(amax) * 127) rounds (1 / amax) * 127 before the multiply: its order.
// y / (amax / 127) rounds differently from y * 127 / amax: not fused.
// No scale at all: the quant needs amax / 127 for the dequant.
// CHECK-LABEL: func.func @quant_reciprocal_scale
// CHECK-NEXT:    %q, %s = pto.quant %y order "reciprocal_scale_first" : tensor<?x128xf32> -> tensor<?x128xi8>, tensor<?x1xf32>
// CHECK-LABEL: func.func @quant_scale_first
// CHECK-NEXT:    %q, %s = pto.quant %y order "scale_first" : tensor<?x128xf32> -> tensor<?x128xi8>, tensor<?x1xf32>
// CHECK-LABEL: func.func @quant_reciprocal_first
// CHECK-NEXT:    %q, %s = pto.quant %y order "reciprocal_first" : tensor<?x128xf32> -> tensor<?x128xi8>, tensor<?x1xf32>
// CHECK-LABEL: func.func @quant_divided_by_scale
// CHECK-NOT:     pto.quant
// CHECK-LABEL: func.func @quant_no_scale
// CHECK-NOT:     pto.quant
func.func @quant_reciprocal_scale(%y: tensor<?x128xf32>) -> (tensor<?x128xi8>, tensor<?x1xf32>) {
  %am = pto.reduce absmax %y : tensor<?x128xf32> -> tensor<?x1xf32>
  %s = pto.muls %am, 0.00787401571 : tensor<?x1xf32> -> tensor<?x1xf32>
  %r = pto.reciprocal %am : tensor<?x1xf32> -> tensor<?x1xf32>
  %r127 = pto.muls %r, 127.0 : tensor<?x1xf32> -> tensor<?x1xf32>
  %yq = pto.mul %y, %r127 : tensor<?x128xf32>, tensor<?x1xf32> -> tensor<?x128xf32>
  %i = pto.cast %yq rint : tensor<?x128xf32> -> tensor<?x128xi32>
  %h = pto.cast %i round : tensor<?x128xi32> -> tensor<?x128xf16>
  %q = pto.cast %h trunc sat : tensor<?x128xf16> -> tensor<?x128xi8>
  func.return %q, %s : tensor<?x128xi8>, tensor<?x1xf32>
}
// y * (127 / amax) (GLM-4.5's `full(127) / amax` first) and y * (1 / amax) * 127: fused,
// each with its order.
func.func @quant_scale_first(%y: tensor<?x128xf32>) -> (tensor<?x128xi8>, tensor<?x1xf32>) {
  %am = pto.reduce absmax %y : tensor<?x128xf32> -> tensor<?x1xf32>
  %s = pto.muls %am, 0.00787401571 : tensor<?x1xf32> -> tensor<?x1xf32>
  %r = pto.rdivs %am, 127.0 : tensor<?x1xf32> -> tensor<?x1xf32>
  %yq = pto.mul %y, %r : tensor<?x128xf32>, tensor<?x1xf32> -> tensor<?x128xf32>
  %i = pto.cast %yq rint : tensor<?x128xf32> -> tensor<?x128xi32>
  %h = pto.cast %i round : tensor<?x128xi32> -> tensor<?x128xf16>
  %q = pto.cast %h trunc sat : tensor<?x128xf16> -> tensor<?x128xi8>
  func.return %q, %s : tensor<?x128xi8>, tensor<?x1xf32>
}
func.func @quant_reciprocal_first(%y: tensor<?x128xf32>) -> (tensor<?x128xi8>, tensor<?x1xf32>) {
  %am = pto.reduce absmax %y : tensor<?x128xf32> -> tensor<?x1xf32>
  %s = pto.muls %am, 0.00787401571 : tensor<?x1xf32> -> tensor<?x1xf32>
  %r = pto.reciprocal %am : tensor<?x1xf32> -> tensor<?x1xf32>
  %yr = pto.mul %r, %y : tensor<?x1xf32>, tensor<?x128xf32> -> tensor<?x128xf32>
  %yq = pto.muls %yr, 127.0 : tensor<?x128xf32> -> tensor<?x128xf32>
  %i = pto.cast %yq rint : tensor<?x128xf32> -> tensor<?x128xi32>
  %h = pto.cast %i round : tensor<?x128xi32> -> tensor<?x128xf16>
  %q = pto.cast %h trunc sat : tensor<?x128xf16> -> tensor<?x128xi8>
  func.return %q, %s : tensor<?x128xi8>, tensor<?x1xf32>
}
func.func @quant_times_another_value(%y: tensor<?x128xf32>) -> (tensor<?x128xi8>, tensor<?x1xf32>) {
  %am = pto.reduce absmax %y : tensor<?x128xf32> -> tensor<?x1xf32>
  %s = pto.muls %am, 0.00787401571 : tensor<?x1xf32> -> tensor<?x1xf32>
  %e = pto.exp %am : tensor<?x1xf32> -> tensor<?x1xf32>
  // expected-remark@+1 {{not fused into pto.quant: expected y * (127 / amax), found a multiply by another value}}
  %yq = pto.mul %y, %e : tensor<?x128xf32>, tensor<?x1xf32> -> tensor<?x128xf32>
  %i = pto.cast %yq rint : tensor<?x128xf32> -> tensor<?x128xi32>
  %h = pto.cast %i round : tensor<?x128xi32> -> tensor<?x128xf16>
  %q = pto.cast %h trunc sat : tensor<?x128xf16> -> tensor<?x128xi8>
  func.return %q, %s : tensor<?x128xi8>, tensor<?x1xf32>
}
func.func @quant_divided_by_scale(%y: tensor<?x128xf32>) -> (tensor<?x128xi8>, tensor<?x1xf32>) {
  %am = pto.reduce absmax %y : tensor<?x128xf32> -> tensor<?x1xf32>
  %s = pto.muls %am, 0.00787401571 : tensor<?x1xf32> -> tensor<?x1xf32>
  // expected-remark@+1 {{not fused into pto.quant: expected y * 127 / amax (or y / amax * 127, y * (127 / amax)), found y divided by the scale amax * 1/127}}
  %yq = pto.div %y, %s : tensor<?x128xf32>, tensor<?x1xf32> -> tensor<?x128xf32>
  %i = pto.cast %yq rint : tensor<?x128xf32> -> tensor<?x128xi32>
  %h = pto.cast %i round : tensor<?x128xi32> -> tensor<?x128xf16>
  %q = pto.cast %h trunc sat : tensor<?x128xf16> -> tensor<?x128xi8>
  func.return %q, %s : tensor<?x128xi8>, tensor<?x1xf32>
}
func.func @quant_no_scale(%y: tensor<?x128xf32>) -> tensor<?x128xi8> {
  %am = pto.reduce absmax %y : tensor<?x128xf32> -> tensor<?x1xf32>
  %m = pto.muls %y, 127.0 : tensor<?x128xf32> -> tensor<?x128xf32>
  // expected-remark@+1 {{not fused into pto.quant: expected the scale amax * 1/127 (amax / 127) beside y / amax, found no scale}}
  %yq = pto.div %m, %am : tensor<?x128xf32>, tensor<?x1xf32> -> tensor<?x128xf32>
  %i = pto.cast %yq rint : tensor<?x128xf32> -> tensor<?x128xi32>
  %h = pto.cast %i round : tensor<?x128xi32> -> tensor<?x128xf16>
  %q = pto.cast %h trunc sat : tensor<?x128xf16> -> tensor<?x128xi8>
  func.return %q : tensor<?x128xi8>
}

// -----

// Not the AT-11 quant: a scale of 1/128, a factor of 128, the i32 cast rounding ties
// away from zero, amax read a third time, a max without abs. Without saturation (DeepSeek's own
// quant) it is: pto.quant wrap.
// CHECK-LABEL: func.func @quant_scale_128
// CHECK-NOT:     pto.quant
// CHECK:         pto.muls %am, 7.812500e-03
// CHECK-LABEL: func.func @quant_factor_128
// CHECK-NOT:     pto.quant
// CHECK:         pto.muls %d, 1.280000e+02
// CHECK-LABEL: func.func @quant_round_i32
// CHECK-NOT:     pto.quant
// CHECK:         pto.cast %yq round
// CHECK-LABEL: func.func @quant_no_sat
// CHECK-NEXT:    %q, %s = pto.quant %y wrap order "divide_first" : tensor<?x128xf32> -> tensor<?x128xi8>, tensor<?x1xf32>
// CHECK-NEXT:    func.return %q, %s
// CHECK-LABEL: func.func @quant_amax_shared
// CHECK-NOT:     pto.quant
// CHECK:         func.return %q, %s, %am
// CHECK-LABEL: func.func @quant_max_no_abs
// CHECK-NOT:     pto.quant
// CHECK:         pto.reduce max %y
func.func @quant_scale_128(%y: tensor<?x128xf32>) -> (tensor<?x128xi8>, tensor<?x1xf32>) {
  %am = pto.reduce absmax %y : tensor<?x128xf32> -> tensor<?x1xf32>
  // expected-remark@+1 {{not fused into pto.quant: expected the scale amax * 1/127 (amax / 127), found 'pto.muls' 0.0078125}}
  %s = pto.muls %am, 0.0078125 : tensor<?x1xf32> -> tensor<?x1xf32>
  %d = pto.div %y, %am : tensor<?x128xf32>, tensor<?x1xf32> -> tensor<?x128xf32>
  %yq = pto.muls %d, 127.0 : tensor<?x128xf32> -> tensor<?x128xf32>
  %i = pto.cast %yq rint : tensor<?x128xf32> -> tensor<?x128xi32>
  %h = pto.cast %i round : tensor<?x128xi32> -> tensor<?x128xf16>
  %q = pto.cast %h trunc sat : tensor<?x128xf16> -> tensor<?x128xi8>
  func.return %q, %s : tensor<?x128xi8>, tensor<?x1xf32>
}
func.func @quant_factor_128(%y: tensor<?x128xf32>) -> (tensor<?x128xi8>, tensor<?x1xf32>) {
  %am = pto.reduce absmax %y : tensor<?x128xf32> -> tensor<?x1xf32>
  %s = pto.muls %am, 0.00787401571 : tensor<?x1xf32> -> tensor<?x1xf32>
  %d = pto.div %y, %am : tensor<?x128xf32>, tensor<?x1xf32> -> tensor<?x128xf32>
  // expected-remark@+1 {{expected a multiply by 127, found 'pto.muls' 128.0}}
  %yq = pto.muls %d, 128.0 : tensor<?x128xf32> -> tensor<?x128xf32>
  %i = pto.cast %yq rint : tensor<?x128xf32> -> tensor<?x128xi32>
  %h = pto.cast %i round : tensor<?x128xi32> -> tensor<?x128xf16>
  %q = pto.cast %h trunc sat : tensor<?x128xf16> -> tensor<?x128xi8>
  func.return %q, %s : tensor<?x128xi8>, tensor<?x1xf32>
}
func.func @quant_round_i32(%y: tensor<?x128xf32>) -> (tensor<?x128xi8>, tensor<?x1xf32>) {
  %am = pto.reduce absmax %y : tensor<?x128xf32> -> tensor<?x1xf32>
  %s = pto.muls %am, 0.00787401571 : tensor<?x1xf32> -> tensor<?x1xf32>
  %d = pto.div %y, %am : tensor<?x128xf32>, tensor<?x1xf32> -> tensor<?x128xf32>
  %yq = pto.muls %d, 127.0 : tensor<?x128xf32> -> tensor<?x128xf32>
  // expected-remark@+1 {{expected a 'rint' cast f32 -> i32, found a 'round' cast f32 -> i32}}
  %i = pto.cast %yq round : tensor<?x128xf32> -> tensor<?x128xi32>
  %h = pto.cast %i rint : tensor<?x128xi32> -> tensor<?x128xf16>
  %q = pto.cast %h trunc sat : tensor<?x128xf16> -> tensor<?x128xi8>
  func.return %q, %s : tensor<?x128xi8>, tensor<?x1xf32>
}
func.func @quant_no_sat(%y: tensor<?x128xf32>) -> (tensor<?x128xi8>, tensor<?x1xf32>) {
  %am = pto.reduce absmax %y : tensor<?x128xf32> -> tensor<?x1xf32>
  %s = pto.muls %am, 0.00787401571 : tensor<?x1xf32> -> tensor<?x1xf32>
  %d = pto.div %y, %am : tensor<?x128xf32>, tensor<?x1xf32> -> tensor<?x128xf32>
  %yq = pto.muls %d, 127.0 : tensor<?x128xf32> -> tensor<?x128xf32>
  %i = pto.cast %yq rint : tensor<?x128xf32> -> tensor<?x128xi32>
  %h = pto.cast %i round : tensor<?x128xi32> -> tensor<?x128xf16>
  %q = pto.cast %h trunc : tensor<?x128xf16> -> tensor<?x128xi8>
  func.return %q, %s : tensor<?x128xi8>, tensor<?x1xf32>
}
func.func @quant_amax_shared(%y: tensor<?x128xf32>) -> (tensor<?x128xi8>, tensor<?x1xf32>, tensor<?x1xf32>) {
  %am = pto.reduce absmax %y : tensor<?x128xf32> -> tensor<?x1xf32>
  %s = pto.muls %am, 0.00787401571 : tensor<?x1xf32> -> tensor<?x1xf32>
  %d = pto.div %y, %am : tensor<?x128xf32>, tensor<?x1xf32> -> tensor<?x128xf32>
  %yq = pto.muls %d, 127.0 : tensor<?x128xf32> -> tensor<?x128xf32>
  %i = pto.cast %yq rint : tensor<?x128xf32> -> tensor<?x128xi32>
  %h = pto.cast %i round : tensor<?x128xi32> -> tensor<?x128xf16>
  %q = pto.cast %h trunc sat : tensor<?x128xf16> -> tensor<?x128xi8>
  // expected-remark@+1 {{expected amax read by the division and the scale only, found 'func.return' reading it too}}
  func.return %q, %s, %am : tensor<?x128xi8>, tensor<?x1xf32>, tensor<?x1xf32>
}
func.func @quant_max_no_abs(%y: tensor<?x128xf32>) -> (tensor<?x128xi8>, tensor<?x1xf32>) {
  // expected-remark@+1 {{expected amax: 'pto.reduce absmax' of y, or 'pto.reduce max' of 'pto.abs' y, found the argument %y}}
  %am = pto.reduce max %y : tensor<?x128xf32> -> tensor<?x1xf32>
  %s = pto.muls %am, 0.00787401571 : tensor<?x1xf32> -> tensor<?x1xf32>
  %d = pto.div %y, %am : tensor<?x128xf32>, tensor<?x1xf32> -> tensor<?x128xf32>
  %yq = pto.muls %d, 127.0 : tensor<?x128xf32> -> tensor<?x128xf32>
  %i = pto.cast %yq rint : tensor<?x128xf32> -> tensor<?x128xi32>
  %h = pto.cast %i round : tensor<?x128xi32> -> tensor<?x128xf16>
  %q = pto.cast %h trunc sat : tensor<?x128xf16> -> tensor<?x128xi8>
  func.return %q, %s : tensor<?x128xi8>, tensor<?x1xf32>
}

// ================================================================ a whole AT-11 kernel

// RMSNorm, quant, int8 matmul and dequant all from primitives give the fused form of
// examples/indexer_query_linear_int8.mlir.
// CHECK-LABEL: func.func @at11
// CHECK-NEXT:    %n = pto.rms_norm %qr, %gamma eps = 1.000000e-06 {pto.label = "q-rmsnorm"} : tensor<?x64xbf16>, tensor<64xbf16> -> tensor<?x64xf32>
// CHECK-NEXT:    %q, %s = pto.quant %n {pto.label = "Query-Quant"} : tensor<?x64xf32> -> tensor<?x64xi8>, tensor<?x1xf32>
// CHECK-NEXT:    %acc = pto.matmul %q, %w b_trans
// CHECK-NEXT:    %d = pto.dequant %acc, %s, %w_scale {pto.label = "Query-Dequant"} : tensor<?x128xi32>, tensor<?x1xf32>, tensor<128x1xf32> -> tensor<?x128xf32>
// CHECK-NEXT:    %o = pto.cast %d rint
// CHECK-NEXT:    func.return %o
func.func @at11(%qr: tensor<?x64xbf16>, %gamma: tensor<64xbf16>, %w: tensor<128x64xi8>, %w_scale: tensor<128x1xf32>) -> tensor<?x128xbf16> {
  %xf = pto.cast %qr none {pto.label = "q-rmsnorm"} : tensor<?x64xbf16> -> tensor<?x64xf32>
  %sq = pto.mul %xf, %xf {pto.label = "q-rmsnorm"} : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  %ms = pto.reduce mean %sq {pto.label = "q-rmsnorm"} : tensor<?x64xf32> -> tensor<?x1xf32>
  %e = pto.adds %ms, 1.0e-06 {pto.label = "q-rmsnorm"} : tensor<?x1xf32> -> tensor<?x1xf32>
  %rt = pto.sqrt %e {pto.label = "q-rmsnorm"} : tensor<?x1xf32> -> tensor<?x1xf32>
  %nn = pto.div %xf, %rt {pto.label = "q-rmsnorm"} : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  %gf = pto.cast %gamma none : tensor<64xbf16> -> tensor<64xf32>
  %n = pto.mul %nn, %gf {pto.label = "q-rmsnorm"} : tensor<?x64xf32>, tensor<64xf32> -> tensor<?x64xf32>
  %am = pto.reduce absmax %n {pto.label = "Query-Quant"} : tensor<?x64xf32> -> tensor<?x1xf32>
  %s = pto.muls %am, 0.00787401571 {pto.label = "Query-Quant"} : tensor<?x1xf32> -> tensor<?x1xf32>
  %m127 = pto.muls %n, 127.0 {pto.label = "Query-Quant"} : tensor<?x64xf32> -> tensor<?x64xf32>
  %yq = pto.div %m127, %am {pto.label = "Query-Quant"} : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  %i = pto.cast %yq rint {pto.label = "Query-Quant"} : tensor<?x64xf32> -> tensor<?x64xi32>
  %h = pto.cast %i round {pto.label = "Query-Quant"} : tensor<?x64xi32> -> tensor<?x64xf16>
  %q = pto.cast %h trunc sat {pto.label = "Query-Quant"} : tensor<?x64xf16> -> tensor<?x64xi8>
  %acc = pto.matmul %q, %w b_trans {pto.label = "Query-Linear"} : tensor<?x64xi8>, tensor<128x64xi8> -> tensor<?x128xi32>
  %f = pto.cast %acc rint {pto.label = "Query-Dequant"} : tensor<?x128xi32> -> tensor<?x128xf32>
  %a = pto.mul %f, %s {pto.label = "Query-Dequant"} : tensor<?x128xf32>, tensor<?x1xf32> -> tensor<?x128xf32>
  %wr = pto.reshape %w_scale inplace : tensor<128x1xf32> -> tensor<1x128xf32>
  %d = pto.mul %a, %wr {pto.label = "Query-Dequant"} : tensor<?x128xf32>, tensor<1x128xf32> -> tensor<?x128xf32>
  %o = pto.cast %d rint : tensor<?x128xf32> -> tensor<?x128xbf16>
  func.return %o : tensor<?x128xbf16>
}

// -----

// rms_norm without gamma, then a multiply by the gamma (reshaped in place and cast
// before the loop, as mla_prolog writes it): the gamma goes into the rms_norm.
// CHECK-LABEL: func.func @rms_then_gamma
// CHECK-NEXT:    %o = pto.rms_norm %x, %g eps = 1.000000e-06 : tensor<?x64xf32>, tensor<64xbf16> -> tensor<?x64xf32>
// CHECK-NEXT:    func.return %o
func.func @rms_then_gamma(%x: tensor<?x64xf32>, %g: tensor<64xbf16>) -> tensor<?x64xf32> {
  %g2 = pto.reshape %g inplace : tensor<64xbf16> -> tensor<1x64xbf16>
  %gf = pto.cast %g2 none : tensor<1x64xbf16> -> tensor<1x64xf32>
  %n = pto.rms_norm %x eps = 1.0e-06 : tensor<?x64xf32> -> tensor<?x64xf32>
  %o = pto.mul %n, %gf : tensor<?x64xf32>, tensor<1x64xf32> -> tensor<?x64xf32>
  func.return %o : tensor<?x64xf32>
}

// -----

// A static quant (GLM-4.5's: y * scale + offset, a constant per channel, no amax) is no
// quant attempt: no remark, nothing fused (--verify-diagnostics fails on a remark).
// CHECK-LABEL: func.func @static_quant_no_remark
// CHECK-NOT:     pto.quant
// CHECK:         pto.cast %h rint sat
func.func @static_quant_no_remark(%y: tensor<?x128xf32>, %s: tensor<1x128xf32>, %o: tensor<1x128xf32>) -> tensor<?x128xi8> {
  %m = pto.mul %y, %s : tensor<?x128xf32>, tensor<1x128xf32> -> tensor<?x128xf32>
  %a = pto.add %m, %o : tensor<?x128xf32>, tensor<1x128xf32> -> tensor<?x128xf32>
  %i = pto.cast %a rint : tensor<?x128xf32> -> tensor<?x128xi32>
  %h = pto.cast %i round : tensor<?x128xi32> -> tensor<?x128xf16>
  %q = pto.cast %h rint sat : tensor<?x128xf16> -> tensor<?x128xi8>
  func.return %q : tensor<?x128xi8>
}

// -----

// A matmul's fixpipe dequant (PyPTO's extend_params scale and ReLU): the i32 result's f32
// cast, a ReLU, one number; no AT-11 dequant attempt, so no remark and nothing fused.
// CHECK-LABEL: func.func @fixpipe_dequant_no_remark
// CHECK-NOT:     pto.dequant
// CHECK:         pto.muls %r, 3.750000e-01
func.func @fixpipe_dequant_no_remark(%q: tensor<?x64xi8>, %w: tensor<64x64xi8>) -> tensor<?x64xf32> {
  %acc = pto.matmul %q, %w : tensor<?x64xi8>, tensor<64x64xi8> -> tensor<?x64xi32>
  %f = pto.cast %acc rint : tensor<?x64xi32> -> tensor<?x64xf32>
  %r = pto.maxs %f, 0.0 : tensor<?x64xf32> -> tensor<?x64xf32>
  %d = pto.muls %r, 0.375 : tensor<?x64xf32> -> tensor<?x64xf32>
  func.return %d : tensor<?x64xf32>
}
