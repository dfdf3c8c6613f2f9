//===- rng_math.h - Per-element formulas of the initializers ----*- C++ -*-===//
//
// The values of zrt_init_normal, zrt_init_uniform and zrt_init_param_slice
// as pure per-element functions of (seed, element index), shared by the CPU
// runtime (rng.cpp, lowering_support.cpp) and the CUDA backend
// (runtime/cuda/init.cpp computes the same values on the host and copies
// them to the device), so that both backends start from the same bits.
// Internal to the runtime.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_SRC_RNG_MATH_H
#define ZRT_SRC_RNG_MATH_H

#include "common/internal.h"

#include <cmath>
#include <cstdint>

namespace zrt {

/// Philox counter word 2 of the normal and uniform streams.
constexpr uint32_t kNormalStream = 0x4e4f524du;  // "NORM"
constexpr uint32_t kUniformStream = 0x554e4946u; // "UNIF"

/// Element e of the normal stream `seed`: mean + std * z with z from
/// Box-Muller on the first two 32-bit words of Philox4x32-10 with counter
/// (lo32(e), hi32(e), kNormalStream, 0), evaluated in double and rounded to
/// f32 once (zrt_init_normal).
inline float normalElement(uint64_t seed, uint64_t e, float mean, float std) {
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  constexpr double kInv2Pow32 = 1.0 / 4294967296.0;
  const Philox4x32 r =
      philox4x32(static_cast<uint32_t>(e), static_cast<uint32_t>(e >> 32),
                 kNormalStream, 0, seed);
  // u1 in (0, 1] so log(u1) is finite; u2 in [0, 1).
  const double u1 = (static_cast<double>(r.v[0]) + 1.0) * kInv2Pow32;
  const double u2 = static_cast<double>(r.v[1]) * kInv2Pow32;
  const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
  return static_cast<float>(static_cast<double>(mean) +
                            static_cast<double>(std) * z);
}

/// Element e of the uniform stream `seed` in [low, high) (high >= low): a
/// 53-bit uniform u in [0, 1) from Philox4x32-10 with counter (lo32(e),
/// hi32(e), kUniformStream, 0), low + (high - low) * u in double, rounded to
/// f32 and kept below high (zrt_init_uniform).
inline float uniformElement(uint64_t seed, uint64_t e, float low, float high) {
  const double lo = low, span = static_cast<double>(high) - lo;
  const Philox4x32 r =
      philox4x32(static_cast<uint32_t>(e), static_cast<uint32_t>(e >> 32),
                 kUniformStream, 0, seed);
  // 53-bit uniform in [0, 1).
  const uint64_t bits = (static_cast<uint64_t>(r.v[0]) << 21) ^ (r.v[1] >> 11);
  const double u = static_cast<double>(bits & ((1ull << 53) - 1)) *
                   (1.0 / 9007199254740992.0);
  float val = static_cast<float>(lo + span * u);
  if (val >= high && high > low) // f32 rounding may reach high
    val = std::nextafter(high, low);
  return val;
}

/// The part of one parameter that lies in a slice of a flat buffer
/// (zrt_init_param_slice): the parameter's elements [first, first + n) land
/// at data[at, at + n). n == 0 when they do not overlap.
struct ParamSliceOverlap {
  int64_t first = 0, n = 0, at = 0;
};

/// The overlap of flat elements [sliceBegin, sliceBegin + sliceN) (the
/// slice `data` holds) and [memberOffset, memberOffset + memberNumel) (the
/// parameter); all arguments >= 0.
inline ParamSliceOverlap paramSliceOverlap(int64_t sliceBegin, int64_t sliceN,
                                           int64_t memberOffset,
                                           int64_t memberNumel) {
  const int64_t lo = sliceBegin > memberOffset ? sliceBegin : memberOffset;
  const int64_t sliceEnd = sliceBegin + sliceN;
  const int64_t memberEnd = memberOffset + memberNumel;
  const int64_t hi = sliceEnd < memberEnd ? sliceEnd : memberEnd;
  ParamSliceOverlap o;
  if (hi <= lo)
    return o;
  // Element e of the member lands at data[member_offset + e - slice_begin].
  o.first = lo - memberOffset;
  o.n = hi - lo;
  o.at = lo - sliceBegin;
  return o;
}

/// Element e of a parameter initialized as `initKind` (enum zrt_init_kind,
/// already validated), in f32: normal (mean 0, `std`, stream `seed`), 0 or
/// 1. The bf16 value zrt_init_param_slice stores is f32ToBf16 of it.
inline float paramInitElement(int initKind, float std, uint64_t seed,
                              int64_t e) {
  if (initKind == ZRT_INIT_NORMAL)
    return normalElement(seed, static_cast<uint64_t>(e), 0.0f, std);
  return initKind == ZRT_INIT_ONES ? 1.0f : 0.0f;
}

} // namespace zrt

#endif // ZRT_SRC_RNG_MATH_H
