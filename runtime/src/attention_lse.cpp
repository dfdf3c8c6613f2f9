//===- attention_lse.cpp - Causal attention that saves log-sum-exp ---------===//
//
// zrt_attention_forward / zrt_attention_backward on the CPU: the interface
// of fused (flash) attention — the forward keeps only the output and the
// per-row log-sum-exp, the backward recomputes the probabilities — computed
// one (batch, head) slice at a time through the caller's workspace:
//   forward:  S = s Q K^T (cblas_sgemm), causal row softmax with
//             lse_i = max_i + log(sum_i), O = P V (cblas_sgemm);
//   backward: P = exp(s Q K^T - lse), dV = P^T dO, dP = dO V^T,
//             delta_i = dO_i . O_i, dS = P * (dP - delta), dQ = s dS K,
//             dK = s dS^T Q (five cblas_sgemm).
// The (b, h) loop is sequential so that the multithreaded BLAS is never
// called from inside an OpenMP region; row loops are OpenMP-parallel. The
// CUDA backend computes the same with tiled kernels (flash_attention.cu).
//
//===----------------------------------------------------------------------===//

#include "attention_args.h"
#include "internal.h"

#include "blas.h"
#include <cmath>

namespace {

/// The workspace: the caller's, else one allocated into `own` (counted by
/// zrt_heap_allocations).
int workspaceFor(const char *fn, int64_t T, float *given, zrt::FloatBuffer &own,
                 float **out) {
  if (given) {
    *out = given;
    return ZRT_OK;
  }
  const int64_t n = zrt::attentionWorkspace(T);
  if (n < 0 || !own.reserve(n))
    return zrt::fail(ZRT_ERR_OUT_OF_MEMORY,
                     "%s: cannot allocate the [2 T^2 + T] workspace", fn);
  *out = own.data;
  return ZRT_OK;
}

} // namespace

extern "C" {

int64_t zrt_attention_workspace(int64_t T) { return zrt::attentionWorkspace(T); }

int zrt_attention_forward(const float *q, const float *k, const float *v,
                          float *out, float *lse, float *workspace, int64_t B,
                          int64_t H, int64_t T, int64_t D) {
  const char *fn = "zrt_attention_forward";
  const void *ptrs[] = {q, k, v, out, lse};
  const char *names[] = {"q", "k", "v", "out", "lse"};
  if (int st = zrt::checkAttentionArgs(fn, B, H, T, D, ptrs, names, 5,
                                       zrt::fail))
    return st;
  const int64_t slices = B * H;
  if (slices == 0)
    return ZRT_OK;
  zrt::FloatBuffer own;
  float *p = nullptr;
  if (int st = workspaceFor(fn, T, workspace, own, &p))
    return st;
  const int t = static_cast<int>(T), d = static_cast<int>(D);
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  for (int64_t s = 0; s < slices; ++s) {
    const int64_t off = s * T * D;
    // S = scale * Q K^T : [T, T]
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, t, t, d, scale, q + off,
                d, k + off, d, 0.0f, p, t);
    zrt::causalSoftmax(p, T, lse + s * T);
    // O = P V : [T, D]
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, t, d, t, 1.0f, p, t,
                v + off, d, 0.0f, out + off, d);
  }
  return ZRT_OK;
}

int zrt_attention_backward(const float *dout, const float *q, const float *k,
                           const float *v, const float *out, const float *lse,
                           float *dq, float *dk, float *dv, float *workspace,
                           int64_t B, int64_t H, int64_t T, int64_t D) {
  const char *fn = "zrt_attention_backward";
  const void *ptrs[] = {dout, q, k, v, out, lse, dq, dk, dv};
  const char *names[] = {"dout", "q", "k", "v", "out", "lse", "dq", "dk", "dv"};
  if (int st = zrt::checkAttentionArgs(fn, B, H, T, D, ptrs, names, 9,
                                       zrt::fail))
    return st;
  const int64_t slices = B * H;
  if (slices == 0)
    return ZRT_OK;
  zrt::FloatBuffer own;
  float *work = nullptr;
  if (int st = workspaceFor(fn, T, workspace, own, &work))
    return st;
  float *p = work, *g = work + T * T, *delta = work + 2 * T * T;
  const int t = static_cast<int>(T), d = static_cast<int>(D);
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  for (int64_t s = 0; s < slices; ++s) {
    const int64_t off = s * T * D;
    const float *dO = dout + off, *O = out + off, *l = lse + s * T;
    // P = exp(scale * Q K^T - lse), zero above the diagonal.
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, t, t, d, scale, q + off,
                d, k + off, d, 0.0f, p, t);
#pragma omp parallel for schedule(static) if (T * T > zrt::kParallelGrain / 4)
    for (int64_t i = 0; i < T; ++i) {
      float *row = p + i * T;
      for (int64_t j = 0; j <= i; ++j)
        row[j] = std::exp(row[j] - l[i]);
      for (int64_t j = i + 1; j < T; ++j)
        row[j] = 0.0f;
      float dot = 0.0f;
      for (int64_t c = 0; c < D; ++c)
        dot += dO[i * D + c] * O[i * D + c];
      delta[i] = dot;
    }
    // dV = P^T dO : [T, D]
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, t, d, t, 1.0f, p, t,
                dO, d, 0.0f, dv + off, d);
    // dP = dO V^T : [T, T], then dS = P * (dP - delta) in place.
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, t, t, d, 1.0f, dO, d,
                v + off, d, 0.0f, g, t);
#pragma omp parallel for schedule(static) if (T * T > zrt::kParallelGrain / 4)
    for (int64_t i = 0; i < T; ++i) {
      const float *pi = p + i * T;
      float *gi = g + i * T;
      for (int64_t j = 0; j <= i; ++j)
        gi[j] = pi[j] * (gi[j] - delta[i]);
      for (int64_t j = i + 1; j < T; ++j)
        gi[j] = 0.0f;
    }
    // dQ = scale * dS K : [T, D];  dK = scale * dS^T Q : [T, D]
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, t, d, t, scale, g,
                t, k + off, d, 0.0f, dq + off, d);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, t, d, t, scale, g, t,
                q + off, d, 0.0f, dk + off, d);
  }
  return ZRT_OK;
}

} // extern "C"
