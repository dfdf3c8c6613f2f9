// RUN: zero-opt %s --train-autodiff=loss-scale=true --train-optimizer=precision=fp16-mixed -verify-diagnostics

// expected-error @+1 {{'train.param' op has element type 'bf16'; precision=fp16-mixed needs f16 parameters}}
train.param @w : tensor<4xbf16> init(<zeros>) trainable
func.func @forward(%t: tensor<4xbf16>) -> tensor<f32> {
  %w = train.load @w : tensor<4xbf16>
  %l = train.mse %w, %t : tensor<4xbf16> -> tensor<f32>
  return %l : tensor<f32>
}

