// RUN: zero-opt %s -canonicalize -cse | FileCheck %s

// Two all-gathers of the same shard (forward and backward use of one
// parameter group) stay two collectives, in order, through -canonicalize
// and -cse; an unused collective is not dropped either (every rank must
// issue the same sequence).

// CHECK-LABEL: func.func @not_merged
func.func @not_merged(%shard: tensor<8xf32>) -> (tensor<32xf32>, tensor<32xf32>) {
  // CHECK: %[[A:.*]] = zero.all_gather
  // CHECK-NEXT: zero.all_reduce
  // CHECK-NEXT: %[[B:.*]] = zero.all_gather
  // CHECK-NEXT: return %[[A]], %[[B]]
  %a = zero.all_gather %shard world_size(4) : tensor<8xf32> -> tensor<32xf32>
  %unused = zero.all_reduce %shard kind(<sum>) world_size(4) : tensor<8xf32>
  %b = zero.all_gather %shard world_size(4) : tensor<8xf32> -> tensor<32xf32>
  return %a, %b : tensor<32xf32>, tensor<32xf32>
}
