//===- optimizer.cpp - AdamW, gradient norm, clipping ----------------------===//

#include "common/arg_checks.h"
#include "common/internal.h"

#include <cmath>
#include <cstring>

namespace {

inline float loadGrad(const float *g, int64_t i) { return g[i]; }
inline float loadGrad(const uint16_t *g, int64_t i) {
  return zrt::bf16ToF32(g[i]);
}
/// An f16 gradient (zrt_f16 is uint16_t too: a distinct type for overloads).
struct F16Grad {
  const uint16_t *p;
};
inline float loadGrad(F16Grad g, int64_t i) { return zrt::f16ToF32(g.p[i]); }
inline const void *rawPointer(const float *p) { return p; }
inline const void *rawPointer(const uint16_t *p) { return p; }
inline const void *rawPointer(F16Grad g) { return g.p; }

struct AdamwScalars {
  float decay, b1, b2, oneMinusB1, oneMinusB2, negStepSize, bc2Sqrt, eps,
      gradScale;
};

// The element update of torch's _single_tensor_adamw, in its order of f32
// operations; vectorized (multi-versioned for AVX-512 / AVX2).
ZRT_SIMD_CLONES
void adamwChunk(float *param, float *m, float *v, const float *grad,
                const AdamwScalars &k, int64_t b, int64_t e) {
  const AdamwScalars c = k;
#pragma omp simd
  for (int64_t i = b; i < e; ++i) {
    const float g = grad[i] * c.gradScale;
    float p = param[i] * c.decay;
    const float mi = m[i] * c.b1 + c.oneMinusB1 * g;
    const float vi = v[i] * c.b2 + c.oneMinusB2 * g * g;
    const float denom = std::sqrt(vi) / c.bc2Sqrt + c.eps;
    p = p + c.negStepSize * (mi / denom);
    m[i] = mi;
    v[i] = vi;
    param[i] = p;
  }
}

ZRT_SIMD_CLONES
void adamwChunk(float *param, float *m, float *v, const uint16_t *grad,
                const AdamwScalars &k, int64_t b, int64_t e) {
  const AdamwScalars c = k;
#pragma omp simd
  for (int64_t i = b; i < e; ++i) {
    const float g = zrt::bf16ToF32(grad[i]) * c.gradScale;
    float p = param[i] * c.decay;
    const float mi = m[i] * c.b1 + c.oneMinusB1 * g;
    const float vi = v[i] * c.b2 + c.oneMinusB2 * g * g;
    const float denom = std::sqrt(vi) / c.bc2Sqrt + c.eps;
    p = p + c.negStepSize * (mi / denom);
    m[i] = mi;
    v[i] = vi;
    param[i] = p;
  }
}

ZRT_SIMD_CLONES
void adamwChunk(float *param, float *m, float *v, F16Grad grad,
                const AdamwScalars &k, int64_t b, int64_t e) {
  const AdamwScalars c = k;
  for (int64_t i = b; i < e; ++i) {
    const float g = zrt::f16ToF32(grad.p[i]) * c.gradScale;
    float p = param[i] * c.decay;
    const float mi = m[i] * c.b1 + c.oneMinusB1 * g;
    const float vi = v[i] * c.b2 + c.oneMinusB2 * g * g;
    const float denom = std::sqrt(vi) / c.bc2Sqrt + c.eps;
    p = p + c.negStepSize * (mi / denom);
    m[i] = mi;
    v[i] = vi;
    param[i] = p;
  }
}

// torch.optim.AdamW, _single_tensor_adamw (PyTorch 1.13 / 2.x), with the
// python-double scalars (1 - lr*wd, 1 - beta^t, lr / bc1, sqrt(bc2)) computed
// in double and rounded to f32 where PyTorch feeds them to f32 kernels.
template <typename G>
int adamw(const char *fn, float *param, float *m, float *v, G grad,
          float *outF32, uint16_t *outBf16, int64_t n, double lr, double beta1,
          double beta2, double eps, double weightDecay, float gradScale,
          int64_t step) {
  if (int st = zrt::checkAdamwArgs(fn, param, m, v, rawPointer(grad), n, step,
                                   zrt::fail))
    return st;
  const float decay = static_cast<float>(1.0 - lr * weightDecay);
  const float b1 = static_cast<float>(beta1), b2 = static_cast<float>(beta2);
  const float oneMinusB1 = static_cast<float>(1.0 - beta1);
  const float oneMinusB2 = static_cast<float>(1.0 - beta2);
  const double bc1 = 1.0 - std::pow(beta1, static_cast<double>(step));
  const double bc2 = 1.0 - std::pow(beta2, static_cast<double>(step));
  const float negStepSize = static_cast<float>(-(lr / bc1));
  const float bc2Sqrt = static_cast<float>(std::sqrt(bc2));
  const float epsF = static_cast<float>(eps);
  const AdamwScalars k{decay, b1, b2, oneMinusB1, oneMinusB2, negStepSize,
                       bc2Sqrt, epsF, gradScale};
  zrt::parallelChunks(n, zrt::kParallelGrain / 4, [&](int64_t b, int64_t e) {
    adamwChunk(param, m, v, grad, k, b, e);
    if (outF32)
      std::memcpy(outF32 + b, param + b,
                  static_cast<size_t>(e - b) * sizeof(float));
    if (outBf16)
      for (int64_t i = b; i < e; ++i)
        outBf16[i] = zrt::f32ToBf16(param[i]);
  });
  return ZRT_OK;
}

/// Elements 8 apart share one of the 8 double accumulators of
/// sumSquaresRange (vector lanes: no dependency chain through one sum).
constexpr int64_t kSumLanes = 8;

/// sum of f64(x[i])^2 for i in [b, e): element i into accumulator
/// (i - b) % kSumLanes, the accumulators added in order at the end; the
/// order depends on b and e only (the same on every machine and thread
/// count).
template <typename T>
ZRT_SIMD_CLONES double sumSquaresRange(T x, int64_t b, int64_t e) {
  double acc[kSumLanes] = {};
  int64_t i = b;
  for (; i + kSumLanes <= e; i += kSumLanes)
#pragma omp simd
    for (int64_t k = 0; k < kSumLanes; ++k) {
      const double d = loadGrad(x, i + k);
      acc[k] += d * d;
    }
  for (int64_t k = 0; i < e; ++i, ++k) {
    const double d = loadGrad(x, i);
    acc[k] += d * d;
  }
  double t = 0.0;
  for (int64_t k = 0; k < kSumLanes; ++k)
    t += acc[k];
  return t;
}

template <typename T>
int sumSquares(const char *fn, T x, int64_t n, float *out) {
  if (int st = zrt::checkSumSquaresArgs(fn, rawPointer(x), n, out, zrt::fail))
    return st;
  // Fixed lanes: the same bits for every thread count.
  const double total =
      zrt::fixedLaneSum(n, n > zrt::kParallelGrain, [&](int64_t b, int64_t e) {
        return sumSquaresRange(x, b, e);
      });
  *out = static_cast<float>(total);
  return ZRT_OK;
}

} // namespace

