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

/// Lanes of the row sums: element j adds into lane j mod kRowLanes, and the
/// lanes add up in order at the end. The order depends on C only — not on
/// the vector width, the row's alignment or the thread count — and the
/// lanes fill one AVX-512 register (two AVX2 ones).
constexpr int64_t kRowLanes = 16;

/// The sum over j in [0, C) of f(j) in kRowLanes lanes (see kRowLanes).
template <typename F> ZRT_INLINE_LOOP float laneSum(int64_t C, F &&f) {
  float lane[kRowLanes] = {};
  const int64_t whole = C / kRowLanes * kRowLanes;
  for (int64_t j0 = 0; j0 < whole; j0 += kRowLanes)
#pragma omp simd
    for (int64_t l = 0; l < kRowLanes; ++l)
      lane[l] += f(j0 + l);
  for (int64_t j = whole; j < C; ++j)
    lane[j - whole] += f(j);
  float sum = 0.0f;
  for (int64_t l = 0; l < kRowLanes; ++l)
    sum += lane[l];
  return sum;
}

// Mean and 1 / sqrt(var + eps) of the row xi [C], two-pass in f32 (laneSum):
// the statistics of zrt_layer_norm and zrt_layer_norm_stats.
template <typename T>
ZRT_INLINE_LOOP void rowStats(const T *xi, int64_t C, float eps,
                              float *mean, float *rstd) {
  const float m =
      laneSum(C, [&](int64_t j) { return zrt::toF32(xi[j]); }) /
      static_cast<float>(C);
  const float var = laneSum(C, [&](int64_t j) {
                      const float d = zrt::toF32(xi[j]) - m;
                      return d * d;
                    }) /
                    static_cast<float>(C);
  *mean = m;
  *rstd = 1.0f / std::sqrt(var + eps);
}

// One row of zrt_layer_norm(_bf16) / zrt_add_layer_norm(_bf16): with si,
// the row si = ai + bi (zrt_add's arithmetic, zrt::addElement) is written
// first and normalized from there while it is in cache; else xi is.
template <typename T>
ZRT_INLINE_LOOP void normRowBody(const T *xi, const T *ai, const T *bi,
                                 T *si, const T *weight, const T *bias, T *oi,
                                 int64_t C, float eps, float *m, float *s) {
  if (si) {
#pragma omp simd
    for (int64_t j = 0; j < C; ++j)
      si[j] = zrt::addElement(ai[j], bi[j]);
    xi = si;
  }
  rowStats(xi, C, eps, m, s);
  const float mean = *m, rstd = *s;
#pragma omp simd
  for (int64_t j = 0; j < C; ++j) {
    float v = (zrt::toF32(xi[j]) - mean) * rstd;
    if (weight)
      v *= zrt::toF32(weight[j]);
    if (bias)
      v += zrt::toF32(bias[j]);
    oi[j] = zrt::fromF32<T>(v);
  }
}

// One row of the layer norm backward's dx: dxi = s (g - mean(g) - xhat
// mean(g xhat)) with g = weight * gi, plus addi (zrt::addElement) when
// given.
template <typename T>
ZRT_INLINE_LOOP void backwardRowBody(const T *xi, const T *gi,
                                     const T *weight, float m, float s,
                                     const T *addi, T *dxi, int64_t C) {
  auto gradient = [&](int64_t j) {
    return weight ? zrt::toF32(weight[j]) * zrt::toF32(gi[j])
                  : zrt::toF32(gi[j]);
  };
  const float gMean = laneSum(C, gradient) / static_cast<float>(C);
  const float gxMean = laneSum(C, [&](int64_t j) {
                         return gradient(j) * (zrt::toF32(xi[j]) - m) * s;
                       }) /
                       static_cast<float>(C);
#pragma omp simd
  for (int64_t j = 0; j < C; ++j) {
    const float xhat = (zrt::toF32(xi[j]) - m) * s;
    const T d = zrt::fromF32<T>(s * (gradient(j) - gMean - xhat * gxMean));
    dxi[j] = addi ? zrt::addElement(addi[j], d) : d;
  }
}

