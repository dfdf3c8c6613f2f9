/*===- zrt/model.h - contract between generated code and the driver -*- C -*-===//
//
// A compiled training step (the C++ that `zero-compile` generates from the
// partitioned IR) describes itself with one zrt_model_desc and hands it to
// the runtime's training driver:
//
//     int main(int argc, char **argv) {
//       return zrt_train_main(argc, argv, zrt_model_get());
//     }
//
// The generated code owns its buffers (arenas allocated once in `init`) and
// calls the kernels and collectives of zrt.h; the driver owns everything
// else: MPI start-up, flags, data, the learning-rate schedule, gradient
// accumulation, logging, validation, sampling and checkpoints.
//
// Shapes: `batch` and `seq` are the per-rank micro-batch B and sequence
// length T the step was compiled for. Token ids and targets are int32
// [B, T], row-major. Array models (num_inputs > 0) take their named inputs
// instead, each [B, ...] (zrt_input_desc). Every rank runs the same
// program (SPMD).
//
//===----------------------------------------------------------------------===*/
#ifndef ZRT_MODEL_H
#define ZRT_MODEL_H

#include <stdint.h>

#include "zrt/abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Version of this contract; generated code sets zrt_model_desc::abi_version
/// to it and the driver refuses any other value.
#define ZRT_MODEL_ABI_VERSION 2

/// enum zrt_state_kind (what a state tensor holds) is in zrt/abi.h.

/// One named state tensor as the compiled program stores it on this rank.
typedef struct zrt_state_desc {
  const char *name;     ///< IR symbol name, e.g. "h0.attn.c_attn.weight" or "h0.exp_avg".
  int kind;             ///< enum zrt_state_kind.
  int dtype;            ///< enum zrt_dtype (ZRT_F32 / ZRT_BF16 / ZRT_F16).
  int64_t numel;        ///< Elements stored on this rank.
  int sharded;          ///< 1 if this is the rank's slice of `group`, 0 if whole.
  int group;            ///< Index into zrt_model_desc::groups when sharded, else -1.
  void *data;           ///< Where it lives after init() (inside an arena).
} zrt_state_desc;

/// A flat shard group (the IR's zero.group): members laid out back to back,
/// zero-padded to `padded` = world_size x shard elements; rank r owns
/// [r*shard, (r+1)*shard).
typedef struct zrt_group_desc {
  const char *name;
  int num_members;
  const char *const *members;   ///< Parameter names.
  const int64_t *offsets;       ///< Element offset of each member.
  const int64_t *numels;        ///< Element count of each member.
  const uint8_t *decay;         ///< 1 if the member takes weight decay.
  int64_t padded;               ///< Elements of the whole flat buffer.
  int64_t shard;                ///< Elements each rank owns.
} zrt_group_desc;

/// One parameter as the model declares it (the IR's train.param), whatever
/// its storage: whole in a state, or members of a group whose shards the
/// states hold. Gives the driver the shapes that --export / --import write
/// and check (safetensors).
typedef struct zrt_param_info {
  const char *name;      ///< IR symbol name, e.g. "h0.attn.c_attn.weight".
  int dtype;             ///< enum zrt_dtype of the parameter.
  int rank;              ///< Number of dimensions (0 for a scalar).
  const int64_t *shape;  ///< `rank` sizes, row-major (may be NULL if rank 0).
} zrt_param_info;

/// How a tensor-parallel program cuts one parameter over the M ranks of the
/// tensor axis (the IR's #zero.tensor_split<dim, blocks, parts, full>):
/// dimension `dim` of the whole tensor is `blocks` equal blocks, each cut
/// into `parts` (= M) equal slices, and tensor rank t holds slice t of every
/// block, back to back. zrt_param_info::shape is that per-rank cut: its
/// size along `dim` is the whole size / parts. `dim` is -1 (blocks and parts
/// 1) for a parameter that stays whole on every tensor rank. Checkpoints,
/// --import and --export use it to re-cut parameters across meshes.
typedef struct zrt_param_cut {
  int dim;        ///< The cut dimension, or -1: whole on every tensor rank.
  int64_t blocks; ///< Blocks of that dimension (3 for packed q/k/v), >= 1.
  int64_t parts;  ///< Slices of each block: M, or 1 when whole.
} zrt_param_cut;

