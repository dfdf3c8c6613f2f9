//===- decoder.cu - CUDA backend: RMSNorm, SiLU/SwiGLU, RoPE
//---------------===//
//
// The Llama/Qwen kernels of zrt/decoder.h that the CUDA backend has so far
// (the grouped-query attention and the masked cross-entropy are CPU-only
// yet): RMSNorm (+ residual form, backward), SiLU and SwiGLU (+ backward),
// the rotary table (computed on the host with the CPU's code,
// rope_table.h, and copied: the same bits on both backends) and the
// rotation. Templated over the element type T (float, zrt_bf16): loads
// widen exactly (ldf), stores round once (stf), the f32 arithmetic in
// between is shared, so a bf16 call computes the f32 kernel's numbers on
// the widened values. Per element the arithmetic is the CPU's
// (runtime/src/cpu/rms_norm.cpp, swiglu.cpp, rope.cpp) with __fmul_rn /
// __fadd_rn against FMA contraction; RMSNorm's row sums are warp sums (a
// different order than the CPU's), and expf is CUDA's, so results agree
// with the CPU to rounding (about 1e-6 relative), not bit for bit.
//
// RMSNorm: one warp per row (kRowsPerBlock rows per block), lane l takes
// columns l, l + 32, ...; the backward's dweight is a deterministic column
// sum (one thread per column, rows in order) of dout * x * r with r [N]
// from the dx pass (kept in the caller's workspace or the runtime's).
//
//===----------------------------------------------------------------------===//

#include "device_util.cuh"

#include "../src/common/decoder_args.h"
#include "../src/common/rope_table.h"

#include <cuda_runtime.h>

#include <vector>

namespace {

using namespace zrt_cuda;

/// 1 / sqrt(mean(v^2) + eps) from a lane's partial sum of squares.
__device__ __forceinline__ float rowRsqrt(float ss, int64_t C, float eps) {
  ss = warpSum(ss);
  return __fdiv_rn(
      1.0f, __fsqrt_rn(__fadd_rn(__fdiv_rn(ss, static_cast<float>(C)), eps)));
}

/// zrt_rms_norm (a == nullptr) or zrt_add_rms_norm (row of sum = a + b
/// first, normalized from the stored sum).
template <typename T>
__global__ void rmsNormKernel(const T *x, const T *a, const T *b, T *sum,
                              const T *weight, T *out, int64_t N, int64_t C,
                              float eps) {
  const int64_t row =
      static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= N)
    return;
  const int64_t base = row * C;
  float ss = 0.0f;
  for (int64_t j = lane; j < C; j += 32) {
    float v;
    if (a) {
      v = asStored<T>(__fadd_rn(ldf(a + base + j), ldf(b + base + j)));
      stf(sum + base + j, v);
    } else {
      v = ldf(x + base + j);
    }
    ss = __fadd_rn(ss, __fmul_rn(v, v));
  }
  const float r = rowRsqrt(ss, C, eps);
  const T *src = a ? sum : x;
  for (int64_t j = lane; j < C; j += 32) {
    const float xr = asStored<T>(__fmul_rn(ldf(src + base + j), r));
    stf(out + base + j, weight ? __fmul_rn(ldf(weight + j), xr) : xr);
  }
}

/// dx of zrt_rms_norm_backward (with addend: addend + dx as stored), and r
/// per row into rstd when it is not null.
template <typename T>
__global__ void rmsNormBackwardKernel(const T *dout, const T *x,
                                      const T *weight, const T *addend, T *dx,
                                      float *rstd, int64_t N, int64_t C,
                                      float eps) {
  const int64_t row =
      static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= N)
    return;
  const int64_t base = row * C;
  float ss = 0.0f;
  for (int64_t j = lane; j < C; j += 32) {
    const float v = ldf(x + base + j);
    ss = __fadd_rn(ss, __fmul_rn(v, v));
  }
  const float r = rowRsqrt(ss, C, eps);
  if (rstd && lane == 0)
    rstd[row] = r;
  if (!dx)
    return;
  float m = 0.0f;
  for (int64_t j = lane; j < C; j += 32) {
    const float g = weight ? __fmul_rn(ldf(weight + j), ldf(dout + base + j))
                           : ldf(dout + base + j);
    m = __fadd_rn(m, __fmul_rn(__fmul_rn(g, ldf(x + base + j)), r));
  }
  m = __fdiv_rn(warpSum(m), static_cast<float>(C));
  for (int64_t j = lane; j < C; j += 32) {
    const float g = weight ? __fmul_rn(ldf(weight + j), ldf(dout + base + j))
                           : ldf(dout + base + j);
    const float xh = __fmul_rn(ldf(x + base + j), r);
    float d = asStored<T>(__fmul_rn(r, __fsub_rn(g, __fmul_rn(xh, m))));
    if (addend)
      d = __fadd_rn(ldf(addend + base + j), d);
    stf(dx + base + j, d);
  }
}

