// RUN: zero-opt %s --zero-partition="stage=3 world-size=2 persist-threshold=-1" -verify-diagnostics

// expected-error @+1 {{zero-partition: persist-threshold must be >= 0, got -1}}
module {
  train.param @w : tensor<4xf32> init(<zeros>) trainable
}
