//===- norm.cpp - Layer normalization and softmax --------------------------===//
//
// zrt_layer_norm, zrt_layer_norm_stats, zrt_layer_norm_backward (f32 and
// bf16 tensors, one template each), their residual-add forms
// zrt_add_layer_norm and zrt_layer_norm_backward_add (the same row code, the
// add through zrt::addElement as in zrt_add) and the f32 softmax.
//
//===----------------------------------------------------------------------===//

#include "common/arg_checks.h"
#include "common/internal.h"

#include <cmath>
#include <vector>

namespace {
bool parallelRows(int64_t N, int64_t C) {
  return N > 1 && N * C > zrt::kParallelGrain / 4;
}

// The kernels below are templated over the element type T of their [N, C]
// and [C] tensors: float for zrt_X, zrt_bf16 for zrt_X_bf16 (f32 arithmetic
// on the widened values, each output rounded once; see zrt::toF32). mean
// and rstd are f32 for both.

// Mean and 1 / sqrt(var + eps) of the row xi [C], two-pass in f32: the
// statistics of zrt_layer_norm and zrt_layer_norm_stats.
template <typename T>
inline void rowStats(const T *xi, int64_t C, float eps, float *mean,
                     float *rstd) {
  float sum = 0.0f;
  for (int64_t j = 0; j < C; ++j)
    sum += zrt::toF32(xi[j]);
  const float m = sum / static_cast<float>(C);
  float var = 0.0f;
  for (int64_t j = 0; j < C; ++j) {
    float d = zrt::toF32(xi[j]) - m;
    var += d * d;
  }
  var /= static_cast<float>(C);
  *mean = m;
  *rstd = 1.0f / std::sqrt(var + eps);
}

// The rows of zrt_layer_norm(_bf16) on x, or, with sum (zrt_add_layer_norm),
// on the rows of sum: each row of sum is first written as a + b (zrt_add's
// arithmetic, zrt::addElement) and then normalized from there while it is
// in cache. After the argument checks.
template <typename T>
void layerNormRows(const T *x, const T *a, const T *b, T *sum, const T *weight,
                   const T *bias, T *out, float *mean, float *rstd, int64_t N,
                   int64_t C, float eps) {
#pragma omp parallel for schedule(static) if (parallelRows(N, C))
  for (int64_t i = 0; i < N; ++i) {
    const T *xi = x ? x + i * C : sum + i * C;
    if (sum) {
      T *si = sum + i * C;
      const T *ai = a + i * C, *bi = b + i * C;
      for (int64_t j = 0; j < C; ++j)
        si[j] = zrt::addElement(ai[j], bi[j]);
    }
    T *oi = out + i * C;
    float m, s;
    rowStats(xi, C, eps, &m, &s);
    for (int64_t j = 0; j < C; ++j) {
      float v = (zrt::toF32(xi[j]) - m) * s;
      if (weight)
        v *= zrt::toF32(weight[j]);
      if (bias)
        v += zrt::toF32(bias[j]);
      oi[j] = zrt::fromF32<T>(v);
    }
    if (mean)
      mean[i] = m;
    if (rstd)
      rstd[i] = s;
  }
}

template <typename T>
int layerNorm(const char *fn, const T *x, const T *weight, const T *bias,
              T *out, float *mean, float *rstd, int64_t N, int64_t C,
              float eps) {
  if (int st = zrt::checkLayerNormArgs(fn, x, out, N, C, eps, zrt::fail))
    return st;
  layerNormRows<T>(x, nullptr, nullptr, nullptr, weight, bias, out, mean, rstd,
                   N, C, eps);
  return ZRT_OK;
}

template <typename T>
int addLayerNorm(const char *fn, const T *a, const T *b, const T *weight,
                 const T *bias, T *sum, T *out, float *mean, float *rstd,
                 int64_t N, int64_t C, float eps) {
  if (int st = zrt::checkAddLayerNormArgs(fn, a, b, sum, out, N, C, eps,
                                          sizeof(T), zrt::fail))
    return st;
  layerNormRows<T>(nullptr, a, b, sum, weight, bias, out, mean, rstd, N, C,
                   eps);
  return ZRT_OK;
}

template <typename T>
int layerNormStats(const char *fn, const T *x, float *mean, float *rstd,
                   int64_t N, int64_t C, float eps) {
  if (int st =
          zrt::checkLayerNormStatsArgs(fn, x, mean, rstd, N, C, eps, zrt::fail))
    return st;
  // The same two-pass f32 arithmetic as zrt_layer_norm (rowStats).
#pragma omp parallel for schedule(static) if (N * C > zrt::kParallelGrain)
  for (int64_t i = 0; i < N; ++i)
    rowStats(x + i * C, C, eps, mean + i, rstd + i);
  return ZRT_OK;
}

// zrt_layer_norm_backward(_bf16) (addend NULL), or with Add its _add form
// zrt_layer_norm_backward_add(_bf16): addend and dx required, dx = addend +
// the rounded dx (zrt_add's arithmetic, zrt::addElement) in the same pass.
template <bool Add, typename T>
int layerNormBackward(const char *fn, const T *dout, const T *x,
                      const T *weight, const float *mean, const float *rstd,
                      const T *addend, T *dx, T *dweight, T *dbias, int64_t N,
                      int64_t C) {
  if (int st = Add ? zrt::checkLayerNormBackwardAddArgs(fn, dout, x, mean, rstd,
                                                        addend, dx, N, C,
                                                        sizeof(T), zrt::fail)
                   : zrt::checkLayerNormBackwardArgs(fn, dout, x, mean, rstd, N,
                                                     C, zrt::fail))
    return st;
  if (dx) {
#pragma omp parallel for schedule(static) if (parallelRows(N, C))
    for (int64_t i = 0; i < N; ++i) {
      const T *xi = x + i * C, *gi = dout + i * C;
      const float m = mean[i], s = rstd[i];
      float gMean = 0.0f, gxMean = 0.0f;
      for (int64_t j = 0; j < C; ++j) {
        float g = weight ? zrt::toF32(weight[j]) * zrt::toF32(gi[j])
                         : zrt::toF32(gi[j]);
        gMean += g;
        gxMean += g * (zrt::toF32(xi[j]) - m) * s;
      }
      gMean /= static_cast<float>(C);
      gxMean /= static_cast<float>(C);
      T *dxi = dx + i * C;
      const T *addi = addend ? addend + i * C : nullptr;
      for (int64_t j = 0; j < C; ++j) {
        float g = weight ? zrt::toF32(weight[j]) * zrt::toF32(gi[j])
                         : zrt::toF32(gi[j]);
        float xhat = (zrt::toF32(xi[j]) - m) * s;
        const T d = zrt::fromF32<T>(s * (g - gMean - xhat * gxMean));
        dxi[j] = addi ? zrt::addElement(addi[j], d) : d;
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
        const T *xi = x + i * C, *gi = dout + i * C;
        const float m = mean[i], s = rstd[i];
        for (int64_t j = j0; j < j1; ++j) {
          accW[j - j0] += zrt::toF32(gi[j]) * (zrt::toF32(xi[j]) - m) * s;
          accB[j - j0] += zrt::toF32(gi[j]);
        }
      }
      for (int64_t j = j0; j < j1; ++j) {
        if (dweight)
          dweight[j] = zrt::fromF32<T>(accW[j - j0]);
        if (dbias)
          dbias[j] = zrt::fromF32<T>(accB[j - j0]);
      }
    }
  }
  return ZRT_OK;
}
} // namespace

