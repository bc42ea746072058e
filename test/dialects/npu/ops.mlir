// RUN: pto-opt %s | pto-opt | filecheck %s
// RUN: %ROUNDTRIP | filecheck %s

// CHECK-LABEL: func.func @kernel
func.func @kernel(%x: !npu.buf<?x4096xbf16, gm>, %w: !npu.buf<1024x4096xbf16, gm>, %out: !npu.buf<?x1024xbf16, gm>,
                  %q: !npu.buf<?x1024xi8, gm>, %qw: !npu.buf<1024x1024xi8, gm>, %acc32: !npu.buf<?x1024xf32, gm>) {
  %c0 = arith.constant 0 : index
  // CHECK: npu.dim %{{.*}}, 1 : !npu.buf<?x4096xbf16, gm>
  %k = npu.dim %x, 1 : !npu.buf<?x4096xbf16, gm>
  %t = npu.dim %x, 0 : !npu.buf<?x4096xbf16, gm>
  // CHECK: npu.reshape %{{.*}} : !npu.buf<?x4096xbf16, gm> -> !npu.buf<?x64x64xbf16, gm>
  %view = npu.reshape %x : !npu.buf<?x4096xbf16, gm> -> !npu.buf<?x64x64xbf16, gm>
  // CHECK: npu.view %{{.*}} at [512, 0] : !npu.buf<1024x4096xbf16, gm> -> !npu.buf<256x4096xbf16, gm>
  %rows = npu.view %w at [512, 0] : !npu.buf<1024x4096xbf16, gm> -> !npu.buf<256x4096xbf16, gm>
  // CHECK: npu.view %{{.*}} at [0, 448] : !npu.buf<?x1024xbf16, gm> -> !npu.buf<?x64xbf16, gm>
  %cols = npu.view %out at [0, 448] : !npu.buf<?x1024xbf16, gm> -> !npu.buf<?x64xbf16, gm>
  // CHECK: npu.alloc gm (%{{.*}}) : !npu.buf<?x4096xbf16, gm>
  %ws = npu.alloc gm (%t) : !npu.buf<?x4096xbf16, gm>
  // CHECK: npu.launch cube 24 (%{{.*}}) {
  npu.launch cube 24 (%core) {
    // CHECK: npu.alloc l1 [0] : !npu.buf<128x1024xbf16, l1>
    %a1 = npu.alloc l1 [0] : !npu.buf<128x1024xbf16, l1>
    %b1 = npu.alloc l1 [262144] : !npu.buf<128x1024xbf16, l1>
    // CHECK: npu.alloc l0a [0] : !npu.buf<128x128xbf16, l0a>
    %a0 = npu.alloc l0a [0] : !npu.buf<128x128xbf16, l0a>
    %b0 = npu.alloc l0b [0] : !npu.buf<128x128xbf16, l0b>
    %acc = npu.alloc l0c [0] : !npu.buf<128x128xf32, l0c>
    %first = arith.constant false
    // CHECK: npu.cross_core_wait 1, %{{.*}}
    npu.cross_core_wait 1, %t
    // CHECK: npu.dma mte2 %{{.*}}[%{{.*}}, 0] -> %{{.*}}[0, 0] rows %{{.*}} : !npu.buf<?x4096xbf16, gm> -> !npu.buf<128x1024xbf16, l1>
    npu.dma mte2 %ws[%core, 0] -> %a1[0, 0] rows %t : !npu.buf<?x4096xbf16, gm> -> !npu.buf<128x1024xbf16, l1>
    // CHECK: npu.dma mte2 %{{.*}}[%{{.*}}, 0] -> %{{.*}}[0, 0] rows %{{.*}} cols %{{.*}} : !npu.buf<?x4096xbf16, gm> -> !npu.buf<128x1024xbf16, l1>
    npu.dma mte2 %ws[%core, 0] -> %a1[0, 0] rows %t cols %t : !npu.buf<?x4096xbf16, gm> -> !npu.buf<128x1024xbf16, l1>
    // CHECK: npu.dma mte2 %{{.*}}[0, 0] -> %{{.*}}[0, 0] cache none_cacheable : !npu.buf<1024x4096xbf16, gm> -> !npu.buf<128x1024xbf16, l1>
    npu.dma mte2 %w[0, 0] -> %b1[0, 0] cache none_cacheable : !npu.buf<1024x4096xbf16, gm> -> !npu.buf<128x1024xbf16, l1>
    // CHECK: npu.dma mte1 %{{.*}}[0, 256] -> %{{.*}}[0, 0] : !npu.buf<128x1024xbf16, l1> -> !npu.buf<128x128xbf16, l0a>
    npu.dma mte1 %a1[0, 256] -> %a0[0, 0] : !npu.buf<128x1024xbf16, l1> -> !npu.buf<128x128xbf16, l0a>
    // CHECK: npu.dma mte1 %{{.*}}[0, 0] -> %{{.*}}[0, 0] transpose : !npu.buf<128x1024xbf16, l1> -> !npu.buf<128x128xbf16, l0b>
    npu.dma mte1 %b1[0, 0] -> %b0[0, 0] transpose : !npu.buf<128x1024xbf16, l1> -> !npu.buf<128x128xbf16, l0b>
    npu.set_flag mte1 -> cube, 0
    npu.wait_flag mte1 -> cube, 0
    // CHECK: npu.mmad %{{.*}}, %{{.*}} -> %{{.*}} : !npu.buf<128x128xbf16, l0a>, !npu.buf<128x128xbf16, l0b> -> !npu.buf<128x128xf32, l0c>
    npu.mmad %a0, %b0 -> %acc : !npu.buf<128x128xbf16, l0a>, !npu.buf<128x128xbf16, l0b> -> !npu.buf<128x128xf32, l0c>
    // CHECK: npu.mmad %{{.*}}, %{{.*}} -> %{{.*}} acc %{{.*}} :
    npu.mmad %a0, %b0 -> %acc acc %first : !npu.buf<128x128xbf16, l0a>, !npu.buf<128x128xbf16, l0b> -> !npu.buf<128x128xf32, l0c>
    // CHECK: npu.mmad %{{.*}}, %{{.*}} -> %{{.*}} rows %c0 acc %{{.*}} :
    npu.mmad %a0, %b0 -> %acc rows %c0 acc %first : !npu.buf<128x128xbf16, l0a>, !npu.buf<128x128xbf16, l0b> -> !npu.buf<128x128xf32, l0c>
    // CHECK: npu.set_flag cube -> fixpipe, 1
    npu.set_flag cube -> fixpipe, 1
    // CHECK: npu.wait_flag cube -> fixpipe, 1
    npu.wait_flag cube -> fixpipe, 1
    // CHECK: npu.fixpipe %{{.*}}[0, 0] -> %{{.*}}[%{{.*}}, 128] rows %{{.*}} round rint : !npu.buf<128x128xf32, l0c> -> !npu.buf<?x1024xbf16, gm>
    npu.fixpipe %acc[0, 0] -> %out[%core, 128] rows %t round rint : !npu.buf<128x128xf32, l0c> -> !npu.buf<?x1024xbf16, gm>
    // CHECK: npu.fixpipe %{{.*}}[0, 0] -> %{{.*}}[%{{.*}}, 128] cols %{{.*}} round rint : !npu.buf<128x128xf32, l0c> -> !npu.buf<?x1024xbf16, gm>
    npu.fixpipe %acc[0, 0] -> %out[%core, 128] cols %t round rint : !npu.buf<128x128xf32, l0c> -> !npu.buf<?x1024xbf16, gm>
    // CHECK: npu.fixpipe %{{.*}}[0, 0] -> %{{.*}}[%{{.*}}, 0] atomic_add : !npu.buf<128x128xf32, l0c> -> !npu.buf<?x1024xf32, gm>
    npu.fixpipe %acc[0, 0] -> %acc32[%core, 0] atomic_add : !npu.buf<128x128xf32, l0c> -> !npu.buf<?x1024xf32, gm>
    // CHECK: npu.fixpipe %{{.*}}[0, 0] -> %{{.*}}[0, 0] : !npu.buf<128x128xf32, l0c> -> !npu.buf<128x1024xf32, l1>
    %l1f = npu.alloc l1 [0] : !npu.buf<128x1024xf32, l1>
    npu.fixpipe %acc[0, 0] -> %l1f[0, 0] : !npu.buf<128x128xf32, l0c> -> !npu.buf<128x1024xf32, l1>
    // CHECK: npu.barrier all
    npu.barrier all
    npu.barrier mte2
  // CHECK: } vector 48 (%{{.*}}) {
  } vector 48 (%v) {
    %u = npu.alloc ub [0] : !npu.buf<4x4096xbf16, ub>
    %f = npu.alloc ub [32768] : !npu.buf<4x4096xf32, ub>
    %s = npu.alloc ub [98304] : !npu.buf<4x1xf32, ub>
    // CHECK: npu.reshape %{{.*}} : !npu.buf<4x1xf32, ub> -> !npu.buf<4xf32, ub>
    %s1 = npu.reshape %s : !npu.buf<4x1xf32, ub> -> !npu.buf<4xf32, ub>
    %g = npu.alloc ub [98336] : !npu.buf<1x4096xf32, ub>
    // CHECK: npu.dma mte2 %{{.*}}[%{{.*}}, 0] -> %{{.*}}[0, 0] : !npu.buf<?x4096xbf16, gm> -> !npu.buf<4x4096xbf16, ub>
    npu.dma mte2 %x[%v, 0] -> %u[0, 0] : !npu.buf<?x4096xbf16, gm> -> !npu.buf<4x4096xbf16, ub>
    npu.set_flag mte2 -> vector, 0
    npu.wait_flag mte2 -> vector, 0
    // CHECK: npu.vcast %{{.*}} -> %{{.*}} none : !npu.buf<4x4096xbf16, ub> -> !npu.buf<4x4096xf32, ub>
    npu.vcast %u -> %f none : !npu.buf<4x4096xbf16, ub> -> !npu.buf<4x4096xf32, ub>
    // CHECK: npu.vmul %{{.*}}, %{{.*}} -> %{{.*}} : !npu.buf<4x4096xf32, ub>, !npu.buf<4x4096xf32, ub> -> !npu.buf<4x4096xf32, ub>
    npu.vmul %f, %f -> %f : !npu.buf<4x4096xf32, ub>, !npu.buf<4x4096xf32, ub> -> !npu.buf<4x4096xf32, ub>
    // CHECK: npu.vreduce sum %{{.*}} -> %{{.*}} : !npu.buf<4x4096xf32, ub> -> !npu.buf<4x1xf32, ub>
    npu.vreduce sum %f -> %s : !npu.buf<4x4096xf32, ub> -> !npu.buf<4x1xf32, ub>
    // CHECK: npu.vreduce absmax
    npu.vreduce absmax %f -> %s : !npu.buf<4x4096xf32, ub> -> !npu.buf<4x1xf32, ub>
    npu.vreduce max %f -> %s : !npu.buf<4x4096xf32, ub> -> !npu.buf<4x1xf32, ub>
    npu.vreduce min %f -> %s : !npu.buf<4x4096xf32, ub> -> !npu.buf<4x1xf32, ub>
    // CHECK: npu.vmuls %{{.*}}, 0.000244140625 -> %{{.*}} : !npu.buf<4x1xf32, ub> -> !npu.buf<4x1xf32, ub>
    npu.vmuls %s, 2.44140625e-4 -> %s : !npu.buf<4x1xf32, ub> -> !npu.buf<4x1xf32, ub>
    // CHECK: npu.vadds
    npu.vadds %s, 1.0e-6 -> %s : !npu.buf<4x1xf32, ub> -> !npu.buf<4x1xf32, ub>
    // CHECK: npu.vmaxs
    npu.vmaxs %s, -127.0 -> %s : !npu.buf<4x1xf32, ub> -> !npu.buf<4x1xf32, ub>
    // CHECK: npu.vmins
    npu.vmins %s, 127.0 -> %s : !npu.buf<4x1xf32, ub> -> !npu.buf<4x1xf32, ub>
    // CHECK: npu.vsqrt
    npu.vsqrt %s -> %s : !npu.buf<4x1xf32, ub> -> !npu.buf<4x1xf32, ub>
    // CHECK: npu.vrsqrt
    npu.vrsqrt %s -> %s : !npu.buf<4x1xf32, ub> -> !npu.buf<4x1xf32, ub>
    // CHECK: npu.vabs
    npu.vabs %s -> %s : !npu.buf<4x1xf32, ub> -> !npu.buf<4x1xf32, ub>
    // CHECK: npu.vexp
    npu.vexp %s -> %s : !npu.buf<4x1xf32, ub> -> !npu.buf<4x1xf32, ub>
    // CHECK: npu.vln
    npu.vln %s -> %s : !npu.buf<4x1xf32, ub> -> !npu.buf<4x1xf32, ub>
    // CHECK: npu.vmul %{{.*}}, %{{.*}} -> %{{.*}} : !npu.buf<4x4096xf32, ub>, !npu.buf<4x1xf32, ub> -> !npu.buf<4x4096xf32, ub>
    npu.vmul %f, %s -> %f : !npu.buf<4x4096xf32, ub>, !npu.buf<4x1xf32, ub> -> !npu.buf<4x4096xf32, ub>
    // CHECK: npu.vadd
    npu.vadd %f, %g -> %f : !npu.buf<4x4096xf32, ub>, !npu.buf<1x4096xf32, ub> -> !npu.buf<4x4096xf32, ub>
    // CHECK: npu.vsub
    npu.vsub %f, %g -> %f : !npu.buf<4x4096xf32, ub>, !npu.buf<1x4096xf32, ub> -> !npu.buf<4x4096xf32, ub>
    // CHECK: npu.vdiv
    npu.vdiv %f, %s -> %f : !npu.buf<4x4096xf32, ub>, !npu.buf<4x1xf32, ub> -> !npu.buf<4x4096xf32, ub>
    // CHECK: npu.vmax
    npu.vmax %f, %f -> %f : !npu.buf<4x4096xf32, ub>, !npu.buf<4x4096xf32, ub> -> !npu.buf<4x4096xf32, ub>
    // CHECK: npu.vmin
    npu.vmin %f, %f -> %f : !npu.buf<4x4096xf32, ub>, !npu.buf<4x4096xf32, ub> -> !npu.buf<4x4096xf32, ub>
    // CHECK: npu.vdup 0.000000e+00 -> %{{.*}} : !npu.buf<4x1xf32, ub>
    npu.vdup 0.0 -> %s : !npu.buf<4x1xf32, ub>
    // where(f >= s, f, g): a compare into the mask register and a select by it.
    // CHECK: npu.vsel "ge" %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} -> %{{.*}} : !npu.buf<4x4096xf32, ub>, !npu.buf<4x1xf32, ub>, !npu.buf<4x4096xf32, ub>, !npu.buf<1x4096xf32, ub> -> !npu.buf<4x4096xf32, ub>
    npu.vsel "ge" %f, %s, %f, %g -> %f : !npu.buf<4x4096xf32, ub>, !npu.buf<4x1xf32, ub>, !npu.buf<4x4096xf32, ub>, !npu.buf<1x4096xf32, ub> -> !npu.buf<4x4096xf32, ub>
    // A column range between UB buffers (the RoPE tail's slices and concatenations).
    // CHECK: npu.vcopy %{{.*}}[cols 4095] -> %{{.*}}[cols 0] width 1 : !npu.buf<4x4096xf32, ub> -> !npu.buf<4x1xf32, ub>
    npu.vcopy %f [cols 4095] -> %s [cols 0] width 1 : !npu.buf<4x4096xf32, ub> -> !npu.buf<4x1xf32, ub>
    // Each row's [2048, 2] columns as [2, 2048] (the interleaved RoPE's evens, then odds),
    // through views of the UB buffers.
    // CHECK: %[[P:.*]] = npu.reshape %{{.*}} : !npu.buf<4x4096xf32, ub> -> !npu.buf<4x2048x2xf32, ub>
    %fp = npu.reshape %f : !npu.buf<4x4096xf32, ub> -> !npu.buf<4x2048x2xf32, ub>
    %gt = npu.alloc ub [131072] : !npu.buf<4x2x2048xf32, ub>
    // CHECK: npu.vtranspose %[[P]] -> %{{.*}} : !npu.buf<4x2048x2xf32, ub> -> !npu.buf<4x2x2048xf32, ub>
    npu.vtranspose %fp -> %gt : !npu.buf<4x2048x2xf32, ub> -> !npu.buf<4x2x2048xf32, ub>
    // CHECK: npu.vcast %{{.*}} -> %{{.*}} rint : !npu.buf<4x4096xf32, ub> -> !npu.buf<4x4096xbf16, ub>
    npu.vcast %f -> %u rint : !npu.buf<4x4096xf32, ub> -> !npu.buf<4x4096xbf16, ub>
    npu.set_flag vector -> mte3, 0
    npu.wait_flag vector -> mte3, 0
    // CHECK: npu.dma mte3 %{{.*}}[0, 0] -> %{{.*}}[%{{.*}}, 0] : !npu.buf<4x4096xbf16, ub> -> !npu.buf<?x4096xbf16, gm>
    npu.dma mte3 %u[0, 0] -> %ws[%v, 0] : !npu.buf<4x4096xbf16, ub> -> !npu.buf<?x4096xbf16, gm>
    // CHECK: npu.cross_core_set 1
    npu.cross_core_set 1
  }
  // An int8 cube-only launch: i8 x i8 -> i32, dequantised by the fixpipe.
  // CHECK: npu.launch cube 1 (%{{.*}}) {
  npu.launch cube 1 (%c) {
    %qa = npu.alloc l0a [0] : !npu.buf<16x1024xi8, l0a>
    %qb = npu.alloc l0b [0] : !npu.buf<1024x32xi8, l0b>
    %qc = npu.alloc l0c [0] : !npu.buf<16x32xi32, l0c>
    npu.mmad %qa, %qb -> %qc : !npu.buf<16x1024xi8, l0a>, !npu.buf<1024x32xi8, l0b> -> !npu.buf<16x32xi32, l0c>
    // CHECK: npu.fixpipe %{{.*}}[0, 0] -> %{{.*}}[0, 0] round rint deq 5.000000e-01 : !npu.buf<16x32xi32, l0c> -> !npu.buf<?x1024xbf16, gm>
    npu.fixpipe %qc[0, 0] -> %out[0, 0] round rint deq 0.5 : !npu.buf<16x32xi32, l0c> -> !npu.buf<?x1024xbf16, gm>
  }
  func.return
}

