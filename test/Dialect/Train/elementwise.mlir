// RUN: zero-opt %s -split-input-file | FileCheck %s
// RUN: zero-opt %s -split-input-file | zero-opt -split-input-file | FileCheck %s
// RUN: zero-opt %s -split-input-file -mlir-print-op-generic | zero-opt -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @add_mul
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<4x8xf32>, %[[C:.*]]: tensor<2x3x5xbf16>, %[[D:.*]]: tensor<f16>)
func.func @add_mul(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>,
                   %c: tensor<2x3x5xbf16>, %d: tensor<f16>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x3x5xbf16>, tensor<f16>) {
  // CHECK: %[[S:.*]] = train.add %[[A]], %[[B]] : tensor<4x8xf32>
  %s = train.add %a, %b : tensor<4x8xf32>
  // CHECK: %[[P:.*]] = train.mul %[[S]], %[[B]] : tensor<4x8xf32>
  %p = train.mul %s, %b : tensor<4x8xf32>
  // CHECK: %[[CC:.*]] = train.mul %[[C]], %[[C]] : tensor<2x3x5xbf16>
  %cc = train.mul %c, %c : tensor<2x3x5xbf16>
  // CHECK: %[[DD:.*]] = train.add %[[D]], %[[D]] : tensor<f16>
  %dd = train.add %d, %d : tensor<f16>
  // CHECK: return %[[S]], %[[P]], %[[CC]], %[[DD]]
  return %s, %p, %cc, %dd : tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x3x5xbf16>, tensor<f16>
}

// -----

// CHECK-LABEL: func.func @scale
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[Y:.*]]: tensor<16xbf16>)
func.func @scale(%x: tensor<4x8xf32>, %y: tensor<16xbf16>) -> (tensor<4x8xf32>, tensor<16xbf16>, tensor<16xbf16>) {
  // CHECK: %[[R:.*]] = train.scale %[[X]], 5.000000e-01 : tensor<4x8xf32>
  %r = train.scale %x, 0.5 : tensor<4x8xf32>
  // CHECK: %[[S:.*]] = train.scale %[[Y]], -3.000000e+00 : tensor<16xbf16>
  %s = train.scale %y, -3.0 : tensor<16xbf16>
  // CHECK: %[[T:.*]] = train.scale %[[S]], 0.000000e+00 : tensor<16xbf16>
  %t = train.scale %s, 0.0 : tensor<16xbf16>
  return %r, %s, %t : tensor<4x8xf32>, tensor<16xbf16>, tensor<16xbf16>
}

// -----

// CHECK-LABEL: func.func @activations
// CHECK-SAME: (%[[X:.*]]: tensor<4x32x256xf32>, %[[H:.*]]: tensor<16x32xbf16>, %[[L:.*]]: tensor<4x10xf16>)
func.func @activations(%x: tensor<4x32x256xf32>, %h: tensor<16x32xbf16>, %l: tensor<4x10xf16>)
    -> (tensor<4x32x256xf32>, tensor<16x32xbf16>, tensor<4x10xf16>) {
  // CHECK: %[[G:.*]] = train.gelu %[[X]] : tensor<4x32x256xf32>
  %g = train.gelu %x : tensor<4x32x256xf32>
  // CHECK: %[[R:.*]] = train.relu %[[H]] : tensor<16x32xbf16>
  %r = train.relu %h : tensor<16x32xbf16>
  // CHECK: %[[P:.*]] = train.softmax %[[L]] : tensor<4x10xf16>
  %p = train.softmax %l : tensor<4x10xf16>
  // CHECK: return %[[G]], %[[R]], %[[P]]
  return %g, %r, %p : tensor<4x32x256xf32>, tensor<16x32xbf16>, tensor<4x10xf16>
}

// -----

// CHECK-LABEL: func.func @cast
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
func.func @cast(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf16>) {
  // CHECK: %[[B:.*]] = train.cast %[[X]] : tensor<4x8xf32> -> tensor<4x8xbf16>
  %b = train.cast %x : tensor<4x8xf32> -> tensor<4x8xbf16>
  // CHECK: %[[F:.*]] = train.cast %[[B]] : tensor<4x8xbf16> -> tensor<4x8xf32>
  %f = train.cast %b : tensor<4x8xbf16> -> tensor<4x8xf32>
  // CHECK: %[[H:.*]] = train.cast %[[F]] : tensor<4x8xf32> -> tensor<4x8xf16>
  %h = train.cast %f : tensor<4x8xf32> -> tensor<4x8xf16>
  // CHECK: return %[[F]], %[[H]]
  return %f, %h : tensor<4x8xf32>, tensor<4x8xf16>
}

// -----

// CHECK-LABEL: func.func @grads
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[DY:.*]]: tensor<4x8xf32>, %[[Y:.*]]: tensor<4x10xbf16>, %[[DP:.*]]: tensor<4x10xbf16>)
func.func @grads(%x: tensor<4x8xf32>, %dy: tensor<4x8xf32>,
                 %y: tensor<4x10xbf16>, %dp: tensor<4x10xbf16>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x10xbf16>) {
  // CHECK: %[[G:.*]] = train.gelu_grad %[[X]], %[[DY]] : tensor<4x8xf32>
  %g = train.gelu_grad %x, %dy : tensor<4x8xf32>
  // CHECK: %[[R:.*]] = train.relu_grad %[[X]], %[[DY]] : tensor<4x8xf32>
  %r = train.relu_grad %x, %dy : tensor<4x8xf32>
  // CHECK: %[[S:.*]] = train.softmax_grad %[[Y]], %[[DP]] : tensor<4x10xbf16>
  %s = train.softmax_grad %y, %dp : tensor<4x10xbf16>
  // CHECK: return %[[G]], %[[R]], %[[S]]
  return %g, %r, %s : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x10xbf16>
}
