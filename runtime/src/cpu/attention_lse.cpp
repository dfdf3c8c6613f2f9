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
// The packed forms (zrt_attention_*_packed) run the same slice code on
// q, k, v heads read in place from the [B, T, 3 C] projection (row strides
// for BLAS), out and dout in [B, T, C] rows.
//
// The grouped-query forms (zrt_attention_*_gqa) run the same slices with
// query head h reading K/V head h / (H / Hkv); the backward adds a group's
// K/V gradients in its GEMMs (beta 1 after the group's first head).
//
// The bf16 forms (zrt_attention_forward_bf16 / _backward_bf16) widen each
// slice's bf16 tensors into the f32 slices at the end of their workspace
// (attentionWorkspaceBf16), run the same slice code and round the slice's
// outputs once: the f32 functions on the widened tensors, bit for bit.
//
//===----------------------------------------------------------------------===//

#include "common/attention_args.h"
#include "common/decoder_args.h"
#include "common/internal.h"

#include "cpu/blas.h"
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

/// One (batch, head) slice of zrt_attention_forward: q, k, v [T, D] rows
/// `ldIn` elements apart, out [T, D] rows `ldOut` apart, lse [T]; p [T, T]
/// scratch; scale = 1 / sqrt(D). The row strides only change where BLAS
/// reads and writes (it packs its operands first), not the numbers.
void forwardSlice(const float *q, const float *k, const float *v, float *out,
                  float *lse, float *p, int64_t T, int64_t D, float scale,
                  int64_t ldIn, int64_t ldOut) {
  const int t = static_cast<int>(T), d = static_cast<int>(D);
  const int ldi = static_cast<int>(ldIn), ldo = static_cast<int>(ldOut);
  // S = scale * Q K^T : [T, T]
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, t, t, d, scale, q, ldi,
              k, ldi, 0.0f, p, t);
  zrt::causalSoftmax(p, T, lse);
  // O = P V : [T, D]
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, t, d, t, 1.0f, p, t, v,
              ldi, 0.0f, out, ldo);
}

/// One (batch, head) slice of zrt_attention_backward: q, k, v, dq, dk, dv
/// [T, D] rows `ldIn` apart, dO and O [T, D] rows `ldOut` apart, l (the
/// lse) [T]; work: the zrt_attention_workspace(T) floats of scratch (P,
/// dP / dS, delta); scale = 1 / sqrt(D).
///
/// kvBeta 0 overwrites dk and dv; 1 adds into them (the second and later
/// query heads of a grouped-query group, whose K/V gradients sum).
void backwardSlice(const float *dO, const float *q, const float *k,
                   const float *v, const float *O, const float *l, float *dq,
                   float *dk, float *dv, float *work, int64_t T, int64_t D,
                   float scale, int64_t ldIn, int64_t ldOut,
                   float kvBeta = 0.0f) {
  float *p = work, *g = work + T * T, *delta = work + 2 * T * T;
  const int t = static_cast<int>(T), d = static_cast<int>(D);
  const int ldi = static_cast<int>(ldIn), ldo = static_cast<int>(ldOut);
  // P = exp(scale * Q K^T - lse), zero above the diagonal.
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, t, t, d, scale, q, ldi,
              k, ldi, 0.0f, p, t);
#pragma omp parallel for schedule(static) if (T * T > zrt::kParallelGrain / 4)
  for (int64_t i = 0; i < T; ++i) {
    float *row = p + i * T;
    for (int64_t j = 0; j <= i; ++j)
      row[j] = std::exp(row[j] - l[i]);
    for (int64_t j = i + 1; j < T; ++j)
      row[j] = 0.0f;
    float dot = 0.0f;
    for (int64_t c = 0; c < D; ++c)
      dot += dO[i * ldOut + c] * O[i * ldOut + c];
    delta[i] = dot;
  }
  // dV = P^T dO : [T, D]
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, t, d, t, 1.0f, p, t, dO,
              ldo, kvBeta, dv, ldi);
  // dP = dO V^T : [T, T], then dS = P * (dP - delta) in place.
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, t, t, d, 1.0f, dO, ldo,
              v, ldi, 0.0f, g, t);
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
              k, ldi, 0.0f, dq, ldi);
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, t, d, t, scale, g, t, q,
              ldi, kvBeta, dk, ldi);
}

