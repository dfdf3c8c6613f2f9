//===- arena.cpp - Memory arenas and per-kind byte counters ----------------===//

#include "common/arena_book.h"
#include "common/internal.h"

#include <cstdio>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <atomic>
#include <mutex>
#include <new>

namespace {

/// This backend's arena and allocation counters.
zrt::MemoryBook &book() {
  static zrt::MemoryBook b;
  return b;
}

constexpr int64_t kAlign = zrt::kArenaAlign;

} // namespace

void *zrt::allocate(size_t bytes, size_t align) {
  if (align < alignof(std::max_align_t))
    align = alignof(std::max_align_t);
  // aligned_alloc requires a size that is a multiple of the alignment; never
  // 0 bytes, so that the result is always a valid address.
  size_t rounded = bytes == 0 ? align : (bytes + align - 1) / align * align;
  if (rounded < bytes)
    return nullptr;
  book().countAllocation();
  return std::aligned_alloc(align, rounded);
}

void zrt::release(void *p) { std::free(p); }

extern "C" {

int64_t zrt_heap_allocations(void) { return book().heapAllocations(); }

int zrt_arena_create(int64_t bytes, int kind, zrt_arena *out) {
  const char *fn = "zrt_arena_create";
  ZRT_REQUIRE(out != nullptr, "%s: out is NULL", fn);
  *out = nullptr;
  ZRT_REQUIRE(bytes >= 0, "%s: bytes = %lld < 0", fn, (long long)bytes);
  ZRT_REQUIRE(kind >= 0 && kind < ZRT_MEM_NUM_KINDS, "%s: unknown kind %d", fn,
              kind);
  // Round up to the alignment (aligned_alloc requires a multiple of it) and
  // never allocate 0 bytes so the base is always a valid address.
  const int64_t rounded = zrt::arenaAllocationBytes(bytes);
  ZRT_REQUIRE(rounded >= 0, "%s: size overflow", fn);
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
  book().account(kind, bytes);
  *out = a;
  return ZRT_OK;
}

void zrt_arena_destroy(zrt_arena arena) {
  if (!arena)
    return;
  book().account(arena->kind, -arena->bytes);
  zrt::release(arena->base);
  arena->~zrt_arena_s();
  zrt::release(arena);
}

void *zrt_arena_base(zrt_arena arena) { return arena ? arena->base : nullptr; }

int64_t zrt_arena_size(zrt_arena arena) { return arena ? arena->bytes : -1; }

int zrt_arena_alloc(zrt_arena arena, int64_t bytes, int64_t align,
                    int64_t *offset) {
  return zrt::bumpAllocate(arena, bytes, align, offset, zrt::fail);
}

int64_t zrt_arena_used(zrt_arena arena) { return arena ? arena->bump : -1; }

void zrt_arena_reset(zrt_arena arena) {
  if (arena)
    arena->bump = 0;
}

int64_t zrt_memory_bytes(int kind) { return book().live(kind); }

int64_t zrt_memory_peak_bytes(int kind) { return book().peak(kind); }

int64_t zrt_memory_total_bytes(void) { return book().liveTotal(); }

int64_t zrt_memory_peak_total_bytes(void) { return book().peakTotal(); }

void zrt_memory_reset_peak(void) { book().resetPeak(); }

int zrt_device_memory_info(int64_t *free_bytes, int64_t *total_bytes) {
  const char *fn = "zrt_device_memory_info";
  ZRT_REQUIRE(free_bytes && total_bytes, "%s: NULL output", fn);
  const long page = sysconf(_SC_PAGESIZE), avail = sysconf(_SC_AVPHYS_PAGES),
             phys = sysconf(_SC_PHYS_PAGES);
  ZRT_REQUIRE(page > 0 && avail >= 0 && phys > 0, "%s: sysconf failed", fn);
  *total_bytes = static_cast<int64_t>(phys) * page;
  // Linux's MemAvailable counts reclaimable page cache, which free pages
  // (_SC_AVPHYS_PAGES) do not; prefer it when /proc says.
  *free_bytes = static_cast<int64_t>(avail) * page;
  if (FILE *f = std::fopen("/proc/meminfo", "r")) {
    char line[256];
    long long kb = 0;
    while (std::fgets(line, sizeof line, f))
      if (std::sscanf(line, "MemAvailable: %lld kB", &kb) == 1) {
        *free_bytes = static_cast<int64_t>(kb) * 1024;
        break;
      }
    std::fclose(f);
  }
  return ZRT_OK;
}

} // extern "C"
