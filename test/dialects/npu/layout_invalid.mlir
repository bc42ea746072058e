// RUN: pto-opt %s --split-input-file --verify-diagnostics
// The rules of an NZ argument at the npu level (`npu.layout = #pto.layout<nz>`).

// expected-error@+1 {{argument 0: 'npu.layout' must be a #pto.layout<...>}}
func.func @f(%w: !npu.buf<32x64xbf16, gm> {npu.layout = unit}) {
  func.return
}

// -----

// expected-error@+1 {{argument 0: an NZ tensor is a static 2-D matrix (a weight), got ?x64}}
func.func @f(%w: !npu.buf<?x64xbf16, gm> {npu.layout = #pto.layout<nz>}) {
  func.return
}

// -----

// expected-error@+1 {{argument 0: an NZ i8 tensor is whole 16x32 fractals: 32x16 is not a multiple of them}}
func.func @f(%w: !npu.buf<32x16xi8, gm> {npu.layout = #pto.layout<nz>}) {
  func.return
}

// -----

func.func @f(%w: !npu.buf<32x64xbf16, gm> {npu.layout = #pto.layout<nz>}) {
  npu.launch vector 1 (%v) {
    %u = npu.alloc ub [0] : !npu.buf<32x64xbf16, ub>
    // expected-error@+1 {{'npu.dma' reads the NZ argument #0: only a DMA into L1 does}}
    npu.dma mte2 %w[0, 0] -> %u[0, 0] : !npu.buf<32x64xbf16, gm> -> !npu.buf<32x64xbf16, ub>
  }
  func.return
}

// -----

func.func @f(%w: !npu.buf<32x64xbf16, gm> {npu.layout = #pto.layout<nz>}) {
  // expected-error@+1 {{'npu.view' a window 16x64 at [8, 0] of an NZ bf16 tensor cuts its 16x16 fractals}}
  %h = npu.view %w at [8, 0] : !npu.buf<32x64xbf16, gm> -> !npu.buf<16x64xbf16, gm>
  func.return
}

// -----

// A window of whole fractals is read, in turn, only by DMAs into L1.
func.func @f(%w: !npu.buf<32x64xbf16, gm> {npu.layout = #pto.layout<nz>}) {
  %h = npu.view %w at [16, 0] : !npu.buf<32x64xbf16, gm> -> !npu.buf<16x64xbf16, gm>
  npu.launch vector 1 (%v) {
    %u = npu.alloc ub [0] : !npu.buf<16x64xbf16, ub>
    // expected-error@+1 {{'npu.dma' reads the NZ argument #0: only a DMA into L1 does}}
    npu.dma mte2 %h[0, 0] -> %u[0, 0] : !npu.buf<16x64xbf16, gm> -> !npu.buf<16x64xbf16, ub>
  }
  func.return
}
