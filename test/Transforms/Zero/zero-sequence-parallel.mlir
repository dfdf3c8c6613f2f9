// RUN: zero-opt %s -split-input-file --zero-sequence-parallel | FileCheck %s

// A pre-LN MLP block as zero-tensor-parallel leaves it (M = 2; B = 2,
// T = 4, C = 8, F = 16), then a final norm and a replicated head. The
// embeddings' sum is split once; the norms and residual adds run on the
// R = 4 rows of this rank with their weights through tp_f; g becomes a
// reduce-scatter, f an all-gather, and the head reads the rows gathered
// whole with the slice gradient.
module attributes {zero.mesh = #zero.mesh<data = 1, tensor = 2>} {
  train.param @wte : tensor<32x8xf32> init(<normal, 2.000000e-02>) trainable
  train.param @wpe : tensor<4x8xf32> init(<normal, 2.000000e-02>) trainable
  train.param @ln.weight : tensor<8xf32> init(<ones>) trainable
  train.param @ln.bias : tensor<8xf32> init(<zeros>) trainable
  train.param @fc.weight : tensor<8x8xf32> init(<normal, 2.000000e-02>) trainable {zero.tensor_split = #zero.tensor_split<dim = 0, blocks = 1, parts = 2, full = [16, 8]>}
  train.param @proj.weight : tensor<8x8xf32> init(<normal, 2.000000e-02>) trainable {zero.tensor_split = #zero.tensor_split<dim = 1, blocks = 1, parts = 2, full = [8, 16]>}
  train.param @proj.bias : tensor<8xf32> init(<zeros>) trainable
  train.param @ln_f.weight : tensor<8xf32> init(<ones>) trainable
  train.param @ln_f.bias : tensor<8xf32> init(<zeros>) trainable
  func.func @forward(%ids: tensor<2x4xi32>, %t: tensor<2x4xi32>) -> tensor<f32> {
    %wte = train.load @wte : tensor<32x8xf32>
    %e = train.embedding %wte, %ids : tensor<32x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
    %wpe = train.load @wpe : tensor<4x8xf32>
    %p = train.broadcast %wpe : tensor<4x8xf32> -> tensor<2x4x8xf32>
    %x = train.add %e, %p : tensor<2x4x8xf32>
    %lw = train.load @ln.weight : tensor<8xf32>
    %lb = train.load @ln.bias : tensor<8xf32>
    %n = train.layer_norm %x, %lw, %lb eps(1.000000e-05) : tensor<2x4x8xf32>, tensor<8xf32>
    %nf = zero.tp_f %n size(2) : tensor<2x4x8xf32>
    %w1 = train.load @fc.weight : tensor<8x8xf32>
    %h = train.matmul %nf, %w1 {transpose_b} : tensor<2x4x8xf32>, tensor<8x8xf32> -> tensor<2x4x8xf32>
    %a = train.gelu %h : tensor<2x4x8xf32>
    %w2 = train.load @proj.weight : tensor<8x8xf32>
    %part = train.matmul %a, %w2 {transpose_b} : tensor<2x4x8xf32>, tensor<8x8xf32> -> tensor<2x4x8xf32>
    %y = zero.tp_g %part size(2) : tensor<2x4x8xf32>
    %b2 = train.load @proj.bias : tensor<8xf32>
    %bb = train.broadcast %b2 : tensor<8xf32> -> tensor<2x4x8xf32>
    %yb = train.add %y, %bb : tensor<2x4x8xf32>
    %x2 = train.add %x, %yb : tensor<2x4x8xf32>
    %fw = train.load @ln_f.weight : tensor<8xf32>
    %fb = train.load @ln_f.bias : tensor<8xf32>
    %o = train.layer_norm %x2, %fw, %fb eps(1.000000e-05) : tensor<2x4x8xf32>, tensor<8xf32>
    %l = train.matmul %o, %wte {transpose_b} : tensor<2x4x8xf32>, tensor<32x8xf32> -> tensor<2x4x32xf32>
    %r = train.reshape %l : tensor<2x4x32xf32> -> tensor<8x32xf32>
    %tr = train.reshape %t : tensor<2x4xi32> -> tensor<8xi32>
    %loss = train.cross_entropy %r, %tr : tensor<8x32xf32>, tensor<8xi32> -> tensor<f32>
    return %loss : tensor<f32>
  }
}

// CHECK-LABEL: func.func @forward
// CHECK:      %[[X:.*]] = train.add %{{.*}}, %{{.*}} : tensor<2x4x8xf32>
// CHECK:      %[[XS:.*]] = zero.sp_split %[[X]] size(2) : tensor<2x4x8xf32> -> tensor<4x8xf32>
// CHECK:      %[[LW:.*]] = zero.tp_f %{{.*}} size(2) : tensor<8xf32>
// CHECK:      %[[LB:.*]] = zero.tp_f %{{.*}} size(2) : tensor<8xf32>
// CHECK:      %[[N:.*]] = train.layer_norm %[[XS]], %[[LW]], %[[LB]] eps(1.000000e-05) : tensor<4x8xf32>, tensor<8xf32>
// CHECK:      %[[NF:.*]] = zero.sp_gather %[[N]] size(2) : tensor<4x8xf32> -> tensor<2x4x8xf32>
// CHECK:      train.matmul %[[NF]], %{{.*}} {transpose_b}
// CHECK:      %[[PART:.*]] = train.matmul
// CHECK-NEXT: %[[Y:.*]] = zero.sp_scatter %[[PART]] size(2) : tensor<2x4x8xf32> -> tensor<4x8xf32>
// CHECK:      %[[B:.*]] = zero.tp_f %{{.*}} size(2) : tensor<8xf32>
// CHECK-NEXT: %[[BB:.*]] = train.broadcast %[[B]] : tensor<8xf32> -> tensor<4x8xf32>
// CHECK-NEXT: %[[YB:.*]] = train.add %[[Y]], %[[BB]] : tensor<4x8xf32>
// CHECK-NEXT: %[[X2:.*]] = train.add %[[XS]], %[[YB]] : tensor<4x8xf32>
// CHECK:      %[[O:.*]] = train.layer_norm %[[X2]], %{{.*}}, %{{.*}} eps(1.000000e-05) : tensor<4x8xf32>, tensor<8xf32>
// CHECK-NEXT: %[[OW:.*]] = zero.sp_gather %[[O]] size(2) {slice_grad} : tensor<4x8xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT: train.matmul %[[OW]], %{{.*}} {transpose_b} : tensor<2x4x8xf32>, tensor<32x8xf32> -> tensor<2x4x32xf32>
// CHECK-NOT:  zero.tp_g
// CHECK-NOT:  train.broadcast %{{.*}} : tensor<8xf32> -> tensor<2x4x8xf32>
// CHECK:      return

// -----

// A decoder's stream (RMS norms, M = 2): the vocabulary-parallel
// embedding's g becomes the reduce-scatter that starts the rows, as in
// Megatron; a tp_f outside the rows (a function argument's) stays.
module attributes {zero.mesh = #zero.mesh<data = 1, tensor = 2>} {
  train.param @norm.weight : tensor<8xf32> init(<ones>) trainable
  train.param @w.weight : tensor<8x8xf32> init(<normal, 2.000000e-02>) trainable {zero.tensor_split = #zero.tensor_split<dim = 0, blocks = 1, parts = 2, full = [16, 8]>}
  train.param @wo.weight : tensor<8x8xf32> init(<normal, 2.000000e-02>) trainable {zero.tensor_split = #zero.tensor_split<dim = 1, blocks = 1, parts = 2, full = [8, 16]>}
  func.func @forward(%ids: tensor<1x4xi32>, %part0: tensor<1x4x8xf32>, %z: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
    %x = zero.tp_g %part0 size(2) : tensor<1x4x8xf32>
    %nw = train.load @norm.weight : tensor<8xf32>
    %n = train.rms_norm %x, %nw eps(1.000000e-05) : tensor<1x4x8xf32>, tensor<8xf32>
    %nf = zero.tp_f %n size(2) : tensor<1x4x8xf32>
    %w = train.load @w.weight : tensor<8x8xf32>
    %h = train.matmul %nf, %w {transpose_b} : tensor<1x4x8xf32>, tensor<8x8xf32> -> tensor<1x4x8xf32>
    %wo = train.load @wo.weight : tensor<8x8xf32>
    %p = train.matmul %h, %wo {transpose_b} : tensor<1x4x8xf32>, tensor<8x8xf32> -> tensor<1x4x8xf32>
    %y = zero.tp_g %p size(2) : tensor<1x4x8xf32>
    %x2 = train.add %x, %y : tensor<1x4x8xf32>
    %zf = zero.tp_f %z size(2) : tensor<1x4x8xf32>
    %out = train.add %x2, %zf : tensor<1x4x8xf32>
    return %out : tensor<1x4x8xf32>
  }
}

// CHECK-LABEL: func.func @forward
// CHECK:      %[[X:.*]] = zero.sp_scatter %arg1 size(2) : tensor<1x4x8xf32> -> tensor<2x8xf32>
// CHECK:      %[[W:.*]] = zero.tp_f %{{.*}} size(2) : tensor<8xf32>
// CHECK-NEXT: %[[N:.*]] = train.rms_norm %[[X]], %[[W]] eps(1.000000e-05) : tensor<2x8xf32>, tensor<8xf32>
// CHECK:      zero.sp_gather %[[N]] size(2) : tensor<2x8xf32> -> tensor<1x4x8xf32>
// CHECK:      %[[Y:.*]] = zero.sp_scatter %{{.*}} size(2) : tensor<1x4x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT: %[[X2:.*]] = train.add %[[X]], %[[Y]] : tensor<2x8xf32>
// CHECK-NEXT: %[[ZF:.*]] = zero.tp_f %arg2 size(2) : tensor<1x4x8xf32>
// CHECK-NEXT: %[[ZS:.*]] = zero.sp_split %[[ZF]] size(2) : tensor<1x4x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT: %[[OUT:.*]] = train.add %[[X2]], %[[ZS]] : tensor<2x8xf32>
// CHECK-NEXT: %[[OW:.*]] = zero.sp_gather %[[OUT]] size(2) {slice_grad} : tensor<2x8xf32> -> tensor<1x4x8xf32>
// CHECK-NEXT: return %[[OW]]
