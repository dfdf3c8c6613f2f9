//===- zrt_cuda.h - CUDA backend, internal C++ API ---------------*- C++ -*-===//
//
// The CUDA implementations of the zrt.h functions, in namespace zrt_cuda
// with the exact zrt.h signatures and semantics (shapes, units, overwrite
// rules, errors: see runtime/include/zrt/zrt.h), on DEVICE memory (arena
// memory is cudaMalloc'd). abi.cpp exports them under their zrt_* names in
// the zero_runtime_cuda library; the unit tests link these directly next to
// the CPU kernels (zrt_cpu_reference) to compare the two.
//
// Execution model:
//  * Every kernel and cuBLAS call runs on the backend's compute stream
//    (stream(), a non-blocking stream created on first use), in call order.
//    A call returns once its work is queued. Argument errors are reported
//    by the call itself before anything is queued (as on the CPU); launch
//    errors by the call (ZRT_ERR_INVALID_ARGUMENT); errors raised while a
//    kernel runs by the next synchronizing call.
//  * Data-dependent errors (a token id or target outside its range) cannot
//    be seen on the host without a synchronization: the kernel clamps the
//    offending index (so it never reads or writes out of bounds), raises the
//    device error word (raise_device_error), and the next synchronizing call
//    (copy_to_host / copy_to_device) returns ZRT_ERR_OUT_OF_RANGE with the
//    name of the kernel. Unlike the CPU backend, the outputs of that kernel
//    have then been written.
//  * Collectives (comm.cpp) run on a separate communication stream, ordered
//    against the compute stream with CUDA events.
//  * Scratch memory of reductions comes from workspace(), allocated once
//    when the first arena is created and grown only if a call needs more.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CUDA_ZRT_CUDA_H
#define ZRT_CUDA_ZRT_CUDA_H

#include "zrt/zrt.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

