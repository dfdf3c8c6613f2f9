//===- ZeroPasses.td - ZeRO sharding passes -------------------*- tablegen -*-===//

#ifndef ZERO_TRANSFORMS_ZEROPASSES_TD
#define ZERO_TRANSFORMS_ZEROPASSES_TD

include "mlir/Pass/PassBase.td"

def ZeroPartition : Pass<"zero-partition", "::mlir::ModuleOp"> {
  let summary = "ZeRO-DP stages 0-3: shard model states over data-parallel ranks";
  let description = [{
    Partitions a complete training step (after `train-autodiff` and
    `train-optimizer`) over `world-size` data-parallel ranks, as ZeRO-DP
    (Rajbhandari et al., arXiv 1910.02054, §5):

    * stage 0 (plain DP): every gradient is all-reduced (avg) once per
      optimizer step; every rank keeps everything (16Ψ bytes).
    * stage 1 (P_os): master weights and moments become 1/N shards; the
      gradients are reduce-scattered once per optimizer step, each rank
      updates its slice, the parameters are all-gathered (4Ψ + 12Ψ/N).
    * stage 2 (P_os+g): also the gradients: each group is reduce-scattered
      in the backward pass as soon as its gradients are complete and
      accumulated into the rank's gradient shard, every micro-batch
      (2Ψ + 14Ψ/N).
    * stage 3 (P_os+g+p): also the parameters: each group is all-gathered
      before its forward use and again before its backward use (16Ψ/N).

    Trainable parameters are laid out in flat shard groups (`zero.group`):
    with `grouping=block`, one per block (parameters whose name starts with
    the same `<word><number>.` prefix, e.g. `h3.`) plus one for all the rest
    (embeddings, final norm); with `grouping=param`, one per parameter. Each
    group is padded to a multiple of N with zeros, which never change a
    result: padding gradients are zero, so they add nothing to norms, and
    padded elements take no weight decay. Frozen parameters stay whole on
    every rank. The global gradient norm is the sum of each rank's shard
    sums, one scalar all-reduce: identical to the unsharded value.

    `stage=auto` picks the lowest stage whose per-rank model states plus an
    activation estimate (bytes of forward values the backward reads, per
    micro-batch) fit in `device-memory` bytes, and fails with the number
    stage 3 would need when nothing fits.

    Sets the module attributes `zero.stage` and `zero.world_size`.
  }];
  let dependentDialects = ["::mlir::train::TrainDialect",
                           "::mlir::zero::ZeroDialect",
                           "::mlir::func::FuncDialect"];
  let options = [
    Option<"stage", "stage", "std::string", /*default=*/"\"0\"",
           "ZeRO stage: 0, 1, 2, 3 or auto">,
    Option<"worldSize", "world-size", "int64_t", /*default=*/"1",
           "Number of data-parallel ranks N (>= 1)">,
    Option<"deviceMemory", "device-memory", "int64_t", /*default=*/"0",
           "Bytes per rank available to stage=auto">,
    Option<"grouping", "grouping", "std::string", /*default=*/"\"block\"",
           "Shard groups: block (one per <word><n>. prefix, plus the rest) or "
           "param (one per parameter)">,
    Option<"persistThreshold", "persist-threshold", "int64_t",
           /*default=*/"0",
           "At stage 3, parameters of at most this many elements stay whole "
           "on every rank, in their own group partitioned as at stage 2 "
           "(DeepSpeed's stage3_param_persistence_threshold; 0 = none)">
  ];
  let statistics = [
    Statistic<"numGroups", "groups", "Shard groups">,
    Statistic<"numCollectives", "collectives", "Collectives inserted">,
    Statistic<"numPadding", "padding-elements", "Padding elements over all groups">
  ];
}

