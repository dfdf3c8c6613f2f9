//===- ZeroOps.td - zero dialect operations ------------------*- tablegen -*-===//

#ifndef ZERO_ZERO_OPS_TD
#define ZERO_ZERO_OPS_TD

include "Zero/ZeroDialect.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/CommonAttrConstraints.td"
include "Train/TrainInterfaces.td"

def Zero_Tensor : StaticShapeTensorOf<[F32, BF16, F16]>;
def Zero_FlatTensor : 1DTensorOf<[F32, BF16, F16]>;

/// Collectives order against each other through Zero_CommResource.
defvar Zero_CollectiveEffects = MemoryEffects<[MemRead<Zero_CommResource>,
                                               MemWrite<Zero_CommResource>]>;

def Zero_AllGatherOp : Zero_Op<"all_gather", [Zero_CollectiveEffects]> {
  let summary = "Gathers every rank's shard into the full flat tensor";
  let description = [{
    Each of the `world_size` ranks contributes its flat shard of `n`
    elements; every rank receives the concatenation in rank order, `n ×
    world_size` elements (rank r's shard at offset r·n). Sends
    n·(N−1) elements per rank with the ring algorithm.

    The ranks are those of mesh axis `axis` (`#zero.mesh`): `data`, the
    default and not printed, or `tensor`; `world_size` is that axis's size.

    Example:
    ```mlir
    %full = zero.all_gather %shard world_size(4) : tensor<8xbf16> -> tensor<32xbf16>
    ```
  }];
  let arguments = (ins Zero_FlatTensor:$shard, ConfinedAttr<I64Attr, [IntPositive]>:$world_size,
                       DefaultValuedAttr<Zero_MeshAxisAttr, "::mlir::zero::MeshAxis::data">:$axis);
  let results = (outs Zero_FlatTensor:$result);
  let assemblyFormat = [{
    $shard `world_size` `(` $world_size `)` (`axis` `(` $axis^ `)`)? attr-dict `:` type($shard) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Zero_ReduceScatterOp : Zero_Op<"reduce_scatter", [Zero_CollectiveEffects]> {
  let summary = "Reduces the full flat tensor over ranks; each keeps its shard";
  let description = [{
    Every rank contributes a flat tensor of `n × world_size` elements; the
    element-wise reduction (`sum` or `avg`) over ranks is computed and rank r
    receives elements [r·n, (r+1)·n). Sends n·(N−1) elements per rank with
    the ring algorithm. Reductions of `bf16`/`f16` data accumulate in `f32`.

    The ranks are those of mesh axis `axis` (`#zero.mesh`): `data`, the
    default and not printed, or `tensor`; `world_size` is that axis's size.

    Example:
    ```mlir
    %g = zero.reduce_scatter %full kind(<avg>) world_size(4) : tensor<32xf32> -> tensor<8xf32>
    ```
  }];
  let arguments = (ins Zero_FlatTensor:$input, Zero_ReduceKindAttr:$kind,
                       ConfinedAttr<I64Attr, [IntPositive]>:$world_size,
                       DefaultValuedAttr<Zero_MeshAxisAttr, "::mlir::zero::MeshAxis::data">:$axis);
  let results = (outs Zero_FlatTensor:$result);
  let assemblyFormat = [{
    $input `kind` `(` $kind `)` `world_size` `(` $world_size `)` (`axis` `(` $axis^ `)`)? attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Zero_AllReduceOp : Zero_Op<"all_reduce", [Zero_CollectiveEffects,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "Element-wise reduction over ranks, result on every rank";
  let description = [{
    Every rank contributes a tensor of one shape; every rank receives the
    element-wise `sum`, `avg` or `max` over ranks. Sends 2·S·(N−1)/N
    elements per rank for a tensor of S elements (ring all-reduce).

    The ranks are those of mesh axis `axis` (`#zero.mesh`): `data`, the
    default and not printed, or `tensor`; `world_size` is that axis's size.

    Example:
    ```mlir
    %n = zero.all_reduce %sq kind(<sum>) world_size(4) : tensor<f32>
    ```
  }];
  let arguments = (ins Zero_Tensor:$input, Zero_ReduceKindAttr:$kind,
                       ConfinedAttr<I64Attr, [IntPositive]>:$world_size,
                       DefaultValuedAttr<Zero_MeshAxisAttr, "::mlir::zero::MeshAxis::data">:$axis);
  let results = (outs Zero_Tensor:$result);
  let assemblyFormat = [{
    $input `kind` `(` $kind `)` `world_size` `(` $world_size `)` (`axis` `(` $axis^ `)`)? attr-dict `:` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Split collectives (zero-prefetch)
//===----------------------------------------------------------------------===//

def Zero_AllGatherStartOp : Zero_Op<"all_gather_start", [Zero_CollectiveEffects]> {
  let summary = "Issues an all-gather; zero.wait yields its result";
  let description = [{
    The first half of `zero.all_gather`: the collective starts here and runs
    while the ops up to its `zero.wait` compute (nonblocking MPI or a NCCL
    stream). Same size rule as `zero.all_gather`.

    The ranks are those of mesh axis `axis` (`#zero.mesh`): `data`, the
    default and not printed, or `tensor`; `world_size` is that axis's size.

    Example:
    ```mlir
    %p = zero.all_gather_start %shard world_size(4) : tensor<8xbf16> -> !zero.pending<tensor<32xbf16>>
    ```
  }];
  let arguments = (ins Zero_FlatTensor:$shard, ConfinedAttr<I64Attr, [IntPositive]>:$world_size,
                       DefaultValuedAttr<Zero_MeshAxisAttr, "::mlir::zero::MeshAxis::data">:$axis);
  let results = (outs Zero_PendingType:$pending);
  let assemblyFormat = [{
    $shard `world_size` `(` $world_size `)` (`axis` `(` $axis^ `)`)? attr-dict `:` type($shard) `->` qualified(type($pending))
  }];
  let hasVerifier = 1;
}

def Zero_ReduceScatterStartOp : Zero_Op<"reduce_scatter_start", [Zero_CollectiveEffects]> {
  let summary = "Issues a reduce-scatter; zero.wait yields the rank's shard";
  let description = [{
    The first half of `zero.reduce_scatter`. Same size rule.

    The ranks are those of mesh axis `axis` (`#zero.mesh`): `data`, the
    default and not printed, or `tensor`; `world_size` is that axis's size.

    Example:
    ```mlir
    %p = zero.reduce_scatter_start %full kind(<avg>) world_size(4) : tensor<32xf32> -> !zero.pending<tensor<8xf32>>
    ```
  }];
  let arguments = (ins Zero_FlatTensor:$input, Zero_ReduceKindAttr:$kind,
                       ConfinedAttr<I64Attr, [IntPositive]>:$world_size,
                       DefaultValuedAttr<Zero_MeshAxisAttr, "::mlir::zero::MeshAxis::data">:$axis);
  let results = (outs Zero_PendingType:$pending);
  let assemblyFormat = [{
    $input `kind` `(` $kind `)` `world_size` `(` $world_size `)` (`axis` `(` $axis^ `)`)? attr-dict `:` type($input) `->` qualified(type($pending))
  }];
  let hasVerifier = 1;
}

def Zero_AllReduceStartOp : Zero_Op<"all_reduce_start", [Zero_CollectiveEffects]> {
  let summary = "Issues an all-reduce; zero.wait yields its result";
  let description = [{
    The first half of `zero.all_reduce`.

    The ranks are those of mesh axis `axis` (`#zero.mesh`): `data`, the
    default and not printed, or `tensor`; `world_size` is that axis's size.

    Example:
    ```mlir
    %p = zero.all_reduce_start %x kind(<sum>) world_size(4) : tensor<f32> -> !zero.pending<tensor<f32>>
    ```
  }];
  let arguments = (ins Zero_Tensor:$input, Zero_ReduceKindAttr:$kind,
                       ConfinedAttr<I64Attr, [IntPositive]>:$world_size,
                       DefaultValuedAttr<Zero_MeshAxisAttr, "::mlir::zero::MeshAxis::data">:$axis);
  let results = (outs Zero_PendingType:$pending);
  let assemblyFormat = [{
    $input `kind` `(` $kind `)` `world_size` `(` $world_size `)` (`axis` `(` $axis^ `)`)? attr-dict `:` type($input) `->` qualified(type($pending))
  }];
  let hasVerifier = 1;
}

def Zero_WaitOp : Zero_Op<"wait", [Zero_CollectiveEffects,
    TypesMatchWith<"result is the pending collective's result", "pending",
                   "result", "::llvm::cast<PendingType>($_self).getResult()">]> {
  let summary = "Waits for a collective started by zero.*_start";
  let description = [{
    Blocks until the collective of `pending` has finished and yields its
    result. The time spent here is exposed communication.

    Example:
    ```mlir
    %full = zero.wait %p : !zero.pending<tensor<32xbf16>>
    ```
  }];
  let arguments = (ins Zero_PendingType:$pending);
  let results = (outs Zero_Tensor:$result);
  let assemblyFormat = "$pending attr-dict `:` qualified(type($pending))";
  let hasVerifier = 1;
}

def Zero_ProgressOp : Zero_Op<"progress", [Zero_CollectiveEffects]> {
  let summary = "Moves this rank's in-flight nonblocking collectives forward";
  let description = [{
    Lets the communication library advance the collectives started by
    `zero.*_start` and not yet waited for (`zrt_comm_progress`): MPI moves a
    nonblocking collective forward only inside MPI calls, so without it the
    transfer would mostly happen in `zero.wait`, exposed, instead of behind
    the compute between the start and the wait. NCCL progresses on its own
    stream, where the call costs nothing. `zero-place-progress` puts one
    after each compute op (Train/NotCompute.h) while a collective is in
    flight; it has no operands or results, and nothing else reorders
    around it (it reads and writes the communication resource, like the
    collectives).

    Example:
    ```mlir
    %p = zero.all_gather_start %s world_size(2) : tensor<4xf32> -> !zero.pending<tensor<8xf32>>
    %y = train.scale %x, 2.0 : tensor<4xf32>
    zero.progress
    %w = zero.wait %p : !zero.pending<tensor<8xf32>>
    ```
  }];
  let assemblyFormat = "attr-dict";
}

//===----------------------------------------------------------------------===//
// Buckets (zero-bucket)
//===----------------------------------------------------------------------===//

def Zero_BucketInterleaveOp : Zero_Op<"bucket_interleave", [Pure]> {
  let summary = "Lays several groups' flat buffers out rank by rank";
  let description = [{
    Inputs are the flat buffers of k shard groups (each `world_size` × Sᵢ
    elements). The result holds, for each rank r in order, the
    concatenation of every group's slice r: [g₁ᵣ, g₂ᵣ, …, gₖᵣ]. A
    reduce-scatter of it gives rank r exactly its shards of all k groups,
    back to back — one collective for the bucket (ZeRO-R's constant-size
    buffers, §6.3; DeepSpeed's `reduce_bucket_size`).

    Example:
    ```mlir
    %b = zero.bucket_interleave %g1, %g2 world_size(2) : tensor<8xf32>, tensor<4xf32> -> tensor<12xf32>
    ```
  }];
  let arguments = (ins Variadic<Zero_FlatTensor>:$inputs,
                       ConfinedAttr<I64Attr, [IntPositive]>:$world_size);
  let results = (outs Zero_FlatTensor:$result);
  let assemblyFormat = "$inputs `world_size` `(` $world_size `)` attr-dict `:` type($inputs) `->` type($result)";
  let hasVerifier = 1;
}

def Zero_BucketDeinterleaveOp : Zero_Op<"bucket_deinterleave", [Pure]> {
  let summary = "Splits a gathered bucket back into the groups' flat buffers";
  let description = [{
    The inverse of `zero.bucket_interleave`: the input holds, rank by rank,
    [g₁ᵣ, …, gₖᵣ] (what an all-gather of the concatenated shards returns);
    each result is one group's flat buffer.

    Example:
    ```mlir
    %g1, %g2 = zero.bucket_deinterleave %b world_size(2) : tensor<12xf32> -> tensor<8xf32>, tensor<4xf32>
    ```
  }];
  let arguments = (ins Zero_FlatTensor:$input,
                       ConfinedAttr<I64Attr, [IntPositive]>:$world_size);
  let results = (outs Variadic<Zero_FlatTensor>:$results);
  let assemblyFormat = "$input `world_size` `(` $world_size `)` attr-dict `:` type($input) `->` type($results)";
  let hasVerifier = 1;
}

def Zero_ConcatOp : Zero_Op<"concat", [Pure]> {
  let summary = "Concatenates flat tensors";
  let description = [{
    Example:
    ```mlir
    %s = zero.concat %a, %b : tensor<4xf32>, tensor<2xf32> -> tensor<6xf32>
    ```
  }];
  let arguments = (ins Variadic<Zero_FlatTensor>:$inputs);
  let results = (outs Zero_FlatTensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` type($inputs) `->` type($result)";
  let hasVerifier = 1;
}

def Zero_SplitOp : Zero_Op<"split", [Pure]> {
  let summary = "Splits a flat tensor into consecutive pieces";
  let description = [{
    Example:
    ```mlir
    %a, %b = zero.split %s : tensor<6xf32> -> tensor<4xf32>, tensor<2xf32>
    ```
  }];
  let arguments = (ins Zero_FlatTensor:$input);
  let results = (outs Variadic<Zero_FlatTensor>:$results);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Partition layout and sharded state
//===----------------------------------------------------------------------===//

def Zero_GroupOp : Zero_Op<"group", [Symbol,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "A flat shard group: the partition layout of some parameters";
  let description = [{
    The parameters `members` are laid out one after another, flattened
    row-major, in one flat buffer of `padded` elements: member i occupies
    elements [offsets[i], offsets[i] + numel(member i)); the tail up to
    `padded` is zero padding. `padded` is the smallest multiple of
    `world_size` ≥ the members' total, so rank r owns the one contiguous
    slice [r·S, (r+1)·S) with S = padded / world_size (ZeRO §5; PyTorch
    FSDP's FlatParameter). `decay[i]` says whether member i takes weight
    decay. Every collective on the group moves the whole flat buffer; the
    runtime and checkpoints read this layout rather than re-derive it.

    Example:
    ```mlir
    zero.group @h0 world_size(4) members [@h0.w, @h0.b] offsets [0, 4096] decay [true, false] padded(4160)
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       ConfinedAttr<I64Attr, [IntPositive]>:$world_size,
                       FlatSymbolRefArrayAttr:$members,
                       DenseI64ArrayAttr:$offsets,
                       DenseBoolArrayAttr:$decay,
                       I64Attr:$padded);
  let assemblyFormat = [{
    $sym_name `world_size` `(` $world_size `)` `members` $members `offsets` $offsets
    `decay` $decay `padded` `(` $padded `)` attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Elements each rank owns: padded / world_size.
    int64_t getShardSize() { return getPadded() / getWorldSize(); }
  }];
}

def Zero_ShardOp : Zero_Op<"shard", [Symbol,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "This rank's slice of one kind of state of a shard group";
  let description = [{
    A flat tensor of S = padded / world_size elements of group `group`: the
    rank's slice of its parameters (stage 3), gradients (stages 2–3), f32
    master weights or AdamW moments (stages 1–3). Master weights start as
    the rank's slice of the parameters; everything else starts at zero.

    Example:
    ```mlir
    zero.shard @h0.exp_avg : tensor<1040xf32> kind(<exp_avg>) of(@h0)
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<Zero_FlatTensor>:$type,
                       Zero_ShardKindAttr:$kind,
                       FlatSymbolRefAttr:$group);
  let assemblyFormat = [{
    $sym_name `:` $type `kind` `(` $kind `)` `of` `(` $group `)` attr-dict
  }];
  let extraClassDeclaration = [{
    /// The shard's flat tensor type.
    ::mlir::RankedTensorType getTensorType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getType());
    }
  }];
}

def Zero_ShardLoadOp : Zero_Op<"shard_load", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    MemoryEffects<[MemRead<Zero_ShardResource>]>]> {
  let summary = "Reads a shard";
  let description = [{
    Example:
    ```mlir
    %s = zero.shard_load @h0.param : tensor<1040xbf16>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$name);
  let results = (outs Zero_FlatTensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
}

def Zero_ShardStoreOp : Zero_Op<"shard_store", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    MemoryEffects<[MemWrite<Zero_ShardResource>]>]> {
  let summary = "Overwrites a shard";
  let description = [{
    Example:
    ```mlir
    zero.shard_store %m, @h0.exp_avg : tensor<1040xf32>
    ```
  }];
  let arguments = (ins Zero_FlatTensor:$value, FlatSymbolRefAttr:$name);
  let assemblyFormat = "$value `,` $name attr-dict `:` type($value)";
}

def Zero_ShardAccumulateOp : Zero_Op<"shard_accumulate", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    MemoryEffects<[MemRead<Zero_ShardResource>, MemWrite<Zero_ShardResource>]>]> {
  let summary = "Adds into a shard (gradient accumulation, stages 2–3)";
  let description = [{
    `name += value`, summed in f32.

    Example:
    ```mlir
    zero.shard_accumulate %g, @h0.grad : tensor<1040xbf16>
    ```
  }];
  let arguments = (ins Zero_FlatTensor:$value, FlatSymbolRefAttr:$name);
  let assemblyFormat = "$value `,` $name attr-dict `:` type($value)";
}

def Zero_PackOp : Zero_Op<"pack", [Pure,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Lays the members of a group out in its flat buffer";
  let description = [{
    One operand per member of `group`, in order, each of the member's
    shape; the result is the group's flat buffer of `padded` elements with
    zero padding.

    Example:
    ```mlir
    %flat = zero.pack @h0 (%w, %b) : tensor<64x64xf32>, tensor<64xf32> -> tensor<4160xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$group, Variadic<StaticShapeTensorOf<[F32, BF16, F16]>>:$members);
  let results = (outs Zero_FlatTensor:$result);
  let assemblyFormat = "$group `(` $members `)` attr-dict `:` type($members) `->` type($result)";
}

def Zero_UnpackOp : Zero_Op<"unpack", [Pure,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Views the members of a group in its flat buffer";
  let description = [{
    The inverse of `zero.pack`: one result per member, padding dropped.

    Example:
    ```mlir
    %w, %b = zero.unpack @h0 %flat : tensor<4160xf32> -> tensor<64x64xf32>, tensor<64xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$group, Zero_FlatTensor:$flat);
  let results = (outs Variadic<StaticShapeTensorOf<[F32, BF16, F16]>>:$members);
  let assemblyFormat = "$group $flat attr-dict `:` type($flat) `->` type($members)";
}

def Zero_LocalShardOp : Zero_Op<"local_shard", [Pure]> {
  let summary = "This rank's slice of a flat buffer, with no communication";
  let description = [{
    Elements [r·n, (r+1)·n) of the input of n × world_size elements, r this
    rank's index on mesh axis `axis` (`#zero.mesh`): `data`, the default
    and not printed, or `tensor`; `world_size` is that axis's size. The
    result is a copy, so the input may die while the slice lives on
    (`train-checkpoint`'s `partition=tensor` keeps a block-input checkpoint
    this way, ZeRO-R's P_a; `zero-partition` takes the data rank's master
    weights so).

    Example:
    ```mlir
    %s = zero.local_shard %flat world_size(4) : tensor<4160xf32> -> tensor<1040xf32>
    %t = zero.local_shard %act world_size(2) axis(<tensor>) : tensor<256xf32> -> tensor<128xf32>
    ```
  }];
  let arguments = (ins Zero_FlatTensor:$input, ConfinedAttr<I64Attr, [IntPositive]>:$world_size,
                       DefaultValuedAttr<Zero_MeshAxisAttr, "::mlir::zero::MeshAxis::data">:$axis);
  let results = (outs Zero_FlatTensor:$result);
  let assemblyFormat = [{
    $input `world_size` `(` $world_size `)` (`axis` `(` $axis^ `)`)? attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Zero_F32Scalar : 0DTensorOf<[F32]>,
    BuildableType<"::mlir::RankedTensorType::get({}, $_builder.getF32Type())">;
def Zero_I64Scalar : 0DTensorOf<[I64]>,
    BuildableType<"::mlir::RankedTensorType::get({}, $_builder.getI64Type())">;

def Zero_ShardAdamWOp : Zero_Op<"shard_adamw", [Pure,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    AllTypesMatch<["param", "exp_avg", "exp_avg_sq",
                   "new_param", "new_exp_avg", "new_exp_avg_sq"]>]> {
  let summary = "AdamW on this rank's slice of a shard group";
  let description = [{
    `train.adamw` element-wise over the rank's slice of `group`, with weight
    decay `weight_decay` on the elements of members whose `decay` flag is
    set and none elsewhere (padding included: it stays zero);
    `skip_nonfinite` as for `train.adamw`. `param`,
    `exp_avg`, `exp_avg_sq` are f32 shards; `grad` is the gradient shard.

    Example:
    ```mlir
    %p2, %m2, %v2 = zero.shard_adamw @h0 %p, %g, %m, %v, %lr, %t, %coef beta1(0.9) beta2(0.95) eps(1.0e-08) weight_decay(0.1) : tensor<1040xf32>, tensor<1040xbf16>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$group,
                       Zero_FlatTensor:$param, Zero_FlatTensor:$grad,
                       Zero_FlatTensor:$exp_avg, Zero_FlatTensor:$exp_avg_sq,
                       Zero_F32Scalar:$lr, Zero_I64Scalar:$step,
                       Zero_F32Scalar:$coef,
                       Optional<Zero_F32Scalar>:$finite_check,
                       F64Attr:$beta1, F64Attr:$beta2, F64Attr:$eps,
                       F64Attr:$weight_decay);
  let results = (outs Zero_FlatTensor:$new_param, Zero_FlatTensor:$new_exp_avg,
                      Zero_FlatTensor:$new_exp_avg_sq);
  let assemblyFormat = [{
    $group $param `,` $grad `,` $exp_avg `,` $exp_avg_sq `,` $lr `,` $step `,` $coef
    (`skip_nonfinite` `(` $finite_check^ `)`)?
    `beta1` `(` $beta1 `)` `beta2` `(` $beta2 `)` `eps` `(` $eps `)`
    `weight_decay` `(` $weight_decay `)` attr-dict `:` type($param) `,` type($grad)
  }];
}

//===----------------------------------------------------------------------===//
// Tensor parallelism (Megatron's conjugate pair f and g)
//===----------------------------------------------------------------------===//

def Zero_TensorParallelF : Zero_Op<"tp_f", [Pure,
    AllTypesMatch<["input", "result"]>,
    DeclareOpInterfaceMethods<Train_GradientOpInterface>]> {
  let summary = "Megatron's f: identity forward, all-reduce backward";
  let description = [{
    Enters a tensor-parallel region (Shoeybi et al., arXiv 1909.08053,
    §3, "f"): the result is the input, unchanged, on each of the `size`
    ranks of the tensor axis. Its gradient is the sum of the result's
    gradients over the tensor axis (`zero.all_reduce kind(<sum>)
    axis(<tensor>)`), since every tensor rank's column-parallel branch
    consumes the same replicated input. Sends nothing forward.

    Example:
    ```mlir
    %xr = zero.tp_f %x size(2) : tensor<4x8x64xf32>
    ```
  }];
  let arguments = (ins Zero_Tensor:$input,
                       ConfinedAttr<I64Attr, [IntPositive]>:$size);
  let results = (outs Zero_Tensor:$result);
  let assemblyFormat = "$input `size` `(` $size `)` attr-dict `:` type($result)";
}

def Zero_TensorParallelG : Zero_Op<"tp_g", [Zero_CollectiveEffects,
    AllTypesMatch<["input", "result"]>,
    DeclareOpInterfaceMethods<Train_GradientOpInterface>]> {
  let summary = "Megatron's g: all-reduce forward, identity backward";
  let description = [{
    Leaves a tensor-parallel region (Shoeybi et al., §3, "g"): the result is
    the element-wise sum of the input over the `size` ranks of the tensor
    axis (the partial sums of a row-parallel matmul), the same on each. Its
    gradient is the result's gradient, unchanged: every tensor rank's
    partial product contributed with weight one. Sends 2·S·(size−1)/size
    elements per rank for S elements (ring all-reduce), like
    `zero.all_reduce`.

    Example:
    ```mlir
    %y = zero.tp_g %partial size(2) : tensor<4x8x64xf32>
    ```
  }];
  let arguments = (ins Zero_Tensor:$input,
                       ConfinedAttr<I64Attr, [IntPositive]>:$size);
  let results = (outs Zero_Tensor:$result);
  let assemblyFormat = "$input `size` `(` $size `)` attr-dict `:` type($result)";
}

include "Zero/ZeroVocabParallelOps.td"
include "Zero/ZeroSequenceParallelOps.td"
include "Zero/ZeroOffloadOps.td"

#endif // ZERO_ZERO_OPS_TD
