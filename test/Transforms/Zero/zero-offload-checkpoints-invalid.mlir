// zero-offload-checkpoints' diagnostics, one each: a bad target, a marked
// module without a backward, and (a warning) nothing to move.
// RUN: zero-opt %s -split-input-file --zero-offload-checkpoints -verify-diagnostics
// RUN: not zero-opt %s --zero-offload-checkpoints="target=disk" 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: error: zero-offload-checkpoints: target must be cuda or cpu, got 'disk'

module attributes {zero.checkpoint_offload = "host"} {
  // expected-error @+1 {{zero-offload-checkpoints: 'forward_backward' has no backward (no train.loss_seed)}}
  func.func @forward_backward(%x: tensor<64xf32>, %t: tensor<64xf32>) -> tensor<f32> {
    %l = train.mse %x, %t : tensor<64xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// expected-error @+1 {{zero-offload-checkpoints: no function named 'forward_backward' (run train-autodiff first)}}
module attributes {zero.checkpoint_offload = "host"} {
  func.func @forward(%x: tensor<64xf32>, %t: tensor<64xf32>) -> tensor<f32> {
    %l = train.mse %x, %t : tensor<64xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

module attributes {zero.checkpoint_offload = "host"} {
  // expected-warning @+1 {{zero-offload-checkpoints: the module asks for offload=host, but 'forward_backward' keeps no P_a slice (zero.local_shard {zero.checkpoint_slice}) from the forward to the backward: nothing to move}}
  func.func @forward_backward(%x: tensor<64xf32>, %t: tensor<64xf32>) -> tensor<f32> {
    %l = train.mse %x, %t : tensor<64xf32> -> tensor<f32>
    %seed = train.fill 1.000000e+00 {train.loss_seed} : tensor<f32>
    return %l : tensor<f32>
  }
}
