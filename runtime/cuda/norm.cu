//===- norm.cu - CUDA backend: layer normalization and softmax ------------===//
//
// Row-wise kernels over [N, C] with one warp per row (kRowsPerBlock rows
// per block): each lane takes the columns j = lane, lane + 32, ... (so a
// warp reads 128 contiguous bytes at a time) and the row's sums are warp
// reductions. Per element the arithmetic is the CPU runtime's
// (runtime/src/norm.cpp, lowering_support.cpp) operation for operation,
// with __fmul_rn / __fadd_rn / __fsub_rn where nvcc would otherwise
// contract a multiply-add into an FMA, and __fdiv_rn / __fsqrt_rn for the
// divisions and square roots (IEEE-rounded as on the CPU, whatever flags
// the backend is built with; it uses no fast-math). The row sums are f32
// as on the CPU but in a different order (the CPU's sequential sums lose
// more, growing with C), and softmax's expf is CUDA's (2 ulp), so results
// agree to rounding (about 1e-6 relative), not bit for bit.
// layer_norm_backward's dweight / dbias are deterministic column sums
// (columnSums, device_util.cuh).
//
// The layer-norm kernels are templated over the element type T of x, out,
// dout, weight, bias, dx (float, or zrt_bf16 for the native bf16 functions
// of zrt.h): loads widen (ldf), stores round once (stf), and everything in
// between, the statistics (f32) included, is the same code, so a bf16 call
// computes the f32 kernel's numbers on the widened values with one rounding
// per output (and reads and writes half the bytes; a warp reads 64
// contiguous bytes per step instead of 128).
//
// The residual-add forms (llm.c's fused_residual_forward and its
// layernorm_backward accumulating into dresidual) are the same kernels with
// the row's source and dx's store generalized: zrt_add_layer_norm's warp
// computes its row of sum = a + b (AddOp, zrt_add's arithmetic), stores it
// and keeps it in shared memory, and normalizes it from there with the
// layer-norm row code (normalizeRow); zrt_layer_norm_backward_add's dx
// kernel adds the addend to each dx value as stored (asStored). Both are
// therefore bit for bit the unfused zrt_add + zrt_layer_norm and
// zrt_layer_norm_backward + zrt_add of this backend, in one pass.
//
//===----------------------------------------------------------------------===//

#include "device_util.cuh"

#include "../src/arg_checks.h"

#include <cuda_runtime.h>

