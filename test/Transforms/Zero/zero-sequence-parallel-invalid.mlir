// RUN: zero-opt %s -split-input-file --zero-sequence-parallel -verify-diagnostics

// expected-error@+1 {{zero-sequence-parallel: sequence parallelism cuts token rows over the tensor axis; the module has no tensor axis of M >= 2 (got M = 1; run zero-tensor-parallel with size >= 2 first)}}
module {
  func.func @forward(%ids: tensor<1x4xi32>, %x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
    return %x : tensor<1x4x8xf32>
  }
}

// -----

// A sequence the tensor axis does not divide.
module attributes {zero.mesh = #zero.mesh<data = 1, tensor = 4>} {
  // expected-error@+1 {{zero-sequence-parallel: the sequence length T = 6 is not a multiple of the tensor-parallel size M = 4 (6 % 4 = 2); each tensor rank keeps T/M positions}}
  func.func @forward(%ids: tensor<2x6xi32>, %p: tensor<2x6x8xf32>) -> tensor<2x6x8xf32> {
    %y = zero.tp_g %p size(4) : tensor<2x6x8xf32>
    return %y : tensor<2x6x8xf32>
  }
}

// -----

module attributes {zero.mesh = #zero.mesh<data = 1, tensor = 2>} {
  // expected-error@+1 {{zero-sequence-parallel: no tensor-parallel region (zero.tp_g of [1, 4, C] activations) in @forward}}
  func.func @forward(%ids: tensor<1x4xi32>, %x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
    return %x : tensor<1x4x8xf32>
  }
}

// -----

module attributes {zero.mesh = #zero.mesh<data = 1, tensor = 2>} {
  // expected-error@+1 {{zero-sequence-parallel: @forward has no [B, T] token-id argument to take the sequence length from}}
  func.func @forward(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
    return %x : tensor<1x4x8xf32>
  }
}

// -----

// expected-error@+1 {{zero-sequence-parallel: no @forward to cut}}
module attributes {zero.mesh = #zero.mesh<data = 1, tensor = 2>} {
  func.func @other(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
    return %x : tensor<1x4x8xf32>
  }
}

// -----

// expected-error@+1 {{zero-sequence-parallel: the module is differentiated already; sequence parallelism cuts the forward graph}}
module attributes {zero.mesh = #zero.mesh<data = 1, tensor = 2>} {
  func.func @forward(%ids: tensor<1x4xi32>) {
    return
  }
  func.func @forward_backward(%ids: tensor<1x4xi32>) {
    return
  }
}
