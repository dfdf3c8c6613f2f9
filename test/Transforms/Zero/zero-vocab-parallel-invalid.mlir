// RUN: zero-opt %s -split-input-file --zero-vocab-parallel -verify-diagnostics

// expected-error@+1 {{zero-vocab-parallel: the module has no tensor axis of at least 2 ranks (run zero-tensor-parallel with size >= 2 first)}}
module {
  train.param @wte : tensor<16x4xf32> init(<zeros>) trainable
  func.func @forward(%ids: tensor<1x2xi32>, %t: tensor<2xi32>) -> tensor<f32> {
    %w = train.load @wte : tensor<16x4xf32>
    %x = train.embedding %w, %ids : tensor<16x4xf32>, tensor<1x2xi32> -> tensor<1x2x4xf32>
    %l = train.matmul %x, %w {transpose_b} : tensor<1x2x4xf32>, tensor<16x4xf32> -> tensor<1x2x16xf32>
    %r = train.reshape %l : tensor<1x2x16xf32> -> tensor<2x16xf32>
    %loss = train.cross_entropy %r, %t : tensor<2x16xf32>, tensor<2xi32> -> tensor<f32>
    return %loss : tensor<f32>
  }
}

// -----

// A vocabulary the tensor axis does not divide.
module attributes {zero.mesh = #zero.mesh<data = 1, tensor = 4>} {
  // expected-error@+1 {{'train.param' op has a vocabulary of 18 rows, which the tensor-parallel size 4 does not divide (18 % 4 = 2); pad the vocabulary to a multiple of 4}}
  train.param @wte : tensor<18x4xf32> init(<zeros>) trainable
  func.func @forward(%ids: tensor<1x2xi32>, %t: tensor<2xi32>) -> tensor<f32> {
    %w = train.load @wte : tensor<18x4xf32>
    %x = train.embedding %w, %ids : tensor<18x4xf32>, tensor<1x2xi32> -> tensor<1x2x4xf32>
    %l = train.matmul %x, %w {transpose_b} : tensor<1x2x4xf32>, tensor<18x4xf32> -> tensor<1x2x18xf32>
    %r = train.reshape %l : tensor<1x2x18xf32> -> tensor<2x18xf32>
    %loss = train.cross_entropy %r, %t : tensor<2x18xf32>, tensor<2xi32> -> tensor<f32>
    return %loss : tensor<f32>
  }
}

// -----

// The cut table read by something else.
module attributes {zero.mesh = #zero.mesh<data = 1, tensor = 2>} {
  train.param @wte : tensor<16x4xf32> init(<zeros>) trainable
  func.func @forward(%ids: tensor<1x2xi32>, %t: tensor<1x2x16xf32>) -> tensor<f32> {
    // expected-error@+1 {{'train.load' op uses @wte, which zero-vocab-parallel cuts by vocabulary rows over 2 tensor ranks, outside a token embedding or the LM head}}
    %w = train.load @wte : tensor<16x4xf32>
    %x = train.embedding %w, %ids : tensor<16x4xf32>, tensor<1x2xi32> -> tensor<1x2x4xf32>
    %s = train.sum_squares %w : tensor<16x4xf32>
    %l = train.mse %x, %x : tensor<1x2x4xf32> -> tensor<f32>
    %sum = train.add %l, %s : tensor<f32>
    return %sum : tensor<f32>
  }
}

// -----

// The head's logits read by something other than the loss or a return.
module attributes {zero.mesh = #zero.mesh<data = 1, tensor = 2>} {
  train.param @head : tensor<16x4xf32> init(<zeros>) trainable
  func.func @forward(%x: tensor<2x4xf32>, %t: tensor<2xi32>) -> tensor<f32> {
    %w = train.load @head : tensor<16x4xf32>
    %l = train.matmul %x, %w {transpose_b} : tensor<2x4xf32>, tensor<16x4xf32> -> tensor<2x16xf32>
    %loss = train.cross_entropy %l, %t : tensor<2x16xf32>, tensor<2xi32> -> tensor<f32>
    // expected-error@+1 {{'train.gelu' op reads the LM head's logits, which zero-vocab-parallel cuts by vocabulary columns; only train.cross_entropy (through train.reshape to [N, V]) and a return may}}
    %g = train.gelu %l : tensor<2x16xf32>
    return %loss : tensor<f32>
  }
}

// -----

// expected-error@+1 {{zero-vocab-parallel: found no token embedding (train.embedding of a parameter) or LM head (a matmul of a parameter whose logits reach train.cross_entropy) to cut by vocabulary}}
module attributes {zero.mesh = #zero.mesh<data = 1, tensor = 2>} {
  train.param @w : tensor<4x4xf32> init(<zeros>) trainable
  func.func @forward(%x: tensor<2x4xf32>, %t: tensor<2x4xf32>) -> tensor<f32> {
    %w = train.load @w : tensor<4x4xf32>
    %y = train.matmul %x, %w {transpose_b} : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
    %l = train.mse %y, %t : tensor<2x4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// expected-error@+1 {{zero-vocab-parallel: runs on the forward graph, before train-autodiff and zero-partition}}
module attributes {zero.mesh = #zero.mesh<data = 1, tensor = 2>} {
  func.func @forward_backward() {
    return
  }
}
