//===- gemm_peak.cu - the card's measured matrix rate ---------------------===//
//
// The denominator of MFU in scripts/gpu-check: cuBLAS GEMM throughput for
// M = N = K = 8192 (large enough to saturate an H100/H200), bf16 inputs and
// output with f32 accumulation (CUBLAS_COMPUTE_32F, the mixed-precision
// training setting), and for reference f32 (SGEMM, no TF32). Best of 20
// timed runs after 3 warm-up runs, timed with CUDA events. Prints one JSON
// object: {"device": ..., "bf16_tflops": ..., "f32_tflops": ...}.
//
// Usage: gemm_peak [size]   (default 8192)
//
//===----------------------------------------------------------------------===//

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

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

/// Best TFLOP/s of `runs` GEMMs of one configuration.
static int timeGemm(cublasHandle_t h, int n, cudaDataType ab, cudaDataType c,
                    cublasComputeType_t compute, void *A, void *B, void *C,
                    double *tflops) {
  const float alpha = 1.0f, beta = 0.0f;
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  double best = 0.0;
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
    if (it >= 3 && rate > best)
      best = rate;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  *tflops = best;
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
  // Every byte 0x3c: 0.0115 as bf16 and as f32, finite (no NaN/Inf paths).
  CHECK_CUDA(cudaMemset(A, 0x3c, elems * 4));
  CHECK_CUDA(cudaMemset(B, 0x3c, elems * 4));
  cublasHandle_t h;
  CHECK_CUBLAS(cublasCreate(&h));
  double bf16 = 0.0, f32 = 0.0;
  if (timeGemm(h, n, CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, A, B, C,
               &bf16))
    return 1;
  if (timeGemm(h, n, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, A, B, C,
               &f32))
    return 1;
  std::printf("{\"device\": \"%s\", \"size\": %d, \"bf16_tflops\": %.1f, "
              "\"f32_tflops\": %.1f}\n",
              prop.name, n, bf16, f32);
  cublasDestroy(h);
  cudaFree(A);
  cudaFree(B);
  cudaFree(C);
  return 0;
}
