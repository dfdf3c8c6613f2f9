// RUN: zero-opt %s --zero-partition="stage=1 world-size=2" -split-input-file -verify-diagnostics

// A graph without gradients cannot be sharded beyond stage 0.
// expected-error @+1 {{zero-partition: stage 1 at world-size 2 needs a training step with gradients and an optimizer (run train-autodiff and train-optimizer first)}}
module {
  train.param @w : tensor<4xf32> init(<zeros>) trainable
  func.func @forward(%t: tensor<4xf32>) -> tensor<f32> {
    %w = train.load @w : tensor<4xf32>
    %l = train.mse %w, %t : tensor<4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// expected-error @+1 {{zero-partition: the module is already partitioned}}
module attributes {zero.stage = 1 : i64, zero.world_size = 2 : i64} {
}
