//===- zrt_cuda.h - CUDA backend, internal C++ API ---------------*- C++ -*-===//
//
// The CUDA implementations of the zrt.h functions that the CUDA backend has
// so far, in namespace zrt_cuda with the exact zrt.h signatures and
// semantics, on DEVICE memory (arena memory is cudaMalloc'd). abi.cpp
// exports them under their zrt_* names in the zero_runtime_cuda library;
// the unit test links these directly next to the CPU runtime to compare
// the two.
//
// Kernels run on the default (legacy) stream, in call order. A call
// returns once its work is queued: launch errors are reported by the call
// itself (ZRT_ERR_INVALID_ARGUMENT for a bad configuration), errors raised
// while a kernel runs by the next synchronizing call (zrt_copy_to_host /
// zrt_copy_to_device, which wait for the device).
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CUDA_ZRT_CUDA_H
#define ZRT_CUDA_ZRT_CUDA_H

#include "zrt/zrt.h"

#include <cstdint>

namespace zrt_cuda {

// Errors (thread-local message, as the CPU runtime).
const char *last_error();
void clear_error();
const char *status_name(int status);
int fail(int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/// ZRT_OK when `err` (a cudaError_t) is cudaSuccess, else records
/// "<fn>: <what>: <cuda error string>" and returns `status`.
int check(int err, int status, const char *fn, const char *what);

// Arenas (device memory) and the memory counters.
int arena_create(int64_t bytes, int kind, zrt_arena *out);
void arena_destroy(zrt_arena arena);
void *arena_base(zrt_arena arena);
int64_t arena_size(zrt_arena arena);
int arena_alloc(zrt_arena arena, int64_t bytes, int64_t align,
                int64_t *offset);
int64_t arena_used(zrt_arena arena);
void arena_reset(zrt_arena arena);
int64_t memory_bytes(int kind);
int64_t memory_peak_bytes(int kind);
int64_t memory_total_bytes();
int64_t memory_peak_total_bytes();
void memory_reset_peak();
int64_t heap_allocations();

// The host/device boundary.
int copy_to_device(void *dst, const void *src, int64_t bytes);
int copy_to_host(void *dst, const void *src, int64_t bytes);

// Elementwise (kernels.cu).
int fill(float *out, float value, int64_t n);
int add(const float *a, const float *b, float *out, int64_t n);
int scale(const float *x, float alpha, float *out, int64_t n);
int gelu(const float *x, float *out, int64_t n);
int gelu_backward(const float *x, const float *dout, float *dx, int64_t n);

// Matrix products (matmul.cpp, cuBLAS).
int matmul(const float *A, const float *B, const float *bias, float *C,
           int64_t batch, int64_t M, int64_t N, int64_t K, int trans_a,
           int trans_b, float alpha, float beta, int64_t stride_a,
           int64_t stride_b, int64_t stride_c);

namespace detail {
// Launchers used by matmul.cpp (kernels.cu); return a cudaError_t.
/// C[b][i, j] = bias[j] for b < batch, i < M, j < N.
int launch_broadcast_bias(const float *bias, float *C, int64_t batch,
                          int64_t M, int64_t N, int64_t stride_c);
/// C[b][i, j] = beta == 0 ? 0 : beta * C[b][i, j], then += bias[j] if bias.
int launch_scale_add_bias(const float *bias, float *C, float beta,
                          int64_t batch, int64_t M, int64_t N,
                          int64_t stride_c);
/// C[b][i, j] += bias[j].
int launch_add_bias(const float *bias, float *C, int64_t batch, int64_t M,
                    int64_t N, int64_t stride_c);
} // namespace detail

} // namespace zrt_cuda

#define ZRT_CUDA_REQUIRE(cond, ...)                                            \
  do {                                                                         \
    if (!(cond))                                                               \
      return ::zrt_cuda::fail(ZRT_ERR_INVALID_ARGUMENT, __VA_ARGS__);          \
  } while (0)

#define ZRT_CUDA_REQUIRE_BUF(fn, n, ptr)                                       \
  ZRT_CUDA_REQUIRE((n) == 0 || (ptr) != nullptr, "%s: %s is NULL", fn, #ptr)

#endif // ZRT_CUDA_ZRT_CUDA_H
