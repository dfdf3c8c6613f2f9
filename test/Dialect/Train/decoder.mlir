// Round trip of the Llama/Qwen decoder ops (TrainDecoderOps.td), custom and
// generic form.
// RUN: zero-opt %s -split-input-file | FileCheck %s
// RUN: zero-opt %s -split-input-file | zero-opt -split-input-file | FileCheck %s
// RUN: zero-opt %s -split-input-file -mlir-print-op-generic | zero-opt -split-input-file | FileCheck %s

//===----------------------------------------------------------------------===//
// train.rms_norm / train.add_rms_norm / train.rms_norm_grad
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @rms_norm
// CHECK-SAME: (%[[X:.*]]: tensor<4x32x64xf32>, %[[W:.*]]: tensor<64xf32>, %[[Q:.*]]: tensor<2x8x4x16xbf16>, %[[QW:.*]]: tensor<16xbf16>)
func.func @rms_norm(%x: tensor<4x32x64xf32>, %w: tensor<64xf32>,
                    %q: tensor<2x8x4x16xbf16>, %qw: tensor<16xbf16>)
    -> (tensor<4x32x64xf32>, tensor<2x8x4x16xbf16>) {
  // CHECK: %[[Y:.*]] = train.rms_norm %[[X]], %[[W]] eps(1.000000e-05) : tensor<4x32x64xf32>, tensor<64xf32>
  %y = train.rms_norm %x, %w eps(1.0e-05) : tensor<4x32x64xf32>, tensor<64xf32>
  // QK-norm: over head_dim of [B, T, heads, head_dim].
  // CHECK: %[[N:.*]] = train.rms_norm %[[Q]], %[[QW]] eps(9.9999999999999995E-7) : tensor<2x8x4x16xbf16>, tensor<16xbf16>
  %n = train.rms_norm %q, %qw eps(1.0e-06) : tensor<2x8x4x16xbf16>, tensor<16xbf16>
  // CHECK: return %[[Y]], %[[N]]
  return %y, %n : tensor<4x32x64xf32>, tensor<2x8x4x16xbf16>
}

// CHECK-LABEL: func.func @add_rms_norm
// CHECK-SAME: (%[[X:.*]]: tensor<4x32x64xbf16>, %[[H:.*]]: tensor<4x32x64xbf16>, %[[W:.*]]: tensor<64xbf16>, %[[DY:.*]]: tensor<4x32x64xbf16>)
func.func @add_rms_norm(%x: tensor<4x32x64xbf16>, %h: tensor<4x32x64xbf16>,
                        %w: tensor<64xbf16>, %dy: tensor<4x32x64xbf16>)
    -> (tensor<4x32x64xbf16>, tensor<4x32x64xbf16>, tensor<4x32x64xbf16>, tensor<64xbf16>, tensor<4x32x64xbf16>) {
  // CHECK: %[[S:.*]], %[[Y:.*]] = train.add_rms_norm %[[X]], %[[H]], %[[W]] eps(1.000000e-05) : tensor<4x32x64xbf16>, tensor<64xbf16>
  %s, %y = train.add_rms_norm %x, %h, %w eps(1.0e-05) : tensor<4x32x64xbf16>, tensor<64xbf16>
  // CHECK: %[[DX:.*]], %[[DW:.*]] = train.rms_norm_grad %[[S]], %[[W]], %[[DY]] eps(1.000000e-05) : tensor<4x32x64xbf16>, tensor<64xbf16>
  %dx, %dw = train.rms_norm_grad %s, %w, %dy eps(1.0e-05) : tensor<4x32x64xbf16>, tensor<64xbf16>
  // CHECK: %[[DR:.*]], %{{.*}} = train.rms_norm_grad %[[S]], %[[W]], %[[DY]] plus %[[X]] eps(1.000000e-05) : tensor<4x32x64xbf16>, tensor<64xbf16>
  %dr:2 = train.rms_norm_grad %s, %w, %dy plus %x eps(1.0e-05) : tensor<4x32x64xbf16>, tensor<64xbf16>
  // CHECK: return %[[S]], %[[Y]], %[[DX]], %[[DW]], %[[DR]]
  return %s, %y, %dx, %dw, %dr#0 : tensor<4x32x64xbf16>, tensor<4x32x64xbf16>, tensor<4x32x64xbf16>, tensor<64xbf16>, tensor<4x32x64xbf16>
}

