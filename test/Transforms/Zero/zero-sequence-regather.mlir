// RUN: zero-opt %s -split-input-file --zero-sequence-regather -verify-diagnostics | FileCheck %s

// The backward's reader of a forward all-gather (as the weight gradient of a
// column-parallel matmul does) reads a new
// all-gather issued right before it; the forward keeps its own. A gather
// the backward does not read (one a return reads) is left alone.
// CHECK-LABEL: func.func @forward_backward
// CHECK:      %[[G:.*]] = zero.sp_gather %arg0 size(2) : tensor<4x8xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT: %[[Y:.*]] = train.matmul %[[G]], %arg1 {transpose_b}
// CHECK-NEXT: %[[H:.*]] = zero.sp_gather %arg2 size(2) {slice_grad} : tensor<4x8xf32> -> tensor<2x4x8xf32>
// CHECK:      train.fill 1.000000e+00 {train.loss_seed}
// CHECK-NEXT: %[[G2:.*]] = zero.sp_gather %arg0 size(2) : tensor<4x8xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT: train.add %arg3, %[[G2]]
// CHECK-NOT:  zero.sp_gather
// CHECK:      return
func.func @forward_backward(%rows: tensor<4x8xf32>, %w: tensor<8x8xf32>, %rows2: tensor<4x8xf32>, %dy: tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) {
  %g = zero.sp_gather %rows size(2) : tensor<4x8xf32> -> tensor<2x4x8xf32>
  %y = train.matmul %g, %w {transpose_b} : tensor<2x4x8xf32>, tensor<8x8xf32> -> tensor<2x4x8xf32>
  %h = zero.sp_gather %rows2 size(2) {slice_grad} : tensor<4x8xf32> -> tensor<2x4x8xf32>
  %seed = train.fill 1.0 {train.loss_seed} : tensor<f32>
  %dw = train.add %dy, %g : tensor<2x4x8xf32>
  return %y, %h, %dw : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
}

// -----

// expected-error@+1 {{zero-sequence-regather: no function named 'forward_backward' (run train-autodiff first)}}
module {
}

// -----

module {
  // expected-error@+1 {{zero-sequence-regather: 'forward_backward' has no backward (no train.loss_seed)}}
  func.func @forward_backward() {
    return
  }
}
