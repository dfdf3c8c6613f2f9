// RUN: zero-opt %s -split-input-file -verify-diagnostics --zero-layout-states --zero-buffer-assign=strategy=bump --convert-train-to-emitc

// Every diagnostic of convert-train-to-emitc, on verified IR.

// expected-error@+1 {{convert-train-to-emitc: the module has no @forward (the model.h contract needs it)}}
module {
  train.param @p : tensor<4xf32> init(<zeros>) trainable
}

// -----

train.param @p : tensor<4xf32> init(<zeros>) trainable
// expected-error@+1 {{'func.func' op @eval is not part of the model.h contract (@forward, @forward_backward, @optimizer_step, @logits)}}
func.func @eval(%ids: tensor<2x2xi32>) -> tensor<f32> {
  %p = train.load @p : tensor<4xf32>
  %s = train.sum_squares %p : tensor<4xf32>
  return %s : tensor<f32>
}

// -----

// expected-error@+1 {{'func.func' op must have a body of exactly one block}}
func.func private @forward(tensor<2x2xi32>, tensor<2x2xi32>) -> tensor<f32>

// -----

// The MLP's f32 inputs do not fit the model.h contract (token ids).
train.param @w : tensor<2x4xf32> init(<normal, 2.000000e-02>) trainable
// expected-error@+1 {{'func.func' op must take token ids tensor<BxTxi32> as its first argument (the model.h contract)}}
func.func @forward(%x: tensor<3x4xf32>, %y: tensor<3x2xf32>) -> tensor<f32> {
  %w = train.load @w : tensor<2x4xf32>
  %h = train.matmul %x, %w {transpose_b} : tensor<3x4xf32>, tensor<2x4xf32> -> tensor<3x2xf32>
  %l = train.mse %h, %y : tensor<3x2xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

train.param @p : tensor<4xf32> init(<zeros>) trainable
// expected-error@+1 {{'func.func' op argument #1 has type 'tensor<2x2xf32>'; the model.h contract passes int32 token ids / targets}}
func.func @forward(%ids: tensor<2x2xi32>, %y: tensor<2x2xf32>) -> tensor<f32> {
  %p = train.load @p : tensor<4xf32>
  %s = train.sum_squares %p : tensor<4xf32>
  return %s : tensor<f32>
}

// -----

train.param @p : tensor<4xf32> init(<zeros>) trainable
// expected-error@+1 {{'func.func' op takes 3 arguments; the model.h contract passes token ids and targets}}
func.func @forward(%ids: tensor<2x2xi32>, %t: tensor<2x2xi32>, %u: tensor<2x2xi32>) -> tensor<f32> {
  %p = train.load @p : tensor<4xf32>
  %s = train.sum_squares %p : tensor<4xf32>
  return %s : tensor<f32>
}

// -----

// A third argument of @forward_backward is the loss scale (fp16-mixed,
// train-autodiff{loss-scale=true}) and nothing else.
train.param @p : tensor<4xf32> init(<zeros>) trainable
func.func @forward(%ids: tensor<2x2xi32>, %t: tensor<2x2xi32>) -> tensor<f32> {
  %p = train.load @p : tensor<4xf32>
  %q = train.sum_squares %p : tensor<4xf32>
  return %q : tensor<f32>
}
// expected-error@+1 {{'func.func' op argument #2 must be the loss scale (tensor<f32> {train.name = "loss_scale"}) for the model.h contract}}
func.func @forward_backward(%ids: tensor<2x2xi32>, %t: tensor<2x2xi32>, %s: tensor<f32>) -> tensor<f32> {
  %p = train.load @p : tensor<4xf32>
  %q = train.sum_squares %p : tensor<4xf32>
  return %q : tensor<f32>
}

// -----

train.param @p : tensor<4xf32> init(<zeros>) trainable
// expected-error@+1 {{'func.func' op must return exactly the f32 loss (tensor<f32>) for the model.h contract}}
func.func @forward(%ids: tensor<2x2xi32>, %t: tensor<2x2xi32>) -> tensor<4xf32> {
  %p = train.load @p : tensor<4xf32>
  return %p : tensor<4xf32>
}

// -----

train.param @p : tensor<4xf32> init(<zeros>) trainable
func.func @forward(%ids: tensor<2x2xi32>, %t: tensor<2x2xi32>) -> tensor<f32> {
  %p = train.load @p : tensor<4xf32>
  %s = train.sum_squares %p : tensor<4xf32>
  return %s : tensor<f32>
}
// expected-error@+1 {{'func.func' op must return the logits tensor<BxTxVp> for the model.h contract}}
func.func @logits(%ids: tensor<2x2xi32>) -> tensor<4xf32> {
  %p = train.load @p : tensor<4xf32>
  return %p : tensor<4xf32>
}

// -----

train.param @p : tensor<4xf32> init(<zeros>) trainable
func.func @forward(%ids: tensor<2x2xi32>, %t: tensor<2x2xi32>) -> tensor<f32> {
  %p = train.load @p : tensor<4xf32>
  %s = train.sum_squares %p : tensor<4xf32>
  return %s : tensor<f32>
}
// expected-error@+1 {{'func.func' op must take (lr: tensor<f32>, step: tensor<i64>, grad_scale: tensor<f32>) for the model.h contract}}
func.func @optimizer_step(%lr: tensor<f32>) -> tensor<f32> {
  return %lr : tensor<f32>
}

// -----

train.param @p : tensor<4xf32> init(<zeros>) trainable
func.func @forward(%ids: tensor<2x2xi32>, %t: tensor<2x2xi32>) -> tensor<f32> {
  %p = train.load @p : tensor<4xf32>
  %s = train.sum_squares %p : tensor<4xf32>
  return %s : tensor<f32>
}
// expected-error@+1 {{'func.func' op argument #1 (step) must be 'tensor<i64>'}}
func.func @optimizer_step(%lr: tensor<f32> {train.name = "lr"}, %step: tensor<f32> {train.name = "step"}, %gs: tensor<f32> {train.name = "grad_scale"}) -> tensor<f32> {
  return %lr : tensor<f32>
}

// -----

train.param @p : tensor<4xf32> init(<zeros>) trainable
func.func @forward(%ids: tensor<2x2xi32>, %t: tensor<2x2xi32>) -> tensor<f32> {
  %p = train.load @p : tensor<4xf32>
  %s = train.sum_squares %p : tensor<4xf32>
  return %s : tensor<f32>
}
// expected-error@+1 {{'func.func' op must return exactly the gradient norm (tensor<f32>) for the model.h contract}}
func.func @optimizer_step(%lr: tensor<f32>, %step: tensor<i64>, %gs: tensor<f32>) {
  return
}

// -----

// f16 is a storage type (fp16-mixed), cast to and from f32 only.
train.param @p : tensor<4xbf16> init(<zeros>) trainable
func.func @forward(%ids: tensor<2x2xi32>, %t: tensor<2x2xi32>) -> tensor<f32> {
  %p = train.load @p : tensor<4xbf16>
  // expected-error@+1 {{'train.cast' op casts between 'bf16' and 'f16' directly; the lowering casts to and from f32 only}}
  %h = train.cast %p : tensor<4xbf16> -> tensor<4xf16>
  %s = train.sum_squares %h : tensor<4xf16>
  return %s : tensor<f32>
}

// -----

// The lowering widens nothing: a compute op on bf16 without a native bf16
// kernel (train.mul) must reach it widened by train-legalize-bf16 (this RUN
// line leaves that pass out).
train.param @p : tensor<4xbf16> init(<zeros>) trainable
func.func @forward(%ids: tensor<2x2xi32>, %t: tensor<2x2xi32>) -> tensor<f32> {
  %p = train.load @p : tensor<4xbf16>
  // expected-error@+1 {{'train.mul' op has bf16/f16 tensors but no native bf16 kernel; run train-legalize-bf16 (before zero-buffer-assign) to widen it to f32}}
  %h = train.mul %p, %p : tensor<4xbf16>
  %s = train.sum_squares %h : tensor<4xbf16>
  return %s : tensor<f32>
}

// -----

// f16 has no native kernel at all, not even for an add.
train.param @p : tensor<4xf16> init(<zeros>) trainable
func.func @forward(%ids: tensor<2x2xi32>, %t: tensor<2x2xi32>) -> tensor<f32> {
  %p = train.load @p : tensor<4xf16>
  // expected-error@+1 {{'train.add' op has bf16/f16 tensors but no native bf16 kernel; run train-legalize-bf16 (before zero-buffer-assign) to widen it to f32}}
  %h = train.add %p, %p : tensor<4xf16>
  %s = train.sum_squares %h : tensor<4xf16>
  return %s : tensor<f32>
}

// -----

// Stage 3 keeps parameters as declarations without storage.
train.param @a : tensor<3xf32> init(<zeros>) trainable {zero.sharded}
train.param @b : tensor<1xf32> init(<zeros>) trainable {zero.sharded}
zero.group @g world_size(2) members [@a, @b] offsets [0, 3] decay [true, false] padded(4)
zero.shard @g.param : tensor<2xf32> kind(<param>) of(@g)
func.func @forward(%ids: tensor<2x2xi32>, %t: tensor<2x2xi32>) -> tensor<f32> {
  // expected-error@+1 {{'train.load' op reads parameter @a which has no storage of its own (zero.sharded: its data lives in its group's zero.shard of kind param)}}
  %a = train.load @a : tensor<3xf32>
  %s = train.sum_squares %a : tensor<3xf32>
  return %s : tensor<f32>
}

// -----

train.param @p : tensor<4xf32> init(<zeros>) trainable
// expected-error@+1 {{'emitc.verbatim' op is not supported at module level by convert-train-to-emitc}}
emitc.verbatim "int x;"
func.func @forward(%ids: tensor<2x2xi32>, %t: tensor<2x2xi32>) -> tensor<f32> {
  %p = train.load @p : tensor<4xf32>
  %s = train.sum_squares %p : tensor<4xf32>
  return %s : tensor<f32>
}

// -----

func.func @forward(%ids: tensor<2x2xi32>, %t: tensor<2x2xi32>) -> tensor<f32> {
  // expected-error@+1 {{'arith.constant' op is not supported by convert-train-to-emitc}}
  %c = arith.constant dense<1.0> : tensor<f32>
  return %c : tensor<f32>
}

// -----

train.param @p : tensor<1x1x1x1x1x1x1x1x2xf32> init(<zeros>) trainable
func.func @forward(%ids: tensor<2x2xi32>, %t: tensor<2x2xi32>) -> tensor<f32> {
  %p = train.load @p : tensor<1x1x1x1x1x1x1x1x2xf32>
  // expected-error@+1 {{'train.transpose' op has rank 9; the CPU lowering permutes at most 8 dimensions}}
  %q = train.transpose %p [8, 0, 1, 2, 3, 4, 5, 6, 7] : tensor<1x1x1x1x1x1x1x1x2xf32> -> tensor<2x1x1x1x1x1x1x1x1xf32>
  %s = train.sum_squares %q : tensor<2x1x1x1x1x1x1x1x1xf32>
  return %s : tensor<f32>
}

// -----

// expected-error@+1 {{'func.func' op must take token ids tensor<BxTxi32> as its first argument (the model.h contract)}}
func.func @forward() -> tensor<f32> {
  %z = train.fill 0.0 : tensor<f32>
  return %z : tensor<f32>
}

// -----

func.func @forward(%ids: tensor<2x2xi32>, %t: tensor<2x2xi32>) -> tensor<f32> {
  %z = train.fill 0.0 : tensor<4xf32>
  // expected-error@+1 {{'zero.all_reduce_start' op must be waited exactly once (zero.wait)}}
  %p = zero.all_reduce_start %z kind(<sum>) world_size(1) : tensor<4xf32> -> !zero.pending<tensor<4xf32>>
  %s = train.sum_squares %z : tensor<4xf32>
  return %s : tensor<f32>
}

// -----

// A kernel workspace (zrt/abi.h formulas) whose size overflows int64:
// attention over T = 2^32 tokens needs 2 T^2 + T floats.
func.func @forward(%ids: tensor<1x2xi32>, %t: tensor<1x2xi32>) -> tensor<f32> {
  %q = train.fill 0.0 : tensor<1x1x4294967296x1xf32>
  // expected-error@+1 {{'train.causal_attention' op needs a kernel workspace larger than int64 bytes (zrt/abi.h)}}
  %o, %lse = train.causal_attention %q, %q, %q : tensor<1x1x4294967296x1xf32>
  %s = train.sum_squares %o : tensor<1x1x4294967296x1xf32>
  return %s : tensor<f32>
}

// -----

// Array models: every argument of @forward is a named input, or none is.
train.param @w : tensor<2x4xf32> init(<normal, 2.000000e-02>) trainable
// expected-error@+1 {{'func.func' op argument #1 has no train.name; either every argument of @forward is a named input (an array model) or none is (token ids and targets)}}
func.func @forward(%x: tensor<3x4xf32> {train.name = "x"}, %y: tensor<3x2xf32>) -> tensor<f32> {
  %w = train.load @w : tensor<2x4xf32>
  %h = train.matmul %x, %w {transpose_b} : tensor<3x4xf32>, tensor<2x4xf32> -> tensor<3x2xf32>
  %l = train.mse %h, %y : tensor<3x2xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

train.param @w : tensor<2x4xf32> init(<normal, 2.000000e-02>) trainable
// expected-error@+1 {{'func.func' op input name 'x' appears twice}}
func.func @forward(%x: tensor<3x4xf32> {train.name = "x"}, %y: tensor<3x2xf32> {train.name = "x"}) -> tensor<f32> {
  %w = train.load @w : tensor<2x4xf32>
  %h = train.matmul %x, %w {transpose_b} : tensor<3x4xf32>, tensor<2x4xf32> -> tensor<3x2xf32>
  %l = train.mse %h, %y : tensor<3x2xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

train.param @w : tensor<2x4xf32> init(<normal, 2.000000e-02>) trainable
// expected-error@+1 {{'func.func' op input name 'my target' is not made of letters, digits and '_'}}
func.func @forward(%x: tensor<3x4xf32> {train.name = "x"}, %y: tensor<3x2xf32> {train.name = "my target"}) -> tensor<f32> {
  %w = train.load @w : tensor<2x4xf32>
  %h = train.matmul %x, %w {transpose_b} : tensor<3x4xf32>, tensor<2x4xf32> -> tensor<3x2xf32>
  %l = train.mse %h, %y : tensor<3x2xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

train.param @p : tensor<4xf32> init(<zeros>) trainable
// expected-error@+1 {{'func.func' op input 'scale' has type 'tensor<f32>'; the model.h contract passes static tensors [B, ...] of f32, bf16, f16, i32 or i64}}
func.func @forward(%s: tensor<f32> {train.name = "scale"}) -> tensor<f32> {
  %p = train.load @p : tensor<4xf32>
  %q = train.sum_squares %p : tensor<4xf32>
  return %q : tensor<f32>
}

// -----

train.param @w : tensor<2x4xf32> init(<normal, 2.000000e-02>) trainable
// expected-error@+1 {{'func.func' op input 'target' has batch size 2, input 'x' 3 (the first dimension of every input is the batch)}}
func.func @forward(%x: tensor<3x4xf32> {train.name = "x"}, %y: tensor<2x2xf32> {train.name = "target"}) -> tensor<f32> {
  %w = train.load @w : tensor<2x4xf32>
  %l = train.mse %y, %y : tensor<2x2xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

train.param @w : tensor<2x4xf32> init(<normal, 2.000000e-02>) trainable
func.func @forward(%x: tensor<3x4xf32> {train.name = "x"}, %y: tensor<3x2xf32> {train.name = "target"}) -> tensor<f32> {
  %w = train.load @w : tensor<2x4xf32>
  %h = train.matmul %x, %w {transpose_b} : tensor<3x4xf32>, tensor<2x4xf32> -> tensor<3x2xf32>
  %l = train.mse %h, %y : tensor<3x2xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// expected-error@+1 {{'func.func' op is for token models; a model with named inputs has no @logits}}
func.func @logits(%x: tensor<3x4xf32>) -> tensor<3x2xf32> {
  %w = train.load @w : tensor<2x4xf32>
  %h = train.matmul %x, %w {transpose_b} : tensor<3x4xf32>, tensor<2x4xf32> -> tensor<3x2xf32>
  return %h : tensor<3x2xf32>
}

// -----

train.param @w : tensor<2x4xf32> init(<normal, 2.000000e-02>) trainable
func.func @forward(%x: tensor<3x4xf32> {train.name = "x"}, %y: tensor<3x2xf32> {train.name = "target"}) -> tensor<f32> {
  %w = train.load @w : tensor<2x4xf32>
  %h = train.matmul %x, %w {transpose_b} : tensor<3x4xf32>, tensor<2x4xf32> -> tensor<3x2xf32>
  %l = train.mse %h, %y : tensor<3x2xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// expected-error@+1 {{'func.func' op argument #1 must be @forward's input 'target' ('tensor<3x2xf32>')}}
func.func @forward_backward(%x: tensor<3x4xf32> {train.name = "x"}, %y: tensor<3x2xf32> {train.name = "y"}) -> tensor<f32> {
  %w = train.load @w : tensor<2x4xf32>
  %h = train.matmul %x, %w {transpose_b} : tensor<3x4xf32>, tensor<2x4xf32> -> tensor<3x2xf32>
  %l = train.mse %h, %y : tensor<3x2xf32> -> tensor<f32>
  return %l : tensor<f32>
}
