//===- ZeroVocabParallelOps.td - vocabulary-parallel ops ------*- tablegen -*-===//
//
// Megatron-LM's vocabulary-parallel embedding and cross-entropy (Shoeybi et
// al., arXiv 1909.08053, §3, "we parallelize the input embedding weight
// matrix E along the vocabulary dimension"; Megatron
// `tensor_parallel/layers.py` VocabParallelEmbedding and
// `tensor_parallel/cross_entropy.py` _VocabParallelCrossEntropy): the table
// and the LM head's weight are cut by rows over the M ranks of the tensor
// axis, tensor rank t holding vocabulary rows [t·Vl, (t+1)·Vl) of the
// padded vocabulary Vl·M, and the loss is computed from per-row
// statistics reduced over the tensor axis instead of gathered logits. The
// reductions are explicit `zero.all_reduce` / `zero.tp_g` ops between
// these; `zero-vocab-parallel` forms them. Included by ZeroOps.td;
// verifiers and gradient rules in ZeroVocabParallel.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_ZERO_VOCAB_PARALLEL_OPS_TD
#define ZERO_ZERO_VOCAB_PARALLEL_OPS_TD

/// A compute op (Train/NotCompute.h): a runtime kernel in f32, its bf16
/// tensors widened around it by train-legalize-bf16 (explicit train.cast).
def Zero_Compute : NativeOpTrait<"Compute">;

def Zero_IdTensor : StaticShapeTensorOf<[I32]>;
def Zero_F32Tensor : StaticShapeTensorOf<[F32]>;

def Zero_VocabEmbeddingOp : Zero_Op<"vocab_embedding", [Pure, Zero_Compute,
    DeclareOpInterfaceMethods<Train_GradientOpInterface, ["buildGradient"]>]> {
  let summary = "This tensor rank's part of an embedding lookup over a vocabulary cut";
  let description = [{
    `table` [Vl, C] is rows [t·Vl, (t+1)·Vl) of the whole [Vl·size, C]
    table on tensor rank t (of `size`); `ids` (any shape S, values in
    [0, Vl·size)) select rows of the whole table. The result S × [C] holds
    the selected row where this rank has it and zeros elsewhere, so that
    `zero.tp_g` (the sum over the tensor axis) of it is
    `train.embedding` of the whole table (Megatron's VocabParallelEmbedding:
    masked ids, zeroed rows, all-reduce). An id outside [0, Vl·size) is a
    runtime error. The table's gradient is `zero.vocab_embedding_grad`.

    Example:
    ```mlir
    %part = zero.vocab_embedding %wte, %ids size(2) : tensor<128x64xf32>, tensor<4x32xi32> -> tensor<4x32x64xf32>
    %x = zero.tp_g %part size(2) : tensor<4x32x64xf32>
    ```
  }];
  let arguments = (ins Zero_Tensor:$table, Zero_IdTensor:$ids,
                       ConfinedAttr<I64Attr, [IntPositive]>:$size);
  let results = (outs Zero_Tensor:$result);
  let assemblyFormat = "$table `,` $ids `size` `(` $size `)` attr-dict `:` type($table) `,` type($ids) `->` type($result)";
  let hasVerifier = 1;
}

def Zero_VocabEmbeddingGradOp : Zero_Op<"vocab_embedding_grad", [Pure, Zero_Compute]> {
  let summary = "Gradient of this tensor rank's rows of a cut embedding table";
  let description = [{
    `dtable[v] = Σ_{s : ids[s] = t·Vl + v} grad[s]` for the Vl rows of
    tensor rank t: a scatter-add of the positions whose id falls in this
    rank's rows (the others are another rank's); rows no id selects are
    zero. `ids` has shape S, `grad` S × [C], the result [Vl, C].
    Accumulates in f32 in the order of the positions, as
    `train.embedding_grad` does.

    Example:
    ```mlir
    %dt = zero.vocab_embedding_grad %ids, %dx size(2) : tensor<4x32xi32>, tensor<4x32x64xf32> -> tensor<128x64xf32>
    ```
  }];
  let arguments = (ins Zero_IdTensor:$ids, Zero_Tensor:$grad,
                       ConfinedAttr<I64Attr, [IntPositive]>:$size);
  let results = (outs Zero_Tensor:$result);
  let assemblyFormat = "$ids `,` $grad `size` `(` $size `)` attr-dict `:` type($ids) `,` type($grad) `->` type($result)";
  let hasVerifier = 1;
}

