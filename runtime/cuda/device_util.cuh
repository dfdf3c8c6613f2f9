//===- device_util.cuh - CUDA backend: shared device helpers -----*- CUDA -*-===//
//
// Launch geometry, the grid-stride loop, bf16 <-> f32 on the device with the
// CPU runtime's exact rounding, the GELU arithmetic, and block reductions,
// shared by the .cu files of the backend.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CUDA_DEVICE_UTIL_CUH
#define ZRT_CUDA_DEVICE_UTIL_CUH

#include "zrt_cuda.h"

#include "../src/common/f16_bits.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace zrt_cuda {

/// Threads per block of the elementwise kernels.
constexpr int kThreads = 256;
/// Upper bound of the grid of grid-stride kernels.
constexpr int64_t kMaxBlocks = 65535;

/// Blocks of kThreads covering n elements (at least 1, at most kMaxBlocks).
inline int blocksFor(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(b < 1 ? 1 : (b < kMaxBlocks ? b : kMaxBlocks));
}

/// bf16 bits -> f32 (exact), as zrt_bf16_to_f32.
__device__ __forceinline__ float bf16ToF32(uint16_t h) {
  return __uint_as_float(static_cast<uint32_t>(h) << 16);
}

/// f32 -> bf16 bits, round to nearest even, NaN kept quiet: exactly
/// zrt_f32_to_bf16 (runtime/src/common/internal.h f32ToBf16).
__device__ __forceinline__ uint16_t f32ToBf16(float f) {
  const uint32_t u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((u >> 16) | 0x0040u);
  const uint32_t bias = 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>((u + bias) >> 16);
}

/// Element loads and stores of the kernels templated over their tensors'
/// element type (float or zrt_bf16): ldf widens exactly to f32, stf rounds
/// an f32 result once (f32ToBf16) or stores it as is. The f32 arithmetic
/// in between is the same for both instantiations.
__device__ __forceinline__ float ldf(const float *p) { return *p; }
__device__ __forceinline__ float ldf(const zrt_bf16 *p) {
  return bf16ToF32(*p);
}
__device__ __forceinline__ void stf(float *p, float v) { *p = v; }
__device__ __forceinline__ void stf(zrt_bf16 *p, float v) { *p = f32ToBf16(v); }
/// v as a T holds it once stored, widened back (what ldf reads after stf):
/// v itself for float, v rounded to bf16 for zrt_bf16.
template <typename T> __device__ __forceinline__ float asStored(float v) {
  T t;
  stf(&t, v);
  return ldf(&t);
}

/// zrt_add's per-element arithmetic, op(a, b) = a + b in f32 (bf16: on the
/// widened values, rounded once by the store): shared by the elementwise
/// kernels of zrt_add(_bf16) (elementwise.cu) and the residual adds of
/// zrt_add_layer_norm(_bf16) and zrt_layer_norm_backward_add(_bf16)
/// (norm.cu), so the fused functions add exactly as zrt_add does.
struct AddOp {
  __device__ __forceinline__ float operator()(float a, float b) const {
    return a + b;
  }
};

/// bf16 elements from `p` (2-byte aligned) to the next 16-byte boundary
/// (0 .. 7): the scalar head before the vectorized part of a bf16 kernel.
inline __host__ __device__ int bf16HeadToAlign16(const void *p) {
  return static_cast<int>(
      ((16u - static_cast<unsigned>(reinterpret_cast<uintptr_t>(p) & 15u)) &
       15u) >>
      1);
}

/// 8 bf16 in 16 bytes (uint4 words w: element 2k in the low half of w[k],
/// 2k + 1 in the high half): the vector unit of the bf16 kernels.
constexpr int kBf16PerVec = 8;
__device__ __forceinline__ void unpackBf16x8(const uint4 &w, float (&f)[8]) {
  const uint32_t u[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    f[2 * k] = __uint_as_float(u[k] << 16);
    f[2 * k + 1] = __uint_as_float(u[k] & 0xffff0000u);
  }
}
__device__ __forceinline__ uint4 packBf16x8(const float (&f)[8]) {
  uint32_t u[4];
#pragma unroll
  for (int k = 0; k < 4; ++k)
    u[k] = static_cast<uint32_t>(f32ToBf16(f[2 * k])) |
           (static_cast<uint32_t>(f32ToBf16(f[2 * k + 1])) << 16);
  return make_uint4(u[0], u[1], u[2], u[3]);
}

/// expf with the CPU runtime's input clamp to [-87.3, 88.3].
__device__ __forceinline__ float expClamped(float x) {
  return expf(fminf(fmaxf(x, -87.3f), 88.3f));
}

