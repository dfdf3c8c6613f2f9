//===- loss.cu - CUDA backend: embedding, cross-entropy and MSE -----------===//
//
// zrt_embedding(_backward)(_bf16), zrt_cross_entropy(_backward),
// zrt_cross_entropy_padded(_backward, _fused), zrt_cross_entropy_masked
// (_backward)(_bf16) and zrt_mse(_backward) on
// device memory, with the CPU runtime's semantics (runtime/src/cpu/loss.cpp,
// lowering_support.cpp):
//  * Bad token ids and targets are data: the kernels clamp them into range
//    (never reading or writing out of bounds) and raise the device error
//    word; the next copy_to_host / copy_to_device reports
//    ZRT_ERR_OUT_OF_RANGE (zrt_cuda.h, execution model).
//  * Cross-entropy: one block per row, a max pass in f32 and a sum pass of
//    exp(row - max) summed in double, as the CPU's rowLse, except that each
//    exponential is expf (f32, CUDA's <= 2 ulp) where the CPU calls exp in
//    double: double exp is ~25 FP64 instructions, and at GPT-2's 823M logits
//    per step (B = 16, T = 1024) it would take ~1.2 ms of an H200's FP64
//    rate against ~0.35 ms to read the bf16 logits. The loss differs from
//    the CPU's by about 1e-7 relative (the parity runs allow 1e-4). Per-row
//    losses go to the workspace and one block adds them in a fixed order,
//    so the mean is deterministic.
//  * Native bf16 cross-entropy (zrt_cross_entropy_padded(_backward)_bf16):
//    the same kernels templated over the logits' element type, with the
//    row's first num_classes logits first staged in shared memory (one
//    asynchronous 16-byte copy per 8 logits, all in flight at once; 100 KB
//    for GPT-2's 50257 classes, two 512-thread blocks per SM): the forward
//    then reads every logit once from global memory and the backward reads
//    it once and writes dlogits once (16-byte stores), with the f32
//    kernels' arithmetic on the widened values (f32 max, double sum of
//    f32 exp, separately rounded f32 gradient), dlogits rounded once. Rows
//    longer than shared memory holds (about 115K classes) take the f32
//    kernels' passes over global memory instead.
//  * Rows in registers (crossEntropyRegKernel, the bf16 path whenever V is a
//    multiple of 8, the rows 16-byte aligned and V <= 57344, GPT-2's case):
//    one persistent 1024-thread block per SM holds its current row in
//    registers (7 uint4 = 56 logits per thread) while the next row streams
//    into a 100 KB shared buffer by cp.async; max, exp-sum and gradient run
//    from registers. The staged kernels above serialize each block's load
//    and arithmetic with only two blocks per SM (measured at ~40% of an
//    H200's bandwidth): whenever both blocks compute, the SM's memory
//    pipe idles; here the next row's load always overlaps the current
//    row's arithmetic. Same per-element
//    arithmetic (f32 max, double sum of expf, ceGrad), a different block
//    reduction order; forward, backward and fused share the kernel and its
//    launch configuration, so the fused call stays bit-identical to the two
//    (when the separate backward's dlogits is 16-byte aligned as the
//    logits are, as arena tensors are; a less aligned dlogits sends that
//    backward to the staged kernel, whose double sum runs in another
//    order: the gradient may then differ in the last bit).
//  * Masked cross-entropy (zrt_cross_entropy_masked(_backward)(_bf16),
//    zrt/decoder.h): the padded kernels with an ignore_index: ignored rows
//    add 0 to the sum (forward) and get zero gradient rows (backward); the
//    mean runs over the M counted rows (crossEntropyMeanKernel counts them
//    next to the sum, NaN for M = 0; the backward counts them first into
//    the workspace, countTargetsKernel, and scales by *dloss / M in f32 as
//    the CPU). bf16 rows are staged in shared memory when they fit; the
//    register-row kernels below are not used (they take rows of at most
//    57344 classes, fewer than Llama 3's 128256 or Qwen3's 151936).
//  * Fused padded cross-entropy (zrt_cross_entropy_padded_fused(_bf16),
//    llm.c's fused classifier): one kernel per row computes the row's
//    statistics once, writes its loss and overwrites the logits with the
//    gradient, sharing the forward's and the backward's row code and launch
//    configuration, so its loss and gradient are theirs bit for bit.
//  * embedding_backward is deterministic without floating-point atomics:
//    a stable radix sort of (id, token) pairs groups the tokens by id in
//    token order, and each group's row of dtable is summed in that order,
//    which is the CPU's order (bit-identical results). The bf16 embedding
//    and its backward are the same kernels templated over the element type
//    (rows copied; f32 sums of the widened dout, rounded once). When C is a
//    multiple of 16 bytes' elements and dout is 16-byte aligned, the sums
//    run in tiles (embeddingTileKernel): 256 sorted tokens by 64 bf16 (32
//    f32) columns per block, the tile's dout vectors loaded by all threads
//    at once into shared memory and summed per column in token order, so a
//    frequent token's long run is spread over many loads in flight and
//    C / 64 blocks instead of one load at a time in one block.
//
//===----------------------------------------------------------------------===//

#include "device_util.cuh"

#include "../src/common/arg_checks.h"
#include "../src/common/decoder_args.h"

#include <cub/device/device_radix_sort.cuh>
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <climits>
#include <type_traits>

namespace {

using namespace zrt_cuda;

/// Most blocks of the row kernels (rows beyond are grid-strided).
constexpr int64_t kLossMaxRowBlocks = int64_t(1) << 16;
/// Threads of the single block that finishes a reduction.
constexpr int kLossFinalThreads = 1024;
/// Most blocks of the first stage of a reduction (fixed by n alone).
constexpr int kLossReduceBlocks = 1024;

int lossRowBlocks(int64_t rows) {
  return static_cast<int>(rows < kLossMaxRowBlocks ? rows : kLossMaxRowBlocks);
}

/// Threads per block of a kernel that walks rows of C columns: a multiple
/// of 32, at most kThreads.
int lossRowThreads(int64_t C) {
  if (C >= kThreads)
    return kThreads;
  const int64_t t = (C + 31) / 32 * 32;
  return static_cast<int>(t < 32 ? 32 : t);
}

/// Threads of a block of the staged bf16 cross-entropy kernels (two blocks
/// per SM at GPT-2's vocabulary: 64 warps of latency hiding).
constexpr int kStagedThreads = 512;

/// Threads of a staged block for rows of `cols` logits: kStagedThreads, or
/// fewer (a multiple of 32) for short rows.
int stagedRowThreads(int64_t cols) {
  if (cols >= kStagedThreads)
    return kStagedThreads;
  const int64_t t = (cols + 31) / 32 * 32;
  return static_cast<int>(t < 32 ? 32 : t);
}

/// Dynamic shared memory (bytes) of a staged kernel for rows of `cols`
/// logits: cols + 7 bf16 (stageRow shifts the row by up to 7 elements),
/// rounded up to 16 bytes.
int64_t stagedBytes(int64_t cols) { return ((cols + 7) * 2 + 15) / 16 * 16; }

/// Static shared memory of the row kernels (blockRowLse) and a margin: what
/// the per-block opt-in limit must hold besides stagedBytes.
constexpr int64_t kStagedStaticBytes = 1024;

/// Whether rows of `cols` bf16 logits fit in the shared memory of one block
/// (cudaDevAttrMaxSharedMemoryPerBlockOptin); when they do not, the
/// unstaged kernels run. A failing device query is reported.
int stagedFits(int64_t cols, bool *fits, const char *fn) {
  int optin = 0;
  if (int st = sharedMemoryOptin(&optin, fn))
    return st;
  *fits = stagedBytes(cols) + kStagedStaticBytes <= optin;
  return ZRT_OK;
}

/// 16-byte vectors (8 bf16) of a row that each thread of the register-row
/// cross-entropy kernels holds in registers, and their most threads: rows of
/// up to 7 * 1024 * 8 = 57344 logits (GPT-2's 50304 in 6288 vectors: 6 or
/// 7 per thread) take them.
constexpr int kRegRowVecs = 7;
constexpr int kRegRowThreads = 1024;

/// Threads of a register-row block for rows of V logits (V % 8 == 0): the
/// fewest multiple of 32 that holds the row's V / 8 vectors kRegRowVecs per
/// thread. A function of V alone, so that the forward, the backward and the
/// fused kernel reduce a row in the same order.
int regRowThreads(int64_t V) {
  const int64_t perThread = (V / kBf16PerVec + kRegRowVecs - 1) / kRegRowVecs;
  const int64_t t = (perThread + 31) / 32 * 32;
  return static_cast<int>(t < 32 ? 32 : t);
}

/// Whether bf16 rows of V logits (row stride V, the first `cols` counted)
/// take the register-row kernels: V a multiple of 8 and every row (logits,
/// and dlogits when not NULL) 16-byte aligned, V / 8 vectors within
/// kRegRowVecs * kRegRowThreads, and the prefetch buffer (V * 2 bytes) within
/// the shared-memory opt-in. Otherwise the staged or unstaged kernels run.
/// A failing device query is reported.
int regRowFits(int64_t V, const void *logits, const void *dlogits, bool *fits,
               const char *fn) {
  *fits = false;
  if (V % kBf16PerVec != 0 || V / kBf16PerVec > kRegRowVecs * kRegRowThreads ||
      (reinterpret_cast<uintptr_t>(logits) & 15u) != 0 ||
      (reinterpret_cast<uintptr_t>(dlogits) & 15u) != 0)
    return ZRT_OK;
  int optin = 0;
  if (int st = sharedMemoryOptin(&optin, fn))
    return st;
  *fits = V * 2 + kStagedStaticBytes <= optin;
  return ZRT_OK;
}

/// Blocks of a register-row kernel over `rows` rows: one per SM (each holds
/// 1024 threads' registers and a row's prefetch buffer), fewer for few rows.
int regRowBlocks(int64_t rows, int *blocks, const char *fn) {
  int dev = 0, sms = 0;
  if (int st = check(cudaGetDevice(&dev), ZRT_ERR_INVALID_ARGUMENT, fn,
                     "cudaGetDevice"))
    return st;
  if (int st = check(
          cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev),
          ZRT_ERR_INVALID_ARGUMENT, fn, "cudaDeviceGetAttribute"))
    return st;
  const int b = lossRowBlocks(rows);
  *blocks = sms > 0 && sms < b ? sms : b;
  return ZRT_OK;
}

