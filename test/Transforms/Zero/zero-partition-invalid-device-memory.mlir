// RUN: zero-opt %s --zero-partition="stage=auto world-size=2 device-memory=-5" -verify-diagnostics

// expected-error @+1 {{zero-partition: device-memory must be >= 0, got -5}}
module {
  train.param @w : tensor<4xf32> init(<zeros>) trainable
}
