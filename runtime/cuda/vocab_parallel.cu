//===- vocab_parallel.cu - CUDA backend: vocabulary-parallel kernels ------===//
//
// zrt_vocab_embedding(_backward), zrt_vocab_max, zrt_vocab_exp_sums
// (_backward) and zrt_vocab_loss(_backward) (zrt/vocab_parallel.h) on
// device memory, with the CPU runtime's semantics
// (runtime/src/cpu/vocab_parallel.cpp) and argument checks
// (common/vocab_parallel_args.h, the same statuses and messages):
//  * Bad ids and counted targets are data, as in loss.cu: the kernels never
//    read or write out of bounds (a bad id reads no row; a bad target
//    counts as no column) and raise the device error word
//    (kDeviceErrorVocabId, kDeviceErrorVocabTarget); the next copy_to_host
//    / copy_to_device reports ZRT_ERR_OUT_OF_RANGE. The outputs have then
//    been written, where the CPU writes nothing.
//  * The embedding's gradient is loss.cu's deterministic scatter
//    (embedding_backward_part: a stable radix sort of the ids, each row
//    summed in token order, the tokens of the other parts sorted last and
//    summed nowhere): bit for bit the CPU's.
//  * The row statistics: one block per row (grid-strided); the maximum in
//    f32 (the CPU's, exactly: fmaxf over -FLT_MAX and the class columns),
//    the softmax denominator summed in double over expf(row - max) as
//    loss.cu's cross-entropy (the CPU: exp in double; about 1e-7 relative
//    apart), the target logit read by one thread. The gradient is the
//    CPU's f32 arithmetic element for element.
//  * The loss and its gradient: one block over the N rows, the double sum
//    in a fixed order (deterministic; the CPU adds the rows in sequence, so
//    the f32 loss may differ in its last bit).
//
//===----------------------------------------------------------------------===//

#include "device_util.cuh"

#include "../src/common/vocab_parallel_args.h"

#include <cuda_runtime.h>

#include <cfloat>
#include <climits>

