// Emulator stand-in for <cublasLt.h> (README.md): the cuBLASLt matmul API
// the CUDA backend uses, computed on the host (../cublas.cpp).
//
// Written from NVIDIA's documentation (cuBLAS Library, "Using the cuBLASLt
// API", "cublasLtMatmul()", "cublasLtMatmulAlgoGetHeuristic()",
// "cublasLtMatmulDescAttributes_t", "cublasLtMatrixLayoutAttribute_t",
// "cublasLtMatmulPreferenceAttributes_t", "cublasLtEpilogue_t") and the real
// cublasLt.h (CUDA 13): same names, enum values, attribute value types (a
// SetAttribute whose sizeInBytes differs from the attribute's type is
// CUBLAS_STATUS_INVALID_VALUE, as documented) and descriptor sizes.
//
// Behaviour, as documented:
//  * D = alpha op(A) op(B) + beta C (+ bias), column-major (CUBLASLT_ORDER_COL
//    only); D is m x n (its layout's rows x cols), op(A) m x k, op(B) k x n;
//    batches: CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT (equal for all four) and
//    _STRIDED_BATCH_OFFSET (elements);
//  * CUBLASLT_EPILOGUE_BIAS: a packed vector of m elements (rows of D) of
//    D's type ("Bias vector elements are the same type as the elements of
//    output matrix (Dtype)", except IMMA / fp8 kernels, which the emulation
//    lacks), broadcast to all columns and added before the conversion to D;
//  * CUBLASLT_EPILOGUE_GELU, _GELU_BIAS ("apply Bias and then GELU"),
//    _GELU_AUX, _GELU_AUX_BIAS (the GELU input also written to the aux
//    matrix, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER) and _DGELU (D =
//    the product times GELU'(aux), aux an input): GELU is the tanh
//    approximation 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) in f32
//    on the f32 result (cuBLASLt's own implementation may differ in the
//    last bits); the aux matrix is m x n of EPILOGUE_AUX_DATA_TYPE (default
//    and only: D's type, else CUBLAS_STATUS_INVALID_VALUE), with
//    EPILOGUE_AUX_LD (>= m, divisible by 8) and, batched,
//    EPILOGUE_AUX_BATCH_STRIDE (divisible by 8), else
//    CUBLAS_STATUS_INVALID_VALUE; it must not overlap D (nor the inputs,
//    as an output): the emulation dies, as for an output overlapping A;
//  * in place C == D requires Cdesc equal to Ddesc; out of place, C and D
//    must agree in type, rows, cols and batch count (ld may differ; C's ld
//    may be 0: one column broadcast);
//  * cublasLtMatmulAlgoGetHeuristic validates the problem and returns one
//    algorithm (workspace 0 bytes); the algorithm records the preference's
//    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_*_BYTES (default 256) and the bias
//    and aux pointers' alignment, and cublasLtMatmul with that algorithm
//    returns CUBLAS_STATUS_INVALID_VALUE when a pointer is less aligned than
//    promised
//    (algo NULL: the implicit heuristic sees the pointers; no check);
//  * the computation is queued on the `stream` argument (emu::enqueue) with
//    alpha, beta, the descriptors and the pointers copied at call time;
//    beta == 0: C is not read.
// Numerics as in cublas_v2.h: products summed in double, beta C and the
// bias added, one rounding to f32, then (bf16 D) to bf16, nearest even.
#pragma once
#include "cublas_v2.h"
#include "library_types.h"

#include <cstddef>
#include <cstdint>

struct cublasLtContext;
/// A cuBLASLt context (cublasLtCreate).
typedef struct cublasLtContext *cublasLtHandle_t;

/// Matrix layout descriptor storage (the real header's size).
typedef struct {
  uint64_t data[8];
} cublasLtMatrixLayoutOpaque_t;
typedef cublasLtMatrixLayoutOpaque_t *cublasLtMatrixLayout_t;

/// A chosen algorithm, semi-opaque: it can be copied and reused.
typedef struct {
  uint64_t data[8];
} cublasLtMatmulAlgo_t;

/// Matmul descriptor storage (the real header's size).
typedef struct {
  uint64_t data[32];
} cublasLtMatmulDescOpaque_t;
typedef cublasLtMatmulDescOpaque_t *cublasLtMatmulDesc_t;

/// Heuristic preference storage (the real header's size).
typedef struct {
  uint64_t data[8];
} cublasLtMatmulPreferenceOpaque_t;
typedef cublasLtMatmulPreferenceOpaque_t *cublasLtMatmulPreference_t;

