// zero-offload-checkpoints (P_a+cpu): each P_a slice kept from the forward
// to the backward is copied to pinned host memory right after it is
// computed (waited before the next slice, or the loss seed) and fetched
// back one block ahead of its all-gather (waited right before it).
// RUN: zero-opt %s -split-input-file --zero-offload-checkpoints | FileCheck %s
// target=cpu: the CPU backend's arenas are host memory; nothing changes.
// RUN: zero-opt %s -split-input-file --zero-offload-checkpoints="target=cpu" | FileCheck %s --check-prefix=CPU
// CPU-NOT: zero.offload_start
// CPU-NOT: zero.fetch_start

// Two blocks: the slices %s0 and %s1, gathered in the backward in the
// order s1, s0. Before:
//   %s0 = zero.local_shard %x ... {zero.checkpoint_slice}
//   %s1 = zero.local_shard %h0 ... {zero.checkpoint_slice}
//   %seed = train.fill 1.0 {train.loss_seed}
//   %g1 = zero.all_gather %s1 ...
//   %g0 = zero.all_gather %s0 ...
// CHECK-LABEL: func.func @forward_backward(
// CHECK: %[[S0:.*]] = zero.local_shard %arg0 world_size(2) axis(<tensor>) {zero.checkpoint_slice}
// CHECK-NEXT: %[[O0:.*]] = zero.offload_start %[[S0]] : tensor<32xf32> -> !zero.pending<tensor<32xf32>>
// CHECK-NEXT: %[[H0:.*]] = train.gelu %arg0
// CHECK-NEXT: %[[W0:.*]] = zero.offload_wait %[[O0]] : !zero.pending<tensor<32xf32>>
// CHECK-NEXT: %[[S1:.*]] = zero.local_shard %[[H0]] world_size(2) axis(<tensor>) {zero.checkpoint_slice}
// CHECK-NEXT: %[[O1:.*]] = zero.offload_start %[[S1]]
// CHECK-NEXT: train.gelu %[[H0]]
// CHECK-NEXT: train.mse
// CHECK-NEXT: %[[W1:.*]] = zero.offload_wait %[[O1]]
// CHECK-NEXT: train.fill 1.000000e+00 {train.loss_seed}
// CHECK-NEXT: %[[F1:.*]] = zero.fetch_start %[[W1]] : tensor<32xf32> -> !zero.pending<tensor<32xf32>>
// CHECK-NEXT: %[[D1:.*]] = zero.fetch_wait %[[F1]]
// CHECK-NEXT: %[[F0:.*]] = zero.fetch_start %[[W0]]
// CHECK-NEXT: zero.all_gather %[[D1]] world_size(2) axis(<tensor>)
// CHECK-NEXT: train.gelu
// CHECK-NEXT: %[[D0:.*]] = zero.fetch_wait %[[F0]]
// CHECK-NEXT: zero.all_gather %[[D0]] world_size(2) axis(<tensor>)
// CHECK-NOT: zero.all_gather %[[S0]]
// CHECK-NOT: zero.all_gather %[[S1]]
// CHECK: return
module attributes {zero.checkpoint_offload = "host", zero.mesh = #zero.mesh<data = 1, tensor = 2>} {
  func.func @forward_backward(%x: tensor<64xf32>, %t: tensor<64xf32>) -> tensor<f32> {
    %s0 = zero.local_shard %x world_size(2) axis(<tensor>) {zero.checkpoint_slice} : tensor<64xf32> -> tensor<32xf32>
    %h0 = train.gelu %x : tensor<64xf32>
    %s1 = zero.local_shard %h0 world_size(2) axis(<tensor>) {zero.checkpoint_slice} : tensor<64xf32> -> tensor<32xf32>
    %h1 = train.gelu %h0 : tensor<64xf32>
    %l = train.mse %h1, %t : tensor<64xf32> -> tensor<f32>
    %seed = train.fill 1.000000e+00 {train.loss_seed} : tensor<f32>
    %g1 = zero.all_gather %s1 world_size(2) axis(<tensor>) : tensor<32xf32> -> tensor<64xf32>
    %r1 = train.gelu %g1 : tensor<64xf32>
    %g0 = zero.all_gather %s0 world_size(2) axis(<tensor>) : tensor<32xf32> -> tensor<64xf32>
    %r0 = train.gelu %g0 : tensor<64xf32>
    return %l : tensor<f32>
  }
}

// -----

// With zero-prefetch's split gather the fetch is waited before the start;
// a slice the forward reads too stays on the device; a module without the
// offload=host mark is left alone (next case).
// CHECK-LABEL: func.func @forward_backward(
// CHECK: %[[S:.*]] = zero.local_shard %arg0 {{.*}} {zero.checkpoint_slice}
// CHECK-NEXT: %[[O:.*]] = zero.offload_start %[[S]]
// CHECK: %[[K:.*]] = zero.local_shard %{{.*}} {zero.checkpoint_slice}
// CHECK-NOT: zero.offload_start %[[K]]
// CHECK: %[[W:.*]] = zero.offload_wait %[[O]]
// CHECK-NEXT: train.fill 1.000000e+00 {train.loss_seed}
// CHECK-NEXT: %[[F:.*]] = zero.fetch_start %[[W]]
// CHECK-NEXT: %[[D:.*]] = zero.fetch_wait %[[F]]
// CHECK-NEXT: zero.all_gather_start %[[D]] world_size(2) axis(<tensor>)
module attributes {zero.checkpoint_offload = "host", zero.mesh = #zero.mesh<data = 1, tensor = 2>} {
  func.func @forward_backward(%x: tensor<64xf32>, %t: tensor<32xf32>) -> tensor<f32> {
    %s = zero.local_shard %x world_size(2) axis(<tensor>) {zero.checkpoint_slice} : tensor<64xf32> -> tensor<32xf32>
    %h = train.gelu %x : tensor<64xf32>
    %k = zero.local_shard %h world_size(2) axis(<tensor>) {zero.checkpoint_slice} : tensor<64xf32> -> tensor<32xf32>
    %l = train.mse %k, %t : tensor<32xf32> -> tensor<f32>
    %seed = train.fill 1.000000e+00 {train.loss_seed} : tensor<f32>
    %p = zero.all_gather_start %s world_size(2) axis(<tensor>) : tensor<32xf32> -> !zero.pending<tensor<64xf32>>
    %g = zero.wait %p : !zero.pending<tensor<64xf32>>
    %r = train.gelu %g : tensor<64xf32>
    %rk = train.gelu %k : tensor<32xf32>
    return %l : tensor<f32>
  }
}

// -----

// CHECK-LABEL: func.func @forward_backward(
// CHECK-NOT: zero.offload_start
// CHECK: return
module attributes {zero.mesh = #zero.mesh<data = 1, tensor = 2>} {
  func.func @forward_backward(%x: tensor<64xf32>, %t: tensor<64xf32>) -> tensor<f32> {
    %s = zero.local_shard %x world_size(2) axis(<tensor>) {zero.checkpoint_slice} : tensor<64xf32> -> tensor<32xf32>
    %l = train.mse %x, %t : tensor<64xf32> -> tensor<f32>
    %seed = train.fill 1.000000e+00 {train.loss_seed} : tensor<f32>
    %g = zero.all_gather %s world_size(2) axis(<tensor>) : tensor<32xf32> -> tensor<64xf32>
    return %l : tensor<f32>
  }
}
