// The verifiers of P_a+cpu's copies (ZeroOffload.cpp) and of the host-slot
// storage (ZeroStorage.cpp): one message each.
// RUN: zero-opt %s -split-input-file -verify-diagnostics

func.func @start_type(%s: tensor<32xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{'zero.offload_start' op copies a 'tensor<32xf32>', but its pending value is of 'tensor<16xf32>'}}
  %p = zero.offload_start %s : tensor<32xf32> -> !zero.pending<tensor<16xf32>>
  %h = zero.offload_wait %p : !zero.pending<tensor<16xf32>>
  return %h : tensor<16xf32>
}

// -----

func.func @start_unwaited(%s: tensor<32xf32>) {
  // expected-error @+1 {{'zero.offload_start' op must be waited exactly once, by a zero.offload_wait}}
  %p = zero.offload_start %s : tensor<32xf32> -> !zero.pending<tensor<32xf32>>
  return
}

// -----

func.func @start_wrong_wait(%s: tensor<32xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{'zero.offload_start' op must be waited exactly once, by a zero.offload_wait}}
  %p = zero.offload_start %s : tensor<32xf32> -> !zero.pending<tensor<32xf32>>
  %h = zero.wait %p : !zero.pending<tensor<32xf32>>
  return %h : tensor<32xf32>
}

// -----

func.func @wait_not_offload(%s: tensor<16xf32>) -> tensor<32xf32> {
  %p = zero.all_gather_start %s world_size(2) : tensor<16xf32> -> !zero.pending<tensor<32xf32>>
  // expected-error @+1 {{'zero.offload_wait' op waits for a zero.offload_start, not for what defines its operand}}
  %h = zero.offload_wait %p : !zero.pending<tensor<32xf32>>
  return %h : tensor<32xf32>
}

// -----

func.func @fetch_not_host(%s: tensor<32xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{'zero.fetch_start' op fetches a host slot, the result of a zero.offload_wait}}
  %q = zero.fetch_start %s : tensor<32xf32> -> !zero.pending<tensor<32xf32>>
  %d = zero.fetch_wait %q : !zero.pending<tensor<32xf32>>
  return %d : tensor<32xf32>
}

// -----

func.func @fetch_unwaited(%s: tensor<32xf32>) {
  %p = zero.offload_start %s : tensor<32xf32> -> !zero.pending<tensor<32xf32>>
  %h = zero.offload_wait %p : !zero.pending<tensor<32xf32>>
  // expected-error @+1 {{'zero.fetch_start' op must be waited exactly once, by a zero.fetch_wait}}
  %q = zero.fetch_start %h : tensor<32xf32> -> !zero.pending<tensor<32xf32>>
  return
}

// -----

func.func @fetch_wait_not_fetch(%s: tensor<16xf32>) -> tensor<32xf32> {
  %p = zero.all_gather_start %s world_size(2) : tensor<16xf32> -> !zero.pending<tensor<32xf32>>
  // expected-error @+1 {{'zero.fetch_wait' op waits for a zero.fetch_start, not for what defines its operand}}
  %d = zero.fetch_wait %p : !zero.pending<tensor<32xf32>>
  return %d : tensor<32xf32>
}

// -----


func.func @slot_not_offload(%s: tensor<32xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{'train.relu' op 'zero.storage' of result #0 (#zero.storage<host_slot, offset = 0, bytes = 128, live = [0, 1]>) is for the result of a zero.offload_wait (a host slot of P_a+cpu)}}
  %r = train.relu %s {zero.storage = [#zero.storage<host_slot, offset = 0, bytes = 128, live = [0, 1]>]} : tensor<32xf32>
  return %r : tensor<32xf32>
}

// -----

func.func @slot_small(%s: tensor<32xf32>) -> tensor<32xf32> {
  %p = zero.offload_start %s : tensor<32xf32> -> !zero.pending<tensor<32xf32>>
  // expected-error @+1 {{'zero.offload_wait' op 'zero.storage' of result #0 (#zero.storage<host_slot, offset = 0, bytes = 64, live = [0, 1]>) has fewer bytes than the tensor's 128}}
  %h = zero.offload_wait %p {zero.storage = [#zero.storage<host_slot, offset = 0, bytes = 64, live = [0, 1]>]} : !zero.pending<tensor<32xf32>>
  return %h : tensor<32xf32>
}

// -----

func.func @slot_aligned(%s: tensor<32xf32>) -> tensor<32xf32> {
  %p = zero.offload_start %s : tensor<32xf32> -> !zero.pending<tensor<32xf32>>
  // expected-error @+1 {{#zero.storage<host_slot> needs a 64-byte aligned offset >= 0 and bytes > 0 (got offset 8, bytes 128)}}
  %h = zero.offload_wait %p {zero.storage = [#zero.storage<host_slot, offset = 8, bytes = 128, live = [0, 1]>]} : !zero.pending<tensor<32xf32>>
  return %h : tensor<32xf32>
}

// -----

func.func @slot_live(%s: tensor<32xf32>) -> tensor<32xf32> {
  %p = zero.offload_start %s : tensor<32xf32> -> !zero.pending<tensor<32xf32>>
  // expected-error @+1 {{#zero.storage<host_slot> needs a live range [F, L] with 0 <= F <= L (got [3, 1])}}
  %h = zero.offload_wait %p {zero.storage = [#zero.storage<host_slot, offset = 0, bytes = 128, live = [3, 1]>]} : !zero.pending<tensor<32xf32>>
  return %h : tensor<32xf32>
}
