// RUN: zero-opt %s --train-autodiff -split-input-file | FileCheck %s

// An MLP: the backward op sequence, reverse order; a frozen bias gets no
// gradient and no reduce_sum; the input x gets no gradient either.
train.param @w1 : tensor<8x4xf32> init(<normal, 2.000000e-02>) trainable
train.param @b1 : tensor<8xf32> init(<zeros>) trainable
train.param @w2 : tensor<2x8xf32> init(<normal, 2.000000e-02>) trainable
train.param @frozen : tensor<2xf32> init(<zeros>)
// CHECK: train.param @w1
// CHECK-NEXT: train.state @w1.grad : tensor<8x4xf32> kind(<grad>) of(@w1)
// CHECK: train.param @frozen
// CHECK-NOT: @frozen.grad
// CHECK-LABEL: func.func @forward(
// CHECK-NOT: train.accumulate
// CHECK-LABEL: func.func @forward_backward(
// CHECK-SAME: %[[X:.*]]: tensor<16x4xf32>, %[[Y:.*]]: tensor<16x2xf32>) -> tensor<f32>
// CHECK: %[[W1:.*]] = train.load @w1
// CHECK: %[[H:.*]] = train.matmul %[[X]], %[[W1]]
// CHECK: %[[A:.*]] = train.relu %[[H]]
// CHECK: %[[W2:.*]] = train.load @w2
// CHECK: %[[O:.*]] = train.matmul %[[A]], %[[W2]]
// CHECK: %[[L:.*]] = train.mse %[[O]], %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = train.fill 1.000000e+00 {train.loss_seed} : tensor<f32>
// CHECK-NEXT: %[[DO:.*]] = train.mse_grad %[[O]], %[[Y]], %[[ONE]]
// CHECK-NEXT: %[[DA:.*]] = train.matmul %[[DO]], %[[W2]] : tensor<16x2xf32>, tensor<2x8xf32> -> tensor<16x8xf32>
// CHECK-NEXT: %[[DW2:.*]] = train.matmul %[[DO]], %[[A]] {transpose_a} : tensor<16x2xf32>, tensor<16x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT: train.accumulate %[[DW2]], @w2.grad
// CHECK-NEXT: %[[DH:.*]] = train.relu_grad %[[H]], %[[DA]]
// CHECK-NEXT: %[[DW1:.*]] = train.matmul %[[DH]], %[[X]] {transpose_a} : tensor<16x8xf32>, tensor<16x4xf32> -> tensor<8x4xf32>
// CHECK-NEXT: %[[DB1:.*]] = train.reduce_sum %[[DH]] : tensor<16x8xf32> -> tensor<8xf32>
// CHECK-NEXT: train.accumulate %[[DB1]], @b1.grad
// CHECK-NEXT: train.accumulate %[[DW1]], @w1.grad
// CHECK-NEXT: return %[[L]] : tensor<f32>
func.func @forward(%x: tensor<16x4xf32>, %y: tensor<16x2xf32>) -> tensor<f32> {
  %w1 = train.load @w1 : tensor<8x4xf32>
  %b1 = train.load @b1 : tensor<8xf32>
  %h = train.matmul %x, %w1 bias %b1 {transpose_b} : tensor<16x4xf32>, tensor<8x4xf32>, tensor<8xf32> -> tensor<16x8xf32>
  %a = train.relu %h : tensor<16x8xf32>
  %w2 = train.load @w2 : tensor<2x8xf32>
  %fz = train.load @frozen : tensor<2xf32>
  %o = train.matmul %a, %w2 bias %fz {transpose_b} : tensor<16x8xf32>, tensor<2x8xf32>, tensor<2xf32> -> tensor<16x2xf32>
  %l = train.mse %o, %y : tensor<16x2xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A value used twice (a residual connection) gets the sum of its gradients.
train.param @w : tensor<4x4xf32> init(<normal, 2.000000e-02>) trainable
// CHECK-LABEL: func.func @forward_backward(
// CHECK: %[[X:.*]] = train.matmul
// CHECK: %[[G:.*]] = train.gelu %[[X]]
// CHECK: %[[R:.*]] = train.add %[[X]], %[[G]]
// CHECK: %[[DR:.*]] = train.mse_grad %[[R]]
// CHECK-NEXT: %[[DX1:.*]] = train.gelu_grad %[[X]], %[[DR]]
// CHECK-NEXT: %[[SUM:.*]] = train.add %[[DR]], %[[DX1]] : tensor<2x4xf32>
// CHECK-NEXT: %[[DW:.*]] = train.matmul %[[SUM]], %{{.*}} {transpose_a}
// CHECK-NEXT: train.accumulate %[[DW]], @w.grad
func.func @forward(%in: tensor<2x4xf32>, %t: tensor<2x4xf32>) -> tensor<f32> {
  %w = train.load @w : tensor<4x4xf32>
  %x = train.matmul %in, %w {transpose_b} : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %g = train.gelu %x : tensor<2x4xf32>
  %r = train.add %x, %g : tensor<2x4xf32>
  %l = train.mse %r, %t : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A tied embedding: the table is the input embedding and the output head;
// it gets one gradient, the sum of the scatter-add and the head's matmul.
train.param @wte : tensor<16x8xf32> init(<normal, 2.000000e-02>) trainable
// CHECK-LABEL: func.func @forward_backward(
// CHECK: %[[DLOGITS:.*]] = train.cross_entropy_grad
// CHECK: %[[DHEAD:.*]] = train.matmul %{{.*}}, %{{.*}} {transpose_a} : tensor<6x16xf32>, tensor<6x8xf32> -> tensor<16x8xf32>
// CHECK: %[[DEMB:.*]] = train.embedding_grad %{{.*}}, %{{.*}} : tensor<2x3xi32>, tensor<2x3x8xf32> -> tensor<16x8xf32>
// CHECK-NEXT: %[[DWTE:.*]] = train.add %[[DHEAD]], %[[DEMB]] : tensor<16x8xf32>
// CHECK-NEXT: train.accumulate %[[DWTE]], @wte.grad
// CHECK-NOT: train.accumulate
// CHECK: return
func.func @forward(%ids: tensor<2x3xi32>, %targets: tensor<2x3xi32>) -> tensor<f32> {
  %wte = train.load @wte : tensor<16x8xf32>
  %x = train.embedding %wte, %ids : tensor<16x8xf32>, tensor<2x3xi32> -> tensor<2x3x8xf32>
  %logits = train.matmul %x, %wte {transpose_b} : tensor<2x3x8xf32>, tensor<16x8xf32> -> tensor<2x3x16xf32>
  %l2 = train.reshape %logits : tensor<2x3x16xf32> -> tensor<6x16xf32>
  %t2 = train.reshape %targets : tensor<2x3xi32> -> tensor<6xi32>
  %loss = train.cross_entropy %l2, %t2 : tensor<6x16xf32>, tensor<6xi32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Arguments marked train.requires_grad get their gradient returned.
// CHECK-LABEL: func.func @forward_backward(
// CHECK-SAME: -> (tensor<f32>, tensor<3xf32>)
// CHECK: %[[DA:.*]] = train.mse_grad
// CHECK: return %{{.*}}, %[[DA]] : tensor<f32>, tensor<3xf32>
func.func @forward(%a: tensor<3xf32> {train.requires_grad}, %b: tensor<3xf32>) -> tensor<f32> {
  %l = train.mse %a, %b : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Attention: the gradient reads the forward's output and log-sum-exp (no
// recomputed forward); the log-sum-exp carries no gradient, so no zeros are
// materialized for it.
train.param @w : tensor<1x2x4x8xf32> init(<normal, 2.000000e-02>) trainable
// CHECK-LABEL: func.func @forward_backward(
// CHECK: %[[W:.*]] = train.load @w
// CHECK: %[[O:.*]], %[[LSE:.*]] = train.causal_attention %[[W]], %[[W]], %[[W]] : tensor<1x2x4x8xf32>
// CHECK: %[[DO:.*]] = train.mse_grad %[[O]]
// CHECK-NOT: train.fill
// CHECK-NEXT: %[[DQ:.*]], %[[DK:.*]], %[[DV:.*]] = train.attention_grad %[[W]], %[[W]], %[[W]], %[[O]], %[[LSE]], %[[DO]] : tensor<1x2x4x8xf32>
// CHECK-NEXT: %[[S1:.*]] = train.add %[[DQ]], %[[DK]]
// CHECK-NEXT: %[[S2:.*]] = train.add %[[S1]], %[[DV]]
// CHECK-NEXT: train.accumulate %[[S2]], @w.grad
func.func @forward(%in: tensor<1x2x4x8xf32>, %t: tensor<1x2x4x8xf32>) -> tensor<f32> {
  %w = train.load @w : tensor<1x2x4x8xf32>
  %o, %lse = train.causal_attention %w, %w, %w : tensor<1x2x4x8xf32>
  %l = train.mse %o, %t : tensor<1x2x4x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Packed attention: one gradient op from the forward's qkv, output and
// log-sum-exp straight into the projection's gradient (no concat).
train.param @w : tensor<8x24xf32> init(<normal, 2.000000e-02>) trainable
// CHECK-LABEL: func.func @forward_backward(
// CHECK: %[[QKV:.*]] = train.matmul
// CHECK: %[[Y:.*]], %[[LSE:.*]] = train.causal_attention_packed %[[QKV]] heads(2) : tensor<2x4x24xf32> -> tensor<2x4x8xf32>, tensor<2x2x4xf32>
// CHECK: %[[DY:.*]] = train.mse_grad %[[Y]]
// CHECK-NOT: train.fill
// CHECK-NEXT: %[[DQKV:.*]] = train.attention_packed_grad %[[QKV]], %[[Y]], %[[LSE]], %[[DY]] heads(2) : tensor<2x4x24xf32>, tensor<2x4x8xf32>, tensor<2x2x4xf32>
// CHECK-NOT: train.concat
// CHECK: train.matmul %{{.*}}, %{{.*}} {transpose_a}
// CHECK: train.accumulate
func.func @forward(%x: tensor<2x4x8xf32>, %t: tensor<2x4x8xf32>) -> tensor<f32> {
  %w = train.load @w : tensor<8x24xf32>
  %qkv = train.matmul %x, %w : tensor<2x4x8xf32>, tensor<8x24xf32> -> tensor<2x4x24xf32>
  %y, %lse = train.causal_attention_packed %qkv heads(2) : tensor<2x4x24xf32> -> tensor<2x4x8xf32>, tensor<2x2x4xf32>
  %l = train.mse %y, %t : tensor<2x4x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A Llama-style attention sub-block: add_rms_norm (both results used),
// q/k RoPE with the operand-free table (no gradient for it), grouped-query
// attention (dK/dV of the K/V type), cross-entropy with ignore_index.
train.param @w : tensor<8xf32> init(<ones>) trainable
train.param @wq : tensor<8x8xf32> init(<normal, 2.000000e-02>) trainable
train.param @wk : tensor<4x8xf32> init(<normal, 2.000000e-02>) trainable
// CHECK-LABEL: func.func @forward_backward(
// CHECK: %[[T:.*]] = train.rope_table theta(1.000000e+04) : tensor<4x2x2xf32>
// CHECK: %[[S:.*]], %[[N:.*]] = train.add_rms_norm
// CHECK: %[[QR:.*]] = train.rope %{{.*}}, %[[T]] layout(<rotate_half>) : tensor<1x4x2x4xf32>
// CHECK: %[[KR:.*]] = train.rope %{{.*}}, %[[T]] layout(<rotate_half>) : tensor<1x4x1x4xf32>
// CHECK: train.causal_attention %{{.*}} : tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>
// CHECK: train.cross_entropy {{.*}} {ignore_index = -100 : i64}
// CHECK: train.loss_seed
// CHECK: train.cross_entropy_grad {{.*}} {ignore_index = -100 : i64}
// CHECK: %{{.*}}, %[[DK:.*]], %[[DV:.*]] = train.attention_grad {{.*}} : tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>
// CHECK: train.rope %{{.*}}, %[[T]] layout(<rotate_half>) {inverse} : tensor<1x4x1x4xf32>
// CHECK: train.rope %{{.*}}, %[[T]] layout(<rotate_half>) {inverse} : tensor<1x4x2x4xf32>
// The norm's gradient carries the residual stream's own gradient as addend.
// CHECK: %[[DS:.*]], %[[DW:.*]] = train.rms_norm_grad %[[S]], %{{.*}}, %{{.*}} plus %{{.*}} eps(1.000000e-05)
// CHECK: train.accumulate %[[DW]], @w.grad
// CHECK-NOT: rope_table
// CHECK: return
func.func @forward(%x: tensor<1x4x8xf32>, %h: tensor<1x4x8xf32>, %labels: tensor<4xi32>) -> tensor<f32> {
  %w = train.load @w : tensor<8xf32>
  %t = train.rope_table theta(1.0e+04) : tensor<4x2x2xf32>
  %s, %n = train.add_rms_norm %x, %h, %w eps(1.0e-05) : tensor<1x4x8xf32>, tensor<8xf32>
  %wq = train.load @wq : tensor<8x8xf32>
  %wk = train.load @wk : tensor<4x8xf32>
  %q = train.matmul %n, %wq {transpose_b} : tensor<1x4x8xf32>, tensor<8x8xf32> -> tensor<1x4x8xf32>
  %k = train.matmul %n, %wk {transpose_b} : tensor<1x4x8xf32>, tensor<4x8xf32> -> tensor<1x4x4xf32>
  %q4 = train.reshape %q : tensor<1x4x8xf32> -> tensor<1x4x2x4xf32>
  %k4 = train.reshape %k : tensor<1x4x4xf32> -> tensor<1x4x1x4xf32>
  %qr = train.rope %q4, %t layout(<rotate_half>) : tensor<1x4x2x4xf32>, tensor<4x2x2xf32>
  %kr = train.rope %k4, %t layout(<rotate_half>) : tensor<1x4x1x4xf32>, tensor<4x2x2xf32>
  %qh = train.transpose %qr [0, 2, 1, 3] : tensor<1x4x2x4xf32> -> tensor<1x2x4x4xf32>
  %kh = train.transpose %kr [0, 2, 1, 3] : tensor<1x4x1x4xf32> -> tensor<1x1x4x4xf32>
  %o, %lse = train.causal_attention %qh, %kh, %kh : tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>
  %ot = train.transpose %o [0, 2, 1, 3] : tensor<1x2x4x4xf32> -> tensor<1x4x2x4xf32>
  %of = train.reshape %ot : tensor<1x4x2x4xf32> -> tensor<1x4x8xf32>
  %r = train.add %s, %of : tensor<1x4x8xf32>
  %logits = train.reshape %r : tensor<1x4x8xf32> -> tensor<4x8xf32>
  %l = train.cross_entropy %logits, %labels {ignore_index = -100 : i64} : tensor<4x8xf32>, tensor<4xi32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// The SwiGLU MLP: one swiglu_grad gives both operand gradients; silu's
// gradient is silu_grad.
train.param @g : tensor<6x4xf32> init(<normal, 2.000000e-02>) trainable
train.param @u : tensor<6x4xf32> init(<normal, 2.000000e-02>) trainable
// CHECK-LABEL: func.func @forward_backward(
// CHECK: %[[G:.*]] = train.matmul
// CHECK: %[[U:.*]] = train.matmul
// CHECK: %[[A:.*]] = train.swiglu %[[G]], %[[U]] : tensor<2x6xf32>
// CHECK: %[[B:.*]] = train.silu %[[A]] : tensor<2x6xf32>
// CHECK: train.loss_seed
// CHECK: %[[DA:.*]] = train.silu_grad %[[A]], %{{.*}} : tensor<2x6xf32>
// CHECK: %[[DG:.*]], %[[DU:.*]] = train.swiglu_grad %[[G]], %[[U]], %[[DA]] : tensor<2x6xf32>
func.func @forward(%x: tensor<2x4xf32>, %y: tensor<2x6xf32>) -> tensor<f32> {
  %wg = train.load @g : tensor<6x4xf32>
  %wu = train.load @u : tensor<6x4xf32>
  %g = train.matmul %x, %wg {transpose_b} : tensor<2x4xf32>, tensor<6x4xf32> -> tensor<2x6xf32>
  %u = train.matmul %x, %wu {transpose_b} : tensor<2x4xf32>, tensor<6x4xf32> -> tensor<2x6xf32>
  %a = train.swiglu %g, %u : tensor<2x6xf32>
  %b = train.silu %a : tensor<2x6xf32>
  %l = train.mse %b, %y : tensor<2x6xf32> -> tensor<f32>
  return %l : tensor<f32>
}
