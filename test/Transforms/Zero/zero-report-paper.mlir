// The ZeRO paper's Figure 1: Ψ = 7.5·10⁹ parameters, N = 64, mixed
// precision AdamW (K = 12): 120 GB, 31.4 GB, 16.6 GB, 1.88 GB per rank.
// The parameter has more than 2³² elements: sizes are 64-bit throughout.
// RUN: zero-opt %s --train-autodiff --train-optimizer=precision=bf16-mixed --zero-partition="stage=0 world-size=64" --zero-report -o /dev/null | FileCheck %s --check-prefix=S0
// RUN: zero-opt %s --train-autodiff --train-optimizer=precision=bf16-mixed --zero-partition="stage=1 world-size=64" --zero-report -o /dev/null | FileCheck %s --check-prefix=S1
// RUN: zero-opt %s --train-autodiff --train-optimizer=precision=bf16-mixed --zero-partition="stage=2 world-size=64" --zero-report -o /dev/null | FileCheck %s --check-prefix=S2
// RUN: zero-opt %s --train-autodiff --train-optimizer=precision=bf16-mixed --zero-partition="stage=3 world-size=64" --zero-report -o /dev/null | FileCheck %s --check-prefix=S3

// S0: stage 0, world size 64, 7500000000 parameters
// S0: parameters {{ *}}15000000000 B
// S0: gradients {{ *}}15000000000 B
// S0: master weights {{ *}}30000000000 B
// S0: total {{ *}}120000000000 B {{ *}}120.000 GB {{ *}}111.759 GiB {{ *}}16.0000 Ψ
// 2Ψ(N-1)/N elements: an all-reduce of Ψ bf16 elements (the totals in
// bytes also hold the 7-byte gradient-norm all-reduce of stages 1-3).
// S0: all_reduce {{ *}}29531250000 B
// S0: total {{ *}}29531250000 B {{.*}} 1.968750 Ψ elements

// S1: master weights {{ *}}468750000 B
// S1: exp_avg {{ *}}468750000 B
// S1: total {{ *}}31406250000 B {{ *}}31.406 GB {{ *}}29.249 GiB
// S1: all_gather {{ *}}14765625000 B
// S1: reduce_scatter {{ *}}14765625000 B
// S1: total {{ *}}29531250007 B {{.*}} 1.968750 Ψ elements

// S2: gradients {{ *}}234375000 B
// S2: total {{ *}}16640625000 B {{ *}}16.641 GB {{ *}}15.498 GiB
// S2: total {{ *}}29531250007 B {{.*}} 1.968750 Ψ elements

// S3: parameters {{ *}}234375000 B
// S3: total {{ *}}1875000000 B {{ *}}1.875 GB {{ *}}1.746 GiB {{ *}}0.2500 Ψ
// 3Ψ(N-1)/N: two all-gathers and one reduce-scatter.
// S3: all_gather {{ *}}29531250000 B
// S3: reduce_scatter {{ *}}14765625000 B
// S3: total {{ *}}44296875007 B {{.*}} 2.953125 Ψ elements

train.param @w : tensor<7500000000xbf16> init(<normal, 2.000000e-02>) trainable
func.func @forward(%t: tensor<7500000000xbf16>) -> tensor<f32> {
  %w = train.load @w : tensor<7500000000xbf16>
  %l = train.mse %w, %t : tensor<7500000000xbf16> -> tensor<f32>
  return %l : tensor<f32>
}
