// RUN: pto-opt %s | pto-opt | filecheck %s
// RUN: %ROUNDTRIP | filecheck %s
// An NZ weight (PyPTO's format=TILEOP_NZ): bf16 fractals are 16x16, int8 16x32.

// CHECK-LABEL: func.func @bf16
// CHECK-SAME: %w: tensor<64x256xbf16> {pto.layout = #pto.layout<nz>, pto.cache = #pto.cache<none_cacheable>}
func.func @bf16(%x: tensor<?x256xbf16>, %w: tensor<64x256xbf16> {pto.layout = #pto.layout<nz>, pto.cache = #pto.cache<none_cacheable>}) -> tensor<?x64xf32> {
  %y = pto.matmul %x, %w b_trans : tensor<?x256xbf16>, tensor<64x256xbf16> -> tensor<?x64xf32>
  func.return %y : tensor<?x64xf32>
}

// CHECK-LABEL: func.func @i8_k_n
// CHECK-SAME: %w: tensor<256x64xi8> {pto.layout = #pto.layout<nz>}
func.func @i8_k_n(%x: tensor<?x256xi8>, %w: tensor<256x64xi8> {pto.layout = #pto.layout<nz>}) -> tensor<?x64xi32> {
  %y = pto.matmul %x, %w : tensor<?x256xi8>, tensor<256x64xi8> -> tensor<?x64xi32>
  func.return %y : tensor<?x64xi32>
}

// CHECK-LABEL: func.func @nd
// CHECK-SAME: {pto.layout = #pto.layout<nd>}
func.func @nd(%x: tensor<?x8xf32> {pto.layout = #pto.layout<nd>}) -> tensor<?x8xf32> {
  %y = pto.abs %x : tensor<?x8xf32> -> tensor<?x8xf32>
  func.return %y : tensor<?x8xf32>
}
