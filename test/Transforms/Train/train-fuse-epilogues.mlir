// RUN: zero-opt %s --train-fuse-epilogues -split-input-file | FileCheck %s

// A GPT MLP after train-autodiff: the forward's linear + GELU becomes one
// matmul_gelu whose pre-activation the backward reads; the backward's
// product dy · W2 feeding only gelu_grad becomes one matmul_gelu_grad at
// the product's place.
// CHECK-LABEL: func.func @mlp
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x16xbf16>, %[[W1:.*]]: tensor<64x16xbf16>, %[[B1:.*]]: tensor<64xbf16>, %[[W2:.*]]: tensor<16x64xbf16>, %[[DY:.*]]: tensor<2x8x16xbf16>)
func.func @mlp(%x: tensor<2x8x16xbf16>, %w1: tensor<64x16xbf16>,
               %b1: tensor<64xbf16>, %w2: tensor<16x64xbf16>,
               %dy: tensor<2x8x16xbf16>)
    -> (tensor<2x8x64xbf16>, tensor<2x8x64xbf16>, tensor<2x8x64xbf16>) {
  // CHECK-NEXT: %[[PRE:.*]], %[[A:.*]] = train.matmul_gelu %[[X]], %[[W1]] bias %[[B1]] {transpose_b} : tensor<2x8x16xbf16>, tensor<64x16xbf16>, tensor<64xbf16> -> tensor<2x8x64xbf16>
  %h = train.matmul %x, %w1 bias %b1 {transpose_b} : tensor<2x8x16xbf16>, tensor<64x16xbf16>, tensor<64xbf16> -> tensor<2x8x64xbf16>
  %a = train.gelu %h : tensor<2x8x64xbf16>
  // CHECK-NEXT: %[[DH:.*]] = train.matmul_gelu_grad %[[DY]], %[[W2]], %[[PRE]] : tensor<2x8x16xbf16>, tensor<16x64xbf16> -> tensor<2x8x64xbf16>
  // CHECK-NEXT: %[[S:.*]] = train.scale %[[A]]
  // CHECK-NEXT: return %[[A]], %[[DH]], %[[S]]
  %da = train.matmul %dy, %w2 : tensor<2x8x16xbf16>, tensor<16x64xbf16> -> tensor<2x8x64xbf16>
  %s = train.scale %a, 2.0 : tensor<2x8x64xbf16>
  %dh = train.gelu_grad %h, %da : tensor<2x8x64xbf16>
  return %a, %dh, %s : tensor<2x8x64xbf16>, tensor<2x8x64xbf16>, tensor<2x8x64xbf16>
}

// -----

// No bias, f32 (the same rewrite; in f32 it computes exactly the pair).
// CHECK-LABEL: func.func @no_bias_f32
// CHECK: %[[PRE:.*]], %[[A:.*]] = train.matmul_gelu %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
// CHECK-NOT: train.gelu
// CHECK: return %[[A]], %[[PRE]]
func.func @no_bias_f32(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>)
    -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %h = train.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %a = train.gelu %h : tensor<4x16xf32>
  return %a, %h : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// A recomputed block: the GELU input is computed after the backward
// product, so the fused op goes where the gelu_grad was.
// CHECK-LABEL: func.func @pre_after_product
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8x16xf32>, %[[DY:.*]]: tensor<4x8xf32>, %[[W2:.*]]: tensor<8x16xf32>)
// CHECK-NEXT: %[[N:.*]] = train.scale %[[DY]]
// CHECK-NEXT: %[[PRE:.*]], %{{.*}} = train.matmul_gelu %[[X]], %[[W]]
// CHECK-NEXT: %[[DH:.*]] = train.matmul_gelu_grad %[[DY]], %[[W2]], %[[PRE]] : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT: return %[[DH]], %[[N]]
func.func @pre_after_product(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>,
                             %dy: tensor<4x8xf32>, %w2: tensor<8x16xf32>)
    -> (tensor<4x16xf32>, tensor<4x8xf32>) {
  %da = train.matmul %dy, %w2 : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %n = train.scale %dy, 2.0 : tensor<4x8xf32>
  %h = train.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %a = train.gelu %h : tensor<4x16xf32>
  %dh = train.gelu_grad %h, %da : tensor<4x16xf32>
  return %dh, %n : tensor<4x16xf32>, tensor<4x8xf32>
}

// -----

// Left alone: a product read by something else too, a biased product as
// the gradient, and a GELU of a value no matmul computes. A second GELU of
// one product reads the fused op's pre-activation.
// CHECK-LABEL: func.func @unfused
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8x16xf32>, %[[B:.*]]: tensor<16xf32>, %[[P:.*]]: tensor<4x16xf32>)
// CHECK-NEXT: %[[G1:.*]] = train.matmul %[[X]], %[[W]] : tensor<4x8xf32>
// CHECK-NEXT: %[[D1:.*]] = train.gelu_grad %[[P]], %[[G1]]
// CHECK-NEXT: %[[G2:.*]] = train.matmul %[[X]], %[[W]] bias %[[B]]
// CHECK-NEXT: %[[D2:.*]] = train.gelu_grad %[[P]], %[[G2]]
// CHECK-NEXT: %[[E:.*]] = train.gelu %[[P]]
// CHECK-NEXT: %[[PRE:.*]], %[[Y:.*]] = train.matmul_gelu %[[X]], %[[W]] :
// CHECK-NEXT: %[[Y2:.*]] = train.gelu %[[PRE]]
// CHECK-NEXT: return %[[D1]], %[[G1]], %[[D2]], %[[E]], %[[Y]], %[[Y2]]
func.func @unfused(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>,
                   %b: tensor<16xf32>, %p: tensor<4x16xf32>)
    -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>,
        tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) {
  %g1 = train.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %d1 = train.gelu_grad %p, %g1 : tensor<4x16xf32>
  %g2 = train.matmul %x, %w bias %b : tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %d2 = train.gelu_grad %p, %g2 : tensor<4x16xf32>
  %e = train.gelu %p : tensor<4x16xf32>
  %h = train.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %y = train.gelu %h : tensor<4x16xf32>
  %y2 = train.gelu %h : tensor<4x16xf32>
  return %d1, %g1, %d2, %e, %y, %y2 : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>
}
