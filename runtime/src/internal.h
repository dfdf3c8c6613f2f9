//===- internal.h - Zero runtime private helpers -----------------*- C++ -*-===//
//
// Shared helpers for the runtime sources: error reporting, argument checks,
// bf16 bit manipulation and the Philox counter-based generator.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_SRC_INTERNAL_H
#define ZRT_SRC_INTERNAL_H

#include "zrt/zrt.h"

#include <climits>
#include <cstdint>
#include <cstring>

namespace zrt {

/// Records a printf-style message as the thread's last error and returns
/// `status`.
int fail(int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/// Returns ZRT_ERR_INVALID_ARGUMENT from the enclosing function with a
/// message "<fn>: <msg>" when `cond` is false.
#define ZRT_REQUIRE(cond, ...)                                                 \
  do {                                                                         \
    if (!(cond))                                                               \
      return ::zrt::fail(ZRT_ERR_INVALID_ARGUMENT, __VA_ARGS__);               \
  } while (0)

/// Checks that n >= 0 and that every pointer is non-NULL when n > 0.
#define ZRT_REQUIRE_BUF(fn, n, ptr)                                            \
  ZRT_REQUIRE((n) == 0 || (ptr) != nullptr, "%s: %s is NULL", fn, #ptr)

/// Minimum element count before an elementwise loop goes parallel.
constexpr int64_t kParallelGrain = 1 << 15;

inline float bf16ToF32(uint16_t h) {
  uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline uint16_t f32ToBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) // NaN: keep sign/payload, force quiet.
    return static_cast<uint16_t>((u >> 16) | 0x0040u);
  uint32_t bias = 0x7fffu + ((u >> 16) & 1u); // round to nearest even
  return static_cast<uint16_t>((u + bias) >> 16);
}

/// Philox4x32-10 (Salmon et al., SC'11): 4x32-bit output for a 128-bit
/// counter and a 64-bit key.
struct Philox4x32 {
  uint32_t v[4];
};

inline Philox4x32 philox4x32(uint32_t c0, uint32_t c1, uint32_t c2,
                             uint32_t c3, uint64_t key) {
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = static_cast<uint64_t>(0xD2511F53u) * c0;
    uint64_t p1 = static_cast<uint64_t>(0xCD9E8D57u) * c2;
    uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    uint32_t n0 = hi1 ^ c1 ^ k0, n1 = lo1, n2 = hi0 ^ c3 ^ k1, n3 = lo0;
    c0 = n0; c1 = n1; c2 = n2; c3 = n3;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return {{c0, c1, c2, c3}};
}

} // namespace zrt

#endif // ZRT_SRC_INTERNAL_H
