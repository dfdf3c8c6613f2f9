// RUN: zero-opt %s -split-input-file | FileCheck %s
// RUN: zero-opt %s -split-input-file | zero-opt -split-input-file | FileCheck %s
// RUN: zero-opt %s -split-input-file -mlir-print-op-generic | zero-opt -split-input-file | FileCheck %s

//===----------------------------------------------------------------------===//
// train.matmul
//===----------------------------------------------------------------------===//

// Every transpose combination on rank-2 operands: op(a) is [4, 8], op(b) is
// [8, 16].
// CHECK-LABEL: func.func @matmul_2d
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[AT:.*]]: tensor<8x4xf32>, %[[B:.*]]: tensor<8x16xf32>, %[[BT:.*]]: tensor<16x8xf32>)
func.func @matmul_2d(%a: tensor<4x8xf32>, %at: tensor<8x4xf32>,
                     %b: tensor<8x16xf32>, %bt: tensor<16x8xf32>)
    -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) {
  // CHECK: %[[R0:.*]] = train.matmul %[[A]], %[[B]] : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %r0 = train.matmul %a, %b : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  // CHECK: %[[R1:.*]] = train.matmul %[[AT]], %[[B]] {transpose_a} : tensor<8x4xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %r1 = train.matmul %at, %b {transpose_a} : tensor<8x4xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  // CHECK: %[[R2:.*]] = train.matmul %[[A]], %[[BT]] {transpose_b} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %r2 = train.matmul %a, %bt {transpose_b} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  // CHECK: %[[R3:.*]] = train.matmul %[[AT]], %[[BT]] {transpose_a, transpose_b} : tensor<8x4xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %r3 = train.matmul %at, %bt {transpose_a, transpose_b} : tensor<8x4xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  // CHECK: return %[[R0]], %[[R1]], %[[R2]], %[[R3]]
  return %r0, %r1, %r2, %r3 : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// Batched products with equal batch dimensions, every transpose combination.
// CHECK-LABEL: func.func @matmul_batched
// CHECK-SAME: (%[[A:.*]]: tensor<2x3x4x8xbf16>, %[[AT:.*]]: tensor<2x3x8x4xbf16>, %[[B:.*]]: tensor<2x3x8x16xbf16>, %[[BT:.*]]: tensor<2x3x16x8xbf16>)
func.func @matmul_batched(%a: tensor<2x3x4x8xbf16>, %at: tensor<2x3x8x4xbf16>,
                          %b: tensor<2x3x8x16xbf16>, %bt: tensor<2x3x16x8xbf16>)
    -> (tensor<2x3x4x16xbf16>, tensor<2x3x4x16xbf16>, tensor<2x3x4x16xbf16>, tensor<2x3x4x16xbf16>) {
  // CHECK: %[[R0:.*]] = train.matmul %[[A]], %[[B]] : tensor<2x3x4x8xbf16>, tensor<2x3x8x16xbf16> -> tensor<2x3x4x16xbf16>
  %r0 = train.matmul %a, %b : tensor<2x3x4x8xbf16>, tensor<2x3x8x16xbf16> -> tensor<2x3x4x16xbf16>
  // CHECK: %[[R1:.*]] = train.matmul %[[AT]], %[[B]] {transpose_a} : tensor<2x3x8x4xbf16>, tensor<2x3x8x16xbf16> -> tensor<2x3x4x16xbf16>
  %r1 = train.matmul %at, %b {transpose_a} : tensor<2x3x8x4xbf16>, tensor<2x3x8x16xbf16> -> tensor<2x3x4x16xbf16>
  // CHECK: %[[R2:.*]] = train.matmul %[[A]], %[[BT]] {transpose_b} : tensor<2x3x4x8xbf16>, tensor<2x3x16x8xbf16> -> tensor<2x3x4x16xbf16>
  %r2 = train.matmul %a, %bt {transpose_b} : tensor<2x3x4x8xbf16>, tensor<2x3x16x8xbf16> -> tensor<2x3x4x16xbf16>
  // CHECK: %[[R3:.*]] = train.matmul %[[AT]], %[[BT]] {transpose_a, transpose_b} : tensor<2x3x8x4xbf16>, tensor<2x3x16x8xbf16> -> tensor<2x3x4x16xbf16>
  %r3 = train.matmul %at, %bt {transpose_a, transpose_b} : tensor<2x3x8x4xbf16>, tensor<2x3x16x8xbf16> -> tensor<2x3x4x16xbf16>
  return %r0, %r1, %r2, %r3 : tensor<2x3x4x16xbf16>, tensor<2x3x4x16xbf16>, tensor<2x3x4x16xbf16>, tensor<2x3x4x16xbf16>
}

// -----

// A rank-2 b shared by every batch entry (a linear layer), with and without
// transpose_b and bias.
// CHECK-LABEL: func.func @matmul_shared_b
// CHECK-SAME: (%[[X:.*]]: tensor<4x32x64xf32>, %[[W:.*]]: tensor<256x64xf32>, %[[WN:.*]]: tensor<64x256xf32>, %[[BIAS:.*]]: tensor<256xf32>)
func.func @matmul_shared_b(%x: tensor<4x32x64xf32>, %w: tensor<256x64xf32>,
                           %wn: tensor<64x256xf32>, %bias: tensor<256xf32>)
    -> (tensor<4x32x256xf32>, tensor<4x32x256xf32>, tensor<4x32x256xf32>) {
  // CHECK: %[[Y0:.*]] = train.matmul %[[X]], %[[W]] bias %[[BIAS]] {transpose_b} : tensor<4x32x64xf32>, tensor<256x64xf32>, tensor<256xf32> -> tensor<4x32x256xf32>
  %y0 = train.matmul %x, %w bias %bias {transpose_b} : tensor<4x32x64xf32>, tensor<256x64xf32>, tensor<256xf32> -> tensor<4x32x256xf32>
  // CHECK: %[[Y1:.*]] = train.matmul %[[X]], %[[W]] {transpose_b} : tensor<4x32x64xf32>, tensor<256x64xf32> -> tensor<4x32x256xf32>
  %y1 = train.matmul %x, %w {transpose_b} : tensor<4x32x64xf32>, tensor<256x64xf32> -> tensor<4x32x256xf32>
  // CHECK: %[[Y2:.*]] = train.matmul %[[X]], %[[WN]] bias %[[BIAS]] : tensor<4x32x64xf32>, tensor<64x256xf32>, tensor<256xf32> -> tensor<4x32x256xf32>
  %y2 = train.matmul %x, %wn bias %bias : tensor<4x32x64xf32>, tensor<64x256xf32>, tensor<256xf32> -> tensor<4x32x256xf32>
  // CHECK: return %[[Y0]], %[[Y1]], %[[Y2]]
  return %y0, %y1, %y2 : tensor<4x32x256xf32>, tensor<4x32x256xf32>, tensor<4x32x256xf32>
}

// -----

// Bias on a rank-2 product and on a batched one; f16 storage.
// CHECK-LABEL: func.func @matmul_bias
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf16>, %[[B:.*]]: tensor<8x16xf16>, %[[C:.*]]: tensor<2x4x8xf16>, %[[D:.*]]: tensor<2x16x8xf16>, %[[BIAS:.*]]: tensor<16xf16>)
func.func @matmul_bias(%a: tensor<4x8xf16>, %b: tensor<8x16xf16>,
                       %c: tensor<2x4x8xf16>, %d: tensor<2x16x8xf16>,
                       %bias: tensor<16xf16>) -> (tensor<4x16xf16>, tensor<2x4x16xf16>) {
  // CHECK: %[[R0:.*]] = train.matmul %[[A]], %[[B]] bias %[[BIAS]] : tensor<4x8xf16>, tensor<8x16xf16>, tensor<16xf16> -> tensor<4x16xf16>
  %r0 = train.matmul %a, %b bias %bias : tensor<4x8xf16>, tensor<8x16xf16>, tensor<16xf16> -> tensor<4x16xf16>
  // CHECK: %[[R1:.*]] = train.matmul %[[C]], %[[D]] bias %[[BIAS]] {transpose_b} : tensor<2x4x8xf16>, tensor<2x16x8xf16>, tensor<16xf16> -> tensor<2x4x16xf16>
  %r1 = train.matmul %c, %d bias %bias {transpose_b} : tensor<2x4x8xf16>, tensor<2x16x8xf16>, tensor<16xf16> -> tensor<2x4x16xf16>
  // CHECK: return %[[R0]], %[[R1]]
  return %r0, %r1 : tensor<4x16xf16>, tensor<2x4x16xf16>
}

