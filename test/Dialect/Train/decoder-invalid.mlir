// Verifier diagnostics of the Llama/Qwen decoder ops (TrainDecoderOps.td).
// RUN: zero-opt %s -split-input-file -verify-diagnostics

func.func @rms_norm_weight(%x: tensor<4x64xf32>, %w: tensor<32xf32>) {
  // expected-error @+1 {{'train.rms_norm' op weight must be [64] (the last dimension of the input), got 'tensor<32xf32>'}}
  %y = train.rms_norm %x, %w eps(1.0e-05) : tensor<4x64xf32>, tensor<32xf32>
  return
}

// -----

func.func @rms_norm_weight_rank(%x: tensor<4x64xf32>, %w: tensor<1x64xf32>) {
  // expected-error @+1 {{'train.rms_norm' op weight must be [64] (the last dimension of the input), got 'tensor<1x64xf32>'}}
  %y = train.rms_norm %x, %w eps(1.0e-05) : tensor<4x64xf32>, tensor<1x64xf32>
  return
}

// -----

func.func @rms_norm_weight_type(%x: tensor<4x64xbf16>, %w: tensor<64xf32>) {
  // expected-error @+1 {{'train.rms_norm' op weight element type 'f32' differs from the input's 'bf16'}}
  %y = train.rms_norm %x, %w eps(1.0e-05) : tensor<4x64xbf16>, tensor<64xf32>
  return
}

// -----

func.func @rms_norm_rank0(%x: tensor<f32>, %w: tensor<1xf32>) {
  // expected-error @+1 {{'train.rms_norm' op input must have rank >= 1}}
  %y = train.rms_norm %x, %w eps(1.0e-05) : tensor<f32>, tensor<1xf32>
  return
}

// -----

func.func @rms_norm_empty(%x: tensor<0x64xf32>, %w: tensor<64xf32>) {
  // expected-error @+1 {{'train.rms_norm' op operand #0 has a zero-sized dimension ('tensor<0x64xf32>'); every tensor needs at least one element}}
  %y = train.rms_norm %x, %w eps(1.0e-05) : tensor<0x64xf32>, tensor<64xf32>
  return
}

// -----

func.func @rms_norm_empty_row(%x: tensor<4x0xf32>, %w: tensor<0xf32>) {
  // expected-error @+1 {{'train.rms_norm' op operand #0 has a zero-sized dimension ('tensor<4x0xf32>'); every tensor needs at least one element}}
  %y = train.rms_norm %x, %w eps(1.0e-05) : tensor<4x0xf32>, tensor<0xf32>
  return
}

// -----

func.func @rms_norm_eps(%x: tensor<4x64xf32>, %w: tensor<64xf32>) {
  // expected-error @+1 {{'train.rms_norm' op attribute 'eps' failed to satisfy constraint: 64-bit float attribute whose value is positive}}
  %y = train.rms_norm %x, %w eps(0.0) : tensor<4x64xf32>, tensor<64xf32>
  return
}

// -----

func.func @rms_norm_result(%x: tensor<4x64xf32>, %w: tensor<64xf32>) {
  // expected-error @+1 {{'train.rms_norm' op failed to verify that all of {input, result} have same type}}
  %y = "train.rms_norm"(%x, %w) {eps = 1.0e-05 : f64} : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xbf16>
  return
}

// -----

func.func @add_rms_norm_weight(%x: tensor<4x64xf32>, %w: tensor<32xf32>) {
  // expected-error @+1 {{'train.add_rms_norm' op weight must be [64] (the last dimension of the input), got 'tensor<32xf32>'}}
  %s, %y = train.add_rms_norm %x, %x, %w eps(1.0e-05) : tensor<4x64xf32>, tensor<32xf32>
  return
}

// -----

func.func @add_rms_norm_types(%x: tensor<4x64xf32>, %h: tensor<4x64xbf16>, %w: tensor<64xf32>) {
  // expected-error @+1 {{'train.add_rms_norm' op failed to verify that all of {lhs, rhs, sum, result} have same type}}
  %s, %y = "train.add_rms_norm"(%x, %h, %w) {eps = 1.0e-05 : f64} : (tensor<4x64xf32>, tensor<4x64xbf16>, tensor<64xf32>) -> (tensor<4x64xf32>, tensor<4x64xf32>)
  return
}

// -----

func.func @rms_norm_grad_weight(%x: tensor<4x64xf32>, %w: tensor<32xf32>) {
  // expected-error @+1 {{'train.rms_norm_grad' op weight must be [64] (the last dimension of the input), got 'tensor<32xf32>'}}
  %dx, %dw = train.rms_norm_grad %x, %w, %x eps(1.0e-05) : tensor<4x64xf32>, tensor<32xf32>
  return
}

