// RUN: zero-opt %s -split-input-file --zero-vocab-parallel | FileCheck %s

// GPT-2's tied table: one parameter [Vp = 16, C = 4] read by the embedding
// and the LM head, cut once by rows over M = 2. The embedding becomes this
// rank's part and g; the head reads f of its input and makes 8 of the 16
// logit columns; the cross-entropy of them (10 classes, 6 padding columns)
// becomes the parallel one: row maxima, their max over the tensor axis,
// the denominators and target logits, their sum (g), the loss.

// CHECK: train.param @wte : tensor<8x4xf32> {{.*}} {zero.tensor_split = #zero.tensor_split<dim = 0, blocks = 1, parts = 2, full = [16, 4]>}
// CHECK: train.param @ln.weight : tensor<4xf32> init(<ones>) trainable{{$}}
// CHECK-LABEL: func.func @forward
// CHECK: %[[W:.*]] = train.load @wte : tensor<8x4xf32>
// CHECK: %[[E:.*]] = zero.vocab_embedding %[[W]], %arg0 size(2) : tensor<8x4xf32>, tensor<2x3xi32> -> tensor<2x3x4xf32>
// CHECK: %[[X:.*]] = zero.tp_g %[[E]] size(2) : tensor<2x3x4xf32>
// CHECK: %[[H:.*]] = train.rms_norm %[[X]]
// CHECK: %[[HF:.*]] = zero.tp_f %[[H]] size(2) : tensor<2x3x4xf32>
// CHECK: %[[L:.*]] = train.matmul %[[HF]], %[[W]] {transpose_b} : tensor<2x3x4xf32>, tensor<8x4xf32> -> tensor<2x3x8xf32>
// CHECK: %[[R:.*]] = train.reshape %[[L]] : tensor<2x3x8xf32> -> tensor<6x8xf32>
// CHECK: %[[T:.*]] = train.reshape %arg1
// CHECK: %[[M:.*]] = zero.vocab_max %[[R]] size(2) {num_classes = 10 : i64} : tensor<6x8xf32> -> tensor<6xf32>
// CHECK: %[[GM:.*]] = zero.all_reduce %[[M]] kind(<max>) world_size(2) axis(<tensor>) : tensor<6xf32>
// CHECK: %[[S:.*]] = zero.vocab_exp_sums %[[R]], %[[T]], %[[GM]] size(2) {num_classes = 10 : i64} : tensor<6x8xf32>, tensor<6xi32>, tensor<6xf32> -> tensor<6x2xf32>
// CHECK: %[[GS:.*]] = zero.tp_g %[[S]] size(2) : tensor<6x2xf32>
// CHECK: %[[LOSS:.*]] = zero.vocab_loss %[[GS]], %[[GM]], %[[T]] {num_classes = 10 : i64} : tensor<6x2xf32>, tensor<6xf32>, tensor<6xi32> -> tensor<f32>
// CHECK: return %[[LOSS]] : tensor<f32>
// The logits a function returns are gathered whole: [2 ranks, 2, 3, 8]
// in rank order, the rank dimension moved next to the columns.
// CHECK-LABEL: func.func @logits
// CHECK: %[[LL:.*]] = train.matmul {{.*}} -> tensor<2x3x8xf32>
// CHECK: %[[FLAT:.*]] = train.reshape %[[LL]] : tensor<2x3x8xf32> -> tensor<48xf32>
// CHECK: %[[ALL:.*]] = zero.all_gather %[[FLAT]] world_size(2) axis(<tensor>) : tensor<48xf32> -> tensor<96xf32>
// CHECK: %[[BY:.*]] = train.reshape %[[ALL]] : tensor<96xf32> -> tensor<2x2x3x8xf32>
// CHECK: %[[TR:.*]] = train.transpose %[[BY]] [1, 2, 0, 3] : tensor<2x2x3x8xf32> -> tensor<2x3x2x8xf32>
// CHECK: %[[WHOLE:.*]] = train.reshape %[[TR]] : tensor<2x3x2x8xf32> -> tensor<2x3x16xf32>
// CHECK: return %[[WHOLE]] : tensor<2x3x16xf32>
module attributes {zero.mesh = #zero.mesh<data = 1, tensor = 2>} {
  train.param @wte : tensor<16x4xf32> init(<normal, 2.000000e-02>) trainable
  train.param @ln.weight : tensor<4xf32> init(<ones>) trainable
  func.func @forward(%ids: tensor<2x3xi32>, %t: tensor<2x3xi32>) -> tensor<f32> {
    %w = train.load @wte : tensor<16x4xf32>
    %x = train.embedding %w, %ids : tensor<16x4xf32>, tensor<2x3xi32> -> tensor<2x3x4xf32>
    %g = train.load @ln.weight : tensor<4xf32>
    %h = train.rms_norm %x, %g eps(1.0e-05) : tensor<2x3x4xf32>, tensor<4xf32>
    %l = train.matmul %h, %w {transpose_b} : tensor<2x3x4xf32>, tensor<16x4xf32> -> tensor<2x3x16xf32>
    %r = train.reshape %l : tensor<2x3x16xf32> -> tensor<6x16xf32>
    %tt = train.reshape %t : tensor<2x3xi32> -> tensor<6xi32>
    %loss = train.cross_entropy %r, %tt {num_classes = 10 : i64} : tensor<6x16xf32>, tensor<6xi32> -> tensor<f32>
    return %loss : tensor<f32>
  }
  func.func @logits(%ids: tensor<2x3xi32>) -> tensor<2x3x16xf32> {
    %w = train.load @wte : tensor<16x4xf32>
    %x = train.embedding %w, %ids : tensor<16x4xf32>, tensor<2x3xi32> -> tensor<2x3x4xf32>
    %g = train.load @ln.weight : tensor<4xf32>
    %h = train.rms_norm %x, %g eps(1.0e-05) : tensor<2x3x4xf32>, tensor<4xf32>
    %l = train.matmul %h, %w {transpose_b} : tensor<2x3x4xf32>, tensor<16x4xf32> -> tensor<2x3x16xf32>
    return %l : tensor<2x3x16xf32>
  }
}

