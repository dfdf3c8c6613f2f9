//===- matmul_bf16.cu - CUDA backend: zrt_matmul_bf16 and GELU forms -----===//
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
// The GELU forms take the same two paths with another epilogue (llm.c's
// matmul_cublaslt with gelu_fusion). zrt_matmul_gelu_bf16 on a single
// product is one cuBLASLt matmul with CUBLASLT_EPILOGUE_GELU_AUX_BIAS
// (GELU_AUX without a bias; GELU_BIAS / GELU when pre is NULL): out is D,
// pre the epilogue's auxiliary output (the GELU input, bf16, leading
// dimension that of D). zrt_matmul_gelu_backward_bf16 is one matmul with
// CUBLASLT_EPILOGUE_DGELU: pre the auxiliary input, dpre = D. The f32 path
// (workspace + kernel) runs instead for batched products, shapes and
// alignments cuBLASLt has no algorithm for, any matrix less than 16-byte
// aligned (pointer or leading dimension: cuBLASLt's kernels for those round
// the product before adding the bias, see ltEligible; the aux matrix's
// leading dimension N must also be "divisible by 8", cublasLt.h), and an
// in-place backward (dpre == pre: cublasLt.h says nothing about the
// auxiliary input aliasing D, so that is not relied on); its kernel applies
// the bias and GELU / GELU' with the CPU's arithmetic (GeluOp and
// GeluBackwardOp of device_util.cuh, shared with elementwise.cu) and rounds
// once. cuBLASLt's GELU is its own implementation of the tanh
// approximation, not the CPU's (sigmoid form, expClamped), so on the
// cuBLASLt path an element of out / dpre may differ from the CPU's in the
// last bf16 bit, and in absolute terms a little more on GELU's negative
// tail, where the tanh form's 1 + tanh(u) cancels; pre is the same f32 sum
// rounded once as zrt_matmul_bf16's C.
//
//===----------------------------------------------------------------------===//

#include "device_util.cuh"
#include "../src/common/matmul_args.h"

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

using Epilogue = zrt::MatmulBf16Epilogue;

