//===- Passes.td - lowering passes of Zero --------------------*- tablegen -*-===//

#ifndef ZERO_CONVERSION_PASSES_TD
#define ZERO_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertTrainToEmitC : Pass<"convert-train-to-emitc", "::mlir::ModuleOp"> {
  let summary = "Lowers a training step (train + zero dialects) to EmitC";
  let description = [{
    Rewrites the whole module — `train.param` / `train.state` /
    `zero.group` / `zero.shard` declarations and the functions `@forward`,
    `@forward_backward`, `@optimizer_step` and (optional) `@logits` — into
    the upstream EmitC dialect, so that `mlir::emitc::translateToCpp`
    prints one C++ file implementing the contract of
    `runtime/include/zrt/model.h`: `zrt_model_get()` returning a static
    `zrt_model_desc` with the init / forward / forward_backward /
    optimizer_step / last_logits / destroy functions, and (with `emit-main`)
    `main` calling the runtime's training driver `zrt_train_main`.

    The lowering makes no layout choice of its own where the IR records one
    and fails with a diagnostic where a recorded one is missing: the
    states' places come from `zero-layout-states` (`zero.slot`,
    `zero.param_span` / `zero.grad_span`, `zero.state_arena_bytes`; run it
    first).

    Buffers: every tensor lives at a static byte offset in one of the
    arenas that `init` allocates once with `zrt_arena_create`, one per
    `zrt_mem_kind`: parameters, gradients, master weights and moments for
    the state symbols (at their `zero.slot`), activations (forward values
    the backward reads) and temporaries for the values of each function
    (zero-buffer-assign's best-fit offsets when it ran, else bump placement;
    functions share the activation and temporary arenas, which never hold
    anything across calls). `train.load` / `zero.shard_load` and `train.reshape` /
    `zero.unpack` are views without copies, unless the loaded symbol is
    written before the last use of the loaded value (then the load copies).
    Ops become calls of the `zrt_*` kernels and collectives, each checked
    (a failing kernel makes the step return its status).

    Parameters are initialized in `init(seed)` from their `#train.init`
    with the stream `zrt_param_seed(seed, name)`; shards of a group get
    exactly the values of their slice of the whole tensors, and master
    weights the f32 values the parameters were rounded from.

    bf16 tensors are stored in bf16; a compute op with a native bf16
    kernel (`NativeBf16KernelOpInterface`; `zrt_X_bf16`, zrt.h "Native
    bf16 kernels") calls it. The lowering widens nothing: every other
    compute op on bf16 or f16 (fp16-mixed: f16 has no native kernels) must
    have been widened to f32 by `train-legalize-bf16` (explicit
    `train.cast`s, printed as zrt_cast_bf16_to_f32 / zrt_cast_f32_to_f16
    etc., round to nearest even, overflow to ±inf), and one that was not
    is an error. Fills, accumulation, sums of squares, AdamW's gradient and
    collectives take f16 as ZRT_F16. A
    `@forward_backward` with a last argument `{train.name = "loss_scale"}`
    (train-autodiff{loss-scale=true}) reads S from a global that the model
    description's `set_loss_scale` sets (model.h).

    The model description: `name` from the module attribute
    `zero.model_name` (default "model"), `world_size` / `stage` from
    `zero.world_size` / `zero.stage` (defaults 1 and 0), B and T from
    `@forward`'s first argument [B, T], V and Vp from its
    `train.cross_entropy`.

    Array models: when `@forward`'s arguments carry `train.name`s (every
    one of them: `zero-model mlp`, zero-import of a user's module whose
    inputs are not token ids), the program takes those named inputs
    instead of (ids, targets): the description lists them as
    `zrt_input_desc`s (name, dtype f32/bf16/f16/i32/i64, per-rank shape
    [B, ...]) with `batch` = B, `seq` = 1, `vocab` = 0, `forward` /
    `forward_backward` NULL and `forward_inputs` /
    `forward_backward_inputs(const void *const *inputs, float *loss)` set;
    `@forward_backward` must take the same named inputs (and the loss scale
    last), and such a module has no `@logits`.
  }];
  let dependentDialects = ["::mlir::emitc::EmitCDialect"];
  let options = [
    Option<"emitMain", "emit-main", "bool", /*default=*/"true",
           "Also emit `int main(argc, argv)` calling zrt_train_main">,
    Option<"emitComments", "emit-comments", "bool", /*default=*/"true",
           "Precede the code of each op with a `// op` comment">
  ];
}

#endif // ZERO_CONVERSION_PASSES_TD