/// Rounds a byte offset up to 256 (cudaMalloc alignment) for carving the
/// workspace.
int64_t align256(int64_t bytes) { return (bytes + 255) / 256 * 256; }

/// The quiet NaN std::numeric_limits<float>::quiet_NaN() (0x7fc00000).
__device__ __forceinline__ float quietNaN() {
  return __int_as_float(0x7fc00000);
}

//===----------------------------------------------------------------------===//
// Embedding
//===----------------------------------------------------------------------===//

/// v clamped into [0, n) (n == 0: -1, unused by callers): bad token ids and
/// targets are data (see the file comment), so an out-of-range v raises the
/// device error `code` (when `raise`: one thread per row raises it) and reads
/// the nearest valid row instead.
__device__ __forceinline__ int64_t clampOrRaise(int64_t v, int64_t n, int code,
                                                int *errorWord, bool raise) {
  if (v >= 0 && v < n)
    return v;
  if (raise)
    raiseDeviceError(errorWord, code);
  return v < 0 ? 0 : n - 1;
}

/// zrt_embedding(_bf16): one block per token row (grid-strided):
/// out[i, :] = table[ids[i], :] (T = float or zrt_bf16: the rows are
/// copied, bits unchanged). A bad id raises the error word and reads the
/// nearest valid row (zeros when V == 0).
template <typename T>
__global__ void embeddingKernel(const T *table, const int32_t *ids, T *out,
                                int64_t N, int64_t V, int64_t C,
                                int *errorWord) {
  for (int64_t i = blockIdx.x; i < N; i += gridDim.x) {
    const int64_t id = clampOrRaise(ids[i], V, kDeviceErrorEmbeddingId,
                                    errorWord, threadIdx.x == 0);
    T *dst = out + i * C;
    if (V == 0) {
      for (int64_t j = threadIdx.x; j < C; j += blockDim.x)
        dst[j] = T(0); // +0 (bits 0 in f32 and bf16)
      continue;
    }
    const T *src = table + id * C;
    for (int64_t j = threadIdx.x; j < C; j += blockDim.x)
      dst[j] = src[j];
  }
}

/// embedding_backward, step 1: checks and clamps the ids into [0, whole)
/// (raising the error word with `code` for bad ones) and, when keys is not
/// NULL, writes
/// the sort input: keys[i] = clamped id - first when that is a row of
/// dtable [0, V), else V (a token of another part of a vocabulary cut by
/// rows: sorted last, summed nowhere), rows[i] = i. The whole-table
/// backward has first = 0 and whole = V (every key a row).
__global__ void embeddingKeysKernel(const int32_t *ids, int64_t N, int64_t V,
                                    int64_t first, int64_t whole, int code,
                                    uint32_t *keys, uint32_t *rows,
                                    int *errorWord) {
  ZRT_GRID_STRIDE(i, N) {
    const int64_t id = clampOrRaise(ids[i], whole, code, errorWord, true);
    if (keys) {
      const int64_t v = id - first;
      keys[i] = static_cast<uint32_t>(v >= 0 && v < V ? v : V);
      rows[i] = static_cast<uint32_t>(i);
    }
  }
}