/// dweight[c] = sum over rows, in order, of dout * x * r.
template <typename T>
__global__ void rmsNormWeightGradKernel(const T *dout, const T *x,
                                        const float *rstd, T *dweight,
                                        int64_t N, int64_t C) {
  ZRT_GRID_STRIDE(c, C) {
    float acc = 0.0f;
    for (int64_t i = 0; i < N; ++i)
      acc = __fadd_rn(
          acc, __fmul_rn(__fmul_rn(ldf(dout + i * C + c), ldf(x + i * C + c)),
                         rstd[i]));
    stf(dweight + c, acc);
  }
}

__device__ __forceinline__ float sigmoidOf(float v) {
  return __fdiv_rn(1.0f, __fadd_rn(1.0f, expf(-v)));
}

/// silu (up == nullptr) or swiglu.
template <typename T>
__global__ void gatedKernel(const T *gate, const T *up, T *out, int64_t n) {
  ZRT_GRID_STRIDE(i, n) {
    const float g = ldf(gate + i);
    const float s = __fmul_rn(g, sigmoidOf(g));
    stf(out + i, up ? __fmul_rn(s, ldf(up + i)) : s);
  }
}

/// silu_backward (up == nullptr: dgate only) or swiglu_backward.
template <typename T>
__global__ void gatedBackwardKernel(const T *gate, const T *up, const T *dout,
                                    T *dgate, T *dup, int64_t n) {
  ZRT_GRID_STRIDE(i, n) {
    const float g = ldf(gate + i), d = ldf(dout + i), s = sigmoidOf(g);
    const float u = up ? ldf(up + i) : 1.0f;
    const float ds =
        __fmul_rn(s, __fadd_rn(1.0f, __fmul_rn(g, __fsub_rn(1.0f, s))));
    const float dg = __fmul_rn(__fmul_rn(d, u), ds);
    const float du = __fmul_rn(d, __fmul_rn(g, s));
    if (dgate)
      stf(dgate + i, dg);
    if (dup)
      stf(dup + i, du);
  }
}

/// zrt_rope: one thread per (row, pair).
template <typename T>
__global__ void ropeKernel(const T *x, const float *table, T *out, int64_t rows,
                           int64_t T_, int64_t H, int64_t D, bool rotateHalf,
                           float sign) {
  const int64_t half = D / 2;
  ZRT_GRID_STRIDE(k, rows * half) {
    const int64_t row = k / half, i = k % half, t = (row / H) % T_;
    const float c = table[(t * half + i) * 2];
    const float s = sign * table[(t * half + i) * 2 + 1];
    const int64_t ia = row * D + (rotateHalf ? i : 2 * i);
    const int64_t ib = row * D + (rotateHalf ? i + half : 2 * i + 1);
    const float a = ldf(x + ia), b = ldf(x + ib);
    stf(out + ia, __fsub_rn(__fmul_rn(a, c), __fmul_rn(b, s)));
    stf(out + ib, __fadd_rn(__fmul_rn(b, c), __fmul_rn(a, s)));
  }
}

template <typename T>
int rmsNorm(const char *fn, const T *x, const T *a, const T *b, T *sum,
            const T *weight, T *out, int64_t N, int64_t C, float eps) {
  if (int st = zrt::checkRmsNormArgs(fn, a ? a : x, out, N, N, C, eps,
                                     zrt_cuda::fail))
    return st;
  if (a) {
    if (N > 0 && (!b || !sum))
      return fail(ZRT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                  b ? "sum" : "b");
    if (sum == a || sum == b)
      return fail(ZRT_ERR_INVALID_ARGUMENT, "%s: sum must not overlap a or b",
                  fn);
  }
  if (N == 0)
    return ZRT_OK;
  rmsNormKernel<T><<<warpRowBlocks(N), kThreads, 0, stream()>>>(
      x, a, b, sum, weight, out, N, C, eps);
  return launched(fn);
}

