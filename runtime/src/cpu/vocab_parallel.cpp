//===- vocab_parallel.cpp - vocabulary-parallel embedding and loss --------===//
//
// The CPU kernels of zrt/vocab_parallel.h: a tensor rank's part of an
// embedding lookup and of its gradient over a table cut by rows, and the
// per-row statistics of Megatron's vocabulary-parallel cross-entropy
// (row maxima, softmax denominators and target logits over this rank's
// columns; the loss from their sums over the tensor axis) with their
// gradients. Sums accumulate in double, as zrt_cross_entropy_padded's.
//
//===----------------------------------------------------------------------===//

#include "common/internal.h"
#include "common/vocab_parallel_args.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>

namespace {

/// The argument checks (common/vocab_parallel_args.h, shared with the CUDA
/// backend), then the ids' range [0, Vl·parts).
int checkEmbedding(const char *fn, const void *a, const int32_t *ids,
                   const void *c, int64_t N, int64_t Vl, int64_t C,
                   int64_t part, int64_t parts) {
  if (int st = zrt::checkVocabEmbeddingArgs(fn, a, ids, c, N, Vl, C, part,
                                            parts, zrt::fail))
    return st;
  const int64_t whole = Vl * parts;
  for (int64_t i = 0; i < N; ++i)
    if (ids[i] < 0 || ids[i] >= whole)
      return zrt::fail(ZRT_ERR_OUT_OF_RANGE,
                       "%s: ids[%lld] = %d is outside the vocabulary [0, "
                       "%lld)",
                       fn, (long long)i, ids[i], (long long)whole);
  return ZRT_OK;
}

/// The class columns of this rank's [Vl] logits: [0, cols).
int64_t classColumns(int64_t Vl, int64_t classes, int64_t part) {
  const int64_t first = part * Vl;
  return classes <= first ? 0 : std::min(Vl, classes - first);
}

/// Counts the rows that take part; ZRT_ERR_OUT_OF_RANGE for a counted
/// target outside [0, classes).
int countRows(const char *fn, const int32_t *targets, int64_t N,
              int64_t classes, int hasIgnore, int32_t ignore,
              int64_t *count) {
  int64_t c = 0;
  for (int64_t i = 0; i < N; ++i) {
    if (hasIgnore && targets[i] == ignore)
      continue;
    if (targets[i] < 0 || targets[i] >= classes)
      return zrt::fail(ZRT_ERR_OUT_OF_RANGE,
                       "%s: targets[%lld] = %d is outside [0, %lld)%s", fn,
                       (long long)i, targets[i], (long long)classes,
                       hasIgnore ? " and is not ignore_index" : "");
    ++c;
  }
  *count = c;
  return ZRT_OK;
}

} // namespace

