// An NZ weight (PyPTO's format=TILEOP_NZ) keeps its layout through the levels: the
// argument's `pto.layout`, its whole `tile.load ... layout nz`, its GM buffer's
// `npu.layout`, which the cube's copy-ins into L1 read.
// RUN: pto-opt %s -p pto-classify-skeleton,pto-to-tile | filecheck %s --check-prefix=TILE
// RUN: pto-opt %s --pass-pipeline='builtin.module(pto-sk03-pipeline{factors=16})' | filecheck %s --check-prefix=NPU

func.func @query_linear(%x: tensor<?x1024xi8>, %s: tensor<?x1xf32>,
                        %w: tensor<512x1024xi8> {pto.layout = #pto.layout<nz>, pto.cache = #pto.cache<none_cacheable>}) -> tensor<?x512xf32> {
  %acc = pto.matmul %x, %w b_trans : tensor<?x1024xi8>, tensor<512x1024xi8> -> tensor<?x512xi32>
  %y = pto.dequant %acc, %s : tensor<?x512xi32>, tensor<?x1xf32> -> tensor<?x512xf32>
  func.return %y : tensor<?x512xf32>
}

// TILE: %w_tile = tile.load %w cache none_cacheable layout nz : tensor<512x1024xi8> -> tensor<512x1024xi8>
// TILE: tile.matmul %{{.*}}, %w_tile b_trans

// NPU: func.func @query_linear
// NPU-SAME: %w: !npu.buf<512x1024xi8, gm> {{{.*}}npu.layout = #pto.layout<nz>}
// NPU: npu.tasks "linear.16" cube
// NPU: npu.dma mte2 %w[%{{.*}}, %{{.*}}] -> %{{.*}}[0, 0] cache none_cacheable : !npu.buf<512x1024xi8, gm> -> !npu.buf<{{.*}}xi8, l1>
