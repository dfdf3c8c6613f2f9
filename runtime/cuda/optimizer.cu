//===- optimizer.cu - CUDA backend: AdamW, gradient norm, clipping --------===//
//
// zrt_adamw_step(_bf16_grad, _f16_grad), zrt_shard_adamw,
// zrt_sum_squares(_bf16, _f16) and
// zrt_clip_coef_scaled on device memory, following the CPU runtime
// (runtime/src/cpu/optimizer.cpp, lowering_support.cpp) operation by operation:
//  * AdamW: the scalars the CPU computes in double and rounds to f32 are
//    computed on the host with the same code and passed to the kernel; the
//    per-element f32 operations use explicit round-to-nearest intrinsics so
//    that nvcc contracts nothing on its own (see adamwElement for the one
//    place where the CPU build fuses and this kernel does the same).
//  * Sums of squares: accumulated in double by a fixed grid (deterministic:
//    the partial sums and their order depend only on n), then one block adds
//    the partials in a fixed order.
//
//===----------------------------------------------------------------------===//

#include "device_util.cuh"

#include "../src/common/arg_checks.h"
#include "../src/common/shard_runs.h"

#include <cuda_runtime.h>

#include <cmath>

namespace {

using namespace zrt_cuda;

/// The f32 scalars of one AdamW step (optimizer.cpp AdamwScalars).
struct AdamwScalars {
  float decay, b1, b2, oneMinusB1, oneMinusB2, negStepSize, bc2Sqrt, eps,
      gradScale;
};

/// The scalars exactly as optimizer.cpp's adamw() computes them: python
/// doubles (1 - lr*wd, 1 - beta^t, lr / bc1, sqrt(bc2)) rounded to f32.
AdamwScalars adamwScalars(double lr, double beta1, double beta2, double eps,
                          double weightDecay, float gradScale, int64_t step) {
  AdamwScalars k;
  k.decay = static_cast<float>(1.0 - lr * weightDecay);
  k.b1 = static_cast<float>(beta1);
  k.b2 = static_cast<float>(beta2);
  k.oneMinusB1 = static_cast<float>(1.0 - beta1);
  k.oneMinusB2 = static_cast<float>(1.0 - beta2);
  const double bc1 = 1.0 - std::pow(beta1, static_cast<double>(step));
  const double bc2 = 1.0 - std::pow(beta2, static_cast<double>(step));
  k.negStepSize = static_cast<float>(-(lr / bc1));
  k.bc2Sqrt = static_cast<float>(std::sqrt(bc2));
  k.eps = static_cast<float>(eps);
  k.gradScale = gradScale;
  return k;
}

__device__ __forceinline__ float loadGrad(const float *g, int64_t i) {
  return g[i];
}
__device__ __forceinline__ float loadGrad(const uint16_t *g, int64_t i) {
  return bf16ToF32(g[i]);
}
/// An f16 element (zrt_f16 is uint16_t like zrt_bf16: a distinct type for
/// the kernels' overloads).
struct F16Elem {
  uint16_t bits;
};
__device__ __forceinline__ float loadGrad(const F16Elem *g, int64_t i) {
  return zrt::f16ToF32(g[i].bits);
}

/// One element of torch's _single_tensor_adamw in optimizer.cpp's order of
/// f32 operations:
///   g = grad * gradScale;  p = param * decay;
///   m = m * b1 + (1 - b1) * g;  v = v * b2 + (1 - b2) * g * g;
///   denom = sqrt(v) / bc2Sqrt + eps;  p = p + negStepSize * (m / denom).
/// The CPU kernel runs as GCC compiles it for the host: its x86-64-v3/v4
/// clones (every AVX2 / AVX-512 CPU, i.e. any host of a GPU) contract the
/// three multiply-adds into FMAs, m * b1 + rn((1 - b1) * g),
/// v * b2 + rn(rn((1 - b2) * g) * g) and rn(m / denom) * negStepSize + p,
/// and this kernel does exactly the same with __fmaf_rn; everything else is
/// a separately rounded operation. (Against the baseline x86-64 clone,
/// which fuses nothing, results differ by at most an ulp or two.)
__device__ __forceinline__ void adamwElement(float &param, float &m, float &v,
                                             float grad,
                                             const AdamwScalars &k) {
  const float g = __fmul_rn(grad, k.gradScale);
  const float p = __fmul_rn(param, k.decay);
  const float mi = __fmaf_rn(m, k.b1, __fmul_rn(k.oneMinusB1, g));
  const float vi = __fmaf_rn(v, k.b2, __fmul_rn(__fmul_rn(k.oneMinusB2, g), g));
  const float denom = __fadd_rn(__fdiv_rn(__fsqrt_rn(vi), k.bc2Sqrt), k.eps);
  param = __fmaf_rn(__fdiv_rn(mi, denom), k.negStepSize, p);
  m = mi;
  v = vi;
}

template <typename G>
__global__ void adamwKernel(float *param, float *m, float *v, const G *grad,
                            float *outF32, uint16_t *outBf16, int64_t n,
                            AdamwScalars k) {
  ZRT_GRID_STRIDE(i, n) {
    float p = param[i], mi = m[i], vi = v[i];
    adamwElement(p, mi, vi, loadGrad(grad, i), k);
    param[i] = p;
    m[i] = mi;
    v[i] = vi;
    if (outF32)
      outF32[i] = p;
    if (outBf16)
      outBf16[i] = f32ToBf16(p);
  }
}

/// Runs of one zrt_shard_adamw launch: run r covers the flat elements
/// [start[r], start[r + 1]) and takes the weight decay when decayed[r].
/// Passed by value (about 1.2 KB of kernel parameters, under the 4 KB every
/// architecture allows); a call with more runs launches once per table.
constexpr int kAdamwMaxRuns = 128;
struct AdamwRuns {
  int count = 0;
  int64_t start[kAdamwMaxRuns + 1];
  uint8_t decayed[kAdamwMaxRuns];
};

/// adamwKernel over the elements [runs.start[0], runs.start[count]) of a
/// flat range (param, m, v, grad point at its element runs.start[0]),
/// each element with its run's decay factor (k.decay or noDecay) and
/// otherwise adamwElement's arithmetic: bit-identical to one adamwKernel
/// launch per run.
template <typename G>
__global__ void adamwRunsKernel(float *param, float *m, float *v,
                                const G *grad, int64_t n, AdamwScalars k,
                                float noDecay, AdamwRuns runs) {
  ZRT_GRID_STRIDE(i, n) {
    // The last run starting at or before i (binary search; a warp's
    // elements are adjacent, so its lanes mostly take the same path).
    const int64_t at = runs.start[0] + i;
    int lo = 0, hi = runs.count - 1;
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if (runs.start[mid] <= at)
        lo = mid;
      else
        hi = mid - 1;
    }
    AdamwScalars kk = k;
    kk.decay = runs.decayed[lo] ? k.decay : noDecay;
    float p = param[i], mi = m[i], vi = v[i];
    adamwElement(p, mi, vi, loadGrad(grad, i), kk);
    param[i] = p;
    m[i] = mi;
    v[i] = vi;
  }
}

