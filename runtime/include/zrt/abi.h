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

#include <stdint.h>

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
  ZRT_MEM_CONSTANTS = 7,      ///< Tables computed once at init (RoPE cos/sin).
  ZRT_MEM_NUM_KINDS = 8,      ///< Number of kinds (not a kind).
};

/// What a state tensor holds (ZeRO's model-state categories).
enum zrt_state_kind {
  ZRT_STATE_PARAM = 0,      ///< Parameter (full, or this rank's shard at stage 3).
  ZRT_STATE_GRAD = 1,       ///< Gradient accumulator (shard at stages 2-3).
  ZRT_STATE_MASTER = 2,     ///< f32 master weights (mixed precision; shard at 1-3).
  ZRT_STATE_EXP_AVG = 3,    ///< AdamW first moment (shard at stages 1-3).
  ZRT_STATE_EXP_AVG_SQ = 4, ///< AdamW second moment (shard at stages 1-3).
};

/*===----------------------------------------------------------------------===//
// Workspace sizes (floats or 32-bit words); -1 for negative sizes or on
// int64 overflow.
//===----------------------------------------------------------------------===*/

/// f32 elements of one row chunk of zrt_matmul_bf16 on the CPU: the widened
/// rows of op(A) and of C together (K + N floats per row of C) stay within
/// this budget (64 MiB), so the workspace does not grow with M.
#define ZRT_MATMUL_BF16_CHUNK_FLOATS ((int64_t)1 << 24)

/// Rows of C one chunk of the CPU's zrt_matmul_bf16 covers: as many as fit
/// in `chunk_floats` at K + N floats each, at least 1, at most M (1 when
/// M <= 0).
static inline int64_t zrt_abi_matmul_bf16_chunk_rows(int64_t M, int64_t N,
                                                     int64_t K,
                                                     int64_t chunk_floats) {
  const int64_t per = K + N > 0 ? K + N : 1;
  int64_t rows = chunk_floats / per;
  if (rows < 1)
    rows = 1;
  return rows < M ? rows : (M > 0 ? M : 1);
}

/// zrt_matmul_bf16_workspace with a chunk budget: K*N (one widened op(B)) +
/// (has_bias ? N : 0) + rows*(K + N) floats (a chunk of widened op(A) rows
/// and f32 C rows), rows = zrt_abi_matmul_bf16_chunk_rows; the same for
/// every batch size (the matrices of a batch run one after another).
static inline int64_t zrt_abi_matmul_bf16_workspace(int64_t batch, int64_t M,
                                                    int64_t N, int64_t K,
                                                    int has_bias,
                                                    int64_t chunk_floats) {
  int64_t kn, per, chunk, total;
  int64_t rows;
  if (batch < 0 || M < 0 || N < 0 || K < 0)
    return -1;
  rows = zrt_abi_matmul_bf16_chunk_rows(M, N, K, chunk_floats);
  if (__builtin_mul_overflow(K, N, &kn) || __builtin_add_overflow(K, N, &per) ||
      __builtin_mul_overflow(rows, per, &chunk) ||
      __builtin_add_overflow(kn, chunk, &total) ||
      __builtin_add_overflow(total, has_bias ? N : 0, &total))
    return -1;
  return total;
}

/// zrt_attention_workspace: 2 T^2 + T floats.
static inline int64_t zrt_abi_attention_workspace(int64_t T) {
  int64_t tt, out;
  if (T < 0 || __builtin_mul_overflow(T, T, &tt) ||
      __builtin_mul_overflow(tt, (int64_t)2, &out) ||
      __builtin_add_overflow(out, T, &out))
    return -1;
  return out;
}

/// zrt_attention_workspace_bf16: zrt_abi_attention_workspace(T) + 8 T D
/// floats (the f32 workspace, then one (batch, head) slice [T, D] each of q,
/// k, v, out, dout, dq, dk, dv widened to f32 on the CPU).
static inline int64_t zrt_abi_attention_workspace_bf16(int64_t T, int64_t D) {
  const int64_t base = zrt_abi_attention_workspace(T);
  int64_t td, slices, out;
  if (base < 0 || D < 0 || __builtin_mul_overflow(T, D, &td) ||
      __builtin_mul_overflow(td, (int64_t)8, &slices) ||
      __builtin_add_overflow(base, slices, &out))
    return -1;
  return out;
}

/// zrt_embedding_backward_bf16_workspace: N + V + 1 32-bit words (a stable
/// counting sort of the N positions by id over V ids).
static inline int64_t zrt_abi_embedding_backward_bf16_workspace(int64_t N,
                                                                int64_t V) {
  int64_t total;
  if (N < 0 || V < 0 || __builtin_add_overflow(N, V, &total) ||
      __builtin_add_overflow(total, (int64_t)1, &total))
    return -1;
  return total;
}

#endif /* ZRT_ABI_H */
