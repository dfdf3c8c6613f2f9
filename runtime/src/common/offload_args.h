//===- offload_args.h - argument rules of zrt_offload_* / zrt_fetch_* -*- C++ -*-===//
///
/// \file
/// The argument checks of zrt_offload_start and zrt_fetch_start (zrt.h),
/// written like arg_checks.h (`fn` begins every message, `fail(status, fmt,
/// ...)` is the backend's), so that the CPU backend
/// (runtime/src/cpu/offload.cpp) and the CUDA backend
/// (runtime/cuda/offload.cpp) reject the same calls with the same status
/// and message. Internal to the runtime.
///
//===----------------------------------------------------------------------===//

#ifndef ZRT_SRC_OFFLOAD_ARGS_H
#define ZRT_SRC_OFFLOAD_ARGS_H

#include "zrt/zrt.h"

#include <cstdint>

namespace zrt {

/// One copy between a device buffer and the host block [base, base +
/// blockBytes): no NULL pointer, bytes >= 0, and the host range
/// [host, host + bytes) inside the block (an empty block holds nothing).
/// ZRT_ERR_INVALID_ARGUMENT "<fn>: NULL pointer, bytes < 0, or a host range
/// outside the host block" otherwise.
template <typename Fail>
int checkHostCopyArgs(const char *fn, const void *device, const void *host,
                      int64_t bytes, const void *out, const void *base,
                      int64_t blockBytes, Fail fail) {
  const char *b = static_cast<const char *>(base);
  const char *h = static_cast<const char *>(host);
  const bool inside =
      b && h && bytes >= 0 && h >= b && bytes <= blockBytes - (h - b);
  if (!device || !out || !inside)
    return fail(ZRT_ERR_INVALID_ARGUMENT,
                "%s: NULL pointer, bytes < 0, or a host range outside the "
                "host block",
                fn);
  return ZRT_OK;
}

} // namespace zrt

#endif // ZRT_SRC_OFFLOAD_ARGS_H