def Zero_VocabMaxOp : Zero_Op<"vocab_max", [Pure, Zero_Compute]> {
  let summary = "Row maxima of this tensor rank's logit columns";
  let description = [{
    `logits` [N, Vl] are columns [t·Vl, (t+1)·Vl) of the whole [N, Vl·size]
    logits on tensor rank t. The result [N] (f32) is each row's maximum over
    this rank's columns that are classes (whole column < `num_classes`; the
    rest is vocabulary padding), or −FLT_MAX when the rank has none. A
    `zero.all_reduce kind(<max>) axis(<tensor>)` of it is the row maximum
    of the whole logits, the shift of the parallel softmax. It carries no
    gradient (the loss does not depend on the shift).

    Example:
    ```mlir
    %m = zero.vocab_max %logits size(2) {num_classes = 200 : i64} : tensor<128x128xf32> -> tensor<128xf32>
    ```
  }];
  let arguments = (ins Zero_Tensor:$logits,
                       ConfinedAttr<I64Attr, [IntPositive]>:$size,
                       ConfinedAttr<I64Attr, [IntPositive]>:$num_classes);
  let results = (outs Zero_F32Tensor:$result);
  let assemblyFormat = "$logits `size` `(` $size `)` attr-dict `:` type($logits) `->` type($result)";
  let hasVerifier = 1;
}

def Zero_VocabExpSumsOp : Zero_Op<"vocab_exp_sums", [Pure, Zero_Compute,
    DeclareOpInterfaceMethods<Train_GradientOpInterface,
                              ["buildGradient", "isDifferentiableOperand"]>]> {
  let summary = "This tensor rank's softmax denominators and target logits";
  let description = [{
    For `logits` [N, Vl] (this rank's columns, as in `zero.vocab_max`),
    `targets` [N] (whole class ids) and the whole row maxima `max` [N]:
    `result[n, 0] = Σ_j exp(logits[n, j] − max[n])` over this rank's class
    columns, and `result[n, 1] = logits[n, targets[n] − t·Vl]` when this
    rank holds the target's column, else 0 (f32, [N, 2]). `zero.tp_g` of it
    gives the whole softmax denominators and target logits (Megatron
    all-reduces `sum_exp_logits` and `predicted_logits` the same way).
    Targets outside this rank's columns (other ranks', `ignore_index`) only
    contribute 0. Differentiable in `logits` only; the gradient is
    `zero.vocab_exp_sums_grad`.

    Example:
    ```mlir
    %s = zero.vocab_exp_sums %logits, %t, %gm size(2) {num_classes = 200 : i64} : tensor<128x128xf32>, tensor<128xi32>, tensor<128xf32> -> tensor<128x2xf32>
    ```
  }];
  let arguments = (ins Zero_Tensor:$logits, Zero_IdTensor:$targets,
                       Zero_F32Tensor:$max,
                       ConfinedAttr<I64Attr, [IntPositive]>:$size,
                       ConfinedAttr<I64Attr, [IntPositive]>:$num_classes);
  let results = (outs Zero_F32Tensor:$result);
  let assemblyFormat = "$logits `,` $targets `,` $max `size` `(` $size `)` attr-dict `:` type($logits) `,` type($targets) `,` type($max) `->` type($result)";
  let hasVerifier = 1;
}

