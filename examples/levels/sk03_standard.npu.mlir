// The standard SK-03 kernel (examples/sk03_standard.mlir) at the npu level, exactly as
// the pipeline writes it for the unroll list [128, 1] (the loops of sk03_standard.tile.mlir),
// with these comments added:
//   pto-opt --pass-pipeline='builtin.module(pto-sk03-pipeline{factors=128,1})' examples/sk03_standard.mlir
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
  func.func @linear_projection(%x: !npu.buf<?x4096xbf16, gm>, %gamma: !npu.buf<4096xbf16, gm>, %w: !npu.buf<1024x4096xbf16, gm> {pto.cache = #pto.cache<none_cacheable>}, %out: !npu.buf<?x1024xbf16, gm> {pto.output}) attributes {pto.target = "ascend910b1", pto.form = #pto.form<standard>} {
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
        %12 = arith.maxui %end, %row : index
        %13 = arith.subi %12, %row : index
        %14 = arith.constant 2 : index
        %rows = arith.minui %13, %14 : index
        %15 = npu.alloc ub [0] : !npu.buf<2x4096xbf16, ub>
        npu.dma mte2 %x[%row, 0] -> %15[0, 0] rows %rows : !npu.buf<?x4096xbf16, gm> -> !npu.buf<2x4096xbf16, ub>
        %16 = npu.alloc ub [16384] : !npu.buf<4096xbf16, ub>
        npu.dma mte2 %gamma[0] -> %16[0] : !npu.buf<4096xbf16, gm> -> !npu.buf<4096xbf16, ub>
        npu.set_flag mte2 -> vector, 0
        npu.wait_flag mte2 -> vector, 0
        %17 = npu.alloc ub [24576] : !npu.buf<2x4096xf32, ub>
        npu.vcast %15 -> %17 none : !npu.buf<2x4096xbf16, ub> -> !npu.buf<2x4096xf32, ub>
        %18 = npu.alloc ub [57344] : !npu.buf<2x4096xf32, ub>
        %19 = npu.alloc ub [90112] : !npu.buf<2x1xf32, ub>
        npu.vmul %17, %17 -> %18 : !npu.buf<2x4096xf32, ub>, !npu.buf<2x4096xf32, ub> -> !npu.buf<2x4096xf32, ub>
        npu.vreduce sum %18 -> %19 : !npu.buf<2x4096xf32, ub> -> !npu.buf<2x1xf32, ub>
        %20 = npu.alloc ub [90144] : !npu.buf<2x1xf32, ub>
        npu.vdup 4.096000e+03 -> %20 : !npu.buf<2x1xf32, ub>
        npu.vdiv %19, %20 -> %19 : !npu.buf<2x1xf32, ub>, !npu.buf<2x1xf32, ub> -> !npu.buf<2x1xf32, ub>
        npu.vadds %19, 1.000000e-06 -> %19 : !npu.buf<2x1xf32, ub> -> !npu.buf<2x1xf32, ub>
        npu.vsqrt %19 -> %19 : !npu.buf<2x1xf32, ub> -> !npu.buf<2x1xf32, ub>
        %21 = npu.alloc ub [90176] : !npu.buf<2x4096xf32, ub>
        npu.vdiv %17, %19 -> %21 : !npu.buf<2x4096xf32, ub>, !npu.buf<2x1xf32, ub> -> !npu.buf<2x4096xf32, ub>
        %22 = npu.alloc ub [122944] : !npu.buf<4096xf32, ub>
        npu.vcast %16 -> %22 none : !npu.buf<4096xbf16, ub> -> !npu.buf<4096xf32, ub>
        npu.vmul %21, %22 -> %21 : !npu.buf<2x4096xf32, ub>, !npu.buf<4096xf32, ub> -> !npu.buf<2x4096xf32, ub>
        %23 = npu.alloc ub [0] : !npu.buf<2x4096xbf16, ub>
        npu.vcast %21 -> %23 rint : !npu.buf<2x4096xf32, ub> -> !npu.buf<2x4096xbf16, ub>
        npu.set_flag vector -> mte3, 0
        npu.wait_flag vector -> mte3, 0
        npu.dma mte3 %23[0, 0] -> %ws[%row, 0] rows %rows : !npu.buf<2x4096xbf16, ub> -> !npu.buf<?x4096xbf16, gm>
        npu.set_flag mte3 -> mte2, 1
        npu.wait_flag mte3 -> mte2, 1
      }
      // Per body, 16 cube tasks, one per 128 x 64 output tile (the L0 tile; N = 1024): K
      // streams in 512-wide L1 slices (two copies of each, so one loads while the other is
      // used) and 256-wide L0 steps into L0C; the fixpipe casts to bf16. Task (b, i) is ready
      // once every rmsnorm.128 task of body b has ended (`hub`: through PyPTO's hub task, one
      // dispatch later), so body 0's cube tasks run while later bodies are still being normalised.
      npu.tasks "linear.128" cube (%body_1, %task_1) in (%bodies128, 16) after ["rmsnorm.128"] hub {
        %24 = npu.alloc l1 [0] : !npu.buf<128x512xbf16, l1>
        %25 = npu.alloc l1 [131072] : !npu.buf<128x512xbf16, l1>
        %26 = npu.alloc l1 [262144] : !npu.buf<64x512xbf16, l1>
        %27 = npu.alloc l1 [327680] : !npu.buf<64x512xbf16, l1>
        %28 = npu.alloc l0a [0] : !npu.buf<128x256xbf16, l0a>
        %29 = npu.alloc l0b [0] : !npu.buf<256x64xbf16, l0b>
        %30 = npu.alloc l0c [0] : !npu.buf<128x64xf32, l0c>
        %31 = arith.constant 128 : index
        %32 = arith.muli %body_1, %31 : index
        %start_1 = arith.addi %c0, %32 : index
        %33 = arith.constant 128 : index
        %34 = arith.addi %start_1, %33 : index
        %end_1 = arith.minui %34, %end128 : index
        %35 = arith.constant 0 : index
        %36 = arith.constant 1 : index
        %37 = arith.divui %task_1, %36 : index
        %38 = arith.constant 1 : index
        %39 = arith.remui %task_1, %38 : index
        %40 = arith.constant 64 : index
        %col = arith.muli %37, %40 : index
        %41 = arith.constant 128 : index
        %42 = arith.muli %39, %41 : index
        %row_1 = arith.addi %start_1, %42 : index
        %43 = arith.constant 4096 : index
        %44 = arith.muli %35, %43 : index
        %45 = arith.maxui %end_1, %row_1 : index
        %46 = arith.subi %45, %row_1 : index
        %47 = arith.constant 128 : index
        %rows_1 = arith.minui %46, %47 : index
        npu.set_flag mte1 -> mte2, 0
        npu.set_flag mte1 -> mte2, 1
        npu.set_flag mte1 -> mte2, 4
        npu.set_flag mte1 -> mte2, 5
        npu.set_flag cube -> mte1, 0
        %48 = arith.constant 4096 : index
        %49 = arith.addi %44, %48 : index
        %50 = arith.constant 1024 : index
        scf.for %51 = %44 to %49 step %50 {
          npu.wait_flag mte1 -> mte2, 0
          npu.dma mte2 %ws[%row_1, %51] -> %24[0, 0] rows %rows_1 : !npu.buf<?x4096xbf16, gm> -> !npu.buf<128x512xbf16, l1>
          npu.wait_flag mte1 -> mte2, 4
          npu.dma mte2 %w[%col, %51] -> %26[0, 0] cache none_cacheable : !npu.buf<1024x4096xbf16, gm> -> !npu.buf<64x512xbf16, l1>
          npu.set_flag mte2 -> mte1, 0
          npu.wait_flag mte2 -> mte1, 0
          %52 = arith.constant 0 : index
          %53 = arith.constant 512 : index
          %54 = arith.constant 256 : index
          scf.for %55 = %52 to %53 step %54 {
            %56 = arith.constant 512 : index
            %57 = arith.subi %51, %44 : index
            %58 = arith.addi %57, %55 : index
            %59 = arith.constant 0 : index
            %60 = arith.cmpi ne, %58, %59 : index
            npu.wait_flag cube -> mte1, 0
            npu.dma mte1 %26[0, %55] -> %29[0, 0] transpose : !npu.buf<64x512xbf16, l1> -> !npu.buf<256x64xbf16, l0b>
            npu.dma mte1 %24[0, %55] -> %28[0, 0] : !npu.buf<128x512xbf16, l1> -> !npu.buf<128x256xbf16, l0a>
            npu.set_flag mte1 -> cube, 0
            npu.wait_flag mte1 -> cube, 0
            npu.mmad %28, %29 -> %30 rows %rows_1 acc %60 : !npu.buf<128x256xbf16, l0a>, !npu.buf<256x64xbf16, l0b> -> !npu.buf<128x64xf32, l0c>
            npu.set_flag cube -> mte1, 0
          }
          npu.set_flag mte1 -> mte2, 4
          npu.set_flag mte1 -> mte2, 0
          %61 = arith.constant 512 : index
          %62 = arith.addi %51, %61 : index
          %63 = arith.cmpi ult, %62, %49 : index
          scf.if %63 {
            npu.wait_flag mte1 -> mte2, 1
            npu.dma mte2 %ws[%row_1, %62] -> %25[0, 0] rows %rows_1 : !npu.buf<?x4096xbf16, gm> -> !npu.buf<128x512xbf16, l1>
            npu.wait_flag mte1 -> mte2, 5
            npu.dma mte2 %w[%col, %62] -> %27[0, 0] cache none_cacheable : !npu.buf<1024x4096xbf16, gm> -> !npu.buf<64x512xbf16, l1>
            npu.set_flag mte2 -> mte1, 1
            npu.wait_flag mte2 -> mte1, 1
            %64 = arith.constant 0 : index
            %65 = arith.constant 512 : index
            %66 = arith.constant 256 : index
            scf.for %67 = %64 to %65 step %66 {
              %68 = arith.constant 512 : index
              %69 = arith.subi %62, %44 : index
              %70 = arith.addi %69, %67 : index
              %71 = arith.constant 0 : index
              %72 = arith.cmpi ne, %70, %71 : index
              npu.wait_flag cube -> mte1, 0
              npu.dma mte1 %27[0, %67] -> %29[0, 0] transpose : !npu.buf<64x512xbf16, l1> -> !npu.buf<256x64xbf16, l0b>
              npu.dma mte1 %25[0, %67] -> %28[0, 0] : !npu.buf<128x512xbf16, l1> -> !npu.buf<128x256xbf16, l0a>
              npu.set_flag mte1 -> cube, 0
              npu.wait_flag mte1 -> cube, 0
              npu.mmad %28, %29 -> %30 rows %rows_1 acc %72 : !npu.buf<128x256xbf16, l0a>, !npu.buf<256x64xbf16, l0b> -> !npu.buf<128x64xf32, l0c>
              npu.set_flag cube -> mte1, 0
            }
            npu.set_flag mte1 -> mte2, 5
            npu.set_flag mte1 -> mte2, 1
          }
        }
        npu.wait_flag mte1 -> mte2, 0
        npu.wait_flag mte1 -> mte2, 1
        npu.wait_flag mte1 -> mte2, 4
        npu.wait_flag mte1 -> mte2, 5
        npu.wait_flag cube -> mte1, 0
        npu.set_flag cube -> fixpipe, 3
        npu.wait_flag cube -> fixpipe, 3
        npu.fixpipe %30[0, 0] -> %out[%row_1, %col] rows %rows_1 round rint : !npu.buf<128x64xf32, l0c> -> !npu.buf<?x1024xbf16, gm>
        npu.set_flag fixpipe -> cube, 4
        npu.wait_flag fixpipe -> cube, 4
      }
      %73 = arith.subi %tokens, %end128 : index
      %74 = arith.constant 1 : index
      %bodies1 = arith.ceildivui %73, %74 : index
      // The remainder loop: bodies of one token; the cube's M tile is clipped to 16 rows.
      npu.tasks "rmsnorm.1" vector (%body_2, %task_2) in (%bodies1, 1) {
        %75 = arith.constant 1 : index
        %76 = arith.muli %body_2, %75 : index
        %start_2 = arith.addi %end128, %76 : index
        %77 = arith.constant 1 : index
        %78 = arith.addi %start_2, %77 : index
        %end_2 = arith.minui %78, %tokens : index
        %79 = arith.constant 1 : index
        %80 = arith.muli %task_2, %79 : index
        %row_2 = arith.addi %start_2, %80 : index
        %81 = arith.maxui %end_2, %row_2 : index
        %82 = arith.subi %81, %row_2 : index
        %83 = arith.constant 1 : index
        %rows_2 = arith.minui %82, %83 : index
        %84 = npu.alloc ub [0] : !npu.buf<1x4096xbf16, ub>
        npu.dma mte2 %x[%row_2, 0] -> %84[0, 0] rows %rows_2 : !npu.buf<?x4096xbf16, gm> -> !npu.buf<1x4096xbf16, ub>
        %85 = npu.alloc ub [8192] : !npu.buf<4096xbf16, ub>
        npu.dma mte2 %gamma[0] -> %85[0] : !npu.buf<4096xbf16, gm> -> !npu.buf<4096xbf16, ub>
        npu.set_flag mte2 -> vector, 0
        npu.wait_flag mte2 -> vector, 0
        %86 = npu.alloc ub [16384] : !npu.buf<1x4096xf32, ub>
        npu.vcast %84 -> %86 none : !npu.buf<1x4096xbf16, ub> -> !npu.buf<1x4096xf32, ub>
        %87 = npu.alloc ub [32768] : !npu.buf<1x4096xf32, ub>
        %88 = npu.alloc ub [49152] : !npu.buf<1x1xf32, ub>
        npu.vmul %86, %86 -> %87 : !npu.buf<1x4096xf32, ub>, !npu.buf<1x4096xf32, ub> -> !npu.buf<1x4096xf32, ub>
        npu.vreduce sum %87 -> %88 : !npu.buf<1x4096xf32, ub> -> !npu.buf<1x1xf32, ub>
        %89 = npu.alloc ub [49184] : !npu.buf<1x1xf32, ub>
        npu.vdup 4.096000e+03 -> %89 : !npu.buf<1x1xf32, ub>
        npu.vdiv %88, %89 -> %88 : !npu.buf<1x1xf32, ub>, !npu.buf<1x1xf32, ub> -> !npu.buf<1x1xf32, ub>
        npu.vadds %88, 1.000000e-06 -> %88 : !npu.buf<1x1xf32, ub> -> !npu.buf<1x1xf32, ub>
        npu.vsqrt %88 -> %88 : !npu.buf<1x1xf32, ub> -> !npu.buf<1x1xf32, ub>
        %90 = npu.alloc ub [49216] : !npu.buf<1x4096xf32, ub>
        npu.vdiv %86, %88 -> %90 : !npu.buf<1x4096xf32, ub>, !npu.buf<1x1xf32, ub> -> !npu.buf<1x4096xf32, ub>
        %91 = npu.alloc ub [65600] : !npu.buf<4096xf32, ub>
        npu.vcast %85 -> %91 none : !npu.buf<4096xbf16, ub> -> !npu.buf<4096xf32, ub>
        npu.vmul %90, %91 -> %90 : !npu.buf<1x4096xf32, ub>, !npu.buf<4096xf32, ub> -> !npu.buf<1x4096xf32, ub>
        %92 = npu.alloc ub [0] : !npu.buf<1x4096xbf16, ub>
        npu.vcast %90 -> %92 rint : !npu.buf<1x4096xf32, ub> -> !npu.buf<1x4096xbf16, ub>
        npu.set_flag vector -> mte3, 0
        npu.wait_flag vector -> mte3, 0
        npu.dma mte3 %92[0, 0] -> %ws[%row_2, 0] rows %rows_2 : !npu.buf<1x4096xbf16, ub> -> !npu.buf<?x4096xbf16, gm>
        npu.set_flag mte3 -> mte2, 1
        npu.wait_flag mte3 -> mte2, 1
      }
      npu.tasks "linear.1" cube (%body_3, %task_3) in (%bodies1, 16) after ["rmsnorm.1"] {
        %93 = npu.alloc l1 [0] : !npu.buf<16x1024xbf16, l1>
        %94 = npu.alloc l1 [32768] : !npu.buf<16x1024xbf16, l1>
        %95 = npu.alloc l1 [65536] : !npu.buf<64x1024xbf16, l1>
        %96 = npu.alloc l1 [196608] : !npu.buf<64x1024xbf16, l1>
        %97 = npu.alloc l0a [0] : !npu.buf<16x512xbf16, l0a>
        %98 = npu.alloc l0b [0] : !npu.buf<512x64xbf16, l0b>
        %99 = npu.alloc l0c [0] : !npu.buf<16x64xf32, l0c>
        %100 = arith.constant 1 : index
        %101 = arith.muli %body_3, %100 : index
        %start_3 = arith.addi %end128, %101 : index
        %102 = arith.constant 1 : index
        %103 = arith.addi %start_3, %102 : index
        %end_3 = arith.minui %103, %tokens : index
        %104 = arith.constant 0 : index
        %105 = arith.constant 1 : index
        %106 = arith.divui %task_3, %105 : index
        %107 = arith.constant 1 : index
        %108 = arith.remui %task_3, %107 : index
        %109 = arith.constant 64 : index
        %col_1 = arith.muli %106, %109 : index
        %110 = arith.constant 16 : index
        %111 = arith.muli %108, %110 : index
        %row_3 = arith.addi %start_3, %111 : index
        %112 = arith.constant 4096 : index
        %113 = arith.muli %104, %112 : index
        %114 = arith.maxui %end_3, %row_3 : index
        %115 = arith.subi %114, %row_3 : index
        %116 = arith.constant 16 : index
        %rows_3 = arith.minui %115, %116 : index
        npu.set_flag mte1 -> mte2, 0
        npu.set_flag mte1 -> mte2, 1
        npu.set_flag mte1 -> mte2, 4
        npu.set_flag mte1 -> mte2, 5
        npu.set_flag cube -> mte1, 0
        %117 = arith.constant 4096 : index
        %118 = arith.addi %113, %117 : index
        %119 = arith.constant 2048 : index
        scf.for %120 = %113 to %118 step %119 {
          npu.wait_flag mte1 -> mte2, 0
          npu.dma mte2 %ws[%row_3, %120] -> %93[0, 0] rows %rows_3 : !npu.buf<?x4096xbf16, gm> -> !npu.buf<16x1024xbf16, l1>
          npu.wait_flag mte1 -> mte2, 4
          npu.dma mte2 %w[%col_1, %120] -> %95[0, 0] cache none_cacheable : !npu.buf<1024x4096xbf16, gm> -> !npu.buf<64x1024xbf16, l1>
          npu.set_flag mte2 -> mte1, 0
          npu.wait_flag mte2 -> mte1, 0
          %121 = arith.constant 0 : index
          %122 = arith.constant 1024 : index
          %123 = arith.constant 512 : index
          scf.for %124 = %121 to %122 step %123 {
            %125 = arith.constant 1024 : index
            %126 = arith.subi %120, %113 : index
            %127 = arith.addi %126, %124 : index
            %128 = arith.constant 0 : index
            %129 = arith.cmpi ne, %127, %128 : index
            npu.wait_flag cube -> mte1, 0
            npu.dma mte1 %95[0, %124] -> %98[0, 0] transpose : !npu.buf<64x1024xbf16, l1> -> !npu.buf<512x64xbf16, l0b>
            npu.dma mte1 %93[0, %124] -> %97[0, 0] : !npu.buf<16x1024xbf16, l1> -> !npu.buf<16x512xbf16, l0a>
            npu.set_flag mte1 -> cube, 0
            npu.wait_flag mte1 -> cube, 0
            npu.mmad %97, %98 -> %99 rows %rows_3 acc %129 : !npu.buf<16x512xbf16, l0a>, !npu.buf<512x64xbf16, l0b> -> !npu.buf<16x64xf32, l0c>
            npu.set_flag cube -> mte1, 0
          }
          npu.set_flag mte1 -> mte2, 4
          npu.set_flag mte1 -> mte2, 0
          %130 = arith.constant 1024 : index
          %131 = arith.addi %120, %130 : index
          %132 = arith.cmpi ult, %131, %118 : index
          scf.if %132 {
            npu.wait_flag mte1 -> mte2, 1
            npu.dma mte2 %ws[%row_3, %131] -> %94[0, 0] rows %rows_3 : !npu.buf<?x4096xbf16, gm> -> !npu.buf<16x1024xbf16, l1>
            npu.wait_flag mte1 -> mte2, 5
            npu.dma mte2 %w[%col_1, %131] -> %96[0, 0] cache none_cacheable : !npu.buf<1024x4096xbf16, gm> -> !npu.buf<64x1024xbf16, l1>
            npu.set_flag mte2 -> mte1, 1
            npu.wait_flag mte2 -> mte1, 1
            %133 = arith.constant 0 : index
            %134 = arith.constant 1024 : index
            %135 = arith.constant 512 : index
            scf.for %136 = %133 to %134 step %135 {
              %137 = arith.constant 1024 : index
              %138 = arith.subi %131, %113 : index
              %139 = arith.addi %138, %136 : index
              %140 = arith.constant 0 : index
              %141 = arith.cmpi ne, %139, %140 : index
              npu.wait_flag cube -> mte1, 0
              npu.dma mte1 %96[0, %136] -> %98[0, 0] transpose : !npu.buf<64x1024xbf16, l1> -> !npu.buf<512x64xbf16, l0b>
              npu.dma mte1 %94[0, %136] -> %97[0, 0] : !npu.buf<16x1024xbf16, l1> -> !npu.buf<16x512xbf16, l0a>
              npu.set_flag mte1 -> cube, 0
              npu.wait_flag mte1 -> cube, 0
              npu.mmad %97, %98 -> %99 rows %rows_3 acc %141 : !npu.buf<16x512xbf16, l0a>, !npu.buf<512x64xbf16, l0b> -> !npu.buf<16x64xf32, l0c>
              npu.set_flag cube -> mte1, 0
            }
            npu.set_flag mte1 -> mte2, 5
            npu.set_flag mte1 -> mte2, 1
          }
        }
        npu.wait_flag mte1 -> mte2, 0
        npu.wait_flag mte1 -> mte2, 1
        npu.wait_flag mte1 -> mte2, 4
        npu.wait_flag mte1 -> mte2, 5
        npu.wait_flag cube -> mte1, 0
        npu.set_flag cube -> fixpipe, 3
        npu.wait_flag cube -> fixpipe, 3
        npu.fixpipe %99[0, 0] -> %out[%row_3, %col_1] rows %rows_3 round rint : !npu.buf<16x64xf32, l0c> -> !npu.buf<?x1024xbf16, gm>
        npu.set_flag fixpipe -> cube, 4
        npu.wait_flag fixpipe -> cube, 4
      }
    }
    func.return
  }
}
