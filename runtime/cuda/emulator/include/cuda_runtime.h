// Emulator stand-in for the CUDA runtime header (README.md): the execution
// model of ../shim.h plus the host API of the CUDA runtime on host memory
// (a "device pointer" is a host pointer).
//
// Streams and events. Work queued on a stream (kernel launches, async
// copies and fills, and the emulated cuBLAS and NCCL calls, through
// emu::enqueue) runs in one of three modes, chosen by ZRT_EMU_STREAMS when
// the first work is queued:
//   eager (default, and what the kernel unit tests rely on): every
//         operation runs when it is queued, so results can be read at once;
//   late: nothing runs until the host must see it (cudaStreamSynchronize,
//         cudaEventSynchronize, cudaDeviceSynchronize, cudaFree, a
//         synchronous copy) or another stream's cudaStreamWaitEvent needs
//         it; a stream then runs in its own order, and a wait runs the
//         awaited stream only up to the awaited record. Collectives on a
//         communication stream thus run as late as the program allows;
//   early: as late, except that operations queued with `early = true` (the
//         emulated NCCL collectives) run at once, after what they wait for:
//         collectives run as early as the program allows.
// Both lazy modes are legal schedules of a real GPU; a program that reads a
// collective's output before waiting for it, or overwrites its input before
// it completed, computes different numbers under them than under eager.
// Copies from host memory take their source when queued (as CUDA stages
// pageable memory), except from pinned memory (cudaMallocHost), read when
// the stream runs the copy; copies to host memory land when the stream
// runs them.
#pragma once
#include "../shim.h"

#include <deque>
#include <iterator>
#include <map>
#include <memory>
#include <string>

typedef int cudaError_t;
typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;
enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4
};
// The values of the real driver_types.h.
enum {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInsufficientDriver = 35,
  cudaErrorNoDevice = 100,
  cudaErrorInvalidDevice = 101,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorNotReady = 600
};
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
enum cudaDeviceAttr {
  cudaDevAttrMultiProcessorCount = 16,
  cudaDevAttrComputeCapabilityMajor = 75,
  cudaDevAttrComputeCapabilityMinor = 76,
  cudaDevAttrMaxSharedMemoryPerBlockOptin = 97
};
enum {
  cudaStreamDefault = 0,
  cudaStreamNonBlocking = 1,
  cudaEventDefault = 0,
  cudaEventBlockingSync = 1,
  cudaEventDisableTiming = 2
};

namespace emu {
/// cudaDevAttrMaxSharedMemoryPerBlockOptin of the emulated device (H100/H200:
/// 227 KiB); tests lower it to reach the kernels' fallbacks.
inline int optin = 232448;
/// Largest dynamic shared memory size a kernel was opted in to (0: none).
inline int maxDynSmem = 0;

/// Device memory checks (checkDevice, copies): on in the emulated backend
/// library (device.cpp), off in the kernel tests, which pass host arrays.
inline bool strictDevice = false;
/// Live cudaMalloc blocks: base address -> bytes.
inline std::map<uintptr_t, size_t> allocations;
inline size_t allocatedBytes = 0;

/// Dies unless [p, p + bytes) lies inside one cudaMalloc block (when
/// strictDevice); `what` names the operand in the message.
inline void checkDevice(const void *p, size_t bytes, const char *what) {
  if (!strictDevice)
    return;
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  auto it = allocations.upper_bound(a);
  if (it != allocations.begin()) {
    --it;
    if (a >= it->first && a + bytes <= it->first + it->second)
      return;
  }
  die("%s: [%p, +%zu bytes) is not inside device memory", what, p, bytes);
}
inline bool isDevice(const void *p) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  auto it = allocations.upper_bound(a);
  return it != allocations.begin() && a < std::prev(it)->first +
                                              std::prev(it)->second;
}

enum class Mode { Eager, Late, Early };
inline Mode streamMode() {
  static const Mode m = [] {
    const char *v = std::getenv("ZRT_EMU_STREAMS");
    if (!v || !*v || !strcmp(v, "eager"))
      return Mode::Eager;
    if (!strcmp(v, "late"))
      return Mode::Late;
    if (!strcmp(v, "early"))
      return Mode::Early;
    die("ZRT_EMU_STREAMS='%s': expected eager, late or early", v);
  }();
  return m;
}

/// One queued operation: run `fn`, or (waitStream set) first run
/// waitStream up to its operation number waitSeq.
struct StreamOp {
  std::function<void()> fn;
  CUstream_st *waitStream = nullptr;
  uint64_t waitSeq = 0;
};
} // namespace emu

