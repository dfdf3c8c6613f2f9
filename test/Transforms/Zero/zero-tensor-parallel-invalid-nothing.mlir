// RUN: zero-opt %s -split-input-file --zero-tensor-parallel="size=2 world-size=2" -verify-diagnostics

// A forward graph without a column-/row-parallel projection pair: a mesh
// would repeat the whole step on both tensor ranks.
// expected-error@+1 {{zero-tensor-parallel: found no column-/row-parallel projection pair to cut over 2 tensor ranks (GPT's GELU MLP and packed attention, Llama's and Qwen's SwiGLU MLP and attention are cut); use size=1}}
module {
  func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// A lone linear layer has no row-parallel partner to close the cut.
// expected-error@+1 {{zero-tensor-parallel: found no column-/row-parallel projection pair to cut over 2 tensor ranks}}
module {
  train.param @w : tensor<8x8xf32> init(<zeros>) trainable
  func.func @forward(%x: tensor<2x8xf32>, %t: tensor<2x8xf32>) -> tensor<f32> {
    %w = train.load @w : tensor<8x8xf32>
    %y = train.matmul %x, %w {transpose_b} : tensor<2x8xf32>, tensor<8x8xf32> -> tensor<2x8xf32>
    %l = train.mse %y, %t : tensor<2x8xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
