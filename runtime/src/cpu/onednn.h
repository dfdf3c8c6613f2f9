//===- onednn.h - One GEMM tile on the calling thread with oneDNN -*- C++ -*-===//
///
/// \file
/// The oneDNN calls of gemm.cpp, built only with ZRT_HAVE_ONEDNN. Each
/// computes one tile of C with all of K on the calling thread (gemm.cpp
/// calls them inside its OpenMP region, where oneDNN's OpenMP runtime runs
/// sequentially; or with a team of one), so its sums do not depend on the
/// thread count. Row-major, cblas_sgemm's transposes and leading
/// dimensions.
///
//===----------------------------------------------------------------------===//
#ifndef ZRT_SRC_ONEDNN_H
#define ZRT_SRC_ONEDNN_H

#include "cpu/gemm.h"

#include <cstdint>

namespace zrt::onednn {

/// dnnl_sgemm: C[M, N] = alpha op(A) op(B) + beta C (f32). Returns ZRT_OK or
/// an error status with the message set.
int sgemmTile(bool transA, bool transB, int64_t M, int64_t N, int64_t K,
              float alpha, const float *A, int64_t lda, const float *B,
              int64_t ldb, float beta, float *C, int64_t ldc);

/// A oneDNN matmul primitive: C[M, N] = op(A) op(B) (+ bias[N]) with bf16
/// A, B, bias (may be NULL), f32 accumulation, f32 or bf16 C. Returns ZRT_OK
/// or an error status with the message set.
int bf16Tile(bool transA, bool transB, int64_t M, int64_t N, int64_t K,
             const zrt_bf16 *A, int64_t lda, const zrt_bf16 *B, int64_t ldb,
             const zrt_bf16 *bias, GemmOut C, int64_t ldc);

/// Whether oneDNN has a native (JIT) bf16 matmul on this CPU: its choice
/// for a 64 x 64 x 64 product is not its reference implementation. Asked
/// once.
bool hasNativeBf16();

} // namespace zrt::onednn

#endif // ZRT_SRC_ONEDNN_H
