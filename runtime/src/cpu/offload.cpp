//===- offload.cpp - CPU backend: P_a+cpu's host block --------------------===//
//
// zrt.h "Checkpoint offload to host memory" on the CPU backend, whose
// arenas are host memory already: zero-offload-checkpoints leaves a CPU
// step unchanged, so nothing here runs in a CPU program; the functions
// exist so that the one C ABI links on both backends. The block is
// ordinary memory, a copy is a memcpy done when it starts, a wait does
// nothing.
//
//===----------------------------------------------------------------------===//

#include "common/internal.h"
#include "common/offload_args.h"

#include <cstdlib>
#include <cstring>

namespace {

struct HostBlock {
  void *base = nullptr;
  int64_t bytes = 0;
};

HostBlock &block() {
  static HostBlock b;
  return b;
}

/// The handle of a finished copy (never dereferenced).
zrt_offload done() {
  static char token;
  return reinterpret_cast<zrt_offload>(&token);
}

} // namespace

int zrt_offload_host_create(int64_t bytes) {
  HostBlock &b = block();
  if (bytes < 0 || b.base)
    return zrt::fail(ZRT_ERR_INVALID_ARGUMENT,
                     "zrt_offload_host_create: bytes %lld (must be >= 0, once)",
                     static_cast<long long>(bytes));
  size_t rounded = (static_cast<size_t>(bytes) + 63) / 64 * 64;
  b.base = std::aligned_alloc(64, rounded ? rounded : 64);
  if (!b.base)
    return zrt::fail(ZRT_ERR_OUT_OF_MEMORY,
                     "zrt_offload_host_create: %lld bytes",
                     static_cast<long long>(bytes));
  std::memset(b.base, 0, rounded ? rounded : 64);
  b.bytes = bytes;
  return ZRT_OK;
}

void zrt_offload_host_destroy(void) {
  std::free(block().base);
  block() = HostBlock();
}

void *zrt_offload_host_base(void) { return block().base; }

int64_t zrt_offload_host_bytes(void) { return block().bytes; }

int zrt_offload_start(const void *device, void *host, int64_t bytes,
                      zrt_offload *out) {
  if (int st = zrt::checkHostCopyArgs("zrt_offload_start", device, host, bytes, out,
                                      block().base, block().bytes, zrt::fail))
    return st;
  std::memcpy(host, device, static_cast<size_t>(bytes));
  *out = done();
  return ZRT_OK;
}

int zrt_fetch_start(const void *host, void *device, int64_t bytes,
                    zrt_offload *out) {
  if (int st = zrt::checkHostCopyArgs("zrt_fetch_start", device, host, bytes, out,
                                      block().base, block().bytes, zrt::fail))
    return st;
  std::memcpy(device, host, static_cast<size_t>(bytes));
  *out = done();
  return ZRT_OK;
}

int zrt_offload_wait(zrt_offload op) {
  return op ? ZRT_OK
            : zrt::fail(ZRT_ERR_INVALID_ARGUMENT, "zrt_offload_wait: NULL copy");
}

int zrt_fetch_wait(zrt_offload op) {
  return op ? ZRT_OK
            : zrt::fail(ZRT_ERR_INVALID_ARGUMENT, "zrt_fetch_wait: NULL copy");
}
