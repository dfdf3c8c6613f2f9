//===- TrainPasses.td - passes on the train dialect ----------*- tablegen -*-===//

#ifndef ZERO_TRANSFORMS_TRAINPASSES_TD
#define ZERO_TRANSFORMS_TRAINPASSES_TD

include "mlir/Pass/PassBase.td"

def TrainAutodiff : Pass<"train-autodiff", "::mlir::ModuleOp"> {
  let summary = "Reverse-mode automatic differentiation of the loss function";
  let description = [{
    Differentiates the loss function `function` (one `tensor<f32>` result)
    with respect to every trainable `train.param` it reads, and with respect
    to each argument marked `{train.requires_grad}`. Writes a new function
    `step-function` with the loss function's arguments that runs the forward
    graph, then the backward graph, and adds each parameter's gradient into
    its gradient state (`train.state @p.grad kind(<grad>)`, created here)
    with `train.accumulate` as soon as the gradient is complete. It returns
    the loss, then the gradients of the marked arguments. Running it k
    times before one optimizer step accumulates k micro-batches.

    The pass is generic: each op provides its own gradient rule through
    `GradientOpInterface`. A value used more than once gets the sum of its
    gradients; frozen parameters (no `trainable`) get no gradient and no
    backward work that only they need. The loss function itself is kept
    (for evaluation).

    Errors: a missing function, a function that does not return one
    `tensor<f32>`, a multi-block body, a marked argument with integer
    elements, and an op on a path from a parameter to the loss without a
    gradient rule.
  }];
  let dependentDialects = ["::mlir::train::TrainDialect"];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"forward\"",
           "Name of the loss function to differentiate">,
    Option<"stepFunction", "step-function", "std::string",
           /*default=*/"\"forward_backward\"",
           "Name of the generated forward+backward function">,
    Option<"lossScale", "loss-scale", "bool", /*default=*/"false",
           "Give the step function a last argument %loss_scale: tensor<f32> "
           "that multiplies the loss before the backward (dynamic loss "
           "scaling for fp16, torch.cuda.amp.GradScaler)">
  ];
  let statistics = [
    Statistic<"numBackwardOps", "backward-ops", "Ops emitted by gradient rules">,
    Statistic<"numGradients", "gradients", "Parameters that get a gradient">,
    Statistic<"numFrozen", "frozen-params", "Frozen parameters read by the loss">
  ];
}

