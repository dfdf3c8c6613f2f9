// RUN: zero-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// train.sum_squares
//===----------------------------------------------------------------------===//

func.func @sum_squares_int(%g: tensor<16xi32>) -> tensor<f32> {
  // expected-error @+1 {{'train.sum_squares' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<16xi32>'}}
  %s = train.sum_squares %g : tensor<16xi32>
  return %s : tensor<f32>
}

// -----

func.func @sum_squares_result(%g: tensor<16xbf16>) -> tensor<bf16> {
  // expected-error @+1 {{'train.sum_squares' op result #0 must be 0D tensor of 32-bit float values, but got 'tensor<bf16>'}}
  %s = "train.sum_squares"(%g) : (tensor<16xbf16>) -> tensor<bf16>
  return %s : tensor<bf16>
}

// -----

func.func @sum_squares_result_shape(%g: tensor<16xf32>) -> tensor<1xf32> {
  // expected-error @+1 {{'train.sum_squares' op result #0 must be 0D tensor of 32-bit float values, but got 'tensor<1xf32>'}}
  %s = "train.sum_squares"(%g) : (tensor<16xf32>) -> tensor<1xf32>
  return %s : tensor<1xf32>
}

// -----

//===----------------------------------------------------------------------===//
// train.clip_coef
//===----------------------------------------------------------------------===//

