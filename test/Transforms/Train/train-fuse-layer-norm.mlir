// RUN: zero-opt %s --train-fuse-layer-norm -split-input-file | FileCheck %s

// A transformer block's residual stream after train-autodiff: the residual
// add and the layer norm that reads it become one add_layer_norm (at the
// add's place: the weight and bias are defined before it); in the backward
// the sum of the two gradients of the stream becomes the layer-norm
// gradient's addend.
// CHECK-LABEL: func.func @block
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x8xbf16>, %[[H:.*]]: tensor<2x4x8xbf16>, %[[W:.*]]: tensor<8xbf16>, %[[B:.*]]: tensor<8xbf16>, %[[DY:.*]]: tensor<2x4x8xbf16>, %[[DR:.*]]: tensor<2x4x8xbf16>)
func.func @block(%x: tensor<2x4x8xbf16>, %h: tensor<2x4x8xbf16>,
                 %w: tensor<8xbf16>, %b: tensor<8xbf16>,
                 %dy: tensor<2x4x8xbf16>, %dr: tensor<2x4x8xbf16>)
    -> (tensor<2x4x8xbf16>, tensor<2x4x8xbf16>, tensor<2x4x8xbf16>, tensor<8xbf16>, tensor<8xbf16>) {
  // CHECK-NEXT: %[[S:.*]], %[[Y:.*]] = train.add_layer_norm %[[X]], %[[H]], %[[W]], %[[B]] eps(1.000000e-05) : tensor<2x4x8xbf16>, tensor<8xbf16>
  // CHECK-NEXT: %[[DX:.*]], %[[DW:.*]], %[[DB:.*]] = train.layer_norm_grad %[[S]], %[[W]], %[[DY]] plus %[[DR]] eps(1.000000e-05) : tensor<2x4x8xbf16>, tensor<8xbf16>
  // CHECK-NEXT: return %[[S]], %[[Y]], %[[DX]], %[[DW]], %[[DB]]
  %s = train.add %x, %h : tensor<2x4x8xbf16>
  %y = train.layer_norm %s, %w, %b eps(1.0e-05) : tensor<2x4x8xbf16>, tensor<8xbf16>
  %dx, %dw, %db = train.layer_norm_grad %s, %w, %dy eps(1.0e-05) : tensor<2x4x8xbf16>, tensor<8xbf16>
  %g = train.add %dr, %dx : tensor<2x4x8xbf16>
  return %s, %y, %g, %dw, %db : tensor<2x4x8xbf16>, tensor<2x4x8xbf16>, tensor<2x4x8xbf16>, tensor<8xbf16>, tensor<8xbf16>
}

// -----

// Weight and bias defined after the add (parameter loads right before the
// norm): the fused op goes where the norm was. The addend may be either
// operand of the gradient sum (f32 too).
// CHECK-LABEL: func.func @at_norm
// CHECK-NEXT: %[[W:.*]] = train.scale
// CHECK-NEXT: %[[S:.*]], %[[Y:.*]] = train.add_layer_norm %arg0, %arg1, %[[W]], %[[W]]
// CHECK-NEXT: %[[DX:.*]], %{{.*}}, %{{.*}} = train.layer_norm_grad %[[S]], %[[W]], %arg3 plus %arg4
// CHECK-NEXT: return %[[Y]], %[[DX]]
func.func @at_norm(%x: tensor<4x8xf32>, %h: tensor<4x8xf32>, %w0: tensor<8xf32>,
                   %dy: tensor<4x8xf32>, %dr: tensor<4x8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %s = train.add %x, %h : tensor<4x8xf32>
  %w = train.scale %w0, 2.0 : tensor<8xf32>
  %y = train.layer_norm %s, %w, %w eps(1.0e-05) : tensor<4x8xf32>, tensor<8xf32>
  %dx, %dw, %db = train.layer_norm_grad %s, %w, %dy eps(1.0e-05) : tensor<4x8xf32>, tensor<8xf32>
  %g = train.add %dx, %dr : tensor<4x8xf32>
  return %y, %g : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Left alone: a use of the sum between the add and a norm whose weight is
// defined after the add; an input gradient read twice; an addend computed
// after the layer-norm gradient; a norm of a value no add computes.
// CHECK-LABEL: func.func @unfused
// CHECK-NEXT: %[[S:.*]] = train.add %arg0, %arg1
// CHECK-NEXT: %[[U:.*]] = train.scale %[[S]]
// CHECK-NEXT: %[[W:.*]] = train.scale %arg2
// CHECK-NEXT: %[[Y:.*]] = train.layer_norm %[[S]], %[[W]], %[[W]]
// CHECK-NEXT: %[[DX:.*]], %{{.*}}, %{{.*}} = train.layer_norm_grad %arg0, %[[W]], %arg3 eps
// CHECK-NEXT: %[[G1:.*]] = train.add %[[DX]], %arg4
// CHECK-NEXT: %[[G2:.*]] = train.add %[[DX]], %[[G1]]
// CHECK-NEXT: %[[DX2:.*]], %{{.*}}, %{{.*}} = train.layer_norm_grad %arg1, %[[W]], %arg3 eps
// CHECK-NEXT: %[[L:.*]] = train.scale %arg4
// CHECK-NEXT: %[[G3:.*]] = train.add %[[DX2]], %[[L]]
// CHECK-NEXT: %[[Z:.*]] = train.layer_norm %arg0, %[[W]], %[[W]]
func.func @unfused(%x: tensor<4x8xf32>, %h: tensor<4x8xf32>, %w0: tensor<8xf32>,
                   %dy: tensor<4x8xf32>, %dr: tensor<4x8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %s = train.add %x, %h : tensor<4x8xf32>
  %u = train.scale %s, 2.0 : tensor<4x8xf32>
  %w = train.scale %w0, 2.0 : tensor<8xf32>
  %y = train.layer_norm %s, %w, %w eps(1.0e-05) : tensor<4x8xf32>, tensor<8xf32>
  %dx, %dw, %db = train.layer_norm_grad %x, %w, %dy eps(1.0e-05) : tensor<4x8xf32>, tensor<8xf32>
  %g1 = train.add %dx, %dr : tensor<4x8xf32>
  %g2 = train.add %dx, %g1 : tensor<4x8xf32>
  %dx2, %dw2, %db2 = train.layer_norm_grad %h, %w, %dy eps(1.0e-05) : tensor<4x8xf32>, tensor<8xf32>
  %late = train.scale %dr, 2.0 : tensor<4x8xf32>
  %g3 = train.add %dx2, %late : tensor<4x8xf32>
  %z = train.layer_norm %x, %w, %w eps(1.0e-05) : tensor<4x8xf32>, tensor<8xf32>
  return %u, %y, %g2, %g3, %z : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A rank-1 row whose sum is also the norm's weight: fusing would make the
// sum an operand of its own op, so the pair stays.
// CHECK-LABEL: func.func @sum_is_weight
// CHECK-NEXT: %[[S:.*]] = train.add %arg0, %arg1
// CHECK-NEXT: %[[Y:.*]] = train.layer_norm %[[S]], %[[S]], %arg2
func.func @sum_is_weight(%a: tensor<8xf32>, %b: tensor<8xf32>, %bias: tensor<8xf32>) -> tensor<8xf32> {
  %s = train.add %a, %b : tensor<8xf32>
  %y = train.layer_norm %s, %s, %bias eps(1.0e-05) : tensor<8xf32>, tensor<8xf32>
  return %y : tensor<8xf32>
}
