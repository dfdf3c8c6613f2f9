// RUN: zero-opt %s --train-optimizer=precision=fp16 -verify-diagnostics

// expected-error @+1 {{train-optimizer: unknown precision 'fp16'; expected fp32, bf16-mixed or fp16-mixed}}
module {
  train.param @w : tensor<4xf32> init(<zeros>) trainable
  train.state @w.grad : tensor<4xf32> kind(<grad>) of(@w)
}
