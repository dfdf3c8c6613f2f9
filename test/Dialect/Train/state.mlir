// RUN: zero-opt %s -split-input-file | FileCheck %s
// RUN: zero-opt %s -split-input-file | zero-opt -split-input-file | FileCheck %s
// RUN: zero-opt %s -split-input-file -mlir-print-op-generic | zero-opt -split-input-file | FileCheck %s

// Parameters: every initializer, every element type, trainable and frozen.

// CHECK: train.param @wte : tensor<256x64xf32> init(<normal, 2.000000e-02>) trainable
// CHECK: train.param @ln.bias : tensor<64xbf16> init(<zeros>)
// CHECK: train.param @ln.weight : tensor<64xf16> init(<ones>) trainable
// CHECK: train.param @scalar : tensor<f32> init(<normal, 1.000000e+00>)
train.param @wte : tensor<256x64xf32> init(<normal, 0.02>) trainable
train.param @ln.bias : tensor<64xbf16> init(<zeros>)
train.param @ln.weight : tensor<64xf16> init(<ones>) trainable
train.param @scalar : tensor<f32> init(<normal, 1.0>)


// -----

// State of every kind; gradients follow the parameter's element type,
// master weights and moments are f32.

// CHECK: train.param @w : tensor<8x4xbf16> init(<normal, 2.000000e-02>) trainable
// CHECK: train.state @w.grad : tensor<8x4xbf16> kind(<grad>) of(@w)
// CHECK: train.state @w.master : tensor<8x4xf32> kind(<master>) of(@w)
// CHECK: train.state @w.exp_avg : tensor<8x4xf32> kind(<exp_avg>) of(@w)
// CHECK: train.state @w.exp_avg_sq : tensor<8x4xf32> kind(<exp_avg_sq>) of(@w)
train.param @w : tensor<8x4xbf16> init(<normal, 0.02>) trainable
train.state @w.grad : tensor<8x4xbf16> kind(<grad>) of(@w)
train.state @w.master : tensor<8x4xf32> kind(<master>) of(@w)
train.state @w.exp_avg : tensor<8x4xf32> kind(<exp_avg>) of(@w)
train.state @w.exp_avg_sq : tensor<8x4xf32> kind(<exp_avg_sq>) of(@w)

// The state may be declared before its parameter.
// CHECK: train.state @v.grad : tensor<3xf16> kind(<grad>) of(@v)
// CHECK: train.param @v : tensor<3xf16> init(<ones>) trainable
train.state @v.grad : tensor<3xf16> kind(<grad>) of(@v)
train.param @v : tensor<3xf16> init(<ones>) trainable

// CHECK-LABEL: func.func @load_store_accumulate
// CHECK-SAME: (%[[DW:.*]]: tensor<8x4xbf16>)
func.func @load_store_accumulate(%dw: tensor<8x4xbf16>) -> tensor<8x4xf32> {
  // CHECK: %[[W:.*]] = train.load @w : tensor<8x4xbf16>
  %w = train.load @w : tensor<8x4xbf16>
  // CHECK: %[[M:.*]] = train.load @w.master : tensor<8x4xf32>
  %m = train.load @w.master : tensor<8x4xf32>
  // CHECK: train.accumulate %[[DW]], @w.grad : tensor<8x4xbf16>
  train.accumulate %dw, @w.grad : tensor<8x4xbf16>
  // CHECK: train.store %[[M]], @w.exp_avg : tensor<8x4xf32>
  train.store %m, @w.exp_avg : tensor<8x4xf32>
  // CHECK: train.store %[[W]], @w : tensor<8x4xbf16>
  train.store %w, @w : tensor<8x4xbf16>
  // CHECK: return %[[M]] : tensor<8x4xf32>
  return %m : tensor<8x4xf32>
}

// -----

// Symbols resolve in the nearest symbol table: the inner module's @p
// shadows the outer one.

// CHECK: train.param @p : tensor<2x2xf32> init(<zeros>)
train.param @p : tensor<2x2xf32> init(<zeros>)

// CHECK: module @inner
module @inner {
  // CHECK: train.param @p : tensor<3xf16> init(<ones>)
  train.param @p : tensor<3xf16> init(<ones>)
  // CHECK-LABEL: func.func @nested
  func.func @nested() -> tensor<3xf16> {
    // CHECK: %[[P:.*]] = train.load @p : tensor<3xf16>
    %p = train.load @p : tensor<3xf16>
    // CHECK: train.store %[[P]], @p : tensor<3xf16>
    train.store %p, @p : tensor<3xf16>
    return %p : tensor<3xf16>
  }
}

// -----

// CHECK-LABEL: func.func @fill
func.func @fill() -> (tensor<f32>, tensor<4x8xbf16>, tensor<3xf16>, tensor<2xf32>) {
  // CHECK: train.fill 1.000000e+00 : tensor<f32>
  %a = train.fill 1.0 : tensor<f32>
  // CHECK: train.fill 0.000000e+00 : tensor<4x8xbf16>
  %b = train.fill 0.0 : tensor<4x8xbf16>
  // CHECK: train.fill -2.500000e-01 : tensor<3xf16>
  %c = train.fill -0.25 : tensor<3xf16>
  // CHECK: train.fill {{.*}} {note = "x"} : tensor<2xf32>
  %d = train.fill 3.0 {note = "x"} : tensor<2xf32>
  return %a, %b, %c, %d : tensor<f32>, tensor<4x8xbf16>, tensor<3xf16>, tensor<2xf32>
}