/// An emulated stream: operations are numbered from 1 in queue order; the
/// first `done` of them have run.
struct CUstream_st {
  std::deque<emu::StreamOp> queue;
  uint64_t issued = 0, done = 0;
  bool running = false;
  int id = 0;
};
/// An event: complete once `stream` has run operation `seq` (its last
/// record); never recorded: complete.
struct CUevent_st {
  CUstream_st *stream = nullptr;
  uint64_t seq = 0;
};

namespace emu {
inline std::vector<CUstream_st *> &liveStreams() {
  static std::vector<CUstream_st *> s;
  return s;
}
inline CUstream_st *defaultStream() {
  static CUstream_st *s = [] {
    auto *d = new CUstream_st;
    liveStreams().push_back(d);
    return d;
  }();
  return s;
}
inline CUstream_st *resolve(cudaStream_t s) { return s ? s : defaultStream(); }

/// Runs stream s until it has run operation `upto`.
inline void drain(CUstream_st *s, uint64_t upto) {
  while (s->done < upto) {
    if (s->running)
      die("stream %d must run ahead of an operation it is running (a "
          "cycle of cudaStreamWaitEvent)",
          s->id);
    StreamOp op = std::move(s->queue.front());
    s->queue.pop_front();
    s->running = true;
    if (op.waitStream)
      drain(op.waitStream, op.waitSeq);
    if (op.fn)
      op.fn();
    s->running = false;
    ++s->done;
  }
}
inline void drainAll() {
  for (CUstream_st *s : liveStreams())
    drain(s, s->issued);
}

/// Queues op on stream s (nullptr: the default stream); it runs at once in
/// eager mode (and, with `early`, in early mode), else when needed.
inline void enqueue(cudaStream_t s, std::function<void()> op,
                    bool early = false) {
  CUstream_st *st = resolve(s);
  st->queue.push_back({std::move(op), nullptr, 0});
  ++st->issued;
  const Mode m = streamMode();
  if (m == Mode::Eager || (early && m == Mode::Early))
    drain(st, st->issued);
}

/// A kernel launch on a stream: f (which captured the kernel's arguments by
/// value) runs on every thread of the grid when the stream gets there.
inline void launchOn(cudaStream_t s, dim3 grid, dim3 block, size_t smemBytes,
                     std::function<void()> f) {
  enqueue(s, [=] { launch(grid, block, smemBytes, f); });
}

/// Total bytes of the emulated device (ZRT_EMU_DEVICE_BYTES, default 140
/// GiB, about an H200's).
inline size_t deviceBytes() {
  static const size_t n = [] {
    const char *v = std::getenv("ZRT_EMU_DEVICE_BYTES");
    return v && *v ? size_t(std::strtoull(v, nullptr, 10))
                   : size_t(140) << 30;
  }();
  return n;
}
} // namespace emu

template <class K>
cudaError_t cudaFuncSetAttribute(K, cudaFuncAttribute attr, int bytes) {
  if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize || bytes < 0 ||
      bytes > emu::optin)
    return cudaErrorInvalidValue;
  emu::maxDynSmem = std::max(emu::maxDynSmem, bytes);
  return cudaSuccess;
}
inline cudaError_t cudaGetDeviceCount(int *c) {
  *c = 1;
  return cudaSuccess;
}
inline cudaError_t cudaGetDevice(int *d) {
  *d = 0;
  return cudaSuccess;
}
inline cudaError_t cudaSetDevice(int d) {
  return d == 0 ? cudaSuccess : cudaErrorInvalidDevice;
}
/// An emulated H200: compute capability 9.0, 132 SMs, 227 KiB opt-in.
inline cudaError_t cudaDeviceGetAttribute(int *v, cudaDeviceAttr attr, int) {
  switch (attr) {
  case cudaDevAttrMaxSharedMemoryPerBlockOptin:
    *v = emu::optin;
    return cudaSuccess;
  case cudaDevAttrComputeCapabilityMajor:
    *v = 9;
    return cudaSuccess;
  case cudaDevAttrComputeCapabilityMinor:
    *v = 0;
    return cudaSuccess;
  case cudaDevAttrMultiProcessorCount:
    *v = 132;
    return cudaSuccess;
  }
  return cudaErrorInvalidValue;
}
inline cudaError_t cudaGetLastError() { return cudaSuccess; }
inline cudaError_t cudaPeekAtLastError() { return cudaSuccess; }
inline const char *cudaGetErrorString(cudaError_t e) {
  return e == cudaSuccess ? "no error" : "emulated CUDA error";
}
inline const char *cudaGetErrorName(cudaError_t e) {
  switch (e) {
  case cudaSuccess: return "cudaSuccess";
  case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
  case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
  case cudaErrorNoDevice: return "cudaErrorNoDevice";
  case cudaErrorNotReady: return "cudaErrorNotReady";
  }
  return "cudaErrorUnknown";
}

