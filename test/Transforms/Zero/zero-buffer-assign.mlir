// RUN: zero-opt %s -split-input-file -zero-layout-states -zero-buffer-assign | FileCheck %s
// RUN: zero-opt %s -split-input-file -zero-layout-states -zero-buffer-assign -convert-train-to-emitc | FileCheck %s --check-prefix=LOWER
// RUN: zero-opt %s -split-input-file -zero-layout-states -zero-buffer-assign=strategy=bump -convert-train-to-emitc | FileCheck %s --check-prefix=BUMP

// Liveness-based placement (greedy best fit, largest first). Op positions
// in @forward_backward: 0 load, 1 %a, 2 %b, 3 %r, 4 %c, 5 %s, 6 seed,
// 7 %q, 8 %e, 9 %u, 10 %t1, 11 %t2, 12 return.

// The forward: the load is a view of @w (#zero.storage<state @w>, no
// block), %s a 64-byte value. The
// functions run one at a time, so the forward's values go to the
// activation arena, which @forward_backward needs anyway (384 bytes), not
// to the temporaries.
// Arena sizes: the max over the functions on the module, and per function.
// CHECK: module attributes {zero.arena_bytes = {activations = 384 : i64, temporaries = 192 : i64}, zero.state_arena_bytes = {{{.*}}}}
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: attributes {zero.arena_bytes = {activations = 64 : i64, temporaries = 0 : i64}}
// CHECK: train.load @w {zero.storage = [#zero.storage<state @w>]} : tensor<16xf32>
// CHECK: train.sum_squares {{.*}}zero.storage = [#zero.storage<arena activations, offset = 0, bytes = 64, live = [1, 2]>]

// CHECK-LABEL: func.func @forward_backward(
// CHECK-SAME: attributes {zero.arena_bytes = {activations = 384 : i64, temporaries = 192 : i64}}
// %a is read after the loss seed (position 6): the activations arena.
// CHECK: %[[A:.*]] = train.gelu {{.*}}zero.storage = [#zero.storage<arena activations, offset = 256, bytes = 64, live = [1, 8]>]
// %b's only direct use is the reshape at 3, but it lives until the last use
// of its view %r at 7 (aliases extend lifetimes), which also makes it an
// activation.
// CHECK: %[[B:.*]] = train.broadcast {{.*}}zero.storage = [#zero.storage<arena activations, offset = 0, bytes = 256, live = [2, 7]>]
// A view takes no block.
// CHECK: %[[R:.*]] = train.reshape %[[B]] {zero.storage = [#zero.storage<view 0, offset = 0>]} : tensor<4x16xf32> -> tensor<64xf32>
// CHECK: train.gelu {{.*}}zero.storage = [#zero.storage<arena temporaries, offset = 0, bytes = 64, live = [4, 5]>]
// Activations are all live at the seed, so they never share: 256 + 64 + 64.
// CHECK: train.sum_squares {{.*}}zero.storage = [#zero.storage<arena activations, offset = 320, bytes = 64, live = [5, 10]>]
// Disjoint live ranges reuse bytes: the seed ([6, 6]) and %q ([7, 10]) take
// %c's (dead after 5); %t1 ([10, 11]) takes %e's (dead after 9), %t2 ([11,
// 12]) %q's. Overlapping ones never share: %e ([8, 9]) goes above %q, %u
// ([9, 11]) above both.
// CHECK: train.fill {{.*}}zero.storage = [#zero.storage<arena temporaries, offset = 0, bytes = 64, live = [6, 6]>]
// CHECK: train.sum_squares {{.*}}zero.storage = [#zero.storage<arena temporaries, offset = 0, bytes = 64, live = [7, 10]>]
// CHECK: train.mul {{.*}}zero.storage = [#zero.storage<arena temporaries, offset = 64, bytes = 64, live = [8, 9]>]
// CHECK: train.sum_squares {{.*}}zero.storage = [#zero.storage<arena temporaries, offset = 128, bytes = 64, live = [9, 11]>]
// CHECK: train.add {{.*}}zero.storage = [#zero.storage<arena temporaries, offset = 64, bytes = 64, live = [10, 11]>]
// The returned value lives until the return.
// CHECK: train.add {{.*}}zero.storage = [#zero.storage<arena temporaries, offset = 0, bytes = 64, live = [11, 12]>]

// The lowering allocates the planned sizes (bump allocation without the
// pass: the same 384 B of activations, 7 x 64 B = 448 B of temporaries).
// LOWER: verbatim "// @forward_backward: 384 bytes of activations, 192 bytes of temporaries"
// BUMP: verbatim "// @forward_backward: 384 bytes of activations, 448 bytes of temporaries"