/// Memory order of a matrix layout; the emulation supports CUBLASLT_ORDER_COL
/// (others: CUBLAS_STATUS_NOT_SUPPORTED).
typedef enum {
  CUBLASLT_ORDER_COL = 0,
  CUBLASLT_ORDER_ROW = 1,
  CUBLASLT_ORDER_COL32 = 2,
  CUBLASLT_ORDER_COL4_4R2_8C = 3,
  CUBLASLT_ORDER_COL32_2R_4R4 = 4,
} cublasLtOrder_t;

/// Matrix layout attributes (value type in brackets, as the real header).
typedef enum {
  CUBLASLT_MATRIX_LAYOUT_TYPE = 0,                 ///< [uint32_t] cudaDataType
  CUBLASLT_MATRIX_LAYOUT_ORDER = 1,                ///< [int32_t] default COL
  CUBLASLT_MATRIX_LAYOUT_ROWS = 2,                 ///< [uint64_t]
  CUBLASLT_MATRIX_LAYOUT_COLS = 3,                 ///< [uint64_t]
  CUBLASLT_MATRIX_LAYOUT_LD = 4,                   ///< [int64_t] elements
  CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT = 5,          ///< [int32_t] default 1
  CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET = 6, ///< [int64_t] elements
  CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET = 7,         ///< [int64_t] bytes; 0 only
  CUBLASLT_MATRIX_LAYOUT_BATCH_MODE = 8,           ///< [uint32_t] 0 only
} cublasLtMatrixLayoutAttribute_t;

typedef enum {
  CUBLASLT_POINTER_MODE_HOST = CUBLAS_POINTER_MODE_HOST,
  CUBLASLT_POINTER_MODE_DEVICE = CUBLAS_POINTER_MODE_DEVICE,
  CUBLASLT_POINTER_MODE_DEVICE_VECTOR = 2,
  CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO = 3,
  CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST = 4,
} cublasLtPointerMode_t;

/// Matmul descriptor attributes (value type in brackets, as the real
/// header). The emulation models those listed here; setting any other is
/// CUBLAS_STATUS_NOT_SUPPORTED.
typedef enum {
  CUBLASLT_MATMUL_DESC_COMPUTE_TYPE = 0, ///< [int32_t] cublasComputeType_t
  CUBLASLT_MATMUL_DESC_SCALE_TYPE = 1,   ///< [int32_t] cudaDataType of alpha
  CUBLASLT_MATMUL_DESC_POINTER_MODE = 2, ///< [int32_t] HOST only
  CUBLASLT_MATMUL_DESC_TRANSA = 3,       ///< [int32_t] cublasOperation_t
  CUBLASLT_MATMUL_DESC_TRANSB = 4,       ///< [int32_t] cublasOperation_t
  CUBLASLT_MATMUL_DESC_TRANSC = 5,       ///< [int32_t] CUBLAS_OP_N only
  CUBLASLT_MATMUL_DESC_FILL_MODE = 6,    ///< [int32_t] FULL only
  CUBLASLT_MATMUL_DESC_EPILOGUE = 7,     ///< [uint32_t] cublasLtEpilogue_t
  CUBLASLT_MATMUL_DESC_BIAS_POINTER = 8, ///< [const void *] device, m elements
  CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE = 10,         ///< [int64_t] elements
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER = 11,      ///< [void *] device
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD = 12,           ///< [int64_t] elements
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE = 13, ///< [int64_t] elements
  CUBLASLT_MATMUL_DESC_ALPHA_VECTOR_BATCH_STRIDE = 14,
  CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET = 15, ///< [int32_t] recorded only
  CUBLASLT_MATMUL_DESC_A_SCALE_POINTER = 17,
  CUBLASLT_MATMUL_DESC_B_SCALE_POINTER = 18,
  CUBLASLT_MATMUL_DESC_C_SCALE_POINTER = 19,
  CUBLASLT_MATMUL_DESC_D_SCALE_POINTER = 20,
  CUBLASLT_MATMUL_DESC_AMAX_D_POINTER = 21,
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE = 22, ///< [int32_t] default -1
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_POINTER = 23,
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_AMAX_POINTER = 24,
  CUBLASLT_MATMUL_DESC_FAST_ACCUM = 25,     ///< [int8_t] recorded only
  CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE = 26, ///< [int32_t] default -1: Dtype
  CUBLASLT_MATMUL_DESC_A_SCALE_MODE = 31,
  CUBLASLT_MATMUL_DESC_B_SCALE_MODE = 32,
  CUBLASLT_MATMUL_DESC_C_SCALE_MODE = 33,
  CUBLASLT_MATMUL_DESC_D_SCALE_MODE = 34,
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_MODE = 35,
  CUBLASLT_MATMUL_DESC_D_OUT_SCALE_POINTER = 36,
  CUBLASLT_MATMUL_DESC_D_OUT_SCALE_MODE = 37,
  CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR = 38,
} cublasLtMatmulDescAttributes_t;

