// RUN: zero-opt %s -split-input-file --zero-partition="stage=1 world-size=6" -verify-diagnostics

// expected-error@+1 {{zero-partition: world-size 6 is not a multiple of the mesh's tensor size 4}}
module attributes {zero.mesh = #zero.mesh<data = 0, tensor = 4>} {
}

// -----

// expected-error@+1 {{zero-partition: world-size 6 differs from the mesh's 2 x 2 ranks}}
module attributes {zero.mesh = #zero.mesh<data = 2, tensor = 2>} {
}
