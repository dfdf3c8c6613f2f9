// Ψ = 10¹², N = 1024, stage 3: 16·10¹² B / 1024 = 15.6 GB per rank (the
// paper rounds it to 16 GB).
// RUN: zero-opt %s --train-autodiff --train-optimizer=precision=bf16-mixed --zero-partition="stage=3 world-size=1024" --zero-report -o /dev/null | FileCheck %s
// CHECK: total {{ *}}15625000000 B {{ *}}15.625 GB
train.param @w : tensor<1000000000000xbf16> init(<normal, 2.000000e-02>) trainable
func.func @forward(%t: tensor<1000000000000xbf16>) -> tensor<f32> {
  %w = train.load @w : tensor<1000000000000xbf16>
  %l = train.mse %w, %t : tensor<1000000000000xbf16> -> tensor<f32>
  return %l : tensor<f32>
}
