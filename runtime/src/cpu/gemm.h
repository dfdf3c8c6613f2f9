//===- gemm.h - The CPU kernels' GEMMs: library choice and tiling -*- C++ -*-===//
///
/// \file
/// Every row-major GEMM of zrt_matmul and zrt_matmul_bf16 goes through
/// these two functions, which pick the library by what was measured on the
/// training shapes (bench/gemm; docs/benchmarks.md, "GEMMs against the
/// peak"):
///
///  - f32: oneDNN's dnnl_sgemm when the runtime is built with oneDNN
///    (ZRT_HAVE_ONEDNN, cmake/OneDNN.cmake): 1.0-1.5x OpenBLAS 0.3.21's
///    SkylakeX kernels on every linear-layer shape of the demo GPT and the
///    C = 768 model; else OpenBLAS's cblas_sgemm (whole, as before).
///  - bf16 inputs, f32 accumulation: a oneDNN matmul primitive (AMX tiles
///    where the CPU has AMX-BF16, AVX-512 BF16 or AVX-512 emulation
///    elsewhere, oneDNN's own dispatch at run time): 4-8x the widened f32
///    GEMM. gemmBf16 reports false when there is none (no oneDNN, or only
///    oneDNN's reference implementation for this CPU), and the caller
///    widens to f32 instead.
///
/// oneDNN parallelizes some shapes over K (its GEMV path, and its bf16
/// matmul for small M N with large K), which makes the sums depend on the
/// thread count. The runtime promises the same bits at every thread count
/// (runtime/test/threads_test.cpp), so a oneDNN GEMM runs as fixed tiles of
/// C (gemmTiles: a function of M and N only), each tile computed by one
/// thread with all of K: who computes a tile changes with the team, what is
/// computed does not.
///
/// $ZRT_GEMM_LIBRARY=openblas makes OpenBLAS compute the f32 GEMMs and
/// widens the bf16 ones (the runtime before oneDNN; for measurements), =onednn
/// is the default when built with it; any other value is an error.
///
//===----------------------------------------------------------------------===//
#ifndef ZRT_SRC_GEMM_H
#define ZRT_SRC_GEMM_H

#include "zrt/zrt.h"

#include <cstdint>

namespace zrt {

/// Which library computes the runtime's GEMMs.
enum class GemmLibrary { OpenBLAS, OneDNN };

/// The library of this process: $ZRT_GEMM_LIBRARY, else oneDNN when built
/// with it, else OpenBLAS. Sets *status to ZRT_ERR_INVALID_ARGUMENT (with
/// the error message) when the variable names neither or names oneDNN in a
/// build without it; read once.
GemmLibrary gemmLibrary(int *status);

/// Fixed tiles of a GEMM's C [M, N]: mt x nt (the last row / column of
/// tiles may be smaller), a function of M and N only: blocks of 256 rows
/// with all of N, and at least 4 tiles where the shape allows tiles of >=
/// 128 columns and >= 32 rows, so that a team of 2-4 shares the work.
struct GemmTiles {
  int64_t mt, nt;         ///< rows and columns of a full tile
  int64_t mTiles, nTiles; ///< tiles along M and N
};
GemmTiles gemmTiles(int64_t M, int64_t N);

/// C[M, N] = alpha op(A) op(B) + beta C in f32, row-major (cblas_sgemm's
/// contract: op(A) [M, K] from A with leading dimension lda, op(B) [K, N]
/// with ldb, C with ldc; C is not read when beta == 0). M, N, K > 0.
/// The same bits at every thread count. Returns ZRT_OK, or an error status
/// with the message set.
int sgemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K,
          float alpha, const float *A, int64_t lda, const float *B,
          int64_t ldb, float beta, float *C, int64_t ldc);

/// Where gemmBf16 writes: f32 or bf16 C.
struct GemmOut {
  float *f32 = nullptr;     ///< f32 C, or
  zrt_bf16 *bf16 = nullptr; ///< bf16 C (each element rounded once)
};

/// C[M, N] = op(A) op(B) (+ bias[N] on every row) with bf16 A, B and bias
/// (may be NULL), products and sums in f32, C f32 or bf16 (row-major,
/// ldc); op and leading dimensions as in sgemm. M, N, K > 0. Returns false,
/// writing nothing, when this process has no native bf16 GEMM (a build
/// without oneDNN, $ZRT_GEMM_LIBRARY=openblas, or a CPU for which oneDNN
/// has only its reference implementation); else sets *status (ZRT_OK, or
/// an error with the message set) and returns true. The same bits at every
/// thread count.
bool gemmBf16(bool transA, bool transB, int64_t M, int64_t N, int64_t K,
              const zrt_bf16 *A, int64_t lda, const zrt_bf16 *B, int64_t ldb,
              const zrt_bf16 *bias, GemmOut C, int64_t ldc, int *status);

} // namespace zrt

#endif // ZRT_SRC_GEMM_H
