//===- abi.cpp - CUDA backend: the zrt.h C ABI ----------------------------===//
//
// Exports the zrt_cuda implementations under their zrt.h names (each call
// that queues GPU work timed when ZRT_PROFILE is set, profile.cpp). The
// backend-neutral host functions (errors, bf16 scalars, zrt_param_seed,
// zrt_clip_coef, data loading, the training driver) come from the shared
// host sources of runtime/src, compiled into zero_runtime_cuda as well.
//
//===----------------------------------------------------------------------===//

#include "zrt_cuda.h"

#include "flash_attention_tc.h"

#include "../src/common/arg_checks.h"
#include "../src/common/attention_args.h"
#include "../src/common/decoder_args.h"
#include "../src/common/matmul_args.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

/// Returns `call`, timed per function when ZRT_PROFILE is set (profile.cpp).
#define ZRT_PROFILED(name, call)                                               \
  do {                                                                         \
    if (!zrt_cuda::profile::enabled())                                         \
      return call;                                                             \
    zrt_cuda::profile::Scope scope_(name);                                     \
    return call;                                                               \
  } while (0)

/// As ZRT_PROFILED, and totals the call under its shape too (`shape` is
/// evaluated only when profiling).
#define ZRT_PROFILED_SHAPE(name, shape, call)                                  \
  do {                                                                         \
    if (!zrt_cuda::profile::enabled())                                         \
      return call;                                                             \
    zrt_cuda::profile::Scope scope_(name, shape);                              \
    return call;                                                               \
  } while (0)

