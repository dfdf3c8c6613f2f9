//===- lowering_support.cpp - kernels the generated code needs ------------===//
//
// Runtime functions that the EmitC lowering (convert-train-to-emitc) calls
// where the kernels of zrt.h do not match a `train` / `zero` op directly:
// strided and dtype-generic copies (broadcast, split, concat, permutations,
// pack/unpack, local shards), cross-entropy over padded logits (f32 and bf16
// logits), bf16 accumulation, clipping as `train.clip_coef` defines it,
// AdamW over a rank's slice of a shard group, and the deterministic
// parameter initialization of whole tensors and shards. Declared in the
// "Lowering support" section at the end of zrt.h (the layer-norm statistics
// of that section are in norm.cpp, next to zrt_layer_norm).
//
//===----------------------------------------------------------------------===//

#include "common/arg_checks.h"
#include "common/internal.h"
#include "common/rng_math.h"
#include "common/shard_runs.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace {

int checkTargetsRange(const char *fn, const int32_t *targets, int64_t N,
                      int64_t numClasses) {
  for (int64_t i = 0; i < N; ++i)
    if (targets[i] < 0 || targets[i] >= numClasses)
      return zrt::fail(ZRT_ERR_OUT_OF_RANGE,
                       "%s: targets[%lld] = %d is outside [0, %lld)", fn,
                       (long long)i, targets[i], (long long)numClasses);
  return ZRT_OK;
}

/// As loss.cpp: row max and log(sum exp(row - max)) over the first C
/// columns, accumulated in double. T is float or zrt_bf16 (widened).
template <typename T>
void rowLse(const T *row, int64_t C, float *maxOut, double *logSumOut) {
  float mx = -INFINITY;
  for (int64_t j = 0; j < C; ++j) {
    const float r = zrt::toF32(row[j]);
    mx = r > mx ? r : mx;
  }
  double sum = 0.0;
  for (int64_t j = 0; j < C; ++j)
    sum += std::exp(static_cast<double>(zrt::toF32(row[j]) - mx));
  *maxOut = mx;
  *logSumOut = std::log(sum);
}

/// zrt_cross_entropy_padded(_bf16): logits [N, V] of T.
template <typename T>
int crossEntropyPadded(const char *fn, const T *logits, const int32_t *targets,
                       float *loss, int64_t N, int64_t V, int64_t num_classes) {
  if (int st = zrt::checkCrossEntropyPaddedArgs(fn, logits, targets, loss, N, V,
                                                num_classes, zrt::fail))
    return st;
  if (int st = checkTargetsRange(fn, targets, N, num_classes))
    return st;
  // Fixed lanes of rows: the same bits for every thread count.
  const double total = zrt::fixedLaneSum(
      N, N * num_classes > zrt::kParallelGrain, [&](int64_t b, int64_t e) {
        double t = 0.0;
        for (int64_t i = b; i < e; ++i) {
          const T *row = logits + i * V;
          float mx;
          double logSum;
          rowLse(row, num_classes, &mx, &logSum);
          t += logSum - static_cast<double>(zrt::toF32(row[targets[i]]) - mx);
        }
        return t;
      });
  *loss = N > 0 ? static_cast<float>(total / static_cast<double>(N))
                : std::numeric_limits<float>::quiet_NaN();
  return ZRT_OK;
}

/// One row of the gradient: drow[j] = exp((row[j] - mx) - ls) * g, minus g
/// at the target, rounded once, for j < num_classes; 0 in the padding.
/// drow may be row (each element is read before it is written).
template <typename T>
void writeRowGradient(const T *row, T *drow, int64_t t, float mx, double logSum,
                      float g, int64_t num_classes, int64_t V) {
  const float ls = static_cast<float>(logSum);
  for (int64_t j = 0; j < num_classes; ++j) {
    const float d = std::exp((zrt::toF32(row[j]) - mx) - ls) * g;
    drow[j] = zrt::fromF32<T>(j == t ? d - g : d);
  }
  for (int64_t j = num_classes; j < V; ++j)
    drow[j] = zrt::fromF32<T>(0.0f);
}