namespace {

using namespace zrt_cuda;

/// The row handled by the calling warp (kRowsPerBlock warps per block).
__device__ __forceinline__ int64_t warpRow() {
  return blockIdx.x * static_cast<int64_t>(kRowsPerBlock) + (threadIdx.x >> 5);
}

/// Two-pass f32 mean and 1 / sqrt(var + eps) of the C values at xi, as
/// zrt_layer_norm: mean = sum / C, var = sum (x - mean)^2 / C (biased).
/// Called by all 32 lanes of a warp; every lane gets the same m and s (the
/// xor-butterfly sums are bitwise identical on all lanes).
template <typename T>
__device__ __forceinline__ void warpRowStats(const T *xi, int64_t C, float eps,
                                             int lane, float &m, float &s) {
  float sum = 0.0f;
  for (int64_t j = lane; j < C; j += 32)
    sum += ldf(xi + j);
  m = __fdiv_rn(warpSum(sum), static_cast<float>(C));
  float var = 0.0f;
  for (int64_t j = lane; j < C; j += 32) {
    const float d = ldf(xi + j) - m;
    var = __fadd_rn(var, __fmul_rn(d, d)); // two roundings, as the CPU
  }
  var = __fdiv_rn(warpSum(var), static_cast<float>(C));
  s = __fdiv_rn(1.0f, __fsqrt_rn(var + eps));
}

/// Normalizes the row xi [C] into oi (and mean[row], rstd[row] when not
/// NULL), as zrt_layer_norm: warpRowStats, then (x - mean) * rstd * weight
/// + bias. Called by all 32 lanes of a warp. Each lane reads and writes only
/// its columns j = lane, lane + 32, ..., and the warp's sums synchronize it
/// after every lane has read its whole row: oi == xi is safe.
template <typename T>
__device__ __forceinline__ void
normalizeRow(const T *xi, const T *weight, const T *bias, T *oi, float *mean,
             float *rstd, int64_t row, int64_t C, float eps, int lane) {
  float m, s;
  warpRowStats(xi, C, eps, lane, m, s);
  for (int64_t j = lane; j < C; j += 32) {
    float v = __fmul_rn(__fsub_rn(ldf(xi + j), m), s);
    if (weight)
      v = __fmul_rn(v, ldf(weight + j));
    if (bias)
      v = __fadd_rn(v, ldf(bias + j));
    stf(oi + j, v);
  }
  if (lane == 0) {
    if (mean)
      mean[row] = m;
    if (rstd)
      rstd[row] = s;
  }
}

template <typename T>
__global__ void layerNormKernel(const T *x, const T *weight, const T *bias,
                                T *out, float *mean, float *rstd, int64_t N,
                                int64_t C, float eps) {
  const int64_t row = warpRow();
  if (row >= N)
    return; // the whole warp: row is uniform across it
  normalizeRow(x + row * C, weight, bias, out + row * C, mean, rstd, row, C,
               eps, threadIdx.x & 31);
}

/// Dynamic shared memory of addLayerNormKernel<T, true>: kRowsPerBlock rows
/// of C elements of T, one per warp.
extern __shared__ uint4 addLayerNormSmem[];

/// zrt_add_layer_norm(_bf16): each warp writes its row of sum = a + b
/// (AddOp, stored as T: zrt_add's numbers) and normalizes the stored values
/// (normalizeRow: zrt_layer_norm's numbers on sum). Staged, the row is also
/// kept in shared memory and normalized from there; else (rows too long
/// for it) each lane reads its columns of sum back. Either way a lane reads
/// only the columns it wrote, so the add needs no barrier before the
/// statistics.
template <typename T, bool Staged>
__global__ void addLayerNormKernel(const T *a, const T *b, const T *weight,
                                   const T *bias, T *sum, T *out, float *mean,
                                   float *rstd, int64_t N, int64_t C,
                                   float eps) {
  const int64_t row = warpRow();
  if (row >= N)
    return;
  const int lane = threadIdx.x & 31;
  const T *ai = a + row * C, *bi = b + row * C;
  T *si = sum + row * C;
  T *xi = si;
  if constexpr (Staged)
    xi = reinterpret_cast<T *>(addLayerNormSmem) + (threadIdx.x >> 5) * C;
  for (int64_t j = lane; j < C; j += 32) {
    const float v = AddOp{}(ldf(ai + j), ldf(bi + j));
    stf(si + j, v);
    if constexpr (Staged)
      stf(xi + j, v);
  }
  normalizeRow(xi, weight, bias, out + row * C, mean, rstd, row, C, eps, lane);
}

template <typename T>
__global__ void layerNormStatsKernel(const T *x, float *mean, float *rstd,
                                     int64_t N, int64_t C, float eps) {
  const int64_t row = warpRow();
  if (row >= N)
    return;
  const int lane = threadIdx.x & 31;
  float m, s;
  warpRowStats(x + row * C, C, eps, lane, m, s);
  if (lane == 0) {
    mean[row] = m;
    rstd[row] = s;
  }
}

/// dx of zrt_layer_norm_backward, one warp per row:
///   dx = s * (g - mean(g) - xhat * mean(g * xhat)), g = weight * dout;
/// with addend (zrt_layer_norm_backward_add), dx = addend + that value as
/// stored in T (AddOp: zrt_add's numbers), in the same pass.
template <typename T>
__global__ void layerNormBackwardKernel(const T *dout, const T *x,
                                        const T *weight, const float *mean,
                                        const float *rstd, const T *addend,
                                        T *dx, int64_t N, int64_t C) {
  const int64_t row = warpRow();
  if (row >= N)
    return;
  const int lane = threadIdx.x & 31;
  const T *xi = x + row * C, *gi = dout + row * C;
  const float m = mean[row], s = rstd[row];
  float gMean = 0.0f, gxMean = 0.0f;
  for (int64_t j = lane; j < C; j += 32) {
    const float g =
        weight ? __fmul_rn(ldf(weight + j), ldf(gi + j)) : ldf(gi + j);
    gMean += g;
    gxMean += __fmul_rn(__fmul_rn(g, __fsub_rn(ldf(xi + j), m)), s);
  }
  gMean = __fdiv_rn(warpSum(gMean), static_cast<float>(C));
  gxMean = __fdiv_rn(warpSum(gxMean), static_cast<float>(C));
  T *dxi = dx + row * C;
  const T *addi = addend ? addend + row * C : nullptr;
  for (int64_t j = lane; j < C; j += 32) {
    const float g =
        weight ? __fmul_rn(ldf(weight + j), ldf(gi + j)) : ldf(gi + j);
    const float xhat = __fmul_rn(__fsub_rn(ldf(xi + j), m), s);
    const float d =
        __fmul_rn(s, __fsub_rn(__fsub_rn(g, gMean), __fmul_rn(xhat, gxMean)));
    stf(dxi + j, addi ? AddOp{}(ldf(addi + j), asStored<T>(d)) : d);
  }
}

/// The terms of dweight and dbias: dout * (x - mean) * rstd and dout.
template <typename T> struct LayerNormParamTerm {
  const T *dout, *x;
  const float *mean, *rstd;
  int64_t C;
  __device__ void add(int64_t r, int64_t j, float *acc) const {
    const float g = ldf(dout + r * C + j);
    acc[0] += __fmul_rn(__fmul_rn(g, __fsub_rn(ldf(x + r * C + j), mean[r])),
                        rstd[r]);
    acc[1] += g;
  }
};

/// out = exp(x - max) / sum exp(x - max) per row; the maximum ignores NaN
/// as the CPU's `x > mx ? x : mx` does (fmaxf), and exp(x - max) is
/// recomputed in the last pass instead of stored, so out == x is safe.
__global__ void softmaxKernel(const float *x, float *out, int64_t N,
                              int64_t C) {
  const int64_t row = warpRow();
  if (row >= N)
    return;
  const int lane = threadIdx.x & 31;
  const float *xi = x + row * C;
  float mx = -INFINITY;
  for (int64_t j = lane; j < C; j += 32)
    mx = fmaxf(mx, xi[j]);
  mx = warpMax(mx);
  float sum = 0.0f;
  for (int64_t j = lane; j < C; j += 32)
    sum += expf(xi[j] - mx);
  const float inv = __fdiv_rn(1.0f, warpSum(sum));
  float *oi = out + row * C;
  for (int64_t j = lane; j < C; j += 32)
    oi[j] = __fmul_rn(expf(xi[j] - mx), inv);
}

__global__ void softmaxBackwardKernel(const float *y, const float *dy,
                                      float *dx, int64_t N, int64_t C) {
  const int64_t row = warpRow();
  if (row >= N)
    return;
  const int lane = threadIdx.x & 31;
  const float *yi = y + row * C, *gi = dy + row * C;
  float dot = 0.0f;
  for (int64_t j = lane; j < C; j += 32)
    dot = __fadd_rn(dot, __fmul_rn(yi[j], gi[j]));
  dot = warpSum(dot);
  float *dxi = dx + row * C;
  for (int64_t j = lane; j < C; j += 32)
    dxi[j] = __fmul_rn(yi[j], __fsub_rn(gi[j], dot));
}

/// zrt_layer_norm(_bf16) after the argument checks.
template <typename T>
int layerNorm(const char *fn, const T *x, const T *weight, const T *bias,
              T *out, float *mean, float *rstd, int64_t N, int64_t C,
              float eps) {
  if (int st = zrt::checkLayerNormArgs(fn, x, out, N, C, eps, zrt_cuda::fail))
    return st;
  if (N == 0)
    return ZRT_OK;
  layerNormKernel<T><<<warpRowBlocks(N), kThreads, 0, stream()>>>(
      x, weight, bias, out, mean, rstd, N, C, eps);
  return launched(fn);
}

/// zrt_add_layer_norm(_bf16) after the argument checks: the staged kernel
/// when a block's kRowsPerBlock rows of T fit in its shared memory (C up to
/// 7264 f32 or 14528 bf16 on an H100 / H200), else the unstaged one.
template <typename T>
int addLayerNorm(const char *fn, const T *a, const T *b, const T *weight,
                 const T *bias, T *sum, T *out, float *mean, float *rstd,
                 int64_t N, int64_t C, float eps) {
  if (int st = zrt::checkAddLayerNormArgs(fn, a, b, sum, out, N, C, eps,
                                          sizeof(T), zrt_cuda::fail))
    return st;
  if (N == 0)
    return ZRT_OK;
  int optin = 0;
  if (int st = sharedMemoryOptin(&optin, fn))
    return st;
  const int64_t smem = kRowsPerBlock * C * static_cast<int64_t>(sizeof(T));
  if (smem > optin) {
    addLayerNormKernel<T, false><<<warpRowBlocks(N), kThreads, 0, stream()>>>(
        a, b, weight, bias, sum, out, mean, rstd, N, C, eps);
    return launched(fn);
  }
  if (int st = allowDynamicSharedMemory(addLayerNormKernel<T, true>, smem, fn))
    return st;
  addLayerNormKernel<T, true><<<warpRowBlocks(N), kThreads, smem, stream()>>>(
      a, b, weight, bias, sum, out, mean, rstd, N, C, eps);
  return launched(fn);
}

/// zrt_layer_norm_backward(_bf16) (addend NULL), or with Add its _add form
/// zrt_layer_norm_backward_add(_bf16): addend and dx required, dx = addend +
/// dx in the dx kernel.
template <bool Add, typename T>
int layerNormBackward(const char *fn, const T *dout, const T *x,
                      const T *weight, const float *mean, const float *rstd,
                      const T *addend, T *dx, T *dweight, T *dbias, int64_t N,
                      int64_t C) {
  if (int st = Add ? zrt::checkLayerNormBackwardAddArgs(
                         fn, dout, x, mean, rstd, addend, dx, N, C, sizeof(T),
                         zrt_cuda::fail)
                   : zrt::checkLayerNormBackwardArgs(fn, dout, x, mean, rstd, N,
                                                     C, zrt_cuda::fail))
    return st;
  // dx first, then the column sums, in the CPU's order.
  if (dx && N > 0) {
    layerNormBackwardKernel<T><<<warpRowBlocks(N), kThreads, 0, stream()>>>(
        dout, x, weight, mean, rstd, addend, dx, N, C);
    if (int st = launched(fn))
      return st;
  }
  if (!dweight && !dbias)
    return ZRT_OK;
  // N == 0 writes zeros, as the CPU's empty sums.
  return columnSums<2>(LayerNormParamTerm<T>{dout, x, mean, rstd, C}, N, C,
                       dweight, dbias, fn);
}

template <typename T>
int layerNormStats(const char *fn, const T *x, float *mean, float *rstd,
                   int64_t N, int64_t C, float eps) {
  if (int st = zrt::checkLayerNormStatsArgs(fn, x, mean, rstd, N, C, eps,
                                            zrt_cuda::fail))
    return st;
  if (N == 0)
    return ZRT_OK;
  layerNormStatsKernel<T>
      <<<warpRowBlocks(N), kThreads, 0, stream()>>>(x, mean, rstd, N, C, eps);
  return launched(fn);
}

} // namespace

