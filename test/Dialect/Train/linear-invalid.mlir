// RUN: zero-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// train.matmul
//===----------------------------------------------------------------------===//

func.func @matmul_rank1(%a: tensor<8xf32>, %b: tensor<8x16xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{'train.matmul' op operands must have rank >= 2, got 'tensor<8xf32>' and 'tensor<8x16xf32>'}}
  %r = train.matmul %a, %b : tensor<8xf32>, tensor<8x16xf32> -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

func.func @matmul_rank1_b(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'train.matmul' op operands must have rank >= 2, got 'tensor<4x8xf32>' and 'tensor<8xf32>'}}
  %r = train.matmul %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @matmul_element_types(%a: tensor<4x8xf32>, %b: tensor<8x16xbf16>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'train.matmul' op operands and result must have one element type}}
  %r = train.matmul %a, %b : tensor<4x8xf32>, tensor<8x16xbf16> -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

func.func @matmul_result_element_type(%a: tensor<4x8xbf16>, %b: tensor<8x16xbf16>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'train.matmul' op operands and result must have one element type}}
  %r = train.matmul %a, %b : tensor<4x8xbf16>, tensor<8x16xbf16> -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

func.func @matmul_int(%a: tensor<4x8xi32>, %b: tensor<8x16xi32>) -> tensor<4x16xi32> {
  // expected-error @+1 {{'train.matmul' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<4x8xi32>'}}
  %r = train.matmul %a, %b : tensor<4x8xi32>, tensor<8x16xi32> -> tensor<4x16xi32>
  return %r : tensor<4x16xi32>
}

// -----

func.func @matmul_shared_b_transpose_a(%a: tensor<2x8x4xf32>, %b: tensor<8x16xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{'train.matmul' op transpose_a is not supported with a rank-2 b shared across the batch}}
  %r = train.matmul %a, %b {transpose_a} : tensor<2x8x4xf32>, tensor<8x16xf32> -> tensor<2x4x16xf32>
  return %r : tensor<2x4x16xf32>
}

// -----

func.func @matmul_b_rank(%a: tensor<2x3x4x8xf32>, %b: tensor<3x8x16xf32>) -> tensor<2x3x4x16xf32> {
  // expected-error @+1 {{'train.matmul' op b must have rank 2 or the rank of a (4), got 3}}
  %r = train.matmul %a, %b : tensor<2x3x4x8xf32>, tensor<3x8x16xf32> -> tensor<2x3x4x16xf32>
  return %r : tensor<2x3x4x16xf32>
}

// -----

// A batched b needs a batched a (no broadcasting of a).
func.func @matmul_b_rank_above_a(%a: tensor<4x8xf32>, %b: tensor<2x8x16xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{'train.matmul' op b must have rank 2 or the rank of a (2), got 3}}
  %r = train.matmul %a, %b : tensor<4x8xf32>, tensor<2x8x16xf32> -> tensor<2x4x16xf32>
  return %r : tensor<2x4x16xf32>
}

// -----

func.func @matmul_batch_dims(%a: tensor<2x3x4x8xf32>, %b: tensor<3x2x8x16xf32>) -> tensor<2x3x4x16xf32> {
  // expected-error @+1 {{'train.matmul' op batch dimensions of a and b differ}}
  %r = train.matmul %a, %b : tensor<2x3x4x8xf32>, tensor<3x2x8x16xf32> -> tensor<2x3x4x16xf32>
  return %r : tensor<2x3x4x16xf32>
}

// -----

func.func @matmul_batch_no_broadcast(%a: tensor<2x4x8xf32>, %b: tensor<1x8x16xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{'train.matmul' op batch dimensions of a and b differ}}
  %r = train.matmul %a, %b : tensor<2x4x8xf32>, tensor<1x8x16xf32> -> tensor<2x4x16xf32>
  return %r : tensor<2x4x16xf32>
}

// -----

func.func @matmul_k(%a: tensor<4x8xf32>, %b: tensor<9x16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'train.matmul' op contraction sizes differ: a gives K = 8, b gives K = 9}}
  %r = train.matmul %a, %b : tensor<4x8xf32>, tensor<9x16xf32> -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

// transpose_b is missing: b is [out, in] = [16, 8].
func.func @matmul_k_missing_transpose(%a: tensor<2x4x8xf32>, %b: tensor<16x8xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{'train.matmul' op contraction sizes differ: a gives K = 8, b gives K = 16}}
  %r = train.matmul %a, %b : tensor<2x4x8xf32>, tensor<16x8xf32> -> tensor<2x4x16xf32>
  return %r : tensor<2x4x16xf32>
}

