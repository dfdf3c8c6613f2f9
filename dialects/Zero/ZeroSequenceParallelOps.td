//===- ZeroSequenceParallelOps.td - sequence-parallel ops ----*- tablegen -*-===//
//
// Megatron-LM's sequence parallelism (Korthikanti et al., "Reducing
// Activation Recomputation in Large Transformer Models", arXiv 2205.05198,
// §4.2.2; Megatron `tensor_parallel/mappings.py`
// scatter_to_sequence_parallel_region, gather_from_sequence_parallel_region,
// reduce_scatter_to_sequence_parallel_region): between the tensor-parallel
// regions, the token rows of the activations are cut over the M ranks of
// the tensor axis, so norms and residual adds run on 1/M of the rows and
// each region's g (all-reduce) becomes a reduce-scatter and its f an
// all-gather. A token tensor [B, T, C...] is seen as B·T rows of C...
// elements; tensor rank t holds rows [t·R, (t+1)·R), R = B·T / M, as a
// [R, C...] tensor (contiguous in Zero's row-major [B, T, C] layout; for
// B = 1 exactly Megatron's cut of the sequence). `zero-sequence-parallel`
// forms them. Included by ZeroOps.td; verifiers and gradient rules in
// ZeroSequenceParallel.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_ZERO_SEQUENCE_PARALLEL_OPS_TD
#define ZERO_ZERO_SEQUENCE_PARALLEL_OPS_TD

def Zero_SequenceSplitOp : Zero_Op<"sp_split", [Pure,
    DeclareOpInterfaceMethods<Train_GradientOpInterface>]> {
  let summary = "This tensor rank's token rows of a replicated tensor";
  let description = [{
    `input` [B, T, C...] holds the same value on each of the `size` ranks
    of the tensor axis; the result [R, C...] is its rows [t·R, (t+1)·R) of
    the B·T token rows on tensor rank t, R = B·T / size (Megatron's
    scatter_to_sequence_parallel_region). Sends nothing. Its gradient is the
    all-gather of the result's gradient over the tensor axis
    (`zero.sp_gather`): every rank then holds the whole input gradient.

    Example:
    ```mlir
    %s = zero.sp_split %x size(2) : tensor<4x32x64xf32> -> tensor<64x64xf32>
    ```
  }];
  let arguments = (ins Zero_Tensor:$input,
                       ConfinedAttr<I64Attr, [IntPositive]>:$size);
  let results = (outs Zero_Tensor:$result);
  let assemblyFormat = "$input `size` `(` $size `)` attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Zero_SequenceGatherOp : Zero_Op<"sp_gather", [Zero_CollectiveEffects,
    DeclareOpInterfaceMethods<Train_GradientOpInterface>]> {
  let summary = "All-gather of the token rows over the tensor axis";
  let description = [{
    Each of the `size` tensor ranks holds its R token rows [R, C...]; every
    rank receives all B·T = R·size rows in rank order as `result` [B, T,
    C...] (Megatron's gather_from_sequence_parallel_region). Sends
    R·C·(size−1) elements per rank (ring all-gather).

    The gradient depends on who reads the result. By default the readers
    are a tensor-parallel region (column-parallel matmuls, where f stood),
    each rank's result gradient is a partial sum, and the gradient is their
    reduce-scatter (`zero.sp_scatter`). With `slice_grad` the readers are
    replicated (the LM head of a whole vocabulary, the loss): every rank's
    result gradient is the same whole tensor, and the gradient is this
    rank's rows of it (`zero.sp_split`).

    Example:
    ```mlir
    %x = zero.sp_gather %s size(2) : tensor<64x64xf32> -> tensor<4x32x64xf32>
    %h = zero.sp_gather %s size(2) {slice_grad} : tensor<64x64xf32> -> tensor<4x32x64xf32>
    ```
  }];
  let arguments = (ins Zero_Tensor:$input,
                       ConfinedAttr<I64Attr, [IntPositive]>:$size,
                       UnitAttr:$slice_grad);
  let results = (outs Zero_Tensor:$result);
  let assemblyFormat = "$input `size` `(` $size `)` attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Zero_SequenceScatterOp : Zero_Op<"sp_scatter", [Zero_CollectiveEffects,
    DeclareOpInterfaceMethods<Train_GradientOpInterface>]> {
  let summary = "Reduce-scatter of partial sums into token rows over the tensor axis";
  let description = [{
    Each of the `size` tensor ranks holds a partial sum [B, T, C...] (a
    row-parallel matmul's output, where g stood); tensor rank t receives
    rows [t·R, (t+1)·R) of their element-wise sum as `result` [R, C...],
    R = B·T / size (Megatron's reduce_scatter_to_sequence_parallel_region).
    Sends R·C·(size−1) elements per rank (ring reduce-scatter), half of
    g's all-reduce. 16-bit data is reduced in f32. Its gradient is the
    all-gather of the result's gradient (`zero.sp_gather`): each rank's
    partial contributed with weight one.

    Example:
    ```mlir
    %s = zero.sp_scatter %partial size(2) : tensor<4x32x64xf32> -> tensor<64x64xf32>
    ```
  }];
  let arguments = (ins Zero_Tensor:$input,
                       ConfinedAttr<I64Attr, [IntPositive]>:$size);
  let results = (outs Zero_Tensor:$result);
  let assemblyFormat = "$input `size` `(` $size `)` attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

#endif // ZERO_ZERO_SEQUENCE_PARALLEL_OPS_TD