/// First position q in [lo, hi) of the sorted keys with keys[q] != key
/// (keys[lo, hi) starts with a run of `key`s), hi when there is none.
__device__ __forceinline__ int64_t runEnd(const uint32_t *keys, int64_t lo,
                                          int64_t hi, uint32_t key) {
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (keys[mid] == key)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/// embedding_backward(_bf16), step 3: keys[0, N) sorted (stably) with their
/// token rows. The block at the first position p of each run of equal keys
/// sums dout[rows[q], :] for q over the run, in order (= token order, the
/// CPU's order), in f32 into dtable[key, :]; other blocks return at once.
/// Keys >= V (tokens of another part, embeddingKeysKernel) are skipped.
/// T = float, or zrt_bf16 (dout widened exactly, each sum rounded once).
template <typename T>
__global__ void embeddingSegmentKernel(const T *dout, const uint32_t *keys,
                                       const uint32_t *rows, T *dtable,
                                       int64_t N, int64_t V, int64_t C) {
  for (int64_t p = blockIdx.x; p < N; p += gridDim.x) {
    const uint32_t key = keys[p];
    if ((p > 0 && keys[p - 1] == key) || key >= V)
      continue; // not the first token of its id, or not a row of dtable
                // (uniform over the block)
    // End of the run: upper bound of `key` in the sorted keys[p, N).
    const int64_t end = runEnd(keys, p + 1, N, key);
    T *dst = dtable + static_cast<int64_t>(key) * C;
    for (int64_t j = threadIdx.x; j < C; j += blockDim.x) {
      float acc = 0.0f;
#pragma unroll 4
      for (int64_t q = p; q < end; ++q)
        acc += ldf(dout + static_cast<int64_t>(rows[q]) * C + j);
      stf(dst + j, acc);
    }
  }
}

/// Sorted positions per tile of embeddingTileKernel (and per range: block
/// x covers the runs that start in [256 x, 256 x + 256)), 16-byte vectors
/// per row of its column chunk (block y: columns [64 y, 64 y + 64) of bf16,
/// [32 y, 32 y + 32) of f32), and its threads.
constexpr int kEmbTileRows = 256;
constexpr int kEmbChunkVecs = 8;
constexpr int kEmbThreads = 256;

/// embedding_backward(_bf16), step 3, vectorized (C a multiple of the 16
/// bytes' elements, dout 16-byte aligned): keys[0, N) sorted stably with
/// their token rows. Block (x, y) sums the runs of equal keys that start in
/// its range of 256 sorted positions (the last one possibly continuing past
/// it) over its chunk of kEmbChunkVecs vectors of columns, in tiles of 256
/// positions: (A) the tile's keys and token rows to shared memory; (B) every
/// thread loads 8 of the tile's 256 x 8 vectors of dout (16-byte loads, all
/// in flight), into shared memory; (C) thread j < the chunk's columns walks
/// the tile's positions in order, adding column j of each row to an f32
/// accumulator that is stored (rounded once) into dtable[key, :] and reset
/// where the key changes: each id's tokens summed in token order, the CPU's
/// order, as embeddingSegmentKernel. The runs' rows are spread over 256
/// threads' loads, and a long run (a frequent token) over C / 64 blocks,
/// so no thread waits on one load per token. The run of keys >= V (tokens
/// of another part, sorted last) is summed but never stored.
template <typename T>
__global__ void __launch_bounds__(kEmbThreads)
    embeddingTileKernel(const T *dout, const uint32_t *keys,
                        const uint32_t *rows, T *dtable, int64_t N, int64_t V,
                        int64_t C) {
  constexpr int kPerVec = 16 / sizeof(T);
  constexpr int kChunkCols = kEmbChunkVecs * kPerVec;
  constexpr int kLoads = kEmbTileRows * kEmbChunkVecs / kEmbThreads;
  __shared__ uint32_t sKey[kEmbTileRows];
  __shared__ uint32_t sRow[kEmbTileRows];
  __shared__ uint4 sVal[kEmbTileRows * kEmbChunkVecs];
  __shared__ int64_t sSpan[2];
  const int64_t rangeLo = static_cast<int64_t>(blockIdx.x) * kEmbTileRows;
  const int64_t rangeHi =
      rangeLo + kEmbTileRows < N ? rangeLo + kEmbTileRows : N;
  // [lo, hi): from the first run start in the range to the end of the run
  // at the range's last position.
  if (threadIdx.x == 0)
    sSpan[0] =
        rangeLo == 0 ? 0 : runEnd(keys, rangeLo, rangeHi, keys[rangeLo - 1]);
  if (threadIdx.x == 32) // another warp: both searches at once
    sSpan[1] = runEnd(keys, rangeHi, N, keys[rangeHi - 1]);
  __syncthreads();
  const int64_t lo = sSpan[0], hi = sSpan[1];
  if (lo >= rangeHi)
    return; // one run covers the range: an earlier block sums it
  const int64_t vecs = C / kPerVec;
  const int64_t chunk0 = static_cast<int64_t>(blockIdx.y) * kEmbChunkVecs;
  const int col = threadIdx.x; // the column thread col sums (< kChunkCols)
  const bool sums = col < kChunkCols && chunk0 * kPerVec + col < C;
  float acc = 0.0f;
  uint32_t curKey = 0;
  bool open = false;
  for (int64_t base = lo; base < hi; base += kEmbTileRows) {
    const int n =
        static_cast<int>(hi - base < kEmbTileRows ? hi - base : kEmbTileRows);
    __syncthreads(); // (C) of the previous tile is done with sKey, sVal
    if (static_cast<int64_t>(threadIdx.x) < n) {
      sKey[threadIdx.x] = keys[base + threadIdx.x];
      sRow[threadIdx.x] = rows[base + threadIdx.x];
    }
    __syncthreads();
    uint4 v[kLoads];
    const int c = threadIdx.x % kEmbChunkVecs;
#pragma unroll
    for (int u = 0; u < kLoads; ++u) {
      const int r =
          threadIdx.x / kEmbChunkVecs + u * (kEmbThreads / kEmbChunkVecs);
      if (r < n && chunk0 + c < vecs)
        v[u] = *reinterpret_cast<const uint4 *>(
            dout + static_cast<int64_t>(sRow[r]) * C + (chunk0 + c) * kPerVec);
    }
#pragma unroll
    for (int u = 0; u < kLoads; ++u) {
      const int r =
          threadIdx.x / kEmbChunkVecs + u * (kEmbThreads / kEmbChunkVecs);
      if (r < n && chunk0 + c < vecs)
        sVal[r * kEmbChunkVecs + c] = v[u];
    }
    __syncthreads();
    if (sums) {
      // 8 positions' keys and values read ahead of their in-order adds.
      const T *vals = reinterpret_cast<const T *>(sVal);
      for (int r0 = 0; r0 < n; r0 += 8) {
        uint32_t kk[8];
        float xx[8];
#pragma unroll
        for (int u = 0; u < 8; ++u) {
          const int r = r0 + u < n ? r0 + u : n - 1;
          kk[u] = sKey[r];
          xx[u] = ldf(vals + r * kChunkCols + col);
        }
#pragma unroll
        for (int u = 0; u < 8; ++u) {
          if (r0 + u >= n)
            break;
          if (!open || kk[u] != curKey) {
            if (open && curKey < V)
              stf(dtable + static_cast<int64_t>(curKey) * C + chunk0 * kPerVec +
                      col,
                  acc);
            acc = 0.0f;
            curKey = kk[u];
            open = true;
          }
          acc += xx[u];
        }
      }
    }
  }
  if (sums && open && curKey < V)
    stf(dtable + static_cast<int64_t>(curKey) * C + chunk0 * kPerVec + col,
        acc);
}

/// zrt_embedding(_bf16) on T = float or zrt_bf16 (`fn`: the zrt.h name).
template <typename T>
int embeddingGather(const char *fn, const T *table, const int32_t *ids, T *out,
                    int64_t N, int64_t V, int64_t C) {
  if (int st =
          zrt::checkEmbeddingArgs(fn, table, ids, out, N, V, C, zrt_cuda::fail))
    return st;
  if (N == 0)
    return ZRT_OK;
  // Launched even when C == 0: the ids are still checked.
  embeddingKernel<T><<<lossRowBlocks(N), lossRowThreads(C), 0, stream()>>>(
      table, ids, out, N, V, C, device_error_word());
  return launched(fn);
}

/// zrt_embedding_backward(_bf16) on T = float or zrt_bf16 (`fn`: the zrt.h
/// name): dtable = 0, then dtable[ids[i], :] += dout[i, :] in token order,
/// summed in f32 (bf16: rounded once). Deterministic and bit-identical to
/// the CPU:
///   1. cudaMemsetAsync(dtable, 0)                       V*C*sizeof(T) bytes
///   2. keys = clamped ids, rows = 0..N-1                 O(N)
///   3. cub::DeviceRadixSort::SortPairs (stable) on the ceil(log2 V) low
///      bits of the keys: tokens grouped by id, in token order   O(N)
///   4. the runs of equal ids summed in order into dtable[id, :], reading
///      N*C elements once and writing the touched rows: embeddingTileKernel
///      (C a multiple of 16 bytes' elements, dout 16-byte aligned), else
///      one block per sorted position (embeddingSegmentKernel).
/// GPT-2 bf16 (N = 16K, V = 50304, C = 768): a 77 MB memset (~25 us), a
/// 16K-key sort and 25 MB of reads. With the per-position kernel the call
/// measured ~1 ms on an H200, by its structure because a frequent token's
/// run (hundreds of tokens) is summed by one block, each thread loading one
/// 2-byte element per token after a dependent index load; the tiles spread the
/// run over C / 64 blocks and 2048 loads of 16 bytes in flight per tile.
/// Scratch (4 N uint32 + CUB's temporary storage) comes from the runtime's
/// workspace. The CUDA backend needs N <= INT32_MAX (token rows are stored as
/// uint32).
template <typename T>
int embeddingScatterRows(const char *fn, const T *dout, const int32_t *ids,
                         T *dtable, int64_t N, int64_t V, int64_t C,
                         int64_t first, int64_t whole, int code);

template <typename T>
int embeddingScatter(const char *fn, const T *dout, const int32_t *ids,
                     T *dtable, int64_t N, int64_t V, int64_t C) {
  if (int st = zrt::checkEmbeddingBackwardArgs(fn, dout, ids, dtable, N, V, C,
                                               zrt_cuda::fail))
    return st;
  return embeddingScatterRows(fn, dout, ids, dtable, N, V, C, 0, V,
                              kDeviceErrorEmbeddingId);
}

/// embeddingScatter's steps after the argument checks, for the rows
/// [first, first + V) of a table of `whole` rows (the whole table: first =
/// 0, whole = V; a tensor rank's part of one cut by rows:
/// embedding_backward_part). Ids outside [0, whole) raise the error word
/// with `code`;
/// the tokens of other rows get the key V, which the sort puts after every
/// row's and step 4 skips.
template <typename T>
int embeddingScatterRows(const char *fn, const T *dout, const int32_t *ids,
                         T *dtable, int64_t N, int64_t V, int64_t C,
                         int64_t first, int64_t whole, int code) {
  ZRT_CUDA_REQUIRE(N <= INT_MAX, "%s: N = %lld tokens exceed INT32_MAX", fn,
                   (long long)N);
  if (V * C > 0) {
    if (int st = check(cudaMemsetAsync(dtable, 0,
                                       static_cast<size_t>(V * C) * sizeof(T),
                                       stream()),
                       ZRT_ERR_INVALID_ARGUMENT, fn, "cudaMemsetAsync"))
      return st;
  }
  if (N == 0)
    return ZRT_OK;
  if (V == 0 || C == 0) {
    // Nothing to accumulate; the ids are still checked.
    embeddingKeysKernel<<<blocksFor(N), kThreads, 0, stream()>>>(
        ids, N, V, first, whole, code, nullptr, nullptr, device_error_word());
    return launched(fn);
  }
  // Sort only the bits a key can have: [0, V), and V itself when some ids
  // may lie outside the rows.
  const int64_t maxKey = first == 0 && whole == V ? V - 1 : V;
  int endBit = 1;
  while (endBit < 32 && (maxKey >> endBit) != 0)
    ++endBit;
  const int n = static_cast<int>(N);
  size_t sortBytes = 0;
  if (int st =
          check(cub::DeviceRadixSort::SortPairs(
                    nullptr, sortBytes, static_cast<const uint32_t *>(nullptr),
                    static_cast<uint32_t *>(nullptr),
                    static_cast<const uint32_t *>(nullptr),
                    static_cast<uint32_t *>(nullptr), n, 0, endBit, stream()),
                ZRT_ERR_INVALID_ARGUMENT, fn,
                "cub::DeviceRadixSort::SortPairs (size query)"))
    return st;
  const int64_t arrayBytes =
      align256(N * static_cast<int64_t>(sizeof(uint32_t)));
  void *ws = nullptr;
  if (int st =
          workspace(4 * arrayBytes + static_cast<int64_t>(sortBytes), &ws, fn))
    return st;
  char *base = static_cast<char *>(ws);
  uint32_t *keysIn = reinterpret_cast<uint32_t *>(base);
  uint32_t *rowsIn = reinterpret_cast<uint32_t *>(base + arrayBytes);
  uint32_t *keysOut = reinterpret_cast<uint32_t *>(base + 2 * arrayBytes);
  uint32_t *rowsOut = reinterpret_cast<uint32_t *>(base + 3 * arrayBytes);
  void *sortTemp = base + 4 * arrayBytes;
  embeddingKeysKernel<<<blocksFor(N), kThreads, 0, stream()>>>(
      ids, N, V, first, whole, code, keysIn, rowsIn, device_error_word());
  if (int st = launched(fn))
    return st;
  if (int st = check(cub::DeviceRadixSort::SortPairs(
                         sortTemp, sortBytes, keysIn, keysOut, rowsIn, rowsOut,
                         n, 0, endBit, stream()),
                     ZRT_ERR_INVALID_ARGUMENT, fn,
                     "cub::DeviceRadixSort::SortPairs"))
    return st;
  constexpr int64_t perVec = 16 / sizeof(T);
  const int64_t chunks = (C / perVec + kEmbChunkVecs - 1) / kEmbChunkVecs;
  if (C % perVec == 0 && (reinterpret_cast<uintptr_t>(dout) & 15u) == 0 &&
      chunks <= 65535) {
    const dim3 grid(
        static_cast<unsigned>((N + kEmbTileRows - 1) / kEmbTileRows),
        static_cast<unsigned>(chunks));
    embeddingTileKernel<T><<<grid, kEmbThreads, 0, stream()>>>(
        dout, keysOut, rowsOut, dtable, N, V, C);
  } else {
    embeddingSegmentKernel<T>
        <<<lossRowBlocks(N), lossRowThreads(C), 0, stream()>>>(
            dout, keysOut, rowsOut, dtable, N, V, C);
  }
  return launched(fn);
}

//===----------------------------------------------------------------------===//
// Cross-entropy
//===----------------------------------------------------------------------===//

/// The CPU's rowLse over row[0, cols) (T = float, or zrt_bf16 widened;
/// global or shared memory), by the whole block: *mx = max in f32 (NaN
/// ignored as `row[j] > mx`), *logSum = log(sum_j double(expf(row[j] - mx)))
/// with the sum in double (the CPU: exp in double; see the file comment). Every thread gets both. Call from every thread
/// of the block.
template <typename T>
__device__ void blockRowLse(const T *row, int64_t cols, float *mxOut,
                            double *logSumOut) {
  __shared__ float shMax[32];
  __shared__ double shSum[32];
  float mx = -INFINITY;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    const float x = ldf(row + j);
    mx = x > mx ? x : mx;
  }
  mx = blockMax(mx, shMax);
  double sum = 0.0;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
    sum += static_cast<double>(expf(ldf(row + j) - mx));
  sum = blockSum(sum, shSum);
  *mxOut = mx;
  *logSumOut = log(sum);
}

