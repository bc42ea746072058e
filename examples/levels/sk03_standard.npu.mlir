// The standard SK-03 kernel (examples/sk03_standard.mlir) at the npu level, written by
// hand as a tour of the dialect: 48 vector cores normalise 4-row tiles into a GM
// workspace; 24 cube cores then each take (128-token tile, 128-column N tile) tasks,
// stream K in 256-wide tiles through L1 -> L0A/L0B, accumulate in L0C and fixpipe
// the bf16 result out.
func.func @linear_projection(%x: !npu.buf<?x4096xbf16, gm>, %gamma: !npu.buf<1x4096xbf16, gm>,
                             %w: !npu.buf<1024x4096xbf16, gm>, %out: !npu.buf<?x1024xbf16, gm> {pto.output})
    attributes {pto.target = "ascend910b1"} {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c24 = arith.constant 24 : index
  %c128 = arith.constant 128 : index
  %c192 = arith.constant 192 : index
  %c256 = arith.constant 256 : index
  %c4096 = arith.constant 4096 : index
  %t = npu.dim %x, 0 : !npu.buf<?x4096xbf16, gm>
  %ws = npu.alloc gm (%t) : !npu.buf<?x4096xbf16, gm>
  %vtiles = arith.ceildivui %t, %c4 : index
  npu.launch cube 24 (%core) {
    %a1 = npu.alloc l1 [0] : !npu.buf<128x256xbf16, l1>
    %b1 = npu.alloc l1 [65536] : !npu.buf<128x256xbf16, l1>
    %a0 = npu.alloc l0a [0] : !npu.buf<128x256xbf16, l0a>
    %b0 = npu.alloc l0b [0] : !npu.buf<256x128xbf16, l0b>
    %acc = npu.alloc l0c [0] : !npu.buf<128x128xf32, l0c>
    // Every normalised row must be in GM before any cube task reads it.
    npu.cross_core_wait 0, %vtiles
    %ttiles = arith.ceildivui %t, %c128 : index
    %tasks = arith.muli %ttiles, %c8 : index
    scf.for %task = %core to %tasks step %c24 {
      %tt = arith.divui %task, %c8 : index
      %nt = arith.remui %task, %c8 : index
      %row = arith.muli %tt, %c128 : index
      %col = arith.muli %nt, %c128 : index
      %left = arith.subi %t, %row : index
      %rows = arith.minui %left, %c128 : index
      scf.for %k = %c0 to %c4096 step %c256 {
        npu.dma mte2 %ws[%row, %k] -> %a1[0, 0] rows %rows : !npu.buf<?x4096xbf16, gm> -> !npu.buf<128x256xbf16, l1>
        npu.dma mte2 %w[%col, %k] -> %b1[0, 0] cache none_cacheable : !npu.buf<1024x4096xbf16, gm> -> !npu.buf<128x256xbf16, l1>
        npu.set_flag mte2 -> mte1, 0
        npu.wait_flag mte2 -> mte1, 0
        npu.dma mte1 %a1[0, 0] -> %a0[0, 0] : !npu.buf<128x256xbf16, l1> -> !npu.buf<128x256xbf16, l0a>
        // The weight is [N, K] (b_trans): the L1 -> L0B copy transposes it.
        npu.dma mte1 %b1[0, 0] -> %b0[0, 0] transpose : !npu.buf<128x256xbf16, l1> -> !npu.buf<256x128xbf16, l0b>
        npu.set_flag mte1 -> cube, 0
        npu.wait_flag mte1 -> cube, 0
        %later = arith.cmpi ne, %k, %c0 : index
        npu.mmad %a0, %b0 -> %acc acc %later : !npu.buf<128x256xbf16, l0a>, !npu.buf<256x128xbf16, l0b> -> !npu.buf<128x128xf32, l0c>
        npu.set_flag cube -> mte2, 1
        npu.wait_flag cube -> mte2, 1
      }
      npu.set_flag cube -> fixpipe, 2
      npu.wait_flag cube -> fixpipe, 2
      npu.fixpipe %acc[0, 0] -> %out[%row, %col] rows %rows round rint : !npu.buf<128x128xf32, l0c> -> !npu.buf<?x1024xbf16, gm>
      npu.barrier fixpipe
    }
  } vector 48 (%v) {
    %xt = npu.alloc ub [0] : !npu.buf<4x4096xbf16, ub>
    %xf = npu.alloc ub [32768] : !npu.buf<4x4096xf32, ub>
    %sq = npu.alloc ub [98304] : !npu.buf<4x4096xf32, ub>
    %ss = npu.alloc ub [163840] : !npu.buf<4x1xf32, ub>
    %gb = npu.alloc ub [163872] : !npu.buf<1x4096xbf16, ub>
    %gf = npu.alloc ub [172064] : !npu.buf<1x4096xf32, ub>
    npu.dma mte2 %gamma[0, 0] -> %gb[0, 0] : !npu.buf<1x4096xbf16, gm> -> !npu.buf<1x4096xbf16, ub>
    npu.set_flag mte2 -> vector, 0
    npu.wait_flag mte2 -> vector, 0
    npu.vcast %gb -> %gf none : !npu.buf<1x4096xbf16, ub> -> !npu.buf<1x4096xf32, ub>
    %first = arith.muli %v, %c4 : index
    scf.for %r = %first to %t step %c192 {
      %left = arith.subi %t, %r : index
      %rows = arith.minui %left, %c4 : index
      npu.dma mte2 %x[%r, 0] -> %xt[0, 0] rows %rows : !npu.buf<?x4096xbf16, gm> -> !npu.buf<4x4096xbf16, ub>
      npu.set_flag mte2 -> vector, 1
      npu.wait_flag mte2 -> vector, 1
      npu.vcast %xt -> %xf none : !npu.buf<4x4096xbf16, ub> -> !npu.buf<4x4096xf32, ub>
      npu.vmul %xf, %xf -> %sq : !npu.buf<4x4096xf32, ub>, !npu.buf<4x4096xf32, ub> -> !npu.buf<4x4096xf32, ub>
      npu.vreduce sum %sq -> %ss : !npu.buf<4x4096xf32, ub> -> !npu.buf<4x1xf32, ub>
      npu.vmuls %ss, 2.44140625e-4 -> %ss : !npu.buf<4x1xf32, ub> -> !npu.buf<4x1xf32, ub>
      npu.vadds %ss, 1.0e-6 -> %ss : !npu.buf<4x1xf32, ub> -> !npu.buf<4x1xf32, ub>
      npu.vrsqrt %ss -> %ss : !npu.buf<4x1xf32, ub> -> !npu.buf<4x1xf32, ub>
      npu.vmul %xf, %ss -> %xf : !npu.buf<4x4096xf32, ub>, !npu.buf<4x1xf32, ub> -> !npu.buf<4x4096xf32, ub>
      npu.vmul %xf, %gf -> %xf : !npu.buf<4x4096xf32, ub>, !npu.buf<1x4096xf32, ub> -> !npu.buf<4x4096xf32, ub>
      npu.vcast %xf -> %xt rint : !npu.buf<4x4096xf32, ub> -> !npu.buf<4x4096xbf16, ub>
      npu.set_flag vector -> mte3, 0
      npu.wait_flag vector -> mte3, 0
      npu.dma mte3 %xt[0, 0] -> %ws[%r, 0] rows %rows : !npu.buf<4x4096xbf16, ub> -> !npu.buf<?x4096xbf16, gm>
      npu.cross_core_set 0
      npu.barrier mte3
    }
  }
  func.return
}