// sqrt(2 / pi) and the cubic coefficient of the tanh GELU approximation,
// as the CPU runtime (elementwise.cpp), through 1 + tanh(u) = 2 sigmoid(2u).
constexpr float kGeluScale = 0.7978845608028654f;
constexpr float kGeluCubic = 0.044715f;

/// op(x, unused) = gelu(x): the per-element arithmetic of zrt_gelu (the CPU
/// runtime's, elementwise.cpp), shared by the f32 and bf16 kernels of
/// elementwise.cu and the GELU epilogue of matmul_bf16.cu.
struct GeluOp {
  __device__ __forceinline__ float operator()(float v, float) const {
    const float u = kGeluScale * (v + kGeluCubic * v * v * v);
    return v / (1.0f + expClamped(-2.0f * u));
  }
};

/// op(x, dout) = gelu'(x) * dout: zrt_gelu_backward's arithmetic, shared as
/// GeluOp (the DGELU epilogue of matmul_bf16.cu).
struct GeluBackwardOp {
  __device__ __forceinline__ float operator()(float v, float g) const {
    const float u = kGeluScale * (v + kGeluCubic * v * v * v);
    const float du = kGeluScale * (1.0f + 3.0f * kGeluCubic * v * v);
    const float ex = expClamped(-2.0f * u);
    const float s = 1.0f / (1.0f + ex);
    const float grad = s + 2.0f * v * s * (ex * s) * du;
    return grad * g;
  }
};

/// Sum of `v` over the warp (every lane gets the total).
__device__ __forceinline__ float warpSum(float v) {
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ double warpSum(double v) {
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
/// Maximum of `v` over the warp (every lane gets it).
__device__ __forceinline__ float warpMax(float v) {
  for (int o = 16; o > 0; o >>= 1)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

/// Sum of `v` over the block (blockDim.x a multiple of 32, at most 1024);
/// every thread gets the total. `shared` holds 32 values of T. Contains
/// __syncthreads: call from every thread of the block.
template <typename T>
__device__ __forceinline__ T blockSum(T v, T *shared) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int warps = (blockDim.x + 31) >> 5;
  v = warpSum(v);
  __syncthreads(); // shared may still be read by a previous blockSum
  if (lane == 0)
    shared[warp] = v;
  __syncthreads();
  T total = lane < warps ? shared[lane] : T(0);
  return warpSum(total);
}

/// Maximum of `v` over the block; as blockSum.
__device__ __forceinline__ float blockMax(float v, float *shared) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int warps = (blockDim.x + 31) >> 5;
  v = warpMax(v);
  __syncthreads();
  if (lane == 0)
    shared[warp] = v;
  __syncthreads();
  float m = lane < warps ? shared[lane] : -INFINITY;
  return warpMax(m);
}

/// Raises the device error word (first error wins); see zrt_cuda.h.
__device__ __forceinline__ void raiseDeviceError(int *word, int code) {
  if (word)
    atomicCAS(word, 0, code);
}

} // namespace zrt_cuda

#define ZRT_GRID_STRIDE(i, n)                                                  \
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (n);    \
       i += (int64_t)gridDim.x * blockDim.x)

namespace zrt_cuda {

/// Rows handled by one warp-per-row kernel block (kThreads / 32 warps).
constexpr int kRowsPerBlock = kThreads / 32;

/// Blocks of kRowsPerBlock warps covering `rows` rows, one warp per row
/// (rows >= 1; a grid of up to 2^31 - 1 blocks covers any [N, C] that fits
/// in device memory).
inline unsigned warpRowBlocks(int64_t rows) {
  return static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock);
}