// Memory. cudaMalloc fills new blocks with 0xFF (NaN in f32 and bf16), so
// a read of memory nothing wrote shows up in the numbers.
inline cudaError_t cudaMalloc(void **p, size_t n) {
  const size_t rounded = (n + 255) / 256 * 256;
  if (emu::allocatedBytes + rounded > emu::deviceBytes()) {
    *p = nullptr;
    return cudaErrorMemoryAllocation;
  }
  *p = aligned_alloc(256, rounded ? rounded : 256);
  if (!*p)
    return cudaErrorMemoryAllocation;
  memset(*p, 0xff, rounded);
  emu::allocations[reinterpret_cast<uintptr_t>(*p)] = n;
  emu::allocatedBytes += rounded;
  return cudaSuccess;
}
/// Synchronizes the device first, as cudaFree does.
inline cudaError_t cudaFree(void *p) {
  if (!p)
    return cudaSuccess;
  emu::drainAll();
  auto it = emu::allocations.find(reinterpret_cast<uintptr_t>(p));
  if (it != emu::allocations.end()) {
    emu::allocatedBytes -= (it->second + 255) / 256 * 256;
    emu::allocations.erase(it);
  } else if (emu::strictDevice) {
    emu::die("cudaFree(%p): not a cudaMalloc block", p);
  }
  free(p);
  return cudaSuccess;
}
// Pinned host memory (cudaMallocHost): plain host memory, remembered so
// that an async copy from it reads its source when the stream runs the
// copy (as a GPU's DMA does), not when the copy is queued (pageable memory,
// staged). A pinned block is filled with 0xFF like a device block.
namespace emu {
inline std::map<uintptr_t, size_t> &pinnedBlocks() {
  static std::map<uintptr_t, size_t> blocks;
  return blocks;
}
/// Whether [p, p + n) lies inside one cudaMallocHost block.
inline bool isPinned(const void *p, size_t n) {
  auto &blocks = pinnedBlocks();
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  auto it = blocks.upper_bound(a);
  if (it == blocks.begin())
    return false;
  --it;
  return a + n <= it->first + it->second;
}
} // namespace emu
inline cudaError_t cudaMallocHost(void **p, size_t n) {
  const size_t rounded = (n + 255) / 256 * 256;
  *p = aligned_alloc(256, rounded ? rounded : 256);
  if (!*p)
    return cudaErrorMemoryAllocation;
  memset(*p, 0xff, rounded ? rounded : 256);
  emu::pinnedBlocks()[reinterpret_cast<uintptr_t>(*p)] = n;
  return cudaSuccess;
}
/// Synchronizes the device first, as cudaFreeHost does.
inline cudaError_t cudaFreeHost(void *p) {
  if (!p)
    return cudaSuccess;
  emu::drainAll();
  auto it = emu::pinnedBlocks().find(reinterpret_cast<uintptr_t>(p));
  if (it == emu::pinnedBlocks().end())
    emu::die("cudaFreeHost(%p): not a cudaMallocHost block", p);
  emu::pinnedBlocks().erase(it);
  free(p);
  return cudaSuccess;
}
inline cudaError_t cudaMemGetInfo(size_t *freeBytes, size_t *total) {
  *total = emu::deviceBytes();
  *freeBytes = *total - emu::allocatedBytes;
  return cudaSuccess;
}
inline cudaError_t cudaDeviceSynchronize() {
  emu::drainAll();
  return cudaSuccess;
}

enum cudaMemoryType {
  cudaMemoryTypeUnregistered = 0,
  cudaMemoryTypeHost = 1,
  cudaMemoryTypeDevice = 2,
  cudaMemoryTypeManaged = 3
};
struct cudaPointerAttributes {
  cudaMemoryType type;
  int device;
  void *devicePointer;
  void *hostPointer;
};
/// Device for pointers inside a cudaMalloc block, else unregistered host
/// memory (CUDA 11+ semantics: no error for host pointers).
inline cudaError_t cudaPointerGetAttributes(cudaPointerAttributes *a,
                                            const void *p) {
  const bool dev = emu::isDevice(p);
  a->type = dev ? cudaMemoryTypeDevice : cudaMemoryTypeUnregistered;
  a->device = dev ? 0 : -2;
  a->devicePointer = dev ? const_cast<void *>(p) : nullptr;
  a->hostPointer = nullptr;
  return cudaSuccess;
}

