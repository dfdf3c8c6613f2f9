//===- layout.cu - CUDA backend: copies and axis permutations -------------===//
//
// The byte-moving functions of the lowering (copy_any, copy_2d,
// broadcast_leading, local_shard, permute, permute_0213), with the
// semantics of the CPU runtime's (runtime/src/cpu/lowering_support.cpp,
// matmul.cpp) and its argument checks (runtime/src/common/arg_checks.h). They
// never look at the values, so one kernel per shape moves "words" of 2, 4,
// 8 or 16 bytes: the widest word that divides every row length, stride and
// address of the call (several elements per thread where the layout
// allows).
//
//===----------------------------------------------------------------------===//

#include "device_util.cuh"

#include "../src/common/arg_checks.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace {

using namespace zrt_cuda;

/// Word types of the copy kernels, by size in bytes.
template <int Bytes> struct WordOf;
template <> struct WordOf<2> { using type = uint16_t; };
template <> struct WordOf<4> { using type = uint32_t; };
template <> struct WordOf<8> { using type = uint2; };
template <> struct WordOf<16> { using type = uint4; };

/// The widest word (16, 8 or 4 bytes, else `eb`) that divides the
/// `numCounts` byte counts in `counts` and both addresses.
int wordBytes(int64_t eb, const int64_t *counts, int numCounts, const void *p,
              const void *q) {
  for (int w = 16; w > eb; w /= 2) {
    bool ok = reinterpret_cast<uintptr_t>(p) % w == 0 &&
              reinterpret_cast<uintptr_t>(q) % w == 0;
    for (int i = 0; i < numCounts; ++i)
      ok = ok && counts[i] % w == 0;
    if (ok)
      return w;
  }
  return static_cast<int>(eb);
}

/// dst[r * dstLd + c] = src[r * srcLd + c] for r < rows, c < cols, in words
/// (srcLd == 0 repeats one source row: broadcast_leading).
template <typename W>
__global__ void copy2dKernel(const W *src, int64_t srcLd, W *dst, int64_t dstLd,
                             int64_t rows, int64_t cols) {
  const int64_t total = rows * cols;
  ZRT_GRID_STRIDE(t, total) {
    const int64_t r = t / cols, c = t - r * cols;
    dst[r * dstLd + c] = src[r * srcLd + c];
  }
}

/// A strided copy of rows x cols elements of eb bytes (row strides in
/// elements), in the widest word the layout allows. rows, cols >= 1.
int launchCopy2d(const void *src, int64_t srcLd, void *dst, int64_t dstLd,
                 int64_t rows, int64_t cols, int64_t eb, const char *fn) {
  const int64_t counts[3] = {cols * eb, srcLd * eb, dstLd * eb};
  const int w = wordBytes(eb, counts, 3, src, dst);
  const int64_t k = w / eb; // elements per word
  const int64_t wc = cols / k, ws = srcLd / k, wd = dstLd / k;
  const int blocks = blocksFor(rows * wc);
#define ZRT_COPY2D_CASE(B)                                                     \
  case B: {                                                                    \
    using W = WordOf<B>::type;                                                 \
    copy2dKernel<W><<<blocks, kThreads, 0, stream()>>>(                        \
        static_cast<const W *>(src), ws, static_cast<W *>(dst), wd, rows, wc); \
    break;                                                                     \
  }
  switch (w) {
    ZRT_COPY2D_CASE(2)
    ZRT_COPY2D_CASE(4)
    ZRT_COPY2D_CASE(8)
    ZRT_COPY2D_CASE(16)
  default:
    return fail(ZRT_ERR_INVALID_ARGUMENT, "%s: no %d-byte word", fn, w);
  }
#undef ZRT_COPY2D_CASE
  return launched(fn);
}

/// The output dimensions of a permutation and the input stride (in words)
/// of each, passed by value to the kernel.
struct PermuteArgs {
  int rank;
  int64_t shape[ZRT_MAX_RANK];
  int64_t step[ZRT_MAX_RANK];
};

