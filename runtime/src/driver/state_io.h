//===- state_io.h - moving model states across the host/device boundary -*- C++ -*-===//
///
/// \file
/// The driver and the checkpoint writer read and write the model's states
/// (zrt_state_desc::data, arena memory) only through these two, which go
/// through zrt_copy_to_host / zrt_copy_to_device: host memory on the CPU
/// backend, device memory on the CUDA backend. Plus the host-side dtype
/// conversions of the tensors they stage (never the zrt_cast_* kernels,
/// which work on arena memory).
///
//===----------------------------------------------------------------------===//
#ifndef ZRT_SRC_STATE_IO_H
#define ZRT_SRC_STATE_IO_H

#include "common/internal.h"
#include "driver/strformat.h"
#include "zrt/model.h"
#include "zrt/zrt.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace zrt {

/// "" or why state `i` of a model description cannot be staged: "state <i>
/// of the model description has no name", or "state '<name>' has unknown
/// dtype <d>" for a dtype other than ZRT_F32, ZRT_BF16 and ZRT_F16.
inline std::string checkStateDesc(const zrt_state_desc &s, int i) {
  if (!s.name)
    return format("state %d of the model description has no name", i);
  if (s.dtype != ZRT_F32 && s.dtype != ZRT_BF16 && s.dtype != ZRT_F16)
    return format("state '%s' has unknown dtype %d", s.name, s.dtype);
  return "";
}

/// Bytes of one element of `dtype` (ZRT_BF16, ZRT_F16: 2; ZRT_I64: 8;
/// else 4).
inline size_t elementBytes(int dtype) {
  if (dtype == ZRT_I64)
    return 8;
  return dtype == ZRT_BF16 || dtype == ZRT_F16 ? 2 : 4;
}

/// Copies `bytes` bytes at arena address `src` into host `dst`; "" or the
/// runtime's message.
inline std::string stageToHost(void *dst, const void *src, int64_t bytes) {
  if (zrt_copy_to_host(dst, src, bytes) != ZRT_OK)
    return std::string("copying a state to the host failed: ") +
           zrt_last_error();
  return "";
}

/// Copies `bytes` host bytes at `src` to arena address `dst`; "" or the
/// runtime's message.
inline std::string stageToDevice(void *dst, const void *src, int64_t bytes) {
  if (zrt_copy_to_device(dst, src, bytes) != ZRT_OK)
    return std::string("copying a state to the device failed: ") +
           zrt_last_error();
  return "";
}

/// dst[i] = f32 of src[i] (host memory; src in `dtype`): exact.
inline void hostToF32(const void *src, int dtype, float *dst, int64_t n) {
  if (dtype != ZRT_BF16 && dtype != ZRT_F16) {
    std::memcpy(dst, src, static_cast<size_t>(n) * 4);
    return;
  }
  const auto *h = static_cast<const uint16_t *>(src);
  for (int64_t i = 0; i < n; ++i)
    dst[i] = dtype == ZRT_F16 ? f16ToF32(h[i]) : bf16ToF32(h[i]);
}

/// dst (host memory, in `dtype`) = src: a copy, or bf16 / f16 round to
/// nearest even (zrt_f32_to_bf16 / zrt_f32_to_f16).
inline void hostFromF32(const float *src, void *dst, int dtype, int64_t n) {
  if (dtype != ZRT_BF16 && dtype != ZRT_F16) {
    std::memcpy(dst, src, static_cast<size_t>(n) * 4);
    return;
  }
  auto *h = static_cast<uint16_t *>(dst);
  for (int64_t i = 0; i < n; ++i)
    h[i] = dtype == ZRT_F16 ? f32ToF16(src[i]) : f32ToBf16(src[i]);
}

} // namespace zrt

#endif // ZRT_SRC_STATE_IO_H
