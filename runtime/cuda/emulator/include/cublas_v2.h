// Emulator stand-in for <cublas_v2.h> (README.md): the part of the cuBLAS
// API the CUDA backend uses, computed on the host (../cublas.cpp).
//
// Written from NVIDIA's documentation (cuBLAS Library, sections "cuBLAS
// Datatypes Reference", "cublasCreate()", "cublasSetStream()",
// "cublasSetWorkspace()", "cublas<t>gemm()", "cublas<t>gemmStridedBatched()",
// "cublasGemmEx()", "cublasGemmStridedBatchedEx()") and the declarations of
// the real cublas_api.h / cublas_v2.h (CUDA 13): same names, enum values and
// signatures, including the `_v2` symbols behind the unsuffixed macros.
//
// Behaviour, as documented:
//  * column-major matrices; C = alpha op(A) op(B) + beta C with op(A) m x k,
//    op(B) k x n, C m x n; lda, ldb, ldc and the batch strides in elements;
//  * arguments are validated when called (CUBLAS_STATUS_INVALID_VALUE,
//    CUBLAS_STATUS_NOT_SUPPORTED, CUBLAS_STATUS_NOT_INITIALIZED for a handle
//    that cublasCreate did not make or cublasDestroy destroyed); nothing is
//    printed and nothing is queued when a call fails;
//  * the computation is queued on the handle's stream (emu::enqueue) with
//    alpha, beta and every argument copied at call time (host pointer mode);
//  * beta == 0: C is not read (it may hold NaN).
// Emulation specifics: the dot products are summed in double, beta C (C
// widened from its type) added, the sum rounded once to f32 and, for a
// bf16 output, then to bf16 (round to nearest even); every operand range is
// checked with emu::checkDevice; an output that overlaps A or B dies.
#pragma once
#include "cuda_runtime.h"
#include "library_types.h"

#include <cstddef>
#include <cstdint>

/// cublasStatus_t, values of the real cublas_api.h.
typedef enum {
  CUBLAS_STATUS_SUCCESS = 0,
  CUBLAS_STATUS_NOT_INITIALIZED = 1,
  CUBLAS_STATUS_ALLOC_FAILED = 3,
  CUBLAS_STATUS_INVALID_VALUE = 7,
  CUBLAS_STATUS_ARCH_MISMATCH = 8,
  CUBLAS_STATUS_MAPPING_ERROR = 11,
  CUBLAS_STATUS_EXECUTION_FAILED = 13,
  CUBLAS_STATUS_INTERNAL_ERROR = 14,
  CUBLAS_STATUS_NOT_SUPPORTED = 15,
  CUBLAS_STATUS_LICENSE_ERROR = 16
} cublasStatus_t;

typedef enum {
  CUBLAS_FILL_MODE_LOWER = 0,
  CUBLAS_FILL_MODE_UPPER = 1,
  CUBLAS_FILL_MODE_FULL = 2
} cublasFillMode_t;

/// op(X): X (N), X^T (T), X^H (C; the same as T for real types).
typedef enum {
  CUBLAS_OP_N = 0,
  CUBLAS_OP_T = 1,
  CUBLAS_OP_C = 2,
  CUBLAS_OP_HERMITAN = 2,
  CUBLAS_OP_CONJG = 3 ///< placeholder, not supported by cuBLAS either
} cublasOperation_t;

typedef enum {
  CUBLAS_POINTER_MODE_HOST = 0,
  CUBLAS_POINTER_MODE_DEVICE = 1
} cublasPointerMode_t;

