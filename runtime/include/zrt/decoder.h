/*===- zrt/decoder.h - Llama/Qwen decoder kernels --------------*- C -*-===//
//
// The kernels of the Llama 3 / Qwen3 op set (RMSNorm, SiLU and SwiGLU,
// rotary embeddings, grouped-query attention, cross-entropy with
// ignore_index over padded logits): the runtime side of the train ops in
// dialects/Train/TrainDecoderOps.td. Included by zrt.h; its conventions
// (row-major, element counts, status codes, OVERWRITE backward, f32
// arithmetic on bf16 storage with every output rounded once) apply. Both
// backends define them: the CPU's (runtime/src) and the CUDA backend's
// (runtime/cuda: decoder.cu, the grouped-query attention in
// flash_attention.cu / flash_attention_tc.cu, the masked cross-entropy in
// loss.cu), whose pointers are device pointers (dloss and loss too) and
// whose bad targets raise the device error word instead of returning
// ZRT_ERR_OUT_OF_RANGE at once (see docs/cuda.md).
//
// Sources: Hugging Face transformers models/llama/modeling_llama.py
// (LlamaRMSNorm, apply_rotary_pos_emb, repeat_kv, LlamaMLP), torchtitan
// models/llama3 (precompute_freqs_cis, apply_rotary_emb), PyTorch
// F.scaled_dot_product_attention and F.cross_entropy.
//
//===----------------------------------------------------------------------===*/
#ifndef ZRT_DECODER_H
#define ZRT_DECODER_H

#include "zrt/zrt.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*===----------------------------------------------------------------------===//
// RMSNorm
//===----------------------------------------------------------------------===*/

/// RMSNorm of the rows of x [N, C]: with r = 1/sqrt(mean_j x_j^2 + eps) in
/// f32, out_j = T(f32(weight_j) * f32(T(x_j * r))) for the storage type T
/// (the product x * r rounded to T before the weight multiplies it, as
/// Hugging Face's LlamaRMSNorm casts back before `weight * x`); weight [C]
/// or NULL (= 1).
/// Errors: ZRT_ERR_INVALID_ARGUMENT (N < 0, C < 1, eps <= 0 or not finite,
/// x or out NULL with N > 0).
int zrt_rms_norm(const float *x, const float *weight, float *out, int64_t N,
                 int64_t C, float eps);

/// sum = a + b (zrt_add's arithmetic), then out = zrt_rms_norm(sum): in
/// one pass over each row. sum must not overlap a or b. Errors: as
/// zrt_rms_norm (a, b, sum, out required).
int zrt_add_rms_norm(const float *a, const float *b, const float *weight,
                     float *sum, float *out, int64_t N, int64_t C, float eps);

/// Backward of zrt_rms_norm, r and xh = x r recomputed in f32 per row:
///   g_j = dout_j * weight_j,  dx_j = r (g_j - xh_j mean_k(g_k xh_k)),
///   dweight_j = sum_rows dout_j xh_j  (f32, rows in order; deterministic).
/// addend [N, C] or NULL: dx = addend + T(dx) (zrt_add's arithmetic), the
/// residual stream's other gradient. dx or dweight may be NULL (not
/// computed); weight NULL = 1. workspace: N floats of scratch (the row
/// statistics of the dweight pass) or NULL (then allocated: a heap
/// allocation counted by zrt_heap_allocations; only needed with dweight).
/// Errors: as zrt_rms_norm (dout and x required), ZRT_ERR_OUT_OF_MEMORY
/// (only without a workspace).
int zrt_rms_norm_backward(const float *dout, const float *x,
                          const float *weight, const float *addend, float *dx,
                          float *dweight, float *workspace, int64_t N,
                          int64_t C, float eps);

int zrt_rms_norm_bf16(const zrt_bf16 *x, const zrt_bf16 *weight,
                      zrt_bf16 *out, int64_t N, int64_t C, float eps);
int zrt_add_rms_norm_bf16(const zrt_bf16 *a, const zrt_bf16 *b,
                          const zrt_bf16 *weight, zrt_bf16 *sum,
                          zrt_bf16 *out, int64_t N, int64_t C, float eps);
int zrt_rms_norm_backward_bf16(const zrt_bf16 *dout, const zrt_bf16 *x,
                               const zrt_bf16 *weight, const zrt_bf16 *addend,
                               zrt_bf16 *dx, zrt_bf16 *dweight,
                               float *workspace, int64_t N, int64_t C,
                               float eps);

