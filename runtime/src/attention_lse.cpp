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
// The bf16 forms (zrt_attention_forward_bf16 / _backward_bf16) widen each
// slice's bf16 tensors into the f32 slices at the end of their workspace
// (attentionWorkspaceBf16), run the same slice code and round the slice's
// outputs once: the f32 functions on the widened tensors, bit for bit.
//
//===----------------------------------------------------------------------===//

#include "attention_args.h"
#include "internal.h"

#include "blas.h"
#include <cmath>

namespace {

/// The workspace of `n` floats (`what` names its size in the message): the
/// caller's, else one allocated into `own` (counted by
/// zrt_heap_allocations).
int workspaceFor(const char *fn, int64_t n, const char *what, float *given,
                 zrt::FloatBuffer &own, float **out) {
  if (given) {
    *out = given;
    return ZRT_OK;
  }
  if (n < 0 || !own.reserve(n))
    return zrt::fail(ZRT_ERR_OUT_OF_MEMORY,
                     "%s: cannot allocate the [%s] workspace", fn, what);
  *out = own.data;
  return ZRT_OK;
}

/// One (batch, head) slice of zrt_attention_forward: q, k, v, out [T, D],
/// lse [T]; p [T, T] scratch; scale = 1 / sqrt(D).
void forwardSlice(const float *q, const float *k, const float *v, float *out,
                  float *lse, float *p, int64_t T, int64_t D, float scale) {
  const int t = static_cast<int>(T), d = static_cast<int>(D);
  // S = scale * Q K^T : [T, T]
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, t, t, d, scale, q, d, k,
              d, 0.0f, p, t);
  zrt::causalSoftmax(p, T, lse);
  // O = P V : [T, D]
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, t, d, t, 1.0f, p, t, v,
              d, 0.0f, out, d);
}

/// One (batch, head) slice of zrt_attention_backward: dO, q, k, v, O, dq,
/// dk, dv [T, D], l (the lse) [T]; work: the zrt_attention_workspace(T)
/// floats of scratch (P, dP / dS, delta); scale = 1 / sqrt(D).
void backwardSlice(const float *dO, const float *q, const float *k,
                   const float *v, const float *O, const float *l, float *dq,
                   float *dk, float *dv, float *work, int64_t T, int64_t D,
                   float scale) {
  float *p = work, *g = work + T * T, *delta = work + 2 * T * T;
  const int t = static_cast<int>(T), d = static_cast<int>(D);
  // P = exp(scale * Q K^T - lse), zero above the diagonal.
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, t, t, d, scale, q, d, k,
              d, 0.0f, p, t);
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
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, t, d, t, 1.0f, p, t, dO,
              d, 0.0f, dv, d);
  // dP = dO V^T : [T, T], then dS = P * (dP - delta) in place.
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, t, t, d, 1.0f, dO, d, v,
              d, 0.0f, g, t);
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
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, t, d, t, scale, g, t,
              k, d, 0.0f, dq, d);
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, t, d, t, scale, g, t, q,
              d, 0.0f, dk, d);
}

} // namespace