namespace zrt_cuda {

int layer_norm(const float *x, const float *weight, const float *bias,
               float *out, float *mean, float *rstd, int64_t N, int64_t C,
               float eps) {
  return layerNorm("zrt_layer_norm", x, weight, bias, out, mean, rstd, N, C,
                   eps);
}

int layer_norm_backward(const float *dout, const float *x, const float *weight,
                        const float *mean, const float *rstd, float *dx,
                        float *dweight, float *dbias, int64_t N, int64_t C) {
  return layerNormBackward<false, float>("zrt_layer_norm_backward", dout, x,
                                         weight, mean, rstd, nullptr, dx,
                                         dweight, dbias, N, C);
}

int add_layer_norm(const float *a, const float *b, const float *weight,
                   const float *bias, float *sum, float *out, float *mean,
                   float *rstd, int64_t N, int64_t C, float eps) {
  return addLayerNorm("zrt_add_layer_norm", a, b, weight, bias, sum, out, mean,
                      rstd, N, C, eps);
}

int layer_norm_backward_add(const float *dout, const float *x,
                            const float *weight, const float *mean,
                            const float *rstd, const float *addend, float *dx,
                            float *dweight, float *dbias, int64_t N,
                            int64_t C) {
  return layerNormBackward<true>("zrt_layer_norm_backward_add", dout, x, weight,
                                 mean, rstd, addend, dx, dweight, dbias, N, C);
}

int layer_norm_stats(const float *x, float *mean, float *rstd, int64_t N,
                     int64_t C, float eps) {
  return layerNormStats("zrt_layer_norm_stats", x, mean, rstd, N, C, eps);
}

int layer_norm_bf16(const zrt_bf16 *x, const zrt_bf16 *weight,
                    const zrt_bf16 *bias, zrt_bf16 *out, float *mean,
                    float *rstd, int64_t N, int64_t C, float eps) {
  return layerNorm("zrt_layer_norm_bf16", x, weight, bias, out, mean, rstd, N,
                   C, eps);
}

int layer_norm_backward_bf16(const zrt_bf16 *dout, const zrt_bf16 *x,
                             const zrt_bf16 *weight, const float *mean,
                             const float *rstd, zrt_bf16 *dx, zrt_bf16 *dweight,
                             zrt_bf16 *dbias, int64_t N, int64_t C) {
  return layerNormBackward<false, zrt_bf16>("zrt_layer_norm_backward_bf16",
                                            dout, x, weight, mean, rstd,
                                            nullptr, dx, dweight, dbias, N, C);
}

int add_layer_norm_bf16(const zrt_bf16 *a, const zrt_bf16 *b,
                        const zrt_bf16 *weight, const zrt_bf16 *bias,
                        zrt_bf16 *sum, zrt_bf16 *out, float *mean, float *rstd,
                        int64_t N, int64_t C, float eps) {
  return addLayerNorm("zrt_add_layer_norm_bf16", a, b, weight, bias, sum, out,
                      mean, rstd, N, C, eps);
}

int layer_norm_backward_add_bf16(const zrt_bf16 *dout, const zrt_bf16 *x,
                                 const zrt_bf16 *weight, const float *mean,
                                 const float *rstd, const zrt_bf16 *addend,
                                 zrt_bf16 *dx, zrt_bf16 *dweight,
                                 zrt_bf16 *dbias, int64_t N, int64_t C) {
  return layerNormBackward<true>("zrt_layer_norm_backward_add_bf16", dout, x,
                                 weight, mean, rstd, addend, dx, dweight, dbias,
                                 N, C);
}

int layer_norm_stats_bf16(const zrt_bf16 *x, float *mean, float *rstd,
                          int64_t N, int64_t C, float eps) {
  return layerNormStats("zrt_layer_norm_stats_bf16", x, mean, rstd, N, C, eps);
}

int softmax(const float *x, float *out, int64_t N, int64_t C) {
  const char *fn = "zrt_softmax";
  if (int st = zrt::checkSoftmaxArgs(fn, x, out, N, C, zrt_cuda::fail))
    return st;
  if (N == 0)
    return ZRT_OK;
  softmaxKernel<<<warpRowBlocks(N), kThreads, 0, stream()>>>(x, out, N, C);
  return launched(fn);
}

int softmax_backward(const float *y, const float *dy, float *dx, int64_t N,
                     int64_t C) {
  const char *fn = "zrt_softmax_backward";
  if (int st =
          zrt::checkSoftmaxBackwardArgs(fn, y, dy, dx, N, C, zrt_cuda::fail))
    return st;
  if (N == 0)
    return ZRT_OK;
  softmaxBackwardKernel<<<warpRowBlocks(N), kThreads, 0, stream()>>>(y, dy, dx,
                                                                     N, C);
  return launched(fn);
}

} // namespace zrt_cuda
