//===- arena_book.h - backend-neutral arena bookkeeping ----------*- C++ -*-===//
///
/// \file
/// What every backend's arenas share: the arena record, the per-kind live
/// and peak byte counters behind zrt_memory_*_bytes, the heap-allocation
/// counter behind zrt_heap_allocations, and bump allocation inside an arena
/// (zrt_arena_alloc). A backend only supplies where the bytes come from
/// (aligned_alloc on the CPU, cudaMalloc on CUDA) and how it reports errors.
/// Internal to the runtime; each backend library keeps its own counters.
///
//===----------------------------------------------------------------------===//

#ifndef ZRT_SRC_ARENA_BOOK_H
#define ZRT_SRC_ARENA_BOOK_H

#include "zrt/zrt.h"

#include <atomic>
#include <cstdint>
#include <mutex>

/// One arena: `bytes` usable bytes at `base` (host or device memory), of
/// zrt_mem_kind `kind`; `bump` is zrt_arena_alloc's next free offset.
struct zrt_arena_s {
  void *base = nullptr;
  int64_t bytes = 0;
  int kind = 0;
  int64_t bump = 0;
};

namespace zrt {

/// Default and minimum alignment of arenas and of zrt_arena_alloc (bytes).
constexpr int64_t kArenaAlign = ZRT_ARENA_ALIGNMENT;

/// Bytes to allocate for an arena of `bytes`: rounded up to kArenaAlign and
/// never 0 (so the base is a valid address); -1 on overflow.
inline int64_t arenaAllocationBytes(int64_t bytes) {
  int64_t rounded = bytes == 0 ? kArenaAlign
                               : (bytes + kArenaAlign - 1) / kArenaAlign *
                                     kArenaAlign;
  return rounded < bytes ? -1 : rounded;
}

/// Per-kind live and peak arena bytes and the heap-allocation count of one
/// backend (zrt_memory_*_bytes, zrt_memory_reset_peak, zrt_heap_allocations).
class MemoryBook {
public:
  /// Adds `delta` bytes (negative when an arena goes) to `kind`.
  void account(int kind, int64_t delta) {
    std::lock_guard<std::mutex> lock(mu_);
    live_[kind] += delta;
    liveTotal_ += delta;
    if (live_[kind] > peak_[kind])
      peak_[kind] = live_[kind];
    if (liveTotal_ > peakTotal_)
      peakTotal_ = liveTotal_;
  }
  /// Live bytes of `kind`; -1 for an unknown kind.
  int64_t live(int kind) {
    if (kind < 0 || kind >= ZRT_MEM_NUM_KINDS)
      return -1;
    std::lock_guard<std::mutex> lock(mu_);
    return live_[kind];
  }
  /// Peak bytes of `kind` since start or resetPeak; -1 for an unknown kind.
  int64_t peak(int kind) {
    if (kind < 0 || kind >= ZRT_MEM_NUM_KINDS)
      return -1;
    std::lock_guard<std::mutex> lock(mu_);
    return peak_[kind];
  }
  int64_t liveTotal() {
    std::lock_guard<std::mutex> lock(mu_);
    return liveTotal_;
  }
  int64_t peakTotal() {
    std::lock_guard<std::mutex> lock(mu_);
    return peakTotal_;
  }
  /// Sets every peak to the current live value.
  void resetPeak() {
    std::lock_guard<std::mutex> lock(mu_);
    for (int k = 0; k < ZRT_MEM_NUM_KINDS; ++k)
      peak_[k] = live_[k];
    peakTotal_ = liveTotal_;
  }
  /// Counts one heap allocation.
  void countAllocation() {
    heapAllocations_.fetch_add(1, std::memory_order_relaxed);
  }
  int64_t heapAllocations() const {
    return heapAllocations_.load(std::memory_order_relaxed);
  }

private:
  std::mutex mu_;
  int64_t live_[ZRT_MEM_NUM_KINDS] = {};
  int64_t peak_[ZRT_MEM_NUM_KINDS] = {};
  int64_t liveTotal_ = 0;
  int64_t peakTotal_ = 0;
  std::atomic<int64_t> heapAllocations_{0};
};

/// zrt_arena_alloc: `bytes` at the next multiple of `align` (0 = the
/// default) in `arena`, offset returned in *offset. `fail(status, fmt, ...)`
/// is the backend's error reporter (sets zrt_last_error, returns status).
/// Errors: ZRT_ERR_INVALID_ARGUMENT (NULL, bytes < 0, align not a power of
/// two), ZRT_ERR_OUT_OF_MEMORY (does not fit).
template <typename Fail>
int bumpAllocate(zrt_arena_s *arena, int64_t bytes, int64_t align,
                 int64_t *offset, Fail fail) {
  const char *fn = "zrt_arena_alloc";
  if (!arena || !offset)
    return fail(ZRT_ERR_INVALID_ARGUMENT, "%s: NULL argument", fn);
  if (bytes < 0)
    return fail(ZRT_ERR_INVALID_ARGUMENT, "%s: bytes < 0", fn);
  if (align == 0)
    align = kArenaAlign;
  if (align < 0 || (align & (align - 1)) != 0)
    return fail(ZRT_ERR_INVALID_ARGUMENT,
                "%s: align = %lld is not a power of two", fn, (long long)align);
  const int64_t start = (arena->bump + align - 1) / align * align;
  if (start > arena->bytes || bytes > arena->bytes - start)
    return fail(ZRT_ERR_OUT_OF_MEMORY,
                "%s: %lld bytes at offset %lld do not fit in an arena of "
                "%lld bytes",
                fn, (long long)bytes, (long long)start,
                (long long)arena->bytes);
  arena->bump = start + bytes;
  *offset = start;
  return ZRT_OK;
}

} // namespace zrt

#endif // ZRT_SRC_ARENA_BOOK_H
