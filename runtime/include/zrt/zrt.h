/*===- zrt/zrt.h - Zero runtime C ABI ---------------------------*- C -*-===//
//
// Public C ABI of the Zero runtime (CPU backend). Generated programs include
// this header and link `zero_runtime`.
//
// Conventions (apply to every function below unless its comment says
// otherwise):
//   * All tensors are dense, contiguous, row-major (C order). A shape written
//     [N, C] means element (i, j) lives at index i*C + j.
//   * Sizes and counts are in ELEMENTS (int64_t), except where a parameter is
//     named `bytes`.
//   * Arithmetic is IEEE f32. "bf16" storage is the upper 16 bits of an IEEE
//     f32, stored as uint16_t (zrt_bf16); f32 -> bf16 rounds to nearest even.
//   * Backward kernels OVERWRITE their gradient outputs (they never
//     accumulate); the caller adds gradients where they fan in (zrt_add,
//     zrt_axpy).
//   * Functions that can fail return an int status: ZRT_OK (0) on success,
//     a positive ZRT_ERR_* code on failure. On failure nothing has been
//     written to the outputs (argument checks run before any write), and a
//     human-readable message is available from zrt_last_error() on the
//     calling thread. Successful calls do not clear the message.
//   * Output buffers must not overlap input buffers, except that the
//     elementwise functions (zrt_fill .. zrt_relu_backward) accept an
//     output that is exactly the same pointer as an input (in-place).
//   * Pointers may be NULL when the corresponding element count is zero.
//   * Kernels are OpenMP-parallel and call OpenBLAS cblas_sgemm for matrix
//     products. Kernels are re-entrant; collectives must be called from the
//     thread that called zrt_init (MPI_THREAD_FUNNELED).
//
//===----------------------------------------------------------------------===*/
#ifndef ZRT_ZRT_H
#define ZRT_ZRT_H

#include <stdint.h>

#include "zrt/abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/*===----------------------------------------------------------------------===//
// Status codes and errors
//===----------------------------------------------------------------------===*/

/// Status codes returned by every fallible zrt_ function.
enum zrt_status {
  ZRT_OK = 0,                   ///< Success.
  ZRT_ERR_INVALID_ARGUMENT = 1, ///< Bad size, NULL pointer, bad enum value.
  ZRT_ERR_OUT_OF_RANGE = 2,     ///< Index (token id, target, rank) out of range.
  ZRT_ERR_IO = 3,               ///< File missing, unreadable, or empty.
  ZRT_ERR_FORMAT = 4,           ///< File content malformed (bad magic, truncated).
  ZRT_ERR_OUT_OF_MEMORY = 5,    ///< Allocation or arena space exhausted.
  ZRT_ERR_MPI = 6,              ///< An MPI call failed.
  ZRT_ERR_NOT_INITIALIZED = 7,  ///< Collective used before zrt_init / after zrt_finalize.
};

/// Message of the most recent failing zrt_ call on the calling thread
/// (thread-local, like errno); "" if none since start or zrt_clear_error().
/// The pointer stays valid until the next zrt_ call on this thread.
const char *zrt_last_error(void);

/// Clears the calling thread's zrt_last_error() message.
void zrt_clear_error(void);

/// Static name of a status code, e.g. "ZRT_ERR_IO"; "ZRT_UNKNOWN" otherwise.
const char *zrt_status_name(int status);

/// Sets the thread count used by OpenMP loops and by OpenBLAS (n >= 1).
/// Errors: ZRT_ERR_INVALID_ARGUMENT if n < 1.
int zrt_set_num_threads(int n);

/*===----------------------------------------------------------------------===//
// bf16 conversion
//===----------------------------------------------------------------------===*/

/// bf16 storage type: the upper 16 bits of an IEEE-754 binary32.
typedef uint16_t zrt_bf16;

/// Rounds one f32 to bf16, round-to-nearest-even on the 16 dropped bits.
/// Overflow rounds to +-Inf; Inf stays Inf; NaN stays NaN (sign and top
/// payload bits kept, quiet bit 0x0040 forced so the result is never Inf).
/// Same rounding as PyTorch c10::BFloat16 / Eigen bfloat16 (RNE).
zrt_bf16 zrt_f32_to_bf16(float x);

/// Widens one bf16 to f32 exactly (bits << 16).
float zrt_bf16_to_f32(zrt_bf16 x);

/// dst[i] = zrt_f32_to_bf16(src[i]) for i in [0, n). n in elements.
/// Errors: ZRT_ERR_INVALID_ARGUMENT (n < 0, NULL pointer with n > 0).
int zrt_cast_f32_to_bf16(const float *src, zrt_bf16 *dst, int64_t n);

/// dst[i] = zrt_bf16_to_f32(src[i]) for i in [0, n). n in elements.
/// Errors: ZRT_ERR_INVALID_ARGUMENT.
int zrt_cast_bf16_to_f32(const zrt_bf16 *src, float *dst, int64_t n);

/*===----------------------------------------------------------------------===//
// f16 (IEEE binary16) conversion: fp16-mixed storage; the arithmetic stays
// f32 (the lowering widens every f16 op to the f32 kernels)
//===----------------------------------------------------------------------===*/

/// f16 storage type: IEEE-754 binary16 bits (1 sign, 5 exponent, 10
/// mantissa bits; largest finite 65504, smallest subnormal 2^-24).
typedef uint16_t zrt_f16;

/// Rounds one f32 to f16, round to nearest even (subnormals included).
/// Finite values of magnitude >= 65520 round to +-Inf (the overflow that
/// fp16-mixed loss scaling detects); Inf stays Inf; NaN becomes the quiet
/// NaN 0x7e00 with the sign kept. The same results as PyTorch's
/// c10::Half(float) and CUDA __float2half_rn on every non-NaN input.
zrt_f16 zrt_f32_to_f16(float x);

/// Widens one f16 to f32 exactly.
float zrt_f16_to_f32(zrt_f16 x);

/// dst[i] = zrt_f32_to_f16(src[i]) for i in [0, n). n in elements.
/// Errors: ZRT_ERR_INVALID_ARGUMENT (n < 0, NULL pointer with n > 0).
int zrt_cast_f32_to_f16(const float *src, zrt_f16 *dst, int64_t n);

/// dst[i] = zrt_f16_to_f32(src[i]) for i in [0, n). n in elements.
/// Errors: ZRT_ERR_INVALID_ARGUMENT.
int zrt_cast_f16_to_f32(const zrt_f16 *src, float *dst, int64_t n);

/*===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===*/

/// Stride sentinel for zrt_matmul: the batch stride of a densely packed
/// stack of matrices (M*K for A, K*N for B, M*N for C).
#define ZRT_STRIDE_PACKED (-1)

/// Batched matrix product with optional bias (cblas_sgemm per batch):
///   C[b] = alpha * op(A[b]) . op(B[b]) + beta * C[b] + bias     b in [0,batch)
/// op(A[b]) is [M, K]: A[b] is stored [M, K] if trans_a == 0, else [K, M].
/// op(B[b]) is [K, N]: B[b] is stored [K, N] if trans_b == 0, else [N, K].
/// C[b] is [M, N]. All row-major. bias is NULL or [N] and is added to every
/// row of every C[b] (broadcast over rows and batches).
/// stride_a/stride_b/stride_c are element offsets between consecutive
/// matrices; ZRT_STRIDE_PACKED means densely packed; 0 for A or B means the
/// same matrix is reused for every batch (cuBLAS strided-batched semantics).
/// If beta == 0, C is not read (may hold garbage/NaN).
/// Backward of C = A.B (no transposes): dA = dC . B^T  (zrt_matmul with
/// trans_b = 1), dB = A^T . dC (trans_a = 1), dbias = zrt_bias_backward(dC).
/// Semantics: BLAS SGEMM.
/// Errors: ZRT_ERR_INVALID_ARGUMENT (negative sizes, sizes above INT32_MAX,
/// stride_c == 0 with batch > 1, negative strides other than the sentinel,
/// NULL pointers).
int zrt_matmul(const float *A, const float *B, const float *bias, float *C,
               int64_t batch, int64_t M, int64_t N, int64_t K, int trans_a,
               int trans_b, float alpha, float beta, int64_t stride_a,
               int64_t stride_b, int64_t stride_c);

/// Mixed-precision matrix product on bf16 storage (the matmuls of a
/// bf16-mixed training step): with packed operands and alpha = 1, beta = 0,
///   C[b] = bf16( f32(op(A[b])) . f32(op(B[b])) + f32(bias) )   b in [0,batch)
/// i.e. exactly zrt_matmul on the f32 widenings of A, B and bias, with C
/// rounded to bf16 once (round to nearest even). Shapes and transposes as
/// zrt_matmul; A[b], B[b], C[b] packed at strides M*K, K*N, M*N; bias NULL
/// or [N] (added to every row). `workspace` holds at least
/// zrt_matmul_bf16_workspace() floats of scratch: the CPU backend widens
/// into it (per matrix of the batch: op(B) and the bias, then chunks of
/// rows of op(A) and of C within a fixed 2^24-float budget) and runs
/// cblas_sgemm per chunk; the CUDA backend runs a bf16 tensor-core GEMM
/// with f32 accumulation (cuBLAS, CUBLAS_COMPUTE_32F) and uses it only for
/// C's f32 values when a bias cannot go through cuBLASLt's epilogue (so
/// that C is rounded once), in chunks of rows that fit. Products and sums
/// are f32 on both; the order of the sums may differ between backends.
/// Errors: ZRT_ERR_INVALID_ARGUMENT (as zrt_matmul, and a NULL workspace
/// when there is something to compute).
int zrt_matmul_bf16(const zrt_bf16 *A, const zrt_bf16 *B, const zrt_bf16 *bias,
                    zrt_bf16 *C, int64_t batch, int64_t M, int64_t N,
                    int64_t K, int trans_a, int trans_b, float *workspace);

/// Floats of scratch zrt_matmul_bf16 needs for these sizes:
/// K*N + (has_bias ? N : 0) + rows*(K + N), rows = min(M, max(1,
/// 2^24 / (K + N))): bounded in M and independent of batch (GPT-2's LM
/// head at B = 16, T = 1024: 55M floats, not 875M). -1 for negative sizes
/// or on overflow.
int64_t zrt_matmul_bf16_workspace(int64_t batch, int64_t M, int64_t N,
                                  int64_t K, int has_bias);

