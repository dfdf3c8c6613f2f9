// RUN: zero-opt %s -split-input-file | FileCheck %s
// RUN: zero-opt %s -split-input-file | zero-opt -split-input-file | FileCheck %s
// RUN: zero-opt %s -split-input-file -mlir-print-op-generic | zero-opt -split-input-file | FileCheck %s

//===----------------------------------------------------------------------===//
// train.reshape
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @reshape
// CHECK-SAME: (%[[X:.*]]: tensor<4x32x64xf32>, %[[IDS:.*]]: tensor<4x32xi32>, %[[H:.*]]: tensor<6xbf16>, %[[S:.*]]: tensor<f16>)
func.func @reshape(%x: tensor<4x32x64xf32>, %ids: tensor<4x32xi32>,
                   %h: tensor<6xbf16>, %s: tensor<f16>)
    -> (tensor<128x64xf32>, tensor<4x32x4x16xf32>, tensor<128xi32>, tensor<2x3xbf16>, tensor<1x1xf16>, tensor<f16>) {
  // CHECK: %[[A:.*]] = train.reshape %[[X]] : tensor<4x32x64xf32> -> tensor<128x64xf32>
  %a = train.reshape %x : tensor<4x32x64xf32> -> tensor<128x64xf32>
  // CHECK: %[[B:.*]] = train.reshape %[[X]] : tensor<4x32x64xf32> -> tensor<4x32x4x16xf32>
  %b = train.reshape %x : tensor<4x32x64xf32> -> tensor<4x32x4x16xf32>
  // Token ids and targets reshape too.
  // CHECK: %[[C:.*]] = train.reshape %[[IDS]] : tensor<4x32xi32> -> tensor<128xi32>
  %c = train.reshape %ids : tensor<4x32xi32> -> tensor<128xi32>
  // CHECK: %[[D:.*]] = train.reshape %[[H]] : tensor<6xbf16> -> tensor<2x3xbf16>
  %d = train.reshape %h : tensor<6xbf16> -> tensor<2x3xbf16>
  // CHECK: %[[E:.*]] = train.reshape %[[S]] : tensor<f16> -> tensor<1x1xf16>
  %e = train.reshape %s : tensor<f16> -> tensor<1x1xf16>
  // CHECK: %[[F:.*]] = train.reshape %[[E]] : tensor<1x1xf16> -> tensor<f16>
  %f = train.reshape %e : tensor<1x1xf16> -> tensor<f16>
  // CHECK: return %[[A]], %[[B]], %[[C]], %[[D]], %[[E]], %[[F]]
  return %a, %b, %c, %d, %e, %f : tensor<128x64xf32>, tensor<4x32x4x16xf32>, tensor<128xi32>, tensor<2x3xbf16>, tensor<1x1xf16>, tensor<f16>
}

// -----

//===----------------------------------------------------------------------===//
// train.transpose
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @transpose
// CHECK-SAME: (%[[X:.*]]: tensor<4x32x4x16xf32>, %[[M:.*]]: tensor<3x5xbf16>)
func.func @transpose(%x: tensor<4x32x4x16xf32>, %m: tensor<3x5xbf16>)
    -> (tensor<4x4x32x16xf32>, tensor<16x4x32x4xf32>, tensor<5x3xbf16>, tensor<3x5xbf16>) {
  // CHECK: %[[A:.*]] = train.transpose %[[X]] [0, 2, 1, 3] : tensor<4x32x4x16xf32> -> tensor<4x4x32x16xf32>
  %a = train.transpose %x [0, 2, 1, 3] : tensor<4x32x4x16xf32> -> tensor<4x4x32x16xf32>
  // CHECK: %[[B:.*]] = train.transpose %[[X]] [3, 2, 1, 0] : tensor<4x32x4x16xf32> -> tensor<16x4x32x4xf32>
  %b = train.transpose %x [3, 2, 1, 0] : tensor<4x32x4x16xf32> -> tensor<16x4x32x4xf32>
  // CHECK: %[[C:.*]] = train.transpose %[[M]] [1, 0] : tensor<3x5xbf16> -> tensor<5x3xbf16>
  %c = train.transpose %m [1, 0] : tensor<3x5xbf16> -> tensor<5x3xbf16>
  // The identity permutation.
  // CHECK: %[[D:.*]] = train.transpose %[[M]] [0, 1] : tensor<3x5xbf16> -> tensor<3x5xbf16>
  %d = train.transpose %m [0, 1] : tensor<3x5xbf16> -> tensor<3x5xbf16>
  // CHECK: return %[[A]], %[[B]], %[[C]], %[[D]]
  return %a, %b, %c, %d : tensor<4x4x32x16xf32>, tensor<16x4x32x4xf32>, tensor<5x3xbf16>, tensor<3x5xbf16>
}

// CHECK-LABEL: func.func @transpose_scalar
func.func @transpose_scalar(%s: tensor<f32>) -> tensor<f32> {
  // CHECK: train.transpose %{{.*}} [] : tensor<f32> -> tensor<f32>
  %r = train.transpose %s [] : tensor<f32> -> tensor<f32>
  return %r : tensor<f32>
}

// -----