// -----

// Llama's separate tables at M = 4: the embedding's and the head's weight
// are both cut; the loss keeps its ignore_index.

// CHECK: train.param @embed.weight : tensor<8x4xf32> {{.*}}full = [32, 4]>}
// CHECK: train.param @lm_head.weight : tensor<8x4xf32> {{.*}}full = [32, 4]>}
// CHECK-LABEL: func.func @forward
// CHECK: zero.vocab_embedding {{.*}} size(4) : tensor<8x4xf32>, tensor<1x2xi32> -> tensor<1x2x4xf32>
// CHECK: zero.tp_f {{.*}} size(4)
// CHECK: train.matmul {{.*}} : tensor<1x2x4xf32>, tensor<8x4xf32> -> tensor<1x2x8xf32>
// CHECK: zero.vocab_loss {{.*}} {ignore_index = -100 : i64, num_classes = 32 : i64} : tensor<2x2xf32>, tensor<2xf32>, tensor<2xi32> -> tensor<f32>
module attributes {zero.mesh = #zero.mesh<data = 1, tensor = 4>} {
  train.param @embed.weight : tensor<32x4xf32> init(<normal, 2.000000e-02>) trainable
  train.param @lm_head.weight : tensor<32x4xf32> init(<normal, 2.000000e-02>) trainable
  func.func @forward(%ids: tensor<1x2xi32>, %t: tensor<1x2xi32>) -> tensor<f32> {
    %e = train.load @embed.weight : tensor<32x4xf32>
    %x = train.embedding %e, %ids : tensor<32x4xf32>, tensor<1x2xi32> -> tensor<1x2x4xf32>
    %w = train.load @lm_head.weight : tensor<32x4xf32>
    %l = train.matmul %x, %w {transpose_b} : tensor<1x2x4xf32>, tensor<32x4xf32> -> tensor<1x2x32xf32>
    %r = train.reshape %l : tensor<1x2x32xf32> -> tensor<2x32xf32>
    %tt = train.reshape %t : tensor<1x2xi32> -> tensor<2xi32>
    %loss = train.cross_entropy %r, %tt {ignore_index = -100 : i64} : tensor<2x32xf32>, tensor<2xi32> -> tensor<f32>
    return %loss : tensor<f32>
  }
}