train.param @w : tensor<16xf32> init(<ones>) trainable
func.func @forward(%ids: tensor<1x2xi32>, %t: tensor<1x2xi32>) -> tensor<f32> {
  %w = train.load @w : tensor<16xf32>
  %s = train.sum_squares %w : tensor<16xf32>
  return %s : tensor<f32>
}
func.func @forward_backward(%ids: tensor<1x2xi32>, %t: tensor<1x2xi32>) -> tensor<f32> {
  %w = train.load @w : tensor<16xf32>
  %a = train.gelu %w : tensor<16xf32>
  %b = train.broadcast %a : tensor<16xf32> -> tensor<4x16xf32>
  %r = train.reshape %b : tensor<4x16xf32> -> tensor<64xf32>
  %c = train.gelu %w : tensor<16xf32>
  %s = train.sum_squares %c : tensor<16xf32>
  %seed = train.fill 1.0 {train.loss_seed} : tensor<f32>
  %q = train.sum_squares %r : tensor<64xf32>
  %e = train.mul %a, %a : tensor<16xf32>
  %u = train.sum_squares %e : tensor<16xf32>
  %t1 = train.add %s, %q : tensor<f32>
  %t2 = train.add %t1, %u : tensor<f32>
  return %t2 : tensor<f32>
}

// -----

// A collective's result is live from its start (written between start and
// wait); its input until the wait. The optimizer step's scalar arguments
// are 1-element temporaries live from the entry (-1). Ops with scratch (the
// attention's 2 T^2 + T = 36 float workspace, 192 bytes aligned) get a
// zero.scratch block for their position only. A result nothing reads (the
// log-sum-exp here) is live at its definition only.
// CHECK-LABEL: func.func @forward(
// CHECK: train.causal_attention {{.*}}zero.scratch = #zero.storage<arena temporaries, offset = 0, bytes = 192, live = [3, 3]>, zero.storage = [#zero.storage<arena temporaries, offset = 192, bytes = 64, live = [3, 4]>, #zero.storage<arena temporaries, offset = 256, bytes = 64, live = [3, 3]>]
// The sum reuses the scratch's bytes (the scratch lives at 3 only).
// CHECK: train.sum_squares {{.*}}zero.storage = [#zero.storage<arena temporaries, offset = 0, bytes = 64, live = [4, 5]>]
// CHECK-LABEL: func.func @optimizer_step(
// CHECK-SAME: {train.name = "lr", zero.storage = #zero.storage<arena temporaries, offset = 0, bytes = 64, live = [-1, -1]>}
// CHECK: zero.all_reduce_start {{.*}}{zero.storage = [#zero.storage<none>]}
// The sum at 2 is live while the collective writes %r: different bytes.
// CHECK: train.sum_squares {{.*}}zero.storage = [#zero.storage<arena temporaries, offset = 64, bytes = 64, live = [2, 2]>]
// CHECK: zero.wait {{.*}}zero.storage = [#zero.storage<arena temporaries, offset = 0, bytes = 64, live = [1, 4]>]
// LOWER: call_opaque "zrt_attention_forward"
// LOWER: verbatim "// @optimizer_step: 0 bytes of activations, 192 bytes of temporaries"
train.param @w : tensor<16xf32> init(<ones>) trainable
func.func @forward(%ids: tensor<1x2xi32>, %t: tensor<1x2xi32>) -> tensor<f32> {
  %w = train.load @w : tensor<16xf32>
  %q = train.reshape %w : tensor<16xf32> -> tensor<1x1x4x4xf32>
  %y = train.reshape %q : tensor<1x1x4x4xf32> -> tensor<1x1x4x4xf32>
  %o, %lse = train.causal_attention %q, %q, %y : tensor<1x1x4x4xf32>
  %s = train.sum_squares %o : tensor<1x1x4x4xf32>
  return %s : tensor<f32>
}
func.func @optimizer_step(%lr: tensor<f32> {train.name = "lr"}, %step: tensor<i64> {train.name = "step"}, %gs: tensor<f32> {train.name = "grad_scale"}) -> tensor<f32> {
  %w = train.load @w : tensor<16xf32>
  %h = zero.all_reduce_start %w kind(<sum>) world_size(2) : tensor<16xf32> -> !zero.pending<tensor<16xf32>>
  %s0 = train.sum_squares %w : tensor<16xf32>
  %r = zero.wait %h : !zero.pending<tensor<16xf32>>
  %s = train.sum_squares %r : tensor<16xf32>
  return %s : tensor<f32>
}

