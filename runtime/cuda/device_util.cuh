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
/// zrt_f32_to_bf16 (runtime/src/internal.h f32ToBf16).
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
// layer_norm_backward's dweight / dbias), without floating-point atomics:
// pass 1 sums row chunks of 32-column tiles into per-chunk partials in the
// workspace (each thread a fixed set of rows, then the 8 row-threads of a
// column in order); pass 2 adds each column's partials in chunk order.
//===----------------------------------------------------------------------===//

/// Columns (one per lane) and row-threads of a pass-1 block.
constexpr int kColTile = 32;
constexpr int kColRowThreads = 8;
constexpr int kColThreads = kColTile * kColRowThreads;

/// Pass 1: partials[(k * chunks + chunk) * cols + j] = the sum of the k-th
/// term of (r, j) over the rows r of chunk `chunk` (k < K). Term::add(r, j,
/// acc) adds the K terms of element (r, j) into acc[0 .. K).
template <int K, typename Term>
__global__ void __launch_bounds__(kColThreads)
    columnPartialsKernel(Term term, int64_t rows, int64_t cols,
                         int64_t rowsPerChunk, int64_t chunks,
                         float *partials) {
  __shared__ float shared[K][kColRowThreads][kColTile];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t j = blockIdx.x * static_cast<int64_t>(kColTile) + tx;
  const int64_t chunk = blockIdx.y;
  const int64_t r0 = chunk * rowsPerChunk;
  const int64_t r1 = r0 + rowsPerChunk < rows ? r0 + rowsPerChunk : rows;
  float acc[K];
  for (int k = 0; k < K; ++k)
    acc[k] = 0.0f;
  if (j < cols)
    for (int64_t r = r0 + ty; r < r1; r += kColRowThreads)
      term.add(r, j, acc);
  for (int k = 0; k < K; ++k)
    shared[k][ty][tx] = acc[k];
  __syncthreads();
  if (ty == 0 && j < cols)
    for (int k = 0; k < K; ++k) {
      float s = shared[k][0][tx];
      for (int t = 1; t < kColRowThreads; ++t)
        s += shared[k][t][tx];
      partials[(k * chunks + chunk) * cols + j] = s;
    }
}

/// Pass 2: out_k[j] = sum over chunks c (in order) of the partials (f32),
/// stored as Out (float, or zrt_bf16 rounded once); out_k may be NULL
/// (skipped). chunks == 0 writes zeros.
template <int K, typename Out>
__global__ void columnTotalsKernel(const float *partials, int64_t chunks,
                                   int64_t cols, Out *out0, Out *out1) {
  ZRT_GRID_STRIDE(j, cols) {
    for (int k = 0; k < K; ++k) {
      Out *out = k == 0 ? out0 : out1;
      if (!out)
        continue;
      float s = 0.0f;
      for (int64_t c = 0; c < chunks; ++c)
        s += partials[(k * chunks + c) * cols + j];
      stf(out + j, s);
    }
  }
}

/// T itself, in a context where template arguments are not deduced.
template <typename T> struct NonDeduced { using type = T; };

/// Column sums of K (1 or 2) terms over a [rows, cols] matrix into out0
/// (and out1 when K == 2; either may be NULL), overwriting them; rows == 0
/// writes zeros. cols >= 1. The sums are f32; Out (float or zrt_bf16) is
/// the type of the outputs (bf16: each sum rounded once). Launches on the
/// compute stream.
template <int K, typename Term, typename Out>
int columnSums(const Term &term, int64_t rows, int64_t cols, Out *out0,
               typename NonDeduced<Out>::type *out1, const char *fn) {
  static_assert(K == 1 || K == 2, "one or two column sums");
  const int64_t tiles = (cols + kColTile - 1) / kColTile;
  // About 2048 pass-1 blocks, at least 32 rows per chunk, and partials
  // within the reserved workspace.
  int64_t chunks = 0, rowsPerChunk = 1;
  if (rows > 0) {
    chunks = (2048 + tiles - 1) / tiles;
    const int64_t byRows = (rows + 31) / 32;
    chunks = chunks < byRows ? chunks : byRows;
    const int64_t byBytes = kWorkspaceBytes / (K * cols * 4);
    chunks = chunks < byBytes ? chunks : byBytes;
    chunks = chunks < 1 ? 1 : chunks;
    rowsPerChunk = (rows + chunks - 1) / chunks;
    chunks = (rows + rowsPerChunk - 1) / rowsPerChunk;
  }
  void *ws = nullptr;
  if (int st = workspace(K * (chunks > 0 ? chunks : 1) * cols * 4, &ws, fn))
    return st;
  float *partials = static_cast<float *>(ws);
  if (chunks > 0) {
    const dim3 grid(static_cast<unsigned>(tiles),
                    static_cast<unsigned>(chunks));
    const dim3 block(kColTile, kColRowThreads);
    columnPartialsKernel<K, Term><<<grid, block, 0, stream()>>>(
        term, rows, cols, rowsPerChunk, chunks, partials);
    if (int st = launched(fn))
      return st;
  }
  columnTotalsKernel<K, Out><<<blocksFor(cols), kThreads, 0, stream()>>>(
      partials, chunks, cols, out0, out1);
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
