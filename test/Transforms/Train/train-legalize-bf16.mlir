// RUN: zero-opt %s --train-legalize-bf16 -split-input-file | FileCheck %s

// train.mul has no bf16 kernel: both operands are widened to f32 before
// it, it computes in f32, and its result is rounded back for its uses.
// CHECK-LABEL: func.func @mul
// CHECK-SAME: (%[[A:.*]]: tensor<8xbf16>, %[[B:.*]]: tensor<8xbf16>)
// CHECK-NEXT: %[[A32:.*]] = train.cast %[[A]] : tensor<8xbf16> -> tensor<8xf32>
// CHECK-NEXT: %[[B32:.*]] = train.cast %[[B]] : tensor<8xbf16> -> tensor<8xf32>
// CHECK-NEXT: %[[R32:.*]] = train.mul %[[A32]], %[[B32]] : tensor<8xf32>
// CHECK-NEXT: %[[R:.*]] = train.cast %[[R32]] : tensor<8xf32> -> tensor<8xbf16>
// CHECK-NEXT: %[[S:.*]] = train.add %[[R]], %[[A]] : tensor<8xbf16>
// CHECK-NEXT: return %[[S]]
func.func @mul(%a: tensor<8xbf16>, %b: tensor<8xbf16>) -> tensor<8xbf16> {
  %r = train.mul %a, %b : tensor<8xbf16>
  %s = train.add %r, %a : tensor<8xbf16>
  return %s : tensor<8xbf16>
}

// -----

// An operand read twice is widened once; the matmul of a tensor with
// itself has no bf16 kernel (the bf16 GEMM widens chunks of two distinct
// operands), the one of two distinct tensors has.
// CHECK-LABEL: func.func @same_operand
// CHECK-SAME: (%[[A:.*]]: tensor<4x4xbf16>, %[[B:.*]]: tensor<4x4xbf16>)
// CHECK-NEXT: %[[A32:.*]] = train.cast %[[A]] : tensor<4x4xbf16> -> tensor<4x4xf32>
// CHECK-NEXT: %[[M32:.*]] = train.matmul %[[A32]], %[[A32]] : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
// CHECK-NEXT: %[[M:.*]] = train.cast %[[M32]] : tensor<4x4xf32> -> tensor<4x4xbf16>
// CHECK-NEXT: %[[N:.*]] = train.matmul %[[M]], %[[B]] : tensor<4x4xbf16>, tensor<4x4xbf16> -> tensor<4x4xbf16>
// CHECK-NEXT: return %[[N]]
func.func @same_operand(%a: tensor<4x4xbf16>, %b: tensor<4x4xbf16>) -> tensor<4x4xbf16> {
  %m = train.matmul %a, %a : tensor<4x4xbf16>, tensor<4x4xbf16> -> tensor<4x4xbf16>
  %n = train.matmul %m, %b : tensor<4x4xbf16>, tensor<4x4xbf16> -> tensor<4x4xbf16>
  return %n : tensor<4x4xbf16>
}

// -----

// Native bf16 kernels, f32 ops and ops that are not compute ops (casts,
// sums of squares, which take bf16 as it is) are left as they are.
// CHECK-LABEL: func.func @unchanged
// CHECK-NOT: train.cast
// CHECK: train.add %{{.*}} : tensor<8xbf16>
// CHECK-NEXT: train.gelu %{{.*}} : tensor<8xbf16>
// CHECK-NEXT: train.mul %{{.*}} : tensor<8xf32>
// CHECK-NEXT: train.sum_squares %{{.*}} : tensor<8xbf16>
// CHECK-NEXT: return
func.func @unchanged(%a: tensor<8xbf16>, %x: tensor<8xf32>) -> (tensor<8xbf16>, tensor<8xf32>, tensor<f32>) {
  %s = train.add %a, %a : tensor<8xbf16>
  %g = train.gelu %s : tensor<8xbf16>
  %m = train.mul %x, %x : tensor<8xf32>
  %q = train.sum_squares %g : tensor<8xbf16>
  return %g, %m, %q : tensor<8xbf16>, tensor<8xf32>, tensor<f32>
}

// -----

