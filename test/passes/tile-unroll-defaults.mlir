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
// A kernel's pinned factors win over the option, with a warning.
// RUN: pto-opt %S/../../examples/mla_wqa_qrmsnorm.mlir -p 'pto-classify-skeleton,pto-to-tile,tile-unroll{factors=4,1}' 2>&1 >/dev/null | filecheck %s --check-prefix=IGNORED
// IGNORED: mla_wqa_qrmsnorm.mlir:5:1: warning: pto.unroll [128, 64, 32, 16, 1] pins the unroll factors: the factors option [4, 1] is not used
// RUN: pto-opt %S/../../examples/mla_wqa_qrmsnorm.mlir -p 'pto-classify-skeleton,pto-to-tile,tile-unroll{factors=128,64,32,16,1}' 2>&1 >/dev/null | filecheck %s --check-prefix=SAME --allow-empty
// SAME-NOT: warning
// A bad factors option is a bad command line, also for a kernel that pins its own.
// RUN: not pto-opt %S/../../examples/sk03_standard.mlir -p 'pto-classify-skeleton,pto-to-tile,tile-unroll{factors=4,0}' 2>&1 | filecheck %s --check-prefix=BAD
// RUN: not pto-opt %S/../../examples/mla_wqa_qrmsnorm.mlir -p 'pto-classify-skeleton,pto-to-tile,tile-unroll{factors=4,0}' 2>&1 | filecheck %s --check-prefix=BAD
// BAD: pto-opt: error: bad pass pipeline '{{.*}}': unroll factors must be positive, got [4, 0]
// RUN: not pto-opt %S/../../examples/mla_wqa_qrmsnorm.mlir -p 'pto-sk03-pipeline{factors=0}' 2>&1 | filecheck %s --check-prefix=BAD0
// BAD0: pto-opt: error: bad pass pipeline 'pto-sk03-pipeline{factors=0}': unroll factors must be positive, got [0]