def TrainOptimizer : Pass<"train-optimizer", "::mlir::ModuleOp"> {
  let summary = "AdamW update with gradient clipping and mixed precision";
  let description = [{
    Adds the optimizer state of every parameter that has a gradient state —
    AdamW's first and second moments (`exp_avg`, `exp_avg_sq`, f32) and,
    under `bf16-mixed`, an f32 master copy — and the function
    `@optimizer_step(%lr: tensor<f32>, %step: tensor<i64>, %grad_scale:
    tensor<f32>) -> tensor<f32>`, which
    1. computes the global L2 norm of `grad_scale`·g over all gradients
       (`grad_scale` = 1/k after k accumulated micro-batches),
    2. clips it to `max-grad-norm` (`torch.nn.utils.clip_grad_norm_`),
    3. applies `torch.optim.AdamW` (decoupled weight decay, bias
       correction; `step` counts from 1) to each parameter — weight decay
       only on parameters of rank ≥ `decay-min-rank` (nanoGPT's convention:
       matrices and embeddings decay, biases and layer-norm weights do not),
    4. writes the f32 result to the master weights and its bf16 rounding to
       the parameter (mixed precision), zeroes the gradients, and returns
       the (pre-clipping) global norm.
    The learning rate is a runtime input, so schedules live in the driver.

    `fp16-mixed` is dynamic loss scaling as torch.cuda.amp.GradScaler does
    it: the step function (from `train-autodiff{loss-scale=true}`)
    back-propagates loss·S, the driver passes `grad_scale` = 1/(k·S), so the
    norm and the update see the unscaled gradient; when the norm is not
    finite (an f16 overflow) every AdamW update is skipped — parameters,
    master weights and moments keep their values, the gradients are zeroed —
    and the returned non-finite norm tells the driver to halve S (and to
    grow it again after a run of finite steps).

    Memory per parameter: fp32 = 4 (param) + 4 (grad) + 8 (moments) = 16
    bytes; bf16-mixed = 2 + 2 + 4 (master) + 8 = 16 bytes (ZeRO §3.1).

    Errors: no gradient state (run `train-autodiff` first), parameters whose
    element type does not match `precision`, an existing `@optimizer_step`,
    fp16-mixed without a loss-scaled step function.
  }];
  let dependentDialects = ["::mlir::train::TrainDialect",
                           "::mlir::func::FuncDialect"];
  let options = [
    Option<"precision", "precision", "std::string", /*default=*/"\"fp32\"",
           "fp32 (f32 parameters), bf16-mixed (bf16 parameters and "
           "gradients, f32 master weights and moments) or fp16-mixed (the "
           "same with f16 and dynamic loss scaling)">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9", "AdamW β1">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999", "AdamW β2">,
    Option<"eps", "eps", "double", /*default=*/"1e-8", "AdamW ε">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"0.01",
           "Decoupled weight decay (PyTorch AdamW default 0.01)">,
    Option<"decayMinRank", "decay-min-rank", "int64_t", /*default=*/"2",
           "Only parameters of at least this rank decay (0 = all)">,
    Option<"maxGradNorm", "max-grad-norm", "double", /*default=*/"1.0",
           "Clip the global gradient norm to this value (<= 0: no clipping)">
  ];
  let statistics = [
    Statistic<"numUpdated", "params-updated", "Parameters updated by AdamW">,
    Statistic<"numDecayed", "params-decayed", "Parameters with weight decay">
  ];
}