/// A linear layer followed by GELU in one call (llm.c's gelu_fusion,
/// cuBLASLt's CUBLASLT_EPILOGUE_GELU_AUX_BIAS): with
///   acc[b] = f32(op(A[b])) . f32(op(B[b])) + f32(bias)       (f32)
/// the exact f32 value zrt_matmul_bf16 rounds to C,
///   pre[b] = bf16(acc[b]),   out[b] = bf16(gelu(acc[b]))     b in [0,batch)
/// with gelu zrt_gelu's tanh approximation evaluated in f32 on the
/// UNROUNDED acc and each output rounded once (RNE). pre may be NULL (then
/// only out is written); pre is what zrt_matmul_gelu_backward_bf16 takes.
/// Shapes, transposes, packing, batch, bias (NULL or [N]) and errors as
/// zrt_matmul_bf16; pre and out are [batch, M, N] and must not overlap each
/// other or the inputs. `workspace`: at least
/// zrt_matmul_bf16_workspace(batch, M, N, K, bias != NULL) floats. On the
/// CPU: bit for bit zrt_matmul on the widened A, B, bias, then zrt_gelu and
/// zrt_cast_f32_to_bf16 (for a product within one row chunk; see
/// zrt_matmul_bf16). On CUDA: one cuBLASLt matmul with the GELU(_AUX)(_BIAS)
/// epilogue where cuBLASLt takes the shape (cuBLASLt's own tanh GELU: an
/// element may differ from the CPU's in the last bf16 bit), else the f32
/// product in the workspace and a kernel with the CPU's GELU arithmetic.
/// Errors: ZRT_ERR_INVALID_ARGUMENT (as zrt_matmul_bf16, with out as C).
int zrt_matmul_gelu_bf16(const zrt_bf16 *A, const zrt_bf16 *B,
                         const zrt_bf16 *bias, zrt_bf16 *pre, zrt_bf16 *out,
                         int64_t batch, int64_t M, int64_t N, int64_t K,
                         int trans_a, int trans_b, float *workspace);

/// The input gradient of GELU(linear) in one call (cuBLASLt's
/// CUBLASLT_EPILOGUE_DGELU): with
///   g[b] = f32(op(A[b])) . f32(op(B[b]))                      (f32)
///   dpre[b] = bf16(g[b] * gelu'(f32(pre[b])))                 b in [0,batch)
/// i.e. zrt_gelu_backward's f32 arithmetic with x = the widened pre and
/// dout = the UNROUNDED product g, rounded once (OVERWRITE). Typically A is
/// the gradient of the GELU output and B the next layer's weight (trans_b =
/// 1): dpre is then the gradient of the pre-activation. pre, dpre:
/// [batch, M, N] bf16; dpre MAY equal pre (in place), otherwise it must not
/// overlap pre or the inputs. Shapes, transposes, packing, batch and errors
/// as zrt_matmul_bf16 without a bias; `workspace`: at least
/// zrt_matmul_bf16_workspace(batch, M, N, K, 0) floats. On the CPU: bit for
/// bit zrt_matmul on the widened A, B, then zrt_gelu_backward on the
/// widened pre and zrt_cast_f32_to_bf16 (one row chunk, as above). On CUDA:
/// one cuBLASLt matmul with the DGELU epilogue (pre as its aux input) where
/// cuBLASLt takes the shape and dpre != pre (an element may differ from the
/// CPU's in the last bf16 bit), else the f32 product in the workspace and a
/// kernel with the CPU's arithmetic.
/// Errors: ZRT_ERR_INVALID_ARGUMENT (as zrt_matmul_bf16 with dpre as C, and
/// a NULL pre when there is something to compute).
int zrt_matmul_gelu_backward_bf16(const zrt_bf16 *A, const zrt_bf16 *B,
                                  const zrt_bf16 *pre, zrt_bf16 *dpre,
                                  int64_t batch, int64_t M, int64_t N,
                                  int64_t K, int trans_a, int trans_b,
                                  float *workspace);

/// Bias gradient: dbias[j] = sum_r dout[r, j] over rows r in [0, rows);
/// dout is [rows, N], dbias is [N] and is OVERWRITTEN. Sum accumulated in
/// f32 per column. (PyTorch nn.Linear bias gradient.)
/// Errors: ZRT_ERR_INVALID_ARGUMENT.
int zrt_bias_backward(const float *dout, float *dbias, int64_t rows,
                      int64_t N);

/// Axis permutation [A, B, C, D] -> [A, C, B, D] (torch .transpose(1, 2)
/// .contiguous()), e.g. [B, T, H, Dh] -> [B, H, T, Dh] for attention heads.
/// Its own backward: call again with (A, C, B, D) on the gradient.
/// Errors: ZRT_ERR_INVALID_ARGUMENT (negative dims, NULL, in == out).
int zrt_permute_0213(const float *in, float *out, int64_t A, int64_t B,
                     int64_t C, int64_t D);

/*===----------------------------------------------------------------------===//
// Elementwise (n elements, f32). out may equal an input pointer (in-place).
// All return ZRT_ERR_INVALID_ARGUMENT for n < 0 or NULL pointers with n > 0.
//===----------------------------------------------------------------------===*/

/// out[i] = value.
int zrt_fill(float *out, float value, int64_t n);

/// out[i] = x[i] (memmove semantics; overlap allowed).
int zrt_copy(const float *x, float *out, int64_t n);

/// out[i] = a[i] + b[i]. Backward: da = dout, db = dout (zrt_add_backward).
int zrt_add(const float *a, const float *b, float *out, int64_t n);

/// da[i] = dout[i], db[i] = dout[i] (OVERWRITE); da or db may be NULL.
int zrt_add_backward(const float *dout, float *da, float *db, int64_t n);

/// y[i] += alpha * x[i] (BLAS saxpy; the one accumulating helper, for
/// gradient fan-in and gradient accumulation).
int zrt_axpy(float alpha, const float *x, float *y, int64_t n);

/// out[i] = a[i] * b[i].
int zrt_mul(const float *a, const float *b, float *out, int64_t n);

/// da[i] = dout[i] * b[i], db[i] = dout[i] * a[i] (OVERWRITE); da or db may
/// be NULL; da/db must not alias a, b or dout.
int zrt_mul_backward(const float *a, const float *b, const float *dout,
                     float *da, float *db, int64_t n);

/// out[i] = alpha * x[i]. Backward: dx = alpha * dout (same function).
int zrt_scale(const float *x, float alpha, float *out, int64_t n);

/// GELU, tanh approximation:
///   out = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
/// Source: PyTorch torch.nn.functional.gelu(approximate='tanh'); llm.c
/// gelu_forward.
int zrt_gelu(const float *x, float *out, int64_t n);

/// dx = dout * d/dx gelu_tanh(x) (OVERWRITE), with
///   d/dx = 0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) sqrt(2/pi)(1 + 3*0.044715 x^2),
///   u = sqrt(2/pi)(x + 0.044715 x^3). Source: llm.c gelu_backward,
/// PyTorch GeluBackward(approximate='tanh'). x is the forward INPUT.
int zrt_gelu_backward(const float *x, const float *dout, float *dx,
                      int64_t n);

/// out = max(x, 0) (torch.relu).
int zrt_relu(const float *x, float *out, int64_t n);

/// dx = x > 0 ? dout : 0 (OVERWRITE; gradient 0 at x == 0, as PyTorch).
/// x is the forward INPUT.
int zrt_relu_backward(const float *x, const float *dout, float *dx,
                      int64_t n);

/*===----------------------------------------------------------------------===//
// Normalization and softmax
//===----------------------------------------------------------------------===*/

/// Layer normalization over the last dim of x [N, C]:
///   mean_i = sum_j x_ij / C,  var_i = sum_j (x_ij - mean_i)^2 / C (biased),
///   rstd_i = 1 / sqrt(var_i + eps),
///   out_ij = (x_ij - mean_i) * rstd_i * weight_j + bias_j.
/// weight, bias: [C] or NULL (NULL = 1 resp. 0). mean, rstd: [N] f32 outputs
/// saved for zrt_layer_norm_backward, or NULL if not needed. Statistics are
/// computed in f32 (two-pass). Source: PyTorch torch.nn.functional.layer_norm,
/// llm.c layernorm_forward.
/// Errors: ZRT_ERR_INVALID_ARGUMENT (N < 0, C < 1, eps < 0, NULL x/out).
int zrt_layer_norm(const float *x, const float *weight, const float *bias,
                   float *out, float *mean, float *rstd, int64_t N, int64_t C,
                   float eps);

/// Layer-norm backward. Inputs: dout [N, C], x [N, C] (forward input),
/// weight [C] or NULL (=1), mean and rstd [N] from zrt_layer_norm.
/// Outputs (all OVERWRITTEN; any may be NULL to skip): dx [N, C],
/// dweight [C] = sum_i dout_ij * xhat_ij, dbias [C] = sum_i dout_ij, where
/// xhat = (x - mean) * rstd and
///   dx_ij = rstd_i (g_ij - mean_j(g_ij) - xhat_ij mean_j(g_ij xhat_ij)),
///   g_ij = weight_j dout_ij.
/// Source: llm.c layernorm_backward (same formula as PyTorch).
/// Errors: ZRT_ERR_INVALID_ARGUMENT.
int zrt_layer_norm_backward(const float *dout, const float *x,
                            const float *weight, const float *mean,
                            const float *rstd, float *dx, float *dweight,
                            float *dbias, int64_t N, int64_t C);

/// Residual add fused into layer norm, forward: one pass over the rows of
/// a, b [N, C] computes
///   sum = a + b   [N, C] (OVERWRITTEN; zrt_add's arithmetic),
/// the residual stream, and normalizes each row of sum right after computing
/// it (on CUDA from a copy in shared memory, not reading sum back; rows too
/// long for a block's shared memory are read back), writing out [N, C] and
/// mean, rstd [N] f32 (each may be NULL) exactly as zrt_layer_norm(sum,
/// weight, bias, out, mean, rstd, N, C, eps) would. weight, bias: [C] or
/// NULL as in zrt_layer_norm. Bit for bit zrt_add(a, b, sum, N * C)
/// followed by that zrt_layer_norm, on either backend. sum must not overlap
/// a, b or out, and out must not overlap a or b (no in-place form).
/// Source: llm.c fused_residual_forward.
/// Errors: ZRT_ERR_INVALID_ARGUMENT: zrt_layer_norm's shape and eps rules
/// (its messages under this name), then NULL a, b, sum or out (N > 0), then
/// sum overlapping a, b or out, or out overlapping a or b. Nothing is
/// written on an error.
int zrt_add_layer_norm(const float *a, const float *b, const float *weight,
                       const float *bias, float *sum, float *out, float *mean,
                       float *rstd, int64_t N, int64_t C, float eps);