/// memmove of `bytes` device bytes on the compute stream (zrt_copy,
/// zrt_copy_any). cudaMemcpyAsync is undefined for overlapping ranges, so
/// an overlapping move is staged through the workspace in chunks, front to
/// back when dst < src and back to front otherwise: a chunk is read before
/// any later chunk's destination can cover it.
inline int moveBytes(void *dst, const void *src, int64_t bytes,
                     const char *fn) {
  if (bytes <= 0 || dst == src)
    return ZRT_OK;
  char *d = static_cast<char *>(dst);
  const char *s = static_cast<const char *>(src);
  const uintptr_t du = reinterpret_cast<uintptr_t>(d);
  const uintptr_t su = reinterpret_cast<uintptr_t>(s);
  const uintptr_t dist = du > su ? du - su : su - du;
  if (dist >= static_cast<uintptr_t>(bytes))
    return check(cudaMemcpyAsync(d, s, static_cast<size_t>(bytes),
                                 cudaMemcpyDeviceToDevice, stream()),
                 ZRT_ERR_INVALID_ARGUMENT, fn, "cudaMemcpyAsync");
  const int64_t chunk = bytes < kWorkspaceBytes ? bytes : kWorkspaceBytes;
  void *ws = nullptr;
  if (int st = workspace(chunk, &ws, fn))
    return st;
  const bool forward = du < su;
  for (int64_t done = 0; done < bytes; done += chunk) {
    const int64_t len = bytes - done < chunk ? bytes - done : chunk;
    const int64_t at = forward ? done : bytes - done - len;
    if (int st = check(cudaMemcpyAsync(ws, s + at, static_cast<size_t>(len),
                                       cudaMemcpyDeviceToDevice, stream()),
                       ZRT_ERR_INVALID_ARGUMENT, fn, "cudaMemcpyAsync"))
      return st;
    if (int st = check(cudaMemcpyAsync(d + at, ws, static_cast<size_t>(len),
                                       cudaMemcpyDeviceToDevice, stream()),
                       ZRT_ERR_INVALID_ARGUMENT, fn, "cudaMemcpyAsync"))
      return st;
  }
  return ZRT_OK;
}

//===----------------------------------------------------------------------===//
// Deterministic column sums of a [rows, cols] matrix (bias_backward,
// layer_norm_backward's dweight / dbias), without floating-point atomics.
// Pass 1 (columnPartialsKernel): a block of 32 x 8 threads takes a tile of
// 32 * W columns and one chunk of rows; each thread owns W contiguous
// columns (W = 16 bytes of the element type: 8 bf16 or 4 floats, one
// 16-byte load per row and matrix, so a warp reads 512 contiguous bytes of
// a bf16 row; W = 1 when cols is not a multiple of W or a matrix is not
// 16-byte aligned) and the rows r0 + ty, r0 + ty + 8, ... of the chunk,
// kColRowsInFlight of them loaded before they are added; then the 8
// row-threads of a column are added in order into a per-chunk partial in
// the workspace. Pass 2 (columnTotalsKernel): 32 threads per column each
// add every 32nd chunk's partial, then these 32 sums in order. The chunks
// depend only on rows and cols (not on W), so the vector and the scalar
// path, and the f32 and the bf16 instantiations, give the same bits.
//===----------------------------------------------------------------------===//

/// Elements of T in 16 bytes: the vector width W of the column sums over a
/// T matrix (4 floats, 8 bf16).
template <typename T> constexpr int kVecOf = 16 / static_cast<int>(sizeof(T));

/// f[e] = p[e] widened to f32 (ldf), e < W: one 16-byte load when W is
/// kVecOf<T> (p 16-byte aligned), else W scalar loads.
template <int W>
__device__ __forceinline__ void ldfVec(const float *p, float (&f)[W]) {
  if constexpr (W == 4) {
    const float4 v = *reinterpret_cast<const float4 *>(p);
    f[0] = v.x;
    f[1] = v.y;
    f[2] = v.z;
    f[3] = v.w;
  } else {
#pragma unroll
    for (int e = 0; e < W; ++e)
      f[e] = p[e];
  }
}
template <int W>
__device__ __forceinline__ void ldfVec(const zrt_bf16 *p, float (&f)[W]) {
  if constexpr (W == kBf16PerVec) {
    // Through a local: passed straight to unpackBf16x8, nvcc 13 split the
    // load into 8 + 4 + 4 bytes here.
    const uint4 w = *reinterpret_cast<const uint4 *>(p);
    unpackBf16x8(w, f);
  } else {
#pragma unroll
    for (int e = 0; e < W; ++e)
      f[e] = bf16ToF32(p[e]);
  }
}

/// Whether p lies on a 16-byte boundary (the vector path's requirement).
inline bool isAligned16(const void *p) {
  return (reinterpret_cast<uintptr_t>(p) & 15u) == 0;
}

/// Pass-1 block: 32 threads across the columns (W each), 8 row-threads.
constexpr int kColLanes = 32;
constexpr int kColRowThreads = 8;
constexpr int kColThreads = kColLanes * kColRowThreads;
/// Rows a pass-1 thread loads before adding them (loads in flight).
constexpr int kColRowsInFlight = 4;
/// Pass-2 block: 8 columns, 32 threads per column.
constexpr int kTotalCols = 8;
constexpr int kTotalRowThreads = kColThreads / kTotalCols;