/// One input of the step's forward as the model declares it (an argument of
/// the IR's @forward with a `train.name`): array models, whose forward takes
/// tensors other than token ids (an MLP's features and targets). The
/// driver's array dataset (runtime/README.md, "Array data") feeds it the
/// array of that name; the generated forward_inputs / forward_backward_inputs
/// take the inputs in this order.
typedef struct zrt_input_desc {
  const char *name;      ///< The argument's train.name, e.g. "x", "target".
  int dtype;             ///< enum zrt_dtype: ZRT_F32/BF16/F16 or ZRT_I32/I64.
  int rank;              ///< Number of dimensions (>= 1).
  /// `rank` sizes of this rank's micro-batch, row-major: shape[0] is the
  /// per-rank batch B (= zrt_model_desc::batch), the rest one sample's.
  const int64_t *shape;
} zrt_input_desc;

/// The compile-time plan of this rank's memory and traffic (zero-report),
/// which the driver compares with what the runtime measures.
typedef struct zrt_plan_desc {
  int64_t state_bytes[5];       ///< Bytes per zrt_state_kind on this rank.
  int64_t padding_bytes;        ///< Of those, bytes of shard padding.
  int64_t comm_bytes_micro[4];  ///< Bytes sent per forward_backward, per zrt_coll_kind.
  int64_t comm_bytes_step[4];   ///< Bytes sent per optimizer_step, per zrt_coll_kind.
  /// Bytes of the arena of each zrt_mem_kind (parameters, gradients, master
  /// weights, moments, activations, temporaries, comm buffers, constants)
  /// that init()
  /// allocates, the activation and temporary arenas as zero-buffer-assign
  /// planned them: their sum is the planned peak, which
  /// zrt_memory_peak_total_bytes measures. All 0 when the program does not
  /// say (appended last: older initializers leave it zero).
  int64_t arena_bytes[ZRT_MEM_NUM_KINDS];
  /// Model FLOPs of one forward_backward on this rank's micro-batch: 3 x
  /// the forward's matrix products and attention (include/zero/Analysis/
  /// Flops.h; recomputation not counted), the numerator of MFU. 0 when the
  /// program does not say.
  double model_flops_micro;
} zrt_plan_desc;