/// The input index (in words) of output word t: sum_k i_k * step[k], where
/// (i_0, ..., i_{rank-1}) is the row-major multi-index of t over `shape`.
__host__ __device__ inline int64_t permuteSource(const PermuteArgs &a,
                                                 int64_t t) {
  int64_t rem = t, src = 0;
  for (int k = a.rank - 1; k >= 0; --k) {
    const int64_t q = rem / a.shape[k];
    src += (rem - q * a.shape[k]) * a.step[k];
    rem = q;
  }
  return src;
}

template <typename W>
__global__ void permuteKernel(const W *in, W *out, PermuteArgs a,
                              int64_t total) {
  ZRT_GRID_STRIDE(t, total) out[t] = in[permuteSource(a, t)];
}

/// The kernel arguments of zrt_permute (after its argument checks: n =
/// prod(shape) >= 1 elements of eb bytes, perm a permutation) in words of
/// the returned size (bytes), or 0 when the permutation is an identity (one
/// cudaMemcpyAsync). Output dimensions of size 1 are dropped and neighbours
/// that are contiguous in the input merged, so [B, T, H, D] -> [B, H, T, D]
/// moves D-element runs; a contiguous innermost run moves in words of
/// several elements when the run, every outer step and both addresses
/// allow it.
int planPermute(const void *in, const void *out, int rank, const int64_t *shape,
                const int64_t *perm, int64_t eb, PermuteArgs *args) {
  int64_t inStride[ZRT_MAX_RANK];
  int64_t s = 1;
  for (int i = rank - 1; i >= 0; --i) {
    inStride[i] = s;
    s *= shape[i];
  }
  PermuteArgs a{};
  a.rank = 0;
  for (int k = 0; k < rank; ++k) {
    const int64_t d = perm[k];
    if (shape[d] == 1)
      continue;
    // Output dims (prev, d) index the input at iPrev * stepPrev + iD *
    // inStride[d]: one dim of size prev * shape[d] when stepPrev ==
    // inStride[d] * shape[d].
    if (a.rank > 0 && a.step[a.rank - 1] == inStride[d] * shape[d]) {
      a.shape[a.rank - 1] *= shape[d];
      a.step[a.rank - 1] = inStride[d];
    } else {
      a.shape[a.rank] = shape[d];
      a.step[a.rank] = inStride[d];
      ++a.rank;
    }
  }
  *args = a;
  if (a.rank == 0 || (a.rank == 1 && a.step[0] == 1))
    return 0;
  int w = static_cast<int>(eb);
  if (a.step[a.rank - 1] == 1) {
    int64_t counts[ZRT_MAX_RANK];
    counts[0] = a.shape[a.rank - 1] * eb;
    for (int i = 0; i + 1 < a.rank; ++i)
      counts[i + 1] = a.step[i] * eb;
    w = wordBytes(eb, counts, a.rank, in, out);
  }
  const int64_t k = w / eb; // elements per word
  for (int i = 0; i + 1 < a.rank; ++i)
    a.step[i] /= k;
  a.shape[a.rank - 1] /= k;
  *args = a;
  return w;
}

/// zrt_permute after its argument checks (n >= 1, in != out).
int launchPermute(const void *in, void *out, int rank, const int64_t *shape,
                  const int64_t *perm, int64_t eb, int64_t n, const char *fn) {
  PermuteArgs a;
  const int w = planPermute(in, out, rank, shape, perm, eb, &a);
  if (w == 0)
    return check(cudaMemcpyAsync(out, in, static_cast<size_t>(n * eb),
                                 cudaMemcpyDeviceToDevice, stream()),
                 ZRT_ERR_INVALID_ARGUMENT, fn, "cudaMemcpyAsync");
  const int64_t total = n * eb / w;
  const int blocks = blocksFor(total);
#define ZRT_PERMUTE_CASE(B)                                                    \
  case B: {                                                                    \
    using W = WordOf<B>::type;                                                 \
    permuteKernel<W><<<blocks, kThreads, 0, stream()>>>(                       \
        static_cast<const W *>(in), static_cast<W *>(out), a, total);          \
    break;                                                                     \
  }
  switch (w) {
    ZRT_PERMUTE_CASE(2)
    ZRT_PERMUTE_CASE(4)
    ZRT_PERMUTE_CASE(8)
    ZRT_PERMUTE_CASE(16)
  default:
    return fail(ZRT_ERR_INVALID_ARGUMENT, "%s: no %d-byte word", fn, w);
  }
#undef ZRT_PERMUTE_CASE
  return launched(fn);
}

} // namespace