/// Copies the bf16 row[0, cols) into the dynamic shared buffer `buf`
/// (16-byte aligned, stagedBytes(cols) bytes) and returns where element 0
/// landed: buf + pad, pad in [0, 8) chosen so that the row's 16-byte-aligned
/// part (from its first 16-byte boundary on) lands on 16-byte boundaries of
/// buf. That part is copied by cp.async, 16 bytes per copy, all of a
/// thread's copies in flight together; the head before it and the tail
/// after it element by element. Starts with a barrier (the readers of the
/// previous row are done) and ends with one (the row is in place). Call
/// from every thread of the block.
__device__ const zrt_bf16 *stageRow(zrt_bf16 *buf, const zrt_bf16 *row,
                                    int64_t cols) {
  int64_t head = bf16HeadToAlign16(row);
  head = head < cols ? head : cols;
  zrt_bf16 *dst = buf + ((kBf16PerVec - head) & (kBf16PerVec - 1));
  const int64_t vecs = (cols - head) / kBf16PerVec;
  const int64_t body = head + vecs * kBf16PerVec; // first tail element
  __syncthreads();
  for (int64_t v = threadIdx.x; v < vecs; v += blockDim.x) {
    const int64_t j = head + v * kBf16PerVec;
    __pipeline_memcpy_async(dst + j, row + j, 16);
  }
  __pipeline_commit();
  for (int64_t j = threadIdx.x; j < head; j += blockDim.x)
    dst[j] = row[j];
  for (int64_t j = body + threadIdx.x; j < cols; j += blockDim.x)
    dst[j] = row[j];
  __pipeline_wait_prior(0);
  __syncthreads();
  return dst;
}

/// Dynamic shared memory of the staged kernels.
extern __shared__ uint4 stagedSmem[];

/// Per-row losses of cross-entropy over the first `cols` columns of logits
/// [N, V]: rowLoss[i] = logSum - (row[t] - max) in double; 0 for a row whose
/// target is ignore_index (hasIgnore). A target outside [0, cols) raises the
/// error word and is clamped. One block per row (grid-strided). T is the
/// logits' type (float, or zrt_bf16 widened); Staged (bf16 only): the row is
/// first copied to shared memory (stageRow) and read from there. The body
/// of crossEntropyRowsKernel and crossEntropyRowsStagedKernel.
template <typename T, bool Staged>
__device__ __forceinline__ void
crossEntropyRows(const T *logits, const int32_t *targets, double *rowLoss,
                 int64_t N, int64_t V, int64_t cols, int hasIgnore,
                 int32_t ignoreIndex, int *errorWord) {
  static_assert(!Staged || std::is_same_v<T, zrt_bf16>, "staged: bf16 only");
  for (int64_t i = blockIdx.x; i < N; i += gridDim.x) {
    int64_t t = targets[i];
    if (hasIgnore && t == ignoreIndex) { // uniform over the block
      if (threadIdx.x == 0)
        rowLoss[i] = 0.0;
      continue;
    }
    t = clampOrRaise(t, cols, kDeviceErrorTarget, errorWord, threadIdx.x == 0);
    const T *row = logits + i * V;
    if constexpr (Staged)
      row = stageRow(reinterpret_cast<zrt_bf16 *>(stagedSmem), row, cols);
    float mx;
    double logSum;
    blockRowLse(row, cols, &mx, &logSum);
    if (threadIdx.x == 0)
      rowLoss[i] = logSum - static_cast<double>(ldf(row + t) - mx);
  }
}

template <typename T>
__global__ void crossEntropyRowsKernel(const T *logits, const int32_t *targets,
                                       double *rowLoss, int64_t N, int64_t V,
                                       int64_t cols, int hasIgnore,
                                       int32_t ignoreIndex, int *errorWord) {
  crossEntropyRows<T, false>(logits, targets, rowLoss, N, V, cols, hasIgnore,
                             ignoreIndex, errorWord);
}

/// Staged bf16 rows (stagedRowThreads threads, stagedBytes of dynamic shared
/// memory): two blocks per SM at GPT-2's vocabulary.
__global__ void __launch_bounds__(kStagedThreads, 2)
    crossEntropyRowsStagedKernel(const zrt_bf16 *logits, const int32_t *targets,
                                 double *rowLoss, int64_t N, int64_t V,
                                 int64_t cols, int hasIgnore,
                                 int32_t ignoreIndex, int *errorWord) {
  crossEntropyRows<zrt_bf16, true>(logits, targets, rowLoss, N, V, cols,
                                   hasIgnore, ignoreIndex, errorWord);
}

/// One block: *loss = f32(sum_i rowLoss[i] / M), M the number of rows not
/// ignored (all N without hasIgnore); NaN when M == 0. The sum runs in a
/// fixed order (deterministic).
__global__ void crossEntropyMeanKernel(const double *rowLoss,
                                       const int32_t *targets, int64_t N,
                                       int hasIgnore, int32_t ignoreIndex,
                                       float *loss) {
  __shared__ double shared[32];
  double total = 0.0, count = 0.0;
  for (int64_t i = threadIdx.x; i < N; i += blockDim.x) {
    total += rowLoss[i];
    if (!hasIgnore || targets[i] != ignoreIndex)
      count += 1.0;
  }
  total = blockSum(total, shared);
  count = blockSum(count, shared);
  if (threadIdx.x == 0)
    *loss = count > 0.0 ? static_cast<float>(total / count) : quietNaN();
}

/// One block: *count = number of targets[0, N) that are not ignore_index.
__global__ void countTargetsKernel(const int32_t *targets, int64_t N,
                                   int32_t ignoreIndex, int64_t *count) {
  __shared__ double shared[32];
  double c = 0.0;
  for (int64_t i = threadIdx.x; i < N; i += blockDim.x)
    if (targets[i] != ignoreIndex)
      c += 1.0;
  c = blockSum(c, shared);
  if (threadIdx.x == 0)
    *count = static_cast<int64_t>(c);
}

/// One gradient entry of cross-entropy: exp((x - mx) - ls) * g, minus g at
/// the target; separately rounded f32 operations in the CPU's order
/// (lowering_support.cpp, writeRowGradient).
__device__ __forceinline__ float ceGrad(float x, float mx, float ls, float g,
                                        bool isTarget) {
  float d = __fmul_rn(expf(__fsub_rn(__fsub_rn(x, mx), ls)), g);
  if (isTarget)
    d = __fsub_rn(d, g); // drow[t] -= g
  return d;
}

/// The gradient of one row's loss in the padded cross-entropy: dloss / N,
/// rounded as the CPU's `*dloss / static_cast<float>(N)` (N > 0). Shared by
/// the backward (dloss read from device memory) and the fused kernel (dloss
/// a host value), so both get the same bits for the same dloss.
__device__ __forceinline__ float paddedGradScale(float dloss, int64_t N) {
  return __fdiv_rn(dloss, static_cast<float>(N));
}

/// Writes the gradient of one row by the whole block: drow[j] =
/// ceGrad(row[j], mx, ls, g, j == t) for j < cols, 0 for j in [cols, V),
/// every bf16 rounded once (stf). row: the logits row (global memory), or
/// with Staged its copy in shared memory (stageRow, valid in [0, cols)).
/// Unstaged, element j is read and written by thread j % blockDim.x only,
/// so drow may be row (the fused kernel) once the block's reads of other
/// threads' elements are done. Staged (bf16 only), drow is written with
/// 16-byte stores after a scalar head up to its first 16-byte boundary; the
/// staged row is read 16 bytes at a time where that is aligned too (it is
/// when drow and the staged logits row are equally aligned, as stageRow
/// places them). No barrier; call from every thread of the block.
template <typename T, bool Staged>
__device__ __forceinline__ void ceGradRow(const T *row, T *drow, int64_t V,
                                          int64_t cols, int64_t t, float mx,
                                          float ls, float g) {
  static_assert(!Staged || std::is_same_v<T, zrt_bf16>, "staged: bf16 only");
  if constexpr (!Staged) {
    for (int64_t j = threadIdx.x; j < V; j += blockDim.x)
      stf(drow + j, j < cols ? ceGrad(ldf(row + j), mx, ls, g, j == t) : 0.0f);
  } else {
    // drow[0, V): a scalar head up to drow's first 16-byte boundary, then
    // 8 elements per 16-byte store, then a scalar tail.
    int64_t head = bf16HeadToAlign16(drow);
    head = head < V ? head : V;
    const int64_t vecs = (V - head) / kBf16PerVec;
    const int64_t body = head + vecs * kBf16PerVec;
    const int64_t scalars = head + (V - body);
    for (int64_t k = threadIdx.x; k < scalars; k += blockDim.x) {
      const int64_t j = k < head ? k : body + (k - head);
      stf(drow + j, j < cols ? ceGrad(ldf(row + j), mx, ls, g, j == t) : 0.0f);
    }
    for (int64_t v = threadIdx.x; v < vecs; v += blockDim.x) {
      const int64_t j0 = head + v * kBf16PerVec;
      float d[kBf16PerVec];
      if (j0 + kBf16PerVec <= cols &&
          (reinterpret_cast<uintptr_t>(row + j0) & 15u) == 0) {
        float x[kBf16PerVec];
        unpackBf16x8(*reinterpret_cast<const uint4 *>(row + j0), x);
#pragma unroll
        for (int e = 0; e < kBf16PerVec; ++e)
          d[e] = ceGrad(x[e], mx, ls, g, j0 + e == t);
      } else {
#pragma unroll
        for (int e = 0; e < kBf16PerVec; ++e) {
          const int64_t j = j0 + e;
          d[e] = j < cols ? ceGrad(ldf(row + j), mx, ls, g, j == t) : 0.0f;
        }
      }
      *reinterpret_cast<uint4 *>(drow + j0) = packBf16x8(d);
    }
  }
}

