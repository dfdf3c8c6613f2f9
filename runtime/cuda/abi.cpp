//===- abi.cpp - CUDA backend: the zrt.h C ABI (first subset) -------------===//
//
// Exports the zrt_cuda implementations under their zrt.h names. This is
// the part of zrt.h the CUDA backend has so far; everything else (norms,
// attention, losses, optimizer, collectives, data, driver) still exists
// only in the CPU runtime (zero_runtime).
//
//===----------------------------------------------------------------------===//

#include "zrt_cuda.h"

extern "C" {

const char *zrt_last_error(void) { return zrt_cuda::last_error(); }
void zrt_clear_error(void) { zrt_cuda::clear_error(); }
const char *zrt_status_name(int status) {
  return zrt_cuda::status_name(status);
}

int zrt_arena_create(int64_t bytes, int kind, zrt_arena *out) {
  return zrt_cuda::arena_create(bytes, kind, out);
}
void zrt_arena_destroy(zrt_arena arena) { zrt_cuda::arena_destroy(arena); }
void *zrt_arena_base(zrt_arena arena) { return zrt_cuda::arena_base(arena); }
int64_t zrt_arena_size(zrt_arena arena) { return zrt_cuda::arena_size(arena); }
int zrt_arena_alloc(zrt_arena arena, int64_t bytes, int64_t align,
                    int64_t *offset) {
  return zrt_cuda::arena_alloc(arena, bytes, align, offset);
}
int64_t zrt_arena_used(zrt_arena arena) { return zrt_cuda::arena_used(arena); }
void zrt_arena_reset(zrt_arena arena) { zrt_cuda::arena_reset(arena); }
int64_t zrt_memory_bytes(int kind) { return zrt_cuda::memory_bytes(kind); }
int64_t zrt_memory_peak_bytes(int kind) {
  return zrt_cuda::memory_peak_bytes(kind);
}
int64_t zrt_memory_total_bytes(void) { return zrt_cuda::memory_total_bytes(); }
int64_t zrt_memory_peak_total_bytes(void) {
  return zrt_cuda::memory_peak_total_bytes();
}
void zrt_memory_reset_peak(void) { zrt_cuda::memory_reset_peak(); }
int64_t zrt_heap_allocations(void) { return zrt_cuda::heap_allocations(); }

int zrt_copy_to_device(void *dst, const void *src, int64_t bytes) {
  return zrt_cuda::copy_to_device(dst, src, bytes);
}
int zrt_copy_to_host(void *dst, const void *src, int64_t bytes) {
  return zrt_cuda::copy_to_host(dst, src, bytes);
}

int zrt_fill(float *out, float value, int64_t n) {
  return zrt_cuda::fill(out, value, n);
}
int zrt_add(const float *a, const float *b, float *out, int64_t n) {
  return zrt_cuda::add(a, b, out, n);
}
int zrt_scale(const float *x, float alpha, float *out, int64_t n) {
  return zrt_cuda::scale(x, alpha, out, n);
}
int zrt_gelu(const float *x, float *out, int64_t n) {
  return zrt_cuda::gelu(x, out, n);
}
int zrt_gelu_backward(const float *x, const float *dout, float *dx,
                      int64_t n) {
  return zrt_cuda::gelu_backward(x, dout, dx, n);
}

int zrt_matmul(const float *A, const float *B, const float *bias, float *C,
               int64_t batch, int64_t M, int64_t N, int64_t K, int trans_a,
               int trans_b, float alpha, float beta, int64_t stride_a,
               int64_t stride_b, int64_t stride_c) {
  return zrt_cuda::matmul(A, B, bias, C, batch, M, N, K, trans_a, trans_b,
                          alpha, beta, stride_a, stride_b, stride_c);
}

} // extern "C"
