// RUN: zero-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// #train.init
//===----------------------------------------------------------------------===//

// expected-error @+1 {{normal initializer needs a positive standard deviation, got 0.000000e+00}}
train.param @w : tensor<4xf32> init(<normal, 0.0>)

// -----

// expected-error @+1 {{normal initializer needs a positive standard deviation, got -1.000000e+00}}
train.param @w : tensor<4xf32> init(<normal, -1.0>)

// -----

// A normal initializer needs its std.
// expected-error @+1 {{expected ','}}
train.param @w : tensor<4xf32> init(<normal>)

// -----

// A constant initializer takes no std (it would be lost on printing).
// expected-error @+1 {{expected '>'}}
train.param @w : tensor<4xf32> init(<zeros, 5.0>)

// -----

// expected-error @+1 {{unknown initializer 'uniform'; expected normal, zeros or ones}}
train.param @w : tensor<4xf32> init(<uniform, 1.0>)

// -----

//===----------------------------------------------------------------------===//
// train.param
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'train.param' op element type must be f32, bf16 or f16, got 'i32'}}
train.param @w : tensor<4xi32> init(<zeros>)

// -----

// expected-error @+1 {{'train.param' op element type must be f32, bf16 or f16, got 'f64'}}
train.param @w : tensor<4xf64> init(<zeros>)

// -----

// expected-error @+1 {{'train.param' op type must be a statically shaped tensor, got 'tensor<?xf32>'}}
train.param @w : tensor<?xf32> init(<zeros>)

// -----

// expected-error @+1 {{'train.param' op parameter type has a zero-sized dimension ('tensor<0x4xf32>'); every tensor needs at least one element}}
train.param @w : tensor<0x4xf32> init(<zeros>)

// -----

// An element count that overflows int64 is named as such (it once wrapped
// around to "no elements").
// expected-error @+1 {{'train.param' op parameter type 'tensor<4294967296x4294967296xf32>' has more than 2^62 elements (its element count overflows)}}
train.param @w : tensor<4294967296x4294967296xf32> init(<zeros>)

// -----

// expected-error @+1 {{'train.param' op attribute 'type' failed to satisfy constraint: type attribute of ranked tensor of any type values}}
train.param @w : tensor<*xf32> init(<zeros>)

// -----

// expected-error @+1 {{'train.param' op attribute 'type' failed to satisfy constraint: type attribute of ranked tensor of any type values}}
train.param @w : f32 init(<zeros>)

// -----

// expected-note @+1 {{see existing symbol definition here}}
train.param @w : tensor<4xf32> init(<zeros>)
// expected-error @+1 {{redefinition of symbol named 'w'}}
train.param @w : tensor<4xf32> init(<ones>)

// -----

//===----------------------------------------------------------------------===//
// train.state
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'train.state' op 'nothing' does not name a train.param}}
train.state @s : tensor<4xf32> kind(<exp_avg>) of(@nothing)

// -----

train.param @w : tensor<4xf32> init(<zeros>) trainable
train.state @w.grad : tensor<4xf32> kind(<grad>) of(@w)
// A state of a state is not allowed.
// expected-error @+1 {{'train.state' op 'w.grad' does not name a train.param}}
train.state @s : tensor<4xf32> kind(<exp_avg>) of(@w.grad)

// -----

train.param @w : tensor<4x8xf32> init(<zeros>) trainable
// expected-error @+1 {{'train.state' op type 'tensor<8x4xf32>' must have the shape of parameter 'w' 'tensor<4x8xf32>'}}
train.state @w.exp_avg : tensor<8x4xf32> kind(<exp_avg>) of(@w)

// -----

train.param @w : tensor<4x8xf32> init(<zeros>) trainable
// expected-error @+1 {{'train.state' op type 'tensor<4x?xf32>' must have the shape of parameter 'w' 'tensor<4x8xf32>'}}
train.state @w.grad : tensor<4x?xf32> kind(<grad>) of(@w)

// -----

train.param @w : tensor<4xbf16> init(<zeros>) trainable
// expected-error @+1 {{'train.state' op a gradient has the parameter's element type 'bf16', got 'f32'}}
train.state @w.grad : tensor<4xf32> kind(<grad>) of(@w)

// -----

train.param @w : tensor<4xbf16> init(<zeros>) trainable
// expected-error @+1 {{'train.state' op master weights and moments are f32, got 'bf16'}}
train.state @w.master : tensor<4xbf16> kind(<master>) of(@w)

// -----

train.param @w : tensor<4xf16> init(<zeros>) trainable
// expected-error @+1 {{'train.state' op master weights and moments are f32, got 'f16'}}
train.state @w.exp_avg : tensor<4xf16> kind(<exp_avg>) of(@w)

// -----

train.param @w : tensor<4xbf16> init(<zeros>) trainable
// expected-error @+1 {{'train.state' op master weights and moments are f32, got 'bf16'}}
train.state @w.exp_avg_sq : tensor<4xbf16> kind(<exp_avg_sq>) of(@w)

// -----

train.param @w : tensor<4xf32> init(<zeros>) trainable
// expected-error @+2 {{custom op 'train.state' expected ::mlir::train::StateKind to be one of: grad, master, exp_avg, exp_avg_sq}}
// expected-error @+1 {{custom op 'train.state' failed to parse Train_StateKindAttr parameter 'value' which is to be a `::mlir::train::StateKind`}}
train.state @w.m : tensor<4xf32> kind(<momentum>) of(@w)

