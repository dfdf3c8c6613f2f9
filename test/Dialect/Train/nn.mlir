// RUN: zero-opt %s -split-input-file | FileCheck %s
// RUN: zero-opt %s -split-input-file | zero-opt -split-input-file | FileCheck %s
// RUN: zero-opt %s -split-input-file -mlir-print-op-generic | zero-opt -split-input-file | FileCheck %s

//===----------------------------------------------------------------------===//
// train.layer_norm / train.layer_norm_grad
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: (%[[X:.*]]: tensor<4x32x64xf32>, %[[W:.*]]: tensor<64xf32>, %[[B:.*]]: tensor<64xf32>, %[[V:.*]]: tensor<8xbf16>, %[[VW:.*]]: tensor<8xbf16>)
func.func @layer_norm(%x: tensor<4x32x64xf32>, %w: tensor<64xf32>, %b: tensor<64xf32>,
                      %v: tensor<8xbf16>, %vw: tensor<8xbf16>)
    -> (tensor<4x32x64xf32>, tensor<8xbf16>) {
  // CHECK: %[[Y:.*]] = train.layer_norm %[[X]], %[[W]], %[[B]] eps(1.000000e-05) : tensor<4x32x64xf32>, tensor<64xf32>
  %y = train.layer_norm %x, %w, %b eps(1.0e-05) : tensor<4x32x64xf32>, tensor<64xf32>
  // A rank-1 input is one row.
  // CHECK: %[[Z:.*]] = train.layer_norm %[[V]], %[[VW]], %[[VW]] eps(1.000000e-01) : tensor<8xbf16>, tensor<8xbf16>
  %z = train.layer_norm %v, %vw, %vw eps(0.1) : tensor<8xbf16>, tensor<8xbf16>
  // CHECK: return %[[Y]], %[[Z]]
  return %y, %z : tensor<4x32x64xf32>, tensor<8xbf16>
}

// CHECK-LABEL: func.func @layer_norm_grad
// CHECK-SAME: (%[[X:.*]]: tensor<4x32x64xf32>, %[[W:.*]]: tensor<64xf32>, %[[DY:.*]]: tensor<4x32x64xf32>, %[[V:.*]]: tensor<8xf16>, %[[VW:.*]]: tensor<8xf16>)
func.func @layer_norm_grad(%x: tensor<4x32x64xf32>, %w: tensor<64xf32>, %dy: tensor<4x32x64xf32>,
                           %v: tensor<8xf16>, %vw: tensor<8xf16>)
    -> (tensor<4x32x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<8xf16>) {
  // CHECK: %[[DX:.*]], %[[DW:.*]], %[[DB:.*]] = train.layer_norm_grad %[[X]], %[[W]], %[[DY]] eps(1.000000e-05) : tensor<4x32x64xf32>, tensor<64xf32>
  %dx, %dw, %db = train.layer_norm_grad %x, %w, %dy eps(1.0e-05) : tensor<4x32x64xf32>, tensor<64xf32>
  // CHECK: %[[DV:.*]], %{{.*}}, %{{.*}} = train.layer_norm_grad %[[V]], %[[VW]], %[[V]] eps(2.000000e-03) : tensor<8xf16>, tensor<8xf16>
  %dv:3 = train.layer_norm_grad %v, %vw, %v eps(0.002) : tensor<8xf16>, tensor<8xf16>
  // CHECK: return %[[DX]], %[[DW]], %[[DB]], %[[DV]]
  return %dx, %dw, %db, %dv#0 : tensor<4x32x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<8xf16>
}