/// Layer-norm backward with the residual gradient added in the same pass:
/// dweight, dbias [C] (OVERWRITTEN; each may be NULL) exactly as
/// zrt_layer_norm_backward computes them, and
///   dx = addend + dx_ln   [N, C] (OVERWRITTEN; required),
/// where dx_ln is what zrt_layer_norm_backward would write to its dx and
/// the add is zrt_add's. addend [N, C] is the gradient that reaches the
/// layer norm's input along the other path (the residual branch). Bit for
/// bit zrt_layer_norm_backward into a temporary followed by zrt_add(addend,
/// temporary, dx, N * C) (or zrt_add(temporary, addend, dx): IEEE addition
/// commutes, NaN payloads aside), on either backend, with no temporary in
/// memory. dx must not overlap addend, dout or x (no in-place form).
/// Source: llm.c layernorm_backward (accumulating into dresidual).
/// Errors: ZRT_ERR_INVALID_ARGUMENT: zrt_layer_norm_backward's rules (its
/// messages under this name), then NULL addend or dx (N > 0), then dx
/// overlapping addend, dout or x. Nothing is written on an error.
int zrt_layer_norm_backward_add(const float *dout, const float *x,
                                const float *weight, const float *mean,
                                const float *rstd, const float *addend,
                                float *dx, float *dweight, float *dbias,
                                int64_t N, int64_t C);

/// Softmax over the last dim of x [N, C] into out [N, C] (max-subtracted,
/// torch.softmax(x, dim=-1)).
/// Errors: ZRT_ERR_INVALID_ARGUMENT (N < 0, C < 1, NULL).
int zrt_softmax(const float *x, float *out, int64_t N, int64_t C);

/// Softmax backward from the forward OUTPUT y [N, C] and dy [N, C]:
///   dx_ij = y_ij (dy_ij - sum_k y_ik dy_ik)   (OVERWRITE dx).
/// Errors: ZRT_ERR_INVALID_ARGUMENT.
int zrt_softmax_backward(const float *y, const float *dy, float *dx,
                         int64_t N, int64_t C);

/*===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===*/

/// Causal scaled-dot-product attention per (batch, head):
///   S = (q . k^T) / sqrt(D)  [T, T];  S_ij = -inf for j > i (causal);
///   P = softmax_row(S);  out = P . v  [T, D].
/// q, k, v, out: [B, H, T, D]. probs: [B, H, T, T] output holding P (zeros
/// above the diagonal), required by zrt_causal_attention_backward; may be
/// NULL when no backward is needed. workspace: [T, T] floats that hold one
/// slice's P when probs is NULL (unused otherwise); when both are NULL the
/// call allocates the [T, T] itself (a heap allocation, counted by
/// zrt_heap_allocations; compiled steps always pass one). QK^T and PV use
/// cblas_sgemm.
/// Source: PyTorch F.scaled_dot_product_attention(is_causal=True); nanoGPT
/// CausalSelfAttention.
/// Errors: ZRT_ERR_INVALID_ARGUMENT (non-positive T or D, negative B/H,
/// NULL pointers, sizes above INT32_MAX).
int zrt_causal_attention(const float *q, const float *k, const float *v,
                         float *out, float *probs, float *workspace,
                         int64_t B, int64_t H, int64_t T, int64_t D);

/// Backward of zrt_causal_attention. Inputs: dout [B, H, T, D], q, k, v
/// [B, H, T, D], probs [B, H, T, T] from the forward. Outputs dq, dk, dv
/// [B, H, T, D] (OVERWRITTEN). With s = 1/sqrt(D):
///   dV = P^T dO, dP = dO V^T, dS = P * (dP - rowsum(P * dP)),
///   dQ = s dS K, dK = s dS^T Q.
/// workspace: [T, T] floats of scratch (dP, then dS, one slice at a time),
/// which the compiled step places in its temporaries arena; NULL makes the
/// call allocate it (a heap allocation, counted by zrt_heap_allocations).
/// Errors: ZRT_ERR_INVALID_ARGUMENT, ZRT_ERR_OUT_OF_MEMORY (only without a
/// workspace).
int zrt_causal_attention_backward(const float *dout, const float *q,
                                  const float *k, const float *v,
                                  const float *probs, float *dq, float *dk,
                                  float *dv, float *workspace, int64_t B,
                                  int64_t H, int64_t T, int64_t D);

/// Floats of `workspace` zrt_attention_forward / zrt_attention_backward
/// need on every backend for sequence length T: 2 T^2 + T (the CPU backend
/// holds one (batch, head) slice's [T, T] probabilities and score
/// gradients and a row of [T]; the CUDA backend uses none of it). -1 for
/// T < 0 or on overflow.
int64_t zrt_attention_workspace(int64_t T);

/// Causal scaled-dot-product attention that keeps no [T, T] matrix between
/// forward and backward (flash-attention semantics: Dao et al., "FlashAttention",
/// NeurIPS 2022; FlashAttention-2, 2023): per (batch, head), with s = 1/sqrt(D),
///   S = s q k^T (S_ij = -inf for j > i),
///   lse_i = log sum_{j<=i} exp(S_ij)   (natural log),
///   out = exp(S - lse) v.
/// q, k, v, out: [B, H, T, D] f32; lse: [B, H, T] f32 output, kept for
/// zrt_attention_backward. workspace: zrt_attention_workspace(T) floats of
/// scratch (the CPU computes one slice's scores in it; NULL makes the CPU
/// allocate it, a counted heap allocation; the CUDA backend runs fused
/// tiled kernels and ignores it). Same values as zrt_causal_attention up to
/// f32 rounding. Source: PyTorch F.scaled_dot_product_attention(is_causal=True).
/// Errors: ZRT_ERR_INVALID_ARGUMENT (non-positive T or D, negative B/H, NULL
/// pointers, sizes above INT32_MAX), ZRT_ERR_OUT_OF_MEMORY (only without a
/// workspace).
int zrt_attention_forward(const float *q, const float *k, const float *v,
                          float *out, float *lse, float *workspace, int64_t B,
                          int64_t H, int64_t T, int64_t D);

/// Backward of zrt_attention_forward from its out and lse (the probabilities
/// are recomputed, P = exp(S - lse)): with delta_i = sum_d dout_id out_id,
///   dv = P^T dout, dP = dout v^T, dS = P * (dP - delta),
///   dq = s dS k, dk = s dS^T q.
/// dout, q, k, v, out: [B, H, T, D]; lse: [B, H, T]; dq, dk, dv: [B, H, T, D]
/// OVERWRITTEN. workspace as zrt_attention_forward.
/// Errors: as zrt_attention_forward.
int zrt_attention_backward(const float *dout, const float *q, const float *k,
                           const float *v, const float *out, const float *lse,
                           float *dq, float *dk, float *dv, float *workspace,
                           int64_t B, int64_t H, int64_t T, int64_t D);

/// zrt_attention_forward on the packed projection of a transformer block,
/// without the head split and merge copies. qkv [B, T, 3 C] with C = H D:
/// row (b, t) holds q, then k, then v, each the H heads of D side by side
/// (nanoGPT: `q, k, v = c_attn(x).split(C, dim=2)`, each
/// `.view(B, T, H, D).transpose(1, 2)`); out [B, T, C], the heads side by
/// side again (nanoGPT: `y.transpose(1, 2).contiguous().view(B, T, C)`);
/// lse [B, H, T] f32 as zrt_attention_forward. Same numbers as
/// zrt_attention_forward on the split, transposed copies and the merged
/// result, bit for bit on the CPU. workspace: zrt_attention_workspace(T)
/// floats (NULL: the CPU allocates, counted by zrt_heap_allocations).
/// Source: FlashAttention's qkv-packed interface (flash_attn_qkvpacked_func).
/// Errors: as zrt_attention_forward (T > 0, D > 0, B, H >= 0, sizes within
/// INT32_MAX, non-NULL pointers).
int zrt_attention_forward_packed(const float *qkv, float *out, float *lse,
                                 float *workspace, int64_t B, int64_t T,
                                 int64_t H, int64_t D);

/// Backward of zrt_attention_forward_packed: dout, out [B, T, C]; qkv
/// [B, T, 3 C]; lse [B, H, T]; dqkv [B, T, 3 C] OVERWRITTEN with dq, dk, dv
/// in qkv's layout (the gradient of the packed projection, with no concat).
/// workspace as zrt_attention_forward_packed. Errors: as the forward.
int zrt_attention_backward_packed(const float *dout, const float *qkv,
                                  const float *out, const float *lse,
                                  float *dqkv, float *workspace, int64_t B,
                                  int64_t T, int64_t H, int64_t D);

/*===----------------------------------------------------------------------===//
// Embedding and losses
//===----------------------------------------------------------------------===*/

/// Embedding lookup: out[i, :] = table[ids[i], :]. table [V, C], ids [N]
/// int32, out [N, C]. Source: torch.nn.functional.embedding.
/// Errors: ZRT_ERR_OUT_OF_RANGE if any id is outside [0, V) (nothing
/// written); ZRT_ERR_INVALID_ARGUMENT.
int zrt_embedding(const float *table, const int32_t *ids, float *out,
                  int64_t N, int64_t V, int64_t C);

/// Embedding backward: dtable [V, C] is first ZEROED (overwrite contract),
/// then dtable[ids[i], :] += dout[i, :] for every i (repeated ids
/// accumulate). dout [N, C]. Deterministic (parallel over columns).
/// Errors: ZRT_ERR_OUT_OF_RANGE (ids outside [0, V); nothing written),
/// ZRT_ERR_INVALID_ARGUMENT.
int zrt_embedding_backward(const float *dout, const int32_t *ids,
                           float *dtable, int64_t N, int64_t V, int64_t C);

/// Default ignore_index of PyTorch's cross_entropy.
#define ZRT_IGNORE_INDEX_DEFAULT (-100)

/// Mean cross-entropy of logits [N, V] against targets [N] (int32):
///   loss = (1/M) sum_{i: t_i != ignore_index} (logsumexp(logits_i) - logits_i[t_i])
/// with M the number of non-ignored rows; *loss is a single f32. Computed
/// max-subtracted, accumulated in double. If M == 0 the loss is NaN (as
/// PyTorch). Pass ZRT_IGNORE_INDEX_DEFAULT (-100) when nothing is ignored.
/// Source: torch.nn.functional.cross_entropy(reduction='mean',
/// ignore_index=...).
/// Errors: ZRT_ERR_OUT_OF_RANGE (a target not in [0, V) and != ignore_index),
/// ZRT_ERR_INVALID_ARGUMENT (N < 0, V < 1, NULL).
int zrt_cross_entropy(const float *logits, const int32_t *targets,
                      float *loss, int64_t N, int64_t V, int32_t ignore_index);

/// Cross-entropy backward (OVERWRITE dlogits [N, V]):
///   dlogits_i = (softmax(logits_i) - onehot(t_i)) * dloss / M,
/// rows with t_i == ignore_index get 0. dloss is the upstream scalar
/// gradient of the mean loss (1.0 for the training loss).
/// Errors: as zrt_cross_entropy.
int zrt_cross_entropy_backward(const float *logits, const int32_t *targets,
                               float dloss, float *dlogits, int64_t N,
                               int64_t V, int32_t ignore_index);

