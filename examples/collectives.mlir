// A parameter of the train dialect and the ZeRO collectives of one shard
// group over 4 ranks: the shapes a ZeRO-3 step moves (see docs/).
train.param @wte : tensor<256x64xf32> init(<normal, 2.000000e-02>) trainable

func.func @step(%shard: tensor<4096xf32>, %grad: tensor<16384xf32>, %sq: tensor<f32>)
    -> (tensor<16384xf32>, tensor<4096xf32>, tensor<f32>) {
  %full = zero.all_gather %shard world_size(4) : tensor<4096xf32> -> tensor<16384xf32>
  %gshard = zero.reduce_scatter %grad kind(<avg>) world_size(4) : tensor<16384xf32> -> tensor<4096xf32>
  %norm2 = zero.all_reduce %sq kind(<sum>) world_size(4) : tensor<f32>
  return %full, %gshard, %norm2 : tensor<16384xf32>, tensor<4096xf32>, tensor<f32>
}
