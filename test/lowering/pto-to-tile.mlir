// RUN: pto-opt %s --split-input-file --verify-diagnostics -p pto-classify-skeleton,pto-to-tile | filecheck %s
// Every example stages into verified tile IR.
// RUN: pto-opt %S/../../examples/hc_pre.mlir -p pto-classify-skeleton,pto-to-tile | filecheck %s --check-prefix=HC
// RUN: pto-opt %S/../../examples/indexer_query_linear_int8.mlir -p pto-classify-skeleton,pto-to-tile | filecheck %s --check-prefix=INT8
// RUN: pto-opt %S/../../examples/mla_wqa_qrmsnorm.mlir -p pto-classify-skeleton,pto-to-tile | filecheck %s --check-prefix=CV
// RUN: pto-opt %S/../../examples/mla_wkv_rmsnorm.mlir -p pto-classify-skeleton,pto-to-tile | filecheck %s --check-prefix=CV

// The standard form: outputs become arguments, one token loop of one-row tiles, a
// vector stage then a cube stage that also holds the output cast; weights are loaded
// whole with their cache policy; user labels and tile hints carry over.
// CHECK-LABEL: func.func @standard(%x: tensor<?x64xbf16>, %g: tensor<64xbf16>, %w: tensor<32x64xbf16> {pto.cache = #pto.cache<none_cacheable>}, %out: tensor<?x32xbf16> {pto.output})
// CHECK-SAME: pto.form = #pto.form<standard>
// CHECK:      %c0 = arith.constant 0 : index
// CHECK-NEXT: %tokens = tensor.dim %x, %c0 : tensor<?x64xbf16>
// CHECK-NEXT: tile.token_loop %i = %c0 to %tokens step 1 {
// CHECK-NEXT:   %x_tile = tile.load %x[%i] : tensor<?x64xbf16> -> tensor<1x64xbf16>
// CHECK-NEXT:   %g_tile = tile.load %g : tensor<64xbf16> -> tensor<64xbf16>
// CHECK-NEXT:   %w_tile = tile.load %w cache none_cacheable : tensor<32x64xbf16> -> tensor<32x64xbf16>
// CHECK-NEXT:   %{{.*}} = tile.vec_stage "norm" tile [4, 64] -> (tensor<1x64xbf16>) {
// CHECK-NEXT:     %n = tile.rms_norm %x_tile, %g_tile eps = 1.000000e-06 : tensor<1x64xbf16>, tensor<64xbf16> -> tensor<1x64xf32>
// CHECK-NEXT:     %nb = tile.cast %n rint : tensor<1x64xf32> -> tensor<1x64xbf16>
// CHECK-NEXT:     tile.yield %nb : tensor<1x64xbf16>
// CHECK-NEXT:   }
// CHECK-NEXT:   %{{.*}} = tile.cube_stage "linear" tiles <m = [16, 16], k = [64, 64], n = [32, 32]> -> (tensor<1x32xbf16>) {
// CHECK-NEXT:     %y = tile.matmul %{{.*}}, %w_tile b_trans : tensor<1x64xbf16>, tensor<32x64xbf16> -> tensor<1x32xf32>
// CHECK-NEXT:     %o = tile.cast %y rint : tensor<1x32xf32> -> tensor<1x32xbf16>
// CHECK-NEXT:     tile.yield %o : tensor<1x32xbf16>
// CHECK-NEXT:   }
// CHECK-NEXT:   tile.store %{{.*}}, %out[%i] : tensor<1x32xbf16> -> tensor<?x32xbf16>
// CHECK-NEXT: }
// CHECK-NEXT: func.return
func.func @standard(%x: tensor<?x64xbf16>, %g: tensor<64xbf16>, %w: tensor<32x64xbf16> {pto.cache = #pto.cache<none_cacheable>}) -> tensor<?x32xbf16> {
  %n = pto.rms_norm %x, %g eps = 1.0e-06 {pto.label = "norm", pto.vec_tile = array<i64: 4, 64>} : tensor<?x64xbf16>, tensor<64xbf16> -> tensor<?x64xf32>
  %nb = pto.cast %n rint : tensor<?x64xf32> -> tensor<?x64xbf16>
  %y = pto.matmul %nb, %w b_trans {pto.cube_tile = #pto.cube_tile<m = [16, 16], k = [64, 64], n = [32, 32]>} : tensor<?x64xbf16>, tensor<32x64xbf16> -> tensor<?x32xf32>
  %o = pto.cast %y rint : tensor<?x32xf32> -> tensor<?x32xbf16>
  func.return %o : tensor<?x32xbf16>
}

// -----

// Without labels, stage labels come from their roles; two results, two outputs.
// CHECK-LABEL: func.func @roles(%x: tensor<?x64xf32>, %w: tensor<64x64xf32>, %out0: tensor<?x64xf32> {pto.output}, %out1: tensor<?x1xf32> {pto.output})
// CHECK: tile.cube_stage "linear"
// CHECK: tile.vec_stage "post-rmsnorm" -> (tensor<1x64xf32>, tensor<1x1xf32>)
// CHECK: tile.store %{{.*}}, %out0[%i]
// CHECK: tile.store %{{.*}}, %out1[%i]
func.func @roles(%x: tensor<?x64xf32>, %w: tensor<64x64xf32>) -> (tensor<?x64xf32>, tensor<?x1xf32>) {
  %y = pto.matmul %x, %w : tensor<?x64xf32>, tensor<64x64xf32> -> tensor<?x64xf32>
  %n = pto.rms_norm %y eps = 1.0e-06 : tensor<?x64xf32> -> tensor<?x64xf32>
  %s = pto.reduce max %n : tensor<?x64xf32> -> tensor<?x1xf32>
  func.return %n, %s : tensor<?x64xf32>, tensor<?x1xf32>
}

// HC: tile.vec_stage "pre" -> (tensor<1x16384xf32>)
// HC: tile.reshape %x_tile inplace : tensor<1x4x4096xbf16> -> tensor<1x16384xbf16>
// HC: tile.cube_stage "hc-linear"
// HC: tile.vec_stage "hc-norm"
// HC: tile.div
// INT8: tile.vec_stage "q-rmsnorm"
// INT8: tile.vec_stage "Query-Quant" -> (tensor<1x1024xi8>, tensor<1x1xf32>)
// INT8: tile.cube_stage "Query-Linear" tiles <m = [128, 128], k = [256, 1024], n = [256, 256]>
// INT8: tile.vec_stage "Query-Dequant"
// CV: tile.cube_stage
// CV: tile.vec_stage {{.*}}rmsnorm" tile

// -----

// expected-error@+1 {{only the token axis (dim 0) may be dynamic, got tensor<4x?xf32>}}
func.func @dyn_inner(%x: tensor<?x64xf32>, %w: tensor<64x64xf32>, %z: tensor<4x?xf32>) -> tensor<?x64xf32> {
  %y = pto.matmul %x, %w : tensor<?x64xf32>, tensor<64x64xf32> -> tensor<?x64xf32>
  func.return %y : tensor<?x64xf32>
}

// -----

// expected-error@+1 {{an SK-03 kernel needs a token axis: an argument with a dynamic dim 0}}
func.func @static(%x: tensor<8x64xf32>, %w: tensor<64x64xf32>) -> tensor<8x64xf32> {
  %y = pto.matmul %x, %w : tensor<8x64xf32>, tensor<64x64xf32> -> tensor<8x64xf32>
  func.return %y : tensor<8x64xf32>
}

// -----

// expected-error@+1 {{argument 'z' is tensor<?x0xf32>: only tensors of rank >= 1 with positive sizes lower}}
func.func @empty(%x: tensor<?x64xf32>, %w: tensor<64x64xf32>, %z: tensor<?x0xf32>) -> tensor<?x64xf32> {
  %y = pto.matmul %x, %w : tensor<?x64xf32>, tensor<64x64xf32> -> tensor<?x64xf32>
  func.return %y : tensor<?x64xf32>
}

// -----

func.func @weight_only(%x: tensor<?x64xf32>, %w: tensor<64x64xf32>) -> (tensor<?x64xf32>, tensor<64x64xf32>) {
  %y = pto.matmul %x, %w : tensor<?x64xf32>, tensor<64x64xf32> -> tensor<?x64xf32>
  %a = pto.abs %w : tensor<64x64xf32> -> tensor<64x64xf32>
  // expected-error@+1 {{result of type tensor<64x64xf32> does not depend on the token axis}}
  func.return %y, %a : tensor<?x64xf32>, tensor<64x64xf32>
}

// -----

// Weight-only work (a bias cast before the matmul, a gamma reshaped and cast) is done in
// each stage that reads it, as a weight view is: not staged on its own, whose static
// result would cross phases as a token tile. Work nothing reads is dropped.
// CHECK-LABEL: func.func @weight_only_work
// CHECK:         tile.vec_stage "rmsnorm"
// CHECK-NEXT:      %n = tile.rms_norm
// CHECK-NEXT:      %g1 = tile.reshape %g_tile : tensor<64xbf16> -> tensor<1x64xbf16>
// CHECK-NEXT:      %gf = tile.cast %g1 none : tensor<1x64xbf16> -> tensor<1x64xf32>
// CHECK-NEXT:      %m = tile.mul %n, %gf
// CHECK:         tile.cube_stage "linear"
// CHECK:         tile.vec_stage "post"
// CHECK-NEXT:      %bf = tile.cast %b_tile none : tensor<32xbf16> -> tensor<32xf32>
// CHECK-NEXT:      %o = tile.add %{{.*}}, %bf
// CHECK-NOT:     tile.abs
func.func @weight_only_work(%x: tensor<?x64xf32>, %g: tensor<64xbf16>, %w: tensor<32x64xf32>, %b: tensor<32xbf16>) -> tensor<?x32xf32> {
  %bf = pto.cast %b none : tensor<32xbf16> -> tensor<32xf32>
  %unused = pto.abs %w : tensor<32x64xf32> -> tensor<32x64xf32>
  %n = pto.rms_norm %x eps = 1.0e-06 : tensor<?x64xf32> -> tensor<?x64xf32>
  %g1 = pto.reshape %g : tensor<64xbf16> -> tensor<1x64xbf16>
  %gf = pto.cast %g1 none : tensor<1x64xbf16> -> tensor<1x64xf32>
  %m = pto.mul %n, %gf : tensor<?x64xf32>, tensor<1x64xf32> -> tensor<?x64xf32>
  %y = pto.matmul %m, %w b_trans : tensor<?x64xf32>, tensor<32x64xf32> -> tensor<?x32xf32>
  %o = pto.add %y, %bf : tensor<?x32xf32>, tensor<32xf32> -> tensor<?x32xf32>
  func.return %o : tensor<?x32xf32>
}

// -----

// Weight-only work that the matmul reads (W8A16's weight cast, here with a per-channel
// scale) is a weight stage before the loop, over whole loads of the weights it reads,
// with its own label and tile hint; the loop loads its result as the weight, with the
// weight's cache policy. A weight only the weight stage reads has no load in the loop.
// CHECK-LABEL: func.func @weight_only_work_for_the_matmul
// CHECK:      %tokens = tensor.dim
// CHECK-NEXT: %w_whole = tile.load %w : tensor<32x64xi8> -> tensor<32x64xi8>
// CHECK-NEXT: %s_whole = tile.load %s : tensor<32x1xf16> -> tensor<32x1xf16>
// CHECK-NEXT: %wb = tile.vec_stage "dq" tile [8, 64] -> (tensor<32x64xf16>) {
// CHECK-NEXT:   %wc = tile.cast %w_whole none : tensor<32x64xi8> -> tensor<32x64xf16>
// CHECK-NEXT:   %{{.*}} = tile.mul %wc, %s_whole
// CHECK-NEXT:   tile.yield
// CHECK-NEXT: }
// CHECK-NEXT: tile.token_loop
// CHECK-NEXT:   %wb_tile = tile.load %wb cache normal : tensor<32x64xf16> -> tensor<32x64xf16>
// CHECK-NEXT:   %x_tile = tile.load %x[%i]
// CHECK-NEXT:   tile.cube_stage "linear"
// CHECK-NEXT:     tile.matmul %x_tile, %wb_tile b_trans
func.func @weight_only_work_for_the_matmul(%x: tensor<?x64xf16>, %w: tensor<32x64xi8> {pto.cache = #pto.cache<normal>}, %s: tensor<32x1xf16>) -> tensor<?x32xf32> {
  %wc = pto.cast %w none {pto.label = "dq", pto.vec_tile = array<i64: 8, 64>} : tensor<32x64xi8> -> tensor<32x64xf16>
  %wb = pto.mul %wc, %s : tensor<32x64xf16>, tensor<32x1xf16> -> tensor<32x64xf16>
  %y = pto.matmul %x, %wb b_trans : tensor<?x64xf16>, tensor<32x64xf16> -> tensor<?x32xf32>
  func.return %y : tensor<?x32xf32>
}

// -----

// A cast of the matmul's result goes into the cube stage (the fixpipe casts) unless it
// has a label or a vector tile of its own: then it is a vector stage, as PyPTO runs a
// cast after set_vec_tile_shapes.
func.func @post_cast_stage(%x: tensor<?x64xbf16>, %w: tensor<32x64xbf16>) -> tensor<?x32xbf16> {
  %y = pto.matmul %x, %w b_trans : tensor<?x64xbf16>, tensor<32x64xbf16> -> tensor<?x32xf32>
  %o = pto.cast %y rint {pto.vec_tile = array<i64: 4, 32>} : tensor<?x32xf32> -> tensor<?x32xbf16>
  func.return %o : tensor<?x32xbf16>
}
// CHECK-LABEL: func.func @post_cast_stage
// CHECK: tile.cube_stage "linear" -> (tensor<1x32xf32>) {
// CHECK-NEXT: tile.matmul
// CHECK-NEXT: tile.yield
// CHECK: tile.vec_stage "post" tile [4, 32] -> (tensor<1x32xbf16>) {
// CHECK-NEXT: tile.cast %{{.*}} rint

// -----

// An in-place reshape of a weight is a view, not weight-only work: it is staged with the
// stage that reads it.
// CHECK-LABEL: func.func @weight_scale_view
// CHECK:         tile.vec_stage "dequant"
// CHECK-NEXT:      %w1 = tile.reshape %ws_tile inplace : tensor<32x1xf32> -> tensor<1x32xf32>
func.func @weight_scale_view(%x: tensor<?x64xi8>, %s: tensor<?x1xf32>, %w: tensor<32x64xi8>, %ws: tensor<32x1xf32>) -> tensor<?x32xf32> {
  %acc = pto.matmul %x, %w b_trans : tensor<?x64xi8>, tensor<32x64xi8> -> tensor<?x32xi32>
  %w1 = pto.reshape %ws inplace : tensor<32x1xf32> -> tensor<1x32xf32>
  %d = pto.dequant %acc, %s, %w1 : tensor<?x32xi32>, tensor<?x1xf32>, tensor<1x32xf32> -> tensor<?x32xf32>
  func.return %d : tensor<?x32xf32>
}

// -----

// Tile shapes pinned per unroll factor go to the stage, for tile-unroll.
// CHECK-LABEL: func.func @by_unroll
// CHECK:         tile.vec_stage "rmsnorm" tile [4, 64] -> (tensor<1x64xf32>) attributes {pto.by_unroll = {"2" = {pto.vec_tile = array<i64: 2, 64>}}}
// CHECK:         tile.cube_stage "linear" tiles <m = [16, 16], k = [64, 64], n = [32, 32]> -> (tensor<1x32xf32>) attributes {pto.by_unroll = {"1" = {pto.cube_tile = #pto.cube_tile<m = [16, 16], k = [32, 64], n = [16, 32]>}}}
func.func @by_unroll(%x: tensor<?x64xf32>, %w: tensor<32x64xf32>) -> tensor<?x32xf32> attributes {pto.unroll = array<i64: 8, 2>} {
  %n = pto.rms_norm %x eps = 1.0e-06 {pto.vec_tile = array<i64: 4, 64>, pto.by_unroll = {"2" = {pto.vec_tile = array<i64: 2, 64>}}} : tensor<?x64xf32> -> tensor<?x64xf32>
  %y = pto.matmul %n, %w b_trans {pto.cube_tile = #pto.cube_tile<m = [16, 16], k = [64, 64], n = [32, 32]>, pto.by_unroll = {"1" = {pto.cube_tile = #pto.cube_tile<m = [16, 16], k = [32, 64], n = [16, 32]>}}} : tensor<?x64xf32>, tensor<32x64xf32> -> tensor<?x32xf32>
  func.return %y : tensor<?x32xf32>
}

// -----

// A weight view made before the matmul is re-made in the stage that reads it, not
// staged on its own: as a "pre" stage its [1, N] result crossed to the post stage as a
// token tile through a workspace, and rows 1..p-1 read poison (a held-out PyPTO kernel).
// CHECK-LABEL: func.func @weight_view_before_the_matmul
// CHECK:         tile.cube_stage "linear"
// CHECK-NOT:     tile.vec_stage "pre"
// CHECK:         tile.vec_stage "post-rmsnorm"
// CHECK-NEXT:      %n = tile.rms_norm
// CHECK-NEXT:      %g2 = tile.reshape %g_tile inplace : tensor<32xf32> -> tensor<1x32xf32>
// CHECK-NEXT:      %o = tile.mul %n, %g2
func.func @weight_view_before_the_matmul(%x: tensor<?x64xbf16>, %w: tensor<64x32xbf16>, %g: tensor<32xf32>) -> tensor<?x32xf32> {
  %g2 = pto.reshape %g inplace : tensor<32xf32> -> tensor<1x32xf32>
  %q = pto.matmul %x, %w : tensor<?x64xbf16>, tensor<64x32xbf16> -> tensor<?x32xbf16>
  %n = pto.rms_norm %q eps = 1.0e-06 : tensor<?x32xbf16> -> tensor<?x32xf32>
  %o = pto.mul %n, %g2 : tensor<?x32xf32>, tensor<1x32xf32> -> tensor<?x32xf32>
  func.return %o : tensor<?x32xf32>
}

// -----

// An op of another dialect in the kernel's body (a fuzzed nested declaration) is an
// error at that op, not a crash.
func.func @foreign_op(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>) -> tensor<?x32xf32> {
  %y = pto.matmul %x, %w : tensor<?x64xf32>, tensor<64x32xf32> -> tensor<?x32xf32>
  // expected-error@+1 {{'func.func' in an SK-03 kernel: pto-to-tile stages pto ops only}}
  func.func private @decl(%a: tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<?x32xf32>
}

// -----

// RoPE's column ops are vector work: the slices of the matmul's row and the concat
// become tile ops of the vector stage after the cube stage.
func.func @rope_tail(%x: tensor<?x64xbf16>, %w: tensor<128x64xbf16>) -> tensor<?x128xf32> {
  %kv = pto.matmul %x, %w b_trans : tensor<?x64xbf16>, tensor<128x64xbf16> -> tensor<?x128xf32>
  %c = pto.slice %kv at 0 : tensor<?x128xf32> -> tensor<?x64xf32>
  %pe = pto.slice %kv at 64 : tensor<?x128xf32> -> tensor<?x64xf32>
  %m = pto.muls %pe, -1.0 : tensor<?x64xf32> -> tensor<?x64xf32>
  %o = pto.concat %m, %c : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x128xf32>
  func.return %o : tensor<?x128xf32>
}
// CHECK-LABEL: func.func @rope_tail
// CHECK: tile.cube_stage "linear"
// CHECK: tile.vec_stage "post"
// CHECK-NEXT: tile.slice %{{.*}} at 0 : tensor<1x128xf32> -> tensor<1x64xf32>
// CHECK-NEXT: tile.slice %{{.*}} at 64 : tensor<1x128xf32> -> tensor<1x64xf32>
// CHECK-NEXT: tile.muls
// CHECK-NEXT: tile.concat %{{.*}}, %{{.*}} : tensor<1x64xf32>, tensor<1x64xf32> -> tensor<1x128xf32>

// -----

// An output assembled in column windows (PyPTO's `assemble(c, [row, 0], out)` and
// `assemble(m, [row, 64], out)`): the concat marked pto.assemble is not staged; each
// window is a store of its own into its columns.
func.func @windows(%x: tensor<?x64xbf16>, %w: tensor<128x64xbf16>) -> tensor<?x128xf32> {
  %kv = pto.matmul %x, %w b_trans : tensor<?x64xbf16>, tensor<128x64xbf16> -> tensor<?x128xf32>
  %c = pto.slice %kv at 0 : tensor<?x128xf32> -> tensor<?x64xf32>
  %pe = pto.slice %kv at 64 : tensor<?x128xf32> -> tensor<?x64xf32>
  %m = pto.muls %pe, -1.0 : tensor<?x64xf32> -> tensor<?x64xf32>
  %o = pto.concat %c, %m {pto.assemble} : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x128xf32>
  func.return %o : tensor<?x128xf32>
}
// CHECK-LABEL: func.func @windows
// CHECK: %[[A:.*]], %[[B:.*]] = tile.vec_stage "post"
// CHECK-NOT: tile.concat
// CHECK: tile.yield
// CHECK: tile.store %[[A]], %out[%i, 0] : tensor<1x64xf32> -> tensor<?x128xf32>
// CHECK-NEXT: tile.store %[[B]], %out[%i, 64] : tensor<1x64xf32> -> tensor<?x128xf32>

// -----

// A window that is the kernel's input tile itself is not computed by the kernel.
func.func @window_of_input(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>) -> tensor<?x128xbf16> {
  %y = pto.matmul %x, %w b_trans : tensor<?x64xbf16>, tensor<64x64xbf16> -> tensor<?x64xbf16>
  // expected-error@+1 {{a result is a view of an argument: an SK-03 kernel computes each of its results}}
  %o = pto.concat %y, %x {pto.assemble} : tensor<?x64xbf16>, tensor<?x64xbf16> -> tensor<?x128xbf16>
  func.return %o : tensor<?x128xbf16>
}

// -----

// The interleaved RoPE's de-interleave of a token tile: reshape, transpose of the last
// two dims, reshape back; tile ops of the vector stage, each tile of p rows.
func.func @rope_interleave(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>) -> tensor<?x64xf32> {
  %kv = pto.matmul %x, %w b_trans : tensor<?x64xbf16>, tensor<64x64xbf16> -> tensor<?x64xf32>
  %p = pto.reshape %kv : tensor<?x64xf32> -> tensor<?x32x2xf32>
  %t = pto.transpose %p : tensor<?x32x2xf32> -> tensor<?x2x32xf32>
  %r = pto.reshape %t inplace : tensor<?x2x32xf32> -> tensor<?x64xf32>
  %o = pto.muls %r, 2.0 : tensor<?x64xf32> -> tensor<?x64xf32>
  func.return %o : tensor<?x64xf32>
}
// CHECK-LABEL: func.func @rope_interleave
// CHECK: tile.cube_stage "linear"
// CHECK: tile.vec_stage "post"
// CHECK-NEXT: tile.reshape %{{.*}} : tensor<1x64xf32> -> tensor<1x32x2xf32>
// CHECK-NEXT: tile.transpose %{{.*}} : tensor<1x32x2xf32> -> tensor<1x2x32xf32>
// CHECK-NEXT: tile.reshape %{{.*}} inplace : tensor<1x2x32xf32> -> tensor<1x64xf32>
// CHECK-NEXT: tile.muls

// -----

func.func @returns_a_view(%x: tensor<?x4x16xf32>, %w: tensor<64x32xf32>) -> (tensor<?x32xf32>, tensor<?x64xf32>) {
  %flat = pto.reshape %x inplace : tensor<?x4x16xf32> -> tensor<?x64xf32>
  %y = pto.matmul %flat, %w : tensor<?x64xf32>, tensor<64x32xf32> -> tensor<?x32xf32>
  // expected-error@+1 {{a result is a view of an argument: an SK-03 kernel computes each of its results}}
  func.return %y, %flat : tensor<?x32xf32>, tensor<?x64xf32>
}

// -----

// A window of a weight argument (pto.view) is a view, re-made in each stage that reads it.
// CHECK-LABEL: func.func @weight_rows
// CHECK:         tile.vec_stage "rmsnorm"
// CHECK-NEXT:      %g = tile.view %gammas_tile at [64] : tensor<128xbf16> -> tensor<64xbf16>
// CHECK:         tile.cube_stage "linear"
// CHECK-NEXT:      %w1 = tile.view %w_tile at [32, 0] : tensor<64x64xbf16> -> tensor<32x64xbf16>
// CHECK-NEXT:      tile.matmul %{{.*}}, %w1 b_trans
func.func @weight_rows(%x: tensor<?x64xbf16>, %gammas: tensor<128xbf16>, %w: tensor<64x64xbf16>) -> tensor<?x32xbf16> {
  %g = pto.view %gammas at [64] : tensor<128xbf16> -> tensor<64xbf16>
  %n = pto.rms_norm %x, %g eps = 1.0e-06 : tensor<?x64xbf16>, tensor<64xbf16> -> tensor<?x64xbf16>
  %w1 = pto.view %w at [32, 0] : tensor<64x64xbf16> -> tensor<32x64xbf16>
  %a = pto.matmul %n, %w1 b_trans : tensor<?x64xbf16>, tensor<32x64xbf16> -> tensor<?x32xf32>
  %c = pto.cast %a rint : tensor<?x32xf32> -> tensor<?x32xbf16>
  func.return %c : tensor<?x32xbf16>
}

// -----

// A window of anything but a weight argument would be a copy the loop has no place for.
func.func @rows_of_a_reshape(%x: tensor<?x64xbf16>, %w: tensor<32x2x32xbf16>) -> tensor<?x16xf32> {
  %w2 = pto.reshape %w inplace : tensor<32x2x32xbf16> -> tensor<32x64xbf16>
  // expected-error@+1 {{'pto.view' takes a window of a weight argument of the kernel, not of a value computed in it}}
  %w1 = pto.view %w2 at [16, 0] : tensor<32x64xbf16> -> tensor<16x64xbf16>
  %a = pto.matmul %x, %w1 b_trans : tensor<?x64xbf16>, tensor<16x64xbf16> -> tensor<?x16xf32>
  func.return %a : tensor<?x16xf32>
}