/// Pass 1: partials[(k * chunks + chunk) * cols + j] = the sum of the k-th
/// term of (r, j) over the rows r of chunk `chunk` (k < K). The Term
/// (BiasTerm, LayerNormParamTerm) reads W columns of a row at once:
/// `Row<W> v = term.load<W>(r, j)` loads row r's inputs at columns
/// j .. j + W (W > 1: one 16-byte load per matrix, aligned), and
/// `term.add<W>(v, acc)` adds the K terms of each of these W elements into
/// acc[k][e]. W > 1 requires cols % W == 0 and 16-byte aligned matrices.
template <int K, int W, typename Term>
__global__ void __launch_bounds__(kColThreads)
    columnPartialsKernel(Term term, int64_t rows, int64_t cols,
                         int64_t rowsPerChunk, int64_t chunks,
                         float *partials) {
  constexpr int kTile = kColLanes * W;
  __shared__ float shared[K][kColRowThreads][kTile];
  using Row = typename Term::template Row<W>;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t tile0 = blockIdx.x * static_cast<int64_t>(kTile);
  const int64_t j = tile0 + tx * W; // this thread's first column
  const int64_t chunk = blockIdx.y;
  const int64_t r0 = chunk * rowsPerChunk;
  const int64_t r1 = r0 + rowsPerChunk < rows ? r0 + rowsPerChunk : rows;
  float acc[K][W];
#pragma unroll
  for (int k = 0; k < K; ++k)
#pragma unroll
    for (int e = 0; e < W; ++e)
      acc[k][e] = 0.0f;
  if (j < cols) { // then j + W <= cols (cols % W == 0)
    constexpr int64_t step = kColRowThreads;
    int64_t r = r0 + ty;
    // kColRowsInFlight rows loaded, then added in row order.
    for (; r + (kColRowsInFlight - 1) * step < r1;
         r += kColRowsInFlight * step) {
      Row v[kColRowsInFlight];
#pragma unroll
      for (int u = 0; u < kColRowsInFlight; ++u)
        v[u] = term.template load<W>(r + u * step, j);
#pragma unroll
      for (int u = 0; u < kColRowsInFlight; ++u)
        term.template add<W>(v[u], acc);
    }
    for (; r < r1; r += step)
      term.template add<W>(term.template load<W>(r, j), acc);
  }
#pragma unroll
  for (int k = 0; k < K; ++k)
#pragma unroll
    for (int e = 0; e < W; ++e)
      shared[k][ty][tx * W + e] = acc[k][e];
  __syncthreads();
  // The tile's K * kTile column sums, the 8 row-threads in order.
  for (int o = ty * kColLanes + tx; o < K * kTile; o += kColThreads) {
    const int k = o / kTile, c = o - k * kTile;
    if (tile0 + c < cols) {
      float s = shared[k][0][c];
      for (int t = 1; t < kColRowThreads; ++t)
        s += shared[k][t][c];
      partials[(k * chunks + chunk) * cols + tile0 + c] = s;
    }
  }
}

/// Pass 2: out_k[j] = the sum over chunks c of the partials (f32): thread
/// ty of column j adds the chunks c = ty, ty + 32, ... in order, then the
/// 32 sums are added in ty order; stored as Out (float, or zrt_bf16 rounded
/// once); out_k may be NULL (skipped). chunks == 0 writes zeros.
template <int K, typename Out>
__global__ void __launch_bounds__(kColThreads)
    columnTotalsKernel(const float *partials, int64_t chunks, int64_t cols,
                       Out *out0, Out *out1) {
  __shared__ float shared[K][kTotalRowThreads][kTotalCols];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t j = blockIdx.x * static_cast<int64_t>(kTotalCols) + tx;
  float acc[K];
#pragma unroll
  for (int k = 0; k < K; ++k)
    acc[k] = 0.0f;
  if (j < cols) {
#pragma unroll 4
    for (int64_t c = ty; c < chunks; c += kTotalRowThreads)
#pragma unroll
      for (int k = 0; k < K; ++k)
        acc[k] += partials[(k * chunks + c) * cols + j];
  }
#pragma unroll
  for (int k = 0; k < K; ++k)
    shared[k][ty][tx] = acc[k];
  __syncthreads();
  if (ty < K && j < cols) {
    Out *out = ty == 0 ? out0 : out1;
    if (out) {
      float s = shared[ty][0][tx];
      for (int t = 1; t < kTotalRowThreads; ++t)
        s += shared[ty][t][tx];
      stf(out + j, s);
    }
  }
}

/// T itself, in a context where template arguments are not deduced.
template <typename T> struct NonDeduced { using type = T; };

