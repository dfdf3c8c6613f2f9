//===- swiglu.cpp - SiLU and the SwiGLU product ---------------------------===//
//
// zrt_silu, zrt_swiglu and their backwards (f32 and bf16; see
// zrt/decoder.h): element-wise f32 arithmetic on the widened inputs, each
// output rounded once; OpenMP-parallel, vectorizable loops.
//
//===----------------------------------------------------------------------===//

#include "common/decoder_args.h"
#include "common/internal.h"

#include <cmath>

namespace {

inline float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

template <typename T> int silu(const char *fn, const T *x, T *out, int64_t n) {
  const void *p[] = {x, out};
  const char *names[] = {"x", "out"};
  if (int st = zrt::checkGatedArgs(fn, n, p, names, 2, zrt::fail))
    return st;
#pragma omp parallel for simd schedule(static) if (n > zrt::kParallelGrain)
  for (int64_t i = 0; i < n; ++i) {
    const float v = zrt::toF32(x[i]);
    out[i] = zrt::fromF32<T>(v * sigmoid(v));
  }
  return ZRT_OK;
}

template <typename T>
int siluBackward(const char *fn, const T *x, const T *dout, T *dx, int64_t n) {
  const void *p[] = {x, dout, dx};
  const char *names[] = {"x", "dout", "dx"};
  if (int st = zrt::checkGatedArgs(fn, n, p, names, 3, zrt::fail))
    return st;
#pragma omp parallel for simd schedule(static) if (n > zrt::kParallelGrain)
  for (int64_t i = 0; i < n; ++i) {
    const float v = zrt::toF32(x[i]), s = sigmoid(v);
    dx[i] = zrt::fromF32<T>(zrt::toF32(dout[i]) * s * (1.0f + v * (1.0f - s)));
  }
  return ZRT_OK;
}

template <typename T>
int swiglu(const char *fn, const T *gate, const T *up, T *out, int64_t n) {
  const void *p[] = {gate, up, out};
  const char *names[] = {"gate", "up", "out"};
  if (int st = zrt::checkGatedArgs(fn, n, p, names, 3, zrt::fail))
    return st;
#pragma omp parallel for simd schedule(static) if (n > zrt::kParallelGrain)
  for (int64_t i = 0; i < n; ++i) {
    const float g = zrt::toF32(gate[i]);
    out[i] = zrt::fromF32<T>(g * sigmoid(g) * zrt::toF32(up[i]));
  }
  return ZRT_OK;
}

template <typename T>
int swigluBackward(const char *fn, const T *gate, const T *up, const T *dout,
                   T *dgate, T *dup, int64_t n) {
  const void *p[] = {gate, up, dout};
  const char *names[] = {"gate", "up", "dout"};
  if (int st = zrt::checkGatedArgs(fn, n, p, names, 3, zrt::fail))
    return st;
#pragma omp parallel for simd schedule(static) if (n > zrt::kParallelGrain)
  for (int64_t i = 0; i < n; ++i) {
    const float g = zrt::toF32(gate[i]), u = zrt::toF32(up[i]),
                d = zrt::toF32(dout[i]), s = sigmoid(g);
    // Both read before either is written: dgate or dup may alias dout.
    const float dg = d * u * s * (1.0f + g * (1.0f - s)), du = d * g * s;
    if (dgate)
      dgate[i] = zrt::fromF32<T>(dg);
    if (dup)
      dup[i] = zrt::fromF32<T>(du);
  }
  return ZRT_OK;
}

} // namespace

extern "C" {

int zrt_silu(const float *x, float *out, int64_t n) {
  return silu("zrt_silu", x, out, n);
}
int zrt_silu_bf16(const zrt_bf16 *x, zrt_bf16 *out, int64_t n) {
  return silu("zrt_silu_bf16", x, out, n);
}
int zrt_silu_backward(const float *x, const float *dout, float *dx, int64_t n) {
  return siluBackward("zrt_silu_backward", x, dout, dx, n);
}
int zrt_silu_backward_bf16(const zrt_bf16 *x, const zrt_bf16 *dout,
                           zrt_bf16 *dx, int64_t n) {
  return siluBackward("zrt_silu_backward_bf16", x, dout, dx, n);
}
int zrt_swiglu(const float *gate, const float *up, float *out, int64_t n) {
  return swiglu("zrt_swiglu", gate, up, out, n);
}
int zrt_swiglu_bf16(const zrt_bf16 *gate, const zrt_bf16 *up, zrt_bf16 *out,
                    int64_t n) {
  return swiglu("zrt_swiglu_bf16", gate, up, out, n);
}
int zrt_swiglu_backward(const float *gate, const float *up, const float *dout,
                        float *dgate, float *dup, int64_t n) {
  return swigluBackward("zrt_swiglu_backward", gate, up, dout, dgate, dup, n);
}
int zrt_swiglu_backward_bf16(const zrt_bf16 *gate, const zrt_bf16 *up,
                             const zrt_bf16 *dout, zrt_bf16 *dgate,
                             zrt_bf16 *dup, int64_t n) {
  return swigluBackward("zrt_swiglu_backward_bf16", gate, up, dout, dgate, dup,
                        n);
}

} // extern "C"
