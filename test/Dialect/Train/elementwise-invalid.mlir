// RUN: zero-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// train.add / train.mul
//===----------------------------------------------------------------------===//

func.func @add_element_type(%a: tensor<4xf32>, %b: tensor<4xbf16>) -> tensor<4xf32> {
  // expected-error @+1 {{'train.add' op failed to verify that all of {lhs, rhs, result} have same type}}
  %r = "train.add"(%a, %b) : (tensor<4xf32>, tensor<4xbf16>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @add_result_shape(%a: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'train.add' op failed to verify that all of {lhs, rhs, result} have same type}}
  %r = "train.add"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

func.func @add_no_broadcast(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'train.add' op failed to verify that all of {lhs, rhs, result} have same type}}
  %r = "train.add"(%a, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

func.func @add_int(%a: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{'train.add' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<4xi32>'}}
  %r = train.add %a, %a : tensor<4xi32>
  return %r : tensor<4xi32>
}

// -----

func.func @add_dynamic(%a: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'train.add' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<?xf32>'}}
  %r = train.add %a, %a : tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

func.func @mul_shape(%a: tensor<4x8xf16>, %b: tensor<8x4xf16>) -> tensor<4x8xf16> {
  // expected-error @+1 {{'train.mul' op failed to verify that all of {lhs, rhs, result} have same type}}
  %r = "train.mul"(%a, %b) : (tensor<4x8xf16>, tensor<8x4xf16>) -> tensor<4x8xf16>
  return %r : tensor<4x8xf16>
}

// -----

func.func @mul_f64(%a: tensor<4xf64>) -> tensor<4xf64> {
  // expected-error @+1 {{'train.mul' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<4xf64>'}}
  %r = train.mul %a, %a : tensor<4xf64>
  return %r : tensor<4xf64>
}

// -----

//===----------------------------------------------------------------------===//
// train.scale
//===----------------------------------------------------------------------===//

func.func @scale_result(%a: tensor<4xf32>) -> tensor<4xbf16> {
  // expected-error @+1 {{'train.scale' op failed to verify that all of {input, result} have same type}}
  %r = "train.scale"(%a) {factor = 2.0 : f64} : (tensor<4xf32>) -> tensor<4xbf16>
  return %r : tensor<4xbf16>
}

// -----

func.func @scale_no_factor(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'train.scale' op requires attribute 'factor'}}
  %r = "train.scale"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @scale_int_factor(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'train.scale' op attribute 'factor' failed to satisfy constraint: 64-bit float attribute}}
  %r = "train.scale"(%a) {factor = 2 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @scale_f32_factor(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'train.scale' op attribute 'factor' failed to satisfy constraint: 64-bit float attribute}}
  %r = "train.scale"(%a) {factor = 2.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

//===----------------------------------------------------------------------===//
// train.gelu / train.relu / train.softmax
//===----------------------------------------------------------------------===//

func.func @gelu_result(%a: tensor<4x8xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'train.gelu' op failed to verify that all of {input, result} have same type}}
  %r = "train.gelu"(%a) : (tensor<4x8xf32>) -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

func.func @relu_int(%a: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{'train.relu' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<4xi32>'}}
  %r = train.relu %a : tensor<4xi32>
  return %r : tensor<4xi32>
}

// -----

func.func @relu_result(%a: tensor<4xbf16>) -> tensor<4xf16> {
  // expected-error @+1 {{'train.relu' op failed to verify that all of {input, result} have same type}}
  %r = "train.relu"(%a) : (tensor<4xbf16>) -> tensor<4xf16>
  return %r : tensor<4xf16>
}

// -----

func.func @softmax_result(%a: tensor<4x10xf32>) -> tensor<4x10xbf16> {
  // expected-error @+1 {{'train.softmax' op failed to verify that all of {input, result} have same type}}
  %r = "train.softmax"(%a) : (tensor<4x10xf32>) -> tensor<4x10xbf16>
  return %r : tensor<4x10xbf16>
}

// -----

func.func @softmax_unranked(%a: tensor<*xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'train.softmax' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<*xf32>'}}
  %r = "train.softmax"(%a) : (tensor<*xf32>) -> tensor<*xf32>
  return %r : tensor<*xf32>
}

// -----

//===----------------------------------------------------------------------===//
// train.cast
//===----------------------------------------------------------------------===//

func.func @cast_shape(%a: tensor<4x8xf32>) -> tensor<8x4xbf16> {
  // expected-error @+1 {{'train.cast' op shape changes from 'tensor<4x8xf32>' to 'tensor<8x4xbf16>'}}
  %r = train.cast %a : tensor<4x8xf32> -> tensor<8x4xbf16>
  return %r : tensor<8x4xbf16>
}

// -----

func.func @cast_rank(%a: tensor<32xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'train.cast' op shape changes from 'tensor<32xf32>' to 'tensor<4x8xf32>'}}
  %r = train.cast %a : tensor<32xf32> -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

func.func @cast_to_int(%a: tensor<4xf32>) -> tensor<4xi32> {
  // expected-error @+1 {{'train.cast' op result #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<4xi32>'}}
  %r = train.cast %a : tensor<4xf32> -> tensor<4xi32>
  return %r : tensor<4xi32>
}

// -----

func.func @cast_from_int(%a: tensor<4xi32>) -> tensor<4xf32> {
  // expected-error @+1 {{'train.cast' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<4xi32>'}}
  %r = train.cast %a : tensor<4xi32> -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @cast_to_f64(%a: tensor<4xf32>) -> tensor<4xf64> {
  // expected-error @+1 {{'train.cast' op result #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<4xf64>'}}
  %r = train.cast %a : tensor<4xf32> -> tensor<4xf64>
  return %r : tensor<4xf64>
}

// -----

//===----------------------------------------------------------------------===//
// train.gelu_grad / train.relu_grad / train.softmax_grad
//===----------------------------------------------------------------------===//

func.func @gelu_grad_mismatch(%x: tensor<4x8xf32>, %dy: tensor<4x8xbf16>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'train.gelu_grad' op failed to verify that all of {input, grad, result} have same type}}
  %r = "train.gelu_grad"(%x, %dy) : (tensor<4x8xf32>, tensor<4x8xbf16>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

func.func @relu_grad_mismatch(%x: tensor<4x8xf32>, %dy: tensor<4x8xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'train.relu_grad' op failed to verify that all of {input, grad, result} have same type}}
  %r = "train.relu_grad"(%x, %dy) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

func.func @softmax_grad_mismatch(%y: tensor<4x10xf32>, %dy: tensor<4x9xf32>) -> tensor<4x10xf32> {
  // expected-error @+1 {{'train.softmax_grad' op failed to verify that all of {output, grad, result} have same type}}
  %r = "train.softmax_grad"(%y, %dy) : (tensor<4x10xf32>, tensor<4x9xf32>) -> tensor<4x10xf32>
  return %r : tensor<4x10xf32>
}

// -----

func.func @softmax_grad_int(%y: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{'train.softmax_grad' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<4xi32>'}}
  %r = train.softmax_grad %y, %y : tensor<4xi32>
  return %r : tensor<4xi32>
}

// -----

func.func @softmax_scalar(%x: tensor<f32>) {
  // expected-error @+1 {{'train.softmax' op needs rank >= 1 (it normalizes the last dimension)}}
  %y = train.softmax %x : tensor<f32>
  return
}

// -----

func.func @softmax_grad_scalar(%x: tensor<f32>) {
  // expected-error @+1 {{'train.softmax_grad' op needs rank >= 1 (it normalizes the last dimension)}}
  %y = train.softmax_grad %x, %x : tensor<f32>
  return
}

// -----

func.func @cast_same(%x: tensor<4xf32>) {
  // expected-error @+1 {{'train.cast' op casts 'tensor<4xf32>' to itself}}
  %y = train.cast %x : tensor<4xf32> -> tensor<4xf32>
  return
}
