// RUN: zero-opt %s -split-input-file --zero-layout-states --train-fuse-adamw-cast --zero-fuse-state-runs | FileCheck %s
// Idempotent: a function with marked fills keeps them and gains none.
// RUN: zero-opt %s -split-input-file --zero-layout-states --train-fuse-adamw-cast --zero-fuse-state-runs --zero-fuse-state-runs | FileCheck %s

// bf16-mixed at stage 0: the three gradients (16, 4 and 4 bytes, each
// padded to 64) lie back to back in the gradients arena, and nothing reads
// a gradient after its zeroing: one run, id 0, the three fills.
// CHECK-LABEL: func.func @optimizer_step
// CHECK: train.fill 0.000000e+00 {zero.state_run = 0 : i64} : tensor<4x2xbf16>
// CHECK-NEXT: train.store %{{.*}}, @w.grad
// CHECK: train.fill 0.000000e+00 {zero.state_run = 0 : i64} : tensor<2xbf16>
// CHECK-NEXT: train.store %{{.*}}, @b.grad
// CHECK: train.fill 0.000000e+00 {zero.state_run = 0 : i64} : tensor<2xbf16>
// CHECK-NEXT: train.store %{{.*}}, @c.grad
module {
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
}

// -----

// A gradient read between its zeroing and the next fill: the zeroing may
// not move to the later fill, so there is no run; a fill of 1 is never in
// one.
// CHECK-LABEL: func.func @optimizer_step
// CHECK-NOT: zero.state_run
// CHECK: return
module {
  train.param @a : tensor<16xf32> init(<zeros>) trainable
  train.state @a.grad : tensor<16xf32> kind(<grad>) of(@a)
  train.param @b : tensor<16xf32> init(<zeros>) trainable
  train.state @b.grad : tensor<16xf32> kind(<grad>) of(@b)
  train.param @c : tensor<16xf32> init(<zeros>) trainable
  train.state @c.grad : tensor<16xf32> kind(<grad>) of(@c)
  func.func @optimizer_step(%lr: tensor<f32>) -> tensor<f32> {
    %za = train.fill 0.000000e+00 : tensor<16xf32>
    train.store %za, @a.grad : tensor<16xf32>
    %ga = train.load @a.grad : tensor<16xf32>
    %s = train.sum_squares %ga : tensor<16xf32>
    %zb = train.fill 0.000000e+00 : tensor<16xf32>
    train.store %zb, @b.grad : tensor<16xf32>
    %oc = train.fill 1.000000e+00 : tensor<16xf32>
    train.store %oc, @c.grad : tensor<16xf32>
    return %s : tensor<f32>
  }
}

// -----

