//===- decoder_args.h - argument rules of the decoder kernels ---*- C++ -*-===//
///
/// \file
/// The argument checks of zrt/decoder.h (RMSNorm, SiLU/SwiGLU, RoPE,
/// grouped-query attention, masked cross-entropy), written like
/// arg_checks.h — `fn` begins every message, `fail(status, fmt, ...)` is
/// the backend's — so that a CUDA backend can share them. Checks look at
/// sizes and pointers only; targets are checked by the kernels. Internal
/// to the runtime.
///
//===----------------------------------------------------------------------===//

#ifndef ZRT_SRC_DECODER_ARGS_H
#define ZRT_SRC_DECODER_ARGS_H

#include "common/arg_checks.h"
#include "common/attention_args.h"

#include <cmath>

#define ZRT_DEC_REQUIRE(cond, ...)                                             \
  do {                                                                         \
    if (!(cond))                                                               \
      return fail(ZRT_ERR_INVALID_ARGUMENT, __VA_ARGS__);                      \
  } while (0)
#define ZRT_DEC_REQUIRE_BUF(fn, n, ptr)                                        \
  ZRT_DEC_REQUIRE((n) == 0 || (ptr) != nullptr, "%s: %s is NULL", fn, #ptr)

namespace zrt {

/// The RMSNorm kernels: "<fn>: need N >= 0 and C >= 1 (N=<N> C=<C>)",
/// "<fn>: eps must be positive and finite", then buffers x (the input, or
/// the first of a, b) and out (dx may be NULL in the backward: pass
/// `out` = nullptr and n = 0 for it).
template <typename Fail>
int checkRmsNormArgs(const char *fn, const void *x, const void *out,
                     int64_t outRows, int64_t N, int64_t C, float eps,
                     Fail fail) {
  ZRT_DEC_REQUIRE(N >= 0 && C >= 1,
                  "%s: need N >= 0 and C >= 1 (N=%lld C=%lld)", fn,
                  (long long)N, (long long)C);
  ZRT_DEC_REQUIRE(eps > 0.0f && std::isfinite(eps),
                  "%s: eps must be positive and finite", fn);
  ZRT_DEC_REQUIRE_BUF(fn, N, x);
  ZRT_DEC_REQUIRE_BUF(fn, outRows, out);
  return ZRT_OK;
}

/// zrt_silu / zrt_swiglu and their backwards: checkCount, then each of the
/// `count` required buffers.
template <typename Fail>
int checkGatedArgs(const char *fn, int64_t n, const void *const *ptrs,
                   const char *const *names, int count, Fail fail) {
  if (int st = checkCount(fn, n, fail))
    return st;
  for (int i = 0; i < count; ++i)
    ZRT_DEC_REQUIRE(n == 0 || ptrs[i] != nullptr, "%s: %s is NULL", fn,
                    names[i]);
  return ZRT_OK;
}

/// zrt_rope_table: "<fn>: need T >= 0 and half >= 1 (T=<T> half=<half>)",
/// "<fn>: theta must be positive and finite", the scaling's factor > 0,
/// 0 < low < high, original > 0, then buffer table.
template <typename Fail>
int checkRopeTableArgs(const char *fn, const void *table, int64_t T,
                       int64_t half, double theta,
                       const zrt_rope_scaling *scaling, Fail fail) {
  ZRT_DEC_REQUIRE(T >= 0 && half >= 1,
                  "%s: need T >= 0 and half >= 1 (T=%lld half=%lld)", fn,
                  (long long)T, (long long)half);
  ZRT_DEC_REQUIRE(theta > 0.0 && std::isfinite(theta),
                  "%s: theta must be positive and finite", fn);
  if (scaling) {
    ZRT_DEC_REQUIRE(scaling->factor > 0.0 && std::isfinite(scaling->factor),
                    "%s: scaling factor must be positive", fn);
    ZRT_DEC_REQUIRE(scaling->low_freq_factor > 0.0 &&
                        scaling->high_freq_factor > scaling->low_freq_factor &&
                        std::isfinite(scaling->high_freq_factor),
                    "%s: need 0 < low_freq_factor < high_freq_factor", fn);
    ZRT_DEC_REQUIRE(scaling->original_max_positions > 0,
                    "%s: original_max_positions must be positive", fn);
  }
  ZRT_DEC_REQUIRE_BUF(fn, T, table);
  return ZRT_OK;
}

/// zrt_rope(_bf16): "<fn>: need B >= 0, H >= 0, T >= 1 and even D >= 2
/// (...)", "<fn>: layout <l> is neither ZRT_ROPE_ROTATE_HALF nor
/// ZRT_ROPE_INTERLEAVED", then buffers x, table, out.
template <typename Fail>
int checkRopeArgs(const char *fn, const void *x, const void *table,
                  const void *out, int64_t B, int64_t T, int64_t H, int64_t D,
                  int layout, Fail fail) {
  ZRT_DEC_REQUIRE(B >= 0 && H >= 0 && T >= 1 && D >= 2 && D % 2 == 0,
                  "%s: need B >= 0, H >= 0, T >= 1 and even D >= 2 (B=%lld "
                  "T=%lld H=%lld D=%lld)",
                  fn, (long long)B, (long long)T, (long long)H, (long long)D);
  ZRT_DEC_REQUIRE(layout == ZRT_ROPE_ROTATE_HALF ||
                      layout == ZRT_ROPE_INTERLEAVED,
                  "%s: layout %d is neither ZRT_ROPE_ROTATE_HALF nor "
                  "ZRT_ROPE_INTERLEAVED",
                  fn, layout);
  const int64_t n = B * T * H * D;
  ZRT_DEC_REQUIRE_BUF(fn, n, x);
  ZRT_DEC_REQUIRE_BUF(fn, n, table);
  ZRT_DEC_REQUIRE_BUF(fn, n, out);
  return ZRT_OK;
}

/// The grouped-query forms: "<fn>: need 1 <= Hkv dividing H (H=<H>
/// Hkv=<Hkv>)" (H = 0 accepts any Hkv >= 1), then the checks of the
/// multi-head form (checkAttentionArgs).
template <typename Fail>
int checkKvHeads(const char *fn, int64_t H, int64_t Hkv, Fail fail) {
  ZRT_DEC_REQUIRE(Hkv >= 1 && H % Hkv == 0,
                  "%s: need 1 <= Hkv dividing H (H=%lld Hkv=%lld)", fn,
                  (long long)H, (long long)Hkv);
  return ZRT_OK;
}

/// The masked cross-entropy: "<fn>: need N >= 0 and 1 <= num_classes <= V
/// (...)", then buffers logits, targets and out (the loss or dlogits).
template <typename Fail>
int checkMaskedCrossEntropyArgs(const char *fn, const void *logits,
                                const void *targets, const void *out, int64_t N,
                                int64_t V, int64_t numClasses, Fail fail) {
  ZRT_DEC_REQUIRE(N >= 0 && V >= 1 && numClasses >= 1 && numClasses <= V,
                  "%s: need N >= 0 and 1 <= num_classes <= V (N=%lld V=%lld "
                  "num_classes=%lld)",
                  fn, (long long)N, (long long)V, (long long)numClasses);
  ZRT_DEC_REQUIRE_BUF(fn, N, logits);
  ZRT_DEC_REQUIRE_BUF(fn, N, targets);
  ZRT_DEC_REQUIRE(out != nullptr, "%s: the output is NULL", fn);
  return ZRT_OK;
}

} // namespace zrt

#undef ZRT_DEC_REQUIRE_BUF
#undef ZRT_DEC_REQUIRE

#endif // ZRT_SRC_DECODER_ARGS_H
