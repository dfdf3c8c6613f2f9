// RUN: zero-opt %s -split-input-file -verify-diagnostics

// zero.state_run is verified where it sits.

func.func @not_a_fill(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{'train.mul' op 'zero.state_run' is only for a train.fill of 0, a train.adamw, or the train.sum_squares and train.add of a gradient-norm chain}}
  %y = train.mul %x, %x {zero.state_run = 0 : i64} : tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

func.func @nonzero() -> tensor<2xf32> {
  // expected-error@+1 {{'train.fill' op 'zero.state_run' is only for a train.fill of 0, a train.adamw, or the train.sum_squares and train.add of a gradient-norm chain}}
  %y = train.fill 1.000000e+00 {zero.state_run = 0 : i64} : tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

func.func @negative() -> tensor<2xf32> {
  // expected-error@+1 {{'train.fill' op 'zero.state_run' must be a non-negative i64 run id}}
  %y = train.fill 0.000000e+00 {zero.state_run = -1 : i64} : tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

func.func @not_integer() -> tensor<2xf32> {
  // expected-error@+1 {{'train.fill' op 'zero.state_run' must be a non-negative i64 run id}}
  %y = train.fill 0.000000e+00 {zero.state_run = "a"} : tensor<2xf32>
  return %y : tensor<2xf32>
}
