// RUN: zero-opt %s -split-input-file -verify-diagnostics
// Zero-sized dimensions are rejected by every zero op's verifier too.

func.func @empty_gather(%s: tensor<0xf32>) -> tensor<0xf32> {
  // expected-error @+1 {{'zero.all_gather' op operand #0 has a zero-sized dimension ('tensor<0xf32>'); every tensor needs at least one element}}
  %a = zero.all_gather %s world_size(4) : tensor<0xf32> -> tensor<0xf32>
  return %a : tensor<0xf32>
}
