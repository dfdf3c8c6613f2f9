// RUN: zero-opt %s -split-input-file | FileCheck %s
// RUN: zero-opt %s -split-input-file | zero-opt -split-input-file | FileCheck %s

// The tensor axis: the mesh, cut parameters, f and g, and collectives on
// an axis (printed only when it is not the default, data).

// CHECK: module attributes {zero.mesh = #zero.mesh<data = 2, tensor = 2>}
module attributes {zero.mesh = #zero.mesh<data = 2, tensor = 2>} {
  // CHECK: train.param @w : tensor<4x8xf32> init(<zeros>) trainable {zero.tensor_split = #zero.tensor_split<dim = 0, blocks = 1, parts = 2, full = [8, 8]>}
  train.param @w : tensor<4x8xf32> init(<zeros>) trainable {zero.tensor_split = #zero.tensor_split<dim = 0, blocks = 1, parts = 2, full = [8, 8]>}
  // CHECK: train.param @qkv : tensor<12x8xf32> init(<zeros>) trainable {zero.tensor_split = #zero.tensor_split<dim = 0, blocks = 3, parts = 2, full = [24, 8]>}
  train.param @qkv : tensor<12x8xf32> init(<zeros>) trainable {zero.tensor_split = #zero.tensor_split<dim = 0, blocks = 3, parts = 2, full = [24, 8]>}

  // CHECK-LABEL: func.func @pair
  func.func @pair(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
    // CHECK: zero.tp_f %{{.*}} size(2) : tensor<2x4x8xf32>
    %f = zero.tp_f %x size(2) : tensor<2x4x8xf32>
    // CHECK: zero.tp_g %{{.*}} size(2) : tensor<2x4x8xf32>
    %g = zero.tp_g %f size(2) : tensor<2x4x8xf32>
    return %g : tensor<2x4x8xf32>
  }
}

// -----

// CHECK-LABEL: func.func @axes
func.func @axes(%shard: tensor<8xf32>, %full: tensor<32xf32>, %sq: tensor<f32>)
    -> (tensor<32xf32>, tensor<8xf32>, tensor<f32>, tensor<f32>) {
  // CHECK: zero.all_gather %{{.*}} world_size(4) axis(<tensor>) : tensor<8xf32> -> tensor<32xf32>
  %a = zero.all_gather %shard world_size(4) axis(<tensor>) : tensor<8xf32> -> tensor<32xf32>
  // CHECK: zero.reduce_scatter %{{.*}} kind(<sum>) world_size(4) axis(<tensor>) : tensor<32xf32> -> tensor<8xf32>
  %r = zero.reduce_scatter %full kind(<sum>) world_size(4) axis(<tensor>) : tensor<32xf32> -> tensor<8xf32>
  // CHECK: zero.all_reduce %{{.*}} kind(<sum>) world_size(2) axis(<tensor>) : tensor<f32>
  %t = zero.all_reduce %sq kind(<sum>) world_size(2) axis(<tensor>) : tensor<f32>
  // The default axis is not printed.
  // CHECK: zero.all_reduce %{{.*}} kind(<sum>) world_size(2) : tensor<f32>
  %d = zero.all_reduce %sq kind(<sum>) world_size(2) axis(<data>) : tensor<f32>
  return %a, %r, %t, %d : tensor<32xf32>, tensor<8xf32>, tensor<f32>, tensor<f32>
}

// -----

// CHECK-LABEL: func.func @split_axes
func.func @split_axes(%shard: tensor<8xf32>, %full: tensor<32xf32>, %x: tensor<f32>)
    -> (tensor<32xf32>, tensor<8xf32>, tensor<f32>) {
  // CHECK: zero.all_gather_start %{{.*}} world_size(4) axis(<tensor>) : tensor<8xf32> -> !zero.pending<tensor<32xf32>>
  %pa = zero.all_gather_start %shard world_size(4) axis(<tensor>) : tensor<8xf32> -> !zero.pending<tensor<32xf32>>
  // CHECK: zero.reduce_scatter_start %{{.*}} kind(<avg>) world_size(4) axis(<tensor>) : tensor<32xf32> -> !zero.pending<tensor<8xf32>>
  %pr = zero.reduce_scatter_start %full kind(<avg>) world_size(4) axis(<tensor>) : tensor<32xf32> -> !zero.pending<tensor<8xf32>>
  // CHECK: zero.all_reduce_start %{{.*}} kind(<sum>) world_size(2) axis(<tensor>) : tensor<f32> -> !zero.pending<tensor<f32>>
  %pn = zero.all_reduce_start %x kind(<sum>) world_size(2) axis(<tensor>) : tensor<f32> -> !zero.pending<tensor<f32>>
  %a = zero.wait %pa : !zero.pending<tensor<32xf32>>
  %r = zero.wait %pr : !zero.pending<tensor<8xf32>>
  %n = zero.wait %pn : !zero.pending<tensor<f32>>
  return %a, %r, %n : tensor<32xf32>, tensor<8xf32>, tensor<f32>
}
