//===- rms_norm.cpp - RMSNorm and its residual form -----------------------===//
//
// zrt_rms_norm, zrt_add_rms_norm, zrt_rms_norm_backward (f32 and bf16
// tensors, one template each; see zrt/decoder.h): f32 statistics on the
// widened values, each output rounded once, Hugging Face LlamaRMSNorm's
// order (x * r rounded to the storage type, then times the weight).
//
//===----------------------------------------------------------------------===//

#include "common/decoder_args.h"
#include "common/internal.h"

#include <cmath>

namespace {

bool parallelRows(int64_t N, int64_t C) {
  return N > 1 && N * C > zrt::kParallelGrain / 4;
}

/// 1 / sqrt(mean(x^2) + eps) of the row xi [C], in f32.
template <typename T> inline float rowRsqrt(const T *xi, int64_t C, float eps) {
  float ss = 0.0f;
#pragma omp simd reduction(+ : ss)
  for (int64_t j = 0; j < C; ++j) {
    const float v = zrt::toF32(xi[j]);
    ss += v * v;
  }
  return 1.0f / std::sqrt(ss / static_cast<float>(C) + eps);
}

/// The rows of zrt_rms_norm on x, or (sum non-null) of zrt_add_rms_norm:
/// each row of sum written as a + b first, then normalized from there.
template <typename T>
void rmsNormRows(const T *x, const T *a, const T *b, T *sum, const T *weight,
                 T *out, int64_t N, int64_t C, float eps) {
#pragma omp parallel for schedule(static) if (parallelRows(N, C))
  for (int64_t i = 0; i < N; ++i) {
    if (sum)
      for (int64_t j = 0; j < C; ++j)
        sum[i * C + j] = zrt::addElement(a[i * C + j], b[i * C + j]);
    const T *xi = sum ? sum + i * C : x + i * C;
    const float r = rowRsqrt(xi, C, eps);
    T *oi = out + i * C;
#pragma omp simd
    for (int64_t j = 0; j < C; ++j) {
      const float xr = zrt::toF32(zrt::fromF32<T>(zrt::toF32(xi[j]) * r));
      oi[j] = zrt::fromF32<T>(weight ? zrt::toF32(weight[j]) * xr : xr);
    }
  }
}

template <typename T>
int rmsNorm(const char *fn, const T *x, const T *weight, T *out, int64_t N,
            int64_t C, float eps) {
  if (int st = zrt::checkRmsNormArgs(fn, x, out, N, N, C, eps, zrt::fail))
    return st;
  rmsNormRows<T>(x, nullptr, nullptr, nullptr, weight, out, N, C, eps);
  return ZRT_OK;
}

template <typename T>
int addRmsNorm(const char *fn, const T *a, const T *b, const T *weight, T *sum,
               T *out, int64_t N, int64_t C, float eps) {
  if (int st = zrt::checkRmsNormArgs(fn, a, out, N, N, C, eps, zrt::fail))
    return st;
  ZRT_REQUIRE_BUF(fn, N, b);
  ZRT_REQUIRE_BUF(fn, N, sum);
  ZRT_REQUIRE(sum != a && sum != b, "%s: sum must not overlap a or b", fn);
  rmsNormRows<T>(nullptr, a, b, sum, weight, out, N, C, eps);
  return ZRT_OK;
}

template <typename T>
int rmsNormBackward(const char *fn, const T *dout, const T *x, const T *weight,
                    const T *addend, T *dx, T *dweight, float *workspace,
                    int64_t N, int64_t C, float eps) {
  if (int st = zrt::checkRmsNormArgs(fn, x, dout, N, N, C, eps, zrt::fail))
    return st;
  ZRT_REQUIRE(!addend || dx, "%s: an addend needs dx", fn);
  if (dx) {
#pragma omp parallel for schedule(static) if (parallelRows(N, C))
    for (int64_t i = 0; i < N; ++i) {
      const T *xi = x + i * C, *gi = dout + i * C;
      const float r = rowRsqrt(xi, C, eps);
      float m = 0.0f;
#pragma omp simd reduction(+ : m)
      for (int64_t j = 0; j < C; ++j) {
        const float g = weight ? zrt::toF32(weight[j]) * zrt::toF32(gi[j])
                               : zrt::toF32(gi[j]);
        m += g * zrt::toF32(xi[j]) * r;
      }
      m /= static_cast<float>(C);
      T *dxi = dx + i * C;
      const T *addi = addend ? addend + i * C : nullptr;
      for (int64_t j = 0; j < C; ++j) {
        const float g = weight ? zrt::toF32(weight[j]) * zrt::toF32(gi[j])
                               : zrt::toF32(gi[j]);
        const float xh = zrt::toF32(xi[j]) * r;
        const T d = zrt::fromF32<T>(r * (g - xh * m));
        dxi[j] = addi ? zrt::addElement(addi[j], d) : d;
      }
    }
  }
  if (dweight) {
    // Column blocks in parallel, rows in order inside (deterministic); the
    // row statistics are recomputed per block.
    constexpr int64_t kBlock = 64;
    const int64_t nblocks = (C + kBlock - 1) / kBlock;
    zrt::FloatBuffer own;
    float *rs = workspace;
    if (!rs) {
      if (!own.reserve(N))
        return zrt::fail(ZRT_ERR_OUT_OF_MEMORY,
                         "%s: cannot allocate the [N] workspace", fn);
      rs = own.data;
    }
#pragma omp parallel for schedule(static) if (parallelRows(N, C))
    for (int64_t i = 0; i < N; ++i)
      rs[i] = rowRsqrt(x + i * C, C, eps);
#pragma omp parallel for schedule(static) if (parallelRows(N, C))
    for (int64_t blk = 0; blk < nblocks; ++blk) {
      const int64_t j0 = blk * kBlock, j1 = j0 + kBlock < C ? j0 + kBlock : C;
      float acc[kBlock] = {};
      for (int64_t i = 0; i < N; ++i) {
        const T *xi = x + i * C, *gi = dout + i * C;
        const float r = rs[i];
        for (int64_t j = j0; j < j1; ++j)
          acc[j - j0] += zrt::toF32(gi[j]) * zrt::toF32(xi[j]) * r;
      }
      for (int64_t j = j0; j < j1; ++j)
        dweight[j] = zrt::fromF32<T>(acc[j - j0]);
    }
  }
  return ZRT_OK;
}

} // namespace

