// Host stand-ins for the arena and copy functions of zrt_cuda.h the
// GoogleTest files of runtime/cuda/test use, so that a test file runs
// unchanged against the emulated kernels: an arena is host memory, filled
// with 0xFF (NaN) at every allocation; the copies report the device error
// word as the real ones do.
#include "zrt_cuda.h"

#include <cstdlib>
#include <cstring>

namespace {
struct Arena {
  char *base;
  int64_t size, used;
};
} // namespace

namespace zrt_cuda {
int arena_create(int64_t bytes, int, zrt_arena *out) {
  auto *a = new Arena{
      static_cast<char *>(aligned_alloc(256, (bytes + 255) / 256 * 256)), bytes,
      0};
  *out = reinterpret_cast<zrt_arena>(a);
  return a->base ? ZRT_OK
                 : fail(ZRT_ERR_OUT_OF_MEMORY, "arena_create: %lld bytes",
                        (long long)bytes);
}
void arena_destroy(zrt_arena arena) {
  auto *a = reinterpret_cast<Arena *>(arena);
  if (!a)
    return;
  free(a->base);
  delete a;
}
void *arena_base(zrt_arena arena) {
  return reinterpret_cast<Arena *>(arena)->base;
}
int arena_alloc(zrt_arena arena, int64_t bytes, int64_t align, int64_t *off) {
  auto *a = reinterpret_cast<Arena *>(arena);
  const int64_t al = align > 64 ? align : 64;
  const int64_t o = (a->used + al - 1) / al * al;
  if (o + bytes > a->size)
    return fail(ZRT_ERR_OUT_OF_MEMORY, "arena_alloc: %lld bytes",
                (long long)bytes);
  a->used = o + bytes;
  *off = o;
  memset(a->base + o, 0xff, bytes);
  return ZRT_OK;
}
void arena_reset(zrt_arena arena) { reinterpret_cast<Arena *>(arena)->used = 0; }
// Like the real copies, these report (and clear) a pending device error.
int copy_to_device(void *dst, const void *src, int64_t bytes) {
  memcpy(dst, src, bytes);
  return take_device_error("zrt_copy_to_device");
}
int copy_to_host(void *dst, const void *src, int64_t bytes) {
  memcpy(dst, src, bytes);
  return take_device_error("zrt_copy_to_host");
}
} // namespace zrt_cuda
