// RUN: zero-opt %s --train-autodiff --train-optimizer=precision=fp16-mixed -verify-diagnostics

// Without train-autodiff{loss-scale=true} the step has no loss scale.
// expected-error @+1 {{train-optimizer: precision=fp16-mixed needs dynamic loss scaling: run train-autodiff{loss-scale=true}}}
module {
  train.param @w : tensor<4xf16> init(<zeros>) trainable
  func.func @forward(%t: tensor<4xf16>) -> tensor<f32> {
    %w = train.load @w : tensor<4xf16>
    %l = train.mse %w, %t : tensor<4xf16> -> tensor<f32>
    return %l : tensor<f32>
  }
}
