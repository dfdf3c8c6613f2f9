// RUN: zero-opt %s --zero-bucket="bucket-bytes=1000" -split-input-file | FileCheck %s

// An all-gather of a computed shard (the optimizer step's update at stages
// 1-2) is bucketed at its last member: the earlier members' unpack and
// store move down to the bucket, past the load of the next state, which
// precedes them in program order either way.
train.param @a : tensor<10xf32> init(<zeros>) trainable
train.param @b : tensor<10xf32> init(<zeros>) trainable
// CHECK-LABEL: func.func @step(
func.func @step(%x: tensor<5xf32>, %y: tensor<5xf32>) {
  // CHECK: %[[LB:.*]] = train.load @b
  // CHECK: %[[C:.*]] = zero.concat
  // CHECK-NEXT: %[[G:.*]] = zero.all_gather %[[C]] world_size(2) : tensor<10xf32> -> tensor<20xf32>
  // CHECK-NEXT: %[[P:.*]]:2 = zero.bucket_deinterleave %[[G]]
  // CHECK-NEXT: train.store %[[P]]#0, @a
  // CHECK-NEXT: train.store %[[P]]#1, @b
  %ga = zero.all_gather %x world_size(2) : tensor<5xf32> -> tensor<10xf32>
  train.store %ga, @a : tensor<10xf32>
  %lb = train.load @b : tensor<10xf32>
  %s = zero.local_shard %lb world_size(2) : tensor<10xf32> -> tensor<5xf32>
  %u = train.add %s, %y : tensor<5xf32>
  %gb = zero.all_gather %u world_size(2) : tensor<5xf32> -> tensor<10xf32>
  train.store %gb, @b : tensor<10xf32>
  return
}

// -----

// A read of the state that a member's store writes, after that store: the
// store may not pass it, so nothing is bucketed.
train.param @a : tensor<10xf32> init(<zeros>) trainable
train.param @b : tensor<10xf32> init(<zeros>) trainable
// CHECK-LABEL: func.func @step(
func.func @step(%x: tensor<5xf32>) {
  // CHECK-NOT: zero.concat
  // CHECK: zero.all_gather %{{.*}} world_size(2) : tensor<5xf32> -> tensor<10xf32>
  // CHECK: train.store
  // CHECK: train.load @a
  // CHECK: zero.all_gather %{{.*}} world_size(2) : tensor<5xf32> -> tensor<10xf32>
  %ga = zero.all_gather %x world_size(2) : tensor<5xf32> -> tensor<10xf32>
  train.store %ga, @a : tensor<10xf32>
  %la = train.load @a : tensor<10xf32>
  %s = zero.local_shard %la world_size(2) : tensor<10xf32> -> tensor<5xf32>
  %gb = zero.all_gather %s world_size(2) : tensor<5xf32> -> tensor<10xf32>
  train.store %gb, @b : tensor<10xf32>
  return
}