func.func @clip_coef_sum_squares(%ss: tensor<1xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{'train.clip_coef' op operand #0 must be 0D tensor of 32-bit float values, but got 'tensor<1xf32>'}}
  %c, %n = "train.clip_coef"(%ss, %s) {max_norm = 1.0 : f64} : (tensor<1xf32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)
  return
}

// -----

func.func @clip_coef_scale(%ss: tensor<f32>, %s: tensor<bf16>) {
  // expected-error @+1 {{'train.clip_coef' op operand #1 must be 0D tensor of 32-bit float values, but got 'tensor<bf16>'}}
  %c, %n = "train.clip_coef"(%ss, %s) {max_norm = 1.0 : f64} : (tensor<f32>, tensor<bf16>) -> (tensor<f32>, tensor<f32>)
  return
}

// -----

func.func @clip_coef_result(%ss: tensor<f32>, %s: tensor<f32>) {
  // expected-error @+1 {{'train.clip_coef' op result #0 must be 0D tensor of 32-bit float values, but got 'tensor<1xf32>'}}
  %c, %n = train.clip_coef %ss, %s max_norm(1.0) : tensor<1xf32>
  return
}

// -----

func.func @clip_coef_norm(%ss: tensor<f32>, %s: tensor<f32>) {
  // expected-error @+1 {{'train.clip_coef' op result #1 must be 0D tensor of 32-bit float values, but got 'tensor<f16>'}}
  %c, %n = "train.clip_coef"(%ss, %s) {max_norm = 1.0 : f64} : (tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f16>)
  return
}

// -----

func.func @clip_coef_no_max_norm(%ss: tensor<f32>, %s: tensor<f32>) {
  // expected-error @+1 {{'train.clip_coef' op requires attribute 'max_norm'}}
  %c, %n = "train.clip_coef"(%ss, %s) : (tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.adamw
//===----------------------------------------------------------------------===//

func.func @adamw_bf16_param(%p: tensor<8xbf16>, %lr: tensor<f32>, %t: tensor<i64>, %c: tensor<f32>) {
  // expected-error @+1 {{'train.adamw' op param, exp_avg and exp_avg_sq must be f32, got 'tensor<8xbf16>'}}
  %p2, %m2, %v2 = train.adamw %p, %p, %p, %p, %lr, %t, %c beta1(0.9) beta2(0.95) eps(1.0e-08) weight_decay(0.1) : tensor<8xbf16>, tensor<8xbf16>
  return
}

// -----

func.func @adamw_grad_shape(%p: tensor<8x4xf32>, %g: tensor<4x8xf32>, %lr: tensor<f32>, %t: tensor<i64>, %c: tensor<f32>) {
  // expected-error @+1 {{'train.adamw' op grad shape 'tensor<4x8xf32>' differs from param 'tensor<8x4xf32>'}}
  %p2, %m2, %v2 = train.adamw %p, %g, %p, %p, %lr, %t, %c beta1(0.9) beta2(0.95) eps(1.0e-08) weight_decay(0.1) : tensor<8x4xf32>, tensor<4x8xf32>
  return
}

// -----

func.func @adamw_moment_type(%p: tensor<8xf32>, %m: tensor<8xbf16>, %lr: tensor<f32>, %t: tensor<i64>, %c: tensor<f32>) {
  // expected-error @+1 {{'train.adamw' op failed to verify that all of {param, exp_avg, exp_avg_sq, new_param, new_exp_avg, new_exp_avg_sq} have same type}}
  %p2, %m2, %v2 = "train.adamw"(%p, %p, %m, %p, %lr, %t, %c) {beta1 = 0.9 : f64, beta2 = 0.95 : f64, eps = 1.0e-08 : f64, weight_decay = 0.1 : f64} : (tensor<8xf32>, tensor<8xf32>, tensor<8xbf16>, tensor<8xf32>, tensor<f32>, tensor<i64>, tensor<f32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

func.func @adamw_result_type(%p: tensor<8xf32>, %lr: tensor<f32>, %t: tensor<i64>, %c: tensor<f32>) {
  // expected-error @+1 {{'train.adamw' op failed to verify that all of {param, exp_avg, exp_avg_sq, new_param, new_exp_avg, new_exp_avg_sq} have same type}}
  %p2, %m2, %v2 = "train.adamw"(%p, %p, %p, %p, %lr, %t, %c) {beta1 = 0.9 : f64, beta2 = 0.95 : f64, eps = 1.0e-08 : f64, weight_decay = 0.1 : f64} : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<f32>, tensor<i64>, tensor<f32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<4xf32>)
  return
}

// -----

func.func @adamw_step_type(%p: tensor<8xf32>, %lr: tensor<f32>, %t: tensor<i32>, %c: tensor<f32>) {
  // expected-error @+1 {{'train.adamw' op operand #5 must be 0D tensor of 64-bit signless integer values, but got 'tensor<i32>'}}
  %p2, %m2, %v2 = "train.adamw"(%p, %p, %p, %p, %lr, %t, %c) {beta1 = 0.9 : f64, beta2 = 0.95 : f64, eps = 1.0e-08 : f64, weight_decay = 0.1 : f64} : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<f32>, tensor<i32>, tensor<f32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

func.func @adamw_lr_shape(%p: tensor<8xf32>, %lr: tensor<8xf32>, %t: tensor<i64>, %c: tensor<f32>) {
  // expected-error @+1 {{'train.adamw' op operand #4 must be 0D tensor of 32-bit float values, but got 'tensor<8xf32>'}}
  %p2, %m2, %v2 = "train.adamw"(%p, %p, %p, %p, %lr, %t, %c) {beta1 = 0.9 : f64, beta2 = 0.95 : f64, eps = 1.0e-08 : f64, weight_decay = 0.1 : f64} : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<i64>, tensor<f32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

func.func @adamw_coef_type(%p: tensor<8xf32>, %lr: tensor<f32>, %t: tensor<i64>, %c: tensor<f16>) {
  // expected-error @+1 {{'train.adamw' op operand #6 must be 0D tensor of 32-bit float values, but got 'tensor<f16>'}}
  %p2, %m2, %v2 = "train.adamw"(%p, %p, %p, %p, %lr, %t, %c) {beta1 = 0.9 : f64, beta2 = 0.95 : f64, eps = 1.0e-08 : f64, weight_decay = 0.1 : f64} : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<f32>, tensor<i64>, tensor<f16>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

func.func @adamw_no_beta1(%p: tensor<8xf32>, %lr: tensor<f32>, %t: tensor<i64>, %c: tensor<f32>) {
  // expected-error @+1 {{'train.adamw' op requires attribute 'beta1'}}
  %p2, %m2, %v2 = "train.adamw"(%p, %p, %p, %p, %lr, %t, %c) {beta2 = 0.95 : f64, eps = 1.0e-08 : f64, weight_decay = 0.1 : f64} : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<f32>, tensor<i64>, tensor<f32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

func.func @adamw_grad_int(%p: tensor<8xf32>, %g: tensor<8xi32>, %lr: tensor<f32>, %t: tensor<i64>, %c: tensor<f32>) {
  // expected-error @+1 {{'train.adamw' op operand #1 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<8xi32>'}}
  %p2, %m2, %v2 = train.adamw %p, %g, %p, %p, %lr, %t, %c beta1(0.9) beta2(0.95) eps(1.0e-08) weight_decay(0.1) : tensor<8xf32>, tensor<8xi32>
  return
}

// -----

func.func @adamw_beta(%p: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{'train.adamw' op betas must be in [0, 1), got 1.000000e+00, 9.990000e-01}}
  %a, %b, %c = train.adamw %p, %p, %p, %p, %lr, %t, %lr beta1(1.0) beta2(0.999) eps(1.0e-08) weight_decay(0.0) : tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @adamw_eps(%p: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{'train.adamw' op eps must be positive}}
  %a, %b, %c = train.adamw %p, %p, %p, %p, %lr, %t, %lr beta1(0.9) beta2(0.999) eps(0.0) weight_decay(0.0) : tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @adamw_wd(%p: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{'train.adamw' op weight_decay must be >= 0}}
  %a, %b, %c = train.adamw %p, %p, %p, %p, %lr, %t, %lr beta1(0.9) beta2(0.999) eps(1.0e-08) weight_decay(-0.1) : tensor<4xf32>, tensor<4xf32>
  return
}