/// GEMM algorithm hints of cublasGemmEx; the emulation computes every one
/// the same way. Values outside these are CUBLAS_STATUS_NOT_SUPPORTED.
typedef enum {
  CUBLAS_GEMM_DFALT = -1,
  CUBLAS_GEMM_DEFAULT = -1,
  CUBLAS_GEMM_ALGO0 = 0,
  CUBLAS_GEMM_ALGO1 = 1,
  CUBLAS_GEMM_ALGO2 = 2,
  CUBLAS_GEMM_ALGO3 = 3,
  CUBLAS_GEMM_ALGO4 = 4,
  CUBLAS_GEMM_ALGO5 = 5,
  CUBLAS_GEMM_ALGO6 = 6,
  CUBLAS_GEMM_ALGO7 = 7,
  CUBLAS_GEMM_ALGO8 = 8,
  CUBLAS_GEMM_ALGO9 = 9,
  CUBLAS_GEMM_ALGO10 = 10,
  CUBLAS_GEMM_ALGO11 = 11,
  CUBLAS_GEMM_ALGO12 = 12,
  CUBLAS_GEMM_ALGO13 = 13,
  CUBLAS_GEMM_ALGO14 = 14,
  CUBLAS_GEMM_ALGO15 = 15,
  CUBLAS_GEMM_ALGO16 = 16,
  CUBLAS_GEMM_ALGO17 = 17,
  CUBLAS_GEMM_ALGO18 = 18,
  CUBLAS_GEMM_ALGO19 = 19,
  CUBLAS_GEMM_ALGO20 = 20,
  CUBLAS_GEMM_ALGO21 = 21,
  CUBLAS_GEMM_ALGO22 = 22,
  CUBLAS_GEMM_ALGO23 = 23,
  CUBLAS_GEMM_DEFAULT_TENSOR_OP = 99,
  CUBLAS_GEMM_DFALT_TENSOR_OP = 99,
  CUBLAS_GEMM_ALGO0_TENSOR_OP = 100,
  CUBLAS_GEMM_ALGO1_TENSOR_OP = 101,
  CUBLAS_GEMM_ALGO2_TENSOR_OP = 102,
  CUBLAS_GEMM_ALGO3_TENSOR_OP = 103,
  CUBLAS_GEMM_ALGO4_TENSOR_OP = 104,
  CUBLAS_GEMM_ALGO5_TENSOR_OP = 105,
  CUBLAS_GEMM_ALGO6_TENSOR_OP = 106,
  CUBLAS_GEMM_ALGO7_TENSOR_OP = 107,
  CUBLAS_GEMM_ALGO8_TENSOR_OP = 108,
  CUBLAS_GEMM_ALGO9_TENSOR_OP = 109,
  CUBLAS_GEMM_ALGO10_TENSOR_OP = 110,
  CUBLAS_GEMM_ALGO11_TENSOR_OP = 111,
  CUBLAS_GEMM_ALGO12_TENSOR_OP = 112,
  CUBLAS_GEMM_ALGO13_TENSOR_OP = 113,
  CUBLAS_GEMM_ALGO14_TENSOR_OP = 114,
  CUBLAS_GEMM_ALGO15_TENSOR_OP = 115,
  CUBLAS_GEMM_AUTOTUNE = 999, ///< not accepted by the emulation
} cublasGemmAlgo_t;

/// Math mode of a handle (recorded; the emulation computes in full f32
/// precision whatever the mode allows).
typedef enum {
  CUBLAS_DEFAULT_MATH = 0,
  CUBLAS_TENSOR_OP_MATH = 1,
  CUBLAS_PEDANTIC_MATH = 2,
  CUBLAS_TF32_TENSOR_OP_MATH = 3,
  CUBLAS_FP32_EMULATED_BF16X9_MATH = 4,
  CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH = 8,
  CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION = 16,
} cublasMath_t;

/// Compute (accumulation) type of cublasGemmEx and cuBLASLt. The emulation
/// supports the 32F family: 32F, 32F_PEDANTIC and the FAST variants (which
/// cuBLAS allows to down-convert f32 inputs; the emulation does not).
typedef enum {
  CUBLAS_COMPUTE_16F = 64,
  CUBLAS_COMPUTE_16F_PEDANTIC = 65,
  CUBLAS_COMPUTE_32F = 68,
  CUBLAS_COMPUTE_32F_PEDANTIC = 69,
  CUBLAS_COMPUTE_32F_FAST_16F = 74,
  CUBLAS_COMPUTE_32F_FAST_16BF = 75,
  CUBLAS_COMPUTE_32F_FAST_TF32 = 77,
  CUBLAS_COMPUTE_32F_EMULATED_16BFX9 = 78,
  CUBLAS_COMPUTE_64F = 70,
  CUBLAS_COMPUTE_64F_PEDANTIC = 71,
  CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT = 79,
  CUBLAS_COMPUTE_32I = 72,
  CUBLAS_COMPUTE_32I_PEDANTIC = 73,
} cublasComputeType_t;

