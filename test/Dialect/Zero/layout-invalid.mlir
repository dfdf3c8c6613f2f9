// RUN: zero-opt %s -split-input-file -verify-diagnostics

// The state layout's attributes (zero-layout-states) are verified where
// they sit.

// expected-error@+1 {{#zero.slot offset 32 is not a non-negative multiple of the arena alignment 64}}
train.param @a : tensor<4xf32> init(<zeros>) {zero.slot = #zero.slot<parameters, 32, 16>}

// -----

// expected-error@+1 {{#zero.slot of -1 bytes}}
train.param @a : tensor<4xf32> init(<zeros>) {zero.slot = #zero.slot<parameters, 0, -1>}

// -----

// expected-error@+1 {{'zero.slot' is in the moments arena; this state belongs in the gradients arena}}
train.state @a.grad : tensor<4xf32> kind(<grad>) of(@a) {zero.slot = #zero.slot<moments, 0, 16>}
train.param @a : tensor<4xf32> init(<zeros>) trainable

// -----

// expected-error@+1 {{'zero.slot' has 8 bytes; the state needs 16}}
train.param @a : tensor<4xf32> init(<zeros>) {zero.slot = #zero.slot<parameters, 0, 8>}

// -----

// expected-error@+1 {{is zero.sharded (no storage of its own) but has a 'zero.slot'}}
train.param @a : tensor<4xf32> init(<zeros>) {zero.sharded, zero.slot = #zero.slot<parameters, 0, 16>}

// -----

func.func @f() {
  // expected-error@+1 {{'zero.slot' is only for state declarations (train.param, train.state, zero.shard)}}
  return {zero.slot = #zero.slot<parameters, 0, 16>}
}

// -----

// expected-error@+1 {{'zero.slot' must be a #zero.slot}}
train.param @a : tensor<4xf32> init(<zeros>) {zero.slot = 3 : i64}

// -----

// expected-error@+1 {{'zero.param_span' is only for zero.group}}
train.param @a : tensor<4xf32> init(<zeros>) {zero.param_span = #zero.slot<parameters, 0, 16>}

// -----

train.param @a : tensor<4xf32> init(<zeros>)
// expected-error@+1 {{'zero.grad_span' must be in the gradients arena}}
zero.group @g world_size(1) members [@a] offsets [0] decay [false] padded(4) {zero.grad_span = #zero.slot<parameters, 0, 16>}

// -----

// expected-error@+1 {{'zero.state_arena_bytes' entry 'activations' must be a state arena (parameters, gradients, master_weights, moments) or constants, with a non-negative size}}
module attributes {zero.state_arena_bytes = {activations = 64 : i64}} {
}

// -----

// expected-error@+1 {{'zero.state_arena_bytes' is only for the module}}
train.param @a : tensor<4xf32> init(<zeros>) {zero.state_arena_bytes = {parameters = 64 : i64}}

// -----

module attributes {zero.state_arena_bytes = {parameters = 64 : i64}} {
  // expected-error@+1 {{'zero.slot' [64, 80) lies outside the parameters arena of 64 bytes (zero.state_arena_bytes)}}
  train.param @a : tensor<4xf32> init(<zeros>) {zero.slot = #zero.slot<parameters, 64, 16>}
}

// -----

module attributes {zero.state_arena_bytes = {parameters = 128 : i64}} {
  // expected-note@+1 {{the other state is declared here}}
  train.param @a : tensor<32xf32> init(<zeros>) {zero.slot = #zero.slot<parameters, 0, 128>}
  // expected-error@+1 {{'zero.slot' overlaps another state's bytes in the parameters arena}}
  train.param @b : tensor<4xf32> init(<zeros>) {zero.slot = #zero.slot<parameters, 64, 16>}
}

// -----

module attributes {zero.state_arena_bytes = {parameters = 256 : i64}} {
  // expected-error@+1 {{'zero.param_span': member @b's state does not lie at its offset in the span}}
  zero.group @g world_size(1) members [@a, @b] offsets [0, 16] decay [false, false] padded(20) {zero.param_span = #zero.slot<parameters, 0, 80>}
  train.param @a : tensor<16xf32> init(<zeros>) {zero.slot = #zero.slot<parameters, 0, 64>}
  train.param @b : tensor<4xf32> init(<zeros>) {zero.slot = #zero.slot<parameters, 128, 16>}
}

// -----

module attributes {zero.state_arena_bytes = {parameters = 256 : i64}} {
  // expected-error@+1 {{'zero.param_span' has 64 bytes; the group's flat buffer has 80}}
  zero.group @g world_size(1) members [@a, @b] offsets [0, 16] decay [false, false] padded(20) {zero.param_span = #zero.slot<parameters, 0, 64>}
  train.param @a : tensor<16xf32> init(<zeros>) {zero.slot = #zero.slot<parameters, 0, 64>}
  train.param @b : tensor<4xf32> init(<zeros>) {zero.slot = #zero.slot<parameters, 64, 16>}
}

// -----

// Program constants: in the constants arena, large enough, inside it, and
// sharing a slot whole or not at all.
func.func @f() -> tensor<4x2x2xf32> {
  // expected-error@+1 {{'zero.slot' is in the parameters arena; a program constant belongs in the constants arena}}
  %t = train.rope_table theta(1.0e+04) {zero.slot = #zero.slot<parameters, 0, 64>} : tensor<4x2x2xf32>
  return %t : tensor<4x2x2xf32>
}

// -----

func.func @f() -> tensor<4x2x2xf32> {
  // expected-error@+1 {{'zero.slot' has 32 bytes; the table needs 64}}
  %t = train.rope_table theta(1.0e+04) {zero.slot = #zero.slot<constants, 0, 32>} : tensor<4x2x2xf32>
  return %t : tensor<4x2x2xf32>
}

// -----

module attributes {zero.state_arena_bytes = {constants = 64 : i64}} {
  func.func @f() -> tensor<4x2x2xf32> {
    // expected-error@+1 {{'zero.slot' [64, 128) lies outside the constants arena of 64 bytes (zero.state_arena_bytes)}}
    %t = train.rope_table theta(1.0e+04) {zero.slot = #zero.slot<constants, 64, 64>} : tensor<4x2x2xf32>
    return %t : tensor<4x2x2xf32>
  }
}

// -----

module attributes {zero.state_arena_bytes = {constants = 256 : i64}} {
  func.func @f() -> tensor<8x2x2xf32> {
    %t = train.rope_table theta(1.0e+04) {zero.slot = #zero.slot<constants, 0, 128>} : tensor<8x2x2xf32>
    // expected-error@+1 {{'zero.slot' overlaps another constant's slot in the constants arena}}
    %u = train.rope_table theta(5.0e+05) {zero.slot = #zero.slot<constants, 64, 128>} : tensor<8x2x2xf32>
    %s = train.add %t, %u : tensor<8x2x2xf32>
    return %s : tensor<8x2x2xf32>
  }
}

// -----

func.func @f() -> tensor<f32> {
  // expected-error@+1 {{'zero.slot' is only for state declarations (train.param, train.state, zero.shard) and program constants (train.rope_table)}}
  %z = train.fill 0.0 {zero.slot = #zero.slot<constants, 0, 64>} : tensor<f32>
  return %z : tensor<f32>
}
