//===- device_util.cuh - CUDA backend: shared device helpers -----*- CUDA -*-===//
//
// Launch geometry, the grid-stride loop, bf16 <-> f32 on the device with the
// CPU runtime's exact rounding, and block reductions, shared by the .cu
// files of the backend.
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

/// expf with the CPU runtime's input clamp to [-87.3, 88.3].
__device__ __forceinline__ float expClamped(float x) {
  return expf(fminf(fmaxf(x, -87.3f), 88.3f));
}

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

#endif // ZRT_CUDA_DEVICE_UTIL_CUH