/// zrt_cross_entropy_padded_fused(_bf16): the loss of crossEntropyPadded
/// and the gradient of crossEntropyPaddedBackward, written over the logits
/// [N, V] of T, with one row statistics pass per row.
template <typename T>
int crossEntropyPaddedFused(const char *fn, T *logits, const int32_t *targets,
                            float *loss, float dloss, int64_t N, int64_t V,
                            int64_t num_classes) {
  if (int st = zrt::checkCrossEntropyPaddedArgs(fn, logits, targets, loss, N, V,
                                                num_classes, zrt::fail))
    return st;
  if (int st = checkTargetsRange(fn, targets, N, num_classes))
    return st;
  const float g = N > 0 ? dloss / static_cast<float>(N) : 0.0f;
  // Fixed lanes of rows: the same bits for every thread count.
  const double total = zrt::fixedLaneSum(
      N, N * num_classes > zrt::kParallelGrain, [&](int64_t b, int64_t e) {
        double sum = 0.0;
        for (int64_t i = b; i < e; ++i) {
          T *row = logits + i * V;
          const int64_t t = targets[i];
          float mx;
          double logSum;
          rowLse(row, num_classes, &mx, &logSum);
          sum += logSum - static_cast<double>(zrt::toF32(row[t]) - mx);
          writeRowGradient(row, row, t, mx, logSum, g, num_classes, V);
        }
        return sum;
      });
  *loss = N > 0 ? static_cast<float>(total / static_cast<double>(N))
                : std::numeric_limits<float>::quiet_NaN();
  return ZRT_OK;
}

/// zrt_cross_entropy_padded_backward(_bf16): logits, dlogits [N, V] of T.
/// The target's entry softmax - 1 is formed in f32 and rounded once.
template <typename T>
int crossEntropyPaddedBackward(const char *fn, const T *logits,
                               const int32_t *targets, const float *dloss,
                               T *dlogits, int64_t N, int64_t V,
                               int64_t num_classes) {
  if (int st = zrt::checkCrossEntropyPaddedBackwardArgs(
          fn, logits, targets, dloss, dlogits, N, V, num_classes, zrt::fail))
    return st;
  if (int st = checkTargetsRange(fn, targets, N, num_classes))
    return st;
  const float g = N > 0 ? *dloss / static_cast<float>(N) : 0.0f;
#pragma omp parallel for schedule(static) if (N * V > zrt::kParallelGrain)
  for (int64_t i = 0; i < N; ++i) {
    float mx;
    double logSum;
    rowLse(logits + i * V, num_classes, &mx, &logSum);
    writeRowGradient(logits + i * V, dlogits + i * V, targets[i], mx, logSum,
                     g, num_classes, V);
  }
  return ZRT_OK;
}

/// y[i] = round(y[i] + x[i]) over [b, e), the sum in f32 (zrt_accumulate_bf16).
ZRT_SIMD_CLONES
void accumulateBf16Chunk(const zrt_bf16 *x, zrt_bf16 *y, int64_t b,
                         int64_t e) {
  for (int64_t i = b; i < e; ++i)
    y[i] = zrt::f32ToBf16(zrt::bf16ToF32(y[i]) + zrt::bf16ToF32(x[i]));
}

} // namespace