extern "C" {

int zrt_adamw_step(float *param, float *m, float *v, const float *grad,
                   float *out_f32, zrt_bf16 *out_bf16, int64_t n, double lr,
                   double beta1, double beta2, double eps, double weight_decay,
                   float grad_scale, int64_t step) {
  return adamw("zrt_adamw_step", param, m, v, grad, out_f32, out_bf16, n, lr,
               beta1, beta2, eps, weight_decay, grad_scale, step);
}

int zrt_adamw_step_bf16_grad(float *param, float *m, float *v,
                             const zrt_bf16 *grad, float *out_f32,
                             zrt_bf16 *out_bf16, int64_t n, double lr,
                             double beta1, double beta2, double eps,
                             double weight_decay, float grad_scale,
                             int64_t step) {
  return adamw("zrt_adamw_step_bf16_grad", param, m, v, grad, out_f32,
               out_bf16, n, lr, beta1, beta2, eps, weight_decay, grad_scale,
               step);
}

int zrt_sum_squares(const float *x, int64_t n, float *out) {
  return sumSquares("zrt_sum_squares", x, n, out);
}

int zrt_sum_squares_bf16(const zrt_bf16 *x, int64_t n, float *out) {
  return sumSquares("zrt_sum_squares_bf16", x, n, out);
}

int zrt_adamw_step_f16_grad(float *param, float *m, float *v,
                            const zrt_f16 *grad, float *out_f32,
                            zrt_bf16 *out_bf16, int64_t n, double lr,
                            double beta1, double beta2, double eps,
                            double weight_decay, float grad_scale,
                            int64_t step) {
  if (out_bf16)
    return zrt::fail(ZRT_ERR_INVALID_ARGUMENT,
                     "zrt_adamw_step_f16_grad: out_bf16 must be NULL");
  return adamw("zrt_adamw_step_f16_grad", param, m, v, F16Grad{grad},
               out_f32, nullptr, n, lr, beta1, beta2, eps, weight_decay,
               grad_scale, step);
}

int zrt_sum_squares_f16(const zrt_f16 *x, int64_t n, float *out) {
  return sumSquares("zrt_sum_squares_f16", F16Grad{x}, n, out);
}


} // extern "C"
