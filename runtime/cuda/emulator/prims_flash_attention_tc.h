// The emulator's DEVICE PRIMITIVES block of flash_attention_tc.cu (gen.py
// puts this include in its place): the same names and signatures, with the
// semantics of shim.h (fragment layouts, cp.async landing, race detector).
#pragma once
__device__ __forceinline__ void cpAsync16(void *dst, const void *src,
                                          int srcBytes) {
  emu::cpAsync(dst, src, 16, srcBytes);
}
__device__ __forceinline__ void cpAsync4(void *dst, const void *src,
                                         int srcBytes) {
  emu::cpAsync(dst, src, 4, srcBytes);
}
__device__ __forceinline__ void cpAsyncCommit() { emu::cpCommit(); }
template <int N> __device__ __forceinline__ void cpAsyncWait() {
  emu::cpWait(N);
}
__device__ __forceinline__ void ldsm4(uint32_t (&r)[4], const void *p) {
  emu::ldsm(r, p, false);
}
__device__ __forceinline__ void ldsm4t(uint32_t (&r)[4], const void *p) {
  emu::ldsm(r, p, true);
}
__device__ __forceinline__ void mma16816(float (&d)[4], const uint32_t (&a)[4],
                                         uint32_t b0, uint32_t b1) {
  emu::mma(d, a, b0, b1);
}
/// cvt.rn.bf16x2.f32: round to nearest even, NaN -> canonical NaN.
inline uint32_t emuRneBf16(float f) {
  const uint32_t u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return 0x7fffu;
  return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
}
__device__ __forceinline__ uint32_t packBf16x2(float lo, float hi) {
  return emuRneBf16(lo) | (emuRneBf16(hi) << 16);
}
/// ex2.approx.ftz.f32: subnormal inputs and results flush to zero; the
/// value is the host's exact exp2f, not the hardware's approximation.
__device__ __forceinline__ float exp2Fast(float x) {
  if (std::fpclassify(x) == FP_SUBNORMAL)
    x = 0.0f;
  float y = exp2f(x);
  if (std::fpclassify(y) == FP_SUBNORMAL)
    y = 0.0f;
  return y;
}
__device__ __forceinline__ void stShared16(void *p, uint4 x) {
  const size_t off = emu::smemOff(p, 16, 16);
  emu::checkWrite(off, 16, "st.shared.v4");
  memcpy(emu::smemRW + off, &x, 16);
}
__device__ __forceinline__ uint4 ldShared16(const void *p) {
  const size_t off = emu::smemOff(p, 16, 16);
  emu::checkRead(off, 16, "ld.shared.v4");
  uint4 x;
  memcpy(&x, emu::smemRW + off, 16);
  return x;
}
__device__ __forceinline__ void stSharedF32(float *p, float x) {
  const size_t off = emu::smemOff(p, 4, 4);
  emu::checkWrite(off, 4, "st.shared.f32");
  memcpy(emu::smemRW + off, &x, 4);
}
__device__ __forceinline__ float2 ldSharedF32x2(const float *p) {
  const size_t off = emu::smemOff(p, 8, 8);
  emu::checkRead(off, 8, "ld.shared.v2.f32");
  float2 x;
  memcpy(&x, emu::smemRW + off, 8);
  return x;
}
