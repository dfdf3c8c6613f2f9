// RUN: zero-opt %s -split-input-file --zero-tensor-parallel="size=0" -verify-diagnostics
// expected-error@+1 {{zero-tensor-parallel: size must be >= 1, got 0}}
module {
}