extern "C" {

/// The CPU backend's arenas are host memory: both directions are memcpy.
static int copyAcross(const char *fn, void *dst, const void *src,
                      int64_t bytes) {
  ZRT_REQUIRE(bytes >= 0, "%s: bytes < 0", fn);
  ZRT_REQUIRE_BUF(fn, bytes, src);
  ZRT_REQUIRE_BUF(fn, bytes, dst);
  if (bytes > 0)
    std::memcpy(dst, src, static_cast<size_t>(bytes));
  return ZRT_OK;
}

int zrt_copy_to_device(void *dst, const void *src, int64_t bytes) {
  return copyAcross("zrt_copy_to_device", dst, src, bytes);
}

int zrt_copy_to_host(void *dst, const void *src, int64_t bytes) {
  return copyAcross("zrt_copy_to_host", dst, src, bytes);
}

int zrt_copy_any(const void *src, void *dst, int64_t n, int dtype) {
  const char *fn = "zrt_copy_any";
  if (int st = zrt::checkCopyAnyArgs(fn, src, dst, n, dtype, zrt::fail))
    return st;
  const int64_t eb = zrt::dtypeBytes(dtype);
  if (n > 0 && src != dst)
    std::memmove(dst, src, static_cast<size_t>(n * eb));
  return ZRT_OK;
}

int zrt_copy_2d(const void *src, int64_t src_ld, void *dst, int64_t dst_ld,
                int64_t rows, int64_t cols, int dtype) {
  const char *fn = "zrt_copy_2d";
  if (int st = zrt::checkCopy2dArgs(fn, src, src_ld, dst, dst_ld, rows, cols,
                                    dtype, zrt::fail))
    return st;
  const int64_t eb = zrt::dtypeBytes(dtype);
  const char *s = static_cast<const char *>(src);
  char *d = static_cast<char *>(dst);
  const size_t rowBytes = static_cast<size_t>(cols * eb);
#pragma omp parallel for schedule(static) if (rows * cols > zrt::kParallelGrain)
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(d + r * dst_ld * eb, s + r * src_ld * eb, rowBytes);
  return ZRT_OK;
}

int zrt_broadcast_leading(const void *in, void *out, int64_t lead, int64_t n,
                          int dtype) {
  const char *fn = "zrt_broadcast_leading";
  if (int st = zrt::checkBroadcastLeadingArgs(fn, in, out, lead, n, dtype,
                                              zrt::fail))
    return st;
  // Every output row reads the same input: a row stride of 0.
  if (lead == 0 || n == 0)
    return ZRT_OK;
  const int64_t eb = zrt::dtypeBytes(dtype);
  const char *s = static_cast<const char *>(in);
  char *d = static_cast<char *>(out);
#pragma omp parallel for schedule(static) if (lead * n > zrt::kParallelGrain)
  for (int64_t l = 0; l < lead; ++l)
    std::memcpy(d + l * n * eb, s, static_cast<size_t>(n * eb));
  return ZRT_OK;
}

int zrt_permute(const void *in, void *out, int rank, const int64_t *shape,
                const int64_t *perm, int dtype) {
  const char *fn = "zrt_permute";
  int64_t n = 0;
  if (int st = zrt::checkPermuteArgs(fn, in, out, rank, shape, perm, dtype, &n,
                                     zrt::fail))
    return st;
  const int64_t eb = zrt::dtypeBytes(dtype);
  if (n == 0)
    return ZRT_OK;
  // Input strides, then the input stride of each output dimension.
  int64_t inStride[ZRT_MAX_RANK], outShape[ZRT_MAX_RANK], step[ZRT_MAX_RANK];
  int64_t s = 1;
  for (int i = rank - 1; i >= 0; --i) {
    inStride[i] = s;
    s *= shape[i];
  }
  for (int i = 0; i < rank; ++i) {
    outShape[i] = shape[perm[i]];
    step[i] = inStride[perm[i]];
  }
  const char *src = static_cast<const char *>(in);
  char *dst = static_cast<char *>(out);
  // Rows of the innermost output dimension in parallel.
  const int64_t inner = rank > 0 ? outShape[rank - 1] : 1;
  const int64_t innerStep = rank > 0 ? step[rank - 1] : 0;
  const int64_t rows = n / inner;
#pragma omp parallel for schedule(static) if (n > zrt::kParallelGrain)
  for (int64_t r = 0; r < rows; ++r) {
    // Decompose the row index over the outer output dimensions.
    int64_t rem = r, base = 0;
    for (int i = rank - 2; i >= 0; --i) {
      const int64_t idx = rem % outShape[i];
      rem /= outShape[i];
      base += idx * step[i];
    }
    char *d = dst + r * inner * eb;
    if (eb == 4) {
      const float *sf = reinterpret_cast<const float *>(src);
      float *df = reinterpret_cast<float *>(d);
      for (int64_t j = 0; j < inner; ++j)
        df[j] = sf[base + j * innerStep];
    } else {
      for (int64_t j = 0; j < inner; ++j)
        std::memcpy(d + j * eb, src + (base + j * innerStep) * eb,
                    static_cast<size_t>(eb));
    }
  }
  return ZRT_OK;
}

int zrt_cross_entropy_padded(const float *logits, const int32_t *targets,
                             float *loss, int64_t N, int64_t V,
                             int64_t num_classes) {
  return crossEntropyPadded("zrt_cross_entropy_padded", logits, targets, loss,
                            N, V, num_classes);
}

int zrt_cross_entropy_padded_bf16(const zrt_bf16 *logits,
                                  const int32_t *targets, float *loss,
                                  int64_t N, int64_t V, int64_t num_classes) {
  return crossEntropyPadded("zrt_cross_entropy_padded_bf16", logits, targets,
                            loss, N, V, num_classes);
}

int zrt_cross_entropy_padded_backward(const float *logits,
                                      const int32_t *targets,
                                      const float *dloss, float *dlogits,
                                      int64_t N, int64_t V,
                                      int64_t num_classes) {
  return crossEntropyPaddedBackward("zrt_cross_entropy_padded_backward", logits,
                                    targets, dloss, dlogits, N, V, num_classes);
}

int zrt_cross_entropy_padded_backward_bf16(const zrt_bf16 *logits,
                                           const int32_t *targets,
                                           const float *dloss,
                                           zrt_bf16 *dlogits, int64_t N,
                                           int64_t V, int64_t num_classes) {
  return crossEntropyPaddedBackward("zrt_cross_entropy_padded_backward_bf16",
                                    logits, targets, dloss, dlogits, N, V,
                                    num_classes);
}

int zrt_cross_entropy_padded_fused(float *logits, const int32_t *targets,
                                   float *loss, float dloss, int64_t N,
                                   int64_t V, int64_t num_classes) {
  return crossEntropyPaddedFused("zrt_cross_entropy_padded_fused", logits,
                                 targets, loss, dloss, N, V, num_classes);
}

int zrt_cross_entropy_padded_fused_bf16(zrt_bf16 *logits,
                                        const int32_t *targets, float *loss,
                                        float dloss, int64_t N, int64_t V,
                                        int64_t num_classes) {
  return crossEntropyPaddedFused("zrt_cross_entropy_padded_fused_bf16", logits,
                                 targets, loss, dloss, N, V, num_classes);
}

int zrt_fill_bf16(zrt_bf16 *out, float value, int64_t n) {
  if (int st = zrt::checkFillBf16Args("zrt_fill_bf16", out, n, zrt::fail))
    return st;
  const zrt_bf16 v = zrt::f32ToBf16(value);
  for (int64_t i = 0; i < n; ++i)
    out[i] = v;
  return ZRT_OK;
}

int zrt_accumulate_bf16(const zrt_bf16 *x, zrt_bf16 *y, int64_t n) {
  if (int st = zrt::checkAccumulateBf16Args("zrt_accumulate_bf16", x, y, n,
                                            zrt::fail))
    return st;
  zrt::parallelChunks(n, zrt::kParallelGrain, [&](int64_t b, int64_t e) {
    accumulateBf16Chunk(x, y, b, e);
  });
  return ZRT_OK;
}

int zrt_fill_f16(zrt_f16 *out, float value, int64_t n) {
  if (int st = zrt::checkFillBf16Args("zrt_fill_f16", out, n, zrt::fail))
    return st;
  const zrt_f16 v = zrt::f32ToF16(value);
  for (int64_t i = 0; i < n; ++i)
    out[i] = v;
  return ZRT_OK;
}

int zrt_accumulate_f16(const zrt_f16 *x, zrt_f16 *y, int64_t n) {
  if (int st = zrt::checkAccumulateBf16Args("zrt_accumulate_f16", x, y, n,
                                            zrt::fail))
    return st;
#pragma omp parallel for schedule(static) if (n > zrt::kParallelGrain)
  for (int64_t i = 0; i < n; ++i)
    y[i] = zrt::f32ToF16(zrt::f16ToF32(y[i]) + zrt::f16ToF32(x[i]));
  return ZRT_OK;
}

int zrt_clip_coef_scaled(const float *sum_squares, const float *grad_scale,
                         float max_norm, float *coef, float *norm) {
  if (int st = zrt::checkClipCoefArgs("zrt_clip_coef_scaled", sum_squares,
                                      grad_scale, coef, norm, zrt::fail))
    return st;
  const float s = *grad_scale;
  const float total = s * std::sqrt(*sum_squares);
  float c = s;
  if (max_norm > 0.0f)
    c = s * std::min(1.0f, max_norm / (total + 1e-6f));
  *norm = total;
  *coef = c;
  return ZRT_OK;
}

int zrt_shard_adamw(float *param, float *m, float *v, const void *grad,
                    int grad_dtype, int64_t shard, int rank, int num_members,
                    const int64_t *offsets, const int64_t *numels,
                    const uint8_t *decay, double lr, double beta1, double beta2,
                    double eps, double weight_decay, float grad_scale,
                    int64_t step) {
  if (int st = zrt::checkShardAdamwArgs(
          "zrt_shard_adamw", param, m, v, grad, grad_dtype, shard, rank,
          num_members, offsets, numels, decay, step, zrt::fail))
    return st;
  return zrt::shardAdamw(param, m, v, grad, grad_dtype, shard, rank,
                         num_members, offsets, numels, decay, lr, beta1, beta2,
                         eps, weight_decay, grad_scale, step, zrt_adamw_step,
                         zrt_adamw_step_bf16_grad, zrt_adamw_step_f16_grad);
}

int zrt_local_shard(const void *in, void *out, int64_t n, int rank, int dtype) {
  if (int st = zrt::checkLocalShardArgs("zrt_local_shard", in, out, n, rank,
                                        dtype, zrt::fail))
    return st;
  const int64_t eb = zrt::dtypeBytes(dtype);
  if (n > 0)
    std::memcpy(out, static_cast<const char *>(in) + rank * n * eb,
                static_cast<size_t>(n * eb));
  return ZRT_OK;
}


int zrt_init_param_slice(void *data, int dtype, int64_t slice_begin,
                         int64_t slice_n, int64_t member_offset,
                         int64_t member_numel, int init_kind, float std,
                         uint64_t seed) {
  if (int st = zrt::checkInitParamSliceArgs(
          "zrt_init_param_slice", data, dtype, slice_begin, slice_n,
          member_offset, member_numel, init_kind, std, zrt::fail))
    return st;
  const zrt::ParamSliceOverlap o =
      zrt::paramSliceOverlap(slice_begin, slice_n, member_offset, member_numel);
  if (o.n == 0)
    return ZRT_OK;
  const int64_t first = o.first, n = o.n, at = o.at;
  if (dtype == ZRT_F32) {
    float *dst = static_cast<float *>(data) + at;
    if (init_kind == ZRT_INIT_NORMAL)
      return zrt_init_normal(dst, n, 0.0f, std, seed, first);
    return zrt_fill(dst, init_kind == ZRT_INIT_ONES ? 1.0f : 0.0f, n);
  }
  const bool f16 = dtype == ZRT_F16;
  zrt_bf16 *dst = static_cast<zrt_bf16 *>(data) + at;
  if (init_kind != ZRT_INIT_NORMAL)
    return (f16 ? zrt_fill_f16 : zrt_fill_bf16)(
        dst, init_kind == ZRT_INIT_ONES ? 1.0f : 0.0f, n);
  // Normal values in f32 chunks, rounded to bf16 (the same f32 values a
  // master copy receives).
  constexpr int64_t kChunk = 4096;
  float buf[kChunk];
  for (int64_t c = 0; c < n; c += kChunk) {
    const int64_t m = std::min(kChunk, n - c);
    if (int st = zrt_init_normal(buf, m, 0.0f, std, seed, first + c))
      return st;
    (f16 ? zrt_cast_f32_to_f16 : zrt_cast_f32_to_bf16)(buf, dst + c, m);
  }
  return ZRT_OK;
}

} // extern "C"
