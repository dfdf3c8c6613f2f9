// RUN: zero-opt %s --zero-partition="stage=auto world-size=2" -verify-diagnostics

// expected-error @+1 {{zero-partition: stage=auto needs device-memory=<bytes per rank>}}
module {
  train.param @w : tensor<4xf32> init(<zeros>) trainable
}