/// optimizer.cpp adamw(): the shared argument checks (arg_checks.h), then
/// one kernel over [0, n).
template <typename G>
int adamw(const char *fn, float *param, float *m, float *v, const G *grad,
          float *outF32, uint16_t *outBf16, int64_t n, double lr, double beta1,
          double beta2, double eps, double weightDecay, float gradScale,
          int64_t step) {
  if (int st =
          zrt::checkAdamwArgs(fn, param, m, v, grad, n, step, zrt_cuda::fail))
    return st;
  if (n == 0)
    return ZRT_OK;
  const AdamwScalars k =
      adamwScalars(lr, beta1, beta2, eps, weightDecay, gradScale, step);
  adamwKernel<<<blocksFor(n), kThreads, 0, stream()>>>(param, m, v, grad,
                                                       outF32, outBf16, n, k);
  return launched(fn);
}

/// Blocks of the first stage of the sums of squares (at most; fewer for
/// small n). Fixed by n alone, so the result is deterministic.
constexpr int kSumSqBlocks = 1024;
/// Threads of the single block of the second stage (one partial per thread
/// at most when kSumSqFinalThreads >= kSumSqBlocks; more are looped over).
constexpr int kSumSqFinalThreads = 1024;

/// Stage 1: partial[b] = sum of x[i]^2 (in double) over the elements of
/// block b's grid-stride loop.
template <typename T>
__global__ void sumSquaresPartialKernel(const T *x, int64_t n,
                                        double *partial) {
  __shared__ double shared[32];
  double total = 0.0;
  ZRT_GRID_STRIDE(i, n) {
    const double d = loadGrad(x, i);
    total += d * d;
  }
  total = blockSum(total, shared);
  if (threadIdx.x == 0)
    partial[blockIdx.x] = total;
}

