// The whole front end on the examples, with each kernel's default factors.
// RUN: pto-opt %S/../../examples/hc_pre.mlir -p pto-classify-skeleton,pto-to-tile,tile-unroll | filecheck %s --check-prefix=MHC
// RUN: pto-opt %S/../../examples/sk03_standard.mlir -p pto-classify-skeleton,pto-to-tile,tile-unroll | filecheck %s --check-prefix=SEED
// RUN: pto-opt %S/../../examples/mla_wqa_qrmsnorm.mlir -p pto-classify-skeleton,pto-to-tile,tile-unroll | filecheck %s --check-prefix=PINNED
// The mhc_pre variant: [16] and the appended 1.
// MHC: tile.token_loop {{.*}} step 16 {
// MHC: tile.matmul {{.*}} b_trans : tensor<16x16384xf32>, tensor<24x16384xf32> -> tensor<16x24xf32>
// MHC: tile.token_loop {{.*}} step 1 {
// MHC-NOT: tile.token_loop
// SEED: step 128
// SEED: step 64
// SEED: step 32
// SEED: step 16
// SEED: step 8
// SEED: step 1
// The reference kernel's pinned [128,64,32,16,1].
// PINNED: step 128
// PINNED: step 64
// PINNED: step 32
// PINNED: step 16
// PINNED-NOT: step 8
// PINNED: step 1
// RUN: not pto-opt %S/../../examples/sk03_standard.mlir -p 'pto-classify-skeleton,pto-to-tile,tile-unroll{factors=4,0}' 2>&1 | filecheck %s --check-prefix=BAD
// BAD: error: unroll factors must be positive, got [4, 0]
