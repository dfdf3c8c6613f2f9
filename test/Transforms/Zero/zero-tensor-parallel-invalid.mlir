// RUN: zero-opt %s -split-input-file --zero-tensor-parallel="size=4" -verify-diagnostics

module {
  train.param @h0.qkv.weight : tensor<18x6xf32> init(<zeros>) trainable
  train.param @h0.o.weight : tensor<6x6xf32> init(<zeros>) trainable
  func.func @forward(%x: tensor<1x2x6xf32>, %t: tensor<1x2x6xf32>) -> tensor<f32> {
    %w1 = train.load @h0.qkv.weight : tensor<18x6xf32>
    %qkv = train.matmul %x, %w1 {transpose_b} : tensor<1x2x6xf32>, tensor<18x6xf32> -> tensor<1x2x18xf32>
    // expected-error@+1 {{'train.causal_attention_packed' op has 6 heads, which the tensor-parallel size 4 does not divide (6 % 4 = 2)}}
    %a, %lse = train.causal_attention_packed %qkv heads(6) : tensor<1x2x18xf32> -> tensor<1x2x6xf32>, tensor<1x6x2xf32>
    %w2 = train.load @h0.o.weight : tensor<6x6xf32>
    %y = train.matmul %a, %w2 {transpose_b} : tensor<1x2x6xf32>, tensor<6x6xf32> -> tensor<1x2x6xf32>
    %l = train.mse %y, %t : tensor<1x2x6xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

module {
  train.param @fc : tensor<6x4xf32> init(<zeros>) trainable
  train.param @proj : tensor<4x6xf32> init(<zeros>) trainable
  func.func @forward(%x: tensor<2x4xf32>, %t: tensor<2x4xf32>) -> tensor<f32> {
    %w1 = train.load @fc : tensor<6x4xf32>
    // expected-error@+1 {{'train.matmul' op has an FFN width of 6, which the tensor-parallel size 4 does not divide (6 % 4 = 2)}}
    %h = train.matmul %x, %w1 {transpose_b} : tensor<2x4xf32>, tensor<6x4xf32> -> tensor<2x6xf32>
    %g = train.gelu %h : tensor<2x6xf32>
    %w2 = train.load @proj : tensor<4x6xf32>
    %y = train.matmul %g, %w2 {transpose_b} : tensor<2x6xf32>, tensor<4x6xf32> -> tensor<2x4xf32>
    %l = train.mse %y, %t : tensor<2x4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// A cut weight read elsewhere too (here by a second, lone product).
module {
  train.param @fc : tensor<8x4xf32> init(<zeros>) trainable
  train.param @proj : tensor<4x8xf32> init(<zeros>) trainable
  func.func @forward(%x: tensor<2x4xf32>, %t: tensor<2x4xf32>) -> tensor<f32> {
    // expected-error@+1 {{'train.load' op uses @fc, which zero-tensor-parallel cuts over 4 tensor ranks, outside a column- or row-parallel projection}}
    %w1 = train.load @fc : tensor<8x4xf32>
    %h = train.matmul %x, %w1 {transpose_b} : tensor<2x4xf32>, tensor<8x4xf32> -> tensor<2x8xf32>
    %g = train.gelu %h : tensor<2x8xf32>
    %w2 = train.load @proj : tensor<4x8xf32>
    %y = train.matmul %g, %w2 {transpose_b} : tensor<2x8xf32>, tensor<4x8xf32> -> tensor<2x4xf32>
    %z = train.matmul %x, %w1 {transpose_b} : tensor<2x4xf32>, tensor<8x4xf32> -> tensor<2x8xf32>
    %l = train.mse %y, %t : tensor<2x4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// expected-error@+1 {{zero-tensor-parallel: the module has a mesh already (#zero.mesh<data = 0, tensor = 2>)}}
module attributes {zero.mesh = #zero.mesh<data = 0, tensor = 2>} {
}

// -----

// expected-error@+1 {{zero-tensor-parallel: runs on the forward graph, before train-autodiff and zero-partition}}
module attributes {zero.stage = 0 : i64} {
}
