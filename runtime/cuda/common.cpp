//===- common.cpp - CUDA backend: context, errors, arenas, host/device copies ===//

#include "zrt_cuda.h"

#include "../src/common/arena_book.h"
#include "../src/common/internal.h"

#include <cuda_runtime.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <new>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace {

/// This backend's arena and allocation counters.
zrt::MemoryBook &book() {
  static zrt::MemoryBook b;
  return b;
}

/// The backend's device-side context: compute stream, workspace and the
/// device error word. Created lazily; never destroyed (destroying CUDA
/// objects at process exit can run after the CUDA context is gone).
struct Context {
  std::mutex mu;
  cudaStream_t stream = nullptr;
  bool streamMade = false;
  void *workspace = nullptr;
  int64_t workspaceBytes = 0;
  int *errorWord = nullptr; ///< Device int (its own allocation).
};

Context &ctx() {
  static Context c;
  return c;
}

/// (Re)allocates the workspace to hold `bytes` of scratch, and the device
/// error word (its own allocation, so that growing the workspace never loses
/// a raised error) the first time.
int growWorkspace(int64_t bytes, const char *fn, cudaStream_t s) {
  Context &c = ctx();
  if (!c.errorWord) {
    void *word = nullptr;
    book().countAllocation();
    cudaError_t err = cudaMalloc(&word, sizeof(int));
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      return zrt_cuda::fail(ZRT_ERR_OUT_OF_MEMORY,
                            "%s: cannot allocate the device error word: %s", fn,
                            cudaGetErrorString(err));
    }
    cudaMemsetAsync(word, 0, sizeof(int), s);
    c.errorWord = static_cast<int *>(word);
  }
  if (c.workspace && c.workspaceBytes >= bytes)
    return ZRT_OK;
  int64_t want = bytes > zrt_cuda::kWorkspaceBytes ? bytes
                                                   : zrt_cuda::kWorkspaceBytes;
  if (c.workspace) {
    // Work queued on the stream may still use the old block.
    cudaStreamSynchronize(s);
    cudaFree(c.workspace);
    c.workspace = nullptr;
    c.workspaceBytes = 0;
  }
  void *block = nullptr;
  book().countAllocation();
  cudaError_t err = cudaMalloc(&block, static_cast<size_t>(want));
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    return zrt_cuda::fail(ZRT_ERR_OUT_OF_MEMORY,
                          "%s: cannot allocate %lld bytes of device "
                          "workspace: %s",
                          fn, (long long)want, cudaGetErrorString(err));
  }
  c.workspace = block;
  c.workspaceBytes = want;
  return ZRT_OK;
}

const char *deviceErrorText(int code) {
  switch (code) {
  case zrt_cuda::kDeviceErrorEmbeddingId:
    return "zrt_embedding: a token id is outside [0, V)";
  case zrt_cuda::kDeviceErrorTarget:
    return "cross-entropy: a target is outside its range ([0, num_classes) "
           "of the padded loss; [0, V) and not ignore_index otherwise)";
  case zrt_cuda::kDeviceErrorVocabId:
    return "zrt_vocab_embedding(_backward): a token id is outside the "
           "vocabulary [0, Vl·parts)";
  case zrt_cuda::kDeviceErrorVocabTarget:
    return "zrt_vocab_loss: a counted target is outside [0, classes)";
  default:
    return "a kernel raised an unknown device error";
  }
}

} // namespace

namespace zrt_cuda {

const char *last_error() { return zrt_last_error(); }
void clear_error() { zrt_clear_error(); }
const char *status_name(int status) { return zrt_status_name(status); }

int fail(int status, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return zrt::fail(status, "%s", buf);
}

int check(int err, int status, const char *fn, const char *what) {
  if (err == cudaSuccess)
    return ZRT_OK;
  const auto e = static_cast<cudaError_t>(err);
  // Clear a non-sticky error so that the next launched() does not report it
  // again as its own (a sticky error stays and is reported by every call).
  (void)cudaGetLastError();
  return fail(status, "%s: %s: %s (%s)", fn, what, cudaGetErrorString(e),
              cudaGetErrorName(e));
}

int launched(const char *fn) {
  return check(cudaGetLastError(), ZRT_ERR_INVALID_ARGUMENT, fn,
               "kernel launch");
}

cudaStream_t stream() {
  Context &c = ctx();
  std::lock_guard<std::mutex> lock(c.mu);
  if (!c.streamMade) {
    c.streamMade = true;
    if (cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking) !=
        cudaSuccess) {
      (void)cudaGetLastError();
      c.stream = nullptr; // the legacy default stream still orders the work
    }
  }
  return c.stream;
}

