//===- matmul_bf16.cu - CUDA backend: zrt_matmul_bf16 (tensor cores) ------===//
//
// bf16 operands, f32 accumulation (CUBLAS_COMPUTE_32F), one
// cublasGemmStridedBatchedEx per call, with the row-major operands swapped
// as in matmul.cpp (row-major C = op(A) op(B) is column-major
// C^T = op(B)^T op(A)^T). Without a bias, cuBLAS writes C in bf16 directly
// (one rounding of the f32 accumulator). With a bias, zrt.h asks for one
// rounding of (product + bias), as the CPU backend's bias-first SGEMM does:
// a single (batch = 1) product runs as one cuBLASLt matmul whose BIAS
// epilogue adds the bf16 bias to the f32 accumulator before the one
// conversion to bf16 (cublasLt.h: the bias is "added before applying final
// postprocessing"), so C is written once in bf16; otherwise (batched, or no
// cuBLASLt algorithm for the shape and alignment) cuBLAS writes the f32
// product into the workspace and a kernel adds the bias and rounds. For
// GPT-2 124M (B = 16, T = 1024) the epilogue saves the f32 round trip of
// every biased linear layer: about 0.9 GB of memory traffic per block and
// step.
//
//===----------------------------------------------------------------------===//

#include "device_util.cuh"
#include "../src/matmul_args.h"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <tuple>

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

/// Largest power of two (at most 256) dividing the address `p`: the
/// alignment cuBLASLt may assume for it.
uint32_t alignmentOf(const void *p) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  uint32_t align = 256;
  while (align > 1 && a % align != 0)
    align /= 2;
  return align;
}

/// A cuBLASLt matmul for one shape: descriptors and the heuristic's best
/// algorithm, created once per (shape, transposes, alignment) and kept for
/// the life of the process (as the cuBLAS handle). `usable` is false when
/// cuBLASLt offers no algorithm, and the caller takes the cuBLAS path.
struct LtPlan {
  bool usable = false;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  size_t workspaceBytes = 0;
};

/// Key of an LtPlan: M, N, K, trans_a, trans_b, min pointer alignment.
using LtKey = std::tuple<int64_t, int64_t, int64_t, int, int, uint32_t>;

/// The calling thread's cuBLASLt handle (NULL if it cannot be created).
cublasLtHandle_t ltHandle() {
  thread_local cublasLtHandle_t handle = nullptr;
  thread_local bool tried = false;
  if (!tried) {
    tried = true;
    if (cublasLtCreate(&handle) != CUBLAS_STATUS_SUCCESS)
      handle = nullptr;
  }
  return handle;
}

