// RUN: zero-opt %s --split-input-file --zero-report="svg=%t.svg svg-world-size=6 quiet" -verify-diagnostics -o /dev/null

// The chart partitions over N_d = svg-world-size / M: 6 ranks do not hold
// whole tensor groups of 4.
// expected-error @+1 {{zero-report: svg-world-size 6 is not a multiple of the mesh's tensor size 4}}
module attributes {zero.mesh = #zero.mesh<data = 0, tensor = 4>} {
  train.param @w : tensor<4xf32> init(<zeros>) trainable
}

// -----

// A mesh that fixes N_d = 2 (zero-tensor-parallel with world-size=4) is
// 2 x 2 = 4 ranks, not 6.
// expected-error @+1 {{zero-report: svg-world-size 6 differs from the mesh's 2 x 2 ranks}}
module attributes {zero.mesh = #zero.mesh<data = 2, tensor = 2>} {
  train.param @w : tensor<4xf32> init(<zeros>) trainable
}
