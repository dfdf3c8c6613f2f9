// The ZeRO paper's per-device model states with model parallelism
// (§5.4, Table 2's setting): Ψ = 10¹² parameters, N_m = 16 tensor ranks ×
// N_d = 64 data ranks (N = 1024), mixed-precision AdamW (K = 12). The one
// parameter is declared as zero-tensor-parallel declares a cut one: its
// 1/16 part, 6.25·10¹⁰ bf16 elements, with zero.tensor_split. Per rank:
//   stage 0: 16Ψ/N_m                    = 1000 GB
//   stage 1: 4Ψ/N_m + 12Ψ/(N_d·N_m)      = 250 + 11.71875 = 261.71875 GB
//   stage 2: 2Ψ/N_m + 14Ψ/(N_d·N_m)      = 125 + 13.671875 = 138.671875 GB
//   stage 3: 16Ψ/(N_d·N_m) = 16·10¹²/1024 = 15.625 GB (the paper's 15.6).
// RUN: zero-opt %s --train-autodiff --train-optimizer=precision=bf16-mixed --zero-partition="stage=0 world-size=1024" --zero-report -o /dev/null | FileCheck %s --check-prefix=S0
// RUN: zero-opt %s --train-autodiff --train-optimizer=precision=bf16-mixed --zero-partition="stage=1 world-size=1024" --zero-report -o /dev/null | FileCheck %s --check-prefix=S1
// RUN: zero-opt %s --train-autodiff --train-optimizer=precision=bf16-mixed --zero-partition="stage=2 world-size=1024" --zero-report -o /dev/null | FileCheck %s --check-prefix=S2
// RUN: zero-opt %s --train-autodiff --train-optimizer=precision=bf16-mixed --zero-partition="stage=3 world-size=1024" --zero-report -o /dev/null | FileCheck %s --check-prefix=S3

// Ψ units are of the whole model: 16/16 = 1, and 16/1024 = 0.015625.
// S0: zero-report: stage 0, mesh N_d = 64 x N_m = 16 (world size 1024), Ψ = 1000000000000 parameters in the model, 62500000000 on each tensor rank
// S0: total {{ *}}1000000000000 B {{ *}}1000.000 GB {{.*}} 1.0000 Ψ
// The data axis all-reduces the 6.25·10¹⁰ bf16 gradients: 2·1.25·10¹¹ B
// ·63/64; the tensor axis only the norm, 2·4·15/16 = 7 B (integer).
// S0: data axis, N_d = 64:
// S0: all_reduce {{ *}}246093750000 B
// S0: tensor axis, N_m = 16:
// S0: all_reduce {{ *}}7 B

// S1: total {{ *}}261718750000 B {{ *}}261.719 GB
// S2: total {{ *}}138671875000 B {{ *}}138.672 GB
// S3: total {{ *}}15625000000 B {{ *}}15.625 GB {{.*}} 0.0156 Ψ
// S3: (of it cut) {{ *}}15625000000 B
module attributes {zero.mesh = #zero.mesh<data = 0, tensor = 16>} {
  train.param @w : tensor<62500000000xbf16> init(<normal, 2.000000e-02>) trainable {zero.tensor_split = #zero.tensor_split<dim = 0, blocks = 1, parts = 16, full = [1000000000000]>}
  func.func @forward(%t: tensor<62500000000xbf16>) -> tensor<f32> {
    %w = train.load @w : tensor<62500000000xbf16>
    %l = train.mse %w, %t : tensor<62500000000xbf16> -> tensor<f32>
    return %l : tensor<f32>
  }
}
