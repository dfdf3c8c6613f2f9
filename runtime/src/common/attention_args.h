//===- attention_args.h - the fused attention's argument rules ---*- C++ -*-===//
///
/// \file
/// Argument checks and workspace sizes of zrt_attention_forward /
/// zrt_attention_backward and their bf16 forms, shared by the CPU and CUDA
/// backends so that both accept and reject the same calls with the same
/// messages and ask for the same workspace (see zrt.h).
/// Internal to the runtime.
///
//===----------------------------------------------------------------------===//

#ifndef ZRT_SRC_ATTENTION_ARGS_H
#define ZRT_SRC_ATTENTION_ARGS_H

#include "zrt/zrt.h"

#include <climits>
#include <cstdint>

namespace zrt {

/// zrt_attention_workspace: 2 T^2 + T floats (zrt/abi.h); -1 for T < 0 or
/// on overflow.
inline int64_t attentionWorkspace(int64_t T) {
  return zrt_abi_attention_workspace(T);
}

/// zrt_attention_workspace_bf16: attentionWorkspace(T) + 8 T D floats
/// (zrt/abi.h); -1 for T < 0, D < 0 or on overflow. The CUDA backend
/// returns the same number.
inline int64_t attentionWorkspaceBf16(int64_t T, int64_t D) {
  return zrt_abi_attention_workspace_bf16(T, D);
}

/// Where the (batch, head) slices of one attention operand live: element
/// (b, h, t, d) of the [B, H, T, D] view is at
/// `b * batch + h * head + t * row + d` elements from the tensor's start.
struct AttentionLayout {
  int64_t batch, head, row;
  /// The offset (elements) of slice (b, h).
  int64_t slice(int64_t b, int64_t h) const { return b * batch + h * head; }
};

/// A contiguous [B, H, T, D] tensor (zrt_attention_forward's operands).
inline AttentionLayout headsLayout(int64_t H, int64_t T, int64_t D) {
  return {H * T * D, T * D, D};
}

/// Heads side by side in [B, T, W] rows (W elements per token): head h of
/// token t at column h D. W = 3 H D for the packed qkv (k and v start C and
/// 2 C further), W = H D for out and dout (zrt_attention_forward_packed).
inline AttentionLayout rowsLayout(int64_t T, int64_t W, int64_t D) {
  return {T * W, D, W};
}

/// The checks of zrt_attention_forward (`backward` false) and
/// zrt_attention_backward (true), in this order: sizes (T and D positive, B
/// and H not negative, all of B*H*T*D, T*T and D within INT32_MAX per
/// GEMM dimension), then every required pointer when there is something to
/// compute. `ptrs` are the tensors in the signature's order (NULL-checked
/// with `names`). Returns ZRT_OK, or fail(ZRT_ERR_INVALID_ARGUMENT, ...).
template <typename Fail>
int checkAttentionArgs(const char *fn, int64_t B, int64_t H, int64_t T,
                       int64_t D, const void *const *ptrs,
                       const char *const *names, int count, Fail fail) {
  if (!(T > 0 && D > 0 && B >= 0 && H >= 0))
    return fail(ZRT_ERR_INVALID_ARGUMENT,
                "%s: need T > 0, D > 0, B >= 0, H >= 0 (B=%lld H=%lld T=%lld "
                "D=%lld)",
                fn, (long long)B, (long long)H, (long long)T, (long long)D);
  if (!(T <= INT_MAX && D <= INT_MAX && B <= INT_MAX && H <= INT_MAX &&
        B * H <= INT_MAX))
    return fail(ZRT_ERR_INVALID_ARGUMENT, "%s: sizes above INT32_MAX", fn);
  if (B * H == 0)
    return ZRT_OK;
  for (int i = 0; i < count; ++i)
    if (!ptrs[i])
      return fail(ZRT_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, names[i]);
  return ZRT_OK;
}

/// checkAttentionArgs for zrt_attention_forward[_bf16]: q, k, v, out, lse.
template <typename Fail>
int checkAttentionForwardArgs(const char *fn, const void *q, const void *k,
                              const void *v, const void *out, const void *lse,
                              int64_t B, int64_t H, int64_t T, int64_t D,
                              Fail fail) {
  const void *ptrs[] = {q, k, v, out, lse};
  const char *names[] = {"q", "k", "v", "out", "lse"};
  return checkAttentionArgs(fn, B, H, T, D, ptrs, names, 5, fail);
}

/// checkAttentionArgs for zrt_attention_backward[_bf16]: dout, q, k, v,
/// out, lse, dq, dk, dv.
template <typename Fail>
int checkAttentionBackwardArgs(const char *fn, const void *dout,
                               const void *q, const void *k, const void *v,
                               const void *out, const void *lse,
                               const void *dq, const void *dk, const void *dv,
                               int64_t B, int64_t H, int64_t T, int64_t D,
                               Fail fail) {
  const void *ptrs[] = {dout, q, k, v, out, lse, dq, dk, dv};
  const char *names[] = {"dout", "q", "k", "v", "out", "lse", "dq", "dk", "dv"};
  return checkAttentionArgs(fn, B, H, T, D, ptrs, names, 9, fail);
}

/// checkAttentionArgs for zrt_attention_forward_packed[_bf16]: qkv, out,
/// lse; also 3 H D within INT32_MAX (the packed row).
template <typename Fail>
int checkAttentionPackedForwardArgs(const char *fn, const void *qkv,
                                    const void *out, const void *lse,
                                    int64_t B, int64_t T, int64_t H, int64_t D,
                                    Fail fail) {
  const void *ptrs[] = {qkv, out, lse};
  const char *names[] = {"qkv", "out", "lse"};
  if (int st = checkAttentionArgs(fn, B, H, T, D, ptrs, names, 3, fail))
    return st;
  if (H > INT_MAX / 3 / D)
    return fail(ZRT_ERR_INVALID_ARGUMENT, "%s: sizes above INT32_MAX", fn);
  return ZRT_OK;
}

/// checkAttentionArgs for zrt_attention_backward_packed[_bf16]: dout, qkv,
/// out, lse, dqkv; also 3 H D within INT32_MAX.
template <typename Fail>
int checkAttentionPackedBackwardArgs(const char *fn, const void *dout,
                                     const void *qkv, const void *out,
                                     const void *lse, const void *dqkv,
                                     int64_t B, int64_t T, int64_t H,
                                     int64_t D, Fail fail) {
  const void *ptrs[] = {dout, qkv, out, lse, dqkv};
  const char *names[] = {"dout", "qkv", "out", "lse", "dqkv"};
  if (int st = checkAttentionArgs(fn, B, H, T, D, ptrs, names, 5, fail))
    return st;
  if (H > INT_MAX / 3 / D)
    return fail(ZRT_ERR_INVALID_ARGUMENT, "%s: sizes above INT32_MAX", fn);
  return ZRT_OK;
}

} // namespace zrt

#endif // ZRT_SRC_ATTENTION_ARGS_H
