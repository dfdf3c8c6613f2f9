//===- elementwise.cu - CUDA backend: elementwise kernels and casts -------===//
//
// One grid-stride kernel per function; in-place calls (out == an input)
// are fine since every thread reads its element before writing it.
//
//===----------------------------------------------------------------------===//

#include "device_util.cuh"

#include <cuda_runtime.h>

namespace {

using namespace zrt_cuda;

// sqrt(2 / pi) and the cubic coefficient of the tanh GELU approximation,
// as the CPU runtime (elementwise.cpp), through 1 + tanh(u) = 2 sigmoid(2u).
constexpr float kGeluScale = 0.7978845608028654f;
constexpr float kGeluCubic = 0.044715f;

__global__ void fillKernel(float *out, float value, int64_t n) {
  ZRT_GRID_STRIDE(i, n) out[i] = value;
}

__global__ void addKernel(const float *a, const float *b, float *out,
                          int64_t n) {
  ZRT_GRID_STRIDE(i, n) out[i] = a[i] + b[i];
}

__global__ void scaleKernel(const float *x, float alpha, float *out,
                            int64_t n) {
  ZRT_GRID_STRIDE(i, n) out[i] = alpha * x[i];
}

__global__ void geluKernel(const float *x, float *out, int64_t n) {
  ZRT_GRID_STRIDE(i, n) {
    const float v = x[i];
    const float u = kGeluScale * (v + kGeluCubic * v * v * v);
    out[i] = v / (1.0f + expClamped(-2.0f * u));
  }
}

__global__ void geluBackwardKernel(const float *x, const float *dout,
                                   float *dx, int64_t n) {
  ZRT_GRID_STRIDE(i, n) {
    const float v = x[i];
    const float u = kGeluScale * (v + kGeluCubic * v * v * v);
    const float du = kGeluScale * (1.0f + 3.0f * kGeluCubic * v * v);
    const float ex = expClamped(-2.0f * u);
    const float s = 1.0f / (1.0f + ex);
    const float grad = s + 2.0f * v * s * (ex * s) * du;
    dx[i] = grad * dout[i];
  }
}

// mode 0: C = bias; mode 1: C = (beta == 0 ? 0 : beta * C) (+ bias);
// mode 2: C += bias. Over batch matrices [M, N] at stride_c.
__global__ void biasKernel(const float *bias, float *C, float beta, int mode,
                           int64_t batch, int64_t M, int64_t N,
                           int64_t stride_c) {
  const int64_t mn = M * N, total = batch * mn;
  ZRT_GRID_STRIDE(t, total) {
    const int64_t b = t / mn, r = t - b * mn, j = r % N;
    float &c = C[b * stride_c + r];
    const float bj = bias ? bias[j] : 0.0f;
    if (mode == 0)
      c = bj;
    else if (mode == 1)
      c = (beta == 0.0f ? 0.0f : beta * c) + bj;
    else
      c += bj;
  }
}


} // namespace

#define ZRT_CUDA_EW_CHECK(fn, n)                                               \
  ZRT_CUDA_REQUIRE((n) >= 0, "%s: n = %lld < 0", fn, (long long)(n))

namespace zrt_cuda {

int fill(float *out, float value, int64_t n) {
  const char *fn = "zrt_fill";
  ZRT_CUDA_EW_CHECK(fn, n);
  ZRT_CUDA_REQUIRE_BUF(fn, n, out);
  if (n == 0)
    return ZRT_OK;
  fillKernel<<<blocksFor(n), kThreads, 0, stream()>>>(out, value, n);
  return launched(fn);
}

int add(const float *a, const float *b, float *out, int64_t n) {
  const char *fn = "zrt_add";
  ZRT_CUDA_EW_CHECK(fn, n);
  ZRT_CUDA_REQUIRE_BUF(fn, n, a);
  ZRT_CUDA_REQUIRE_BUF(fn, n, b);
  ZRT_CUDA_REQUIRE_BUF(fn, n, out);
  if (n == 0)
    return ZRT_OK;
  addKernel<<<blocksFor(n), kThreads, 0, stream()>>>(a, b, out, n);
  return launched(fn);
}

int scale(const float *x, float alpha, float *out, int64_t n) {
  const char *fn = "zrt_scale";
  ZRT_CUDA_EW_CHECK(fn, n);
  ZRT_CUDA_REQUIRE_BUF(fn, n, x);
  ZRT_CUDA_REQUIRE_BUF(fn, n, out);
  if (n == 0)
    return ZRT_OK;
  scaleKernel<<<blocksFor(n), kThreads, 0, stream()>>>(x, alpha, out, n);
  return launched(fn);
}

int gelu(const float *x, float *out, int64_t n) {
  const char *fn = "zrt_gelu";
  ZRT_CUDA_EW_CHECK(fn, n);
  ZRT_CUDA_REQUIRE_BUF(fn, n, x);
  ZRT_CUDA_REQUIRE_BUF(fn, n, out);
  if (n == 0)
    return ZRT_OK;
  geluKernel<<<blocksFor(n), kThreads, 0, stream()>>>(x, out, n);
  return launched(fn);
}

int gelu_backward(const float *x, const float *dout, float *dx, int64_t n) {
  const char *fn = "zrt_gelu_backward";
  ZRT_CUDA_EW_CHECK(fn, n);
  ZRT_CUDA_REQUIRE_BUF(fn, n, x);
  ZRT_CUDA_REQUIRE_BUF(fn, n, dout);
  ZRT_CUDA_REQUIRE_BUF(fn, n, dx);
  if (n == 0)
    return ZRT_OK;
  geluBackwardKernel<<<blocksFor(n), kThreads, 0, stream()>>>(x, dout, dx, n);
  return launched(fn);
}

namespace detail {

int launch_broadcast_bias(const float *bias, float *C, int64_t batch,
                          int64_t M, int64_t N, int64_t stride_c) {
  biasKernel<<<blocksFor(batch * M * N), kThreads, 0, stream()>>>(bias, C, 0.0f, 0, batch,
                                                     M, N, stride_c);
  return cudaGetLastError();
}

int launch_scale_add_bias(const float *bias, float *C, float beta,
                          int64_t batch, int64_t M, int64_t N,
                          int64_t stride_c) {
  biasKernel<<<blocksFor(batch * M * N), kThreads, 0, stream()>>>(bias, C, beta, 1, batch,
                                                     M, N, stride_c);
  return cudaGetLastError();
}

int launch_add_bias(const float *bias, float *C, int64_t batch, int64_t M,
                    int64_t N, int64_t stride_c) {
  biasKernel<<<blocksFor(batch * M * N), kThreads, 0, stream()>>>(bias, C, 0.0f, 2, batch,
                                                     M, N, stride_c);
  return cudaGetLastError();
}

} // namespace detail
} // namespace zrt_cuda
