// RUN: zero-opt %s -split-input-file -zero-layout-states -test-state-access -o /dev/null | FileCheck %s

// The state-access analysis (lib/Analysis/StateAccess.cpp) of one step:
// op positions, last uses through views, the activation split at the loss
// seed, and each state's read and write intervals.

// CHECK-LABEL: test-state-access @forward_backward
// The load reads @w in place; the gelu is kept for the backward (read
// after the loss seed at 3), and so is its view %2.
// CHECK-NEXT: %0 = train.load: last use 1, in @w
// CHECK-NEXT: %1 = train.gelu: last use 6, aliases %2, activation
// CHECK-NEXT: %2 = train.reshape: last use 4, activation
// CHECK-NEXT: %3 = train.fill: last use 11
// CHECK-NEXT: %4 = train.sum_squares: last use 11
// %5 is read at 10, after the store at 8 writes @w.grad: it copies (no
// "in @w.grad"), and its access is its position only.
// CHECK-NEXT: %5 = train.load: last use 10
// CHECK-NEXT: %6 = train.add: last use -1
// CHECK-NEXT: %7 = train.fill: last use 8
// CHECK-NEXT: %9 = train.load: last use 10, in @w.grad
// CHECK-NEXT: %10 = train.add: last use -1
// CHECK-NEXT: %11 = train.add: last use 12
// The fill is computed in the gradient (store forwarding): the write
// takes effect from the fill's position 7.
// CHECK-NEXT: @w: read [0, 1] by train.load (0);
// CHECK-NEXT: @w.grad: read [5, 5] by train.load (5); write [7, 8] by train.store (8); read [9, 10] by train.load (9);
// CHECK-LABEL: test-state-access @forward
// CHECK-NEXT: %0 = train.load: last use 1, in @w
// CHECK-NEXT: %1 = train.sum_squares: last use 2
// CHECK-NEXT: @w: read [0, 1] by train.load (0);
train.param @w : tensor<16xf32> init(<ones>) trainable
train.state @w.grad : tensor<16xf32> kind(<grad>) of(@w)
func.func @forward(%ids: tensor<1x2xi32>, %t: tensor<1x2xi32>) -> tensor<f32> {
  %w = train.load @w : tensor<16xf32>
  %s = train.sum_squares %w : tensor<16xf32>
  return %s : tensor<f32>
}
func.func @forward_backward(%ids: tensor<1x2xi32>, %t: tensor<1x2xi32>) -> tensor<f32> {
  %w = train.load @w : tensor<16xf32>
  %a = train.gelu %w : tensor<16xf32>
  %r = train.reshape %a : tensor<16xf32> -> tensor<4x4xf32>
  %seed = train.fill 1.0 {train.loss_seed} : tensor<f32>
  %q = train.sum_squares %r : tensor<4x4xf32>
  %g = train.load @w.grad : tensor<16xf32>
  %n = train.add %g, %a : tensor<16xf32>
  %z = train.fill 0.0 : tensor<16xf32>
  train.store %z, @w.grad : tensor<16xf32>
  // A load after the write reads the new value in place; %g, read after
  // the write, had to copy (it reads the state at its position only).
  %g2 = train.load @w.grad : tensor<16xf32>
  %m = train.add %g2, %g : tensor<16xf32>
  %l = train.add %q, %seed : tensor<f32>
  return %l : tensor<f32>
}
