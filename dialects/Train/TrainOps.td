//===- TrainOps.td - train dialect operations ----------------*- tablegen -*-===//

#ifndef ZERO_TRAIN_OPS_TD
#define ZERO_TRAIN_OPS_TD

include "Train/TrainDialect.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/CommonAttrConstraints.td"
include "Train/TrainInterfaces.td"

/// A statically shaped tensor of floating-point elements the dialect computes
/// on (f32, bf16 or f16).
def Train_FloatTensor : StaticShapeTensorOf<[F32, BF16, F16]>;
/// f32 statistics (attention's log-sum-exp).
def Train_F32Tensor : StaticShapeTensorOf<[F32]>;
/// Token ids and class targets.
def Train_IdTensor : StaticShapeTensorOf<[I32]>;
/// A scalar f32 tensor (loss, learning rate, norms).
def Train_F32Scalar : 0DTensorOf<[F32]>,
    BuildableType<"::mlir::RankedTensorType::get({}, $_builder.getF32Type())">;
/// A scalar i64 tensor (the optimizer step).
def Train_I64Scalar : 0DTensorOf<[I64]>,
    BuildableType<"::mlir::RankedTensorType::get({}, $_builder.getI64Type())">;
/// Anything `reshape` may move: float data or ids.
def Train_AnyTensor : StaticShapeTensorOf<[F32, BF16, F16, I32]>;

/// Long-lived state (parameters, gradients, optimizer state) that
/// `train.load`, `train.store` and `train.accumulate` read and write.
def Train_StateResource : Resource<"::mlir::train::StateResource">;

def Train_StateKind : I32EnumAttr<"StateKind", "kind of optimizer-owned state", [
    I32EnumAttrCase<"grad", 0>,
    I32EnumAttrCase<"master", 1>,
    I32EnumAttrCase<"exp_avg", 2>,
    I32EnumAttrCase<"exp_avg_sq", 3>
  ]> {
  let cppNamespace = "::mlir::train";
  let genSpecializedAttr = 0;
}
def Train_StateKindAttr : EnumAttr<Train_Dialect, Train_StateKind, "state_kind"> {
  let assemblyFormat = "`<` $value `>`";
}

/// A strictly positive f64 attribute (epsilons).
def Train_PositiveF64Attr : ConfinedAttr<F64Attr, [AttrConstraint<
    CPred<"::llvm::cast<::mlir::FloatAttr>($_self).getValueAsDouble() > 0.0">,
    "whose value is positive">]>;

/// A forward op with a gradient rule.
defvar Differentiable = DeclareOpInterfaceMethods<Train_GradientOpInterface, ["buildGradient"]>;

//===----------------------------------------------------------------------===//
// Parameters and state
//===----------------------------------------------------------------------===//

def Train_ParamOp : Train_Op<"param", [Symbol]> {
  let summary = "A model parameter: a named, statically shaped tensor";
  let description = [{
    Declares one parameter of the model at module level. `type` gives its
    shape and storage element type; `init` its initializer; `trainable`
    whether `train-autodiff` computes a gradient for it (a parameter without
    it is frozen: no gradient, no optimizer state, no backward work that only
    it needs).

    Example:
    ```mlir
    train.param @wte : tensor<256x64xf32> init(<normal, 2.000000e-02>) trainable
    train.param @ln_f.bias : tensor<64xf32> init(<zeros>)
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<AnyRankedTensor>:$type,
                       Train_InitAttr:$init,
                       UnitAttr:$trainable);
  let assemblyFormat = [{
    $sym_name `:` $type `init` `(` $init `)` (`trainable` $trainable^)? attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The parameter's tensor type (static shape, float elements).
    ::mlir::RankedTensorType getTensorType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getType());
    }
  }];
}

def Train_StateOp : Train_Op<"state", [Symbol,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Optimizer-owned state of one parameter";
  let description = [{
    Declares one tensor of state that belongs to parameter `param`:
    its gradient accumulator (`grad`, same type as the parameter), its f32
    master copy (`master`, mixed precision only), or AdamW's first and
    second moments (`exp_avg`, `exp_avg_sq`, f32). Created by
    `train-autodiff` (gradients) and `train-optimizer` (the rest); all start
    at zero except `master`, which starts as a copy of the parameter.

    Example:
    ```mlir
    train.state @wte.exp_avg : tensor<256x64xf32> kind(<exp_avg>) of(@wte)
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<AnyRankedTensor>:$type,
                       Train_StateKindAttr:$kind,
                       FlatSymbolRefAttr:$param);
  let assemblyFormat = [{
    $sym_name `:` $type `kind` `(` $kind `)` `of` `(` $param `)` attr-dict
  }];
  let extraClassDeclaration = [{
    /// The state's tensor type.
    ::mlir::RankedTensorType getTensorType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getType());
    }
  }];
}