namespace {

/// A matmul's shape for the profile: "b<batch> <M>x<N>x<K> <op(A)><op(B)>"
/// (N: as stored, T: transposed), " bias" when it has one; e.g. GPT-2's
/// QKV projection "b1 16384x2304x768 NT bias".
std::string matmulShape(int64_t batch, int64_t M, int64_t N, int64_t K,
                        int trans_a, int trans_b, bool bias) {
  char buf[128];
  std::snprintf(buf, sizeof(buf), "b%lld %lldx%lldx%lld %c%c%s",
                (long long)batch, (long long)M, (long long)N, (long long)K,
                trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', bias ? " bias" : "");
  return buf;
}

/// ZRT_CUDA_ATTENTION=simt: the bf16 attention always runs the SIMT flash
/// kernels (flash_attention.cu), never the tensor-core ones. Read once.
bool attentionSimtForced() {
  static const bool forced = [] {
    const char *v = std::getenv("ZRT_CUDA_ATTENTION");
    return v && std::strcmp(v, "simt") == 0;
  }();
  return forced;
}

/// zrt_attention_forward_bf16: the tensor-core kernels when they take D
/// (and ZRT_CUDA_ATTENTION is not "simt"), else the SIMT ones. The
/// arguments are checked here first (the tensor-core entry points expect
/// checked arguments; the SIMT ones check again, identically).
int attentionForwardBf16(const zrt_bf16 *q, const zrt_bf16 *k,
                         const zrt_bf16 *v, zrt_bf16 *out, float *lse,
                         float *workspace, int64_t B, int64_t H, int64_t T,
                         int64_t D) {
  const char *fn = "zrt_attention_forward_bf16";
  if (int st = zrt::checkAttentionForwardArgs(fn, q, k, v, out, lse, B, H, T, D,
                                              zrt_cuda::fail))
    return st;
  if (B * H == 0)
    return ZRT_OK;
  if (!attentionSimtForced() && zrt_cuda::attention_tc_forward_supported(D))
    return zrt_cuda::attention_forward_bf16_tc(q, k, v, out, lse, B, H, T, D);
  return zrt_cuda::attention_forward_bf16_simt(q, k, v, out, lse, workspace, B,
                                               H, T, D);
}

/// zrt_attention_backward_bf16, dispatched as the forward.
int attentionBackwardBf16(const zrt_bf16 *dout, const zrt_bf16 *q,
                          const zrt_bf16 *k, const zrt_bf16 *v,
                          const zrt_bf16 *out, const float *lse, zrt_bf16 *dq,
                          zrt_bf16 *dk, zrt_bf16 *dv, float *workspace,
                          int64_t B, int64_t H, int64_t T, int64_t D) {
  const char *fn = "zrt_attention_backward_bf16";
  if (int st = zrt::checkAttentionBackwardArgs(
          fn, dout, q, k, v, out, lse, dq, dk, dv, B, H, T, D, zrt_cuda::fail))
    return st;
  if (B * H == 0)
    return ZRT_OK;
  if (!attentionSimtForced() && zrt_cuda::attention_tc_backward_supported(D))
    return zrt_cuda::attention_backward_bf16_tc(dout, q, k, v, out, lse, dq, dk,
                                                dv, B, H, T, D);
  return zrt_cuda::attention_backward_bf16_simt(dout, q, k, v, out, lse, dq, dk,
                                                dv, workspace, B, H, T, D);
}

/// zrt_attention_forward_packed_bf16, checked and dispatched as
/// zrt_attention_forward_bf16.
int attentionForwardPackedBf16(const zrt_bf16 *qkv, zrt_bf16 *out, float *lse,
                               float *workspace, int64_t B, int64_t T,
                               int64_t H, int64_t D) {
  const char *fn = "zrt_attention_forward_packed_bf16";
  if (int st = zrt::checkAttentionPackedForwardArgs(fn, qkv, out, lse, B, T, H,
                                                    D, zrt_cuda::fail))
    return st;
  if (B * H == 0)
    return ZRT_OK;
  if (!attentionSimtForced() && zrt_cuda::attention_tc_forward_supported(D))
    return zrt_cuda::attention_forward_packed_bf16_tc(qkv, out, lse, B, T, H,
                                                      D);
  return zrt_cuda::attention_forward_packed_bf16_simt(qkv, out, lse, workspace,
                                                      B, T, H, D);
}

/// zrt_attention_backward_packed_bf16, dispatched as the forward.
int attentionBackwardPackedBf16(const zrt_bf16 *dout, const zrt_bf16 *qkv,
                                const zrt_bf16 *out, const float *lse,
                                zrt_bf16 *dqkv, float *workspace, int64_t B,
                                int64_t T, int64_t H, int64_t D) {
  const char *fn = "zrt_attention_backward_packed_bf16";
  if (int st = zrt::checkAttentionPackedBackwardArgs(
          fn, dout, qkv, out, lse, dqkv, B, T, H, D, zrt_cuda::fail))
    return st;
  if (B * H == 0)
    return ZRT_OK;
  if (!attentionSimtForced() && zrt_cuda::attention_tc_backward_supported(D))
    return zrt_cuda::attention_backward_packed_bf16_tc(dout, qkv, out, lse,
                                                       dqkv, B, T, H, D);
  return zrt_cuda::attention_backward_packed_bf16_simt(
      dout, qkv, out, lse, dqkv, workspace, B, T, H, D);
}

/// zrt_attention_forward_gqa_bf16 (zrt/decoder.h): checked as the CPU
/// (zrt::checkKvHeads, then the multi-head checks), then dispatched as
/// zrt_attention_forward_bf16 (tensor cores when they take D).
int attentionForwardGqaBf16(const zrt_bf16 *q, const zrt_bf16 *k,
                            const zrt_bf16 *v, zrt_bf16 *out, float *lse,
                            float *workspace, int64_t B, int64_t H,
                            int64_t Hkv, int64_t T, int64_t D) {
  const char *fn = "zrt_attention_forward_gqa_bf16";
  if (int st = zrt::checkKvHeads(fn, H, Hkv, zrt_cuda::fail))
    return st;
  if (int st = zrt::checkAttentionForwardArgs(fn, q, k, v, out, lse, B, H, T, D,
                                              zrt_cuda::fail))
    return st;
  if (B * H == 0)
    return ZRT_OK;
  if (!attentionSimtForced() && zrt_cuda::attention_tc_forward_supported(D))
    return zrt_cuda::attention_forward_gqa_bf16_tc(q, k, v, out, lse, B, H,
                                                   Hkv, T, D);
  return zrt_cuda::attention_forward_gqa_bf16_simt(q, k, v, out, lse,
                                                   workspace, B, H, Hkv, T, D);
}

/// zrt_attention_backward_gqa_bf16, checked and dispatched as the forward.
int attentionBackwardGqaBf16(const zrt_bf16 *dout, const zrt_bf16 *q,
                             const zrt_bf16 *k, const zrt_bf16 *v,
                             const zrt_bf16 *out, const float *lse,
                             zrt_bf16 *dq, zrt_bf16 *dk, zrt_bf16 *dv,
                             float *workspace, int64_t B, int64_t H,
                             int64_t Hkv, int64_t T, int64_t D) {
  const char *fn = "zrt_attention_backward_gqa_bf16";
  if (int st = zrt::checkKvHeads(fn, H, Hkv, zrt_cuda::fail))
    return st;
  if (int st = zrt::checkAttentionBackwardArgs(
          fn, dout, q, k, v, out, lse, dq, dk, dv, B, H, T, D, zrt_cuda::fail))
    return st;
  if (B * H == 0)
    return ZRT_OK;
  if (!attentionSimtForced() && zrt_cuda::attention_tc_backward_supported(D))
    return zrt_cuda::attention_backward_gqa_bf16_tc(dout, q, k, v, out, lse, dq,
                                                    dk, dv, B, H, Hkv, T, D);
  return zrt_cuda::attention_backward_gqa_bf16_simt(
      dout, q, k, v, out, lse, dq, dk, dv, workspace, B, H, Hkv, T, D);
}

} // namespace

extern "C" {

int zrt_set_num_threads(int n) { return zrt_cuda::set_num_threads(n); }
int zrt_cast_f32_to_bf16(const float *src, zrt_bf16 *dst, int64_t n) {
  ZRT_PROFILED("zrt_cast_f32_to_bf16", zrt_cuda::cast_f32_to_bf16(src, dst, n));
}
int zrt_cast_bf16_to_f32(const zrt_bf16 *src, float *dst, int64_t n) {
  ZRT_PROFILED("zrt_cast_bf16_to_f32", zrt_cuda::cast_bf16_to_f32(src, dst, n));
}
int zrt_matmul(const float *A, const float *B, const float *bias, float *C,
               int64_t batch, int64_t M, int64_t N, int64_t K, int trans_a,
               int trans_b, float alpha, float beta, int64_t stride_a,
               int64_t stride_b, int64_t stride_c) {
  ZRT_PROFILED_SHAPE(
      "zrt_matmul",
      matmulShape(batch, M, N, K, trans_a, trans_b, bias != nullptr),
      zrt_cuda::matmul(A, B, bias, C, batch, M, N, K, trans_a, trans_b, alpha,
                       beta, stride_a, stride_b, stride_c));
}
int zrt_matmul_bf16(const zrt_bf16 *A, const zrt_bf16 *B, const zrt_bf16 *bias,
                    zrt_bf16 *C, int64_t batch, int64_t M, int64_t N, int64_t K,
                    int trans_a, int trans_b, float *workspace) {
  ZRT_PROFILED_SHAPE(
      "zrt_matmul_bf16",
      matmulShape(batch, M, N, K, trans_a, trans_b, bias != nullptr),
      zrt_cuda::matmul_bf16(A, B, bias, C, batch, M, N, K, trans_a, trans_b,
                            workspace));
}
int64_t zrt_matmul_bf16_workspace(int64_t batch, int64_t M, int64_t N,
                                  int64_t K, int has_bias) {
  return zrt::matmulBf16Workspace(batch, M, N, K, has_bias != 0);
}
int zrt_matmul_gelu_bf16(const zrt_bf16 *A, const zrt_bf16 *B,
                         const zrt_bf16 *bias, zrt_bf16 *pre, zrt_bf16 *out,
                         int64_t batch, int64_t M, int64_t N, int64_t K,
                         int trans_a, int trans_b, float *workspace) {
  ZRT_PROFILED_SHAPE(
      "zrt_matmul_gelu_bf16",
      matmulShape(batch, M, N, K, trans_a, trans_b, bias != nullptr),
      zrt_cuda::matmul_gelu_bf16(A, B, bias, pre, out, batch, M, N, K, trans_a,
                                 trans_b, workspace));
}
int zrt_matmul_gelu_backward_bf16(const zrt_bf16 *A, const zrt_bf16 *B,
                                  const zrt_bf16 *pre, zrt_bf16 *dpre,
                                  int64_t batch, int64_t M, int64_t N,
                                  int64_t K, int trans_a, int trans_b,
                                  float *workspace) {
  ZRT_PROFILED_SHAPE("zrt_matmul_gelu_backward_bf16",
                     matmulShape(batch, M, N, K, trans_a, trans_b, false),
                     zrt_cuda::matmul_gelu_backward_bf16(A, B, pre, dpre, batch,
                                                         M, N, K, trans_a,
                                                         trans_b, workspace));
}
int zrt_bias_backward(const float *dout, float *dbias, int64_t rows,
                      int64_t N) {
  ZRT_PROFILED("zrt_bias_backward",
               zrt_cuda::bias_backward(dout, dbias, rows, N));
}
int zrt_permute_0213(const float *in, float *out, int64_t A, int64_t B,
                     int64_t C, int64_t D) {
  ZRT_PROFILED("zrt_permute_0213", zrt_cuda::permute_0213(in, out, A, B, C, D));
}
int zrt_fill(float *out, float value, int64_t n) {
  ZRT_PROFILED("zrt_fill", zrt_cuda::fill(out, value, n));
}
int zrt_copy(const float *x, float *out, int64_t n) {
  ZRT_PROFILED("zrt_copy", zrt_cuda::copy(x, out, n));
}
int zrt_add(const float *a, const float *b, float *out, int64_t n) {
  ZRT_PROFILED("zrt_add", zrt_cuda::add(a, b, out, n));
}
int zrt_add_backward(const float *dout, float *da, float *db, int64_t n) {
  ZRT_PROFILED("zrt_add_backward", zrt_cuda::add_backward(dout, da, db, n));
}
int zrt_axpy(float alpha, const float *x, float *y, int64_t n) {
  ZRT_PROFILED("zrt_axpy", zrt_cuda::axpy(alpha, x, y, n));
}
int zrt_mul(const float *a, const float *b, float *out, int64_t n) {
  ZRT_PROFILED("zrt_mul", zrt_cuda::mul(a, b, out, n));
}
int zrt_mul_backward(const float *a, const float *b, const float *dout,
                     float *da, float *db, int64_t n) {
  ZRT_PROFILED("zrt_mul_backward",
               zrt_cuda::mul_backward(a, b, dout, da, db, n));
}
int zrt_scale(const float *x, float alpha, float *out, int64_t n) {
  ZRT_PROFILED("zrt_scale", zrt_cuda::scale(x, alpha, out, n));
}
int zrt_gelu(const float *x, float *out, int64_t n) {
  ZRT_PROFILED("zrt_gelu", zrt_cuda::gelu(x, out, n));
}
int zrt_gelu_backward(const float *x, const float *dout, float *dx, int64_t n) {
  ZRT_PROFILED("zrt_gelu_backward", zrt_cuda::gelu_backward(x, dout, dx, n));
}
int zrt_relu(const float *x, float *out, int64_t n) {
  ZRT_PROFILED("zrt_relu", zrt_cuda::relu(x, out, n));
}
int zrt_relu_backward(const float *x, const float *dout, float *dx, int64_t n) {
  ZRT_PROFILED("zrt_relu_backward", zrt_cuda::relu_backward(x, dout, dx, n));
}
int zrt_layer_norm(const float *x, const float *weight, const float *bias,
                   float *out, float *mean, float *rstd, int64_t N, int64_t C,
                   float eps) {
  ZRT_PROFILED("zrt_layer_norm", zrt_cuda::layer_norm(x, weight, bias, out,
                                                      mean, rstd, N, C, eps));
}
int zrt_layer_norm_backward(const float *dout, const float *x,
                            const float *weight, const float *mean,
                            const float *rstd, float *dx, float *dweight,
                            float *dbias, int64_t N, int64_t C) {
  ZRT_PROFILED("zrt_layer_norm_backward",
               zrt_cuda::layer_norm_backward(dout, x, weight, mean, rstd, dx,
                                             dweight, dbias, N, C));
}
int zrt_add_layer_norm(const float *a, const float *b, const float *weight,
                       const float *bias, float *sum, float *out, float *mean,
                       float *rstd, int64_t N, int64_t C, float eps) {
  ZRT_PROFILED("zrt_add_layer_norm",
               zrt_cuda::add_layer_norm(a, b, weight, bias, sum, out, mean,
                                        rstd, N, C, eps));
}
int zrt_layer_norm_backward_add(const float *dout, const float *x,
                                const float *weight, const float *mean,
                                const float *rstd, const float *addend,
                                float *dx, float *dweight, float *dbias,
                                int64_t N, int64_t C) {
  ZRT_PROFILED("zrt_layer_norm_backward_add",
               zrt_cuda::layer_norm_backward_add(dout, x, weight, mean, rstd,
                                                 addend, dx, dweight, dbias, N,
                                                 C));
}
int zrt_softmax(const float *x, float *out, int64_t N, int64_t C) {
  ZRT_PROFILED("zrt_softmax", zrt_cuda::softmax(x, out, N, C));
}
int zrt_softmax_backward(const float *y, const float *dy, float *dx, int64_t N,
                         int64_t C) {
  ZRT_PROFILED("zrt_softmax_backward",
               zrt_cuda::softmax_backward(y, dy, dx, N, C));
}
int64_t zrt_attention_workspace(int64_t T) {
  return zrt::attentionWorkspace(T);
}
int zrt_attention_forward(const float *q, const float *k, const float *v,
                          float *out, float *lse, float *workspace, int64_t B,
                          int64_t H, int64_t T, int64_t D) {
  ZRT_PROFILED(
      "zrt_attention_forward",
      zrt_cuda::attention_forward(q, k, v, out, lse, workspace, B, H, T, D));
}
int zrt_attention_backward(const float *dout, const float *q, const float *k,
                           const float *v, const float *out, const float *lse,
                           float *dq, float *dk, float *dv, float *workspace,
                           int64_t B, int64_t H, int64_t T, int64_t D) {
  ZRT_PROFILED("zrt_attention_backward",
               zrt_cuda::attention_backward(dout, q, k, v, out, lse, dq, dk, dv,
                                            workspace, B, H, T, D));
}
int zrt_attention_forward_packed(const float *qkv, float *out, float *lse,
                                 float *workspace, int64_t B, int64_t T,
                                 int64_t H, int64_t D) {
  ZRT_PROFILED(
      "zrt_attention_forward_packed",
      zrt_cuda::attention_forward_packed(qkv, out, lse, workspace, B, T, H, D));
}
int zrt_attention_backward_packed(const float *dout, const float *qkv,
                                  const float *out, const float *lse,
                                  float *dqkv, float *workspace, int64_t B,
                                  int64_t T, int64_t H, int64_t D) {
  ZRT_PROFILED("zrt_attention_backward_packed",
               zrt_cuda::attention_backward_packed(dout, qkv, out, lse, dqkv,
                                                   workspace, B, T, H, D));
}
int zrt_causal_attention(const float *q, const float *k, const float *v,
                         float *out, float *probs, float *workspace, int64_t B,
                         int64_t H, int64_t T, int64_t D) {
  ZRT_PROFILED(
      "zrt_causal_attention",
      zrt_cuda::causal_attention(q, k, v, out, probs, workspace, B, H, T, D));
}
int zrt_causal_attention_backward(const float *dout, const float *q,
                                  const float *k, const float *v,
                                  const float *probs, float *dq, float *dk,
                                  float *dv, float *workspace, int64_t B,
                                  int64_t H, int64_t T, int64_t D) {
  ZRT_PROFILED("zrt_causal_attention_backward",
               zrt_cuda::causal_attention_backward(dout, q, k, v, probs, dq, dk,
                                                   dv, workspace, B, H, T, D));
}
int zrt_embedding(const float *table, const int32_t *ids, float *out, int64_t N,
                  int64_t V, int64_t C) {
  ZRT_PROFILED("zrt_embedding", zrt_cuda::embedding(table, ids, out, N, V, C));
}
int zrt_embedding_backward(const float *dout, const int32_t *ids, float *dtable,
                           int64_t N, int64_t V, int64_t C) {
  ZRT_PROFILED("zrt_embedding_backward",
               zrt_cuda::embedding_backward(dout, ids, dtable, N, V, C));
}
int zrt_vocab_embedding(const float *table, const int32_t *ids, float *out,
                        int64_t N, int64_t Vl, int64_t C, int64_t part,
                        int64_t parts) {
  ZRT_PROFILED("zrt_vocab_embedding",
               zrt_cuda::vocab_embedding(table, ids, out, N, Vl, C, part,
                                         parts));
}
int zrt_vocab_embedding_backward(const float *dout, const int32_t *ids,
                                 float *dtable, int64_t N, int64_t Vl,
                                 int64_t C, int64_t part, int64_t parts) {
  ZRT_PROFILED("zrt_vocab_embedding_backward",
               zrt_cuda::vocab_embedding_backward(dout, ids, dtable, N, Vl, C,
                                                  part, parts));
}
int zrt_vocab_max(const float *logits, float *out, int64_t N, int64_t Vl,
                  int64_t classes, int64_t part) {
  ZRT_PROFILED("zrt_vocab_max",
               zrt_cuda::vocab_max(logits, out, N, Vl, classes, part));
}
int zrt_vocab_exp_sums(const float *logits, const int32_t *targets,
                       const float *max, float *out, int64_t N, int64_t Vl,
                       int64_t classes, int64_t part) {
  ZRT_PROFILED("zrt_vocab_exp_sums",
               zrt_cuda::vocab_exp_sums(logits, targets, max, out, N, Vl,
                                        classes, part));
}
int zrt_vocab_exp_sums_backward(const float *logits, const int32_t *targets,
                                const float *max, const float *grad,
                                float *dlogits, int64_t N, int64_t Vl,
                                int64_t classes, int64_t part) {
  ZRT_PROFILED("zrt_vocab_exp_sums_backward",
               zrt_cuda::vocab_exp_sums_backward(logits, targets, max, grad,
                                                 dlogits, N, Vl, classes,
                                                 part));
}
int zrt_vocab_loss(const float *sums, const float *max, const int32_t *targets,
                   float *loss, int64_t N, int64_t classes, int has_ignore,
                   int32_t ignore) {
  ZRT_PROFILED("zrt_vocab_loss",
               zrt_cuda::vocab_loss(sums, max, targets, loss, N, classes,
                                    has_ignore, ignore));
}
int zrt_vocab_loss_backward(const float *sums, const int32_t *targets,
                            const float *dloss, float *dsums, int64_t N,
                            int has_ignore, int32_t ignore) {
  ZRT_PROFILED("zrt_vocab_loss_backward",
               zrt_cuda::vocab_loss_backward(sums, targets, dloss, dsums, N,
                                             has_ignore, ignore));
}
int zrt_cross_entropy(const float *logits, const int32_t *targets, float *loss,
                      int64_t N, int64_t V, int32_t ignore_index) {
  ZRT_PROFILED(
      "zrt_cross_entropy",
      zrt_cuda::cross_entropy(logits, targets, loss, N, V, ignore_index));
}
int zrt_cross_entropy_backward(const float *logits, const int32_t *targets,
                               float dloss, float *dlogits, int64_t N,
                               int64_t V, int32_t ignore_index) {
  ZRT_PROFILED("zrt_cross_entropy_backward",
               zrt_cuda::cross_entropy_backward(logits, targets, dloss, dlogits,
                                                N, V, ignore_index));
}
int zrt_mse(const float *pred, const float *target, float *loss, int64_t n) {
  ZRT_PROFILED("zrt_mse", zrt_cuda::mse(pred, target, loss, n));
}
int zrt_mse_backward(const float *pred, const float *target, float dloss,
                     float *dpred, float *dtarget, int64_t n) {
  ZRT_PROFILED("zrt_mse_backward",
               zrt_cuda::mse_backward(pred, target, dloss, dpred, dtarget, n));
}
int zrt_adamw_step(float *param, float *m, float *v, const float *grad,
                   float *out_f32, zrt_bf16 *out_bf16, int64_t n, double lr,
                   double beta1, double beta2, double eps, double weight_decay,
                   float grad_scale, int64_t step) {
  ZRT_PROFILED("zrt_adamw_step",
               zrt_cuda::adamw_step(param, m, v, grad, out_f32, out_bf16, n, lr,
                                    beta1, beta2, eps, weight_decay, grad_scale,
                                    step));
}
int zrt_adamw_step_bf16_grad(float *param, float *m, float *v,
                             const zrt_bf16 *grad, float *out_f32,
                             zrt_bf16 *out_bf16, int64_t n, double lr,
                             double beta1, double beta2, double eps,
                             double weight_decay, float grad_scale,
                             int64_t step) {
  ZRT_PROFILED("zrt_adamw_step_bf16_grad",
               zrt_cuda::adamw_step_bf16_grad(
                   param, m, v, grad, out_f32, out_bf16, n, lr, beta1, beta2,
                   eps, weight_decay, grad_scale, step));
}
int zrt_sum_squares(const float *x, int64_t n, float *out) {
  ZRT_PROFILED("zrt_sum_squares", zrt_cuda::sum_squares(x, n, out));
}
int zrt_sum_squares_bf16(const zrt_bf16 *x, int64_t n, float *out) {
  ZRT_PROFILED("zrt_sum_squares_bf16", zrt_cuda::sum_squares_bf16(x, n, out));
}
int zrt_init_normal(float *ptr, int64_t n, float mean, float std, uint64_t seed,
                    int64_t offset) {
  ZRT_PROFILED("zrt_init_normal",
               zrt_cuda::init_normal(ptr, n, mean, std, seed, offset));
}
int zrt_init_uniform(float *ptr, int64_t n, float low, float high,
                     uint64_t seed, int64_t offset) {
  ZRT_PROFILED("zrt_init_uniform",
               zrt_cuda::init_uniform(ptr, n, low, high, seed, offset));
}
int zrt_init(int *argc, char ***argv) { return zrt_cuda::init(argc, argv); }
int zrt_finalize(void) {
  zrt_cuda::profile::report();
  return zrt_cuda::finalize();
}
int zrt_rank(void) { return zrt_cuda::rank(); }
int zrt_world_size(void) { return zrt_cuda::world_size(); }
int zrt_barrier(void) { return zrt_cuda::barrier(); }
int zrt_all_gather(const void *send, void *recv, int64_t n, int dtype) {
  ZRT_PROFILED("zrt_all_gather",
               zrt_cuda::all_gather(ZRT_AXIS_DATA, send, recv, n, dtype));
}
int zrt_reduce_scatter(const void *send, void *recv, int64_t n, int dtype,
                       int op) {
  ZRT_PROFILED("zrt_reduce_scatter",
               zrt_cuda::reduce_scatter(ZRT_AXIS_DATA, send, recv, n, dtype,
                                        op));
}
int zrt_all_reduce(const void *send, void *recv, int64_t n, int dtype, int op) {
  ZRT_PROFILED("zrt_all_reduce",
               zrt_cuda::all_reduce(ZRT_AXIS_DATA, send, recv, n, dtype, op));
}
int zrt_broadcast(void *buf, int64_t n, int dtype, int root) {
  ZRT_PROFILED("zrt_broadcast", zrt_cuda::broadcast(buf, n, dtype, root));
}
int zrt_all_gather_start(const void *send, void *recv, int64_t n, int dtype,
                         zrt_request *req) {
  ZRT_PROFILED("zrt_all_gather_start",
               zrt_cuda::all_gather_start(ZRT_AXIS_DATA, send, recv, n, dtype,
                                          req));
}
int zrt_reduce_scatter_start(const void *send, void *recv, int64_t n, int dtype,
                             int op, zrt_request *req) {
  ZRT_PROFILED("zrt_reduce_scatter_start",
               zrt_cuda::reduce_scatter_start(ZRT_AXIS_DATA, send, recv, n,
                                              dtype, op, req));
}
int zrt_all_reduce_start(const void *send, void *recv, int64_t n, int dtype,
                         int op, zrt_request *req) {
  ZRT_PROFILED("zrt_all_reduce_start",
               zrt_cuda::all_reduce_start(ZRT_AXIS_DATA, send, recv, n, dtype,
                                          op, req));
}
int zrt_broadcast_start(void *buf, int64_t n, int dtype, int root,
                        zrt_request *req) {
  ZRT_PROFILED("zrt_broadcast_start",
               zrt_cuda::broadcast_start(buf, n, dtype, root, req));
}
int zrt_wait(zrt_request req) { ZRT_PROFILED("zrt_wait", zrt_cuda::wait(req)); }
int64_t zrt_comm_bytes(int kind) { return zrt_cuda::comm_bytes(kind); }
int64_t zrt_comm_calls(int kind) { return zrt_cuda::comm_calls(kind); }
double zrt_comm_wait_seconds(void) { return zrt_cuda::comm_wait_seconds(); }
int zrt_comm_progress(void) { return zrt_cuda::comm_progress(); }
void zrt_comm_reset(void) { zrt_cuda::comm_reset(); }

// P_a+cpu: the pinned host block and the copy stream (offload.cpp).
int zrt_offload_host_create(int64_t bytes) {
  return zrt_cuda::offload_host_create(bytes);
}
void zrt_offload_host_destroy(void) { zrt_cuda::offload_host_destroy(); }
void *zrt_offload_host_base(void) { return zrt_cuda::offload_host_base(); }
int64_t zrt_offload_host_bytes(void) { return zrt_cuda::offload_host_bytes(); }
int zrt_offload_start(const void *device, void *host, int64_t bytes,
                      zrt_offload *out) {
  ZRT_PROFILED("zrt_offload_start",
               zrt_cuda::offload_start(device, host, bytes, out));
}
int zrt_offload_wait(zrt_offload op) {
  ZRT_PROFILED("zrt_offload_wait",
               zrt_cuda::copy_wait("zrt_offload_wait", op));
}
int zrt_fetch_start(const void *host, void *device, int64_t bytes,
                    zrt_offload *out) {
  ZRT_PROFILED("zrt_fetch_start",
               zrt_cuda::fetch_start(host, device, bytes, out));
}
int zrt_fetch_wait(zrt_offload op) {
  ZRT_PROFILED("zrt_fetch_wait", zrt_cuda::copy_wait("zrt_fetch_wait", op));
}

// The rank mesh data x tensor: one NCCL communicator per axis
// (process_group.cpp).
int zrt_mesh_init(int tensor_size) {
  return zrt_cuda::mesh_init(tensor_size);
}
int zrt_axis_rank(int axis) { return zrt_cuda::axis_rank(axis); }
int zrt_axis_size(int axis) { return zrt_cuda::axis_size(axis); }
int zrt_all_gather_axis(int axis, const void *send, void *recv, int64_t n,
                        int dtype) {
  ZRT_PROFILED("zrt_all_gather_axis",
               zrt_cuda::all_gather(axis, send, recv, n, dtype));
}
int zrt_reduce_scatter_axis(int axis, const void *send, void *recv, int64_t n,
                            int dtype, int op) {
  ZRT_PROFILED("zrt_reduce_scatter_axis",
               zrt_cuda::reduce_scatter(axis, send, recv, n, dtype, op));
}
int zrt_all_reduce_axis(int axis, const void *send, void *recv, int64_t n,
                        int dtype, int op) {
  ZRT_PROFILED("zrt_all_reduce_axis",
               zrt_cuda::all_reduce(axis, send, recv, n, dtype, op));
}
int zrt_all_gather_axis_start(int axis, const void *send, void *recv,
                              int64_t n, int dtype, zrt_request *req) {
  ZRT_PROFILED("zrt_all_gather_axis_start",
               zrt_cuda::all_gather_start(axis, send, recv, n, dtype, req));
}
int zrt_reduce_scatter_axis_start(int axis, const void *send, void *recv,
                                  int64_t n, int dtype, int op,
                                  zrt_request *req) {
  ZRT_PROFILED("zrt_reduce_scatter_axis_start",
               zrt_cuda::reduce_scatter_start(axis, send, recv, n, dtype, op,
                                              req));
}
int zrt_all_reduce_axis_start(int axis, const void *send, void *recv,
                              int64_t n, int dtype, int op, zrt_request *req) {
  ZRT_PROFILED("zrt_all_reduce_axis_start",
               zrt_cuda::all_reduce_start(axis, send, recv, n, dtype, op, req));
}
int64_t zrt_comm_axis_bytes(int axis, int kind) {
  return zrt_cuda::comm_axis_bytes(axis, kind);
}
int64_t zrt_comm_axis_calls(int axis, int kind) {
  return zrt_cuda::comm_axis_calls(axis, kind);
}
int zrt_arena_create(int64_t bytes, int kind, zrt_arena *out) {
  return zrt_cuda::arena_create(bytes, kind, out);
}
void zrt_arena_destroy(zrt_arena arena) { zrt_cuda::arena_destroy(arena); }
void *zrt_arena_base(zrt_arena arena) { return zrt_cuda::arena_base(arena); }
int64_t zrt_arena_size(zrt_arena arena) { return zrt_cuda::arena_size(arena); }
int zrt_arena_alloc(zrt_arena arena, int64_t bytes, int64_t align,
                    int64_t *offset) {
  return zrt_cuda::arena_alloc(arena, bytes, align, offset);
}
int64_t zrt_arena_used(zrt_arena arena) { return zrt_cuda::arena_used(arena); }
void zrt_arena_reset(zrt_arena arena) { zrt_cuda::arena_reset(arena); }
int64_t zrt_memory_bytes(int kind) { return zrt_cuda::memory_bytes(kind); }
int64_t zrt_memory_peak_bytes(int kind) {
  return zrt_cuda::memory_peak_bytes(kind);
}
int64_t zrt_memory_total_bytes(void) { return zrt_cuda::memory_total_bytes(); }
int64_t zrt_memory_peak_total_bytes(void) {
  return zrt_cuda::memory_peak_total_bytes();
}
void zrt_memory_reset_peak(void) { zrt_cuda::memory_reset_peak(); }
int64_t zrt_heap_allocations(void) { return zrt_cuda::heap_allocations(); }
int zrt_copy_to_device(void *dst, const void *src, int64_t bytes) {
  ZRT_PROFILED("zrt_copy_to_device", zrt_cuda::copy_to_device(dst, src, bytes));
}
int zrt_copy_to_host(void *dst, const void *src, int64_t bytes) {
  ZRT_PROFILED("zrt_copy_to_host", zrt_cuda::copy_to_host(dst, src, bytes));
}
int zrt_copy_any(const void *src, void *dst, int64_t n, int dtype) {
  ZRT_PROFILED("zrt_copy_any", zrt_cuda::copy_any(src, dst, n, dtype));
}
int zrt_copy_2d(const void *src, int64_t src_ld, void *dst, int64_t dst_ld,
                int64_t rows, int64_t cols, int dtype) {
  ZRT_PROFILED("zrt_copy_2d",
               zrt_cuda::copy_2d(src, src_ld, dst, dst_ld, rows, cols, dtype));
}
int zrt_broadcast_leading(const void *in, void *out, int64_t lead, int64_t n,
                          int dtype) {
  ZRT_PROFILED("zrt_broadcast_leading",
               zrt_cuda::broadcast_leading(in, out, lead, n, dtype));
}
int zrt_permute(const void *in, void *out, int rank, const int64_t *shape,
                const int64_t *perm, int dtype) {
  ZRT_PROFILED("zrt_permute",
               zrt_cuda::permute(in, out, rank, shape, perm, dtype));
}
int zrt_cross_entropy_padded(const float *logits, const int32_t *targets,
                             float *loss, int64_t N, int64_t V,
                             int64_t num_classes) {
  ZRT_PROFILED(
      "zrt_cross_entropy_padded",
      zrt_cuda::cross_entropy_padded(logits, targets, loss, N, V, num_classes));
}
int zrt_cross_entropy_padded_backward(const float *logits,
                                      const int32_t *targets,
                                      const float *dloss, float *dlogits,
                                      int64_t N, int64_t V,
                                      int64_t num_classes) {
  ZRT_PROFILED("zrt_cross_entropy_padded_backward",
               zrt_cuda::cross_entropy_padded_backward(
                   logits, targets, dloss, dlogits, N, V, num_classes));
}
int zrt_cross_entropy_padded_fused(float *logits, const int32_t *targets,
                                   float *loss, float dloss, int64_t N,
                                   int64_t V, int64_t num_classes) {
  ZRT_PROFILED("zrt_cross_entropy_padded_fused",
               zrt_cuda::cross_entropy_padded_fused(logits, targets, loss,
                                                    dloss, N, V, num_classes));
}
int zrt_layer_norm_stats(const float *x, float *mean, float *rstd, int64_t N,
                         int64_t C, float eps) {
  ZRT_PROFILED("zrt_layer_norm_stats",
               zrt_cuda::layer_norm_stats(x, mean, rstd, N, C, eps));
}
int zrt_fill_bf16(zrt_bf16 *out, float value, int64_t n) {
  ZRT_PROFILED("zrt_fill_bf16", zrt_cuda::fill_bf16(out, value, n));
}
int zrt_accumulate_bf16(const zrt_bf16 *x, zrt_bf16 *y, int64_t n) {
  ZRT_PROFILED("zrt_accumulate_bf16", zrt_cuda::accumulate_bf16(x, y, n));
}
int zrt_cast_f32_to_f16(const float *src, zrt_f16 *dst, int64_t n) {
  ZRT_PROFILED("zrt_cast_f32_to_f16", zrt_cuda::cast_f32_to_f16(src, dst, n));
}
int zrt_cast_f16_to_f32(const zrt_f16 *src, float *dst, int64_t n) {
  ZRT_PROFILED("zrt_cast_f16_to_f32", zrt_cuda::cast_f16_to_f32(src, dst, n));
}
int zrt_fill_f16(zrt_f16 *out, float value, int64_t n) {
  ZRT_PROFILED("zrt_fill_f16", zrt_cuda::fill_f16(out, value, n));
}
int zrt_accumulate_f16(const zrt_f16 *x, zrt_f16 *y, int64_t n) {
  ZRT_PROFILED("zrt_accumulate_f16", zrt_cuda::accumulate_f16(x, y, n));
}
int zrt_sum_squares_f16(const zrt_f16 *x, int64_t n, float *out) {
  ZRT_PROFILED("zrt_sum_squares_f16", zrt_cuda::sum_squares_f16(x, n, out));
}
int zrt_adamw_step_f16_grad(float *param, float *m, float *v,
                            const zrt_f16 *grad, float *out_f32,
                            zrt_bf16 *out_bf16, int64_t n, double lr,
                            double beta1, double beta2, double eps,
                            double weight_decay, float grad_scale,
                            int64_t step) {
  ZRT_PROFILED("zrt_adamw_step_f16_grad",
               zrt_cuda::adamw_step_f16_grad(
                   param, m, v, grad, out_f32, out_bf16, n, lr, beta1, beta2,
                   eps, weight_decay, grad_scale, step));
}
int zrt_clip_coef_scaled(const float *sum_squares, const float *grad_scale,
                         float max_norm, float *coef, float *norm) {
  ZRT_PROFILED("zrt_clip_coef_scaled",
               zrt_cuda::clip_coef_scaled(sum_squares, grad_scale, max_norm,
                                          coef, norm));
}
int zrt_shard_adamw(float *param, float *m, float *v, const void *grad,
                    int grad_dtype, int64_t shard, int rank, int num_members,
                    const int64_t *offsets, const int64_t *numels,
                    const uint8_t *decay, double lr, double beta1, double beta2,
                    double eps, double weight_decay, float grad_scale,
                    int64_t step) {
  ZRT_PROFILED("zrt_shard_adamw",
               zrt_cuda::shard_adamw(param, m, v, grad, grad_dtype, shard, rank,
                                     num_members, offsets, numels, decay, lr,
                                     beta1, beta2, eps, weight_decay,
                                     grad_scale, step));
}
int zrt_local_shard(const void *in, void *out, int64_t n, int rank, int dtype) {
  ZRT_PROFILED("zrt_local_shard",
               zrt_cuda::local_shard(in, out, n, rank, dtype));
}
int zrt_init_param_slice(void *data, int dtype, int64_t slice_begin,
                         int64_t slice_n, int64_t member_offset,
                         int64_t member_numel, int init_kind, float std,
                         uint64_t seed) {
  ZRT_PROFILED("zrt_init_param_slice",
               zrt_cuda::init_param_slice(data, dtype, slice_begin, slice_n,
                                          member_offset, member_numel,
                                          init_kind, std, seed));
}
int zrt_device_memory_info(int64_t *free_bytes, int64_t *total_bytes) {
  return zrt_cuda::device_memory_info(free_bytes, total_bytes);
}

// Native bf16 kernels (zrt.h).
int zrt_add_bf16(const zrt_bf16 *a, const zrt_bf16 *b, zrt_bf16 *out,
                 int64_t n) {
  ZRT_PROFILED("zrt_add_bf16", zrt_cuda::add_bf16(a, b, out, n));
}
int zrt_gelu_bf16(const zrt_bf16 *x, zrt_bf16 *out, int64_t n) {
  ZRT_PROFILED("zrt_gelu_bf16", zrt_cuda::gelu_bf16(x, out, n));
}
int zrt_gelu_backward_bf16(const zrt_bf16 *x, const zrt_bf16 *dout,
                           zrt_bf16 *dx, int64_t n) {
  ZRT_PROFILED("zrt_gelu_backward_bf16",
               zrt_cuda::gelu_backward_bf16(x, dout, dx, n));
}
int zrt_bias_backward_bf16(const zrt_bf16 *dout, zrt_bf16 *dbias, int64_t rows,
                           int64_t N) {
  ZRT_PROFILED("zrt_bias_backward_bf16",
               zrt_cuda::bias_backward_bf16(dout, dbias, rows, N));
}
int zrt_layer_norm_bf16(const zrt_bf16 *x, const zrt_bf16 *weight,
                        const zrt_bf16 *bias, zrt_bf16 *out, float *mean,
                        float *rstd, int64_t N, int64_t C, float eps) {
  ZRT_PROFILED(
      "zrt_layer_norm_bf16",
      zrt_cuda::layer_norm_bf16(x, weight, bias, out, mean, rstd, N, C, eps));
}
int zrt_layer_norm_stats_bf16(const zrt_bf16 *x, float *mean, float *rstd,
                              int64_t N, int64_t C, float eps) {
  ZRT_PROFILED("zrt_layer_norm_stats_bf16",
               zrt_cuda::layer_norm_stats_bf16(x, mean, rstd, N, C, eps));
}
int zrt_layer_norm_backward_bf16(const zrt_bf16 *dout, const zrt_bf16 *x,
                                 const zrt_bf16 *weight, const float *mean,
                                 const float *rstd, zrt_bf16 *dx,
                                 zrt_bf16 *dweight, zrt_bf16 *dbias, int64_t N,
                                 int64_t C) {
  ZRT_PROFILED("zrt_layer_norm_backward_bf16",
               zrt_cuda::layer_norm_backward_bf16(dout, x, weight, mean, rstd,
                                                  dx, dweight, dbias, N, C));
}
int zrt_add_layer_norm_bf16(const zrt_bf16 *a, const zrt_bf16 *b,
                            const zrt_bf16 *weight, const zrt_bf16 *bias,
                            zrt_bf16 *sum, zrt_bf16 *out, float *mean,
                            float *rstd, int64_t N, int64_t C, float eps) {
  ZRT_PROFILED("zrt_add_layer_norm_bf16",
               zrt_cuda::add_layer_norm_bf16(a, b, weight, bias, sum, out, mean,
                                             rstd, N, C, eps));
}
int zrt_layer_norm_backward_add_bf16(const zrt_bf16 *dout, const zrt_bf16 *x,
                                     const zrt_bf16 *weight, const float *mean,
                                     const float *rstd, const zrt_bf16 *addend,
                                     zrt_bf16 *dx, zrt_bf16 *dweight,
                                     zrt_bf16 *dbias, int64_t N, int64_t C) {
  ZRT_PROFILED("zrt_layer_norm_backward_add_bf16",
               zrt_cuda::layer_norm_backward_add_bf16(dout, x, weight, mean,
                                                      rstd, addend, dx, dweight,
                                                      dbias, N, C));
}
int zrt_cross_entropy_padded_bf16(const zrt_bf16 *logits,
                                  const int32_t *targets, float *loss,
                                  int64_t N, int64_t V, int64_t num_classes) {
  ZRT_PROFILED("zrt_cross_entropy_padded_bf16",
               zrt_cuda::cross_entropy_padded_bf16(logits, targets, loss, N, V,
                                                   num_classes));
}
int zrt_cross_entropy_padded_backward_bf16(const zrt_bf16 *logits,
                                           const int32_t *targets,
                                           const float *dloss,
                                           zrt_bf16 *dlogits, int64_t N,
                                           int64_t V, int64_t num_classes) {
  ZRT_PROFILED("zrt_cross_entropy_padded_backward_bf16",
               zrt_cuda::cross_entropy_padded_backward_bf16(
                   logits, targets, dloss, dlogits, N, V, num_classes));
}
int zrt_cross_entropy_padded_fused_bf16(zrt_bf16 *logits,
                                        const int32_t *targets, float *loss,
                                        float dloss, int64_t N, int64_t V,
                                        int64_t num_classes) {
  ZRT_PROFILED("zrt_cross_entropy_padded_fused_bf16",
               zrt_cuda::cross_entropy_padded_fused_bf16(
                   logits, targets, loss, dloss, N, V, num_classes));
}
int zrt_embedding_bf16(const zrt_bf16 *table, const int32_t *ids, zrt_bf16 *out,
                       int64_t N, int64_t V, int64_t C) {
  ZRT_PROFILED("zrt_embedding_bf16",
               zrt_cuda::embedding_bf16(table, ids, out, N, V, C));
}
int64_t zrt_embedding_backward_bf16_workspace(int64_t N, int64_t V) {
  // The CPU backend's size (the CUDA backend ignores the buffer), so a
  // caller sizes it the same for both.
  return zrt::embeddingBackwardBf16Workspace(N, V);
}
int zrt_embedding_backward_bf16(const zrt_bf16 *dout, const int32_t *ids,
                                zrt_bf16 *dtable, int64_t N, int64_t V,
                                int64_t C, void *workspace) {
  (void)workspace; // scratch from the runtime's device workspace
  ZRT_PROFILED("zrt_embedding_backward_bf16",
               zrt_cuda::embedding_backward_bf16(dout, ids, dtable, N, V, C));
}
int64_t zrt_attention_workspace_bf16(int64_t T, int64_t D) {
  return zrt::attentionWorkspaceBf16(T, D);
}
int zrt_attention_forward_bf16(const zrt_bf16 *q, const zrt_bf16 *k,
                               const zrt_bf16 *v, zrt_bf16 *out, float *lse,
                               float *workspace, int64_t B, int64_t H,
                               int64_t T, int64_t D) {
  ZRT_PROFILED("zrt_attention_forward_bf16",
               attentionForwardBf16(q, k, v, out, lse, workspace, B, H, T, D));
}
int zrt_attention_backward_bf16(const zrt_bf16 *dout, const zrt_bf16 *q,
                                const zrt_bf16 *k, const zrt_bf16 *v,
                                const zrt_bf16 *out, const float *lse,
                                zrt_bf16 *dq, zrt_bf16 *dk, zrt_bf16 *dv,
                                float *workspace, int64_t B, int64_t H,
                                int64_t T, int64_t D) {
  ZRT_PROFILED("zrt_attention_backward_bf16",
               attentionBackwardBf16(dout, q, k, v, out, lse, dq, dk, dv,
                                     workspace, B, H, T, D));
}
int zrt_attention_forward_packed_bf16(const zrt_bf16 *qkv, zrt_bf16 *out,
                                      float *lse, float *workspace, int64_t B,
                                      int64_t T, int64_t H, int64_t D) {
  ZRT_PROFILED(
      "zrt_attention_forward_packed_bf16",
      attentionForwardPackedBf16(qkv, out, lse, workspace, B, T, H, D));
}
int zrt_attention_backward_packed_bf16(const zrt_bf16 *dout,
                                       const zrt_bf16 *qkv, const zrt_bf16 *out,
                                       const float *lse, zrt_bf16 *dqkv,
                                       float *workspace, int64_t B, int64_t T,
                                       int64_t H, int64_t D) {
  ZRT_PROFILED("zrt_attention_backward_packed_bf16",
               attentionBackwardPackedBf16(dout, qkv, out, lse, dqkv, workspace,
                                           B, T, H, D));
}

// Grouped-query attention (flash_attention.cu, flash_attention_tc.cu) and
// the masked cross-entropy (loss.cu) of zrt/decoder.h.
int zrt_attention_forward_gqa(const float *q, const float *k, const float *v,
                              float *out, float *lse, float *workspace,
                              int64_t B, int64_t H, int64_t Hkv, int64_t T,
                              int64_t D) {
  ZRT_PROFILED("zrt_attention_forward_gqa",
               zrt_cuda::attention_forward_gqa(q, k, v, out, lse, workspace, B,
                                               H, Hkv, T, D));
}
int zrt_attention_backward_gqa(const float *dout, const float *q,
                               const float *k, const float *v,
                               const float *out, const float *lse, float *dq,
                               float *dk, float *dv, float *workspace,
                               int64_t B, int64_t H, int64_t Hkv, int64_t T,
                               int64_t D) {
  ZRT_PROFILED("zrt_attention_backward_gqa",
               zrt_cuda::attention_backward_gqa(dout, q, k, v, out, lse, dq,
                                                dk, dv, workspace, B, H, Hkv,
                                                T, D));
}
int zrt_attention_forward_gqa_bf16(const zrt_bf16 *q, const zrt_bf16 *k,
                                   const zrt_bf16 *v, zrt_bf16 *out,
                                   float *lse, float *workspace, int64_t B,
                                   int64_t H, int64_t Hkv, int64_t T,
                                   int64_t D) {
  ZRT_PROFILED("zrt_attention_forward_gqa_bf16",
               attentionForwardGqaBf16(q, k, v, out, lse, workspace, B, H, Hkv,
                                       T, D));
}
int zrt_attention_backward_gqa_bf16(const zrt_bf16 *dout, const zrt_bf16 *q,
                                    const zrt_bf16 *k, const zrt_bf16 *v,
                                    const zrt_bf16 *out, const float *lse,
                                    zrt_bf16 *dq, zrt_bf16 *dk, zrt_bf16 *dv,
                                    float *workspace, int64_t B, int64_t H,
                                    int64_t Hkv, int64_t T, int64_t D) {
  ZRT_PROFILED("zrt_attention_backward_gqa_bf16",
               attentionBackwardGqaBf16(dout, q, k, v, out, lse, dq, dk, dv,
                                        workspace, B, H, Hkv, T, D));
}
int zrt_cross_entropy_masked(const float *logits, const int32_t *targets,
                             float *loss, int64_t N, int64_t V,
                             int64_t num_classes, int32_t ignore_index) {
  ZRT_PROFILED("zrt_cross_entropy_masked",
               zrt_cuda::cross_entropy_masked(logits, targets, loss, N, V,
                                              num_classes, ignore_index));
}
int zrt_cross_entropy_masked_backward(const float *logits,
                                      const int32_t *targets,
                                      const float *dloss, float *dlogits,
                                      int64_t N, int64_t V,
                                      int64_t num_classes,
                                      int32_t ignore_index) {
  ZRT_PROFILED("zrt_cross_entropy_masked_backward",
               zrt_cuda::cross_entropy_masked_backward(
                   logits, targets, dloss, dlogits, N, V, num_classes,
                   ignore_index));
}
int zrt_cross_entropy_masked_bf16(const zrt_bf16 *logits,
                                  const int32_t *targets, float *loss,
                                  int64_t N, int64_t V, int64_t num_classes,
                                  int32_t ignore_index) {
  ZRT_PROFILED("zrt_cross_entropy_masked_bf16",
               zrt_cuda::cross_entropy_masked_bf16(logits, targets, loss, N, V,
                                                   num_classes, ignore_index));
}
int zrt_cross_entropy_masked_backward_bf16(const zrt_bf16 *logits,
                                           const int32_t *targets,
                                           const float *dloss,
                                           zrt_bf16 *dlogits, int64_t N,
                                           int64_t V, int64_t num_classes,
                                           int32_t ignore_index) {
  ZRT_PROFILED("zrt_cross_entropy_masked_backward_bf16",
               zrt_cuda::cross_entropy_masked_backward_bf16(
                   logits, targets, dloss, dlogits, N, V, num_classes,
                   ignore_index));
}

// Llama/Qwen kernels (decoder.cu).
int zrt_rms_norm(const float *x, const float *weight, float *out, int64_t N,
                 int64_t C, float eps) {
  ZRT_PROFILED("zrt_rms_norm", zrt_cuda::rms_norm(x, weight, out, N, C, eps));
}
int zrt_rms_norm_bf16(const zrt_bf16 *x, const zrt_bf16 *weight, zrt_bf16 *out,
                      int64_t N, int64_t C, float eps) {
  ZRT_PROFILED("zrt_rms_norm_bf16",
               zrt_cuda::rms_norm_bf16(x, weight, out, N, C, eps));
}
int zrt_add_rms_norm(const float *a, const float *b, const float *weight,
                     float *sum, float *out, int64_t N, int64_t C, float eps) {
  ZRT_PROFILED("zrt_add_rms_norm",
               zrt_cuda::add_rms_norm(a, b, weight, sum, out, N, C, eps));
}
int zrt_add_rms_norm_bf16(const zrt_bf16 *a, const zrt_bf16 *b,
                          const zrt_bf16 *weight, zrt_bf16 *sum, zrt_bf16 *out,
                          int64_t N, int64_t C, float eps) {
  ZRT_PROFILED("zrt_add_rms_norm_bf16",
               zrt_cuda::add_rms_norm_bf16(a, b, weight, sum, out, N, C, eps));
}
int zrt_rms_norm_backward(const float *dout, const float *x,
                          const float *weight, const float *addend, float *dx,
                          float *dweight, float *workspace, int64_t N,
                          int64_t C, float eps) {
  ZRT_PROFILED("zrt_rms_norm_backward",
               zrt_cuda::rms_norm_backward(dout, x, weight, addend, dx, dweight,
                                           workspace, N, C, eps));
}
int zrt_rms_norm_backward_bf16(const zrt_bf16 *dout, const zrt_bf16 *x,
                               const zrt_bf16 *weight, const zrt_bf16 *addend,
                               zrt_bf16 *dx, zrt_bf16 *dweight,
                               float *workspace, int64_t N, int64_t C,
                               float eps) {
  ZRT_PROFILED("zrt_rms_norm_backward_bf16",
               zrt_cuda::rms_norm_backward_bf16(dout, x, weight, addend, dx,
                                                dweight, workspace, N, C, eps));
}
int zrt_silu(const float *x, float *out, int64_t n) {
  ZRT_PROFILED("zrt_silu", zrt_cuda::silu(x, out, n));
}
int zrt_silu_bf16(const zrt_bf16 *x, zrt_bf16 *out, int64_t n) {
  ZRT_PROFILED("zrt_silu_bf16", zrt_cuda::silu_bf16(x, out, n));
}
int zrt_silu_backward(const float *x, const float *dout, float *dx, int64_t n) {
  ZRT_PROFILED("zrt_silu_backward", zrt_cuda::silu_backward(x, dout, dx, n));
}
int zrt_silu_backward_bf16(const zrt_bf16 *x, const zrt_bf16 *dout,
                           zrt_bf16 *dx, int64_t n) {
  ZRT_PROFILED("zrt_silu_backward_bf16",
               zrt_cuda::silu_backward_bf16(x, dout, dx, n));
}
int zrt_swiglu(const float *gate, const float *up, float *out, int64_t n) {
  ZRT_PROFILED("zrt_swiglu", zrt_cuda::swiglu(gate, up, out, n));
}
int zrt_swiglu_bf16(const zrt_bf16 *gate, const zrt_bf16 *up, zrt_bf16 *out,
                    int64_t n) {
  ZRT_PROFILED("zrt_swiglu_bf16", zrt_cuda::swiglu_bf16(gate, up, out, n));
}
int zrt_swiglu_backward(const float *gate, const float *up, const float *dout,
                        float *dgate, float *dup, int64_t n) {
  ZRT_PROFILED("zrt_swiglu_backward",
               zrt_cuda::swiglu_backward(gate, up, dout, dgate, dup, n));
}
int zrt_swiglu_backward_bf16(const zrt_bf16 *gate, const zrt_bf16 *up,
                             const zrt_bf16 *dout, zrt_bf16 *dgate,
                             zrt_bf16 *dup, int64_t n) {
  ZRT_PROFILED("zrt_swiglu_backward_bf16",
               zrt_cuda::swiglu_backward_bf16(gate, up, dout, dgate, dup, n));
}
int zrt_rope_table(float *table, int64_t T, int64_t half, double theta,
                   const zrt_rope_scaling *scaling) {
  ZRT_PROFILED("zrt_rope_table",
               zrt_cuda::rope_table(table, T, half, theta, scaling));
}
int zrt_rope(const float *x, const float *table, float *out, int64_t B,
             int64_t T, int64_t H, int64_t D, int layout, int inverse) {
  ZRT_PROFILED("zrt_rope",
               zrt_cuda::rope(x, table, out, B, T, H, D, layout, inverse));
}
int zrt_rope_bf16(const zrt_bf16 *x, const float *table, zrt_bf16 *out,
                  int64_t B, int64_t T, int64_t H, int64_t D, int layout,
                  int inverse) {
  ZRT_PROFILED("zrt_rope_bf16",
               zrt_cuda::rope_bf16(x, table, out, B, T, H, D, layout, inverse));
}

} // extern "C"