/*===----------------------------------------------------------------------===//
// SiLU and SwiGLU
//===----------------------------------------------------------------------===*/

/// out = x * sigmoid(x) over n elements (in place allowed).
/// Errors: ZRT_ERR_INVALID_ARGUMENT (n < 0, NULL with n > 0).
int zrt_silu(const float *x, float *out, int64_t n);

/// dx = dout * s (1 + x (1 - s)), s = sigmoid(x) (in place on dout allowed).
int zrt_silu_backward(const float *x, const float *dout, float *dx,
                      int64_t n);

/// out = silu(gate) * up, one rounding (in place on gate or up allowed).
int zrt_swiglu(const float *gate, const float *up, float *out, int64_t n);

/// dgate = dout * up * s (1 + gate (1 - s)), dup = dout * gate * s; each
/// may be NULL (not computed) and may alias dout.
int zrt_swiglu_backward(const float *gate, const float *up, const float *dout,
                        float *dgate, float *dup, int64_t n);

int zrt_silu_bf16(const zrt_bf16 *x, zrt_bf16 *out, int64_t n);
int zrt_silu_backward_bf16(const zrt_bf16 *x, const zrt_bf16 *dout,
                           zrt_bf16 *dx, int64_t n);
int zrt_swiglu_bf16(const zrt_bf16 *gate, const zrt_bf16 *up, zrt_bf16 *out,
                    int64_t n);
int zrt_swiglu_backward_bf16(const zrt_bf16 *gate, const zrt_bf16 *up,
                             const zrt_bf16 *dout, zrt_bf16 *dgate,
                             zrt_bf16 *dup, int64_t n);

/*===----------------------------------------------------------------------===//
// Rotary position embedding
//===----------------------------------------------------------------------===*/

/// Llama 3.1's frequency scaling (Hugging Face rope_scaling, rope_type
/// "llama3"): factor, low_freq_factor < high_freq_factor, and
/// original_max_position_embeddings.
typedef struct zrt_rope_scaling {
  double factor;
  double low_freq_factor;
  double high_freq_factor;
  int64_t original_max_positions;
} zrt_rope_scaling;

/// The cos/sin table of train.rope_table: table [T, half, 2] f32 with
/// table[t][i] = {cos(a), sin(a)}, a = f32(t * f_i) and f_i = f32(1 /
/// f32(theta^(i / half))) — Hugging Face's f32 arithmetic
/// (`1.0 / base ** (arange(0, dim, 2) / dim)`, then the f32 product with
/// the position); with scaling, f_i is rescaled in f32 as
/// _compute_llama3_parameters does. scaling NULL: unscaled.
/// Errors: ZRT_ERR_INVALID_ARGUMENT (T < 0, half < 1, theta <= 0, bad
/// scaling factors, table NULL with T > 0).
int zrt_rope_table(float *table, int64_t T, int64_t half, double theta,
                   const zrt_rope_scaling *scaling);

/// Layouts of zrt_rope: which elements of a head rotate together.
enum zrt_rope_layout {
  ZRT_ROPE_ROTATE_HALF = 0, ///< (i, i + D/2): Hugging Face rotate_half.
  ZRT_ROPE_INTERLEAVED = 1, ///< (2i, 2i + 1): Meta / torchtitan.
};

/// Rotary embedding of x [B, T, H, D] with table [T, D/2, 2] into out
/// (same shape; in place allowed): for each pair (a, b) of frequency i at
/// position t, with (c, s) = table[t][i] (s negated when inverse != 0),
///   a' = a c - b s,  b' = b c + a s   (f32, rounded once).
/// inverse != 0 is the backward (the transposed rotation).
/// Errors: ZRT_ERR_INVALID_ARGUMENT (B, H < 0, T, D < 1, D odd, bad
/// layout, NULL with elements).
int zrt_rope(const float *x, const float *table, float *out, int64_t B,
             int64_t T, int64_t H, int64_t D, int layout, int inverse);
int zrt_rope_bf16(const zrt_bf16 *x, const float *table, zrt_bf16 *out,
                  int64_t B, int64_t T, int64_t H, int64_t D, int layout,
                  int inverse);

/*===----------------------------------------------------------------------===//
// Grouped-query attention
//===----------------------------------------------------------------------===*/