/// Where one call's operands are: q (and dq) with layout `in`, k, v (and
/// dk, dv) with layout `kv` (the same row stride as `in`), whose head h /
/// `group` serves query head h; out (and dout) with layout `io`; lse [B, H,
/// T] contiguous.
struct Operands {
  zrt::AttentionLayout in, io, kv;
  int64_t group = 1;
};

/// The [B, H, T, D] operands of zrt_attention_forward / _backward, with
/// K/V [B, Hkv, T, D] (Hkv = H: multi-head).
Operands headsOperands(int64_t H, int64_t T, int64_t D, int64_t Hkv) {
  const zrt::AttentionLayout l = zrt::headsLayout(H, T, D);
  return {l, l, zrt::headsLayout(Hkv, T, D), Hkv > 0 ? H / Hkv : 1};
}
Operands headsOperands(int64_t H, int64_t T, int64_t D) {
  return headsOperands(H, T, D, H);
}

/// The packed operands of zrt_attention_*_packed: qkv rows of 3 H D, out
/// rows of H D.
Operands packedOperands(int64_t T, int64_t H, int64_t D) {
  const zrt::AttentionLayout in = zrt::rowsLayout(T, 3 * H * D, D);
  return {in, zrt::rowsLayout(T, H * D, D), in, 1};
}

/// zrt_attention_forward on operands anywhere (`ops`); arguments checked.
int forward(const char *fn, const float *q, const float *k, const float *v,
            float *out, float *lse, float *workspace, int64_t B, int64_t H,
            int64_t T, int64_t D, Operands ops) {
  if (B * H == 0)
    return ZRT_OK;
  zrt::FloatBuffer own;
  float *p = nullptr;
  if (int st = workspaceFor(fn, zrt::attentionWorkspace(T), "2 T^2 + T",
                            workspace, own, &p))
    return st;
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      const int64_t in = ops.in.slice(b, h), io = ops.io.slice(b, h),
                    kv = ops.kv.slice(b, h / ops.group);
      forwardSlice(q + in, k + kv, v + kv, out + io, lse + (b * H + h) * T, p,
                   T, D, scale, ops.in.row, ops.io.row);
    }
  return ZRT_OK;
}

/// zrt_attention_backward on operands anywhere (`ops`); arguments checked.
int backward(const char *fn, const float *dout, const float *q, const float *k,
             const float *v, const float *out, const float *lse, float *dq,
             float *dk, float *dv, float *workspace, int64_t B, int64_t H,
             int64_t T, int64_t D, Operands ops) {
  if (B * H == 0)
    return ZRT_OK;
  zrt::FloatBuffer own;
  float *work = nullptr;
  if (int st = workspaceFor(fn, zrt::attentionWorkspace(T), "2 T^2 + T",
                            workspace, own, &work))
    return st;
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  // Query heads in order; a group's first head overwrites its K/V
  // gradients, the others add into them.
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      const int64_t in = ops.in.slice(b, h), io = ops.io.slice(b, h),
                    kv = ops.kv.slice(b, h / ops.group);
      backwardSlice(dout + io, q + in, k + kv, v + kv, out + io,
                    lse + (b * H + h) * T, dq + in, dk + kv, dv + kv, work, T,
                    D, scale, ops.in.row, ops.io.row,
                    h % ops.group == 0 ? 0.0f : 1.0f);
    }
  return ZRT_OK;
}

/// Widens a [T, D] bf16 slice with rows `ld` apart into contiguous f32.
void widenSlice(const zrt_bf16 *src, int64_t ld, float *dst, int64_t T,
                int64_t D) {
  if (ld == D) {
    zrt_cast_bf16_to_f32(src, dst, T * D);
    return;
  }
  for (int64_t t = 0; t < T; ++t)
    zrt_cast_bf16_to_f32(src + t * ld, dst + t * D, D);
}