// -----

func.func @matmul_k_transpose_a(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{'train.matmul' op contraction sizes differ: a gives K = 4, b gives K = 8}}
  %r = train.matmul %a, %b {transpose_a} : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// -----

func.func @matmul_result(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<16x4xf32> {
  // expected-error @+1 {{'train.matmul' op result must be 'tensor<4x16xf32>', got 'tensor<16x4xf32>'}}
  %r = train.matmul %a, %b : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<16x4xf32>
  return %r : tensor<16x4xf32>
}

// -----

func.func @matmul_result_batched(%a: tensor<2x3x4x8xf16>, %b: tensor<2x3x16x8xf16>) -> tensor<2x3x4x8xf16> {
  // expected-error @+1 {{'train.matmul' op result must be 'tensor<2x3x4x16xf16>', got 'tensor<2x3x4x8xf16>'}}
  %r = train.matmul %a, %b {transpose_b} : tensor<2x3x4x8xf16>, tensor<2x3x16x8xf16> -> tensor<2x3x4x8xf16>
  return %r : tensor<2x3x4x8xf16>
}

// -----

func.func @matmul_result_shared_b(%a: tensor<2x4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'train.matmul' op result must be 'tensor<2x4x16xf32>', got 'tensor<4x16xf32>'}}
  %r = train.matmul %a, %b : tensor<2x4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

func.func @matmul_bias_size(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %bias: tensor<4xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'train.matmul' op bias must be 'tensor<16xf32>', got 'tensor<4xf32>'}}
  %r = train.matmul %a, %b bias %bias : tensor<4x8xf32>, tensor<8x16xf32>, tensor<4xf32> -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

func.func @matmul_bias_rank(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %bias: tensor<4x16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'train.matmul' op bias must be 'tensor<16xf32>', got 'tensor<4x16xf32>'}}
  %r = train.matmul %a, %b bias %bias : tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

func.func @matmul_bias_scalar(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %bias: tensor<f32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'train.matmul' op bias must be 'tensor<16xf32>', got 'tensor<f32>'}}
  %r = train.matmul %a, %b bias %bias : tensor<4x8xf32>, tensor<8x16xf32>, tensor<f32> -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

func.func @matmul_bias_element_type(%a: tensor<4x8xbf16>, %b: tensor<8x16xbf16>, %bias: tensor<16xf32>) -> tensor<4x16xbf16> {
  // expected-error @+1 {{'train.matmul' op bias must be 'tensor<16xbf16>', got 'tensor<16xf32>'}}
  %r = train.matmul %a, %b bias %bias : tensor<4x8xbf16>, tensor<8x16xbf16>, tensor<16xf32> -> tensor<4x16xbf16>
  return %r : tensor<4x16xbf16>
}

// -----

func.func @matmul_bias_int(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %bias: tensor<16xi32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'train.matmul' op operand #2 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<16xi32>'}}
  %r = train.matmul %a, %b bias %bias : tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xi32> -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

//===----------------------------------------------------------------------===//
// train.embedding
//===----------------------------------------------------------------------===//

func.func @embedding_table_rank(%t: tensor<4x256x64xf32>, %ids: tensor<8xi32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'train.embedding' op table must be [V, C], got 'tensor<4x256x64xf32>'}}
  %r = train.embedding %t, %ids : tensor<4x256x64xf32>, tensor<8xi32> -> tensor<8x64xf32>
  return %r : tensor<8x64xf32>
}

// -----

func.func @embedding_result_shape(%t: tensor<256x64xf32>, %ids: tensor<4x32xi32>) -> tensor<128x64xf32> {
  // expected-error @+1 {{'train.embedding' op result must be 'tensor<4x32x64xf32>' (ids shape x [C]), got 'tensor<128x64xf32>'}}
  %r = train.embedding %t, %ids : tensor<256x64xf32>, tensor<4x32xi32> -> tensor<128x64xf32>
  return %r : tensor<128x64xf32>
}

// -----

func.func @embedding_result_width(%t: tensor<256x64xf32>, %ids: tensor<8xi32>) -> tensor<8x256xf32> {
  // expected-error @+1 {{'train.embedding' op result must be 'tensor<8x64xf32>' (ids shape x [C]), got 'tensor<8x256xf32>'}}
  %r = train.embedding %t, %ids : tensor<256x64xf32>, tensor<8xi32> -> tensor<8x256xf32>
  return %r : tensor<8x256xf32>
}

