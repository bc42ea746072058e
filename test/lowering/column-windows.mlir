// An output assembled in column windows (PyPTO's `assemble(a, [row, 0], out)` and
// `assemble(b, [row, 64], out)` into a [T, 96] output): each window is written by the
// stage that computes it, straight into the output's columns through an `npu.view`
// (the fixpipe of the cube for `a`, the vector phase's MTE3 for `b`), never copied
// together in UB first. The run writes every element of the output once.
// RUN: pto-opt %s -p pto-classify-skeleton,pto-to-tile | filecheck %s --check-prefix=TILE
// RUN: pto-opt %s --pass-pipeline='builtin.module(pto-sk03-pipeline{factors=8})' | filecheck %s --check-prefix=NPU
// RUN: pto-run %s --random-inputs --tokens 13 --golden | filecheck %s --check-prefix=GOLDEN

func.func @windows(%x: tensor<?x64xbf16>, %w: tensor<64x64xbf16>) -> tensor<?x96xbf16> {
  %y = pto.matmul %x, %w b_trans : tensor<?x64xbf16>, tensor<64x64xbf16> -> tensor<?x64xf32>
  %a = pto.cast %y rint : tensor<?x64xf32> -> tensor<?x64xbf16>
  %b = pto.slice %a at 32 : tensor<?x64xbf16> -> tensor<?x32xbf16>
  %o = pto.concat %a, %b {pto.assemble} : tensor<?x64xbf16>, tensor<?x32xbf16> -> tensor<?x96xbf16>
  func.return %o : tensor<?x96xbf16>
}

// TILE: %[[A:.*]] = tile.cube_stage "linear"
// TILE: %[[B:.*]] = tile.vec_stage "post"
// TILE-NOT: tile.concat
// TILE: tile.store %[[A]], %out[%i, 0] : tensor<1x64xbf16> -> tensor<?x96xbf16>
// TILE-NEXT: tile.store %[[B]], %out[%i, 64] : tensor<1x32xbf16> -> tensor<?x96xbf16>

// NPU: %[[LEFT:.*]] = npu.view %out at [0, 0] : !npu.buf<?x96xbf16, gm> -> !npu.buf<?x64xbf16, gm>
// NPU-NEXT: %[[RIGHT:.*]] = npu.view %out at [0, 64] : !npu.buf<?x96xbf16, gm> -> !npu.buf<?x32xbf16, gm>
// NPU: npu.tasks "linear.8" cube
// NPU: npu.fixpipe %{{.*}}[0, 0] -> %[[LEFT]][%{{.*}}, %{{.*}}]
// NPU: npu.tasks "post.8" vector
// NPU-NOT: npu.vcopy {{.*}} width 64
// NPU: npu.dma mte3 %{{.*}}[0, 0] -> %[[RIGHT]][%{{.*}}, 0] rows %{{.*}} : !npu.buf<8x32xbf16, ub> -> !npu.buf<?x32xbf16, gm>

// GOLDEN: golden result 0: ok
