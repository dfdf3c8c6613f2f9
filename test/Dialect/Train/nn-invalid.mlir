// RUN: zero-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// train.layer_norm
//===----------------------------------------------------------------------===//

func.func @layer_norm_weight_size(%x: tensor<4x64xf32>, %w: tensor<32xf32>) -> tensor<4x64xf32> {
  // expected-error @+1 {{'train.layer_norm' op weight and bias must be [64] (the last dimension of the input), got 'tensor<32xf32>'}}
  %r = train.layer_norm %x, %w, %w eps(1.0e-05) : tensor<4x64xf32>, tensor<32xf32>
  return %r : tensor<4x64xf32>
}

// -----

func.func @layer_norm_weight_rank(%x: tensor<4x64xf32>, %w: tensor<4x64xf32>) -> tensor<4x64xf32> {
  // expected-error @+1 {{'train.layer_norm' op weight and bias must be [64] (the last dimension of the input), got 'tensor<4x64xf32>'}}
  %r = train.layer_norm %x, %w, %w eps(1.0e-05) : tensor<4x64xf32>, tensor<4x64xf32>
  return %r : tensor<4x64xf32>
}

// -----

func.func @layer_norm_scalar(%x: tensor<f32>, %w: tensor<1xf32>) -> tensor<f32> {
  // expected-error @+1 {{'train.layer_norm' op input must have rank >= 1}}
  %r = train.layer_norm %x, %w, %w eps(1.0e-05) : tensor<f32>, tensor<1xf32>
  return %r : tensor<f32>
}

// -----

func.func @layer_norm_bias(%x: tensor<4x64xf32>, %w: tensor<64xf32>, %b: tensor<64xbf16>) -> tensor<4x64xf32> {
  // expected-error @+1 {{'train.layer_norm' op failed to verify that all of {weight, bias} have same type}}
  %r = "train.layer_norm"(%x, %w, %b) {eps = 1.0e-05 : f64} : (tensor<4x64xf32>, tensor<64xf32>, tensor<64xbf16>) -> tensor<4x64xf32>
  return %r : tensor<4x64xf32>
}

// -----