// -----

func.func @embedding_result_element_type(%t: tensor<256x64xbf16>, %ids: tensor<8xi32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'train.embedding' op result must be 'tensor<8x64xbf16>' (ids shape x [C]), got 'tensor<8x64xf32>'}}
  %r = train.embedding %t, %ids : tensor<256x64xbf16>, tensor<8xi32> -> tensor<8x64xf32>
  return %r : tensor<8x64xf32>
}

// -----

func.func @embedding_float_ids(%t: tensor<256x64xf32>, %ids: tensor<8xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'train.embedding' op operand #1 must be statically shaped tensor of 32-bit signless integer values, but got 'tensor<8xf32>'}}
  %r = train.embedding %t, %ids : tensor<256x64xf32>, tensor<8xf32> -> tensor<8x64xf32>
  return %r : tensor<8x64xf32>
}

// -----

func.func @embedding_i64_ids(%t: tensor<256x64xf32>, %ids: tensor<8xi64>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'train.embedding' op operand #1 must be statically shaped tensor of 32-bit signless integer values, but got 'tensor<8xi64>'}}
  %r = train.embedding %t, %ids : tensor<256x64xf32>, tensor<8xi64> -> tensor<8x64xf32>
  return %r : tensor<8x64xf32>
}

// -----

func.func @embedding_int_table(%t: tensor<256x64xi32>, %ids: tensor<8xi32>) -> tensor<8x64xi32> {
  // expected-error @+1 {{'train.embedding' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<256x64xi32>'}}
  %r = train.embedding %t, %ids : tensor<256x64xi32>, tensor<8xi32> -> tensor<8x64xi32>
  return %r : tensor<8x64xi32>
}

// -----

//===----------------------------------------------------------------------===//
// train.embedding_grad
//===----------------------------------------------------------------------===//

func.func @embedding_grad_result_rank(%ids: tensor<8xi32>, %g: tensor<8x64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'train.embedding_grad' op expects grad = ids shape x [C] and result [V, C], got 'tensor<8x64xf32>' and 'tensor<64xf32>'}}
  %r = train.embedding_grad %ids, %g : tensor<8xi32>, tensor<8x64xf32> -> tensor<64xf32>
  return %r : tensor<64xf32>
}

// -----

func.func @embedding_grad_grad_rank(%ids: tensor<4x8xi32>, %g: tensor<32x64xf32>) -> tensor<256x64xf32> {
  // expected-error @+1 {{'train.embedding_grad' op expects grad = ids shape x [C] and result [V, C], got 'tensor<32x64xf32>' and 'tensor<256x64xf32>'}}
  %r = train.embedding_grad %ids, %g : tensor<4x8xi32>, tensor<32x64xf32> -> tensor<256x64xf32>
  return %r : tensor<256x64xf32>
}

// -----

func.func @embedding_grad_grad_shape(%ids: tensor<4x8xi32>, %g: tensor<8x4x64xf32>) -> tensor<256x64xf32> {
  // expected-error @+1 {{'train.embedding_grad' op expects grad = ids shape x [C] and result [V, C], got 'tensor<8x4x64xf32>' and 'tensor<256x64xf32>'}}
  %r = train.embedding_grad %ids, %g : tensor<4x8xi32>, tensor<8x4x64xf32> -> tensor<256x64xf32>
  return %r : tensor<256x64xf32>
}

// -----

func.func @embedding_grad_width(%ids: tensor<8xi32>, %g: tensor<8x64xf32>) -> tensor<256x32xf32> {
  // expected-error @+1 {{'train.embedding_grad' op expects grad = ids shape x [C] and result [V, C], got 'tensor<8x64xf32>' and 'tensor<256x32xf32>'}}
  %r = train.embedding_grad %ids, %g : tensor<8xi32>, tensor<8x64xf32> -> tensor<256x32xf32>
  return %r : tensor<256x32xf32>
}

// -----

func.func @embedding_grad_element_type(%ids: tensor<8xi32>, %g: tensor<8x64xbf16>) -> tensor<256x64xf32> {
  // expected-error @+1 {{'train.embedding_grad' op expects grad = ids shape x [C] and result [V, C], got 'tensor<8x64xbf16>' and 'tensor<256x64xf32>'}}
  %r = train.embedding_grad %ids, %g : tensor<8xi32>, tensor<8x64xbf16> -> tensor<256x64xf32>
  return %r : tensor<256x64xf32>
}

// -----