// The second target: Ascend 950 has 56 AIVs and a 248 KiB UB (the last block is usable).
// CHECK-LABEL: func.func @ascend950
func.func @ascend950() attributes {pto.target = "ascend950"} {
  // CHECK: npu.launch vector 56 (%{{.*}}) {
  npu.launch vector 56 (%v) {
    %u = npu.alloc ub [0] : !npu.buf<16x16xf32, ub>
    %b = npu.alloc ub [253920] : !npu.buf<1x8xf32, ub>
  }
  func.return
}

// Bodies sewn two at a time into device tasks (PyPTO's stitch_function_max_num).
// CHECK-LABEL: func.func @graph_stitch
// CHECK: npu.graph cube 24 vector 48 stitch 2 {
func.func @graph_stitch(%x: !npu.buf<?x64xf32, gm>) {
  npu.graph cube 24 vector 48 stitch 2 {
  }
  func.return
}

// A task graph: scalar set-up, then groups over the bodies, one after another body by body.
// CHECK-LABEL: func.func @graph
// CHECK: npu.graph cube 24 vector 48 {
// CHECK: npu.tasks "norm" vector (%{{.*}}, %{{.*}}) in (%n, 2) {
// CHECK: npu.tasks "mm" cube (%{{.*}}, %{{.*}}) in (%n, 1) after ["norm"] {
// CHECK: npu.tasks "out" vector (%{{.*}}, %{{.*}}) in (%n, 8) after ["norm", "mm"] hub {
func.func @graph(%x: !npu.buf<?x64xf32, gm>) {
  npu.graph cube 24 vector 48 {
    %n = npu.dim %x, 0 : !npu.buf<?x64xf32, gm>
    npu.tasks "norm" vector (%b, %i) in (%n, 2) {
      %u = npu.alloc ub [0] : !npu.buf<4x64xf32, ub>
    }
    npu.tasks "mm" cube (%b, %i) in (%n, 1) after ["norm"] {
      %a = npu.alloc l1 [0] : !npu.buf<4x64xf32, l1>
    }
    npu.tasks "out" vector (%b, %i) in (%n, 8) after ["norm", "mm"] hub {
    }
  }
  func.return
}

// Successor counts per task of a body (`succ [..]`) or one for all (`succ n`); the
// producer tasks each task waits for (`needs [[..], ..]`).
// CHECK-LABEL: func.func @graph_succ
// CHECK: npu.tasks "norm" vector (%{{.*}}, %{{.*}}) in (%n, 2) succ [3, 2] {
// CHECK: npu.tasks "mm" cube (%{{.*}}, %{{.*}}) in (%n, 3) after ["norm"] succ 1 needs {{\[}}[0, 1], [0], [1]] {
// CHECK: npu.tasks "out" vector (%{{.*}}, %{{.*}}) in (%n, 8) after ["mm"] hub succ 0 {
func.func @graph_succ(%x: !npu.buf<?x64xf32, gm>) {
  npu.graph cube 24 vector 48 {
    %n = npu.dim %x, 0 : !npu.buf<?x64xf32, gm>
    npu.tasks "norm" vector (%b, %i) in (%n, 2) succ [3, 2] {
    }
    npu.tasks "mm" cube (%b, %i) in (%n, 3) after ["norm"] succ 1 needs [[0, 1], [0], [1]] {
    }
    npu.tasks "out" vector (%b, %i) in (%n, 8) after ["mm"] hub succ 0 {
    }
  }
  func.return
}
