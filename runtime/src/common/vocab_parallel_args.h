//===- vocab_parallel_args.h - argument rules of zrt_vocab_* ---*- C++ -*-===//
///
/// \file
/// The argument checks of zrt/vocab_parallel.h, written like arg_checks.h
/// (`fn` begins every message, `fail(status, fmt, ...)` is the backend's)
/// so that the CPU backend (runtime/src/cpu/vocab_parallel.cpp) and the
/// CUDA backend (runtime/cuda/vocab_parallel.cu) accept and reject the same
/// calls with the same status and message. They look at sizes and pointers
/// only: ids and targets are data, checked by each backend's kernels (the
/// CPU before it writes anything, the CUDA backend through its device error
/// word). Internal to the runtime.
///
//===----------------------------------------------------------------------===//

#ifndef ZRT_SRC_VOCAB_PARALLEL_ARGS_H
#define ZRT_SRC_VOCAB_PARALLEL_ARGS_H

#include "zrt/zrt.h"

#include <cstdint>

// Local to this header (#undef at its end).
#define ZRT_VP_REQUIRE(cond, ...)                                              \
  do {                                                                         \
    if (!(cond))                                                               \
      return fail(ZRT_ERR_INVALID_ARGUMENT, __VA_ARGS__);                      \
  } while (0)

namespace zrt {

/// The rules every zrt_vocab_* call shares: "<fn>: a buffer is NULL" (any
/// of a, b, c), "<fn>: N = <N> and Vl = <Vl> must be >= 1", "<fn>: part
/// <part> is negative".
template <typename Fail>
int checkVocabCommon(const char *fn, const void *a, const void *b,
                     const void *c, int64_t N, int64_t Vl, int64_t part,
                     Fail fail) {
  ZRT_VP_REQUIRE(a && b && c, "%s: a buffer is NULL", fn);
  ZRT_VP_REQUIRE(N >= 1 && Vl >= 1, "%s: N = %lld and Vl = %lld must be >= 1",
                 fn, (long long)N, (long long)Vl);
  ZRT_VP_REQUIRE(part >= 0, "%s: part %lld is negative", fn, (long long)part);
  return ZRT_OK;
}

/// zrt_vocab_max, zrt_vocab_exp_sums(_backward): checkVocabCommon on a, b,
/// c, then the extra buffers d and e (either may repeat one before), then
/// "<fn>: classes = <classes> must be >= 1".
template <typename Fail>
int checkVocabLogitsArgs(const char *fn, const void *a, const void *b,
                         const void *c, const void *d, const void *e,
                         int64_t N, int64_t Vl, int64_t classes, int64_t part,
                         Fail fail) {
  if (int st = checkVocabCommon(fn, a, b, c, N, Vl, part, fail))
    return st;
  ZRT_VP_REQUIRE(d && e, "%s: a buffer is NULL", fn);
  ZRT_VP_REQUIRE(classes >= 1, "%s: classes = %lld must be >= 1", fn,
                 (long long)classes);
  return ZRT_OK;
}

/// zrt_vocab_embedding(_backward): checkVocabCommon on the three buffers,
/// "<fn>: C = <C> must be >= 1", "<fn>: part <part> is outside [0,
/// <parts>)". The ids' range [0, Vl·parts) is the kernels' check.
template <typename Fail>
int checkVocabEmbeddingArgs(const char *fn, const void *a, const void *ids,
                            const void *c, int64_t N, int64_t Vl, int64_t C,
                            int64_t part, int64_t parts, Fail fail) {
  if (int st = checkVocabCommon(fn, a, ids, c, N, Vl, part, fail))
    return st;
  ZRT_VP_REQUIRE(C >= 1, "%s: C = %lld must be >= 1", fn, (long long)C);
  ZRT_VP_REQUIRE(part < parts, "%s: part %lld is outside [0, %lld)", fn,
                 (long long)part, (long long)parts);
  return ZRT_OK;
}

/// zrt_vocab_loss: checkVocabCommon on sums, max, targets (Vl = 1, part =
/// 0), "<fn>: loss is NULL", "<fn>: classes = <classes> must be >= 1". The
/// counted targets' range [0, classes) is the kernels' check.
template <typename Fail>
int checkVocabLossArgs(const char *fn, const void *sums, const void *max,
                       const void *targets, const void *loss, int64_t N,
                       int64_t classes, Fail fail) {
  if (int st = checkVocabCommon(fn, sums, max, targets, N, 1, 0, fail))
    return st;
  ZRT_VP_REQUIRE(loss, "%s: loss is NULL", fn);
  ZRT_VP_REQUIRE(classes >= 1, "%s: classes = %lld must be >= 1", fn,
                 (long long)classes);
  return ZRT_OK;
}

/// zrt_vocab_loss_backward: checkVocabCommon on sums, targets, dloss (Vl =
/// 1, part = 0), then "<fn>: dsums is NULL".
template <typename Fail>
int checkVocabLossBackwardArgs(const char *fn, const void *sums,
                               const void *targets, const void *dloss,
                               const void *dsums, int64_t N, Fail fail) {
  if (int st = checkVocabCommon(fn, sums, targets, dloss, N, 1, 0, fail))
    return st;
  ZRT_VP_REQUIRE(dsums, "%s: dsums is NULL", fn);
  return ZRT_OK;
}

} // namespace zrt

#undef ZRT_VP_REQUIRE

#endif // ZRT_SRC_VOCAB_PARALLEL_ARGS_H
