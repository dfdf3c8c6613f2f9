// ZeRO-R's P_a (train-checkpoint partition=tensor): each block input is kept
// as a 1/M slice per tensor rank (a copy, right after it is computed) and
// all-gathered over the tensor axis right before the block's recomputation.
// RUN: zero-opt %s -split-input-file --train-autodiff --train-checkpoint="partition=tensor" | FileCheck %s
// zero-prefetch starts the gather after the loss seed (not in the forward,
// which would keep the whole checkpoint alive), on the tensor axis.
// RUN: zero-opt %s -split-input-file --train-autodiff --train-checkpoint="partition=tensor" --zero-prefetch | FileCheck %s --check-prefix=PREFETCH
// zero-bucket leaves tensor-axis gathers alone (the stage-3 data-axis
// parameter gathers are bucketed around them).
// RUN: zero-opt %s -split-input-file --train-autodiff --train-checkpoint="partition=tensor" --train-optimizer --zero-partition="stage=3 world-size=4 persist-threshold=0" --zero-bucket | FileCheck %s --check-prefix=BUCKET
// offload=host (P_a+cpu) marks the module.
// RUN: zero-opt %s -split-input-file --train-autodiff --train-checkpoint="partition=tensor offload=host" | FileCheck %s --check-prefix=HOST

// S = 3·5 = 15 elements on M = 4 ranks: k = 4, one zero of padding.
// CHECK-LABEL: func.func @forward_backward(
// CHECK: %[[H0:.*]] = train.add %arg0
// CHECK-NEXT: %[[F:.*]] = train.reshape %[[H0]] : tensor<3x5xf32> -> tensor<15xf32>
// CHECK-NEXT: %[[Z:.*]] = train.fill 0.000000e+00 : tensor<1xf32>
// CHECK-NEXT: %[[P:.*]] = zero.concat %[[F]], %[[Z]] : tensor<15xf32>, tensor<1xf32> -> tensor<16xf32>
// CHECK-NEXT: %[[S:.*]] = zero.local_shard %[[P]] world_size(4) axis(<tensor>) {zero.checkpoint_slice} : tensor<16xf32> -> tensor<4xf32>
// CHECK: train.loss_seed
// CHECK-NEXT: %[[G:.*]] = zero.all_gather %[[S]] world_size(4) axis(<tensor>) : tensor<4xf32> -> tensor<16xf32>
// CHECK-NEXT: %[[U:.*]]:2 = zero.split %[[G]] : tensor<16xf32> -> tensor<15xf32>, tensor<1xf32>
// CHECK-NEXT: %[[X:.*]] = train.reshape %[[U]]#0 : tensor<15xf32> -> tensor<3x5xf32>
// The recomputation and the backward read the gathered input, never %[[H0]].
// CHECK-NEXT: train.load @h1.w
// CHECK-NEXT: train.gelu %[[X]]
// CHECK-NOT: %[[H0]]
// CHECK: train.gelu_grad %[[X]]
// CHECK-NOT: %[[H0]]
// CHECK: return

// PREFETCH-LABEL: func.func @forward_backward(
// PREFETCH: zero.local_shard {{.*}} axis(<tensor>) {zero.checkpoint_slice}
// PREFETCH-NOT: zero.all_gather_start
// PREFETCH: train.loss_seed
// PREFETCH-NEXT: %[[ST:.*]] = zero.all_gather_start %{{.*}} world_size(4) axis(<tensor>)
// PREFETCH: zero.wait %[[ST]]

// BUCKET-LABEL: func.func @forward_backward(

// HOST: module attributes {zero.checkpoint_offload = "host", zero.mesh

