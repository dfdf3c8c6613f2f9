//===- matmul_args.h - zrt_matmul's argument rules ---------------*- C++ -*-===//
///
/// \file
/// The argument checks and stride defaults of zrt_matmul, shared by every
/// backend so they accept and reject exactly the same calls (see zrt.h).
/// Internal to the runtime.
///
//===----------------------------------------------------------------------===//

#ifndef ZRT_SRC_MATMUL_ARGS_H
#define ZRT_SRC_MATMUL_ARGS_H

#include "zrt/zrt.h"

#include <climits>
#include <cstdint>

namespace zrt {

/// Checks zrt_matmul's arguments and resolves ZRT_STRIDE_PACKED strides (in
/// elements) in place. Returns ZRT_OK with *empty = true when there is
/// nothing to compute (batch, M or N is 0), ZRT_OK with *empty = false when
/// the product must run, or the status `fail(status, fmt, ...)` returned
/// (ZRT_ERR_INVALID_ARGUMENT: negative or > INT_MAX sizes, negative strides,
/// stride_c = 0 with batch > 1, NULL C, or NULL A/B with K > 0).
/// `fn` names the function in messages (zrt_matmul, zrt_matmul_bf16).
template <typename T, typename Fail>
int checkMatmulArgs(const T *A, const T *B, T *C, int64_t batch, int64_t M,
                    int64_t N, int64_t K, int64_t &stride_a, int64_t &stride_b,
                    int64_t &stride_c, bool *empty, Fail fail,
                    const char *fn = "zrt_matmul") {
  *empty = true;
  if (!(batch >= 0 && M >= 0 && N >= 0 && K >= 0))
    return fail(ZRT_ERR_INVALID_ARGUMENT,
                "%s: negative size (batch=%lld M=%lld N=%lld K=%lld)", fn,
                (long long)batch, (long long)M, (long long)N, (long long)K);
  if (!(M <= INT_MAX && N <= INT_MAX && K <= INT_MAX))
    return fail(ZRT_ERR_INVALID_ARGUMENT,
                "%s: M, N, K must fit in int32 for BLAS", fn);
  if (stride_a == ZRT_STRIDE_PACKED)
    stride_a = M * K;
  if (stride_b == ZRT_STRIDE_PACKED)
    stride_b = K * N;
  if (stride_c == ZRT_STRIDE_PACKED)
    stride_c = M * N;
  if (!(stride_a >= 0 && stride_b >= 0 && stride_c >= 0))
    return fail(ZRT_ERR_INVALID_ARGUMENT,
                "%s: strides must be >= 0 or ZRT_STRIDE_PACKED", fn);
  if (!(batch <= 1 || stride_c > 0 || M * N == 0))
    return fail(ZRT_ERR_INVALID_ARGUMENT,
                "%s: stride_c = 0 with batch = %lld would race on C", fn,
                (long long)batch);
  if (batch == 0 || M == 0 || N == 0)
    return ZRT_OK;
  if (C == nullptr)
    return fail(ZRT_ERR_INVALID_ARGUMENT, "%s: C is NULL", fn);
  if (!(K == 0 || (A != nullptr && B != nullptr)))
    return fail(ZRT_ERR_INVALID_ARGUMENT, "%s: A or B is NULL", fn);
  *empty = false;
  return ZRT_OK;
}

/// f32 elements of one row chunk of zrt_matmul_bf16 on the CPU: the widened
/// rows of op(A) and of C together (K + N floats per row of C) stay within
/// this budget (64 MiB), so the workspace no longer grows with M.
constexpr int64_t kMatmulBf16ChunkFloats = int64_t(1) << 24;

/// Rows of C one chunk of the CPU's zrt_matmul_bf16 covers: as many as fit
/// in `chunkFloats` at K + N floats each, at least 1, at most M (M >= 0,
/// N, K >= 0).
inline int64_t matmulBf16ChunkRows(int64_t M, int64_t N, int64_t K,
                                   int64_t chunkFloats = kMatmulBf16ChunkFloats) {
  const int64_t per = K + N > 0 ? K + N : 1;
  int64_t rows = chunkFloats / per;
  if (rows < 1)
    rows = 1;
  return rows < M ? rows : (M > 0 ? M : 1);
}

/// zrt_matmul_bf16_workspace: floats of scratch for these sizes,
/// K*N (one widened op(B)) + (hasBias ? N : 0) + rows*(K + N) (a chunk of
/// widened op(A) rows and f32 C rows) with rows = matmulBf16ChunkRows; the
/// same for every batch size (the matrices of a batch run one after
/// another). -1 for negative sizes or on overflow.
inline int64_t matmulBf16Workspace(int64_t batch, int64_t M, int64_t N,
                                   int64_t K, bool hasBias,
                                   int64_t chunkFloats = kMatmulBf16ChunkFloats) {
  if (batch < 0 || M < 0 || N < 0 || K < 0)
    return -1;
  int64_t kn, per, chunk, total;
  const int64_t rows = matmulBf16ChunkRows(M, N, K, chunkFloats);
  if (__builtin_mul_overflow(K, N, &kn) || __builtin_add_overflow(K, N, &per) ||
      __builtin_mul_overflow(rows, per, &chunk) ||
      __builtin_add_overflow(kn, chunk, &total) ||
      __builtin_add_overflow(total, hasBias ? N : 0, &total))
    return -1;
  return total;
}

} // namespace zrt

#endif // ZRT_SRC_MATMUL_ARGS_H
