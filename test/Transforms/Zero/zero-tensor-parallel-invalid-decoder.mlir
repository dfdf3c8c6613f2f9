// RUN: zero-opt %s -split-input-file --zero-tensor-parallel="size=4" -verify-diagnostics

// Grouped-query attention with 4 query heads and 2 key/value heads: M = 4
// divides the query heads only (no replicated KV heads: one error).
module {
  train.param @q : tensor<8x8xf32> init(<zeros>) trainable
  train.param @k : tensor<4x8xf32> init(<zeros>) trainable
  train.param @v : tensor<4x8xf32> init(<zeros>) trainable
  train.param @o : tensor<8x8xf32> init(<zeros>) trainable
  func.func @forward(%x: tensor<1x3x8xf32>, %t: tensor<1x3x8xf32>) -> tensor<f32> {
    %wq = train.load @q : tensor<8x8xf32>
    %q = train.matmul %x, %wq {transpose_b} : tensor<1x3x8xf32>, tensor<8x8xf32> -> tensor<1x3x8xf32>
    %q4 = train.reshape %q : tensor<1x3x8xf32> -> tensor<1x3x4x2xf32>
    %qt = train.transpose %q4 [0, 2, 1, 3] : tensor<1x3x4x2xf32> -> tensor<1x4x3x2xf32>
    %wk = train.load @k : tensor<4x8xf32>
    %k = train.matmul %x, %wk {transpose_b} : tensor<1x3x8xf32>, tensor<4x8xf32> -> tensor<1x3x4xf32>
    %k4 = train.reshape %k : tensor<1x3x4xf32> -> tensor<1x3x2x2xf32>
    %kt = train.transpose %k4 [0, 2, 1, 3] : tensor<1x3x2x2xf32> -> tensor<1x2x3x2xf32>
    %wv = train.load @v : tensor<4x8xf32>
    %v = train.matmul %x, %wv {transpose_b} : tensor<1x3x8xf32>, tensor<4x8xf32> -> tensor<1x3x4xf32>
    %v4 = train.reshape %v : tensor<1x3x4xf32> -> tensor<1x3x2x2xf32>
    %vt = train.transpose %v4 [0, 2, 1, 3] : tensor<1x3x2x2xf32> -> tensor<1x2x3x2xf32>
    // expected-error@+1 {{'train.causal_attention' op has 4 query heads and 2 key/value heads; the tensor-parallel size 4 must divide both (4 % 4 = 0, 2 % 4 = 2)}}
    %a, %lse = train.causal_attention %qt, %kt, %vt : tensor<1x4x3x2xf32>, tensor<1x2x3x2xf32>
    %at = train.transpose %a [0, 2, 1, 3] : tensor<1x4x3x2xf32> -> tensor<1x3x4x2xf32>
    %am = train.reshape %at : tensor<1x3x4x2xf32> -> tensor<1x3x8xf32>
    %wo = train.load @o : tensor<8x8xf32>
    %y = train.matmul %am, %wo {transpose_b} : tensor<1x3x8xf32>, tensor<8x8xf32> -> tensor<1x3x8xf32>
    %l = train.mse %y, %t : tensor<1x3x8xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// A SwiGLU MLP of FFN width 6.
module {
  train.param @gate : tensor<6x4xf32> init(<zeros>) trainable
  train.param @up : tensor<6x4xf32> init(<zeros>) trainable
  train.param @down : tensor<4x6xf32> init(<zeros>) trainable
  func.func @forward(%x: tensor<1x2x4xf32>, %t: tensor<1x2x4xf32>) -> tensor<f32> {
    %wg = train.load @gate : tensor<6x4xf32>
    // expected-error@+1 {{'train.matmul' op has an FFN width of 6, which the tensor-parallel size 4 does not divide (6 % 4 = 2)}}
    %g = train.matmul %x, %wg {transpose_b} : tensor<1x2x4xf32>, tensor<6x4xf32> -> tensor<1x2x6xf32>
    %wu = train.load @up : tensor<6x4xf32>
    %u = train.matmul %x, %wu {transpose_b} : tensor<1x2x4xf32>, tensor<6x4xf32> -> tensor<1x2x6xf32>
    %h = train.swiglu %g, %u : tensor<1x2x6xf32>
    %wd = train.load @down : tensor<4x6xf32>
    %y = train.matmul %h, %wd {transpose_b} : tensor<1x2x6xf32>, tensor<4x6xf32> -> tensor<1x2x4xf32>
    %l = train.mse %y, %t : tensor<1x2x4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Projections whose heads reach the attention on its last dimension (the
// transpose moves the head dimension to 3): the cut would split the head
// size, not the heads.
module {
  train.param @q : tensor<8x8xf32> init(<zeros>) trainable
  train.param @k : tensor<8x8xf32> init(<zeros>) trainable
  train.param @v : tensor<8x8xf32> init(<zeros>) trainable
  train.param @o : tensor<8x8xf32> init(<zeros>) trainable
  func.func @forward(%x: tensor<1x3x8xf32>, %t: tensor<1x3x8xf32>) -> tensor<f32> {
    %wq = train.load @q : tensor<8x8xf32>
    %q = train.matmul %x, %wq {transpose_b} : tensor<1x3x8xf32>, tensor<8x8xf32> -> tensor<1x3x8xf32>
    %q4 = train.reshape %q : tensor<1x3x8xf32> -> tensor<1x3x2x4xf32>
    %qt = train.transpose %q4 [0, 3, 1, 2] : tensor<1x3x2x4xf32> -> tensor<1x4x3x2xf32>
    %wk = train.load @k : tensor<8x8xf32>
    %k = train.matmul %x, %wk {transpose_b} : tensor<1x3x8xf32>, tensor<8x8xf32> -> tensor<1x3x8xf32>
    %k4 = train.reshape %k : tensor<1x3x8xf32> -> tensor<1x3x2x4xf32>
    %kt = train.transpose %k4 [0, 3, 1, 2] : tensor<1x3x2x4xf32> -> tensor<1x4x3x2xf32>
    %wv = train.load @v : tensor<8x8xf32>
    %v = train.matmul %x, %wv {transpose_b} : tensor<1x3x8xf32>, tensor<8x8xf32> -> tensor<1x3x8xf32>
    %v4 = train.reshape %v : tensor<1x3x8xf32> -> tensor<1x3x2x4xf32>
    %vt = train.transpose %v4 [0, 3, 1, 2] : tensor<1x3x2x4xf32> -> tensor<1x4x3x2xf32>
    // expected-error@+1 {{'train.causal_attention' op does not get its heads on dimension 1 from its projections}}
    %a, %lse = train.causal_attention %qt, %kt, %vt : tensor<1x4x3x2xf32>, tensor<1x4x3x2xf32>
    %at = train.transpose %a [0, 2, 1, 3] : tensor<1x4x3x2xf32> -> tensor<1x3x4x2xf32>
    %am = train.reshape %at : tensor<1x3x4x2xf32> -> tensor<1x3x8xf32>
    %wo = train.load @o : tensor<8x8xf32>
    %y = train.matmul %am, %wo {transpose_b} : tensor<1x3x8xf32>, tensor<8x8xf32> -> tensor<1x3x8xf32>
    %l = train.mse %y, %t : tensor<1x3x8xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
