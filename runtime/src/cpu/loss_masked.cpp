//===- loss_masked.cpp - Cross-entropy with ignore_index over padded logits
//===//
//
// zrt_cross_entropy_masked and its backward (f32 and bf16 logits; see
// zrt/decoder.h): zrt_cross_entropy_padded's classes (the first
// num_classes columns) with zrt_cross_entropy's ignore_index (rows whose
// target is ignore_index count neither in the sum nor in the mean).
// Row statistics max-subtracted, the loss accumulated in double.
//
//===----------------------------------------------------------------------===//

#include "common/decoder_args.h"
#include "common/internal.h"

#include <cmath>
#include <limits>

namespace {

/// Counts the rows that take part; ZRT_ERR_OUT_OF_RANGE for a counted
/// target outside [0, classes).
int countTargets(const char *fn, const int32_t *targets, int64_t N,
                 int64_t classes, int32_t ignore, int64_t *count) {
  int64_t c = 0;
  for (int64_t i = 0; i < N; ++i) {
    if (targets[i] == ignore)
      continue;
    if (targets[i] < 0 || targets[i] >= classes)
      return zrt::fail(ZRT_ERR_OUT_OF_RANGE,
                       "%s: targets[%lld] = %d is outside [0, %lld) and is "
                       "not ignore_index (%d)",
                       fn, (long long)i, targets[i], (long long)classes,
                       ignore);
    ++c;
  }
  *count = c;
  return ZRT_OK;
}

/// Row max and log(sum exp(row - max)) over the first `classes` entries.
template <typename T>
void rowLse(const T *row, int64_t classes, float *maxOut, double *logSumOut) {
  float mx = -INFINITY;
  for (int64_t j = 0; j < classes; ++j)
    mx = std::fmax(mx, zrt::toF32(row[j]));
  double sum = 0.0;
  for (int64_t j = 0; j < classes; ++j)
    sum += std::exp(static_cast<double>(zrt::toF32(row[j]) - mx));
  *maxOut = mx;
  *logSumOut = std::log(sum);
}

template <typename T>
int forward(const char *fn, const T *logits, const int32_t *targets,
            float *loss, int64_t N, int64_t V, int64_t classes,
            int32_t ignore) {
  if (int st = zrt::checkMaskedCrossEntropyArgs(fn, logits, targets, loss, N, V,
                                                classes, zrt::fail))
    return st;
  int64_t count = 0;
  if (int st = countTargets(fn, targets, N, classes, ignore, &count))
    return st;
  // Fixed lanes of rows: the same bits for every thread count.
  const double total = zrt::fixedLaneSum(
      N, N * V > zrt::kParallelGrain, [&](int64_t b, int64_t e) {
        double t = 0.0;
        for (int64_t i = b; i < e; ++i) {
          if (targets[i] == ignore)
            continue;
          const T *row = logits + i * V;
          float mx;
          double logSum;
          rowLse(row, classes, &mx, &logSum);
          t += logSum - static_cast<double>(zrt::toF32(row[targets[i]]) - mx);
        }
        return t;
      });
  *loss = count > 0 ? static_cast<float>(total / static_cast<double>(count))
                    : std::numeric_limits<float>::quiet_NaN();
  return ZRT_OK;
}

template <typename T>
int backward(const char *fn, const T *logits, const int32_t *targets,
             const float *dloss, T *dlogits, int64_t N, int64_t V,
             int64_t classes, int32_t ignore) {
  if (int st = zrt::checkMaskedCrossEntropyArgs(fn, logits, targets, dlogits, N,
                                                V, classes, zrt::fail))
    return st;
  ZRT_REQUIRE(dloss, "%s: dloss is NULL", fn);
  int64_t count = 0;
  if (int st = countTargets(fn, targets, N, classes, ignore, &count))
    return st;
  const float g = count > 0 ? *dloss / static_cast<float>(count) : 0.0f;
#pragma omp parallel for schedule(static) if (N * V > zrt::kParallelGrain)
  for (int64_t i = 0; i < N; ++i) {
    T *drow = dlogits + i * V;
    if (targets[i] == ignore) {
      for (int64_t j = 0; j < V; ++j)
        drow[j] = zrt::fromF32<T>(0.0f);
      continue;
    }
    const T *row = logits + i * V;
    float mx;
    double logSum;
    rowLse(row, classes, &mx, &logSum);
    const float ls = static_cast<float>(logSum);
    for (int64_t j = 0; j < classes; ++j) {
      float p = std::exp((zrt::toF32(row[j]) - mx) - ls);
      drow[j] = zrt::fromF32<T>((p - (j == targets[i] ? 1.0f : 0.0f)) * g);
    }
    for (int64_t j = classes; j < V; ++j)
      drow[j] = zrt::fromF32<T>(0.0f);
  }
  return ZRT_OK;
}

} // namespace

extern "C" {

int zrt_cross_entropy_masked(const float *logits, const int32_t *targets,
                             float *loss, int64_t N, int64_t V,
                             int64_t num_classes, int32_t ignore_index) {
  return forward("zrt_cross_entropy_masked", logits, targets, loss, N, V,
                 num_classes, ignore_index);
}

int zrt_cross_entropy_masked_bf16(const zrt_bf16 *logits,
                                  const int32_t *targets, float *loss,
                                  int64_t N, int64_t V, int64_t num_classes,
                                  int32_t ignore_index) {
  return forward("zrt_cross_entropy_masked_bf16", logits, targets, loss, N, V,
                 num_classes, ignore_index);
}

int zrt_cross_entropy_masked_backward(const float *logits,
                                      const int32_t *targets,
                                      const float *dloss, float *dlogits,
                                      int64_t N, int64_t V, int64_t num_classes,
                                      int32_t ignore_index) {
  return backward("zrt_cross_entropy_masked_backward", logits, targets, dloss,
                  dlogits, N, V, num_classes, ignore_index);
}

int zrt_cross_entropy_masked_backward_bf16(const zrt_bf16 *logits,
                                           const int32_t *targets,
                                           const float *dloss,
                                           zrt_bf16 *dlogits, int64_t N,
                                           int64_t V, int64_t num_classes,
                                           int32_t ignore_index) {
  return backward("zrt_cross_entropy_masked_backward_bf16", logits, targets,
                  dloss, dlogits, N, V, num_classes, ignore_index);
}

} // extern "C"
