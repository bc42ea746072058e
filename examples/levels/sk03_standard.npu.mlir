// The standard SK-03 kernel (examples/sk03_standard.mlir) at the npu level, as the
// pipeline writes it for the unroll list [128, 1] (the loops of sk03_standard.tile.mlir):
//   pto-opt --pass-pipeline='builtin.module(pto-sk03-pipeline{factors=128,1})' examples/sk03_standard.mlir
// with one edit: gamma is passed as a [1, 4096] row instead of [4096] (a one-row buffer
// broadcasts over the rows in npu.vmul like the 1-D one), and these comments.
//
// Both token loops become one `npu.graph` of `npu.tasks` groups. A group
// `"label" kind (%body, %task) in (%n, P) after [...]` is %n bodies (one per loop
// iteration: the tokens [start, end) of one unrolled tile) x P tasks; each task runs its
// region on one core of its kind, with per-core buffers at byte offsets and
// set_flag/wait_flag between the pipes of that core. There are no cross-core flags or
// barriers: a task may start once every task of its own body in the groups it is
// `after` has ended, and the interpreter dispatches ready tasks to free cores
// (docs/model.md, "How a kernel runs").
builtin.module {
  func.func @linear_projection(%x: !npu.buf<?x4096xbf16, gm>, %gamma: !npu.buf<1x4096xbf16, gm>, %w: !npu.buf<1024x4096xbf16, gm> {pto.cache = #pto.cache<none_cacheable>}, %out: !npu.buf<?x1024xbf16, gm> {pto.output}) attributes {pto.target = "ascend910b1", pto.form = #pto.form<standard>} {
    %c0 = arith.constant 0 : index
    %tokens = npu.dim %x, 0 : !npu.buf<?x4096xbf16, gm>
    %0 = arith.constant 128 : index
    %1 = arith.subi %tokens, %c0 : index
    %2 = arith.divui %1, %0 : index
    %3 = arith.muli %2, %0 : index
    %end128 = arith.addi %c0, %3 : index
    // Both token loops are one task graph: 24 AIC and 48 AIV take its tasks as they become ready.
    npu.graph cube 24 vector 48 {
      %4 = arith.subi %end128, %c0 : index
      %5 = arith.constant 128 : index
      %bodies128 = arith.ceildivui %4, %5 : index
      %ws = npu.alloc gm (%tokens) : !npu.buf<?x4096xbf16, gm>
      // Per 128-token body, 64 vector tasks of one 2-row tile each: RMSNorm and the bf16 cast
      // fused in UB (MTE2 in, vector, MTE3 out to the workspace %ws).
      npu.tasks "rmsnorm.128" vector (%body, %task) in (%bodies128, 64) {
        %6 = arith.constant 128 : index
        %7 = arith.muli %body, %6 : index
        %start = arith.addi %c0, %7 : index
        %8 = arith.constant 128 : index
        %9 = arith.addi %start, %8 : index
        %end = arith.minui %9, %end128 : index
        %10 = arith.constant 2 : index
        %11 = arith.muli %task, %10 : index
        %row = arith.addi %start, %11 : index
        %12 = arith.subi %end, %row : index
        %13 = arith.constant 2 : index
        %rows = arith.minui %12, %13 : index
        %14 = npu.alloc ub [0] : !npu.buf<2x4096xbf16, ub>
        npu.dma mte2 %x[%row, 0] -> %14[0, 0] rows %rows : !npu.buf<?x4096xbf16, gm> -> !npu.buf<2x4096xbf16, ub>
        %15 = npu.alloc ub [16384] : !npu.buf<1x4096xbf16, ub>
        npu.dma mte2 %gamma[0, 0] -> %15[0, 0] : !npu.buf<1x4096xbf16, gm> -> !npu.buf<1x4096xbf16, ub>
        npu.set_flag mte2 -> vector, 0
        npu.wait_flag mte2 -> vector, 0
        %16 = npu.alloc ub [24576] : !npu.buf<2x4096xf32, ub>
        npu.vcast %14 -> %16 none : !npu.buf<2x4096xbf16, ub> -> !npu.buf<2x4096xf32, ub>
        %17 = npu.alloc ub [57344] : !npu.buf<2x4096xf32, ub>
        %18 = npu.alloc ub [90112] : !npu.buf<2x1xf32, ub>
        npu.vmul %16, %16 -> %17 : !npu.buf<2x4096xf32, ub>, !npu.buf<2x4096xf32, ub> -> !npu.buf<2x4096xf32, ub>
        npu.vreduce sum %17 -> %18 : !npu.buf<2x4096xf32, ub> -> !npu.buf<2x1xf32, ub>
        npu.vmuls %18, 0.000244140625 -> %18 : !npu.buf<2x1xf32, ub> -> !npu.buf<2x1xf32, ub>
        npu.vadds %18, 1.000000e-06 -> %18 : !npu.buf<2x1xf32, ub> -> !npu.buf<2x1xf32, ub>
        npu.vrsqrt %18 -> %18 : !npu.buf<2x1xf32, ub> -> !npu.buf<2x1xf32, ub>
        %19 = npu.alloc ub [90144] : !npu.buf<2x4096xf32, ub>
        npu.vmul %16, %18 -> %19 : !npu.buf<2x4096xf32, ub>, !npu.buf<2x1xf32, ub> -> !npu.buf<2x4096xf32, ub>
        %20 = npu.alloc ub [122912] : !npu.buf<1x4096xf32, ub>
        npu.vcast %15 -> %20 none : !npu.buf<1x4096xbf16, ub> -> !npu.buf<1x4096xf32, ub>
        npu.vmul %19, %20 -> %19 : !npu.buf<2x4096xf32, ub>, !npu.buf<1x4096xf32, ub> -> !npu.buf<2x4096xf32, ub>
        %21 = npu.alloc ub [0] : !npu.buf<2x4096xbf16, ub>
        npu.vcast %19 -> %21 rint : !npu.buf<2x4096xf32, ub> -> !npu.buf<2x4096xbf16, ub>
        npu.set_flag vector -> mte3, 0
        npu.wait_flag vector -> mte3, 0
        npu.dma mte3 %21[0, 0] -> %ws[%row, 0] rows %rows : !npu.buf<2x4096xbf16, ub> -> !npu.buf<?x4096xbf16, gm>
        npu.set_flag mte3 -> mte2, 1
        npu.wait_flag mte3 -> mte2, 1
      }
      // Per body, 16 cube tasks, one per 128 x 64 output tile (the L0 tile; N = 1024): K
      // streams in 512-wide L1 slices and 256-wide L0 steps into L0C; the fixpipe casts to
      // bf16. Task (b, i) is ready once every rmsnorm.128 task of body b has ended, so
      // body 0's cube tasks run while later bodies are still being normalised.
      npu.tasks "linear.128" cube (%body_1, %task_1) in (%bodies128, 16) after ["rmsnorm.128"] {
        %22 = npu.alloc l1 [0] : !npu.buf<128x512xbf16, l1>
        %23 = npu.alloc l1 [131072] : !npu.buf<64x512xbf16, l1>
        %24 = npu.alloc l0a [0] : !npu.buf<128x256xbf16, l0a>
        %25 = npu.alloc l0b [0] : !npu.buf<256x64xbf16, l0b>
        %26 = npu.alloc l0c [0] : !npu.buf<128x64xf32, l0c>
        %27 = arith.constant 128 : index
        %28 = arith.muli %body_1, %27 : index
        %start_1 = arith.addi %c0, %28 : index
        %29 = arith.constant 128 : index
        %30 = arith.addi %start_1, %29 : index
        %end_1 = arith.minui %30, %end128 : index
        %31 = arith.constant 0 : index
        %32 = arith.constant 1 : index
        %33 = arith.divui %task_1, %32 : index
        %34 = arith.constant 1 : index
        %35 = arith.remui %task_1, %34 : index
        %36 = arith.constant 64 : index
        %col = arith.muli %33, %36 : index
        %37 = arith.constant 128 : index
        %38 = arith.muli %35, %37 : index
        %row_1 = arith.addi %start_1, %38 : index
        %39 = arith.subi %end_1, %row_1 : index
        %40 = arith.constant 128 : index
        %rows_1 = arith.minui %39, %40 : index
        %41 = arith.constant 4096 : index
        %42 = arith.muli %31, %41 : index
        npu.set_flag mte1 -> mte2, 0
        npu.set_flag cube -> mte1, 0
        %43 = arith.constant 4096 : index
        %44 = arith.addi %42, %43 : index
        %45 = arith.constant 512 : index
        scf.for %46 = %42 to %44 step %45 {
          npu.wait_flag mte1 -> mte2, 0
          npu.dma mte2 %w[%col, %46] -> %23[0, 0] cache none_cacheable : !npu.buf<1024x4096xbf16, gm> -> !npu.buf<64x512xbf16, l1>
          npu.dma mte2 %ws[%row_1, %46] -> %22[0, 0] rows %rows_1 : !npu.buf<?x4096xbf16, gm> -> !npu.buf<128x512xbf16, l1>
          npu.set_flag mte2 -> mte1, 0
          npu.wait_flag mte2 -> mte1, 0
          %47 = arith.constant 0 : index
          %48 = arith.constant 512 : index
          %49 = arith.constant 256 : index
          scf.for %50 = %47 to %48 step %49 {
            %51 = arith.subi %46, %42 : index
            %52 = arith.addi %51, %50 : index
            %53 = arith.constant 0 : index
            %54 = arith.cmpi ne, %52, %53 : index
            npu.wait_flag cube -> mte1, 0
            npu.dma mte1 %23[0, %50] -> %25[0, 0] transpose : !npu.buf<64x512xbf16, l1> -> !npu.buf<256x64xbf16, l0b>
            npu.dma mte1 %22[0, %50] -> %24[0, 0] : !npu.buf<128x512xbf16, l1> -> !npu.buf<128x256xbf16, l0a>
            npu.set_flag mte1 -> cube, 0
            npu.wait_flag mte1 -> cube, 0
            npu.mmad %24, %25 -> %26 rows %rows_1 acc %54 : !npu.buf<128x256xbf16, l0a>, !npu.buf<256x64xbf16, l0b> -> !npu.buf<128x64xf32, l0c>
            npu.set_flag cube -> mte1, 0
          }
          npu.set_flag mte1 -> mte2, 0
        }
        npu.wait_flag mte1 -> mte2, 0
        npu.wait_flag cube -> mte1, 0
        npu.set_flag cube -> fixpipe, 3
        npu.wait_flag cube -> fixpipe, 3
        npu.fixpipe %26[0, 0] -> %out[%row_1, %col] rows %rows_1 round rint : !npu.buf<128x64xf32, l0c> -> !npu.buf<?x1024xbf16, gm>
        npu.set_flag fixpipe -> cube, 4
        npu.wait_flag fixpipe -> cube, 4
      }
      %55 = arith.subi %tokens, %end128 : index
      %56 = arith.constant 1 : index
      // The remainder loop: bodies of one token; the cube's M tile is clipped to 16 rows.
      %bodies1 = arith.ceildivui %55, %56 : index
      %ws_1 = npu.alloc gm (%tokens) : !npu.buf<?x4096xbf16, gm>
      npu.tasks "rmsnorm.1" vector (%body_2, %task_2) in (%bodies1, 1) {
        %57 = arith.constant 1 : index
        %58 = arith.muli %body_2, %57 : index
        %start_2 = arith.addi %end128, %58 : index
        %59 = arith.constant 1 : index
        %60 = arith.addi %start_2, %59 : index
        %end_2 = arith.minui %60, %tokens : index
        %61 = arith.constant 1 : index
        %62 = arith.muli %task_2, %61 : index
        %row_2 = arith.addi %start_2, %62 : index
        %63 = arith.subi %end_2, %row_2 : index
        %64 = arith.constant 1 : index
        %rows_2 = arith.minui %63, %64 : index
        %65 = npu.alloc ub [0] : !npu.buf<1x4096xbf16, ub>
        npu.dma mte2 %x[%row_2, 0] -> %65[0, 0] rows %rows_2 : !npu.buf<?x4096xbf16, gm> -> !npu.buf<1x4096xbf16, ub>
        %66 = npu.alloc ub [8192] : !npu.buf<1x4096xbf16, ub>
        npu.dma mte2 %gamma[0, 0] -> %66[0, 0] : !npu.buf<1x4096xbf16, gm> -> !npu.buf<1x4096xbf16, ub>
        npu.set_flag mte2 -> vector, 0
        npu.wait_flag mte2 -> vector, 0
        %67 = npu.alloc ub [16384] : !npu.buf<1x4096xf32, ub>
        npu.vcast %65 -> %67 none : !npu.buf<1x4096xbf16, ub> -> !npu.buf<1x4096xf32, ub>
        %68 = npu.alloc ub [32768] : !npu.buf<1x4096xf32, ub>
        %69 = npu.alloc ub [49152] : !npu.buf<1x1xf32, ub>
        npu.vmul %67, %67 -> %68 : !npu.buf<1x4096xf32, ub>, !npu.buf<1x4096xf32, ub> -> !npu.buf<1x4096xf32, ub>
        npu.vreduce sum %68 -> %69 : !npu.buf<1x4096xf32, ub> -> !npu.buf<1x1xf32, ub>
        npu.vmuls %69, 0.000244140625 -> %69 : !npu.buf<1x1xf32, ub> -> !npu.buf<1x1xf32, ub>
        npu.vadds %69, 1.000000e-06 -> %69 : !npu.buf<1x1xf32, ub> -> !npu.buf<1x1xf32, ub>
        npu.vrsqrt %69 -> %69 : !npu.buf<1x1xf32, ub> -> !npu.buf<1x1xf32, ub>
        %70 = npu.alloc ub [49184] : !npu.buf<1x4096xf32, ub>
        npu.vmul %67, %69 -> %70 : !npu.buf<1x4096xf32, ub>, !npu.buf<1x1xf32, ub> -> !npu.buf<1x4096xf32, ub>
        %71 = npu.alloc ub [65568] : !npu.buf<1x4096xf32, ub>
        npu.vcast %66 -> %71 none : !npu.buf<1x4096xbf16, ub> -> !npu.buf<1x4096xf32, ub>
        npu.vmul %70, %71 -> %70 : !npu.buf<1x4096xf32, ub>, !npu.buf<1x4096xf32, ub> -> !npu.buf<1x4096xf32, ub>
        %72 = npu.alloc ub [0] : !npu.buf<1x4096xbf16, ub>
        npu.vcast %70 -> %72 rint : !npu.buf<1x4096xf32, ub> -> !npu.buf<1x4096xbf16, ub>
        npu.set_flag vector -> mte3, 0
        npu.wait_flag vector -> mte3, 0
        npu.dma mte3 %72[0, 0] -> %ws_1[%row_2, 0] rows %rows_2 : !npu.buf<1x4096xbf16, ub> -> !npu.buf<?x4096xbf16, gm>
        npu.set_flag mte3 -> mte2, 1
        npu.wait_flag mte3 -> mte2, 1
      }
      npu.tasks "linear.1" cube (%body_3, %task_3) in (%bodies1, 16) after ["rmsnorm.1"] {
        %73 = npu.alloc l1 [0] : !npu.buf<16x1024xbf16, l1>
        %74 = npu.alloc l1 [32768] : !npu.buf<64x1024xbf16, l1>
        %75 = npu.alloc l0a [0] : !npu.buf<16x512xbf16, l0a>
        %76 = npu.alloc l0b [0] : !npu.buf<512x64xbf16, l0b>
        %77 = npu.alloc l0c [0] : !npu.buf<16x64xf32, l0c>
        %78 = arith.constant 1 : index
        %79 = arith.muli %body_3, %78 : index
        %start_3 = arith.addi %end128, %79 : index
        %80 = arith.constant 1 : index
        %81 = arith.addi %start_3, %80 : index
        %end_3 = arith.minui %81, %tokens : index
        %82 = arith.constant 0 : index
        %83 = arith.constant 1 : index
        %84 = arith.divui %task_3, %83 : index
        %85 = arith.constant 1 : index
        %86 = arith.remui %task_3, %85 : index
        %87 = arith.constant 64 : index
        %col_1 = arith.muli %84, %87 : index
        %88 = arith.constant 16 : index
        %89 = arith.muli %86, %88 : index
        %row_3 = arith.addi %start_3, %89 : index
        %90 = arith.subi %end_3, %row_3 : index
        %91 = arith.constant 16 : index
        %rows_3 = arith.minui %90, %91 : index
        %92 = arith.constant 4096 : index
        %93 = arith.muli %82, %92 : index
        npu.set_flag mte1 -> mte2, 0
        npu.set_flag cube -> mte1, 0
        %94 = arith.constant 4096 : index
        %95 = arith.addi %93, %94 : index
        %96 = arith.constant 1024 : index
        scf.for %97 = %93 to %95 step %96 {
          npu.wait_flag mte1 -> mte2, 0
          npu.dma mte2 %w[%col_1, %97] -> %74[0, 0] cache none_cacheable : !npu.buf<1024x4096xbf16, gm> -> !npu.buf<64x1024xbf16, l1>
          npu.dma mte2 %ws_1[%row_3, %97] -> %73[0, 0] rows %rows_3 : !npu.buf<?x4096xbf16, gm> -> !npu.buf<16x1024xbf16, l1>
          npu.set_flag mte2 -> mte1, 0
          npu.wait_flag mte2 -> mte1, 0
          %98 = arith.constant 0 : index
          %99 = arith.constant 1024 : index
          %100 = arith.constant 512 : index
          scf.for %101 = %98 to %99 step %100 {
            %102 = arith.subi %97, %93 : index
            %103 = arith.addi %102, %101 : index
            %104 = arith.constant 0 : index
            %105 = arith.cmpi ne, %103, %104 : index
            npu.wait_flag cube -> mte1, 0
            npu.dma mte1 %74[0, %101] -> %76[0, 0] transpose : !npu.buf<64x1024xbf16, l1> -> !npu.buf<512x64xbf16, l0b>
            npu.dma mte1 %73[0, %101] -> %75[0, 0] : !npu.buf<16x1024xbf16, l1> -> !npu.buf<16x512xbf16, l0a>
            npu.set_flag mte1 -> cube, 0
            npu.wait_flag mte1 -> cube, 0
            npu.mmad %75, %76 -> %77 rows %rows_3 acc %105 : !npu.buf<16x512xbf16, l0a>, !npu.buf<512x64xbf16, l0b> -> !npu.buf<16x64xf32, l0c>
            npu.set_flag cube -> mte1, 0
          }
          npu.set_flag mte1 -> mte2, 0
        }
        npu.wait_flag mte1 -> mte2, 0
        npu.wait_flag cube -> mte1, 0
        npu.set_flag cube -> fixpipe, 3
        npu.wait_flag cube -> fixpipe, 3
        npu.fixpipe %77[0, 0] -> %out[%row_3, %col_1] rows %rows_3 round rint : !npu.buf<16x64xf32, l0c> -> !npu.buf<?x1024xbf16, gm>
        npu.set_flag fixpipe -> cube, 4
        npu.wait_flag fixpipe -> cube, 4
      }
    }
    func.return
  }
}