/// Builds the plan of row-major C [M, N] = op(A) op(B) + bias as the
/// column-major D [N, M] = op(B)^T op(A)^T + bias (bias per row of D), with
/// bf16 A, B, D and bias, f32 compute and scale. Any failure leaves the plan
/// unusable (the cuBLAS path then runs; nothing is reported).
LtPlan makeLtPlan(cublasLtHandle_t lt, int64_t M, int64_t N, int64_t K,
                  int transA, int transB, uint32_t align,
                  const zrt_bf16 *bias) {
  LtPlan p;
  if (!lt)
    return p;
  const uint64_t m = M, n = N, k = K;
  const cublasOperation_t opB = transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t opA = transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
  const cudaDataType_t biasType = CUDA_R_16BF;
  bool ok =
      cublasLtMatmulDescCreate(&p.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F) ==
          CUBLAS_STATUS_SUCCESS &&
      cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, &opB,
                                     sizeof(opB)) == CUBLAS_STATUS_SUCCESS &&
      cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, &opA,
                                     sizeof(opA)) == CUBLAS_STATUS_SUCCESS &&
      cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                     &epi, sizeof(epi)) ==
          CUBLAS_STATUS_SUCCESS &&
      cublasLtMatmulDescSetAttribute(p.desc,
                                     CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                                     &biasType, sizeof(biasType)) ==
          CUBLAS_STATUS_SUCCESS &&
      // The heuristic reads the bias pointer's alignment from its value
      // (cublasLt.h, CUBLASLT_MATMUL_DESC_BIAS_POINTER): set it first. The
      // plan is cached per alignment class, so later biases of the same
      // class are as aligned.
      cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                     &bias, sizeof(bias)) ==
          CUBLAS_STATUS_SUCCESS &&
      // The Lt "A" is our B: op(B)^T is [N, K] column-major.
      cublasLtMatrixLayoutCreate(&p.a, CUDA_R_16BF, transB ? k : n,
                                 transB ? n : k, transB ? k : n) ==
          CUBLAS_STATUS_SUCCESS &&
      // The Lt "B" is our A: op(A)^T is [K, M] column-major.
      cublasLtMatrixLayoutCreate(&p.b, CUDA_R_16BF, transA ? m : k,
                                 transA ? k : m, transA ? m : k) ==
          CUBLAS_STATUS_SUCCESS &&
      cublasLtMatrixLayoutCreate(&p.d, CUDA_R_16BF, n, m, n) ==
          CUBLAS_STATUS_SUCCESS;
  cublasLtMatmulPreference_t pref = nullptr;
  if (ok)
    ok = cublasLtMatmulPreferenceCreate(&pref) == CUBLAS_STATUS_SUCCESS;
  const uint64_t maxWs = static_cast<uint64_t>(kWorkspaceBytes);
  if (ok)
    ok = cublasLtMatmulPreferenceSetAttribute(
             pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &maxWs,
             sizeof(maxWs)) == CUBLAS_STATUS_SUCCESS;
  // Split-K partial sums reduced in f32 (or no split-K), never in the bf16
  // output buffer (CUBLASLT_REDUCTION_SCHEME_INPLACE / OUTPUT_TYPE would
  // round partial sums): one rounding of product + bias.
  const uint32_t schemes = CUBLASLT_REDUCTION_SCHEME_NONE |
                           CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
  if (ok)
    ok = cublasLtMatmulPreferenceSetAttribute(
             pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &schemes,
             sizeof(schemes)) == CUBLAS_STATUS_SUCCESS;
  for (auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
                    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
    if (ok)
      ok = cublasLtMatmulPreferenceSetAttribute(pref, attr, &align,
                                                sizeof(align)) ==
           CUBLAS_STATUS_SUCCESS;
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  if (ok)
    ok = cublasLtMatmulAlgoGetHeuristic(lt, p.desc, p.a, p.b, p.d, p.d, pref,
                                        1, &result, &found) ==
             CUBLAS_STATUS_SUCCESS &&
         found > 0 && result.state == CUBLAS_STATUS_SUCCESS;
  if (pref)
    cublasLtMatmulPreferenceDestroy(pref);
  if (ok) {
    p.algo = result.algo;
    p.workspaceBytes = result.workspaceSize;
    p.usable = p.workspaceBytes <= maxWs;
  }
  return p;
}