namespace zrt_cuda {

int copy_any(const void *src, void *dst, int64_t n, int dtype) {
  const char *fn = "zrt_copy_any";
  if (int st = zrt::checkCopyAnyArgs(fn, src, dst, n, dtype, zrt_cuda::fail))
    return st;
  return moveBytes(dst, src, n * zrt::dtypeBytes(dtype), fn);
}

int copy_2d(const void *src, int64_t src_ld, void *dst, int64_t dst_ld,
            int64_t rows, int64_t cols, int dtype) {
  const char *fn = "zrt_copy_2d";
  if (int st = zrt::checkCopy2dArgs(fn, src, src_ld, dst, dst_ld, rows, cols,
                                    dtype, zrt_cuda::fail))
    return st;
  const int64_t eb = zrt::dtypeBytes(dtype);
  if (rows == 0 || cols == 0)
    return ZRT_OK;
  if (rows == 1 || (src_ld == cols && dst_ld == cols))
    return check(cudaMemcpyAsync(dst, src,
                                 static_cast<size_t>(rows * cols * eb),
                                 cudaMemcpyDeviceToDevice, stream()),
                 ZRT_ERR_INVALID_ARGUMENT, fn, "cudaMemcpyAsync");
  return launchCopy2d(src, src_ld, dst, dst_ld, rows, cols, eb, fn);
}

int broadcast_leading(const void *in, void *out, int64_t lead, int64_t n,
                      int dtype) {
  const char *fn = "zrt_broadcast_leading";
  if (int st = zrt::checkBroadcastLeadingArgs(fn, in, out, lead, n, dtype,
                                              zrt_cuda::fail))
    return st;
  // Every output row reads the same input: a row stride of 0.
  if (lead == 0 || n == 0)
    return ZRT_OK;
  const int64_t eb = zrt::dtypeBytes(dtype);
  if (lead == 1)
    return check(cudaMemcpyAsync(out, in, static_cast<size_t>(n * eb),
                                 cudaMemcpyDeviceToDevice, stream()),
                 ZRT_ERR_INVALID_ARGUMENT, fn, "cudaMemcpyAsync");
  return launchCopy2d(in, 0, out, n, lead, n, eb, fn);
}

int permute(const void *in, void *out, int rank, const int64_t *shape,
            const int64_t *perm, int dtype) {
  const char *fn = "zrt_permute";
  int64_t n = 0;
  if (int st = zrt::checkPermuteArgs(fn, in, out, rank, shape, perm, dtype, &n,
                                     zrt_cuda::fail))
    return st;
  if (n == 0)
    return ZRT_OK;
  return launchPermute(in, out, rank, shape, perm, zrt::dtypeBytes(dtype), n,
                       fn);
}

int permute_0213(const float *in, float *out, int64_t A, int64_t B, int64_t C,
                 int64_t D) {
  const char *fn = "zrt_permute_0213";
  if (int st =
          zrt::checkPermute0213Args(fn, in, out, A, B, C, D, zrt_cuda::fail))
    return st;
  const int64_t total = A * B * C * D;
  if (total == 0)
    return ZRT_OK;
  // [A, B, C, D] -> [A, C, B, D]: zrt_permute's perm (0, 2, 1, 3).
  const int64_t shape[4] = {A, B, C, D}, perm[4] = {0, 2, 1, 3};
  return launchPermute(in, out, 4, shape, perm, 4, total, fn);
}

int local_shard(const void *in, void *out, int64_t n, int rank, int dtype) {
  const char *fn = "zrt_local_shard";
  if (int st =
          zrt::checkLocalShardArgs(fn, in, out, n, rank, dtype, zrt_cuda::fail))
    return st;
  const int64_t eb = zrt::dtypeBytes(dtype);
  if (n == 0)
    return ZRT_OK;
  const char *src = static_cast<const char *>(in) + rank * n * eb;
  return check(cudaMemcpyAsync(out, src, static_cast<size_t>(n * eb),
                               cudaMemcpyDeviceToDevice, stream()),
               ZRT_ERR_INVALID_ARGUMENT, fn, "cudaMemcpyAsync");
}

} // namespace zrt_cuda
