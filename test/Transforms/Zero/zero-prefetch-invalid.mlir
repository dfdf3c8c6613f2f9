// RUN: zero-opt %s --zero-prefetch -split-input-file -verify-diagnostics

// expected-error @+1 {{zero-prefetch: 'branches' has more than one block; the collective schedule must be static}}
func.func @branches(%s: tensor<8xf32>, %c: i1) -> tensor<32xf32> {
  cf.cond_br %c, ^a, ^b
^a:
  %x = zero.all_gather %s world_size(4) : tensor<8xf32> -> tensor<32xf32>
  return %x : tensor<32xf32>
^b:
  %y = zero.all_gather %s world_size(4) : tensor<8xf32> -> tensor<32xf32>
  return %y : tensor<32xf32>
}