struct cublasContext;
/// A cuBLAS context: its stream (default: the legacy default stream,
/// nullptr), workspace and math mode.
typedef struct cublasContext *cublasHandle_t;

#if defined(__cplusplus)
extern "C" {
#endif

/// Creates a context on the emulated device (stream nullptr).
/// CUBLAS_STATUS_INVALID_VALUE if handle is NULL.
cublasStatus_t cublasCreate_v2(cublasHandle_t *handle);
/// Destroys a context (synchronizes its stream first, as cuBLAS does);
/// CUBLAS_STATUS_NOT_INITIALIZED for a handle not made by cublasCreate.
cublasStatus_t cublasDestroy_v2(cublasHandle_t handle);
/// Sets the stream of later calls on `handle` (and, as documented, resets
/// the workspace to the default pool).
cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t streamId);
cublasStatus_t cublasGetStream_v2(cublasHandle_t handle, cudaStream_t *streamId);
/// Records a user workspace (workspaceSizeInBytes bytes, device memory); the
/// emulation needs none. CUBLAS_STATUS_INVALID_VALUE if the pointer is not
/// 256-byte aligned ("The workspace pointer has to be aligned to at least
/// 256 bytes").
cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void *workspace,
                                     size_t workspaceSizeInBytes);
cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t *mode);
cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode);
/// Names and descriptions of the status values (never NULL).
const char *cublasGetStatusName(cublasStatus_t status);
const char *cublasGetStatusString(cublasStatus_t status);

/// C = alpha op(A) op(B) + beta C, all f32, column-major; lda >= max(1, m)
/// for op N (else max(1, k)), ldb >= max(1, k) for op N (else max(1, n)),
/// ldc >= max(1, m) (elements); alpha and beta host pointers.
cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                              cublasOperation_t transb, int m, int n, int k,
                              const float *alpha, const float *A, int lda,
                              const float *B, int ldb, const float *beta,
                              float *C, int ldc);

/// batchCount independent Sgemms; matrix i of A starts at A + i * strideA
/// (elements), likewise B and C. batchCount < 0: CUBLAS_STATUS_INVALID_VALUE.
cublasStatus_t cublasSgemmStridedBatched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
    int m, int n, int k, const float *alpha, const float *A, int lda,
    long long int strideA, const float *B, int ldb, long long int strideB,
    const float *beta, float *C, int ldc, long long int strideC,
    int batchCount);

/// Gemm with typed operands. Supported (cublasGemmEx table, compute type
/// CUBLAS_COMPUTE_32F / _PEDANTIC, scale type f32: alpha and beta point to
/// float): Atype = Btype = CUDA_R_16BF with Ctype CUDA_R_16BF or
/// CUDA_R_32F, and Atype = Btype = Ctype = CUDA_R_32F; the FAST compute
/// types only with all three CUDA_R_32F. Anything else, and an algo not in
/// cublasGemmAlgo_t (or AUTOTUNE): CUBLAS_STATUS_NOT_SUPPORTED.
cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k,
                            const void *alpha, const void *A,
                            cudaDataType Atype, int lda, const void *B,
                            cudaDataType Btype, int ldb, const void *beta,
                            void *C, cudaDataType Ctype, int ldc,
                            cublasComputeType_t computeType,
                            cublasGemmAlgo_t algo);

/// cublasGemmEx over batchCount matrices at element strides strideA, strideB,
/// strideC.
cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
    int m, int n, int k, const void *alpha, const void *A, cudaDataType Atype,
    int lda, long long int strideA, const void *B, cudaDataType Btype, int ldb,
    long long int strideB, const void *beta, void *C, cudaDataType Ctype,
    int ldc, long long int strideC, int batchCount,
    cublasComputeType_t computeType, cublasGemmAlgo_t algo);