// f16 has no native kernels: even train.add is widened (zrt_add_bf16 is
// for bf16 only). A softmax of bf16 (no bf16 kernel) likewise.
// CHECK-LABEL: func.func @f16
// CHECK-SAME: (%[[A:.*]]: tensor<2x8xf16>, %[[L:.*]]: tensor<2x8xbf16>)
// CHECK-NEXT: %[[A32:.*]] = train.cast %[[A]] : tensor<2x8xf16> -> tensor<2x8xf32>
// CHECK-NEXT: %[[S32:.*]] = train.add %[[A32]], %[[A32]] : tensor<2x8xf32>
// CHECK-NEXT: %[[S:.*]] = train.cast %[[S32]] : tensor<2x8xf32> -> tensor<2x8xf16>
// CHECK-NEXT: %[[L32:.*]] = train.cast %[[L]] : tensor<2x8xbf16> -> tensor<2x8xf32>
// CHECK-NEXT: %[[P32:.*]] = train.softmax %[[L32]] : tensor<2x8xf32>
// CHECK-NEXT: %[[P:.*]] = train.cast %[[P32]] : tensor<2x8xf32> -> tensor<2x8xbf16>
// CHECK-NEXT: return %[[S]], %[[P]]
func.func @f16(%a: tensor<2x8xf16>, %l: tensor<2x8xbf16>) -> (tensor<2x8xf16>, tensor<2x8xbf16>) {
  %s = train.add %a, %a : tensor<2x8xf16>
  %p = train.softmax %l : tensor<2x8xbf16>
  return %s, %p : tensor<2x8xf16>, tensor<2x8xbf16>
}

// -----

// Only the narrow tensors are widened: the embedding's ids stay i32; each
// of a multi-result op's narrow results is rounded back, in result order.
// CHECK-LABEL: func.func @partial
// CHECK-SAME: (%[[T:.*]]: tensor<16x8xf16>, %[[IDS:.*]]: tensor<2x4xi32>, %[[W:.*]]: tensor<8xf16>, %[[DY:.*]]: tensor<2x4x8xf16>)
// CHECK-NEXT: %[[T32:.*]] = train.cast %[[T]] : tensor<16x8xf16> -> tensor<16x8xf32>
// CHECK-NEXT: %[[E32:.*]] = train.embedding %[[T32]], %[[IDS]] : tensor<16x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
// CHECK-NEXT: %[[E:.*]] = train.cast %[[E32]] : tensor<2x4x8xf32> -> tensor<2x4x8xf16>
// CHECK-NEXT: %[[E2:.*]] = train.cast %[[E]] : tensor<2x4x8xf16> -> tensor<2x4x8xf32>
// CHECK-NEXT: %[[W32:.*]] = train.cast %[[W]] : tensor<8xf16> -> tensor<8xf32>
// CHECK-NEXT: %[[DY32:.*]] = train.cast %[[DY]] : tensor<2x4x8xf16> -> tensor<2x4x8xf32>
// CHECK-NEXT: %[[DX32:.*]], %[[DW32:.*]], %[[DB32:.*]] = train.layer_norm_grad %[[E2]], %[[W32]], %[[DY32]] eps(1.000000e-05) : tensor<2x4x8xf32>, tensor<8xf32>
// CHECK-NEXT: %[[DX:.*]] = train.cast %[[DX32]] : tensor<2x4x8xf32> -> tensor<2x4x8xf16>
// CHECK-NEXT: %[[DW:.*]] = train.cast %[[DW32]] : tensor<8xf32> -> tensor<8xf16>
// CHECK-NEXT: %[[DB:.*]] = train.cast %[[DB32]] : tensor<8xf32> -> tensor<8xf16>
// CHECK-NEXT: return %[[DX]], %[[DW]], %[[DB]]
func.func @partial(%t: tensor<16x8xf16>, %ids: tensor<2x4xi32>, %w: tensor<8xf16>, %dy: tensor<2x4x8xf16>)
    -> (tensor<2x4x8xf16>, tensor<8xf16>, tensor<8xf16>) {
  %e = train.embedding %t, %ids : tensor<16x8xf16>, tensor<2x4xi32> -> tensor<2x4x8xf16>
  %dx, %dw, %db = train.layer_norm_grad %e, %w, %dy eps(1.0e-05) : tensor<2x4x8xf16>, tensor<8xf16>
  return %dx, %dw, %db : tensor<2x4x8xf16>, tensor<8xf16>, tensor<8xf16>
}