namespace zrt_cuda {

//===----------------------------------------------------------------------===//
// Context (common.cpp)
//===----------------------------------------------------------------------===//

/// Records a message for zrt_last_error() (the runtime's one thread-local
/// message, shared with the host code of the driver) and returns `status`.
int fail(int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/// zrt_last_error() / zrt_clear_error() / zrt_status_name().
const char *last_error();
void clear_error();
const char *status_name(int status);
/// ZRT_OK when `err` (a cudaError_t) is cudaSuccess, else records
/// "<fn>: <what>: <cuda error string> (<name>)" and returns `status`.
int check(int err, int status, const char *fn, const char *what);
/// check(cudaGetLastError(), ZRT_ERR_INVALID_ARGUMENT, fn, "kernel launch"):
/// call right after a <<<...>>> launch.
int launched(const char *fn);

/// The compute stream every kernel and cuBLAS call of the backend uses
/// (created non-blocking on first use, never destroyed).
cudaStream_t stream();

/// A device buffer of at least `bytes` bytes of scratch for the calling
/// kernel, valid until the next call to workspace() (all users run on the
/// compute stream, so stream order keeps them apart). Grown (and counted
/// by zrt_heap_allocations) only when a call needs more than any before;
/// kWorkspaceBytes is reserved when the first arena is created.
/// Errors: ZRT_ERR_OUT_OF_MEMORY.
int workspace(int64_t bytes, void **out, const char *fn);
/// Bytes reserved up front for workspace().
constexpr int64_t kWorkspaceBytes = int64_t(32) << 20;

/// Device error codes for raise_device_error.
enum DeviceError : int {
  kDeviceErrorNone = 0,
  kDeviceErrorEmbeddingId = 1,   ///< zrt_embedding(_backward): id outside [0, V).
  kDeviceErrorTarget = 2,        ///< cross-entropy: target outside its range.
  kDeviceErrorVocabId = 3,       ///< zrt_vocab_embedding(_backward): id outside
                                 ///< [0, Vl·parts).
  kDeviceErrorVocabTarget = 4,   ///< zrt_vocab_loss: a counted target outside
                                 ///< [0, classes).
};
/// The device error word (an int in device memory, 0 = none) kernels raise
/// with atomicCAS(word, 0, code) when they meet bad data; see the execution
/// model above. Reserved with the workspace; NULL before any arena exists.
int *device_error_word();
/// Reads and clears the device error word (synchronizes the compute
/// stream); ZRT_OK, or ZRT_ERR_OUT_OF_RANGE with a message naming the
/// kernel and `fn`, the call that observed it.
int take_device_error(const char *fn);

//===----------------------------------------------------------------------===//
// Threads (common.cpp): host OpenMP threads only (nothing else on the host
// computes); n >= 1.
//===----------------------------------------------------------------------===//
int set_num_threads(int n);
/// Free and total bytes of device memory (cudaMemGetInfo).
int device_memory_info(int64_t *free_bytes, int64_t *total_bytes);

//===----------------------------------------------------------------------===//
// Arenas and memory counters (common.cpp)
//===----------------------------------------------------------------------===//
int arena_create(int64_t bytes, int kind, zrt_arena *out);
void arena_destroy(zrt_arena arena);
void *arena_base(zrt_arena arena);
int64_t arena_size(zrt_arena arena);
int arena_alloc(zrt_arena arena, int64_t bytes, int64_t align,
                int64_t *offset);
int64_t arena_used(zrt_arena arena);
void arena_reset(zrt_arena arena);
int64_t memory_bytes(int kind);
int64_t memory_peak_bytes(int kind);
int64_t memory_total_bytes();
int64_t memory_peak_total_bytes();
void memory_reset_peak();
int64_t heap_allocations();
/// Counts one heap allocation (zrt_heap_allocations) made by backend code
/// outside arenas (workspace growth, request pools).
void count_allocation();

//===----------------------------------------------------------------------===//
// The host/device boundary (common.cpp). Both synchronize the compute
// stream and then report a pending device error (take_device_error).
//===----------------------------------------------------------------------===//
int copy_to_device(void *dst, const void *src, int64_t bytes);
int copy_to_host(void *dst, const void *src, int64_t bytes);

//===----------------------------------------------------------------------===//
// Elementwise, casts and layout (elementwise.cu, layout.cu)
//===----------------------------------------------------------------------===//
int cast_f32_to_bf16(const float *src, zrt_bf16 *dst, int64_t n);
int cast_bf16_to_f32(const zrt_bf16 *src, float *dst, int64_t n);
int fill(float *out, float value, int64_t n);
int copy(const float *x, float *out, int64_t n);
int add(const float *a, const float *b, float *out, int64_t n);
int add_backward(const float *dout, float *da, float *db, int64_t n);
int axpy(float alpha, const float *x, float *y, int64_t n);
int mul(const float *a, const float *b, float *out, int64_t n);
int mul_backward(const float *a, const float *b, const float *dout, float *da,
                 float *db, int64_t n);
int scale(const float *x, float alpha, float *out, int64_t n);
int gelu(const float *x, float *out, int64_t n);
int gelu_backward(const float *x, const float *dout, float *dx, int64_t n);
int relu(const float *x, float *out, int64_t n);
int relu_backward(const float *x, const float *dout, float *dx, int64_t n);
int fill_bf16(zrt_bf16 *out, float value, int64_t n);
int accumulate_bf16(const zrt_bf16 *x, zrt_bf16 *y, int64_t n);
int cast_f32_to_f16(const float *src, zrt_f16 *dst, int64_t n);
int cast_f16_to_f32(const zrt_f16 *src, float *dst, int64_t n);
int fill_f16(zrt_f16 *out, float value, int64_t n);
int accumulate_f16(const zrt_f16 *x, zrt_f16 *y, int64_t n);
int copy_any(const void *src, void *dst, int64_t n, int dtype);
int copy_2d(const void *src, int64_t src_ld, void *dst, int64_t dst_ld,
            int64_t rows, int64_t cols, int dtype);
int broadcast_leading(const void *in, void *out, int64_t lead, int64_t n,
                      int dtype);
/// `shape` and `perm` are HOST arrays (as the generated code passes them).
int permute(const void *in, void *out, int rank, const int64_t *shape,
            const int64_t *perm, int dtype);
int permute_0213(const float *in, float *out, int64_t A, int64_t B, int64_t C,
                 int64_t D);
int local_shard(const void *in, void *out, int64_t n, int rank, int dtype);

//===----------------------------------------------------------------------===//
// Matrix products (matmul.cpp and matmul_bf16.cu, cuBLAS; bias_backward in
// elementwise.cu)
//===----------------------------------------------------------------------===//
int matmul(const float *A, const float *B, const float *bias, float *C,
           int64_t batch, int64_t M, int64_t N, int64_t K, int trans_a,
           int trans_b, float alpha, float beta, int64_t stride_a,
           int64_t stride_b, int64_t stride_c);
/// zrt_matmul_bf16 (matmul_bf16.cu): cublasGemmStridedBatchedEx on bf16
/// operands with f32 accumulation (tensor cores).
int matmul_bf16(const zrt_bf16 *A, const zrt_bf16 *B, const zrt_bf16 *bias,
                zrt_bf16 *C, int64_t batch, int64_t M, int64_t N, int64_t K,
                int trans_a, int trans_b, float *workspace);
/// zrt_matmul_gelu_bf16 / zrt_matmul_gelu_backward_bf16 (matmul_bf16.cu):
/// a single product is one cuBLASLt matmul with the GELU(_AUX)(_BIAS) /
/// DGELU epilogue (pre the auxiliary matrix); batched products, shapes
/// cuBLASLt does not take, N not a multiple of 8 with pre, and dpre == pre
/// take matmul_bf16's f32 path with a GELU / GELU' epilogue kernel (the
/// CPU's arithmetic). Same argument checks as the CPU (matmul_args.h).
int matmul_gelu_bf16(const zrt_bf16 *A, const zrt_bf16 *B, const zrt_bf16 *bias,
                     zrt_bf16 *pre, zrt_bf16 *out, int64_t batch, int64_t M,
                     int64_t N, int64_t K, int trans_a, int trans_b,
                     float *workspace);
int matmul_gelu_backward_bf16(const zrt_bf16 *A, const zrt_bf16 *B,
                              const zrt_bf16 *pre, zrt_bf16 *dpre,
                              int64_t batch, int64_t M, int64_t N, int64_t K,
                              int trans_a, int trans_b, float *workspace);
/// Deterministic column sums (elementwise.cu, no atomics).
int bias_backward(const float *dout, float *dbias, int64_t rows, int64_t N);

//===----------------------------------------------------------------------===//
// Normalization and softmax (norm.cu)
//===----------------------------------------------------------------------===//
int layer_norm(const float *x, const float *weight, const float *bias,
               float *out, float *mean, float *rstd, int64_t N, int64_t C,
               float eps);
int layer_norm_backward(const float *dout, const float *x, const float *weight,
                        const float *mean, const float *rstd, float *dx,
                        float *dweight, float *dbias, int64_t N, int64_t C);
int layer_norm_stats(const float *x, float *mean, float *rstd, int64_t N,
                     int64_t C, float eps);
/// zrt_add_layer_norm / zrt_layer_norm_backward_add: layer_norm's row
/// kernels with the residual add (the row of sum kept in shared memory;
/// dx = addend + dx in the dx kernel), bit for bit add + layer_norm and
/// layer_norm_backward + add.
int add_layer_norm(const float *a, const float *b, const float *weight,
                   const float *bias, float *sum, float *out, float *mean,
                   float *rstd, int64_t N, int64_t C, float eps);
int layer_norm_backward_add(const float *dout, const float *x,
                            const float *weight, const float *mean,
                            const float *rstd, const float *addend, float *dx,
                            float *dweight, float *dbias, int64_t N, int64_t C);
int softmax(const float *x, float *out, int64_t N, int64_t C);
int softmax_backward(const float *y, const float *dy, float *dx, int64_t N,
                     int64_t C);

//===----------------------------------------------------------------------===//
// Attention (attention.cu)
//===----------------------------------------------------------------------===//
int causal_attention(const float *q, const float *k, const float *v,
                     float *out, float *probs, float *workspace, int64_t B,
                     int64_t H, int64_t T, int64_t D);
int causal_attention_backward(const float *dout, const float *q,
                              const float *k, const float *v,
                              const float *probs, float *dq, float *dk,
                              float *dv, float *workspace, int64_t B,
                              int64_t H, int64_t T, int64_t D);

/// Fused causal attention (flash_attention.cu): tiled kernels that never
/// hold a [T, T] matrix; `workspace` is ignored.
int attention_forward(const float *q, const float *k, const float *v,
                      float *out, float *lse, float *workspace, int64_t B,
                      int64_t H, int64_t T, int64_t D);
int attention_backward(const float *dout, const float *q, const float *k,
                       const float *v, const float *out, const float *lse,
                       float *dq, float *dk, float *dv, float *workspace,
                       int64_t B, int64_t H, int64_t T, int64_t D);
/// zrt_attention_forward_packed / _backward_packed (flash_attention.cu): the
/// same kernels reading the heads in place, so the results are those of
/// attention_forward / attention_backward on the split, transposed copies
/// bit for bit. qkv [B, T, 3 C] (C = H D; row (b, t) = the q heads, then
/// the k heads, then the v heads, D elements each), out and dout [B, T, C],
/// lse [B, H, T] f32, dqkv [B, T, 3 C] OVERWRITTEN in qkv's layout (note
/// the argument order B, T, H, D of zrt.h). `workspace` is ignored. Full
/// argument checks (zrt::checkAttentionPacked*Args, the zrt.h names).
int attention_forward_packed(const float *qkv, float *out, float *lse,
                             float *workspace, int64_t B, int64_t T, int64_t H,
                             int64_t D);
int attention_backward_packed(const float *dout, const float *qkv,
                              const float *out, const float *lse, float *dqkv,
                              float *workspace, int64_t B, int64_t T,
                              int64_t H, int64_t D);

//===----------------------------------------------------------------------===//
// Embedding and losses (loss.cu). Scalar results (`loss`) are DEVICE
// pointers; dloss of the padded backward is a device pointer, dloss of
// cross_entropy_backward / mse_backward / cross_entropy_padded_fused a host
// value (as zrt.h).
//===----------------------------------------------------------------------===//
int embedding(const float *table, const int32_t *ids, float *out, int64_t N,
              int64_t V, int64_t C);
int embedding_backward(const float *dout, const int32_t *ids, float *dtable,
                       int64_t N, int64_t V, int64_t C);
/// embedding_backward for the rows [first, first + V) of a table of
/// `whole` rows: dtable [V, C] (OVERWRITE) gets the sums, in token order,
/// of the dout rows whose id is a row of it; other ids add nothing; an id
/// outside [0, whole) is clamped and raises the device error word with
/// `code`. No argument checks (the caller's): `fn` names the call in launch
/// errors. The kernels of embedding_backward (sort, ordered sums), so the
/// rows are bit for bit those of the whole table's backward.
int embedding_backward_part(const char *fn, const float *dout,
                            const int32_t *ids, float *dtable, int64_t N,
                            int64_t V, int64_t C, int64_t first, int64_t whole,
                            int code);
int cross_entropy(const float *logits, const int32_t *targets, float *loss,
                  int64_t N, int64_t V, int32_t ignore_index);
int cross_entropy_backward(const float *logits, const int32_t *targets,
                           float dloss, float *dlogits, int64_t N, int64_t V,
                           int32_t ignore_index);
int cross_entropy_padded(const float *logits, const int32_t *targets,
                         float *loss, int64_t N, int64_t V,
                         int64_t num_classes);
int cross_entropy_padded_backward(const float *logits, const int32_t *targets,
                                  const float *dloss, float *dlogits,
                                  int64_t N, int64_t V, int64_t num_classes);
/// zrt_cross_entropy_padded_fused: logits [N, V] f32 (row stride V),
/// OVERWRITTEN with the gradient; targets [N] in [0, num_classes); *loss
/// (a DEVICE pointer to f32) = the mean cross-entropy over the first
/// num_classes columns; dloss a HOST value (the loss seed). One kernel per
/// row computes the row statistics once and writes the row's loss and
/// gradient (llm.c's fused classifier), then one block the mean: bit for
/// bit cross_entropy_padded followed by cross_entropy_padded_backward with
/// a device copy of dloss and dlogits = logits. N == 0: *loss = NaN,
/// logits untouched. Errors: zrt::checkCrossEntropyPaddedArgs (the CPU's
/// statuses and messages, nothing queued); a target out of range is
/// clamped and raises the device error word (the next synchronizing call
/// returns ZRT_ERR_OUT_OF_RANGE; the outputs have been written).
int cross_entropy_padded_fused(float *logits, const int32_t *targets,
                               float *loss, float dloss, int64_t N, int64_t V,
                               int64_t num_classes);
int mse(const float *pred, const float *target, float *loss, int64_t n);
int mse_backward(const float *pred, const float *target, float dloss,
                 float *dpred, float *dtarget, int64_t n);

//===----------------------------------------------------------------------===//
// Vocabulary parallelism (vocab_parallel.cu; zrt/vocab_parallel.h): the
// zrt_vocab_* kernels on device memory, `part` this rank's tensor index.
// Argument errors as the CPU's (common/vocab_parallel_args.h, nothing
// queued); an id outside [0, Vl·parts) or a counted target outside [0,
// classes) is clamped and raises the device error word (the next
// synchronizing call returns ZRT_ERR_OUT_OF_RANGE; the outputs have been
// written). `loss` and `dloss` are DEVICE pointers.
//===----------------------------------------------------------------------===//
int vocab_embedding(const float *table, const int32_t *ids, float *out,
                    int64_t N, int64_t Vl, int64_t C, int64_t part,
                    int64_t parts);
int vocab_embedding_backward(const float *dout, const int32_t *ids,
                             float *dtable, int64_t N, int64_t Vl, int64_t C,
                             int64_t part, int64_t parts);
int vocab_max(const float *logits, float *out, int64_t N, int64_t Vl,
              int64_t classes, int64_t part);
int vocab_exp_sums(const float *logits, const int32_t *targets,
                   const float *max, float *out, int64_t N, int64_t Vl,
                   int64_t classes, int64_t part);
int vocab_exp_sums_backward(const float *logits, const int32_t *targets,
                            const float *max, const float *grad,
                            float *dlogits, int64_t N, int64_t Vl,
                            int64_t classes, int64_t part);
int vocab_loss(const float *sums, const float *max, const int32_t *targets,
               float *loss, int64_t N, int64_t classes, int has_ignore,
               int32_t ignore);
int vocab_loss_backward(const float *sums, const int32_t *targets,
                        const float *dloss, float *dsums, int64_t N,
                        int has_ignore, int32_t ignore);

//===----------------------------------------------------------------------===//
// Native bf16 kernels (zrt.h "Native bf16 kernels"): zrt_X_bf16 is zrt_X on
// the widened bf16 values with each bf16 output rounded once (f32ToBf16);
// statistics, the loss and lse stay f32. Each shares its kernel code with
// the f32 zrt_X (templated over the element type: the same f32 arithmetic
// between a widening load and a rounding store) and reads and writes bf16
// directly, so the results are the f32 CUDA kernel's on the widened inputs,
// rounded once. Same argument checks (and messages, with the _bf16 name) as
// the f32 functions.
//===----------------------------------------------------------------------===//
/// zrt_add_bf16, zrt_gelu_bf16, zrt_gelu_backward_bf16 (elementwise.cu):
/// one read of each input and one write, 16-byte vectors where the
/// pointers share their alignment; out may equal an input.
int add_bf16(const zrt_bf16 *a, const zrt_bf16 *b, zrt_bf16 *out, int64_t n);
int gelu_bf16(const zrt_bf16 *x, zrt_bf16 *out, int64_t n);
int gelu_backward_bf16(const zrt_bf16 *x, const zrt_bf16 *dout, zrt_bf16 *dx,
                       int64_t n);
/// zrt_bias_backward_bf16 (elementwise.cu): bias_backward's deterministic
/// f32 column sums of the widened dout, rounded once.
int bias_backward_bf16(const zrt_bf16 *dout, zrt_bf16 *dbias, int64_t rows,
                       int64_t N);
/// zrt_layer_norm_bf16, zrt_layer_norm_stats_bf16,
/// zrt_layer_norm_backward_bf16 (norm.cu): the f32 kernels (a warp per row,
/// f32 statistics; mean / rstd are f32) on bf16 rows; dweight / dbias are
/// the f32 column sums, rounded once.
int layer_norm_bf16(const zrt_bf16 *x, const zrt_bf16 *weight,
                    const zrt_bf16 *bias, zrt_bf16 *out, float *mean,
                    float *rstd, int64_t N, int64_t C, float eps);
int layer_norm_stats_bf16(const zrt_bf16 *x, float *mean, float *rstd,
                          int64_t N, int64_t C, float eps);
int layer_norm_backward_bf16(const zrt_bf16 *dout, const zrt_bf16 *x,
                             const zrt_bf16 *weight, const float *mean,
                             const float *rstd, zrt_bf16 *dx, zrt_bf16 *dweight,
                             zrt_bf16 *dbias, int64_t N, int64_t C);
/// zrt_add_layer_norm_bf16 / zrt_layer_norm_backward_add_bf16 (norm.cu):
/// add_layer_norm / layer_norm_backward_add on bf16 rows, bit for bit
/// add_bf16 + layer_norm_bf16 and layer_norm_backward_bf16 + add_bf16.
int add_layer_norm_bf16(const zrt_bf16 *a, const zrt_bf16 *b,
                        const zrt_bf16 *weight, const zrt_bf16 *bias,
                        zrt_bf16 *sum, zrt_bf16 *out, float *mean, float *rstd,
                        int64_t N, int64_t C, float eps);
int layer_norm_backward_add_bf16(const zrt_bf16 *dout, const zrt_bf16 *x,
                                 const zrt_bf16 *weight, const float *mean,
                                 const float *rstd, const zrt_bf16 *addend,
                                 zrt_bf16 *dx, zrt_bf16 *dweight,
                                 zrt_bf16 *dbias, int64_t N, int64_t C);
/// zrt_cross_entropy_padded_bf16 / _backward_bf16 (loss.cu): the f32
/// kernels' arithmetic (f32 max, double sum of exp) with the row's first
/// num_classes logits staged in shared memory by one asynchronous copy, so
/// the forward reads each logit once and the backward reads it once and
/// writes dlogits once (rows too long for shared memory: the f32 kernels'
/// passes over global memory). loss and dloss are DEVICE pointers to f32.
int cross_entropy_padded_bf16(const zrt_bf16 *logits, const int32_t *targets,
                              float *loss, int64_t N, int64_t V,
                              int64_t num_classes);
int cross_entropy_padded_backward_bf16(const zrt_bf16 *logits,
                                       const int32_t *targets,
                                       const float *dloss, zrt_bf16 *dlogits,
                                       int64_t N, int64_t V,
                                       int64_t num_classes);
/// zrt_cross_entropy_padded_fused_bf16: cross_entropy_padded_fused on bf16
/// logits [N, V] (loss f32, a DEVICE pointer; dloss a HOST value), the
/// gradient rounded once and written over the logits; bit for bit
/// cross_entropy_padded_bf16 followed by
/// cross_entropy_padded_backward_bf16 (dlogits = logits). Rows that fit in
/// shared memory are staged as there (one read of each logit, one write of
/// each gradient). Errors as cross_entropy_padded_fused.
int cross_entropy_padded_fused_bf16(zrt_bf16 *logits, const int32_t *targets,
                                    float *loss, float dloss, int64_t N,
                                    int64_t V, int64_t num_classes);
/// zrt_cross_entropy_masked(_backward)(_bf16) (loss.cu; zrt/decoder.h):
/// the padded cross-entropy's rows (the first num_classes columns of
/// logits [N, V]) with ignore_index: *loss (a DEVICE pointer) = the mean
/// over the M rows whose target is not ignore_index, NaN when M = 0;
/// dlogits OVERWRITTEN with *dloss / M (softmax - onehot) on counted rows'
/// classes (dloss a DEVICE pointer), zeros on ignored rows and padding
/// columns. Argument checks as the CPU (zrt::checkMaskedCrossEntropyArgs,
/// then dloss); a counted target outside [0, num_classes) is clamped and
/// raises the device error word (ZRT_ERR_OUT_OF_RANGE at the next
/// synchronizing call), as in the padded kernels.
int cross_entropy_masked(const float *logits, const int32_t *targets,
                         float *loss, int64_t N, int64_t V,
                         int64_t num_classes, int32_t ignore_index);
int cross_entropy_masked_backward(const float *logits, const int32_t *targets,
                                  const float *dloss, float *dlogits,
                                  int64_t N, int64_t V, int64_t num_classes,
                                  int32_t ignore_index);
int cross_entropy_masked_bf16(const zrt_bf16 *logits, const int32_t *targets,
                              float *loss, int64_t N, int64_t V,
                              int64_t num_classes, int32_t ignore_index);
int cross_entropy_masked_backward_bf16(const zrt_bf16 *logits,
                                       const int32_t *targets,
                                       const float *dloss, zrt_bf16 *dlogits,
                                       int64_t N, int64_t V,
                                       int64_t num_classes,
                                       int32_t ignore_index);
/// zrt_embedding_bf16 (loss.cu): embedding's kernel (one block per token
/// row) on bf16 rows, copied bit for bit; bad ids as embedding (the device
/// error word, the nearest valid row read).
int embedding_bf16(const zrt_bf16 *table, const int32_t *ids, zrt_bf16 *out,
                   int64_t N, int64_t V, int64_t C);
/// zrt_embedding_backward_bf16 (loss.cu): embedding_backward's
/// deterministic steps (dtable zeroed, stable radix sort of the ids, each
/// id's run of dout rows summed in token order in f32) on bf16 dout, each
/// sum rounded once into the bf16 dtable: bit for bit embedding_backward
/// on the widened dout, rounded. Scratch from the runtime's workspace (the
/// caller's zrt.h workspace is not taken); N <= INT32_MAX.
int embedding_backward_bf16(const zrt_bf16 *dout, const int32_t *ids,
                            zrt_bf16 *dtable, int64_t N, int64_t V, int64_t C);
/// zrt_attention_forward_bf16 / _backward_bf16 on the CUDA cores
/// (flash_attention.cu): the f32 flash kernels with bf16 tiles widened into
/// their f32 shared-memory tiles and out / dq / dk / dv rounded once when
/// stored; lse f32; `workspace` ignored. Full argument checks (the
/// zrt_attention_*_bf16 names). abi.cpp runs these when the tensor-core
/// kernels (flash_attention_tc.h) do not take D or ZRT_CUDA_ATTENTION=simt.
int attention_forward_bf16_simt(const zrt_bf16 *q, const zrt_bf16 *k,
                                const zrt_bf16 *v, zrt_bf16 *out, float *lse,
                                float *workspace, int64_t B, int64_t H,
                                int64_t T, int64_t D);
int attention_backward_bf16_simt(const zrt_bf16 *dout, const zrt_bf16 *q,
                                 const zrt_bf16 *k, const zrt_bf16 *v,
                                 const zrt_bf16 *out, const float *lse,
                                 zrt_bf16 *dq, zrt_bf16 *dk, zrt_bf16 *dv,
                                 float *workspace, int64_t B, int64_t H,
                                 int64_t T, int64_t D);
/// zrt_attention_forward_packed_bf16 / _backward_packed_bf16 on the CUDA
/// cores: the kernels of attention_*_bf16_simt reading and writing the
/// packed tensors in place (shapes as attention_forward_packed: qkv, dqkv
/// [B, T, 3 H D] bf16, out, dout [B, T, H D] bf16, lse [B, H, T] f32), so
/// the results are attention_*_bf16_simt's on the split heads bit for bit.
/// `workspace` ignored; full argument checks (the zrt_*_packed_bf16 names).
int attention_forward_packed_bf16_simt(const zrt_bf16 *qkv, zrt_bf16 *out,
                                       float *lse, float *workspace, int64_t B,
                                       int64_t T, int64_t H, int64_t D);
int attention_backward_packed_bf16_simt(const zrt_bf16 *dout,
                                        const zrt_bf16 *qkv,
                                        const zrt_bf16 *out, const float *lse,
                                        zrt_bf16 *dqkv, float *workspace,
                                        int64_t B, int64_t T, int64_t H,
                                        int64_t D);
/// zrt_attention_forward_gqa / _backward_gqa (zrt/decoder.h) on the CUDA
/// cores (flash_attention.cu): q, out, dout, dq [B, H, T, D]; k, v, dk, dv
/// [B, Hkv, T, D] with Hkv dividing H; query head h reads K/V head
/// h / (H / Hkv) in place (no repeated copy); dk, dv OVERWRITTEN with the
/// sum over each group's query heads, accumulated in f32 in head order by
/// the block that owns the K/V tile (deterministic, no atomics). Hkv == H:
/// attention_forward / attention_backward bit for bit. `workspace` ignored;
/// full argument checks (zrt::checkKvHeads first, then the multi-head
/// ones, with the zrt_attention_*_gqa names).
int attention_forward_gqa(const float *q, const float *k, const float *v,
                          float *out, float *lse, float *workspace, int64_t B,
                          int64_t H, int64_t Hkv, int64_t T, int64_t D);
int attention_backward_gqa(const float *dout, const float *q, const float *k,
                           const float *v, const float *out, const float *lse,
                           float *dq, float *dk, float *dv, float *workspace,
                           int64_t B, int64_t H, int64_t Hkv, int64_t T,
                           int64_t D);
/// zrt_attention_*_gqa_bf16 on the CUDA cores: the f32 GQA kernels on the
/// widened tiles, outputs (dk, dv: the f32 group sums) rounded once, so a
/// result is attention_*_gqa's on the widened inputs, rounded. abi.cpp runs
/// these when the tensor-core kernels do not take D (or
/// ZRT_CUDA_ATTENTION=simt), like attention_*_bf16_simt.
int attention_forward_gqa_bf16_simt(const zrt_bf16 *q, const zrt_bf16 *k,
                                    const zrt_bf16 *v, zrt_bf16 *out,
                                    float *lse, float *workspace, int64_t B,
                                    int64_t H, int64_t Hkv, int64_t T,
                                    int64_t D);
int attention_backward_gqa_bf16_simt(const zrt_bf16 *dout, const zrt_bf16 *q,
                                     const zrt_bf16 *k, const zrt_bf16 *v,
                                     const zrt_bf16 *out, const float *lse,
                                     zrt_bf16 *dq, zrt_bf16 *dk, zrt_bf16 *dv,
                                     float *workspace, int64_t B, int64_t H,
                                     int64_t Hkv, int64_t T, int64_t D);

//===----------------------------------------------------------------------===//
// Optimizer, norms, initialization (optimizer.cu, init.cpp). Scalar inputs
// and outputs of sum_squares / clip_coef_scaled are DEVICE pointers; the
// group tables of shard_adamw (offsets, numels, decay) are HOST arrays.
//===----------------------------------------------------------------------===//
int adamw_step(float *param, float *m, float *v, const float *grad,
               float *out_f32, zrt_bf16 *out_bf16, int64_t n, double lr,
               double beta1, double beta2, double eps, double weight_decay,
               float grad_scale, int64_t step);
int adamw_step_bf16_grad(float *param, float *m, float *v,
                         const zrt_bf16 *grad, float *out_f32,
                         zrt_bf16 *out_bf16, int64_t n, double lr,
                         double beta1, double beta2, double eps,
                         double weight_decay, float grad_scale, int64_t step);
int shard_adamw(float *param, float *m, float *v, const void *grad,
                int grad_dtype, int64_t shard, int rank, int num_members,
                const int64_t *offsets, const int64_t *numels,
                const uint8_t *decay, double lr, double beta1, double beta2,
                double eps, double weight_decay, float grad_scale,
                int64_t step);
int sum_squares(const float *x, int64_t n, float *out);
int sum_squares_bf16(const zrt_bf16 *x, int64_t n, float *out);
int sum_squares_f16(const zrt_f16 *x, int64_t n, float *out);
int adamw_step_f16_grad(float *param, float *m, float *v, const zrt_f16 *grad,
                        float *out_f32, zrt_bf16 *out_bf16, int64_t n,
                        double lr, double beta1, double beta2, double eps,
                        double weight_decay, float grad_scale, int64_t step);
int clip_coef_scaled(const float *sum_squares, const float *grad_scale,
                     float max_norm, float *coef, float *norm);
/// Initializers: values computed on the host with the CPU runtime's exact
/// arithmetic (Philox4x32-10 + Box-Muller in double) and copied to the
/// device, so a GPU run starts from the same bits as a CPU run.
int init_normal(float *ptr, int64_t n, float mean, float std, uint64_t seed,
                int64_t offset);
int init_uniform(float *ptr, int64_t n, float low, float high, uint64_t seed,
                 int64_t offset);
int init_param_slice(void *data, int dtype, int64_t slice_begin,
                     int64_t slice_n, int64_t member_offset,
                     int64_t member_numel, int init_kind, float std,
                     uint64_t seed);

//===----------------------------------------------------------------------===//
// Process group (process_group.cpp: MPI only to start up when launched by
// mpirun) and collectives (comm.cpp: NCCL on the communication stream)
//===----------------------------------------------------------------------===//
int init(int *argc, char ***argv);
int finalize();
int rank();
int world_size();
int barrier();
/// The mesh data x tensor (zrt_mesh_init): one NCCL communicator per axis
/// of more than one rank, split from the world's (ncclCommSplit).
int mesh_init(int tensor_size);
int axis_rank(int axis);
int axis_size(int axis);
/// The collectives on mesh axis `axis` (ZRT_AXIS_DATA or ZRT_AXIS_TENSOR;
/// zrt_all_gather and the other axis-less entry points pass the data axis),
/// counted on that axis with its size.
int all_gather(int axis, const void *send, void *recv, int64_t n, int dtype);
int reduce_scatter(int axis, const void *send, void *recv, int64_t n,
                   int dtype, int op);
int all_reduce(int axis, const void *send, void *recv, int64_t n, int dtype,
               int op);
int broadcast(void *buf, int64_t n, int dtype, int root);
int all_gather_start(int axis, const void *send, void *recv, int64_t n,
                     int dtype, zrt_request *req);
int reduce_scatter_start(int axis, const void *send, void *recv, int64_t n,
                         int dtype, int op, zrt_request *req);
int all_reduce_start(int axis, const void *send, void *recv, int64_t n,
                     int dtype, int op, zrt_request *req);
int broadcast_start(void *buf, int64_t n, int dtype, int root,
                    zrt_request *req);
int wait(zrt_request req);
int64_t comm_bytes(int kind);
int64_t comm_calls(int kind);
int64_t comm_axis_bytes(int axis, int kind);
int64_t comm_axis_calls(int axis, int kind);
double comm_wait_seconds();
int comm_progress();
void comm_reset();

/// P_a+cpu's pinned host block and copy stream (offload.cpp; zrt.h
/// "Checkpoint offload to host memory").
int offload_host_create(int64_t bytes);
void offload_host_destroy();
void *offload_host_base();
int64_t offload_host_bytes();
int offload_start(const void *device, void *host, int64_t bytes,
                  zrt_offload *out);
int fetch_start(const void *host, void *device, int64_t bytes,
                zrt_offload *out);
/// zrt_offload_wait and zrt_fetch_wait (`fn` names the caller).
int copy_wait(const char *fn, zrt_offload op);

/// Per-function timing of the zrt_* calls (profile.cpp; ZRT_PROFILE).
namespace profile {
/// True when ZRT_PROFILE is set and the runtime is initialized.
bool enabled();
/// Times one zrt_* call: CUDA events around its work on the compute stream,
/// and the host time until the scope ends. A non-empty `shape` (e.g. a
/// matmul's "b1 16384x2304x768 NT bias") also totals the call under
/// (name, shape): the JSON report's "shapes".
class Scope {
public:
  explicit Scope(const char *name, std::string shape = {});
  ~Scope();
  Scope(const Scope &) = delete;
  Scope &operator=(const Scope &) = delete;

private:
  const char *name_;
  std::string shape_;
  void *start_ = nullptr, *stop_ = nullptr; ///< cudaEvent_t
  double hostStart_ = 0.0;
};
/// Writes the totals (JSON file or stderr table, see profile.cpp); called
/// by zrt_finalize.
void report();
} // namespace profile

namespace detail {
/// The calling thread's cuBLAS handle (a cublasHandle_t), created on first
/// use and bound to stream(); `fn` names the caller in errors (matmul.cpp).
int cublas_handle(void **out, const char *fn);
/// Name of a cublasStatus_t (matmul.cpp).
const char *cublas_status_name(int status);
// Launchers used by matmul.cpp (elementwise.cu); return a cudaError_t.
/// C[b][i, j] = bias[j] for b < batch, i < M, j < N.
int launch_broadcast_bias(const float *bias, float *C, int64_t batch,
                          int64_t M, int64_t N, int64_t stride_c);
/// C[b][i, j] = beta == 0 ? 0 : beta * C[b][i, j], then += bias[j] if bias.
int launch_scale_add_bias(const float *bias, float *C, float beta,
                          int64_t batch, int64_t M, int64_t N,
                          int64_t stride_c);
/// C[b][i, j] += bias[j].
int launch_add_bias(const float *bias, float *C, int64_t batch, int64_t M,
                    int64_t N, int64_t stride_c);
} // namespace detail


//===----------------------------------------------------------------------===//
// Llama/Qwen kernels (decoder.cu): RMSNorm, SiLU/SwiGLU, RoPE. The
// grouped-query attention (flash_attention.cu, flash_attention_tc.cu) and
// the masked cross-entropy (loss.cu) are declared with their files' other
// kernels above.
//===----------------------------------------------------------------------===//

int rms_norm(const float *x, const float *weight, float *out, int64_t N,
             int64_t C, float eps);
int rms_norm_bf16(const zrt_bf16 *x, const zrt_bf16 *weight, zrt_bf16 *out,
                  int64_t N, int64_t C, float eps);
int add_rms_norm(const float *a, const float *b, const float *weight,
                 float *sum, float *out, int64_t N, int64_t C, float eps);
int add_rms_norm_bf16(const zrt_bf16 *a, const zrt_bf16 *b,
                      const zrt_bf16 *weight, zrt_bf16 *sum, zrt_bf16 *out,
                      int64_t N, int64_t C, float eps);
int rms_norm_backward(const float *dout, const float *x, const float *weight,
                      const float *addend, float *dx, float *dweight,
                      float *workspace, int64_t N, int64_t C, float eps);
int rms_norm_backward_bf16(const zrt_bf16 *dout, const zrt_bf16 *x,
                           const zrt_bf16 *weight, const zrt_bf16 *addend,
                           zrt_bf16 *dx, zrt_bf16 *dweight, float *workspace,
                           int64_t N, int64_t C, float eps);
int silu(const float *x, float *out, int64_t n);
int silu_bf16(const zrt_bf16 *x, zrt_bf16 *out, int64_t n);
int silu_backward(const float *x, const float *dout, float *dx, int64_t n);
int silu_backward_bf16(const zrt_bf16 *x, const zrt_bf16 *dout, zrt_bf16 *dx,
                       int64_t n);
int swiglu(const float *gate, const float *up, float *out, int64_t n);
int swiglu_bf16(const zrt_bf16 *gate, const zrt_bf16 *up, zrt_bf16 *out,
                int64_t n);
int swiglu_backward(const float *gate, const float *up, const float *dout,
                    float *dgate, float *dup, int64_t n);
int swiglu_backward_bf16(const zrt_bf16 *gate, const zrt_bf16 *up,
                         const zrt_bf16 *dout, zrt_bf16 *dgate, zrt_bf16 *dup,
                         int64_t n);
/// zrt_rope_table: computed on the host (rope_table.h, the CPU's bits),
/// copied to the device table and waited for (an initialization call).
int rope_table(float *table, int64_t T, int64_t half, double theta,
               const zrt_rope_scaling *scaling);
int rope(const float *x, const float *table, float *out, int64_t B, int64_t T,
         int64_t H, int64_t D, int layout, int inverse);
int rope_bf16(const zrt_bf16 *x, const float *table, zrt_bf16 *out, int64_t B,
              int64_t T, int64_t H, int64_t D, int layout, int inverse);

} // namespace zrt_cuda

#define ZRT_CUDA_REQUIRE(cond, ...)                                            \
  do {                                                                         \
    if (!(cond))                                                               \
      return ::zrt_cuda::fail(ZRT_ERR_INVALID_ARGUMENT, __VA_ARGS__);          \
  } while (0)

#define ZRT_CUDA_REQUIRE_BUF(fn, n, ptr)                                       \
  ZRT_CUDA_REQUIRE((n) == 0 || (ptr) != nullptr, "%s: %s is NULL", fn, #ptr)

#endif // ZRT_CUDA_ZRT_CUDA_H