namespace {

using namespace zrt_cuda;

/// Most blocks of the row kernels (rows beyond are grid-strided).
constexpr int64_t kVocabMaxRowBlocks = int64_t(1) << 16;
/// Threads of the single block of the loss kernels.
constexpr int kVocabFinalThreads = 1024;

int vocabRowBlocks(int64_t rows) {
  return static_cast<int>(rows < kVocabMaxRowBlocks ? rows
                                                    : kVocabMaxRowBlocks);
}

/// Threads per block of a kernel over rows of `cols` columns: a multiple of
/// 32, at most kThreads.
int vocabRowThreads(int64_t cols) {
  if (cols >= kThreads)
    return kThreads;
  const int64_t t = (cols + 31) / 32 * 32;
  return static_cast<int>(t < 32 ? 32 : t);
}

/// The class columns of a rank's [Vl] logits: [0, cols) (the CPU's
/// classColumns).
__host__ __device__ inline int64_t classColumns(int64_t Vl, int64_t classes,
                                                int64_t part) {
  const int64_t first = part * Vl;
  if (classes <= first)
    return 0;
  return Vl < classes - first ? Vl : classes - first;
}

/// zrt_vocab_embedding: one block per token row (grid-strided). Row i of
/// out is table[ids[i] - first] when that is a row of the part, else
/// zeros; an id outside [0, whole) raises the error word (one thread).
__global__ void vocabEmbeddingKernel(const float *table, const int32_t *ids,
                                     float *out, int64_t N, int64_t Vl,
                                     int64_t C, int64_t first, int64_t whole,
                                     int *errorWord) {
  for (int64_t i = blockIdx.x; i < N; i += gridDim.x) {
    const int64_t id = ids[i];
    if ((id < 0 || id >= whole) && threadIdx.x == 0)
      raiseDeviceError(errorWord, kDeviceErrorVocabId);
    const int64_t v = id - first;
    float *dst = out + i * C;
    if (v >= 0 && v < Vl) {
      const float *src = table + v * C;
      for (int64_t j = threadIdx.x; j < C; j += blockDim.x)
        dst[j] = src[j];
    } else {
      for (int64_t j = threadIdx.x; j < C; j += blockDim.x)
        dst[j] = 0.0f;
    }
  }
}

/// zrt_vocab_max: one block per row, out[n] = the f32 maximum of the
/// row's `cols` class columns and -FLT_MAX (NaN ignored, as fmax).
__global__ void vocabMaxKernel(const float *logits, float *out, int64_t N,
                               int64_t Vl, int64_t cols) {
  __shared__ float shMax[32];
  for (int64_t n = blockIdx.x; n < N; n += gridDim.x) {
    const float *row = logits + n * Vl;
    float mx = -FLT_MAX;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
      mx = fmaxf(mx, row[j]);
    mx = blockMax(mx, shMax);
    if (threadIdx.x == 0)
      out[n] = mx;
  }
}

/// zrt_vocab_exp_sums: one block per row, out[n, 0] = f32(sum in double of
/// expf(row[j] - max[n]) over the class columns), out[n, 1] = the target's
/// logit when this part holds it among its class columns, else 0.
__global__ void vocabExpSumsKernel(const float *logits, const int32_t *targets,
                                   const float *max, float *out, int64_t N,
                                   int64_t Vl, int64_t cols, int64_t first) {
  __shared__ double shSum[32];
  for (int64_t n = blockIdx.x; n < N; n += gridDim.x) {
    const float *row = logits + n * Vl;
    const float mx = max[n];
    double sum = 0.0;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
      sum += static_cast<double>(expf(row[j] - mx));
    sum = blockSum(sum, shSum);
    if (threadIdx.x == 0) {
      const int64_t t = static_cast<int64_t>(targets[n]) - first;
      out[2 * n] = static_cast<float>(sum);
      out[2 * n + 1] = t >= 0 && t < cols ? row[t] : 0.0f;
    }
  }
}

/// zrt_vocab_exp_sums_backward: one block per row, dlogits[n, j] =
/// grad[n, 0]·expf(row[j] - max[n]) (+ grad[n, 1] at the target) on the
/// class columns, 0 on the padding; separately rounded f32 operations in
/// the CPU's order.
__global__ void vocabExpSumsBackwardKernel(const float *logits,
                                           const int32_t *targets,
                                           const float *max, const float *grad,
                                           float *dlogits, int64_t N,
                                           int64_t Vl, int64_t cols,
                                           int64_t first) {
  for (int64_t n = blockIdx.x; n < N; n += gridDim.x) {
    const float *row = logits + n * Vl;
    float *drow = dlogits + n * Vl;
    const float mx = max[n], gs = grad[2 * n], gt = grad[2 * n + 1];
    const int64_t t = static_cast<int64_t>(targets[n]) - first;
    for (int64_t j = threadIdx.x; j < Vl; j += blockDim.x) {
      float d = 0.0f;
      if (j < cols) {
        d = __fmul_rn(gs, expf(__fsub_rn(row[j], mx)));
        if (j == t)
          d = __fadd_rn(d, gt);
      }
      drow[j] = d;
    }
  }
}

/// Whether row n takes part in the loss (not ignore_index).
__device__ __forceinline__ bool counted(const int32_t *targets, int64_t n,
                                        int hasIgnore, int32_t ignore) {
  return !(hasIgnore && targets[n] == ignore);
}

/// zrt_vocab_loss, one block: *loss = f32(sum over the counted rows of
/// log(sums[n, 0]) - (sums[n, 1] - max[n]), in double, / their count);
/// NaN when none is counted. A counted target outside [0, classes) raises
/// the error word.
__global__ void vocabLossKernel(const float *sums, const float *max,
                                const int32_t *targets, float *loss, int64_t N,
                                int64_t classes, int hasIgnore, int32_t ignore,
                                int *errorWord) {
  __shared__ double shared[32];
  double total = 0.0, count = 0.0;
  for (int64_t n = threadIdx.x; n < N; n += blockDim.x) {
    if (!counted(targets, n, hasIgnore, ignore))
      continue;
    if (targets[n] < 0 || targets[n] >= classes)
      raiseDeviceError(errorWord, kDeviceErrorVocabTarget);
    total += log(static_cast<double>(sums[2 * n])) -
             (static_cast<double>(sums[2 * n + 1]) - max[n]);
    count += 1.0;
  }
  total = blockSum(total, shared);
  count = blockSum(count, shared);
  if (threadIdx.x == 0)
    *loss = count > 0.0 ? static_cast<float>(total / count)
                        : __int_as_float(0x7fc00000);
}

/// zrt_vocab_loss_backward, one block: counts the rows that take part,
/// g = f32(*dloss / count) (0 when none), then dsums[n] = (g / sums[n, 0],
/// -g) for the counted rows and (0, 0) for the ignored ones.
__global__ void vocabLossBackwardKernel(const float *sums,
                                        const int32_t *targets,
                                        const float *dloss, float *dsums,
                                        int64_t N, int hasIgnore,
                                        int32_t ignore) {
  __shared__ double shared[32];
  double c = 0.0;
  for (int64_t n = threadIdx.x; n < N; n += blockDim.x)
    c += counted(targets, n, hasIgnore, ignore) ? 1.0 : 0.0;
  const int64_t count = static_cast<int64_t>(blockSum(c, shared));
  const float g =
      count > 0 ? __fdiv_rn(*dloss, static_cast<float>(count)) : 0.0f;
  for (int64_t n = threadIdx.x; n < N; n += blockDim.x) {
    const bool in = counted(targets, n, hasIgnore, ignore);
    dsums[2 * n] = in ? __fdiv_rn(g, sums[2 * n]) : 0.0f;
    dsums[2 * n + 1] = in ? -g : 0.0f;
  }
}

} // namespace