/// zrt_attention_forward with K/V heads shared by groups of query heads:
/// q, out [B, H, T, D]; k, v [B, Hkv, T, D] with Hkv dividing H; query head
/// h reads K/V head h / (H / Hkv) (Hugging Face repeat_kv, without the
/// copies). lse [B, H, T]. Hkv == H: exactly zrt_attention_forward, bit for
/// bit. workspace: zrt_attention_workspace(T) floats (NULL: allocated).
/// Errors: zrt_attention_forward's, and ZRT_ERR_INVALID_ARGUMENT when Hkv
/// < 1 or does not divide H.
int zrt_attention_forward_gqa(const float *q, const float *k, const float *v,
                              float *out, float *lse, float *workspace,
                              int64_t B, int64_t H, int64_t Hkv, int64_t T,
                              int64_t D);

/// Backward of zrt_attention_forward_gqa: dq [B, H, T, D]; dk, dv [B, Hkv,
/// T, D] OVERWRITTEN with the sum over each group's query heads, in head
/// order, in f32 (the gradient of repeat_kv). Hkv == H: exactly
/// zrt_attention_backward. Errors: as the forward.
int zrt_attention_backward_gqa(const float *dout, const float *q,
                               const float *k, const float *v,
                               const float *out, const float *lse, float *dq,
                               float *dk, float *dv, float *workspace,
                               int64_t B, int64_t H, int64_t Hkv, int64_t T,
                               int64_t D);

/// bf16 forms: each slice widened to f32, the group's dk/dv summed in f32
/// and rounded once. workspace: zrt_attention_workspace_bf16(T, D) floats.
int zrt_attention_forward_gqa_bf16(const zrt_bf16 *q, const zrt_bf16 *k,
                                   const zrt_bf16 *v, zrt_bf16 *out,
                                   float *lse, float *workspace, int64_t B,
                                   int64_t H, int64_t Hkv, int64_t T,
                                   int64_t D);
int zrt_attention_backward_gqa_bf16(const zrt_bf16 *dout, const zrt_bf16 *q,
                                    const zrt_bf16 *k, const zrt_bf16 *v,
                                    const zrt_bf16 *out, const float *lse,
                                    zrt_bf16 *dq, zrt_bf16 *dk, zrt_bf16 *dv,
                                    float *workspace, int64_t B, int64_t H,
                                    int64_t Hkv, int64_t T, int64_t D);

/*===----------------------------------------------------------------------===//
// Cross-entropy with ignore_index over padded logits
//===----------------------------------------------------------------------===*/

/// Mean cross-entropy of logits [N, V] (row stride V) over the first
/// num_classes columns against targets [N], rows whose target equals
/// ignore_index skipped and not counted: loss = (1/M) sum over the M other
/// rows of logsumexp - logit[target], in double; M = 0 gives NaN (as
/// PyTorch). The target of a counted row must be in [0, num_classes).
/// Errors: ZRT_ERR_OUT_OF_RANGE (such a target outside the classes),
/// ZRT_ERR_INVALID_ARGUMENT (N < 0, V < 1, num_classes outside [1, V],
/// NULL).
int zrt_cross_entropy_masked(const float *logits, const int32_t *targets,
                             float *loss, int64_t N, int64_t V,
                             int64_t num_classes, int32_t ignore_index);

/// Backward (OVERWRITE dlogits [N, V]): dlogits[n, j] = *dloss (softmax_j -
/// onehot_j) / M for counted rows and j < num_classes; 0 for ignored rows
/// and padding columns. Errors: as the forward.
int zrt_cross_entropy_masked_backward(const float *logits,
                                      const int32_t *targets,
                                      const float *dloss, float *dlogits,
                                      int64_t N, int64_t V,
                                      int64_t num_classes,
                                      int32_t ignore_index);

int zrt_cross_entropy_masked_bf16(const zrt_bf16 *logits,
                                  const int32_t *targets, float *loss,
                                  int64_t N, int64_t V, int64_t num_classes,
                                  int32_t ignore_index);
int zrt_cross_entropy_masked_backward_bf16(const zrt_bf16 *logits,
                                           const int32_t *targets,
                                           const float *dloss,
                                           zrt_bf16 *dlogits, int64_t N,
                                           int64_t V, int64_t num_classes,
                                           int32_t ignore_index);

#ifdef __cplusplus
} // extern "C"
#endif

#endif /* ZRT_DECODER_H */
