// RUN: zero-opt %s -split-input-file --zero-tensor-parallel="size=2 world-size=4" | FileCheck %s

// An MLP region: c_fc column-parallel (rows of its weight, its bias), GELU
// local, c_proj row-parallel (columns of its weight) without its bias, g,
// then the bias once. f at the region's input.

// CHECK: module attributes {zero.mesh = #zero.mesh<data = 2, tensor = 2>}
// CHECK: train.param @h0.fc.weight : tensor<8x8xf32> {{.*}} {zero.tensor_split = #zero.tensor_split<dim = 0, blocks = 1, parts = 2, full = [16, 8]>}
// CHECK: train.param @h0.fc.bias : tensor<8xf32> {{.*}} {zero.tensor_split = #zero.tensor_split<dim = 0, blocks = 1, parts = 2, full = [16]>}
// CHECK: train.param @h0.proj.weight : tensor<8x8xf32> {{.*}} {zero.tensor_split = #zero.tensor_split<dim = 1, blocks = 1, parts = 2, full = [8, 16]>}
// CHECK: train.param @h0.proj.bias : tensor<8xf32> init(<zeros>) trainable{{$}}
// CHECK-LABEL: func.func @forward
// CHECK: %[[W1:.*]] = train.load @h0.fc.weight : tensor<8x8xf32>
// CHECK: %[[B1:.*]] = train.load @h0.fc.bias : tensor<8xf32>
// CHECK: %[[X:.*]] = zero.tp_f %arg0 size(2) : tensor<2x4x8xf32>
// CHECK: %[[H:.*]] = train.matmul %[[X]], %[[W1]] bias %[[B1]] {transpose_b} : tensor<2x4x8xf32>, tensor<8x8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
// CHECK: %[[G:.*]] = train.gelu %[[H]] : tensor<2x4x8xf32>
// CHECK: %[[W2:.*]] = train.load @h0.proj.weight : tensor<8x8xf32>
// CHECK: %[[B2:.*]] = train.load @h0.proj.bias : tensor<8xf32>
// CHECK: %[[P:.*]] = train.matmul %[[G]], %[[W2]] {transpose_b} : tensor<2x4x8xf32>, tensor<8x8xf32> -> tensor<2x4x8xf32>
// CHECK: %[[S:.*]] = zero.tp_g %[[P]] size(2) : tensor<2x4x8xf32>
// CHECK: %[[BB:.*]] = train.broadcast %[[B2]] : tensor<8xf32> -> tensor<2x4x8xf32>
// CHECK: %[[Y:.*]] = train.add %[[S]], %[[BB]] : tensor<2x4x8xf32>
// CHECK: train.mse %[[Y]], %arg1
module {
  train.param @h0.fc.weight : tensor<16x8xf32> init(<normal, 2.000000e-02>) trainable
  train.param @h0.fc.bias : tensor<16xf32> init(<zeros>) trainable
  train.param @h0.proj.weight : tensor<8x16xf32> init(<normal, 2.000000e-02>) trainable
  train.param @h0.proj.bias : tensor<8xf32> init(<zeros>) trainable
  func.func @forward(%x: tensor<2x4x8xf32>, %t: tensor<2x4x8xf32>) -> tensor<f32> {
    %w1 = train.load @h0.fc.weight : tensor<16x8xf32>
    %b1 = train.load @h0.fc.bias : tensor<16xf32>
    %h = train.matmul %x, %w1 bias %b1 {transpose_b} : tensor<2x4x8xf32>, tensor<16x8xf32>, tensor<16xf32> -> tensor<2x4x16xf32>
    %g = train.gelu %h : tensor<2x4x16xf32>
    %w2 = train.load @h0.proj.weight : tensor<8x16xf32>
    %b2 = train.load @h0.proj.bias : tensor<8xf32>
    %y = train.matmul %g, %w2 bias %b2 {transpose_b} : tensor<2x4x16xf32>, tensor<8x16xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
    %l = train.mse %y, %t : tensor<2x4x8xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// An attention region: q/k/v column-parallel by heads (blocks = 3), the
// attention on H/M heads, the output projection row-parallel with g.

// CHECK: train.param @h0.qkv.weight : tensor<12x8xf32> {{.*}} {zero.tensor_split = #zero.tensor_split<dim = 0, blocks = 3, parts = 2, full = [24, 8]>}
// CHECK: train.param @h0.qkv.bias : tensor<12xf32> {{.*}} {zero.tensor_split = #zero.tensor_split<dim = 0, blocks = 3, parts = 2, full = [24]>}
// CHECK: train.param @h0.o.weight : tensor<8x4xf32> {{.*}} {zero.tensor_split = #zero.tensor_split<dim = 1, blocks = 1, parts = 2, full = [8, 8]>}
// CHECK-LABEL: func.func @forward
// CHECK: %[[X:.*]] = zero.tp_f %arg0 size(2) : tensor<2x4x8xf32>
// CHECK: %[[QKV:.*]] = train.matmul %[[X]], %{{.*}} bias %{{.*}} {transpose_b} : tensor<2x4x8xf32>, tensor<12x8xf32>, tensor<12xf32> -> tensor<2x4x12xf32>
// CHECK: %[[A:.*]], %{{.*}} = train.causal_attention_packed %[[QKV]] heads(2) : tensor<2x4x12xf32> -> tensor<2x4x4xf32>, tensor<2x2x4xf32>
// CHECK: %[[P:.*]] = train.matmul %[[A]], %{{.*}} {transpose_b} : tensor<2x4x4xf32>, tensor<8x4xf32> -> tensor<2x4x8xf32>
// CHECK: %[[S:.*]] = zero.tp_g %[[P]] size(2) : tensor<2x4x8xf32>
// CHECK: train.add %[[S]], %{{.*}} : tensor<2x4x8xf32>
module {
  train.param @h0.qkv.weight : tensor<24x8xf32> init(<normal, 2.000000e-02>) trainable
  train.param @h0.qkv.bias : tensor<24xf32> init(<zeros>) trainable
  train.param @h0.o.weight : tensor<8x8xf32> init(<normal, 2.000000e-02>) trainable
  train.param @h0.o.bias : tensor<8xf32> init(<zeros>) trainable
  func.func @forward(%x: tensor<2x4x8xf32>, %t: tensor<2x4x8xf32>) -> tensor<f32> {
    %w1 = train.load @h0.qkv.weight : tensor<24x8xf32>
    %b1 = train.load @h0.qkv.bias : tensor<24xf32>
    %qkv = train.matmul %x, %w1 bias %b1 {transpose_b} : tensor<2x4x8xf32>, tensor<24x8xf32>, tensor<24xf32> -> tensor<2x4x24xf32>
    %a, %lse = train.causal_attention_packed %qkv heads(4) : tensor<2x4x24xf32> -> tensor<2x4x8xf32>, tensor<2x4x4xf32>
    %w2 = train.load @h0.o.weight : tensor<8x8xf32>
    %b2 = train.load @h0.o.bias : tensor<8xf32>
    %y = train.matmul %a, %w2 bias %b2 {transpose_b} : tensor<2x4x8xf32>, tensor<8x8xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
    %l = train.mse %y, %t : tensor<2x4x8xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
