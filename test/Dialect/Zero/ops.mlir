// RUN: zero-opt %s -split-input-file | FileCheck %s
// RUN: zero-opt %s -split-input-file | zero-opt -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @collectives
func.func @collectives(%shard: tensor<8xbf16>, %full: tensor<32xf32>, %sq: tensor<f32>)
    -> (tensor<32xbf16>, tensor<8xf32>, tensor<f32>) {
  // CHECK: zero.all_gather %{{.*}} world_size(4) : tensor<8xbf16> -> tensor<32xbf16>
  %a = zero.all_gather %shard world_size(4) : tensor<8xbf16> -> tensor<32xbf16>
  // CHECK: zero.reduce_scatter %{{.*}} kind(<avg>) world_size(4) : tensor<32xf32> -> tensor<8xf32>
  %g = zero.reduce_scatter %full kind(<avg>) world_size(4) : tensor<32xf32> -> tensor<8xf32>
  // CHECK: zero.all_reduce %{{.*}} kind(<sum>) world_size(4) : tensor<f32>
  %n = zero.all_reduce %sq kind(<sum>) world_size(4) : tensor<f32>
  return %a, %g, %n : tensor<32xbf16>, tensor<8xf32>, tensor<f32>
}