def ZeroTensorParallel : Pass<"zero-tensor-parallel", "::mlir::ModuleOp"> {
  let summary = "Megatron tensor parallelism over the mesh's tensor axis";
  let description = [{
    Cuts the forward graph (before `train-autodiff`) over the `size` = M
    ranks of the tensor axis, as Megatron-LM (Shoeybi et al., arXiv
    1909.08053, §3) does for a transformer:

    * MLP — `train.matmul` (weight [F, C], bias [F]) → `train.gelu` →
      `train.matmul` (weight [C, F], bias [C]): the first is
      column-parallel (each tensor rank keeps rows [t·F/M, (t+1)·F/M) of
      the weight and that slice of the bias), the GELU local, the second
      row-parallel (columns [t·F/M, (t+1)·F/M) of its weight) without its
      bias; `zero.tp_g` sums the partial products over the tensor axis and
      the bias is added once, after it.
    * Attention — `train.matmul` (packed q/k/v weight [3C, C], bias [3C])
      → `train.causal_attention_packed heads(H)` → `train.matmul`
      (weight [C, C]): q, k and v column-parallel by heads (tensor rank t
      keeps heads [t·H/M, (t+1)·H/M) of each of the three blocks),
      attention on its H/M heads, the output projection row-parallel with
      `zero.tp_g`, its bias added after it.
    * Llama / Qwen MLP — `gate` and `up` projections (weights [F, C]) →
      `train.swiglu` → `down` (weight [C, F]): gate and up column-parallel
      (one `zero.tp_f` before both), SwiGLU on F/M columns, down
      row-parallel with `zero.tp_g` (torchtitan's llama3 plan).
    * Llama / Qwen attention — the q, k and v projections (weights [H·D,
      C], [H_kv·D, C]) reach `train.causal_attention` through reshape to
      heads, Qwen3's QK-norm (`train.rms_norm` over D), `train.rope` and
      `train.transpose`; its result reaches the output projection through
      transpose and reshape. q, k and v are column-parallel by heads (rank t
      keeps query heads [t·H/M, (t+1)·H/M) and key/value heads [t·H_kv/M,
      (t+1)·H_kv/M), so grouped-query attention maps local query heads to
      local key/value heads), every value on those paths loses M-fold on
      its head dimension, the output projection is row-parallel. A QK-norm
      weight stays whole but goes through `zero.tp_f`: each rank normalizes
      only its heads, so its gradient is summed over the tensor axis.
      Key/value heads are not replicated: H_kv must divide by M.

    Each region's input goes through `zero.tp_f` (identity forward; its
    gradient is the all-reduce over the tensor axis). Cut parameters are
    declared with their per-rank shape and `zero.tensor_split`; everything
    else (embeddings, norms, the LM head, the row-parallel biases) stays
    whole on every tensor rank. The module gets `zero.mesh = #zero.mesh<data
    = N/M, tensor = M>` (data = 0 without `world-size`); `zero-partition`
    then shards model states over the data axis within each tensor slice.
    `size=1` only sets the mesh.

    Errors (one message each, with the numbers): `size` < 1, `size` not
    dividing `world-size`, a head count (query or key/value) or FFN width
    not divisible by `size`, no region to cut at `size` > 1, a path from a
    projection to the attention that does not keep the heads on one
    dimension, a cut parameter used outside these patterns, a module already
    differentiated or partitioned, a module with a mesh already.
  }];
  let dependentDialects = ["::mlir::train::TrainDialect",
                           "::mlir::zero::ZeroDialect",
                           "::mlir::func::FuncDialect"];
  let options = [
    Option<"size", "size", "int64_t", /*default=*/"1",
           "Tensor-parallel size M (ranks of the tensor axis, >= 1)">,
    Option<"worldSize", "world-size", "int64_t", /*default=*/"0",
           "Total ranks N = N_d x M when known (0: unknown; checked later)">
  ];
  let statistics = [
    Statistic<"numMlp", "mlp-regions", "MLP regions cut">,
    Statistic<"numAttention", "attention-regions", "Attention regions cut">,
    Statistic<"numCutParams", "cut-params", "Parameters cut over the tensor axis">
  ];
}

def ZeroVocabParallel : Pass<"zero-vocab-parallel", "::mlir::ModuleOp"> {
  let summary = "Megatron's vocabulary-parallel embedding, LM head and cross-entropy";
  let description = [{
    Cuts the token embedding tables and the LM head's weight by vocabulary
    rows over the M ranks of the module's tensor axis (`zero.mesh`, made by
    `zero-tensor-parallel`), on the forward graph before `train-autodiff`
    (Shoeybi et al., arXiv 1909.08053, §3; Megatron
    `VocabParallelEmbedding` and `vocab_parallel_cross_entropy`). Tensor
    rank t keeps rows [t·V/M, (t+1)·V/M) of each [V, C] table:

    * `train.embedding` of a cut table becomes `zero.vocab_embedding`
      (this rank's rows, zeros for ids it does not hold) followed by
      `zero.tp_g` (the sum over the tensor axis).
    * The LM head `train.matmul %x, %w {transpose_b}` of a cut weight reads
      `zero.tp_f %x` and produces this rank's V/M logit columns.
    * `train.cross_entropy` of those logits (through `train.reshape`)
      becomes the parallel cross-entropy: `zero.vocab_max`, its
      `zero.all_reduce kind(<max>) axis(<tensor>)`, `zero.vocab_exp_sums`,
      `zero.tp_g` of the [N, 2] denominators and target logits, and
      `zero.vocab_loss` — 3 floats per row on the tensor axis instead of
      the V/M·(M−1) of gathered logits. Its gradient needs no communication.
    * Logits a function returns (`@logits`, for sampling) are gathered
      whole over the tensor axis (`zero.all_gather` and a transpose).

    GPT-2's and Qwen3's tied table is one parameter cut once; Llama's
    separate embedding and head weights are both cut. Cut parameters get
    `zero.tensor_split` on dimension 0, so checkpoints, `--export` and
    `--import` re-cut them like the others.

    Errors (one message each, with the numbers): no tensor axis of M ≥ 2
    on the module, a module already differentiated, no embedding or LM head
    to cut, a vocabulary not divisible by M, a cut weight used by anything
    else, the head's logits used other than by the loss or a return.
  }];
  let dependentDialects = ["::mlir::train::TrainDialect",
                           "::mlir::zero::ZeroDialect",
                           "::mlir::func::FuncDialect"];
  let statistics = [
    Statistic<"numEmbeddings", "embeddings", "Embeddings cut over the vocabulary">,
    Statistic<"numHeads", "heads", "LM heads cut over the vocabulary">,
    Statistic<"numLosses", "losses", "Cross-entropies made vocabulary-parallel">,
    Statistic<"numCutParams", "cut-params", "Parameters cut by vocabulary rows">
  ];
}

