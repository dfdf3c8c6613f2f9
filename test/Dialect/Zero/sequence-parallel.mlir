// RUN: zero-opt %s | FileCheck %s
// RUN: zero-opt %s | zero-opt | FileCheck %s

// The sequence-parallel ops round-trip: token rows [R, C] of a [B, T, C]
// tensor (R = B·T / size), any float type.

// CHECK-LABEL: func.func @rows
// CHECK: %[[S:.*]] = zero.sp_split %arg0 size(2) : tensor<2x4x8xf32> -> tensor<4x8xf32>
// CHECK: %[[G:.*]] = zero.sp_gather %[[S]] size(2) : tensor<4x8xf32> -> tensor<2x4x8xf32>
// CHECK: zero.sp_gather %[[S]] size(2) {slice_grad} : tensor<4x8xf32> -> tensor<2x4x8xf32>
// CHECK: zero.sp_scatter %[[G]] size(2) : tensor<2x4x8xf32> -> tensor<4x8xf32>
// CHECK: zero.sp_scatter %arg1 size(4) : tensor<1x8x3x2xbf16> -> tensor<2x3x2xbf16>
func.func @rows(%x: tensor<2x4x8xf32>, %h: tensor<1x8x3x2xbf16>) {
  %s = zero.sp_split %x size(2) : tensor<2x4x8xf32> -> tensor<4x8xf32>
  %g = zero.sp_gather %s size(2) : tensor<4x8xf32> -> tensor<2x4x8xf32>
  %w = zero.sp_gather %s size(2) {slice_grad} : tensor<4x8xf32> -> tensor<2x4x8xf32>
  %r = zero.sp_scatter %g size(2) : tensor<2x4x8xf32> -> tensor<4x8xf32>
  %q = zero.sp_scatter %h size(4) : tensor<1x8x3x2xbf16> -> tensor<2x3x2xbf16>
  return
}
