// RUN: pto-opt %s --split-input-file -p pto-join-n-windows --print-debuginfo 2>/dev/null | filecheck %s --check-prefix=LOC
// RUN: pto-opt %s --split-input-file -p pto-join-n-windows | filecheck %s

// A Python loop over N tiles of an [N, K] weight (b_trans), written back side by side:
// the weight's one matmul, its result the output itself.
// CHECK-LABEL: func.func @rows_of_n_k
// CHECK-NEXT:    %[[Y:.*]] = pto.matmul %x, %w b_trans {pto.cube_tile = #pto.cube_tile<m = [16, 16], k = [64, 64], n = [64, 64]>} : tensor<?x64xbf16>, tensor<96x64xbf16> -> tensor<?x96xf32>
// CHECK-NEXT:    func.return %[[Y]] : tensor<?x96xf32>
func.func @rows_of_n_k(%x: tensor<?x64xbf16>, %w: tensor<96x64xbf16>) -> tensor<?x96xf32> {
  %w0 = pto.view %w at [0, 0] : tensor<96x64xbf16> -> tensor<32x64xbf16>
  %a = pto.matmul %x, %w0 b_trans {pto.cube_tile = #pto.cube_tile<m = [16, 16], k = [64, 64], n = [64, 64]>} : tensor<?x64xbf16>, tensor<32x64xbf16> -> tensor<?x32xf32>
  %w1 = pto.view %w at [32, 0] : tensor<96x64xbf16> -> tensor<32x64xbf16>
  %b = pto.matmul %x, %w1 b_trans {pto.cube_tile = #pto.cube_tile<m = [16, 16], k = [64, 64], n = [64, 64]>} : tensor<?x64xbf16>, tensor<32x64xbf16> -> tensor<?x32xf32>
  %w2 = pto.view %w at [64, 0] : tensor<96x64xbf16> -> tensor<32x64xbf16>
  %c = pto.matmul %x, %w2 b_trans {pto.cube_tile = #pto.cube_tile<m = [16, 16], k = [64, 64], n = [64, 64]>} : tensor<?x64xbf16>, tensor<32x64xbf16> -> tensor<?x32xf32>
  %o = pto.concat %a, %b, %c : tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32> -> tensor<?x96xf32>
  func.return %o : tensor<?x96xf32>
}

// -----

// Columns of a [K, N] weight, each window post-processed on its own (in any order):
// column slices of the one matmul; the vector tile hint of each view goes to its slice.
// CHECK-LABEL: func.func @cols_of_k_n
// CHECK-NEXT:    %[[Y:.*]] = pto.matmul %x, %w : tensor<?x64xbf16>, tensor<64x64xbf16> -> tensor<?x64xf32>
// CHECK-NEXT:    %[[B:.*]] = pto.slice %[[Y]] at 32 {pto.vec_tile = array<i64: 8, 32>} : tensor<?x64xf32> -> tensor<?x32xf32>
// CHECK-NEXT:    %[[BS:.*]] = pto.muls %[[B]], 2.0
// CHECK-NEXT:    %[[A:.*]] = pto.slice %[[Y]] at 0 : tensor<?x64xf32> -> tensor<?x32xf32>
// CHECK-NEXT:    pto.concat %[[A]], %[[BS]]
func.func @cols_of_k_n(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>) -> tensor<?x64xf32> {
  %w1 = pto.view %w at [0, 32] {pto.vec_tile = array<i64: 8, 32>} : tensor<64x64xbf16> -> tensor<64x32xbf16>
  %b = pto.matmul %x, %w1 : tensor<?x64xbf16>, tensor<64x32xbf16> -> tensor<?x32xf32>
  %bs = pto.muls %b, 2.0 : tensor<?x32xf32> -> tensor<?x32xf32>
  %w0 = pto.view %w at [0, 0] : tensor<64x64xbf16> -> tensor<64x32xbf16>
  %a = pto.matmul %x, %w0 : tensor<?x64xbf16>, tensor<64x32xbf16> -> tensor<?x32xf32>
  %o = pto.concat %a, %bs : tensor<?x32xf32>, tensor<?x32xf32> -> tensor<?x64xf32>
  func.return %o : tensor<?x64xf32>
}

// -----

// Left alone: windows that miss columns, a window of part of K, two activations, and
// matmuls whose flags differ (pto-classify-skeleton says why they are not SK-03).
// CHECK-LABEL: func.func @not_joined
// CHECK-COUNT-9: pto.matmul
func.func @not_joined(%x: tensor<?x64xbf16>, %x2: tensor<?x64xbf16>, %w: tensor<96x64xbf16>, %wk: tensor<64x128xbf16>) -> tensor<?x416xf32> {
  %w0 = pto.view %w at [0, 0] : tensor<96x64xbf16> -> tensor<32x64xbf16>
  %w1 = pto.view %w at [32, 0] : tensor<96x64xbf16> -> tensor<32x64xbf16>
  %a = pto.matmul %x, %w0 b_trans : tensor<?x64xbf16>, tensor<32x64xbf16> -> tensor<?x32xf32>
  %b = pto.matmul %x, %w1 b_trans : tensor<?x64xbf16>, tensor<32x64xbf16> -> tensor<?x32xf32>
  %k0 = pto.view %wk at [0, 64] : tensor<64x128xbf16> -> tensor<32x64xbf16>
  %k1 = pto.view %wk at [32, 64] : tensor<64x128xbf16> -> tensor<32x64xbf16>
  %c0 = pto.matmul %x, %k0 b_trans : tensor<?x64xbf16>, tensor<32x64xbf16> -> tensor<?x32xf32>
  %c1 = pto.matmul %x, %k1 b_trans : tensor<?x64xbf16>, tensor<32x64xbf16> -> tensor<?x32xf32>
  %c = pto.concat %c0, %c1 : tensor<?x32xf32>, tensor<?x32xf32> -> tensor<?x64xf32>
  %wa = pto.view %w at [0, 0] : tensor<96x64xbf16> -> tensor<48x64xbf16>
  %wb = pto.view %w at [48, 0] : tensor<96x64xbf16> -> tensor<48x64xbf16>
  %d = pto.matmul %x, %wa b_trans : tensor<?x64xbf16>, tensor<48x64xbf16> -> tensor<?x48xf32>
  %e = pto.matmul %x2, %wb b_trans : tensor<?x64xbf16>, tensor<48x64xbf16> -> tensor<?x48xf32>
  %f = pto.matmul %x, %wb b_trans : tensor<?x64xbf16>, tensor<48x64xbf16> -> tensor<?x48xbf16>
  %g = pto.matmul %x2, %w b_trans : tensor<?x64xbf16>, tensor<96x64xbf16> -> tensor<?x96xf32>
  %h = pto.matmul %x2, %wa b_trans {pto.cube_tile = #pto.cube_tile<m = [16, 16], k = [64, 64], n = [64, 64]>} : tensor<?x64xbf16>, tensor<48x64xbf16> -> tensor<?x48xf32>
  %fc = pto.cast %f none : tensor<?x48xbf16> -> tensor<?x48xf32>
  %o1 = pto.concat %a, %b, %c, %d, %e : tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x64xf32>, tensor<?x48xf32>, tensor<?x48xf32> -> tensor<?x224xf32>
  %o = pto.concat %o1, %fc, %g, %h : tensor<?x224xf32>, tensor<?x48xf32>, tensor<?x96xf32>, tensor<?x48xf32> -> tensor<?x416xf32>
  func.return %o : tensor<?x416xf32>
}

// -----

// A label per window (`set_semantic_label(f"mm{n}")`) does not keep the windows apart:
// the joined matmul takes the first's label and location.
// CHECK-LABEL: func.func @labelled
// CHECK-NEXT:    %[[Y:.*]] = pto.matmul %x, %w b_trans {pto.label = "mm0"}
// CHECK-NEXT:    func.return %[[Y]]
// LOC: pto.matmul %x, %w b_trans {pto.label = "mm0"} {{.*}} loc("{{.*}}pto-join-n-windows.mlir":[[# @LINE + 3]]:3)
func.func @labelled(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>) -> tensor<?x64xf32> {
  %w0 = pto.view %w at [0, 0] : tensor<64x64xbf16> -> tensor<32x64xbf16>
  %a = pto.matmul %x, %w0 b_trans {pto.label = "mm0"} : tensor<?x64xbf16>, tensor<32x64xbf16> -> tensor<?x32xf32>
  %w1 = pto.view %w at [32, 0] : tensor<64x64xbf16> -> tensor<32x64xbf16>
  %b = pto.matmul %x, %w1 b_trans {pto.label = "mm1"} : tensor<?x64xbf16>, tensor<32x64xbf16> -> tensor<?x32xf32>
  %o = pto.concat %a, %b : tensor<?x32xf32>, tensor<?x32xf32> -> tensor<?x64xf32>
  func.return %o : tensor<?x64xf32>
}
