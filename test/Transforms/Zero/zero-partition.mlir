// RUN: zero-opt %s --train-autodiff --train-optimizer --zero-partition="stage=0 world-size=4" | FileCheck %s --check-prefix=S0
// RUN: zero-opt %s --train-autodiff --train-optimizer --zero-partition="stage=1 world-size=4" | FileCheck %s --check-prefix=S1
// RUN: zero-opt %s --train-autodiff --train-optimizer --zero-partition="stage=2 world-size=4" | FileCheck %s --check-prefix=S2
// RUN: zero-opt %s --train-autodiff --train-optimizer --zero-partition="stage=3 world-size=4" | FileCheck %s --check-prefix=S3
// The forward and the backward all-gather of a group stay two collectives
// through -canonicalize -cse.
// RUN: zero-opt %s --train-autodiff --train-optimizer --zero-partition="stage=3 world-size=4" -canonicalize -cse | FileCheck %s --check-prefix=CSE

// Two blocks (h0, h1) and a rest group; 36 + 5 = 41 elements in h0 (not a
// multiple of 4: padded to 44), 8 in h1, 3 in the rest (fewer elements than
// ranks: padded to 4); @frozen stays whole on every rank.
train.param @h0.w : tensor<6x6xf32> init(<normal, 2.000000e-02>) trainable
train.param @h0.b : tensor<5xf32> init(<zeros>) trainable
train.param @h1.w : tensor<8xf32> init(<ones>) trainable
train.param @head : tensor<3xf32> init(<zeros>) trainable
train.param @frozen : tensor<6xf32> init(<ones>)
func.func @forward(%x: tensor<6x6xf32>, %y: tensor<6x6xf32>) -> tensor<f32> {
  %w = train.load @h0.w : tensor<6x6xf32>
  %a = train.matmul %x, %w {transpose_b} : tensor<6x6xf32>, tensor<6x6xf32> -> tensor<6x6xf32>
  %g = train.gelu %a : tensor<6x6xf32>
  %l = train.mse %g, %y : tensor<6x6xf32> -> tensor<f32>
  %b = train.load @h0.b : tensor<5xf32>
  %h1 = train.load @h1.w : tensor<8xf32>
  %hd = train.load @head : tensor<3xf32>
  %f = train.load @frozen : tensor<6xf32>
  %t5 = train.fill 0.0 : tensor<5xf32>
  %t8 = train.fill 0.0 : tensor<8xf32>
  %t3 = train.fill 0.0 : tensor<3xf32>
  %l2 = train.mse %b, %t5 : tensor<5xf32> -> tensor<f32>
  %l3 = train.mse %h1, %t8 : tensor<8xf32> -> tensor<f32>
  %l4 = train.mse %hd, %t3 : tensor<3xf32> -> tensor<f32>
  %s1 = train.add %l, %l2 : tensor<f32>
  %s2 = train.add %s1, %l3 : tensor<f32>
  %s3 = train.add %s2, %l4 : tensor<f32>
  return %s3 : tensor<f32>
}

// All stages record the layout and where state lives.
// S0: module attributes {zero.stage = 0 : i64, zero.world_size = 4 : i64}
// S0-DAG: zero.group @group.h0 world_size(4) members [@h0.w, @h0.b] offsets [0, 36] decay [true, false] padded(44)
// S0-DAG: zero.group @group.h1 world_size(4) members [@h1.w] offsets [0] decay [false] padded(8)
// S0-DAG: zero.group @group.rest world_size(4) members [@head] offsets [0] decay [false] padded(4)
// S0-NOT: zero.shard @
// Stage 0: the step all-reduces each group's gradients, nothing else.
// S0-LABEL: func.func @forward_backward(
// S0-NOT: zero.
// S0: return
// S0-LABEL: func.func @optimizer_step(
// S0: %[[G0:.*]] = train.load @h0.w.grad
// S0-NEXT: %[[G1:.*]] = train.load @h0.b.grad
// S0-NEXT: %[[P:.*]] = zero.pack @group.h0(%[[G0]], %[[G1]]) : tensor<6x6xf32>, tensor<5xf32> -> tensor<44xf32>
// S0-NEXT: %[[R:.*]] = zero.all_reduce %[[P]] kind(<avg>) world_size(4) : tensor<44xf32>
// S0-NEXT: %[[U:.*]]:2 = zero.unpack @group.h0 %[[R]]
// S0: train.sum_squares %[[U]]#0
// S0: train.adamw {{.*}}, %[[U]]#0,
// S0-NOT: zero.reduce_scatter
// S0-NOT: zero.all_gather

