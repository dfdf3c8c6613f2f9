// RUN: zero-opt %s --train-autodiff --train-optimizer --zero-partition="stage=1 world-size=2 grouping=layer" -verify-diagnostics

// expected-error @+1 {{zero-partition: grouping must be block or param, got 'layer'}}
module {
  train.param @w : tensor<4xf32> init(<zeros>) trainable
  func.func @forward(%t: tensor<4xf32>) -> tensor<f32> {
    %w = train.load @w : tensor<4xf32>
    %l = train.mse %w, %t : tensor<4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