// -----

//===----------------------------------------------------------------------===//
// train.embedding / train.embedding_grad
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @embedding
// CHECK-SAME: (%[[T:.*]]: tensor<256x64xf32>, %[[IDS:.*]]: tensor<4x32xi32>, %[[IDS1:.*]]: tensor<7xi32>, %[[TB:.*]]: tensor<10x3xbf16>, %[[ID0:.*]]: tensor<i32>)
func.func @embedding(%t: tensor<256x64xf32>, %ids: tensor<4x32xi32>, %ids1: tensor<7xi32>,
                     %tb: tensor<10x3xbf16>, %id0: tensor<i32>)
    -> (tensor<4x32x64xf32>, tensor<7x64xf32>, tensor<3xbf16>) {
  // CHECK: %[[X:.*]] = train.embedding %[[T]], %[[IDS]] : tensor<256x64xf32>, tensor<4x32xi32> -> tensor<4x32x64xf32>
  %x = train.embedding %t, %ids : tensor<256x64xf32>, tensor<4x32xi32> -> tensor<4x32x64xf32>
  // CHECK: %[[Y:.*]] = train.embedding %[[T]], %[[IDS1]] : tensor<256x64xf32>, tensor<7xi32> -> tensor<7x64xf32>
  %y = train.embedding %t, %ids1 : tensor<256x64xf32>, tensor<7xi32> -> tensor<7x64xf32>
  // A scalar id selects one row.
  // CHECK: %[[Z:.*]] = train.embedding %[[TB]], %[[ID0]] : tensor<10x3xbf16>, tensor<i32> -> tensor<3xbf16>
  %z = train.embedding %tb, %id0 : tensor<10x3xbf16>, tensor<i32> -> tensor<3xbf16>
  // CHECK: return %[[X]], %[[Y]], %[[Z]]
  return %x, %y, %z : tensor<4x32x64xf32>, tensor<7x64xf32>, tensor<3xbf16>
}