/// Everything the driver needs to know about a compiled training step.
typedef struct zrt_model_desc {
  int abi_version;          ///< ZRT_MODEL_ABI_VERSION.
  const char *name;         ///< Model name (e.g. "gpt2").
  int world_size;           ///< N the program was partitioned for.
  int stage;                ///< ZeRO stage 0..3.
  int64_t batch;            ///< Per-rank micro-batch B.
  int64_t seq;              ///< Sequence length T.
  int64_t vocab;            ///< Vocabulary size V (targets are < V).
  int64_t padded_vocab;     ///< Logit columns Vp >= V.
  int64_t num_params;       ///< Parameter count (unpadded, whole model).
  int num_states;
  zrt_state_desc *states;   ///< data pointers filled by init().
  int num_groups;
  const zrt_group_desc *groups;
  zrt_plan_desc plan;

  /// Allocates every arena once and initializes the states: parameters from
  /// their initializers with the counter-based RNG seeded by `seed` (a shard
  /// gets exactly the values of its slice of the whole tensor), master
  /// weights as copies of the parameters, everything else zero. Call after
  /// zrt_init. Returns ZRT_OK or a ZRT_ERR_* status (zrt_last_error() says why).
  int (*init)(uint64_t seed);
  /// Loss of one micro-batch (no gradients, no state change): the IR's
  /// @forward. `loss` receives this rank's mean loss over its B·T tokens.
  int (*forward)(const int32_t *ids, const int32_t *targets, float *loss);
  /// Forward and backward of one micro-batch (@forward_backward): adds the
  /// gradients into the gradient state (reduce-scattering them at stages
  /// 2-3) and returns this rank's loss.
  int (*forward_backward)(const int32_t *ids, const int32_t *targets,
                          float *loss);
  /// One optimizer update (@optimizer_step) after k micro-batches with
  /// grad_scale = 1/k; zeroes the gradients; `grad_norm` receives the global
  /// gradient norm before clipping. `step` counts from 1.
  int (*optimizer_step)(float lr, int64_t step, float grad_scale,
                        float *grad_norm);
  /// Logits of the last position of every row, [B, padded_vocab] f32, for
  /// sampling (the IR's @logits); NULL when the model has none.
  int (*last_logits)(const int32_t *ids, float *logits);
  /// Frees the arenas.
  void (*destroy)(void);

  /// Optional (0 / NULL when the program does not provide it; these fields
  /// come last so that an initializer without them leaves them zero): every
  /// parameter in declaration order with its shape. Without it the driver
  /// derives the parameters from the state table (whole ZRT_STATE_PARAM
  /// states, members of groups with a sharded ZRT_STATE_PARAM state) and
  /// exports them as 1-D tensors; --import then checks element counts only.
  int num_param_infos;
  const zrt_param_info *param_infos;

  /// Optional (NULL when the program does not provide it): what the passes
  /// decided, as one JSON object read from the partitioned IR
  /// (lib/Conversion/CompileInfo.cpp: precision, optimizer settings,
  /// clipping, shard groups, collectives per function with their buckets
  /// and async start/wait pairs, the compiler's version and flags). The
  /// program's --print-config prints it.
  const char *compile_info;
  /// Optional (NULL unless the step is loss-scaled: fp16-mixed): sets S,
  /// the factor forward_backward multiplies the loss by before the
  /// backward (1 until set), so the gradients it accumulates are S times
  /// the true ones; optimizer_step must then get grad_scale = 1/(k·S).
  /// The driver runs dynamic loss scaling with it (runtime/README.md,
  /// "fp16-mixed"). Errors: ZRT_ERR_INVALID_ARGUMENT unless S is finite
  /// and > 0.
  int (*set_loss_scale)(float scale);

  /// Optional (0 / NULL for token models, whose forward takes (ids, targets)
  /// through `forward` / `forward_backward` above): the inputs of an array
  /// model, in the order of its @forward's arguments. An array model sets
  /// `forward` and `forward_backward` to NULL, `seq` to 1 (one row is one
  /// sample), `vocab` / `padded_vocab` to 0, and provides the two functions
  /// below instead, which take `inputs[i]`: the host address of this rank's
  /// micro-batch of input i, shaped and typed as inputs[i] says. Same
  /// results and errors as forward / forward_backward.
  int num_inputs;
  const zrt_input_desc *inputs;
  int (*forward_inputs)(const void *const *inputs, float *loss);
  int (*forward_backward_inputs)(const void *const *inputs, float *loss);

  /// Optional (0 or 1: no tensor axis): M, the tensor axis of the mesh
  /// N_d x M the program was cut for (zero-tensor-parallel; world_size is
  /// N = N_d x M). The driver makes the mesh (zrt_mesh_init(M)) before
  /// init() and feeds the M ranks of a tensor group the same micro-batch.
  int tensor_size;
  /// Optional (NULL when tensor_size <= 1): num_param_infos entries, the
  /// tensor cut of param_infos[i] (zrt_param_cut).
  const zrt_param_cut *param_cuts;
} zrt_model_desc;

/// Defined by the generated code: the description of the compiled step.
const zrt_model_desc *zrt_model_get(void);

/// The training driver (runtime/src/driver/driver.cpp): parses the command line,
/// starts MPI, checks the model against the launch (world size), trains, and
/// returns the process exit code. See runtime/README.md for the flags.
int zrt_train_main(int argc, char **argv, const zrt_model_desc *model);

#ifdef __cplusplus
}
#endif

#endif /* ZRT_MODEL_H */
