// RUN: zero-opt %s -split-input-file -verify-diagnostics

// expected-error@+1 {{mesh tensor size must be at least 1, got 0}}
module attributes {zero.mesh = #zero.mesh<data = 2, tensor = 0>} {}

// -----

// expected-error@+1 {{mesh data size must not be negative, got -1}}
module attributes {zero.mesh = #zero.mesh<data = -1, tensor = 2>} {}

// -----

module {
  // expected-error@+1 {{'func.func' op 'zero.mesh' is only for the module}}
  func.func @f() attributes {zero.mesh = #zero.mesh<data = 1, tensor = 2>} {
    return
  }
}

// -----

// expected-error@+1 {{'builtin.module' op 'zero.mesh' must be a #zero.mesh}}
module attributes {zero.mesh = 2 : i64} {}

// -----

// expected-error@+1 {{'train.param' op 'zero.tensor_split' cuts the full shape [8, 8] into [4, 8] per tensor rank, but the parameter is declared [8, 4]}}
train.param @w : tensor<8x4xf32> init(<zeros>) trainable {zero.tensor_split = #zero.tensor_split<dim = 0, blocks = 1, parts = 2, full = [8, 8]>}

// -----

// expected-error@+1 {{tensor_split full[0] = 9 is not a multiple of blocks × parts = 6}}
train.param @w : tensor<3x8xf32> init(<zeros>) trainable {zero.tensor_split = #zero.tensor_split<dim = 0, blocks = 3, parts = 2, full = [9, 8]>}

// -----

// expected-error@+1 {{tensor_split dim 2 is not a dimension of the rank-2 full shape}}
train.param @w : tensor<4x8xf32> init(<zeros>) trainable {zero.tensor_split = #zero.tensor_split<dim = 2, blocks = 1, parts = 2, full = [8, 8]>}

// -----

// expected-error@+1 {{tensor_split blocks (0) and parts (2) must be at least 1}}
train.param @w : tensor<4x8xf32> init(<zeros>) trainable {zero.tensor_split = #zero.tensor_split<dim = 0, blocks = 0, parts = 2, full = [8, 8]>}

// -----

func.func @f(%x: tensor<f32>) {
  // expected-error@+1 {{'zero.tensor_split' is only for a train.param}}
  %y = zero.tp_f %x size(2) {zero.tensor_split = #zero.tensor_split<dim = 0, blocks = 1, parts = 2, full = [8]>} : tensor<f32>
  return
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'zero.tp_g' op attribute 'size' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %y = zero.tp_g %x size(0) : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'zero.all_reduce' op attribute 'axis' failed to satisfy constraint}}
  %y = zero.all_reduce %x kind(<sum>) world_size(2) {axis = 3 : i64} : tensor<4xf32>
  return %y : tensor<4xf32>
}
