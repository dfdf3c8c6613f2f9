//===- optim_test.cpp - AdamW, gradient norm, clipping, bf16 ---------------===//

#include "test_util.h"

#include <cmath>
#include <limits>

using namespace zrt_test;

namespace {

constexpr int kN = 6;
const float kP0[kN] = {0.5f, -1.25f, 2.0f, 0.0f, 3.5e-3f, -0.75f};
const float kGrads[3][kN] = {
    {0.1f, -0.2f, 0.3f, -0.4f, 0.5f, 0.0f},
    {-0.3f, 0.25f, 0.05f, 1.5f, -0.125f, 0.01f},
    {0.7f, -0.6f, -0.2f, 0.1f, 0.0f, 2.0f},
};

// Expected values per step: param, exp_avg, exp_avg_sq, param as bf16 bits.
struct StepRef {
  float p[kN], m[kN], v[kN];
  uint16_t bf16[kN];
};

// Produced by runtime/test/gen_adamw_reference.py with PyTorch 1.13
// (torch.optim.AdamW(foreach=False)):
//   /usr/bin/python3 runtime/test/gen_adamw_reference.py
// Case A: lr=0.1, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1, no clipping.
const StepRef kCaseA[3] = {
    {{3.950000107e-01f, -1.137499928e+00f, 1.879999995e+00f, 1.000000089e-01f, -9.653500468e-02f, -7.425000072e-01f},
     {1.000000071e-02f, -2.000000142e-02f, 3.000000119e-02f, -4.000000283e-02f, 5.000000075e-02f, 0.000000000e+00f},
     {5.000000237e-04f, 2.000000095e-03f, 4.500000272e-03f, 8.000000380e-03f, 1.250000019e-02f, 0.000000000e+00f},
     {0x3eca, 0xbf92, 0x3ff1, 0x3dcd, 0xbdc6, 0xbf3e}},
    {{4.399795830e-01f, -1.142353535e+00f, 1.781918406e+00f, 4.493925720e-02f, -1.430462450e-01f, -8.085709214e-01f},
     {-2.100000158e-02f, 6.999999285e-03f, 3.200000152e-02f, 1.140000001e-01f, 3.249999881e-02f, 1.000000047e-03f},
     {4.975000396e-03f, 5.025000311e-03f, 4.399999976e-03f, 1.201000065e-01f, 1.265625004e-02f, 5.000000328e-06f},
     {0x3ee1, 0xbf92, 0x3fe4, 0x3d38, 0xbe12, 0xbf4f}},
    {{3.939251900e-01f, -1.081341028e+00f, 1.748499513e+00f, -1.863799989e-03f, -1.787898391e-01f, -8.630872369e-01f},
     {5.109999701e-02f, -5.370000377e-02f, 8.800000884e-03f, 1.125999987e-01f, 2.924999781e-02f, 2.009000033e-01f},
     {2.922624908e-02f, 2.277375199e-02f, 6.180000026e-03f, 1.145950034e-01f, 1.202343777e-02f, 2.000047565e-01f},
     {0x3eca, 0xbf8a, 0x3fe0, 0xbaf4, 0xbe37, 0xbf5d}},
};

// Case B: lr=0.01, betas=(0.8, 0.999), eps=1e-6, weight_decay=0.5, with
// torch.nn.utils.clip_grad_norm_([p], max_norm=0.5) before every step.
const float kCaseBNorms[3] = {7.416198850e-01f, 1.555867910e+00f,
                              2.213594437e+00f};
const StepRef kCaseB[3] = {
    {{4.875001609e-01f, -1.233750105e+00f, 1.980000019e+00f, 9.999961592e-03f, -6.517468952e-03f, -7.462500334e-01f},
     {1.348397881e-02f, -2.696795762e-02f, 4.045194015e-02f, -5.393591523e-02f, 6.741989404e-02f, 0.000000000e+00f},
     {4.545442152e-06f, 1.818176861e-05f, 4.090898437e-05f, 7.272707444e-05f, 1.136360515e-04f, 0.000000000e+00f},
     {0x3efa, 0xbf9e, 0x3ffd, 0x3c24, 0xbbd6, 0xbf3f}},
    {{4.878989160e-01f, -1.226203203e+00f, 1.963210583e+00f, 6.162559614e-03f, -1.179771591e-02f, -7.503700852e-01f},
     {-8.494648151e-03f, -5.506174639e-03f, 3.557519242e-02f, 5.326042324e-02f, 4.590182006e-02f, 6.427276530e-04f},
     {1.383562267e-05f, 2.461825716e-05f, 4.112626266e-05f, 3.050224914e-04f, 1.151360848e-04f, 1.032747132e-08f},
     {0x3efa, 0xbf9d, 0x3ffb, 0x3bca, 0xbc41, 0xbf40}},
    {{4.809894264e-01f, -1.214679122e+00f, 1.950076222e+00f, 3.105741227e-03f, -1.557980292e-02f, -7.537534237e-01f},
     {2.482704259e-02f, -3.151016310e-02f, 1.942507923e-02f, 4.712587595e-02f, 3.672145680e-02f, 9.086493403e-02f},
     {3.882176679e-05f, 4.296097177e-05f, 4.312595047e-05f, 3.052276734e-04f, 1.150209500e-04f, 2.040917607e-04f},
     {0x3ef6, 0xbf9b, 0x3ffa, 0x3b4c, 0xbc7f, 0xbf41}},
};

void expectStep(const float *p, const float *m, const float *v,
                const float *pf32, const uint16_t *pbf16, const StepRef &ref,
                int step) {
  for (int i = 0; i < kN; ++i) {
    SCOPED_TRACE("step " + std::to_string(step) + " element " +
                 std::to_string(i));
    EXPECT_NEAR(p[i], ref.p[i], 2e-6 * std::fabs(ref.p[i]) + 1e-8);
    EXPECT_NEAR(m[i], ref.m[i], 2e-6 * std::fabs(ref.m[i]) + 1e-9);
    EXPECT_NEAR(v[i], ref.v[i], 2e-6 * std::fabs(ref.v[i]) + 1e-12);
    EXPECT_EQ(pf32[i], p[i]);
    EXPECT_EQ(pbf16[i], zrt_f32_to_bf16(p[i])); // RNE copy of the master
    EXPECT_EQ(pbf16[i], ref.bf16[i]);            // and PyTorch's bf16 cast
  }
}

} // namespace