/// Rounds a contiguous f32 [T, D] slice into bf16 rows `ld` apart.
void narrowSlice(const float *src, zrt_bf16 *dst, int64_t ld, int64_t T,
                 int64_t D) {
  if (ld == D) {
    zrt_cast_f32_to_bf16(src, dst, T * D);
    return;
  }
  for (int64_t t = 0; t < T; ++t)
    zrt_cast_f32_to_bf16(src + t * D, dst + t * ld, D);
}

/// The bf16 forms' scratch: the caller's workspace (else one allocated
/// into `own`) of attentionWorkspaceBf16(T, D) floats: *work the f32
/// workspace of attentionWorkspace(T) floats, *slices the 8 [T, D] f32
/// slices after it.
int bf16Scratch(const char *fn, float *given, int64_t T, int64_t D,
                zrt::FloatBuffer &own, float **work, float **slices) {
  if (int st = workspaceFor(fn, zrt::attentionWorkspaceBf16(T, D),
                            "2 T^2 + T + 8 T D", given, own, work))
    return st;
  *slices = *work + zrt::attentionWorkspace(T);
  return ZRT_OK;
}

/// zrt_attention_forward_bf16 on operands anywhere; arguments checked.
int forwardBf16(const char *fn, const zrt_bf16 *q, const zrt_bf16 *k,
                const zrt_bf16 *v, zrt_bf16 *out, float *lse, float *workspace,
                int64_t B, int64_t H, int64_t T, int64_t D, Operands ops) {
  if (B * H == 0)
    return ZRT_OK;
  zrt::FloatBuffer own;
  float *work = nullptr, *fq = nullptr;
  if (int st = bf16Scratch(fn, workspace, T, D, own, &work, &fq))
    return st;
  // The f32 slices of q, k, v, out.
  const int64_t n = T * D;
  float *fk = fq + n, *fv = fk + n, *fo = fv + n;
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      const int64_t in = ops.in.slice(b, h), io = ops.io.slice(b, h),
                    kv = ops.kv.slice(b, h / ops.group);
      widenSlice(q + in, ops.in.row, fq, T, D);
      if (h % ops.group == 0) { // the group's K/V, widened once
        widenSlice(k + kv, ops.kv.row, fk, T, D);
        widenSlice(v + kv, ops.kv.row, fv, T, D);
      }
      forwardSlice(fq, fk, fv, fo, lse + (b * H + h) * T, work, T, D, scale, D,
                   D);
      narrowSlice(fo, out + io, ops.io.row, T, D);
    }
  return ZRT_OK;
}

/// zrt_attention_backward_bf16 on operands anywhere; arguments checked.
int backwardBf16(const char *fn, const zrt_bf16 *dout, const zrt_bf16 *q,
                 const zrt_bf16 *k, const zrt_bf16 *v, const zrt_bf16 *out,
                 const float *lse, zrt_bf16 *dq, zrt_bf16 *dk, zrt_bf16 *dv,
                 float *workspace, int64_t B, int64_t H, int64_t T, int64_t D,
                 Operands ops) {
  if (B * H == 0)
    return ZRT_OK;
  zrt::FloatBuffer own;
  float *work = nullptr, *fq = nullptr;
  if (int st = bf16Scratch(fn, workspace, T, D, own, &work, &fq))
    return st;
  // The f32 slices of q, k, v, out, dout, dq, dk, dv.
  const int64_t n = T * D;
  float *fk = fq + n, *fv = fk + n, *fo = fv + n, *fdo = fo + n,
        *fdq = fdo + n, *fdk = fdq + n, *fdv = fdk + n;
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      const int64_t in = ops.in.slice(b, h), io = ops.io.slice(b, h),
                    kv = ops.kv.slice(b, h / ops.group);
      const int64_t member = h % ops.group;
      widenSlice(q + in, ops.in.row, fq, T, D);
      if (member == 0) { // the group's K/V, widened once
        widenSlice(k + kv, ops.kv.row, fk, T, D);
        widenSlice(v + kv, ops.kv.row, fv, T, D);
      }
      widenSlice(out + io, ops.io.row, fo, T, D);
      widenSlice(dout + io, ops.io.row, fdo, T, D);
      // The group's dK and dV sum in the f32 slices, rounded once after
      // its last query head.
      backwardSlice(fdo, fq, fk, fv, fo, lse + (b * H + h) * T, fdq, fdk, fdv,
                    work, T, D, scale, D, D, member == 0 ? 0.0f : 1.0f);
      narrowSlice(fdq, dq + in, ops.in.row, T, D);
      if (member == ops.group - 1) {
        narrowSlice(fdk, dk + kv, ops.kv.row, T, D);
        narrowSlice(fdv, dv + kv, ops.kv.row, T, D);
      }
    }
  return ZRT_OK;
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
  return forward(fn, q, k, v, out, lse, workspace, B, H, T, D,
                 headsOperands(H, T, D));
}