// The fused forms of train-fuse-layer-norm: the residual add and the norm,
// and the norm's gradient plus the stream's other gradient.
// CHECK-LABEL: func.func @add_layer_norm
// CHECK-SAME: (%[[X:.*]]: tensor<4x32x64xbf16>, %[[H:.*]]: tensor<4x32x64xbf16>, %[[W:.*]]: tensor<64xbf16>, %[[B:.*]]: tensor<64xbf16>, %[[DY:.*]]: tensor<4x32x64xbf16>)
func.func @add_layer_norm(%x: tensor<4x32x64xbf16>, %h: tensor<4x32x64xbf16>,
                          %w: tensor<64xbf16>, %b: tensor<64xbf16>,
                          %dy: tensor<4x32x64xbf16>)
    -> (tensor<4x32x64xbf16>, tensor<4x32x64xbf16>, tensor<4x32x64xbf16>) {
  // CHECK: %[[S:.*]], %[[Y:.*]] = train.add_layer_norm %[[X]], %[[H]], %[[W]], %[[B]] eps(1.000000e-05) : tensor<4x32x64xbf16>, tensor<64xbf16>
  %s, %y = train.add_layer_norm %x, %h, %w, %b eps(1.0e-05) : tensor<4x32x64xbf16>, tensor<64xbf16>
  // CHECK: %[[DX:.*]], %{{.*}}, %{{.*}} = train.layer_norm_grad %[[S]], %[[W]], %[[DY]] plus %[[X]] eps(1.000000e-05) : tensor<4x32x64xbf16>, tensor<64xbf16>
  %dx:3 = train.layer_norm_grad %s, %w, %dy plus %x eps(1.0e-05) : tensor<4x32x64xbf16>, tensor<64xbf16>
  // CHECK: return %[[S]], %[[Y]], %[[DX]]
  return %s, %y, %dx#0 : tensor<4x32x64xbf16>, tensor<4x32x64xbf16>, tensor<4x32x64xbf16>
}

// -----

//===----------------------------------------------------------------------===//
// train.causal_attention / train.attention_grad
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%[[Q:.*]]: tensor<4x4x32x16xf32>, %[[K:.*]]: tensor<4x4x32x16xf32>, %[[V:.*]]: tensor<4x4x32x16xf32>, %[[DO:.*]]: tensor<4x4x32x16xf32>, %[[H:.*]]: tensor<1x2x8x4xbf16>)
func.func @attention(%q: tensor<4x4x32x16xf32>, %k: tensor<4x4x32x16xf32>,
                     %v: tensor<4x4x32x16xf32>, %do: tensor<4x4x32x16xf32>,
                     %h: tensor<1x2x8x4xbf16>)
    -> (tensor<4x4x32x16xf32>, tensor<4x4x32xf32>, tensor<4x4x32x16xf32>,
        tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<1x2x8x4xbf16>,
        tensor<1x2x8xf32>, tensor<1x2x8x4xbf16>) {
  // CHECK: %[[O:.*]], %[[L:.*]] = train.causal_attention %[[Q]], %[[K]], %[[V]] : tensor<4x4x32x16xf32>
  %o, %lse = train.causal_attention %q, %k, %v : tensor<4x4x32x16xf32>
  // CHECK: %[[DQ:.*]], %[[DK:.*]], %[[DV:.*]] = train.attention_grad %[[Q]], %[[K]], %[[V]], %[[O]], %[[L]], %[[DO]] : tensor<4x4x32x16xf32>
  %dq, %dk, %dv = train.attention_grad %q, %k, %v, %o, %lse, %do : tensor<4x4x32x16xf32>
  // CHECK: %[[OH:.*]], %[[LH:.*]] = train.causal_attention %[[H]], %[[H]], %[[H]] : tensor<1x2x8x4xbf16>
  %oh:2 = train.causal_attention %h, %h, %h : tensor<1x2x8x4xbf16>
  // CHECK: %{{.*}}, %{{.*}}, %[[DVH:.*]] = train.attention_grad %[[H]], %[[H]], %[[H]], %[[OH]], %[[LH]], %[[OH]] : tensor<1x2x8x4xbf16>
  %gh:3 = train.attention_grad %h, %h, %h, %oh#0, %oh#1, %oh#0 : tensor<1x2x8x4xbf16>
  // CHECK: return %[[O]], %[[L]], %[[DQ]], %[[DK]], %[[DV]], %[[OH]], %[[LH]], %[[DVH]]
  return %o, %lse, %dq, %dk, %dv, %oh#0, %oh#1, %gh#2
      : tensor<4x4x32x16xf32>, tensor<4x4x32xf32>, tensor<4x4x32x16xf32>,
        tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<1x2x8x4xbf16>,
        tensor<1x2x8xf32>, tensor<1x2x8x4xbf16>
}

// -----

