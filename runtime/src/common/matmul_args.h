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

/// f32 elements of one row chunk of zrt_matmul_bf16 on the CPU
/// (ZRT_MATMUL_BF16_CHUNK_FLOATS, zrt/abi.h).
constexpr int64_t kMatmulBf16ChunkFloats = ZRT_MATMUL_BF16_CHUNK_FLOATS;

/// Rows of C one chunk of the CPU's zrt_matmul_bf16 covers (zrt/abi.h).
inline int64_t matmulBf16ChunkRows(int64_t M, int64_t N, int64_t K,
                                   int64_t chunkFloats = kMatmulBf16ChunkFloats) {
  return zrt_abi_matmul_bf16_chunk_rows(M, N, K, chunkFloats);
}

/// zrt_matmul_bf16_workspace: floats of scratch for these sizes (zrt/abi.h,
/// the formula the compiler plans scratch with); -1 for negative sizes or
/// on overflow.
inline int64_t matmulBf16Workspace(int64_t batch, int64_t M, int64_t N,
                                   int64_t K, bool hasBias,
                                   int64_t chunkFloats = kMatmulBf16ChunkFloats) {
  return zrt_abi_matmul_bf16_workspace(batch, M, N, K, hasBias ? 1 : 0,
                                       chunkFloats);
}

/// What zrt_matmul_bf16 and its GELU forms write from each element of
/// acc = op(A) op(B) + bias (f32), every output rounded once (both
/// backends):
///  - Round (zrt_matmul_bf16): C = bf16(acc);
///  - Gelu (zrt_matmul_gelu_bf16): preOut = bf16(acc) unless preOut is
///    NULL, C = bf16(gelu(acc));
///  - GeluBackward (zrt_matmul_gelu_backward_bf16, no bias):
///    C = bf16(acc * gelu'(f32(preIn))); preIn may equal C.
/// preOut and preIn are [batch, M, N] like C.
struct MatmulBf16Epilogue {
  enum Kind { Round, Gelu, GeluBackward };
  Kind kind = Round;
  zrt_bf16 *preOut = nullptr;
  const zrt_bf16 *preIn = nullptr;

  static MatmulBf16Epilogue gelu(zrt_bf16 *pre) { return {Gelu, pre, nullptr}; }
  static MatmulBf16Epilogue geluBackward(const zrt_bf16 *pre) {
    return {GeluBackward, nullptr, pre};
  }
  /// The zrt.h function this epilogue implements (for messages).
  const char *name() const {
    return kind == Round  ? "zrt_matmul_bf16"
           : kind == Gelu ? "zrt_matmul_gelu_bf16"
                          : "zrt_matmul_gelu_backward_bf16";
  }
};

/// Checks the arguments of zrt_matmul_bf16 and its GELU forms (every
/// backend; `epilogue` names the function): checkMatmulArgs on the packed
/// operands with C the output (out, dpre), then, when there is something
/// to compute, a workspace size that does not overflow, a non-NULL
/// workspace and, for the GELU backward (which reads it), a non-NULL pre.
/// Returns ZRT_OK with *empty as checkMatmulArgs, or the status
/// `fail(status, fmt, ...)` returned.
template <typename Fail>
int checkMatmulBf16Args(const zrt_bf16 *A, const zrt_bf16 *B,
                        const zrt_bf16 *bias, zrt_bf16 *C, int64_t batch,
                        int64_t M, int64_t N, int64_t K, const float *workspace,
                        const MatmulBf16Epilogue &epilogue, bool *empty,
                        Fail fail) {
  const char *fn = epilogue.name();
  int64_t sa = ZRT_STRIDE_PACKED, sb = ZRT_STRIDE_PACKED,
          sc = ZRT_STRIDE_PACKED;
  if (int status =
          checkMatmulArgs(A, B, C, batch, M, N, K, sa, sb, sc, empty, fail, fn))
    return status;
  if (*empty)
    return ZRT_OK;
  if (matmulBf16Workspace(batch, M, N, K, bias != nullptr) < 0)
    return fail(ZRT_ERR_INVALID_ARGUMENT, "%s: size overflow", fn);
  if (workspace == nullptr)
    return fail(ZRT_ERR_INVALID_ARGUMENT, "%s: workspace is NULL", fn);
  if (epilogue.kind == MatmulBf16Epilogue::GeluBackward &&
      epilogue.preIn == nullptr)
    return fail(ZRT_ERR_INVALID_ARGUMENT, "%s: pre is NULL", fn);
  return ZRT_OK;
}

} // namespace zrt

#endif // ZRT_SRC_MATMUL_ARGS_H