// Stage 1: moments sharded; gradients and parameters whole.
// S1-DAG: zero.shard @group.h0.exp_avg : tensor<11xf32> kind(<exp_avg>) of(@group.h0)
// S1-DAG: zero.shard @group.h0.exp_avg_sq : tensor<11xf32> kind(<exp_avg_sq>) of(@group.h0)
// S1-DAG: train.state @h0.w.grad : tensor<6x6xf32> kind(<grad>) of(@h0.w)
// S1-NOT: exp_avg : tensor<6x6xf32>
// S1-LABEL: func.func @forward_backward(
// S1-NOT: zero.
// S1: train.accumulate
// S1-LABEL: func.func @optimizer_step(
// S1-SAME: %[[LR:[^:]*]]: tensor<f32>
// S1: %[[G0:.*]] = train.load @h0.w.grad
// S1-NEXT: %[[G1:.*]] = train.load @h0.b.grad
// S1-NEXT: %[[P:.*]] = zero.pack @group.h0(%[[G0]], %[[G1]])
// S1-NEXT: %[[GS:.*]] = zero.reduce_scatter %[[P]] kind(<avg>) world_size(4) : tensor<44xf32> -> tensor<11xf32>
// S1-NEXT: %[[SS:.*]] = train.sum_squares %[[GS]] : tensor<11xf32>
// S1: %[[NORM2:.*]] = zero.all_reduce %{{.*}} kind(<sum>) world_size(4) : tensor<f32>
// S1-NEXT: %[[COEF:.*]], %[[NORM:.*]] = train.clip_coef %[[NORM2]]
// S1-NEXT: %[[W:.*]] = train.load @h0.w
// S1-NEXT: %[[B:.*]] = train.load @h0.b
// S1-NEXT: %[[WP:.*]] = zero.pack @group.h0(%[[W]], %[[B]])
// S1-NEXT: %[[MY:.*]] = zero.local_shard %[[WP]] world_size(4) : tensor<44xf32> -> tensor<11xf32>
// S1-NEXT: %[[M:.*]] = zero.shard_load @group.h0.exp_avg
// S1-NEXT: %[[V:.*]] = zero.shard_load @group.h0.exp_avg_sq
// S1-NEXT: %[[NP:.*]], %[[NM:.*]], %[[NV:.*]] = zero.shard_adamw @group.h0 %[[MY]], %[[GS]], %[[M]], %[[V]], %[[LR]], %{{.*}}, %[[COEF]] {{.*}} weight_decay(1.000000e-02) : tensor<11xf32>, tensor<11xf32>
// S1-NEXT: zero.shard_store %[[NM]], @group.h0.exp_avg
// S1-NEXT: zero.shard_store %[[NV]], @group.h0.exp_avg_sq
// S1-NEXT: %[[FULL:.*]] = zero.all_gather %[[NP]] world_size(4) : tensor<11xf32> -> tensor<44xf32>
// S1-NEXT: %[[NEW:.*]]:2 = zero.unpack @group.h0 %[[FULL]]
// S1-NEXT: train.store %[[NEW]]#0, @h0.w
// S1-NEXT: train.store %[[NEW]]#1, @h0.b
// S1: return %[[NORM]]

// Stage 2: gradients sharded too, reduce-scattered in the backward as soon
// as the group is complete.
// S2-DAG: zero.shard @group.h0.grad : tensor<11xf32> kind(<grad>) of(@group.h0)
// S2-DAG: zero.shard @group.rest.grad : tensor<1xf32> kind(<grad>) of(@group.rest)
// S2-NOT: train.state
// S2-LABEL: func.func @forward_backward(
// S2-NOT: train.accumulate
// S2: %[[P:.*]] = zero.pack @group.h0(
// S2-NEXT: %[[RS:.*]] = zero.reduce_scatter %[[P]] kind(<avg>) world_size(4) : tensor<44xf32> -> tensor<11xf32>
// S2-NEXT: zero.shard_accumulate %[[RS]], @group.h0.grad : tensor<11xf32>
// S2-NOT: train.accumulate
// S2-LABEL: func.func @optimizer_step(
// S2: %[[GS:.*]] = zero.shard_load @group.h0.grad : tensor<11xf32>
// S2-NOT: zero.reduce_scatter
// S2: zero.all_gather
// S2: %[[Z:.*]] = train.fill 0.000000e+00 : tensor<11xf32>
// S2-NEXT: zero.shard_store %[[Z]], @group.h0.grad

// Stage 3: parameters are shards; each function gathers them before use,
// the step gathers nothing.
// S3-DAG: train.param @h0.w : tensor<6x6xf32> init(<normal, 2.000000e-02>) trainable {zero.sharded}
// S3-DAG: train.param @frozen : tensor<6xf32> init(<ones>){{$}}
// S3-DAG: zero.shard @group.h0.param : tensor<11xf32> kind(<param>) of(@group.h0)
// S3-LABEL: func.func @forward(
// S3: %[[S:.*]] = zero.shard_load @group.h0.param : tensor<11xf32>
// S3-NEXT: %[[F:.*]] = zero.all_gather %[[S]] world_size(4) : tensor<11xf32> -> tensor<44xf32>
// S3-NEXT: %[[U:.*]]:2 = zero.unpack @group.h0 %[[F]] : tensor<44xf32> -> tensor<6x6xf32>, tensor<5xf32>
// S3-NEXT: train.matmul %{{.*}}, %[[U]]#0
// S3: train.load @frozen
// S3-LABEL: func.func @forward_backward(
// S3: zero.all_gather {{.*}} tensor<11xf32> -> tensor<44xf32>
// S3: train.loss_seed
// S3: zero.all_gather {{.*}} tensor<11xf32> -> tensor<44xf32>
// S3: zero.reduce_scatter
// S3-LABEL: func.func @optimizer_step(
// S3-NOT: zero.all_gather
// S3: %[[P:.*]] = zero.shard_load @group.h0.param : tensor<11xf32>
// S3: %[[NP:.*]], %{{.*}}, %{{.*}} = zero.shard_adamw @group.h0 %[[P]],
// S3: zero.shard_store %[[NP]], @group.h0.param
// S3-NOT: zero.all_gather

// CSE-LABEL: func.func @forward_backward(
// CSE-COUNT-2: zero.all_gather {{.*}} tensor<11xf32> -> tensor<44xf32>
// CSE-NOT: zero.all_gather {{.*}} tensor<11xf32> -> tensor<44xf32>
// CSE: return