/// Split-K reduction schemes (preference mask bits).
typedef enum {
  CUBLASLT_REDUCTION_SCHEME_NONE = 0,
  CUBLASLT_REDUCTION_SCHEME_INPLACE = 1,
  CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE = 2,
  CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE = 4,
  CUBLASLT_REDUCTION_SCHEME_MASK = 0x7,
} cublasLtReductionScheme_t;

/// Epilogues; the emulation supports DEFAULT, BIAS, GELU, GELU_AUX,
/// GELU_BIAS, GELU_AUX_BIAS and DGELU (others: CUBLAS_STATUS_NOT_SUPPORTED).
typedef enum {
  CUBLASLT_EPILOGUE_DEFAULT = 1,
  CUBLASLT_EPILOGUE_RELU = 2,
  CUBLASLT_EPILOGUE_RELU_AUX = (CUBLASLT_EPILOGUE_RELU | 128),
  CUBLASLT_EPILOGUE_BIAS = 4,
  CUBLASLT_EPILOGUE_RELU_BIAS = (CUBLASLT_EPILOGUE_RELU | CUBLASLT_EPILOGUE_BIAS),
  CUBLASLT_EPILOGUE_RELU_AUX_BIAS =
      (CUBLASLT_EPILOGUE_RELU_AUX | CUBLASLT_EPILOGUE_BIAS),
  CUBLASLT_EPILOGUE_DRELU = 8 | 128,
  CUBLASLT_EPILOGUE_DRELU_BGRAD = CUBLASLT_EPILOGUE_DRELU | 16,
  CUBLASLT_EPILOGUE_GELU = 32,
  CUBLASLT_EPILOGUE_GELU_AUX = (CUBLASLT_EPILOGUE_GELU | 128),
  CUBLASLT_EPILOGUE_GELU_BIAS = (CUBLASLT_EPILOGUE_GELU | CUBLASLT_EPILOGUE_BIAS),
  CUBLASLT_EPILOGUE_GELU_AUX_BIAS =
      (CUBLASLT_EPILOGUE_GELU_AUX | CUBLASLT_EPILOGUE_BIAS),
  CUBLASLT_EPILOGUE_DGELU = 64 | 128,
  CUBLASLT_EPILOGUE_DGELU_BGRAD = CUBLASLT_EPILOGUE_DGELU | 16,
  CUBLASLT_EPILOGUE_BGRADA = 256,
  CUBLASLT_EPILOGUE_BGRADB = 512,
} cublasLtEpilogue_t;

/// Heuristic search preferences (value type in brackets, as the real
/// header).
typedef enum {
  CUBLASLT_MATMUL_PREF_SEARCH_MODE = 0,          ///< [uint32_t] recorded
  CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1,  ///< [uint64_t] default 0
  CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK = 3, ///< [uint32_t] default 0x7
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES = 5, ///< [uint32_t] default 256
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES = 6, ///< [uint32_t] default 256
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES = 7, ///< [uint32_t] default 256
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES = 8, ///< [uint32_t] default 256
  CUBLASLT_MATMUL_PREF_MAX_WAVES_COUNT = 9,      ///< [float] recorded
  CUBLASLT_MATMUL_PREF_IMPL_MASK = 12,           ///< [uint64_t] recorded
} cublasLtMatmulPreferenceAttributes_t;

/// One heuristic result (fields as the real header).
typedef struct {
  cublasLtMatmulAlgo_t algo;
  size_t workspaceSize; ///< bytes the algorithm needs (emulation: 0)
  cublasStatus_t state; ///< other fields valid only when SUCCESS
  float wavesCount;
  int reserved[4];
} cublasLtMatmulHeuristicResult_t;

#if defined(__cplusplus)
extern "C" {
#endif

cublasStatus_t cublasLtCreate(cublasLtHandle_t *lightHandle);
cublasStatus_t cublasLtDestroy(cublasLtHandle_t lightHandle);

/// Layout of a `type` matrix of rows x cols, column stride ld (elements).
cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *matLayout,
                                          cudaDataType type, uint64_t rows,
                                          uint64_t cols, int64_t ld);