// -----

// RoPE's table is f32 in every precision: of an f16 rope only the input
// and the result are widened.
// CHECK-LABEL: func.func @rope
// CHECK-SAME: (%[[X:.*]]: tensor<4x32x2x16xf16>, %[[TAB:.*]]: tensor<32x8x2xf32>)
// CHECK-NEXT: %[[X32:.*]] = train.cast %[[X]] : tensor<4x32x2x16xf16> -> tensor<4x32x2x16xf32>
// CHECK-NEXT: %[[Y32:.*]] = train.rope %[[X32]], %[[TAB]] layout(<interleaved>) : tensor<4x32x2x16xf32>, tensor<32x8x2xf32>
// CHECK-NEXT: %[[Y:.*]] = train.cast %[[Y32]] : tensor<4x32x2x16xf32> -> tensor<4x32x2x16xf16>
// CHECK-NEXT: return %[[Y]]
func.func @rope(%x: tensor<4x32x2x16xf16>, %t: tensor<32x8x2xf32>) -> tensor<4x32x2x16xf16> {
  %y = train.rope %x, %t layout(<interleaved>) : tensor<4x32x2x16xf16>, tensor<32x8x2xf32>
  return %y : tensor<4x32x2x16xf16>
}

// -----

// A function whose buffers zero-buffer-assign has placed already keeps
// the ops it was planned with (the lowering then rejects the mul).
// CHECK-LABEL: func.func @assigned
// CHECK-NOT: train.cast
// CHECK: train.mul %{{.*}} : tensor<8xbf16>
func.func @assigned(%a: tensor<8xbf16>) -> tensor<8xbf16> attributes {zero.arena_bytes = {activations = 0 : i64, temporaries = 64 : i64}} {
  %r = train.mul %a, %a : tensor<8xbf16>
  return %r : tensor<8xbf16>
}


// -----

// The zero dialect's vocabulary-parallel kernels are compute ops too (the
// Compute trait) with f32 kernels only: their bf16 tensors are widened;
// an f32 result (the row maxima) stays as it is.
// CHECK-LABEL: func.func @vocab
// CHECK-SAME: (%[[T:.*]]: tensor<8x4xbf16>, %[[IDS:.*]]: tensor<2x3xi32>, %[[L:.*]]: tensor<6x8xbf16>)
// CHECK-NEXT: %[[T32:.*]] = train.cast %[[T]] : tensor<8x4xbf16> -> tensor<8x4xf32>
// CHECK-NEXT: %[[E32:.*]] = zero.vocab_embedding %[[T32]], %[[IDS]] size(2) : tensor<8x4xf32>, tensor<2x3xi32> -> tensor<2x3x4xf32>
// CHECK-NEXT: %[[E:.*]] = train.cast %[[E32]] : tensor<2x3x4xf32> -> tensor<2x3x4xbf16>
// CHECK-NEXT: %[[L32:.*]] = train.cast %[[L]] : tensor<6x8xbf16> -> tensor<6x8xf32>
// CHECK-NEXT: %[[M:.*]] = zero.vocab_max %[[L32]] size(2) {num_classes = 10 : i64} : tensor<6x8xf32> -> tensor<6xf32>
// CHECK-NEXT: return %[[E]], %[[M]]
func.func @vocab(%table: tensor<8x4xbf16>, %ids: tensor<2x3xi32>, %logits: tensor<6x8xbf16>) -> (tensor<2x3x4xbf16>, tensor<6xf32>) {
  %e = zero.vocab_embedding %table, %ids size(2) : tensor<8x4xbf16>, tensor<2x3xi32> -> tensor<2x3x4xbf16>
  %m = zero.vocab_max %logits size(2) {num_classes = 10 : i64} : tensor<6x8xbf16> -> tensor<6xf32>
  return %e, %m : tensor<2x3x4xbf16>, tensor<6xf32>
}
