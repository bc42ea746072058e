// RUN: pto-tune %s --tokens 8,20 --jobs 1 --quiet --exhaustive --dim unroll=8/1,16/1 --dim m=16 --dim n=64,128 --dim k=128/256,256/256 --dim split_k=false --dim vec_rows=4 --dim l1_reuse=2 --dim vec_nbuffer=2 --dim cube_nbuffer=1 --dim host_transpose=false --write-best %t.best.mlir | filecheck %s
// RUN: pto-opt --pass-pipeline='builtin.module(pto-sk03-pipeline)' %t.best.mlir | filecheck %s --check-prefix=NPU
// RUN: pto-run %t.best.mlir --random-inputs --tokens 20 | filecheck %s --check-prefix=MODEL
// RUN: cat %t.best.mlir | filecheck %s --check-prefix=BEST

// A small standard-form kernel; 16 configurations, all evaluated.
func.func @small(%x: tensor<?x256xbf16>, %w: tensor<128x256xbf16>) -> tensor<?x128xbf16> {
  %n = pto.rms_norm %x eps = 1.0e-06 : tensor<?x256xbf16> -> tensor<?x256xf32>
  %b = pto.cast %n rint : tensor<?x256xf32> -> tensor<?x256xbf16>
  %y = pto.matmul %b, %w b_trans : tensor<?x256xbf16>, tensor<128x256xbf16> -> tensor<?x128xf32>
  %o = pto.cast %y rint : tensor<?x128xf32> -> tensor<?x128xbf16>
  func.return %o : tensor<?x128xbf16>
}

// CHECK: pto-tune: @small (standard) on ascend910b1, tokens 8,20; objective: cycles summed over them
// CHECK-NEXT: space: 16 configurations, 16 after pruning (pruned: none)
// CHECK-NEXT: search: exhaustive, 18 evaluated ({{.*}} with the 2 baselines), 0 failed
// CHECK: cycles  vs own vs SK03 cube util    HBM bytes L2 hit  configuration
// CHECK-NEXT: #1 {{ *[0-9,]+ +[0-9.]+x +[0-9.]+x +[0-9.]+% +[0-9,]+ +[0-9.]+%}}  unroll=
// CHECK: {{^ +}}own hints
// CHECK-NEXT: SK03.md {{.*}}unroll=128/64/32/16/8/1 l1_reuse=2 vec_nbuffer=2 cache.w=none_cacheable vec_rows=4
// CHECK: per token count:
// CHECK-NEXT: t=8
// CHECK-NEXT: t=20
// CHECK: best configuration written to

// BEST: // pto-tune: best of 18 configurations at tokens 8,20 on ascend910b1:
// BEST: func.func @small
// BEST-SAME: pto.unroll = array<i64:
// BEST: pto.rms_norm {{.*}}pto.vec_tile = array<i64: 4, 256>
// BEST: pto.matmul {{.*}}pto.cube_tile = #pto.cube_tile<m = [16, 16]

// NPU: npu.graph
// MODEL: total: {{[0-9]+}} cycles