/// C = bf16(op(A) op(B) + bias) in one cuBLASLt matmul (batch 1). Returns
/// ZRT_OK, -1 when no cuBLASLt algorithm fits (nothing launched: the
/// caller takes the cuBLAS path), or an error status (message set).
int matmulBiasLt(const zrt_bf16 *A, const zrt_bf16 *B, const zrt_bf16 *bias,
                 zrt_bf16 *C, int64_t M, int64_t N, int64_t K, int transA,
                 int transB, const char *fn) {
  cublasLtHandle_t lt = ltHandle();
  if (!lt)
    return -1;
  uint32_t align = alignmentOf(A);
  for (const void *p : {static_cast<const void *>(B),
                        static_cast<const void *>(C),
                        static_cast<const void *>(bias)})
    align = std::min(align, alignmentOf(p));
  thread_local std::map<LtKey, LtPlan> plans;
  const LtKey key{M, N, K, transA != 0, transB != 0, align};
  auto it = plans.find(key);
  if (it == plans.end())
    it = plans
             .emplace(key, makeLtPlan(lt, M, N, K, transA != 0, transB != 0,
                                      align, bias))
             .first;
  LtPlan &p = it->second;
  if (!p.usable)
    return -1;
  void *ws = nullptr;
  if (p.workspaceBytes > 0)
    if (int st = workspace(static_cast<int64_t>(p.workspaceBytes), &ws, fn))
      return st;
  if (cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                     &bias, sizeof(bias)) !=
      CUBLAS_STATUS_SUCCESS)
    return -1;
  const float alpha = 1.0f, beta = 0.0f;
  cublasStatus_t s =
      cublasLtMatmul(lt, p.desc, &alpha, B, p.a, A, p.b, &beta, C, p.d, C,
                     p.d, &p.algo, ws, p.workspaceBytes, stream());
  if (s == CUBLAS_STATUS_NOT_SUPPORTED || s == CUBLAS_STATUS_INVALID_VALUE) {
    // Refused before launching: this shape takes the cuBLAS path from now on.
    p.usable = false;
    return -1;
  }
  if (s != CUBLAS_STATUS_SUCCESS)
    return fail(ZRT_ERR_INVALID_ARGUMENT, "%s: cublasLtMatmul failed: %s", fn,
                detail::cublas_status_name(s));
  return ZRT_OK;
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
  // A single biased product: one cuBLASLt matmul with the bias epilogue.
  if (bias != nullptr && batch == 1 && K > 0 && M <= INT_MAX &&
      N <= INT_MAX && K <= INT_MAX) {
    const int st = matmulBiasLt(A, B, bias, C, M, N, K, trans_a, trans_b, fn);
    if (st >= 0)
      return st;
  }
  // With a bias (or K == 0, where cuBLAS would not write C) the f32 result
  // goes to the workspace, then the bias is added and C rounded once: per
  // matrix of the batch, in chunks of C's rows that fit the workspace
  // (zrt_matmul_bf16_workspace is bounded, not batch * M * N).
  const bool viaF32 = bias != nullptr || K == 0;
  void *h = nullptr;
  if (K > 0)
    if (int st = detail::cublas_handle(&h, fn))
      return st;
  auto handle = static_cast<cublasHandle_t>(h);
  const int m = static_cast<int>(M), n = static_cast<int>(N),
            k = static_cast<int>(K);
  const int lda = trans_a ? m : k;
  const int ldb = trans_b ? k : n;
  const float alpha = 1.0f, beta = 0.0f;
  if (!viaF32) {
    cublasStatus_t s = cublasGemmStridedBatchedEx(
        handle, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
        trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, &alpha, B, CUDA_R_16BF,
        ldb > 0 ? ldb : 1, sb, A, CUDA_R_16BF, lda > 0 ? lda : 1, sa, &beta, C,
        CUDA_R_16BF, n, sc, static_cast<int>(batch), CUBLAS_COMPUTE_32F,
        CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS)
      return fail(ZRT_ERR_INVALID_ARGUMENT,
                  "%s: cublasGemmStridedBatchedEx failed: %s", fn,
                  detail::cublas_status_name(s));
    return ZRT_OK;
  }
  float *cf = workspace;
  const int64_t rows = std::max<int64_t>(1, std::min<int64_t>(M, need / N));
  for (int64_t s = 0; s < batch; ++s)
    for (int64_t m0 = 0; m0 < M; m0 += rows) {
      const int64_t mc = std::min(rows, M - m0);
      const int64_t chunk = mc * N;
      if (K == 0) {
        if (int st = check(cudaMemsetAsync(cf, 0,
                                           static_cast<size_t>(chunk) * 4,
                                           stream()),
                           ZRT_ERR_INVALID_ARGUMENT, fn, "cudaMemsetAsync"))
          return st;
      } else {
        // Rows m0 .. m0 + mc of op(A): A's rows (start m0 K), or the
        // columns m0 .. of A^T's storage (start m0); lda is unchanged.
        const zrt_bf16 *As = A + s * sa + (trans_a ? m0 : m0 * K);
        cublasStatus_t st = cublasGemmEx(
            handle, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
            trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, n, static_cast<int>(mc), k,
            &alpha, B + s * sb, CUDA_R_16BF, ldb > 0 ? ldb : 1, As,
            CUDA_R_16BF, lda > 0 ? lda : 1, &beta, cf, CUDA_R_32F, n,
            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        if (st != CUBLAS_STATUS_SUCCESS)
          return fail(ZRT_ERR_INVALID_ARGUMENT, "%s: cublasGemmEx failed: %s",
                      fn, detail::cublas_status_name(st));
      }
      biasRoundKernel<<<blocksFor(chunk), kThreads, 0, stream()>>>(
          cf, bias, C + s * sc + m0 * N, chunk, N);
      if (int st = launched(fn))
        return st;
    }
  return ZRT_OK;
}

} // namespace zrt_cuda
