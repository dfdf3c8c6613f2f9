//===- loss.cpp - Embedding, cross-entropy and MSE -------------------------===//

#include "common/arg_checks.h"
#include "common/internal.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace {

int checkIds(const char *fn, const int32_t *ids, int64_t N, int64_t V) {
  for (int64_t i = 0; i < N; ++i)
    if (ids[i] < 0 || ids[i] >= V)
      return zrt::fail(ZRT_ERR_OUT_OF_RANGE,
                       "%s: ids[%lld] = %d is outside [0, %lld)", fn,
                       (long long)i, ids[i], (long long)V);
  return ZRT_OK;
}

int checkTargets(const char *fn, const int32_t *targets, int64_t N, int64_t V,
                 int32_t ignore, int64_t *count) {
  int64_t c = 0;
  for (int64_t i = 0; i < N; ++i) {
    if (targets[i] == ignore)
      continue;
    if (targets[i] < 0 || targets[i] >= V)
      return zrt::fail(ZRT_ERR_OUT_OF_RANGE,
                       "%s: targets[%lld] = %d is outside [0, %lld) and is "
                       "not ignore_index (%d)",
                       fn, (long long)i, targets[i], (long long)V, ignore);
    ++c;
  }
  *count = c;
  return ZRT_OK;
}

// Row max and log(sum_j exp(row_j - max)); the loss is then
// logSum - (row_t - max), which never adds a large max back (as
// torch.log_softmax).
void rowLse(const float *row, int64_t V, float *maxOut, double *logSumOut) {
  float mx = -INFINITY;
  for (int64_t j = 0; j < V; ++j)
    mx = row[j] > mx ? row[j] : mx;
  double sum = 0.0;
  for (int64_t j = 0; j < V; ++j)
    sum += std::exp(static_cast<double>(row[j] - mx));
  *maxOut = mx;
  *logSumOut = std::log(sum);
}

} // namespace

