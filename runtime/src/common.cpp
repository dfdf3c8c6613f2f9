//===- common.cpp - Errors, threads, bf16 casts ---------------------------===//

#include "internal.h"

#include <cblas.h>
#include <cstdarg>
#include <cstdio>
#include <string>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace {
thread_local std::string lastError;
} // namespace

int zrt::fail(int status, const char *fmt, ...) {
  char buf[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  lastError = buf;
  return status;
}

extern "C" {

const char *zrt_last_error(void) { return lastError.c_str(); }

void zrt_clear_error(void) { lastError.clear(); }

const char *zrt_status_name(int status) {
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

int zrt_set_num_threads(int n) {
  ZRT_REQUIRE(n >= 1, "zrt_set_num_threads: n = %d must be >= 1", n);
#ifdef _OPENMP
  omp_set_num_threads(n);
#endif
#ifdef ZRT_HAVE_OPENBLAS
  openblas_set_num_threads(n);
#endif
  return ZRT_OK;
}

zrt_bf16 zrt_f32_to_bf16(float x) { return zrt::f32ToBf16(x); }

float zrt_bf16_to_f32(zrt_bf16 x) { return zrt::bf16ToF32(x); }

int zrt_cast_f32_to_bf16(const float *src, zrt_bf16 *dst, int64_t n) {
  ZRT_REQUIRE(n >= 0, "zrt_cast_f32_to_bf16: n = %lld < 0", (long long)n);
  ZRT_REQUIRE_BUF("zrt_cast_f32_to_bf16", n, src);
  ZRT_REQUIRE_BUF("zrt_cast_f32_to_bf16", n, dst);
#pragma omp parallel for schedule(static) if (n > zrt::kParallelGrain)
  for (int64_t i = 0; i < n; ++i)
    dst[i] = zrt::f32ToBf16(src[i]);
  return ZRT_OK;
}

int zrt_cast_bf16_to_f32(const zrt_bf16 *src, float *dst, int64_t n) {
  ZRT_REQUIRE(n >= 0, "zrt_cast_bf16_to_f32: n = %lld < 0", (long long)n);
  ZRT_REQUIRE_BUF("zrt_cast_bf16_to_f32", n, src);
  ZRT_REQUIRE_BUF("zrt_cast_bf16_to_f32", n, dst);
#pragma omp parallel for schedule(static) if (n > zrt::kParallelGrain)
  for (int64_t i = 0; i < n; ++i)
    dst[i] = zrt::bf16ToF32(src[i]);
  return ZRT_OK;
}

} // extern "C"