/// Column sums of K (1 or 2) terms over a [rows, cols] matrix into out0
/// (and out1 when K == 2; either may be NULL), overwriting them; rows == 0
/// writes zeros. cols >= 1. The sums are f32; Out (float or zrt_bf16) is
/// the type of the outputs (bf16: each sum rounded once). Term::kVec is the
/// vector width W of its matrices (kVecOf), Term::aligned() whether they
/// all are 16-byte aligned: the vector path when that holds and cols is a
/// multiple of W, else the scalar one (same sums, bit for bit). Launches on
/// the compute stream.
template <int K, typename Term, typename Out>
int columnSums(const Term &term, int64_t rows, int64_t cols, Out *out0,
               typename NonDeduced<Out>::type *out1, const char *fn) {
  static_assert(K == 1 || K == 2, "one or two column sums");
  constexpr int W = Term::kVec;
  // The chunks, from rows and cols only: about 2048 pass-1 blocks of
  // 256-column tiles (2 to 4 waves of 132 SMs), whole rounds of the
  // kColRowsInFlight rows of the 8 row-threads and at least two per
  // chunk, and the partials within the reserved workspace.
  constexpr int64_t kRound = kColRowThreads * kColRowsInFlight;
  int64_t chunks = 0, rowsPerChunk = 1;
  if (rows > 0) {
    const int64_t wideTiles = (cols + 255) / 256;
    int64_t want = (2048 + wideTiles - 1) / wideTiles;
    const int64_t byBytes = kWorkspaceBytes / (K * cols * 4);
    want = want < byBytes ? want : byBytes;
    want = want < 1 ? 1 : want;
    rowsPerChunk = (rows + want - 1) / want;
    rowsPerChunk = (rowsPerChunk + kRound - 1) / kRound * kRound;
    rowsPerChunk = rowsPerChunk > 2 * kRound ? rowsPerChunk : 2 * kRound;
    chunks = (rows + rowsPerChunk - 1) / rowsPerChunk;
  }
  void *ws = nullptr;
  if (int st = workspace(K * (chunks > 0 ? chunks : 1) * cols * 4, &ws, fn))
    return st;
  float *partials = static_cast<float *>(ws);
  if (chunks > 0) {
    const dim3 block(kColLanes, kColRowThreads);
    if (cols % W == 0 && term.aligned()) {
      const dim3 grid(
          static_cast<unsigned>((cols / W + kColLanes - 1) / kColLanes),
          static_cast<unsigned>(chunks));
      columnPartialsKernel<K, W, Term><<<grid, block, 0, stream()>>>(
          term, rows, cols, rowsPerChunk, chunks, partials);
    } else {
      const dim3 grid(static_cast<unsigned>((cols + kColLanes - 1) / kColLanes),
                      static_cast<unsigned>(chunks));
      columnPartialsKernel<K, 1, Term><<<grid, block, 0, stream()>>>(
          term, rows, cols, rowsPerChunk, chunks, partials);
    }
    if (int st = launched(fn))
      return st;
  }
  const dim3 grid(static_cast<unsigned>((cols + kTotalCols - 1) / kTotalCols));
  const dim3 block(kTotalCols, kTotalRowThreads);
  columnTotalsKernel<K, Out>
      <<<grid, block, 0, stream()>>>(partials, chunks, cols, out0, out1);
  return launched(fn);
}

/// The current device's per-block opt-in limit of dynamic shared memory
/// (cudaDevAttrMaxSharedMemoryPerBlockOptin), in bytes, into *bytes.
/// Errors: as check() (the failing CUDA call named, `fn` first).
inline int sharedMemoryOptin(int *bytes, const char *fn) {
  int dev = 0;
  if (int st = check(cudaGetDevice(&dev), ZRT_ERR_INVALID_ARGUMENT, fn,
                     "cudaGetDevice"))
    return st;
  return check(cudaDeviceGetAttribute(
                   bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev),
               ZRT_ERR_INVALID_ARGUMENT, fn, "cudaDeviceGetAttribute");
}

/// Allows `kernel` `bytes` of dynamic shared memory (required above 48 KB;
/// cudaFuncAttributeMaxDynamicSharedMemorySize). Errors: as check().
template <typename Kernel>
int allowDynamicSharedMemory(Kernel kernel, int64_t bytes, const char *fn) {
  return check(cudaFuncSetAttribute(kernel,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(bytes)),
               ZRT_ERR_INVALID_ARGUMENT, fn, "cudaFuncSetAttribute");
}

} // namespace zrt_cuda

#endif // ZRT_CUDA_DEVICE_UTIL_CUH