namespace zrt_cuda {

int vocab_embedding(const float *table, const int32_t *ids, float *out,
                    int64_t N, int64_t Vl, int64_t C, int64_t part,
                    int64_t parts) {
  const char *fn = "zrt_vocab_embedding";
  if (int st = zrt::checkVocabEmbeddingArgs(fn, table, ids, out, N, Vl, C,
                                            part, parts, zrt_cuda::fail))
    return st;
  vocabEmbeddingKernel<<<vocabRowBlocks(N), vocabRowThreads(C), 0,
                         stream()>>>(table, ids, out, N, Vl, C, part * Vl,
                                     Vl * parts, device_error_word());
  return launched(fn);
}

int vocab_embedding_backward(const float *dout, const int32_t *ids,
                             float *dtable, int64_t N, int64_t Vl, int64_t C,
                             int64_t part, int64_t parts) {
  const char *fn = "zrt_vocab_embedding_backward";
  if (int st = zrt::checkVocabEmbeddingArgs(fn, dout, ids, dtable, N, Vl, C,
                                            part, parts, zrt_cuda::fail))
    return st;
  return embedding_backward_part(fn, dout, ids, dtable, N, Vl, C, part * Vl,
                                 Vl * parts, kDeviceErrorVocabId);
}

int vocab_max(const float *logits, float *out, int64_t N, int64_t Vl,
              int64_t classes, int64_t part) {
  const char *fn = "zrt_vocab_max";
  if (int st = zrt::checkVocabLogitsArgs(fn, logits, out, out, out, out, N, Vl,
                                         classes, part, zrt_cuda::fail))
    return st;
  const int64_t cols = classColumns(Vl, classes, part);
  vocabMaxKernel<<<vocabRowBlocks(N), vocabRowThreads(cols), 0, stream()>>>(
      logits, out, N, Vl, cols);
  return launched(fn);
}

int vocab_exp_sums(const float *logits, const int32_t *targets,
                   const float *max, float *out, int64_t N, int64_t Vl,
                   int64_t classes, int64_t part) {
  const char *fn = "zrt_vocab_exp_sums";
  if (int st = zrt::checkVocabLogitsArgs(fn, logits, targets, max, out, out, N,
                                         Vl, classes, part, zrt_cuda::fail))
    return st;
  const int64_t cols = classColumns(Vl, classes, part);
  vocabExpSumsKernel<<<vocabRowBlocks(N), vocabRowThreads(cols), 0,
                       stream()>>>(logits, targets, max, out, N, Vl, cols,
                                   part * Vl);
  return launched(fn);
}

int vocab_exp_sums_backward(const float *logits, const int32_t *targets,
                            const float *max, const float *grad,
                            float *dlogits, int64_t N, int64_t Vl,
                            int64_t classes, int64_t part) {
  const char *fn = "zrt_vocab_exp_sums_backward";
  if (int st =
          zrt::checkVocabLogitsArgs(fn, logits, targets, max, grad, dlogits, N,
                                    Vl, classes, part, zrt_cuda::fail))
    return st;
  const int64_t cols = classColumns(Vl, classes, part);
  vocabExpSumsBackwardKernel<<<vocabRowBlocks(N), vocabRowThreads(Vl), 0,
                               stream()>>>(logits, targets, max, grad, dlogits,
                                           N, Vl, cols, part * Vl);
  return launched(fn);
}

int vocab_loss(const float *sums, const float *max, const int32_t *targets,
               float *loss, int64_t N, int64_t classes, int has_ignore,
               int32_t ignore) {
  const char *fn = "zrt_vocab_loss";
  if (int st = zrt::checkVocabLossArgs(fn, sums, max, targets, loss, N,
                                       classes, zrt_cuda::fail))
    return st;
  vocabLossKernel<<<1, kVocabFinalThreads, 0, stream()>>>(
      sums, max, targets, loss, N, classes, has_ignore, ignore,
      device_error_word());
  return launched(fn);
}

int vocab_loss_backward(const float *sums, const int32_t *targets,
                        const float *dloss, float *dsums, int64_t N,
                        int has_ignore, int32_t ignore) {
  const char *fn = "zrt_vocab_loss_backward";
  if (int st = zrt::checkVocabLossBackwardArgs(fn, sums, targets, dloss, dsums,
                                               N, zrt_cuda::fail))
    return st;
  vocabLossBackwardKernel<<<1, kVocabFinalThreads, 0, stream()>>>(
      sums, targets, dloss, dsums, N, has_ignore, ignore);
  return launched(fn);
}

} // namespace zrt_cuda