template <typename T>
int rmsNormBackward(const char *fn, const T *dout, const T *x, const T *weight,
                    const T *addend, T *dx, T *dweight, float *work, int64_t N,
                    int64_t C, float eps) {
  if (int st = zrt::checkRmsNormArgs(fn, x, dout, N, N, C, eps, zrt_cuda::fail))
    return st;
  if (addend && !dx)
    return fail(ZRT_ERR_INVALID_ARGUMENT, "%s: an addend needs dx", fn);
  if (!dx && !dweight)
    return ZRT_OK;
  if (N == 0) {
    if (!dweight)
      return ZRT_OK;
    // No rows: the column sums are zero (the kernel reads no rstd).
    rmsNormWeightGradKernel<T><<<blocksFor(C), kThreads, 0, stream()>>>(
        dout, x, nullptr, dweight, N, C);
    return launched(fn);
  }
  float *rstd = nullptr;
  if (dweight) {
    rstd = work;
    void *ws = nullptr;
    if (!rstd) {
      if (int st = workspace(N * static_cast<int64_t>(sizeof(float)), &ws, fn))
        return st;
      rstd = static_cast<float *>(ws);
    }
  }
  rmsNormBackwardKernel<T><<<warpRowBlocks(N), kThreads, 0, stream()>>>(
      dout, x, weight, addend, dx, rstd, N, C, eps);
  if (int st = launched(fn))
    return st;
  if (!dweight)
    return ZRT_OK;
  rmsNormWeightGradKernel<T>
      <<<blocksFor(C), kThreads, 0, stream()>>>(dout, x, rstd, dweight, N, C);
  return launched(fn);
}

template <typename T>
int gated(const char *fn, const T *gate, const T *up, T *out, int64_t n,
          bool swiglu) {
  const void *p[] = {gate, up, out};
  const char *names[] = {"gate", "up", "out"};
  const void *q[] = {gate, out};
  const char *qnames[] = {"x", "out"};
  if (int st = swiglu
                   ? zrt::checkGatedArgs(fn, n, p, names, 3, zrt_cuda::fail)
                   : zrt::checkGatedArgs(fn, n, q, qnames, 2, zrt_cuda::fail))
    return st;
  if (n == 0)
    return ZRT_OK;
  gatedKernel<T><<<blocksFor(n), kThreads, 0, stream()>>>(gate, up, out, n);
  return launched(fn);
}

template <typename T>
int gatedBackward(const char *fn, const T *gate, const T *up, const T *dout,
                  T *dgate, T *dup, int64_t n, bool swiglu) {
  const void *p[] = {gate, dout, swiglu ? up : dgate};
  const char *names[] = {swiglu ? "gate" : "x", "dout", swiglu ? "up" : "dx"};
  if (int st = zrt::checkGatedArgs(fn, n, p, names, 3, zrt_cuda::fail))
    return st;
  if (n == 0)
    return ZRT_OK;
  gatedBackwardKernel<T>
      <<<blocksFor(n), kThreads, 0, stream()>>>(gate, up, dout, dgate, dup, n);
  return launched(fn);
}

template <typename T>
int rope(const char *fn, const T *x, const float *table, T *out, int64_t B,
         int64_t T_, int64_t H, int64_t D, int layout, int inverse) {
  if (int st = zrt::checkRopeArgs(fn, x, table, out, B, T_, H, D, layout,
                                  zrt_cuda::fail))
    return st;
  const int64_t rows = B * T_ * H;
  if (rows == 0)
    return ZRT_OK;
  ropeKernel<T><<<blocksFor(rows * (D / 2)), kThreads, 0, stream()>>>(
      x, table, out, rows, T_, H, D, layout == ZRT_ROPE_ROTATE_HALF,
      inverse ? -1.0f : 1.0f);
  return launched(fn);
}

} // namespace