extern "C" {

int zrt_rms_norm(const float *x, const float *weight, float *out, int64_t N,
                 int64_t C, float eps) {
  return rmsNorm("zrt_rms_norm", x, weight, out, N, C, eps);
}

int zrt_rms_norm_bf16(const zrt_bf16 *x, const zrt_bf16 *weight, zrt_bf16 *out,
                      int64_t N, int64_t C, float eps) {
  return rmsNorm("zrt_rms_norm_bf16", x, weight, out, N, C, eps);
}

int zrt_add_rms_norm(const float *a, const float *b, const float *weight,
                     float *sum, float *out, int64_t N, int64_t C, float eps) {
  return addRmsNorm("zrt_add_rms_norm", a, b, weight, sum, out, N, C, eps);
}

int zrt_add_rms_norm_bf16(const zrt_bf16 *a, const zrt_bf16 *b,
                          const zrt_bf16 *weight, zrt_bf16 *sum, zrt_bf16 *out,
                          int64_t N, int64_t C, float eps) {
  return addRmsNorm("zrt_add_rms_norm_bf16", a, b, weight, sum, out, N, C, eps);
}

int zrt_rms_norm_backward(const float *dout, const float *x,
                          const float *weight, const float *addend, float *dx,
                          float *dweight, float *workspace, int64_t N,
                          int64_t C, float eps) {
  return rmsNormBackward("zrt_rms_norm_backward", dout, x, weight, addend, dx,
                         dweight, workspace, N, C, eps);
}

int zrt_rms_norm_backward_bf16(const zrt_bf16 *dout, const zrt_bf16 *x,
                               const zrt_bf16 *weight, const zrt_bf16 *addend,
                               zrt_bf16 *dx, zrt_bf16 *dweight,
                               float *workspace, int64_t N, int64_t C,
                               float eps) {
  return rmsNormBackward("zrt_rms_norm_backward_bf16", dout, x, weight, addend,
                         dx, dweight, workspace, N, C, eps);
}

} // extern "C"
