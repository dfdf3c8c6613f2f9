// RUN: zero-opt %s --train-optimizer -split-input-file -verify-diagnostics

// expected-error @+1 {{train-optimizer: no gradient state in the module; run train-autodiff first}}
module {
  train.param @w : tensor<4xf32> init(<zeros>) trainable
}

// -----

// expected-error @+1 {{'train.param' op has element type 'bf16'; precision=fp32 needs f32 parameters (use precision=bf16-mixed for bf16)}}
train.param @w : tensor<4xbf16> init(<zeros>) trainable
train.state @w.grad : tensor<4xbf16> kind(<grad>) of(@w)

// -----

// expected-error @+1 {{train-optimizer: '@optimizer_step' already exists}}
module {
  train.param @w : tensor<4xf32> init(<zeros>) trainable
  train.state @w.grad : tensor<4xf32> kind(<grad>) of(@w)
  func.func @optimizer_step() { return }
}

