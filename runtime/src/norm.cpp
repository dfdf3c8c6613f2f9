//===- norm.cpp - Layer normalization and softmax --------------------------===//

#include "arg_checks.h"
#include "internal.h"

#include <cmath>
#include <vector>

namespace {
bool parallelRows(int64_t N, int64_t C) {
  return N > 1 && N * C > zrt::kParallelGrain / 4;
}
} // namespace

extern "C" {

int zrt_layer_norm(const float *x, const float *weight, const float *bias,
                   float *out, float *mean, float *rstd, int64_t N, int64_t C,
                   float eps) {
  const char *fn = "zrt_layer_norm";
  if (int st = zrt::checkLayerNormArgs(fn, x, out, N, C, eps, zrt::fail))
    return st;
#pragma omp parallel for schedule(static) if (parallelRows(N, C))
  for (int64_t i = 0; i < N; ++i) {
    const float *xi = x + i * C;
    float *oi = out + i * C;
    float sum = 0.0f;
    for (int64_t j = 0; j < C; ++j)
      sum += xi[j];
    const float m = sum / static_cast<float>(C);
    float var = 0.0f;
    for (int64_t j = 0; j < C; ++j) {
      float d = xi[j] - m;
      var += d * d;
    }
    var /= static_cast<float>(C);
    const float s = 1.0f / std::sqrt(var + eps);
    for (int64_t j = 0; j < C; ++j) {
      float v = (xi[j] - m) * s;
      if (weight)
        v *= weight[j];
      if (bias)
        v += bias[j];
      oi[j] = v;
    }
    if (mean)
      mean[i] = m;
    if (rstd)
      rstd[i] = s;
  }
  return ZRT_OK;
}

int zrt_layer_norm_backward(const float *dout, const float *x,
                            const float *weight, const float *mean,
                            const float *rstd, float *dx, float *dweight,
                            float *dbias, int64_t N, int64_t C) {
  const char *fn = "zrt_layer_norm_backward";
  if (int st = zrt::checkLayerNormBackwardArgs(fn, dout, x, mean, rstd, N, C,
                                               zrt::fail))
    return st;
  if (dx) {
#pragma omp parallel for schedule(static) if (parallelRows(N, C))
    for (int64_t i = 0; i < N; ++i) {
      const float *xi = x + i * C, *gi = dout + i * C;
      const float m = mean[i], s = rstd[i];
      float gMean = 0.0f, gxMean = 0.0f;
      for (int64_t j = 0; j < C; ++j) {
        float g = weight ? weight[j] * gi[j] : gi[j];
        gMean += g;
        gxMean += g * (xi[j] - m) * s;
      }
      gMean /= static_cast<float>(C);
      gxMean /= static_cast<float>(C);
      float *dxi = dx + i * C;
      for (int64_t j = 0; j < C; ++j) {
        float g = weight ? weight[j] * gi[j] : gi[j];
        float xhat = (xi[j] - m) * s;
        dxi[j] = s * (g - gMean - xhat * gxMean);
      }
    }
  }
  if (dweight || dbias) {
    // Column blocks in parallel, rows sequential inside (deterministic).
    constexpr int64_t kBlock = 64;
    const int64_t nblocks = (C + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static) if (parallelRows(N, C))
    for (int64_t blk = 0; blk < nblocks; ++blk) {
      const int64_t j0 = blk * kBlock, j1 = j0 + kBlock < C ? j0 + kBlock : C;
      float accW[kBlock] = {}, accB[kBlock] = {};
      for (int64_t i = 0; i < N; ++i) {
        const float *xi = x + i * C, *gi = dout + i * C;
        const float m = mean[i], s = rstd[i];
        for (int64_t j = j0; j < j1; ++j) {
          accW[j - j0] += gi[j] * (xi[j] - m) * s;
          accB[j - j0] += gi[j];
        }
      }
      for (int64_t j = j0; j < j1; ++j) {
        if (dweight)
          dweight[j] = accW[j - j0];
        if (dbias)
          dbias[j] = accB[j - j0];
      }
    }
  }
  return ZRT_OK;
}

int zrt_softmax(const float *x, float *out, int64_t N, int64_t C) {
  const char *fn = "zrt_softmax";
  if (int st = zrt::checkSoftmaxArgs(fn, x, out, N, C, zrt::fail))
    return st;
#pragma omp parallel for schedule(static) if (parallelRows(N, C))
  for (int64_t i = 0; i < N; ++i) {
    const float *xi = x + i * C;
    float *oi = out + i * C;
    float mx = -INFINITY;
    for (int64_t j = 0; j < C; ++j)
      mx = xi[j] > mx ? xi[j] : mx;
    float sum = 0.0f;
    for (int64_t j = 0; j < C; ++j) {
      oi[j] = std::exp(xi[j] - mx);
      sum += oi[j];
    }
    const float inv = 1.0f / sum;
    for (int64_t j = 0; j < C; ++j)
      oi[j] *= inv;
  }
  return ZRT_OK;
}

int zrt_softmax_backward(const float *y, const float *dy, float *dx,
                         int64_t N, int64_t C) {
  const char *fn = "zrt_softmax_backward";
  if (int st = zrt::checkSoftmaxBackwardArgs(fn, y, dy, dx, N, C, zrt::fail))
    return st;
#pragma omp parallel for schedule(static) if (parallelRows(N, C))
  for (int64_t i = 0; i < N; ++i) {
    const float *yi = y + i * C, *gi = dy + i * C;
    float dot = 0.0f;
    for (int64_t j = 0; j < C; ++j)
      dot += yi[j] * gi[j];
    float *dxi = dx + i * C;
    for (int64_t j = 0; j < C; ++j)
      dxi[j] = yi[j] * (gi[j] - dot);
  }
  return ZRT_OK;
}

} // extern "C"
