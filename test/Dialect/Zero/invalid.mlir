// RUN: zero-opt %s -split-input-file -verify-diagnostics

func.func @gather_size(%s: tensor<8xf32>) -> tensor<30xf32> {
  // expected-error @+1 {{'zero.all_gather' op result has 30 elements; expected world_size (4) x shard size (8) = 32}}
  %a = zero.all_gather %s world_size(4) : tensor<8xf32> -> tensor<30xf32>
  return %a : tensor<30xf32>
}

// -----

func.func @gather_type(%s: tensor<8xf32>) -> tensor<32xbf16> {
  // expected-error @+1 {{'zero.all_gather' op element types differ: shard 'f32', result 'bf16'}}
  %a = zero.all_gather %s world_size(4) : tensor<8xf32> -> tensor<32xbf16>
  return %a : tensor<32xbf16>
}

// -----

func.func @gather_world(%s: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'zero.all_gather' op attribute 'world_size' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %a = zero.all_gather %s world_size(0) : tensor<8xf32> -> tensor<8xf32>
  return %a : tensor<8xf32>
}

// -----

func.func @scatter_size(%f: tensor<32xf32>) -> tensor<7xf32> {
  // expected-error @+1 {{'zero.reduce_scatter' op input has 32 elements; expected world_size (4) x result size (7) = 28}}
  %g = zero.reduce_scatter %f kind(<sum>) world_size(4) : tensor<32xf32> -> tensor<7xf32>
  return %g : tensor<7xf32>
}

// -----

func.func @scatter_max(%f: tensor<32xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'zero.reduce_scatter' op reduction kind must be sum or avg}}
  %g = zero.reduce_scatter %f kind(<max>) world_size(4) : tensor<32xf32> -> tensor<8xf32>
  return %g : tensor<8xf32>
}

// -----

func.func @reduce_type(%x: tensor<4xf32>) -> tensor<4xbf16> {
  // expected-error @+1 {{'zero.all_reduce' op failed to verify that all of {input, result} have same type}}
  %r = "zero.all_reduce"(%x) {kind = #zero.reduce_kind<sum>, world_size = 4 : i64} : (tensor<4xf32>) -> tensor<4xbf16>
  return %r : tensor<4xbf16>
}

// -----

func.func @gather_rank(%s: tensor<2x4xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{'zero.all_gather' op operand #0 must be 1D tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<2x4xf32>'}}
  %a = "zero.all_gather"(%s) {world_size = 4 : i64} : (tensor<2x4xf32>) -> tensor<32xf32>
  return %a : tensor<32xf32>
}

// -----

func.func @start_size(%s: tensor<8xf32>) {
  // expected-error @+1 {{'zero.all_gather_start' op result has 30 elements; expected world_size (4) x shard size (8) = 32}}
  %a = zero.all_gather_start %s world_size(4) : tensor<8xf32> -> !zero.pending<tensor<30xf32>>
  return
}

// -----

func.func @rs_start_max(%f: tensor<32xf32>) {
  // expected-error @+1 {{'zero.reduce_scatter_start' op reduction kind must be sum or avg}}
  %a = zero.reduce_scatter_start %f kind(<max>) world_size(4) : tensor<32xf32> -> !zero.pending<tensor<8xf32>>
  return
}

// -----

func.func @ar_start_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{'zero.all_reduce_start' op pending result type 'tensor<4xbf16>' differs from input type 'tensor<4xf32>'}}
  %a = zero.all_reduce_start %x kind(<sum>) world_size(4) : tensor<4xf32> -> !zero.pending<tensor<4xbf16>>
  return
}

// -----

func.func @wait_twice(%s: tensor<8xf32>) {
  %a = zero.all_gather_start %s world_size(4) : tensor<8xf32> -> !zero.pending<tensor<32xf32>>
  // expected-error @+1 {{'zero.wait' op a pending collective must be waited exactly once}}
  %x = zero.wait %a : !zero.pending<tensor<32xf32>>
  %y = zero.wait %a : !zero.pending<tensor<32xf32>>
  return
}
