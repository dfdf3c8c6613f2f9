// RUN: not zero-opt %s --zero-partition="stage=4 world-size=2" 2>&1 | FileCheck %s --check-prefix=STAGE
// RUN: not zero-opt %s --zero-partition="stage=1 world-size=0" 2>&1 | FileCheck %s --check-prefix=WORLD
// RUN: not zero-opt %s --zero-partition="stage=auto world-size=2" 2>&1 | FileCheck %s --check-prefix=AUTO
// RUN: not zero-opt %s --train-autodiff --train-optimizer --zero-partition="stage=1 world-size=2 grouping=layer" 2>&1 | FileCheck %s --check-prefix=GROUPING
// RUN: zero-opt %s --zero-partition="stage=1 world-size=2" -verify-diagnostics

// STAGE: error: zero-partition: stage must be 0, 1, 2, 3 or auto, got '4'
// WORLD: error: zero-partition: world-size must be >= 1, got 0
// AUTO: error: zero-partition: stage=auto needs device-memory=<bytes per rank>
// GROUPING: error: zero-partition: grouping must be block or param, got 'layer'

// A graph without gradients cannot be sharded beyond stage 0.
// expected-error @+1 {{zero-partition: stage 1 at world-size 2 needs a training step with gradients and an optimizer (run train-autodiff and train-optimizer first)}}
module {
  train.param @w : tensor<4xf32> init(<zeros>) trainable
  func.func @forward(%t: tensor<4xf32>) -> tensor<f32> {
    %w = train.load @w : tensor<4xf32>
    %l = train.mse %w, %t : tensor<4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
