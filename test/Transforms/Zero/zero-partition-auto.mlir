// stage=auto picks the lowest stage whose model states plus activations
// fit device-memory. Here, per rank at N = 4: model states 856 / 552 / 400 /
// 248 bytes for stages 0-3, plus 352 bytes of forward values the backward
// reads.
// RUN: zero-opt %s --train-autodiff --train-optimizer --zero-partition="stage=auto world-size=4 device-memory=1208" | FileCheck %s --check-prefix=S0
// RUN: zero-opt %s --train-autodiff --train-optimizer --zero-partition="stage=auto world-size=4 device-memory=1207" | FileCheck %s --check-prefix=S1
// RUN: zero-opt %s --train-autodiff --train-optimizer --zero-partition="stage=auto world-size=4 device-memory=904" | FileCheck %s --check-prefix=S1
// RUN: zero-opt %s --train-autodiff --train-optimizer --zero-partition="stage=auto world-size=4 device-memory=903" | FileCheck %s --check-prefix=S2
// RUN: zero-opt %s --train-autodiff --train-optimizer --zero-partition="stage=auto world-size=4 device-memory=752" | FileCheck %s --check-prefix=S2
// RUN: zero-opt %s --train-autodiff --train-optimizer --zero-partition="stage=auto world-size=4 device-memory=751" | FileCheck %s --check-prefix=S3
// RUN: zero-opt %s --train-autodiff --train-optimizer --zero-partition="stage=auto world-size=4 device-memory=600" | FileCheck %s --check-prefix=S3

// S0: module attributes {zero.stage = 0 : i64, zero.world_size = 4 : i64}
// S1: module attributes {zero.stage = 1 : i64, zero.world_size = 4 : i64}
// S2: module attributes {zero.stage = 2 : i64, zero.world_size = 4 : i64}
// S3: module attributes {zero.stage = 3 : i64, zero.world_size = 4 : i64}

train.param @h0.w : tensor<6x6xf32> init(<normal, 2.000000e-02>) trainable
train.param @h0.b : tensor<5xf32> init(<zeros>) trainable
train.param @h1.w : tensor<8xf32> init(<ones>) trainable
train.param @head : tensor<3xf32> init(<zeros>) trainable
train.param @frozen : tensor<6xf32> init(<ones>)
func.func @forward(%x: tensor<6x6xf32>, %y: tensor<6x6xf32>) -> tensor<f32> {
  %w = train.load @h0.w : tensor<6x6xf32>
  %a = train.matmul %x, %w {transpose_b} : tensor<6x6xf32>, tensor<6x6xf32> -> tensor<6x6xf32>
  %g = train.gelu %a : tensor<6x6xf32>
  %l = train.mse %g, %y : tensor<6x6xf32> -> tensor<f32>
  %b = train.load @h0.b : tensor<5xf32>
  %h1 = train.load @h1.w : tensor<8xf32>
  %hd = train.load @head : tensor<3xf32>
  %f = train.load @frozen : tensor<6xf32>
  %t5 = train.fill 0.0 : tensor<5xf32>
  %t8 = train.fill 0.0 : tensor<8xf32>
  %t3 = train.fill 0.0 : tensor<3xf32>
  %l2 = train.mse %b, %t5 : tensor<5xf32> -> tensor<f32>
  %l3 = train.mse %h1, %t8 : tensor<8xf32> -> tensor<f32>
  %l4 = train.mse %hd, %t3 : tensor<3xf32> -> tensor<f32>
  %s1 = train.add %l, %l2 : tensor<f32>
  %s2 = train.add %s1, %l3 : tensor<f32>
  %s3 = train.add %s2, %l4 : tensor<f32>
  return %s3 : tensor<f32>
}

