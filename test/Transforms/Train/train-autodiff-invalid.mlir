// RUN: zero-opt %s --train-autodiff -split-input-file -verify-diagnostics

// expected-error @+1 {{train-autodiff: no function named 'forward'}}
module {
  func.func @other() { return }
}

// -----

// expected-error @+1 {{the loss function must return one tensor<f32>, got 'tensor<4xf32>'}}
func.func @forward(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

// -----

// expected-error @+1 {{cannot differentiate with respect to argument #0 of type 'tensor<4xi32>': integer values (token ids, targets) are not differentiable}}
func.func @forward(%ids: tensor<4xi32> {train.requires_grad}, %logits: tensor<4x8xf32>) -> tensor<f32> {
  %l = train.cross_entropy %logits, %ids : tensor<4x8xf32>, tensor<4xi32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

train.param @w : tensor<4xf32> init(<zeros>) trainable
func.func @forward(%t: tensor<4xf32>) -> tensor<f32> {
  %w = train.load @w : tensor<4xf32>
  // expected-error @+1 {{'train.sum_squares' op is on a path from a trainable parameter to the loss but has no gradient rule}}
  %s = train.sum_squares %w : tensor<4xf32>
  return %s : tensor<f32>
}

// -----

func.func @forward(%a: tensor<4xf32>) -> tensor<f32> {
  %l = train.mse %a, %a : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// expected-error @+1 {{train-autodiff: 'forward_backward' already exists (was the pass run twice?)}}
func.func @forward_backward() { return }