/// Cross-entropy backward over logits [N, V] (one block per row,
/// grid-strided), with g the gradient of one row's loss:
///   count != NULL (zrt_cross_entropy_backward, dlossPtr NULL; the masked
///     cross-entropy, dlossPtr a device pointer): g = d / *count with d =
///     *dlossPtr or dloss (0 when no row counts); rows whose target is
///     ignore_index get 0;
///   count == NULL (padded): g = paddedGradScale(*dlossPtr, N).
/// dlogits[i, j] = exp((row[j] - max) - f32(logSum)) * g for j < cols, minus
/// g at the target (ceGradRow); 0 for j >= cols. Bad targets as
/// crossEntropyRowsKernel. T and Staged as there.
template <typename T, bool Staged>
__device__ __forceinline__ void
crossEntropyBackward(const T *logits, const int32_t *targets, T *dlogits,
                     int64_t N, int64_t V, int64_t cols, int hasIgnore,
                     int32_t ignoreIndex, const int64_t *count, float dloss,
                     const float *dlossPtr, int *errorWord) {
  static_assert(!Staged || std::is_same_v<T, zrt_bf16>, "staged: bf16 only");
  float g;
  if (count) {
    const int64_t c = *count;
    const float d = dlossPtr ? *dlossPtr : dloss;
    g = c > 0 ? __fdiv_rn(d, static_cast<float>(c)) : 0.0f; // the CPU's
  } else {
    g = paddedGradScale(*dlossPtr, N);
  }
  for (int64_t i = blockIdx.x; i < N; i += gridDim.x) {
    T *drow = dlogits + i * V;
    int64_t t = targets[i];
    if (hasIgnore && t == ignoreIndex) { // uniform over the block
      for (int64_t j = threadIdx.x; j < V; j += blockDim.x)
        stf(drow + j, 0.0f);
      continue;
    }
    t = clampOrRaise(t, cols, kDeviceErrorTarget, errorWord, threadIdx.x == 0);
    const T *row = logits + i * V;
    if constexpr (Staged)
      row = stageRow(reinterpret_cast<zrt_bf16 *>(stagedSmem), row, cols);
    float mx;
    double logSum;
    blockRowLse(row, cols, &mx, &logSum);
    ceGradRow<T, Staged>(row, drow, V, cols, t, mx, static_cast<float>(logSum),
                         g);
  }
}

template <typename T>
__global__ void
crossEntropyBackwardKernel(const T *logits, const int32_t *targets, T *dlogits,
                           int64_t N, int64_t V, int64_t cols, int hasIgnore,
                           int32_t ignoreIndex, const int64_t *count,
                           float dloss, const float *dlossPtr, int *errorWord) {
  crossEntropyBackward<T, false>(logits, targets, dlogits, N, V, cols,
                                 hasIgnore, ignoreIndex, count, dloss, dlossPtr,
                                 errorWord);
}

/// Staged bf16 rows, as crossEntropyRowsStagedKernel (dloss a device
/// pointer; count as crossEntropyBackward: NULL for the padded
/// cross-entropy, the counted rows for the masked one).
__global__ void __launch_bounds__(kStagedThreads, 2)
    crossEntropyBackwardStagedKernel(const zrt_bf16 *logits,
                                     const int32_t *targets, zrt_bf16 *dlogits,
                                     int64_t N, int64_t V, int64_t cols,
                                     int hasIgnore, int32_t ignoreIndex,
                                     const int64_t *count,
                                     const float *dlossPtr, int *errorWord) {
  crossEntropyBackward<zrt_bf16, true>(logits, targets, dlogits, N, V, cols,
                                       hasIgnore, ignoreIndex, count, 0.0f,
                                       dlossPtr, errorWord);
}

/// Fused padded cross-entropy (llm.c's fused classifier) over logits [N, V]
/// of T, one block per row (grid-strided): with one blockRowLse per row,
/// rowLoss[i] = logSum - (row[t] - max) in double, exactly as
/// crossEntropyRows, and then the row overwritten with its gradient
/// (ceGradRow, g = paddedGradScale(dloss, N)), exactly as
/// crossEntropyBackward: the same launch configuration gives the same block
/// reductions, so loss and gradient are those of the forward followed by
/// the backward bit for bit. In place: the target's logit is read (by
/// thread 0) before blockRowLse's first barrier, and the gradient loop
/// reads each element in the thread that then writes it, after the
/// reductions, which read it in that same thread. Staged (bf16 only): the
/// row is read from its shared-memory copy (stageRow), the gradient
/// written over the global row. A target outside [0, cols) raises the
/// error word and is clamped.
template <typename T, bool Staged>
__device__ __forceinline__ void
crossEntropyFused(T *logits, const int32_t *targets, double *rowLoss, int64_t N,
                  int64_t V, int64_t cols, float dloss, int *errorWord) {
  static_assert(!Staged || std::is_same_v<T, zrt_bf16>, "staged: bf16 only");
  const float g = paddedGradScale(dloss, N);
  for (int64_t i = blockIdx.x; i < N; i += gridDim.x) {
    int64_t t = targets[i];
    t = clampOrRaise(t, cols, kDeviceErrorTarget, errorWord, threadIdx.x == 0);
    T *drow = logits + i * V;
    const T *row = drow;
    if constexpr (Staged)
      row = stageRow(reinterpret_cast<zrt_bf16 *>(stagedSmem), drow, cols);
    // Before any thread of the block can overwrite it (unstaged rows).
    const float xt = threadIdx.x == 0 ? ldf(row + t) : 0.0f;
    float mx;
    double logSum;
    blockRowLse(row, cols, &mx, &logSum);
    if (threadIdx.x == 0)
      rowLoss[i] = logSum - static_cast<double>(xt - mx);
    ceGradRow<T, Staged>(row, drow, V, cols, t, mx, static_cast<float>(logSum),
                         g);
  }
}

template <typename T>
__global__ void crossEntropyFusedKernel(T *logits, const int32_t *targets,
                                        double *rowLoss, int64_t N, int64_t V,
                                        int64_t cols, float dloss,
                                        int *errorWord) {
  crossEntropyFused<T, false>(logits, targets, rowLoss, N, V, cols, dloss,
                              errorWord);
}

/// Staged bf16 rows, as crossEntropyRowsStagedKernel.
__global__ void __launch_bounds__(kStagedThreads, 2)
    crossEntropyFusedStagedKernel(zrt_bf16 *logits, const int32_t *targets,
                                  double *rowLoss, int64_t N, int64_t V,
                                  int64_t cols, float dloss, int *errorWord) {
  crossEntropyFused<zrt_bf16, true>(logits, targets, rowLoss, N, V, cols, dloss,
                                    errorWord);
}

/// What a register-row kernel computes for each row.
enum class RegRowMode { Forward, Backward, Fused };

/// Issues the asynchronous 16-byte copies of this thread's vectors (v =
/// threadIdx.x + k blockDim.x, k < kRegRowVecs, v < vecs) of the 16-byte
/// aligned bf16 `row` into the same slots of `buf`. Each thread reads back
/// only the slots it copied (after its own __pipeline_wait_prior), so the
/// buffer needs no barrier.
__device__ __forceinline__ void prefetchRegRow(uint4 *buf, const zrt_bf16 *row,
                                               int vecs) {
  const uint4 *src = reinterpret_cast<const uint4 *>(row);
#pragma unroll
  for (int k = 0; k < kRegRowVecs; ++k) {
    const int v = threadIdx.x + k * blockDim.x;
    if (v < vecs)
      __pipeline_memcpy_async(buf + v, src + v, 16);
  }
  __pipeline_commit();
}

