//===- arg_checks.h - argument rules of the zrt kernels ---------*- C++ -*-===//
///
/// \file
/// The argument checks of the zrt.h functions that both backends implement
/// (elementwise, casts, layout, normalization, losses, attention, optimizer,
/// initializers, collectives), shared by the CPU backend (runtime/src,
/// `fail` = zrt::fail) and the CUDA backend (runtime/cuda, `fail` =
/// zrt_cuda::fail) so that both accept and reject exactly the same calls
/// with the same status and message (see zrt.h). zrt_matmul's rules are in
/// matmul_args.h.
///
/// Every check takes `fn`, the zrt_* name that begins its messages, and the
/// backend's `fail(status, fmt, ...)`, which records the message and returns
/// the status. It returns ZRT_OK, or what `fail` returned for the first rule
/// the call breaks, the rules being tried in the order documented. "Buffer
/// x" below means: x may be NULL only when it holds no elements, else
/// ZRT_ERR_INVALID_ARGUMENT "<fn>: x is NULL". Checks look at sizes and
/// pointers only, never at the data (ids and targets are checked by the
/// kernels). Plain C++17, compiled by g++ and by nvcc. Internal to the
/// runtime.
///
//===----------------------------------------------------------------------===//

#ifndef ZRT_SRC_ARG_CHECKS_H
#define ZRT_SRC_ARG_CHECKS_H

#include "zrt/zrt.h"

#include <climits>
#include <cstdint>
#include <initializer_list>

// Local to this header (#undef at its end), in functions with a `fail`
// parameter: fail with ZRT_ERR_INVALID_ARGUMENT and the message when `cond`
// is false. The "buffer" rule above is checkBuffers.
#define ZRT_ARG_REQUIRE(cond, ...)                                             \
  do {                                                                         \
    if (!(cond))                                                               \
      return fail(ZRT_ERR_INVALID_ARGUMENT, __VA_ARGS__);                      \
  } while (0)

