//===- attention.cpp - Causal scaled-dot-product attention -----------------===//
//
// Per (batch, head) slice: S = s Q K^T (cblas_sgemm), causal row softmax,
// O = P V (cblas_sgemm). The (b, h) loop is sequential so that the
// multithreaded BLAS is never called from inside an OpenMP region; the row
// softmax is OpenMP-parallel.
//
//===----------------------------------------------------------------------===//

#include "common/arg_checks.h"
#include "common/internal.h"

#include "cpu/blas.h"
#include <cmath>

void zrt::causalSoftmax(float *p, int64_t T, float *lse) {
#pragma omp parallel for schedule(static) if (T * T > zrt::kParallelGrain / 4)
  for (int64_t i = 0; i < T; ++i) {
    float *row = p + i * T;
    float mx = -INFINITY;
    for (int64_t j = 0; j <= i; ++j)
      mx = row[j] > mx ? row[j] : mx;
    float sum = 0.0f;
    for (int64_t j = 0; j <= i; ++j) {
      row[j] = std::exp(row[j] - mx);
      sum += row[j];
    }
    const float inv = 1.0f / sum;
    for (int64_t j = 0; j <= i; ++j)
      row[j] *= inv;
    for (int64_t j = i + 1; j < T; ++j)
      row[j] = 0.0f;
    if (lse)
      lse[i] = mx + std::log(sum);
  }
}

extern "C" {

int zrt_causal_attention(const float *q, const float *k, const float *v,
                         float *out, float *probs, float *workspace,
                         int64_t B, int64_t H, int64_t T, int64_t D) {
  const char *fn = "zrt_causal_attention";
  if (int st = zrt::checkCausalAttentionArgs(fn, q, k, v, out, B, H, T, D,
                                             zrt::fail))
    return st;
  const int64_t slices = B * H;
  // Without probs, each slice's P goes through a [T, T] workspace: the
  // caller's, else one allocated here (counted by zrt_heap_allocations).
  zrt::FloatBuffer own;
  if (!probs && !workspace && slices > 0) {
    if (!own.reserve(T * T))
      return zrt::fail(ZRT_ERR_OUT_OF_MEMORY, "%s: cannot allocate [T, T]", fn);
    workspace = own.data;
  }
  const int t = static_cast<int>(T), d = static_cast<int>(D);
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  for (int64_t s = 0; s < slices; ++s) {
    const float *qs = q + s * T * D, *ks = k + s * T * D, *vs = v + s * T * D;
    float *p = probs ? probs + s * T * T : workspace;
    // S = scale * Q K^T : [T, T]
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, t, t, d, scale, qs,
                d, ks, d, 0.0f, p, t);
    zrt::causalSoftmax(p, T, nullptr);
    // O = P V : [T, D]
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, t, d, t, 1.0f, p,
                t, vs, d, 0.0f, out + s * T * D, d);
  }
  return ZRT_OK;
}

int zrt_causal_attention_backward(const float *dout, const float *q,
                                  const float *k, const float *v,
                                  const float *probs, float *dq, float *dk,
                                  float *dv, float *workspace, int64_t B,
                                  int64_t H, int64_t T, int64_t D) {
  const char *fn = "zrt_causal_attention_backward";
  if (int st = zrt::checkCausalAttentionBackwardArgs(
          fn, dout, q, k, v, probs, dq, dk, dv, B, H, T, D, zrt::fail))
    return st;
  const int64_t slices = B * H;
  if (slices == 0)
    return ZRT_OK;
  zrt::FloatBuffer own;
  if (!workspace) {
    if (!own.reserve(T * T))
      return zrt::fail(ZRT_ERR_OUT_OF_MEMORY, "%s: cannot allocate [T, T]", fn);
    workspace = own.data;
  }
  const int t = static_cast<int>(T), d = static_cast<int>(D);
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  for (int64_t s = 0; s < slices; ++s) {
    const int64_t off = s * T * D;
    const float *p = probs + s * T * T, *dO = dout + off;
    // dV = P^T dO : [T, D]
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, t, d, t, 1.0f, p, t,
                dO, d, 0.0f, dv + off, d);
    // dP = dO V^T : [T, T]
    float *g = workspace; // dP, then dS
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, t, t, d, 1.0f, dO, d,
                v + off, d, 0.0f, g, t);
    // dS = P * (dP - rowsum(P * dP)), zero above the diagonal.
#pragma omp parallel for schedule(static) if (T * T > zrt::kParallelGrain / 4)
    for (int64_t i = 0; i < T; ++i) {
      const float *pi = p + i * T;
      float *gi = g + i * T;
      float dot = 0.0f;
      for (int64_t j = 0; j <= i; ++j)
        dot += pi[j] * gi[j];
      for (int64_t j = 0; j <= i; ++j)
        gi[j] = pi[j] * (gi[j] - dot);
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
