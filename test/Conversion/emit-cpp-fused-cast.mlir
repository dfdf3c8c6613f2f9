// RUN: zero-translate --emit-cpp %s | FileCheck %s --check-prefix=FUSED
// RUN: zero-translate --emit-cpp --fuse-adamw-cast=false %s | FileCheck %s --check-prefix=UNFUSED
// RUN: zero-translate --emit-cpp %s | FileCheck %s --check-prefix=RUNS
// RUN: zero-translate --emit-cpp --fuse-state-runs=false %s | FileCheck %s --check-prefix=NORUNS

// train-fuse-adamw-cast decides; the lowering prints. With the pass, @w's
// AdamW call writes the bf16 parameter (out_bf16) and the cast prints
// nothing; without it, the call gets NULL and the cast is its own
// zrt_cast_f32_to_bf16 of 8 elements.
// FUSED-LABEL: static int zrt_gen_optimizer_step(
// FUSED: zrt_adamw_step_bf16_grad({{v[0-9]+}}, {{v[0-9]+}}, {{v[0-9]+}}, {{v[0-9]+}}, NULL, {{v[0-9]+}}, 8,
// FUSED: // train.cast -> tensor<4x2xbf16> (written by the AdamW call)
// FUSED-NOT: zrt_cast_f32_to_bf16({{.*}}, 8);
// UNFUSED-LABEL: static int zrt_gen_optimizer_step(
// UNFUSED: zrt_adamw_step_bf16_grad({{v[0-9]+}}, {{v[0-9]+}}, {{v[0-9]+}}, {{v[0-9]+}}, NULL, NULL, 8,
// UNFUSED: // train.cast -> tensor<4x2xbf16>{{$}}
// UNFUSED: zrt_cast_f32_to_bf16({{v[0-9]+}}, {{v[0-9]+}}, 8);