// -----

//===----------------------------------------------------------------------===//
// train.silu / train.silu_grad / train.swiglu / train.swiglu_grad
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @swiglu
// CHECK-SAME: (%[[G:.*]]: tensor<4x32x96xf32>, %[[U:.*]]: tensor<4x32x96xf32>, %[[D:.*]]: tensor<4x32x96xf32>)
func.func @swiglu(%g: tensor<4x32x96xf32>, %u: tensor<4x32x96xf32>, %d: tensor<4x32x96xf32>)
    -> (tensor<4x32x96xf32>, tensor<4x32x96xf32>, tensor<4x32x96xf32>, tensor<4x32x96xf32>, tensor<4x32x96xf32>) {
  // CHECK: %[[S:.*]] = train.silu %[[G]] : tensor<4x32x96xf32>
  %s = train.silu %g : tensor<4x32x96xf32>
  // CHECK: %[[DS:.*]] = train.silu_grad %[[G]], %[[D]] : tensor<4x32x96xf32>
  %ds = train.silu_grad %g, %d : tensor<4x32x96xf32>
  // CHECK: %[[H:.*]] = train.swiglu %[[G]], %[[U]] : tensor<4x32x96xf32>
  %h = train.swiglu %g, %u : tensor<4x32x96xf32>
  // CHECK: %[[DG:.*]], %[[DU:.*]] = train.swiglu_grad %[[G]], %[[U]], %[[D]] : tensor<4x32x96xf32>
  %dg, %du = train.swiglu_grad %g, %u, %d : tensor<4x32x96xf32>
  // CHECK: return %[[S]], %[[DS]], %[[H]], %[[DG]], %[[DU]]
  return %s, %ds, %h, %dg, %du : tensor<4x32x96xf32>, tensor<4x32x96xf32>, tensor<4x32x96xf32>, tensor<4x32x96xf32>, tensor<4x32x96xf32>
}

// -----

//===----------------------------------------------------------------------===//
// train.rope_table / train.rope
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @rope
// CHECK-SAME: (%[[Q:.*]]: tensor<4x32x4x16xf32>, %[[K:.*]]: tensor<4x32x2x16xbf16>)
func.func @rope(%q: tensor<4x32x4x16xf32>, %k: tensor<4x32x2x16xbf16>)
    -> (tensor<4x32x4x16xf32>, tensor<4x32x2x16xbf16>, tensor<4x32x4x16xf32>) {
  // CHECK: %[[T:.*]] = train.rope_table theta(5.000000e+05) : tensor<32x8x2xf32>
  %t = train.rope_table theta(5.0e+05) : tensor<32x8x2xf32>
  // CHECK: %[[S:.*]] = train.rope_table theta(5.000000e+05) llama3(factor(3.200000e+01) low_freq_factor(1.000000e+00) high_freq_factor(4.000000e+00) original_max_positions(8192)) : tensor<32x8x2xf32>
  %s = train.rope_table theta(5.0e+05) llama3(factor(32.0) low_freq_factor(1.0) high_freq_factor(4.0) original_max_positions(8192)) : tensor<32x8x2xf32>
  // CHECK: %[[QR:.*]] = train.rope %[[Q]], %[[S]] layout(<rotate_half>) : tensor<4x32x4x16xf32>, tensor<32x8x2xf32>
  %qr = train.rope %q, %s layout(<rotate_half>) : tensor<4x32x4x16xf32>, tensor<32x8x2xf32>
  // CHECK: %[[KR:.*]] = train.rope %[[K]], %[[T]] layout(<interleaved>) : tensor<4x32x2x16xbf16>, tensor<32x8x2xf32>
  %kr = train.rope %k, %t layout(<interleaved>) : tensor<4x32x2x16xbf16>, tensor<32x8x2xf32>
  // CHECK: %[[DQ:.*]] = train.rope %[[QR]], %[[S]] layout(<rotate_half>) {inverse} : tensor<4x32x4x16xf32>, tensor<32x8x2xf32>
  %dq = train.rope %qr, %s layout(<rotate_half>) {inverse} : tensor<4x32x4x16xf32>, tensor<32x8x2xf32>
  // CHECK: return %[[QR]], %[[KR]], %[[DQ]]
  return %qr, %kr, %dq : tensor<4x32x4x16xf32>, tensor<4x32x2x16xbf16>, tensor<4x32x4x16xf32>
}