// Streams and events (modes: see the top of this file).
inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned) {
  auto *st = new CUstream_st;
  st->id = static_cast<int>(emu::liveStreams().size());
  emu::liveStreams().push_back(st);
  *s = st;
  return cudaSuccess;
}
inline cudaError_t cudaStreamCreate(cudaStream_t *s) {
  return cudaStreamCreateWithFlags(s, cudaStreamDefault);
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t s) {
  CUstream_st *st = emu::resolve(s);
  emu::drain(st, st->issued);
  return cudaSuccess;
}
/// Completes the stream's work, then destroys it.
inline cudaError_t cudaStreamDestroy(cudaStream_t s) {
  if (!s)
    return cudaErrorInvalidResourceHandle;
  cudaStreamSynchronize(s);
  auto &live = emu::liveStreams();
  live.erase(std::remove(live.begin(), live.end(), s), live.end());
  delete s;
  return cudaSuccess;
}
inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned) {
  *e = new CUevent_st;
  return cudaSuccess;
}
inline cudaError_t cudaEventCreate(cudaEvent_t *e) {
  return cudaEventCreateWithFlags(e, cudaEventDefault);
}
inline cudaError_t cudaEventDestroy(cudaEvent_t e) {
  delete e;
  return cudaSuccess;
}
/// The event completes when the stream has run everything queued so far.
inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s = nullptr) {
  if (!e)
    return cudaErrorInvalidResourceHandle;
  emu::enqueue(s, nullptr);
  CUstream_st *st = emu::resolve(s);
  e->stream = st;
  e->seq = st->issued;
  return cudaSuccess;
}
/// Work queued on s from now on waits for e's most recent record (taken
/// now: recording e again later does not change this wait).
inline cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e,
                                       unsigned = 0) {
  if (!e)
    return cudaErrorInvalidResourceHandle;
  CUstream_st *st = emu::resolve(s);
  if (!e->stream || e->stream == st)
    return cudaSuccess;
  st->queue.push_back({nullptr, e->stream, e->seq});
  ++st->issued;
  if (emu::streamMode() == emu::Mode::Eager)
    emu::drain(st, st->issued);
  return cudaSuccess;
}
inline cudaError_t cudaEventSynchronize(cudaEvent_t e) {
  if (e && e->stream)
    emu::drain(e->stream, e->seq);
  return cudaSuccess;
}
inline cudaError_t cudaEventQuery(cudaEvent_t e) {
  return !e || !e->stream || e->stream->done >= e->seq ? cudaSuccess
                                                        : cudaErrorNotReady;
}
/// No timing on the emulator: 0 ms between two completed events.
inline cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a,
                                        cudaEvent_t b) {
  if (cudaEventQuery(a) != cudaSuccess || cudaEventQuery(b) != cudaSuccess)
    return cudaErrorNotReady;
  *ms = 0.0f;
  return cudaSuccess;
}

// Copies and fills.
inline cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n,
                                   cudaMemcpyKind kind, cudaStream_t st) {
  if (n == 0)
    return cudaSuccess;
  const bool fromHost = emu::strictDevice ? !emu::isDevice(s)
                                          : kind == cudaMemcpyHostToDevice;
  if (emu::strictDevice) {
    if (kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice)
      emu::checkDevice(d, n, "cudaMemcpyAsync destination");
    if (kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice)
      emu::checkDevice(s, n, "cudaMemcpyAsync source");
  }
  if (fromHost && !emu::isPinned(s, n)) {
    // Pageable host memory is staged when the call is made.
    auto staged = std::make_shared<std::vector<unsigned char>>(
        static_cast<const unsigned char *>(s),
        static_cast<const unsigned char *>(s) + n);
    emu::enqueue(st, [=] { memcpy(d, staged->data(), n); });
  } else {
    emu::enqueue(st, [=] { memmove(d, s, n); });
  }
  return cudaSuccess;
}
/// Synchronous: the device first finishes its work (legacy default stream).
inline cudaError_t cudaMemcpy(void *d, const void *s, size_t n,
                              cudaMemcpyKind kind) {
  emu::drainAll();
  cudaError_t e = cudaMemcpyAsync(d, s, n, kind, nullptr);
  emu::drainAll();
  return e;
}
inline cudaError_t cudaMemsetAsync(void *d, int v, size_t n, cudaStream_t st) {
  if (n == 0)
    return cudaSuccess;
  emu::checkDevice(d, n, "cudaMemsetAsync destination");
  emu::enqueue(st, [=] { memset(d, v, n); });
  return cudaSuccess;
}
inline cudaError_t cudaMemset(void *d, int v, size_t n) {
  cudaError_t e = cudaMemsetAsync(d, v, n, nullptr);
  emu::drainAll();
  return e;
}

/// The only atomic the emulated files use; fibers switch only at barriers,
/// so a plain read-modify-write is atomic.
inline int atomicCAS(int *w, int cmp, int val) {
  const int old = *w;
  if (old == cmp)
    *w = val;
  return old;
}