// -----

func.func @rms_norm_grad_addend(%x: tensor<4x64xf32>, %w: tensor<64xf32>, %a: tensor<4x64xbf16>) {
  // expected-error @+1 {{'train.rms_norm_grad' op failed to verify that addend has the input's type}}
  %dx, %dw = "train.rms_norm_grad"(%x, %w, %x, %a) {eps = 1.0e-05 : f64} : (tensor<4x64xf32>, tensor<64xf32>, tensor<4x64xf32>, tensor<4x64xbf16>) -> (tensor<4x64xf32>, tensor<64xf32>)
  return
}

// -----

func.func @rms_norm_grad_weight_grad(%x: tensor<4x64xf32>, %w: tensor<64xf32>) {
  // expected-error @+1 {{'train.rms_norm_grad' op failed to verify that all of {weight, weight_grad} have same type}}
  %dx, %dw = "train.rms_norm_grad"(%x, %w, %x) {eps = 1.0e-05 : f64} : (tensor<4x64xf32>, tensor<64xf32>, tensor<4x64xf32>) -> (tensor<4x64xf32>, tensor<4x64xf32>)
  return
}

// -----

func.func @silu_empty(%x: tensor<4x0xf32>) {
  // expected-error @+1 {{'train.silu' op operand #0 has a zero-sized dimension ('tensor<4x0xf32>'); every tensor needs at least one element}}
  %y = train.silu %x : tensor<4x0xf32>
  return
}

// -----

func.func @silu_grad_empty(%x: tensor<0xf32>) {
  // expected-error @+1 {{'train.silu_grad' op operand #0 has a zero-sized dimension ('tensor<0xf32>'); every tensor needs at least one element}}
  %y = train.silu_grad %x, %x : tensor<0xf32>
  return
}

// -----

func.func @silu_result(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'train.silu' op failed to verify that all of {input, result} have same type}}
  %y = "train.silu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xbf16>
  return
}

// -----