namespace zrt_cuda {

int rms_norm(const float *x, const float *weight, float *out, int64_t N,
             int64_t C, float eps) {
  return rmsNorm<float>("zrt_rms_norm", x, nullptr, nullptr, nullptr, weight,
                        out, N, C, eps);
}
int rms_norm_bf16(const zrt_bf16 *x, const zrt_bf16 *weight, zrt_bf16 *out,
                  int64_t N, int64_t C, float eps) {
  return rmsNorm<zrt_bf16>("zrt_rms_norm_bf16", x, nullptr, nullptr, nullptr,
                           weight, out, N, C, eps);
}
int add_rms_norm(const float *a, const float *b, const float *weight,
                 float *sum, float *out, int64_t N, int64_t C, float eps) {
  return rmsNorm<float>("zrt_add_rms_norm", nullptr, a, b, sum, weight, out, N,
                        C, eps);
}
int add_rms_norm_bf16(const zrt_bf16 *a, const zrt_bf16 *b,
                      const zrt_bf16 *weight, zrt_bf16 *sum, zrt_bf16 *out,
                      int64_t N, int64_t C, float eps) {
  return rmsNorm<zrt_bf16>("zrt_add_rms_norm_bf16", nullptr, a, b, sum, weight,
                           out, N, C, eps);
}
int rms_norm_backward(const float *dout, const float *x, const float *weight,
                      const float *addend, float *dx, float *dweight,
                      float *workspace, int64_t N, int64_t C, float eps) {
  return rmsNormBackward<float>("zrt_rms_norm_backward", dout, x, weight,
                                addend, dx, dweight, workspace, N, C, eps);
}
int rms_norm_backward_bf16(const zrt_bf16 *dout, const zrt_bf16 *x,
                           const zrt_bf16 *weight, const zrt_bf16 *addend,
                           zrt_bf16 *dx, zrt_bf16 *dweight, float *workspace,
                           int64_t N, int64_t C, float eps) {
  return rmsNormBackward<zrt_bf16>("zrt_rms_norm_backward_bf16", dout, x,
                                   weight, addend, dx, dweight, workspace, N, C,
                                   eps);
}

int silu(const float *x, float *out, int64_t n) {
  return gated<float>("zrt_silu", x, nullptr, out, n, false);
}
int silu_bf16(const zrt_bf16 *x, zrt_bf16 *out, int64_t n) {
  return gated<zrt_bf16>("zrt_silu_bf16", x, nullptr, out, n, false);
}
int swiglu(const float *gate, const float *up, float *out, int64_t n) {
  return gated<float>("zrt_swiglu", gate, up, out, n, true);
}
int swiglu_bf16(const zrt_bf16 *gate, const zrt_bf16 *up, zrt_bf16 *out,
                int64_t n) {
  return gated<zrt_bf16>("zrt_swiglu_bf16", gate, up, out, n, true);
}
int silu_backward(const float *x, const float *dout, float *dx, int64_t n) {
  return gatedBackward<float>("zrt_silu_backward", x, nullptr, dout, dx,
                              nullptr, n, false);
}
int silu_backward_bf16(const zrt_bf16 *x, const zrt_bf16 *dout, zrt_bf16 *dx,
                       int64_t n) {
  return gatedBackward<zrt_bf16>("zrt_silu_backward_bf16", x, nullptr, dout, dx,
                                 nullptr, n, false);
}
int swiglu_backward(const float *gate, const float *up, const float *dout,
                    float *dgate, float *dup, int64_t n) {
  return gatedBackward<float>("zrt_swiglu_backward", gate, up, dout, dgate, dup,
                              n, true);
}
int swiglu_backward_bf16(const zrt_bf16 *gate, const zrt_bf16 *up,
                         const zrt_bf16 *dout, zrt_bf16 *dgate, zrt_bf16 *dup,
                         int64_t n) {
  return gatedBackward<zrt_bf16>("zrt_swiglu_backward_bf16", gate, up, dout,
                                 dgate, dup, n, true);
}

int rope_table(float *table, int64_t T, int64_t half, double theta,
               const zrt_rope_scaling *scaling) {
  const char *fn = "zrt_rope_table";
  if (int st = zrt::checkRopeTableArgs(fn, table, T, half, theta, scaling,
                                       zrt_cuda::fail))
    return st;
  if (T == 0)
    return ZRT_OK;
  std::vector<float> host(static_cast<size_t>(T * half * 2));
  zrt::fillRopeTable(host.data(), T, half, theta, scaling);
  if (int st =
          check(cudaMemcpyAsync(table, host.data(), host.size() * sizeof(float),
                                cudaMemcpyHostToDevice, stream()),
                ZRT_ERR_INVALID_ARGUMENT, fn, "cudaMemcpyAsync"))
    return st;
  // The host vector dies here: wait for the copy (an init-time call).
  return check(cudaStreamSynchronize(stream()), ZRT_ERR_INVALID_ARGUMENT, fn,
               "cudaStreamSynchronize");
}

int rope(const float *x, const float *table, float *out, int64_t B, int64_t T,
         int64_t H, int64_t D, int layout, int inverse) {
  return ::rope<float>("zrt_rope", x, table, out, B, T, H, D, layout, inverse);
}
int rope_bf16(const zrt_bf16 *x, const float *table, zrt_bf16 *out, int64_t B,
              int64_t T, int64_t H, int64_t D, int layout, int inverse) {
  return ::rope<zrt_bf16>("zrt_rope_bf16", x, table, out, B, T, H, D, layout,
                          inverse);
}

} // namespace zrt_cuda