extern "C" {

int zrt_layer_norm(const float *x, const float *weight, const float *bias,
                   float *out, float *mean, float *rstd, int64_t N, int64_t C,
                   float eps) {
  return layerNorm("zrt_layer_norm", x, weight, bias, out, mean, rstd, N, C,
                   eps);
}

int zrt_layer_norm_bf16(const zrt_bf16 *x, const zrt_bf16 *weight,
                        const zrt_bf16 *bias, zrt_bf16 *out, float *mean,
                        float *rstd, int64_t N, int64_t C, float eps) {
  return layerNorm("zrt_layer_norm_bf16", x, weight, bias, out, mean, rstd, N,
                   C, eps);
}

int zrt_add_layer_norm(const float *a, const float *b, const float *weight,
                       const float *bias, float *sum, float *out, float *mean,
                       float *rstd, int64_t N, int64_t C, float eps) {
  return addLayerNorm("zrt_add_layer_norm", a, b, weight, bias, sum, out, mean,
                      rstd, N, C, eps);
}

int zrt_add_layer_norm_bf16(const zrt_bf16 *a, const zrt_bf16 *b,
                            const zrt_bf16 *weight, const zrt_bf16 *bias,
                            zrt_bf16 *sum, zrt_bf16 *out, float *mean,
                            float *rstd, int64_t N, int64_t C, float eps) {
  return addLayerNorm("zrt_add_layer_norm_bf16", a, b, weight, bias, sum, out,
                      mean, rstd, N, C, eps);
}

int zrt_layer_norm_stats(const float *x, float *mean, float *rstd, int64_t N,
                         int64_t C, float eps) {
  return layerNormStats("zrt_layer_norm_stats", x, mean, rstd, N, C, eps);
}

int zrt_layer_norm_stats_bf16(const zrt_bf16 *x, float *mean, float *rstd,
                              int64_t N, int64_t C, float eps) {
  return layerNormStats("zrt_layer_norm_stats_bf16", x, mean, rstd, N, C, eps);
}

int zrt_layer_norm_backward(const float *dout, const float *x,
                            const float *weight, const float *mean,
                            const float *rstd, float *dx, float *dweight,
                            float *dbias, int64_t N, int64_t C) {
  return layerNormBackward<false, float>("zrt_layer_norm_backward", dout, x,
                                         weight, mean, rstd, nullptr, dx,
                                         dweight, dbias, N, C);
}

int zrt_layer_norm_backward_bf16(const zrt_bf16 *dout, const zrt_bf16 *x,
                                 const zrt_bf16 *weight, const float *mean,
                                 const float *rstd, zrt_bf16 *dx,
                                 zrt_bf16 *dweight, zrt_bf16 *dbias, int64_t N,
                                 int64_t C) {
  return layerNormBackward<false, zrt_bf16>("zrt_layer_norm_backward_bf16",
                                            dout, x, weight, mean, rstd,
                                            nullptr, dx, dweight, dbias, N, C);
}

int zrt_layer_norm_backward_add(const float *dout, const float *x,
                                const float *weight, const float *mean,
                                const float *rstd, const float *addend,
                                float *dx, float *dweight, float *dbias,
                                int64_t N, int64_t C) {
  return layerNormBackward<true>("zrt_layer_norm_backward_add", dout, x, weight,
                                 mean, rstd, addend, dx, dweight, dbias, N, C);
}

int zrt_layer_norm_backward_add_bf16(const zrt_bf16 *dout, const zrt_bf16 *x,
                                     const zrt_bf16 *weight, const float *mean,
                                     const float *rstd, const zrt_bf16 *addend,
                                     zrt_bf16 *dx, zrt_bf16 *dweight,
                                     zrt_bf16 *dbias, int64_t N, int64_t C) {
  return layerNormBackward<true>("zrt_layer_norm_backward_add_bf16", dout, x,
                                 weight, mean, rstd, addend, dx, dweight, dbias,
                                 N, C);
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