// Grouped-query attention: 4 query heads share 2 K/V heads; the K/V type is
// printed after the query's. head_dim 16 is free (not C / heads).
// CHECK-LABEL: func.func @attention_gqa
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x8x16xbf16>, %[[K:.*]]: tensor<2x2x8x16xbf16>, %[[V:.*]]: tensor<2x2x8x16xbf16>, %[[DO:.*]]: tensor<2x4x8x16xbf16>)
func.func @attention_gqa(%q: tensor<2x4x8x16xbf16>, %k: tensor<2x2x8x16xbf16>,
                         %v: tensor<2x2x8x16xbf16>, %do: tensor<2x4x8x16xbf16>)
    -> (tensor<2x4x8x16xbf16>, tensor<2x2x8x16xbf16>, tensor<2x2x8x16xbf16>) {
  // CHECK: %[[O:.*]], %[[L:.*]] = train.causal_attention %[[Q]], %[[K]], %[[V]] : tensor<2x4x8x16xbf16>, tensor<2x2x8x16xbf16>
  %o, %lse = train.causal_attention %q, %k, %v : tensor<2x4x8x16xbf16>, tensor<2x2x8x16xbf16>
  // CHECK: %[[DQ:.*]], %[[DK:.*]], %[[DV:.*]] = train.attention_grad %[[Q]], %[[K]], %[[V]], %[[O]], %[[L]], %[[DO]] : tensor<2x4x8x16xbf16>, tensor<2x2x8x16xbf16>
  %dq, %dk, %dv = train.attention_grad %q, %k, %v, %o, %lse, %do : tensor<2x4x8x16xbf16>, tensor<2x2x8x16xbf16>
  // Multi-query: one K/V head.
  // CHECK: train.causal_attention %[[Q]], %{{.*}}, %{{.*}} : tensor<2x4x8x16xbf16>, tensor<2x1x8x16xbf16>
  %k1:2 = train.split %k dim(1) : tensor<2x2x8x16xbf16> -> tensor<2x1x8x16xbf16>, tensor<2x1x8x16xbf16>
  %m, %mlse = train.causal_attention %q, %k1#0, %k1#1 : tensor<2x4x8x16xbf16>, tensor<2x1x8x16xbf16>
  // CHECK: return %[[DQ]], %[[DK]], %[[DV]]
  return %dq, %dk, %dv : tensor<2x4x8x16xbf16>, tensor<2x2x8x16xbf16>, tensor<2x2x8x16xbf16>
}

// -----

// CHECK-LABEL: func.func @attention_packed
// CHECK-SAME: (%[[QKV:.*]]: tensor<4x32x48xf32>, %[[DY:.*]]: tensor<4x32x16xf32>, %[[H:.*]]: tensor<1x8x24xbf16>)
func.func @attention_packed(%qkv: tensor<4x32x48xf32>, %dy: tensor<4x32x16xf32>,
                            %h: tensor<1x8x24xbf16>)
    -> (tensor<4x32x48xf32>, tensor<1x8x24xbf16>) {
  // CHECK: %[[Y:.*]], %[[L:.*]] = train.causal_attention_packed %[[QKV]] heads(2) : tensor<4x32x48xf32> -> tensor<4x32x16xf32>, tensor<4x2x32xf32>
  %y, %lse = train.causal_attention_packed %qkv heads(2) : tensor<4x32x48xf32> -> tensor<4x32x16xf32>, tensor<4x2x32xf32>
  // CHECK: %[[DQKV:.*]] = train.attention_packed_grad %[[QKV]], %[[Y]], %[[L]], %[[DY]] heads(2) : tensor<4x32x48xf32>, tensor<4x32x16xf32>, tensor<4x2x32xf32>
  %dqkv = train.attention_packed_grad %qkv, %y, %lse, %dy heads(2) : tensor<4x32x48xf32>, tensor<4x32x16xf32>, tensor<4x2x32xf32>
  // CHECK: %[[YH:.*]], %[[LH:.*]] = train.causal_attention_packed %[[H]] heads(4) : tensor<1x8x24xbf16> -> tensor<1x8x8xbf16>, tensor<1x4x8xf32>
  %yh, %lh = train.causal_attention_packed %h heads(4) : tensor<1x8x24xbf16> -> tensor<1x8x8xbf16>, tensor<1x4x8xf32>
  // CHECK: train.attention_packed_grad %[[H]], %[[YH]], %[[LH]], %[[YH]] heads(4) : tensor<1x8x24xbf16>, tensor<1x8x8xbf16>, tensor<1x4x8xf32>
  %dh = train.attention_packed_grad %h, %yh, %lh, %yh heads(4) : tensor<1x8x24xbf16>, tensor<1x8x8xbf16>, tensor<1x4x8xf32>
  return %dqkv, %dh : tensor<4x32x48xf32>, tensor<1x8x24xbf16>
}

