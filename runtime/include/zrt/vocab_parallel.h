/*===- zrt/vocab_parallel.h - vocabulary-parallel kernels ------*- C -*-===//
//
// The kernels of Megatron's vocabulary-parallel embedding and
// cross-entropy: the runtime side of the zero ops in
// dialects/Zero/ZeroVocabParallelOps.td, which `zero-vocab-parallel` forms.
// A [V, C] table (or LM-head weight) is cut by rows over the `parts` ranks
// of the tensor axis: rank `part` holds rows [part·Vl, (part+1)·Vl), and
// its logits are the same columns of the whole [N, V] logits. The
// reductions over the tensor axis between these calls are collectives of
// the program (zrt_all_reduce_axis), not of the kernels. Included by zrt.h;
// its conventions (row-major, element counts, status codes, OVERWRITE
// outputs) apply. f32 only: the lowering widens bf16 operands around them.
// Defined by both backends: the CPU's (runtime/src/cpu/vocab_parallel.cpp)
// and the CUDA backend's on device memory (runtime/cuda/vocab_parallel.cu;
// there `loss` and `dloss` are device pointers, and a bad id or target is
// reported by the next synchronizing call, zrt_cuda.h).
//
// Sources: Megatron-LM megatron/core/tensor_parallel/layers.py
// (VocabParallelEmbedding) and tensor_parallel/cross_entropy.py
// (_VocabParallelCrossEntropy).
//
//===----------------------------------------------------------------------===*/
#ifndef ZRT_VOCAB_PARALLEL_H
#define ZRT_VOCAB_PARALLEL_H

#include "zrt/zrt.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// out [N, C] (OVERWRITE): row i is table[ids[i] - part·Vl] when rank
/// `part` holds that row (part·Vl <= ids[i] < (part+1)·Vl), else zeros;
/// table [Vl, C] holds rows [part·Vl, (part+1)·Vl) of the whole table.
/// Errors: ZRT_ERR_INVALID_ARGUMENT (NULL buffers, negative sizes, part
/// outside [0, parts)), ZRT_ERR_OUT_OF_RANGE (an id outside
/// [0, Vl·parts), with its position).
int zrt_vocab_embedding(const float *table, const int32_t *ids, float *out,
                        int64_t N, int64_t Vl, int64_t C, int64_t part,
                        int64_t parts);

/// dtable [Vl, C] (OVERWRITE): dtable[v] = sum of dout[i] over the
/// positions i with ids[i] = part·Vl + v, added in increasing i (as
/// zrt_embedding_backward adds them); rows no id selects are zero.
/// Errors: as zrt_vocab_embedding.
int zrt_vocab_embedding_backward(const float *dout, const int32_t *ids,
                                 float *dtable, int64_t N, int64_t Vl,
                                 int64_t C, int64_t part, int64_t parts);

/// out [N] (OVERWRITE): the maximum of each row of logits [N, Vl] over the
/// columns j whose whole index part·Vl + j is below `classes`, or -FLT_MAX
/// when the rank holds none. Errors: ZRT_ERR_INVALID_ARGUMENT (NULL
/// buffers, N or Vl < 1, part < 0, classes < 1).
int zrt_vocab_max(const float *logits, float *out, int64_t N, int64_t Vl,
                  int64_t classes, int64_t part);

/// out [N, 2] (OVERWRITE): out[n, 0] = sum over the class columns j of
/// exp(logits[n, j] - max[n]) (accumulated in double), out[n, 1] =
/// logits[n, targets[n] - part·Vl] when this rank holds the target's
/// column and it is a class, else 0. max [N]: the whole row maxima.
/// Errors: as zrt_vocab_max.
int zrt_vocab_exp_sums(const float *logits, const int32_t *targets,
                       const float *max, float *out, int64_t N, int64_t Vl,
                       int64_t classes, int64_t part);

/// dlogits [N, Vl] (OVERWRITE): grad[n, 0]·exp(logits[n, j] - max[n]) +
/// grad[n, 1]·[part·Vl + j = targets[n]] on class columns, 0 on padding.
/// grad [N, 2]. Errors: as zrt_vocab_max.
int zrt_vocab_exp_sums_backward(const float *logits, const int32_t *targets,
                                const float *max, const float *grad,
                                float *dlogits, int64_t N, int64_t Vl,
                                int64_t classes, int64_t part);

/// *loss = (1/N') sum over the counted rows of log(sums[n, 0]) + max[n] -
/// sums[n, 1] (accumulated in double): the mean cross-entropy from the
/// whole denominators and target logits. With has_ignore, rows whose
/// target is `ignore` are not counted (N' = the others; NaN when none is,
/// as PyTorch); else N' = N. Errors: ZRT_ERR_INVALID_ARGUMENT (NULL
/// buffers, N < 1, classes < 1), ZRT_ERR_OUT_OF_RANGE (a counted target
/// outside [0, classes), with its position).
int zrt_vocab_loss(const float *sums, const float *max, const int32_t *targets,
                   float *loss, int64_t N, int64_t classes, int has_ignore,
                   int32_t ignore);

/// dsums [N, 2] (OVERWRITE): dsums[n, 0] = *dloss / (N'·sums[n, 0]),
/// dsums[n, 1] = -*dloss / N' for the counted rows, 0 for ignored ones.
/// Errors: ZRT_ERR_INVALID_ARGUMENT (NULL buffers, N < 1).
int zrt_vocab_loss_backward(const float *sums, const int32_t *targets,
                            const float *dloss, float *dsums, int64_t N,
                            int has_ignore, int32_t ignore);

#ifdef __cplusplus
} // extern "C"
#endif

#endif /* ZRT_VOCAB_PARALLEL_H */