TEST(AdamWTest, MatchesPyTorchWithWeightDecay) {
  float p[kN], m[kN] = {}, v[kN] = {}, pf32[kN];
  uint16_t pbf16[kN];
  std::copy(kP0, kP0 + kN, p);
  for (int step = 1; step <= 3; ++step) {
    ASSERT_EQ(zrt_adamw_step(p, m, v, kGrads[step - 1], pf32, pbf16, kN, 0.1,
                             0.9, 0.95, 1e-8, 0.1, 1.0f, step),
              ZRT_OK);
    expectStep(p, m, v, pf32, pbf16, kCaseA[step - 1], step);
  }
}

TEST(AdamWTest, MatchesPyTorchWithGradClipping) {
  float p[kN], m[kN] = {}, v[kN] = {}, pf32[kN];
  uint16_t pbf16[kN];
  std::copy(kP0, kP0 + kN, p);
  for (int step = 1; step <= 3; ++step) {
    float ss = 0;
    ASSERT_EQ(zrt_sum_squares(kGrads[step - 1], kN, &ss), ZRT_OK);
    const float norm = std::sqrt(ss);
    EXPECT_NEAR(norm, kCaseBNorms[step - 1], 1e-6);
    const float coef = zrt_clip_coef(norm, 0.5f);
    EXPECT_LT(coef, 1.0f);
    ASSERT_EQ(zrt_adamw_step(p, m, v, kGrads[step - 1], pf32, pbf16, kN, 0.01,
                             0.8, 0.999, 1e-6, 0.5, coef, step),
              ZRT_OK);
    expectStep(p, m, v, pf32, pbf16, kCaseB[step - 1], step);
  }
}

TEST(AdamWTest, Bf16GradientEqualsWidenedF32Gradient) {
  const int n = 1000;
  auto g = randomVec(n, 7);
  std::vector<uint16_t> gb(n);
  ASSERT_EQ(zrt_cast_f32_to_bf16(g.data(), gb.data(), n), ZRT_OK);
  std::vector<float> gw(n);
  ASSERT_EQ(zrt_cast_bf16_to_f32(gb.data(), gw.data(), n), ZRT_OK);
  auto p1 = randomVec(n, 8), p2 = p1;
  std::vector<float> m1(n), v1(n), m2(n), v2(n);
  for (int step = 1; step <= 2; ++step) {
    ASSERT_EQ(zrt_adamw_step(p1.data(), m1.data(), v1.data(), gw.data(),
                             nullptr, nullptr, n, 1e-3f, 0.9f, 0.95f, 1e-8f,
                             0.1f, 0.5f, step),
              ZRT_OK);
    ASSERT_EQ(zrt_adamw_step_bf16_grad(p2.data(), m2.data(), v2.data(),
                                       gb.data(), nullptr, nullptr, n, 1e-3f,
                                       0.9f, 0.95f, 1e-8f, 0.1f, 0.5f, step),
              ZRT_OK);
  }
  EXPECT_EQ(p1, p2);
  EXPECT_EQ(m1, m2);
  EXPECT_EQ(v1, v2);
}

