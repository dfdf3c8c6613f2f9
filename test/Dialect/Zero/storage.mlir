// RUN: zero-opt %s | zero-opt | FileCheck %s

// Every kind of #zero.storage (zero-buffer-assign) prints as it parses.

// CHECK-LABEL: func.func @kinds(
// CHECK-SAME: %{{.*}}: tensor<f32> {zero.storage = #zero.storage<arena temporaries, offset = 0, bytes = 64, live = [-1, 4]>}
// CHECK: train.load @w {zero.storage = [#zero.storage<state @w>]}
// CHECK: train.reshape %{{.*}} {zero.storage = [#zero.storage<view 0, offset = 0>]}
// CHECK: train.gelu %{{.*}} {zero.scratch = #zero.storage<arena temporaries, offset = 128, bytes = 64, live = [2, 2]>, zero.storage = [#zero.storage<arena activations, offset = 256, bytes = 64, live = [2, 3]>]}
// CHECK: train.sum_squares %{{.*}} {zero.storage = [#zero.storage<arena temporaries, offset = 64, bytes = 64, live = [3, 4]>]}
train.param @w : tensor<16xf32> init(<ones>) trainable
func.func @kinds(%lr: tensor<f32> {zero.storage = #zero.storage<arena temporaries, offset = 0, bytes = 64, live = [-1, 4]>}) -> tensor<f32> {
  %w = train.load @w {zero.storage = [#zero.storage<state @w>]} : tensor<16xf32>
  %r = train.reshape %w {zero.storage = [#zero.storage<view 0, offset = 0>]} : tensor<16xf32> -> tensor<4x4xf32>
  %g = train.gelu %r {zero.storage = [#zero.storage<arena activations, offset = 256, bytes = 64, live = [2, 3]>], zero.scratch = #zero.storage<arena temporaries, offset = 128, bytes = 64, live = [2, 2]>} : tensor<4x4xf32>
  %s = train.sum_squares %g {zero.storage = [#zero.storage<arena temporaries, offset = 64, bytes = 64, live = [3, 4]>]} : tensor<4x4xf32>
  return %s : tensor<f32>
}

// CHECK-LABEL: func.func @attributes(
// CHECK-SAME: zero.constant = #zero.storage<arena constants, offset = 64, bytes = 128>
// CHECK-SAME: zero.none = #zero.storage<none>
// CHECK-SAME: zero.slot_of_pack = #zero.storage<pack_slot, offset = 16>
// CHECK-SAME: zero.span = #zero.storage<span @g, gradients>
// CHECK-SAME: zero.tied = #zero.storage<tied 2>
func.func @attributes() attributes {
    zero.none = #zero.storage<none>, zero.tied = #zero.storage<tied 2>,
    zero.slot_of_pack = #zero.storage<pack_slot, offset = 16>,
    zero.span = #zero.storage<span @g, gradients>,
    zero.constant = #zero.storage<arena constants, offset = 64, bytes = 128>} {
  return
}
