//===- rng.cpp - Counter-based, shard-invariant initializers ---------------===//
//
// Element e of a stream is a pure function of (seed, e): Philox4x32-10 with
// counter (lo32(e), hi32(e), stream, 0) and key seed. Normal values use
// Box-Muller on two 32-bit uniforms (evaluated in double), one value per
// element.
//
//===----------------------------------------------------------------------===//

#include "internal.h"

#include <cmath>

namespace {

constexpr uint32_t kNormalStream = 0x4e4f524du;  // "NORM"
constexpr uint32_t kUniformStream = 0x554e4946u; // "UNIF"
constexpr double kTwoPi = 6.283185307179586476925286766559;
constexpr double kInv2Pow32 = 1.0 / 4294967296.0;

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
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t e = static_cast<uint64_t>(offset + i);
    zrt::Philox4x32 r = zrt::philox4x32(static_cast<uint32_t>(e),
                                        static_cast<uint32_t>(e >> 32),
                                        kNormalStream, 0, seed);
    // u1 in (0, 1] so log(u1) is finite; u2 in [0, 1).
    const double u1 = (static_cast<double>(r.v[0]) + 1.0) * kInv2Pow32;
    const double u2 = static_cast<double>(r.v[1]) * kInv2Pow32;
    const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
    ptr[i] = static_cast<float>(static_cast<double>(mean) +
                                static_cast<double>(std) * z);
  }
  return ZRT_OK;
}

int zrt_init_uniform(float *ptr, int64_t n, float low, float high,
                     uint64_t seed, int64_t offset) {
  if (int st = checkInit("zrt_init_uniform", ptr, n, offset))
    return st;
  ZRT_REQUIRE(high >= low, "zrt_init_uniform: high < low");
  const double lo = low, span = static_cast<double>(high) - lo;
#pragma omp parallel for schedule(static) if (n > zrt::kParallelGrain / 8)
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t e = static_cast<uint64_t>(offset + i);
    zrt::Philox4x32 r = zrt::philox4x32(static_cast<uint32_t>(e),
                                        static_cast<uint32_t>(e >> 32),
                                        kUniformStream, 0, seed);
    // 53-bit uniform in [0, 1).
    const uint64_t bits = (static_cast<uint64_t>(r.v[0]) << 21) ^ (r.v[1] >> 11);
    const double u = static_cast<double>(bits & ((1ull << 53) - 1)) *
                     (1.0 / 9007199254740992.0);
    float val = static_cast<float>(lo + span * u);
    if (val >= high && high > low) // f32 rounding may reach high
      val = std::nextafter(high, low);
    ptr[i] = val;
  }
  return ZRT_OK;
}

} // extern "C"
