train.param @h0.w : tensor<10xf32> init(<normal, 2.000000e-02>) trainable
train.param @h1.w : tensor<10xf32> init(<normal, 2.000000e-02>) trainable
train.param @h2.w : tensor<10xf32> init(<normal, 2.000000e-02>) trainable
train.param @h3.w : tensor<10xf32> init(<normal, 2.000000e-02>) trainable
train.param @h4.w : tensor<10xf32> init(<normal, 2.000000e-02>) trainable
train.param @h5.w : tensor<10xf32> init(<normal, 2.000000e-02>) trainable
func.func @forward(%t: tensor<10xf32>) -> tensor<f32> {
  %w0 = train.load @h0.w : tensor<10xf32>
  %x0 = train.mul %w0, %t : tensor<10xf32>
  %w1 = train.load @h1.w : tensor<10xf32>
  %x1 = train.mul %w1, %x0 : tensor<10xf32>
  %w2 = train.load @h2.w : tensor<10xf32>
  %x2 = train.mul %w2, %x1 : tensor<10xf32>
  %w3 = train.load @h3.w : tensor<10xf32>
  %x3 = train.mul %w3, %x2 : tensor<10xf32>
  %w4 = train.load @h4.w : tensor<10xf32>
  %x4 = train.mul %w4, %x3 : tensor<10xf32>
  %w5 = train.load @h5.w : tensor<10xf32>
  %x5 = train.mul %w5, %x4 : tensor<10xf32>
  %l = train.mse %x5, %t : tensor<10xf32> -> tensor<f32>
  return %l : tensor<f32>
}
