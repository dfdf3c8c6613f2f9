// RUN: zero-opt %s -split-input-file -verify-diagnostics
// Zero-sized dimensions are rejected by every train op's verifier (the
// NonEmptyTensors trait): a batch of 0 once crashed the lowering.

func.func @empty_batch(%t: tensor<16x8xf32>, %ids: tensor<0x4xi32>) -> tensor<0x4x8xf32> {
  // expected-error @+1 {{'train.embedding' op operand #1 has a zero-sized dimension ('tensor<0x4xi32>'); every tensor needs at least one element}}
  %e = train.embedding %t, %ids : tensor<16x8xf32>, tensor<0x4xi32> -> tensor<0x4x8xf32>
  return %e : tensor<0x4x8xf32>
}

// -----

func.func @empty_rows(%x: tensor<2x0x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x0x8xf32> {
  // expected-error @+1 {{'train.layer_norm' op operand #0 has a zero-sized dimension ('tensor<2x0x8xf32>')}}
  %y = train.layer_norm %x, %w, %b eps(1.000000e-05) : tensor<2x0x8xf32>, tensor<8xf32>
  return %y : tensor<2x0x8xf32>
}

// -----

func.func @empty_result(%x: tensor<2x4xf32>) -> tensor<0x8xf32> {
  // expected-error @+1 {{'train.reshape' op result #0 has a zero-sized dimension ('tensor<0x8xf32>')}}
  %y = train.reshape %x : tensor<2x4xf32> -> tensor<0x8xf32>
  return %y : tensor<0x8xf32>
}

// -----

// Rank-0 tensors (scalars such as the loss) have one element and are fine.
func.func @scalar(%x: tensor<f32>) -> tensor<f32> {
  %y = train.add %x, %x : tensor<f32>
  return %y : tensor<f32>
}

// -----

func.func @huge(%x: tensor<4294967296x4294967296xf32>) -> tensor<4294967296x4294967296xf32> {
  // expected-error @+1 {{'train.add' op operand #0 'tensor<4294967296x4294967296xf32>' has more than 2^62 elements (its element count overflows)}}
  %y = train.add %x, %x : tensor<4294967296x4294967296xf32>
  return %y : tensor<4294967296x4294967296xf32>
}