/// w with its bf16 elements [from, 8) replaced by -inf (0xff80): columns at
/// or past num_classes, which then neither raise the max nor add to the sum
/// (expf(-inf) = 0).
__device__ __forceinline__ uint4 negInfFrom(uint4 w, int from) {
  uint32_t u[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
  for (int e = 0; e < kBf16PerVec; ++e)
    if (e >= from)
      u[e / 2] = (e & 1) ? ((u[e / 2] & 0xffffu) | 0xff800000u)
                         : ((u[e / 2] & 0xffff0000u) | 0xff80u);
  return make_uint4(u[0], u[1], u[2], u[3]);
}

/// Padded bf16 cross-entropy with each row held in registers (the fast path
/// of zrt_cross_entropy_padded(_backward, _fused)_bf16; rows as regRowFits
/// requires): a persistent block of regRowThreads(V) threads per SM walks
/// rows i = blockIdx.x, + gridDim.x, ... Each thread holds the 16-byte
/// vectors v = threadIdx.x + k blockDim.x (k < kRegRowVecs) of row i in
/// registers; the row comes from a shared-memory buffer that was filled by
/// cp.async while the block worked on the previous row (row i + gridDim.x is
/// requested as soon as row i's registers are read), so the SM's loads
/// overlap its arithmetic. Per row, from registers: the f32 max, the double
/// sum of expf(x - max) (blockRowLse's per-element arithmetic), log of the
/// sum; Forward / Fused: rowLoss[i] = logSum - (row[t] - max) (by the
/// thread holding the target); Backward / Fused: the gradient of every
/// column (ceGrad, g = paddedGradScale of *dlossPtr or dloss; 0 at and past
/// cols) written to dlogits with 16-byte stores (Fused: dlogits = logits,
/// in place). One global read of each logit and one write of each gradient.
/// The three modes share this code and launch configuration, so the fused
/// kernel's losses and gradient are the forward's and the backward's bit
/// for bit. Bad targets raise the error word and are clamped.
template <RegRowMode Mode>
__global__ void __launch_bounds__(kRegRowThreads, 1)
    crossEntropyRegKernel(const zrt_bf16 *logits, const int32_t *targets,
                          zrt_bf16 *dlogits, double *rowLoss, int64_t N,
                          int64_t V, int64_t cols, float dloss,
                          const float *dlossPtr, int *errorWord) {
  __shared__ float shMax[32];
  __shared__ double shSum[32];
  uint4 *buf = stagedSmem;
  // 32-bit column arithmetic: regRowFits bounds V by 57344.
  const int ncols = static_cast<int>(cols);
  const int loadVecs = (ncols + kBf16PerVec - 1) / kBf16PerVec;
  const int rowVecs = static_cast<int>(V / kBf16PerVec);
  float g = 0.0f;
  if constexpr (Mode == RegRowMode::Backward)
    g = paddedGradScale(*dlossPtr, N);
  else if constexpr (Mode == RegRowMode::Fused)
    g = paddedGradScale(dloss, N);
  if (blockIdx.x < N)
    prefetchRegRow(buf, logits + blockIdx.x * V, loadVecs);
  for (int64_t i = blockIdx.x; i < N; i += gridDim.x) {
    int64_t t = targets[i];
    t = clampOrRaise(t, cols, kDeviceErrorTarget, errorWord, threadIdx.x == 0);
    const int tv = static_cast<int>(t) / kBf16PerVec;
    const int te = static_cast<int>(t) % kBf16PerVec;
    __pipeline_wait_prior(0);
    uint4 r[kRegRowVecs];
    float mx = -INFINITY, xt = 0.0f;
    bool holdsTarget = false;
#pragma unroll
    for (int k = 0; k < kRegRowVecs; ++k) {
      const int v = threadIdx.x + k * blockDim.x;
      if (v < loadVecs) {
        r[k] = buf[v];
        if ((v + 1) * kBf16PerVec > ncols)
          r[k] = negInfFrom(r[k], ncols - v * kBf16PerVec);
      } else {
        r[k] = make_uint4(0xff80ff80u, 0xff80ff80u, 0xff80ff80u, 0xff80ff80u);
      }
      float x[kBf16PerVec];
      unpackBf16x8(r[k], x);
#pragma unroll
      for (int e = 0; e < kBf16PerVec; ++e)
        mx = fmaxf(mx, x[e]);
      if (v == tv) {
        holdsTarget = true;
#pragma unroll
        for (int e = 0; e < kBf16PerVec; ++e)
          if (e == te)
            xt = x[e];
      }
    }
    mx = blockMax(mx, shMax);
    // The buffer's slots are consumed: every thread's shared loads fed its
    // partial max, which the block maximum's barrier waited for. Only then
    // request the block's next row into the same slots (a cp.async issued
    // right after the loads would rely on the hardware finishing them
    // first, which the PTX memory model does not promise), to land while
    // this row is finished.
    if (i + gridDim.x < N)
      prefetchRegRow(buf, logits + (i + gridDim.x) * V, loadVecs);
    double sum = 0.0;
#pragma unroll
    for (int k = 0; k < kRegRowVecs; ++k) {
      const int v = threadIdx.x + k * blockDim.x;
      if (v < loadVecs) {
        float x[kBf16PerVec];
        unpackBf16x8(r[k], x);
#pragma unroll
        for (int e = 0; e < kBf16PerVec; ++e)
          sum += static_cast<double>(expf(x[e] - mx));
      }
    }
    sum = blockSum(sum, shSum);
    const double logSum = log(sum);
    if constexpr (Mode != RegRowMode::Backward) {
      if (holdsTarget)
        rowLoss[i] = logSum - static_cast<double>(xt - mx);
    }
    if constexpr (Mode != RegRowMode::Forward) {
      zrt_bf16 *drow = dlogits + i * V;
      const float ls = static_cast<float>(logSum);
#pragma unroll
      for (int k = 0; k < kRegRowVecs; ++k) {
        const int v = threadIdx.x + k * blockDim.x;
        if (v >= rowVecs)
          continue;
        float d[kBf16PerVec];
        if (v < loadVecs) {
          float x[kBf16PerVec];
          unpackBf16x8(r[k], x);
#pragma unroll
          for (int e = 0; e < kBf16PerVec; ++e)
            d[e] = ceGrad(x[e], mx, ls, g, false);
          if ((v + 1) * kBf16PerVec > ncols) {
#pragma unroll
            for (int e = 0; e < kBf16PerVec; ++e)
              if (v * kBf16PerVec + e >= ncols)
                d[e] = 0.0f;
          }
          if (v == tv) {
#pragma unroll
            for (int e = 0; e < kBf16PerVec; ++e)
              if (e == te)
                d[e] = __fsub_rn(d[e], g); // ceGrad's drow[t] -= g
          }
        } else {
#pragma unroll
          for (int e = 0; e < kBf16PerVec; ++e)
            d[e] = 0.0f;
        }
        *reinterpret_cast<uint4 *>(drow + v * kBf16PerVec) = packBf16x8(d);
      }
    }
  }
}

/// Launches crossEntropyRegKernel<Mode> over N rows of V logits (regRowFits
/// holds): regRowThreads(V) threads, regRowBlocks blocks, V * 2 bytes of
/// dynamic shared memory.
template <RegRowMode Mode>
int launchRegRows(const char *fn, const zrt_bf16 *logits,
                  const int32_t *targets, zrt_bf16 *dlogits, double *rowLoss,
                  int64_t N, int64_t V, int64_t cols, float dloss,
                  const float *dlossPtr) {
  int blocks = 0;
  if (int st = regRowBlocks(N, &blocks, fn))
    return st;
  const int64_t smem = V * 2;
  if (int st = allowDynamicSharedMemory(crossEntropyRegKernel<Mode>, smem, fn))
    return st;
  crossEntropyRegKernel<Mode><<<blocks, regRowThreads(V), smem, stream()>>>(
      logits, targets, dlogits, rowLoss, N, V, cols, dloss, dlossPtr,
      device_error_word());
  return launched(fn);
}

/// Launches the forward: per-row losses into the workspace, then the mean.
/// bf16 logits: the staged kernel when a row fits in shared memory.
template <typename T>
int crossEntropyForward(const char *fn, const T *logits, const int32_t *targets,
                        float *loss, int64_t N, int64_t V, int64_t cols,
                        int hasIgnore, int32_t ignoreIndex) {
  void *ws = nullptr;
  if (int st = workspace(N * static_cast<int64_t>(sizeof(double)), &ws, fn))
    return st;
  double *rowLoss = static_cast<double *>(ws);
  if (N > 0) {
    bool staged = false;
    if constexpr (std::is_same_v<T, zrt_bf16>) {
      bool inRegs = false;
      if (!hasIgnore) {
        if (int st = regRowFits(V, logits, nullptr, &inRegs, fn))
          return st;
      }
      if (inRegs) {
        if (int st = launchRegRows<RegRowMode::Forward>(fn, logits, targets,
                                                        nullptr, rowLoss, N, V,
                                                        cols, 0.0f, nullptr))
          return st;
        staged = true; // launched
      } else if (int st = stagedFits(cols, &staged, fn)) {
        return st;
      }
      if (staged && !inRegs) {
        const int64_t smem = stagedBytes(cols);
        if (int st = allowDynamicSharedMemory(crossEntropyRowsStagedKernel, smem, fn))
          return st;
        crossEntropyRowsStagedKernel<<<lossRowBlocks(N), stagedRowThreads(cols),
                                       smem, stream()>>>(
            logits, targets, rowLoss, N, V, cols, hasIgnore, ignoreIndex,
            device_error_word());
      }
    }
    if (!staged)
      crossEntropyRowsKernel<T>
          <<<lossRowBlocks(N), lossRowThreads(cols), 0, stream()>>>(
              logits, targets, rowLoss, N, V, cols, hasIgnore, ignoreIndex,
              device_error_word());
    if (int st = launched(fn))
      return st;
  }
  // With N == 0 this writes the NaN of an empty mean.
  crossEntropyMeanKernel<<<1, kLossFinalThreads, 0, stream()>>>(
      rowLoss, targets, N, hasIgnore, ignoreIndex, loss);
  return launched(fn);
}

/// Launches the masked cross-entropy's backward
/// (zrt_cross_entropy_masked_backward(_bf16); arguments checked, N > 0):
/// the number M of counted rows into the workspace (countTargetsKernel),
/// then crossEntropyBackward with g = *dloss / M, ignored rows zeroed
/// (bf16 logits: rows staged in shared memory when they fit, as the padded
/// backward's staged path).
template <typename T>
int crossEntropyMaskedBackward(const char *fn, const T *logits,
                               const int32_t *targets, const float *dloss,
                               T *dlogits, int64_t N, int64_t V, int64_t cols,
                               int32_t ignoreIndex) {
  void *ws = nullptr;
  if (int st = workspace(sizeof(int64_t), &ws, fn))
    return st;
  int64_t *count = static_cast<int64_t *>(ws);
  countTargetsKernel<<<1, kLossFinalThreads, 0, stream()>>>(
      targets, N, ignoreIndex, count);
  if (int st = launched(fn))
    return st;
  if constexpr (std::is_same_v<T, zrt_bf16>) {
    bool staged = false;
    if (int st = stagedFits(cols, &staged, fn))
      return st;
    if (staged) {
      const int64_t smem = stagedBytes(cols);
      if (int st = allowDynamicSharedMemory(crossEntropyBackwardStagedKernel,
                                            smem, fn))
        return st;
      crossEntropyBackwardStagedKernel<<<lossRowBlocks(N),
                                         stagedRowThreads(cols), smem,
                                         stream()>>>(
          logits, targets, dlogits, N, V, cols, 1, ignoreIndex, count, dloss,
          device_error_word());
      return launched(fn);
    }
  }
  crossEntropyBackwardKernel<T>
      <<<lossRowBlocks(N), lossRowThreads(cols), 0, stream()>>>(
          logits, targets, dlogits, N, V, cols, 1, ignoreIndex, count, 0.0f,
          dloss, device_error_word());
  return launched(fn);
}

/// Launches the fused padded cross-entropy: per-row losses into the
/// workspace and the gradient over the logits (crossEntropyFusedKernel,
/// with crossEntropyForward's choice of kernel and launch configuration:
/// bf16 rows staged when they fit in shared memory), then the mean.
template <typename T>
int crossEntropyPaddedFused(const char *fn, T *logits, const int32_t *targets,
                            float *loss, float dloss, int64_t N, int64_t V,
                            int64_t cols) {
  void *ws = nullptr;
  if (int st = workspace(N * static_cast<int64_t>(sizeof(double)), &ws, fn))
    return st;
  double *rowLoss = static_cast<double *>(ws);
  if (N > 0) {
    bool staged = false;
    if constexpr (std::is_same_v<T, zrt_bf16>) {
      bool inRegs = false;
      if (int st = regRowFits(V, logits, logits, &inRegs, fn))
        return st;
      if (inRegs) {
        if (int st = launchRegRows<RegRowMode::Fused>(fn, logits, targets,
                                                      logits, rowLoss, N, V,
                                                      cols, dloss, nullptr))
          return st;
        staged = true; // launched
      } else if (int st = stagedFits(cols, &staged, fn)) {
        return st;
      }
      if (staged && !inRegs) {
        const int64_t smem = stagedBytes(cols);
        if (int st = allowDynamicSharedMemory(crossEntropyFusedStagedKernel,
                                              smem, fn))
          return st;
        crossEntropyFusedStagedKernel<<<
            lossRowBlocks(N), stagedRowThreads(cols), smem, stream()>>>(
            logits, targets, rowLoss, N, V, cols, dloss, device_error_word());
      }
    }
    if (!staged)
      crossEntropyFusedKernel<T>
          <<<lossRowBlocks(N), lossRowThreads(cols), 0, stream()>>>(
              logits, targets, rowLoss, N, V, cols, dloss, device_error_word());
    if (int st = launched(fn))
      return st;
  }
  // With N == 0 this writes the NaN of an empty mean (and nothing else).
  crossEntropyMeanKernel<<<1, kLossFinalThreads, 0, stream()>>>(
      rowLoss, targets, N, 0, 0, loss);
  return launched(fn);
}

//===----------------------------------------------------------------------===//
// MSE
//===----------------------------------------------------------------------===//

/// Stage 1: partial[b] = sum of (double(pred) - double(target))^2 over
/// block b's grid-stride loop.
__global__ void msePartialKernel(const float *pred, const float *target,
                                 int64_t n, double *partial) {
  __shared__ double shared[32];
  double total = 0.0;
  ZRT_GRID_STRIDE(i, n) {
    const double d =
        static_cast<double>(pred[i]) - static_cast<double>(target[i]);
    total += d * d;
  }
  total = blockSum(total, shared);
  if (threadIdx.x == 0)
    partial[blockIdx.x] = total;
}

/// Stage 2 (one block): *loss = f32(sum of partials / n), NaN for n == 0.
__global__ void mseFinalKernel(const double *partial, int count, int64_t n,
                               float *loss) {
  __shared__ double shared[32];
  double total = 0.0;
  for (int b = threadIdx.x; b < count; b += blockDim.x)
    total += partial[b];
  total = blockSum(total, shared);
  if (threadIdx.x == 0)
    *loss =
        n > 0 ? static_cast<float>(total / static_cast<double>(n)) : quietNaN();
}

/// dpred = (pred - target) * g, dtarget = -dpred (either may be NULL).
__global__ void mseBackwardKernel(const float *pred, const float *target,
                                  float g, float *dpred, float *dtarget,
                                  int64_t n) {
  ZRT_GRID_STRIDE(i, n) {
    const float d = __fmul_rn(__fsub_rn(pred[i], target[i]), g);
    if (dpred)
      dpred[i] = d;
    if (dtarget)
      dtarget[i] = -d;
  }
}

} // namespace

