//===- cuda_f16_test.cpp - CUDA f16 kernels of fp16-mixed against the CPU -===//
//
// zrt_cuda's cast_f32_to_f16 / cast_f16_to_f32, fill_f16, accumulate_f16,
// sum_squares_f16, adamw_step_f16_grad and shard_adamw with ZRT_F16
// gradients against the CPU runtime's zrt_* on the same inputs: the
// conversions bit for bit (one shared implementation, src/f16_bits.h),
// including overflow to Inf, subnormals and NaN; AdamW within the ulps of
// the f32 kernel (cuda_optimizer_test.cpp).
//
//===----------------------------------------------------------------------===//

#include "cuda_test_util.h"

#include <cmath>
#include <string>

namespace {

using namespace zrt_cuda_test;

/// f32 values that exercise every f16 case: normal, subnormal, underflow
/// to zero, ties, the largest finite, overflow, Inf, NaN, signed zeros.
std::vector<float> f16Cases(int64_t n) {
  std::vector<float> v = randomVec(n, 901, -70000.0f, 70000.0f);
  const float special[] = {0.0f,        -0.0f,      65504.0f, 65519.0f,
                           65520.0f,    -65520.0f,  1e-5f,    6e-8f,
                           2.9802322e-8f, 1e-9f,    INFINITY, -INFINITY,
                           NAN,         1.0009766f, 1.0004883f, -3.0e-5f};
  for (size_t i = 0; i < sizeof special / sizeof *special && i < v.size(); ++i)
    v[i] = special[i];
  for (size_t i = 16; i < v.size(); i += 3)
    v[i] *= 1e-6f; // small and subnormal magnitudes
  return v;
}

TEST_F(CudaKernels, F16CastsFillAndAccumulateMatchCpu) {
  for (int64_t n : {1, 17, 1000, 70001}) {
    const std::string what = "n=" + std::to_string(n);
    const std::vector<float> x = f16Cases(n);
    std::vector<zrt_f16> ref(x.size());
    ASSERT_EQ(zrt_cast_f32_to_f16(x.data(), ref.data(), n), ZRT_OK);
    zrt_f16 *dH = devOf(std::vector<zrt_f16>(x.size()));
    ASSERT_EQ(zrt_cuda::cast_f32_to_f16(dev(x), dH, n), ZRT_OK)
        << zrt_cuda::last_error();
    const std::vector<zrt_f16> got = hostOf(dH, n);
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(got[i], ref[i]) << what << " at " << i << ": " << x[i];
    std::vector<float> wideRef(x.size());
    ASSERT_EQ(zrt_cast_f16_to_f32(ref.data(), wideRef.data(), n), ZRT_OK);
    float *dW = dev(n);
    ASSERT_EQ(zrt_cuda::cast_f16_to_f32(dH, dW, n), ZRT_OK);
    expectSameBits(wideRef, host(dW, n), "widen " + what);
    // y = f16(y + x) over the cases, from a fill of 0.75.
    std::vector<zrt_f16> y(x.size());
    ASSERT_EQ(zrt_fill_f16(y.data(), 0.75f, n), ZRT_OK);
    zrt_f16 *dY = devOf(std::vector<zrt_f16>(x.size()));
    ASSERT_EQ(zrt_cuda::fill_f16(dY, 0.75f, n), ZRT_OK);
    ASSERT_EQ(hostOf(dY, n), y) << what;
    ASSERT_EQ(zrt_accumulate_f16(ref.data(), y.data(), n), ZRT_OK);
    ASSERT_EQ(zrt_cuda::accumulate_f16(dH, dY, n), ZRT_OK);
    const std::vector<zrt_f16> gotY = hostOf(dY, n);
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(gotY[i], y[i]) << what << " at " << i;
    zrt_cuda::arena_reset(arena_);
  }
}

TEST_F(CudaKernels, F16SumSquaresAndAdamwMatchCpu) {
  const int64_t n = 70001;
  std::vector<float> g = randomVec(n, 907, -2.0f, 2.0f);
  std::vector<zrt_f16> gh(g.size());
  ASSERT_EQ(zrt_cast_f32_to_f16(g.data(), gh.data(), n), ZRT_OK);
  float ref = -1.0f;
  ASSERT_EQ(zrt_sum_squares_f16(gh.data(), n, &ref), ZRT_OK);
  zrt_f16 *dG = devOf(gh);
  float *dOut = dev(std::vector<float>{-1.0f, -1.0f});
  ASSERT_EQ(zrt_cuda::sum_squares_f16(dG, n, dOut), ZRT_OK)
      << zrt_cuda::last_error();
  // Both sums are in double: at most one rounding of the f32 apart.
  EXPECT_NEAR(host(dOut, 1)[0], ref, std::fabs(ref) * 1.2e-7f);
  // One Inf gradient makes the sum non-finite (the overflow check).
  std::vector<zrt_f16> bad = gh;
  bad[n / 2] = 0x7c00u;
  ASSERT_EQ(zrt_cuda::sum_squares_f16(devOf(bad), n, dOut + 1), ZRT_OK);
  EXPECT_TRUE(std::isinf(host(dOut, 2)[1]));

  // AdamW on the f16 gradient, whole and as a two-member shard.
  std::vector<float> p = randomVec(n, 911), m(g.size(), 0.01f),
                     v(g.size(), 0.02f);
  float *dP = dev(p), *dM = dev(m), *dV = dev(v);
  ASSERT_EQ(zrt_adamw_step_f16_grad(p.data(), m.data(), v.data(), gh.data(),
                                    nullptr, nullptr, n, 1e-3, 0.9, 0.95,
                                    1e-8, 0.1, 0.25f, 2),
            ZRT_OK);
  ASSERT_EQ(zrt_cuda::adamw_step_f16_grad(dP, dM, dV, dG, nullptr, nullptr, n,
                                          1e-3, 0.9, 0.95, 1e-8, 0.1, 0.25f,
                                          2),
            ZRT_OK)
      << zrt_cuda::last_error();
  const std::vector<float> gotP = host(dP, n);
  for (int64_t i = 0; i < n; ++i)
    ASSERT_NEAR(gotP[i], p[i], 2e-6f * (std::fabs(p[i]) + 1e-3f)) << i;
  const int64_t offsets[] = {0, 30000}, numels[] = {30000, n - 30000};
  const uint8_t decay[] = {1, 0};
  ASSERT_EQ(zrt_shard_adamw(p.data(), m.data(), v.data(), gh.data(), ZRT_F16,
                            n, 0, 2, offsets, numels, decay, 1e-3, 0.9, 0.95,
                            1e-8, 0.1, 0.25f, 3),
            ZRT_OK);
  ASSERT_EQ(zrt_cuda::copy_to_device(dP, gotP.data(), n * 4), ZRT_OK);
  ASSERT_EQ(zrt_cuda::shard_adamw(dP, dM, dV, dG, ZRT_F16, n, 0, 2, offsets,
                                  numels, decay, 1e-3, 0.9, 0.95, 1e-8, 0.1,
                                  0.25f, 3),
            ZRT_OK)
      << zrt_cuda::last_error();
  const std::vector<float> gotS = host(dP, n);
  for (int64_t i = 0; i < n; ++i)
    ASSERT_NEAR(gotS[i], p[i], 4e-6f * (std::fabs(p[i]) + 1e-3f)) << i;
}

} // namespace
