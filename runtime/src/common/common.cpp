//===- common.cpp - Errors, status names, bf16 scalars --------------------===//
//
// The backend-neutral part of the C ABI (both zero_runtime and
// zero_runtime_cuda link it): the thread-local error message, status names,
// scalar bf16 conversion, the clipping coefficient, the parameter seeds and
// the driver's default thread count.
//
//===----------------------------------------------------------------------===//

#include "common/fnv1a.h"
#include "common/internal.h"

#include <sched.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>


namespace {
thread_local std::string lastError;
} // namespace

int zrt::defaultThreads(int cores, int localRanks, int affinityCpus) {
  const int perRank =
      (cores > 1 ? cores : 1) / (localRanks > 1 ? localRanks : 1);
  const int n = perRank > 1 ? perRank : 1;
  return affinityCpus > 0 && affinityCpus < n ? affinityCpus : n;
}

int zrt::positiveCount(const char *s) {
  if (!s || !*s)
    return 0;
  char *end = nullptr;
  const long v = std::strtol(s, &end, 10);
  return *end == '\0' && v >= 1 && v <= 4096 ? static_cast<int>(v) : 0;
}

int zrt::teamThreads(int flagThreads, int (*localRanks)(void *),
                     void *context) {
  if (flagThreads >= 1)
    return flagThreads;
  if (int env = positiveCount(std::getenv("OMP_NUM_THREADS")))
    return env;
  cpu_set_t set;
  CPU_ZERO(&set);
  const int affinity =
      sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
  return defaultThreads(static_cast<int>(std::thread::hardware_concurrency()),
                        localRanks(context), affinity);
}

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

zrt_bf16 zrt_f32_to_bf16(float x) { return zrt::f32ToBf16(x); }

float zrt_bf16_to_f32(zrt_bf16 x) { return zrt::bf16ToF32(x); }

zrt_f16 zrt_f32_to_f16(float x) { return zrt::f32ToF16(x); }

float zrt_f16_to_f32(zrt_f16 x) { return zrt::f16ToF32(x); }

uint64_t zrt_param_seed(uint64_t seed, const char *name) {
  // FNV-1a (64-bit) of the name, then splitmix64 (Steele et al.) of
  // (seed ^ hash).
  zrt::Fnv1a64 hash;
  const char *text = name ? name : "";
  hash.add(text, std::strlen(text));
  uint64_t x = seed ^ hash.h;
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

float zrt_clip_coef(float total_norm, float max_norm) {
  const float coef = max_norm / (total_norm + 1e-6f);
  return coef < 1.0f ? coef : 1.0f;
}

} // extern "C"
