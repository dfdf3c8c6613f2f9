//===- elementwise.cpp - Elementwise kernels ------------------------------===//

#include "common/arg_checks.h"
#include "common/internal.h"

#include <cmath>
#include <cstring>

namespace {
using zrt::kParallelGrain;
using zrt::parallelChunks;

// sqrt(2 / pi) and the cubic coefficient of the tanh GELU approximation.
constexpr float kGeluScale = 0.7978845608028654f;
constexpr float kGeluCubic = 0.044715f;

// GELU (tanh approximation) through 1 + tanh(u) = 2 sigmoid(2u):
//   gelu(v)  = v * s,            s = 1 / (1 + exp(-2u)),
//   gelu'(v) = s + 2 v s (1 - s) u',  1 - s = exp(-2u) s,
// with u = sqrt(2/pi) (v + 0.044715 v^3). No cancellation anywhere (the
// tanh form loses digits in 1 + tanh for negative v), and no libm call, so
// the loop vectorizes. NaN in v propagates through the product with v.
// Each tensor's element type is float or zrt_bf16 (see zrt::toF32): one
// type for zrt_gelu (float) and zrt_gelu_bf16 (zrt_bf16); f32 inputs and
// bf16 outputs for the epilogue of zrt_matmul_gelu_bf16 (matmul.cpp).
template <typename TIn, typename TOut>
ZRT_INLINE_LOOP void geluLoop(const TIn *x, TOut *out, int64_t b, int64_t e) {
#pragma omp simd
  for (int64_t i = b; i < e; ++i) {
    const float v = zrt::toF32(x[i]);
    const float u = kGeluScale * (v + kGeluCubic * v * v * v);
    out[i] = zrt::fromF32<TOut>(v / (1.0f + zrt::expClamped(-2.0f * u)));
  }
}

// dx = gelu'(x) * dout; bf16 x, f32 dout and bf16 dx for the epilogue of
// zrt_matmul_gelu_backward_bf16.
template <typename TX, typename TDout, typename TDx>
ZRT_INLINE_LOOP void geluBackwardLoop(const TX *x, const TDout *dout, TDx *dx,
                                      int64_t b, int64_t e) {
#pragma omp simd
  for (int64_t i = b; i < e; ++i) {
    const float v = zrt::toF32(x[i]);
    const float u = kGeluScale * (v + kGeluCubic * v * v * v);
    const float du = kGeluScale * (1.0f + 3.0f * kGeluCubic * v * v);
    const float ex = zrt::expClamped(-2.0f * u);
    const float s = 1.0f / (1.0f + ex);
    const float grad = s + 2.0f * v * s * (ex * s) * du;
    dx[i] = zrt::fromF32<TDx>(grad * zrt::toF32(dout[i]));
  }
}

// The multi-versioned chunks, one overload per combination of element
// types.
ZRT_SIMD_CLONES
void geluChunk(const float *x, float *out, int64_t b, int64_t e) {
  geluLoop(x, out, b, e);
}

ZRT_SIMD_CLONES
void geluChunk(const zrt_bf16 *x, zrt_bf16 *out, int64_t b, int64_t e) {
  geluLoop(x, out, b, e);
}

ZRT_SIMD_CLONES
void geluChunk(const float *x, zrt_bf16 *out, int64_t b, int64_t e) {
  geluLoop(x, out, b, e);
}

ZRT_SIMD_CLONES
void geluBackwardChunk(const float *x, const float *dout, float *dx, int64_t b,
                       int64_t e) {
  geluBackwardLoop(x, dout, dx, b, e);
}

ZRT_SIMD_CLONES
void geluBackwardChunk(const zrt_bf16 *x, const zrt_bf16 *dout, zrt_bf16 *dx,
                       int64_t b, int64_t e) {
  geluBackwardLoop(x, dout, dx, b, e);
}

ZRT_SIMD_CLONES
void geluBackwardChunk(const zrt_bf16 *x, const float *dout, zrt_bf16 *dx,
                       int64_t b, int64_t e) {
  geluBackwardLoop(x, dout, dx, b, e);
}

// The bf16 casts' chunks (round to nearest even; widening is exact).
ZRT_SIMD_CLONES
void narrowChunk(const float *src, zrt_bf16 *dst, int64_t b, int64_t e) {
  for (int64_t i = b; i < e; ++i)
    dst[i] = zrt::f32ToBf16(src[i]);
}

ZRT_SIMD_CLONES
void widenChunk(const zrt_bf16 *src, float *dst, int64_t b, int64_t e) {
  for (int64_t i = b; i < e; ++i)
    dst[i] = zrt::bf16ToF32(src[i]);
}

// The chunks over [0, n), one per OpenMP thread.
template <typename TIn, typename TOut>
void geluRange(const TIn *x, TOut *out, int64_t n) {
  parallelChunks(n, kParallelGrain / 8,
                 [&](int64_t b, int64_t e) { geluChunk(x, out, b, e); });
}

template <typename TX, typename TDout, typename TDx>
void geluBackwardRange(const TX *x, const TDout *dout, TDx *dx, int64_t n) {
  parallelChunks(n, kParallelGrain / 8, [&](int64_t b, int64_t e) {
    geluBackwardChunk(x, dout, dx, b, e);
  });
}

// zrt_add and zrt_add_bf16: out = a + b in f32, one rounding for bf16.
template <typename T>
int add(const char *fn, const T *a, const T *b, T *out, int64_t n) {
  if (int st = zrt::checkBinaryArgs(fn, a, b, out, n, zrt::fail))
    return st;
#pragma omp parallel for simd schedule(static) if (n > kParallelGrain)
  for (int64_t i = 0; i < n; ++i)
    out[i] = zrt::addElement(a[i], b[i]);
  return ZRT_OK;
}

// zrt_gelu and zrt_gelu_bf16.
template <typename T> int gelu(const char *fn, const T *x, T *out, int64_t n) {
  if (int st = zrt::checkUnaryArgs(fn, x, out, n, zrt::fail))
    return st;
  geluRange(x, out, n);
  return ZRT_OK;
}

// zrt_gelu_backward and zrt_gelu_backward_bf16.
template <typename T>
int geluBackward(const char *fn, const T *x, const T *dout, T *dx, int64_t n) {
  if (int st = zrt::checkActivationBackwardArgs(fn, x, dout, dx, n, zrt::fail))
    return st;
  geluBackwardRange(x, dout, dx, n);
  return ZRT_OK;
}
} // namespace

