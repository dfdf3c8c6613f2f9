// RUN: zero-opt %s -split-input-file -verify-diagnostics --convert-train-to-emitc

// The lowering reads the state layout and decides none: without
// zero-layout-states it stops with a diagnostic (the storage of values:
// convert-train-to-emitc-storage-invalid.mlir).

// expected-error@+1 {{convert-train-to-emitc: the module has no state layout (zero.state_arena_bytes); run zero-layout-states first}}
module {
  train.param @w : tensor<4xf32> init(<zeros>) trainable
  func.func @forward(%ids: tensor<1x2xi32>, %t: tensor<1x2xi32>) -> tensor<f32> {
    %w = train.load @w : tensor<4xf32>
    %l = train.sum_squares %w : tensor<4xf32>
    return %l : tensor<f32>
  }
}

// -----

module attributes {zero.state_arena_bytes = {parameters = 64 : i64, gradients = 0 : i64, master_weights = 0 : i64, moments = 0 : i64}} {
  train.param @w : tensor<4xf32> init(<zeros>) trainable {zero.slot = #zero.slot<parameters, 0, 16>}
  // expected-error@+1 {{has no zero.slot (its place in the state arenas); run zero-layout-states after the last pass that adds states}}
  train.param @v : tensor<4xf32> init(<zeros>) trainable
  func.func @forward(%ids: tensor<1x2xi32>, %t: tensor<1x2xi32>) -> tensor<f32> {
    %w = train.load @w : tensor<4xf32>
    %l = train.sum_squares %w : tensor<4xf32>
    return %l : tensor<f32>
  }
}

// -----

// A program constant without its slot in the constants arena.
module attributes {zero.state_arena_bytes = {parameters = 0 : i64, gradients = 0 : i64, master_weights = 0 : i64, moments = 0 : i64}} {
  func.func @forward(%ids: tensor<1x2xi32>, %t: tensor<1x2xi32>) -> tensor<f32> attributes {zero.arena_bytes = {activations = 0 : i64, temporaries = 64 : i64}} {
    // expected-error@+1 {{'train.rope_table' op has no zero.slot (its place in the constants arena); run zero-layout-states first}}
    %tab = train.rope_table theta(1.0e+04) : tensor<2x1x2xf32>
    %s = train.sum_squares %tab : tensor<2x1x2xf32>
    return %s : tensor<f32>
  }
}
