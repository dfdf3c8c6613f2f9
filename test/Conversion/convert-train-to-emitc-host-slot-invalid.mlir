// RUN: zero-opt %s -split-input-file -verify-diagnostics --convert-train-to-emitc

// A host slot (P_a+cpu) is read from the IR and checked like every other
// record: its offset in the pinned host block, its bytes and its live
// range (from its offload's start to its fetch's wait) must be the plan's.
module attributes {zero.state_arena_bytes = {parameters = 64 : i64, gradients = 0 : i64, master_weights = 0 : i64, moments = 0 : i64}} {
train.param @w : tensor<16xf32> init(<ones>) trainable {zero.slot = #zero.slot<parameters, 0, 64>}
func.func @forward(%ids: tensor<1x2xi32>, %t: tensor<1x2xi32>) -> tensor<f32> attributes {zero.arena_bytes = {activations = 0 : i64, temporaries = 192 : i64}, zero.host_slot_bytes = 64 : i64} {
  %w = train.load @w {zero.storage = [#zero.storage<state @w>]} : tensor<16xf32>
  %a = train.gelu %w {zero.storage = [#zero.storage<arena temporaries, offset = 0, bytes = 64, live = [1, 3]>]} : tensor<16xf32>
  %p = zero.offload_start %a {zero.storage = [#zero.storage<none>]} : tensor<16xf32> -> !zero.pending<tensor<16xf32>>
  // expected-error@+1 {{'zero.offload_wait' op zero.storage of result #0 is #zero.storage<host_slot, offset = 64, bytes = 64, live = [2, 5]>, but here the step allows only #zero.storage<host_slot, offset = 0, bytes = 64, live = [2, 5]>}}
  %h = zero.offload_wait %p {zero.storage = [#zero.storage<host_slot, offset = 64, bytes = 64, live = [2, 5]>]} : !zero.pending<tensor<16xf32>>
  %q = zero.fetch_start %h {zero.storage = [#zero.storage<none>]} : tensor<16xf32> -> !zero.pending<tensor<16xf32>>
  %d = zero.fetch_wait %q {zero.storage = [#zero.storage<arena temporaries, offset = 64, bytes = 64, live = [4, 6]>]} : !zero.pending<tensor<16xf32>>
  %s = train.sum_squares %d {zero.storage = [#zero.storage<arena temporaries, offset = 128, bytes = 64, live = [6, 7]>]} : tensor<16xf32>
  return %s : tensor<f32>
}
}