//===----------------------------------------------------------------------===//
// train.split / train.concat
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @split
// CHECK-SAME: (%[[QKV:.*]]: tensor<4x32x192xf32>, %[[X:.*]]: tensor<6x4xf16>)
func.func @split(%qkv: tensor<4x32x192xf32>, %x: tensor<6x4xf16>)
    -> (tensor<4x32x64xf32>, tensor<4x32x64xf32>, tensor<4x32x64xf32>,
        tensor<1x4xf16>, tensor<5x4xf16>, tensor<6x4xf16>) {
  // CHECK: %[[P:.*]]:3 = train.split %[[QKV]] dim(2) : tensor<4x32x192xf32> -> tensor<4x32x64xf32>, tensor<4x32x64xf32>, tensor<4x32x64xf32>
  %q, %k, %v = train.split %qkv dim(2) : tensor<4x32x192xf32> -> tensor<4x32x64xf32>, tensor<4x32x64xf32>, tensor<4x32x64xf32>
  // Unequal pieces along dim 0.
  // CHECK: %[[U:.*]]:2 = train.split %[[X]] dim(0) : tensor<6x4xf16> -> tensor<1x4xf16>, tensor<5x4xf16>
  %a, %b = train.split %x dim(0) : tensor<6x4xf16> -> tensor<1x4xf16>, tensor<5x4xf16>
  // A single piece is the whole input.
  // CHECK: %[[W:.*]] = train.split %[[X]] dim(1) : tensor<6x4xf16> -> tensor<6x4xf16>
  %w = train.split %x dim(1) : tensor<6x4xf16> -> tensor<6x4xf16>
  // CHECK: return %[[P]]#0, %[[P]]#1, %[[P]]#2, %[[U]]#0, %[[U]]#1, %[[W]]
  return %q, %k, %v, %a, %b, %w : tensor<4x32x64xf32>, tensor<4x32x64xf32>, tensor<4x32x64xf32>,
                                  tensor<1x4xf16>, tensor<5x4xf16>, tensor<6x4xf16>
}

// CHECK-LABEL: func.func @concat
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<4x8xf32>, %[[C:.*]]: tensor<4x1xf32>, %[[D:.*]]: tensor<2x3xbf16>)
func.func @concat(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %c: tensor<4x1xf32>, %d: tensor<2x3xbf16>)
    -> (tensor<4x16xf32>, tensor<4x17xf32>, tensor<8x8xf32>, tensor<2x3xbf16>) {
  // CHECK: %[[R0:.*]] = train.concat %[[A]], %[[B]] dim(1) : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x16xf32>
  %r0 = train.concat %a, %b dim(1) : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x16xf32>
  // CHECK: %[[R1:.*]] = train.concat %[[A]], %[[C]], %[[B]] dim(1) : tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x8xf32> -> tensor<4x17xf32>
  %r1 = train.concat %a, %c, %b dim(1) : tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x8xf32> -> tensor<4x17xf32>
  // CHECK: %[[R2:.*]] = train.concat %[[A]], %[[B]] dim(0) : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<8x8xf32>
  %r2 = train.concat %a, %b dim(0) : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<8x8xf32>
  // CHECK: %[[R3:.*]] = train.concat %[[D]] dim(0) : tensor<2x3xbf16> -> tensor<2x3xbf16>
  %r3 = train.concat %d dim(0) : tensor<2x3xbf16> -> tensor<2x3xbf16>
  // CHECK: return %[[R0]], %[[R1]], %[[R2]], %[[R3]]
  return %r0, %r1, %r2, %r3 : tensor<4x16xf32>, tensor<4x17xf32>, tensor<8x8xf32>, tensor<2x3xbf16>
}

// -----

//===----------------------------------------------------------------------===//
// train.broadcast
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @broadcast
// CHECK-SAME: (%[[WPE:.*]]: tensor<32x64xf32>, %[[S:.*]]: tensor<bf16>)
func.func @broadcast(%wpe: tensor<32x64xf32>, %s: tensor<bf16>)
    -> (tensor<4x32x64xf32>, tensor<2x3x32x64xf32>, tensor<32x64xf32>, tensor<4x8xbf16>) {
  // CHECK: %[[A:.*]] = train.broadcast %[[WPE]] : tensor<32x64xf32> -> tensor<4x32x64xf32>
  %a = train.broadcast %wpe : tensor<32x64xf32> -> tensor<4x32x64xf32>
  // CHECK: %[[B:.*]] = train.broadcast %[[WPE]] : tensor<32x64xf32> -> tensor<2x3x32x64xf32>
  %b = train.broadcast %wpe : tensor<32x64xf32> -> tensor<2x3x32x64xf32>
  // No new dimension.
  // CHECK: %[[C:.*]] = train.broadcast %[[WPE]] : tensor<32x64xf32> -> tensor<32x64xf32>
  %c = train.broadcast %wpe : tensor<32x64xf32> -> tensor<32x64xf32>
  // CHECK: %[[D:.*]] = train.broadcast %[[S]] : tensor<bf16> -> tensor<4x8xbf16>
  %d = train.broadcast %s : tensor<bf16> -> tensor<4x8xbf16>
  // CHECK: return %[[A]], %[[B]], %[[C]], %[[D]]
  return %a, %b, %c, %d : tensor<4x32x64xf32>, tensor<2x3x32x64xf32>, tensor<32x64xf32>, tensor<4x8xbf16>
}
