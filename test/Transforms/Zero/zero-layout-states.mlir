// RUN: zero-opt %s -split-input-file -zero-layout-states | FileCheck %s
// Rerunning the pass recomputes the same layout.
// RUN: zero-opt %s -split-input-file -zero-layout-states -zero-layout-states | FileCheck %s

// A group's parameters and gradients back to back, each run followed by the
// group's padding (22 - 21 elements: 4 bytes, 64 reserved); the states of no
// group after them; all first moments before all second moments.
// CHECK: module attributes {zero.state_arena_bytes = {gradients = 192 : i64, master_weights = 0 : i64, moments = 256 : i64, parameters = 256 : i64}}
// CHECK: zero.group @g
// CHECK-SAME: zero.grad_span = #zero.slot<gradients, 0, 88>, zero.param_span = #zero.slot<parameters, 0, 88>
// CHECK: train.param @a {{.*}} {zero.slot = #zero.slot<parameters, 0, 64>}
// CHECK: train.param @b {{.*}} {zero.slot = #zero.slot<parameters, 64, 20>}
// CHECK: train.param @c {{.*}} {zero.slot = #zero.slot<parameters, 192, 12>}
// CHECK: train.state @a.grad {{.*}} {zero.slot = #zero.slot<gradients, 0, 64>}
// CHECK: train.state @b.grad {{.*}} {zero.slot = #zero.slot<gradients, 64, 20>}
// CHECK: train.state @a.exp_avg {{.*}} {zero.slot = #zero.slot<moments, 0, 64>}
// CHECK: train.state @a.exp_avg_sq {{.*}} {zero.slot = #zero.slot<moments, 128, 64>}
// CHECK: train.state @b.exp_avg {{.*}} {zero.slot = #zero.slot<moments, 64, 20>}
// CHECK: train.state @b.exp_avg_sq {{.*}} {zero.slot = #zero.slot<moments, 192, 20>}
zero.group @g world_size(2) members [@a, @b] offsets [0, 16] decay [true, false] padded(22)
train.param @a : tensor<16xf32> init(<zeros>) trainable
train.param @b : tensor<5xf32> init(<zeros>) trainable
train.param @c : tensor<3xf32> init(<ones>)
train.state @a.grad : tensor<16xf32> kind(<grad>) of(@a)
train.state @b.grad : tensor<5xf32> kind(<grad>) of(@b)
train.state @a.exp_avg : tensor<16xf32> kind(<exp_avg>) of(@a)
train.state @a.exp_avg_sq : tensor<16xf32> kind(<exp_avg_sq>) of(@a)
train.state @b.exp_avg : tensor<5xf32> kind(<exp_avg>) of(@b)
train.state @b.exp_avg_sq : tensor<5xf32> kind(<exp_avg_sq>) of(@b)

// -----

// Stage 3: a zero.sharded parameter has no storage (no slot) and its
// group no spans; the shards are placed in their kinds' arenas, bf16
// parameters and f32 master weights.
// CHECK: module attributes {zero.state_arena_bytes = {gradients = 64 : i64, master_weights = 64 : i64, moments = 128 : i64, parameters = 64 : i64}}
// CHECK: zero.group @g world_size(2) members [@w] offsets [0] decay [true] padded(8){{$}}
// CHECK: train.param @w {{.*}} {zero.sharded}{{$}}
// CHECK: zero.shard @g.param {{.*}} {zero.slot = #zero.slot<parameters, 0, 8>}
// CHECK: zero.shard @g.grad {{.*}} {zero.slot = #zero.slot<gradients, 0, 8>}
// CHECK: zero.shard @g.master {{.*}} {zero.slot = #zero.slot<master_weights, 0, 16>}
// CHECK: zero.shard @g.exp_avg {{.*}} {zero.slot = #zero.slot<moments, 0, 16>}
// CHECK: zero.shard @g.exp_avg_sq {{.*}} {zero.slot = #zero.slot<moments, 64, 16>}
zero.group @g world_size(2) members [@w] offsets [0] decay [true] padded(8)
train.param @w : tensor<8xbf16> init(<zeros>) trainable {zero.sharded}
zero.shard @g.param : tensor<4xbf16> kind(<param>) of(@g)
zero.shard @g.grad : tensor<4xbf16> kind(<grad>) of(@g)
zero.shard @g.master : tensor<4xf32> kind(<master>) of(@g)
zero.shard @g.exp_avg : tensor<4xf32> kind(<exp_avg>) of(@g)
zero.shard @g.exp_avg_sq : tensor<4xf32> kind(<exp_avg_sq>) of(@g)

// -----

// A group whose member has no gradient state gets a parameter span only.
// CHECK: zero.group @g {{.*}} padded(4) {zero.param_span = #zero.slot<parameters, 0, 16>}{{$}}
zero.group @g world_size(1) members [@p] offsets [0] decay [false] padded(4)
train.param @p : tensor<4xf32> init(<zeros>)

// -----

// Program constants (RoPE tables) get slots in the constants arena, equal
// tables of two functions one slot; the module records the arena only
// when there are constants.
// CHECK: module attributes {zero.state_arena_bytes = {constants = 192 : i64, gradients = 0 : i64, master_weights = 0 : i64, moments = 0 : i64, parameters = 0 : i64}}
// CHECK-LABEL: func.func @forward
// CHECK: train.rope_table theta(1.000000e+04) {zero.slot = #zero.slot<constants, 0, 128>} : tensor<8x2x2xf32>
// CHECK: train.rope_table theta(5.000000e+05) {zero.slot = #zero.slot<constants, 128, 32>} : tensor<2x2x2xf32>
// CHECK-LABEL: func.func @logits
// CHECK: train.rope_table theta(1.000000e+04) {zero.slot = #zero.slot<constants, 0, 128>} : tensor<8x2x2xf32>
func.func @forward() -> (tensor<8x2x2xf32>, tensor<2x2x2xf32>) {
  %t = train.rope_table theta(1.0e+04) : tensor<8x2x2xf32>
  %u = train.rope_table theta(5.0e+05) : tensor<2x2x2xf32>
  return %t, %u : tensor<8x2x2xf32>, tensor<2x2x2xf32>
}
func.func @logits() -> tensor<8x2x2xf32> {
  %t = train.rope_table theta(1.0e+04) : tensor<8x2x2xf32>
  return %t : tensor<8x2x2xf32>
}
