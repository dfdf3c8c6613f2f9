// RUN: zero-opt %s --train-checkpoint -verify-diagnostics

// expected-error @+1 {{train-checkpoint: no function named 'forward_backward' (run train-autodiff first)}}
module {
  func.func @forward() { return }
}