/// Mean squared error over n elements: *loss = (1/n) sum (pred - target)^2
/// (accumulated in double). Source: torch.nn.functional.mse_loss
/// (reduction='mean'). n == 0 gives NaN.
/// Errors: ZRT_ERR_INVALID_ARGUMENT.
int zrt_mse(const float *pred, const float *target, float *loss, int64_t n);

/// MSE backward: dpred = 2 (pred - target) / n * dloss; dtarget = -dpred.
/// Both OVERWRITTEN; either may be NULL.
/// Errors: ZRT_ERR_INVALID_ARGUMENT.
int zrt_mse_backward(const float *pred, const float *target, float dloss,
                     float *dpred, float *dtarget, int64_t n);

/*===----------------------------------------------------------------------===//
// Optimizer and gradient norm
//===----------------------------------------------------------------------===*/

/// One AdamW step on a flat range of n elements, exactly following PyTorch
/// torch.optim.AdamW (single-tensor path, amsgrad=False, maximize=False):
///   g     = grad * grad_scale                       (clip coefficient)
///   p    *= 1 - lr * weight_decay                   (decoupled decay, first)
///   m     = beta1 * m + (1 - beta1) * g
///   v     = beta2 * v + (1 - beta2) * g * g
///   bc1   = 1 - beta1^step,  bc2 = 1 - beta2^step   (step >= 1, 1 = first)
///   p    -= (lr / bc1) * m / (sqrt(v) / sqrt(bc2) + eps)
/// param (f32 master weights), m, v: [n] f32, updated in place. grad: [n]
/// f32, read only. out_f32 ([n] f32) and out_bf16 ([n] bf16, round to
/// nearest even) receive copies of the updated parameter when non-NULL (the
/// working copy used by forward/backward in mixed precision).
/// Hyperparameters are double, like PyTorch's Python floats: scalars derived
/// from them (1 - lr*wd, 1 - beta, lr / bc1, sqrt(bc2)) are computed in
/// double and rounded to f32 where PyTorch hands them to its f32 kernels, so
/// results agree with PyTorch to f32 rounding (e.g. 1 - 0.999 is not
/// 1 - 0.999f). grad_scale is f32 (a tensor value in PyTorch).
/// Errors: ZRT_ERR_INVALID_ARGUMENT (n < 0, step < 1, NULL required pointer).
int zrt_adamw_step(float *param, float *m, float *v, const float *grad,
                   float *out_f32, zrt_bf16 *out_bf16, int64_t n, double lr,
                   double beta1, double beta2, double eps, double weight_decay,
                   float grad_scale, int64_t step);

/// zrt_adamw_step with a bf16 gradient (widened to f32 before scaling).
int zrt_adamw_step_bf16_grad(float *param, float *m, float *v,
                             const zrt_bf16 *grad, float *out_f32,
                             zrt_bf16 *out_bf16, int64_t n, double lr,
                             double beta1, double beta2, double eps,
                             double weight_decay, float grad_scale,
                             int64_t step);

/// zrt_adamw_step with an f16 gradient (widened to f32 before scaling);
/// out_bf16 must be NULL (the f16 parameter is written by
/// zrt_cast_f32_to_f16 from out_f32 or the master weights).
int zrt_adamw_step_f16_grad(float *param, float *m, float *v,
                            const zrt_f16 *grad, float *out_f32,
                            zrt_bf16 *out_bf16, int64_t n, double lr,
                            double beta1, double beta2, double eps,
                            double weight_decay, float grad_scale,
                            int64_t step);

/// *out = sum_i x[i]^2 over n f32 elements (accumulated in double, returned
/// as f32). Per-rank partial of the global gradient norm; all-reduce (sum)
/// the partials, then total_norm = sqrt(sum).
/// Errors: ZRT_ERR_INVALID_ARGUMENT.
int zrt_sum_squares(const float *x, int64_t n, float *out);

/// zrt_sum_squares for bf16 input.
int zrt_sum_squares_bf16(const zrt_bf16 *x, int64_t n, float *out);

/// zrt_sum_squares for f16 input (an Inf or NaN element makes *out
/// non-finite: the loss scaler's overflow check).
int zrt_sum_squares_f16(const zrt_f16 *x, int64_t n, float *out);

/// Gradient clipping coefficient as torch.nn.utils.clip_grad_norm_:
///   min(1, max_norm / (total_norm + 1e-6)).
/// Pass the result as grad_scale to zrt_adamw_step.
float zrt_clip_coef(float total_norm, float max_norm);

/*===----------------------------------------------------------------------===//
// Random initialization (counter-based, shard-invariant)
//===----------------------------------------------------------------------===*/

/// Fills ptr[i], i in [0, n), with element (offset + i) of the normal stream
/// N(mean, std^2) selected by seed. Element e of the stream depends only on
/// (seed, e): Philox4x32-10 (Salmon et al., "Parallel Random Numbers: As
/// Easy as 1, 2, 3", SC'11) keyed by seed with counter e, then Box-Muller in
/// double. Hence initializing a flat tensor in shards (offset = shard start)
/// gives bit-identical values to initializing it whole.
/// Errors: ZRT_ERR_INVALID_ARGUMENT (n < 0, offset < 0, std < 0, NULL).
int zrt_init_normal(float *ptr, int64_t n, float mean, float std,
                    uint64_t seed, int64_t offset);

/// As zrt_init_normal, uniform on [low, high) (independent stream from the
/// normal one for the same seed).
/// Errors: ZRT_ERR_INVALID_ARGUMENT (also high < low).
int zrt_init_uniform(float *ptr, int64_t n, float low, float high,
                     uint64_t seed, int64_t offset);

/*===----------------------------------------------------------------------===//
// Process group and collectives (MPI)
//===----------------------------------------------------------------------===*/

/// Initializes MPI (MPI_Init_thread, MPI_THREAD_FUNNELED) unless it already
/// is, and duplicates MPI_COMM_WORLD into the runtime's communicator (errors
/// return, not abort). Works without mpirun (Open MPI singleton: world size
/// 1). argc/argv may be NULL. A second call is a no-op.
/// Errors: ZRT_ERR_MPI; ZRT_ERR_NOT_INITIALIZED if called after
/// zrt_finalize (MPI cannot be re-initialized).
int zrt_init(int *argc, char ***argv);

/// Frees the runtime communicator and finalizes MPI if zrt_init initialized
/// it. Outstanding requests must have been waited. No-op if not initialized.
int zrt_finalize(void);

/// Rank of this process in the runtime communicator; -1 before zrt_init.
int zrt_rank(void);

/// Number of ranks N in the runtime communicator; -1 before zrt_init.
int zrt_world_size(void);

/// MPI_Barrier on the runtime communicator. Errors: ZRT_ERR_NOT_INITIALIZED,
/// ZRT_ERR_MPI.
int zrt_barrier(void);

/// Element type of collective buffers.
enum zrt_dtype {
  ZRT_F32 = 0,  ///< float, 4 bytes.
  ZRT_BF16 = 1, ///< zrt_bf16 (uint16_t), 2 bytes.
  ZRT_F16 = 2,  ///< zrt_f16 (uint16_t, IEEE binary16), 2 bytes; reduced
                ///< in f32 like bf16.
  ZRT_I32 = 3,  ///< int32_t, 4 bytes: model inputs only (class targets,
                ///< ids; zrt_input_desc), never a state or a kernel dtype.
  ZRT_I64 = 4,  ///< int64_t, 8 bytes: model inputs only, like ZRT_I32.
};

/// Reduction operator of reduce_scatter / all_reduce.
enum zrt_reduce_op {
  ZRT_SUM = 0, ///< Elementwise sum.
  ZRT_AVG = 1, ///< Sum, then multiply by 1/N in f32 (NCCL ncclAvg).
  ZRT_MAX = 2, ///< Elementwise maximum.
};

/// Opaque handle of an in-flight nonblocking collective.
typedef struct zrt_request_s *zrt_request;

/// All-gather: every rank contributes `send` ([n] elements of dtype); recv
/// ([n * N] elements) receives rank r's shard at element offset r * n, on
/// every rank. In place if send == recv + rank * n.
/// bf16 is moved as raw 16-bit data (no arithmetic). Blocking (start+wait).
/// Bytes counted: n * (N - 1) * sizeof(dtype).
/// Errors: ZRT_ERR_NOT_INITIALIZED, ZRT_ERR_INVALID_ARGUMENT, ZRT_ERR_MPI.
int zrt_all_gather(const void *send, void *recv, int64_t n, int dtype);

/// Reduce-scatter: send holds [n * N] elements on every rank; recv ([n])
/// on rank r receives op over ranks of send[r*n .. r*n + n). op: ZRT_SUM,
/// ZRT_AVG, ZRT_MAX. bf16: inputs are widened to f32, reduced in f32 by MPI,
/// and rounded to bf16 once at the end (RNE). Blocking (start+wait).
/// Bytes counted: n * (N - 1) * sizeof(dtype).
/// Errors: ZRT_ERR_NOT_INITIALIZED, ZRT_ERR_INVALID_ARGUMENT, ZRT_ERR_MPI,
/// ZRT_ERR_OUT_OF_MEMORY.
int zrt_reduce_scatter(const void *send, void *recv, int64_t n, int dtype,
                       int op);

/// All-reduce over [n] elements: recv = op over ranks of send (send ==
/// recv is in place). bf16 reduced in f32 as zrt_reduce_scatter.
/// Blocking (start+wait). Bytes counted: 2 * n * (N - 1) / N * sizeof(dtype)
/// (rounded down).
/// Errors: as zrt_reduce_scatter.
int zrt_all_reduce(const void *send, void *recv, int64_t n, int dtype,
                   int op);

/// Broadcast [n] elements of buf from rank `root` to all ranks (in place).
/// Blocking (start+wait). Bytes counted: n * sizeof(dtype) when N > 1
/// (NCCL convention busBw = algBw for broadcast), 0 when N == 1.
/// Errors: ZRT_ERR_NOT_INITIALIZED, ZRT_ERR_INVALID_ARGUMENT (also root out
/// of [0, N)), ZRT_ERR_MPI.
int zrt_broadcast(void *buf, int64_t n, int dtype, int root);

/// Nonblocking forms (MPI-3 MPI_Iallgather, MPI_Ireduce_scatter_block,
/// MPI_Iallreduce, MPI_Ibcast). Same arguments and byte counting as the
/// blocking forms (bytes are counted at start); *req receives a handle that
/// must be passed to zrt_wait exactly once. Buffers must not be touched
/// until zrt_wait returns; the result (including ZRT_AVG scaling and bf16
/// rounding) is in recv only after zrt_wait. On failure *req is NULL.
int zrt_all_gather_start(const void *send, void *recv, int64_t n, int dtype,
                         zrt_request *req);
/// Nonblocking zrt_reduce_scatter; see zrt_all_gather_start.
int zrt_reduce_scatter_start(const void *send, void *recv, int64_t n,
                             int dtype, int op, zrt_request *req);