// Multi-tensor AdamW at stage 0: @w, @b and @v (32 elements each, every
// state back to back in its arena, the bf16 copies folded by
// train-fuse-adamw-cast) are one run; @d's master weights are read between
// the run's start and its own update, so @d stays alone. The gradient
// norm's chain over the four back-to-back gradients (four sums, three adds)
// is one sum of squares, its own id.
// CHECK-LABEL: func.func @optimizer_step
// CHECK: train.sum_squares %{{.*}} {zero.state_run = [[S:[0-9]+]] : i64} : tensor<32xbf16>
// CHECK: train.sum_squares %{{.*}} {zero.state_run = [[S]] : i64} : tensor<32xbf16>
// CHECK: train.add %{{.*}} {zero.state_run = [[S]] : i64} : tensor<f32>
// CHECK: train.sum_squares %{{.*}} {zero.state_run = [[S]] : i64} : tensor<32xbf16>
// CHECK: train.add %{{.*}} {zero.state_run = [[S]] : i64} : tensor<f32>
// CHECK: train.sum_squares %{{.*}} {zero.state_run = [[S]] : i64} : tensor<32xbf16>
// CHECK: train.add %{{.*}} {zero.state_run = [[S]] : i64} : tensor<f32>
// CHECK: train.adamw {{.*}} weight_decay(1.000000e-02) {zero.state_run = [[R:[0-9]+]] : i64} : tensor<32xf32>, tensor<32xbf16>
// CHECK: train.adamw {{.*}} weight_decay(0.000000e+00) {zero.state_run = [[R]] : i64} : tensor<32xf32>, tensor<32xbf16>
// CHECK: train.adamw {{.*}} weight_decay(1.000000e-02) {zero.state_run = [[R]] : i64} : tensor<32xf32>, tensor<32xbf16>
// CHECK: train.adamw {{.*}} weight_decay({{[^)]*}}) : tensor<32xf32>, tensor<32xbf16>
module {
  train.param @w : tensor<32xbf16> init(<normal, 2.000000e-02>) trainable
  train.state @w.grad : tensor<32xbf16> kind(<grad>) of(@w)
  train.state @w.master : tensor<32xf32> kind(<master>) of(@w)
  train.state @w.exp_avg : tensor<32xf32> kind(<exp_avg>) of(@w)
  train.state @w.exp_avg_sq : tensor<32xf32> kind(<exp_avg_sq>) of(@w)
  train.param @b : tensor<32xbf16> init(<zeros>) trainable
  train.state @b.grad : tensor<32xbf16> kind(<grad>) of(@b)
  train.state @b.master : tensor<32xf32> kind(<master>) of(@b)
  train.state @b.exp_avg : tensor<32xf32> kind(<exp_avg>) of(@b)
  train.state @b.exp_avg_sq : tensor<32xf32> kind(<exp_avg_sq>) of(@b)
  train.param @v : tensor<32xbf16> init(<normal, 2.000000e-02>) trainable
  train.state @v.grad : tensor<32xbf16> kind(<grad>) of(@v)
  train.state @v.master : tensor<32xf32> kind(<master>) of(@v)
  train.state @v.exp_avg : tensor<32xf32> kind(<exp_avg>) of(@v)
  train.state @v.exp_avg_sq : tensor<32xf32> kind(<exp_avg_sq>) of(@v)
  train.param @d : tensor<32xbf16> init(<zeros>) trainable
  train.state @d.grad : tensor<32xbf16> kind(<grad>) of(@d)
  train.state @d.master : tensor<32xf32> kind(<master>) of(@d)
  train.state @d.exp_avg : tensor<32xf32> kind(<exp_avg>) of(@d)
  train.state @d.exp_avg_sq : tensor<32xf32> kind(<exp_avg_sq>) of(@d)
  func.func @forward(%ids: tensor<1x2xi32>, %t: tensor<1x2xi32>) -> tensor<f32> {
    %w = train.load @w : tensor<32xbf16>
    %s = train.sum_squares %w : tensor<32xbf16>
    return %s : tensor<f32>
  }
  func.func @optimizer_step(%lr: tensor<f32> {train.name = "lr"}, %step: tensor<i64> {train.name = "step"}, %gs: tensor<f32> {train.name = "grad_scale"}) -> tensor<f32> {
    %g0 = train.load @w.grad : tensor<32xbf16>
    %s0 = train.sum_squares %g0 : tensor<32xbf16>
    %g1 = train.load @b.grad : tensor<32xbf16>
    %s1 = train.sum_squares %g1 : tensor<32xbf16>
    %a1 = train.add %s0, %s1 : tensor<f32>
    %g2 = train.load @v.grad : tensor<32xbf16>
    %s2 = train.sum_squares %g2 : tensor<32xbf16>
    %a2 = train.add %a1, %s2 : tensor<f32>
    %g3 = train.load @d.grad : tensor<32xbf16>
    %s3 = train.sum_squares %g3 : tensor<32xbf16>
    %a3 = train.add %a2, %s3 : tensor<f32>
    %coef, %norm = train.clip_coef %a3, %gs max_norm(1.000000e+00) : tensor<f32>
    %wm = train.load @w.master : tensor<32xf32>
    %wa = train.load @w.exp_avg : tensor<32xf32>
    %wv = train.load @w.exp_avg_sq : tensor<32xf32>
    %wp, %wpm, %wpv = train.adamw %wm, %g0, %wa, %wv, %lr, %step, %coef beta1(9.000000e-01) beta2(0.99899999999999999) eps(1.000000e-08) weight_decay(1.000000e-02) : tensor<32xf32>, tensor<32xbf16>
    train.store %wp, @w.master : tensor<32xf32>
    %wc = train.cast %wp : tensor<32xf32> -> tensor<32xbf16>
    train.store %wc, @w : tensor<32xbf16>
    train.store %wpm, @w.exp_avg : tensor<32xf32>
    train.store %wpv, @w.exp_avg_sq : tensor<32xf32>
    %dpeek = train.load @d.master : tensor<32xf32>
    %dsum = train.sum_squares %dpeek : tensor<32xf32>
    %bm = train.load @b.master : tensor<32xf32>
    %ba = train.load @b.exp_avg : tensor<32xf32>
    %bv = train.load @b.exp_avg_sq : tensor<32xf32>
    %bp, %bpm, %bpv = train.adamw %bm, %g1, %ba, %bv, %lr, %step, %coef beta1(9.000000e-01) beta2(0.99899999999999999) eps(1.000000e-08) weight_decay(0.000000e+00) : tensor<32xf32>, tensor<32xbf16>
    train.store %bp, @b.master : tensor<32xf32>
    %bc = train.cast %bp : tensor<32xf32> -> tensor<32xbf16>
    train.store %bc, @b : tensor<32xbf16>
    train.store %bpm, @b.exp_avg : tensor<32xf32>
    train.store %bpv, @b.exp_avg_sq : tensor<32xf32>
    %vm = train.load @v.master : tensor<32xf32>
    %va = train.load @v.exp_avg : tensor<32xf32>
    %vv = train.load @v.exp_avg_sq : tensor<32xf32>
    %vp, %vpm, %vpv = train.adamw %vm, %g2, %va, %vv, %lr, %step, %coef beta1(9.000000e-01) beta2(0.99899999999999999) eps(1.000000e-08) weight_decay(1.000000e-02) : tensor<32xf32>, tensor<32xbf16>
    train.store %vp, @v.master : tensor<32xf32>
    %vc = train.cast %vp : tensor<32xf32> -> tensor<32xbf16>
    train.store %vc, @v : tensor<32xbf16>
    train.store %vpm, @v.exp_avg : tensor<32xf32>
    train.store %vpv, @v.exp_avg_sq : tensor<32xf32>
    %dm = train.load @d.master : tensor<32xf32>
    %da = train.load @d.exp_avg : tensor<32xf32>
    %dv = train.load @d.exp_avg_sq : tensor<32xf32>
    %dp, %dpm, %dpv = train.adamw %dm, %g3, %da, %dv, %lr, %step, %coef beta1(9.000000e-01) beta2(0.99899999999999999) eps(1.000000e-08) weight_decay(0.000000e+00) : tensor<32xf32>, tensor<32xbf16>
    train.store %dp, @d.master : tensor<32xf32>
    %dc = train.cast %dp : tensor<32xf32> -> tensor<32xbf16>
    train.store %dc, @d : tensor<32xbf16>
    train.store %dpm, @d.exp_avg : tensor<32xf32>
    train.store %dpv, @d.exp_avg_sq : tensor<32xf32>
    %r = train.add %norm, %dsum : tensor<f32>
    return %r : tensor<f32>
  }
}
