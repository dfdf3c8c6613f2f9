// P_a+cpu's copies between device and pinned host memory
// (ZeroOffloadOps.td) and the host-slot storage of zero-buffer-assign:
// they print and parse back.
// RUN: zero-opt %s -split-input-file | FileCheck %s
// RUN: zero-opt %s -split-input-file | zero-opt -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @offload_and_fetch
func.func @offload_and_fetch(%s: tensor<32xf32>) -> tensor<64xf32> {
  // CHECK: %[[P:.*]] = zero.offload_start %{{.*}} : tensor<32xf32> -> !zero.pending<tensor<32xf32>>
  %p = zero.offload_start %s : tensor<32xf32> -> !zero.pending<tensor<32xf32>>
  // CHECK: %[[H:.*]] = zero.offload_wait %[[P]] : !zero.pending<tensor<32xf32>>
  %h = zero.offload_wait %p : !zero.pending<tensor<32xf32>>
  // CHECK: %[[Q:.*]] = zero.fetch_start %[[H]] : tensor<32xf32> -> !zero.pending<tensor<32xf32>>
  %q = zero.fetch_start %h : tensor<32xf32> -> !zero.pending<tensor<32xf32>>
  // CHECK: %[[D:.*]] = zero.fetch_wait %[[Q]] : !zero.pending<tensor<32xf32>>
  %d = zero.fetch_wait %q : !zero.pending<tensor<32xf32>>
  // CHECK: zero.all_gather %[[D]] world_size(2) axis(<tensor>)
  %g = zero.all_gather %d world_size(2) axis(<tensor>) : tensor<32xf32> -> tensor<64xf32>
  return %g : tensor<64xf32>
}

// -----

// A host slot's storage: bytes of the pinned host block, live from the
// offload's start to the fetch's wait.
// CHECK-LABEL: func.func @host_slot
func.func @host_slot(%s: tensor<32xbf16>) -> tensor<32xbf16> {
  %p = zero.offload_start %s : tensor<32xbf16> -> !zero.pending<tensor<32xbf16>>
  // CHECK: zero.offload_wait %{{.*}} {zero.storage = [#zero.storage<host_slot, offset = 64, bytes = 64, live = [0, 3]>]}
  %h = zero.offload_wait %p {zero.storage = [#zero.storage<host_slot, offset = 64, bytes = 64, live = [0, 3]>]} : !zero.pending<tensor<32xbf16>>
  %q = zero.fetch_start %h : tensor<32xbf16> -> !zero.pending<tensor<32xbf16>>
  %d = zero.fetch_wait %q : !zero.pending<tensor<32xbf16>>
  return %d : tensor<32xbf16>
}