// -----

// Contiguous gradients: a value whose only use is a zero.pack is computed
// in its slot of the flat buffer (#zero.storage<pack_slot>: no block of its
// own, no copy), and
// the flat buffer lives from that value's definition (5) on. A member with
// another use (%gb, also summed) and one computed before the loss seed
// (%gc, an activation) keep their buffers and are copied.
// CHECK-LABEL: func.func @forward_backward(
// CHECK: %[[GC:.*]] = train.scale {{.*}}zero.storage = [#zero.storage<arena activations
// CHECK: train.fill 1.000000e+00 {train.loss_seed
// CHECK: %[[GA:.*]] = train.scale %{{.*}}, 2.000000e+00 {zero.storage = [#zero.storage<pack_slot, offset = 0>]} : tensor<3xf32>
// CHECK: %[[GB:.*]] = train.scale {{.*}}zero.storage = [#zero.storage<arena temporaries
// CHECK: zero.pack @g(%[[GA]], %[[GB]], %[[GC]]) {zero.storage = [#zero.storage<arena temporaries, offset = 0, bytes = 64, live = [5, 9]>]}
// LOWER: verbatim "// zero.pack -> tensor<10xf32>"
// LOWER-NOT: call_opaque "zrt_copy_any"{{.*}}args = [0 : index, 1 : index, 3,
// LOWER: call_opaque "zrt_copy_any"{{.*}}args = [0 : index, 1 : index, 2,
// LOWER: call_opaque "zrt_copy_any"{{.*}}args = [0 : index, 1 : index, 4,
// LOWER-NOT: call_opaque "zrt_copy_any"
// LOWER: call_opaque "zrt_reduce_scatter"
module attributes {zero.stage = 2 : i64, zero.world_size = 2 : i64} {
  train.param @a : tensor<3xf32> init(<ones>) trainable
  train.param @b : tensor<2xf32> init(<ones>) trainable
  train.param @c : tensor<4xf32> init(<ones>) trainable
  zero.group @g world_size(2) members [@a, @b, @c] offsets [0, 3, 5] decay [true, false, false] padded(10)
  zero.shard @g.grad : tensor<5xf32> kind(<grad>) of(@g)
  func.func @forward(%ids: tensor<1x2xi32>, %t: tensor<1x2xi32>) -> tensor<f32> {
    %b = train.load @b : tensor<2xf32>
    %l = train.sum_squares %b : tensor<2xf32>
    return %l : tensor<f32>
  }
  func.func @forward_backward(%ids: tensor<1x2xi32>, %t: tensor<1x2xi32>) -> tensor<f32> {
    %a = train.load @a : tensor<3xf32>
    %b = train.load @b : tensor<2xf32>
    %c = train.load @c : tensor<4xf32>
    %gc = train.scale %c, 3.0 : tensor<4xf32>
    %seed = train.fill 1.0 {train.loss_seed} : tensor<f32>
    %ga = train.scale %a, 2.0 : tensor<3xf32>
    %gb = train.scale %b, 2.0 : tensor<2xf32>
    %l = train.sum_squares %gb : tensor<2xf32>
    %p = zero.pack @g(%ga, %gb, %gc) : tensor<3xf32>, tensor<2xf32>, tensor<4xf32> -> tensor<10xf32>
    %rs = zero.reduce_scatter %p kind(<avg>) world_size(2) : tensor<10xf32> -> tensor<5xf32>
    zero.shard_accumulate %rs, @g.grad : tensor<5xf32>
    return %l : tensor<f32>
  }
}

// -----

// A bf16 matmul's scratch is zrt_matmul_bf16_workspace(1, M, N, K, 0) floats
// (runtime/src/common/matmul_args.h; runtime/test/kernels_test.cpp checks the
// same number): M = N = 4096, K = 64 needs row chunks of 2^24 / (K + N) =
// 4032 rows, so 64 * 4096 + 4032 * (64 + 4096) = 17035264 floats =
// 68141056 bytes, not the 4096 * 4096 f32 result.
// CHECK-LABEL: func.func @forward(
// CHECK: train.matmul {{.*}}zero.scratch = #zero.storage<arena temporaries, offset = 0, bytes = 68141056, live = [2, 2]>
train.param @x : tensor<4096x64xbf16> init(<ones>) trainable
train.param @w : tensor<4096x64xbf16> init(<ones>) trainable
func.func @forward(%ids: tensor<1x2xi32>, %t: tensor<1x2xi32>) -> tensor<f32> {
  %x = train.load @x : tensor<4096x64xbf16>
  %w = train.load @w : tensor<4096x64xbf16>
  %y = train.matmul %x, %w {transpose_b} : tensor<4096x64xbf16>, tensor<4096x64xbf16> -> tensor<4096x4096xbf16>
  %s = train.sum_squares %y : tensor<4096x4096xbf16>
  return %s : tensor<f32>
}