// -----

//===----------------------------------------------------------------------===//
// train.cross_entropy / train.cross_entropy_grad
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @cross_entropy
// CHECK-SAME: (%[[L:.*]]: tensor<128x256xf32>, %[[T:.*]]: tensor<128xi32>, %[[LB:.*]]: tensor<2x10xbf16>, %[[TB:.*]]: tensor<2xi32>)
func.func @cross_entropy(%logits: tensor<128x256xf32>, %t: tensor<128xi32>,
                         %lb: tensor<2x10xbf16>, %tb: tensor<2xi32>)
    -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) {
  // CHECK: %[[A:.*]] = train.cross_entropy %[[L]], %[[T]] : tensor<128x256xf32>, tensor<128xi32> -> tensor<f32>
  %a = train.cross_entropy %logits, %t : tensor<128x256xf32>, tensor<128xi32> -> tensor<f32>
  // Only the first 250 columns are classes; the rest is padding.
  // CHECK: %[[B:.*]] = train.cross_entropy %[[L]], %[[T]] {num_classes = 250 : i64} : tensor<128x256xf32>, tensor<128xi32> -> tensor<f32>
  %b = train.cross_entropy %logits, %t {num_classes = 250 : i64} : tensor<128x256xf32>, tensor<128xi32> -> tensor<f32>
  // num_classes may equal V.
  // CHECK: %[[C:.*]] = train.cross_entropy %[[L]], %[[T]] {num_classes = 256 : i64} : tensor<128x256xf32>, tensor<128xi32> -> tensor<f32>
  %c = train.cross_entropy %logits, %t {num_classes = 256 : i64} : tensor<128x256xf32>, tensor<128xi32> -> tensor<f32>
  // Narrow logits still give an f32 loss.
  // CHECK: %[[D:.*]] = train.cross_entropy %[[LB]], %[[TB]] : tensor<2x10xbf16>, tensor<2xi32> -> tensor<f32>
  %d = train.cross_entropy %lb, %tb : tensor<2x10xbf16>, tensor<2xi32> -> tensor<f32>
  // CHECK: return %[[A]], %[[B]], %[[C]], %[[D]]
  return %a, %b, %c, %d : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
}

// Hugging Face labels: targets equal to -100 count neither in the sum nor in
// the mean.
// CHECK-LABEL: func.func @cross_entropy_ignore_index
// CHECK-SAME: (%[[L:.*]]: tensor<128x256xf32>, %[[T:.*]]: tensor<128xi32>, %[[DL:.*]]: tensor<f32>)
func.func @cross_entropy_ignore_index(%logits: tensor<128x256xf32>, %t: tensor<128xi32>, %dloss: tensor<f32>)
    -> (tensor<f32>, tensor<128x256xf32>) {
  // CHECK: %[[A:.*]] = train.cross_entropy %[[L]], %[[T]] {ignore_index = -100 : i64} : tensor<128x256xf32>, tensor<128xi32> -> tensor<f32>
  %a = train.cross_entropy %logits, %t {ignore_index = -100 : i64} : tensor<128x256xf32>, tensor<128xi32> -> tensor<f32>
  // CHECK: %[[B:.*]] = train.cross_entropy_grad %[[L]], %[[T]], %[[DL]] {ignore_index = -100 : i64, num_classes = 250 : i64} : tensor<128x256xf32>, tensor<128xi32>
  %b = train.cross_entropy_grad %logits, %t, %dloss {num_classes = 250 : i64, ignore_index = -100 : i64} : tensor<128x256xf32>, tensor<128xi32>
  // CHECK: return %[[A]], %[[B]]
  return %a, %b : tensor<f32>, tensor<128x256xf32>
}

