// RUN: zero-opt %s -split-input-file -verify-diagnostics --convert-train-to-emitc

// The lowering reads the storage zero-buffer-assign recorded for every
// value (#zero.storage) and decides none: it refuses a function without
// it, and checks each recorded choice and offset.

// zero-buffer-assign's placement is checked: two values live at the same
// time must not share bytes (a stale plan after a later transformation).
module attributes {zero.state_arena_bytes = {parameters = 64 : i64, gradients = 0 : i64, master_weights = 0 : i64, moments = 0 : i64}} {
train.param @w : tensor<16xf32> init(<ones>) trainable {zero.slot = #zero.slot<parameters, 0, 64>}
func.func @forward(%ids: tensor<1x2xi32>, %t: tensor<1x2xi32>) -> tensor<f32> attributes {zero.arena_bytes = {activations = 0 : i64, temporaries = 128 : i64}} {
  %w = train.load @w {zero.storage = [#zero.storage<state @w>]} : tensor<16xf32>
  // expected-note@+1 {{the other buffer is defined here}}
  %a = train.gelu %w {zero.storage = [#zero.storage<arena temporaries, offset = 0, bytes = 64, live = [1, 2]>]} : tensor<16xf32>
  // expected-error@+1 {{'train.gelu' op zero.storage: bytes [0, 64) of the temporaries arena overlap bytes [0, 64) of a buffer live at the same time}}
  %b = train.gelu %a {zero.storage = [#zero.storage<arena temporaries, offset = 0, bytes = 64, live = [2, 3]>]} : tensor<16xf32>
  %s = train.sum_squares %b {zero.storage = [#zero.storage<arena temporaries, offset = 64, bytes = 64, live = [3, 4]>]} : tensor<16xf32>
  return %s : tensor<f32>
}
}

// -----

// A planned value in the wrong arena: in @forward_backward only what the
// backward keeps is an activation.
module attributes {zero.state_arena_bytes = {parameters = 64 : i64, gradients = 0 : i64, master_weights = 0 : i64, moments = 0 : i64}} {
train.param @w : tensor<16xf32> init(<ones>) trainable {zero.slot = #zero.slot<parameters, 0, 64>}
func.func @forward(%ids: tensor<1x2xi32>, %t: tensor<1x2xi32>) -> tensor<f32> attributes {zero.arena_bytes = {activations = 0 : i64, temporaries = 64 : i64}} {
  %w = train.load @w {zero.storage = [#zero.storage<state @w>]} : tensor<16xf32>
  %s = train.sum_squares %w {zero.storage = [#zero.storage<arena temporaries, offset = 0, bytes = 64, live = [1, 2]>]} : tensor<16xf32>
  return %s : tensor<f32>
}
func.func @forward_backward(%ids: tensor<1x2xi32>, %t: tensor<1x2xi32>) -> tensor<f32> attributes {zero.arena_bytes = {activations = 64 : i64, temporaries = 64 : i64}} {
  %w = train.load @w {zero.storage = [#zero.storage<state @w>]} : tensor<16xf32>
  // expected-error@+1 {{'train.gelu' op has no zero.storage for a result that matches the plan (arena "temporaries", at least 64 bytes, 64-byte aligned offset); rerun zero-buffer-assign after the last transformation}}
  %a = train.gelu %w {zero.storage = [#zero.storage<arena activations, offset = 0, bytes = 64, live = [1, 2]>]} : tensor<16xf32>
  %s = train.sum_squares %a {zero.storage = [#zero.storage<arena temporaries, offset = 0, bytes = 64, live = [2, 3]>]} : tensor<16xf32>
  return %s : tensor<f32>
}
}

// -----

// A function zero-buffer-assign has not placed: the lowering does not
// place it itself.
module attributes {zero.state_arena_bytes = {parameters = 64 : i64, gradients = 0 : i64, master_weights = 0 : i64, moments = 0 : i64}} {
  train.param @w : tensor<4xf32> init(<zeros>) trainable {zero.slot = #zero.slot<parameters, 0, 64>}
  // expected-error@+1 {{'func.func' op has no zero.arena_bytes: run zero-buffer-assign before convert-train-to-emitc (it records where every value lives)}}
  func.func @forward(%ids: tensor<1x2xi32>, %t: tensor<1x2xi32>) -> tensor<f32> {
    %w = train.load @w : tensor<4xf32>
    %l = train.sum_squares %w : tensor<4xf32>
    return %l : tensor<f32>
  }
}

// -----

// A function placed by zero-buffer-assign and then changed: the new op's
// result has no storage.
module attributes {zero.state_arena_bytes = {parameters = 64 : i64, gradients = 0 : i64, master_weights = 0 : i64, moments = 0 : i64}} {
  train.param @w : tensor<4xf32> init(<zeros>) trainable {zero.slot = #zero.slot<parameters, 0, 64>}
  func.func @forward(%ids: tensor<1x2xi32>, %t: tensor<1x2xi32>) -> tensor<f32> attributes {zero.arena_bytes = {activations = 0 : i64, temporaries = 128 : i64}} {
    %w = train.load @w {zero.storage = [#zero.storage<state @w>]} : tensor<4xf32>
    // expected-error@+1 {{'train.gelu' op has no zero.storage for result #0; run zero-buffer-assign after the last transformation}}
    %g = train.gelu %w : tensor<4xf32>
    %l = train.sum_squares %g {zero.storage = [#zero.storage<arena temporaries, offset = 64, bytes = 64, live = [2, 3]>]} : tensor<4xf32>
    return %l : tensor<f32>
  }
}

// -----

// A load recorded as a view of its state although the state is written
// while the loaded value is live.
module attributes {zero.state_arena_bytes = {parameters = 64 : i64, gradients = 0 : i64, master_weights = 0 : i64, moments = 0 : i64}} {
  train.param @w : tensor<4xf32> init(<zeros>) trainable {zero.slot = #zero.slot<parameters, 0, 64>}
  func.func @forward(%ids: tensor<1x2xi32>, %t: tensor<1x2xi32>) -> tensor<f32> attributes {zero.arena_bytes = {activations = 0 : i64, temporaries = 192 : i64}} {
    // expected-error@+1 {{'train.load' op zero.storage of result #0 is #zero.storage<state @w>, but here the step allows a buffer of its own (#zero.storage<arena ...>): the state is written while the loaded value is live, so the load must copy}}
    %w = train.load @w {zero.storage = [#zero.storage<state @w>]} : tensor<4xf32>
    %z = train.fill 0.0 {zero.storage = [#zero.storage<arena temporaries, offset = 64, bytes = 64, live = [1, 2]>]} : tensor<4xf32>
    train.store %z, @w : tensor<4xf32>
    %l = train.sum_squares %w {zero.storage = [#zero.storage<arena temporaries, offset = 128, bytes = 64, live = [3, 4]>]} : tensor<4xf32>
    return %l : tensor<f32>
  }
}

// -----

// A result recorded as computed in place (tied to an operand) that is not
// an AdamW update in place.
module attributes {zero.state_arena_bytes = {parameters = 64 : i64, gradients = 0 : i64, master_weights = 0 : i64, moments = 0 : i64}} {
  train.param @w : tensor<4xf32> init(<zeros>) trainable {zero.slot = #zero.slot<parameters, 0, 64>}
  func.func @forward(%ids: tensor<1x2xi32>, %t: tensor<1x2xi32>) -> tensor<f32> attributes {zero.arena_bytes = {activations = 0 : i64, temporaries = 128 : i64}} {
    %w = train.load @w {zero.storage = [#zero.storage<state @w>]} : tensor<4xf32>
    // expected-error@+1 {{'train.gelu' op zero.storage of result #0 is #zero.storage<tied 0>, but here the step allows a buffer of its own (#zero.storage<arena ...>): zero-buffer-assign records only the choices the step allows; rerun it after the last transformation}}
    %g = train.gelu %w {zero.storage = [#zero.storage<tied 0>]} : tensor<4xf32>
    %l = train.sum_squares %g {zero.storage = [#zero.storage<arena temporaries, offset = 64, bytes = 64, live = [2, 3]>]} : tensor<4xf32>
    return %l : tensor<f32>
  }
}
