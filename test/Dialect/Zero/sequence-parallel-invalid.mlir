// RUN: zero-opt %s -split-input-file -verify-diagnostics

func.func @rows_count(%x: tensor<2x4x8xf32>) {
  // expected-error@+1 {{'zero.sp_split' op size(2) ranks of 3 rows do not make the B·T = 8 token rows}}
  %s = zero.sp_split %x size(2) : tensor<2x4x8xf32> -> tensor<3x8xf32>
  return
}

// -----

func.func @row_shape(%s: tensor<4x2x4xf32>) {
  // expected-error@+1 {{'zero.sp_gather' op the token rows must be [R, 8] for the whole 'tensor<2x4x8xf32>', got 'tensor<4x2x4xf32>'}}
  %g = zero.sp_gather %s size(2) : tensor<4x2x4xf32> -> tensor<2x4x8xf32>
  return
}

// -----

func.func @whole_rank(%x: tensor<8x8xf32>) {
  // expected-error@+1 {{'zero.sp_scatter' op the whole tensor must be [B, T, C...], got 'tensor<8x8xf32>'}}
  %s = zero.sp_scatter %x size(2) : tensor<8x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @element_type(%x: tensor<2x4x8xf32>) {
  // expected-error@+1 {{'zero.sp_split' op the token rows and the whole tensor must have one element type, got 'bf16' and 'f32'}}
  %s = zero.sp_split %x size(2) : tensor<2x4x8xf32> -> tensor<4x8xbf16>
  return
}
