//===- f16_bits.h - IEEE binary16 <-> binary32, host and device ----------===//
//
// The one definition of the f16 conversions of zrt.h (zrt_f32_to_f16,
// zrt_f16_to_f32), shared by the CPU runtime and the CUDA kernels (and the
// CUDA emulator), so both backends round every f16 store identically.
// Integer arithmetic only: no dependence on the FPU's denormal mode or on
// F16C / __half being available.
//
//===----------------------------------------------------------------------===//

#ifndef ZRT_SRC_F16_BITS_H
#define ZRT_SRC_F16_BITS_H

#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__)
#define ZRT_F16_HD __host__ __device__ __forceinline__
#else
#define ZRT_F16_HD inline
#endif

namespace zrt {

ZRT_F16_HD uint32_t f32Bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
#endif
}

ZRT_F16_HD float f32FromBits(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
#endif
}

/// f16 bits -> f32, exact (subnormals normalized, Inf and NaN kept).
ZRT_F16_HD float f16ToF32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0x1fu) // Inf / NaN
    return f32FromBits(sign | 0x7f800000u | (mant << 13));
  if (exp != 0)
    return f32FromBits(sign | ((exp + 112u) << 23) | (mant << 13));
  if (mant == 0)
    return f32FromBits(sign);
  // Subnormal: mant * 2^-24, normalized.
  uint32_t e = 113;
  while (!(mant & 0x400u)) {
    mant <<= 1;
    --e;
  }
  return f32FromBits(sign | (e << 23) | ((mant & 0x3ffu) << 13));
}

/// f32 -> f16 bits, round to nearest even; |x| >= 65520 -> Inf; NaN ->
/// 0x7e00 with the sign.
ZRT_F16_HD uint16_t f32ToF16(float f) {
  const uint32_t u = f32Bits(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t x = u & 0x7fffffffu;
  if (x > 0x7f800000u) // NaN
    return static_cast<uint16_t>(sign | 0x7e00u);
  if (x >= 0x47800000u) // >= 2^16 (and Inf): Inf
    return static_cast<uint16_t>(sign | 0x7c00u);
  if (x >= 0x38800000u) { // >= 2^-14: normal (a carry may give Inf)
    const uint32_t odd = (x >> 13) & 1u;
    const uint32_t r = x - (112u << 23) + 0xfffu + odd;
    return static_cast<uint16_t>(sign | (r >> 13));
  }
  // Subnormal or zero: round(x_mant * 2^(e - 126)) units of 2^-24.
  const uint32_t e = x >> 23;
  const uint32_t shift = 126u - e; // >= 14
  if (shift > 24u)
    return sign;
  const uint32_t m = (x & 0x7fffffu) | 0x800000u;
  uint32_t h = m >> shift;
  const uint32_t rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
  if (rem > half || (rem == half && (h & 1u)))
    ++h;
  return static_cast<uint16_t>(sign | h);
}

} // namespace zrt

#endif // ZRT_SRC_F16_BITS_H
