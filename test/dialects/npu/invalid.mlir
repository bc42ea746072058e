// RUN: pto-opt %s --split-input-file --verify-diagnostics
// Every verifier rule of the npu dialect, one chunk each.

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch vector 1 (%v) {
    // expected-error@+1 {{only gm buffers may have a dynamic dim, got ?x64 in ub}}
    %x = npu.alloc ub [0] : !npu.buf<?x64xf32, ub>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch vector 1 (%v) {
    // expected-error@+1 {{buffer element type must be one of bf16, f16, f32, i8, i32, got f64}}
    %x = npu.alloc ub [0] : !npu.buf<4x64xf64, ub>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch vector 1 (%v) {
    // expected-error@+1 {{buffer dims must be positive}}
    %x = npu.alloc ub [0] : !npu.buf<0x64xf32, ub>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch vector 1 (%v) {
    // expected-error@+1 {{'npu.alloc' needs 1 size operands for !npu.buf<?x64xf32, gm>, got 0}}
    %x = npu.alloc gm : !npu.buf<?x64xf32, gm>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch vector 1 (%v) {
    // expected-error@+1 {{'npu.alloc' gm workspaces take no offset}}
    %x = npu.alloc gm [0] (%n) : !npu.buf<?x64xf32, gm>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch vector 1 (%v) {
    // expected-error@+1 {{'npu.alloc' a ub buffer needs a byte offset}}
    %x = npu.alloc ub : !npu.buf<4x64xf32, ub>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch vector 1 (%v) {
    // expected-error@+1 {{'npu.alloc' offset 16 in ub is not a multiple of the 32-byte block}}
    %x = npu.alloc ub [16] : !npu.buf<4x64xf32, ub>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch vector 1 (%v) {
    // expected-error@+1 {{buffer !npu.buf<256x256xf32, ub> at offset 0 needs 262144 bytes of ub, but ascend910b1 has 196608}}
    %x = npu.alloc ub [0] : !npu.buf<256x256xf32, ub>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch cube 1 (%c) {
    // expected-error@+1 {{buffer !npu.buf<256x256xbf16, l0b> at offset 0 needs 131072 bytes of l0b, but ascend910b1 has 65536}}
    %x = npu.alloc l0b [0] : !npu.buf<256x256xbf16, l0b>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch cube 1 (%c) {
    // expected-error@+1 {{buffer !npu.buf<128x512xf32, l0c> at offset 0 needs 262144 bytes of l0c, but ascend910b1 has 131072}}
    %x = npu.alloc l0c [0] : !npu.buf<128x512xf32, l0c>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch cube 1 (%c) {
    // expected-error@+1 {{buffer !npu.buf<1024x512xbf16, l1> at offset 32 needs 1048608 bytes of l1, but ascend910b1 has 524288}}
    %x = npu.alloc l1 [32] : !npu.buf<1024x512xbf16, l1>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch vector 1 (%v) {
    %u = npu.alloc ub [0] : !npu.buf<4x64xf32, ub>
    %u2 = npu.alloc ub [1024] : !npu.buf<4x64xf32, ub>
    %r = npu.alloc ub [2048] : !npu.buf<4x1xf32, ub>
    %h = npu.alloc ub [4096] : !npu.buf<4x64xbf16, ub>
    %i = npu.alloc ub [8192] : !npu.buf<4x64xi32, ub>
    %w = npu.alloc ub [12288] : !npu.buf<4x32xf32, ub>
    // expected-error@+1 {{'npu.dma' destination needs 2 offsets, got 1}}
    npu.dma mte2 %g[%n, 0] -> %u[0] : !npu.buf<?x64xf32, gm> -> !npu.buf<4x64xf32, ub>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch vector 1 (%v) {
    %u = npu.alloc ub [0] : !npu.buf<4x64xf32, ub>
    %u2 = npu.alloc ub [1024] : !npu.buf<4x64xf32, ub>
    %r = npu.alloc ub [2048] : !npu.buf<4x1xf32, ub>
    %h = npu.alloc ub [4096] : !npu.buf<4x64xbf16, ub>
    %i = npu.alloc ub [8192] : !npu.buf<4x64xi32, ub>
    %w = npu.alloc ub [12288] : !npu.buf<4x32xf32, ub>
    // expected-error@+1 {{'npu.dma' source: rows/cols [2, +4) of axis 0 exceed its size 4}}
    npu.dma mte3 %u[2, 0] -> %g[0, 0] : !npu.buf<4x64xf32, ub> -> !npu.buf<?x64xf32, gm>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch vector 1 (%v) {
    %u = npu.alloc ub [0] : !npu.buf<4x64xf32, ub>
    %u2 = npu.alloc ub [1024] : !npu.buf<4x64xf32, ub>
    %r = npu.alloc ub [2048] : !npu.buf<4x1xf32, ub>
    %h = npu.alloc ub [4096] : !npu.buf<4x64xbf16, ub>
    %i = npu.alloc ub [8192] : !npu.buf<4x64xi32, ub>
    %w = npu.alloc ub [12288] : !npu.buf<4x32xf32, ub>
    // expected-error@+1 {{ub -> gm runs on mte3, not mte2}}
    npu.dma mte2 %u[0, 0] -> %g[0, 0] : !npu.buf<4x64xf32, ub> -> !npu.buf<?x64xf32, gm>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch vector 1 (%v) {
    %u = npu.alloc ub [0] : !npu.buf<4x64xf32, ub>
    %u2 = npu.alloc ub [1024] : !npu.buf<4x64xf32, ub>
    %r = npu.alloc ub [2048] : !npu.buf<4x1xf32, ub>
    %h = npu.alloc ub [4096] : !npu.buf<4x64xbf16, ub>
    %i = npu.alloc ub [8192] : !npu.buf<4x64xi32, ub>
    %w = npu.alloc ub [12288] : !npu.buf<4x32xf32, ub>
    // expected-error@+1 {{target ascend910b1 has no data path ub -> ub}}
    npu.dma mte2 %u[0, 0] -> %u2[0, 0] : !npu.buf<4x64xf32, ub> -> !npu.buf<4x64xf32, ub>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch vector 1 (%v) {
    %u = npu.alloc ub [0] : !npu.buf<4x64xf32, ub>
    %u2 = npu.alloc ub [1024] : !npu.buf<4x64xf32, ub>
    %r = npu.alloc ub [2048] : !npu.buf<4x1xf32, ub>
    %h = npu.alloc ub [4096] : !npu.buf<4x64xbf16, ub>
    %i = npu.alloc ub [8192] : !npu.buf<4x64xi32, ub>
    %w = npu.alloc ub [12288] : !npu.buf<4x32xf32, ub>
    // expected-error@+1 {{'npu.dma' cannot convert element types (use npu.vcast or npu.fixpipe)}}
    npu.dma mte2 %g[0, 0] -> %h[0, 0] : !npu.buf<?x64xf32, gm> -> !npu.buf<4x64xbf16, ub>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch cube 1 (%c) {
    %a = npu.alloc l0a [0] : !npu.buf<16x64xbf16, l0a>
    %b = npu.alloc l0b [0] : !npu.buf<64x16xbf16, l0b>
    %acc = npu.alloc l0c [0] : !npu.buf<16x16xf32, l0c>
    %l1 = npu.alloc l1 [0] : !npu.buf<16x64xbf16, l1>
    %i32 = npu.alloc l0c [1024] : !npu.buf<16x16xi32, l0c>
    // expected-error@+1 {{'npu.dma' a cache policy needs a gm side}}
    npu.dma mte1 %l1[0, 0] -> %a[0, 0] cache normal : !npu.buf<16x64xbf16, l1> -> !npu.buf<16x64xbf16, l0a>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch vector 1 (%v) {
    %u3 = npu.alloc ub [0] : !npu.buf<4x4x4xf32, ub>
    // expected-error@+1 {{'npu.dma' transpose works on rank-2 tiles}}
    npu.dma mte2 %g3[0, 0, 0] -> %u3[0, 0, 0] transpose : !npu.buf<4x4x4xf32, gm> -> !npu.buf<4x4x4xf32, ub>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch cube 1 (%c) {
    %a = npu.alloc l0a [0] : !npu.buf<16x64xbf16, l0a>
    %b = npu.alloc l0b [0] : !npu.buf<64x16xbf16, l0b>
    %acc = npu.alloc l0c [0] : !npu.buf<16x16xf32, l0c>
    %l1 = npu.alloc l1 [0] : !npu.buf<16x64xbf16, l1>
    %i32 = npu.alloc l0c [1024] : !npu.buf<16x16xi32, l0c>
    // expected-error@+1 {{target ascend910b1 has no data path l1 -> l1}}
    npu.dma mte1 %l1[0, 0] -> %l1[0, 0] : !npu.buf<16x64xbf16, l1> -> !npu.buf<16x64xbf16, l1>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch cube 1 (%c) {
    %a = npu.alloc l0a [0] : !npu.buf<16x64xbf16, l0a>
    %b = npu.alloc l0b [0] : !npu.buf<64x16xbf16, l0b>
    %acc = npu.alloc l0c [0] : !npu.buf<16x16xf32, l0c>
    %l1 = npu.alloc l1 [0] : !npu.buf<16x64xbf16, l1>
    %i32 = npu.alloc l0c [1024] : !npu.buf<16x16xi32, l0c>
    // expected-error@+1 {{'npu.fixpipe' source must be in l0c, got l1}}
    npu.fixpipe %l1[0, 0] -> %g[0, 0] : !npu.buf<16x64xbf16, l1> -> !npu.buf<?x64xf32, gm>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %gi: !npu.buf<?x64xi32, gm>) {
  %n = arith.constant 4 : index
  npu.launch cube 1 (%c) {
    %a = npu.alloc l0a [0] : !npu.buf<16x64xbf16, l0a>
    %b = npu.alloc l0b [0] : !npu.buf<64x16xbf16, l0b>
    %acc = npu.alloc l0c [0] : !npu.buf<16x16xf32, l0c>
    %l1 = npu.alloc l1 [0] : !npu.buf<16x64xbf16, l1>
    %i32 = npu.alloc l0c [1024] : !npu.buf<16x16xi32, l0c>
    // expected-error@+1 {{'npu.fixpipe' cannot convert f32 to i32}}
    npu.fixpipe %acc[0, 0] -> %gi[0, 0] : !npu.buf<16x16xf32, l0c> -> !npu.buf<?x64xi32, gm>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %gb: !npu.buf<?x64xbf16, gm>) {
  %n = arith.constant 4 : index
  npu.launch cube 1 (%c) {
    %a = npu.alloc l0a [0] : !npu.buf<16x64xbf16, l0a>
    %b = npu.alloc l0b [0] : !npu.buf<64x16xbf16, l0b>
    %acc = npu.alloc l0c [0] : !npu.buf<16x16xf32, l0c>
    %l1 = npu.alloc l1 [0] : !npu.buf<16x64xbf16, l1>
    %i32 = npu.alloc l0c [1024] : !npu.buf<16x16xi32, l0c>
    // expected-error@+1 {{'npu.fixpipe' f32 -> bf16 rounds: give a round mode}}
    npu.fixpipe %acc[0, 0] -> %gb[0, 0] : !npu.buf<16x16xf32, l0c> -> !npu.buf<?x64xbf16, gm>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch cube 1 (%c) {
    %a = npu.alloc l0a [0] : !npu.buf<16x64xbf16, l0a>
    %b = npu.alloc l0b [0] : !npu.buf<64x16xbf16, l0b>
    %acc = npu.alloc l0c [0] : !npu.buf<16x16xf32, l0c>
    %l1 = npu.alloc l1 [0] : !npu.buf<16x64xbf16, l1>
    %i32 = npu.alloc l0c [1024] : !npu.buf<16x16xi32, l0c>
    // expected-error@+1 {{'npu.fixpipe' round mode 'none' is implied by omitting it}}
    npu.fixpipe %acc[0, 0] -> %g[0, 0] round none : !npu.buf<16x16xf32, l0c> -> !npu.buf<?x64xf32, gm>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch cube 1 (%c) {
    %a = npu.alloc l0a [0] : !npu.buf<16x64xbf16, l0a>
    %b = npu.alloc l0b [0] : !npu.buf<64x16xbf16, l0b>
    %acc = npu.alloc l0c [0] : !npu.buf<16x16xf32, l0c>
    %l1 = npu.alloc l1 [0] : !npu.buf<16x64xbf16, l1>
    %i32 = npu.alloc l0c [1024] : !npu.buf<16x16xi32, l0c>
    // expected-error@+1 {{'npu.fixpipe' deq applies to i32 accumulators}}
    npu.fixpipe %acc[0, 0] -> %g[0, 0] deq 0.5 : !npu.buf<16x16xf32, l0c> -> !npu.buf<?x64xf32, gm>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch cube 1 (%c) {
    %a = npu.alloc l0a [0] : !npu.buf<16x64xbf16, l0a>
    %b = npu.alloc l0b [0] : !npu.buf<64x16xbf16, l0b>
    %acc = npu.alloc l0c [0] : !npu.buf<16x16xf32, l0c>
    %l1 = npu.alloc l1 [0] : !npu.buf<16x64xbf16, l1>
    %i32 = npu.alloc l0c [1024] : !npu.buf<16x16xi32, l0c>
    %l1f = npu.alloc l1 [4096] : !npu.buf<16x16xf32, l1>
    // expected-error@+1 {{'npu.fixpipe' atomic_add needs a gm destination}}
    npu.fixpipe %acc[0, 0] -> %l1f[0, 0] atomic_add : !npu.buf<16x16xf32, l0c> -> !npu.buf<16x16xf32, l1>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch cube 1 (%c) {
    %a = npu.alloc l0a [0] : !npu.buf<16x64xbf16, l0a>
    %b = npu.alloc l0b [0] : !npu.buf<64x16xbf16, l0b>
    %acc = npu.alloc l0c [0] : !npu.buf<16x16xf32, l0c>
    %l1 = npu.alloc l1 [0] : !npu.buf<16x64xbf16, l1>
    %i32 = npu.alloc l0c [1024] : !npu.buf<16x16xi32, l0c>
    // expected-error@+1 {{'npu.mmad' lhs must be in l0a, got l1}}
    npu.mmad %l1, %b -> %acc : !npu.buf<16x64xbf16, l1>, !npu.buf<64x16xbf16, l0b> -> !npu.buf<16x16xf32, l0c>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch cube 1 (%c) {
    %a = npu.alloc l0a [0] : !npu.buf<16x64xbf16, l0a>
    %b = npu.alloc l0b [0] : !npu.buf<64x16xbf16, l0b>
    %acc = npu.alloc l0c [0] : !npu.buf<16x16xf32, l0c>
    %l1 = npu.alloc l1 [0] : !npu.buf<16x64xbf16, l1>
    %i32 = npu.alloc l0c [1024] : !npu.buf<16x16xi32, l0c>
    %b2 = npu.alloc l0b [4096] : !npu.buf<32x16xbf16, l0b>
    // expected-error@+1 {{'npu.mmad' shapes 16x64 x 32x16 -> 16x16 do not agree}}
    npu.mmad %a, %b2 -> %acc : !npu.buf<16x64xbf16, l0a>, !npu.buf<32x16xbf16, l0b> -> !npu.buf<16x16xf32, l0c>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch cube 1 (%c) {
    %a = npu.alloc l0a [0] : !npu.buf<16x64xbf16, l0a>
    %b = npu.alloc l0b [0] : !npu.buf<64x16xbf16, l0b>
    %acc = npu.alloc l0c [0] : !npu.buf<16x16xf32, l0c>
    %l1 = npu.alloc l1 [0] : !npu.buf<16x64xbf16, l1>
    %i32 = npu.alloc l0c [1024] : !npu.buf<16x16xi32, l0c>
    %bi = npu.alloc l0b [4096] : !npu.buf<64x16xi8, l0b>
    // expected-error@+1 {{'npu.mmad' takes two bf16, f16, i8 or f32 inputs, got bf16 and i8}}
    npu.mmad %a, %bi -> %acc : !npu.buf<16x64xbf16, l0a>, !npu.buf<64x16xi8, l0b> -> !npu.buf<16x16xf32, l0c>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch cube 1 (%c) {
    %a = npu.alloc l0a [0] : !npu.buf<16x64xbf16, l0a>
    %b = npu.alloc l0b [0] : !npu.buf<64x16xbf16, l0b>
    %acc = npu.alloc l0c [0] : !npu.buf<16x16xf32, l0c>
    %l1 = npu.alloc l1 [0] : !npu.buf<16x64xbf16, l1>
    %i32 = npu.alloc l0c [1024] : !npu.buf<16x16xi32, l0c>
    // expected-error@+1 {{'npu.mmad' bf16 inputs accumulate in f32, got i32}}
    npu.mmad %a, %b -> %i32 : !npu.buf<16x64xbf16, l0a>, !npu.buf<64x16xbf16, l0b> -> !npu.buf<16x16xi32, l0c>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch vector 1 (%v) {
    %u = npu.alloc ub [0] : !npu.buf<4x64xf32, ub>
    %u2 = npu.alloc ub [1024] : !npu.buf<4x64xf32, ub>
    %r = npu.alloc ub [2048] : !npu.buf<4x1xf32, ub>
    %h = npu.alloc ub [4096] : !npu.buf<4x64xbf16, ub>
    %i = npu.alloc ub [8192] : !npu.buf<4x64xi32, ub>
    %w = npu.alloc ub [12288] : !npu.buf<4x32xf32, ub>
    %gm = npu.alloc gm (%n) : !npu.buf<?x64xf32, gm>
    // expected-error@+1 {{'npu.vadd' operand must be in ub, got gm}}
    npu.vadd %gm, %u -> %u : !npu.buf<?x64xf32, gm>, !npu.buf<4x64xf32, ub> -> !npu.buf<4x64xf32, ub>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch vector 1 (%v) {
    %u = npu.alloc ub [0] : !npu.buf<4x64xf32, ub>
    %u2 = npu.alloc ub [1024] : !npu.buf<4x64xf32, ub>
    %r = npu.alloc ub [2048] : !npu.buf<4x1xf32, ub>
    %h = npu.alloc ub [4096] : !npu.buf<4x64xbf16, ub>
    %i = npu.alloc ub [8192] : !npu.buf<4x64xi32, ub>
    %w = npu.alloc ub [12288] : !npu.buf<4x32xf32, ub>
    // expected-error@+1 {{'npu.vadd' rhs 4x32 does not broadcast to 4x64}}
    npu.vadd %u, %w -> %u : !npu.buf<4x64xf32, ub>, !npu.buf<4x32xf32, ub> -> !npu.buf<4x64xf32, ub>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch vector 1 (%v) {
    %u = npu.alloc ub [0] : !npu.buf<4x64xf32, ub>
    %u2 = npu.alloc ub [1024] : !npu.buf<4x64xf32, ub>
    %r = npu.alloc ub [2048] : !npu.buf<4x1xf32, ub>
    %h = npu.alloc ub [4096] : !npu.buf<4x64xbf16, ub>
    %i = npu.alloc ub [8192] : !npu.buf<4x64xi32, ub>
    %w = npu.alloc ub [12288] : !npu.buf<4x32xf32, ub>
    // expected-error@+1 {{'npu.vmul' operands must share one element type}}
    npu.vmul %u, %h -> %u : !npu.buf<4x64xf32, ub>, !npu.buf<4x64xbf16, ub> -> !npu.buf<4x64xf32, ub>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch vector 1 (%v) {
    %u = npu.alloc ub [0] : !npu.buf<4x64xf32, ub>
    %u2 = npu.alloc ub [1024] : !npu.buf<4x64xf32, ub>
    %r = npu.alloc ub [2048] : !npu.buf<4x1xf32, ub>
    %h = npu.alloc ub [4096] : !npu.buf<4x64xbf16, ub>
    %i = npu.alloc ub [8192] : !npu.buf<4x64xi32, ub>
    %w = npu.alloc ub [12288] : !npu.buf<4x32xf32, ub>
    // expected-error@+1 {{'npu.vsqrt' source and destination must have one shape and element type}}
    npu.vsqrt %u -> %r : !npu.buf<4x64xf32, ub> -> !npu.buf<4x1xf32, ub>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch vector 1 (%v) {
    %u = npu.alloc ub [0] : !npu.buf<4x64xf32, ub>
    %u2 = npu.alloc ub [1024] : !npu.buf<4x64xf32, ub>
    %r = npu.alloc ub [2048] : !npu.buf<4x1xf32, ub>
    %h = npu.alloc ub [4096] : !npu.buf<4x64xbf16, ub>
    %i = npu.alloc ub [8192] : !npu.buf<4x64xi32, ub>
    %w = npu.alloc ub [12288] : !npu.buf<4x32xf32, ub>
    // expected-error@+1 {{'npu.vexp' works on float data}}
    npu.vexp %i -> %i : !npu.buf<4x64xi32, ub> -> !npu.buf<4x64xi32, ub>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch vector 1 (%v) {
    %u = npu.alloc ub [0] : !npu.buf<4x64xf32, ub>
    %u2 = npu.alloc ub [1024] : !npu.buf<4x64xf32, ub>
    %r = npu.alloc ub [2048] : !npu.buf<4x1xf32, ub>
    %h = npu.alloc ub [4096] : !npu.buf<4x64xbf16, ub>
    %i = npu.alloc ub [8192] : !npu.buf<4x64xi32, ub>
    %w = npu.alloc ub [12288] : !npu.buf<4x32xf32, ub>
    // expected-error@+1 {{'npu.vmuls' source and destination must have one shape and element type}}
    npu.vmuls %u, 2.0 -> %h : !npu.buf<4x64xf32, ub> -> !npu.buf<4x64xbf16, ub>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch vector 1 (%v) {
    %u = npu.alloc ub [0] : !npu.buf<4x64xf32, ub>
    %u2 = npu.alloc ub [1024] : !npu.buf<4x64xf32, ub>
    %r = npu.alloc ub [2048] : !npu.buf<4x1xf32, ub>
    %h = npu.alloc ub [4096] : !npu.buf<4x64xbf16, ub>
    %i = npu.alloc ub [8192] : !npu.buf<4x64xi32, ub>
    %w = npu.alloc ub [12288] : !npu.buf<4x32xf32, ub>
    // expected-error@+1 {{'npu.vreduce' has no mean: reduce sum, then npu.vmuls by 1/K}}
    npu.vreduce mean %u -> %r : !npu.buf<4x64xf32, ub> -> !npu.buf<4x1xf32, ub>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch vector 1 (%v) {
    %u = npu.alloc ub [0] : !npu.buf<4x64xf32, ub>
    %u2 = npu.alloc ub [1024] : !npu.buf<4x64xf32, ub>
    %r = npu.alloc ub [2048] : !npu.buf<4x1xf32, ub>
    %h = npu.alloc ub [4096] : !npu.buf<4x64xbf16, ub>
    %i = npu.alloc ub [8192] : !npu.buf<4x64xi32, ub>
    %w = npu.alloc ub [12288] : !npu.buf<4x32xf32, ub>
    // expected-error@+1 {{'npu.vreduce' destination must be 4x1xf32}}
    npu.vreduce sum %u -> %u2 : !npu.buf<4x64xf32, ub> -> !npu.buf<4x64xf32, ub>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch vector 1 (%v) {
    %u = npu.alloc ub [0] : !npu.buf<4x64xf32, ub>
    %u2 = npu.alloc ub [1024] : !npu.buf<4x64xf32, ub>
    %r = npu.alloc ub [2048] : !npu.buf<4x1xf32, ub>
    %h = npu.alloc ub [4096] : !npu.buf<4x64xbf16, ub>
    %i = npu.alloc ub [8192] : !npu.buf<4x64xi32, ub>
    %w = npu.alloc ub [12288] : !npu.buf<4x32xf32, ub>
    // expected-error@+1 {{'npu.vcast' source and destination shapes differ}}
    npu.vcast %u -> %r rint : !npu.buf<4x64xf32, ub> -> !npu.buf<4x1xf32, ub>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch vector 1 (%v) {
    %u = npu.alloc ub [0] : !npu.buf<4x64xf32, ub>
    %u2 = npu.alloc ub [1024] : !npu.buf<4x64xf32, ub>
    %r = npu.alloc ub [2048] : !npu.buf<4x1xf32, ub>
    %h = npu.alloc ub [4096] : !npu.buf<4x64xbf16, ub>
    %i = npu.alloc ub [8192] : !npu.buf<4x64xi32, ub>
    %w = npu.alloc ub [12288] : !npu.buf<4x32xf32, ub>
    // expected-error@+1 {{'npu.vcast' conversion f32 -> bf16 rounds: give a round mode}}
    npu.vcast %u -> %h none : !npu.buf<4x64xf32, ub> -> !npu.buf<4x64xbf16, ub>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch vector 1 (%v) {
    // expected-error@+1 {{'npu.set_flag' needs two named pipes, not 'all'}}
    npu.set_flag all -> vector, 0
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch vector 1 (%v) {
    // expected-error@+1 {{'npu.wait_flag' orders two different pipes; use npu.barrier within one}}
    npu.wait_flag vector -> vector, 0
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch vector 1 (%v) {
    // expected-error@+1 {{'npu.set_flag' event id must be in 0..7}}
    npu.set_flag mte2 -> vector, 8
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch cube 1 (%c) {
    // expected-error@+1 {{the cube program cannot touch UB ('npu.alloc')}}
    %x = npu.alloc ub [0] : !npu.buf<4x64xf32, ub>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch vector 1 (%v) {
    // expected-error@+1 {{the vector program cannot touch l1 ('npu.alloc')}}
    %x = npu.alloc l1 [0] : !npu.buf<4x64xf32, l1>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch cube 1 (%c) {
    %x = npu.alloc l0c [0] : !npu.buf<4x64xf32, l0c>
    // expected-error@+1 {{'npu.vdup' is a vector instruction: it belongs in the vector program}}
    npu.vdup 0.0 -> %x : !npu.buf<4x64xf32, l0c>
  }
  func.return
}
// -----

// An integer buffer is filled with an integer of its range (the immediate is an f32).
func.func @f() {
  npu.launch vector 1 (%v) {
    %a = npu.alloc ub [0] : !npu.buf<4x64xi8, ub>
    %b = npu.alloc ub [256] : !npu.buf<4x64xi32, ub>
    npu.vdup -128.0 -> %a : !npu.buf<4x64xi8, ub>
    npu.vdup 1.0e+09 -> %b : !npu.buf<4x64xi32, ub>
    // expected-error@+1 {{'npu.vdup' immediate 200 is not a value of i8: an integer in [-128, 127]}}
    npu.vdup 200.0 -> %a : !npu.buf<4x64xi8, ub>
  }
  func.return
}
// -----

func.func @f() {
  npu.launch vector 1 (%v) {
    %a = npu.alloc ub [0] : !npu.buf<4x64xi8, ub>
    // expected-error@+1 {{'npu.vdup' immediate 2.5 is not a value of i8: an integer in [-128, 127]}}
    npu.vdup 2.5 -> %a : !npu.buf<4x64xi8, ub>
  }
  func.return
}
// -----

func.func @f() {
  npu.launch vector 1 (%v) {
    %b = npu.alloc ub [0] : !npu.buf<4x64xi32, ub>
    // expected-error@+1 {{'npu.vdup' immediate 1e+30 is not a value of i32: an integer in [-2147483648, 2147483647]}}
    npu.vdup 1.0e+30 -> %b : !npu.buf<4x64xi32, ub>
  }
  func.return
}
// -----

func.func @f() {
  // expected-error@+1 {{cube core count 25 is outside 0..24 of target ascend910b1}}
  npu.launch cube 25 (%c) {
  }
  func.return
}
// -----

func.func @f() attributes {pto.target = "ascend950"} {
  // expected-error@+1 {{vector core count 57 is outside 0..56 of target ascend950}}
  npu.launch vector 57 (%c) {
  }
  func.return
}
// -----

func.func @f() {
  // expected-error@+1 {{the cube program needs a region exactly when its core count is positive}}
  "npu.launch"() <{cube_cores = 0 : i64, vector_cores = 0 : i64}> ({
  ^bb0(%c: index):
  }, {}) : () -> ()
  func.return
}
// -----

func.func @f() {
  // expected-error@+1 {{the vector program is one block with one index argument (the core id)}}
  "npu.launch"() <{cube_cores = 0 : i64, vector_cores = 1 : i64}> ({}, {
  ^bb0(%c: i32):
  }) : () -> ()
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>) {
  // expected-error@+1 {{'npu.dim' dim 2 is out of range for a rank-2 buffer}}
  %d = npu.dim %g, 2 : !npu.buf<?x64xf32, gm>
  func.return
}
// -----

// A2/A3 has no UB -> L1 path, even where the pipe table knows one (the 950 has it).
func.func @f() {
  %u = npu.alloc ub [0] : !npu.buf<4x64xf32, ub>
  %l = npu.alloc l1 [0] : !npu.buf<4x64xf32, l1>
  // expected-error@+1 {{target ascend910b1 has no data path ub -> l1}}
  npu.dma mte3 %u[0, 0] -> %l[0, 0] : !npu.buf<4x64xf32, ub> -> !npu.buf<4x64xf32, l1>
  func.return
}

// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>) {
  %u = npu.alloc ub [0] : !npu.buf<4x64xf32, ub>
  // expected-error@+1 {{'npu.dma' source: dynamic offsets and operands disagree}}
  "npu.dma"(%g, %u) <{pipe = #npu.pipe<mte2>, static_src = array<i64: -9223372036854775808, 0>, static_dst = array<i64: 0, 0>, operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0>}> : (!npu.buf<?x64xf32, gm>, !npu.buf<4x64xf32, ub>) -> ()
  func.return
}

// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>) {
  // expected-error@+1 {{'npu.reshape' element count differs}}
  %v = npu.reshape %g : !npu.buf<?x64xf32, gm> -> !npu.buf<?x8x4xf32, gm>
  func.return
}

// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>) {
  // expected-error@+1 {{'npu.reshape' a dynamic dim must be dim 0 of both}}
  %v = npu.reshape %g : !npu.buf<?x64xf32, gm> -> !npu.buf<64x?xf32, gm>
  func.return
}

// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>) {
  // expected-error@+1 {{'npu.reshape' cannot change the element type}}
  %v = npu.reshape %g : !npu.buf<?x64xf32, gm> -> !npu.buf<?x64xi32, gm>
  func.return
}

// -----

func.func @f() {
  %u = npu.alloc l1 [0] : !npu.buf<4x64xf32, l1>
  // expected-error@+1 {{'npu.reshape' views a gm or ub buffer in the same space}}
  %v = npu.reshape %u : !npu.buf<4x64xf32, l1> -> !npu.buf<256xf32, l1>
  func.return
}

// -----

func.func @f(%g: !npu.buf<256xf32, gm>) {
  %u = npu.alloc ub [0] : !npu.buf<256xf32, ub>
  // expected-error@+1 {{'npu.reshape' views a gm or ub buffer in the same space}}
  %v = npu.reshape %u : !npu.buf<256xf32, ub> -> !npu.buf<1x256xf32, gm>
  func.return
}

// -----

func.func @graph_stitch(%x: !npu.buf<?x64xf32, gm>) {
  // expected-error@+1 {{stitch 0: at least one loop body per stitch}}
  npu.graph cube 24 vector 48 stitch 0 {
  }
  func.return
}

// -----

func.func @graph_cores(%x: !npu.buf<?x64xf32, gm>) {
  // expected-error@+1 {{cube core count 25 is outside 1..24 of target ascend910b1}}
  npu.graph cube 25 vector 48 {
  }
  func.return
}

// -----

func.func @graph_labels(%x: !npu.buf<?x64xf32, gm>) {
  npu.graph cube 24 vector 48 {
    %n = npu.dim %x, 0 : !npu.buf<?x64xf32, gm>
    npu.tasks "a" vector (%b, %i) in (%n, 1) {
    }
    // expected-error@+1 {{task group "a" is defined twice in this graph}}
    npu.tasks "a" vector (%b, %i) in (%n, 1) {
    }
  }
  func.return
}

// -----

func.func @graph_hub(%x: !npu.buf<?x64xf32, gm>) {
  npu.graph cube 24 vector 48 {
    %n = npu.dim %x, 0 : !npu.buf<?x64xf32, gm>
    // expected-error@+1 {{'hub' needs an 'after' list: a HUB stands between producers and their consumers}}
    npu.tasks "a" vector (%b, %i) in (%n, 1) hub {
    }
  }
  func.return
}

// -----

func.func @graph_succ_count(%x: !npu.buf<?x64xf32, gm>) {
  npu.graph cube 24 vector 48 {
    %n = npu.dim %x, 0 : !npu.buf<?x64xf32, gm>
    // expected-error@+1 {{'succ' gives 2 counts: one for every task, or one per task of a body (3)}}
    npu.tasks "a" vector (%b, %i) in (%n, 3) succ [0, 0] {
    }
  }
  func.return
}

// -----

func.func @graph_succ_many(%x: !npu.buf<?x64xf32, gm>) {
  npu.graph cube 24 vector 48 {
    %n = npu.dim %x, 0 : !npu.buf<?x64xf32, gm>
    // expected-error@+1 {{task group "a" gives a task 3 successors, but the groups after it have 2}}
    npu.tasks "a" vector (%b, %i) in (%n, 2) succ [1, 3] {
    }
    npu.tasks "b" cube (%b, %i) in (%n, 2) after ["a"] succ 0 {
    }
  }
  func.return
}

// -----

func.func @graph_succ_none(%x: !npu.buf<?x64xf32, gm>) {
  npu.graph cube 24 vector 48 {
    %n = npu.dim %x, 0 : !npu.buf<?x64xf32, gm>
    // expected-error@+1 {{task group "a" gives a task no successor, but "b" come after it}}
    npu.tasks "a" vector (%b, %i) in (%n, 2) succ [1, 0] {
    }
    npu.tasks "b" cube (%b, %i) in (%n, 4) after ["a"] hub {
    }
  }
  func.return
}

// -----

func.func @graph_after(%x: !npu.buf<?x64xf32, gm>) {
  npu.graph cube 24 vector 48 {
    %n = npu.dim %x, 0 : !npu.buf<?x64xf32, gm>
    // expected-error@+1 {{task group "b" depends on "a", which is not an earlier group of this graph}}
    npu.tasks "b" cube (%b, %i) in (%n, 1) after ["a"] {
    }
  }
  func.return
}

// -----

func.func @graph_bodies(%x: !npu.buf<?x64xf32, gm>) {
  npu.graph cube 24 vector 48 {
    %n = npu.dim %x, 0 : !npu.buf<?x64xf32, gm>
    %m = npu.dim %x, 1 : !npu.buf<?x64xf32, gm>
    npu.tasks "a" vector (%b, %i) in (%n, 1) {
    }
    // expected-error@+1 {{task group "b" depends on "a" body by body: both need the same body count value}}
    npu.tasks "b" cube (%b, %i) in (%m, 1) after ["a"] {
    }
  }
  func.return
}

// -----

func.func @graph_twice(%x: !npu.buf<?x64xf32, gm>) {
  npu.graph cube 24 vector 48 {
    %n = npu.dim %x, 0 : !npu.buf<?x64xf32, gm>
    npu.tasks "a" vector (%b, %i) in (%n, 1) {
    }
    // expected-error@+1 {{task group "b" names a group twice in `after`}}
    npu.tasks "b" cube (%b, %i) in (%n, 1) after ["a", "a"] {
    }
  }
  func.return
}

// -----

func.func @tasks_outside(%x: !npu.buf<?x64xf32, gm>) {
  %n = npu.dim %x, 0 : !npu.buf<?x64xf32, gm>
  // expected-error@+1 {{'npu.tasks' must be directly inside an 'npu.graph'}}
  npu.tasks "a" vector (%b, %i) in (%n, 1) {
  }
  func.return
}

// -----

func.func @tasks_ub_in_cube(%x: !npu.buf<?x64xf32, gm>) {
  npu.graph cube 24 vector 48 {
    %n = npu.dim %x, 0 : !npu.buf<?x64xf32, gm>
    npu.tasks "a" cube (%b, %i) in (%n, 1) {
      // expected-error@+1 {{the cube program cannot touch UB ('npu.alloc')}}
      %u = npu.alloc ub [0] : !npu.buf<4x64xf32, ub>
    }
  }
  func.return
}

// -----

func.func @tasks_per_body(%x: !npu.buf<?x64xf32, gm>) {
  npu.graph cube 24 vector 48 {
    %n = npu.dim %x, 0 : !npu.buf<?x64xf32, gm>
    // expected-error@+1 {{a body needs at least one task}}
    npu.tasks "a" vector (%b, %i) in (%n, 0) {
    }
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch vector 1 (%v) {
    %u = npu.alloc ub [0] : !npu.buf<4x64xf32, ub>
    %u2 = npu.alloc ub [1024] : !npu.buf<4x64xf32, ub>
    %r = npu.alloc ub [2048] : !npu.buf<4x1xf32, ub>
    %h = npu.alloc ub [4096] : !npu.buf<4x64xbf16, ub>
    %i = npu.alloc ub [8192] : !npu.buf<4x64xi32, ub>
    %w = npu.alloc ub [12288] : !npu.buf<4x32xf32, ub>
    // expected-error@+1 {{'npu.vcopy' source columns [48, 80) are outside its 64 columns}}
    npu.vcopy %u [cols 48] -> %w [cols 0] width 32 : !npu.buf<4x64xf32, ub> -> !npu.buf<4x32xf32, ub>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch vector 1 (%v) {
    %u = npu.alloc ub [0] : !npu.buf<4x64xf32, ub>
    %u2 = npu.alloc ub [1024] : !npu.buf<4x64xf32, ub>
    %r = npu.alloc ub [2048] : !npu.buf<4x1xf32, ub>
    %h = npu.alloc ub [4096] : !npu.buf<4x64xbf16, ub>
    %i = npu.alloc ub [8192] : !npu.buf<4x64xi32, ub>
    %w = npu.alloc ub [12288] : !npu.buf<4x32xf32, ub>
    // expected-error@+1 {{'npu.vcopy' destination columns [16, 48) are outside its 32 columns}}
    npu.vcopy %u [cols 0] -> %w [cols 16] width 32 : !npu.buf<4x64xf32, ub> -> !npu.buf<4x32xf32, ub>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch vector 1 (%v) {
    %u = npu.alloc ub [0] : !npu.buf<4x64xf32, ub>
    %u2 = npu.alloc ub [1024] : !npu.buf<4x64xf32, ub>
    %r = npu.alloc ub [2048] : !npu.buf<4x1xf32, ub>
    %h = npu.alloc ub [4096] : !npu.buf<4x64xbf16, ub>
    %i = npu.alloc ub [8192] : !npu.buf<4x64xi32, ub>
    %w = npu.alloc ub [12288] : !npu.buf<4x32xf32, ub>
    // expected-error@+1 {{'npu.vcopy' copies without conversion: f32 to bf16 (use npu.vcast)}}
    npu.vcopy %u [cols 0] -> %h [cols 0] width 32 : !npu.buf<4x64xf32, ub> -> !npu.buf<4x64xbf16, ub>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch vector 1 (%v) {
    %u = npu.alloc ub [0] : !npu.buf<4x64xf32, ub>
    %u2 = npu.alloc ub [1024] : !npu.buf<4x64xf32, ub>
    %r = npu.alloc ub [2048] : !npu.buf<4x1xf32, ub>
    %h = npu.alloc ub [4096] : !npu.buf<4x64xbf16, ub>
    %i = npu.alloc ub [8192] : !npu.buf<4x64xi32, ub>
    %w = npu.alloc ub [12288] : !npu.buf<4x32xf32, ub>
    // expected-error@+1 {{'npu.vcopy' width must be positive, got 0}}
    npu.vcopy %u [cols 0] -> %w [cols 0] width 0 : !npu.buf<4x64xf32, ub> -> !npu.buf<4x32xf32, ub>
  }
  func.return
}
// -----

func.func @f(%g: !npu.buf<?x64xf32, gm>, %g3: !npu.buf<4x4x4xf32, gm>) {
  %n = arith.constant 4 : index
  npu.launch vector 1 (%v) {
    %u = npu.alloc ub [0] : !npu.buf<4x64xf32, ub>
    %u2 = npu.alloc ub [1024] : !npu.buf<4x64xf32, ub>
    %r = npu.alloc ub [2048] : !npu.buf<4x1xf32, ub>
    %h = npu.alloc ub [4096] : !npu.buf<4x64xbf16, ub>
    %i = npu.alloc ub [8192] : !npu.buf<4x64xi32, ub>
    %w = npu.alloc ub [12288] : !npu.buf<4x32xf32, ub>
    // expected-error@+1 {{'npu.vcopy' operand must be in ub, got gm}}
    npu.vcopy %g3 [cols 0] -> %u [cols 0] width 4 : !npu.buf<4x4x4xf32, gm> -> !npu.buf<4x64xf32, ub>
  }
  func.return
}
// -----

func.func @f() {
  npu.launch vector 1 (%v) {
    %u = npu.alloc ub [0] : !npu.buf<4x64xf32, ub>
    %t = npu.alloc ub [1024] : !npu.buf<2x64xf32, ub>
    // expected-error@+1 {{'npu.vcopy' source 4x64 and destination 2x64 must have the same rows (every dim but the last)}}
    npu.vcopy %u [cols 0] -> %t [cols 0] width 64 : !npu.buf<4x64xf32, ub> -> !npu.buf<2x64xf32, ub>
  }
  func.return
}

// -----

func.func @f(%w: !npu.buf<64x32xbf16, gm>) {
  // expected-error@+1 {{'npu.view' [60, 68) of dim 0 is outside the source's 64}}
  %v = npu.view %w at [60, 0] : !npu.buf<64x32xbf16, gm> -> !npu.buf<8x32xbf16, gm>
  func.return
}

// -----

func.func @f(%w: !npu.buf<?x32xbf16, gm>) {
  // expected-error@+1 {{'npu.view' takes the dynamic dim 0 whole, at offset 0}}
  %v = npu.view %w at [0, 0] : !npu.buf<?x32xbf16, gm> -> !npu.buf<8x32xbf16, gm>
  func.return
}

// -----

func.func @f(%w: !npu.buf<64x32xbf16, gm>) {
  // expected-error@+1 {{'npu.view' takes a window of a buffer, one offset per dim: 1 offsets}}
  %v = npu.view %w at [0] : !npu.buf<64x32xbf16, gm> -> !npu.buf<8x32xbf16, gm>
  func.return
}

// -----

func.func @f(%w: !npu.buf<64x32xbf16, gm>) {
  // expected-error@+1 {{'npu.view' [30, 46) of dim 1 is outside the source's 32}}
  %v = npu.view %w at [0, 30] : !npu.buf<64x32xbf16, gm> -> !npu.buf<8x16xbf16, gm>
  func.return
}

// -----

func.func @f(%w: !npu.buf<64x32xbf16, gm>) {
  // expected-error@+1 {{'npu.view' cannot change the element type}}
  %v = npu.view %w at [0, 0] : !npu.buf<64x32xbf16, gm> -> !npu.buf<8x32xf32, gm>
  func.return
}

// -----

func.func @f() {
  %u = npu.alloc ub [0] : !npu.buf<4x64xf32, ub>
  // expected-error@+1 {{'npu.view' views gm buffers only}}
  %v = npu.view %u at [0, 0] : !npu.buf<4x64xf32, ub> -> !npu.buf<2x64xf32, ub>
  func.return
}

// -----

// A2/A3 has no L0C -> UB path (the 950 has it).
func.func @f() {
  %acc = npu.alloc l0c [0] : !npu.buf<16x16xf32, l0c>
  %u = npu.alloc ub [0] : !npu.buf<16x16xf32, ub>
  // expected-error@+1 {{target ascend910b1 has no data path l0c -> ub}}
  npu.fixpipe %acc[0, 0] -> %u[0, 0] : !npu.buf<16x16xf32, l0c> -> !npu.buf<16x16xf32, ub>
  func.return
}

// -----

func.func @f() {
  npu.launch vector 1 (%v) {
    // expected-error@+1 {{'npu.launch' runs on the host: it cannot be inside a core program}}
    npu.launch vector 1 (%w) {
    }
  }
  func.return
}

// -----

func.func @f() {
  npu.graph cube 1 vector 1 {
    %c1 = arith.constant 1 : index
    npu.tasks "a" vector (%b, %i) in (%c1, 1) {
      // expected-error@+1 {{'npu.graph' runs on the host: it cannot be inside a core program}}
      npu.graph cube 1 vector 1 {
      }
    }
  }
  func.return
}

// -----

func.func @f() {
  npu.graph cube 1 vector 1 {
    // expected-error@+1 {{'npu.graph' cannot nest}}
    npu.graph cube 1 vector 1 {
    }
  }
  func.return
}
// -----

func.func @f() {
  npu.launch vector 1 (%v) {
    %a = npu.alloc ub [0] : !npu.buf<4x64xf32, ub>
    %b = npu.alloc ub [4096] : !npu.buf<4x64xf32, ub>
    // expected-error@+1 {{'npu.vtranspose' permutes the columns of each row of rank-3 buffers, got 4x64 -> 4x64}}
    npu.vtranspose %a -> %b : !npu.buf<4x64xf32, ub> -> !npu.buf<4x64xf32, ub>
  }
  func.return
}
// -----

func.func @f() {
  npu.launch vector 1 (%v) {
    %a = npu.alloc ub [0] : !npu.buf<4x32x2xf32, ub>
    %b = npu.alloc ub [4096] : !npu.buf<4x32x2xf32, ub>
    // expected-error@+1 {{'npu.vtranspose' destination 4x32x2 is not the source 4x32x2 with its last two dims swapped}}
    npu.vtranspose %a -> %b : !npu.buf<4x32x2xf32, ub> -> !npu.buf<4x32x2xf32, ub>
  }
  func.return
}
// -----

func.func @f() {
  npu.launch vector 1 (%v) {
    %a = npu.alloc ub [0] : !npu.buf<4x32x2xf32, ub>
    %b = npu.alloc ub [4096] : !npu.buf<2x2x32xf32, ub>
    // expected-error@+1 {{'npu.vtranspose' destination 2x2x32 is not the source 4x32x2 with its last two dims swapped}}
    npu.vtranspose %a -> %b : !npu.buf<4x32x2xf32, ub> -> !npu.buf<2x2x32xf32, ub>
  }
  func.return
}
// -----

func.func @f() {
  npu.launch vector 1 (%v) {
    %a = npu.alloc ub [0] : !npu.buf<4x32x2xf32, ub>
    %b = npu.alloc ub [4096] : !npu.buf<4x2x32xbf16, ub>
    // expected-error@+1 {{'npu.vtranspose' moves without conversion: f32 to bf16}}
    npu.vtranspose %a -> %b : !npu.buf<4x32x2xf32, ub> -> !npu.buf<4x2x32xbf16, ub>
  }
  func.return
}

// -----

func.func @graph_needs_lists(%x: !npu.buf<?x64xf32, gm>) {
  npu.graph cube 24 vector 48 {
    %n = npu.dim %x, 0 : !npu.buf<?x64xf32, gm>
    npu.tasks "a" vector (%b, %i) in (%n, 2) succ 1 {
    }
    // expected-error@+1 {{'needs' gives each task of a body (2) the tasks it waits for of its one producer group (one group in 'after', no 'hub'): got 1 lists}}
    npu.tasks "b" cube (%b, %i) in (%n, 2) after ["a"] succ 0 needs [[0]] {
    }
  }
  func.return
}

// -----

func.func @graph_needs_range(%x: !npu.buf<?x64xf32, gm>) {
  npu.graph cube 24 vector 48 {
    %n = npu.dim %x, 0 : !npu.buf<?x64xf32, gm>
    npu.tasks "a" vector (%b, %i) in (%n, 2) succ 1 {
    }
    // expected-error@+1 {{task group "b" needs none, or tasks of "a" not in 0..1}}
    npu.tasks "b" cube (%b, %i) in (%n, 2) after ["a"] succ 0 needs [[0], [2]] {
    }
  }
  func.return
}

// -----

func.func @f() {
  npu.launch vector 1 (%v) {
    %a = npu.alloc ub [0] : !npu.buf<4x64xf32, ub>
    %b = npu.alloc ub [1024] : !npu.buf<4x64xbf16, ub>
    // expected-error@+1 {{'npu.vsel' compares two buffers of one float type}}
    npu.vsel "eq" %a, %b, %a, %a -> %a : !npu.buf<4x64xf32, ub>, !npu.buf<4x64xbf16, ub>, !npu.buf<4x64xf32, ub>, !npu.buf<4x64xf32, ub> -> !npu.buf<4x64xf32, ub>
  }
  func.return
}

// -----

func.func @f() {
  npu.launch vector 1 (%v) {
    %a = npu.alloc ub [0] : !npu.buf<4x64xf32, ub>
    %b = npu.alloc ub [1024] : !npu.buf<4x64xbf16, ub>
    // expected-error@+1 {{'npu.vsel' selects from buffers of the destination's type}}
    npu.vsel "eq" %a, %a, %b, %a -> %a : !npu.buf<4x64xf32, ub>, !npu.buf<4x64xf32, ub>, !npu.buf<4x64xbf16, ub>, !npu.buf<4x64xf32, ub> -> !npu.buf<4x64xf32, ub>
  }
  func.return
}

// -----

func.func @f() {
  npu.launch vector 1 (%v) {
    %a = npu.alloc ub [0] : !npu.buf<4x64xf32, ub>
    %c = npu.alloc ub [1024] : !npu.buf<4x32xf32, ub>
    // expected-error@+1 {{'npu.vsel' on_false 4x32 does not broadcast to 4x64}}
    npu.vsel "eq" %a, %a, %a, %c -> %a : !npu.buf<4x64xf32, ub>, !npu.buf<4x64xf32, ub>, !npu.buf<4x64xf32, ub>, !npu.buf<4x32xf32, ub> -> !npu.buf<4x64xf32, ub>
  }
  func.return
}

// -----

func.func @f() {
  npu.launch vector 1 (%v) {
    %a = npu.alloc ub [0] : !npu.buf<4x64xf32, ub>
    // expected-error@+1 {{'npu.vsel' predicate must be one of eq, ne, lt, le, gt, ge}}
    npu.vsel "oeq" %a, %a, %a, %a -> %a : !npu.buf<4x64xf32, ub>, !npu.buf<4x64xf32, ub>, !npu.buf<4x64xf32, ub>, !npu.buf<4x64xf32, ub> -> !npu.buf<4x64xf32, ub>
  }
  func.return
}