func.func @swiglu_types(%g: tensor<4x8xf32>, %u: tensor<4x16xf32>) {
  // expected-error @+1 {{'train.swiglu' op failed to verify that all of {gate, up, result} have same type}}
  %y = "train.swiglu"(%g, %u) : (tensor<4x8xf32>, tensor<4x16xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @swiglu_empty(%g: tensor<0x8xbf16>) {
  // expected-error @+1 {{'train.swiglu' op operand #0 has a zero-sized dimension ('tensor<0x8xbf16>'); every tensor needs at least one element}}
  %y = train.swiglu %g, %g : tensor<0x8xbf16>
  return
}

// -----

func.func @swiglu_grad_empty(%g: tensor<2x0xf32>) {
  // expected-error @+1 {{'train.swiglu_grad' op operand #0 has a zero-sized dimension ('tensor<2x0xf32>'); every tensor needs at least one element}}
  %dg, %du = train.swiglu_grad %g, %g, %g : tensor<2x0xf32>
  return
}

// -----

func.func @swiglu_grad_types(%g: tensor<4x8xf32>, %d: tensor<4x8xbf16>) {
  // expected-error @+1 {{'train.swiglu_grad' op failed to verify that all of {gate, up, grad, gate_grad, up_grad} have same type}}
  %dg, %du = "train.swiglu_grad"(%g, %g, %d) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xbf16>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return
}

// -----

func.func @rope_table_shape() {
  // expected-error @+1 {{'train.rope_table' op result must be [T, D/2, 2] (cos and sin per position and frequency), got 'tensor<32x16xf32>'}}
  %t = train.rope_table theta(1.0e+04) : tensor<32x16xf32>
  return
}

// -----

func.func @rope_table_pair() {
  // expected-error @+1 {{'train.rope_table' op result must be [T, D/2, 2] (cos and sin per position and frequency), got 'tensor<32x8x3xf32>'}}
  %t = train.rope_table theta(1.0e+04) : tensor<32x8x3xf32>
  return
}

// -----

func.func @rope_table_empty() {
  // expected-error @+1 {{'train.rope_table' op result #0 has a zero-sized dimension ('tensor<0x8x2xf32>'); every tensor needs at least one element}}
  %t = train.rope_table theta(1.0e+04) : tensor<0x8x2xf32>
  return
}

// -----

func.func @rope_table_type() {
  // expected-error @+1 {{'train.rope_table' op result #0 must be statically shaped tensor of 32-bit float values, but got 'tensor<32x8x2xbf16>'}}
  %t = train.rope_table theta(1.0e+04) : tensor<32x8x2xbf16>
  return
}

// -----

func.func @rope_table_theta() {
  // expected-error @+1 {{'train.rope_table' op attribute 'theta' failed to satisfy constraint: 64-bit float attribute whose value is positive}}
  %t = train.rope_table theta(0.0) : tensor<32x8x2xf32>
  return
}

// -----

func.func @rope_table_partial_scaling() {
  // expected-error @+1 {{'train.rope_table' op llama3 scaling needs factor, low_freq_factor, high_freq_factor and original_max_positions together}}
  %t = "train.rope_table"() {theta = 5.0e+05 : f64, factor = 8.0 : f64} : () -> tensor<32x8x2xf32>
  return
}

// -----

func.func @rope_table_factor() {
  // expected-error @+1 {{'train.rope_table' op llama3 factor must be positive, got -8}}
  %t = train.rope_table theta(5.0e+05) llama3(factor(-8.0) low_freq_factor(1.0) high_freq_factor(4.0) original_max_positions(8192)) : tensor<32x8x2xf32>
  return
}

// -----

func.func @rope_table_freq_factors() {
  // expected-error @+1 {{'train.rope_table' op llama3 frequency factors need 0 < low_freq_factor < high_freq_factor, got 4.000000e+00 and 4.000000e+00}}
  %t = train.rope_table theta(5.0e+05) llama3(factor(8.0) low_freq_factor(4.0) high_freq_factor(4.0) original_max_positions(8192)) : tensor<32x8x2xf32>
  return
}

// -----

func.func @rope_table_original() {
  // expected-error @+1 {{'train.rope_table' op llama3 original_max_positions must be positive, got 0}}
  %t = train.rope_table theta(5.0e+05) llama3(factor(8.0) low_freq_factor(1.0) high_freq_factor(4.0) original_max_positions(0)) : tensor<32x8x2xf32>
  return
}

// -----

func.func @rope_rank(%x: tensor<4x32x64xf32>, %t: tensor<32x32x2xf32>) {
  // expected-error @+1 {{'train.rope' op input must be [B, T, H, D], got 'tensor<4x32x64xf32>'}}
  %y = train.rope %x, %t layout(<rotate_half>) : tensor<4x32x64xf32>, tensor<32x32x2xf32>
  return
}

// -----

func.func @rope_empty(%x: tensor<4x32x0x16xf32>, %t: tensor<32x8x2xf32>) {
  // expected-error @+1 {{'train.rope' op operand #0 has a zero-sized dimension ('tensor<4x32x0x16xf32>'); every tensor needs at least one element}}
  %y = train.rope %x, %t layout(<rotate_half>) : tensor<4x32x0x16xf32>, tensor<32x8x2xf32>
  return
}

// -----

func.func @rope_odd(%x: tensor<4x32x4x15xf32>, %t: tensor<32x7x2xf32>) {
  // expected-error @+1 {{'train.rope' op head dimension D = 15 must be even (rotary pairs)}}
  %y = train.rope %x, %t layout(<interleaved>) : tensor<4x32x4x15xf32>, tensor<32x7x2xf32>
  return
}

// -----

func.func @rope_table_positions(%x: tensor<4x32x4x16xf32>, %t: tensor<64x8x2xf32>) {
  // expected-error @+1 {{'train.rope' op table must be [32, 8, 2] (positions, D/2 frequencies, cos and sin) for input 'tensor<4x32x4x16xf32>', got 'tensor<64x8x2xf32>'}}
  %y = train.rope %x, %t layout(<rotate_half>) : tensor<4x32x4x16xf32>, tensor<64x8x2xf32>
  return
}

// -----

func.func @rope_table_element(%x: tensor<4x32x4x16xbf16>, %t: tensor<32x8x2xbf16>) {
  // expected-error @+1 {{'train.rope' op operand #1 must be statically shaped tensor of 32-bit float values, but got 'tensor<32x8x2xbf16>'}}
  %y = train.rope %x, %t layout(<rotate_half>) : tensor<4x32x4x16xbf16>, tensor<32x8x2xbf16>
  return
}

// -----

func.func @rope_layout(%x: tensor<4x32x4x16xf32>, %t: tensor<32x8x2xf32>) {
  // MLIR's generated enum parser reports the bad keyword and then the attribute.
  // expected-error @+2 {{expected ::mlir::train::RopeLayout to be one of: rotate_half, interleaved}}
  // expected-error @+1 {{failed to parse Train_RopeLayoutAttr parameter 'value'}}
  %y = train.rope %x, %t layout(<complex>) : tensor<4x32x4x16xf32>, tensor<32x8x2xf32>
  return
}
