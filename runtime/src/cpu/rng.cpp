//===- rng.cpp - Counter-based, shard-invariant initializers ---------------===//
//
// Element e of a stream is a pure function of (seed, e): Philox4x32-10 with
// counter (lo32(e), hi32(e), stream, 0) and key seed. Normal values use
// Box-Muller on two 32-bit uniforms (evaluated in double), one value per
// element. The per-element formulas live in rng_math.h (shared with the
// CUDA backend's initializers).
//
//===----------------------------------------------------------------------===//

#include "common/arg_checks.h"
#include "common/internal.h"
#include "common/rng_math.h"

extern "C" {

int zrt_init_normal(float *ptr, int64_t n, float mean, float std,
                    uint64_t seed, int64_t offset) {
  if (int st = zrt::checkInitNormalArgs("zrt_init_normal", ptr, n, std, offset,
                                        zrt::fail))
    return st;
#pragma omp parallel for schedule(static) if (n > zrt::kParallelGrain / 8)
  for (int64_t i = 0; i < n; ++i)
    ptr[i] =
        zrt::normalElement(seed, static_cast<uint64_t>(offset + i), mean, std);
  return ZRT_OK;
}

int zrt_init_uniform(float *ptr, int64_t n, float low, float high,
                     uint64_t seed, int64_t offset) {
  if (int st = zrt::checkInitUniformArgs("zrt_init_uniform", ptr, n, low, high,
                                         offset, zrt::fail))
    return st;
#pragma omp parallel for schedule(static) if (n > zrt::kParallelGrain / 8)
  for (int64_t i = 0; i < n; ++i)
    ptr[i] =
        zrt::uniformElement(seed, static_cast<uint64_t>(offset + i), low, high);
  return ZRT_OK;
}

} // extern "C"
