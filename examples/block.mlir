train.param @h0.w : tensor<6x6xf32> init(<normal, 2.000000e-02>) trainable
train.param @h0.b : tensor<6xf32> init(<zeros>) trainable
func.func @forward(%x: tensor<4x6xf32>, %y: tensor<4x6xf32>) -> tensor<f32> {
  %w = train.load @h0.w : tensor<6x6xf32>
  %b = train.load @h0.b : tensor<6xf32>
  %h = train.matmul %x, %w bias %b {transpose_b} : tensor<4x6xf32>, tensor<6x6xf32>, tensor<6xf32> -> tensor<4x6xf32>
  %a = train.gelu %h : tensor<4x6xf32>
  %l = train.mse %a, %y : tensor<4x6xf32> -> tensor<f32>
  return %l : tensor<f32>
}