// -----

//===----------------------------------------------------------------------===//
// train.load
//===----------------------------------------------------------------------===//

train.param @w : tensor<4xf32> init(<zeros>)
func.func @wrong_type() -> tensor<8xf32> {
  // expected-error @+1 {{'train.load' op result type 'tensor<8xf32>' does not match declared type 'tensor<4xf32>'}}
  %w = train.load @w : tensor<8xf32>
  return %w : tensor<8xf32>
}

// -----

train.param @w : tensor<4xbf16> init(<zeros>) trainable
train.state @w.exp_avg : tensor<4xf32> kind(<exp_avg>) of(@w)
func.func @wrong_state_type() -> tensor<4xbf16> {
  // expected-error @+1 {{'train.load' op result type 'tensor<4xbf16>' does not match declared type 'tensor<4xf32>'}}
  %m = train.load @w.exp_avg : tensor<4xbf16>
  return %m : tensor<4xbf16>
}

// -----

func.func @no_param() -> tensor<8xf32> {
  // expected-error @+1 {{'train.load' op 'nothing' does not name a train.param or train.state}}
  %w = train.load @nothing : tensor<8xf32>
  return %w : tensor<8xf32>
}

// -----

func.func @not_state() -> tensor<8xf32> {
  // expected-error @+1 {{'train.load' op 'not_state' does not name a train.param or train.state}}
  %w = train.load @not_state : tensor<8xf32>
  return %w : tensor<8xf32>
}

// -----

train.param @w : tensor<4xf32> init(<zeros>)
func.func @unranked() -> tensor<*xf32> {
  // expected-error @+1 {{'train.load' op result #0 must be ranked tensor of any type values, but got 'tensor<*xf32>'}}
  %w = "train.load"() {name = @w} : () -> tensor<*xf32>
  return %w : tensor<*xf32>
}

// -----

//===----------------------------------------------------------------------===//
// train.store
//===----------------------------------------------------------------------===//

train.param @w : tensor<4xf32> init(<zeros>)
func.func @store_wrong_type(%v: tensor<4xbf16>) {
  // expected-error @+1 {{'train.store' op value type 'tensor<4xbf16>' does not match declared type 'tensor<4xf32>'}}
  train.store %v, @w : tensor<4xbf16>
  return
}

// -----

func.func @store_nothing(%v: tensor<4xf32>) {
  // expected-error @+1 {{'train.store' op 'nothing' does not name a train.param or train.state}}
  train.store %v, @nothing : tensor<4xf32>
  return
}

// -----

func.func @store_ids(%v: tensor<4xi32>) {
  // expected-error @+1 {{'train.store' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<4xi32>'}}
  train.store %v, @w : tensor<4xi32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.accumulate
//===----------------------------------------------------------------------===//

train.param @w : tensor<4xbf16> init(<zeros>) trainable
train.state @w.grad : tensor<4xbf16> kind(<grad>) of(@w)
func.func @accumulate_wrong_type(%g: tensor<4xf32>) {
  // expected-error @+1 {{'train.accumulate' op value type 'tensor<4xf32>' does not match declared type 'tensor<4xbf16>'}}
  train.accumulate %g, @w.grad : tensor<4xf32>
  return
}

// -----

func.func @accumulate_nothing(%g: tensor<4xf32>) {
  // expected-error @+1 {{'train.accumulate' op 'w.grad' is not a train.state (only state accumulates)}}
  train.accumulate %g, @w.grad : tensor<4xf32>
  return
}

// -----

func.func @accumulate_dynamic(%g: tensor<?xf32>) {
  // expected-error @+1 {{'train.accumulate' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<?xf32>'}}
  train.accumulate %g, @w.grad : tensor<?xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.fill
//===----------------------------------------------------------------------===//

func.func @fill_int() -> tensor<4xi32> {
  // expected-error @+1 {{'train.fill' op result #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<4xi32>'}}
  %r = train.fill 1.0 : tensor<4xi32>
  return %r : tensor<4xi32>
}

// -----

func.func @fill_dynamic() -> tensor<?xf32> {
  // expected-error @+1 {{'train.fill' op result #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<?xf32>'}}
  %r = train.fill 1.0 : tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

func.func @fill_no_value() -> tensor<4xf32> {
  // expected-error @+1 {{'train.fill' op requires attribute 'value'}}
  %r = "train.fill"() : () -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @fill_int_value() -> tensor<4xf32> {
  // expected-error @+1 {{'train.fill' op attribute 'value' failed to satisfy constraint: 64-bit float attribute}}
  %r = "train.fill"() {value = 1 : i64} : () -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

train.param @w : tensor<4xf32> init(<zeros>) trainable
func.func @accumulate_param(%g: tensor<4xf32>) {
  // expected-error @+1 {{'train.accumulate' op 'w' is not a train.state (only state accumulates)}}
  train.accumulate %g, @w : tensor<4xf32>
  return
}

// -----

train.param @w : tensor<4xf32> init(<zeros>) trainable
// expected-error @+1 {{'train.state' op master weights are for bf16/f16 parameters; 'w' is f32}}
train.state @w.master : tensor<4xf32> kind(<master>) of(@w)
