// RUN: zero-opt %s -split-input-file | FileCheck %s
// RUN: zero-opt %s -split-input-file | zero-opt -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @split_collectives
func.func @split_collectives(%shard: tensor<8xbf16>, %full: tensor<32xf32>, %x: tensor<f32>)
    -> (tensor<32xbf16>, tensor<8xf32>, tensor<f32>) {
  // CHECK: %[[A:.*]] = zero.all_gather_start %{{.*}} world_size(4) : tensor<8xbf16> -> !zero.pending<tensor<32xbf16>>
  %a = zero.all_gather_start %shard world_size(4) : tensor<8xbf16> -> !zero.pending<tensor<32xbf16>>
  // CHECK: %[[R:.*]] = zero.reduce_scatter_start %{{.*}} kind(<avg>) world_size(4) : tensor<32xf32> -> !zero.pending<tensor<8xf32>>
  %r = zero.reduce_scatter_start %full kind(<avg>) world_size(4) : tensor<32xf32> -> !zero.pending<tensor<8xf32>>
  // CHECK: %[[N:.*]] = zero.all_reduce_start %{{.*}} kind(<sum>) world_size(4) : tensor<f32> -> !zero.pending<tensor<f32>>
  %n = zero.all_reduce_start %x kind(<sum>) world_size(4) : tensor<f32> -> !zero.pending<tensor<f32>>
  // CHECK: zero.progress
  zero.progress
  // CHECK: zero.wait %[[A]] : !zero.pending<tensor<32xbf16>>
  %av = zero.wait %a : !zero.pending<tensor<32xbf16>>
  %rv = zero.wait %r : !zero.pending<tensor<8xf32>>
  %nv = zero.wait %n : !zero.pending<tensor<f32>>
  return %av, %rv, %nv : tensor<32xbf16>, tensor<8xf32>, tensor<f32>
}
