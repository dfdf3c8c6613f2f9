// fp16 mixed precision with dynamic loss scaling (torch.cuda.amp.GradScaler):
// the step function back-propagates loss·S, the optimizer skips every update
// when the gradient norm is not finite.
// RUN: zero-opt %s --train-autodiff=loss-scale=true --train-optimizer=precision=fp16-mixed | FileCheck %s
// RUN: zero-opt %s --train-autodiff=loss-scale=true --train-optimizer=precision=fp16-mixed --zero-partition="stage=2 world-size=2" | FileCheck %s --check-prefix=ZERO

train.param @w : tensor<4x2xf16> init(<normal, 2.000000e-02>) trainable
func.func @forward(%x: tensor<3x2xf16>, %y: tensor<3x4xf16>) -> tensor<f32> {
  %w = train.load @w : tensor<4x2xf16>
  %h = train.matmul %x, %w {transpose_b} : tensor<3x2xf16>, tensor<4x2xf16> -> tensor<3x4xf16>
  %l = train.mse %h, %y : tensor<3x4xf16> -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK: train.state @w.grad : tensor<4x2xf16> kind(<grad>) of(@w)
// CHECK: train.state @w.master : tensor<4x2xf32> kind(<master>) of(@w)
// CHECK-LABEL: func.func @forward_backward(
// CHECK-SAME: %[[S:[^:]*]]: tensor<f32> {train.name = "loss_scale"}) -> tensor<f32>
// CHECK: %[[ONE:.*]] = train.fill 1.000000e+00 {train.loss_seed} : tensor<f32>
// CHECK-NEXT: %[[SEED:.*]] = train.mul %[[ONE]], %[[S]] : tensor<f32>
// CHECK-NEXT: train.mse_grad %{{.*}}, %{{.*}}, %[[SEED]] : tensor<3x4xf16>
// CHECK-LABEL: func.func @optimizer_step(
// CHECK: %[[COEF:.*]], %[[NORM:.*]] = train.clip_coef
// CHECK: train.adamw {{.*}}, %[[COEF]] skip_nonfinite(%[[NORM]]) {{.*}} : tensor<4x2xf32>, tensor<4x2xf16>
// CHECK: train.cast %{{.*}} : tensor<4x2xf32> -> tensor<4x2xf16>

// ZERO: zero.shard @group.rest.master : tensor<4xf32> kind(<master>) of(@group.rest)
// ZERO-LABEL: func.func @optimizer_step(
// ZERO: %[[COEF:.*]], %[[NORM:.*]] = train.clip_coef
// ZERO: zero.shard_adamw @group.rest {{.*}}, %[[COEF]] skip_nonfinite(%[[NORM]]) {{.*}} : tensor<4xf32>, tensor<4xf16>