extern "C" {

int zrt_embedding(const float *table, const int32_t *ids, float *out,
                  int64_t N, int64_t V, int64_t C) {
  const char *fn = "zrt_embedding";
  if (int st = zrt::checkEmbeddingArgs(fn, table, ids, out, N, V, C, zrt::fail))
    return st;
  if (int st = checkIds(fn, ids, N, V))
    return st;
  const size_t rowBytes = static_cast<size_t>(C) * sizeof(float);
#pragma omp parallel for schedule(static) if (N * C > zrt::kParallelGrain)
  for (int64_t i = 0; i < N; ++i)
    std::memcpy(out + i * C, table + static_cast<int64_t>(ids[i]) * C,
                rowBytes);
  return ZRT_OK;
}

int zrt_embedding_backward(const float *dout, const int32_t *ids,
                           float *dtable, int64_t N, int64_t V, int64_t C) {
  const char *fn = "zrt_embedding_backward";
  if (int st = zrt::checkEmbeddingBackwardArgs(fn, dout, ids, dtable, N, V, C,
                                               zrt::fail))
    return st;
  if (int st = checkIds(fn, ids, N, V))
    return st;
  zrt_fill(dtable, 0.0f, V * C);
  // Column blocks in parallel; every thread walks all ids in order, so the
  // summation order (and result) is independent of the thread count.
  constexpr int64_t kBlock = 64;
  const int64_t nblocks = (C + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static) if (N * C > zrt::kParallelGrain)
  for (int64_t blk = 0; blk < nblocks; ++blk) {
    const int64_t j0 = blk * kBlock, j1 = j0 + kBlock < C ? j0 + kBlock : C;
    for (int64_t i = 0; i < N; ++i) {
      float *dst = dtable + static_cast<int64_t>(ids[i]) * C;
      const float *src = dout + i * C;
      for (int64_t j = j0; j < j1; ++j)
        dst[j] += src[j];
    }
  }
  return ZRT_OK;
}

int zrt_embedding_bf16(const zrt_bf16 *table, const int32_t *ids,
                       zrt_bf16 *out, int64_t N, int64_t V, int64_t C) {
  const char *fn = "zrt_embedding_bf16";
  if (int st = zrt::checkEmbeddingArgs(fn, table, ids, out, N, V, C, zrt::fail))
    return st;
  if (int st = checkIds(fn, ids, N, V))
    return st;
  const size_t rowBytes = static_cast<size_t>(C) * sizeof(zrt_bf16);
#pragma omp parallel for schedule(static) if (N * C > zrt::kParallelGrain)
  for (int64_t i = 0; i < N; ++i)
    std::memcpy(out + i * C, table + static_cast<int64_t>(ids[i]) * C,
                rowBytes);
  return ZRT_OK;
}

int64_t zrt_embedding_backward_bf16_workspace(int64_t N, int64_t V) {
  return zrt::embeddingBackwardBf16Workspace(N, V);
}

// The positions are sorted by id (a stable counting sort in the
// workspace), then each id's row is summed in f32 over its positions in
// increasing order — the order in which zrt_embedding_backward adds them —
// and rounded once.
int zrt_embedding_backward_bf16(const zrt_bf16 *dout, const int32_t *ids,
                                zrt_bf16 *dtable, int64_t N, int64_t V,
                                int64_t C, void *workspace) {
  const char *fn = "zrt_embedding_backward_bf16";
  if (int st = zrt::checkEmbeddingBackwardArgs(fn, dout, ids, dtable, N, V, C,
                                               zrt::fail))
    return st;
  ZRT_REQUIRE(N <= INT32_MAX, "%s: N = %lld tokens exceed INT32_MAX", fn,
              (long long)N);
  if (int st = checkIds(fn, ids, N, V))
    return st;
  const int64_t words = zrt::embeddingBackwardBf16Workspace(N, V);
  ZRT_REQUIRE(words >= 0, "%s: size overflow", fn);
  zrt::FloatBuffer own;
  if (!workspace) {
    if (!own.reserve(words))
      return zrt::fail(ZRT_ERR_OUT_OF_MEMORY,
                       "%s: cannot allocate the [N + V + 1] workspace", fn);
    workspace = own.data;
  }
  int32_t *order = static_cast<int32_t *>(workspace), *end = order + N;
  // end[v] = one past the last sorted position of id v (end[-1] = 0).
  std::fill(end, end + V + 1, 0);
  for (int64_t i = 0; i < N; ++i)
    ++end[ids[i] + 1];
  for (int64_t v = 0; v < V; ++v)
    end[v + 1] += end[v];
  for (int64_t i = 0; i < N; ++i)
    order[end[ids[i]]++] = static_cast<int32_t>(i);
  // Now end[v] is where id v's positions end (and v + 1's begin).
  constexpr int64_t kBlock = 64;
#pragma omp parallel for schedule(dynamic, 64) if (N * C > zrt::kParallelGrain)
  for (int64_t v = 0; v < V; ++v) {
    const int64_t begin = v == 0 ? 0 : end[v - 1], stop = end[v];
    zrt_bf16 *dst = dtable + v * C;
    for (int64_t j0 = 0; j0 < C; j0 += kBlock) {
      const int64_t n = j0 + kBlock < C ? kBlock : C - j0;
      float acc[kBlock] = {};
      for (int64_t k = begin; k < stop; ++k) {
        const zrt_bf16 *src = dout + static_cast<int64_t>(order[k]) * C + j0;
        for (int64_t j = 0; j < n; ++j)
          acc[j] += zrt::toF32(src[j]);
      }
      for (int64_t j = 0; j < n; ++j)
        dst[j0 + j] = zrt::fromF32<zrt_bf16>(acc[j]);
    }
  }
  return ZRT_OK;
}

int zrt_cross_entropy(const float *logits, const int32_t *targets,
                      float *loss, int64_t N, int64_t V,
                      int32_t ignore_index) {
  const char *fn = "zrt_cross_entropy";
  if (int st = zrt::checkCrossEntropyArgs(fn, logits, targets, loss, N, V,
                                          zrt::fail))
    return st;
  int64_t count = 0;
  if (int st = checkTargets(fn, targets, N, V, ignore_index, &count))
    return st;
  // Fixed lanes of rows: the same bits for every thread count.
  const double total = zrt::fixedLaneSum(
      N, N * V > zrt::kParallelGrain, [&](int64_t b, int64_t e) {
        double t = 0.0;
        for (int64_t i = b; i < e; ++i) {
          if (targets[i] == ignore_index)
            continue;
          const float *row = logits + i * V;
          float mx;
          double logSum;
          rowLse(row, V, &mx, &logSum);
          t += logSum - static_cast<double>(row[targets[i]] - mx);
        }
        return t;
      });
  *loss = count > 0 ? static_cast<float>(total / static_cast<double>(count))
                    : std::numeric_limits<float>::quiet_NaN();
  return ZRT_OK;
}

int zrt_cross_entropy_backward(const float *logits, const int32_t *targets,
                               float dloss, float *dlogits, int64_t N,
                               int64_t V, int32_t ignore_index) {
  const char *fn = "zrt_cross_entropy_backward";
  if (int st = zrt::checkCrossEntropyBackwardArgs(fn, logits, targets, dlogits,
                                                  N, V, zrt::fail))
    return st;
  int64_t count = 0;
  if (int st = checkTargets(fn, targets, N, V, ignore_index, &count))
    return st;
  const float g = count > 0 ? dloss / static_cast<float>(count) : 0.0f;
#pragma omp parallel for schedule(static) if (N * V > zrt::kParallelGrain)
  for (int64_t i = 0; i < N; ++i) {
    float *drow = dlogits + i * V;
    if (targets[i] == ignore_index) {
      for (int64_t j = 0; j < V; ++j)
        drow[j] = 0.0f;
      continue;
    }
    const float *row = logits + i * V;
    float mx;
    double logSum;
    rowLse(row, V, &mx, &logSum);
    const float ls = static_cast<float>(logSum);
    for (int64_t j = 0; j < V; ++j)
      drow[j] = std::exp((row[j] - mx) - ls) * g;
    drow[targets[i]] -= g;
  }
  return ZRT_OK;
}

int zrt_mse(const float *pred, const float *target, float *loss, int64_t n) {
  if (int st = zrt::checkMseArgs("zrt_mse", pred, target, loss, n, zrt::fail))
    return st;
  const double total =
      zrt::fixedLaneSum(n, n > zrt::kParallelGrain, [&](int64_t b, int64_t e) {
        double t = 0.0;
        for (int64_t i = b; i < e; ++i) {
          const double d =
              static_cast<double>(pred[i]) - static_cast<double>(target[i]);
          t += d * d;
        }
        return t;
      });
  *loss = n > 0 ? static_cast<float>(total / static_cast<double>(n))
                : std::numeric_limits<float>::quiet_NaN();
  return ZRT_OK;
}

int zrt_mse_backward(const float *pred, const float *target, float dloss,
                     float *dpred, float *dtarget, int64_t n) {
  if (int st = zrt::checkMseBackwardArgs("zrt_mse_backward", pred, target, n,
                                         zrt::fail))
    return st;
  const float g = n > 0 ? 2.0f * dloss / static_cast<float>(n) : 0.0f;
#pragma omp parallel for simd schedule(static) if (n > zrt::kParallelGrain)
  for (int64_t i = 0; i < n; ++i) {
    float d = (pred[i] - target[i]) * g;
    if (dpred)
      dpred[i] = d;
    if (dtarget)
      dtarget[i] = -d;
  }
  return ZRT_OK;
}

} // extern "C"
