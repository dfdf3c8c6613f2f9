// RUN: zero-opt %s --train-autodiff --train-optimizer --zero-partition="stage=auto world-size=4 device-memory=599" -verify-diagnostics

// The model of zero-partition-auto.mlir: stage 3 needs 248 + 352 bytes.
// expected-error @+1 {{zero-partition: stage=auto: even stage 3 needs 600 bytes per rank (model states + 352 bytes of activations), more than device-memory=599}}
module {
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
}
