//===- blas.h - cblas_sgemm for the CPU kernels -------------------*- C++ -*-===//
///
/// \file
/// The CPU kernels' one BLAS routine, row-major cblas_sgemm: OpenBLAS's when
/// the runtime is built with it (ZRT_HAVE_OPENBLAS: always for the CPU
/// backend, zero_runtime), else a plain reference implementation with the
/// same semantics, used only by zrt_cpu_reference on machines without
/// OpenBLAS (the GPU machine, where the CPU kernels are the CUDA backend's
/// test oracle and speed does not matter).
///
//===----------------------------------------------------------------------===//
#ifndef ZRT_SRC_BLAS_H
#define ZRT_SRC_BLAS_H

#if ZRT_HAVE_OPENBLAS
#include <cblas.h>
#else

#include <cstdint>

enum CBLAS_ORDER { CblasRowMajor = 101, CblasColMajor = 102 };
enum CBLAS_TRANSPOSE { CblasNoTrans = 111, CblasTrans = 112 };

/// Reference SGEMM (BLAS semantics, row-major only: CblasRowMajor is the
/// only order the kernels pass): C = alpha op(A) op(B) + beta C, C not read
/// when beta == 0. Accumulates each dot product in f32 in k order.
inline void cblas_sgemm(CBLAS_ORDER, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb,
                        int m, int n, int k, float alpha, const float *A,
                        int lda, const float *B, int ldb, float beta, float *C,
                        int ldc) {
#pragma omp parallel for schedule(static) if (int64_t(m) * n * k > 100000)
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (int p = 0; p < k; ++p) {
        const float a = ta == CblasNoTrans ? A[int64_t(i) * lda + p]
                                           : A[int64_t(p) * lda + i];
        const float b = tb == CblasNoTrans ? B[int64_t(p) * ldb + j]
                                           : B[int64_t(j) * ldb + p];
        acc += a * b;
      }
      float &c = C[int64_t(i) * ldc + j];
      c = beta == 0.0f ? alpha * acc : alpha * acc + beta * c;
    }
}

#endif // ZRT_HAVE_OPENBLAS

namespace zrt {

/// Whether OpenMP threads may call cblas_sgemm at the same time without
/// oversubscribing the cores: true for OpenBLAS's OpenMP build (a call
/// inside a parallel region runs on its calling thread, a call outside one
/// uses the same OpenMP threads: one pool), a sequential OpenBLAS and the
/// reference GEMM; false for OpenBLAS's pthread build, whose every call
/// would start its own pool's threads beside the OpenMP team. Kernels run
/// their BLAS tiles on a team only when this holds; the tiles are the same
/// either way, so are the numbers.
inline bool blasSharesOmpPool() {
#if ZRT_HAVE_OPENBLAS
  // openblas_get_parallel(): 0 sequential, 1 pthreads, 2 OpenMP.
  static const bool shares = openblas_get_parallel() != 1;
  return shares;
#else
  return true;
#endif
}

} // namespace zrt

#endif // ZRT_SRC_BLAS_H
