// RUN: zero-opt %s --train-fuse-cross-entropy -split-input-file | FileCheck %s

// The loss and its gradient seeded by a constant: one op at the loss, the
// gradient (over the logits) replacing the grad op's result; the seed stays.
// CHECK-LABEL: func.func @head
// CHECK: %[[Z:.*]] = train.matmul
// CHECK-NEXT: %[[L:.*]], %[[G:.*]] = train.cross_entropy_fused %[[Z]], %arg1 scale(1.000000e+00) {num_classes = 7 : i64} : tensor<4x8xbf16>, tensor<4xi32>
// CHECK-NEXT: %[[S:.*]] = train.fill 1.000000e+00 {train.loss_seed}
// CHECK-NOT: train.cross_entropy
// CHECK: train.matmul %[[G]]
// CHECK: return %[[L]]
func.func @head(%x: tensor<4x8xbf16>, %t: tensor<4xi32>, %w: tensor<8x8xbf16>) -> (tensor<f32>, tensor<4x8xbf16>) {
  %z = train.matmul %x, %w : tensor<4x8xbf16>, tensor<8x8xbf16> -> tensor<4x8xbf16>
  %l = train.cross_entropy %z, %t {num_classes = 7 : i64} : tensor<4x8xbf16>, tensor<4xi32> -> tensor<f32>
  %s = train.fill 1.0 {train.loss_seed} : tensor<f32>
  %g = train.cross_entropy_grad %z, %t, %s {num_classes = 7 : i64} : tensor<4x8xbf16>, tensor<4xi32>
  %dx = train.matmul %g, %w {transpose_b} : tensor<4x8xbf16>, tensor<8x8xbf16> -> tensor<4x8xbf16>
  return %l, %dx : tensor<f32>, tensor<4x8xbf16>
}

// -----

// Logits behind reshape views (f32) fuse; the scale is the seed's value.
// CHECK-LABEL: func.func @views
// CHECK: train.cross_entropy_fused %{{.*}}, %arg1 scale(2.500000e-01)
// CHECK-NOT: train.cross_entropy_grad
func.func @views(%x: tensor<2x2x8xf32>, %t: tensor<4xi32>) -> (tensor<f32>, tensor<4x8xf32>) {
  %e = train.gelu %x : tensor<2x2x8xf32>
  %z = train.reshape %e : tensor<2x2x8xf32> -> tensor<4x8xf32>
  %l = train.cross_entropy %z, %t : tensor<4x8xf32>, tensor<4xi32> -> tensor<f32>
  %s = train.fill 0.25 : tensor<f32>
  %g = train.cross_entropy_grad %z, %t, %s : tensor<4x8xf32>, tensor<4xi32>
  return %l, %g : tensor<f32>, tensor<4x8xf32>
}

// -----

// Not fused: the logits are read by something else (they must be free to
// hold the gradient), a parameter (a state), or the gradient's upstream
// value is not a constant, or the classes differ.
// CHECK-LABEL: func.func @other_reader
// CHECK: train.cross_entropy %
// CHECK: train.cross_entropy_grad
func.func @other_reader(%x: tensor<4x8xf32>, %t: tensor<4xi32>) -> (tensor<f32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %z = train.gelu %x : tensor<4x8xf32>
  %l = train.cross_entropy %z, %t : tensor<4x8xf32>, tensor<4xi32> -> tensor<f32>
  %s = train.fill 1.0 : tensor<f32>
  %g = train.cross_entropy_grad %z, %t, %s : tensor<4x8xf32>, tensor<4xi32>
  return %l, %g, %z : tensor<f32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

train.param @z : tensor<4x8xf32> init(<zeros>) trainable
// CHECK-LABEL: func.func @state_logits
// CHECK: train.cross_entropy %
// CHECK: train.cross_entropy_grad
func.func @state_logits(%t: tensor<4xi32>) -> (tensor<f32>, tensor<4x8xf32>) {
  %z = train.load @z : tensor<4x8xf32>
  %l = train.cross_entropy %z, %t : tensor<4x8xf32>, tensor<4xi32> -> tensor<f32>
  %s = train.fill 1.0 : tensor<f32>
  %g = train.cross_entropy_grad %z, %t, %s : tensor<4x8xf32>, tensor<4xi32>
  return %l, %g : tensor<f32>, tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @not_constant
// CHECK: train.cross_entropy %
// CHECK: train.cross_entropy_grad
func.func @not_constant(%x: tensor<4x8xf32>, %t: tensor<4xi32>, %s: tensor<f32>) -> (tensor<f32>, tensor<4x8xf32>) {
  %z = train.gelu %x : tensor<4x8xf32>
  %l = train.cross_entropy %z, %t : tensor<4x8xf32>, tensor<4xi32> -> tensor<f32>
  %g = train.cross_entropy_grad %z, %t, %s : tensor<4x8xf32>, tensor<4xi32>
  return %l, %g : tensor<f32>, tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @other_classes
// CHECK: train.cross_entropy %
// CHECK: train.cross_entropy_grad
func.func @other_classes(%x: tensor<4x8xf32>, %t: tensor<4xi32>) -> (tensor<f32>, tensor<4x8xf32>) {
  %z = train.gelu %x : tensor<4x8xf32>
  %l = train.cross_entropy %z, %t {num_classes = 7 : i64} : tensor<4x8xf32>, tensor<4xi32> -> tensor<f32>
  %s = train.fill 1.0 : tensor<f32>
  %g = train.cross_entropy_grad %z, %t, %s : tensor<4x8xf32>, tensor<4xi32>
  return %l, %g : tensor<f32>, tensor<4x8xf32>
}

// -----

// Ignored rows (ignore_index): the fused kernel has none; the pair stays.
// CHECK-LABEL: func.func @ignored_rows
// CHECK: train.cross_entropy %
// CHECK: train.cross_entropy_grad
func.func @ignored_rows(%x: tensor<4x8xf32>, %t: tensor<4xi32>) -> (tensor<f32>, tensor<4x8xf32>) {
  %z = train.gelu %x : tensor<4x8xf32>
  %l = train.cross_entropy %z, %t {ignore_index = -100 : i64} : tensor<4x8xf32>, tensor<4xi32> -> tensor<f32>
  %s = train.fill 1.0 : tensor<f32>
  %g = train.cross_entropy_grad %z, %t, %s {ignore_index = -100 : i64} : tensor<4x8xf32>, tensor<4xi32>
  return %l, %g : tensor<f32>, tensor<4x8xf32>
}
