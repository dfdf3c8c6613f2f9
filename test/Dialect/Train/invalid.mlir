// RUN: zero-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{normal initializer needs a positive standard deviation, got 0}}
train.param @w : tensor<4xf32> init(<normal, 0.0>)

// -----

// expected-error @+1 {{unknown initializer 'uniform'; expected normal, zeros or ones}}
train.param @w : tensor<4xf32> init(<uniform, 1.0>)

// -----

// expected-error @+1 {{'train.param' op element type must be f32, bf16 or f16, got 'i32'}}
train.param @w : tensor<4xi32> init(<zeros>)

// -----

// expected-error @+1 {{'train.param' op type must be a statically shaped tensor, got 'tensor<?xf32>'}}
train.param @w : tensor<?xf32> init(<zeros>)

// -----

// expected-error @+1 {{'train.param' op parameter has no elements}}
train.param @w : tensor<0x4xf32> init(<zeros>)

// -----

train.param @w : tensor<4xf32> init(<zeros>)
func.func @wrong_type() -> tensor<8xf32> {
  // expected-error @+1 {{'train.load' op result type 'tensor<8xf32>' does not match declared type 'tensor<4xf32>'}}
  %w = train.load @w : tensor<8xf32>
  return %w : tensor<8xf32>
}

// -----

func.func @no_param() -> tensor<8xf32> {
  // expected-error @+1 {{'train.load' op 'nothing' does not name a train.param or train.state}}
  %w = train.load @nothing : tensor<8xf32>
  return %w : tensor<8xf32>
}

// -----

func.func @add_mismatch(%a: tensor<4xf32>, %b: tensor<4xbf16>) -> tensor<4xf32> {
  // expected-error @+1 {{'train.add' op failed to verify that all of {lhs, rhs, result} have same type}}
  %r = "train.add"(%a, %b) : (tensor<4xf32>, tensor<4xbf16>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
