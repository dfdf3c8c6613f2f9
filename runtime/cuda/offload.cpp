//===- offload.cpp - CUDA backend: P_a+cpu's pinned host block ------------===//
//
// ZeRO-R's P_a+cpu (zrt.h "Checkpoint offload to host memory"): one pinned
// host block (cudaMallocHost) holds the checkpoint slices between the
// forward and the backward, and a copy stream of its own moves them. A
// start records an event on the compute stream and makes the copy stream
// wait for it (the copy reads, or overwrites, device memory only after the
// compute work queued before it), queues the cudaMemcpyAsync and records
// the copy's `done` event; the wait makes the compute stream wait for
// `done`. The host never blocks. Handles come from a free list (one copy
// in flight per slice at most: a few).
//
//===----------------------------------------------------------------------===//

#include "zrt_cuda.h"

#include "../src/common/offload_args.h"

#include <cstring>
#include <vector>

struct zrt_offload_s {
  cudaEvent_t ready = nullptr; ///< Compute stream, at the start.
  cudaEvent_t done = nullptr;  ///< Copy stream, after the copy.
};

namespace zrt_cuda {
namespace {

struct OffloadState {
  void *base = nullptr;
  int64_t bytes = 0;
  cudaStream_t copy = nullptr;
  std::vector<zrt_offload_s *> free;
};

OffloadState &state() {
  static OffloadState s;
  return s;
}


/// Queues one copy on the copy stream after the compute stream's work.
int startCopy(const char *fn, void *dst, const void *src, int64_t bytes,
              cudaMemcpyKind kind, zrt_offload *out) {
  OffloadState &s = state();
  if (!s.copy) {
    if (int st = check(cudaStreamCreateWithFlags(&s.copy, cudaStreamNonBlocking),
                       ZRT_ERR_INVALID_ARGUMENT, fn, "cudaStreamCreate"))
      return st;
  }
  zrt_offload_s *op = nullptr;
  if (!s.free.empty()) {
    op = s.free.back();
    s.free.pop_back();
  } else {
    op = new zrt_offload_s;
    if (int st = check(cudaEventCreateWithFlags(&op->ready,
                                                cudaEventDisableTiming),
                       ZRT_ERR_INVALID_ARGUMENT, fn, "cudaEventCreate")) {
      delete op;
      return st;
    }
    if (int st = check(cudaEventCreateWithFlags(&op->done,
                                                cudaEventDisableTiming),
                       ZRT_ERR_INVALID_ARGUMENT, fn, "cudaEventCreate")) {
      cudaEventDestroy(op->ready);
      delete op;
      return st;
    }
  }
  int st = check(cudaEventRecord(op->ready, stream()), ZRT_ERR_INVALID_ARGUMENT,
                 fn, "cudaEventRecord");
  if (!st)
    st = check(cudaStreamWaitEvent(s.copy, op->ready, 0),
               ZRT_ERR_INVALID_ARGUMENT, fn, "cudaStreamWaitEvent");
  if (!st)
    st = check(cudaMemcpyAsync(dst, src, static_cast<size_t>(bytes), kind,
                               s.copy),
               ZRT_ERR_INVALID_ARGUMENT, fn, "cudaMemcpyAsync");
  if (!st)
    st = check(cudaEventRecord(op->done, s.copy), ZRT_ERR_INVALID_ARGUMENT, fn,
               "cudaEventRecord");
  if (st) {
    s.free.push_back(op);
    return st;
  }
  *out = op;
  return ZRT_OK;
}

} // namespace

int offload_host_create(int64_t bytes) {
  OffloadState &s = state();
  if (bytes < 0 || s.base)
    return fail(ZRT_ERR_INVALID_ARGUMENT,
                "zrt_offload_host_create: bytes %lld (must be >= 0, once)",
                static_cast<long long>(bytes));
  void *p = nullptr;
  if (int st = check(cudaMallocHost(&p, bytes ? static_cast<size_t>(bytes) : 64),
                     ZRT_ERR_OUT_OF_MEMORY, "zrt_offload_host_create",
                     "cudaMallocHost"))
    return st;
  memset(p, 0, bytes ? static_cast<size_t>(bytes) : 64);
  s.base = p;
  s.bytes = bytes;
  return ZRT_OK;
}

void offload_host_destroy() {
  OffloadState &s = state();
  if (s.copy)
    cudaStreamSynchronize(s.copy);
  if (s.base)
    cudaFreeHost(s.base);
  s.base = nullptr;
  s.bytes = 0;
}

void *offload_host_base() { return state().base; }

int64_t offload_host_bytes() { return state().bytes; }

int offload_start(const void *device, void *host, int64_t bytes,
                  zrt_offload *out) {
  if (int st = zrt::checkHostCopyArgs("zrt_offload_start", device, host, bytes,
                                      out, state().base, state().bytes, fail))
    return st;
  return startCopy("zrt_offload_start", host, device, bytes,
                   cudaMemcpyDeviceToHost, out);
}

int fetch_start(const void *host, void *device, int64_t bytes,
                zrt_offload *out) {
  if (int st = zrt::checkHostCopyArgs("zrt_fetch_start", device, host, bytes,
                                      out, state().base, state().bytes, fail))
    return st;
  return startCopy("zrt_fetch_start", device, host, bytes,
                   cudaMemcpyHostToDevice, out);
}

int copy_wait(const char *fn, zrt_offload op) {
  if (!op)
    return fail(ZRT_ERR_INVALID_ARGUMENT, "%s: NULL copy", fn);
  int st = check(cudaStreamWaitEvent(stream(), op->done, 0),
                 ZRT_ERR_INVALID_ARGUMENT, fn, "cudaStreamWaitEvent");
  state().free.push_back(op);
  return st;
}

} // namespace zrt_cuda