def Train_LoadOp : Train_Op<"load", [Train_NotCompute, 
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    MemoryEffects<[MemRead<Train_StateResource>]>]> {
  let summary = "Reads the current value of a parameter or state";
  let description = [{
    Yields the value of the `train.param` or `train.state` named by `name`.
    The result type must equal the declared type.

    Example:
    ```mlir
    %w = train.load @wte : tensor<256x64xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$name);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
}


def Train_StoreOp : Train_Op<"store", [Train_NotCompute, 
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    MemoryEffects<[MemWrite<Train_StateResource>]>]> {
  let summary = "Overwrites a parameter or state";
  let description = [{
    Replaces the value of the `train.param` or `train.state` named by
    `name`; the value's type must equal the declared type.

    Example:
    ```mlir
    train.store %m2, @wte.exp_avg : tensor<256x64xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$value, FlatSymbolRefAttr:$name);
  let assemblyFormat = "$value `,` $name attr-dict `:` type($value)";
}

def Train_AccumulateOp : Train_Op<"accumulate", [Train_NotCompute, 
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    MemoryEffects<[MemRead<Train_StateResource>, MemWrite<Train_StateResource>]>]> {
  let summary = "Adds a value into a state (gradient accumulation)";
  let description = [{
    `name += value`, element-wise, with the sum computed in f32 and stored
    in the state's element type. `train-autodiff` accumulates each
    parameter's gradient this way, so a step can run k micro-batches before
    one optimizer update (PyTorch's `.grad` accumulation).

    Example:
    ```mlir
    train.accumulate %dw, @wte.grad : tensor<256x64xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$value, FlatSymbolRefAttr:$name);
  let assemblyFormat = "$value `,` $name attr-dict `:` type($value)";
}

def Train_FillOp : Train_Op<"fill", [Train_NotCompute, Pure]> {
  let summary = "A tensor with every element equal to one constant";
  let description = [{
    Example:
    ```mlir
    %one = train.fill 1.0 : tensor<f32>
    ```
  }];
  let arguments = (ins F64Attr:$value);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$value attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Forward ops
//===----------------------------------------------------------------------===//

def Train_EmbeddingOp : Train_Op<"embedding", [Pure,
    DeclareOpInterfaceMethods<Train_NativeBf16KernelOpInterface,
                              ["hasNativeBf16Kernel"]>, Differentiable]> {
  let summary = "Looks up rows of a table by integer ids";
  let description = [{
    `table` is [V, C]; `ids` has any shape S with values in [0, V); the
    result is S × [C] with `result[s] = table[ids[s]]` (PyTorch
    `torch.nn.functional.embedding`). Ids are not differentiable; the
    table's gradient is `train.embedding_grad` (a scatter-add).

    Example:
    ```mlir
    %x = train.embedding %wte, %ids : tensor<256x64xf32>, tensor<4x32xi32> -> tensor<4x32x64xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$table, Train_IdTensor:$ids);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$table `,` $ids attr-dict `:` type($table) `,` type($ids) `->` type($result)";
  let hasVerifier = 1;
}

def Train_MatmulOp : Train_Op<"matmul", [Pure,
    DeclareOpInterfaceMethods<Train_NativeBf16KernelOpInterface,
                              ["hasNativeBf16Kernel"]>, Differentiable]> {
  let summary = "(Batched) matrix product with optional transposes and bias";
  let description = [{
    `result = op(a) · op(b) (+ bias)`, where op transposes the last two
    dimensions when `transpose_a` / `transpose_b` is set. `a` is
    [batch..., M, K] after op; `b` is either [K, N] after op (one matrix
    shared by every batch entry, a linear layer; then `transpose_a` must be
    unset) or [batch..., K, N] with the same batch dimensions as `a`. The
    result is [batch..., M, N]; `bias`, when present, is [N] and is added to
    every row. Products accumulate in f32 whatever the storage type.

    Linear layers follow PyTorch's layout: weight [out, in] with
    `transpose_b` (`x · Wᵀ + b`, `torch.nn.functional.linear`).

    Example:
    ```mlir
    %y = train.matmul %x, %w bias %b {transpose_b} : tensor<4x32x64xf32>, tensor<256x64xf32>, tensor<256xf32> -> tensor<4x32x256xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$a, Train_FloatTensor:$b,
                       Optional<Train_FloatTensor>:$bias,
                       UnitAttr:$transpose_a, UnitAttr:$transpose_b);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $a `,` $b (`bias` $bias^)? attr-dict `:` type($a) `,` type($b) (`,` type($bias)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def Train_MatmulGeluOp : Train_Op<"matmul_gelu", [Pure,
    DeclareOpInterfaceMethods<Train_NativeBf16KernelOpInterface,
                              ["hasNativeBf16Kernel"]>,
    AllTypesMatch<["pre", "result"]>]> {
  let summary = "Matrix product, bias and GELU in one op (a GEMM epilogue)";
  let description = [{
    The fusion of `train.matmul` (with or without bias) and the
    `train.gelu` of its result, as `train-fuse-epilogues` forms it:
    with acc = op(a) · op(b) (+ bias) in f32,

    ```
    pre    = acc                 // rounded once to the element type
    result = gelu(acc)           // GELU of the unrounded acc, rounded once
    ```

    `pre` is the GELU's input, which `train.matmul_gelu_grad` (or a
    `train.gelu_grad`) reads in the backward. Operands, transposes, bias
    and shapes are those of `train.matmul`. In f32 this computes exactly
    the unfused pair; in bf16 `result` differs from `gelu(pre)` only in
    skipping pre's rounding before the GELU — the semantics of cuBLASLt's
    `CUBLASLT_EPILOGUE_GELU_AUX_BIAS` and of llm.c's `gelu_fusion`, and
    what a fused kernel of `torch.compile` computes (intermediates of a
    fused kernel stay in f32).

    The op has no gradient rule: it is formed after `train-autodiff`.

    Example:
    ```mlir
    %pre, %y = train.matmul_gelu %x, %w bias %b {transpose_b} : tensor<4x32x64xbf16>, tensor<256x64xbf16>, tensor<256xbf16> -> tensor<4x32x256xbf16>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$a, Train_FloatTensor:$b,
                       Optional<Train_FloatTensor>:$bias,
                       UnitAttr:$transpose_a, UnitAttr:$transpose_b);
  let results = (outs Train_FloatTensor:$pre, Train_FloatTensor:$result);
  let assemblyFormat = [{
    $a `,` $b (`bias` $bias^)? attr-dict `:` type($a) `,` type($b) (`,` type($bias)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

class Train_BinaryElementwise<string mnemonic, list<Trait> traits = []>
    : Train_Op<mnemonic, !listconcat([Pure, Differentiable,
        AllTypesMatch<["lhs", "rhs", "result"]>], traits)> {
  let arguments = (ins Train_FloatTensor:$lhs, Train_FloatTensor:$rhs);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

def Train_AddOp : Train_BinaryElementwise<"add",
    [Commutative, Train_NativeBf16KernelOpInterface]> {
  let summary = "Element-wise sum of two tensors of one type";
  let description = [{
    `%r = train.add %a, %b` computes a + b element-wise. Both operands and
    the result have the same shape and element type (no broadcasting).

    Example:
    ```mlir
    %r = train.add %a, %b : tensor<4x8xf32>
    ```
  }];
}

def Train_MulOp : Train_BinaryElementwise<"mul", [Commutative]> {
  let summary = "Element-wise product of two tensors of one type";
  let description = [{
    Example:
    ```mlir
    %r = train.mul %a, %b : tensor<4x8xf32>
    ```
  }];
}

class Train_UnaryElementwise<string mnemonic, list<Trait> traits = []>
    : Train_Op<mnemonic, !listconcat([Pure, Differentiable,
        AllTypesMatch<["input", "result"]>], traits)> {
  let results = (outs Train_FloatTensor:$result);
}

def Train_ScaleOp : Train_UnaryElementwise<"scale"> {
  let summary = "Multiplies every element by a constant";
  let description = [{
    Example:
    ```mlir
    %r = train.scale %x, 0.5 : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, F64Attr:$factor);
  let assemblyFormat = "$input `,` $factor attr-dict `:` type($result)";
}

def Train_GeluOp : Train_UnaryElementwise<"gelu",
    [Train_NativeBf16KernelOpInterface]> {
  let summary = "GELU, tanh approximation";
  let description = [{
    0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), PyTorch
    `torch.nn.functional.gelu(x, approximate='tanh')` (GPT-2's GELU).

    Example:
    ```mlir
    %r = train.gelu %x : tensor<4x32x256xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Train_ReluOp : Train_UnaryElementwise<"relu"> {
  let summary = "max(x, 0)";
  let description = [{
    Example:
    ```mlir
    %r = train.relu %x : tensor<16x32xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Train_SoftmaxOp : Train_UnaryElementwise<"softmax"> {
  let summary = "Softmax over the last dimension";
  let description = [{
    exp(x − max) / Σ exp(x − max) along the last dimension; the max and the
    sum are computed in f32.

    Example:
    ```mlir
    %p = train.softmax %x : tensor<4x10xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Train_LayerNormOp : Train_Op<"layer_norm", [Pure,
    Train_NativeBf16KernelOpInterface, Differentiable,
    AllTypesMatch<["input", "result"]>, AllTypesMatch<["weight", "bias"]>]> {
  let summary = "Layer normalization over the last dimension";
  let description = [{
    For `input` [..., C]: y = (x − mean) / √(var + eps) · weight + bias, with
    the biased variance over the last dimension; `weight` and `bias` are
    [C]. Mean and variance are computed in f32 (PyTorch
    `torch.nn.functional.layer_norm`).

    Example:
    ```mlir
    %y = train.layer_norm %x, %w, %b eps(1.0e-05) : tensor<4x32x64xf32>, tensor<64xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, Train_FloatTensor:$weight,
                       Train_FloatTensor:$bias,
                       Train_PositiveF64Attr:$eps);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$input `,` $weight `,` $bias `eps` `(` $eps `)` attr-dict `:` type($input) `,` type($weight)";
  let hasVerifier = 1;
}

def Train_CrossEntropyFusedOp : Train_Op<"cross_entropy_fused", [Pure,
    DeclareOpInterfaceMethods<Train_NativeBf16KernelOpInterface,
                              ["hasNativeBf16Kernel"]>,
    AllTypesMatch<["logits", "grad"]>]> {
  let summary = "Cross-entropy and its gradient in one pass, the gradient over the logits";
  let description = [{
    `loss` = `train.cross_entropy` of `logits` [N, V] (f32 or bf16) and
    `targets` [N], and `grad` = `train.cross_entropy_grad` of them with the
    constant upstream gradient `scale` (the loss seed): exactly the pair it
    replaces, computed in one read of each row (llm.c's fused classifier).
    `num_classes` (default V) as for the pair: columns past it are padding,
    with gradient 0.

    `grad` is stored over `logits` (it is tied to them): the logits, and
    every `train.reshape` view of them, may not be read after this op, which
    the verifier checks. `train-fuse-cross-entropy` forms it; it has no
    gradient rule.

    Example:
    ```mlir
    %loss, %dlogits = train.cross_entropy_fused %logits, %targets scale(1.0) {num_classes = 50257 : i64} : tensor<4096x50304xbf16>, tensor<4096xi32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$logits, Train_IdTensor:$targets,
                       F64Attr:$scale,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$num_classes);
  let results = (outs Train_F32Scalar:$loss, Train_FloatTensor:$grad);
  let assemblyFormat = "$logits `,` $targets `scale` `(` $scale `)` attr-dict `:` type($logits) `,` type($targets)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Columns that take part: `num_classes`, else V.
    int64_t getEffectiveNumClasses();
  }];
}

def Train_AddLayerNormOp : Train_Op<"add_layer_norm", [Pure,
    Train_NativeBf16KernelOpInterface,
    AllTypesMatch<["lhs", "rhs", "sum", "result"]>,
    AllTypesMatch<["weight", "bias"]>]> {
  let summary = "Residual add followed by layer normalization, in one op";
  let description = [{
    `sum = lhs + rhs` (as `train.add`) and `result` = `train.layer_norm` of
    `sum` with `weight`, `bias` and `eps`: exactly the pair it replaces
    (the normalization reads `sum` as stored, rounded to its element type),
    computed in one pass over each row (llm.c's `fused_residual_forward`).
    `sum` is the residual stream, read again by the next residual add and
    by the backward. `train-fuse-layer-norm` forms it; it has no gradient
    rule.

    Example:
    ```mlir
    %sum, %y = train.add_layer_norm %x, %h, %w, %b eps(1.0e-05) : tensor<4x32x64xbf16>, tensor<64xbf16>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$lhs, Train_FloatTensor:$rhs,
                       Train_FloatTensor:$weight, Train_FloatTensor:$bias,
                       Train_PositiveF64Attr:$eps);
  let results = (outs Train_FloatTensor:$sum, Train_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs `,` $weight `,` $bias `eps` `(` $eps `)` attr-dict `:` type($lhs) `,` type($weight)";
  let hasVerifier = 1;
}

/// The [B, H, T] f32 type of the log-sum-exp of attention over [B, H, T, D].
/// (A rank-0 type, which the verifiers reject, gives tensor<f32>.)
defvar Train_AttentionLseType = [{::mlir::RankedTensorType::get(
    ::llvm::cast<::mlir::RankedTensorType>($_self).getShape().drop_back(
        ::llvm::cast<::mlir::RankedTensorType>($_self).getRank() > 0 ? 1 : 0),
    ::mlir::Float32Type::get($_self.getContext()))}];

def Train_CausalAttentionOp : Train_Op<"causal_attention", [Pure,
    DeclareOpInterfaceMethods<Train_NativeBf16KernelOpInterface,
                              ["hasNativeBf16Kernel"]>,
    DeclareOpInterfaceMethods<Train_GradientOpInterface,
                              ["buildGradient", "isDifferentiableResult"]>,
    AllTypesMatch<["query", "result"]>, AllTypesMatch<["key", "value"]>,
    AllElementTypesMatch<["query", "key"]>,
    TypesMatchWith<"lse is the [B, H, T] f32 row statistics of result",
                   "result", "lse", Train_AttentionLseType>]> {
  let summary = "Scaled dot-product attention with a causal mask";
  let description = [{
    `query` and the result are [B, H, T, D], `key` and `value` [B, Hkv, T,
    D] with Hkv dividing H: result = softmax(Q·Kᵀ/√D + M)·V with M[i][j] =
    −∞ for j > i (PyTorch `scaled_dot_product_attention(q, k, v,
    is_causal=True)`). Softmax statistics are computed in f32. D is free
    (Qwen3's head_dim 128 is not C / H).

    With Hkv < H it is grouped-query attention (Ainslie et al., arXiv
    2305.13245): query head h reads K/V head h / (H / Hkv), as Hugging
    Face's `repeat_kv` followed by SDPA computes, without materializing
    the repeated K and V (Hkv = H is multi-head attention, Hkv = 1
    multi-query).

    `lse` [B, H, T] f32 is the log-sum-exp of each row of the scaled, masked
    scores, the softmax statistics flash-attention's forward keeps for its
    backward (L in Dao, FlashAttention-2, arXiv 2307.08691, Algorithm 1):
    `train.attention_grad` reads it with the result instead of recomputing
    the forward. It carries no gradient.

    Example:
    ```mlir
    %o, %lse = train.causal_attention %q, %k, %v : tensor<4x4x32x16xf32>
    %g, %glse = train.causal_attention %q, %k2, %v2 : tensor<4x4x32x16xf32>, tensor<4x2x32x16xf32>
    ```

    (The key/value type is printed only when it differs from the query's.)
  }];
  let arguments = (ins Train_FloatTensor:$query, Train_FloatTensor:$key,
                       Train_FloatTensor:$value);
  let results = (outs Train_FloatTensor:$result, Train_F32Tensor:$lse);
  let assemblyFormat = "$query `,` $key `,` $value attr-dict `:` type($result) `` custom<KeyValueType>(type($key), ref(type($result)))";
  let extraClassDeclaration = [{
    /// The number of query heads that share one K/V head (H / Hkv).
    int64_t getGroupSize() {
      return getQuery().getType().getDimSize(1) / getKey().getType().getDimSize(1);
    }
  }];
  let hasVerifier = 1;
}

def Train_CausalAttentionPackedOp : Train_Op<"causal_attention_packed", [Pure,
    DeclareOpInterfaceMethods<Train_NativeBf16KernelOpInterface,
                              ["hasNativeBf16Kernel"]>,
    DeclareOpInterfaceMethods<Train_GradientOpInterface,
                              ["buildGradient", "isDifferentiableResult"]>,
    AllElementTypesMatch<["qkv", "result"]>]> {
  let summary = "Causal attention on the packed q/k/v projection";
  let description = [{
    `qkv` [B, T, 3 C] holds, per token, q, then k, then v, each the `heads`
    heads of D = C / heads side by side (the output of a transformer
    block's fused q/k/v projection); the result [B, T, C] holds the heads'
    outputs side by side, ready for the output projection. It computes
    `train.causal_attention` on the heads without copying them out:

    ```
    q, k, v = split(qkv, dim 2)                  // [B, T, C] each
    x → transpose(reshape(x, [B, T, H, D]), [0, 2, 1, 3])   // [B, H, T, D]
    o, lse = causal_attention(q, k, v)
    result = reshape(transpose(o, [0, 2, 1, 3]), [B, T, C])
    ```

    (nanoGPT `CausalSelfAttention.forward`; FlashAttention's qkv-packed
    interface). `lse` [B, heads, T] f32 is the softmax statistics the
    backward reads, as in `train.causal_attention`; it carries no gradient.

    Example:
    ```mlir
    %y, %lse = train.causal_attention_packed %qkv heads(2) : tensor<4x32x48xf32> -> tensor<4x32x16xf32>, tensor<4x2x32xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$qkv,
                       ConfinedAttr<I64Attr, [IntPositive]>:$heads);
  let results = (outs Train_FloatTensor:$result, Train_F32Tensor:$lse);
  let assemblyFormat = "$qkv `heads` `(` $heads `)` attr-dict `:` type($qkv) `->` type($result) `,` type($lse)";
  let hasVerifier = 1;
}

def Train_BroadcastOp : Train_Op<"broadcast", [Train_NotCompute, Pure, Differentiable]> {
  let summary = "Repeats a tensor along new leading dimensions";
  let description = [{
    `input` [trail...] → [lead..., trail...]: every leading index holds a
    copy of the input (PyTorch broadcasting of a [T, C] position table
    against [B, T, C]). Its gradient is `train.reduce_sum`.

    Example:
    ```mlir
    %p = train.broadcast %wpe : tensor<32x64xf32> -> tensor<4x32x64xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Train_ReshapeOp : Train_Op<"reshape", [Train_NotCompute, Pure, Differentiable]> {
  let summary = "Same elements, row-major, in another shape";
  let description = [{
    The element count and element type are unchanged.

    Example:
    ```mlir
    %r = train.reshape %x : tensor<4x32x64xf32> -> tensor<128x64xf32>
    ```
  }];
  let arguments = (ins Train_AnyTensor:$input);
  let results = (outs Train_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Train_TransposeOp : Train_Op<"transpose", [Train_NotCompute, Pure, Differentiable]> {
  let summary = "Permutes dimensions";
  let description = [{
    `result.shape[i] = input.shape[permutation[i]]` (PyTorch `permute`).

    Example:
    ```mlir
    %r = train.transpose %x [0, 2, 1, 3] : tensor<4x32x4x16xf32> -> tensor<4x4x32x16xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$input $permutation attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Train_SplitOp : Train_Op<"split", [Train_NotCompute, Pure, Differentiable]> {
  let summary = "Splits a tensor into consecutive pieces along one dimension";
  let description = [{
    The results, in order, tile `input` along `dim`: their sizes along
    `dim` add up to the input's, and every other dimension is unchanged
    (PyTorch `torch.split` with explicit sizes).

    Example:
    ```mlir
    %q, %k, %v = train.split %qkv dim(2) : tensor<4x32x192xf32> -> tensor<4x32x64xf32>, tensor<4x32x64xf32>, tensor<4x32x64xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, I64Attr:$dim);
  let results = (outs Variadic<Train_FloatTensor>:$results);
  let assemblyFormat = "$input `dim` `(` $dim `)` attr-dict `:` type($input) `->` type($results)";
  let hasVerifier = 1;
}

def Train_ConcatOp : Train_Op<"concat", [Train_NotCompute, Pure, Differentiable]> {
  let summary = "Joins tensors along one dimension";
  let description = [{
    The inverse of `train.split` (PyTorch `torch.cat`).

    Example:
    ```mlir
    %r = train.concat %a, %b dim(1) : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x16xf32>
    ```
  }];
  let arguments = (ins Variadic<Train_FloatTensor>:$inputs, I64Attr:$dim);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$inputs `dim` `(` $dim `)` attr-dict `:` type($inputs) `->` type($result)";
  let hasVerifier = 1;
}

def Train_CastOp : Train_Op<"cast", [Train_NotCompute, Pure, Differentiable]> {
  let summary = "Converts float elements to another float type";
  let description = [{
    Same shape; narrowing conversions round to nearest even (PyTorch
    `Tensor.to(dtype)`).

    Example:
    ```mlir
    %r = train.cast %x : tensor<4x8xf32> -> tensor<4x8xbf16>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Train_CrossEntropyOp : Train_Op<"cross_entropy", [Pure,
    DeclareOpInterfaceMethods<Train_NativeBf16KernelOpInterface,
                              ["hasNativeBf16Kernel"]>, Differentiable]> {
  let summary = "Mean softmax cross-entropy of logits against class targets";
  let description = [{
    `logits` [N, V], `targets` [N] (i32 in [0, num_classes)) → the f32
    scalar −(1/N)·Σ log softmax(logits[n])[targets[n]] (PyTorch
    `torch.nn.functional.cross_entropy`, reduction='mean'). With
    `num_classes` < V, only the first `num_classes` columns take part (the
    rest is vocabulary padding, as in llm.c); without it, all V do. Computed
    in f32.

    With `ignore_index = i`, rows whose target is i count neither in the
    sum nor in N: the mean is over the M rows with another target (PyTorch
    `cross_entropy(..., ignore_index=-100)`, the Hugging Face label
    convention for padding and prompt tokens). When every row is ignored,
    M = 0 and the loss is NaN, as in PyTorch. The mean is per call: under
    micro-batching or data parallelism with different M per micro-batch it
    is the mean of means, as with Hugging Face's default loss without
    `num_items_in_batch`.

    Example:
    ```mlir
    %l = train.cross_entropy %logits, %t : tensor<128x256xf32>, tensor<128xi32> -> tensor<f32>
    %m = train.cross_entropy %logits, %t {ignore_index = -100 : i64} : tensor<128x256xf32>, tensor<128xi32> -> tensor<f32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$logits, Train_IdTensor:$targets,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$num_classes,
                       OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Train_F32Scalar:$result);
  let assemblyFormat = "$logits `,` $targets attr-dict `:` type($logits) `,` type($targets) `->` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The number of classes that take part (V when unset).
    int64_t getEffectiveNumClasses();
  }];
}

def Train_MseOp : Train_Op<"mse", [Pure, Differentiable,
    AllTypesMatch<["input", "target"]>]> {
  let summary = "Mean squared error";
  let description = [{
    (1/n)·Σ (input − target)² over all n elements, in f32 (PyTorch
    `torch.nn.functional.mse_loss`, reduction='mean').

    Example:
    ```mlir
    %l = train.mse %y, %t : tensor<16x4xf32> -> tensor<f32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, Train_FloatTensor:$target);
  let results = (outs Train_F32Scalar:$result);
  let assemblyFormat = "$input `,` $target attr-dict `:` type($input) `->` type($result)";
}

//===----------------------------------------------------------------------===//
// Backward ops (emitted by gradient rules)
//===----------------------------------------------------------------------===//

def Train_ReduceSumOp : Train_Op<"reduce_sum", [Pure,
    Train_NativeBf16KernelOpInterface]> {
  let summary = "Sums over the leading dimensions";
  let description = [{
    `input` [lead..., trail...] → [trail...]: the sum over every leading
    dimension the result does not keep, accumulated in f32 (the gradient of
    a broadcast bias).

    Example:
    ```mlir
    %db = train.reduce_sum %dy : tensor<4x32x256xf32> -> tensor<256xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Train_EmbeddingGradOp : Train_Op<"embedding_grad", [Pure,
    DeclareOpInterfaceMethods<Train_NativeBf16KernelOpInterface,
                              ["hasNativeBf16Kernel"]>]> {
  let summary = "Gradient of an embedding table: a scatter-add";
  let description = [{
    `dtable[v] = Σ_{s : ids[s] = v} grad[s]`; rows no id selects are zero.
    `ids` has shape S, `grad` S × [C], the result [V, C]. Accumulates in
    f32.

    Example:
    ```mlir
    %dt = train.embedding_grad %ids, %dx : tensor<4x32xi32>, tensor<4x32x64xf32> -> tensor<256x64xf32>
    ```
  }];
  let arguments = (ins Train_IdTensor:$ids, Train_FloatTensor:$grad);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$ids `,` $grad attr-dict `:` type($ids) `,` type($grad) `->` type($result)";
  let hasVerifier = 1;
}

def Train_GeluGradOp : Train_Op<"gelu_grad", [Pure,
    Train_NativeBf16KernelOpInterface,
    AllTypesMatch<["input", "grad", "result"]>]> {
  let summary = "Gradient of the tanh-approximate GELU";
  let description = [{
    `result = grad · d gelu(x)/dx` at `input` = x.

    Example:
    ```mlir
    %dx = train.gelu_grad %x, %dy : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, Train_FloatTensor:$grad);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$input `,` $grad attr-dict `:` type($result)";
}

def Train_MatmulGeluGradOp : Train_Op<"matmul_gelu_grad", [Pure,
    DeclareOpInterfaceMethods<Train_NativeBf16KernelOpInterface,
                              ["hasNativeBf16Kernel"]>,
    AllTypesMatch<["pre", "result"]>]> {
  let summary = "Matrix product times the GELU derivative (a GEMM epilogue)";
  let description = [{
    The fusion of a bias-free `train.matmul` whose only use is the `grad`
    of a `train.gelu_grad`, as `train-fuse-epilogues` forms it: with
    g = op(a) · op(b) in f32 (not rounded),

    ```
    result = g · gelu'(pre)      // rounded once to the element type
    ```

    where `pre` is the GELU's input saved by the forward. Operands,
    transposes and shapes are those of `train.matmul` (without bias);
    `pre` and the result have the product's type. In f32 this is exactly
    the unfused pair; in bf16 it skips the rounding of g — cuBLASLt's
    `CUBLASLT_EPILOGUE_DGELU` (llm.c's backward `gelu_fusion`).

    Example:
    ```mlir
    %dpre = train.matmul_gelu_grad %dy, %w, %pre : tensor<4x32x64xbf16>, tensor<64x256xbf16> -> tensor<4x32x256xbf16>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$a, Train_FloatTensor:$b,
                       Train_FloatTensor:$pre,
                       UnitAttr:$transpose_a, UnitAttr:$transpose_b);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = [{
    $a `,` $b `,` $pre attr-dict `:` type($a) `,` type($b) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Train_ReluGradOp : Train_Op<"relu_grad", [Pure,
    AllTypesMatch<["input", "grad", "result"]>]> {
  let summary = "Gradient of relu";
  let description = [{
    `result = grad` where `input` > 0, else 0.

    Example:
    ```mlir
    %dx = train.relu_grad %x, %dy : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, Train_FloatTensor:$grad);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$input `,` $grad attr-dict `:` type($result)";
}

def Train_SoftmaxGradOp : Train_Op<"softmax_grad", [Pure,
    AllTypesMatch<["output", "grad", "result"]>]> {
  let summary = "Gradient of softmax, from its output";
  let description = [{
    With y = softmax(x): dx = y · (dy − Σ(dy·y)) along the last dimension.

    Example:
    ```mlir
    %dx = train.softmax_grad %y, %dy : tensor<4x10xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$output, Train_FloatTensor:$grad);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$output `,` $grad attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Train_LayerNormGradOp : Train_Op<"layer_norm_grad", [Pure,
    Train_NativeBf16KernelOpInterface,
    AllTypesMatch<["input", "grad", "input_grad"]>,
    OptionalTypesMatchWith<"addend has the input's type", "input", "addend", "$_self">,
    AllTypesMatch<["weight", "weight_grad", "bias_grad"]>]> {
  let summary = "Gradients of layer normalization";
  let description = [{
    From the input x [..., C], the weight [C] and the output gradient dy:
    dx, dweight = Σ dy·x̂ and dbias = Σ dy (sums over every leading
    dimension, in f32). Mean and 1/σ are recomputed in f32.

    With `plus %addend` (x's type), `input_grad` is `train.add` of the
    addend and dx (dx rounded to the element type first): the residual
    stream's other gradient added in the same pass, as llm.c's
    `layernorm_backward` accumulates into dresidual. `train-fuse-layer-norm`
    forms it from a `train.add` of the two.

    Example:
    ```mlir
    %dx, %dw, %db = train.layer_norm_grad %x, %w, %dy eps(1.0e-05) : tensor<4x32x64xf32>, tensor<64xf32>
    %dr, %dw2, %db2 = train.layer_norm_grad %x, %w, %dy plus %dres eps(1.0e-05) : tensor<4x32x64xf32>, tensor<64xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, Train_FloatTensor:$weight,
                       Train_FloatTensor:$grad,
                       Optional<Train_FloatTensor>:$addend,
                       Train_PositiveF64Attr:$eps);
  let results = (outs Train_FloatTensor:$input_grad,
                      Train_FloatTensor:$weight_grad,
                      Train_FloatTensor:$bias_grad);
  let assemblyFormat = "$input `,` $weight `,` $grad (`plus` $addend^)? `eps` `(` $eps `)` attr-dict `:` type($input) `,` type($weight)";
  let hasVerifier = 1;
}

def Train_AttentionGradOp : Train_Op<"attention_grad", [Pure,
    DeclareOpInterfaceMethods<Train_NativeBf16KernelOpInterface,
                              ["hasNativeBf16Kernel"]>,
    AllTypesMatch<["query", "output", "grad", "query_grad"]>,
    AllTypesMatch<["key", "value", "key_grad", "value_grad"]>,
    AllElementTypesMatch<["query", "key"]>,
    TypesMatchWith<"lse is the [B, H, T] f32 row statistics of grad",
                   "grad", "lse", Train_AttentionLseType>]> {
  let summary = "Gradients of causal attention";
  let description = [{
    From Q [B, H, T, D], K, V [B, Hkv, T, D], the forward's `output` and
    `lse` (the results of `train.causal_attention` on Q, K, V) and the
    output gradient: dQ, dK, dV. The probabilities are recomputed tile by
    tile from Q, K and `lse`, as flash-attention's backward does
    (FlashAttention-2, Algorithm 2); `output` gives the row terms
    rowsum(dO ∘ O). Under grouped-query attention (Hkv < H), dK and dV of
    a K/V head sum the contributions of its H / Hkv query heads (the
    gradient of `repeat_kv`), accumulated in f32.

    Example:
    ```mlir
    %dq, %dk, %dv = train.attention_grad %q, %k, %v, %o, %lse, %do : tensor<4x4x32x16xf32>
    %gq, %gk, %gv = train.attention_grad %q, %k2, %v2, %o, %lse, %do : tensor<4x4x32x16xf32>, tensor<4x2x32x16xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$query, Train_FloatTensor:$key,
                       Train_FloatTensor:$value, Train_FloatTensor:$output,
                       Train_F32Tensor:$lse, Train_FloatTensor:$grad);
  let results = (outs Train_FloatTensor:$query_grad, Train_FloatTensor:$key_grad,
                      Train_FloatTensor:$value_grad);
  let assemblyFormat = "$query `,` $key `,` $value `,` $output `,` $lse `,` $grad attr-dict `:` type($grad) `` custom<KeyValueType>(type($key), ref(type($grad)))";
  let hasVerifier = 1;
}

def Train_AttentionPackedGradOp : Train_Op<"attention_packed_grad", [Pure,
    DeclareOpInterfaceMethods<Train_NativeBf16KernelOpInterface,
                              ["hasNativeBf16Kernel"]>,
    AllTypesMatch<["qkv", "result"]>, AllTypesMatch<["output", "grad"]>,
    AllElementTypesMatch<["qkv", "output"]>]> {
  let summary = "Gradient of causal attention on the packed projection";
  let description = [{
    From `qkv` [B, T, 3 C], the forward's `output` [B, T, C] and `lse`
    [B, heads, T] (the results of `train.causal_attention_packed` on qkv)
    and the output gradient [B, T, C]: the gradient of qkv [B, T, 3 C], dq,
    dk and dv in qkv's layout (`train.attention_grad` on the heads, merged
    without a concat).

    Example:
    ```mlir
    %dqkv = train.attention_packed_grad %qkv, %y, %lse, %dy heads(2) : tensor<4x32x48xf32>, tensor<4x32x16xf32>, tensor<4x2x32xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$qkv, Train_FloatTensor:$output,
                       Train_F32Tensor:$lse, Train_FloatTensor:$grad,
                       ConfinedAttr<I64Attr, [IntPositive]>:$heads);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$qkv `,` $output `,` $lse `,` $grad `heads` `(` $heads `)` attr-dict `:` type($qkv) `,` type($grad) `,` type($lse)";
  let hasVerifier = 1;
}

def Train_CrossEntropyGradOp : Train_Op<"cross_entropy_grad", [Pure,
    DeclareOpInterfaceMethods<Train_NativeBf16KernelOpInterface,
                              ["hasNativeBf16Kernel"]>,
    AllTypesMatch<["logits", "result"]>]> {
  let summary = "Gradient of the mean cross-entropy with respect to the logits";
  let description = [{
    `result[n] = grad · (softmax(logits[n]) − onehot(targets[n])) / N` over
    the first `num_classes` columns; padded columns get 0. With
    `ignore_index` (as in `train.cross_entropy`), ignored rows get 0 and N
    is the count M of the others.

    Example:
    ```mlir
    %dl = train.cross_entropy_grad %logits, %t, %dloss : tensor<128x256xf32>, tensor<128xi32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$logits, Train_IdTensor:$targets,
                       Train_F32Scalar:$grad,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$num_classes,
                       OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$logits `,` $targets `,` $grad attr-dict `:` type($logits) `,` type($targets)";
  let hasVerifier = 1;
}

def Train_MseGradOp : Train_Op<"mse_grad", [Pure,
    AllTypesMatch<["input", "target", "result"]>]> {
  let summary = "Gradient of the mean squared error with respect to the input";
  let description = [{
    `result = grad · 2·(input − target)/n`; the target's gradient is its
    negation.

    Example:
    ```mlir
    %dy = train.mse_grad %y, %t, %dl : tensor<16x4xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, Train_FloatTensor:$target,
                       Train_F32Scalar:$grad);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$input `,` $target `,` $grad attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Optimizer ops
//===----------------------------------------------------------------------===//

def Train_SumSquaresOp : Train_Op<"sum_squares", [Train_NotCompute, Pure]> {
  let summary = "Σ x² over all elements, in f32";
  let description = [{
    One term of the global gradient norm.

    Example:
    ```mlir
    %s = train.sum_squares %g : tensor<256x64xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input);
  let results = (outs Train_F32Scalar:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Train_ClipCoefOp : Train_Op<"clip_coef", [Train_NotCompute, Pure]> {
  let summary = "Gradient-clipping coefficient from a sum of squares";
  let description = [{
    With g the accumulated gradient and s = `grad_scale` (1/k for k
    micro-batches): `norm` = s·√`sum_squares`, the global L2 norm of s·g,
    and `coef` = s·min(1, max_norm / (norm + 1e-6)) — the factor that turns
    the accumulated gradient into the clipped mean gradient
    (`torch.nn.utils.clip_grad_norm_`). `max_norm` ≤ 0 disables clipping
    (`coef` = s).

    Example:
    ```mlir
    %coef, %norm = train.clip_coef %ss, %s max_norm(1.0) : tensor<f32>
    ```
  }];
  let arguments = (ins Train_F32Scalar:$sum_squares, Train_F32Scalar:$grad_scale,
                       F64Attr:$max_norm);
  let results = (outs Train_F32Scalar:$coef, Train_F32Scalar:$norm);
  let assemblyFormat = "$sum_squares `,` $grad_scale `max_norm` `(` $max_norm `)` attr-dict `:` type($coef)";
}

def Train_AdamWOp : Train_Op<"adamw", [Train_NotCompute, Pure,
    AllTypesMatch<["param", "exp_avg", "exp_avg_sq",
                   "new_param", "new_exp_avg", "new_exp_avg_sq"]>]> {
  let summary = "One AdamW update of one tensor";
  let description = [{
    PyTorch `torch.optim.AdamW` (decoupled weight decay, bias correction),
    with g = `grad`·`coef`, t = `step` (≥ 1):
    ```
    p  ← p − lr·weight_decay·p
    m  ← β1·m + (1−β1)·g
    v  ← β2·v + (1−β2)·g²
    p  ← p − lr · (m / (1−β1ᵗ)) / (√(v / (1−β2ᵗ)) + eps)
    ```
    `param`, `exp_avg`, `exp_avg_sq` are f32 (the master weights under
    mixed precision); `grad` has the parameter's shape in any float type.
    With `skip_nonfinite(%x)`, a non-finite `%x` (the gradient norm after an
    fp16 overflow) makes the results equal the inputs: the step is skipped,
    as torch.cuda.amp.GradScaler.step does.

    Example:
    ```mlir
    %p2, %m2, %v2 = train.adamw %p, %g, %m, %v, %lr, %t, %coef beta1(0.9) beta2(0.95) eps(1.0e-08) weight_decay(0.1) : tensor<64x64xf32>, tensor<64x64xbf16>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$param, Train_FloatTensor:$grad,
                       Train_FloatTensor:$exp_avg, Train_FloatTensor:$exp_avg_sq,
                       Train_F32Scalar:$lr, Train_I64Scalar:$step,
                       Train_F32Scalar:$coef,
                       Optional<Train_F32Scalar>:$finite_check,
                       F64Attr:$beta1, F64Attr:$beta2, F64Attr:$eps,
                       F64Attr:$weight_decay);
  let results = (outs Train_FloatTensor:$new_param, Train_FloatTensor:$new_exp_avg,
                      Train_FloatTensor:$new_exp_avg_sq);
  let assemblyFormat = [{
    $param `,` $grad `,` $exp_avg `,` $exp_avg_sq `,` $lr `,` $step `,` $coef
    (`skip_nonfinite` `(` $finite_check^ `)`)?
    `beta1` `(` $beta1 `)` `beta2` `(` $beta2 `)` `eps` `(` $eps `)`
    `weight_decay` `(` $weight_decay `)` attr-dict `:` type($param) `,` type($grad)
  }];
  let hasVerifier = 1;
}

include "Train/TrainDecoderOps.td"

#endif // ZERO_TRAIN_OPS_TD