extern "C" {

int zrt_vocab_embedding(const float *table, const int32_t *ids, float *out,
                        int64_t N, int64_t Vl, int64_t C, int64_t part,
                        int64_t parts) {
  if (int st = checkEmbedding("zrt_vocab_embedding", table, ids, out, N, Vl,
                              C, part, parts))
    return st;
  const int64_t first = part * Vl;
  const size_t rowBytes = static_cast<size_t>(C) * sizeof(float);
#pragma omp parallel for schedule(static) if (N * C > zrt::kParallelGrain)
  for (int64_t i = 0; i < N; ++i) {
    const int64_t v = static_cast<int64_t>(ids[i]) - first;
    if (v >= 0 && v < Vl)
      std::memcpy(out + i * C, table + v * C, rowBytes);
    else
      std::memset(out + i * C, 0, rowBytes);
  }
  return ZRT_OK;
}

int zrt_vocab_embedding_backward(const float *dout, const int32_t *ids,
                                 float *dtable, int64_t N, int64_t Vl,
                                 int64_t C, int64_t part, int64_t parts) {
  if (int st = checkEmbedding("zrt_vocab_embedding_backward", dout, ids,
                              dtable, N, Vl, C, part, parts))
    return st;
  std::memset(dtable, 0, static_cast<size_t>(Vl * C) * sizeof(float));
  const int64_t first = part * Vl;
  // Column blocks in parallel; every thread walks the positions in order,
  // so the sums do not depend on the thread count.
  constexpr int64_t kBlock = 64;
  const int64_t nblocks = (C + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static) if (N * C > zrt::kParallelGrain)
  for (int64_t blk = 0; blk < nblocks; ++blk) {
    const int64_t j0 = blk * kBlock, j1 = std::min(C, j0 + kBlock);
    for (int64_t i = 0; i < N; ++i) {
      const int64_t v = static_cast<int64_t>(ids[i]) - first;
      if (v < 0 || v >= Vl)
        continue;
      float *dst = dtable + v * C;
      const float *src = dout + i * C;
      for (int64_t j = j0; j < j1; ++j)
        dst[j] += src[j];
    }
  }
  return ZRT_OK;
}

int zrt_vocab_max(const float *logits, float *out, int64_t N, int64_t Vl,
                  int64_t classes, int64_t part) {
  if (int st = zrt::checkVocabLogitsArgs("zrt_vocab_max", logits, out, out, out,
                                         out, N, Vl, classes, part, zrt::fail))
    return st;
  const int64_t cols = classColumns(Vl, classes, part);
#pragma omp parallel for schedule(static) if (N * Vl > zrt::kParallelGrain)
  for (int64_t n = 0; n < N; ++n) {
    const float *row = logits + n * Vl;
    float mx = -FLT_MAX;
    for (int64_t j = 0; j < cols; ++j)
      mx = std::fmax(mx, row[j]);
    out[n] = mx;
  }
  return ZRT_OK;
}

int zrt_vocab_exp_sums(const float *logits, const int32_t *targets,
                       const float *max, float *out, int64_t N, int64_t Vl,
                       int64_t classes, int64_t part) {
  if (int st = zrt::checkVocabLogitsArgs("zrt_vocab_exp_sums", logits, targets,
                                         max, out, out, N, Vl, classes, part,
                                         zrt::fail))
    return st;
  const int64_t cols = classColumns(Vl, classes, part), first = part * Vl;
#pragma omp parallel for schedule(static) if (N * Vl > zrt::kParallelGrain)
  for (int64_t n = 0; n < N; ++n) {
    const float *row = logits + n * Vl;
    double sum = 0.0;
    for (int64_t j = 0; j < cols; ++j)
      sum += std::exp(static_cast<double>(row[j] - max[n]));
    const int64_t t = static_cast<int64_t>(targets[n]) - first;
    out[2 * n] = static_cast<float>(sum);
    out[2 * n + 1] = t >= 0 && t < cols ? row[t] : 0.0f;
  }
  return ZRT_OK;
}

int zrt_vocab_exp_sums_backward(const float *logits, const int32_t *targets,
                                const float *max, const float *grad,
                                float *dlogits, int64_t N, int64_t Vl,
                                int64_t classes, int64_t part) {
  if (int st = zrt::checkVocabLogitsArgs("zrt_vocab_exp_sums_backward", logits,
                                         targets, max, grad, dlogits, N, Vl,
                                         classes, part, zrt::fail))
    return st;
  const int64_t cols = classColumns(Vl, classes, part), first = part * Vl;
#pragma omp parallel for schedule(static) if (N * Vl > zrt::kParallelGrain)
  for (int64_t n = 0; n < N; ++n) {
    const float *row = logits + n * Vl;
    float *drow = dlogits + n * Vl;
    const float gs = grad[2 * n], gt = grad[2 * n + 1];
    for (int64_t j = 0; j < cols; ++j)
      drow[j] = gs * std::exp(row[j] - max[n]);
    for (int64_t j = cols; j < Vl; ++j)
      drow[j] = 0.0f;
    const int64_t t = static_cast<int64_t>(targets[n]) - first;
    if (t >= 0 && t < cols)
      drow[t] += gt;
  }
  return ZRT_OK;
}

int zrt_vocab_loss(const float *sums, const float *max, const int32_t *targets,
                   float *loss, int64_t N, int64_t classes, int has_ignore,
                   int32_t ignore) {
  const char *fn = "zrt_vocab_loss";
  if (int st = zrt::checkVocabLossArgs(fn, sums, max, targets, loss, N,
                                       classes, zrt::fail))
    return st;
  int64_t count = 0;
  if (int st = countRows(fn, targets, N, classes, has_ignore, ignore, &count))
    return st;
  double total = 0.0;
  for (int64_t n = 0; n < N; ++n) {
    if (has_ignore && targets[n] == ignore)
      continue;
    total += std::log(static_cast<double>(sums[2 * n])) -
             (static_cast<double>(sums[2 * n + 1]) - max[n]);
  }
  *loss = static_cast<float>(total / static_cast<double>(count));
  return ZRT_OK;
}

int zrt_vocab_loss_backward(const float *sums, const int32_t *targets,
                            const float *dloss, float *dsums, int64_t N,
                            int has_ignore, int32_t ignore) {
  const char *fn = "zrt_vocab_loss_backward";
  if (int st = zrt::checkVocabLossBackwardArgs(fn, sums, targets, dloss,
                                               dsums, N, zrt::fail))
    return st;
  int64_t count = 0;
  for (int64_t n = 0; n < N; ++n)
    count += !(has_ignore && targets[n] == ignore);
  const float g = count > 0 ? *dloss / static_cast<float>(count) : 0.0f;
  for (int64_t n = 0; n < N; ++n) {
    const bool counted = !(has_ignore && targets[n] == ignore);
    dsums[2 * n] = counted ? g / sums[2 * n] : 0.0f;
    dsums[2 * n + 1] = counted ? -g : 0.0f;
  }
  return ZRT_OK;
}

} // extern "C"
