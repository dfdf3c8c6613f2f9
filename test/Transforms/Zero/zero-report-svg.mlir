// The paper's Figure 1 as an SVG for the user's model: stages 0-3 side by
// side at svg-world-size ranks.
// RUN: zero-opt %s --train-autodiff --train-optimizer=precision=bf16-mixed --zero-report="svg=%t.svg quiet" -o /dev/null
// RUN: FileCheck %s --input-file=%t.svg
// RUN: not zero-opt %s --train-autodiff --train-optimizer=precision=bf16-mixed --zero-partition=stage=1 --zero-report="svg=%t.svg quiet" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ERR

// CHECK: <svg xmlns="http://www.w3.org/2000/svg"
// CHECK: Model states per rank: 7500000000 parameters, N = 64
// CHECK: >120.000 GB</text>
// CHECK: >stage 0</text>
// CHECK: >31.406 GB</text>
// CHECK: >stage 1</text>
// CHECK: >16.641 GB</text>
// CHECK: >stage 2</text>
// CHECK: >1.875 GB</text>
// CHECK: >stage 3</text>
// CHECK: </svg>
// ERR: error: zero-report: svg needs the training step before zero-partition (it partitions copies at every stage)

train.param @w : tensor<7500000000xbf16> init(<normal, 2.000000e-02>) trainable
func.func @forward(%t: tensor<7500000000xbf16>) -> tensor<f32> {
  %w = train.load @w : tensor<7500000000xbf16>
  %l = train.mse %w, %t : tensor<7500000000xbf16> -> tensor<f32>
  return %l : tensor<f32>
}
