// RUN: zero-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// train.reshape
//===----------------------------------------------------------------------===//

func.func @reshape_count(%x: tensor<4x32xf32>) -> tensor<100xf32> {
  // expected-error @+1 {{'train.reshape' op element count changes from 128 to 100}}
  %r = train.reshape %x : tensor<4x32xf32> -> tensor<100xf32>
  return %r : tensor<100xf32>
}

// -----

func.func @reshape_element_type(%x: tensor<4x32xf32>) -> tensor<128xbf16> {
  // expected-error @+1 {{'train.reshape' op element type changes from 'f32' to 'bf16'}}
  %r = train.reshape %x : tensor<4x32xf32> -> tensor<128xbf16>
  return %r : tensor<128xbf16>
}

// -----

func.func @reshape_ids_to_float(%x: tensor<4x32xi32>) -> tensor<128xf32> {
  // expected-error @+1 {{'train.reshape' op element type changes from 'i32' to 'f32'}}
  %r = train.reshape %x : tensor<4x32xi32> -> tensor<128xf32>
  return %r : tensor<128xf32>
}

// -----

func.func @reshape_i64(%x: tensor<4x32xi64>) -> tensor<128xi64> {
  // expected-error @+1 {{'train.reshape' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float or 32-bit signless integer values, but got 'tensor<4x32xi64>'}}
  %r = train.reshape %x : tensor<4x32xi64> -> tensor<128xi64>
  return %r : tensor<128xi64>
}

// -----

func.func @reshape_dynamic(%x: tensor<4x32xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'train.reshape' op result #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float or 32-bit signless integer values, but got 'tensor<?xf32>'}}
  %r = train.reshape %x : tensor<4x32xf32> -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

//===----------------------------------------------------------------------===//
// train.transpose
//===----------------------------------------------------------------------===//

func.func @transpose_size(%x: tensor<4x8x16xf32>) -> tensor<8x4x16xf32> {
  // expected-error @+1 {{'train.transpose' op permutation has 2 entries for an input of rank 3}}
  %r = train.transpose %x [1, 0] : tensor<4x8x16xf32> -> tensor<8x4x16xf32>
  return %r : tensor<8x4x16xf32>
}

// -----

func.func @transpose_out_of_range(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'train.transpose' op permutation is not a permutation of [0, 2)}}
  %r = train.transpose %x [2, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

func.func @transpose_negative(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'train.transpose' op permutation is not a permutation of [0, 2)}}
  %r = train.transpose %x [-1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

func.func @transpose_repeat(%x: tensor<4x4x8xf32>) -> tensor<4x4x8xf32> {
  // expected-error @+1 {{'train.transpose' op permutation is not a permutation of [0, 3)}}
  %r = train.transpose %x [0, 0, 2] : tensor<4x4x8xf32> -> tensor<4x4x8xf32>
  return %r : tensor<4x4x8xf32>
}

// -----

func.func @transpose_result(%x: tensor<4x32x4x16xf32>) -> tensor<4x32x4x16xf32> {
  // expected-error @+1 {{'train.transpose' op result must be 'tensor<4x4x32x16xf32>', got 'tensor<4x32x4x16xf32>'}}
  %r = train.transpose %x [0, 2, 1, 3] : tensor<4x32x4x16xf32> -> tensor<4x32x4x16xf32>
  return %r : tensor<4x32x4x16xf32>
}

// -----

func.func @transpose_element_type(%x: tensor<4x8xf32>) -> tensor<8x4xbf16> {
  // expected-error @+1 {{'train.transpose' op result must be 'tensor<8x4xf32>', got 'tensor<8x4xbf16>'}}
  %r = train.transpose %x [1, 0] : tensor<4x8xf32> -> tensor<8x4xbf16>
  return %r : tensor<8x4xbf16>
}

// -----

func.func @transpose_no_permutation(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'train.transpose' op requires attribute 'permutation'}}
  %r = "train.transpose"(%x) : (tensor<4x8xf32>) -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

//===----------------------------------------------------------------------===//
// train.split
//===----------------------------------------------------------------------===//

func.func @split_dim_range(%x: tensor<4x8xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  // expected-error @+1 {{'train.split' op dim 2 is out of range for rank 2}}
  %a, %b = train.split %x dim(2) : tensor<4x8xf32> -> tensor<4x4xf32>, tensor<4x4xf32>
  return %a, %b : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

func.func @split_dim_negative(%x: tensor<4x8xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  // expected-error @+1 {{'train.split' op dim -1 is out of range for rank 2}}
  %a, %b = train.split %x dim(-1) : tensor<4x8xf32> -> tensor<4x4xf32>, tensor<4x4xf32>
  return %a, %b : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

func.func @split_scalar(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'train.split' op dim 0 is out of range for rank 0}}
  %a = train.split %x dim(0) : tensor<f32> -> tensor<f32>
  return %a : tensor<f32>
}

// -----

func.func @split_no_pieces(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'train.split' op needs at least one piece}}
  "train.split"(%x) {dim = 0 : i64} : (tensor<4x8xf32>) -> ()
  return
}

// -----

func.func @split_piece_rank(%x: tensor<4x8xf32>) -> (tensor<4x4xf32>, tensor<16xf32>) {
  // expected-error @+1 {{'train.split' op piece 'tensor<16xf32>' does not match 'tensor<4x8xf32>'}}
  %a, %b = train.split %x dim(1) : tensor<4x8xf32> -> tensor<4x4xf32>, tensor<16xf32>
  return %a, %b : tensor<4x4xf32>, tensor<16xf32>
}

