// RUN: zero-opt %s --zero-partition="stage=1 world-size=0" -verify-diagnostics

// expected-error @+1 {{zero-partition: world-size must be >= 1, got 0}}
module {
  train.param @w : tensor<4xf32> init(<zeros>) trainable
}
