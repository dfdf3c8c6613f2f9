// RUN: zero-opt %s -split-input-file | FileCheck %s
// RUN: zero-opt %s -split-input-file | zero-opt -split-input-file | FileCheck %s

// CHECK: train.param @wte : tensor<256x64xf32> init(<normal, 2.000000e-02>) trainable
// CHECK: train.param @ln.bias : tensor<64xbf16> init(<zeros>)
// CHECK: train.param @ln.weight : tensor<64xf16> init(<ones>)
train.param @wte : tensor<256x64xf32> init(<normal, 0.02>) trainable
train.param @ln.bias : tensor<64xbf16> init(<zeros>)
train.param @ln.weight : tensor<64xf16> init(<ones>)

// CHECK-LABEL: func.func @load_add
func.func @load_add(%x: tensor<256x64xf32>) -> tensor<256x64xf32> {
  // CHECK: %[[W:.*]] = train.load @wte : tensor<256x64xf32>
  %w = train.load @wte : tensor<256x64xf32>
  // CHECK: train.add %[[W]], %{{.*}} : tensor<256x64xf32>
  %r = train.add %w, %x : tensor<256x64xf32>
  return %r : tensor<256x64xf32>
}