void zrt::geluF32ToBf16(const float *x, zrt_bf16 *out, int64_t n) {
  geluRange(x, out, n);
}

void zrt::geluBackwardBf16F32(const zrt_bf16 *x, const float *dout,
                              zrt_bf16 *dx, int64_t n) {
  geluBackwardRange(x, dout, dx, n);
}

extern "C" {

int zrt_fill(float *out, float value, int64_t n) {
  if (int st = zrt::checkFillArgs("zrt_fill", out, n, zrt::fail))
    return st;
#pragma omp parallel for simd schedule(static) if (n > kParallelGrain)
  for (int64_t i = 0; i < n; ++i)
    out[i] = value;
  return ZRT_OK;
}

int zrt_copy(const float *x, float *out, int64_t n) {
  if (int st = zrt::checkUnaryArgs("zrt_copy", x, out, n, zrt::fail))
    return st;
  if (n > 0 && x != out)
    std::memmove(out, x, static_cast<size_t>(n) * sizeof(float));
  return ZRT_OK;
}

int zrt_add(const float *a, const float *b, float *out, int64_t n) {
  return add("zrt_add", a, b, out, n);
}

int zrt_add_backward(const float *dout, float *da, float *db, int64_t n) {
  if (int st =
          zrt::checkAddBackwardArgs("zrt_add_backward", dout, n, zrt::fail))
    return st;
  if (da)
    zrt_copy(dout, da, n);
  if (db)
    zrt_copy(dout, db, n);
  return ZRT_OK;
}

int zrt_axpy(float alpha, const float *x, float *y, int64_t n) {
  if (int st = zrt::checkAxpyArgs("zrt_axpy", x, y, n, zrt::fail))
    return st;
#pragma omp parallel for simd schedule(static) if (n > kParallelGrain)
  for (int64_t i = 0; i < n; ++i)
    y[i] += alpha * x[i];
  return ZRT_OK;
}

int zrt_mul(const float *a, const float *b, float *out, int64_t n) {
  if (int st = zrt::checkBinaryArgs("zrt_mul", a, b, out, n, zrt::fail))
    return st;
#pragma omp parallel for simd schedule(static) if (n > kParallelGrain)
  for (int64_t i = 0; i < n; ++i)
    out[i] = a[i] * b[i];
  return ZRT_OK;
}

int zrt_mul_backward(const float *a, const float *b, const float *dout,
                     float *da, float *db, int64_t n) {
  if (int st = zrt::checkMulBackwardArgs("zrt_mul_backward", a, b, dout, n,
                                         zrt::fail))
    return st;
#pragma omp parallel for schedule(static) if (n > kParallelGrain)
  for (int64_t i = 0; i < n; ++i) {
    float g = dout[i], av = a[i], bv = b[i];
    if (da)
      da[i] = g * bv;
    if (db)
      db[i] = g * av;
  }
  return ZRT_OK;
}

int zrt_scale(const float *x, float alpha, float *out, int64_t n) {
  if (int st = zrt::checkUnaryArgs("zrt_scale", x, out, n, zrt::fail))
    return st;
#pragma omp parallel for simd schedule(static) if (n > kParallelGrain)
  for (int64_t i = 0; i < n; ++i)
    out[i] = alpha * x[i];
  return ZRT_OK;
}

int zrt_gelu(const float *x, float *out, int64_t n) {
  return gelu("zrt_gelu", x, out, n);
}

int zrt_gelu_backward(const float *x, const float *dout, float *dx,
                      int64_t n) {
  return geluBackward("zrt_gelu_backward", x, dout, dx, n);
}

int zrt_relu(const float *x, float *out, int64_t n) {
  if (int st = zrt::checkUnaryArgs("zrt_relu", x, out, n, zrt::fail))
    return st;
#pragma omp parallel for simd schedule(static) if (n > kParallelGrain)
  for (int64_t i = 0; i < n; ++i)
    out[i] = x[i] < 0.0f ? 0.0f : x[i]; // NaN propagates, as torch.relu
  return ZRT_OK;
}

int zrt_relu_backward(const float *x, const float *dout, float *dx,
                      int64_t n) {
  if (int st = zrt::checkActivationBackwardArgs("zrt_relu_backward", x, dout,
                                                dx, n, zrt::fail))
    return st;
#pragma omp parallel for simd schedule(static) if (n > kParallelGrain)
  for (int64_t i = 0; i < n; ++i)
    dx[i] = x[i] > 0.0f ? dout[i] : 0.0f;
  return ZRT_OK;
}

int zrt_cast_f32_to_bf16(const float *src, zrt_bf16 *dst, int64_t n) {
  if (int st =
          zrt::checkCastArgs("zrt_cast_f32_to_bf16", src, dst, n, zrt::fail))
    return st;
  zrt::parallelChunks(n, zrt::kParallelGrain, [&](int64_t b, int64_t e) {
    narrowChunk(src, dst, b, e);
  });
  return ZRT_OK;
}

int zrt_cast_bf16_to_f32(const zrt_bf16 *src, float *dst, int64_t n) {
  if (int st =
          zrt::checkCastArgs("zrt_cast_bf16_to_f32", src, dst, n, zrt::fail))
    return st;
  zrt::parallelChunks(n, zrt::kParallelGrain, [&](int64_t b, int64_t e) {
    widenChunk(src, dst, b, e);
  });
  return ZRT_OK;
}

int zrt_cast_f32_to_f16(const float *src, zrt_f16 *dst, int64_t n) {
  if (int st =
          zrt::checkCastArgs("zrt_cast_f32_to_f16", src, dst, n, zrt::fail))
    return st;
#pragma omp parallel for schedule(static) if (n > zrt::kParallelGrain)
  for (int64_t i = 0; i < n; ++i)
    dst[i] = zrt::f32ToF16(src[i]);
  return ZRT_OK;
}

int zrt_cast_f16_to_f32(const zrt_f16 *src, float *dst, int64_t n) {
  if (int st =
          zrt::checkCastArgs("zrt_cast_f16_to_f32", src, dst, n, zrt::fail))
    return st;
#pragma omp parallel for schedule(static) if (n > zrt::kParallelGrain)
  for (int64_t i = 0; i < n; ++i)
    dst[i] = zrt::f16ToF32(src[i]);
  return ZRT_OK;
}

//===----------------------------------------------------------------------===//
// Native bf16 kernels (zrt.h): the templates above on zrt_bf16.
//===----------------------------------------------------------------------===//

int zrt_add_bf16(const zrt_bf16 *a, const zrt_bf16 *b, zrt_bf16 *out,
                 int64_t n) {
  return add("zrt_add_bf16", a, b, out, n);
}

int zrt_gelu_bf16(const zrt_bf16 *x, zrt_bf16 *out, int64_t n) {
  return gelu("zrt_gelu_bf16", x, out, n);
}

int zrt_gelu_backward_bf16(const zrt_bf16 *x, const zrt_bf16 *dout,
                           zrt_bf16 *dx, int64_t n) {
  return geluBackward("zrt_gelu_backward_bf16", x, dout, dx, n);
}

} // extern "C"
