//===- gemm_peak.cu - the card's measured matrix rate ---------------------===//
//
// The denominator of MFU in scripts/gpu-check: cuBLAS GEMM throughput for
// M = N = K = 8192 (large enough to saturate an H100/H200), bf16 inputs and
// output with f32 accumulation (CUBLAS_COMPUTE_32F, the mixed-precision
// training setting), and for reference f32 (SGEMM, no TF32). The median of
// 20 timed runs after 3 warm-up runs, timed with CUDA events, on operands
// drawn uniformly from [-1, 1) (a hash of the index): constant operands
// toggle fewer bits and run faster than real data (on the first H200 run,
// 2026-11-30, memset operands gave 888 TFLOP/s, best of 20; an H200 of this
// workplace gave 788 on random data and 894 on zeros through PyTorch), which
// would understate MFU. Prints one JSON object: {"device": ..., "size": ...,
// "bf16_tflops": ..., "f32_tflops": ..., "bf16_tflops_best": ...,
// "data": "uniform[-1,1)"}.
//
// Usage: gemm_peak [size]   (default 8192)
//
//===----------------------------------------------------------------------===//

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK_CUDA(x)                                                          \
  do {                                                                         \
    cudaError_t e_ = (x);                                                      \
    if (e_ != cudaSuccess) {                                                   \
      std::fprintf(stderr, "gemm_peak: %s: %s\n", #x, cudaGetErrorString(e_)); \
      return 1;                                                                \
    }                                                                          \
  } while (0)
#define CHECK_CUBLAS(x)                                                        \
  do {                                                                         \
    cublasStatus_t s_ = (x);                                                   \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                         \
      std::fprintf(stderr, "gemm_peak: %s: cuBLAS status %d\n", #x, (int)s_);  \
      return 1;                                                                \
    }                                                                          \
  } while (0)

/// Uniform [-1, 1) from the index (splitmix64's finalizer), so that every
/// run multiplies the same non-trivial data.
__device__ float uniformAt(uint64_t i, uint64_t seed) {
  uint64_t z = i + seed * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<float>(z >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

__global__ void fillBf16(__nv_bfloat16 *x, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    x[i] = __float2bfloat16(uniformAt(i, seed));
}

__global__ void fillF32(float *x, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    x[i] = uniformAt(i, seed);
}

/// Fills A and B (n x n each) with uniform data of the given type.
static int fill(cudaDataType t, void *A, void *B, size_t elems) {
  if (t == CUDA_R_16BF) {
    fillBf16<<<1024, 256>>>(static_cast<__nv_bfloat16 *>(A), elems, 1);
    fillBf16<<<1024, 256>>>(static_cast<__nv_bfloat16 *>(B), elems, 2);
  } else {
    fillF32<<<1024, 256>>>(static_cast<float *>(A), elems, 1);
    fillF32<<<1024, 256>>>(static_cast<float *>(B), elems, 2);
  }
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  return 0;
}

/// n x n x n GEMMs of one configuration on uniform operands (fill): the
/// median TFLOP/s of 20 timed runs after 3 warm-ups into *tflops, the best
/// into *best. Returns 1 (message on stderr) if a CUDA or cuBLAS call fails.
static int timeGemm(cublasHandle_t h, int n, cudaDataType ab, cudaDataType c,
                    cublasComputeType_t compute, void *A, void *B, void *C,
                    double *tflops, double *best) {
  const float alpha = 1.0f, beta = 0.0f;
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  if (fill(ab, A, B, size_t(n) * n))
    return 1;
  std::vector<double> rates;
  for (int it = 0; it < 23; ++it) {
    CHECK_CUDA(cudaEventRecord(start));
    CHECK_CUBLAS(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, A,
                              ab, n, B, ab, n, &beta, C, c, n, compute,
                              CUBLAS_GEMM_DEFAULT));
    CHECK_CUDA(cudaEventRecord(stop));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    const double rate = 2.0 * n * double(n) * n / (ms * 1e-3) / 1e12;
    if (it >= 3)
      rates.push_back(rate);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(rates.begin(), rates.end());
  *tflops = (rates[rates.size() / 2 - 1] + rates[rates.size() / 2]) / 2;
  *best = rates.back();
  return 0;
}

int main(int argc, char **argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 8192;
  if (n < 256) {
    std::fprintf(stderr, "gemm_peak: size must be at least 256\n");
    return 1;
  }
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  const size_t elems = size_t(n) * n;
  void *A, *B, *C;
  CHECK_CUDA(cudaMalloc(&A, elems * 4));
  CHECK_CUDA(cudaMalloc(&B, elems * 4));
  CHECK_CUDA(cudaMalloc(&C, elems * 4));
  cublasHandle_t h;
  CHECK_CUBLAS(cublasCreate(&h));
  double bf16 = 0.0, f32 = 0.0, bf16Best = 0.0, f32Best = 0.0;
  if (timeGemm(h, n, CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, A, B, C,
               &bf16, &bf16Best))
    return 1;
  if (timeGemm(h, n, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, A, B, C, &f32,
               &f32Best))
    return 1;
  std::printf("{\"device\": \"%s\", \"size\": %d, \"bf16_tflops\": %.1f, "
              "\"f32_tflops\": %.1f, \"bf16_tflops_best\": %.1f, "
              "\"data\": \"uniform[-1,1)\"}\n",
              prop.name, n, bf16, f32, bf16Best);
  cublasDestroy(h);
  cudaFree(A);
  cudaFree(B);
  cudaFree(C);
  return 0;
}