int zrt_attention_backward(const float *dout, const float *q, const float *k,
                           const float *v, const float *out, const float *lse,
                           float *dq, float *dk, float *dv, float *workspace,
                           int64_t B, int64_t H, int64_t T, int64_t D) {
  const char *fn = "zrt_attention_backward";
  if (int st = zrt::checkAttentionBackwardArgs(
          fn, dout, q, k, v, out, lse, dq, dk, dv, B, H, T, D, zrt::fail))
    return st;
  return backward(fn, dout, q, k, v, out, lse, dq, dk, dv, workspace, B, H, T,
                  D, headsOperands(H, T, D));
}

int zrt_attention_forward_bf16(const zrt_bf16 *q, const zrt_bf16 *k,
                               const zrt_bf16 *v, zrt_bf16 *out, float *lse,
                               float *workspace, int64_t B, int64_t H,
                               int64_t T, int64_t D) {
  const char *fn = "zrt_attention_forward_bf16";
  if (int st = zrt::checkAttentionForwardArgs(fn, q, k, v, out, lse, B, H, T,
                                              D, zrt::fail))
    return st;
  return forwardBf16(fn, q, k, v, out, lse, workspace, B, H, T, D,
                     headsOperands(H, T, D));
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
  return backwardBf16(fn, dout, q, k, v, out, lse, dq, dk, dv, workspace, B, H,
                      T, D, headsOperands(H, T, D));
}

int zrt_attention_forward_packed(const float *qkv, float *out, float *lse,
                                 float *workspace, int64_t B, int64_t T,
                                 int64_t H, int64_t D) {
  const char *fn = "zrt_attention_forward_packed";
  if (int st = zrt::checkAttentionPackedForwardArgs(fn, qkv, out, lse, B, T, H,
                                                    D, zrt::fail))
    return st;
  const int64_t C = H * D;
  return forward(fn, qkv, qkv + C, qkv + 2 * C, out, lse, workspace, B, H, T,
                 D, packedOperands(T, H, D));
}

int zrt_attention_backward_packed(const float *dout, const float *qkv,
                                  const float *out, const float *lse,
                                  float *dqkv, float *workspace, int64_t B,
                                  int64_t T, int64_t H, int64_t D) {
  const char *fn = "zrt_attention_backward_packed";
  if (int st = zrt::checkAttentionPackedBackwardArgs(fn, dout, qkv, out, lse,
                                                     dqkv, B, T, H, D,
                                                     zrt::fail))
    return st;
  const int64_t C = H * D;
  return backward(fn, dout, qkv, qkv + C, qkv + 2 * C, out, lse, dqkv,
                  dqkv + C, dqkv + 2 * C, workspace, B, H, T, D,
                  packedOperands(T, H, D));
}

int zrt_attention_forward_packed_bf16(const zrt_bf16 *qkv, zrt_bf16 *out,
                                      float *lse, float *workspace, int64_t B,
                                      int64_t T, int64_t H, int64_t D) {
  const char *fn = "zrt_attention_forward_packed_bf16";
  if (int st = zrt::checkAttentionPackedForwardArgs(fn, qkv, out, lse, B, T, H,
                                                    D, zrt::fail))
    return st;
  const int64_t C = H * D;
  return forwardBf16(fn, qkv, qkv + C, qkv + 2 * C, out, lse, workspace, B, H,
                     T, D, packedOperands(T, H, D));
}