/// Nonblocking zrt_all_reduce; see zrt_all_gather_start.
int zrt_all_reduce_start(const void *send, void *recv, int64_t n, int dtype,
                         int op, zrt_request *req);
/// Nonblocking zrt_broadcast; see zrt_all_gather_start.
int zrt_broadcast_start(void *buf, int64_t n, int dtype, int root,
                        zrt_request *req);

/// Completes a nonblocking collective (MPI_Wait), applies its epilogue
/// (ZRT_AVG scaling, bf16 rounding) and frees the handle. The time spent
/// inside zrt_wait is added to zrt_comm_wait_seconds(). req == NULL is a
/// no-op returning ZRT_OK.
/// Errors: ZRT_ERR_MPI (the handle is still freed).
int zrt_wait(zrt_request req);

/// Collective kinds for the traffic counters.
enum zrt_coll_kind {
  ZRT_COLL_ALL_GATHER = 0,     ///< zrt_all_gather[_start].
  ZRT_COLL_REDUCE_SCATTER = 1, ///< zrt_reduce_scatter[_start].
  ZRT_COLL_ALL_REDUCE = 2,     ///< zrt_all_reduce[_start].
  ZRT_COLL_BROADCAST = 3,      ///< zrt_broadcast[_start].
  ZRT_COLL_NUM_KINDS = 4,      ///< Number of kinds (not a kind).
};

/// Bytes SENT by this rank for collectives of `kind` since start or the last
/// zrt_comm_reset, using ring-algorithm cost with total size S bytes and N
/// ranks: all-gather and reduce-scatter S (N-1)/N, all-reduce 2 S (N-1)/N,
/// broadcast S. S is the gathered output size (all-gather), the input size
/// (reduce-scatter) or the buffer size (all-reduce, broadcast), in the
/// LOGICAL dtype (bf16 = 2 bytes, even though the CPU backend reduces bf16
/// in f32 internally). Source: NCCL tests "busBw" convention
/// (nccl-tests/doc/PERFORMANCE.md). Returns -1 for an invalid kind.
int64_t zrt_comm_bytes(int kind);

/// Number of collectives of `kind` started since the last reset; -1 for an
/// invalid kind.
int64_t zrt_comm_calls(int kind);

/*===----------------------------------------------------------------------===//
// The rank mesh: data x tensor
//===----------------------------------------------------------------------===*/

/// Axes of the rank mesh. The N ranks form an N_d x M grid, rank
/// r = d * M + t (d in [0, N_d) the data-parallel index, t in [0, M) the
/// tensor-parallel index): the ranks of one tensor group (same d) are
/// consecutive. Until zrt_mesh_init the mesh is N x 1 (the data axis is the
/// whole world, the tensor axis each rank alone).
enum zrt_axis {
  ZRT_AXIS_DATA = 0,   ///< The N_d ranks with the same t (ZeRO's ranks).
  ZRT_AXIS_TENSOR = 1, ///< The M ranks with the same d (Megatron's group).
  ZRT_NUM_AXES = 2,    ///< Number of axes (not an axis).
};

/// Makes the mesh N_d x M with M = `tensor_size` (N_d = N / M): splits the
/// runtime communicator into one communicator per axis (CPU:
/// MPI_Comm_split; CUDA: ncclCommSplit of the world's NCCL communicator,
/// NCCL 2.18 or later, for each axis of more than one rank).
/// Collective over all ranks; call after zrt_init with no collective in
/// flight. A second call replaces the mesh. The collectives without an
/// axis (zrt_all_gather, ..._start) run on the data axis; zrt_rank,
/// zrt_world_size, zrt_barrier and zrt_broadcast stay on the whole world.
/// Errors: ZRT_ERR_NOT_INITIALIZED; ZRT_ERR_INVALID_ARGUMENT (tensor_size
/// < 1, N not a multiple of tensor_size: the message has both, or a
/// collective in flight); ZRT_ERR_MPI.
int zrt_mesh_init(int tensor_size);

/// This rank's index along `axis` (d or t); -1 before zrt_init or for a bad
/// axis.
int zrt_axis_rank(int axis);

/// Number of ranks along `axis` (N_d or M); -1 before zrt_init or for a bad
/// axis.
int zrt_axis_size(int axis);

/// zrt_all_gather over the ranks of `axis` (N = zrt_axis_size(axis); recv
/// holds the axis ranks' shards in axis-rank order). Bytes are counted on
/// that axis. Errors: as zrt_all_gather, and ZRT_ERR_INVALID_ARGUMENT for a
/// bad axis.
int zrt_all_gather_axis(int axis, const void *send, void *recv, int64_t n,
                        int dtype);
/// zrt_reduce_scatter over the ranks of `axis` (ZRT_AVG divides by the
/// axis size). Errors: as zrt_all_gather_axis.
int zrt_reduce_scatter_axis(int axis, const void *send, void *recv, int64_t n,
                            int dtype, int op);
/// zrt_all_reduce over the ranks of `axis` (ZRT_AVG divides by the axis
/// size). Errors: as zrt_all_gather_axis.
int zrt_all_reduce_axis(int axis, const void *send, void *recv, int64_t n,
                        int dtype, int op);
/// Nonblocking zrt_all_gather_axis; see zrt_all_gather_start.
int zrt_all_gather_axis_start(int axis, const void *send, void *recv,
                              int64_t n, int dtype, zrt_request *req);
/// Nonblocking zrt_reduce_scatter_axis; see zrt_all_gather_start.
int zrt_reduce_scatter_axis_start(int axis, const void *send, void *recv,
                                  int64_t n, int dtype, int op,
                                  zrt_request *req);
/// Nonblocking zrt_all_reduce_axis; see zrt_all_gather_start.
int zrt_all_reduce_axis_start(int axis, const void *send, void *recv,
                              int64_t n, int dtype, int op, zrt_request *req);

/// zrt_comm_bytes of the collectives on `axis` only, with that axis's N in
/// the ring formula (zrt_comm_bytes is the sum over the axes; broadcast is
/// counted on the data axis). -1 for a bad axis or kind.
int64_t zrt_comm_axis_bytes(int axis, int kind);

/// zrt_comm_calls of the collectives on `axis` only; -1 for a bad axis or
/// kind.
int64_t zrt_comm_axis_calls(int axis, int kind);

/// Seconds this rank spent blocked inside zrt_wait (blocking collectives
/// included), i.e. exposed communication time, since the last reset.
double zrt_comm_wait_seconds(void);

/// Drives the progress of every started, not yet waited collective
/// (MPI_Test on each; MPI implementations without an asynchronous progress
/// thread, such as Open MPI's default on CPU, move a nonblocking collective
/// forward only inside MPI calls). Compiled steps call it after each
/// compute op while a collective is in flight, so that a prefetched
/// all-gather or a sunk reduce-scatter runs behind the compute instead of
/// inside zrt_wait. Never blocks; completion is still observed by
/// zrt_wait. Returns ZRT_OK (also before zrt_init) or ZRT_ERR_MPI.
int zrt_comm_progress(void);

/// Resets byte counters, call counters and wait time to 0.
void zrt_comm_reset(void);

/*===----------------------------------------------------------------------===//
// Checkpoint offload to host memory (P_a+cpu)
//===----------------------------------------------------------------------===*/

/// ZeRO-R's P_a+cpu (zero-offload-checkpoints): the checkpoint slices of
/// partitioned activation checkpointing live in one pinned host block
/// between the forward and the backward. On the CUDA backend the block is
/// cudaMallocHost memory and the copies run on a copy stream of their own,
/// ordered against the compute stream with events (a start makes the copy
/// stream wait for the compute stream's work queued so far; a wait makes the
/// compute stream wait for the copy; the host never blocks). On the CPU
/// backend the arenas are host memory already: the block is ordinary
/// memory and a copy is a memcpy done when it starts.

/// Opaque handle of one copy in flight (each is waited exactly once).
typedef struct zrt_offload_s *zrt_offload;

/// Allocates the pinned host block of `bytes` bytes (64-byte aligned,
/// zero-filled), once, in init(). Errors: ZRT_ERR_INVALID_ARGUMENT (bytes
/// < 0, or a block exists), ZRT_ERR_OUT_OF_MEMORY.
int zrt_offload_host_create(int64_t bytes);

/// Frees the block (after the copies in flight finished); no-op without one.
void zrt_offload_host_destroy(void);

/// Base address of the block; NULL without one.
void *zrt_offload_host_base(void);

/// Bytes of the block (0 without one): what the driver reports as
/// `host_slot_bytes`.
int64_t zrt_offload_host_bytes(void);

/// Starts copying `bytes` bytes of device memory `device` to `host` (inside
/// the block), after the compute work queued so far; *out is the copy.
/// Errors: ZRT_ERR_INVALID_ARGUMENT (NULL pointers, bytes < 0, `host`
/// outside the block).
int zrt_offload_start(const void *device, void *host, int64_t bytes,
                      zrt_offload *out);

/// Orders the compute stream after the copy (the device memory may then be
/// reused) and releases the handle. Errors: ZRT_ERR_INVALID_ARGUMENT.
int zrt_offload_wait(zrt_offload op);

/// Starts copying `bytes` bytes of `host` (inside the block) to device
/// memory `device`, after the compute work queued so far and the copies
/// started before; *out is the copy. Errors: as zrt_offload_start.
int zrt_fetch_start(const void *host, void *device, int64_t bytes,
                    zrt_offload *out);

/// Orders the compute stream after the copy (the device memory then holds
/// the bytes) and releases the handle. Errors: ZRT_ERR_INVALID_ARGUMENT.
int zrt_fetch_wait(zrt_offload op);

/*===----------------------------------------------------------------------===//
// Memory arenas
//===----------------------------------------------------------------------===*/

/// enum zrt_mem_kind (what an arena holds) is in zrt/abi.h.

/// Opaque arena handle.
typedef struct zrt_arena_s *zrt_arena;

/// Allocates one block of `bytes` bytes, 64-byte aligned and zero-filled,
/// tagged with `kind` (enum zrt_mem_kind), and adds `bytes` to that kind's
/// live counter (peak counters updated). bytes == 0 is allowed.
/// Errors: ZRT_ERR_INVALID_ARGUMENT (bytes < 0, bad kind, NULL out),
/// ZRT_ERR_OUT_OF_MEMORY.
int zrt_arena_create(int64_t bytes, int kind, zrt_arena *out);

/// Frees the block and subtracts its bytes from its kind's live counter.
/// NULL is a no-op.
void zrt_arena_destroy(zrt_arena arena);

/// Base address of the block (64-byte aligned); the compiler places tensors
/// at byte offsets from it. NULL for a NULL arena.
void *zrt_arena_base(zrt_arena arena);

/// Size in bytes given at creation; -1 for a NULL arena.
int64_t zrt_arena_size(zrt_arena arena);