// CHECK-LABEL: func.func @embedding_grad
// CHECK-SAME: (%[[IDS:.*]]: tensor<4x32xi32>, %[[DX:.*]]: tensor<4x32x64xf32>, %[[ID1:.*]]: tensor<7xi32>, %[[DY:.*]]: tensor<7x3xbf16>)
func.func @embedding_grad(%ids: tensor<4x32xi32>, %dx: tensor<4x32x64xf32>,
                          %id1: tensor<7xi32>, %dy: tensor<7x3xbf16>)
    -> (tensor<256x64xf32>, tensor<10x3xbf16>) {
  // CHECK: %[[DT:.*]] = train.embedding_grad %[[IDS]], %[[DX]] : tensor<4x32xi32>, tensor<4x32x64xf32> -> tensor<256x64xf32>
  %dt = train.embedding_grad %ids, %dx : tensor<4x32xi32>, tensor<4x32x64xf32> -> tensor<256x64xf32>
  // CHECK: %[[DU:.*]] = train.embedding_grad %[[ID1]], %[[DY]] : tensor<7xi32>, tensor<7x3xbf16> -> tensor<10x3xbf16>
  %du = train.embedding_grad %id1, %dy : tensor<7xi32>, tensor<7x3xbf16> -> tensor<10x3xbf16>
  // CHECK: return %[[DT]], %[[DU]]
  return %dt, %du : tensor<256x64xf32>, tensor<10x3xbf16>
}

// -----

