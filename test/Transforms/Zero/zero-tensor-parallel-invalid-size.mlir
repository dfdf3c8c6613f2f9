// RUN: zero-opt %s -split-input-file --zero-tensor-parallel="size=3 world-size=4" -verify-diagnostics
// expected-error@+1 {{zero-tensor-parallel: the tensor-parallel size 3 does not divide the world size 4}}
module {
}