// CHECK-LABEL: func.func @cross_entropy_grad
// CHECK-SAME: (%[[L:.*]]: tensor<128x256xf32>, %[[T:.*]]: tensor<128xi32>, %[[DL:.*]]: tensor<f32>, %[[LB:.*]]: tensor<2x10xbf16>, %[[TB:.*]]: tensor<2xi32>)
func.func @cross_entropy_grad(%logits: tensor<128x256xf32>, %t: tensor<128xi32>, %dloss: tensor<f32>,
                              %lb: tensor<2x10xbf16>, %tb: tensor<2xi32>)
    -> (tensor<128x256xf32>, tensor<128x256xf32>, tensor<2x10xbf16>) {
  // CHECK: %[[A:.*]] = train.cross_entropy_grad %[[L]], %[[T]], %[[DL]] : tensor<128x256xf32>, tensor<128xi32>
  %a = train.cross_entropy_grad %logits, %t, %dloss : tensor<128x256xf32>, tensor<128xi32>
  // CHECK: %[[B:.*]] = train.cross_entropy_grad %[[L]], %[[T]], %[[DL]] {num_classes = 250 : i64} : tensor<128x256xf32>, tensor<128xi32>
  %b = train.cross_entropy_grad %logits, %t, %dloss {num_classes = 250 : i64} : tensor<128x256xf32>, tensor<128xi32>
  // CHECK: %[[C:.*]] = train.cross_entropy_grad %[[LB]], %[[TB]], %[[DL]] : tensor<2x10xbf16>, tensor<2xi32>
  %c = train.cross_entropy_grad %lb, %tb, %dloss : tensor<2x10xbf16>, tensor<2xi32>
  // CHECK: return %[[A]], %[[B]], %[[C]]
  return %a, %b, %c : tensor<128x256xf32>, tensor<128x256xf32>, tensor<2x10xbf16>
}

// -----

//===----------------------------------------------------------------------===//
// train.mse / train.mse_grad
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @mse
// CHECK-SAME: (%[[Y:.*]]: tensor<16x4xf32>, %[[T:.*]]: tensor<16x4xf32>, %[[DL:.*]]: tensor<f32>, %[[H:.*]]: tensor<3xf16>)
func.func @mse(%y: tensor<16x4xf32>, %t: tensor<16x4xf32>, %dl: tensor<f32>, %h: tensor<3xf16>)
    -> (tensor<f32>, tensor<16x4xf32>, tensor<f32>, tensor<3xf16>) {
  // CHECK: %[[L:.*]] = train.mse %[[Y]], %[[T]] : tensor<16x4xf32> -> tensor<f32>
  %l = train.mse %y, %t : tensor<16x4xf32> -> tensor<f32>
  // CHECK: %[[DY:.*]] = train.mse_grad %[[Y]], %[[T]], %[[DL]] : tensor<16x4xf32>
  %dy = train.mse_grad %y, %t, %dl : tensor<16x4xf32>
  // CHECK: %[[LH:.*]] = train.mse %[[H]], %[[H]] : tensor<3xf16> -> tensor<f32>
  %lh = train.mse %h, %h : tensor<3xf16> -> tensor<f32>
  // CHECK: %[[DH:.*]] = train.mse_grad %[[H]], %[[H]], %[[LH]] : tensor<3xf16>
  %dh = train.mse_grad %h, %h, %lh : tensor<3xf16>
  // CHECK: return %[[L]], %[[DY]], %[[LH]], %[[DH]]
  return %l, %dy, %lh, %dh : tensor<f32>, tensor<16x4xf32>, tensor<f32>, tensor<3xf16>
}

// -----

// CHECK-LABEL: func.func @cross_entropy_fused
// CHECK: %{{.*}}, %{{.*}} = train.cross_entropy_fused %arg0, %arg1 scale(1.000000e+00) {num_classes = 7 : i64} : tensor<4x8xbf16>, tensor<4xi32>
func.func @cross_entropy_fused(%z: tensor<4x8xbf16>, %t: tensor<4xi32>) -> (tensor<f32>, tensor<4x8xbf16>) {
  %l, %g = train.cross_entropy_fused %z, %t scale(1.0) {num_classes = 7 : i64} : tensor<4x8xbf16>, tensor<4xi32>
  return %l, %g : tensor<f32>, tensor<4x8xbf16>
}