// -----

func.func @split_piece_element_type(%x: tensor<4x8xf32>) -> (tensor<4x4xf32>, tensor<4x4xbf16>) {
  // expected-error @+1 {{'train.split' op piece 'tensor<4x4xbf16>' does not match 'tensor<4x8xf32>'}}
  %a, %b = train.split %x dim(1) : tensor<4x8xf32> -> tensor<4x4xf32>, tensor<4x4xbf16>
  return %a, %b : tensor<4x4xf32>, tensor<4x4xbf16>
}

// -----

func.func @split_other_dim(%x: tensor<4x8xf32>) -> (tensor<4x4xf32>, tensor<2x4xf32>) {
  // expected-error @+1 {{'train.split' op piece 'tensor<2x4xf32>' differs from 'tensor<4x8xf32>' in dimension 0}}
  %a, %b = train.split %x dim(1) : tensor<4x8xf32> -> tensor<4x4xf32>, tensor<2x4xf32>
  return %a, %b : tensor<4x4xf32>, tensor<2x4xf32>
}

// -----

func.func @split_total(%x: tensor<4x32x192xf32>) -> (tensor<4x32x64xf32>, tensor<4x32x64xf32>) {
  // expected-error @+1 {{'train.split' op pieces add up to 128 along dim 2, expected 192}}
  %a, %b = train.split %x dim(2) : tensor<4x32x192xf32> -> tensor<4x32x64xf32>, tensor<4x32x64xf32>
  return %a, %b : tensor<4x32x64xf32>, tensor<4x32x64xf32>
}

// -----

func.func @split_total_over(%x: tensor<6xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error @+1 {{'train.split' op pieces add up to 8 along dim 0, expected 6}}
  %a, %b = train.split %x dim(0) : tensor<6xf32> -> tensor<4xf32>, tensor<4xf32>
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

func.func @split_no_dim(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'train.split' op requires attribute 'dim'}}
  %a = "train.split"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %a : tensor<4x8xf32>
}

// -----

//===----------------------------------------------------------------------===//
// train.concat
//===----------------------------------------------------------------------===//

func.func @concat_dim_range(%a: tensor<4x8xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'train.concat' op dim 2 is out of range for rank 2}}
  %r = train.concat %a, %a dim(2) : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

func.func @concat_no_inputs() -> tensor<4x8xf32> {
  // expected-error @+1 {{'train.concat' op needs at least one piece}}
  %r = "train.concat"() {dim = 0 : i64} : () -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

func.func @concat_rank(%a: tensor<4x8xf32>, %b: tensor<4x8x1xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'train.concat' op piece 'tensor<4x8x1xf32>' does not match 'tensor<4x16xf32>'}}
  %r = train.concat %a, %b dim(1) : tensor<4x8xf32>, tensor<4x8x1xf32> -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

func.func @concat_element_type(%a: tensor<4x8xf32>, %b: tensor<4x8xf16>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'train.concat' op piece 'tensor<4x8xf16>' does not match 'tensor<4x16xf32>'}}
  %r = train.concat %a, %b dim(1) : tensor<4x8xf32>, tensor<4x8xf16> -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

func.func @concat_other_dim(%a: tensor<4x8xf32>, %b: tensor<3x8xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'train.concat' op piece 'tensor<3x8xf32>' differs from 'tensor<4x16xf32>' in dimension 0}}
  %r = train.concat %a, %b dim(1) : tensor<4x8xf32>, tensor<3x8xf32> -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

func.func @concat_total(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x15xf32> {
  // expected-error @+1 {{'train.concat' op pieces add up to 16 along dim 1, expected 15}}
  %r = train.concat %a, %b dim(1) : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x15xf32>
  return %r : tensor<4x15xf32>
}

// -----

func.func @concat_ids(%a: tensor<4xi32>) -> tensor<8xi32> {
  // expected-error @+1 {{'train.concat' op operand #0 must be variadic of statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<4xi32>'}}
  %r = train.concat %a, %a dim(0) : tensor<4xi32>, tensor<4xi32> -> tensor<8xi32>
  return %r : tensor<8xi32>
}

// -----

//===----------------------------------------------------------------------===//
// train.broadcast
//===----------------------------------------------------------------------===//

func.func @broadcast_trailing(%x: tensor<32x64xf32>) -> tensor<32x64x4xf32> {
  // expected-error @+1 {{'train.broadcast' op result 'tensor<32x64x4xf32>' must end with the dimensions of 'tensor<32x64xf32>'}}
  %r = train.broadcast %x : tensor<32x64xf32> -> tensor<32x64x4xf32>
  return %r : tensor<32x64x4xf32>
}

// -----

func.func @broadcast_rank(%x: tensor<4x32x64xf32>) -> tensor<32x64xf32> {
  // expected-error @+1 {{'train.broadcast' op result 'tensor<32x64xf32>' must end with the dimensions of 'tensor<4x32x64xf32>'}}
  %r = train.broadcast %x : tensor<4x32x64xf32> -> tensor<32x64xf32>
  return %r : tensor<32x64xf32>
}

// -----

func.func @broadcast_element_type(%x: tensor<64xf32>) -> tensor<4x64xbf16> {
  // expected-error @+1 {{'train.broadcast' op result 'tensor<4x64xbf16>' must end with the dimensions of 'tensor<64xf32>'}}
  %r = train.broadcast %x : tensor<64xf32> -> tensor<4x64xbf16>
  return %r : tensor<4x64xbf16>
}
