// RUN: zero-opt %s -split-input-file --train-checkpoint="partition=tensor" -verify-diagnostics

// P_a partitions over the tensor axis: a module without one is refused.
// expected-error @+1 {{train-checkpoint: partition=tensor needs a tensor axis of at least 2 ranks, but the mesh has 1 (run zero-tensor-parallel with size=M > 1 first)}}
module {
}

// -----

// expected-error @+1 {{train-checkpoint: partition=tensor needs a tensor axis of at least 2 ranks, but the mesh has 1}}
module attributes {zero.mesh = #zero.mesh<data = 4, tensor = 1>} {
}

// -----

// Sequence parallelism (zero-sequence-parallel) cut the block inputs by
// token rows already: they are not replicated over the tensor axis.
module attributes {zero.mesh = #zero.mesh<data = 1, tensor = 2>} {
  func.func @forward(%ids: tensor<1x4xi32>, %p: tensor<1x4x8xf32>) -> tensor<2x8xf32> {
    // expected-error @+1 {{train-checkpoint: partition=tensor (P_a) cuts checkpoints replicated over the tensor axis, but sequence parallelism cut the block inputs by token rows already}}
    %y = zero.sp_scatter %p size(2) : tensor<1x4x8xf32> -> tensor<2x8xf32>
    return %y : tensor<2x8xf32>
  }
}