// zero-fuse-state-runs decides the gradients' zeroing: with it, one
// zrt_fill_bf16 over the three back-to-back gradients (3 x 64 bytes = 96
// bf16 elements) at the last fill; without it, one fill per gradient.
// RUNS-LABEL: static int zrt_gen_optimizer_step(
// RUNS-NOT: zrt_fill_bf16(
// RUNS: zrt_fill_bf16({{v[0-9]+}}, 0.0e+00f, 96);
// RUNS-NOT: zrt_fill_bf16(
// RUNS-LABEL: static void zrt_gen_destroy() {
// NORUNS-LABEL: static int zrt_gen_optimizer_step(
// NORUNS: zrt_fill_bf16({{v[0-9]+}}, 0.0e+00f, 8);
// NORUNS: zrt_fill_bf16({{v[0-9]+}}, 0.0e+00f, 2);
// NORUNS: zrt_fill_bf16({{v[0-9]+}}, 0.0e+00f, 2);
// NORUNS-NOT: zrt_fill_bf16(
// NORUNS-LABEL: static void zrt_gen_destroy() {
train.param @w : tensor<4x2xbf16> init(<normal, 2.000000e-02>) trainable
train.state @w.grad : tensor<4x2xbf16> kind(<grad>) of(@w)
train.state @w.master : tensor<4x2xf32> kind(<master>) of(@w)
train.state @w.exp_avg : tensor<4x2xf32> kind(<exp_avg>) of(@w)
train.state @w.exp_avg_sq : tensor<4x2xf32> kind(<exp_avg_sq>) of(@w)
train.param @b : tensor<2xbf16> init(<zeros>) trainable
train.state @b.grad : tensor<2xbf16> kind(<grad>) of(@b)
train.state @b.master : tensor<2xf32> kind(<master>) of(@b)
train.state @b.exp_avg : tensor<2xf32> kind(<exp_avg>) of(@b)
train.state @b.exp_avg_sq : tensor<2xf32> kind(<exp_avg_sq>) of(@b)
train.param @c : tensor<2xbf16> init(<zeros>) trainable
train.state @c.grad : tensor<2xbf16> kind(<grad>) of(@c)
train.state @c.master : tensor<2xf32> kind(<master>) of(@c)
train.state @c.exp_avg : tensor<2xf32> kind(<exp_avg>) of(@c)
train.state @c.exp_avg_sq : tensor<2xf32> kind(<exp_avg_sq>) of(@c)
func.func @forward(%ids: tensor<1x2xi32>, %t: tensor<1x2xi32>) -> tensor<f32> {
  %w = train.load @w : tensor<4x2xbf16>
  %s = train.sum_squares %w : tensor<4x2xbf16>
  return %s : tensor<f32>
}
func.func @optimizer_step(%lr: tensor<f32> {train.name = "lr"}, %step: tensor<i64> {train.name = "step"}, %gs: tensor<f32> {train.name = "grad_scale"}) -> tensor<f32> {
  %cold = train.load @c : tensor<2xbf16>
  %0 = train.load @w.grad : tensor<4x2xbf16>
  %1 = train.sum_squares %0 : tensor<4x2xbf16>
  %2 = train.load @b.grad : tensor<2xbf16>
  %3 = train.sum_squares %2 : tensor<2xbf16>
  %4 = train.add %1, %3 : tensor<f32>
  %coef, %norm = train.clip_coef %4, %gs max_norm(1.000000e+00) : tensor<f32>
  %5 = train.load @w.master : tensor<4x2xf32>
  %6 = train.load @w.exp_avg : tensor<4x2xf32>
  %7 = train.load @w.exp_avg_sq : tensor<4x2xf32>
  %np, %nm, %nv = train.adamw %5, %0, %6, %7, %lr, %step, %coef beta1(9.000000e-01) beta2(0.99899999999999999) eps(1.000000e-08) weight_decay(1.000000e-02) : tensor<4x2xf32>, tensor<4x2xbf16>
  train.store %np, @w.master : tensor<4x2xf32>
  %8 = train.cast %np : tensor<4x2xf32> -> tensor<4x2xbf16>
  train.store %8, @w : tensor<4x2xbf16>
  train.store %nm, @w.exp_avg : tensor<4x2xf32>
  train.store %nv, @w.exp_avg_sq : tensor<4x2xf32>
  %9 = train.fill 0.000000e+00 : tensor<4x2xbf16>
  train.store %9, @w.grad : tensor<4x2xbf16>
  %10 = train.load @b.master : tensor<2xf32>
  %11 = train.load @b.exp_avg : tensor<2xf32>
  %12 = train.load @b.exp_avg_sq : tensor<2xf32>
  %np2, %nm2, %nv2 = train.adamw %10, %2, %11, %12, %lr, %step, %coef beta1(9.000000e-01) beta2(0.99899999999999999) eps(1.000000e-08) weight_decay(0.000000e+00) : tensor<2xf32>, tensor<2xbf16>
  train.store %np2, @b.master : tensor<2xf32>
  %old = train.load @b : tensor<2xbf16>
  %os = train.sum_squares %old : tensor<2xbf16>
  %13 = train.cast %np2 : tensor<2xf32> -> tensor<2xbf16>
  train.store %13, @b : tensor<2xbf16>
  train.store %nm2, @b.exp_avg : tensor<2xf32>
  train.store %nv2, @b.exp_avg_sq : tensor<2xf32>
  %14 = train.fill 0.000000e+00 : tensor<2xbf16>
  train.store %14, @b.grad : tensor<2xbf16>
  %cg = train.load @c.grad : tensor<2xbf16>
  %cm = train.load @c.master : tensor<2xf32>
  %ca = train.load @c.exp_avg : tensor<2xf32>
  %cv = train.load @c.exp_avg_sq : tensor<2xf32>
  %np3, %nm3, %nv3 = train.adamw %cm, %cg, %ca, %cv, %lr, %step, %coef beta1(9.000000e-01) beta2(0.99899999999999999) eps(1.000000e-08) weight_decay(0.000000e+00) : tensor<2xf32>, tensor<2xbf16>
  train.store %np3, @c.master : tensor<2xf32>
  %cs = train.sum_squares %cold : tensor<2xbf16>
  %15 = train.cast %np3 : tensor<2xf32> -> tensor<2xbf16>
  train.store %15, @c : tensor<2xbf16>
  train.store %nm3, @c.exp_avg : tensor<2xf32>
  train.store %nv3, @c.exp_avg_sq : tensor<2xf32>
  %16 = train.fill 0.000000e+00 : tensor<2xbf16>
  train.store %16, @c.grad : tensor<2xbf16>
  %r0 = train.add %norm, %os : tensor<f32>
  %r = train.add %r0, %cs : tensor<f32>
  return %r : tensor<f32>
}