/// The f32 path's epilogue on total = rows * n elements: acc = cf[i] +
/// bias[i % n] (bias NULL: acc = cf[i]), then as `kind` says (Epilogue):
/// c[i] = bf16(acc); or preOut[i] = bf16(acc) (preOut may be NULL) and
/// c[i] = bf16(gelu(acc)); or c[i] = bf16(gelu'(f32(preIn[i])) * acc),
/// preIn may equal c (each element is read before it is written, by the
/// same thread).
__global__ void epilogueKernel(int kind, const float *cf, const uint16_t *bias,
                               const uint16_t *preIn, uint16_t *preOut,
                               uint16_t *c, int64_t total, int64_t n) {
  ZRT_GRID_STRIDE(i, total) {
    const float acc = bias ? __fadd_rn(cf[i], bf16ToF32(bias[i % n])) : cf[i];
    if (kind == Epilogue::Round) {
      c[i] = f32ToBf16(acc);
    } else if (kind == Epilogue::Gelu) {
      if (preOut)
        preOut[i] = f32ToBf16(acc);
      c[i] = f32ToBf16(GeluOp{}(acc, 0.0f));
    } else {
      c[i] = f32ToBf16(GeluBackwardOp{}(bf16ToF32(preIn[i]), acc));
    }
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

/// A cuBLASLt matmul for one shape and epilogue: descriptors and the
/// heuristic's best algorithm, created once per (shape, transposes,
/// alignment, epilogue) and kept for the life of the process (as the cuBLAS
/// handle). `usable` is false when cuBLASLt offers no algorithm, and the
/// caller takes the cuBLAS path.
struct LtPlan {
  bool usable = false;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  size_t workspaceBytes = 0;
};

/// Key of an LtPlan: M, N, K, trans_a, trans_b, min pointer alignment
/// (A, B, C, bias, aux: the preference's promise), the bias's and the aux
/// matrix's own alignment (the heuristic takes them from the pointers'
/// values, so a plan serves only pointers of the same classes), cuBLASLt
/// epilogue (which also says whether there is a bias and an aux matrix).
using LtKey = std::tuple<int64_t, int64_t, int64_t, int, int, uint32_t,
                         uint32_t, uint32_t, uint32_t>;

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

/// The cuBLASLt epilogue of `e` with this bias (NULL or not).
cublasLtEpilogue_t ltEpilogue(const Epilogue &e, const zrt_bf16 *bias) {
  if (e.kind == Epilogue::GeluBackward)
    return CUBLASLT_EPILOGUE_DGELU;
  if (e.kind == Epilogue::Round)
    return CUBLASLT_EPILOGUE_BIAS;
  if (bias)
    return e.preOut ? CUBLASLT_EPILOGUE_GELU_AUX_BIAS
                    : CUBLASLT_EPILOGUE_GELU_BIAS;
  return e.preOut ? CUBLASLT_EPILOGUE_GELU_AUX : CUBLASLT_EPILOGUE_GELU;
}

/// The epilogue's auxiliary matrix: pre (written by the GELU forward,
/// read by DGELU), or NULL.
const void *ltAux(const Epilogue &e) {
  if (e.kind == Epilogue::Gelu)
    return e.preOut;
  return e.kind == Epilogue::GeluBackward ? e.preIn : nullptr;
}

/// Sets a matmul descriptor attribute to `value` (the attribute's type).
template <typename T>
bool setDesc(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
             const T &value) {
  return cublasLtMatmulDescSetAttribute(desc, attr, &value, sizeof(value)) ==
         CUBLAS_STATUS_SUCCESS;
}

/// Points the descriptor at this call's bias and auxiliary matrix (those
/// the epilogue has: non-NULL).
bool setLtPointers(cublasLtMatmulDesc_t desc, const zrt_bf16 *bias,
                   const void *aux) {
  return (!bias || setDesc(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias)) &&
         (!aux ||
          setDesc(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, aux));
}

/// Builds the plan of row-major C [M, N] = op(A) op(B) (+ bias) with the
/// epilogue `epi` as the column-major D [N, M] = op(B)^T op(A)^T (+ bias
/// per row of D), with bf16 A, B, D, bias and auxiliary matrix (D's shape
/// and leading dimension N), f32 compute and scale. `bias` and `aux` are
/// this call's (NULL when the epilogue has none). Any failure leaves the
/// plan unusable (the cuBLAS path then runs; nothing is reported).
LtPlan makeLtPlan(cublasLtHandle_t lt, int64_t M, int64_t N, int64_t K,
                  int transA, int transB, uint32_t align,
                  cublasLtEpilogue_t epi, const zrt_bf16 *bias,
                  const void *aux) {
  LtPlan p;
  if (!lt)
    return p;
  const uint64_t m = M, n = N, k = K;
  const cublasOperation_t opB = transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t opA = transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cudaDataType_t bf16Type = CUDA_R_16BF;
  const int64_t auxLd = N;
  bool ok =
      cublasLtMatmulDescCreate(&p.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F) ==
          CUBLAS_STATUS_SUCCESS &&
      setDesc(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, opB) &&
      setDesc(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, opA) &&
      setDesc(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, epi) &&
      (!bias ||
       setDesc(p.desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, bf16Type)) &&
      (!aux || (setDesc(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, auxLd) &&
                setDesc(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE,
                        bf16Type))) &&
      // The heuristic reads the bias and aux pointers' alignment from their
      // values (cublasLt.h, CUBLASLT_MATMUL_DESC_BIAS_POINTER and
      // _EPILOGUE_AUX_POINTER): set them first. The plan is cached per
      // alignment class of each, so later pointers are as aligned.
      setLtPointers(p.desc, bias, aux) &&
      // The Lt "A" is our B: op(B)^T is [N, K] column-major.
      cublasLtMatrixLayoutCreate(&p.a, CUDA_R_16BF, transB ? k : n,
                                 transB ? n : k,
                                 transB ? k : n) == CUBLAS_STATUS_SUCCESS &&
      // The Lt "B" is our A: op(A)^T is [K, M] column-major.
      cublasLtMatrixLayoutCreate(&p.b, CUDA_R_16BF, transA ? m : k,
                                 transA ? k : m,
                                 transA ? m : k) == CUBLAS_STATUS_SUCCESS &&
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
  // round partial sums): the epilogue sees the f32 sum of product + bias.
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

/// C = bf16(epilogue(op(A) op(B) + bias)) in one cuBLASLt matmul (batch 1;
/// bias NULL or [N]; the auxiliary matrix of `e`, if any, has leading
/// dimension N). Returns ZRT_OK, -1 when no cuBLASLt algorithm fits
/// (nothing launched: the caller takes the cuBLAS path), or an error status
/// (message set).
int matmulLt(const zrt_bf16 *A, const zrt_bf16 *B, const zrt_bf16 *bias,
             zrt_bf16 *C, int64_t M, int64_t N, int64_t K, int transA,
             int transB, const Epilogue &e) {
  cublasLtHandle_t lt = ltHandle();
  if (!lt)
    return -1;
  const void *aux = ltAux(e);
  const cublasLtEpilogue_t epi = ltEpilogue(e, bias);
  uint32_t align = alignmentOf(A);
  for (const void *p :
       {static_cast<const void *>(B), static_cast<const void *>(C),
        static_cast<const void *>(bias), aux})
    align = std::min(align, alignmentOf(p));
  thread_local std::map<LtKey, LtPlan> plans;
  const LtKey key{M,
                  N,
                  K,
                  transA != 0,
                  transB != 0,
                  align,
                  alignmentOf(bias),
                  alignmentOf(aux),
                  static_cast<uint32_t>(epi)};
  auto it = plans.find(key);
  if (it == plans.end())
    it = plans
             .emplace(key, makeLtPlan(lt, M, N, K, transA != 0, transB != 0,
                                      align, epi, bias, aux))
             .first;
  LtPlan &p = it->second;
  if (!p.usable)
    return -1;
  void *ws = nullptr;
  if (p.workspaceBytes > 0)
    if (int st =
            workspace(static_cast<int64_t>(p.workspaceBytes), &ws, e.name()))
      return st;
  if (!setLtPointers(p.desc, bias, aux))
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
    return fail(ZRT_ERR_INVALID_ARGUMENT, "%s: cublasLtMatmul failed: %s",
                e.name(), detail::cublas_status_name(s));
  return ZRT_OK;
}

/// Whether a call may take the cuBLASLt path (see the file comment): a
/// single product with K > 0 and an epilogue (a bias, or GELU), every
/// matrix 16-byte aligned (its pointer and leading dimension), and no
/// in-place backward. cuBLASLt's kernels for less aligned operands (seen on
/// an H200, cuBLAS 13.1, 2026-11-30) round the product to bf16 before the
/// BIAS / GELU_BIAS epilogue adds the bias: up to one bf16 step of the
/// product off the CPU's one rounding of product + bias, where they cancel
/// (CudaKernels.MatmulGeluBf16MatchesCpu, N = 7 or `pre` at an odd
/// offset). Those shapes take the f32 path.
bool ltEligible(const Epilogue &e, const zrt_bf16 *A, const zrt_bf16 *B,
                const zrt_bf16 *bias, const zrt_bf16 *C, int64_t batch,
                int64_t M, int64_t N, int64_t K, int transA, int transB) {
  if (batch != 1 || K == 0)
    return false;
  if (e.kind == Epilogue::Round && !bias)
    return false;
  if (e.kind == Epilogue::GeluBackward && e.preIn == C)
    return false;
  // Leading dimensions (elements): A's, B's, and N for C and the aux matrix.
  const int64_t lda = transA ? M : K, ldb = transB ? K : N;
  if (lda % 8 != 0 || ldb % 8 != 0 || N % 8 != 0)
    return false;
  for (const void *p : {static_cast<const void *>(A),
                        static_cast<const void *>(B),
                        static_cast<const void *>(C),
                        static_cast<const void *>(bias), ltAux(e)})
    if (p && alignmentOf(p) < 16)
      return false;
  return true;
}

/// zrt_matmul_bf16 and its GELU forms (`e`): argument checks, then the
/// cuBLASLt epilogue, the direct bf16 GEMM (no bias, no GELU) or the f32
/// product in the workspace and epilogueKernel.
int matmulBf16(const zrt_bf16 *A, const zrt_bf16 *B, const zrt_bf16 *bias,
               zrt_bf16 *C, int64_t batch, int64_t M, int64_t N, int64_t K,
               int trans_a, int trans_b, float *workspace, const Epilogue &e) {
  const char *fn = e.name();
  bool empty = true;
  if (int status = zrt::checkMatmulBf16Args(
          A, B, bias, C, batch, M, N, K, workspace, e, &empty, zrt_cuda::fail))
    return status;
  if (empty)
    return ZRT_OK;
  ZRT_CUDA_REQUIRE(batch <= INT_MAX, "%s: batch = %lld exceeds INT_MAX", fn,
                   (long long)batch);
  // A single product with an epilogue: one cuBLASLt matmul.
  if (ltEligible(e, A, B, bias, C, batch, M, N, K, trans_a, trans_b)) {
    const int st = matmulLt(A, B, bias, C, M, N, K, trans_a, trans_b, e);
    if (st >= 0)
      return st;
  }
  // With a bias or GELU (or K == 0, where cuBLAS would not write C) the f32
  // result goes to the workspace, then the epilogue kernel writes the bf16
  // outputs: per matrix of the batch, in chunks of C's rows that fit the
  // workspace (zrt_matmul_bf16_workspace is bounded, not batch * M * N).
  const bool viaF32 = e.kind != Epilogue::Round || bias != nullptr || K == 0;
  void *h = nullptr;
  if (K > 0)
    if (int st = detail::cublas_handle(&h, fn))
      return st;
  auto handle = static_cast<cublasHandle_t>(h);
  const int m = static_cast<int>(M), n = static_cast<int>(N),
            k = static_cast<int>(K);
  const int64_t sa = M * K, sb = K * N, sc = M * N;
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
  const int64_t need = zrt::matmulBf16Workspace(batch, M, N, K, bias);
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
      const int64_t at = s * sc + m0 * N;
      epilogueKernel<<<blocksFor(chunk), kThreads, 0, stream()>>>(
          e.kind, cf, bias, e.preIn ? e.preIn + at : nullptr,
          e.preOut ? e.preOut + at : nullptr, C + at, chunk, N);
      if (int st = launched(fn))
        return st;
    }
  return ZRT_OK;
}

} // namespace

namespace zrt_cuda {

int matmul_bf16(const zrt_bf16 *A, const zrt_bf16 *B, const zrt_bf16 *bias,
                zrt_bf16 *C, int64_t batch, int64_t M, int64_t N, int64_t K,
                int trans_a, int trans_b, float *workspace) {
  return matmulBf16(A, B, bias, C, batch, M, N, K, trans_a, trans_b, workspace,
                    Epilogue{});
}

int matmul_gelu_bf16(const zrt_bf16 *A, const zrt_bf16 *B, const zrt_bf16 *bias,
                     zrt_bf16 *pre, zrt_bf16 *out, int64_t batch, int64_t M,
                     int64_t N, int64_t K, int trans_a, int trans_b,
                     float *workspace) {
  return matmulBf16(A, B, bias, out, batch, M, N, K, trans_a, trans_b,
                    workspace, Epilogue::gelu(pre));
}

int matmul_gelu_backward_bf16(const zrt_bf16 *A, const zrt_bf16 *B,
                              const zrt_bf16 *pre, zrt_bf16 *dpre,
                              int64_t batch, int64_t M, int64_t N, int64_t K,
                              int trans_a, int trans_b, float *workspace) {
  return matmulBf16(A, B, nullptr, dpre, batch, M, N, K, trans_a, trans_b,
                    workspace, Epilogue::geluBackward(pre));
}

} // namespace zrt_cuda
