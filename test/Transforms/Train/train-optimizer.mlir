// RUN: zero-opt %s --train-optimizer -split-input-file | FileCheck %s
// RUN: zero-opt %s --train-optimizer="max-grad-norm=0 weight-decay=0.1 decay-min-rank=0 beta2=0.95" -split-input-file | FileCheck %s --check-prefix=OPTS

// fp32: moments per parameter, no master copy; decay on the matrix only.
train.param @w : tensor<4x2xf32> init(<normal, 2.000000e-02>) trainable
train.state @w.grad : tensor<4x2xf32> kind(<grad>) of(@w)
train.param @b : tensor<4xf32> init(<zeros>) trainable
train.state @b.grad : tensor<4xf32> kind(<grad>) of(@b)
// CHECK: train.state @w.grad
// CHECK-NEXT: train.state @w.exp_avg : tensor<4x2xf32> kind(<exp_avg>) of(@w)
// CHECK-NEXT: train.state @w.exp_avg_sq : tensor<4x2xf32> kind(<exp_avg_sq>) of(@w)
// CHECK-NOT: master
// CHECK-LABEL: func.func @optimizer_step(
// CHECK-SAME: %[[LR:.*]]: tensor<f32> {train.name = "lr"}, %[[STEP:.*]]: tensor<i64> {train.name = "step"}, %[[GS:.*]]: tensor<f32> {train.name = "grad_scale"}) -> tensor<f32>
// CHECK: %[[GW:.*]] = train.load @w.grad
// CHECK-NEXT: %[[SW:.*]] = train.sum_squares %[[GW]]
// CHECK-NEXT: %[[GB:.*]] = train.load @b.grad
// CHECK-NEXT: %[[SB:.*]] = train.sum_squares %[[GB]]
// CHECK-NEXT: %[[SS:.*]] = train.add %[[SW]], %[[SB]] : tensor<f32>
// CHECK-NEXT: %[[COEF:.*]], %[[NORM:.*]] = train.clip_coef %[[SS]], %[[GS]] max_norm(1.000000e+00)
// CHECK-NEXT: %[[P:.*]] = train.load @w : tensor<4x2xf32>
// CHECK-NEXT: %[[M:.*]] = train.load @w.exp_avg
// CHECK-NEXT: %[[V:.*]] = train.load @w.exp_avg_sq
// CHECK-NEXT: %[[P2:.*]], %[[M2:.*]], %[[V2:.*]] = train.adamw %[[P]], %[[GW]], %[[M]], %[[V]], %[[LR]], %[[STEP]], %[[COEF]] beta1(9.000000e-01) beta2(0.99899999999999999) eps(1.000000e-08) weight_decay(1.000000e-02)
// CHECK-NEXT: train.store %[[P2]], @w
// CHECK-NEXT: train.store %[[M2]], @w.exp_avg
// CHECK-NEXT: train.store %[[V2]], @w.exp_avg_sq
// CHECK-NEXT: %[[Z:.*]] = train.fill 0.000000e+00 : tensor<4x2xf32>
// CHECK-NEXT: train.store %[[Z]], @w.grad
// CHECK: train.adamw {{.*}} weight_decay(0.000000e+00) : tensor<4xf32>, tensor<4xf32>
// CHECK: return %[[NORM]] : tensor<f32>

// OPTS-LABEL: func.func @optimizer_step(
// OPTS: train.clip_coef {{.*}} max_norm(0.000000e+00)
// OPTS: train.adamw {{.*}} beta2(0.94999999999999996) {{.*}} weight_decay(1.000000e-01) : tensor<4x2xf32>
// OPTS: train.adamw {{.*}} weight_decay(1.000000e-01) : tensor<4xf32>
