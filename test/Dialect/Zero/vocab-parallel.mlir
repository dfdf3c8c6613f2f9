// RUN: zero-opt %s | FileCheck %s
// RUN: zero-opt %s | zero-opt | FileCheck %s

// The vocabulary-parallel embedding and cross-entropy ops round-trip.

// CHECK-LABEL: func.func @vocab
// CHECK: %[[E:.*]] = zero.vocab_embedding %arg0, %arg1 size(2) : tensor<8x4xf32>, tensor<2x3xi32> -> tensor<2x3x4xf32>
// CHECK: zero.vocab_embedding_grad %arg1, %[[E]] size(2) : tensor<2x3xi32>, tensor<2x3x4xf32> -> tensor<8x4xf32>
// CHECK: %[[M:.*]] = zero.vocab_max %arg2 size(2) {num_classes = 10 : i64} : tensor<6x8xbf16> -> tensor<6xf32>
// CHECK: %[[S:.*]] = zero.vocab_exp_sums %arg2, %arg3, %[[M]] size(2) {num_classes = 10 : i64} : tensor<6x8xbf16>, tensor<6xi32>, tensor<6xf32> -> tensor<6x2xf32>
// CHECK: %[[L:.*]] = zero.vocab_loss %[[S]], %[[M]], %arg3 {ignore_index = -100 : i64, num_classes = 10 : i64} : tensor<6x2xf32>, tensor<6xf32>, tensor<6xi32> -> tensor<f32>
// CHECK: %[[DS:.*]] = zero.vocab_loss_grad %[[S]], %arg3, %[[L]] {ignore_index = -100 : i64} : tensor<6x2xf32>, tensor<6xi32>
// CHECK: zero.vocab_exp_sums_grad %arg2, %arg3, %[[M]], %[[DS]] size(2) {num_classes = 10 : i64} : tensor<6x8xbf16>, tensor<6xi32>, tensor<6xf32>, tensor<6x2xf32>
func.func @vocab(%table: tensor<8x4xf32>, %ids: tensor<2x3xi32>, %logits: tensor<6x8xbf16>, %t: tensor<6xi32>) -> tensor<6x8xbf16> {
  %e = zero.vocab_embedding %table, %ids size(2) : tensor<8x4xf32>, tensor<2x3xi32> -> tensor<2x3x4xf32>
  %dt = zero.vocab_embedding_grad %ids, %e size(2) : tensor<2x3xi32>, tensor<2x3x4xf32> -> tensor<8x4xf32>
  %m = zero.vocab_max %logits size(2) {num_classes = 10 : i64} : tensor<6x8xbf16> -> tensor<6xf32>
  %s = zero.vocab_exp_sums %logits, %t, %m size(2) {num_classes = 10 : i64} : tensor<6x8xbf16>, tensor<6xi32>, tensor<6xf32> -> tensor<6x2xf32>
  %l = zero.vocab_loss %s, %m, %t {ignore_index = -100 : i64, num_classes = 10 : i64} : tensor<6x2xf32>, tensor<6xf32>, tensor<6xi32> -> tensor<f32>
  %ds = zero.vocab_loss_grad %s, %t, %l {ignore_index = -100 : i64} : tensor<6x2xf32>, tensor<6xi32>
  %dl = zero.vocab_exp_sums_grad %logits, %t, %m, %ds size(2) {num_classes = 10 : i64} : tensor<6x8xbf16>, tensor<6xi32>, tensor<6xf32>, tensor<6x2xf32>
  return %dl : tensor<6x8xbf16>
}
