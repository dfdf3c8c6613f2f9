//===- arena.cpp - Memory arenas and per-kind byte counters ----------------===//

#include "internal.h"

#include <cstddef>
#include <cstdlib>
#include <atomic>
#include <mutex>
#include <new>

struct zrt_arena_s {
  void *base = nullptr;
  int64_t bytes = 0;
  int kind = 0;
  int64_t bump = 0;
};

namespace {

constexpr int64_t kAlign = 64;

struct MemCounters {
  std::mutex mu;
  int64_t live[ZRT_MEM_NUM_KINDS] = {};
  int64_t peak[ZRT_MEM_NUM_KINDS] = {};
  int64_t liveTotal = 0;
  int64_t peakTotal = 0;
};

MemCounters &counters() {
  static MemCounters c;
  return c;
}

void account(int kind, int64_t delta) {
  MemCounters &c = counters();
  std::lock_guard<std::mutex> lock(c.mu);
  c.live[kind] += delta;
  c.liveTotal += delta;
  if (c.live[kind] > c.peak[kind])
    c.peak[kind] = c.live[kind];
  if (c.liveTotal > c.peakTotal)
    c.peakTotal = c.liveTotal;
}

std::atomic<int64_t> heapAllocations{0};

} // namespace

void *zrt::allocate(size_t bytes, size_t align) {
  if (align < alignof(std::max_align_t))
    align = alignof(std::max_align_t);
  // aligned_alloc requires a size that is a multiple of the alignment; never
  // 0 bytes, so that the result is always a valid address.
  size_t rounded = bytes == 0 ? align : (bytes + align - 1) / align * align;
  if (rounded < bytes)
    return nullptr;
  heapAllocations.fetch_add(1, std::memory_order_relaxed);
  return std::aligned_alloc(align, rounded);
}

void zrt::release(void *p) { std::free(p); }

extern "C" {

int64_t zrt_heap_allocations(void) {
  return heapAllocations.load(std::memory_order_relaxed);
}

int zrt_arena_create(int64_t bytes, int kind, zrt_arena *out) {
  const char *fn = "zrt_arena_create";
  ZRT_REQUIRE(out != nullptr, "%s: out is NULL", fn);
  *out = nullptr;
  ZRT_REQUIRE(bytes >= 0, "%s: bytes = %lld < 0", fn, (long long)bytes);
  ZRT_REQUIRE(kind >= 0 && kind < ZRT_MEM_NUM_KINDS, "%s: unknown kind %d", fn,
              kind);
  // Round up to the alignment (aligned_alloc requires a multiple of it) and
  // never allocate 0 bytes so the base is always a valid address.
  const int64_t rounded =
      bytes == 0 ? kAlign : (bytes + kAlign - 1) / kAlign * kAlign;
  ZRT_REQUIRE(rounded >= bytes, "%s: size overflow", fn);
  void *base = zrt::allocate(static_cast<size_t>(rounded), kAlign);
  if (!base)
    return zrt::fail(ZRT_ERR_OUT_OF_MEMORY,
                     "%s: cannot allocate %lld bytes", fn, (long long)bytes);
  std::memset(base, 0, static_cast<size_t>(rounded));
  void *mem = zrt::allocate(sizeof(zrt_arena_s));
  auto *a = mem ? new (mem) zrt_arena_s : nullptr;
  if (!a) {
    zrt::release(base);
    return zrt::fail(ZRT_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  }
  a->base = base;
  a->bytes = bytes;
  a->kind = kind;
  account(kind, bytes);
  *out = a;
  return ZRT_OK;
}

void zrt_arena_destroy(zrt_arena arena) {
  if (!arena)
    return;
  account(arena->kind, -arena->bytes);
  zrt::release(arena->base);
  arena->~zrt_arena_s();
  zrt::release(arena);
}

void *zrt_arena_base(zrt_arena arena) { return arena ? arena->base : nullptr; }

int64_t zrt_arena_size(zrt_arena arena) { return arena ? arena->bytes : -1; }

int zrt_arena_alloc(zrt_arena arena, int64_t bytes, int64_t align,
                    int64_t *offset) {
  const char *fn = "zrt_arena_alloc";
  ZRT_REQUIRE(arena != nullptr && offset != nullptr, "%s: NULL argument", fn);
  ZRT_REQUIRE(bytes >= 0, "%s: bytes < 0", fn);
  if (align == 0)
    align = kAlign;
  ZRT_REQUIRE(align > 0 && (align & (align - 1)) == 0,
              "%s: align = %lld is not a power of two", fn, (long long)align);
  const int64_t start = (arena->bump + align - 1) / align * align;
  if (start > arena->bytes || bytes > arena->bytes - start)
    return zrt::fail(ZRT_ERR_OUT_OF_MEMORY,
                     "%s: %lld bytes at offset %lld do not fit in an arena of "
                     "%lld bytes",
                     fn, (long long)bytes, (long long)start,
                     (long long)arena->bytes);
  arena->bump = start + bytes;
  *offset = start;
  return ZRT_OK;
}

int64_t zrt_arena_used(zrt_arena arena) { return arena ? arena->bump : -1; }

void zrt_arena_reset(zrt_arena arena) {
  if (arena)
    arena->bump = 0;
}

int64_t zrt_memory_bytes(int kind) {
  if (kind < 0 || kind >= ZRT_MEM_NUM_KINDS)
    return -1;
  MemCounters &c = counters();
  std::lock_guard<std::mutex> lock(c.mu);
  return c.live[kind];
}

int64_t zrt_memory_peak_bytes(int kind) {
  if (kind < 0 || kind >= ZRT_MEM_NUM_KINDS)
    return -1;
  MemCounters &c = counters();
  std::lock_guard<std::mutex> lock(c.mu);
  return c.peak[kind];
}

int64_t zrt_memory_total_bytes(void) {
  MemCounters &c = counters();
  std::lock_guard<std::mutex> lock(c.mu);
  return c.liveTotal;
}

int64_t zrt_memory_peak_total_bytes(void) {
  MemCounters &c = counters();
  std::lock_guard<std::mutex> lock(c.mu);
  return c.peakTotal;
}

void zrt_memory_reset_peak(void) {
  MemCounters &c = counters();
  std::lock_guard<std::mutex> lock(c.mu);
  for (int k = 0; k < ZRT_MEM_NUM_KINDS; ++k)
    c.peak[k] = c.live[k];
  c.peakTotal = c.liveTotal;
}

} // extern "C"
