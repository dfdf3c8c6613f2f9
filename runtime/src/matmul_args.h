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

/// zrt_matmul_bf16_workspace: floats of scratch for these sizes,
/// batch*(M*K + K*N + M*N) + (hasBias ? N : 0); -1 for negative sizes or on
/// overflow.
inline int64_t matmulBf16Workspace(int64_t batch, int64_t M, int64_t N,
                                   int64_t K, bool hasBias) {
  if (batch < 0 || M < 0 || N < 0 || K < 0)
    return -1;
  int64_t mk, kn, mn, per, total;
  if (__builtin_mul_overflow(M, K, &mk) || __builtin_mul_overflow(K, N, &kn) ||
      __builtin_mul_overflow(M, N, &mn) || __builtin_add_overflow(mk, kn, &per) ||
      __builtin_add_overflow(per, mn, &per) ||
      __builtin_mul_overflow(per, batch, &total) ||
      __builtin_add_overflow(total, hasBias ? N : 0, &total))
    return -1;
  return total;
}

} // namespace zrt

#endif // ZRT_SRC_MATMUL_ARGS_H
