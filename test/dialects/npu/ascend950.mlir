// RUN: pto-opt %s | filecheck %s
// The second target has the UB <-> L1 and L0C -> UB paths A2/A3 lacks.

// CHECK-LABEL: func.func @paths
func.func @paths() attributes {pto.target = "ascend950"} {
  %u = npu.alloc ub [0] : !npu.buf<16x16xf32, ub>
  %l = npu.alloc l1 [0] : !npu.buf<16x16xf32, l1>
  %c = npu.alloc l0c [0] : !npu.buf<16x16xf32, l0c>
  // CHECK: npu.dma mte3 {{.*}} -> !npu.buf<16x16xf32, l1>
  npu.dma mte3 %u[0, 0] -> %l[0, 0] : !npu.buf<16x16xf32, ub> -> !npu.buf<16x16xf32, l1>
  // CHECK: npu.dma mte1 {{.*}} -> !npu.buf<16x16xf32, ub>
  npu.dma mte1 %l[0, 0] -> %u[0, 0] : !npu.buf<16x16xf32, l1> -> !npu.buf<16x16xf32, ub>
  // CHECK: npu.fixpipe {{.*}} -> !npu.buf<16x16xf32, ub>
  npu.fixpipe %c[0, 0] -> %u[0, 0] : !npu.buf<16x16xf32, l0c> -> !npu.buf<16x16xf32, ub>
  func.return
}