/// Stage 2 (one block): *out = f32(sum of the `count` partials).
__global__ void sumSquaresFinalKernel(const double *partial, int count,
                                      float *out) {
  __shared__ double shared[32];
  double total = 0.0;
  for (int b = threadIdx.x; b < count; b += blockDim.x)
    total += partial[b];
  total = blockSum(total, shared);
  if (threadIdx.x == 0)
    *out = static_cast<float>(total);
}

/// optimizer.cpp sumSquares(): *out = f32(sum_i x[i]^2), accumulated in
/// double; *out = 0 for n == 0.
template <typename T>
int sumSquares(const char *fn, const T *x, int64_t n, float *out) {
  if (int st = zrt::checkSumSquaresArgs(fn, x, n, out, zrt_cuda::fail))
    return st;
  int blocks = blocksFor(n);
  blocks = blocks < kSumSqBlocks ? blocks : kSumSqBlocks;
  void *ws = nullptr;
  if (int st =
          workspace(static_cast<int64_t>(blocks) * sizeof(double), &ws, fn))
    return st;
  double *partial = static_cast<double *>(ws);
  // With n == 0 the one block writes a partial of 0: *out = 0, as the CPU.
  sumSquaresPartialKernel<<<blocks, kThreads, 0, stream()>>>(x, n, partial);
  if (int st = launched(fn))
    return st;
  sumSquaresFinalKernel<<<1, kSumSqFinalThreads, 0, stream()>>>(partial, blocks,
                                                                out);
  return launched(fn);
}

/// lowering_support.cpp zrt_clip_coef_scaled, one thread:
/// norm = s * sqrt(ss), coef = s * min(1, max_norm / (norm + 1e-6)), or s
/// when max_norm <= 0; each operation rounded separately as on the CPU.
__global__ void clipCoefKernel(const float *sumSquares, const float *gradScale,
                               float maxNorm, float *coef, float *norm) {
  const float s = *gradScale;
  const float total = __fmul_rn(s, __fsqrt_rn(*sumSquares));
  float c = s;
  if (maxNorm > 0.0f) {
    const float r = __fdiv_rn(maxNorm, __fadd_rn(total, 1e-6f));
    c = __fmul_rn(s, r < 1.0f ? r : 1.0f); // std::min(1.0f, r)
  }
  *norm = total;
  *coef = c;
}

} // namespace