int zrt_attention_backward_packed_bf16(const zrt_bf16 *dout,
                                       const zrt_bf16 *qkv,
                                       const zrt_bf16 *out, const float *lse,
                                       zrt_bf16 *dqkv, float *workspace,
                                       int64_t B, int64_t T, int64_t H,
                                       int64_t D) {
  const char *fn = "zrt_attention_backward_packed_bf16";
  if (int st = zrt::checkAttentionPackedBackwardArgs(fn, dout, qkv, out, lse,
                                                     dqkv, B, T, H, D,
                                                     zrt::fail))
    return st;
  const int64_t C = H * D;
  return backwardBf16(fn, dout, qkv, qkv + C, qkv + 2 * C, out, lse, dqkv,
                      dqkv + C, dqkv + 2 * C, workspace, B, H, T, D,
                      packedOperands(T, H, D));
}

int zrt_attention_forward_gqa(const float *q, const float *k, const float *v,
                              float *out, float *lse, float *workspace,
                              int64_t B, int64_t H, int64_t Hkv, int64_t T,
                              int64_t D) {
  const char *fn = "zrt_attention_forward_gqa";
  if (int st = zrt::checkKvHeads(fn, H, Hkv, zrt::fail))
    return st;
  if (int st = zrt::checkAttentionForwardArgs(fn, q, k, v, out, lse, B, H, T,
                                              D, zrt::fail))
    return st;
  return forward(fn, q, k, v, out, lse, workspace, B, H, T, D,
                 headsOperands(H, T, D, Hkv));
}

int zrt_attention_backward_gqa(const float *dout, const float *q,
                               const float *k, const float *v,
                               const float *out, const float *lse, float *dq,
                               float *dk, float *dv, float *workspace,
                               int64_t B, int64_t H, int64_t Hkv, int64_t T,
                               int64_t D) {
  const char *fn = "zrt_attention_backward_gqa";
  if (int st = zrt::checkKvHeads(fn, H, Hkv, zrt::fail))
    return st;
  if (int st = zrt::checkAttentionBackwardArgs(
          fn, dout, q, k, v, out, lse, dq, dk, dv, B, H, T, D, zrt::fail))
    return st;
  return backward(fn, dout, q, k, v, out, lse, dq, dk, dv, workspace, B, H, T,
                  D, headsOperands(H, T, D, Hkv));
}

int zrt_attention_forward_gqa_bf16(const zrt_bf16 *q, const zrt_bf16 *k,
                                   const zrt_bf16 *v, zrt_bf16 *out,
                                   float *lse, float *workspace, int64_t B,
                                   int64_t H, int64_t Hkv, int64_t T,
                                   int64_t D) {
  const char *fn = "zrt_attention_forward_gqa_bf16";
  if (int st = zrt::checkKvHeads(fn, H, Hkv, zrt::fail))
    return st;
  if (int st = zrt::checkAttentionForwardArgs(fn, q, k, v, out, lse, B, H, T,
                                              D, zrt::fail))
    return st;
  return forwardBf16(fn, q, k, v, out, lse, workspace, B, H, T, D,
                     headsOperands(H, T, D, Hkv));
}

int zrt_attention_backward_gqa_bf16(const zrt_bf16 *dout, const zrt_bf16 *q,
                                    const zrt_bf16 *k, const zrt_bf16 *v,
                                    const zrt_bf16 *out, const float *lse,
                                    zrt_bf16 *dq, zrt_bf16 *dk, zrt_bf16 *dv,
                                    float *workspace, int64_t B, int64_t H,
                                    int64_t Hkv, int64_t T, int64_t D) {
  const char *fn = "zrt_attention_backward_gqa_bf16";
  if (int st = zrt::checkKvHeads(fn, H, Hkv, zrt::fail))
    return st;
  if (int st = zrt::checkAttentionBackwardArgs(
          fn, dout, q, k, v, out, lse, dq, dk, dv, B, H, T, D, zrt::fail))
    return st;
  return backwardBf16(fn, dout, q, k, v, out, lse, dq, dk, dv, workspace, B, H,
                      T, D, headsOperands(H, T, D, Hkv));
}

} // extern "C"