def TrainCheckpoint : Pass<"train-checkpoint", "::mlir::ModuleOp"> {
  let summary = "Activation checkpointing: recompute each block in the backward";
  let description = [{
    With `policy=block`, the forward ops of each transformer block are
    cloned right before the first backward op that needs one of their
    values, and the backward uses the clones (Chen et al., "Training Deep
    Nets with Sublinear Memory Cost", 2016; PyTorch
    `torch.utils.checkpoint`, Megatron's full recomputation). Only each
    block's inputs (the residual stream entering it) stay live from the
    forward to the backward; the block's internal activations are computed
    twice. Losses and gradients are unchanged (the same ops on the same
    values).

    A block is the span of forward ops from the first load of a parameter
    named `<word><n>.…` (e.g. `h3.attn.c_attn.weight`) to the op before the
    first load of the next block's (or of a parameter outside any block).
    Run it after `train-autodiff` and before `zero-partition` (at stage 3
    the recomputation then gathers its parameters in the backward).
    `policy=none` changes nothing.

    `partition=tensor` is ZeRO-R's partitioned activation checkpointing
    (P_a; Rajbhandari et al., arXiv 1910.02054, §6.1; DeepSpeed's
    `partition_activations`). Under tensor parallelism every rank of a
    tensor group holds the same block inputs; with P_a each keeps a 1/M
    slice of each one instead (a copy made right after the input is
    computed, `zero.local_shard ... axis(<tensor>)` marked
    `zero.checkpoint_slice`), and the M slices are all-gathered over the
    tensor axis right before the block's recomputation (`zero.all_gather
    ... axis(<tensor>)`, which `zero-prefetch` starts early like a
    parameter gather). A checkpoint of S elements is padded with zeros to
    k·M, k = ceil(S/M) (DeepSpeed asserts M | S instead). A checkpoint
    is one of the span's operands computed by an earlier forward op from
    other values (not a parameter load, not a table made from nothing)
    that no backward op reads before the recomputation. The checkpoint
    bytes per rank drop from Σ S·b to Σ k·b; each block adds one
    all-gather of its input (s·h per micro-batch, the paper's §8 cost).
    It needs `#zero.mesh` with `tensor` ≥ 2 (zero-tensor-parallel first).

    `offload=host` (P_a+cpu, with `partition=tensor`) marks the module
    `zero.checkpoint_offload = "host"`: the slices belong in host memory.
    The CPU backend's arenas are host memory already, so it changes
    nothing there and zero-report says so.

    Example (M = 2, one 2×4×8 block input):
    ```mlir
    // forward, after %x is computed:
    %f = train.reshape %x : tensor<2x4x8xf32> -> tensor<64xf32>
    %s = zero.local_shard %f world_size(2) axis(<tensor>) {zero.checkpoint_slice} : tensor<64xf32> -> tensor<32xf32>
    // backward, before the block's recomputation:
    %g = zero.all_gather %s world_size(2) axis(<tensor>) : tensor<32xf32> -> tensor<64xf32>
    %x2 = train.reshape %g : tensor<64xf32> -> tensor<2x4x8xf32>
    ```
  }];
  let dependentDialects = ["::mlir::train::TrainDialect",
                           "::mlir::zero::ZeroDialect"];
  let options = [
    Option<"policy", "policy", "std::string", /*default=*/"\"block\"",
           "none or block">,
    Option<"stepFunction", "step-function", "std::string",
           /*default=*/"\"forward_backward\"",
           "The forward+backward function to rewrite">,
    Option<"partition", "partition", "std::string", /*default=*/"\"none\"",
           "none, or tensor: keep 1/M of each block input per tensor rank "
           "(P_a)">,
    Option<"offload", "offload", "std::string", /*default=*/"\"none\"",
           "none, or host: P_a's slices in host memory (P_a+cpu)">
  ];
  let statistics = [
    Statistic<"numBlocks", "blocks", "Blocks recomputed">,
    Statistic<"numPartitioned", "partitioned-checkpoints",
              "Block inputs kept as 1/M slices (P_a)">,
    Statistic<"numRecomputed", "recomputed-ops", "Ops cloned for recomputation">
  ];
}

def TrainFuseEpilogues : Pass<"train-fuse-epilogues", "::mlir::ModuleOp"> {
  let summary = "Fuse GELU and its gradient into the neighbouring matmuls";
  let description = [{
    Forms the GEMM-epilogue ops of every function in the module:

    * `train.matmul` (with or without bias) followed by `train.gelu` of its
      result → one `train.matmul_gelu`, whose `pre` result replaces the
      matmul's (the GELU input, still read by the backward) and whose
      `result` replaces the GELU's;
    * a bias-free `train.matmul` whose only use is the `grad` operand of a
      `train.gelu_grad` → one `train.matmul_gelu_grad` (at the matmul's
      place when the GELU input is a block argument or defined before the
      matmul in its block, else at the gelu_grad's).

    This is llm.c's `gelu_fusion = 2` (its default on Hopper) and the
    epilogues `CUBLASLT_EPILOGUE_GELU_AUX_BIAS` / `CUBLASLT_EPILOGUE_DGELU`
    of cuBLASLt: for GPT-2's MLP (B = 16, T = 1024, bf16) it removes per
    block one read of the [B, T, 4C] pre-activation in the forward and a
    write and two reads of a [B, T, 4C] tensor in the backward (0.3 GB of
    memory traffic per block and step). In f32 the fused ops
    compute exactly what the pairs did; in bf16 they skip one intermediate
    rounding (see the ops' descriptions), on every backend alike.

    Run it after `train-autodiff` and `train-checkpoint` (the fused ops have
    no gradient rule; recomputed blocks are fused like the others). A
    matmul whose result several GELUs read is fused with the first; the
    others read `pre`.
  }];
  let dependentDialects = ["::mlir::train::TrainDialect"];
  let statistics = [
    Statistic<"numGelu", "gelu-fused", "matmul + gelu pairs fused">,
    Statistic<"numGeluGrad", "gelu-grad-fused",
              "matmul + gelu_grad pairs fused">
  ];
}

def TrainFuseAdamWCast : Pass<"train-fuse-adamw-cast", "::mlir::ModuleOp"> {
  let summary = "Let AdamW write the bf16 copy of the parameters it updates";
  let description = [{
    Under bf16-mixed precision the optimizer step updates the f32 master
    weights and rounds them into the bf16 parameters (`train.cast` f32 ->
    bf16 of the `train.adamw` result, stored into the parameter). The AdamW
    kernel can write that rounded copy itself (zrt_adamw_step's out_bf16,
    the same round-to-nearest-even as zrt_cast_f32_to_bf16; DeepSpeed's
    fused Adam with a bf16 model copy): one pass over the master weights
    instead of two. This pass marks each cast it folds with the unit
    attribute `zero.written_by_adamw` (verified: a cast to bf16 of an
    AdamW's new parameter); the buffer plan and the lowering follow the
    mark (the cast prints nothing, the AdamW call gets the output pointer)
    and reject a mark they cannot honour.

    A cast is folded when its result is computed in the parameter's state
    (its only use is the store into the state, with no other access of the
    state between the cast and the store), nothing reads or writes that
    state between the AdamW and the cast, no earlier load that reads the
    state in place is still live at the AdamW (the write moves from the
    cast to the AdamW), and the AdamW has no skip_nonfinite (fp16-mixed:
    the update may not run). At most one cast per AdamW; only `train.adamw` is
    considered (`zero.shard_adamw` keeps its casts). When the plan fuses
    AdamW updates of adjacent states into one call, the marked casts of the
    run become one rounding of the whole run. Run it after the last pass that moves
    loads, stores or AdamW (the pipeline runs it after
    `zero-layout-states`) and before `zero-buffer-assign`; functions whose
    buffers are assigned already are left as they are.
  }];
  let dependentDialects = ["::mlir::zero::ZeroDialect"];
  let statistics = [
    Statistic<"numFolded", "casts-folded", "bf16 casts written by their AdamW call">
  ];
}

def TrainFuseCrossEntropy : Pass<"train-fuse-cross-entropy", "::mlir::ModuleOp"> {
  let summary = "Fuse the loss and its gradient; the gradient overwrites the logits";
  let description = [{
    In every function of the module, a `train.cross_entropy` and the
    `train.cross_entropy_grad` of the same logits, targets and classes
    whose upstream gradient is a constant (`train.fill`, the loss seed)
    become one `train.cross_entropy_fused` at the loss: one read of each
    row of the logits computes the loss and writes the gradient over the
    logits (llm.c's fused classifier; `zrt_cross_entropy_padded_fused`),
    the same numbers as the pair. For GPT-2 (B = 16, T = 1024, V = 50304,
    bf16) that is one 1.6 GB logits buffer and one pass over it less per
    step.

    It fuses only where the logits may hold the gradient: f32 or bf16,
    computed in the function into a buffer of their own (not a state, a
    view, a collective's or AdamW's result), and read by nothing but the
    pair (and `train.reshape` views); and where the gradient is not stored
    once into a state or packed (those compute it in place elsewhere). The
    fill stays (it marks the forward/backward boundary). Run it after
    `train-autodiff` (the fused op has no gradient rule).
  }];
  let dependentDialects = ["::mlir::train::TrainDialect"];
  let statistics = [
    Statistic<"numFused", "cross-entropy-fused", "cross_entropy + cross_entropy_grad pairs fused">
  ];
}

def TrainLegalizeBf16 : Pass<"train-legalize-bf16", "::mlir::ModuleOp"> {
  let summary = "Widen bf16/f16 ops without a native bf16 kernel to f32";
  let description = [{
    bf16 and f16 are storage types: the runtimes compute in f32 and keep
    16-bit tensors in memory. A compute op (one without the `NotCompute`
    trait) runs on bf16 tensors as they are only when its kernel has a
    native bf16 form, which the op states in ODS
    (`NativeBf16KernelOpInterface`: add, gelu and its gradient, the layer
    and RMS norms, SiLU and SwiGLU, reduce_sum, the matmuls and their GELU
    epilogues on distinct bf16 operands, embeddings, attention,
    cross-entropy with an f32 loss, rope with its f32 table). f16 has no
    native kernels.

    In every function of the module, each other compute op with bf16 or f16
    tensors is widened: a `train.cast` to f32 before the op for each
    distinct narrow operand, the op computes in f32 (its narrow results
    become f32), and a `train.cast` after the op rounds each such result back
    to its type (round to nearest even) for the op's uses. The widened copies
    are ordinary tensors: `zero-buffer-assign` places them as temporaries,
    and `convert-train-to-emitc` prints the casts as `zrt_cast_*` calls. The
    numbers are those of the f32 kernel on the widened inputs, rounded once.
    This is upstream MLIR's `arith-emulate-unsupported-floats` for the
    train dialect.

    The answer does not depend on the target: the CPU and CUDA runtimes
    implement the same zrt.h kernels (the generated C++ is the same for
    both), so the pass has no target option.

    Example (train.mul has no bf16 kernel):
    ```mlir
    %r = train.mul %a, %b : tensor<8xbf16>
    // becomes
    %a32 = train.cast %a : tensor<8xbf16> -> tensor<8xf32>
    %b32 = train.cast %b : tensor<8xbf16> -> tensor<8xf32>
    %r32 = train.mul %a32, %b32 : tensor<8xf32>
    %r = train.cast %r32 : tensor<8xf32> -> tensor<8xbf16>
    ```

    Run it after the passes that form or move compute ops (the fusions,
    zero-partition, zero-prefetch and zero-place-progress: the pipeline runs
    it right after `zero-place-progress`, so a `zero.progress` still follows
    the narrowing casts of its op) and before `zero-buffer-assign`;
    functions whose buffers are assigned already are left as they are (the
    lowering rejects a compute op it would have had to widen).
  }];
  let dependentDialects = ["::mlir::train::TrainDialect"];
  let statistics = [
    Statistic<"numWidened", "ops-widened",
              "Compute ops widened to f32 (no native bf16 kernel)">,
    Statistic<"numCasts", "casts-inserted",
              "train.cast ops inserted (widening operands, narrowing results)">
  ];
}

def TrainFuseLayerNorm : Pass<"train-fuse-layer-norm", "::mlir::ModuleOp"> {
  let summary = "Fuse residual adds into the layer norms next to them";
  let description = [{
    In every function of the module:

    * a `train.add` whose result a `train.layer_norm` normalizes becomes
      one `train.add_layer_norm` (results: the sum, which replaces the
      add's, and the normalized value) — llm.c's `fused_residual_forward`;
    * a `train.add` of a `train.layer_norm_grad`'s input gradient (used only
      there) and a value defined before that op becomes the op's
      `plus %addend` form — the residual stream's two gradients summed in
      the layer-norm backward's pass, as llm.c's `layernorm_backward`
      accumulates into dresidual.

    Both compute exactly what the pairs did (the sum is rounded before it
    is normalized, the input gradient before the addend is added), so
    losses are bit-identical; what changes is memory traffic and kernel
    count. For GPT-2 (B = 16, T = 1024, bf16: 25 MB per [B, T, C] tensor)
    each of the 25 forward fusions saves reading the sum back (25 MB) and a
    kernel, each of the 24 backward ones the input gradient's write and
    read (50 MB) and a kernel: about 1.8 GB and 49 kernels per step.

    The fused forward op goes where the add was when the layer norm's weight
    and bias are defined before it, else where the layer norm was when no
    other use of the sum lies in between (otherwise the pair stays). Run it
    after `train-autodiff` (the fused forward op has no gradient rule).
  }];
  let dependentDialects = ["::mlir::train::TrainDialect"];
  let statistics = [
    Statistic<"numForward", "add-layer-norm-fused", "add + layer_norm pairs fused">,
    Statistic<"numBackward", "layer-norm-grad-add-fused",
              "layer_norm_grad + add pairs fused">
  ];
}

#endif // ZERO_TRANSFORMS_TRAINPASSES_TD