TEST(AdamWTest, RejectsStepZeroWithoutWriting) {
  float p = 1.0f, m = 0.0f, v = 0.0f, g = 1.0f;
  EXPECT_EQ(zrt_adamw_step(&p, &m, &v, &g, nullptr, nullptr, 1, 0.1f, 0.9f,
                           0.99f, 1e-8f, 0.0f, 1.0f, 0),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zrt_last_error()).find("step"), std::string::npos);
  EXPECT_EQ(p, 1.0f);
  EXPECT_EQ(zrt_adamw_step(&p, &m, nullptr, &g, nullptr, nullptr, 1, 0.1f,
                           0.9f, 0.99f, 1e-8f, 0.0f, 1.0f, 1),
            ZRT_ERR_INVALID_ARGUMENT);
}

TEST(GradNormTest, SumSquaresAndClipCoef) {
  std::vector<float> x = {3.0f, -4.0f, 12.0f};
  float ss = 0;
  ASSERT_EQ(zrt_sum_squares(x.data(), 3, &ss), ZRT_OK);
  EXPECT_EQ(ss, 169.0f);
  std::vector<uint16_t> xb(3);
  zrt_cast_f32_to_bf16(x.data(), xb.data(), 3);
  ASSERT_EQ(zrt_sum_squares_bf16(xb.data(), 3, &ss), ZRT_OK);
  EXPECT_EQ(ss, 169.0f);
  // Large n: double accumulation keeps integer sums exact.
  std::vector<float> ones(1 << 20, 1.0f);
  ASSERT_EQ(zrt_sum_squares(ones.data(), ones.size(), &ss), ZRT_OK);
  EXPECT_EQ(ss, float(1 << 20));
  EXPECT_EQ(zrt_clip_coef(0.5f, 1.0f), 1.0f);
  EXPECT_FLOAT_EQ(zrt_clip_coef(13.0f, 1.0f), 1.0f / (13.0f + 1e-6f));
  EXPECT_EQ(zrt_sum_squares(x.data(), 3, nullptr), ZRT_ERR_INVALID_ARGUMENT);
}

//===----------------------------------------------------------------------===//
// bf16
//===----------------------------------------------------------------------===//

TEST(Bf16Test, RoundToNearestEven) {
  struct Case {
    uint32_t in;
    uint16_t out;
  } cases[] = {
      {0x3f800000u, 0x3f80}, // 1.0 exact
      {0x3f808000u, 0x3f80}, // tie, even (lsb 0) stays
      {0x3f818000u, 0x3f82}, // tie, odd (lsb 1) rounds up to even
      {0x3f808001u, 0x3f81}, // above half rounds up
      {0x3f807fffu, 0x3f80}, // below half rounds down
      {0xbf818000u, 0xbf82}, // negative tie to even
      {0x7f7fffffu, 0x7f80}, // FLT_MAX overflows to +Inf
      {0x7f800000u, 0x7f80}, // +Inf
      {0xff800000u, 0xff80}, // -Inf
      {0x00008000u, 0x0000}, // subnormal tie to even (0)
      {0x00018000u, 0x0002}, // subnormal tie to even (2)
      {0x80000000u, 0x8000}, // -0
      {0x3fffffffu, 0x4000}, // carry into the exponent
  };
  for (const Case &c : cases)
    EXPECT_EQ(zrt_f32_to_bf16(fromBits(c.in)), c.out)
        << std::hex << "input 0x" << c.in;
}

TEST(Bf16Test, NaNStaysNaN) {
  // A NaN whose payload sits only in the dropped bits must not become Inf.
  for (uint32_t in : {0x7f800001u, 0xff800001u, 0x7fc00000u, 0x7f80ffffu}) {
    const uint16_t h = zrt_f32_to_bf16(fromBits(in));
    EXPECT_TRUE(std::isnan(zrt_bf16_to_f32(h))) << std::hex << in;
    EXPECT_EQ(h & 0x8000, (in >> 16) & 0x8000); // sign kept
  }
}

TEST(Bf16Test, ArrayCastsRoundTrip) {
  auto x = randomVec(100000, 3, -100, 100);
  std::vector<uint16_t> h(x.size());
  std::vector<float> back(x.size());
  ASSERT_EQ(zrt_cast_f32_to_bf16(x.data(), h.data(), x.size()), ZRT_OK);
  ASSERT_EQ(zrt_cast_bf16_to_f32(h.data(), back.data(), x.size()), ZRT_OK);
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(h[i], zrt_f32_to_bf16(x[i]));
    ASSERT_EQ(bitsOf(back[i]), uint32_t(h[i]) << 16);
    ASSERT_LE(std::fabs(back[i] - x[i]), std::fabs(x[i]) * (1.0f / 256));
  }
  EXPECT_EQ(zrt_cast_f32_to_bf16(nullptr, h.data(), 1),
            ZRT_ERR_INVALID_ARGUMENT);
}