// The multi-versioned rows, one overload per element type (target_clones
// does not apply to templates).
ZRT_SIMD_CLONES
void statsRow(const float *xi, int64_t C, float eps, float *m, float *s) {
  rowStats(xi, C, eps, m, s);
}
ZRT_SIMD_CLONES
void statsRow(const zrt_bf16 *xi, int64_t C, float eps, float *m, float *s) {
  rowStats(xi, C, eps, m, s);
}
ZRT_SIMD_CLONES
void normRow(const float *xi, const float *ai, const float *bi, float *si,
             const float *weight, const float *bias, float *oi, int64_t C,
             float eps, float *m, float *s) {
  normRowBody(xi, ai, bi, si, weight, bias, oi, C, eps, m, s);
}
ZRT_SIMD_CLONES
void normRow(const zrt_bf16 *xi, const zrt_bf16 *ai, const zrt_bf16 *bi,
             zrt_bf16 *si, const zrt_bf16 *weight, const zrt_bf16 *bias,
             zrt_bf16 *oi, int64_t C, float eps, float *m, float *s) {
  normRowBody(xi, ai, bi, si, weight, bias, oi, C, eps, m, s);
}
ZRT_SIMD_CLONES
void backwardRow(const float *xi, const float *gi, const float *weight,
                 float m, float s, const float *addi, float *dxi, int64_t C) {
  backwardRowBody(xi, gi, weight, m, s, addi, dxi, C);
}
ZRT_SIMD_CLONES
void backwardRow(const zrt_bf16 *xi, const zrt_bf16 *gi,
                 const zrt_bf16 *weight, float m, float s,
                 const zrt_bf16 *addi, zrt_bf16 *dxi, int64_t C) {
  backwardRowBody(xi, gi, weight, m, s, addi, dxi, C);
}

// Columns [j0, j1) of the weight and bias gradients summed over the N rows
// in row order (each column its own sum: the same bits at any vector
// width and thread count) into accW / accB.
template <typename T>
ZRT_INLINE_LOOP void paramGradBlockBody(const T *x, const T *dout,
                                        const float *mean, const float *rstd,
                                        int64_t N, int64_t C, int64_t j0,
                                        int64_t j1, float *accW, float *accB) {
  for (int64_t i = 0; i < N; ++i) {
    const T *xi = x + i * C, *gi = dout + i * C;
    const float m = mean[i], s = rstd[i];
#pragma omp simd
    for (int64_t j = j0; j < j1; ++j) {
      accW[j - j0] += zrt::toF32(gi[j]) * (zrt::toF32(xi[j]) - m) * s;
      accB[j - j0] += zrt::toF32(gi[j]);
    }
  }
}
ZRT_SIMD_CLONES
void paramGradBlock(const float *x, const float *dout, const float *mean,
                    const float *rstd, int64_t N, int64_t C, int64_t j0,
                    int64_t j1, float *accW, float *accB) {
  paramGradBlockBody(x, dout, mean, rstd, N, C, j0, j1, accW, accB);
}
ZRT_SIMD_CLONES
void paramGradBlock(const zrt_bf16 *x, const zrt_bf16 *dout,
                    const float *mean, const float *rstd, int64_t N, int64_t C,
                    int64_t j0, int64_t j1, float *accW, float *accB) {
  paramGradBlockBody(x, dout, mean, rstd, N, C, j0, j1, accW, accB);
}

// The rows of zrt_layer_norm(_bf16) on x, or, with sum (zrt_add_layer_norm),
// on the rows of sum = a + b. After the argument checks.
template <typename T>
void layerNormRows(const T *x, const T *a, const T *b, T *sum, const T *weight,
                   const T *bias, T *out, float *mean, float *rstd, int64_t N,
                   int64_t C, float eps) {
#pragma omp parallel for schedule(static) if (parallelRows(N, C))
  for (int64_t i = 0; i < N; ++i) {
    float m, s;
    normRow(x ? x + i * C : nullptr, sum ? a + i * C : nullptr,
            sum ? b + i * C : nullptr, sum ? sum + i * C : nullptr, weight,
            bias, out + i * C, C, eps, &m, &s);
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
    statsRow(x + i * C, C, eps, mean + i, rstd + i);
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
    for (int64_t i = 0; i < N; ++i)
      backwardRow(x + i * C, dout + i * C, weight, mean[i], rstd[i],
                  addend ? addend + i * C : nullptr, dx + i * C, C);
  }
  if (dweight || dbias) {
    // Column blocks in parallel, rows sequential inside (deterministic).
    constexpr int64_t kBlock = 64;
    const int64_t nblocks = (C + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static) if (parallelRows(N, C))
    for (int64_t blk = 0; blk < nblocks; ++blk) {
      const int64_t j0 = blk * kBlock, j1 = j0 + kBlock < C ? j0 + kBlock : C;
      float accW[kBlock] = {}, accB[kBlock] = {};
      paramGradBlock(x, dout, mean, rstd, N, C, j0, j1, accW, accB);
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
