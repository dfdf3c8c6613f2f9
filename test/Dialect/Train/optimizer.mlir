// RUN: zero-opt %s -split-input-file | FileCheck %s
// RUN: zero-opt %s -split-input-file | zero-opt -split-input-file | FileCheck %s
// RUN: zero-opt %s -split-input-file -mlir-print-op-generic | zero-opt -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @sum_squares
// CHECK-SAME: (%[[G:.*]]: tensor<256x64xf32>, %[[H:.*]]: tensor<64xbf16>, %[[S:.*]]: tensor<f16>)
func.func @sum_squares(%g: tensor<256x64xf32>, %h: tensor<64xbf16>, %s: tensor<f16>)
    -> (tensor<f32>, tensor<f32>, tensor<f32>) {
  // CHECK: %[[A:.*]] = train.sum_squares %[[G]] : tensor<256x64xf32>
  %a = train.sum_squares %g : tensor<256x64xf32>
  // CHECK: %[[B:.*]] = train.sum_squares %[[H]] : tensor<64xbf16>
  %b = train.sum_squares %h : tensor<64xbf16>
  // CHECK: %[[C:.*]] = train.sum_squares %[[S]] : tensor<f16>
  %c = train.sum_squares %s : tensor<f16>
  // CHECK: return %[[A]], %[[B]], %[[C]]
  return %a, %b, %c : tensor<f32>, tensor<f32>, tensor<f32>
}

// -----

// CHECK-LABEL: func.func @clip_coef
// CHECK-SAME: (%[[SS:.*]]: tensor<f32>, %[[S:.*]]: tensor<f32>)
func.func @clip_coef(%ss: tensor<f32>, %s: tensor<f32>) -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) {
  // CHECK: %[[COEF:.*]], %[[NORM:.*]] = train.clip_coef %[[SS]], %[[S]] max_norm(1.000000e+00) : tensor<f32>
  %coef, %norm = train.clip_coef %ss, %s max_norm(1.0) : tensor<f32>
  // A non-positive max_norm disables clipping.
  // CHECK: %[[C0:.*]], %[[N0:.*]] = train.clip_coef %[[SS]], %[[S]] max_norm(0.000000e+00) : tensor<f32>
  %c0, %n0 = train.clip_coef %ss, %s max_norm(0.0) : tensor<f32>
  // CHECK: return %[[COEF]], %[[NORM]], %[[C0]], %[[N0]]
  return %coef, %norm, %c0, %n0 : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
}

// -----

// CHECK-LABEL: func.func @adamw
// CHECK-SAME: (%[[P:.*]]: tensor<64x64xf32>, %[[G:.*]]: tensor<64x64xf32>, %[[GB:.*]]: tensor<64x64xbf16>, %[[M:.*]]: tensor<64x64xf32>, %[[V:.*]]: tensor<64x64xf32>, %[[LR:.*]]: tensor<f32>, %[[T:.*]]: tensor<i64>, %[[C:.*]]: tensor<f32>)
func.func @adamw(%p: tensor<64x64xf32>, %g: tensor<64x64xf32>, %gb: tensor<64x64xbf16>,
                 %m: tensor<64x64xf32>, %v: tensor<64x64xf32>,
                 %lr: tensor<f32>, %t: tensor<i64>, %coef: tensor<f32>)
    -> (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) {
  // CHECK: %[[P2:.*]], %[[M2:.*]], %[[V2:.*]] = train.adamw %[[P]], %[[G]], %[[M]], %[[V]], %[[LR]], %[[T]], %[[C]] beta1(9.000000e-01) beta2(0.94999999999999996) eps(1.000000e-08) weight_decay(1.000000e-01) : tensor<64x64xf32>, tensor<64x64xf32>
  %p2, %m2, %v2 = train.adamw %p, %g, %m, %v, %lr, %t, %coef beta1(0.9) beta2(0.95) eps(1.0e-08) weight_decay(0.1) : tensor<64x64xf32>, tensor<64x64xf32>
  // Mixed precision: f32 master weights and moments, a bf16 gradient.
  // CHECK: %[[P3:.*]], %{{.*}}, %{{.*}} = train.adamw %[[P2]], %[[GB]], %[[M2]], %[[V2]], %[[LR]], %[[T]], %[[C]] beta1(9.000000e-01) beta2(0.99899999999999999) eps(1.000000e-08) weight_decay(0.000000e+00) : tensor<64x64xf32>, tensor<64x64xbf16>
  %p3, %m3, %v3 = train.adamw %p2, %gb, %m2, %v2, %lr, %t, %coef beta1(0.9) beta2(0.999) eps(1.0e-08) weight_decay(0.0) : tensor<64x64xf32>, tensor<64x64xbf16>
  // CHECK: return %[[P2]], %[[M2]], %[[V2]], %[[P3]]
  return %p2, %m2, %v2, %p3 : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>
}

// -----

// CHECK-LABEL: func.func @adamw_skip_nonfinite
func.func @adamw_skip_nonfinite(%p: tensor<4xf32>, %g: tensor<4xf16>, %lr: tensor<f32>, %t: tensor<i64>, %c: tensor<f32>, %n: tensor<f32>) -> tensor<4xf32> {
  // CHECK: %[[P:.*]], %{{.*}}, %{{.*}} = train.adamw %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} skip_nonfinite(%{{.*}}) beta1(9.000000e-01)
  %a, %b, %d = train.adamw %p, %g, %p, %p, %lr, %t, %c skip_nonfinite(%n) beta1(0.9) beta2(0.999) eps(1.0e-08) weight_decay(0.0) : tensor<4xf32>, tensor<4xf16>
  return %a : tensor<4xf32>
}