// -----

// @forward's values (256 + 64 bytes) do not fit into the 64 bytes of
// activations @forward_backward needs: they stay in the temporaries.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: attributes {zero.arena_bytes = {activations = 0 : i64, temporaries = 320 : i64}}
// CHECK: train.broadcast {{.*}}#zero.storage<arena temporaries
// CHECK-LABEL: func.func @forward_backward(
// CHECK-SAME: attributes {zero.arena_bytes = {activations = 64 : i64,
train.param @w : tensor<16xf32> init(<ones>) trainable
func.func @forward(%ids: tensor<1x2xi32>, %t: tensor<1x2xi32>) -> tensor<f32> {
  %w = train.load @w : tensor<16xf32>
  %b = train.broadcast %w : tensor<16xf32> -> tensor<4x16xf32>
  %s = train.sum_squares %b : tensor<4x16xf32>
  return %s : tensor<f32>
}
func.func @forward_backward(%ids: tensor<1x2xi32>, %t: tensor<1x2xi32>) -> tensor<f32> {
  %w = train.load @w : tensor<16xf32>
  %a = train.gelu %w : tensor<16xf32>
  %seed = train.fill 1.0 {train.loss_seed} : tensor<f32>
  %q = train.sum_squares %a : tensor<16xf32>
  return %q : tensor<f32>
}

// -----

// The other kinds of #zero.storage: an AdamW update in place is tied to
// the state it updates (new_param to %p, the moments to %m and %v:
// operands #0, #2, #3); a value computed only to be stored is computed in
// that state (store forwarding); a load the state is written under copies
// into a block of its own.
// CHECK-LABEL: func.func @optimizer_step(
// CHECK: %[[P:.*]] = train.load @p {zero.storage = [#zero.storage<state @p>]}
// CHECK: %[[G:.*]] = train.load @p.grad {zero.storage = [#zero.storage<arena temporaries
// CHECK: train.adamw {{.*}}zero.storage = [#zero.storage<tied 0>, #zero.storage<tied 2>, #zero.storage<tied 3>]
// CHECK: train.fill 0.000000e+00 {zero.storage = [#zero.storage<state @p.grad>]}
// STRATEGY: zero-buffer-assign: strategy must be best-fit or bump, not 'first-fit'
// RUN: not zero-opt %s -split-input-file -zero-layout-states -zero-buffer-assign=strategy=first-fit 2>&1 | FileCheck %s --check-prefix=STRATEGY
train.param @p : tensor<4xf32> init(<ones>) trainable
train.state @p.grad : tensor<4xf32> kind(<grad>) of(@p)
train.state @p.m : tensor<4xf32> kind(<exp_avg>) of(@p)
train.state @p.v : tensor<4xf32> kind(<exp_avg_sq>) of(@p)
func.func @forward(%ids: tensor<1x2xi32>, %t: tensor<1x2xi32>) -> tensor<f32> {
  %w = train.load @p : tensor<4xf32>
  %s = train.sum_squares %w : tensor<4xf32>
  return %s : tensor<f32>
}
func.func @optimizer_step(%lr: tensor<f32> {train.name = "lr"}, %step: tensor<i64> {train.name = "step"}, %gs: tensor<f32> {train.name = "grad_scale"}) -> tensor<f32> {
  %p = train.load @p : tensor<4xf32>
  %g = train.load @p.grad : tensor<4xf32>
  %m = train.load @p.m : tensor<4xf32>
  %v = train.load @p.v : tensor<4xf32>
  %np, %nm, %nv = train.adamw %p, %g, %m, %v, %lr, %step, %gs beta1(0.9) beta2(0.999) eps(1.0e-8) weight_decay(0.1) : tensor<4xf32>, tensor<4xf32>
  train.store %np, @p : tensor<4xf32>
  train.store %nm, @p.m : tensor<4xf32>
  train.store %nv, @p.v : tensor<4xf32>
  %z = train.fill 0.0 : tensor<4xf32>
  train.store %z, @p.grad : tensor<4xf32>
  %n = train.sum_squares %g : tensor<4xf32>
  return %n : tensor<f32>
}