cublasStatus_t cublasLtMatrixLayoutInit_internal(cublasLtMatrixLayout_t matLayout,
                                                 size_t size, cudaDataType type,
                                                 uint64_t rows, uint64_t cols,
                                                 int64_t ld);
cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t matLayout);
/// sizeInBytes must equal the attribute's value type size (bytes).
cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t matLayout,
                                                cublasLtMatrixLayoutAttribute_t attr,
                                                const void *buf,
                                                size_t sizeInBytes);

/// Matmul descriptor: accumulation in computeType, alpha/beta of scaleType.
cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *matmulDesc,
                                        cublasComputeType_t computeType,
                                        cudaDataType_t scaleType);
cublasStatus_t cublasLtMatmulDescInit_internal(cublasLtMatmulDesc_t matmulDesc,
                                               size_t size,
                                               cublasComputeType_t computeType,
                                               cudaDataType_t scaleType);
cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t matmulDesc);
/// sizeInBytes must equal the attribute's value type size (bytes).
cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t matmulDesc,
                                              cublasLtMatmulDescAttributes_t attr,
                                              const void *buf,
                                              size_t sizeInBytes);

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *pref);
cublasStatus_t cublasLtMatmulPreferenceInit_internal(cublasLtMatmulPreference_t pref,
                                                     size_t size);
cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref);
/// sizeInBytes must equal the attribute's value type size (bytes).
cublasStatus_t
cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                     cublasLtMatmulPreferenceAttributes_t attr,
                                     const void *buf, size_t sizeInBytes);

/// Validates the problem: requestedAlgoCount <= 0 or layouts that do not fit
/// the transposes (D m x n, op(A) m x k, op(B) k x n, C like D), a bad ld,
/// unequal batch counts or a GELU aux matrix against its rules (above):
/// CUBLAS_STATUS_INVALID_VALUE; an unsupported
/// type / epilogue / order combination: CUBLAS_STATUS_NOT_SUPPORTED; both
/// with *returnAlgoCount = 0. Otherwise one result (state SUCCESS,
/// workspaceSize 0) and *returnAlgoCount = 1.
cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t operationDesc,
    cublasLtMatrixLayout_t Adesc, cublasLtMatrixLayout_t Bdesc,
    cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
    cublasLtMatmulPreference_t preference, int requestedAlgoCount,
    cublasLtMatmulHeuristicResult_t heuristicResultsArray[],
    int *returnAlgoCount);

/// D = alpha op(A) op(B) + beta C (+ bias), queued on `stream`. alpha and
/// beta: host pointers to the scale type (f32). Validation as
/// cublasLtMatmulAlgoGetHeuristic, plus: an algo not from it, or from it for
/// other types / epilogue, or a pointer (A, B, C, D, bias) less aligned than
/// the algo was chosen for (bias and aux: their alignment at heuristic time),
/// or a bias (aux) epilogue without a bias (aux) pointer:
/// CUBLAS_STATUS_INVALID_VALUE.
cublasStatus_t cublasLtMatmul(cublasLtHandle_t lightHandle,
                              cublasLtMatmulDesc_t computeDesc,
                              const void *alpha, const void *A,
                              cublasLtMatrixLayout_t Adesc, const void *B,
                              cublasLtMatrixLayout_t Bdesc, const void *beta,
                              const void *C, cublasLtMatrixLayout_t Cdesc,
                              void *D, cublasLtMatrixLayout_t Ddesc,
                              const cublasLtMatmulAlgo_t *algo, void *workspace,
                              size_t workspaceSizeInBytes, cudaStream_t stream);

#if defined(__cplusplus)
}
#endif

/// Descriptors in caller-owned storage, as in the real header.
static inline cublasStatus_t cublasLtMatrixLayoutInit(
    cublasLtMatrixLayout_t matLayout, cudaDataType type, uint64_t rows,
    uint64_t cols, int64_t ld) {
  return cublasLtMatrixLayoutInit_internal(matLayout, sizeof(*matLayout), type,
                                           rows, cols, ld);
}
static inline cublasStatus_t
cublasLtMatmulDescInit(cublasLtMatmulDesc_t matmulDesc,
                       cublasComputeType_t computeType,
                       cudaDataType_t scaleType) {
  return cublasLtMatmulDescInit_internal(matmulDesc, sizeof(*matmulDesc),
                                         computeType, scaleType);
}
static inline cublasStatus_t
cublasLtMatmulPreferenceInit(cublasLtMatmulPreference_t pref) {
  return cublasLtMatmulPreferenceInit_internal(pref, sizeof(*pref));
}