extern "C" {

int64_t zrt_attention_workspace(int64_t T) { return zrt::attentionWorkspace(T); }

int64_t zrt_attention_workspace_bf16(int64_t T, int64_t D) {
  return zrt::attentionWorkspaceBf16(T, D);
}

int zrt_attention_forward(const float *q, const float *k, const float *v,
                          float *out, float *lse, float *workspace, int64_t B,
                          int64_t H, int64_t T, int64_t D) {
  const char *fn = "zrt_attention_forward";
  if (int st = zrt::checkAttentionForwardArgs(fn, q, k, v, out, lse, B, H, T,
                                              D, zrt::fail))
    return st;
  const int64_t slices = B * H;
  if (slices == 0)
    return ZRT_OK;
  zrt::FloatBuffer own;
  float *p = nullptr;
  if (int st = workspaceFor(fn, zrt::attentionWorkspace(T), "2 T^2 + T",
                            workspace, own, &p))
    return st;
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  for (int64_t s = 0; s < slices; ++s) {
    const int64_t off = s * T * D;
    forwardSlice(q + off, k + off, v + off, out + off, lse + s * T, p, T, D,
                 scale);
  }
  return ZRT_OK;
}

int zrt_attention_backward(const float *dout, const float *q, const float *k,
                           const float *v, const float *out, const float *lse,
                           float *dq, float *dk, float *dv, float *workspace,
                           int64_t B, int64_t H, int64_t T, int64_t D) {
  const char *fn = "zrt_attention_backward";
  if (int st = zrt::checkAttentionBackwardArgs(
          fn, dout, q, k, v, out, lse, dq, dk, dv, B, H, T, D, zrt::fail))
    return st;
  const int64_t slices = B * H;
  if (slices == 0)
    return ZRT_OK;
  zrt::FloatBuffer own;
  float *work = nullptr;
  if (int st = workspaceFor(fn, zrt::attentionWorkspace(T), "2 T^2 + T",
                            workspace, own, &work))
    return st;
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  for (int64_t s = 0; s < slices; ++s) {
    const int64_t off = s * T * D;
    backwardSlice(dout + off, q + off, k + off, v + off, out + off, lse + s * T,
                  dq + off, dk + off, dv + off, work, T, D, scale);
  }
  return ZRT_OK;
}

int zrt_attention_forward_bf16(const zrt_bf16 *q, const zrt_bf16 *k,
                               const zrt_bf16 *v, zrt_bf16 *out, float *lse,
                               float *workspace, int64_t B, int64_t H,
                               int64_t T, int64_t D) {
  const char *fn = "zrt_attention_forward_bf16";
  if (int st = zrt::checkAttentionForwardArgs(fn, q, k, v, out, lse, B, H, T,
                                              D, zrt::fail))
    return st;
  const int64_t slices = B * H;
  if (slices == 0)
    return ZRT_OK;
  zrt::FloatBuffer own;
  float *work = nullptr;
  if (int st = workspaceFor(fn, zrt::attentionWorkspaceBf16(T, D),
                            "2 T^2 + T + 8 T D", workspace, own, &work))
    return st;
  // The f32 workspace, then the f32 slices of q, k, v, out.
  const int64_t n = T * D;
  float *fq = work + zrt::attentionWorkspace(T), *fk = fq + n, *fv = fk + n,
        *fo = fv + n;
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  for (int64_t s = 0; s < slices; ++s) {
    const int64_t off = s * n;
    zrt_cast_bf16_to_f32(q + off, fq, n);
    zrt_cast_bf16_to_f32(k + off, fk, n);
    zrt_cast_bf16_to_f32(v + off, fv, n);
    forwardSlice(fq, fk, fv, fo, lse + s * T, work, T, D, scale);
    zrt_cast_f32_to_bf16(fo, out + off, n);
  }
  return ZRT_OK;
}

int zrt_attention_backward_bf16(const zrt_bf16 *dout, const zrt_bf16 *q,
                                const zrt_bf16 *k, const zrt_bf16 *v,
                                const zrt_bf16 *out, const float *lse,
                                zrt_bf16 *dq, zrt_bf16 *dk, zrt_bf16 *dv,
                                float *workspace, int64_t B, int64_t H,
                                int64_t T, int64_t D) {
  const char *fn = "zrt_attention_backward_bf16";
  if (int st = zrt::checkAttentionBackwardArgs(
          fn, dout, q, k, v, out, lse, dq, dk, dv, B, H, T, D, zrt::fail))
    return st;
  const int64_t slices = B * H;
  if (slices == 0)
    return ZRT_OK;
  zrt::FloatBuffer own;
  float *work = nullptr;
  if (int st = workspaceFor(fn, zrt::attentionWorkspaceBf16(T, D),
                            "2 T^2 + T + 8 T D", workspace, own, &work))
    return st;
  // The f32 workspace, then the f32 slices of q, k, v, out, dout, dq, dk, dv.
  const int64_t n = T * D;
  float *fq = work + zrt::attentionWorkspace(T), *fk = fq + n, *fv = fk + n,
        *fo = fv + n, *fdo = fo + n, *fdq = fdo + n, *fdk = fdq + n,
        *fdv = fdk + n;
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  for (int64_t s = 0; s < slices; ++s) {
    const int64_t off = s * n;
    zrt_cast_bf16_to_f32(q + off, fq, n);
    zrt_cast_bf16_to_f32(k + off, fk, n);
    zrt_cast_bf16_to_f32(v + off, fv, n);
    zrt_cast_bf16_to_f32(out + off, fo, n);
    zrt_cast_bf16_to_f32(dout + off, fdo, n);
    backwardSlice(fdo, fq, fk, fv, fo, lse + s * T, fdq, fdk, fdv, work, T, D,
                  scale);
    zrt_cast_f32_to_bf16(fdq, dq + off, n);
    zrt_cast_f32_to_bf16(fdk, dk + off, n);
    zrt_cast_f32_to_bf16(fdv, dv + off, n);
  }
  return ZRT_OK;
}

} // extern "C"
