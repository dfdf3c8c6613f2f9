//===- matmul_bf16.cu - CUDA backend: zrt_matmul_bf16 (tensor cores) ------===//
//
// bf16 operands, f32 accumulation (CUBLAS_COMPUTE_32F), one
// cublasGemmStridedBatchedEx per call, with the row-major operands swapped
// as in matmul.cpp (row-major C = op(A) op(B) is column-major
// C^T = op(B)^T op(A)^T). Without a bias, cuBLAS writes C in bf16 directly
// (one rounding of the f32 accumulator). With a bias, zrt.h asks for one
// rounding of (product + bias): cuBLAS writes the f32 product into the
// workspace and a kernel adds the bias and rounds, as the CPU backend's
// bias-first SGEMM does.
//
//===----------------------------------------------------------------------===//

#include "device_util.cuh"
#include "../src/matmul_args.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <climits>

namespace {

using namespace zrt_cuda;

/// C[i] = bf16(Cf[i] + bias[i % N]) (bias may be NULL: C = bf16(Cf)).
__global__ void biasRoundKernel(const float *cf, const uint16_t *bias,
                                uint16_t *c, int64_t total, int64_t n) {
  ZRT_GRID_STRIDE(i, total) {
    const float b = bias ? bf16ToF32(bias[i % n]) : 0.0f;
    c[i] = f32ToBf16(__fadd_rn(cf[i], b));
  }
}

} // namespace

namespace zrt_cuda {

int matmul_bf16(const zrt_bf16 *A, const zrt_bf16 *B, const zrt_bf16 *bias,
                zrt_bf16 *C, int64_t batch, int64_t M, int64_t N, int64_t K,
                int trans_a, int trans_b, float *workspace) {
  const char *fn = "zrt_matmul_bf16";
  int64_t sa = ZRT_STRIDE_PACKED, sb = ZRT_STRIDE_PACKED,
          sc = ZRT_STRIDE_PACKED;
  bool empty = true;
  if (int status = zrt::checkMatmulArgs(A, B, C, batch, M, N, K, sa, sb, sc,
                                        &empty, zrt_cuda::fail, fn))
    return status;
  if (empty)
    return ZRT_OK;
  const int64_t need = zrt::matmulBf16Workspace(batch, M, N, K, bias);
  ZRT_CUDA_REQUIRE(need >= 0, "%s: size overflow", fn);
  ZRT_CUDA_REQUIRE(workspace != nullptr, "%s: workspace is NULL", fn);
  ZRT_CUDA_REQUIRE(batch <= INT_MAX, "%s: batch = %lld exceeds INT_MAX", fn,
                   (long long)batch);
  const int64_t total = batch * M * N;
  // With a bias (or K == 0, where cuBLAS would not write C) the f32 result
  // goes to the workspace, then the bias is added and C rounded once.
  const bool viaF32 = bias != nullptr || K == 0;
  float *cf = workspace;
  if (K == 0) {
    if (int st = check(cudaMemsetAsync(cf, 0, static_cast<size_t>(total) * 4,
                                       stream()),
                       ZRT_ERR_INVALID_ARGUMENT, fn, "cudaMemsetAsync"))
      return st;
  } else {
    void *h = nullptr;
    if (int st = detail::cublas_handle(&h, fn))
      return st;
    auto handle = static_cast<cublasHandle_t>(h);
    const int m = static_cast<int>(M), n = static_cast<int>(N),
              k = static_cast<int>(K);
    const int lda = trans_a ? m : k;
    const int ldb = trans_b ? k : n;
    const float alpha = 1.0f, beta = 0.0f;
    cublasStatus_t s = cublasGemmStridedBatchedEx(
        handle, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
        trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, &alpha, B, CUDA_R_16BF,
        ldb > 0 ? ldb : 1, sb, A, CUDA_R_16BF, lda > 0 ? lda : 1, sa, &beta,
        viaF32 ? static_cast<void *>(cf) : static_cast<void *>(C),
        viaF32 ? CUDA_R_32F : CUDA_R_16BF, n, sc, static_cast<int>(batch),
        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS)
      return fail(ZRT_ERR_INVALID_ARGUMENT,
                  "%s: cublasGemmStridedBatchedEx failed: %s", fn,
                  detail::cublas_status_name(s));
  }
  if (!viaF32)
    return ZRT_OK;
  biasRoundKernel<<<blocksFor(total), kThreads, 0, stream()>>>(cf, bias, C,
                                                               total, N);
  return launched(fn);
}

} // namespace zrt_cuda