int workspace(int64_t bytes, void **out, const char *fn) {
  ZRT_CUDA_REQUIRE(out != nullptr, "%s: workspace out is NULL", fn);
  ZRT_CUDA_REQUIRE(bytes >= 0, "%s: workspace of %lld bytes", fn,
                   (long long)bytes);
  Context &c = ctx();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    if (c.workspace && c.workspaceBytes >= bytes) {
      *out = c.workspace;
      return ZRT_OK;
    }
  }
  cudaStream_t s = stream();
  std::lock_guard<std::mutex> lock(c.mu);
  if (int st = growWorkspace(bytes, fn, s))
    return st;
  *out = c.workspace;
  return ZRT_OK;
}

int *device_error_word() {
  Context &c = ctx();
  std::lock_guard<std::mutex> lock(c.mu);
  return c.errorWord;
}

int take_device_error(const char *fn) {
  int *word = device_error_word();
  if (!word)
    return ZRT_OK;
  int code = 0;
  if (int st = check(cudaMemcpyAsync(&code, word, sizeof code,
                                     cudaMemcpyDeviceToHost, stream()),
                     ZRT_ERR_INVALID_ARGUMENT, fn, "reading the error word"))
    return st;
  if (int st = check(cudaStreamSynchronize(stream()), ZRT_ERR_INVALID_ARGUMENT,
                     fn, "cudaStreamSynchronize"))
    return st;
  if (code == 0)
    return ZRT_OK;
  cudaMemsetAsync(word, 0, sizeof(int), stream());
  return fail(ZRT_ERR_OUT_OF_RANGE, "%s (observed by %s)",
              deviceErrorText(code), fn);
}

int set_num_threads(int n) {
  ZRT_CUDA_REQUIRE(n >= 1, "zrt_set_num_threads: n = %d must be >= 1", n);
#ifdef _OPENMP
  omp_set_num_threads(n);
#endif
  return ZRT_OK;
}

int device_memory_info(int64_t *free_bytes, int64_t *total_bytes) {
  const char *fn = "zrt_device_memory_info";
  ZRT_CUDA_REQUIRE(free_bytes && total_bytes, "%s: NULL output", fn);
  size_t f = 0, t = 0;
  if (int st = check(cudaMemGetInfo(&f, &t), ZRT_ERR_INVALID_ARGUMENT, fn,
                     "cudaMemGetInfo"))
    return st;
  *free_bytes = static_cast<int64_t>(f);
  *total_bytes = static_cast<int64_t>(t);
  return ZRT_OK;
}

void count_allocation() { book().countAllocation(); }

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
  // The first arena also reserves the workspace and the device error word,
  // so that no step allocates.
  void *ws = nullptr;
  if (int st = workspace(kWorkspaceBytes, &ws, fn))
    return st;
  void *base = nullptr;
  book().countAllocation();
  cudaError_t err = cudaMalloc(&base, static_cast<size_t>(rounded));
  if (err != cudaSuccess) {
    (void)cudaGetLastError(); // clear the sticky-free error state
    return fail(ZRT_ERR_OUT_OF_MEMORY,
                "%s: cannot allocate %lld bytes of device memory: %s", fn,
                (long long)bytes, cudaGetErrorString(err));
  }
  // Zero-filled in stream order, before any kernel that uses the arena.
  err = cudaMemsetAsync(base, 0, static_cast<size_t>(rounded), stream());
  if (err != cudaSuccess) {
    cudaFree(base);
    return check(err, ZRT_ERR_OUT_OF_MEMORY, fn, "cudaMemsetAsync");
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

// Synchronous, as zrt.h requires: `dst` holds the bytes on return. The
// copy is queued on the compute stream behind the kernels that produce or
// consume the bytes, then the stream is synchronized and a device error
// raised by those kernels is reported.
static int copySync(void *dst, const void *src, int64_t bytes,
                    cudaMemcpyKind kind, const char *fn) {
  ZRT_CUDA_REQUIRE(bytes >= 0, "%s: bytes = %lld < 0", fn, (long long)bytes);
  ZRT_CUDA_REQUIRE_BUF(fn, bytes, dst);
  ZRT_CUDA_REQUIRE_BUF(fn, bytes, src);
  if (bytes == 0)
    return ZRT_OK;
  if (int st = check(cudaMemcpyAsync(dst, src, static_cast<size_t>(bytes),
                                     kind, stream()),
                     ZRT_ERR_INVALID_ARGUMENT, fn, "cudaMemcpyAsync"))
    return st;
  if (int st = check(cudaStreamSynchronize(stream()), ZRT_ERR_INVALID_ARGUMENT,
                     fn, "cudaStreamSynchronize"))
    return st;
  return take_device_error(fn);
}

int copy_to_device(void *dst, const void *src, int64_t bytes) {
  return copySync(dst, src, bytes, cudaMemcpyHostToDevice,
                  "zrt_copy_to_device");
}

int copy_to_host(void *dst, const void *src, int64_t bytes) {
  return copySync(dst, src, bytes, cudaMemcpyDeviceToHost, "zrt_copy_to_host");
}

} // namespace zrt_cuda

namespace zrt {
// The CUDA backend has nothing to do before the runtime starts: zrt_init
// picks the device.
void backendStartup(int, char **) {}
} // namespace zrt
