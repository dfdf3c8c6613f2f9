//===- TrainDecoderOps.td - Llama/Qwen decoder ops ------------*- tablegen -*-===//
//
// The ops of the Llama 3 / Qwen3 decoder block beyond GPT-2's: RMSNorm (and
// its residual form), SiLU and the SwiGLU product, rotary position
// embeddings and their cos/sin table. Included by TrainOps.td (one
// tablegen target); verifiers in TrainDecoderOps.cpp, gradient rules in
// TrainGradients.cpp. Sources: Hugging Face transformers
// `models/llama/modeling_llama.py` and `models/qwen3/modeling_qwen3.py`,
// torchtitan `models/llama3/model`.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_TRAIN_DECODER_OPS_TD
#define ZERO_TRAIN_DECODER_OPS_TD

//===----------------------------------------------------------------------===//
// RMSNorm
//===----------------------------------------------------------------------===//

def Train_RmsNormOp : Train_Op<"rms_norm", [Pure,
    Train_NativeBf16KernelOpInterface, Differentiable,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "Root-mean-square normalization over the last dimension";
  let description = [{
    For `input` x [..., C] and `weight` w [C]:

    ```
    r      = 1 / √(mean(x²) + eps)        // over the last dimension, in f32
    result = w · round(x · r)             // round: to x's element type
    ```

    Hugging Face `LlamaRMSNorm` / `Qwen3RMSNorm` (and torchtitan's
    `RMSNorm`): the statistics in f32, the normalized row cast back to the
    input's type, then times the weight (in f32 storage the rounding is the
    identity). Llama 3 uses eps 1e-5, Qwen3 1e-6. Qwen3's QK-norm is this op
    on q and k reshaped to [B, T, heads, head_dim] with a [head_dim] weight.
    The gradient is `train.rms_norm_grad`.

    Example:
    ```mlir
    %y = train.rms_norm %x, %w eps(1.0e-05) : tensor<4x32x64xbf16>, tensor<64xbf16>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, Train_FloatTensor:$weight,
                       Train_PositiveF64Attr:$eps);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$input `,` $weight `eps` `(` $eps `)` attr-dict `:` type($input) `,` type($weight)";
  let hasVerifier = 1;
}

def Train_AddRmsNormOp : Train_Op<"add_rms_norm", [Pure,
    Train_NativeBf16KernelOpInterface, Differentiable,
    AllTypesMatch<["lhs", "rhs", "sum", "result"]>]> {
  let summary = "Residual add followed by RMSNorm, in one op";
  let description = [{
    `sum = lhs + rhs` (as `train.add`, rounded to the element type) and
    `result` = `train.rms_norm` of `sum` with `weight` and `eps`: exactly
    the pair it replaces, computed in one pass over each row. `sum` is the
    residual stream (read by the next residual add and by the backward).
    Unlike `train.add_layer_norm` it has a gradient rule (one
    `train.rms_norm_grad` with the stream's other gradient as addend), so a
    model generator may emit it directly.

    Example:
    ```mlir
    %sum, %y = train.add_rms_norm %x, %h, %w eps(1.0e-05) : tensor<4x32x64xbf16>, tensor<64xbf16>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$lhs, Train_FloatTensor:$rhs,
                       Train_FloatTensor:$weight, Train_PositiveF64Attr:$eps);
  let results = (outs Train_FloatTensor:$sum, Train_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs `,` $weight `eps` `(` $eps `)` attr-dict `:` type($lhs) `,` type($weight)";
  let hasVerifier = 1;
}

def Train_RmsNormGradOp : Train_Op<"rms_norm_grad", [Pure,
    Train_NativeBf16KernelOpInterface,
    AllTypesMatch<["input", "grad", "input_grad"]>,
    OptionalTypesMatchWith<"addend has the input's type", "input", "addend", "$_self">,
    AllTypesMatch<["weight", "weight_grad"]>]> {
  let summary = "Gradients of RMSNorm";
  let description = [{
    From the input x [..., C], the weight w [C] and the output gradient dy,
    with r and x̂ = x·r recomputed in f32 per row:

    ```
    g          = dy · w
    input_grad = r · (g − x̂ · mean(g · x̂))     // per row
    weight_grad = Σ dy · x̂                      // over every leading dim, f32
    ```

    (the derivative of `train.rms_norm` without its rounding of x̂, as
    PyTorch's autograd of `LlamaRMSNorm` in f32). With `plus %addend` (x's
    type), `input_grad` is the addend plus that gradient (rounded to the
    element type first): the residual stream's other gradient added in the
    same pass, as in `train.layer_norm_grad`.

    Example:
    ```mlir
    %dx, %dw = train.rms_norm_grad %x, %w, %dy eps(1.0e-05) : tensor<4x32x64xf32>, tensor<64xf32>
    %dr, %dw2 = train.rms_norm_grad %x, %w, %dy plus %dres eps(1.0e-05) : tensor<4x32x64xf32>, tensor<64xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, Train_FloatTensor:$weight,
                       Train_FloatTensor:$grad,
                       Optional<Train_FloatTensor>:$addend,
                       Train_PositiveF64Attr:$eps);
  let results = (outs Train_FloatTensor:$input_grad,
                      Train_FloatTensor:$weight_grad);
  let assemblyFormat = "$input `,` $weight `,` $grad (`plus` $addend^)? `eps` `(` $eps `)` attr-dict `:` type($input) `,` type($weight)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// SiLU and SwiGLU
//===----------------------------------------------------------------------===//

def Train_SiluOp : Train_UnaryElementwise<"silu",
    [Train_NativeBf16KernelOpInterface]> {
  let summary = "SiLU (swish): x · σ(x)";
  let description = [{
    x / (1 + exp(−x)), computed in f32 and rounded once (PyTorch
    `torch.nn.functional.silu`, the `hidden_act = "silu"` of Llama and
    Qwen3). The gradient is `train.silu_grad`.

    Example:
    ```mlir
    %r = train.silu %x : tensor<4x32x256xbf16>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Train_SiluGradOp : Train_Op<"silu_grad", [Pure,
    Train_NativeBf16KernelOpInterface,
    AllTypesMatch<["input", "grad", "result"]>]> {
  let summary = "Gradient of SiLU";
  let description = [{
    `result = grad · σ(x)·(1 + x·(1 − σ(x)))` at `input` = x, in f32.

    Example:
    ```mlir
    %dx = train.silu_grad %x, %dy : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, Train_FloatTensor:$grad);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$input `,` $grad attr-dict `:` type($result)";
}

def Train_SwigluOp : Train_Op<"swiglu", [Pure,
    Train_NativeBf16KernelOpInterface, Differentiable,
    AllTypesMatch<["gate", "up", "result"]>]> {
  let summary = "The SwiGLU product silu(gate) · up";
  let description = [{
    The gated unit of the Llama MLP, `down_proj(act_fn(gate_proj(x)) *
    up_proj(x))` (Hugging Face `LlamaMLP`; torchtitan `FeedForward`:
    `w2(F.silu(w1(x)) * w3(x))`; Shazeer, arXiv 2002.05202): element-wise
    `result = silu(gate) · up`, computed in f32 from the stored operands and
    rounded once (in bf16, eager PyTorch also rounds silu(gate) before the
    product; the difference is one bf16 rounding). The gradient is
    `train.swiglu_grad`, one fused pass over both operands.

    Example:
    ```mlir
    %h = train.swiglu %gate, %up : tensor<4x32x256xbf16>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$gate, Train_FloatTensor:$up);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$gate `,` $up attr-dict `:` type($result)";
}

def Train_SwigluGradOp : Train_Op<"swiglu_grad", [Pure,
    Train_NativeBf16KernelOpInterface,
    AllTypesMatch<["gate", "up", "grad", "gate_grad", "up_grad"]>]> {
  let summary = "Gradients of the SwiGLU product";
  let description = [{
    With s = σ(gate), in f32 and rounded once each:

    ```
    gate_grad = grad · up · s · (1 + gate · (1 − s))
    up_grad   = grad · gate · s
    ```

    Example:
    ```mlir
    %dg, %du = train.swiglu_grad %gate, %up, %dh : tensor<4x32x256xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$gate, Train_FloatTensor:$up,
                       Train_FloatTensor:$grad);
  let results = (outs Train_FloatTensor:$gate_grad, Train_FloatTensor:$up_grad);
  let assemblyFormat = "$gate `,` $up `,` $grad attr-dict `:` type($grad)";
}

//===----------------------------------------------------------------------===//
// Rotary position embedding
//===----------------------------------------------------------------------===//

def Train_RopeLayout : I32EnumAttr<"RopeLayout", "which pairs of a head rotate together", [
    I32EnumAttrCase<"rotate_half", 0>,
    I32EnumAttrCase<"interleaved", 1>
  ]> {
  let cppNamespace = "::mlir::train";
  let genSpecializedAttr = 0;
}
def Train_RopeLayoutAttr : EnumAttr<Train_Dialect, Train_RopeLayout, "rope_layout"> {
  let assemblyFormat = "`<` $value `>`";
}

def Train_RopeTableOp : Train_Op<"rope_table", [Train_NotCompute, Pure]> {
  let summary = "The cos/sin table of rotary position embeddings";
  let description = [{
    The result [T, D/2, 2] f32 holds, for position t and frequency i:
    `[t][i][0] = cos(t · f_i)`, `[t][i][1] = sin(t · f_i)` with
    `f_i = theta^(−2i/D)` (Su et al., RoFormer, arXiv 2104.09864; Hugging
    Face `LlamaRotaryEmbedding`, torchtitan `precompute_freqs_cis`). The
    arithmetic is theirs, in f32: f_i rounded to f32, the scaling below in
    f32, the angle t·f_i rounded to f32, and cos and sin of that angle
    rounded to f32 — so the table equals the references' to the last bit
    of their cos/sin, where f64 angles would differ by up to t·2⁻²⁴ rad.

    With `llama3(...)` the frequencies are rescaled as Llama 3.1 does (Hugging
    Face `_compute_llama3_parameters`, `rope_scaling.rope_type = "llama3"`):
    with wavelength λ = 2π / f_i, L = `original_max_positions` /
    `low_freq_factor` and S = `original_max_positions` / `high_freq_factor`,

    ```
    λ > L:           f_i / factor
    λ < S:           f_i
    otherwise:       (1 − s) · f_i / factor + s · f_i,
                     s = (original_max_positions / λ − low_freq_factor)
                         / (high_freq_factor − low_freq_factor)
    ```

    The table is the op's whole value: it has no operands and depends only
    on its attributes and result type, so it is a constant of the program —
    the lowering computes it once at initialization into a buffer that lives
    for the run (never per step), and it is neither a parameter nor state
    (it has no gradient and no shard; Hugging Face keeps `inv_freq` as a
    non-persistent buffer, outside the state dict).

    Example:
    ```mlir
    %t = train.rope_table theta(5.0e+05) : tensor<32x8x2xf32>
    %s = train.rope_table theta(5.0e+05) llama3(factor(3.2e+01) low_freq_factor(1.0) high_freq_factor(4.0) original_max_positions(8192)) : tensor<32x8x2xf32>
    ```
  }];
  let arguments = (ins Train_PositiveF64Attr:$theta,
                       OptionalAttr<F64Attr>:$factor,
                       OptionalAttr<F64Attr>:$low_freq_factor,
                       OptionalAttr<F64Attr>:$high_freq_factor,
                       OptionalAttr<I64Attr>:$original_max_positions);
  let results = (outs Train_F32Tensor:$result);
  let assemblyFormat = [{
    `theta` `(` $theta `)`
    (`llama3` `(` `factor` `(` $factor^ `)` `low_freq_factor` `(` $low_freq_factor `)`
       `high_freq_factor` `(` $high_freq_factor `)`
       `original_max_positions` `(` $original_max_positions `)` `)`)?
    attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Whether the llama3 frequency scaling is on.
    bool hasLlama3Scaling() { return getFactor().has_value(); }
  }];
}

def Train_RopeOp : Train_Op<"rope", [Pure,
    DeclareOpInterfaceMethods<Train_NativeBf16KernelOpInterface,
                              ["hasNativeBf16Kernel"]>,
    DeclareOpInterfaceMethods<Train_GradientOpInterface,
                              ["buildGradient", "isDifferentiableOperand"]>,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "Rotary position embedding of q or k";
  let description = [{
    `input` x [B, T, H, D] (a projection reshaped to heads, before the
    transpose to attention's [B, H, T, D]: torchtitan's layout, a view of
    the projection's output) and `table` [T, D/2, 2] from
    `train.rope_table`. For each head and position t, pairs (a, b) of x are
    rotated by the angle of frequency i, with c, s = table[t][i]:

    ```
    a' = a·c − b·s
    b' = b·c + a·s
    ```

    `layout(<rotate_half>)` pairs (i, i + D/2) — Hugging Face
    `apply_rotary_pos_emb`, `x·cos + rotate_half(x)·sin` with cos/sin of
    the frequencies repeated as [f, f] (HF Llama and Qwen3 checkpoints);
    `layout(<interleaved>)` pairs (2i, 2i + 1) — Meta's original Llama and
    torchtitan (`view_as_complex` times `freqs_cis`). The two agree after
    permuting q/k projection rows per head; a model picks one.

    With `inverse`, the rotation is by the negated angle (s → −s): the
    inverse and transpose of the forward rotation, so the op's gradient is
    itself with `inverse` toggled. Computed in f32 from the stored input,
    rounded once (eager PyTorch in bf16 also rounds cos/sin and each
    product). The table carries no gradient.

    Example:
    ```mlir
    %qr = train.rope %q, %t layout(<rotate_half>) : tensor<4x32x4x16xf32>, tensor<32x8x2xf32>
    %dq = train.rope %dqr, %t layout(<rotate_half>) {inverse} : tensor<4x32x4x16xf32>, tensor<32x8x2xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, Train_F32Tensor:$table,
                       Train_RopeLayoutAttr:$layout, UnitAttr:$inverse);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$input `,` $table `layout` `(` $layout `)` attr-dict `:` type($input) `,` type($table)";
  let hasVerifier = 1;
}

#endif // ZERO_TRAIN_DECODER_OPS_TD