namespace zrt {

/// Bytes of one element of `dtype` (enum zrt_dtype): 4 for ZRT_F32, 2 for
/// ZRT_BF16 and ZRT_F16, 0 for any other value.
inline int64_t dtypeBytes(int dtype) {
  switch (dtype) {
  case ZRT_F32:
    return 4;
  case ZRT_BF16:
  case ZRT_F16:
    return 2;
  default:
    return 0;
  }
}

/// A buffer argument as the messages name it: the parameter's name in zrt.h
/// and the pointer the call passed.
struct ArgBuffer {
  const char *name;
  const void *ptr;
};

/// The "buffer" rule for each of `buffers` in order, each holding `n`
/// elements: ZRT_ERR_INVALID_ARGUMENT "<fn>: <name> is NULL" for the first
/// NULL one when n != 0. One call per function and count is that
/// function's row of buffers (the checks below).
template <typename Fail>
int checkBuffers(const char *fn, int64_t n,
                 std::initializer_list<ArgBuffer> buffers, Fail fail) {
  for (const ArgBuffer &b : buffers)
    ZRT_ARG_REQUIRE(n == 0 || b.ptr != nullptr, "%s: %s is NULL", fn, b.name);
  return ZRT_OK;
}

//===----------------------------------------------------------------------===//
// Elementwise functions and casts
//===----------------------------------------------------------------------===//

/// The element count of an elementwise function or cast:
/// ZRT_ERR_INVALID_ARGUMENT "<fn>: n = <n> < 0" for n < 0.
template <typename Fail> int checkCount(const char *fn, int64_t n, Fail fail) {
  ZRT_ARG_REQUIRE(n >= 0, "%s: n = %lld < 0", fn, (long long)n);
  return ZRT_OK;
}

/// zrt_fill: checkCount, then buffer out.
template <typename Fail>
int checkFillArgs(const char *fn, const void *out, int64_t n, Fail fail) {
  if (int st = checkCount(fn, n, fail))
    return st;
  return checkBuffers(fn, n, {{"out", out}}, fail);
}

/// out = f(x) (zrt_copy, zrt_scale, zrt_gelu, zrt_relu): checkCount, then
/// buffers x and out.
template <typename Fail>
int checkUnaryArgs(const char *fn, const void *x, const void *out, int64_t n,
                   Fail fail) {
  if (int st = checkCount(fn, n, fail))
    return st;
  return checkBuffers(fn, n, {{"x", x}, {"out", out}}, fail);
}

/// out = f(a, b) (zrt_add, zrt_mul): checkCount, then buffers a, b, out.
template <typename Fail>
int checkBinaryArgs(const char *fn, const void *a, const void *b,
                    const void *out, int64_t n, Fail fail) {
  if (int st = checkCount(fn, n, fail))
    return st;
  return checkBuffers(fn, n, {{"a", a}, {"b", b}, {"out", out}}, fail);
}

/// zrt_add_backward: checkCount, then buffer dout (da and db may be NULL).
template <typename Fail>
int checkAddBackwardArgs(const char *fn, const void *dout, int64_t n,
                         Fail fail) {
  if (int st = checkCount(fn, n, fail))
    return st;
  return checkBuffers(fn, n, {{"dout", dout}}, fail);
}

/// zrt_axpy: checkCount, then buffers x and y.
template <typename Fail>
int checkAxpyArgs(const char *fn, const void *x, const void *y, int64_t n,
                  Fail fail) {
  if (int st = checkCount(fn, n, fail))
    return st;
  return checkBuffers(fn, n, {{"x", x}, {"y", y}}, fail);
}

/// zrt_mul_backward: checkCount, then buffers a, b, dout (da and db may be
/// NULL).
template <typename Fail>
int checkMulBackwardArgs(const char *fn, const void *a, const void *b,
                         const void *dout, int64_t n, Fail fail) {
  if (int st = checkCount(fn, n, fail))
    return st;
  return checkBuffers(fn, n, {{"a", a}, {"b", b}, {"dout", dout}}, fail);
}

/// dx = f'(x) * dout (zrt_gelu_backward, zrt_relu_backward): checkCount,
/// then buffers x, dout, dx.
template <typename Fail>
int checkActivationBackwardArgs(const char *fn, const void *x, const void *dout,
                                const void *dx, int64_t n, Fail fail) {
  if (int st = checkCount(fn, n, fail))
    return st;
  return checkBuffers(fn, n, {{"x", x}, {"dout", dout}, {"dx", dx}}, fail);
}

/// zrt_cast_f32_to_bf16, zrt_cast_bf16_to_f32: checkCount, then buffers src
/// and dst.
template <typename Fail>
int checkCastArgs(const char *fn, const void *src, const void *dst, int64_t n,
                  Fail fail) {
  if (int st = checkCount(fn, n, fail))
    return st;
  return checkBuffers(fn, n, {{"src", src}, {"dst", dst}}, fail);
}

/// zrt_fill_bf16: "<fn>: n < 0", then buffer out.
template <typename Fail>
int checkFillBf16Args(const char *fn, const void *out, int64_t n, Fail fail) {
  ZRT_ARG_REQUIRE(n >= 0, "%s: n < 0", fn);
  return checkBuffers(fn, n, {{"out", out}}, fail);
}

/// zrt_accumulate_bf16: "<fn>: n < 0", then buffers x and y.
template <typename Fail>
int checkAccumulateBf16Args(const char *fn, const void *x, const void *y,
                            int64_t n, Fail fail) {
  ZRT_ARG_REQUIRE(n >= 0, "%s: n < 0", fn);
  return checkBuffers(fn, n, {{"x", x}, {"y", y}}, fail);
}

/// zrt_bias_backward: "<fn>: negative size" (rows or N < 0), then buffers
/// dbias (N elements) and dout (rows * N).
template <typename Fail>
int checkBiasBackwardArgs(const char *fn, const void *dout, const void *dbias,
                          int64_t rows, int64_t N, Fail fail) {
  ZRT_ARG_REQUIRE(rows >= 0 && N >= 0, "%s: negative size", fn);
  if (int st = checkBuffers(fn, N, {{"dbias", dbias}}, fail))
    return st;
  return checkBuffers(fn, rows * N, {{"dout", dout}}, fail);
}

//===----------------------------------------------------------------------===//
// Layout: copies, permutations, shards
//===----------------------------------------------------------------------===//

/// zrt_copy_any: "<fn>: bad dtype <dtype>" (dtypeBytes 0), "<fn>: n < 0",
/// then buffers src and dst.
template <typename Fail>
int checkCopyAnyArgs(const char *fn, const void *src, const void *dst,
                     int64_t n, int dtype, Fail fail) {
  ZRT_ARG_REQUIRE(dtypeBytes(dtype) > 0, "%s: bad dtype %d", fn, dtype);
  ZRT_ARG_REQUIRE(n >= 0, "%s: n < 0", fn);
  return checkBuffers(fn, n, {{"src", src}, {"dst", dst}}, fail);
}

/// zrt_copy_2d: bad dtype, "<fn>: negative size" (rows or cols < 0), "<fn>:
/// leading dimensions must be >= cols", then buffers src and dst (rows *
/// cols elements).
template <typename Fail>
int checkCopy2dArgs(const char *fn, const void *src, int64_t src_ld,
                    const void *dst, int64_t dst_ld, int64_t rows, int64_t cols,
                    int dtype, Fail fail) {
  ZRT_ARG_REQUIRE(dtypeBytes(dtype) > 0, "%s: bad dtype %d", fn, dtype);
  ZRT_ARG_REQUIRE(rows >= 0 && cols >= 0, "%s: negative size", fn);
  ZRT_ARG_REQUIRE(src_ld >= cols && dst_ld >= cols,
                  "%s: leading dimensions must be >= cols", fn);
  return checkBuffers(fn, rows * cols, {{"src", src}, {"dst", dst}}, fail);
}

/// zrt_broadcast_leading: "<fn>: negative size" (lead or n < 0), bad dtype,
/// then "<fn>: NULL pointer" when in or out is NULL and lead * n > 0.
template <typename Fail>
int checkBroadcastLeadingArgs(const char *fn, const void *in, const void *out,
                              int64_t lead, int64_t n, int dtype, Fail fail) {
  ZRT_ARG_REQUIRE(lead >= 0 && n >= 0, "%s: negative size", fn);
  ZRT_ARG_REQUIRE(dtypeBytes(dtype) > 0, "%s: bad dtype %d", fn, dtype);
  ZRT_ARG_REQUIRE(lead == 0 || n == 0 || (in != nullptr && out != nullptr),
                  "%s: NULL pointer", fn);
  return ZRT_OK;
}

/// zrt_permute: bad dtype, "<fn>: rank <rank> outside [0, ZRT_MAX_RANK]",
/// "<fn>: NULL shape or perm" (rank > 0), then per dimension "<fn>: negative
/// dimension" and "<fn>: perm is not a permutation of [0, <rank>)", buffers
/// in and out (prod(shape) elements) and "<fn>: in == out" (when not
/// empty). On ZRT_OK, *count = prod(shape) (1 for rank 0).
template <typename Fail>
int checkPermuteArgs(const char *fn, const void *in, const void *out, int rank,
                     const int64_t *shape, const int64_t *perm, int dtype,
                     int64_t *count, Fail fail) {
  ZRT_ARG_REQUIRE(dtypeBytes(dtype) > 0, "%s: bad dtype %d", fn, dtype);
  ZRT_ARG_REQUIRE(rank >= 0 && rank <= ZRT_MAX_RANK,
                  "%s: rank %d outside [0, %d]", fn, rank, ZRT_MAX_RANK);
  ZRT_ARG_REQUIRE(rank == 0 || (shape && perm), "%s: NULL shape or perm", fn);
  int64_t n = 1;
  bool seen[ZRT_MAX_RANK] = {};
  for (int i = 0; i < rank; ++i) {
    ZRT_ARG_REQUIRE(shape[i] >= 0, "%s: negative dimension", fn);
    ZRT_ARG_REQUIRE(perm[i] >= 0 && perm[i] < rank && !seen[perm[i]],
                    "%s: perm is not a permutation of [0, %d)", fn, rank);
    seen[perm[i]] = true;
    n *= shape[i];
  }
  if (int st = checkBuffers(fn, n, {{"in", in}, {"out", out}}, fail))
    return st;
  ZRT_ARG_REQUIRE(n == 0 || in != out, "%s: in == out", fn);
  *count = n;
  return ZRT_OK;
}

/// zrt_permute_0213: "<fn>: negative dim", buffers in and out (A*B*C*D
/// elements), then "<fn>: in-place is not supported" (when not empty).
template <typename Fail>
int checkPermute0213Args(const char *fn, const void *in, const void *out,
                         int64_t A, int64_t B, int64_t C, int64_t D,
                         Fail fail) {
  ZRT_ARG_REQUIRE(A >= 0 && B >= 0 && C >= 0 && D >= 0, "%s: negative dim", fn);
  const int64_t total = A * B * C * D;
  if (int st = checkBuffers(fn, total, {{"in", in}, {"out", out}}, fail))
    return st;
  ZRT_ARG_REQUIRE(total == 0 || in != out, "%s: in-place is not supported", fn);
  return ZRT_OK;
}

/// zrt_local_shard: bad dtype, "<fn>: negative size or rank", then buffers
/// in and out (n elements).
template <typename Fail>
int checkLocalShardArgs(const char *fn, const void *in, const void *out,
                        int64_t n, int rank, int dtype, Fail fail) {
  ZRT_ARG_REQUIRE(dtypeBytes(dtype) > 0, "%s: bad dtype %d", fn, dtype);
  ZRT_ARG_REQUIRE(n >= 0 && rank >= 0, "%s: negative size or rank", fn);
  return checkBuffers(fn, n, {{"in", in}, {"out", out}}, fail);
}

//===----------------------------------------------------------------------===//
// Normalization and softmax (rows of C >= 1 columns; buffers count rows)
//===----------------------------------------------------------------------===//

/// Whether the byte ranges [p, p + bytes) and [q, q + bytes) share a byte.
inline bool bytesOverlap(const void *p, const void *q, int64_t bytes) {
  const uintptr_t pu = reinterpret_cast<uintptr_t>(p);
  const uintptr_t qu = reinterpret_cast<uintptr_t>(q);
  const uintptr_t n = static_cast<uintptr_t>(bytes);
  return bytes > 0 && pu < qu + n && qu < pu + n;
}

/// Tensors of `bytes` bytes each, the first `outputs` of them outputs: no
/// output may overlap a later tensor of the list, else "<fn>: <name[p]>
/// overlaps <name[q]>" for the first such pair (p, q) in order.
template <typename Fail>
int checkDisjoint(const char *fn, int outputs, int count,
                  const void *const *ptr, const char *const *name,
                  int64_t bytes, Fail fail) {
  for (int p = 0; p < outputs; ++p)
    for (int q = p + 1; q < count; ++q)
      ZRT_ARG_REQUIRE(!bytesOverlap(ptr[p], ptr[q], bytes),
                      "%s: %s overlaps %s", fn, name[p], name[q]);
  return ZRT_OK;
}

/// The shape and eps of zrt_layer_norm: "<fn>: need N >= 0 and C >= 1
/// (N=<N> C=<C>)", then "<fn>: eps must be >= 0".
template <typename Fail>
int checkLayerNormShape(const char *fn, int64_t N, int64_t C, float eps,
                        Fail fail) {
  ZRT_ARG_REQUIRE(N >= 0 && C >= 1,
                  "%s: need N >= 0 and C >= 1 (N=%lld C=%lld)", fn,
                  (long long)N, (long long)C);
  ZRT_ARG_REQUIRE(eps >= 0.0f, "%s: eps must be >= 0", fn);
  return ZRT_OK;
}

/// zrt_layer_norm: checkLayerNormShape, then buffers x and out (weight,
/// bias, mean, rstd may be NULL).
template <typename Fail>
int checkLayerNormArgs(const char *fn, const void *x, const void *out,
                       int64_t N, int64_t C, float eps, Fail fail) {
  if (int st = checkLayerNormShape(fn, N, C, eps, fail))
    return st;
  return checkBuffers(fn, N, {{"x", x}, {"out", out}}, fail);
}

/// zrt_add_layer_norm(_bf16), elements of eltBytes bytes:
/// checkLayerNormShape, then buffers a, b, sum, out, then checkDisjoint
/// with outputs sum, out and inputs a, b (weight, bias, mean, rstd may be
/// NULL).
template <typename Fail>
int checkAddLayerNormArgs(const char *fn, const void *a, const void *b,
                          const void *sum, const void *out, int64_t N,
                          int64_t C, float eps, int64_t eltBytes, Fail fail) {
  if (int st = checkLayerNormShape(fn, N, C, eps, fail))
    return st;
  if (int st = checkBuffers(
          fn, N, {{"a", a}, {"b", b}, {"sum", sum}, {"out", out}}, fail))
    return st;
  const void *const ptr[4] = {sum, out, a, b};
  const char *const name[4] = {"sum", "out", "a", "b"};
  return checkDisjoint(fn, 2, 4, ptr, name, N * C * eltBytes, fail);
}

/// The row shape of the normalization kernels other than zrt_layer_norm:
/// "<fn>: need N >= 0 and C >= 1".
template <typename Fail>
int checkRows(const char *fn, int64_t N, int64_t C, Fail fail) {
  ZRT_ARG_REQUIRE(N >= 0 && C >= 1, "%s: need N >= 0 and C >= 1", fn);
  return ZRT_OK;
}

/// zrt_layer_norm_backward: checkRows, then buffers dout, x, mean, rstd
/// (weight, dx, dweight, dbias may be NULL).
template <typename Fail>
int checkLayerNormBackwardArgs(const char *fn, const void *dout, const void *x,
                               const void *mean, const void *rstd, int64_t N,
                               int64_t C, Fail fail) {
  if (int st = checkRows(fn, N, C, fail))
    return st;
  return checkBuffers(
      fn, N, {{"dout", dout}, {"x", x}, {"mean", mean}, {"rstd", rstd}}, fail);
}

/// zrt_layer_norm_backward_add(_bf16), elements of eltBytes bytes:
/// checkLayerNormBackwardArgs, then buffers addend and dx, then
/// checkDisjoint with output dx and inputs addend, dout, x.
template <typename Fail>
int checkLayerNormBackwardAddArgs(const char *fn, const void *dout,
                                  const void *x, const void *mean,
                                  const void *rstd, const void *addend,
                                  const void *dx, int64_t N, int64_t C,
                                  int64_t eltBytes, Fail fail) {
  if (int st = checkLayerNormBackwardArgs(fn, dout, x, mean, rstd, N, C, fail))
    return st;
  if (int st = checkBuffers(fn, N, {{"addend", addend}, {"dx", dx}}, fail))
    return st;
  const void *const ptr[4] = {dx, addend, dout, x};
  const char *const name[4] = {"dx", "addend", "dout", "x"};
  return checkDisjoint(fn, 1, 4, ptr, name, N * C * eltBytes, fail);
}

/// zrt_layer_norm_stats: checkRows, "<fn>: eps must be >= 0", then buffers
/// x, mean, rstd.
template <typename Fail>
int checkLayerNormStatsArgs(const char *fn, const void *x, const void *mean,
                            const void *rstd, int64_t N, int64_t C, float eps,
                            Fail fail) {
  if (int st = checkRows(fn, N, C, fail))
    return st;
  ZRT_ARG_REQUIRE(eps >= 0.0f, "%s: eps must be >= 0", fn);
  return checkBuffers(fn, N, {{"x", x}, {"mean", mean}, {"rstd", rstd}}, fail);
}

/// zrt_softmax: checkRows, then buffers x and out.
template <typename Fail>
int checkSoftmaxArgs(const char *fn, const void *x, const void *out, int64_t N,
                     int64_t C, Fail fail) {
  if (int st = checkRows(fn, N, C, fail))
    return st;
  return checkBuffers(fn, N, {{"x", x}, {"out", out}}, fail);
}

/// zrt_softmax_backward: checkRows, then buffers y, dy, dx.
template <typename Fail>
int checkSoftmaxBackwardArgs(const char *fn, const void *y, const void *dy,
                             const void *dx, int64_t N, int64_t C, Fail fail) {
  if (int st = checkRows(fn, N, C, fail))
    return st;
  return checkBuffers(fn, N, {{"y", y}, {"dy", dy}, {"dx", dx}}, fail);
}

//===----------------------------------------------------------------------===//
// Embedding and losses
//===----------------------------------------------------------------------===//

/// zrt_embedding: "<fn>: negative size" (N, V or C < 0), then buffers ids
/// (N elements), out (N * C) and table (V * C).
template <typename Fail>
int checkEmbeddingArgs(const char *fn, const void *table, const void *ids,
                       const void *out, int64_t N, int64_t V, int64_t C,
                       Fail fail) {
  ZRT_ARG_REQUIRE(N >= 0 && V >= 0 && C >= 0, "%s: negative size", fn);
  if (int st = checkBuffers(fn, N, {{"ids", ids}}, fail))
    return st;
  if (int st = checkBuffers(fn, N * C, {{"out", out}}, fail))
    return st;
  return checkBuffers(fn, V * C, {{"table", table}}, fail);
}

/// zrt_embedding_backward: "<fn>: negative size", then buffers ids (N),
/// dout (N * C) and dtable (V * C).
template <typename Fail>
int checkEmbeddingBackwardArgs(const char *fn, const void *dout,
                               const void *ids, const void *dtable, int64_t N,
                               int64_t V, int64_t C, Fail fail) {
  ZRT_ARG_REQUIRE(N >= 0 && V >= 0 && C >= 0, "%s: negative size", fn);
  if (int st = checkBuffers(fn, N, {{"ids", ids}}, fail))
    return st;
  if (int st = checkBuffers(fn, N * C, {{"dout", dout}}, fail))
    return st;
  return checkBuffers(fn, V * C, {{"dtable", dtable}}, fail);
}

/// zrt_embedding_backward_bf16_workspace: N + V + 1 four-byte words (the
/// CPU's counting sort of the positions by id: N positions, V + 1 bucket
/// ends); -1 for negative sizes or on overflow. Both backends return it.
inline int64_t embeddingBackwardBf16Workspace(int64_t N, int64_t V) {
  return zrt_abi_embedding_backward_bf16_workspace(N, V);
}

/// zrt_cross_entropy: "<fn>: need N >= 0 and V >= 1", "<fn>: loss is NULL",
/// then buffers logits and targets (N rows).
template <typename Fail>
int checkCrossEntropyArgs(const char *fn, const void *logits,
                          const void *targets, const void *loss, int64_t N,
                          int64_t V, Fail fail) {
  ZRT_ARG_REQUIRE(N >= 0 && V >= 1, "%s: need N >= 0 and V >= 1", fn);
  ZRT_ARG_REQUIRE(loss != nullptr, "%s: loss is NULL", fn);
  return checkBuffers(fn, N, {{"logits", logits}, {"targets", targets}}, fail);
}

/// zrt_cross_entropy_backward: "<fn>: need N >= 0 and V >= 1", then buffers
/// logits, targets, dlogits (N rows).
template <typename Fail>
int checkCrossEntropyBackwardArgs(const char *fn, const void *logits,
                                  const void *targets, const void *dlogits,
                                  int64_t N, int64_t V, Fail fail) {
  ZRT_ARG_REQUIRE(N >= 0 && V >= 1, "%s: need N >= 0 and V >= 1", fn);
  return checkBuffers(
      fn, N, {{"logits", logits}, {"targets", targets}, {"dlogits", dlogits}},
      fail);
}

/// The shape of the padded cross-entropy: "<fn>: need N >= 0 and 1 <=
/// num_classes <= V".
template <typename Fail>
int checkPaddedClasses(const char *fn, int64_t N, int64_t V,
                       int64_t num_classes, Fail fail) {
  ZRT_ARG_REQUIRE(N >= 0 && num_classes >= 1 && num_classes <= V,
                  "%s: need N >= 0 and 1 <= num_classes <= V", fn);
  return ZRT_OK;
}

/// zrt_cross_entropy_padded: checkPaddedClasses, "<fn>: loss is NULL", then
/// buffers logits and targets (N rows).
template <typename Fail>
int checkCrossEntropyPaddedArgs(const char *fn, const void *logits,
                                const void *targets, const void *loss,
                                int64_t N, int64_t V, int64_t num_classes,
                                Fail fail) {
  if (int st = checkPaddedClasses(fn, N, V, num_classes, fail))
    return st;
  ZRT_ARG_REQUIRE(loss != nullptr, "%s: loss is NULL", fn);
  return checkBuffers(fn, N, {{"logits", logits}, {"targets", targets}}, fail);
}

/// zrt_cross_entropy_padded_backward: checkPaddedClasses, "<fn>: dloss is
/// NULL", then buffers logits, targets, dlogits (N rows).
template <typename Fail>
int checkCrossEntropyPaddedBackwardArgs(const char *fn, const void *logits,
                                        const void *targets, const void *dloss,
                                        const void *dlogits, int64_t N,
                                        int64_t V, int64_t num_classes,
                                        Fail fail) {
  if (int st = checkPaddedClasses(fn, N, V, num_classes, fail))
    return st;
  ZRT_ARG_REQUIRE(dloss != nullptr, "%s: dloss is NULL", fn);
  return checkBuffers(
      fn, N, {{"logits", logits}, {"targets", targets}, {"dlogits", dlogits}},
      fail);
}

/// zrt_mse: "<fn>: n < 0", "<fn>: loss is NULL", then buffers pred and
/// target.
template <typename Fail>
int checkMseArgs(const char *fn, const void *pred, const void *target,
                 const void *loss, int64_t n, Fail fail) {
  ZRT_ARG_REQUIRE(n >= 0, "%s: n < 0", fn);
  ZRT_ARG_REQUIRE(loss != nullptr, "%s: loss is NULL", fn);
  return checkBuffers(fn, n, {{"pred", pred}, {"target", target}}, fail);
}

/// zrt_mse_backward: "<fn>: n < 0", then buffers pred and target (dpred and
/// dtarget may be NULL).
template <typename Fail>
int checkMseBackwardArgs(const char *fn, const void *pred, const void *target,
                         int64_t n, Fail fail) {
  ZRT_ARG_REQUIRE(n >= 0, "%s: n < 0", fn);
  return checkBuffers(fn, n, {{"pred", pred}, {"target", target}}, fail);
}

//===----------------------------------------------------------------------===//
// Causal attention (zrt_causal_attention(_backward); buffers count the
// B * H slices). The fused attention's rules are in attention_args.h.
//===----------------------------------------------------------------------===//

/// The sizes of the causal attention: "<fn>: need B, H >= 0 and T, D >= 1
/// (B=.. H=.. T=.. D=..)", then "<fn>: T, D must fit in int32".
template <typename Fail>
int checkCausalAttentionSizes(const char *fn, int64_t B, int64_t H, int64_t T,
                              int64_t D, Fail fail) {
  ZRT_ARG_REQUIRE(B >= 0 && H >= 0 && T >= 1 && D >= 1,
                  "%s: need B, H >= 0 and T, D >= 1 (B=%lld H=%lld T=%lld "
                  "D=%lld)",
                  fn, (long long)B, (long long)H, (long long)T, (long long)D);
  ZRT_ARG_REQUIRE(T <= INT_MAX && D <= INT_MAX, "%s: T, D must fit in int32",
                  fn);
  return ZRT_OK;
}

/// zrt_causal_attention: checkCausalAttentionSizes, then buffers q, k, v,
/// out (probs and workspace may be NULL).
template <typename Fail>
int checkCausalAttentionArgs(const char *fn, const void *q, const void *k,
                             const void *v, const void *out, int64_t B,
                             int64_t H, int64_t T, int64_t D, Fail fail) {
  if (int st = checkCausalAttentionSizes(fn, B, H, T, D, fail))
    return st;
  const int64_t slices = B * H;
  return checkBuffers(fn, slices, {{"q", q}, {"k", k}, {"v", v}, {"out", out}},
                      fail);
}

/// zrt_causal_attention_backward: checkCausalAttentionSizes, then buffers
/// dout, q, k, v, probs, dq, dk, dv (workspace may be NULL).
template <typename Fail>
int checkCausalAttentionBackwardArgs(const char *fn, const void *dout,
                                     const void *q, const void *k,
                                     const void *v, const void *probs,
                                     const void *dq, const void *dk,
                                     const void *dv, int64_t B, int64_t H,
                                     int64_t T, int64_t D, Fail fail) {
  if (int st = checkCausalAttentionSizes(fn, B, H, T, D, fail))
    return st;
  const int64_t slices = B * H;
  return checkBuffers(fn, slices,
                      {{"dout", dout},
                       {"q", q},
                       {"k", k},
                       {"v", v},
                       {"probs", probs},
                       {"dq", dq},
                       {"dk", dk},
                       {"dv", dv}},
                      fail);
}

//===----------------------------------------------------------------------===//
// Optimizer and gradient norm
//===----------------------------------------------------------------------===//

/// zrt_adamw_step, zrt_adamw_step_bf16_grad: "<fn>: n = <n> < 0", "<fn>:
/// step = <step> must be >= 1 (1 = first step)", then buffers param, m, v,
/// grad (out_f32 and out_bf16 may be NULL).
template <typename Fail>
int checkAdamwArgs(const char *fn, const void *param, const void *m,
                   const void *v, const void *grad, int64_t n, int64_t step,
                   Fail fail) {
  ZRT_ARG_REQUIRE(n >= 0, "%s: n = %lld < 0", fn, (long long)n);
  ZRT_ARG_REQUIRE(step >= 1, "%s: step = %lld must be >= 1 (1 = first step)",
                  fn, (long long)step);
  return checkBuffers(
      fn, n, {{"param", param}, {"m", m}, {"v", v}, {"grad", grad}}, fail);
}

/// zrt_shard_adamw: "<fn>: negative shard, rank or member count", "<fn>:
/// bad gradient dtype <d>" (not ZRT_F32 / ZRT_BF16), "<fn>: NULL layout"
/// (offsets, numels or decay NULL with members), "<fn>: step < 1", then
/// buffers param, m, v, grad (shard elements).
template <typename Fail>
int checkShardAdamwArgs(const char *fn, const void *param, const void *m,
                        const void *v, const void *grad, int grad_dtype,
                        int64_t shard, int rank, int num_members,
                        const int64_t *offsets, const int64_t *numels,
                        const uint8_t *decay, int64_t step, Fail fail) {
  ZRT_ARG_REQUIRE(shard >= 0 && rank >= 0 && num_members >= 0,
                  "%s: negative shard, rank or member count", fn);
  ZRT_ARG_REQUIRE(dtypeBytes(grad_dtype) > 0, "%s: bad gradient dtype %d", fn,
                  grad_dtype);
  ZRT_ARG_REQUIRE(num_members == 0 || (offsets && numels && decay),
                  "%s: NULL layout", fn);
  ZRT_ARG_REQUIRE(step >= 1, "%s: step < 1", fn);
  return checkBuffers(
      fn, shard, {{"param", param}, {"m", m}, {"v", v}, {"grad", grad}}, fail);
}

/// zrt_sum_squares, zrt_sum_squares_bf16: "<fn>: n < 0", "<fn>: out is
/// NULL", then buffer x.
template <typename Fail>
int checkSumSquaresArgs(const char *fn, const void *x, int64_t n,
                        const void *out, Fail fail) {
  ZRT_ARG_REQUIRE(n >= 0, "%s: n < 0", fn);
  ZRT_ARG_REQUIRE(out != nullptr, "%s: out is NULL", fn);
  return checkBuffers(fn, n, {{"x", x}}, fail);
}

/// zrt_clip_coef_scaled: "<fn>: NULL pointer" when any of the four is NULL.
template <typename Fail>
int checkClipCoefArgs(const char *fn, const void *sum_squares,
                      const void *grad_scale, const void *coef,
                      const void *norm, Fail fail) {
  ZRT_ARG_REQUIRE(sum_squares && grad_scale && coef && norm, "%s: NULL pointer",
                  fn);
  return ZRT_OK;
}

//===----------------------------------------------------------------------===//
// Initializers
//===----------------------------------------------------------------------===//

/// The range of zrt_init_normal / zrt_init_uniform: "<fn>: n < 0", "<fn>:
/// offset < 0", then buffer ptr.
template <typename Fail>
int checkInitRange(const char *fn, const void *ptr, int64_t n, int64_t offset,
                   Fail fail) {
  ZRT_ARG_REQUIRE(n >= 0, "%s: n < 0", fn);
  ZRT_ARG_REQUIRE(offset >= 0, "%s: offset < 0", fn);
  return checkBuffers(fn, n, {{"ptr", ptr}}, fail);
}

/// zrt_init_normal: checkInitRange, then "<fn>: std < 0".
template <typename Fail>
int checkInitNormalArgs(const char *fn, const void *ptr, int64_t n,
                        float stddev, int64_t offset, Fail fail) {
  if (int st = checkInitRange(fn, ptr, n, offset, fail))
    return st;
  ZRT_ARG_REQUIRE(stddev >= 0.0f, "%s: std < 0", fn);
  return ZRT_OK;
}

/// zrt_init_uniform: checkInitRange, then "<fn>: high < low".
template <typename Fail>
int checkInitUniformArgs(const char *fn, const void *ptr, int64_t n, float low,
                         float high, int64_t offset, Fail fail) {
  if (int st = checkInitRange(fn, ptr, n, offset, fail))
    return st;
  ZRT_ARG_REQUIRE(high >= low, "%s: high < low", fn);
  return ZRT_OK;
}

/// zrt_init_param_slice: "<fn>: bad dtype <d>" (not ZRT_F32 / ZRT_BF16),
/// "<fn>: negative offset or size", "<fn>: bad init kind <k>", "<fn>: std <
/// 0", then buffer data (slice_n elements).
template <typename Fail>
int checkInitParamSliceArgs(const char *fn, const void *data, int dtype,
                            int64_t slice_begin, int64_t slice_n,
                            int64_t member_offset, int64_t member_numel,
                            int init_kind, float stddev, Fail fail) {
  ZRT_ARG_REQUIRE(dtypeBytes(dtype) > 0, "%s: bad dtype %d", fn, dtype);
  ZRT_ARG_REQUIRE(slice_begin >= 0 && slice_n >= 0 && member_offset >= 0 &&
                      member_numel >= 0,
                  "%s: negative offset or size", fn);
  ZRT_ARG_REQUIRE(init_kind >= ZRT_INIT_NORMAL && init_kind <= ZRT_INIT_ONES,
                  "%s: bad init kind %d", fn, init_kind);
  ZRT_ARG_REQUIRE(stddev >= 0.0f, "%s: std < 0", fn);
  return checkBuffers(fn, slice_n, {{"data", data}}, fail);
}

//===----------------------------------------------------------------------===//
// Process group and collectives (the backend passes its own state)
//===----------------------------------------------------------------------===//

/// A call that needs zrt_init: ZRT_ERR_NOT_INITIALIZED "<fn>: the runtime is
/// not initialized (call zrt_init)" unless `initialized`.
template <typename Fail>
int checkInitialized(const char *fn, bool initialized, Fail fail) {
  if (!initialized)
    return fail(ZRT_ERR_NOT_INITIALIZED,
                "%s: the runtime is not initialized (call zrt_init)", fn);
  return ZRT_OK;
}

/// What every zrt_*_start collective checks first: sets *req = NULL (when
/// req is not NULL), then checkInitialized, then ZRT_ERR_INVALID_ARGUMENT
/// "<fn>: req is NULL", "<fn>: n = <n> < 0", with `mpiCounts` (a backend
/// that passes counts to MPI as int) "<fn>: n = <n> exceeds the MPI count
/// limit" for n > INT_MAX, and "<fn>: unknown dtype <d>".
template <typename Fail>
int checkCollectiveArgs(const char *fn, bool initialized, int64_t n, int dtype,
                        zrt_request *req, bool mpiCounts, Fail fail) {
  if (req)
    *req = nullptr;
  if (int st = checkInitialized(fn, initialized, fail))
    return st;
  ZRT_ARG_REQUIRE(req != nullptr, "%s: req is NULL", fn);
  ZRT_ARG_REQUIRE(n >= 0, "%s: n = %lld < 0", fn, (long long)n);
  ZRT_ARG_REQUIRE(!mpiCounts || n <= INT_MAX,
                  "%s: n = %lld exceeds the MPI count limit", fn, (long long)n);
  ZRT_ARG_REQUIRE(dtypeBytes(dtype) > 0, "%s: unknown dtype %d", fn, dtype);
  return ZRT_OK;
}

/// The reduce op of zrt_reduce_scatter(_start) / zrt_all_reduce(_start):
/// "<fn>: unknown reduce op <op>" unless ZRT_SUM, ZRT_AVG or ZRT_MAX.
template <typename Fail> int checkReduceOp(const char *fn, int op, Fail fail) {
  ZRT_ARG_REQUIRE(op == ZRT_SUM || op == ZRT_AVG || op == ZRT_MAX,
                  "%s: unknown reduce op %d", fn, op);
  return ZRT_OK;
}

/// The buffers of an all-gather or reduction: "<fn>: NULL buffer" when send
/// or recv is NULL and n > 0.
template <typename Fail>
int checkCollectiveBuffers(const char *fn, const void *send, const void *recv,
                           int64_t n, Fail fail) {
  ZRT_ARG_REQUIRE(n == 0 || (send && recv), "%s: NULL buffer", fn);
  return ZRT_OK;
}

/// zrt_broadcast_start after checkCollectiveArgs: "<fn>: root <root> outside
/// [0, <worldSize>)", then "<fn>: NULL buffer" (buf NULL with n > 0).
template <typename Fail>
int checkBroadcastArgs(const char *fn, const void *buf, int64_t n, int root,
                       int worldSize, Fail fail) {
  ZRT_ARG_REQUIRE(root >= 0 && root < worldSize, "%s: root %d outside [0, %d)",
                  fn, root, worldSize);
  ZRT_ARG_REQUIRE(n == 0 || buf, "%s: NULL buffer", fn);
  return ZRT_OK;
}

} // namespace zrt

#undef ZRT_ARG_REQUIRE

#endif // ZRT_SRC_ARG_CHECKS_H