/// Optional bump allocation inside the arena: rounds the current bump
/// offset up to `align` bytes (power of two; 0 means 64), returns it in
/// *offset and advances the bump offset by `bytes`.
/// Errors: ZRT_ERR_INVALID_ARGUMENT, ZRT_ERR_OUT_OF_MEMORY (does not fit).
int zrt_arena_alloc(zrt_arena arena, int64_t bytes, int64_t align,
                    int64_t *offset);

/// Current bump offset in bytes (0 after create/reset); -1 for NULL.
int64_t zrt_arena_used(zrt_arena arena);

/// Resets the bump offset to 0 (memory contents unchanged).
void zrt_arena_reset(zrt_arena arena);

/// Live bytes in arenas of `kind` on this process; -1 for an invalid kind.
int64_t zrt_memory_bytes(int kind);

/// Peak live bytes of `kind` since start or zrt_memory_reset_peak; -1 for
/// an invalid kind.
int64_t zrt_memory_peak_bytes(int kind);

/// Live bytes over all kinds on this process.
int64_t zrt_memory_total_bytes(void);

/// Peak of the live total over all kinds (peak of the sum, not the sum of
/// per-kind peaks).
int64_t zrt_memory_peak_total_bytes(void);

/// Sets every peak counter to the current live value.
void zrt_memory_reset_peak(void);

/// Free and total bytes of the memory the backend's arenas come from: the
/// device's (cudaMemGetInfo) on the CUDA backend, the machine's available
/// and physical RAM on the CPU backend (MemAvailable of /proc/meminfo, else
/// sysconf _SC_AVPHYS_PAGES; _SC_PHYS_PAGES; times the page size). The driver compares the compiled plan's
/// arena bytes with *free_bytes before init() allocates anything, and
/// refuses to start when they do not fit.
/// Errors: ZRT_ERR_INVALID_ARGUMENT (NULL output, or the query failed).
int zrt_device_memory_info(int64_t *free_bytes, int64_t *total_bytes);

/// Heap allocations the runtime has made since the process started. Every
/// allocation of zrt_* code goes through one counting function: arenas,
/// the pool of collective requests (allocated in zrt_init, grown only when
/// more requests are outstanding at once than it holds), bf16 staging
/// buffers of reductions (grow-only, per request), and kernels called with
/// a NULL workspace. MPI's and BLAS's own allocations are not counted. A
/// compiled step allocates nothing after init: the driver reports the
/// difference across each step as "allocations" in its step metrics.
int64_t zrt_heap_allocations(void);

/*===----------------------------------------------------------------------===//
// Data loading
//===----------------------------------------------------------------------===*/

/// Opaque token dataset: one stream of tokens, the concatenation of its
/// files (shards) in the order given, each mapped read-only with mmap and
/// never read whole. Opening reads only the 1024-byte header of a .bin
/// file; a window of T + 1 tokens is converted to int32 (and its ids
/// checked, zrt_dataset_set_vocab_limit) when a batch draws it, so memory
/// and start-up do not grow with the data. Windows may span two or more
/// shards (they read the concatenated stream, as nanoGPT's and llm.c's
/// loaders read one file) but never cross from the train split into the
/// validation split. The mapped pages a rank has read are dropped from its
/// resident set (madvise MADV_DONTNEED; the page cache keeps them) once
/// they may reach 64 MiB (counting 2 MiB per aligned block of a file a read
/// touches: the kernel may map a whole page-cache folio on one fault). The files must not be truncated while open (a mapped
/// page past the end would raise SIGBUS). Not thread-safe: one thread
/// samples a dataset at a time.
typedef struct zrt_dataset_s *zrt_dataset;

/// Default validation fraction (last 10% of the tokens).
#define ZRT_DEFAULT_VAL_FRACTION 0.1

/// Data split selector.
enum zrt_split {
  ZRT_SPLIT_TRAIN = 0, ///< First L - floor(L * val_fraction) tokens, or all
                       ///< tokens of the train files when validation files
                       ///< are given.
  ZRT_SPLIT_VAL = 1,   ///< Last floor(L * val_fraction) tokens, or all
                       ///< tokens of the validation files.
};

/// Magic number of llm.c token files (header[0]).
#define ZRT_LLMC_MAGIC 20240520

/// Opens a dataset of `num_paths` files (paths[0..num_paths), num_paths >=
/// 1) read as one stream. A file whose name ends in ".bin" is an llm.c /
/// nanoGPT token file: a header of 256 little-endian int32 (header[0] =
/// 20240520, header[1] = 1 (version), header[2] = token count n, at most
/// 2^31 - 1), then n uint16 tokens (trailing bytes are ignored; source:
/// llm.c dev/data/data_common.py write_datafile). Any other file is raw
/// byte-level text: every byte one token id in [0, 255] (UTF-8 is not
/// decoded). All files of a dataset, validation files included, are of
/// one kind. With num_val_paths = 0 the last floor(L * val_fraction) of
/// the stream's L tokens are the validation split (val_fraction in [0,
/// 1)); with validation files (val_fraction must then be 0) the train
/// split is all of `paths` and the validation split all of `val_paths`.
/// Errors (each naming the file): ZRT_ERR_IO (missing, unreadable, not a
/// regular file, empty, cannot be mapped), ZRT_ERR_FORMAT (a .bin file
/// shorter than its header, with bad magic, an unsupported version, a
/// count <= 0, or fewer tokens than its header says; .bin and text files
/// mixed), ZRT_ERR_INVALID_ARGUMENT (no path, NULL, bad fraction),
/// ZRT_ERR_OUT_OF_MEMORY.
int zrt_dataset_open_shards(const char *const *paths, int num_paths,
                            const char *const *val_paths, int num_val_paths,
                            double val_fraction, zrt_dataset *out);

/// Opens one file as raw byte-level text, whatever its name (see
/// zrt_dataset_open_shards), and splits off the last
/// floor(L * val_fraction) tokens as validation.
int zrt_dataset_open_text(const char *path, double val_fraction,
                          zrt_dataset *out);

/// Opens one file as an llm.c / nanoGPT .bin token file, whatever its name
/// (see zrt_dataset_open_shards). Split as zrt_dataset_open_text.
int zrt_dataset_open_bin(const char *path, double val_fraction,
                         zrt_dataset *out);

/// Opens one file, as .bin if its name ends in ".bin", else as text.
int zrt_dataset_open(const char *path, double val_fraction, zrt_dataset *out);

/// Unmaps the files and frees the dataset. NULL is a no-op.
void zrt_dataset_close(zrt_dataset ds);

/// Number of tokens in `split`; -1 for a NULL dataset or a bad split.
int64_t zrt_dataset_num_tokens(zrt_dataset ds, int split);

/// The id range of the data's format: 256 for text, 65536 for .bin files
/// (uint16 ids; which of them occur is known only window by window, see
/// zrt_dataset_set_vocab_limit); -1 for NULL.
int64_t zrt_dataset_vocab_size(zrt_dataset ds);

/// 1 for byte-level text, 0 for .bin token files, -1 for NULL.
int zrt_dataset_is_text(zrt_dataset ds);

/// Number of files (train and validation) of the dataset; -1 for NULL.
int64_t zrt_dataset_num_files(zrt_dataset ds);

/// From now on every window drawn (zrt_dataset_batch, _sequences) checks
/// its token ids against `vocab`: an id >= vocab fails the call with
/// ZRT_ERR_OUT_OF_RANGE and the message "'<file>': token id <id> at token
/// <i> of the file (byte offset <o>) is outside the vocabulary of <vocab>"
/// (the output rows are then partly written). vocab = 0 turns the check
/// off (the default). Errors: ZRT_ERR_INVALID_ARGUMENT (NULL, vocab < 0).
int zrt_dataset_set_vocab_limit(zrt_dataset ds, int64_t vocab);

/// Samples this rank's part of global batch `step`. The global batch is B
/// sequences of T+1 consecutive tokens from `split` (L tokens); sequence b
/// starts at
///   shuffle != 0: Philox(seed; step, b, split) mod (L - T)  (random windows)
///   shuffle == 0: ((step * B + b) mod floor((L - 1) / T)) * T (sequential
///                 non-overlapping windows; seed ignored),
/// and gives inputs[b, :] = tok[s .. s+T), targets[b, :] = tok[s+1 .. s+T].
/// The global batch depends only on (data, split, B, T, seed, step,
/// shuffle), never on world_size. Rank r receives sequences
/// [r*B/N, (r+1)*B/N) in inputs and targets, each [B/N, T] int32.
/// Errors: ZRT_ERR_INVALID_ARGUMENT (B < 1, T < 1, step < 0, world_size < 1,
/// B % world_size != 0, rank outside [0, world_size), bad split, NULL),
/// ZRT_ERR_OUT_OF_RANGE (T + 1 > L: the split is shorter than one sequence;
/// a token id at or above the vocabulary limit).
int zrt_dataset_batch(zrt_dataset ds, int split, int64_t B, int64_t T,
                      uint64_t seed, int64_t step, int shuffle, int rank,
                      int world_size, int32_t *inputs, int32_t *targets);

/// Sequences [first, first + count) of the shuffled sample stream of
/// `split`: sequence s is row (s mod stream_batch) of global batch
/// (s / stream_batch) of zrt_dataset_batch(..., B = stream_batch, seed,
/// shuffle = 1), i.e. it starts at
///   Philox(seed; s / stream_batch, s mod stream_batch, split) mod (L - T).
/// The training driver reads its batches as consecutive runs of this
/// stream (stream_batch = the global batch of the run that started it), so
/// a resumed run continues at the checkpoint's sample position whatever its
/// batch size, accumulation or world size. inputs and targets are
/// [count, T] int32.
/// Errors: ZRT_ERR_INVALID_ARGUMENT (T < 1, stream_batch < 1, first < 0,
/// count < 0, first + count overflowing, bad split, NULL),
/// ZRT_ERR_OUT_OF_RANGE (T + 1 > L; a token id at or above the vocabulary
/// limit).
int zrt_dataset_sequences(zrt_dataset ds, int split, int64_t T, uint64_t seed,
                          int64_t stream_batch, int64_t first, int64_t count,
                          int32_t *inputs, int32_t *targets);

/*===----------------------------------------------------------------------===//
// Lowering support (runtime/src/cpu/lowering_support.cpp)
//
// Functions the generated code of convert-train-to-emitc calls where the
// kernels above do not match one `train` / `zero` op: dtype-generic and
// strided copies, padded cross-entropy, layer-norm statistics, bf16
// accumulation, clipping, sharded AdamW and parameter initialization.
// `dtype` arguments are enum zrt_dtype (ZRT_F32 or ZRT_BF16); all return
// ZRT_ERR_INVALID_ARGUMENT for negative sizes, NULL pointers with a nonzero
// size, or a bad dtype.
//===----------------------------------------------------------------------===*/

/// Largest tensor rank zrt_permute accepts.
#define ZRT_MAX_RANK 8