func.func @embedding_grad_float_ids(%ids: tensor<8xf32>, %g: tensor<8x64xf32>) -> tensor<256x64xf32> {
  // expected-error @+1 {{'train.embedding_grad' op operand #0 must be statically shaped tensor of 32-bit signless integer values, but got 'tensor<8xf32>'}}
  %r = train.embedding_grad %ids, %g : tensor<8xf32>, tensor<8x64xf32> -> tensor<256x64xf32>
  return %r : tensor<256x64xf32>
}

// -----

//===----------------------------------------------------------------------===//
// train.reduce_sum
//===----------------------------------------------------------------------===//

func.func @reduce_sum_leading(%x: tensor<4x32x256xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'train.reduce_sum' op result 'tensor<4xf32>' must keep trailing dimensions of 'tensor<4x32x256xf32>'}}
  %r = train.reduce_sum %x : tensor<4x32x256xf32> -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @reduce_sum_rank(%x: tensor<256xf32>) -> tensor<4x256xf32> {
  // expected-error @+1 {{'train.reduce_sum' op result 'tensor<4x256xf32>' must keep trailing dimensions of 'tensor<256xf32>'}}
  %r = train.reduce_sum %x : tensor<256xf32> -> tensor<4x256xf32>
  return %r : tensor<4x256xf32>
}

// -----

func.func @reduce_sum_element_type(%x: tensor<4x256xbf16>) -> tensor<256xf32> {
  // expected-error @+1 {{'train.reduce_sum' op result 'tensor<256xf32>' must keep trailing dimensions of 'tensor<4x256xbf16>'}}
  %r = train.reduce_sum %x : tensor<4x256xbf16> -> tensor<256xf32>
  return %r : tensor<256xf32>
}

// -----

//===----------------------------------------------------------------------===//
// train.matmul_gelu, train.matmul_gelu_grad (the checks of train.matmul)
//===----------------------------------------------------------------------===//

func.func @matmul_gelu_k(%x: tensor<4x8xf32>, %w: tensor<16x4xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'train.matmul_gelu' op contraction sizes differ: a gives K = 8, b gives K = 4}}
  %pre, %y = train.matmul_gelu %x, %w {transpose_b} : tensor<4x8xf32>, tensor<16x4xf32> -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

func.func @matmul_gelu_bias(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<8xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'train.matmul_gelu' op bias must be 'tensor<16xf32>', got 'tensor<8xf32>'}}
  %pre, %y = train.matmul_gelu %x, %w bias %b {transpose_b} : tensor<4x8xf32>, tensor<16x8xf32>, tensor<8xf32> -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

func.func @matmul_gelu_type(%x: tensor<4x8xbf16>, %w: tensor<16x8xbf16>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'train.matmul_gelu' op operands and result must have one element type}}
  %pre, %y = "train.matmul_gelu"(%x, %w) {transpose_b, operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<4x8xbf16>, tensor<16x8xbf16>) -> (tensor<4x16xf32>, tensor<4x16xf32>)
  return %y : tensor<4x16xf32>
}

// -----

func.func @matmul_gelu_pre(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'train.matmul_gelu' op failed to verify that all of {pre, result} have same type}}
  %pre, %y = "train.matmul_gelu"(%x, %w) {transpose_b, operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<4x8xf32>, tensor<16x8xf32>) -> (tensor<4x8xf32>, tensor<4x16xf32>)
  return %y : tensor<4x16xf32>
}

// -----

func.func @matmul_gelu_grad_pre(%dy: tensor<4x16xf32>, %w: tensor<16x64xf32>, %pre: tensor<4x32xf32>) -> tensor<4x64xf32> {
  // expected-error @+1 {{'train.matmul_gelu_grad' op failed to verify that all of {pre, result} have same type}}
  %d = "train.matmul_gelu_grad"(%dy, %w, %pre) : (tensor<4x16xf32>, tensor<16x64xf32>, tensor<4x32xf32>) -> tensor<4x64xf32>
  return %d : tensor<4x64xf32>
}

// -----

func.func @matmul_gelu_grad_result(%dy: tensor<4x16xf32>, %w: tensor<16x64xf32>, %pre: tensor<4x32xf32>) -> tensor<4x32xf32> {
  // expected-error @+1 {{'train.matmul_gelu_grad' op result must be 'tensor<4x64xf32>', got 'tensor<4x32xf32>'}}
  %d = "train.matmul_gelu_grad"(%dy, %w, %pre) : (tensor<4x16xf32>, tensor<16x64xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  return %d : tensor<4x32xf32>
}
