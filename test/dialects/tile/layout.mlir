// RUN: pto-opt %s | pto-opt | filecheck %s
// RUN: %ROUNDTRIP | filecheck %s
// An NZ weight at the tile level: its whole load says `layout nz`.

// CHECK-LABEL: func.func @k
func.func @k(%x: tensor<?x64xi8>, %w: tensor<32x64xi8> {pto.layout = #pto.layout<nz>}, %out: tensor<?x32xi32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %x, %c0 : tensor<?x64xi8>
  tile.token_loop %i = %c0 to %t step 16 {
    %xt = tile.load %x[%i] : tensor<?x64xi8> -> tensor<16x64xi8>
    // CHECK: tile.load %{{.*}} cache none_cacheable layout nz : tensor<32x64xi8> -> tensor<32x64xi8>
    %wt = tile.load %w cache none_cacheable layout nz : tensor<32x64xi8> -> tensor<32x64xi8>
    %y = tile.cube_stage "linear" -> (tensor<16x32xi32>) {
      %m = tile.matmul %xt, %wt b_trans : tensor<16x64xi8>, tensor<32x64xi8> -> tensor<16x32xi32>
      tile.yield %m : tensor<16x32xi32>
    }
    tile.store %y, %out[%i] : tensor<16x32xi32> -> tensor<?x32xi32>
  }
  func.return
}
