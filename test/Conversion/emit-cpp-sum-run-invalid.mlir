// RUN: zero-translate --emit-cpp --fuse-state-runs=false %s -verify-diagnostics

// A marked gradient-norm group that is not a chain: two of the sums of
// squares without the add that sums them.
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
  // expected-error@+1 {{'train.sum_squares' op is marked zero.state_run = 0 with 2 op(s), which are not a sum of squares one call can do: a chain of train.add over train.sum_squares of gradients back to back in one arena, in @optimizer_step, none written before the chain's last add (zero-fuse-state-runs decides this)}}
  %s0 = train.sum_squares %g0 {zero.state_run = 0 : i64} : tensor<32xbf16>
  %g1 = train.load @b.grad : tensor<32xbf16>
  %s1 = train.sum_squares %g1 {zero.state_run = 0 : i64} : tensor<32xbf16>
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