/// The host/device boundary of the generated code. Arena memory (every
/// zrt_arena_base and what lies in it) belongs to the backend's device: the
/// generated code never reads or writes it from the host, but moves host
/// values in (token ids, targets, the optimizer's lr / step / grad_scale)
/// and results out (loss, gradient norm, logits) through these two.
///
/// zrt_copy_to_device copies `bytes` BYTES from host memory `src` into
/// arena (device) memory `dst`; zrt_copy_to_host copies `bytes` BYTES from
/// arena (device) memory `src` into host memory `dst`. The regions must not
/// overlap. The CPU backend, whose arenas are host memory, memcpy's; a
/// device backend (the CUDA backend of issue 8) cudaMemcpy's, synchronously:
/// `dst` holds the bytes when the call returns. Returns
/// ZRT_ERR_INVALID_ARGUMENT for bytes < 0 or a NULL pointer with bytes > 0;
/// bytes == 0 does nothing.
int zrt_copy_to_device(void *dst, const void *src, int64_t bytes);
/// See zrt_copy_to_device.
int zrt_copy_to_host(void *dst, const void *src, int64_t bytes);

/// dst[i] = src[i] for i in [0, n) elements of `dtype` (memmove semantics).
int zrt_copy_any(const void *src, void *dst, int64_t n, int dtype);

/// Copies a [rows, cols] block between row-major matrices with leading
/// dimensions (row strides, in elements) src_ld and dst_ld >= cols:
/// dst[r * dst_ld + c] = src[r * src_ld + c]. The strided copy behind
/// train.split / train.concat along one dimension. Regions must not overlap.
int zrt_copy_2d(const void *src, int64_t src_ld, void *dst, int64_t dst_ld,
                int64_t rows, int64_t cols, int dtype);

/// train.broadcast: out [lead, n] receives `lead` copies of in [n].
int zrt_broadcast_leading(const void *in, void *out, int64_t lead, int64_t n,
                          int dtype);

/// General axis permutation (torch permute(...).contiguous()): in has
/// `rank` dims `shape`; out has shape[perm[0]], ..., shape[perm[rank-1]] and
/// out[i0, ..., i_{rank-1}] = in[j] with j[perm[k]] = i_k. rank <= ZRT_MAX_RANK;
/// perm must be a permutation of [0, rank); in != out.
int zrt_permute(const void *in, void *out, int rank, const int64_t *shape,
                const int64_t *perm, int dtype);

/// Mean cross-entropy of logits [N, V] (row stride V) against targets [N]
/// in [0, num_classes), over the first num_classes columns only (the others
/// are vocabulary padding, llm.c semantics); num_classes == V is
/// zrt_cross_entropy without ignore_index. Accumulated in double.
/// Errors: ZRT_ERR_OUT_OF_RANGE (a target outside [0, num_classes)),
/// ZRT_ERR_INVALID_ARGUMENT (also num_classes outside [1, V]).
int zrt_cross_entropy_padded(const float *logits, const int32_t *targets,
                             float *loss, int64_t N, int64_t V,
                             int64_t num_classes);

/// Backward of zrt_cross_entropy_padded (OVERWRITE dlogits [N, V]):
/// dlogits[n, j] = *dloss * (softmax_j(logits[n, :num_classes]) -
/// onehot(targets[n])_j) / N for j < num_classes, 0 for the padding columns.
/// dloss points at the upstream scalar gradient. Errors: as the forward.
int zrt_cross_entropy_padded_backward(const float *logits,
                                      const int32_t *targets,
                                      const float *dloss, float *dlogits,
                                      int64_t N, int64_t V,
                                      int64_t num_classes);

/// zrt_cross_entropy_padded and its backward in one pass over the logits,
/// the gradient written over them (llm.c's fused classifier): *loss = the
/// mean cross-entropy of logits [N, V] (row stride V) against targets,
/// then logits[n, j] = dloss * (softmax_j - onehot(targets[n])_j) / N for
/// j < num_classes and 0 for the padding columns. Bit for bit what
/// zrt_cross_entropy_padded followed by zrt_cross_entropy_padded_backward
/// (with *dloss = dloss, dlogits = logits) computes, on either backend,
/// without the second read of the logits or a separate [N, V] gradient
/// buffer. dloss is the upstream gradient of the loss as a host value (the
/// loss seed). Errors: as zrt_cross_entropy_padded (nothing is written on
/// an error found before the pass: bad sizes, NULL pointers, a target out
/// of range on the CPU).
int zrt_cross_entropy_padded_fused(float *logits, const int32_t *targets,
                                   float *loss, float dloss, int64_t N,
                                   int64_t V, int64_t num_classes);

/// Mean [N] and 1/sqrt(var + eps) [N] of the rows of x [N, C], with exactly
/// the arithmetic of zrt_layer_norm (for a backward that recomputes them).
int zrt_layer_norm_stats(const float *x, float *mean, float *rstd, int64_t N,
                         int64_t C, float eps);

/// out[i] = zrt_f32_to_bf16(value) for i in [0, n).
int zrt_fill_bf16(zrt_bf16 *out, float value, int64_t n);

/// y[i] = bf16(f32(y[i]) + f32(x[i])): gradient accumulation into bf16
/// state with the sum computed in f32, rounded once (RNE).
int zrt_accumulate_bf16(const zrt_bf16 *x, zrt_bf16 *y, int64_t n);

/// out[i] = zrt_f32_to_f16(value) for i in [0, n).
int zrt_fill_f16(zrt_f16 *out, float value, int64_t n);

/// y[i] = f16(f32(y[i]) + f32(x[i])): gradient accumulation into f16 state
/// with the sum computed in f32, rounded once (RNE; a sum beyond 65504
/// becomes Inf, which the loss scaler then sees).
int zrt_accumulate_f16(const zrt_f16 *x, zrt_f16 *y, int64_t n);

/// train.clip_coef: with s = *grad_scale, *norm = s * sqrt(*sum_squares)
/// and *coef = s * min(1, max_norm / (*norm + 1e-6)) (coef = s when
/// max_norm <= 0), in f32 (torch.nn.utils.clip_grad_norm_ applied to the
/// mean gradient s * g).
int zrt_clip_coef_scaled(const float *sum_squares, const float *grad_scale,
                         float max_norm, float *coef, float *norm);

/// AdamW (zrt_adamw_step, in place on param, m, v) over rank `rank`'s slice
/// [rank * shard, (rank + 1) * shard) of a flat shard group whose member i
/// occupies [offsets[i], offsets[i] + numels[i]) (members in increasing
/// offset order): elements of members with decay[i] != 0 take
/// `weight_decay`, every other element (other members, padding) none.
/// param, m, v: [shard] f32; grad: [shard] of grad_dtype. Bit-identical to
/// zrt_adamw_step on the same elements of the unsharded tensors.
/// Errors: also step < 1.
int zrt_shard_adamw(float *param, float *m, float *v, const void *grad,
                    int grad_dtype, int64_t shard, int rank, int num_members,
                    const int64_t *offsets, const int64_t *numels,
                    const uint8_t *decay, double lr, double beta1,
                    double beta2, double eps, double weight_decay,
                    float grad_scale, int64_t step);

/// zero.local_shard: out [n] = in[rank * n .. (rank + 1) * n).
int zrt_local_shard(const void *in, void *out, int64_t n, int rank,
                    int dtype);

/// Seed of the initialization stream of the parameter called `name` for
/// run seed `seed`: splitmix64(seed ^ fnv1a64(name)), where fnv1a64 is
/// 64-bit FNV-1a over the bytes of the name (offset basis
/// 0xcbf29ce484222325, prime 0x100000001b3) and splitmix64 is Steele et
/// al.'s finalizer (add 0x9E3779B97F4A7C15, then the two xor-shift-multiply
/// rounds). Different names give independent streams; the same (seed,
/// name) gives the same values whatever the layout.
uint64_t zrt_param_seed(uint64_t seed, const char *name);

/// Parameter initializers (the train dialect's #train.init kinds).
enum zrt_init_kind {
  ZRT_INIT_NORMAL = 0, ///< N(0, std^2) from zrt_init_normal's stream.
  ZRT_INIT_ZEROS = 1,  ///< 0.
  ZRT_INIT_ONES = 2,   ///< 1.
};

/// Initializes one parameter's part of a slice of a flat buffer: `data`
/// holds flat elements [slice_begin, slice_begin + slice_n); the parameter
/// occupies flat elements [member_offset, member_offset + member_numel);
/// every flat element in both gets the parameter's own element
/// (flat - member_offset) of `init_kind` (normal: element of the stream
/// `seed`, zrt_init_normal with mean 0), rounded to bf16 when dtype is
/// ZRT_BF16. Other elements are left unchanged. A whole tensor is
/// slice_begin = member_offset = 0, slice_n = member_numel; a rank's shard
/// of a group is slice_begin = rank * shard, so sharded initialization
/// equals whole initialization bit for bit.
int zrt_init_param_slice(void *data, int dtype, int64_t slice_begin,
                         int64_t slice_n, int64_t member_offset,
                         int64_t member_numel, int init_kind, float std,
                         uint64_t seed);

/// Initializes one tensor-cut parameter's part of a slice of a flat buffer
/// (#zero.tensor_split, zero-tensor-parallel), as zrt_init_param_slice
/// with `member_numel` = its local element count outer·rows/parts·inner:
/// the full tensor is viewed as [outer, rows, inner] (rows = the cut
/// dimension, outer / inner the products of the dimensions before / after
/// it), its rows are `blocks` equal blocks (3: packed q/k/v) and this
/// rank keeps slice `part` of `parts` of each block. Local element
/// ((o·blocks + b)·s + j)·inner + i, s = rows / (blocks·parts), gets the
/// full tensor's element (o·rows + b·rows/blocks + part·s + j)·inner + i, so
/// each tensor rank holds exactly its cut of the whole initialization.
/// Backend-neutral (calls zrt_init_param_slice once per contiguous run).
/// Errors: ZRT_ERR_INVALID_ARGUMENT (non-positive sizes, rows not a
/// multiple of blocks·parts, part outside [0, parts), and as
/// zrt_init_param_slice).
int zrt_init_param_cut(void *data, int dtype, int64_t slice_begin,
                       int64_t slice_n, int64_t member_offset, int64_t outer,
                       int64_t rows, int64_t inner, int64_t blocks,
                       int64_t parts, int64_t part, int init_kind, float std,
                       uint64_t seed);