def Zero_VocabExpSumsGradOp : Zero_Op<"vocab_exp_sums_grad", [Pure, Zero_Compute,
    AllTypesMatch<["logits", "result"]>]> {
  let summary = "Gradient of zero.vocab_exp_sums with respect to the logits";
  let description = [{
    `result[n, j] = grad[n, 0] · exp(logits[n, j] − max[n]) + grad[n, 1] ·
    [t·Vl + j = targets[n]]` over this rank's class columns, 0 on padding
    columns (`logits` [N, Vl], `grad` [N, 2] f32). With the gradient of
    `zero.vocab_loss` this is Megatron's `softmax − onehot` scaled by the
    loss's gradient over the rows counted; no communication.

    Example:
    ```mlir
    %dl = zero.vocab_exp_sums_grad %logits, %t, %gm, %ds size(2) {num_classes = 200 : i64} : tensor<128x128xf32>, tensor<128xi32>, tensor<128xf32>, tensor<128x2xf32>
    ```
  }];
  let arguments = (ins Zero_Tensor:$logits, Zero_IdTensor:$targets,
                       Zero_F32Tensor:$max, Zero_F32Tensor:$grad,
                       ConfinedAttr<I64Attr, [IntPositive]>:$size,
                       ConfinedAttr<I64Attr, [IntPositive]>:$num_classes);
  let results = (outs Zero_Tensor:$result);
  let assemblyFormat = "$logits `,` $targets `,` $max `,` $grad `size` `(` $size `)` attr-dict `:` type($logits) `,` type($targets) `,` type($max) `,` type($grad)";
  let hasVerifier = 1;
}

def Zero_VocabLossOp : Zero_Op<"vocab_loss", [Pure, Zero_Compute,
    DeclareOpInterfaceMethods<Train_GradientOpInterface,
                              ["buildGradient", "isDifferentiableOperand"]>]> {
  let summary = "Mean cross-entropy from the whole softmax denominators and target logits";
  let description = [{
    `sums` [N, 2] (the tensor axis's sum of `zero.vocab_exp_sums`: the
    denominator S_n and the target logit z_n), `max` [N] (the whole row
    maxima m_n) and `targets` [N] → the f32 scalar
    (1/N') Σ_n (log S_n + m_n − z_n), the same value as `train.cross_entropy`
    of the whole logits. With `ignore_index = i`, rows whose target is i
    count neither in the sum nor in N' (as in `train.cross_entropy`);
    otherwise N' = N. A target outside [0, `num_classes`) (and not ignored)
    is a runtime error. Differentiable in `sums` only; the gradient is
    `zero.vocab_loss_grad`.

    Example:
    ```mlir
    %l = zero.vocab_loss %sums, %gm, %t {num_classes = 200 : i64} : tensor<128x2xf32>, tensor<128xf32>, tensor<128xi32> -> tensor<f32>
    ```
  }];
  let arguments = (ins Zero_F32Tensor:$sums, Zero_F32Tensor:$max,
                       Zero_IdTensor:$targets,
                       ConfinedAttr<I64Attr, [IntPositive]>:$num_classes,
                       OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Zero_F32Scalar:$result);
  let assemblyFormat = "$sums `,` $max `,` $targets attr-dict `:` type($sums) `,` type($max) `,` type($targets) `->` type($result)";
  let hasVerifier = 1;
}

def Zero_VocabLossGradOp : Zero_Op<"vocab_loss_grad", [Pure, Zero_Compute,
    AllTypesMatch<["sums", "result"]>]> {
  let summary = "Gradient of zero.vocab_loss with respect to its sums";
  let description = [{
    `result[n, 0] = grad / (N' · S_n)` and `result[n, 1] = −grad / N'` for
    the rows counted, 0 for ignored ones (`sums` [N, 2], N' as in
    `zero.vocab_loss`).

    Example:
    ```mlir
    %ds = zero.vocab_loss_grad %sums, %t, %dloss : tensor<128x2xf32>, tensor<128xi32>
    ```
  }];
  let arguments = (ins Zero_F32Tensor:$sums, Zero_IdTensor:$targets,
                       Zero_F32Scalar:$grad,
                       OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Zero_F32Tensor:$result);
  let assemblyFormat = "$sums `,` $targets `,` $grad attr-dict `:` type($sums) `,` type($targets)";
  let hasVerifier = 1;
}

#endif // ZERO_ZERO_VOCAB_PARALLEL_OPS_TD
