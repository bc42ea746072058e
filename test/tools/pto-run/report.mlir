// RUN: pto-run %s --random-inputs --tokens 20 --golden | filecheck %s
// RUN: pto-run %s --random-inputs --tokens 20 --json | filecheck %s --check-prefix=JSON
// RUN: not pto-run %s --random-inputs --tokens 2 --target nosuch 2>&1 | filecheck %s --check-prefix=TARGET
// RUN: not pto-run %s --random-inputs 2>&1 | filecheck %s --check-prefix=TOKENS

// A small standard-form kernel, lowered by the default pipeline and run on the model.
func.func @small(%x: tensor<?x256xbf16>, %w: tensor<128x256xbf16>) -> tensor<?x128xbf16> {
  %n = pto.rms_norm %x eps = 1.0e-06 : tensor<?x256xbf16> -> tensor<?x256xf32>
  %b = pto.cast %n rint : tensor<?x256xf32> -> tensor<?x256xbf16>
  %y = pto.matmul %b, %w b_trans : tensor<?x256xbf16>, tensor<128x256xbf16> -> tensor<?x128xf32>
  %o = pto.cast %y rint : tensor<?x128xf32> -> tensor<?x128xbf16>
  func.return %o : tensor<?x128xbf16>
}

// CHECK: target ascend910b1 at 1850 MHz, {{[0-9]+}} launch(es), L2 20971520 bytes
// CHECK-NEXT: total: {{[0-9]+}} cycles = {{[0-9.]+}} us
// CHECK-NEXT: L2: {{[0-9]+}} hits, {{[0-9]+}} misses, hit rate {{[0-9.]+}}%; HBM {{[0-9]+}} bytes
// CHECK: pipe     cores      busy cycles  mean util  max util
// CHECK: mte2     cube
// CHECK: cube     cube
// CHECK: vector   vector
// CHECK: tensor                hits    misses  hit rate     HBM read  HBM written
// CHECK: w
// CHECK: buffer    peak bytes   capacity
// CHECK: ub
// CHECK: golden result 0: ok: 0 of 2560 elements beyond tolerance

// JSON: "target": "ascend910b1",
// JSON: "cycles":
// JSON: "l2_hit_rate":
// JSON: "golden": {}

// TARGET: pto-run: error: unknown target 'nosuch' (known: ascend910b1, ascend910b1-pypto020, ascend950)
// TOKENS: pto-run: error: --random-inputs needs --tokens N
