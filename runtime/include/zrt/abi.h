/*===- zrt/abi.h - what the compiler and the runtime share -------*- C -*-===//
//
// The constants of the zrt ABI that the generated code and the compiler's
// decisions depend on beyond the function signatures: the arena kinds, the
// state kinds and the arenas' alignment. Header-only C with no dependency,
// so the compiler (zero-layout-states, convert-train-to-emitc) includes it
// as well as the runtime: the two never keep copies of these numbers.
//
//===----------------------------------------------------------------------===*/
#ifndef ZRT_ABI_H
#define ZRT_ABI_H

/// Alignment in bytes of every arena block and of every state placed in an
/// arena (zrt_arena_create; the compiler's state layout and buffer plan).
#define ZRT_ARENA_ALIGNMENT 64

/// What an arena holds; used for the byte counters and by the compiler's
/// layout (the zero dialect's `#zero.slot` arenas are numbered the same).
enum zrt_mem_kind {
  ZRT_MEM_PARAMETERS = 0,     ///< Working (f32 or bf16) parameters.
  ZRT_MEM_GRADIENTS = 1,      ///< Gradients.
  ZRT_MEM_MASTER_WEIGHTS = 2, ///< f32 master weights (mixed precision).
  ZRT_MEM_MOMENTS = 3,        ///< Optimizer state (AdamW m and v).
  ZRT_MEM_ACTIVATIONS = 4,    ///< Saved activations.
  ZRT_MEM_TEMPORARIES = 5,    ///< Scratch space.
  ZRT_MEM_COMM_BUFFERS = 6,   ///< Gather/scatter staging buffers.
  ZRT_MEM_NUM_KINDS = 7,      ///< Number of kinds (not a kind).
};

/// What a state tensor holds (ZeRO's model-state categories).
enum zrt_state_kind {
  ZRT_STATE_PARAM = 0,      ///< Parameter (full, or this rank's shard at stage 3).
  ZRT_STATE_GRAD = 1,       ///< Gradient accumulator (shard at stages 2-3).
  ZRT_STATE_MASTER = 2,     ///< f32 master weights (mixed precision; shard at 1-3).
  ZRT_STATE_EXP_AVG = 3,    ///< AdamW first moment (shard at stages 1-3).
  ZRT_STATE_EXP_AVG_SQ = 4, ///< AdamW second moment (shard at stages 1-3).
};

#endif /* ZRT_ABI_H */
