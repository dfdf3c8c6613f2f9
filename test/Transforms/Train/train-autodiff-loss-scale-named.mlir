// The loss-scale argument of an array model (inputs named by train.name):
// it is appended after the named inputs, each argument keeping its own
// name (once a crash: the argument attributes were not extended).
// RUN: zero-opt %s --train-autodiff=loss-scale=true | FileCheck %s

train.param @w : tensor<4x2xf16> init(<normal, 2.000000e-02>) trainable
func.func @forward(%x: tensor<3x2xf16> {train.name = "x"}, %y: tensor<3x4xf16> {train.name = "target"}) -> tensor<f32> {
  %w = train.load @w : tensor<4x2xf16>
  %h = train.matmul %x, %w {transpose_b} : tensor<3x2xf16>, tensor<4x2xf16> -> tensor<3x4xf16>
  %l = train.mse %h, %y : tensor<3x4xf16> -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK-LABEL: func.func @forward_backward(
// CHECK-SAME: %{{[^:]*}}: tensor<3x2xf16> {train.name = "x"}, %{{[^:]*}}: tensor<3x4xf16> {train.name = "target"}, %[[S:[^:]*]]: tensor<f32> {train.name = "loss_scale"}) -> tensor<f32>
// CHECK: %[[ONE:.*]] = train.fill 1.000000e+00 {train.loss_seed} : tensor<f32>
// CHECK-NEXT: train.mul %[[ONE]], %[[S]] : tensor<f32>
