// RUN: zero-opt %s --train-optimizer="precision=bf16-mixed" | FileCheck %s --check-prefix=MIXED

// bf16-mixed: an f32 master copy; bf16 parameter and gradient; the update
// is written to the master weights and, rounded, to the parameter.
train.param @w : tensor<4x2xbf16> init(<normal, 2.000000e-02>) trainable
train.state @w.grad : tensor<4x2xbf16> kind(<grad>) of(@w)
// MIXED: train.state @w.master : tensor<4x2xf32> kind(<master>) of(@w)
// MIXED-NEXT: train.state @w.exp_avg : tensor<4x2xf32> kind(<exp_avg>) of(@w)
// MIXED-NEXT: train.state @w.exp_avg_sq : tensor<4x2xf32> kind(<exp_avg_sq>) of(@w)
// MIXED-LABEL: func.func @optimizer_step(
// MIXED: %[[G:.*]] = train.load @w.grad : tensor<4x2xbf16>
// MIXED: %[[P:.*]] = train.load @w.master : tensor<4x2xf32>
// MIXED: %[[P2:.*]], %{{.*}}, %{{.*}} = train.adamw %[[P]], %[[G]], {{.*}} : tensor<4x2xf32>, tensor<4x2xbf16>
// MIXED-NEXT: train.store %[[P2]], @w.master : tensor<4x2xf32>
// MIXED-NEXT: %[[C:.*]] = train.cast %[[P2]] : tensor<4x2xf32> -> tensor<4x2xbf16>
// MIXED-NEXT: train.store %[[C]], @w : tensor<4x2xbf16>
