//===- rng.cpp - Counter-based, shard-invariant initializers ---------------===//
//
// Element e of a stream is a pure function of (seed, e): Philox4x32-10 with
// counter (lo32(e), hi32(e), stream, 0) and key seed. Normal values use
// Box-Muller on two 32-bit uniforms (evaluated in double), one value per
// element. The per-element formulas live in rng_math.h (shared with the
// CUDA backend's initializers).
//
//===----------------------------------------------------------------------===//

#include "internal.h"
#include "rng_math.h"

namespace {

int checkInit(const char *fn, float *ptr, int64_t n, int64_t offset) {
  ZRT_REQUIRE(n >= 0, "%s: n < 0", fn);
  ZRT_REQUIRE(offset >= 0, "%s: offset < 0", fn);
  ZRT_REQUIRE_BUF(fn, n, ptr);
  return ZRT_OK;
}

} // namespace

extern "C" {

int zrt_init_normal(float *ptr, int64_t n, float mean, float std,
                    uint64_t seed, int64_t offset) {
  if (int st = checkInit("zrt_init_normal", ptr, n, offset))
    return st;
  ZRT_REQUIRE(std >= 0.0f, "zrt_init_normal: std < 0");
#pragma omp parallel for schedule(static) if (n > zrt::kParallelGrain / 8)
  for (int64_t i = 0; i < n; ++i)
    ptr[i] =
        zrt::normalElement(seed, static_cast<uint64_t>(offset + i), mean, std);
  return ZRT_OK;
}

int zrt_init_uniform(float *ptr, int64_t n, float low, float high,
                     uint64_t seed, int64_t offset) {
  if (int st = checkInit("zrt_init_uniform", ptr, n, offset))
    return st;
  ZRT_REQUIRE(high >= low, "zrt_init_uniform: high < low");
#pragma omp parallel for schedule(static) if (n > zrt::kParallelGrain / 8)
  for (int64_t i = 0; i < n; ++i)
    ptr[i] =
        zrt::uniformElement(seed, static_cast<uint64_t>(offset + i), low, high);
  return ZRT_OK;
}

} // extern "C"