func.func @layer_norm_result(%x: tensor<4x64xf32>, %w: tensor<64xf32>) -> tensor<4x64xbf16> {
  // expected-error @+1 {{'train.layer_norm' op failed to verify that all of {input, result} have same type}}
  %r = "train.layer_norm"(%x, %w, %w) {eps = 1.0e-05 : f64} : (tensor<4x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<4x64xbf16>
  return %r : tensor<4x64xbf16>
}

// -----

func.func @layer_norm_eps_zero(%x: tensor<4x64xf32>, %w: tensor<64xf32>) -> tensor<4x64xf32> {
  // expected-error @+1 {{'train.layer_norm' op attribute 'eps' failed to satisfy constraint: 64-bit float attribute whose value is positive}}
  %r = train.layer_norm %x, %w, %w eps(0.0) : tensor<4x64xf32>, tensor<64xf32>
  return %r : tensor<4x64xf32>
}

// -----

func.func @layer_norm_eps_negative(%x: tensor<4x64xf32>, %w: tensor<64xf32>) -> tensor<4x64xf32> {
  // expected-error @+1 {{'train.layer_norm' op attribute 'eps' failed to satisfy constraint: 64-bit float attribute whose value is positive}}
  %r = train.layer_norm %x, %w, %w eps(-1.0e-05) : tensor<4x64xf32>, tensor<64xf32>
  return %r : tensor<4x64xf32>
}

// -----

func.func @layer_norm_no_eps(%x: tensor<4x64xf32>, %w: tensor<64xf32>) -> tensor<4x64xf32> {
  // expected-error @+1 {{'train.layer_norm' op requires attribute 'eps'}}
  %r = "train.layer_norm"(%x, %w, %w) : (tensor<4x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
  return %r : tensor<4x64xf32>
}

// -----

func.func @layer_norm_f64(%x: tensor<4x64xf64>, %w: tensor<64xf64>) -> tensor<4x64xf64> {
  // expected-error @+1 {{'train.layer_norm' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<4x64xf64>'}}
  %r = train.layer_norm %x, %w, %w eps(1.0e-05) : tensor<4x64xf64>, tensor<64xf64>
  return %r : tensor<4x64xf64>
}

// -----

//===----------------------------------------------------------------------===//
// train.add_layer_norm (the checks of train.layer_norm)
//===----------------------------------------------------------------------===//

func.func @add_layer_norm_weight(%x: tensor<4x64xf32>, %w: tensor<32xf32>) -> tensor<4x64xf32> {
  // expected-error @+1 {{'train.add_layer_norm' op weight and bias must be [64] (the last dimension of the input), got 'tensor<32xf32>'}}
  %s, %r = train.add_layer_norm %x, %x, %w, %w eps(1.0e-05) : tensor<4x64xf32>, tensor<32xf32>
  return %r : tensor<4x64xf32>
}

// -----

func.func @add_layer_norm_types(%x: tensor<4x64xf32>, %h: tensor<4x64xbf16>, %w: tensor<64xf32>) -> tensor<4x64xf32> {
  // expected-error @+1 {{'train.add_layer_norm' op failed to verify that all of {lhs, rhs, sum, result} have same type}}
  %s, %r = "train.add_layer_norm"(%x, %h, %w, %w) {eps = 1.0e-05 : f64} : (tensor<4x64xf32>, tensor<4x64xbf16>, tensor<64xf32>, tensor<64xf32>) -> (tensor<4x64xf32>, tensor<4x64xf32>)
  return %r : tensor<4x64xf32>
}

// -----

func.func @add_layer_norm_eps(%x: tensor<4x64xf32>, %w: tensor<64xf32>) -> tensor<4x64xf32> {
  // expected-error @+1 {{'train.add_layer_norm' op attribute 'eps' failed to satisfy constraint: 64-bit float attribute whose value is positive}}
  %s, %r = train.add_layer_norm %x, %x, %w, %w eps(0.0) : tensor<4x64xf32>, tensor<64xf32>
  return %r : tensor<4x64xf32>
}

// -----

//===----------------------------------------------------------------------===//
// train.layer_norm_grad
//===----------------------------------------------------------------------===//

func.func @layer_norm_grad_weight_type(%x: tensor<4x64xbf16>, %w: tensor<64xf32>) {
  // expected-error @+1 {{'train.layer_norm_grad' op weight element type 'f32' differs from the input's 'bf16'}}
  %dx, %dw, %db = train.layer_norm_grad %x, %w, %x eps(1.0e-05) : tensor<4x64xbf16>, tensor<64xf32>
  return
}

// -----

func.func @layer_norm_grad_addend(%x: tensor<4x64xf32>, %w: tensor<64xf32>, %a: tensor<4x64xbf16>) {
  // expected-error @+1 {{'train.layer_norm_grad' op failed to verify that addend has the input's type}}
  %dx, %dw, %db = "train.layer_norm_grad"(%x, %w, %x, %a) {eps = 1.0e-05 : f64} : (tensor<4x64xf32>, tensor<64xf32>, tensor<4x64xf32>, tensor<4x64xbf16>) -> (tensor<4x64xf32>, tensor<64xf32>, tensor<64xf32>)
  return
}

// -----

func.func @layer_norm_grad_weight(%x: tensor<4x64xf32>, %w: tensor<32xf32>) {
  // expected-error @+1 {{'train.layer_norm_grad' op weight must be [64], got 'tensor<32xf32>'}}
  %dx, %dw, %db = train.layer_norm_grad %x, %w, %x eps(1.0e-05) : tensor<4x64xf32>, tensor<32xf32>
  return
}

// -----

func.func @layer_norm_grad_weight_rank(%x: tensor<4x64xf32>, %w: tensor<1x64xf32>) {
  // expected-error @+1 {{'train.layer_norm_grad' op weight must be [64], got 'tensor<1x64xf32>'}}
  %dx, %dw, %db = train.layer_norm_grad %x, %w, %x eps(1.0e-05) : tensor<4x64xf32>, tensor<1x64xf32>
  return
}

// -----

func.func @layer_norm_grad_grad(%x: tensor<4x64xf32>, %w: tensor<64xf32>, %dy: tensor<4x64xbf16>) {
  // expected-error @+1 {{'train.layer_norm_grad' op failed to verify that all of {input, grad, input_grad} have same type}}
  %dx, %dw, %db = "train.layer_norm_grad"(%x, %w, %dy) {eps = 1.0e-05 : f64} : (tensor<4x64xf32>, tensor<64xf32>, tensor<4x64xbf16>) -> (tensor<4x64xf32>, tensor<64xf32>, tensor<64xf32>)
  return
}

// -----

func.func @layer_norm_grad_weight_grad(%x: tensor<4x64xf32>, %w: tensor<64xf32>) {
  // expected-error @+1 {{'train.layer_norm_grad' op failed to verify that all of {weight, weight_grad, bias_grad} have same type}}
  %dx, %dw, %db = "train.layer_norm_grad"(%x, %w, %x) {eps = 1.0e-05 : f64} : (tensor<4x64xf32>, tensor<64xf32>, tensor<4x64xf32>) -> (tensor<4x64xf32>, tensor<64xf32>, tensor<4x64xf32>)
  return
}

// -----

func.func @layer_norm_grad_eps(%x: tensor<4x64xf32>, %w: tensor<64xf32>) {
  // expected-error @+1 {{'train.layer_norm_grad' op attribute 'eps' failed to satisfy constraint: 64-bit float attribute whose value is positive}}
  %dx, %dw, %db = train.layer_norm_grad %x, %w, %x eps(0.0) : tensor<4x64xf32>, tensor<64xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.causal_attention / train.attention_grad
//===----------------------------------------------------------------------===//

func.func @attention_rank(%q: tensor<4x32x16xf32>) -> tensor<4x32x16xf32> {
  // expected-error @+1 {{'train.causal_attention' op query must be [B, H, T, D], got 'tensor<4x32x16xf32>'}}
  %o, %lse = train.causal_attention %q, %q, %q : tensor<4x32x16xf32>
  return %o : tensor<4x32x16xf32>
}

// -----

func.func @attention_rank0(%q: tensor<f32>) {
  // expected-error @+1 {{'train.causal_attention' op query must be [B, H, T, D], got 'tensor<f32>'}}
  %o, %lse = train.causal_attention %q, %q, %q : tensor<f32>
  return
}

// -----

func.func @attention_grad_rank0(%q: tensor<f32>, %l: tensor<f32>) {
  // expected-error @+1 {{'train.attention_grad' op query must be [B, H, T, D], got 'tensor<f32>'}}
  %dq, %dk, %dv = "train.attention_grad"(%q, %q, %q, %q, %l, %q) : (tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>, tensor<f32>)
  return
}

// -----

func.func @attention_rank5(%q: tensor<1x4x4x32x16xf32>) -> tensor<1x4x4x32x16xf32> {
  // expected-error @+1 {{'train.causal_attention' op query must be [B, H, T, D], got 'tensor<1x4x4x32x16xf32>'}}
  %o, %lse = train.causal_attention %q, %q, %q : tensor<1x4x4x32x16xf32>
  return %o : tensor<1x4x4x32x16xf32>
}

// -----

func.func @attention_key(%q: tensor<4x4x32x16xf32>, %k: tensor<4x4x16x16xf32>) -> tensor<4x4x32x16xf32> {
  // expected-error @+1 {{'train.causal_attention' op failed to verify that all of {key, value} have same type}}
  %o, %lse = "train.causal_attention"(%q, %k, %q) : (tensor<4x4x32x16xf32>, tensor<4x4x16x16xf32>, tensor<4x4x32x16xf32>) -> (tensor<4x4x32x16xf32>, tensor<4x4x32xf32>)
  return %o : tensor<4x4x32x16xf32>
}

// -----

// Key and value agree with each other but not with the query's T.
func.func @attention_key_tokens(%q: tensor<4x4x32x16xf32>, %k: tensor<4x4x16x16xf32>) -> tensor<4x4x32x16xf32> {
  // expected-error @+1 {{'train.causal_attention' op key and value must be [4, Hkv, 32, 16] for query 'tensor<4x4x32x16xf32>', got 'tensor<4x4x16x16xf32>'}}
  %o, %lse = train.causal_attention %q, %k, %k : tensor<4x4x32x16xf32>, tensor<4x4x16x16xf32>
  return %o : tensor<4x4x32x16xf32>
}

// -----

// Grouped-query attention: the K/V heads must divide the query heads.
func.func @attention_kv_heads(%q: tensor<2x6x8x4xf32>, %k: tensor<2x4x8x4xf32>) -> tensor<2x6x8x4xf32> {
  // expected-error @+1 {{'train.causal_attention' op 4 key/value heads do not divide 6 query heads}}
  %o, %lse = train.causal_attention %q, %k, %k : tensor<2x6x8x4xf32>, tensor<2x4x8x4xf32>
  return %o : tensor<2x6x8x4xf32>
}

// -----

func.func @attention_grad_kv_heads(%q: tensor<2x6x8x4xf32>, %k: tensor<2x4x8x4xf32>, %lse: tensor<2x6x8xf32>) {
  // expected-error @+1 {{'train.attention_grad' op 4 key/value heads do not divide 6 query heads}}
  %dq, %dk, %dv = train.attention_grad %q, %k, %k, %q, %lse, %q : tensor<2x6x8x4xf32>, tensor<2x4x8x4xf32>
  return
}

// -----

func.func @attention_empty(%q: tensor<2x4x0x4xf32>) {
  // expected-error @+1 {{'train.causal_attention' op operand #0 has a zero-sized dimension ('tensor<2x4x0x4xf32>'); every tensor needs at least one element}}
  %o, %lse = train.causal_attention %q, %q, %q : tensor<2x4x0x4xf32>
  return
}

// -----

func.func @attention_kv_element_type(%q: tensor<2x4x8x4xf32>, %k: tensor<2x2x8x4xbf16>) {
  // expected-error @+1 {{'train.causal_attention' op failed to verify that all of {query, key} have same element type}}
  %o, %lse = train.causal_attention %q, %k, %k : tensor<2x4x8x4xf32>, tensor<2x2x8x4xbf16>
  return
}

// -----

func.func @attention_value_type(%q: tensor<4x4x32x16xf32>, %v: tensor<4x4x32x16xbf16>) -> tensor<4x4x32x16xf32> {
  // expected-error @+1 {{'train.causal_attention' op failed to verify that all of {key, value} have same type}}
  %o, %lse = "train.causal_attention"(%q, %q, %v) : (tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32x16xbf16>) -> (tensor<4x4x32x16xf32>, tensor<4x4x32xf32>)
  return %o : tensor<4x4x32x16xf32>
}

// -----

func.func @attention_lse_type(%q: tensor<4x4x32x16xf32>) -> tensor<4x4x32x16xf32> {
  // expected-error @+1 {{'train.causal_attention' op failed to verify that lse is the [B, H, T] f32 row statistics of result}}
  %o, %lse = "train.causal_attention"(%q, %q, %q) : (tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>) -> (tensor<4x4x32x16xf32>, tensor<4x4x16xf32>)
  return %o : tensor<4x4x32x16xf32>
}

// -----

func.func @attention_grad_lse_shape(%q: tensor<4x4x32x16xf32>, %lse: tensor<4x4x16xf32>) {
  // expected-error @+1 {{'train.attention_grad' op failed to verify that lse is the [B, H, T] f32 row statistics of grad}}
  %dq, %dk, %dv = "train.attention_grad"(%q, %q, %q, %q, %lse, %q) : (tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x16xf32>, tensor<4x4x32x16xf32>) -> (tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>)
  return
}

// -----

func.func @attention_grad_mismatch(%q: tensor<4x4x32x16xf32>, %lse: tensor<4x4x32xf32>, %do: tensor<4x4x32x16xbf16>) {
  // expected-error @+1 {{'train.attention_grad' op failed to verify that all of {query, output, grad, query_grad} have same type}}
  %dq, %dk, %dv = "train.attention_grad"(%q, %q, %q, %q, %lse, %do) : (tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32xf32>, tensor<4x4x32x16xbf16>) -> (tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>)
  return
}

// -----

func.func @attention_grad_result(%q: tensor<4x4x32x16xf32>, %lse: tensor<4x4x32xf32>) {
  // expected-error @+1 {{'train.attention_grad' op failed to verify that all of {key, value, key_grad, value_grad} have same type}}
  %dq, %dk, %dv = "train.attention_grad"(%q, %q, %q, %q, %lse, %q) : (tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32xf32>, tensor<4x4x32x16xf32>) -> (tensor<4x4x32x16xf32>, tensor<4x4x16x32xf32>, tensor<4x4x32x16xf32>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.cross_entropy
//===----------------------------------------------------------------------===//

func.func @cross_entropy_logits_rank(%l: tensor<4x32x256xf32>, %t: tensor<4x32xi32>) -> tensor<f32> {
  // expected-error @+1 {{'train.cross_entropy' op logits must be [N, V], got 'tensor<4x32x256xf32>'}}
  %r = train.cross_entropy %l, %t : tensor<4x32x256xf32>, tensor<4x32xi32> -> tensor<f32>
  return %r : tensor<f32>
}

// -----

func.func @cross_entropy_logits_rank1(%l: tensor<256xf32>, %t: tensor<1xi32>) -> tensor<f32> {
  // expected-error @+1 {{'train.cross_entropy' op logits must be [N, V], got 'tensor<256xf32>'}}
  %r = train.cross_entropy %l, %t : tensor<256xf32>, tensor<1xi32> -> tensor<f32>
  return %r : tensor<f32>
}

// -----

func.func @cross_entropy_empty(%l: tensor<0x256xf32>, %t: tensor<0xi32>) -> tensor<f32> {
  // expected-error @+1 {{'train.cross_entropy' op operand #0 has a zero-sized dimension ('tensor<0x256xf32>'); every tensor needs at least one element}}
  %r = train.cross_entropy %l, %t : tensor<0x256xf32>, tensor<0xi32> -> tensor<f32>
  return %r : tensor<f32>
}

// -----

func.func @cross_entropy_ignore_index_range(%l: tensor<4x256xf32>, %t: tensor<4xi32>) -> tensor<f32> {
  // expected-error @+1 {{'train.cross_entropy' op ignore_index 4294967296 is not an i32 target value}}
  %r = train.cross_entropy %l, %t {ignore_index = 4294967296 : i64} : tensor<4x256xf32>, tensor<4xi32> -> tensor<f32>
  return %r : tensor<f32>
}

// -----

func.func @cross_entropy_grad_ignore_index_range(%l: tensor<4x256xf32>, %t: tensor<4xi32>, %d: tensor<f32>) {
  // expected-error @+1 {{'train.cross_entropy_grad' op ignore_index -2147483649 is not an i32 target value}}
  %r = train.cross_entropy_grad %l, %t, %d {ignore_index = -2147483649 : i64} : tensor<4x256xf32>, tensor<4xi32>
  return
}

// -----

func.func @cross_entropy_targets_size(%l: tensor<128x256xf32>, %t: tensor<64xi32>) -> tensor<f32> {
  // expected-error @+1 {{'train.cross_entropy' op targets must be [128] (one per row of logits), got 'tensor<64xi32>'}}
  %r = train.cross_entropy %l, %t : tensor<128x256xf32>, tensor<64xi32> -> tensor<f32>
  return %r : tensor<f32>
}

// -----

func.func @cross_entropy_targets_rank(%l: tensor<128x256xf32>, %t: tensor<4x32xi32>) -> tensor<f32> {
  // expected-error @+1 {{'train.cross_entropy' op targets must be [128] (one per row of logits), got 'tensor<4x32xi32>'}}
  %r = train.cross_entropy %l, %t : tensor<128x256xf32>, tensor<4x32xi32> -> tensor<f32>
  return %r : tensor<f32>
}

// -----

func.func @cross_entropy_num_classes(%l: tensor<128x256xf32>, %t: tensor<128xi32>) -> tensor<f32> {
  // expected-error @+1 {{'train.cross_entropy' op num_classes 300 exceeds the 256 logit columns}}
  %r = train.cross_entropy %l, %t {num_classes = 300 : i64} : tensor<128x256xf32>, tensor<128xi32> -> tensor<f32>
  return %r : tensor<f32>
}

// -----

func.func @cross_entropy_num_classes_zero(%l: tensor<128x256xf32>, %t: tensor<128xi32>) -> tensor<f32> {
  // expected-error @+1 {{'train.cross_entropy' op attribute 'num_classes' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %r = "train.cross_entropy"(%l, %t) {num_classes = 0 : i64} : (tensor<128x256xf32>, tensor<128xi32>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

func.func @cross_entropy_num_classes_negative(%l: tensor<128x256xf32>, %t: tensor<128xi32>) -> tensor<f32> {
  // expected-error @+1 {{'train.cross_entropy' op attribute 'num_classes' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %r = train.cross_entropy %l, %t {num_classes = -5 : i64} : tensor<128x256xf32>, tensor<128xi32> -> tensor<f32>
  return %r : tensor<f32>
}

// -----

func.func @cross_entropy_result_shape(%l: tensor<128x256xf32>, %t: tensor<128xi32>) -> tensor<1xf32> {
  // expected-error @+1 {{'train.cross_entropy' op result #0 must be 0D tensor of 32-bit float values, but got 'tensor<1xf32>'}}
  %r = train.cross_entropy %l, %t : tensor<128x256xf32>, tensor<128xi32> -> tensor<1xf32>
  return %r : tensor<1xf32>
}

// -----

func.func @cross_entropy_result_type(%l: tensor<128x256xbf16>, %t: tensor<128xi32>) -> tensor<bf16> {
  // expected-error @+1 {{'train.cross_entropy' op result #0 must be 0D tensor of 32-bit float values, but got 'tensor<bf16>'}}
  %r = train.cross_entropy %l, %t : tensor<128x256xbf16>, tensor<128xi32> -> tensor<bf16>
  return %r : tensor<bf16>
}

// -----

func.func @cross_entropy_float_targets(%l: tensor<128x256xf32>, %t: tensor<128xf32>) -> tensor<f32> {
  // expected-error @+1 {{'train.cross_entropy' op operand #1 must be statically shaped tensor of 32-bit signless integer values, but got 'tensor<128xf32>'}}
  %r = train.cross_entropy %l, %t : tensor<128x256xf32>, tensor<128xf32> -> tensor<f32>
  return %r : tensor<f32>
}

// -----

//===----------------------------------------------------------------------===//
// train.cross_entropy_grad
//===----------------------------------------------------------------------===//

func.func @cross_entropy_grad_result(%l: tensor<128x256xf32>, %t: tensor<128xi32>, %g: tensor<f32>) -> tensor<128x256xbf16> {
  // expected-error @+1 {{'train.cross_entropy_grad' op failed to verify that all of {logits, result} have same type}}
  %r = "train.cross_entropy_grad"(%l, %t, %g) : (tensor<128x256xf32>, tensor<128xi32>, tensor<f32>) -> tensor<128x256xbf16>
  return %r : tensor<128x256xbf16>
}

// -----

func.func @cross_entropy_grad_grad(%l: tensor<128x256xf32>, %t: tensor<128xi32>, %g: tensor<1xf32>) -> tensor<128x256xf32> {
  // expected-error @+1 {{'train.cross_entropy_grad' op operand #2 must be 0D tensor of 32-bit float values, but got 'tensor<1xf32>'}}
  %r = "train.cross_entropy_grad"(%l, %t, %g) : (tensor<128x256xf32>, tensor<128xi32>, tensor<1xf32>) -> tensor<128x256xf32>
  return %r : tensor<128x256xf32>
}

// -----

func.func @cross_entropy_grad_num_classes(%l: tensor<128x256xf32>, %t: tensor<128xi32>, %g: tensor<f32>) -> tensor<128x256xf32> {
  // expected-error @+1 {{'train.cross_entropy_grad' op attribute 'num_classes' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %r = "train.cross_entropy_grad"(%l, %t, %g) {num_classes = 0 : i64} : (tensor<128x256xf32>, tensor<128xi32>, tensor<f32>) -> tensor<128x256xf32>
  return %r : tensor<128x256xf32>
}

// -----

func.func @cross_entropy_grad_targets(%l: tensor<128x256xf32>, %t: tensor<128xi64>, %g: tensor<f32>) -> tensor<128x256xf32> {
  // expected-error @+1 {{'train.cross_entropy_grad' op operand #1 must be statically shaped tensor of 32-bit signless integer values, but got 'tensor<128xi64>'}}
  %r = train.cross_entropy_grad %l, %t, %g : tensor<128x256xf32>, tensor<128xi64>
  return %r : tensor<128x256xf32>
}

// -----

//===----------------------------------------------------------------------===//
// train.mse / train.mse_grad
//===----------------------------------------------------------------------===//

func.func @mse_target(%y: tensor<16x4xf32>, %t: tensor<16x4xbf16>) -> tensor<f32> {
  // expected-error @+1 {{'train.mse' op failed to verify that all of {input, target} have same type}}
  %l = "train.mse"(%y, %t) : (tensor<16x4xf32>, tensor<16x4xbf16>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

func.func @mse_target_shape(%y: tensor<16x4xf32>, %t: tensor<64xf32>) -> tensor<f32> {
  // expected-error @+1 {{'train.mse' op failed to verify that all of {input, target} have same type}}
  %l = "train.mse"(%y, %t) : (tensor<16x4xf32>, tensor<64xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

func.func @mse_result(%y: tensor<16x4xf32>) -> tensor<16x4xf32> {
  // expected-error @+1 {{'train.mse' op result #0 must be 0D tensor of 32-bit float values, but got 'tensor<16x4xf32>'}}
  %l = train.mse %y, %y : tensor<16x4xf32> -> tensor<16x4xf32>
  return %l : tensor<16x4xf32>
}

// -----

func.func @mse_ids(%y: tensor<16xi32>) -> tensor<f32> {
  // expected-error @+1 {{'train.mse' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<16xi32>'}}
  %l = train.mse %y, %y : tensor<16xi32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

func.func @mse_grad_target(%y: tensor<16x4xf32>, %t: tensor<4x16xf32>, %g: tensor<f32>) -> tensor<16x4xf32> {
  // expected-error @+1 {{'train.mse_grad' op failed to verify that all of {input, target, result} have same type}}
  %r = "train.mse_grad"(%y, %t, %g) : (tensor<16x4xf32>, tensor<4x16xf32>, tensor<f32>) -> tensor<16x4xf32>
  return %r : tensor<16x4xf32>
}

// -----

func.func @mse_grad_grad(%y: tensor<16x4xf32>, %g: tensor<bf16>) -> tensor<16x4xf32> {
  // expected-error @+1 {{'train.mse_grad' op operand #2 must be 0D tensor of 32-bit float values, but got 'tensor<bf16>'}}
  %r = "train.mse_grad"(%y, %y, %g) : (tensor<16x4xf32>, tensor<16x4xf32>, tensor<bf16>) -> tensor<16x4xf32>
  return %r : tensor<16x4xf32>
}

// -----

func.func @layer_norm_grad_scalar(%x: tensor<f32>, %w: tensor<1xf32>) {
  // expected-error @+1 {{'train.layer_norm_grad' op input must have rank >= 1}}
  %dx, %dw, %db = train.layer_norm_grad %x, %w, %x eps(1.0e-05) : tensor<f32>, tensor<1xf32>
  return
}

// -----

func.func @layer_norm_mixed(%x: tensor<2x4xbf16>, %w: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'train.layer_norm' op weight and bias element type 'f32' differs from the input's 'bf16'}}
  %y = train.layer_norm %x, %w, %b eps(1.0e-05) : tensor<2x4xbf16>, tensor<4xf32>
  return
}

// -----

func.func @attention_grad_rank(%q: tensor<2x8x4xf32>, %lse: tensor<2x8xf32>) {
  // expected-error @+1 {{'train.attention_grad' op query must be [B, H, T, D], got 'tensor<2x8x4xf32>'}}
  %dq, %dk, %dv = train.attention_grad %q, %q, %q, %q, %lse, %q : tensor<2x8x4xf32>
  return
}

// -----

func.func @attention_packed_rank(%qkv: tensor<32x48xf32>) {
  // expected-error @+1 {{'train.causal_attention_packed' op qkv must be [B, T, 3 C], got 'tensor<32x48xf32>'}}
  %y, %lse = train.causal_attention_packed %qkv heads(2) : tensor<32x48xf32> -> tensor<32x16xf32>, tensor<2x32xf32>
  return
}

// -----

func.func @attention_packed_not_thirds(%qkv: tensor<4x32x47xf32>) {
  // expected-error @+1 {{'train.causal_attention_packed' op qkv must be [B, T, 3 C], got 'tensor<4x32x47xf32>'}}
  %y, %lse = train.causal_attention_packed %qkv heads(2) : tensor<4x32x47xf32> -> tensor<4x32x16xf32>, tensor<4x2x32xf32>
  return
}

// -----

func.func @attention_packed_heads(%qkv: tensor<4x32x48xf32>) {
  // expected-error @+1 {{'train.causal_attention_packed' op C = 16 (a third of qkv's last dimension) is not divisible by 3 heads}}
  %y, %lse = train.causal_attention_packed %qkv heads(3) : tensor<4x32x48xf32> -> tensor<4x32x16xf32>, tensor<4x3x32xf32>
  return
}

// -----

func.func @attention_packed_zero_heads(%qkv: tensor<4x32x48xf32>) {
  // expected-error @+1 {{'train.causal_attention_packed' op attribute 'heads' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %y, %lse = train.causal_attention_packed %qkv heads(0) : tensor<4x32x48xf32> -> tensor<4x32x16xf32>, tensor<4x2x32xf32>
  return
}

// -----

func.func @attention_packed_result(%qkv: tensor<4x32x48xf32>) {
  // expected-error @+1 {{'train.causal_attention_packed' op result must be [4, 32, 16] for qkv 'tensor<4x32x48xf32>', got 'tensor<4x32x48xf32>'}}
  %y, %lse = train.causal_attention_packed %qkv heads(2) : tensor<4x32x48xf32> -> tensor<4x32x48xf32>, tensor<4x2x32xf32>
  return
}

// -----

func.func @attention_packed_result_type(%qkv: tensor<4x32x48xf32>) {
  // expected-error @+1 {{'train.causal_attention_packed' op failed to verify that all of {qkv, result} have same element type}}
  %y, %lse = train.causal_attention_packed %qkv heads(2) : tensor<4x32x48xf32> -> tensor<4x32x16xbf16>, tensor<4x2x32xf32>
  return
}

// -----

func.func @attention_packed_lse(%qkv: tensor<4x32x48xf32>) {
  // expected-error @+1 {{'train.causal_attention_packed' op lse must be [4, 2, 32] (batch, heads, tokens), got 'tensor<4x32x2xf32>'}}
  %y, %lse = train.causal_attention_packed %qkv heads(2) : tensor<4x32x48xf32> -> tensor<4x32x16xf32>, tensor<4x32x2xf32>
  return
}

// -----

func.func @attention_packed_lse_type(%qkv: tensor<4x32x48xf32>) {
  // expected-error @+1 {{'train.causal_attention_packed' op result #1 must be statically shaped tensor of 32-bit float values, but got 'tensor<4x2x32xbf16>'}}
  %y, %lse = train.causal_attention_packed %qkv heads(2) : tensor<4x32x48xf32> -> tensor<4x32x16xf32>, tensor<4x2x32xbf16>
  return
}

// -----

func.func @attention_packed_grad_output(%qkv: tensor<4x32x48xf32>, %y: tensor<4x16x16xf32>, %lse: tensor<4x2x32xf32>) {
  // expected-error @+1 {{'train.attention_packed_grad' op output must be [4, 32, 16] for qkv 'tensor<4x32x48xf32>', got 'tensor<4x16x16xf32>'}}
  %d = train.attention_packed_grad %qkv, %y, %lse, %y heads(2) : tensor<4x32x48xf32>, tensor<4x16x16xf32>, tensor<4x2x32xf32>
  return
}

// -----

func.func @attention_packed_grad_types(%qkv: tensor<4x32x48xf32>, %y: tensor<4x32x16xf32>, %dy: tensor<4x32x16xbf16>, %lse: tensor<4x2x32xf32>) {
  // expected-error @+1 {{'train.attention_packed_grad' op failed to verify that all of {output, grad} have same type}}
  %d = "train.attention_packed_grad"(%qkv, %y, %lse, %dy) {heads = 2 : i64} : (tensor<4x32x48xf32>, tensor<4x32x16xf32>, tensor<4x2x32xf32>, tensor<4x32x16xbf16>) -> tensor<4x32x48xf32>
  return
}

// -----

func.func @attention_packed_grad_element_type(%qkv: tensor<4x32x48xf32>, %y: tensor<4x32x16xbf16>, %lse: tensor<4x2x32xf32>) {
  // expected-error @+1 {{'train.attention_packed_grad' op failed to verify that all of {qkv, output} have same element type}}
  %d = train.attention_packed_grad %qkv, %y, %lse, %y heads(2) : tensor<4x32x48xf32>, tensor<4x32x16xbf16>, tensor<4x2x32xf32>
  return
}

// -----

func.func @attention_packed_grad_result(%qkv: tensor<4x32x48xf32>, %y: tensor<4x32x16xf32>, %lse: tensor<4x2x32xf32>) {
  // expected-error @+1 {{'train.attention_packed_grad' op failed to verify that all of {qkv, result} have same type}}
  %d = "train.attention_packed_grad"(%qkv, %y, %lse, %y) {heads = 2 : i64} : (tensor<4x32x48xf32>, tensor<4x32x16xf32>, tensor<4x2x32xf32>, tensor<4x32x16xf32>) -> tensor<4x32x16xf32>
  return
}

// -----

func.func @ce_grad_rank(%l: tensor<256xf32>, %t: tensor<256xi32>, %d: tensor<f32>) {
  // expected-error @+1 {{'train.cross_entropy_grad' op logits must be [N, V], got 'tensor<256xf32>'}}
  %g = train.cross_entropy_grad %l, %t, %d : tensor<256xf32>, tensor<256xi32>
  return
}

// -----

func.func @ce_grad_targets(%l: tensor<4x8xf32>, %t: tensor<7x3xi32>, %d: tensor<f32>) {
  // expected-error @+1 {{'train.cross_entropy_grad' op targets must be [4] (one per row of logits), got 'tensor<7x3xi32>'}}
  %g = train.cross_entropy_grad %l, %t, %d : tensor<4x8xf32>, tensor<7x3xi32>
  return
}

// -----

func.func @ce_grad_classes(%l: tensor<4x8xf32>, %t: tensor<4xi32>, %d: tensor<f32>) {
  // expected-error @+1 {{'train.cross_entropy_grad' op num_classes 1000 exceeds the 8 logit columns}}
  %g = train.cross_entropy_grad %l, %t, %d {num_classes = 1000 : i64} : tensor<4x8xf32>, tensor<4xi32>
  return
}

// -----

func.func @cross_entropy_fused_read_after(%x: tensor<4x8xf32>, %t: tensor<4xi32>) -> (tensor<f32>, tensor<4x8xf32>) {
  %z = train.gelu %x : tensor<4x8xf32>
  // expected-error@+1 {{'train.cross_entropy_fused' op overwrites its logits with the gradient, but they are read after it}}
  %l, %g = train.cross_entropy_fused %z, %t scale(1.0) : tensor<4x8xf32>, tensor<4xi32>
  // expected-note@+1 {{read here}}
  %y = train.gelu %z : tensor<4x8xf32>
  return %l, %y : tensor<f32>, tensor<4x8xf32>
}

// -----

func.func @cross_entropy_fused_targets(%z: tensor<4x8xf32>, %t: tensor<3xi32>) -> (tensor<f32>, tensor<4x8xf32>) {
  // expected-error@+1 {{'train.cross_entropy_fused' op targets must be [4] (one per row of logits), got 'tensor<3xi32>'}}
  %l, %g = train.cross_entropy_fused %z, %t scale(1.0) : tensor<4x8xf32>, tensor<3xi32>
  return %l, %g : tensor<f32>, tensor<4x8xf32>
}

// -----

func.func @cross_entropy_fused_f16(%z: tensor<4x8xf16>, %t: tensor<4xi32>) -> (tensor<f32>, tensor<4x8xf16>) {
  // expected-error@+1 {{'train.cross_entropy_fused' op logits must be f32 or bf16}}
  %l, %g = train.cross_entropy_fused %z, %t scale(1.0) : tensor<4x8xf16>, tensor<4xi32>
  return %l, %g : tensor<f32>, tensor<4x8xf16>
}
