// RUN: zero-opt %s -split-input-file --zero-place-progress | FileCheck %s
// RUN: zero-opt %s -split-input-file --zero-place-progress="interval=2" | FileCheck %s --check-prefix=EVERY2
// RUN: zero-opt %s -split-input-file --zero-place-progress --zero-place-progress | FileCheck %s --check-prefix=TWICE
// RUN: zero-opt %s -split-input-file --zero-place-progress="interval=0" | FileCheck %s --check-prefix=NONE
// RUN: not zero-opt %s --zero-place-progress="interval=-1" 2>&1 | FileCheck %s --check-prefix=NEG

// NEG: error: zero-place-progress: interval must be >= 0 (got -1)

// While the gather is in flight, a zero.progress follows each compute op
// (train.scale, train.gelu), not the state access (train.load), the view
// (train.reshape) or the optimizer-step op (train.sum_squares); none
// before the start or after the wait.
// CHECK-LABEL: func.func @forward
// CHECK: %[[W:.*]] = train.load @w
// CHECK-NEXT: %[[A:.*]] = train.scale %[[W]]
// CHECK-NEXT: %[[P:.*]] = zero.all_gather_start
// CHECK-NEXT: %[[X:.*]] = train.load @w
// CHECK-NEXT: %[[Y:.*]] = train.scale %[[X]]
// CHECK-NEXT: zero.progress
// CHECK-NEXT: %[[R:.*]] = train.reshape %[[Y]]
// CHECK-NEXT: %[[G:.*]] = train.gelu %[[R]]
// CHECK-NEXT: zero.progress
// CHECK-NEXT: %[[S:.*]] = train.sum_squares %[[G]]
// CHECK-NEXT: %[[U:.*]] = zero.wait %[[P]]
// CHECK-NEXT: %[[Z:.*]] = train.scale %[[U]]
// CHECK-NEXT: train.sum_squares %[[Z]]
// CHECK-NOT: zero.progress
// CHECK: return
// EVERY2-LABEL: func.func @forward
// EVERY2: train.scale
// EVERY2: zero.all_gather_start
// EVERY2: train.scale
// EVERY2-NOT: zero.progress
// EVERY2: train.gelu
// EVERY2-NEXT: zero.progress
// EVERY2-NOT: zero.progress
// EVERY2: return
// TWICE-LABEL: func.func @forward
// TWICE-COUNT-2: zero.progress
// TWICE-NOT: zero.progress
// TWICE: return
// NONE-LABEL: func.func @forward
// NONE-NOT: zero.progress
// NONE: return
train.param @w : tensor<4xf32> init(<zeros>) trainable
func.func @forward(%ids: tensor<1x2xi32>, %t: tensor<1x2xi32>) -> tensor<f32> {
  %w = train.load @w : tensor<4xf32>
  %a = train.scale %w, 2.0 : tensor<4xf32>
  %q = zero.all_gather_start %a world_size(1) : tensor<4xf32> -> !zero.pending<tensor<4xf32>>
  %x = train.load @w : tensor<4xf32>
  %y = train.scale %x, 2.0 : tensor<4xf32>
  %r = train.reshape %y : tensor<4xf32> -> tensor<2x2xf32>
  %g = train.gelu %r : tensor<2x2xf32>
  %s = train.sum_squares %g : tensor<2x2xf32>
  %u = zero.wait %q : !zero.pending<tensor<4xf32>>
  %z = train.scale %u, 3.0 : tensor<4xf32>
  %l = train.sum_squares %z : tensor<4xf32>
  %m = train.add %l, %s : tensor<f32>
  return %m : tensor<f32>
}

// -----

// Two collectives overlap: the window lasts until the last wait.
// CHECK-LABEL: func.func @two
// CHECK: zero.reduce_scatter_start
// CHECK: zero.all_reduce_start
// CHECK: train.scale
// CHECK-NEXT: zero.progress
// CHECK: zero.wait
// CHECK: train.scale
// CHECK-NEXT: zero.progress
// CHECK: zero.wait
// CHECK-NEXT: train.scale
// CHECK-NOT: zero.progress
// CHECK: return
func.func @two(%x: tensor<8xf32>, %v: tensor<f32>) -> tensor<4xf32> {
  %p = zero.reduce_scatter_start %x kind(<sum>) world_size(2) : tensor<8xf32> -> !zero.pending<tensor<4xf32>>
  %q = zero.all_reduce_start %v kind(<sum>) world_size(2) : tensor<f32> -> !zero.pending<tensor<f32>>
  %a = train.scale %x, 2.0 : tensor<8xf32>
  %r = zero.wait %q : !zero.pending<tensor<f32>>
  %b = train.scale %a, 2.0 : tensor<8xf32>
  %s = zero.wait %p : !zero.pending<tensor<4xf32>>
  %c = train.scale %s, 2.0 : tensor<4xf32>
  return %c : tensor<4xf32>
}
