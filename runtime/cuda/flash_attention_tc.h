//===- flash_attention_tc.h - CUDA backend: tensor-core attention --------===//
//
// Causal flash attention on bf16 tensors with the products on bf16 tensor
// cores (f32 accumulation): the fast path of zrt_attention_forward_bf16 /
// zrt_attention_backward_bf16 and of their packed forms
// zrt_attention_*_packed_bf16 (zrt.h). abi.cpp dispatches here when
// attention_tc_forward_supported(D) (resp.
// attention_tc_backward_supported(D)) and ZRT_CUDA_ATTENTION is not "simt";
// otherwise the f32 SIMT kernels of flash_attention.cu run on the widened
// values. Design, numerics, resources: flash_attention_tc.cu.
//
// Semantics: those of zrt_attention_forward / zrt_attention_backward on the
// widened bf16 values, except that P (and dS in the backward) are rounded
// to bf16 before their products (as FlashAttention-2), exp is 2^x of a
// log2 e-scaled argument (ex2.approx), and each bf16 output is rounded
// once (nearest even): results agree with the CPU's to bf16 rounding
// (about 5e-3 of a row's magnitude), lse to about 1e-6 relative. Results
// are deterministic (no floating-point atomics): the same inputs give the
// same bits, whatever the alignment of the tensors.
//
// Requirements: device pointers; any T >= 1, B, H >= 0 with the sizes of
// zrt.h (checked by the caller); any alignment of the bf16 tensors (16-byte
// aligned ones take the cp.async path; others a slower plain-load path), lse
// 4-byte aligned. No workspace, no allocation; everything runs on
// zrt_cuda::stream(). Up to 105 KB of dynamic shared memory per block
// (opted in per call).
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CUDA_FLASH_ATTENTION_TC_H
#define ZRT_CUDA_FLASH_ATTENTION_TC_H

#include "zrt_cuda.h"

namespace zrt_cuda {

/// Whether the tensor-core forward / backward kernels handle head size D:
/// D = 32, 64 or 128. (The two are independent: the backward needs only
/// out and lse, which the SIMT forward produces as well.)
bool attention_tc_forward_supported(int64_t D);
bool attention_tc_backward_supported(int64_t D);

/// zrt_attention_forward_bf16 on tensor cores. q, k, v, out [B, H, T, D]
/// bf16, lse [B, H, T] f32 (device pointers). Arguments are checked by the
/// caller (abi.cpp); B * H == 0 returns ZRT_OK at once. Returns ZRT_OK, or
/// ZRT_ERR_INVALID_ARGUMENT (message set) for an unsupported D, a device
/// whose per-block shared memory is too small, or a launch error
/// (zrt_cuda::launched).
int attention_forward_bf16_tc(const zrt_bf16 *q, const zrt_bf16 *k,
                              const zrt_bf16 *v, zrt_bf16 *out, float *lse,
                              int64_t B, int64_t H, int64_t T, int64_t D);

/// zrt_attention_backward_bf16 on tensor cores: dout, q, k, v, out, dq, dk,
/// dv [B, H, T, D] bf16, lse [B, H, T] f32; dq, dk, dv OVERWRITTEN (two
/// kernels: dK/dV per key tile, then dQ per query tile). Errors as the
/// forward.
int attention_backward_bf16_tc(const zrt_bf16 *dout, const zrt_bf16 *q,
                               const zrt_bf16 *k, const zrt_bf16 *v,
                               const zrt_bf16 *out, const float *lse,
                               zrt_bf16 *dq, zrt_bf16 *dk, zrt_bf16 *dv,
                               int64_t B, int64_t H, int64_t T, int64_t D);

/// zrt_attention_forward_gqa_bf16 / _backward_gqa_bf16 (zrt/decoder.h) on
/// tensor cores: q, out, dout, dq [B, H, T, D] bf16; k, v, dk, dv [B, Hkv,
/// T, D] bf16 with Hkv dividing H (query head h reads K/V head
/// h / (H / Hkv), no repeated copy); lse [B, H, T] f32; dk, dv OVERWRITTEN
/// with the group sums (f32 in the block that owns the K/V tile, in head
/// order, rounded once). Hkv == H: attention_*_bf16_tc bit for bit.
/// Arguments checked by the caller (abi.cpp: zrt::checkKvHeads, then the
/// multi-head checks); errors as attention_forward_bf16_tc, with the
/// zrt_attention_*_gqa_bf16 names.
int attention_forward_gqa_bf16_tc(const zrt_bf16 *q, const zrt_bf16 *k,
                                  const zrt_bf16 *v, zrt_bf16 *out, float *lse,
                                  int64_t B, int64_t H, int64_t Hkv, int64_t T,
                                  int64_t D);
int attention_backward_gqa_bf16_tc(const zrt_bf16 *dout, const zrt_bf16 *q,
                                   const zrt_bf16 *k, const zrt_bf16 *v,
                                   const zrt_bf16 *out, const float *lse,
                                   zrt_bf16 *dq, zrt_bf16 *dk, zrt_bf16 *dv,
                                   int64_t B, int64_t H, int64_t Hkv,
                                   int64_t T, int64_t D);

/// zrt_attention_forward_packed_bf16 on tensor cores: the kernels of
/// attention_forward_bf16_tc reading the heads in place, so out and lse are
/// attention_forward_bf16_tc's on the split heads, bit for bit. qkv
/// [B, T, 3 C] bf16 (C = H D; row (b, t) = the H q heads, the H k heads,
/// the H v heads, D elements each), out [B, T, C] bf16 (the heads side by
/// side), lse [B, H, T] f32 (note the argument order B, T, H, D of zrt.h).
/// cp.async loads when qkv and out are 16-byte aligned (the strides are,
/// for these D), else the plain-load path. Arguments checked by the caller
/// (abi.cpp, zrt::checkAttentionPackedForwardArgs); B * H == 0 returns
/// ZRT_OK at once. Errors as attention_forward_bf16_tc, with the
/// zrt_attention_forward_packed_bf16 name.
int attention_forward_packed_bf16_tc(const zrt_bf16 *qkv, zrt_bf16 *out,
                                     float *lse, int64_t B, int64_t T,
                                     int64_t H, int64_t D);

/// zrt_attention_backward_packed_bf16 on tensor cores: dout, out [B, T, C]
/// bf16, qkv [B, T, 3 C] bf16, lse [B, H, T] f32; dqkv [B, T, 3 C] bf16
/// OVERWRITTEN with dq, dk, dv in qkv's layout: attention_backward_bf16_tc's
/// numbers on the split heads, bit for bit. Checked arguments (abi.cpp,
/// zrt::checkAttentionPackedBackwardArgs); errors as the packed forward.
int attention_backward_packed_bf16_tc(const zrt_bf16 *dout,
                                      const zrt_bf16 *qkv, const zrt_bf16 *out,
                                      const float *lse, zrt_bf16 *dqkv,
                                      int64_t B, int64_t T, int64_t H,
                                      int64_t D);

} // namespace zrt_cuda

#endif // ZRT_CUDA_FLASH_ATTENTION_TC_H