namespace zrt_cuda {

/// zrt_embedding (loss.cpp): out[i, :] = table[ids[i], :].
int embedding(const float *table, const int32_t *ids, float *out, int64_t N,
              int64_t V, int64_t C) {
  return embeddingGather("zrt_embedding", table, ids, out, N, V, C);
}

/// zrt_embedding_bf16: embedding's kernel on bf16 rows (copied).
int embedding_bf16(const zrt_bf16 *table, const int32_t *ids, zrt_bf16 *out,
                   int64_t N, int64_t V, int64_t C) {
  return embeddingGather("zrt_embedding_bf16", table, ids, out, N, V, C);
}

/// zrt_embedding_backward (loss.cpp): dtable = 0, then dtable[ids[i], :] +=
/// dout[i, :] in token order (embeddingScatter).
int embedding_backward(const float *dout, const int32_t *ids, float *dtable,
                       int64_t N, int64_t V, int64_t C) {
  return embeddingScatter("zrt_embedding_backward", dout, ids, dtable, N, V, C);
}

/// The rows [first, first + V) of embedding_backward over a table of
/// `whole` rows (zrt_cuda.h; vocab_parallel.cu).
int embedding_backward_part(const char *fn, const float *dout,
                            const int32_t *ids, float *dtable, int64_t N,
                            int64_t V, int64_t C, int64_t first, int64_t whole,
                            int code) {
  return embeddingScatterRows(fn, dout, ids, dtable, N, V, C, first, whole,
                              code);
}

/// zrt_embedding_backward_bf16: embedding_backward's steps on bf16 dout,
/// the f32 sums rounded once into the bf16 dtable (absent ids: zeros).
int embedding_backward_bf16(const zrt_bf16 *dout, const int32_t *ids,
                            zrt_bf16 *dtable, int64_t N, int64_t V, int64_t C) {
  return embeddingScatter("zrt_embedding_backward_bf16", dout, ids, dtable, N,
                          V, C);
}

/// zrt_cross_entropy (loss.cpp): mean over the rows whose target is not
/// ignore_index of logsumexp(row) - row[target]; NaN when there are none.
int cross_entropy(const float *logits, const int32_t *targets, float *loss,
                  int64_t N, int64_t V, int32_t ignore_index) {
  const char *fn = "zrt_cross_entropy";
  if (int st = zrt::checkCrossEntropyArgs(fn, logits, targets, loss, N, V,
                                          zrt_cuda::fail))
    return st;
  return crossEntropyForward(fn, logits, targets, loss, N, V, V, 1,
                             ignore_index);
}

/// zrt_cross_entropy_backward (loss.cpp): dlogits = dloss / M *
/// (softmax(row) - onehot(target)), zero rows for ignored targets.
int cross_entropy_backward(const float *logits, const int32_t *targets,
                           float dloss, float *dlogits, int64_t N, int64_t V,
                           int32_t ignore_index) {
  const char *fn = "zrt_cross_entropy_backward";
  if (int st = zrt::checkCrossEntropyBackwardArgs(fn, logits, targets, dlogits,
                                                  N, V, zrt_cuda::fail))
    return st;
  if (N == 0)
    return ZRT_OK;
  void *ws = nullptr;
  if (int st = workspace(sizeof(int64_t), &ws, fn))
    return st;
  int64_t *count = static_cast<int64_t *>(ws);
  countTargetsKernel<<<1, kLossFinalThreads, 0, stream()>>>(
      targets, N, ignore_index, count);
  if (int st = launched(fn))
    return st;
  crossEntropyBackwardKernel<float>
      <<<lossRowBlocks(N), lossRowThreads(V), 0, stream()>>>(
          logits, targets, dlogits, N, V, V, 1, ignore_index, count, dloss,
          nullptr, device_error_word());
  return launched(fn);
}

/// zrt_cross_entropy_padded (lowering_support.cpp): mean over all N rows of
/// the cross-entropy over the first num_classes columns (row stride V).
int cross_entropy_padded(const float *logits, const int32_t *targets,
                         float *loss, int64_t N, int64_t V,
                         int64_t num_classes) {
  const char *fn = "zrt_cross_entropy_padded";
  if (int st = zrt::checkCrossEntropyPaddedArgs(fn, logits, targets, loss, N, V,
                                                num_classes, zrt_cuda::fail))
    return st;
  return crossEntropyForward(fn, logits, targets, loss, N, V, num_classes, 0,
                             0);
}

/// zrt_cross_entropy_padded_backward (lowering_support.cpp): dloss is a
/// device pointer; padding columns get 0.
int cross_entropy_padded_backward(const float *logits, const int32_t *targets,
                                  const float *dloss, float *dlogits, int64_t N,
                                  int64_t V, int64_t num_classes) {
  const char *fn = "zrt_cross_entropy_padded_backward";
  if (int st = zrt::checkCrossEntropyPaddedBackwardArgs(
          fn, logits, targets, dloss, dlogits, N, V, num_classes,
          zrt_cuda::fail))
    return st;
  if (N == 0)
    return ZRT_OK;
  crossEntropyBackwardKernel<float>
      <<<lossRowBlocks(N), lossRowThreads(num_classes), 0, stream()>>>(
          logits, targets, dlogits, N, V, num_classes, 0, 0, nullptr, 0.0f,
          dloss, device_error_word());
  return launched(fn);
}

/// zrt_cross_entropy_padded_fused (lowering_support.cpp): cross_entropy_padded
/// and cross_entropy_padded_backward (with *dloss = dloss) in one pass, the
/// gradient written over the logits.
int cross_entropy_padded_fused(float *logits, const int32_t *targets,
                               float *loss, float dloss, int64_t N, int64_t V,
                               int64_t num_classes) {
  const char *fn = "zrt_cross_entropy_padded_fused";
  if (int st = zrt::checkCrossEntropyPaddedArgs(fn, logits, targets, loss, N, V,
                                                num_classes, zrt_cuda::fail))
    return st;
  return crossEntropyPaddedFused(fn, logits, targets, loss, dloss, N, V,
                                 num_classes);
}

/// zrt_cross_entropy_padded_bf16: cross_entropy_padded on the widened
/// logits (staged rows: one read of each logit).
int cross_entropy_padded_bf16(const zrt_bf16 *logits, const int32_t *targets,
                              float *loss, int64_t N, int64_t V,
                              int64_t num_classes) {
  const char *fn = "zrt_cross_entropy_padded_bf16";
  if (int st = zrt::checkCrossEntropyPaddedArgs(fn, logits, targets, loss, N, V,
                                                num_classes, zrt_cuda::fail))
    return st;
  return crossEntropyForward(fn, logits, targets, loss, N, V, num_classes, 0,
                             0);
}

/// zrt_cross_entropy_padded_backward_bf16: cross_entropy_padded_backward on
/// the widened logits, dlogits rounded once (staged rows: one read of each
/// logit, one write of each gradient).
int cross_entropy_padded_backward_bf16(const zrt_bf16 *logits,
                                       const int32_t *targets,
                                       const float *dloss, zrt_bf16 *dlogits,
                                       int64_t N, int64_t V,
                                       int64_t num_classes) {
  const char *fn = "zrt_cross_entropy_padded_backward_bf16";
  if (int st = zrt::checkCrossEntropyPaddedBackwardArgs(
          fn, logits, targets, dloss, dlogits, N, V, num_classes,
          zrt_cuda::fail))
    return st;
  if (N == 0)
    return ZRT_OK;
  bool inRegs = false;
  if (int st = regRowFits(V, logits, dlogits, &inRegs, fn))
    return st;
  if (inRegs)
    return launchRegRows<RegRowMode::Backward>(
        fn, logits, targets, dlogits, nullptr, N, V, num_classes, 0.0f, dloss);
  bool staged = false;
  if (int st = stagedFits(num_classes, &staged, fn))
    return st;
  if (staged) {
    const int64_t smem = stagedBytes(num_classes);
    if (int st = allowDynamicSharedMemory(crossEntropyBackwardStagedKernel, smem, fn))
      return st;
    crossEntropyBackwardStagedKernel<<<
        lossRowBlocks(N), stagedRowThreads(num_classes), smem, stream()>>>(
        logits, targets, dlogits, N, V, num_classes, 0, 0, nullptr, dloss,
        device_error_word());
  } else {
    crossEntropyBackwardKernel<zrt_bf16>
        <<<lossRowBlocks(N), lossRowThreads(num_classes), 0, stream()>>>(
            logits, targets, dlogits, N, V, num_classes, 0, 0, nullptr, 0.0f,
            dloss, device_error_word());
  }
  return launched(fn);
}

/// zrt_cross_entropy_padded_fused_bf16: cross_entropy_padded_bf16 and
/// cross_entropy_padded_backward_bf16 in one pass (staged rows: one read of
/// each logit, one write of each gradient, in place).
int cross_entropy_padded_fused_bf16(zrt_bf16 *logits, const int32_t *targets,
                                    float *loss, float dloss, int64_t N,
                                    int64_t V, int64_t num_classes) {
  const char *fn = "zrt_cross_entropy_padded_fused_bf16";
  if (int st = zrt::checkCrossEntropyPaddedArgs(fn, logits, targets, loss, N, V,
                                                num_classes, zrt_cuda::fail))
    return st;
  return crossEntropyPaddedFused(fn, logits, targets, loss, dloss, N, V,
                                 num_classes);
}

/// zrt_cross_entropy_masked (zrt/decoder.h, loss_masked.cpp): the padded
/// cross-entropy's rows (first num_classes columns, row stride V) with
/// ignore_index: *loss (device) = the mean over the M rows whose target is
/// not ignore_index, NaN when M = 0.
int cross_entropy_masked(const float *logits, const int32_t *targets,
                         float *loss, int64_t N, int64_t V,
                         int64_t num_classes, int32_t ignore_index) {
  const char *fn = "zrt_cross_entropy_masked";
  if (int st = zrt::checkMaskedCrossEntropyArgs(fn, logits, targets, loss, N, V,
                                                num_classes, zrt_cuda::fail))
    return st;
  return crossEntropyForward(fn, logits, targets, loss, N, V, num_classes, 1,
                             ignore_index);
}

/// zrt_cross_entropy_masked_bf16: cross_entropy_masked on the widened
/// logits (rows staged in shared memory when they fit).
int cross_entropy_masked_bf16(const zrt_bf16 *logits, const int32_t *targets,
                              float *loss, int64_t N, int64_t V,
                              int64_t num_classes, int32_t ignore_index) {
  const char *fn = "zrt_cross_entropy_masked_bf16";
  if (int st = zrt::checkMaskedCrossEntropyArgs(fn, logits, targets, loss, N, V,
                                                num_classes, zrt_cuda::fail))
    return st;
  return crossEntropyForward(fn, logits, targets, loss, N, V, num_classes, 1,
                             ignore_index);
}

/// zrt_cross_entropy_masked_backward: dlogits = *dloss / M (softmax -
/// onehot) on counted rows' classes, 0 on ignored rows and padding columns;
/// dloss a device pointer.
int cross_entropy_masked_backward(const float *logits, const int32_t *targets,
                                  const float *dloss, float *dlogits,
                                  int64_t N, int64_t V, int64_t num_classes,
                                  int32_t ignore_index) {
  const char *fn = "zrt_cross_entropy_masked_backward";
  if (int st = zrt::checkMaskedCrossEntropyArgs(fn, logits, targets, dlogits,
                                                N, V, num_classes,
                                                zrt_cuda::fail))
    return st;
  ZRT_CUDA_REQUIRE(dloss, "%s: dloss is NULL", fn);
  if (N == 0)
    return ZRT_OK;
  return crossEntropyMaskedBackward(fn, logits, targets, dloss, dlogits, N, V,
                                    num_classes, ignore_index);
}

/// zrt_cross_entropy_masked_backward_bf16: cross_entropy_masked_backward on
/// the widened logits, dlogits rounded once.
int cross_entropy_masked_backward_bf16(const zrt_bf16 *logits,
                                       const int32_t *targets,
                                       const float *dloss, zrt_bf16 *dlogits,
                                       int64_t N, int64_t V,
                                       int64_t num_classes,
                                       int32_t ignore_index) {
  const char *fn = "zrt_cross_entropy_masked_backward_bf16";
  if (int st = zrt::checkMaskedCrossEntropyArgs(fn, logits, targets, dlogits,
                                                N, V, num_classes,
                                                zrt_cuda::fail))
    return st;
  ZRT_CUDA_REQUIRE(dloss, "%s: dloss is NULL", fn);
  if (N == 0)
    return ZRT_OK;
  return crossEntropyMaskedBackward(fn, logits, targets, dloss, dlogits, N, V,
                                    num_classes, ignore_index);
}

/// zrt_mse (loss.cpp): *loss = f32(sum (pred - target)^2 / n) with the sum
/// in double (deterministic two-stage reduction); NaN for n == 0.
int mse(const float *pred, const float *target, float *loss, int64_t n) {
  const char *fn = "zrt_mse";
  if (int st = zrt::checkMseArgs(fn, pred, target, loss, n, zrt_cuda::fail))
    return st;
  int blocks = blocksFor(n);
  blocks = blocks < kLossReduceBlocks ? blocks : kLossReduceBlocks;
  void *ws = nullptr;
  if (int st =
          workspace(static_cast<int64_t>(blocks) * sizeof(double), &ws, fn))
    return st;
  double *partial = static_cast<double *>(ws);
  msePartialKernel<<<blocks, kThreads, 0, stream()>>>(pred, target, n, partial);
  if (int st = launched(fn))
    return st;
  mseFinalKernel<<<1, kLossFinalThreads, 0, stream()>>>(partial, blocks, n,
                                                        loss);
  return launched(fn);
}

/// zrt_mse_backward (loss.cpp): with g = 2 dloss / n (host value),
/// dpred = (pred - target) * g and dtarget = -dpred; either may be NULL.
int mse_backward(const float *pred, const float *target, float dloss,
                 float *dpred, float *dtarget, int64_t n) {
  const char *fn = "zrt_mse_backward";
  if (int st = zrt::checkMseBackwardArgs(fn, pred, target, n, zrt_cuda::fail))
    return st;
  if (n == 0 || (!dpred && !dtarget))
    return ZRT_OK;
  // The CPU's expression, evaluated on the host.
  const float g = 2.0f * dloss / static_cast<float>(n);
  mseBackwardKernel<<<blocksFor(n), kThreads, 0, stream()>>>(pred, target, g,
                                                             dpred, dtarget, n);
  return launched(fn);
}

} // namespace zrt_cuda