#if defined(__cplusplus)
}

/// The real header's C++ overloads for pre-CUDA-11 code that passes a
/// cudaDataType as the compute type: mapped as cublasMigrateComputeType
/// does (CUDA_R_32F -> CUBLAS_COMPUTE_32F, or _PEDANTIC in pedantic math).
static inline cublasStatus_t
cublasMigrateComputeType(cublasHandle_t handle, cudaDataType_t dataType,
                         cublasComputeType_t *computeType) {
  cublasMath_t mathMode = CUBLAS_DEFAULT_MATH;
  cublasStatus_t status = cublasGetMathMode(handle, &mathMode);
  if (status != CUBLAS_STATUS_SUCCESS)
    return status;
  const bool isPedantic = ((mathMode & 0xf) == CUBLAS_PEDANTIC_MATH);
  switch (dataType) {
  case CUDA_R_32F:
  case CUDA_C_32F:
    *computeType = isPedantic ? CUBLAS_COMPUTE_32F_PEDANTIC : CUBLAS_COMPUTE_32F;
    return CUBLAS_STATUS_SUCCESS;
  case CUDA_R_64F:
  case CUDA_C_64F:
    *computeType = isPedantic ? CUBLAS_COMPUTE_64F_PEDANTIC : CUBLAS_COMPUTE_64F;
    return CUBLAS_STATUS_SUCCESS;
  case CUDA_R_16F:
    *computeType = isPedantic ? CUBLAS_COMPUTE_16F_PEDANTIC : CUBLAS_COMPUTE_16F;
    return CUBLAS_STATUS_SUCCESS;
  case CUDA_R_32I:
    *computeType = isPedantic ? CUBLAS_COMPUTE_32I_PEDANTIC : CUBLAS_COMPUTE_32I;
    return CUBLAS_STATUS_SUCCESS;
  default:
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
}
static inline cublasStatus_t
cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
             cublasOperation_t transb, int m, int n, int k, const void *alpha,
             const void *A, cudaDataType Atype, int lda, const void *B,
             cudaDataType Btype, int ldb, const void *beta, void *C,
             cudaDataType Ctype, int ldc, cudaDataType computeType,
             cublasGemmAlgo_t algo) {
  cublasComputeType_t migrated = CUBLAS_COMPUTE_32F;
  cublasStatus_t status =
      cublasMigrateComputeType(handle, computeType, &migrated);
  if (status != CUBLAS_STATUS_SUCCESS)
    return status;
  return cublasGemmEx(handle, transa, transb, m, n, k, alpha, A, Atype, lda,
                      B, Btype, ldb, beta, C, Ctype, ldc, migrated, algo);
}
static inline cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
    int m, int n, int k, const void *alpha, const void *A, cudaDataType Atype,
    int lda, long long int strideA, const void *B, cudaDataType Btype, int ldb,
    long long int strideB, const void *beta, void *C, cudaDataType Ctype,
    int ldc, long long int strideC, int batchCount, cudaDataType computeType,
    cublasGemmAlgo_t algo) {
  cublasComputeType_t migrated = CUBLAS_COMPUTE_32F;
  cublasStatus_t status =
      cublasMigrateComputeType(handle, computeType, &migrated);
  if (status != CUBLAS_STATUS_SUCCESS)
    return status;
  return cublasGemmStridedBatchedEx(
      handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype,
      ldb, strideB, beta, C, Ctype, ldc, strideC, batchCount, migrated, algo);
}
#endif

// The unsuffixed names, as in the real cublas_v2.h.
#define cublasCreate cublasCreate_v2
#define cublasDestroy cublasDestroy_v2
#define cublasSetWorkspace cublasSetWorkspace_v2
#define cublasSetStream cublasSetStream_v2
#define cublasGetStream cublasGetStream_v2
#define cublasSgemm cublasSgemm_v2