/*===----------------------------------------------------------------------===//
// Native bf16 kernels
//
// zrt_X_bf16 computes exactly zrt_X on the widened (exact) values of its
// bf16 tensors and rounds each bf16 output once (RNE, zrt_f32_to_bf16):
// the same numbers as widening every bf16 tensor to f32 scratch, calling
// zrt_X and rounding back, without the f32 copies (on CUDA a kernel reads
// and writes bf16 directly: a third of the memory traffic). Tensors that are
// f32 in zrt_X's documentation and listed as f32 below (statistics, the
// loss, log-sum-exp) stay f32. Shapes, units (elements), OVERWRITE
// contracts and errors are zrt_X's. This is PyTorch's autocast semantics
// for these ops (bf16 storage, f32 math inside the kernel). The elementwise
// ones (add, gelu, gelu_backward) accept out equal to an input. "The same
// numbers" is bitwise except for NaN payloads when two NaNs meet (as in
// f32, where operand order decides which payload survives).
// The compiled step calls them for every op whose tensors are all bf16.
//===----------------------------------------------------------------------===*/

/// zrt_add on bf16: out = bf16(f32(a) + f32(b)). a, b, out: [n].
int zrt_add_bf16(const zrt_bf16 *a, const zrt_bf16 *b, zrt_bf16 *out,
                 int64_t n);

/// zrt_gelu on bf16 (tanh approximation in f32, one rounding). x, out: [n].
int zrt_gelu_bf16(const zrt_bf16 *x, zrt_bf16 *out, int64_t n);

/// zrt_gelu_backward on bf16: x (forward input), dout, dx: [n].
int zrt_gelu_backward_bf16(const zrt_bf16 *x, const zrt_bf16 *dout,
                           zrt_bf16 *dx, int64_t n);

/// zrt_bias_backward on bf16: dout [rows, N] bf16; dbias [N] bf16 (f32 sum
/// per column, rounded once).
int zrt_bias_backward_bf16(const zrt_bf16 *dout, zrt_bf16 *dbias,
                           int64_t rows, int64_t N);

/// zrt_layer_norm on bf16: x, out [N, C], weight, bias [C] (or NULL) bf16;
/// mean, rstd [N] f32 (or NULL). Statistics in f32 as zrt_layer_norm.
int zrt_layer_norm_bf16(const zrt_bf16 *x, const zrt_bf16 *weight,
                        const zrt_bf16 *bias, zrt_bf16 *out, float *mean,
                        float *rstd, int64_t N, int64_t C, float eps);

/// zrt_layer_norm_stats on bf16 x [N, C]: mean, rstd [N] f32, the same
/// values zrt_layer_norm_bf16 computes.
int zrt_layer_norm_stats_bf16(const zrt_bf16 *x, float *mean, float *rstd,
                              int64_t N, int64_t C, float eps);

/// zrt_layer_norm_backward on bf16: dout, x, dx [N, C] and weight, dweight,
/// dbias [C] bf16 (any output may be NULL); mean, rstd [N] f32.
int zrt_layer_norm_backward_bf16(const zrt_bf16 *dout, const zrt_bf16 *x,
                                 const zrt_bf16 *weight, const float *mean,
                                 const float *rstd, zrt_bf16 *dx,
                                 zrt_bf16 *dweight, zrt_bf16 *dbias,
                                 int64_t N, int64_t C);

/// zrt_add_layer_norm on bf16: a, b, sum, out [N, C], weight, bias [C] (or
/// NULL) bf16; mean, rstd [N] f32 (or NULL). sum = bf16(f32(a) + f32(b))
/// (zrt_add_bf16), and out, mean, rstd are zrt_layer_norm_bf16's on the
/// ROUNDED sum: bit for bit zrt_add_bf16 followed by zrt_layer_norm_bf16.
int zrt_add_layer_norm_bf16(const zrt_bf16 *a, const zrt_bf16 *b,
                            const zrt_bf16 *weight, const zrt_bf16 *bias,
                            zrt_bf16 *sum, zrt_bf16 *out, float *mean,
                            float *rstd, int64_t N, int64_t C, float eps);

/// zrt_layer_norm_backward_add on bf16: dout, x, addend, dx [N, C] and
/// weight, dweight, dbias [C] bf16; mean, rstd [N] f32. dx = bf16(f32(addend)
/// + f32(dx_ln)), dx_ln the bf16 dx of zrt_layer_norm_backward_bf16 (rounded
/// first): bit for bit zrt_layer_norm_backward_bf16 into a temporary, then
/// zrt_add_bf16(addend, temporary, dx, N * C).
int zrt_layer_norm_backward_add_bf16(const zrt_bf16 *dout, const zrt_bf16 *x,
                                     const zrt_bf16 *weight, const float *mean,
                                     const float *rstd, const zrt_bf16 *addend,
                                     zrt_bf16 *dx, zrt_bf16 *dweight,
                                     zrt_bf16 *dbias, int64_t N, int64_t C);

/// zrt_cross_entropy_padded on bf16 logits [N, V]; loss: one f32.
int zrt_cross_entropy_padded_bf16(const zrt_bf16 *logits,
                                  const int32_t *targets, float *loss,
                                  int64_t N, int64_t V, int64_t num_classes);

/// zrt_cross_entropy_padded_fused on bf16 logits [N, V] (loss f32): the
/// numbers of zrt_cross_entropy_padded_bf16 followed by
/// zrt_cross_entropy_padded_backward_bf16, the gradient rounded once.
int zrt_cross_entropy_padded_fused_bf16(zrt_bf16 *logits,
                                        const int32_t *targets, float *loss,
                                        float dloss, int64_t N, int64_t V,
                                        int64_t num_classes);

/// zrt_cross_entropy_padded_backward on bf16: logits, dlogits [N, V] bf16;
/// dloss: one f32.
int zrt_cross_entropy_padded_backward_bf16(const zrt_bf16 *logits,
                                           const int32_t *targets,
                                           const float *dloss,
                                           zrt_bf16 *dlogits, int64_t N,
                                           int64_t V, int64_t num_classes);

/// Floats of `workspace` zrt_attention_forward_bf16 /
/// zrt_attention_backward_bf16 need for sequence length T and head size D:
/// zrt_attention_workspace(T) + 8 T D (the CPU widens one (batch, head)
/// slice of q, k, v, out, dout, dq, dk, dv into it). -1 for T < 0, D < 0 or
/// on overflow.
int64_t zrt_attention_workspace_bf16(int64_t T, int64_t D);

/// zrt_attention_forward on bf16 q, k, v, out [B, H, T, D]; lse [B, H, T]
/// f32. workspace: zrt_attention_workspace_bf16(T, D) floats (NULL: the CPU
/// allocates, counted by zrt_heap_allocations). On the CPU: the f32
/// algorithm on the widened values, out rounded once. The CUDA backend
/// runs the products on bf16 tensor cores with f32 accumulation and, as
/// FlashAttention-2 and cuDNN do, rounds the probabilities to bf16 before
/// P.v: its out agrees with the CPU's to bf16 rounding, not bit for bit
/// (for head sizes 32, 64, 128; other sizes, or ZRT_CUDA_ATTENTION=simt,
/// run its f32 SIMT kernels on the widened values: f32 rounding plus the
/// one bf16 rounding of each output).
int zrt_attention_forward_bf16(const zrt_bf16 *q, const zrt_bf16 *k,
                               const zrt_bf16 *v, zrt_bf16 *out, float *lse,
                               float *workspace, int64_t B, int64_t H,
                               int64_t T, int64_t D);

/// zrt_attention_backward on bf16: dout, q, k, v, out, dq, dk, dv
/// [B, H, T, D] bf16; lse [B, H, T] f32; workspace as
/// zrt_attention_forward_bf16. CUDA: bf16 tensor-core products (P and dS
/// rounded to bf16 before their products, as FlashAttention-2), f32
/// accumulation; the CPU: the f32 algorithm on the widened values.
int zrt_attention_backward_bf16(const zrt_bf16 *dout, const zrt_bf16 *q,
                                const zrt_bf16 *k, const zrt_bf16 *v,
                                const zrt_bf16 *out, const float *lse,
                                zrt_bf16 *dq, zrt_bf16 *dk, zrt_bf16 *dv,
                                float *workspace, int64_t B, int64_t H,
                                int64_t T, int64_t D);

/// zrt_attention_forward_packed on bf16 qkv [B, T, 3 C] and out [B, T, C];
/// lse [B, H, T] f32. workspace: zrt_attention_workspace_bf16(T, D) floats.
/// The numbers of zrt_attention_forward_bf16 on the split heads, on each
/// backend (the CUDA tensor-core kernels take the packed rows directly).
int zrt_attention_forward_packed_bf16(const zrt_bf16 *qkv, zrt_bf16 *out,
                                      float *lse, float *workspace, int64_t B,
                                      int64_t T, int64_t H, int64_t D);

/// zrt_attention_backward_packed on bf16: dout, out [B, T, C], qkv and
/// dqkv [B, T, 3 C] bf16, lse [B, H, T] f32; workspace as
/// zrt_attention_forward_packed_bf16. The numbers of
/// zrt_attention_backward_bf16 on the split heads.
int zrt_attention_backward_packed_bf16(const zrt_bf16 *dout,
                                       const zrt_bf16 *qkv,
                                       const zrt_bf16 *out, const float *lse,
                                       zrt_bf16 *dqkv, float *workspace,
                                       int64_t B, int64_t T, int64_t H,
                                       int64_t D);

/// zrt_embedding on a bf16 table [V, C] and bf16 out [N, C]: the rows are
/// copied (the numbers of widening, gathering and rounding back). Errors:
/// as zrt_embedding.
int zrt_embedding_bf16(const zrt_bf16 *table, const int32_t *ids,
                       zrt_bf16 *out, int64_t N, int64_t V, int64_t C);

/// 4-byte words of `workspace` zrt_embedding_backward_bf16 needs: N + V + 1
/// (the CPU sorts the positions by id in it; the CUDA backend ignores it).
/// -1 for negative sizes or on overflow.
int64_t zrt_embedding_backward_bf16_workspace(int64_t N, int64_t V);

/// zrt_embedding_backward on bf16 dout [N, C] into a bf16 dtable [V, C]
/// (OVERWRITTEN, rows of absent ids zero): each dtable[v, j] is the f32
/// sum of dout[i, j] over the positions i with ids[i] == v in increasing
/// i, rounded once — the numbers of zrt_embedding_backward on the widened
/// dout, rounded, without the [V, C] f32 table. workspace:
/// zrt_embedding_backward_bf16_workspace(N, V) words (NULL: the CPU
/// allocates, counted by zrt_heap_allocations). Errors: as
/// zrt_embedding_backward (also N above INT32_MAX).
int zrt_embedding_backward_bf16(const zrt_bf16 *dout, const int32_t *ids,
                                zrt_bf16 *dtable, int64_t N, int64_t V,
                                int64_t C, void *workspace);

#ifdef __cplusplus
} // extern "C"
#endif

/* The Llama/Qwen decoder kernels (RMSNorm, SwiGLU, RoPE, GQA, masked
   cross-entropy). */
#include "zrt/decoder.h"
/* Megatron's vocabulary-parallel embedding and cross-entropy (CPU). */
#include "zrt/vocab_parallel.h"

#endif // ZRT_ZRT_H
