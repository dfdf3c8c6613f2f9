// RUN: zero-opt %s -split-input-file -zero-layout-states -test-buffer-plan -o /dev/null | FileCheck %s

// The buffer planner (lib/Analysis/BufferPlan.cpp): every value's and
// scratch's block with its arena, byte range and live range, and the
// arena extents against bump allocation (no reuse).

// Positions: 0 load, 1 %a, 2 %b, 3 %r, 4 %c, 5 seed, 6 %q, 7 %t1, 8 %t2,
// 9 return. The load reads @w in place and the reshape is a view: no
// block. %b (through its view %r, read at 6) and %c (read at 7) are kept
// across the seed: activations; the rest are temporaries, and disjoint
// lives share bytes (%t2 at [8, 9] reuses %q's, dead after 7).
// CHECK-LABEL: test-buffer-plan @forward_backward: activations 320, temporaries 192 (without reuse: activations 320, temporaries 320)
// CHECK-NEXT: %1: temporaries [0, 64) live [1, 2]
// CHECK-NEXT: %2: activations [0, 256) live [2, 6]
// CHECK-NEXT: %4: activations [256, 320) live [4, 7]
// CHECK-NEXT: %5: temporaries [0, 64) live [5, 8]
// CHECK-NEXT: %6: temporaries [64, 128) live [6, 7]
// CHECK-NEXT: %7: temporaries [128, 192) live [7, 8]
// CHECK-NEXT: %8: temporaries [64, 128) live [8, 9]
// The forward runs alone: its value goes to the activation arena, which
// @forward_backward needs anyway.
// CHECK-LABEL: test-buffer-plan @forward: activations 64, temporaries 0 (without reuse: activations 64, temporaries 0)
// CHECK-NEXT: %1: activations [0, 64) live [1, 2]

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
  %c = train.sum_squares %w : tensor<16xf32>
  %seed = train.fill 1.0 {train.loss_seed} : tensor<f32>
  %q = train.sum_squares %r : tensor<64xf32>
  %t1 = train.add %c, %q : tensor<f32>
  %t2 = train.add %t1, %seed : tensor<f32>
  return %t2 : tensor<f32>
}
