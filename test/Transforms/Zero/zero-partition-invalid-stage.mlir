// RUN: zero-opt %s --zero-partition="stage=4 world-size=2" -verify-diagnostics

// expected-error @+1 {{zero-partition: stage must be 0, 1, 2, 3 or auto, got '4'}}
module {
  train.param @w : tensor<4xf32> init(<zeros>) trainable
}