//===----------------------------------------------------------------------===//
// train.reduce_sum
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @reduce_sum
// CHECK-SAME: (%[[DY:.*]]: tensor<4x32x256xf32>, %[[H:.*]]: tensor<8x5xbf16>)
func.func @reduce_sum(%dy: tensor<4x32x256xf32>, %h: tensor<8x5xbf16>)
    -> (tensor<256xf32>, tensor<32x256xf32>, tensor<4x32x256xf32>, tensor<5xbf16>, tensor<f32>) {
  // CHECK: %[[A:.*]] = train.reduce_sum %[[DY]] : tensor<4x32x256xf32> -> tensor<256xf32>
  %a = train.reduce_sum %dy : tensor<4x32x256xf32> -> tensor<256xf32>
  // CHECK: %[[B:.*]] = train.reduce_sum %[[DY]] : tensor<4x32x256xf32> -> tensor<32x256xf32>
  %b = train.reduce_sum %dy : tensor<4x32x256xf32> -> tensor<32x256xf32>
  // Keeping every dimension sums nothing.
  // CHECK: %[[C:.*]] = train.reduce_sum %[[DY]] : tensor<4x32x256xf32> -> tensor<4x32x256xf32>
  %c = train.reduce_sum %dy : tensor<4x32x256xf32> -> tensor<4x32x256xf32>
  // CHECK: %[[D:.*]] = train.reduce_sum %[[H]] : tensor<8x5xbf16> -> tensor<5xbf16>
  %d = train.reduce_sum %h : tensor<8x5xbf16> -> tensor<5xbf16>
  // Keeping no dimension sums everything.
  // CHECK: %[[E:.*]] = train.reduce_sum %[[DY]] : tensor<4x32x256xf32> -> tensor<f32>
  %e = train.reduce_sum %dy : tensor<4x32x256xf32> -> tensor<f32>
  // CHECK: return %[[A]], %[[B]], %[[C]], %[[D]], %[[E]]
  return %a, %b, %c, %d, %e : tensor<256xf32>, tensor<32x256xf32>, tensor<4x32x256xf32>, tensor<5xbf16>, tensor<f32>
}

// -----

//===----------------------------------------------------------------------===//
// train.matmul_gelu, train.matmul_gelu_grad
//===----------------------------------------------------------------------===//

// A linear layer with GELU (pre-activation and activation), with and
// without bias, and the fused backward product.
// CHECK-LABEL: func.func @matmul_gelu
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x16xbf16>, %[[W:.*]]: tensor<64x16xbf16>, %[[B:.*]]: tensor<64xbf16>, %[[DY:.*]]: tensor<2x8x16xbf16>, %[[W2:.*]]: tensor<16x64xbf16>)
func.func @matmul_gelu(%x: tensor<2x8x16xbf16>, %w: tensor<64x16xbf16>,
                       %b: tensor<64xbf16>, %dy: tensor<2x8x16xbf16>,
                       %w2: tensor<16x64xbf16>)
    -> (tensor<2x8x64xbf16>, tensor<2x8x64xbf16>, tensor<2x8x64xbf16>, tensor<2x8x64xbf16>) {
  // CHECK: %[[PRE:.*]], %[[Y:.*]] = train.matmul_gelu %[[X]], %[[W]] bias %[[B]] {transpose_b} : tensor<2x8x16xbf16>, tensor<64x16xbf16>, tensor<64xbf16> -> tensor<2x8x64xbf16>
  %pre, %y = train.matmul_gelu %x, %w bias %b {transpose_b} : tensor<2x8x16xbf16>, tensor<64x16xbf16>, tensor<64xbf16> -> tensor<2x8x64xbf16>
  // CHECK: %[[PRE2:.*]], %[[Y2:.*]] = train.matmul_gelu %[[X]], %[[W]] {transpose_b} : tensor<2x8x16xbf16>, tensor<64x16xbf16> -> tensor<2x8x64xbf16>
  %pre2, %y2 = train.matmul_gelu %x, %w {transpose_b} : tensor<2x8x16xbf16>, tensor<64x16xbf16> -> tensor<2x8x64xbf16>
  // CHECK: %[[D:.*]] = train.matmul_gelu_grad %[[DY]], %[[W2]], %[[PRE]] : tensor<2x8x16xbf16>, tensor<16x64xbf16> -> tensor<2x8x64xbf16>
  %d = train.matmul_gelu_grad %dy, %w2, %pre : tensor<2x8x16xbf16>, tensor<16x64xbf16> -> tensor<2x8x64xbf16>
  return %y, %pre2, %y2, %d : tensor<2x8x64xbf16>, tensor<2x8x64xbf16>, tensor<2x8x64xbf16>, tensor<2x8x64xbf16>
}