module attributes {zero.mesh = #zero.mesh<data = 1, tensor = 4>} {
  train.param @h0.w : tensor<5x5xf32> init(<normal, 2.000000e-02>) trainable
  train.param @h1.w : tensor<5x5xf32> init(<normal, 2.000000e-02>) trainable
  func.func @forward(%x: tensor<3x5xf32>, %t: tensor<3x5xf32>) -> tensor<f32> {
    %g0 = train.gelu %x : tensor<3x5xf32>
    %w0 = train.load @h0.w : tensor<5x5xf32>
    %y0 = train.matmul %g0, %w0 {transpose_b} : tensor<3x5xf32>, tensor<5x5xf32> -> tensor<3x5xf32>
    %h0 = train.add %x, %y0 : tensor<3x5xf32>
    %w1 = train.load @h1.w : tensor<5x5xf32>
    %g1 = train.gelu %h0 : tensor<3x5xf32>
    %y1 = train.matmul %g1, %w1 {transpose_b} : tensor<3x5xf32>, tensor<5x5xf32> -> tensor<3x5xf32>
    %h1 = train.add %h0, %y1 : tensor<3x5xf32>
    %l = train.mse %h1, %t : tensor<3x5xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// M | S: no padding. A table made from nothing (train.fill here, like
// train.rope_table) is not a checkpoint and is read replicated as before.
// CHECK-LABEL: func.func @forward_backward(
// CHECK: %[[H0:.*]] = train.add %arg0
// CHECK-NEXT: %[[F:.*]] = train.reshape %[[H0]] : tensor<4x2xf32> -> tensor<8xf32>
// CHECK-NEXT: %[[S:.*]] = zero.local_shard %[[F]] world_size(2) axis(<tensor>) {zero.checkpoint_slice} : tensor<8xf32> -> tensor<4xf32>
// CHECK: train.loss_seed
// CHECK-NEXT: %[[G:.*]] = zero.all_gather %[[S]] world_size(2) axis(<tensor>) : tensor<4xf32> -> tensor<8xf32>
// CHECK-NEXT: %[[X:.*]] = train.reshape %[[G]] : tensor<8xf32> -> tensor<4x2xf32>
// CHECK-NOT: zero.local_shard
// CHECK-NOT: zero.all_gather
// CHECK: return

// PREFETCH-LABEL: func.func @forward_backward(
// The forward's data-axis parameter gathers are one bucket; the backward's
// tensor-axis P_a gather (same element type and world size) stays alone.
// BUCKET-LABEL: func.func @forward_backward(
// BUCKET: zero.concat
// BUCKET: train.loss_seed
// BUCKET-NEXT: zero.all_gather %{{.*}} world_size(2) axis(<tensor>) : tensor<4xf32> -> tensor<8xf32>
// BUCKET-NOT: zero.concat
// BUCKET: zero.all_gather %{{.*}} world_size(2) : tensor<2xf32> -> tensor<4xf32>
// HOST: module attributes {zero.checkpoint_offload = "host", zero.mesh

module attributes {zero.mesh = #zero.mesh<data = 2, tensor = 2>} {
  train.param @h0.w : tensor<2x2xf32> init(<normal, 2.000000e-02>) trainable
  train.param @h1.w : tensor<2x2xf32> init(<normal, 2.000000e-02>) trainable
  func.func @forward(%x: tensor<4x2xf32>, %t: tensor<4x2xf32>) -> tensor<f32> {
    %c = train.fill 5.000000e-01 : tensor<4x2xf32>
    %w0 = train.load @h0.w : tensor<2x2xf32>
    %y0 = train.matmul %x, %w0 {transpose_b} : tensor<4x2xf32>, tensor<2x2xf32> -> tensor<4x2xf32>
    %h0 = train.add %x, %y0 : tensor<4x2xf32>
    %w1 = train.load @h1.w : tensor<2x2xf32>
    %g1 = train.gelu %h0 : tensor<4x2xf32>
    %m1 = train.mul %g1, %c : tensor<4x2xf32>
    %y1 = train.matmul %m1, %w1 {transpose_b} : tensor<4x2xf32>, tensor<2x2xf32> -> tensor<4x2xf32>
    %h1 = train.add %h0, %y1 : tensor<4x2xf32>
    %l = train.mse %h1, %t : tensor<4x2xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
