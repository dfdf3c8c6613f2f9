// RUN: zero-opt %s -split-input-file --zero-tensor-parallel="size=2 world-size=4" | FileCheck %s

// The Llama / Qwen MLP: gate and up column-parallel (rows of [F, C] cut in
// two, F = 8 -> 4), SwiGLU on this rank's 4 columns, down row-parallel
// (columns of [C, F] cut), one f before both projections, g after down.

// CHECK: module attributes {zero.mesh = #zero.mesh<data = 2, tensor = 2>}
// CHECK: train.param @gate : tensor<4x4xf32> {{.*}}zero.tensor_split = #zero.tensor_split<dim = 0, blocks = 1, parts = 2, full = [8, 4]>
// CHECK: train.param @up : tensor<4x4xf32> {{.*}}zero.tensor_split = #zero.tensor_split<dim = 0, blocks = 1, parts = 2, full = [8, 4]>
// CHECK: train.param @down : tensor<4x4xf32> {{.*}}zero.tensor_split = #zero.tensor_split<dim = 1, blocks = 1, parts = 2, full = [4, 8]>
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<1x2x4xf32>
// CHECK: %[[XF:.*]] = zero.tp_f %[[X]] size(2) : tensor<1x2x4xf32>
// CHECK: %[[G:.*]] = train.matmul %[[XF]], %{{.*}} {transpose_b} : tensor<1x2x4xf32>, tensor<4x4xf32> -> tensor<1x2x4xf32>
// CHECK: %[[U:.*]] = train.matmul %[[XF]], %{{.*}} {transpose_b} : tensor<1x2x4xf32>, tensor<4x4xf32> -> tensor<1x2x4xf32>
// CHECK: %[[H:.*]] = train.swiglu %[[G]], %[[U]] : tensor<1x2x4xf32>
// CHECK: %[[P:.*]] = train.matmul %[[H]], %{{.*}} {transpose_b} : tensor<1x2x4xf32>, tensor<4x4xf32> -> tensor<1x2x4xf32>
// CHECK: %[[Y:.*]] = zero.tp_g %[[P]] size(2) : tensor<1x2x4xf32>
// CHECK: train.mse %[[Y]]
// CHECK-NOT: zero.tp_
module {
  train.param @gate : tensor<8x4xf32> init(<zeros>) trainable
  train.param @up : tensor<8x4xf32> init(<zeros>) trainable
  train.param @down : tensor<4x8xf32> init(<zeros>) trainable
  func.func @forward(%x: tensor<1x2x4xf32>, %t: tensor<1x2x4xf32>) -> tensor<f32> {
    %wg = train.load @gate : tensor<8x4xf32>
    %g = train.matmul %x, %wg {transpose_b} : tensor<1x2x4xf32>, tensor<8x4xf32> -> tensor<1x2x8xf32>
    %wu = train.load @up : tensor<8x4xf32>
    %u = train.matmul %x, %wu {transpose_b} : tensor<1x2x4xf32>, tensor<8x4xf32> -> tensor<1x2x8xf32>
    %h = train.swiglu %g, %u : tensor<1x2x8xf32>
    %wd = train.load @down : tensor<4x8xf32>
    %y = train.matmul %h, %wd {transpose_b} : tensor<1x2x8xf32>, tensor<4x8xf32> -> tensor<1x2x4xf32>
    %l = train.mse %y, %t : tensor<1x2x4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Grouped-query attention with Qwen3's QK-norm (4 query heads, 2 key/value
// heads of size 2, width 8): q, k and v column-parallel by heads (rank t
// keeps query heads [2t, 2t+2) and key/value head t), the paths to the
// attention carry 2 and 1 heads, the output projection is row-parallel.
// The QK-norm weights stay whole but go through f: their gradient is
// summed over the tensor axis (each rank normalizes only its heads).

// CHECK: train.param @q : tensor<4x8xf32> {{.*}}#zero.tensor_split<dim = 0, blocks = 1, parts = 2, full = [8, 8]>
// CHECK: train.param @k : tensor<2x8xf32> {{.*}}#zero.tensor_split<dim = 0, blocks = 1, parts = 2, full = [4, 8]>
// CHECK: train.param @v : tensor<2x8xf32> {{.*}}#zero.tensor_split<dim = 0, blocks = 1, parts = 2, full = [4, 8]>
// CHECK: train.param @qn : tensor<2xf32> init(<ones>) trainable{{$}}
// CHECK: train.param @o : tensor<8x4xf32> {{.*}}#zero.tensor_split<dim = 1, blocks = 1, parts = 2, full = [8, 8]>
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<1x3x8xf32>
// CHECK: %[[XF:.*]] = zero.tp_f %[[X]] size(2) : tensor<1x3x8xf32>
// CHECK: %[[Q:.*]] = train.matmul %[[XF]], %{{.*}} -> tensor<1x3x4xf32>
// CHECK: %[[Q4:.*]] = train.reshape %[[Q]] : tensor<1x3x4xf32> -> tensor<1x3x2x2xf32>
// CHECK: %[[QN:.*]] = train.load @qn : tensor<2xf32>
// CHECK: %[[QNF:.*]] = zero.tp_f %[[QN]] size(2) : tensor<2xf32>
// CHECK: train.rms_norm %[[Q4]], %[[QNF]] {{.*}} : tensor<1x3x2x2xf32>, tensor<2xf32>
// CHECK: train.rope {{.*}} : tensor<1x3x2x2xf32>, tensor<3x1x2xf32>
// CHECK: train.transpose {{.*}} -> tensor<1x2x3x2xf32>
// CHECK: train.matmul %[[XF]], %{{.*}} -> tensor<1x3x2xf32>
// CHECK: train.reshape {{.*}} -> tensor<1x3x1x2xf32>
// CHECK: train.matmul %[[XF]], %{{.*}} -> tensor<1x3x2xf32>
// CHECK: %[[A:.*]], %{{.*}} = train.causal_attention {{.*}} : tensor<1x2x3x2xf32>, tensor<1x1x3x2xf32>
// CHECK: train.transpose %[[A]] [0, 2, 1, 3] : tensor<1x2x3x2xf32> -> tensor<1x3x2x2xf32>
// CHECK: %[[M:.*]] = train.reshape {{.*}} -> tensor<1x3x4xf32>
// CHECK: %[[P:.*]] = train.matmul %[[M]], %{{.*}} {transpose_b} : tensor<1x3x4xf32>, tensor<8x4xf32> -> tensor<1x3x8xf32>
// CHECK: %[[Y:.*]] = zero.tp_g %[[P]] size(2) : tensor<1x3x8xf32>
// CHECK: train.mse %[[Y]]
module {
  train.param @q : tensor<8x8xf32> init(<zeros>) trainable
  train.param @k : tensor<4x8xf32> init(<zeros>) trainable
  train.param @v : tensor<4x8xf32> init(<zeros>) trainable
  train.param @qn : tensor<2xf32> init(<ones>) trainable
  train.param @o : tensor<8x8xf32> init(<zeros>) trainable
  func.func @forward(%x: tensor<1x3x8xf32>, %t: tensor<1x3x8xf32>) -> tensor<f32> {
    %tab = train.rope_table theta(1.000000e+04) : tensor<3x1x2xf32>
    %wq = train.load @q : tensor<8x8xf32>
    %q = train.matmul %x, %wq {transpose_b} : tensor<1x3x8xf32>, tensor<8x8xf32> -> tensor<1x3x8xf32>
    %q4 = train.reshape %q : tensor<1x3x8xf32> -> tensor<1x3x4x2xf32>
    %wqn = train.load @qn : tensor<2xf32>
    %qn = train.rms_norm %q4, %wqn eps(1.000000e-06) : tensor<1x3x4x2xf32>, tensor<2xf32>
    %qr = train.rope %qn, %tab layout(<rotate_half>) : tensor<1x3x4x2xf32>, tensor<3x1x2xf32>
    %qt = train.transpose %qr [0, 2, 1, 3] : tensor<1x3x4x2xf32> -> tensor<1x4x3x2xf32>
    %wk = train.load @k : tensor<4x8xf32>
    %k = train.matmul %x, %wk {transpose_b} : tensor<1x3x8xf32>, tensor<4x8xf32> -> tensor<1x3x4xf32>
    %k4 = train.reshape %k : tensor<1x3x4xf32> -> tensor<1x3x2x2xf32>
    %kr = train.rope %k4, %tab layout(<rotate_half>) : tensor<1x3x2x2xf32>, tensor<3x1x2xf32>
    %kt = train.transpose %kr [0, 2, 1, 3] : tensor<1x3x2x2xf32> -> tensor<1x2x3x2xf32>
    %wv = train.load @v : tensor<4x8xf32>
    %v = train.matmul %x, %wv {transpose_b} : tensor<1x3x8xf32>, tensor<4x8xf32> -> tensor<1x3x4xf32>
    %v4 = train.reshape %v : tensor<1x3x4xf32> -> tensor<1x3x2x2xf32>
    %vt = train.transpose %v4 [0, 2, 1, 3] : tensor<1x3x2x2xf32> -> tensor<1x2x3x2xf32>
    %a, %lse = train.causal_attention %qt, %kt, %vt : tensor<1x4x3x2xf32>, tensor<1x2x3x2xf32>
    %at = train.transpose %a [0, 2, 1, 3] : tensor<1x4x3x2xf32> -> tensor<1x3x4x2xf32>
    %am = train.reshape %at : tensor<1x3x4x2xf32> -> tensor<1x3x8xf32>
    %wo = train.load @o : tensor<8x8xf32>
    %y = train.matmul %am, %wo {transpose_b} : tensor<1x3x8xf32>, tensor<8x8xf32> -> tensor<1x3x8xf32>
    %l = train.mse %y, %t : tensor<1x3x8xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
