// RUN: not pto-tune %s --tokens 8 --dim n=48 2>&1 | filecheck %s --check-prefix=EMPTY
// RUN: not pto-tune %s --tokens 8 --dim m=auto --dim n=64 2>&1 | filecheck %s --check-prefix=PARTLY
// RUN: not pto-tune %s --tokens 8 --dask tcp://127.0.0.1:1 2>&1 | filecheck %s --check-prefix=DASK

// Bad input: one `pto-tune: error:` line each, and a non-zero exit (`not`). (Two files: each
// pto-tune start imports the whole toolkit, and a loaded machine makes one file of them slow.)
func.func @small(%x: tensor<?x256xbf16>, %w: tensor<128x256xbf16>) -> tensor<?x128xbf16> {
  %n = pto.rms_norm %x eps = 1.0e-06 : tensor<?x256xbf16> -> tensor<?x256xf32>
  %b = pto.cast %n rint : tensor<?x256xf32> -> tensor<?x256xbf16>
  %y = pto.matmul %b, %w b_trans : tensor<?x256xbf16>, tensor<128x256xbf16> -> tensor<?x128xf32>
  %o = pto.cast %y rint : tensor<?x128xf32> -> tensor<?x128xbf16>
  func.return %o : tensor<?x128xbf16>
}

// EMPTY: pto-tune: error: no legal configuration in the space of {{[0-9]+}}: K or N not a multiple of its tile
// PARTLY: pto-tune: error: no legal configuration in the space of {{[0-9]+}}: cube tile partly auto (the passes choose it whole)
// PARTLY-NOT: error
// DASK: pto-tune: error: {{cannot reach the Dask scheduler at tcp://127.0.0.1:1|--dask needs dask.distributed}}
// DASK-NOT: error
