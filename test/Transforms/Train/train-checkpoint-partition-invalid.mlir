// RUN: zero-opt %s -split-input-file --train-checkpoint="partition=tensor" -verify-diagnostics

// P_a partitions over the tensor axis: a module without one is refused.
// expected-error @+1 {{train-checkpoint: partition=tensor needs a tensor axis of at least 2 ranks, but the mesh has 1 (run zero-tensor-parallel with size=M > 1 first)}}
module {
}

// -----

// expected-error @+1 {{train-checkpoint: partition=tensor needs a tensor axis of at least 2 ranks, but the mesh has 1}}
module attributes {zero.mesh = #zero.mesh<data = 4, tensor = 1>} {
}
