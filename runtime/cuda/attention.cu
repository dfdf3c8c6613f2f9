//===- attention.cu - CUDA backend: causal scaled-dot-product attention ---===//
//
// zrt_causal_attention(_backward) on device memory, the CPU runtime's
// algorithm (runtime/src/cpu/attention.cpp) with the (batch, head) slices
// batched: S = s Q K^T and O = P V as strided-batched cuBLAS GEMMs
// (zrt_cuda::matmul, batch = slices), the causal row softmax and its
// backward as one warp per row. A straightforward version; a fused
// flash-attention kernel is to replace it.
//
// Scratch: the [T, T] score / gradient matrices of the slices that are not
// kept in `probs` go through a buffer of whole slices. A pass covers as many
// slices as fit in kWorkspaceBytes (at least one): with T = 1024 that is 8
// slices (32 MiB). The buffer is the caller's `workspace` ([T, T] floats,
// one slice) when a pass holds one slice and the caller gave one, else
// zrt_cuda::workspace() (never grown beyond kWorkspaceBytes unless a single
// slice is larger than that).
//
//===----------------------------------------------------------------------===//

#include "device_util.cuh"

#include "../src/common/arg_checks.h"

#include <cuda_runtime.h>

#include <climits>
#include <cmath>

namespace {

using namespace zrt_cuda;

/// Threads per block of the row kernels (8 warps, one row each).
constexpr int kAttnRowThreads = 256;
/// Most blocks of the row kernels (rows beyond are warp-strided).
constexpr int64_t kAttnMaxRowBlocks = int64_t(1) << 16;

/// Blocks of kAttnRowThreads for one warp per row.
int attnRowBlocks(int64_t rows) {
  const int64_t warpsPerBlock = kAttnRowThreads / 32;
  const int64_t b = (rows + warpsPerBlock - 1) / warpsPerBlock;
  return static_cast<int>(b < kAttnMaxRowBlocks ? b : kAttnMaxRowBlocks);
}

/// Causal row softmax in place (attention.cpp causalSoftmax) of `rows`
/// rows of length T (slices of [T, T] stacked; row r is row r % T of its
/// slice): entries j <= i become exp(x - max) / sum in f32, those above the
/// diagonal 0. One warp per row.
__global__ void causalSoftmaxKernel(float *p, int64_t rows, int64_t T) {
  const int lane = threadIdx.x & 31;
  const int64_t warp =
      (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x) >> 5;
  const int64_t warps = (static_cast<int64_t>(gridDim.x) * blockDim.x) >> 5;
  for (int64_t r = warp; r < rows; r += warps) {
    const int64_t i = r % T;
    float *row = p + r * T;
    float mx = -INFINITY;
    for (int64_t j = lane; j <= i; j += 32)
      mx = row[j] > mx ? row[j] : mx;
    mx = warpMax(mx);
    float sum = 0.0f;
    for (int64_t j = lane; j <= i; j += 32) {
      const float e = expf(__fsub_rn(row[j], mx));
      row[j] = e;
      sum = __fadd_rn(sum, e);
    }
    sum = warpSum(sum);
    const float inv = __fdiv_rn(1.0f, sum);
    for (int64_t j = lane; j <= i; j += 32)
      row[j] = __fmul_rn(row[j], inv);
    for (int64_t j = i + 1 + lane; j < T; j += 32)
      row[j] = 0.0f;
  }
}

/// Softmax backward of the causal rows (attention.cpp): with p the
/// probabilities and g = dP on entry, g = dS = p * (g - sum_j p_j g_j) for
/// j <= i, 0 above the diagonal. One warp per row.
__global__ void causalSoftmaxBackwardKernel(const float *p, float *g,
                                            int64_t rows, int64_t T) {
  const int lane = threadIdx.x & 31;
  const int64_t warp =
      (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x) >> 5;
  const int64_t warps = (static_cast<int64_t>(gridDim.x) * blockDim.x) >> 5;
  for (int64_t r = warp; r < rows; r += warps) {
    const int64_t i = r % T;
    const float *pi = p + r * T;
    float *gi = g + r * T;
    float dot = 0.0f;
    for (int64_t j = lane; j <= i; j += 32)
      dot += pi[j] * gi[j];
    dot = warpSum(dot);
    for (int64_t j = lane; j <= i; j += 32)
      gi[j] = __fmul_rn(pi[j], __fsub_rn(gi[j], dot));
    for (int64_t j = i + 1 + lane; j < T; j += 32)
      gi[j] = 0.0f;
  }
}

/// Slices of [T, T] floats per pass through the scratch buffer: as many as
/// fit in kWorkspaceBytes, at least 1, at most `slices`.
int64_t slicesPerPass(int64_t T, int64_t slices) {
  const int64_t fit =
      kWorkspaceBytes / static_cast<int64_t>(sizeof(float)) / (T * T);
  const int64_t n = fit < 1 ? 1 : fit;
  return n < slices ? n : slices;
}

/// The scratch buffer of `perPass` slices of [T, T] (see the file comment).
int scratchFor(const char *fn, float *callerWorkspace, int64_t perPass,
               int64_t T, float **out) {
  if (perPass == 1 && callerWorkspace) {
    *out = callerWorkspace;
    return ZRT_OK;
  }
  void *ws = nullptr;
  if (int st = workspace(perPass * T * T * static_cast<int64_t>(sizeof(float)),
                         &ws, fn))
    return st;
  *out = static_cast<float *>(ws);
  return ZRT_OK;
}

} // namespace

