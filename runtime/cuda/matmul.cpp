//===- matmul.cpp - CUDA backend: zrt_matmul via cuBLAS --------------------===//
//
// Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T, so the
// row-major operands go to cublasSgemmStridedBatched swapped (B first), with
// the row-major leading dimensions unchanged. f32 throughout (the default
// math mode: no TF32 unless NVIDIA_TF32_OVERRIDE says otherwise).
//
//===----------------------------------------------------------------------===//

#include "zrt_cuda.h"
#include "../src/common/matmul_args.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <climits>

namespace {

constexpr int64_t kIntMax = INT_MAX;

} // namespace

namespace zrt_cuda::detail {

// One handle per host thread, created on first use (bound to the compute
// stream) and kept for the life of the process: destroying it at exit could
// run after the CUDA context is gone.
int cublas_handle(void **out, const char *fn) {
  thread_local cublasHandle_t handle = nullptr;
  if (!handle) {
    cublasStatus_t s = cublasCreate(&handle);
    if (s != CUBLAS_STATUS_SUCCESS) {
      handle = nullptr;
      return zrt_cuda::fail(ZRT_ERR_INVALID_ARGUMENT,
                            "%s: cublasCreate failed: %s", fn,
                            cublas_status_name(s));
    }
    // Every cuBLAS call runs on the backend's compute stream.
    s = cublasSetStream(handle, zrt_cuda::stream());
    if (s != CUBLAS_STATUS_SUCCESS) {
      cublasDestroy(handle);
      handle = nullptr;
      return zrt_cuda::fail(ZRT_ERR_INVALID_ARGUMENT,
                            "%s: cublasSetStream failed: %s", fn,
                            cublas_status_name(s));
    }
  }
  *out = handle;
  return ZRT_OK;
}

const char *cublas_status_name(int status) {
  switch (static_cast<cublasStatus_t>(status)) {
  case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
  case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
  case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
  case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
  case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
  case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
  case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
  default: return "CUBLAS_STATUS_(other)";
  }
}

} // namespace zrt_cuda::detail

namespace zrt_cuda {

int matmul(const float *A, const float *B, const float *bias, float *C,
           int64_t batch, int64_t M, int64_t N, int64_t K, int trans_a,
           int trans_b, float alpha, float beta, int64_t stride_a,
           int64_t stride_b, int64_t stride_c) {
  const char *fn = "zrt_matmul";
  bool empty = true;
  if (int status = zrt::checkMatmulArgs(A, B, C, batch, M, N, K, stride_a,
                                        stride_b, stride_c, &empty, zrt_cuda::fail))
    return status;
  if (empty)
    return ZRT_OK;

  if (K == 0) {
    // C = beta * C (+ bias): BLAS semantics with an empty inner dimension.
    return check(detail::launch_scale_add_bias(bias, C, beta, batch, M, N,
                                               stride_c),
                 ZRT_ERR_INVALID_ARGUMENT, fn, "kernel launch");
  }
  void *h = nullptr;
  if (int st = detail::cublas_handle(&h, fn))
    return st;
  auto handle = static_cast<cublasHandle_t>(h);
  // With beta = 0 the bias is written first and the GEMM adds the product
  // to it (beta = 1), as the CPU runtime does.
  const bool biasFirst = bias && beta == 0.0f;
  if (biasFirst) {
    if (int st = check(detail::launch_broadcast_bias(bias, C, batch, M, N,
                                                     stride_c),
                       ZRT_ERR_INVALID_ARGUMENT, fn, "kernel launch"))
      return st;
  }
  const float gemmBeta = biasFirst ? 1.0f : beta;
  const int m = static_cast<int>(M), n = static_cast<int>(N),
            k = static_cast<int>(K);
  const int lda = trans_a ? m : k;
  const int ldb = trans_b ? k : n;
  const cublasOperation_t opA = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t opB = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  // cuBLAS takes an int batch count: issue chunks of at most INT_MAX.
  for (int64_t b0 = 0; b0 < batch; b0 += kIntMax) {
    const int64_t nb = batch - b0 < kIntMax ? batch - b0 : kIntMax;
    cublasStatus_t s = cublasSgemmStridedBatched(
        handle, opB, opA, n, m, k, &alpha, B + b0 * stride_b,
        ldb > 0 ? ldb : 1, stride_b, A + b0 * stride_a, lda > 0 ? lda : 1,
        stride_a, &gemmBeta, C + b0 * stride_c, n, stride_c,
        static_cast<int>(nb));
    if (s != CUBLAS_STATUS_SUCCESS)
      return fail(ZRT_ERR_INVALID_ARGUMENT,
                  "%s: cublasSgemmStridedBatched failed: %s", fn,
                  detail::cublas_status_name(s));
  }
  if (bias && !biasFirst)
    return check(detail::launch_add_bias(bias, C, batch, M, N, stride_c),
                 ZRT_ERR_INVALID_ARGUMENT, fn, "kernel launch");
  return ZRT_OK;
}

} // namespace zrt_cuda