namespace zrt_cuda {

int adamw_step(float *param, float *m, float *v, const float *grad,
               float *out_f32, zrt_bf16 *out_bf16, int64_t n, double lr,
               double beta1, double beta2, double eps, double weight_decay,
               float grad_scale, int64_t step) {
  return adamw("zrt_adamw_step", param, m, v, grad, out_f32, out_bf16, n, lr,
               beta1, beta2, eps, weight_decay, grad_scale, step);
}

int adamw_step_bf16_grad(float *param, float *m, float *v, const zrt_bf16 *grad,
                         float *out_f32, zrt_bf16 *out_bf16, int64_t n,
                         double lr, double beta1, double beta2, double eps,
                         double weight_decay, float grad_scale, int64_t step) {
  return adamw("zrt_adamw_step_bf16_grad", param, m, v, grad, out_f32, out_bf16,
               n, lr, beta1, beta2, eps, weight_decay, grad_scale, step);
}

int adamw_step_f16_grad(float *param, float *m, float *v, const zrt_f16 *grad,
                        float *out_f32, zrt_bf16 *out_bf16, int64_t n,
                        double lr, double beta1, double beta2, double eps,
                        double weight_decay, float grad_scale, int64_t step) {
  if (out_bf16)
    return zrt_cuda::fail(ZRT_ERR_INVALID_ARGUMENT,
                          "zrt_adamw_step_f16_grad: out_bf16 must be NULL");
  return adamw("zrt_adamw_step_f16_grad", param, m, v,
               reinterpret_cast<const F16Elem *>(grad), out_f32, nullptr, n,
               lr, beta1, beta2, eps, weight_decay, grad_scale, step);
}

/// zrt_shard_adamw over the rank's slice [rank * shard, (rank + 1) * shard):
/// the runs of forEachShardRun (shard_runs.h: each member segment with
/// decay[i] ? weight_decay : 0, the gaps between them without), adjacent
/// runs of equal decay merged, go to adamwRunsKernel in tables of up to
/// kAdamwMaxRuns runs: one launch for a group of up to 128 alternations of
/// decay (a multi-tensor AdamW over all of GPT-2's 148 tensors is two),
/// the same numbers as one zrt_adamw_step launch per run. The group tables
/// are host arrays; nothing is allocated.
int shard_adamw(float *param, float *m, float *v, const void *grad,
                int grad_dtype, int64_t shard, int rank, int num_members,
                const int64_t *offsets, const int64_t *numels,
                const uint8_t *decay, double lr, double beta1, double beta2,
                double eps, double weight_decay, float grad_scale,
                int64_t step) {
  const char *fn = "zrt_shard_adamw";
  if (int st = zrt::checkShardAdamwArgs(
          fn, param, m, v, grad, grad_dtype, shard, rank, num_members,
          offsets, numels, decay, step, zrt_cuda::fail))
    return st;
  const int64_t begin = static_cast<int64_t>(rank) * shard;
  const AdamwScalars k = adamwScalars(lr, beta1, beta2, eps, weight_decay,
                                      grad_scale, step);
  const float noDecay =
      adamwScalars(lr, beta1, beta2, eps, 0.0, grad_scale, step).decay;
  AdamwRuns table;
  auto flush = [&]() -> int {
    if (table.count == 0)
      return ZRT_OK;
    const int64_t o = table.start[0] - begin;
    const int64_t n = table.start[table.count] - table.start[0];
    if (grad_dtype == ZRT_F32)
      adamwRunsKernel<<<blocksFor(n), kThreads, 0, stream()>>>(
          param + o, m + o, v + o, static_cast<const float *>(grad) + o, n, k,
          noDecay, table);
    else if (grad_dtype == ZRT_F16)
      adamwRunsKernel<<<blocksFor(n), kThreads, 0, stream()>>>(
          param + o, m + o, v + o, static_cast<const F16Elem *>(grad) + o, n,
          k, noDecay, table);
    else
      adamwRunsKernel<<<blocksFor(n), kThreads, 0, stream()>>>(
          param + o, m + o, v + o, static_cast<const uint16_t *>(grad) + o, n,
          k, noDecay, table);
    table.count = 0;
    return launched(fn);
  };
  auto run = [&](int64_t lo, int64_t hi, double wd) -> int {
    if (hi <= lo)
      return ZRT_OK;
    const uint8_t decayed = wd != 0.0;
    if (table.count > 0 && table.decayed[table.count - 1] == decayed &&
        table.start[table.count] == lo) {
      table.start[table.count] = hi; // extends the last run
      return ZRT_OK;
    }
    if (table.count == kAdamwMaxRuns)
      if (int st = flush())
        return st;
    table.start[table.count] = lo;
    table.decayed[table.count] = decayed;
    table.start[++table.count] = hi;
    return ZRT_OK;
  };
  if (int st = zrt::forEachShardRun(shard, rank, num_members, offsets, numels,
                                    decay, weight_decay, run))
    return st;
  return flush();
}

int sum_squares(const float *x, int64_t n, float *out) {
  return sumSquares("zrt_sum_squares", x, n, out);
}

int sum_squares_bf16(const zrt_bf16 *x, int64_t n, float *out) {
  return sumSquares("zrt_sum_squares_bf16", x, n, out);
}

int sum_squares_f16(const zrt_f16 *x, int64_t n, float *out) {
  return sumSquares("zrt_sum_squares_f16",
                    reinterpret_cast<const F16Elem *>(x), n, out);
}

int clip_coef_scaled(const float *sum_squares, const float *grad_scale,
                     float max_norm, float *coef, float *norm) {
  const char *fn = "zrt_clip_coef_scaled";
  if (int st = zrt::checkClipCoefArgs(fn, sum_squares, grad_scale, coef, norm,
                                      zrt_cuda::fail))
    return st;
  clipCoefKernel<<<1, 1, 0, stream()>>>(sum_squares, grad_scale, max_norm, coef,
                                        norm);
  return launched(fn);
}

} // namespace zrt_cuda