namespace zrt_cuda {

/// zrt_causal_attention (attention.cpp): per slice S = s Q K^T, causal
/// softmax into P (probs, or scratch when probs is NULL), O = P V.
int causal_attention(const float *q, const float *k, const float *v, float *out,
                     float *probs, float *workspace, int64_t B, int64_t H,
                     int64_t T, int64_t D) {
  const char *fn = "zrt_causal_attention";
  if (int st = zrt::checkCausalAttentionArgs(fn, q, k, v, out, B, H, T, D,
                                             zrt_cuda::fail))
    return st;
  const int64_t slices = B * H;
  if (slices == 0)
    return ZRT_OK;
  const int64_t TD = T * D, TT = T * T;
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  // With probs every slice's P stays there: one pass over all slices.
  int64_t perPass = slices;
  float *scratch = nullptr;
  if (!probs) {
    perPass = slicesPerPass(T, slices);
    if (int st = scratchFor(fn, workspace, perPass, T, &scratch))
      return st;
  }
  for (int64_t s0 = 0; s0 < slices; s0 += perPass) {
    const int64_t nb = slices - s0 < perPass ? slices - s0 : perPass;
    float *p = probs ? probs + s0 * TT : scratch;
    // S = scale * Q K^T : [T, T] per slice.
    if (int st = matmul(q + s0 * TD, k + s0 * TD, nullptr, p, nb, T, T, D, 0, 1,
                        scale, 0.0f, TD, TD, TT))
      return st;
    causalSoftmaxKernel<<<attnRowBlocks(nb * T), kAttnRowThreads, 0,
                          stream()>>>(p, nb * T, T);
    if (int st = launched(fn))
      return st;
    // O = P V : [T, D] per slice.
    if (int st = matmul(p, v + s0 * TD, nullptr, out + s0 * TD, nb, T, D, T, 0,
                        0, 1.0f, 0.0f, TT, TD, TD))
      return st;
  }
  return ZRT_OK;
}

/// zrt_causal_attention_backward (attention.cpp), s = 1/sqrt(D):
/// dV = P^T dO (all slices at once), then per pass of slices dP = dO V^T
/// into scratch, dS = P * (dP - rowsum(P * dP)) in place, dQ = s dS K and
/// dK = s dS^T Q.
int causal_attention_backward(const float *dout, const float *q, const float *k,
                              const float *v, const float *probs, float *dq,
                              float *dk, float *dv, float *workspace, int64_t B,
                              int64_t H, int64_t T, int64_t D) {
  const char *fn = "zrt_causal_attention_backward";
  if (int st = zrt::checkCausalAttentionBackwardArgs(
          fn, dout, q, k, v, probs, dq, dk, dv, B, H, T, D, zrt_cuda::fail))
    return st;
  const int64_t slices = B * H;
  if (slices == 0)
    return ZRT_OK;
  const int64_t TD = T * D, TT = T * T;
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  // dV = P^T dO : [T, D] per slice.
  if (int st = matmul(probs, dout, nullptr, dv, slices, T, D, T, 1, 0, 1.0f,
                      0.0f, TT, TD, TD))
    return st;
  const int64_t perPass = slicesPerPass(T, slices);
  float *g = nullptr; // dP, then dS
  if (int st = scratchFor(fn, workspace, perPass, T, &g))
    return st;
  for (int64_t s0 = 0; s0 < slices; s0 += perPass) {
    const int64_t nb = slices - s0 < perPass ? slices - s0 : perPass;
    const int64_t off = s0 * TD;
    // dP = dO V^T : [T, T] per slice.
    if (int st = matmul(dout + off, v + off, nullptr, g, nb, T, T, D, 0, 1,
                        1.0f, 0.0f, TD, TD, TT))
      return st;
    causalSoftmaxBackwardKernel<<<attnRowBlocks(nb * T), kAttnRowThreads, 0,
                                  stream()>>>(probs + s0 * TT, g, nb * T, T);
    if (int st = launched(fn))
      return st;
    // dQ = scale * dS K : [T, D];  dK = scale * dS^T Q : [T, D].
    if (int st = matmul(g, k + off, nullptr, dq + off, nb, T, D, T, 0, 0, scale,
                        0.0f, TT, TD, TD))
      return st;
    if (int st = matmul(g, q + off, nullptr, dk + off, nb, T, D, T, 1, 0, scale,
                        0.0f, TT, TD, TD))
      return st;
  }
  return ZRT_OK;
}

} // namespace zrt_cuda
