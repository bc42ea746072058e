// RUN: not pto-tune %s --tokens 8 --dim foo=1 2>&1 | filecheck %s --check-prefix=DIM
// RUN: not pto-tune %s --tokens 0,x 2>&1 | filecheck %s --check-prefix=FLAG
// RUN: not pto-tune %s --tokens 8 --resume 2>&1 | filecheck %s --check-prefix=RESUME
// RUN: not pto-tune %s --tokens 8 --dim k=256/128 2>&1 | filecheck %s --check-prefix=CONTRA

// Bad input: one `pto-tune: error:` line each, and a non-zero exit (`not`). (Two files: each
// pto-tune start imports the whole toolkit, and a loaded machine makes one file of them slow.)
func.func @small(%x: tensor<?x256xbf16>, %w: tensor<128x256xbf16>) -> tensor<?x128xbf16> {
  %n = pto.rms_norm %x eps = 1.0e-06 : tensor<?x256xbf16> -> tensor<?x256xf32>
  %b = pto.cast %n rint : tensor<?x256xf32> -> tensor<?x256xbf16>
  %y = pto.matmul %b, %w b_trans : tensor<?x256xbf16>, tensor<128x256xbf16> -> tensor<?x128xf32>
  %o = pto.cast %y rint : tensor<?x128xf32> -> tensor<?x128xbf16>
  func.return %o : tensor<?x128xbf16>
}

// DIM: pto-tune: error: unknown dimension 'foo' (this kernel has: unroll, vec_rows, m, n, k, split_k, cache.w, host_transpose, l1_reuse, vec_nbuffer, cube_nbuffer, stitch)
// FLAG: pto-tune: error: --tokens must be comma-separated integers, got '0,x'
// RESUME: pto-tune: error: --resume needs --out (the store to continue)
// CONTRA: pto-tune: error: dimension 'k' takes L0/L1 pairs with L1 a multiple of L0, got [256, 128]
// CONTRA-NOT: error
