// RUN: zero-opt %s -split-input-file -verify-diagnostics

// #zero.storage (zero-buffer-assign) and where it sits are verified.

// expected-error@+1 {{#zero.storage<arena> needs a 64-byte aligned offset >= 0 and bytes > 0 (got offset 32, bytes 64)}}
func.func @f() attributes {zero.x = #zero.storage<arena temporaries, offset = 32, bytes = 64, live = [0, 1]>} {
  return
}

// -----

// expected-error@+1 {{#zero.storage<arena> lives in the activations, temporaries or constants arena, not gradients}}
func.func @f() attributes {zero.x = #zero.storage<arena gradients, offset = 0, bytes = 64, live = [0, 1]>} {
  return
}

// -----

// expected-error@+1 {{#zero.storage<arena> needs a live range [F, L] with -1 <= F <= L (got [3, 1])}}
func.func @f() attributes {zero.x = #zero.storage<arena activations, offset = 0, bytes = 64, live = [3, 1]>} {
  return
}

// -----

// expected-error@+1 {{#zero.storage<span> names a group and the parameters or gradients arena}}
func.func @f() attributes {zero.x = #zero.storage<span @g, moments>} {
  return
}

// -----

// expected-error@+1 {{expected a storage kind (none, arena, state, tied, view, pack_slot, span, host_slot), got 'slab'}}
func.func @f() attributes {zero.x = #zero.storage<slab>} {
  return
}

// -----

// expected-error@+1 {{expected an arena name, got 'heap'}}
func.func @f() attributes {zero.x = #zero.storage<arena heap, offset = 0, bytes = 64>} {
  return
}

// -----

func.func @count(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'train.gelu' op 'zero.storage' must be an array of one #zero.storage per result (1)}}
  %g = train.gelu %x {zero.storage = [#zero.storage<none>, #zero.storage<none>]} : tensor<4xf32>
  return %g : tensor<4xf32>
}

// -----

func.func @none_tensor(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'train.gelu' op 'zero.storage' of result #0 (#zero.storage<none>) leaves a tensor without storage}}
  %g = train.gelu %x {zero.storage = [#zero.storage<none>]} : tensor<4xf32>
  return %g : tensor<4xf32>
}

// -----

func.func @small(%x: tensor<32xf32>) -> tensor<32xf32> {
  // expected-error@+1 {{'train.gelu' op 'zero.storage' of result #0 (#zero.storage<arena temporaries, offset = 0, bytes = 64, live = [0, 1]>) has fewer bytes than the tensor's 128}}
  %g = train.gelu %x {zero.storage = [#zero.storage<arena temporaries, offset = 0, bytes = 64, live = [0, 1]>]} : tensor<32xf32>
  return %g : tensor<32xf32>
}

// -----

func.func @tied(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'train.gelu' op 'zero.storage' of result #0 (#zero.storage<tied 1>) must name an operand of the result's type}}
  %g = train.gelu %x {zero.storage = [#zero.storage<tied 1>]} : tensor<4xf32>
  return %g : tensor<4xf32>
}

// -----

func.func @view(%x: tensor<2x2xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'train.reshape' op 'zero.storage' of result #0 (#zero.storage<view 0, offset = 1>) reaches past the 4 elements of the operand}}
  %r = train.reshape %x {zero.storage = [#zero.storage<view 0, offset = 1>]} : tensor<2x2xf32> -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @slot(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'train.gelu' op 'zero.storage' of result #0 (#zero.storage<pack_slot, offset = 0>) is for a value whose only use is a zero.pack}}
  %g = train.gelu %x {zero.storage = [#zero.storage<pack_slot, offset = 0>]} : tensor<4xf32>
  return %g : tensor<4xf32>
}

// -----

func.func @scratch(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'train.gelu' op 'zero.scratch' must be a #zero.storage<arena temporaries, ...> live at one position (its op's)}}
  %g = train.gelu %x {zero.scratch = #zero.storage<arena temporaries, offset = 0, bytes = 64, live = [0, 1]>} : tensor<4xf32>
  return %g : tensor<4xf32>
}

// -----

// expected-error@+1 {{'func.func' op argument #0: 'zero.storage' must be a #zero.storage<arena activations|temporaries, ...>}}
func.func @arg(%x: tensor<4xf32> {zero.storage = #zero.storage<state @w>}) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// expected-error@+1 {{'func.func' op 'zero.storage' is for an op's results or a function's arguments}}
func.func @on_func() attributes {zero.storage = [#zero.storage<none>]} {
  return
}
