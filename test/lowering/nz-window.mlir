// A window of an NZ weight (the second of two stacked [N, K] weights, whole 16x16
// fractals) read by the matmul: a view of the nz load at the tile level, an `npu.view`
// of the NZ argument whose DMAs into L1 the model reads at the window's fractal
// addresses in the whole matrix.
// RUN: pto-opt %s -p pto-classify-skeleton,pto-to-tile | filecheck %s --check-prefix=TILE
// RUN: pto-opt %s --pass-pipeline='builtin.module(pto-sk03-pipeline{factors=8})' | filecheck %s --check-prefix=NPU
// RUN: pto-run %s --random-inputs --tokens 13 --golden | filecheck %s --check-prefix=GOLDEN

func.func @second(%x: tensor<?x256xbf16>, %w: tensor<128x256xbf16> {pto.layout = #pto.layout<nz>}) -> tensor<?x64xbf16> {
  %v = pto.view %w at [64, 0] : tensor<128x256xbf16> -> tensor<64x256xbf16>
  %y = pto.matmul %x, %v b_trans : tensor<?x256xbf16>, tensor<64x256xbf16> -> tensor<?x64xf32>
  %o = pto.cast %y rint : tensor<?x64xf32> -> tensor<?x64xbf16>
  func.return %o : tensor<?x64xbf16>
}

// TILE: %w_tile = tile.load %w layout nz : tensor<128x256xbf16> -> tensor<128x256xbf16>
// TILE: %[[V:.*]] = tile.view %w_tile at [64, 0] : tensor<128x256xbf16> -> tensor<64x256xbf16>
// TILE: tile.matmul %{{.*}}, %[[V]] b_trans

// NPU: func.func @second
// NPU-SAME: %w: !npu.buf<128x256xbf16, gm> {{{.*}}npu.layout = #pto.layout<nz>}
// NPU: %[[V:.*]] = npu.view %w at [64, 0] : !npu.buf<128x256xbf16, gm> -> !npu.buf<64x256xbf16, gm>
// NPU: npu.dma mte2 %[[V]][%{{.*}}, %{{.*}}] -> %{{.*}}[0, 0] {{.*}}: !npu.buf<64x256xbf16, gm> -> !npu.buf<{{.*}}xbf16, l1>

// GOLDEN: golden result 0: ok