def ZeroSequenceParallel : Pass<"zero-sequence-parallel", "::mlir::ModuleOp"> {
  let summary = "Megatron's sequence parallelism: token rows cut over the tensor axis between the regions";
  let description = [{
    Korthikanti et al., "Reducing Activation Recomputation in Large
    Transformer Models" (arXiv 2205.05198, §4.2.2): outside the
    tensor-parallel regions, the norms and residual adds of a transformer
    run replicated on every tensor rank; this pass cuts their token rows
    over the M ranks of the module's tensor axis (`zero.mesh`, from
    `zero-tensor-parallel`), on @forward before `train-autodiff`. A token
    activation [B, T, C] is B·T rows; tensor rank t keeps rows [t·R,
    (t+1)·R), R = B·T/M (contiguous in Zero's [B, T, C] layout; for B = 1
    Megatron's sequence cut).

    * Every `zero.tp_g` of [B, T, C] partial sums becomes `zero.sp_scatter`
      (reduce-scatter into this rank's rows; its gradient an all-gather).
    * The row region: layer norms, RMS norms and residual adds of [B, T, C]
      reached from those, or leading to a region's `zero.tp_f`, through
      such ops. They run on [R, C]; the weights they read (norm weights and
      biases) go through `zero.tp_f`, so their gradients, partial per rank,
      are summed over the tensor axis (Megatron's rule for replicated
      parameters under sequence parallelism). A bias broadcast they read is
      rebuilt on the rows, its bias through `zero.tp_f`.
    * A `zero.tp_f` reading the rows becomes `zero.sp_gather`
      (all-gather; its gradient the reduce-scatter of the region's partial
      gradients). Another reader (the LM head of a whole vocabulary)
      reads `zero.sp_gather {slice_grad}`: gathered whole, its gradient
      this rank's rows of the replicated gradient.
    * A replicated value the region reads (the embeddings' sum) is cut by
      `zero.sp_split` (its gradient an all-gather).

    Each region then costs a reduce-scatter forward and an all-gather
    backward at its end and the converse at its start: the bytes of g's and
    f's all-reduces, while the rows between keep 1/M of the activations.
    @logits (sampling) is left as zero-tensor-parallel made it.

    Errors (one message each, with the numbers): no tensor axis of M >= 2,
    a module already differentiated, no @forward, no [B, T] token-id
    argument, a sequence length T not divisible by M, no tensor-parallel
    region.
  }];
  let dependentDialects = ["::mlir::train::TrainDialect",
                           "::mlir::zero::ZeroDialect",
                           "::mlir::func::FuncDialect"];
  let statistics = [
    Statistic<"numScatters", "scatters", "zero.tp_g made zero.sp_scatter">,
    Statistic<"numGathers", "gathers", "zero.sp_gather made">,
    Statistic<"numSplits", "splits", "zero.sp_split made">,
    Statistic<"numRowOps", "row-ops", "Norms and adds moved onto token rows">
  ];
}

def ZeroSequenceRegather : Pass<"zero-sequence-regather", "::mlir::ModuleOp"> {
  let summary = "Sequence parallelism: all-gather the token rows again in the backward instead of keeping them whole";
  let description = [{
    After `train-autodiff` (and `train-checkpoint`) on a module that
    `zero-sequence-parallel` cut: a `zero.sp_gather` of the forward whose
    result [B, T, C] the backward reads (the input of a column-parallel
    matmul, for its weight gradient; the LM head's input) is cloned right
    before its first reader after the loss seed, and the backward's readers
    take the clone. The forward's gathered activation then dies in the
    forward and only this rank's [B·T/M, C] rows live across the loss:
    M-fold less for those activations, for one more all-gather of the rows
    per region per micro-batch on the tensor axis (Korthikanti et al.,
    arXiv 2205.05198, §4.2.2, which repeats that all-gather in the
    backward for the same reason). Values the backward does not read are
    left alone; a module without sequence-parallel ops is unchanged.

    Errors: no step function, a step function without a backward.
  }];
  let dependentDialects = ["::mlir::zero::ZeroDialect"];
  let options = [
    Option<"stepFunction", "step-function", "std::string",
           /*default=*/"\"forward_backward\"",
           "The differentiated step function">
  ];
  let statistics = [
    Statistic<"numRegathered", "regathered", "zero.sp_gather issued again in the backward">
  ];
}

def ZeroReport : Pass<"zero-report", "::mlir::ModuleOp"> {
  let summary = "Per-rank memory and communication of a training step";
  let description = [{
    Prints, for the step as partitioned, the bytes one rank keeps for
    parameters, gradients, master weights, moments and padding, and the
    bytes it sends per optimizer step for each collective kind, with the
    paper's Ψ units beside them (ZeRO §5, Figure 1). With `micro-batches`
    = k, forward_backward traffic counts k times (stages 2-3 reduce every
    micro-batch; stages 0-1 once per step). The IR is unchanged.

    On a module with a `#zero.mesh` (zero-tensor-parallel), the states are
    those of one rank of the N_d × N_m mesh — a tensor-cut parameter
    (`zero.tensor_split`) holds 1/M of the tensor, and zero-partition
    shards it and the rest over N_d — with Ψ the whole model's parameters
    (cut ones at full size) and the bytes of cut parameters' states on a
    line of their own; the traffic is also given per mesh axis: the data
    axis's reduce-scatters, all-gathers and all-reduces over N_d, and the
    tensor axis's all-reduces over M, split into the forward (`zero.tp_g`),
    the backward (`zero.tp_f`'s gradient) and the optimizer step (the cut
    parameters' norm). The JSON has the same numbers (`mesh`,
    `num_model_params`, `cut_state_bytes`, `comm_bytes_*_by_axis`,
    `tensor_comm_bytes_per_micro_batch`).

    With `svg=FILE` on a step that is not partitioned yet, it partitions
    copies at stages 0-3 for `svg-world-size` ranks and draws their per-rank
    model states side by side, by category (ZeRO Figure 1). Under a mesh,
    `svg-world-size` must be a multiple of M (and N_d · M when the mesh
    fixes N_d).
  }];
  let options = [
    Option<"microBatches", "micro-batches", "int64_t", /*default=*/"1",
           "Micro-batches per optimizer step (gradient accumulation)">,
    Option<"jsonFile", "json", "std::string", /*default=*/"\"\"",
           "Also write the report as JSON to this file ('-' = stdout)">,
    Option<"quiet", "quiet", "bool", /*default=*/"false",
           "Do not print the table">,
    Option<"svgFile", "svg", "std::string", /*default=*/"\"\"",
           "Write an SVG chart of per-rank model states for stages 0-3 side "
           "by side (the paper's Figure 1 for this model); needs the step "
           "before zero-partition">,
    Option<"svgWorldSize", "svg-world-size", "int64_t", /*default=*/"64",
           "World size N of the SVG chart (N_d x M under a #zero.mesh: a "
           "multiple of M)">
  ];
  // The planned arenas are those of a copy laid out by zero-layout-states.
  let dependentDialects = ["::mlir::zero::ZeroDialect"];
}

def ZeroBucket : Pass<"zero-bucket", "::mlir::ModuleOp"> {
  let summary = "Fuse the collectives of several shard groups into constant-size buckets";
  let description = [{
    Packs consecutive collectives of one kind (all-gather, reduce-scatter;
    same element type, reduction and world size) of different shard groups
    into one collective on a bucket of at most `bucket-bytes` bytes (ZeRO-R
    constant-size buffers, §6.3; DeepSpeed's `reduce_bucket_size` /
    `stage3_prefetch_bucket_size`, XLA's collective combiners), so the
    number of latency-bound collectives shrinks while the staging buffer
    stays the same size whatever the model size. Packing follows program
    order, which is the same on every rank; a group larger than the bucket
    goes alone. Only data-axis collectives are packed: one on the tensor
    axis (`axis(<tensor>)`, e.g. a P_a checkpoint gather of
    `train-checkpoint`) is left as it is and ends the bucket before it.

    A reduce-scatter bucket interleaves its groups rank by rank
    (`zero.bucket_interleave`), so rank r receives its shards of every group
    back to back and `zero.split` separates them; an all-gather bucket
    concatenates the shards (`zero.concat`) and `zero.bucket_deinterleave`
    rebuilds each group's flat buffer. A reduce-scatter bucket is issued
    where its last group is complete; an all-gather bucket of loaded shards
    (stage 3's parameter gathers) where its first group is needed (its shard
    loads move up with it), one of computed shards (the optimizer step's
    updated parameters at stages 1-2) where its last shard is computed,
    the earlier members' unpacks and stores moving down to it — never past
    an op that touches a state one of them writes (then the bucket is not
    formed). Run it after `zero-partition` and before `zero-prefetch`.
  }];
  let dependentDialects = ["::mlir::zero::ZeroDialect"];
  let options = [
    Option<"bucketBytes", "bucket-bytes", "int64_t", /*default=*/"26214400",
           "Largest bucket in bytes (default 25 MiB, like PyTorch DDP's "
           "bucket_cap_mb); must be > 0">
  ];
  let statistics = [
    Statistic<"numBuckets", "buckets", "Fused collectives created">
  ];
}

def ZeroPrefetch : Pass<"zero-prefetch", "::mlir::ModuleOp"> {
  let summary = "Split collectives into start/wait and schedule them to overlap compute";
  let description = [{
    Replaces every blocking collective by a `zero.*_start` and a
    `zero.wait`, then moves them apart so the communication runs behind
    compute (DeepSpeed's stage-3 prefetch, XLA's latency-hiding scheduler):

    * all-gathers: the wait stays right before the first use; the start
      (with the `zero.shard_load` feeding it) is hoisted up to `distance`
      all-gathers ahead — in program order, so forward gathers prefetch in
      layer order and backward gathers in reverse layer order — but never so
      far that the gathered parameter buffers live at one time exceed
      `max-live-bytes` (a buffer is live from its start to the last use of
      the parameters unpacked from it; DeepSpeed's
      `stage3_max_live_parameters`). A gather larger than the budget on its
      own is not hoisted. The gather of a P_a checkpoint slice
      (`train-checkpoint` `partition=tensor`) that the backward reads
      starts after the loss seed, never in the forward. A split collective
      keeps its mesh axis.
    * reduce-scatters and all-reduces: the start stays where the input is
      complete; the wait sinks to the first use of the result, and a result
      only accumulated into a shard is accumulated at the end of the
      function, so the reduction overlaps the rest of the backward.

    Every function has one block and no control flow, so the order of
    collectives is static and the same on every rank; the pass checks it
    (each start waited exactly once, later in the same block).
  }];
  let dependentDialects = ["::mlir::zero::ZeroDialect"];
  let options = [
    Option<"distance", "distance", "int64_t", /*default=*/"1",
           "How many all-gathers a start may be hoisted ahead (0 = none)">,
    Option<"maxLiveBytes", "max-live-bytes", "int64_t", /*default=*/"0",
           "Bound on gathered parameter bytes live at once (0 = unbounded)">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark per function with its gathers, how many were "
           "hoisted, and the peak of live gathered bytes">
  ];
  let statistics = [
    Statistic<"numSplit", "collectives-split", "Collectives split into start/wait">,
    Statistic<"numHoisted", "gathers-hoisted", "All-gather starts moved ahead of an earlier wait">,
    Statistic<"peakLiveBytes", "peak-live-bytes", "Most gathered parameter bytes live at once in one function">
  ];
}

def ZeroPlaceProgress : Pass<"zero-place-progress", "::mlir::ModuleOp"> {
  let summary = "Put zero.progress after the compute that overlaps an in-flight collective";
  let description = [{
    MPI moves a nonblocking collective forward only inside MPI calls: a
    `zero.*_start` issued ahead of compute (zero-prefetch) would otherwise
    transfer mostly in its `zero.wait`, exposed. In every function, while at
    least one collective is in flight (after a `zero.all_gather_start`,
    `zero.reduce_scatter_start` or `zero.all_reduce_start`, before its
    `zero.wait`), this pass puts a `zero.progress` (`zrt_comm_progress`)
    after every `interval`-th compute op (a `train` op without the
    NotCompute trait: Train/NotCompute.h), so the transfer advances behind
    the compute. None is placed outside that window, and none after an op
    already followed by one: the pass is idempotent. It runs after the
    passes that move collectives (zero-bucket, zero-prefetch);
    zero-training-pipeline and `zero-translate --emit-cpp` run it.

    Example (`interval=1`):
    ```mlir
    %p = zero.all_gather_start %s world_size(2) : tensor<4xf32> -> !zero.pending<tensor<8xf32>>
    %y = train.scale %x, 2.0 : tensor<4xf32>
    zero.progress
    %w = zero.wait %p : !zero.pending<tensor<8xf32>>
    ```
  }];
  let dependentDialects = ["::mlir::zero::ZeroDialect"];
  let options = [
    Option<"interval", "interval", "int64_t", /*default=*/"1",
           "A zero.progress after every this many compute ops while a "
           "collective is in flight (0: none)">
  ];
  let statistics = [
    Statistic<"numProgress", "progress-placed", "zero.progress ops placed">
  ];
}

def ZeroFuseStateRuns : Pass<"zero-fuse-state-runs", "::mlir::ModuleOp"> {
  let summary = "Zero runs of adjacent states with one call";
  let description = [{
    Zeroing the gradients after the update is one `train.fill 0` computed
    in each gradient state. Where `zero-layout-states` put those states
    back to back in their arena (each 64-byte aligned; the gaps belong to no
    state), one call can zero the whole range — PyTorch's `zero_grad` over a
    flat gradient buffer; GPT-2 at stage 0: 148 calls become 1. This pass
    marks the fills of each such run with `zero.state_run = <id>` (an i64,
    one id per run and function, verified on a `train.fill` of 0, a
    `train.adamw`, a `train.sum_squares` or a `train.add`); the plan
    and the lowering follow the marks (one `zrt_fill` over the run's bytes
    at the last fill of the run, the other fills print nothing) and reject a
    marked group that is not a run.

    A run is two or more zero fills, each computed in its state (its only
    use is the store, with no access of the state in between), of states
    with one element type that lie back to back in one arena, with no
    other read or write of a state between its own fill and the run's last
    fill (the zeroing moves there).

    Likewise multi-tensor AdamW (PyTorch's fused AdamW, DeepSpeed's flat
    optimizer buffers; GPT-2 at stage 0: 148 calls become 1): consecutive
    `train.adamw` ops, each updating its states in place, whose parameter
    or master weights, gradient, moments and fused bf16 copy (the
    `zero.written_by_adamw` marks: run `train-fuse-adamw-cast` first) each
    start where the previous op's end, with the same step, learning rate,
    clip coefficient and hyperparameters (weight decay W or 0 per tensor),
    and no other access of a member's states between the run's first op and
    its own, are marked as one run: one `zrt_shard_adamw` call at the first,
    bit-identical per element. And the gradient norm of @optimizer_step:
    a chain `add(...add(x, sum_squares(a))..., sum_squares(z))` over
    gradients back to back in one arena, none written between its own sum
    and the chain's last add, is marked (its sums and adds) as one sum of
    squares over the whole range at the last add (in double, as each call
    sums; the more accurate f32 result).

    Needs the state layout (`zero-layout-states`; the pipeline runs it
    right after); functions whose buffers are assigned already, or whose
    fills are marked already, are left as they are.
  }];
  let dependentDialects = ["::mlir::zero::ZeroDialect"];
  let statistics = [
    Statistic<"numFillRuns", "fill-runs", "Runs of zero fills marked">,
    Statistic<"numFills", "fills", "Zero fills in marked runs">,
    Statistic<"numAdamWRuns", "adamw-runs", "Runs of AdamW updates marked">,
    Statistic<"numAdamW", "adamw-updates", "AdamW updates in marked runs">,
    Statistic<"numSumSquaresRuns", "sum-squares-runs", "Gradient-norm chains marked">
  ];
}

def ZeroLayoutStates : Pass<"zero-layout-states", "::mlir::ModuleOp"> {
  let summary = "Places every model state in its arena (#zero.slot)";
  let description = [{
    Decides where each model state lives in the compiled program's state
    arenas (parameters, gradients, master weights, moments; zrt_mem_kind)
    and records it in the IR, so that convert-train-to-emitc only reads it:

    * `zero.slot = #zero.slot<arena, offset, bytes>` on every state with
      storage (`train.param` without `zero.sharded`, `train.state`,
      `zero.shard`), 64-byte aligned (`ZRT_ARENA_ALIGNMENT`);
    * `zero.param_span` / `zero.grad_span` on a `zero.group` whose members'
      parameters (gradient states) lie back to back in member order: the
      group's flat buffer (`padded` elements) is then that range of the
      arena, which pack/unpack and an in-place all-reduce use without a
      copy (FSDP's flat parameter, DeepSpeed's contiguous gradients);
    * `zero.slot = #zero.slot<constants, offset, bytes>` on every program
      constant (`train.rope_table`: a table computed once at
      initialization, not per step); equal tables (same attributes and
      type, e.g. in the forward and the logits functions) share one slot;
    * `zero.state_arena_bytes = {parameters, gradients, master_weights,
      moments}` on the module: each arena's size, and `constants` when the
      program has any.

    The layout, in each arena: first the parameters and the gradient states
    of each group's members in the group's order, each group followed by
    its padding (`padded` minus the members' elements, reserved and zero),
    then the other states in declaration order; the moments arena holds all
    first moments before all second moments, so that each kind lies back to
    back as the parameters, gradients and master weights do (one
    multi-tensor AdamW over the range). A group whose members are not all
    placed this way (a member without storage, a gradient state missing)
    gets no span.

    The attributes are verified where they sit (the right arena for the
    state's kind, aligned, large enough; on the module: inside the arenas,
    no two states sharing a byte, spans over their members). Rerunning the
    pass recomputes the same layout. Run it after the last pass that adds
    or removes states (zero-partition, zero-bucket) and before
    zero-buffer-assign; zero-training-pipeline and zero-compile do.

    Example (two parameters of one group, with their gradients):
    ```mlir
    zero.group @g world_size(1) members [@a, @b] offsets [0, 16] decay [true, true] padded(20)
        {zero.param_span = #zero.slot<parameters, 0, 80>, zero.grad_span = #zero.slot<gradients, 0, 80>}
    train.param @a : tensor<16xf32> init(<zeros>) trainable {zero.slot = #zero.slot<parameters, 0, 64>}
    ```
  }];
  let dependentDialects = ["::mlir::zero::ZeroDialect"];
  let statistics = [
    Statistic<"numPlaced", "states-placed", "States given a slot">,
    Statistic<"numSpans", "group-spans", "Group spans recorded (parameters and gradients)">,
    Statistic<"stateBytes", "state-bytes", "Bytes of the four state arenas together">,
    Statistic<"numConstants", "constants-placed", "Distinct program constants given a slot">
  ];
}

def ZeroOffloadCheckpoints : Pass<"zero-offload-checkpoints", "::mlir::ModuleOp"> {
  let summary = "P_a+cpu: P_a's checkpoint slices to pinned host memory and back";
  let description = [{
    ZeRO-R's partitioned activation checkpoints moved to host memory
    (P_a+cpu; Rajbhandari et al., arXiv 1910.02054, §6.1; DeepSpeed's
    `cpu_checkpointing`). On a module that `train-checkpoint` marked
    `zero.checkpoint_offload = "host"` (`partition=tensor offload=host`),
    every P_a slice of `@forward_backward` (a `zero.local_shard` marked
    `zero.checkpoint_slice`, defined before the loss seed and read only
    after it) leaves the device between its forward and its backward:

    * right after the slice is computed, `zero.offload_start` copies it to
      a pinned host slot on a copy stream; its `zero.offload_wait` (the
      compute stream waits for the copy, the host never does) goes right
      before the next slice is computed, or before the loss seed, so the
      copy overlaps one block of the forward;
    * in the backward, `zero.fetch_wait` goes right before the slice's
      first use (its all-gather, or the `zero.all_gather_start` that
      zero-prefetch made of it) and the use reads the fetched copy; its
      `zero.fetch_start` goes one block ahead: right after the previous
      slice's `zero.fetch_wait` in the backward's order, or right after the
      loss seed for the first.

    The slices then no longer live in the device's activation arena from
    the forward to the backward: `zero-buffer-assign` (which must run after
    this pass) gives each host slot `#zero.storage<host_slot, ...>` in a
    pinned host block of its own and the fetched copy a temporary device
    buffer. Losses are unchanged (the same bytes come back).

    `target=cpu` changes nothing: the CPU backend's arenas are host memory
    already (zero-report says so). Without the module mark it changes
    nothing either.

    Example (M = 2, target=cuda):
    ```mlir
    // forward
    %s = zero.local_shard %f world_size(2) axis(<tensor>) {zero.checkpoint_slice} : tensor<64xf32> -> tensor<32xf32>
    %p = zero.offload_start %s : tensor<32xf32> -> !zero.pending<tensor<32xf32>>
    ...
    %h = zero.offload_wait %p : !zero.pending<tensor<32xf32>>
    %seed = train.fill 1.000000e+00 {train.loss_seed} : tensor<f32>
    %q = zero.fetch_start %h : tensor<32xf32> -> !zero.pending<tensor<32xf32>>
    ...
    // backward, before the block's recomputation
    %d = zero.fetch_wait %q : !zero.pending<tensor<32xf32>>
    %g = zero.all_gather %d world_size(2) axis(<tensor>) : tensor<32xf32> -> tensor<64xf32>
    ```
  }];
  let dependentDialects = ["::mlir::zero::ZeroDialect"];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"cuda\"",
           "cuda (copy the slices to pinned host memory) or cpu (no-op: "
           "the arenas are host memory)">,
    Option<"stepFunction", "step-function", "std::string",
           /*default=*/"\"forward_backward\"",
           "The forward+backward function to rewrite">
  ];
  let statistics = [
    Statistic<"numOffloaded", "slices-offloaded",
              "P_a slices moved to host memory">,
    Statistic<"numHostBytes", "host-bytes",
              "Bytes of the slices in host memory">
  ];
}

def ZeroBufferAssign : Pass<"zero-buffer-assign", "::mlir::ModuleOp"> {
  let summary = "Static buffer assignment: liveness-based placement of every value in arenas";
  let description = [{
    ZeRO-R's memory defragmentation (§6.3) done at compile time: every
    tensor value of the step that needs storage of its own gets a fixed
    byte offset in an arena, so a step allocates nothing and the arenas are
    as small as the values live at one time allow. Long-lived model states
    already have theirs (parameters, gradients, master weights, moments
    arenas: `zero-layout-states`, which must run first). Values kept across the forward→backward boundary (defined in
    `@forward_backward` before the `train.loss_seed` op and read after it:
    activations, checkpoints) go to the *activations* arena; everything
    else — short-lived temporaries, a collective's result (live from its
    start), a load that must copy, the optimizer step's scalars, and the
    scratch single ops need for their duration — to the *temporaries*
    arena. Views (`train.reshape`, `zero.unpack`, `zero.split`, loads that
    read a state in place), values computed in place in a state and values
    computed in their slot of a `zero.pack`'s flat buffer (contiguous
    gradients: a value defined after the loss seed whose only use is the
    pack, which then copies nothing for it and whose buffer lives from that
    value's definition) take no block; a view extends the live range of the
    buffer it views (the planner and its alias analysis:
    include/zero/Analysis/BufferPlan.h, lib/Analysis).

    Each arena is placed by greedy best fit over live intervals (largest
    block first, into the smallest gap between the blocks already placed
    whose live intervals overlap it, else above them; TFLite's
    GreedyBySize, XLA's heap simulator). Values live at the same op never
    share a byte (a result never aliases an operand); values with disjoint
    lives reuse the same bytes. The functions run one at a time, so the
    arenas are shared and each is as large as the largest function needs;
    the values of functions other than `@forward_backward` (planned first)
    go to the activations arena when they fit into what it needs there.

    It is the single owner of storage: every choice of where a value lives
    is made here and recorded as a `#zero.storage` (ZeroDialect.td), and
    `convert-train-to-emitc` only reads them, refusing a function without
    them. The choices besides arena offsets, each made only when it is safe
    (the state-access analysis, lib/Analysis/StateAccess.cpp):
    * a `train.load` reads its state in place (`state @s`) unless the state
      is written while the loaded value is live (then it copies: a block);
    * an AdamW update is computed in place in the state it updates
      (`tied N`), and a value computed only to be stored into a state is
      computed in the state (`state @s`, store forwarding), when no other
      access would observe the early write;
    * a value whose only use is a `zero.pack` is computed in its slot of
      the flat buffer (`pack_slot`, contiguous gradients);
    * a flat buffer is the group's span of the parameters or gradients
      arena (`span @g`, FSDP's flat parameter, DeepSpeed's contiguous
      gradients), and an all-reduce of a gradient span runs in place;
    * a host slot of P_a+cpu (a `zero.offload_wait` result,
      zero-offload-checkpoints) is `host_slot`: bytes of one pinned host
      block, in program order, live from its offload's start to its
      fetch's wait, never in a device arena (`zero.host_slot_bytes` on the
      function and the module is the block's size).

    Annotates the IR:
    * `zero.storage` on every op with results: one `#zero.storage` per
      result (`arena` blocks with their offset, bytes and live range [first,
      last] in op positions of the function, -1 the entry; the kinds above;
      views; `none` for `!zero.pending`), and as an argument attribute on
      every used argument;
    * `zero.scratch = #zero.storage<arena temporaries, ...>` on ops that
      need scratch;
    * `zero.arena_bytes = {activations, temporaries}` on each function and
      on the module (the max).

    `strategy=best-fit` (the default) places the blocks as above;
    `strategy=bump` places them in program order without reuse (one scratch
    pool at the end), for comparison and debugging (zero-compile
    `--buffer-assign=false`). convert-train-to-emitc checks what it reads:
    a recorded choice the step does not allow, or a stale placement whose
    bytes overlap a value live at the same time, is an error. Run it last,
    right before the lowering (zero-compile does). `zero-report` prints the
    planned arena bytes.
  }];
  let options = [
    Option<"strategy", "strategy", "std::string", /*default=*/"\"best-fit\"",
           "How blocks get their offsets: best-fit (liveness-based reuse) or bump (program order, no reuse)">
  ];
  let dependentDialects = ["::mlir::zero::ZeroDialect"];
  let statistics = [
    Statistic<"activationBytes", "activation-bytes", "Planned activation arena bytes">,
    Statistic<"temporaryBytes", "temporary-bytes", "Planned temporary arena bytes">,
    Statistic<"bumpTemporaryBytes", "bump-temporary-bytes", "Temporary arena bytes without reuse (bump allocation)">
  ];
}

#endif // ZERO_TRANSFORMS_ZEROPASSES_TD
