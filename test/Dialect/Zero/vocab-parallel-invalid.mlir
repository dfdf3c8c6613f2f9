// RUN: zero-opt %s -split-input-file -verify-diagnostics

func.func @embedding_result(%table: tensor<8x4xf32>, %ids: tensor<2x3xi32>) {
  // expected-error@+1 {{'zero.vocab_embedding' op result must be 'tensor<2x3x4xf32>' (ids shape x [C]), got 'tensor<2x3x5xf32>'}}
  %e = zero.vocab_embedding %table, %ids size(2) : tensor<8x4xf32>, tensor<2x3xi32> -> tensor<2x3x5xf32>
  return
}

// -----

func.func @embedding_grad(%ids: tensor<2x3xi32>, %g: tensor<2x4xf32>) {
  // expected-error@+1 {{'zero.vocab_embedding_grad' op grad must be 'tensor<2x3x4xf32>' (ids shape x [C]), got 'tensor<2x4xf32>'}}
  %dt = zero.vocab_embedding_grad %ids, %g size(2) : tensor<2x3xi32>, tensor<2x4xf32> -> tensor<8x4xf32>
  return
}

// -----

func.func @classes(%logits: tensor<6x8xf32>) {
  // expected-error@+1 {{'zero.vocab_max' op num_classes 17 exceeds the whole vocabulary 8 x 2 = 16}}
  %m = zero.vocab_max %logits size(2) {num_classes = 17 : i64} : tensor<6x8xf32> -> tensor<6xf32>
  return
}

// -----

func.func @targets(%logits: tensor<6x8xf32>, %t: tensor<5xi32>, %m: tensor<6xf32>) {
  // expected-error@+1 {{'zero.vocab_exp_sums' op targets must be [6] (one per logits row), got 'tensor<5xi32>'}}
  %s = zero.vocab_exp_sums %logits, %t, %m size(2) {num_classes = 10 : i64} : tensor<6x8xf32>, tensor<5xi32>, tensor<6xf32> -> tensor<6x2xf32>
  return
}

// -----

func.func @sums(%s: tensor<6x3xf32>, %m: tensor<6xf32>, %t: tensor<6xi32>) {
  // expected-error@+1 {{'zero.vocab_loss' op sums must be 'tensor<6x2xf32>', got 'tensor<6x3xf32>'}}
  %l = zero.vocab_loss %s, %m, %t {num_classes = 10 : i64} : tensor<6x3xf32>, tensor<6xf32>, tensor<6xi32> -> tensor<f32>
  return
}

// -----

func.func @max(%flat: tensor<48xf32>, %t: tensor<6xi32>, %m: tensor<6xf32>, %g: tensor<6x2xf32>) {
  // expected-error@+1 {{'zero.vocab_exp_sums_grad' op logits must be [N, Vl], got 'tensor<48xf32>'}}
  %r = zero.vocab_exp_sums_grad %flat, %t, %m, %g size(2) {num_classes = 10 : i64} : tensor<48xf32>, tensor<6xi32>, tensor<6xf32>, tensor<6x2xf32>
  return
}
