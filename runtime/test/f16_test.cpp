//===- f16_test.cpp - f16 (IEEE binary16) storage of fp16-mixed -----------===//
//
// zrt_f32_to_f16 / zrt_f16_to_f32 (f16_bits.h, shared with the CUDA
// kernels) against the compiler's _Float16 (GCC >= 12 on x86-64: IEEE
// binary16 with round-to-nearest-even conversions): every f16 value
// widens exactly and rounds back to itself, and f32 values around every
// rounding boundary, subnormals, overflow and NaN round as _Float16 does.
// Then the f16 kernels of the lowering (cast, fill, accumulate, sum of
// squares, AdamW's f16 gradient, the f16 shard AdamW).
//
//===----------------------------------------------------------------------===//

#include "test_util.h"

#include "driver/loss_scaler.h"

#include <cmath>
#include <cstring>
#include <vector>

namespace {

uint16_t bitsOf(_Float16 h) {
  uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}

float fromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

TEST(F16Test, EveryF16WidensExactlyAndRoundsBack) {
  for (uint32_t b = 0; b < 65536; ++b) {
    const uint16_t h = static_cast<uint16_t>(b);
    _Float16 ref;
    std::memcpy(&ref, &h, 2);
    const float wide = zrt_f16_to_f32(h);
    if (std::isnan(static_cast<float>(ref))) {
      EXPECT_TRUE(std::isnan(wide)) << b;
      EXPECT_EQ(zrt_f32_to_f16(wide) & 0x8000u, h & 0x8000u) << b;
      EXPECT_EQ(zrt_f32_to_f16(wide) & 0x7fffu, 0x7e00u) << b;
      continue;
    }
    EXPECT_EQ(wide, static_cast<float>(ref)) << b;
    EXPECT_EQ(zrt_f32_to_f16(wide), h) << b;
  }
}

TEST(F16Test, RoundingMatchesFloat16) {
  // Every f32 exponent from below the smallest subnormal to above the
  // overflow threshold, with mantissas at and around the f16 rounding
  // boundaries (ties, one ulp either side) and a strided sweep.
  int64_t checked = 0;
  for (uint32_t e = 90; e <= 145; ++e)
    for (uint32_t m = 0; m < (1u << 23); m += (m & 0x1fffu) == 0 ? 1 : 4099) {
      for (uint32_t d : {0u, 1u, 0xfffu, 0x1000u, 0x1001u, 0x1fffu}) {
        for (uint32_t sign : {0u, 0x80000000u}) {
          const float f = fromBits(sign | (e << 23) | ((m + d) & 0x7fffffu));
          const _Float16 ref = static_cast<_Float16>(f);
          ASSERT_EQ(zrt_f32_to_f16(f), bitsOf(ref))
              << "f = " << f << " (bits 0x" << std::hex
              << (sign | (e << 23) | ((m + d) & 0x7fffffu)) << ")";
          ++checked;
        }
      }
    }
  EXPECT_GT(checked, 1000000);
  // The limits: 65504 is the largest finite f16, 65520 rounds to Inf.
  EXPECT_EQ(zrt_f32_to_f16(65504.0f), 0x7bffu);
  EXPECT_EQ(zrt_f32_to_f16(65519.99f), 0x7bffu);
  EXPECT_EQ(zrt_f32_to_f16(65520.0f), 0x7c00u);
  EXPECT_EQ(zrt_f32_to_f16(-1e30f), 0xfc00u);
  EXPECT_EQ(zrt_f32_to_f16(INFINITY), 0x7c00u);
  EXPECT_EQ(zrt_f32_to_f16(std::ldexp(1.0f, -24)), 0x0001u);
  EXPECT_EQ(zrt_f32_to_f16(std::ldexp(1.0f, -25)), 0x0000u); // tie to even
  EXPECT_EQ(zrt_f32_to_f16(std::ldexp(1.5f, -25)), 0x0001u);
  EXPECT_EQ(zrt_f32_to_f16(-NAN) & 0x8000u, 0x8000u);
}

TEST(F16Test, KernelsRoundOncePerStore) {
  const std::vector<float> x = {1.0f, -2.5f, 1e-3f, 70000.0f, 65504.0f, 0.0f};
  std::vector<zrt_f16> h(x.size());
  ASSERT_EQ(zrt_cast_f32_to_f16(x.data(), h.data(), x.size()), ZRT_OK);
  std::vector<float> back(x.size());
  ASSERT_EQ(zrt_cast_f16_to_f32(h.data(), back.data(), x.size()), ZRT_OK);
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_EQ(back[i], static_cast<float>(static_cast<_Float16>(x[i]))) << i;
  EXPECT_TRUE(std::isinf(back[3])); // 70000 overflows
  // Accumulation: y = f16(f32(y) + f32(x)); 65504 + 65504 overflows.
  std::vector<zrt_f16> y(x.size());
  ASSERT_EQ(zrt_fill_f16(y.data(), 0.5f, y.size()), ZRT_OK);
  EXPECT_EQ(y[0], 0x3800u);
  ASSERT_EQ(zrt_accumulate_f16(h.data(), y.data(), y.size()), ZRT_OK);
  EXPECT_EQ(zrt_f16_to_f32(y[0]), 1.5f);
  EXPECT_EQ(zrt_f16_to_f32(y[2]),
            static_cast<float>(static_cast<_Float16>(
                0.5f + static_cast<float>(static_cast<_Float16>(1e-3f)))));
  zrt_f16 big = zrt_f32_to_f16(65504.0f), acc = big;
  ASSERT_EQ(zrt_accumulate_f16(&big, &acc, 1), ZRT_OK);
  EXPECT_EQ(acc, 0x7c00u);
  // The sum of squares sees the overflow (the loss scaler's check).
  float ss = 0.0f;
  ASSERT_EQ(zrt_sum_squares_f16(h.data(), h.size(), &ss), ZRT_OK);
  EXPECT_TRUE(std::isinf(ss));
  ASSERT_EQ(zrt_sum_squares_f16(h.data(), 3, &ss), ZRT_OK);
  double want = 0.0;
  for (int i = 0; i < 3; ++i)
    want += double(back[i]) * double(back[i]);
  EXPECT_EQ(ss, static_cast<float>(want));
  EXPECT_EQ(zrt_cast_f32_to_f16(nullptr, h.data(), 1), ZRT_ERR_INVALID_ARGUMENT);
}

TEST(F16Test, AdamwWithF16GradientEqualsWidenedF32) {
  const int64_t n = 37;
  std::vector<float> p(n), m(n, 0.01f), v(n, 0.02f), g(n);
  std::vector<zrt_f16> gh(n);
  for (int64_t i = 0; i < n; ++i) {
    p[i] = 0.1f * static_cast<float>(i % 7) - 0.3f;
    g[i] = 0.001f * static_cast<float>(i) - 0.01f;
    gh[i] = zrt_f32_to_f16(g[i]);
    g[i] = zrt_f16_to_f32(gh[i]);
  }
  std::vector<float> p2 = p, m2 = m, v2 = v, out(n);
  ASSERT_EQ(zrt_adamw_step(p.data(), m.data(), v.data(), g.data(), nullptr,
                           nullptr, n, 1e-3, 0.9, 0.999, 1e-8, 0.1, 0.5f, 3),
            ZRT_OK);
  ASSERT_EQ(zrt_adamw_step_f16_grad(p2.data(), m2.data(), v2.data(),
                                    gh.data(), out.data(), nullptr, n, 1e-3,
                                    0.9, 0.999, 1e-8, 0.1, 0.5f, 3),
            ZRT_OK);
  EXPECT_EQ(p, p2);
  EXPECT_EQ(m, m2);
  EXPECT_EQ(v, v2);
  EXPECT_EQ(out, p2);
  zrt_bf16 bf = 0;
  EXPECT_EQ(zrt_adamw_step_f16_grad(p2.data(), m2.data(), v2.data(),
                                    gh.data(), nullptr, &bf, 1, 1e-3, 0.9,
                                    0.999, 1e-8, 0.1, 0.5f, 3),
            ZRT_ERR_INVALID_ARGUMENT);
  // zrt_shard_adamw with ZRT_F16 gradients: the same update.
  std::vector<float> p3(n), m3(n, 0.01f), v3(n, 0.02f);
  for (int64_t i = 0; i < n; ++i)
    p3[i] = 0.1f * static_cast<float>(i % 7) - 0.3f;
  const int64_t offsets[] = {0}, numels[] = {n};
  const uint8_t decay[] = {1};
  ASSERT_EQ(zrt_shard_adamw(p3.data(), m3.data(), v3.data(), gh.data(),
                            ZRT_F16, n, 0, 1, offsets, numels, decay, 1e-3,
                            0.9, 0.999, 1e-8, 0.1, 0.5f, 3),
            ZRT_OK);
  EXPECT_EQ(p3, p);
}

TEST(LossScalerTest, GradScalerRule) {
  // torch.amp.GradScaler(init_scale=8, growth_factor=2, backoff_factor=0.5,
  // growth_interval=2): overflow halves and restarts the run of good
  // steps; two good steps in a row double.
  zrt::LossScaler s(8.0, 2);
  using O = zrt::LossScaler::Outcome;
  EXPECT_EQ(s.update(true), O::Applied);
  EXPECT_EQ(s.update(false), O::Skipped);
  EXPECT_EQ(s.scale(), 4.0);
  EXPECT_EQ(s.update(true), O::Applied);
  EXPECT_EQ(s.goodSteps(), 1);
  EXPECT_EQ(s.update(true), O::Grew);
  EXPECT_EQ(s.scale(), 8.0);
  EXPECT_EQ(s.goodSteps(), 0);
  // Below 2^-24: Underflow, the scale kept.
  zrt::LossScaler low(zrt::LossScaler::kMinScale, 2);
  EXPECT_EQ(low.update(false), O::Underflow);
  EXPECT_EQ(low.scale(), zrt::LossScaler::kMinScale);
  // Growth stops at 2^100 (S stays a finite float).
  zrt::LossScaler high(zrt::LossScaler::kMaxScale, 1);
  EXPECT_EQ(high.update(true), O::Applied);
  EXPECT_EQ(high.scale(), zrt::LossScaler::kMaxScale);
  EXPECT_TRUE(std::isfinite(static_cast<float>(high.scale())));
  high.restore(16.0, 0);
  EXPECT_EQ(high.update(true), O::Grew);
  EXPECT_EQ(high.scale(), 32.0);
}

} // namespace
