//===- common.cpp - CUDA backend: errors, arenas, host/device copies -------===//

#include "zrt_cuda.h"

#include "../src/arena_book.h"

#include <cuda_runtime.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <new>

namespace {

thread_local char lastError[512] = "";

/// This backend's arena and allocation counters.
zrt::MemoryBook &book() {
  static zrt::MemoryBook b;
  return b;
}

} // namespace

namespace zrt_cuda {

const char *last_error() { return lastError; }
void clear_error() { lastError[0] = '\0'; }

const char *status_name(int status) {
  switch (status) {
  case ZRT_OK: return "ZRT_OK";
  case ZRT_ERR_INVALID_ARGUMENT: return "ZRT_ERR_INVALID_ARGUMENT";
  case ZRT_ERR_OUT_OF_RANGE: return "ZRT_ERR_OUT_OF_RANGE";
  case ZRT_ERR_IO: return "ZRT_ERR_IO";
  case ZRT_ERR_FORMAT: return "ZRT_ERR_FORMAT";
  case ZRT_ERR_OUT_OF_MEMORY: return "ZRT_ERR_OUT_OF_MEMORY";
  case ZRT_ERR_MPI: return "ZRT_ERR_MPI";
  case ZRT_ERR_NOT_INITIALIZED: return "ZRT_ERR_NOT_INITIALIZED";
  default: return "ZRT_UNKNOWN";
  }
}

int fail(int status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(lastError, sizeof lastError, fmt, ap);
  va_end(ap);
  return status;
}

int check(int err, int status, const char *fn, const char *what) {
  if (err == cudaSuccess)
    return ZRT_OK;
  const auto e = static_cast<cudaError_t>(err);
  return fail(status, "%s: %s: %s (%s)", fn, what, cudaGetErrorString(e),
              cudaGetErrorName(e));
}

int arena_create(int64_t bytes, int kind, zrt_arena *out) {
  const char *fn = "zrt_arena_create";
  ZRT_CUDA_REQUIRE(out != nullptr, "%s: out is NULL", fn);
  *out = nullptr;
  ZRT_CUDA_REQUIRE(bytes >= 0, "%s: bytes = %lld < 0", fn, (long long)bytes);
  ZRT_CUDA_REQUIRE(kind >= 0 && kind < ZRT_MEM_NUM_KINDS,
                   "%s: unknown kind %d", fn, kind);
  // Never 0 bytes, so the base is always a valid device address;
  // cudaMalloc aligns to at least 256 bytes.
  const int64_t rounded = zrt::arenaAllocationBytes(bytes);
  ZRT_CUDA_REQUIRE(rounded >= 0, "%s: size overflow", fn);
  void *base = nullptr;
  book().countAllocation();
  cudaError_t err = cudaMalloc(&base, static_cast<size_t>(rounded));
  if (err != cudaSuccess) {
    (void)cudaGetLastError(); // clear the sticky-free error state
    return fail(ZRT_ERR_OUT_OF_MEMORY,
                "%s: cannot allocate %lld bytes of device memory: %s", fn,
                (long long)bytes, cudaGetErrorString(err));
  }
  err = cudaMemset(base, 0, static_cast<size_t>(rounded));
  if (err != cudaSuccess) {
    cudaFree(base);
    return check(err, ZRT_ERR_OUT_OF_MEMORY, fn, "cudaMemset");
  }
  book().countAllocation();
  auto *a = new (std::nothrow) zrt_arena_s;
  if (!a) {
    cudaFree(base);
    return fail(ZRT_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  }
  a->base = base;
  a->bytes = bytes;
  a->kind = kind;
  book().account(kind, bytes);
  *out = a;
  return ZRT_OK;
}

void arena_destroy(zrt_arena arena) {
  if (!arena)
    return;
  book().account(arena->kind, -arena->bytes);
  cudaFree(arena->base);
  delete arena;
}

void *arena_base(zrt_arena arena) { return arena ? arena->base : nullptr; }

int64_t arena_size(zrt_arena arena) { return arena ? arena->bytes : -1; }

int arena_alloc(zrt_arena arena, int64_t bytes, int64_t align,
                int64_t *offset) {
  return zrt::bumpAllocate(arena, bytes, align, offset, fail);
}

int64_t arena_used(zrt_arena arena) { return arena ? arena->bump : -1; }

void arena_reset(zrt_arena arena) {
  if (arena)
    arena->bump = 0;
}

int64_t memory_bytes(int kind) { return book().live(kind); }

int64_t memory_peak_bytes(int kind) { return book().peak(kind); }

int64_t memory_total_bytes() { return book().liveTotal(); }

int64_t memory_peak_total_bytes() { return book().peakTotal(); }

void memory_reset_peak() { book().resetPeak(); }

int64_t heap_allocations() { return book().heapAllocations(); }

// Synchronous, as zrt.h requires: `dst` holds the bytes on return. A
// pageable host->device cudaMemcpy may return before the DMA has finished,
// hence the stream synchronization.
int copy_to_device(void *dst, const void *src, int64_t bytes) {
  const char *fn = "zrt_copy_to_device";
  ZRT_CUDA_REQUIRE(bytes >= 0, "%s: bytes = %lld < 0", fn, (long long)bytes);
  ZRT_CUDA_REQUIRE_BUF(fn, bytes, dst);
  ZRT_CUDA_REQUIRE_BUF(fn, bytes, src);
  if (bytes == 0)
    return ZRT_OK;
  if (int st = check(cudaMemcpy(dst, src, static_cast<size_t>(bytes),
                                cudaMemcpyHostToDevice),
                     ZRT_ERR_INVALID_ARGUMENT, fn, "cudaMemcpy"))
    return st;
  return check(cudaStreamSynchronize(0), ZRT_ERR_INVALID_ARGUMENT, fn,
               "cudaStreamSynchronize");
}

int copy_to_host(void *dst, const void *src, int64_t bytes) {
  const char *fn = "zrt_copy_to_host";
  ZRT_CUDA_REQUIRE(bytes >= 0, "%s: bytes = %lld < 0", fn, (long long)bytes);
  ZRT_CUDA_REQUIRE_BUF(fn, bytes, dst);
  ZRT_CUDA_REQUIRE_BUF(fn, bytes, src);
  if (bytes == 0)
    return ZRT_OK;
  return check(cudaMemcpy(dst, src, static_cast<size_t>(bytes),
                          cudaMemcpyDeviceToHost),
               ZRT_ERR_INVALID_ARGUMENT, fn, "cudaMemcpy");
}

} // namespace zrt_cuda
