//===- cuda_optimizer_test.cpp - CUDA AdamW, norms, clipping, init --------===//
//
// zrt_cuda's adamw_step(_bf16_grad), shard_adamw, sum_squares(_bf16),
// clip_coef_scaled and the initializers (init_normal, init_uniform,
// init_param_slice) against the CPU runtime's zrt_* on the same inputs:
// AdamW within a couple of ulp, clipping and initialization bit for bit.
// The argument checks run without a device.
//
//===----------------------------------------------------------------------===//

#include "cuda_test_util.h"

#include "../../src/common/shard_runs.h"

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

namespace {

using namespace zrt_cuda_test;

/// Distance in ulps between two finite floats (0 for equal values,
/// including +0 and -0).
int64_t ulpDistance(float a, float b) {
  auto ordered = [](float f) {
    int32_t i;
    std::memcpy(&i, &f, sizeof i);
    return i < 0 ? -static_cast<int64_t>(i & 0x7fffffff) : int64_t(i);
  };
  return std::llabs(ordered(a) - ordered(b));
}

/// Every element of got within maxUlp ulps of ref, or within absTol[i]
/// of it when absTol is not empty. Differences are reported on stdout even
/// when within tolerance (AdamW is bit-identical on an FMA host).
void expectUlps(const std::vector<float> &ref, const std::vector<float> &got,
                int64_t maxUlp, const std::string &what,
                const std::vector<float> &absTol = {}) {
  ASSERT_EQ(ref.size(), got.size()) << what;
  int64_t worst = 0, differ = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const int64_t d = ulpDistance(ref[i], got[i]);
    if (d == 0)
      continue;
    ++differ;
    worst = d > worst ? d : worst;
    if (d <= maxUlp)
      continue;
    const float tol = absTol.empty() ? 0.0f : absTol[i];
    ASSERT_LE(std::fabs(ref[i] - got[i]), tol)
        << what << " at " << i << ": expected " << ref[i] << ", got " << got[i]
        << " (" << d << " ulp)";
  }
  if (differ > 0)
    std::printf("note: %s: %lld of %zu elements differ from the CPU, worst "
                "%lld ulp\n",
                what.c_str(), (long long)differ, ref.size(), (long long)worst);
}

std::vector<zrt_bf16> toBf16Vec(const std::vector<float> &v) {
  std::vector<zrt_bf16> out(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    out[i] = zrt_f32_to_bf16(v[i]);
  return out;
}

/// AdamW hyperparameters of the tests (GPT-2-like).
constexpr double kLr = 6e-4, kBeta1 = 0.9, kBeta2 = 0.95, kEps = 1e-8,
                 kWd = 0.1;
constexpr float kGradScale = 0.5f;

/// Tolerances of one AdamW step beyond a few ulp, from m before the step
/// and the f32 gradient g: where m's two terms m * b1 and (1 - b1) * g
/// cancel, a CPU build that rounds them differently (FMA or not) differs
/// by an ulp of the larger term, not of the result; param then by a tiny
/// fraction of lr.
struct AdamwTol {
  std::vector<float> m, p;
};
AdamwTol adamwTol(const std::vector<float> &mPrev,
                  const std::vector<float> &g) {
  AdamwTol t;
  t.p.assign(mPrev.size(), static_cast<float>(1e-5 * kLr));
  t.m.resize(mPrev.size());
  for (size_t i = 0; i < mPrev.size(); ++i)
    t.m[i] = std::ldexp(1.0f, -22) *
             (std::fabs(mPrev[i] * static_cast<float>(kBeta1)) +
              std::fabs(static_cast<float>(1.0 - kBeta1) * g[i] * kGradScale));
  return t;
}

//===----------------------------------------------------------------------===//
// AdamW
//===----------------------------------------------------------------------===//

TEST_F(CudaKernels, AdamwStepMatchesCpu) {
  for (int bf16Grad = 0; bf16Grad < 2; ++bf16Grad)
    for (int64_t n : {1, 7, 1000, 70001}) {
      const std::string what =
          std::string(bf16Grad ? "bf16 grad" : "f32 grad") +
          " n=" + std::to_string(n);
      std::vector<float> p = randomVec(n, 70), m(static_cast<size_t>(n)),
                         v(m.size());
      float *dP = dev(p), *dM = dev(m), *dV = dev(v);
      float *dOutF32 = dev(n);
      zrt_bf16 *dOutBf16 = devOf(std::vector<zrt_bf16>(m.size()));
      for (int64_t step = 1; step <= 3; ++step) {
        auto g = randomVec(n, static_cast<uint32_t>(71 + step), -2.0f, 2.0f);
        if (n > 3) {
          g[0] = 0.0f;
          g[1] = 1e-30f; // squares underflow
          g[2] = 300.0f;
        }
        const auto gb = toBf16Vec(g);
        const double wd = step == 2 ? 0.0 : kWd;
        std::vector<float> gUsed = g; // the f32 values the step reads
        if (bf16Grad)
          for (size_t i = 0; i < gUsed.size(); ++i)
            gUsed[i] = zrt_bf16_to_f32(gb[i]);
        const AdamwTol tol = adamwTol(m, gUsed);
        // The CPU's step on the host copies.
        if (bf16Grad)
          ASSERT_EQ(zrt_adamw_step_bf16_grad(p.data(), m.data(), v.data(),
                                             gb.data(), nullptr, nullptr, n,
                                             kLr, kBeta1, kBeta2, kEps, wd,
                                             kGradScale, step),
                    ZRT_OK);
        else
          ASSERT_EQ(zrt_adamw_step(p.data(), m.data(), v.data(), g.data(),
                                   nullptr, nullptr, n, kLr, kBeta1, kBeta2,
                                   kEps, wd, kGradScale, step),
                    ZRT_OK);
        // The same step on the device (outputs only on steps 1 and 3).
        float *outF32 = step != 2 ? dOutF32 : nullptr;
        zrt_bf16 *outBf16 = step != 2 ? dOutBf16 : nullptr;
        if (bf16Grad)
          ASSERT_EQ(zrt_cuda::adamw_step_bf16_grad(
                        dP, dM, dV, devOf(gb), outF32, outBf16, n, kLr, kBeta1,
                        kBeta2, kEps, wd, kGradScale, step),
                    ZRT_OK)
              << zrt_cuda::last_error();
        else
          ASSERT_EQ(zrt_cuda::adamw_step(dP, dM, dV, dev(g), outF32, outBf16, n,
                                         kLr, kBeta1, kBeta2, kEps, wd,
                                         kGradScale, step),
                    ZRT_OK)
              << zrt_cuda::last_error();
        const auto gotP = host(dP, n);
        const std::string at = what + " step=" + std::to_string(step);
        // Bit-identical on an FMA host (see optimizer.cu adamwElement),
        // a couple of ulp otherwise.
        expectUlps(p, gotP, 2, "param " + at, tol.p);
        expectUlps(m, host(dM, n), 2, "m " + at, tol.m);
        expectUlps(v, host(dV, n), 2, "v " + at);
        if (step != 2) {
          expectSameBits(gotP, host(dOutF32, n), "out_f32 " + at);
          expectSameBits(toBf16Vec(gotP), hostOf(dOutBf16, n),
                         "out_bf16 " + at);
        }
        // Keep the two runs on the same state: continue from the CPU's.
        ASSERT_EQ(zrt_cuda::copy_to_device(dP, p.data(), n * 4), ZRT_OK);
        ASSERT_EQ(zrt_cuda::copy_to_device(dM, m.data(), n * 4), ZRT_OK);
        ASSERT_EQ(zrt_cuda::copy_to_device(dV, v.data(), n * 4), ZRT_OK);
      }
      zrt_cuda::arena_reset(arena_);
    }
}

TEST_F(CudaKernels, ShardAdamwMatchesCpu) {
  // A group of 4 members with a gap (padding) between members 1 and 2 and
  // after the last, split over 3 ranks of shard 16 (48 elements in all).
  const int64_t offsets[] = {0, 10, 25, 40};
  const int64_t numels[] = {10, 12, 15, 3};
  const uint8_t decay[] = {1, 0, 1, 1};
  const int64_t shard = 16;
  for (int bf16Grad = 0; bf16Grad < 2; ++bf16Grad)
    for (int rank = 0; rank < 3; ++rank) {
      const std::string what = std::string(bf16Grad ? "bf16" : "f32") +
                               " rank=" + std::to_string(rank);
      std::vector<float> p = randomVec(shard, 80 + rank),
                         m = randomVec(shard, 90 + rank, 0.0f, 0.1f),
                         v = randomVec(shard, 100 + rank, 0.0f, 0.01f);
      const auto g = randomVec(shard, 110 + rank);
      const auto gb = toBf16Vec(g);
      float *dP = dev(p), *dM = dev(m), *dV = dev(v);
      const void *dG = bf16Grad ? static_cast<const void *>(devOf(gb))
                                : static_cast<const void *>(dev(g));
      const void *hG = bf16Grad ? static_cast<const void *>(gb.data())
                                : static_cast<const void *>(g.data());
      const int dtype = bf16Grad ? ZRT_BF16 : ZRT_F32;
      std::vector<float> gUsed = g; // the f32 values the step reads
      if (bf16Grad)
        for (size_t i = 0; i < gUsed.size(); ++i)
          gUsed[i] = zrt_bf16_to_f32(gb[i]);
      for (int64_t step = 4; step <= 5; ++step) {
        const AdamwTol tol = adamwTol(m, gUsed);
        ASSERT_EQ(zrt_shard_adamw(p.data(), m.data(), v.data(), hG, dtype,
                                  shard, rank, 4, offsets, numels, decay, kLr,
                                  kBeta1, kBeta2, kEps, kWd, kGradScale, step),
                  ZRT_OK);
        ASSERT_EQ(zrt_cuda::shard_adamw(dP, dM, dV, dG, dtype, shard, rank, 4,
                                        offsets, numels, decay, kLr, kBeta1,
                                        kBeta2, kEps, kWd, kGradScale, step),
                  ZRT_OK)
            << zrt_cuda::last_error();
        const std::string at = what + " step=" + std::to_string(step);
        expectUlps(p, host(dP, shard), 2, "param " + at, tol.p);
        expectUlps(m, host(dM, shard), 2, "m " + at, tol.m);
        expectUlps(v, host(dV, shard), 2, "v " + at);
        // Continue both from the CPU's state.
        ASSERT_EQ(zrt_cuda::copy_to_device(dP, p.data(), shard * 4), ZRT_OK);
        ASSERT_EQ(zrt_cuda::copy_to_device(dM, m.data(), shard * 4), ZRT_OK);
        ASSERT_EQ(zrt_cuda::copy_to_device(dV, v.data(), shard * 4), ZRT_OK);
      }
      zrt_cuda::arena_reset(arena_);
    }
  // No members: the whole slice is padding (no decay); shard 0: nothing.
  std::vector<float> p = randomVec(8, 120), m(8, 0.0f), v(8, 0.0f);
  const auto g = randomVec(8, 121);
  float *dP = dev(p), *dM = dev(m), *dV = dev(v), *dG = dev(g);
  ASSERT_EQ(zrt_shard_adamw(p.data(), m.data(), v.data(), g.data(), ZRT_F32, 8,
                            1, 0, nullptr, nullptr, nullptr, kLr, kBeta1,
                            kBeta2, kEps, kWd, kGradScale, 1),
            ZRT_OK);
  ASSERT_EQ(zrt_cuda::shard_adamw(dP, dM, dV, dG, ZRT_F32, 8, 1, 0, nullptr,
                                  nullptr, nullptr, kLr, kBeta1, kBeta2, kEps,
                                  kWd, kGradScale, 1),
            ZRT_OK);
  expectUlps(p, host(dP, 8), 2, "no members",
             adamwTol(std::vector<float>(8, 0.0f), g).p);
  EXPECT_EQ(zrt_cuda::shard_adamw(nullptr, nullptr, nullptr, nullptr, ZRT_F32,
                                  0, 2, 4, offsets, numels, decay, kLr, kBeta1,
                                  kBeta2, kEps, kWd, kGradScale, 1),
            ZRT_OK);
}

TEST_F(CudaKernels, ShardAdamwInFewLaunchesMatchesOneStepPerRun) {
  // A multi-tensor AdamW: 300 members of 1 to 40 elements with gaps between
  // some, decay flags alternating (about 150 runs of equal decay per rank:
  // more than one launch's table of 128), sliced over 2 ranks. zrt_shard_adamw launches a kernel per table
  // of runs; the reference is zrt_adamw_step on each run of the same
  // slice, as the backend did before: bit for bit.
  const int members = 300;
  std::vector<int64_t> offsets, numels;
  std::vector<uint8_t> decay;
  std::mt19937 gen(7);
  int64_t total = 0;
  for (int i = 0; i < members; ++i) {
    total += gen() % 4 == 0 ? static_cast<int64_t>(gen() % 3) : 0; // gap
    offsets.push_back(total);
    numels.push_back(1 + static_cast<int64_t>(gen() % 40));
    decay.push_back(static_cast<uint8_t>(i % 2));
    total += numels.back();
  }
  const int64_t shard = (total + 1) / 2;
  for (int bf16Grad = 0; bf16Grad < 2; ++bf16Grad)
    for (int rank = 0; rank < 2; ++rank) {
      const std::string what = std::string(bf16Grad ? "bf16" : "f32") +
                               " rank=" + std::to_string(rank);
      const auto p = randomVec(shard, 140 + rank),
                 m = randomVec(shard, 150 + rank, 0.0f, 0.1f),
                 v = randomVec(shard, 160 + rank, 0.0f, 0.01f),
                 g = randomVec(shard, 170 + rank);
      const auto gb = toBf16Vec(g);
      const int dtype = bf16Grad ? ZRT_BF16 : ZRT_F32;
      float *aP = dev(p), *aM = dev(m), *aV = dev(v);
      float *bP = dev(p), *bM = dev(m), *bV = dev(v);
      const void *dG = bf16Grad ? static_cast<const void *>(devOf(gb))
                                : static_cast<const void *>(dev(g));
      for (int64_t step = 1; step <= 2; ++step) {
        ASSERT_EQ(zrt_cuda::shard_adamw(aP, aM, aV, dG, dtype, shard, rank,
                                        members, offsets.data(),
                                        numels.data(), decay.data(), kLr,
                                        kBeta1, kBeta2, kEps, kWd, kGradScale,
                                        step),
                  ZRT_OK)
            << zrt_cuda::last_error();
        const int64_t begin = rank * shard;
        int runs = 0; // maximal runs of equal decay
        int lastDecayed = -1;
        ASSERT_EQ(
            zrt::forEachShardRun(
                shard, rank, members, offsets.data(), numels.data(),
                decay.data(), kWd,
                [&](int64_t lo, int64_t hi, double wd) -> int {
                  if (hi <= lo)
                    return ZRT_OK;
                  runs += (wd != 0.0) != lastDecayed;
                  lastDecayed = wd != 0.0;
                  const int64_t o = lo - begin;
                  return bf16Grad
                             ? zrt_cuda::adamw_step_bf16_grad(
                                   bP + o, bM + o, bV + o,
                                   static_cast<const zrt_bf16 *>(dG) + o,
                                   nullptr, nullptr, hi - lo, kLr, kBeta1,
                                   kBeta2, kEps, wd, kGradScale, step)
                             : zrt_cuda::adamw_step(
                                   bP + o, bM + o, bV + o,
                                   static_cast<const float *>(dG) + o,
                                   nullptr, nullptr, hi - lo, kLr, kBeta1,
                                   kBeta2, kEps, wd, kGradScale, step);
                }),
            ZRT_OK);
        EXPECT_GT(runs, 128) << what; // more than one launch's table
        const std::string at = what + " step=" + std::to_string(step);
        expectSameBits(host(bP, shard), host(aP, shard), "param " + at);
        expectSameBits(host(bM, shard), host(aM, shard), "m " + at);
        expectSameBits(host(bV, shard), host(aV, shard), "v " + at);
      }
      zrt_cuda::arena_reset(arena_);
    }
}

//===----------------------------------------------------------------------===//
// Norms and clipping
//===----------------------------------------------------------------------===//

TEST_F(CudaKernels, SumSquares) {
  for (int64_t n : {0, 1, 7, 1000, 70001, 3 << 20}) {
    const std::string what = "n=" + std::to_string(n);
    const auto x = randomVec(n, 130, -3.0f, 3.0f);
    const auto xb = toBf16Vec(x);
    float ref = -1.0f, refB = -1.0f;
    ASSERT_EQ(zrt_sum_squares(x.data(), n, &ref), ZRT_OK);
    ASSERT_EQ(zrt_sum_squares_bf16(xb.data(), n, &refB), ZRT_OK);
    float *dOut = dev(std::vector<float>{-1.0f, -1.0f});
    ASSERT_EQ(zrt_cuda::sum_squares(dev(x), n, dOut), ZRT_OK)
        << zrt_cuda::last_error();
    ASSERT_EQ(zrt_cuda::sum_squares_bf16(devOf(xb), n, dOut + 1), ZRT_OK)
        << zrt_cuda::last_error();
    const auto got = host(dOut, 2);
    // Both sums are in double: at most one rounding of the f32 apart.
    EXPECT_LE(ulpDistance(ref, got[0]), 1)
        << what << ": " << ref << " vs " << got[0];
    EXPECT_LE(ulpDistance(refB, got[1]), 1)
        << what << ": " << refB << " vs " << got[1];
    zrt_cuda::arena_reset(arena_);
  }
}

TEST_F(CudaKernels, ClipCoefScaled) {
  struct Case {
    float ss, scale, maxNorm;
  };
  const Case cases[] = {{4.0f, 1.0f, 1.0f},
                        {4.0f, 0.5f, 10.0f},
                        {0.0f, 1.0f, 1.0f},
                        {1e6f, 0.25f, 1.0f},
                        {2.0f, 1.0f, 0.0f},
                        {2.0f, 0.125f, -1.0f},
                        {3.7e-3f, 1.0f / 24.0f, 1.0f},
                        {1e30f, 1.0f, 1.0f}};
  for (const Case &c : cases) {
    float refCoef = 0.0f, refNorm = 0.0f;
    ASSERT_EQ(
        zrt_clip_coef_scaled(&c.ss, &c.scale, c.maxNorm, &refCoef, &refNorm),
        ZRT_OK);
    float *in = dev(std::vector<float>{c.ss, c.scale});
    float *out = dev(2);
    ASSERT_EQ(zrt_cuda::clip_coef_scaled(in, in + 1, c.maxNorm, out, out + 1),
              ZRT_OK)
        << zrt_cuda::last_error();
    // Separately rounded IEEE operations: bit-identical.
    expectSameBits(std::vector<float>{refCoef, refNorm}, host(out, 2),
                   "ss=" + std::to_string(c.ss) +
                       " scale=" + std::to_string(c.scale) +
                       " max_norm=" + std::to_string(c.maxNorm));
  }
}

//===----------------------------------------------------------------------===//
// Initialization: bit-identical to the CPU
//===----------------------------------------------------------------------===//

TEST_F(CudaKernels, InitNormalAndUniform) {
  for (int64_t n : {0, 1, 1000, 70001})
    for (int64_t offset : {int64_t(0), int64_t(12345), int64_t(1) << 33}) {
      const std::string what =
          "n=" + std::to_string(n) + " offset=" + std::to_string(offset);
      std::vector<float> refN(static_cast<size_t>(n)), refU(refN.size());
      ASSERT_EQ(zrt_init_normal(refN.data(), n, 0.25f, 0.02f, 1234, offset),
                ZRT_OK);
      ASSERT_EQ(zrt_init_uniform(refU.data(), n, -0.1f, 0.3f, 99, offset),
                ZRT_OK);
      float *dN = dev(n), *dU = dev(n);
      ASSERT_EQ(zrt_cuda::init_normal(n ? dN : nullptr, n, 0.25f, 0.02f, 1234,
                                      offset),
                ZRT_OK)
          << zrt_cuda::last_error();
      ASSERT_EQ(
          zrt_cuda::init_uniform(n ? dU : nullptr, n, -0.1f, 0.3f, 99, offset),
          ZRT_OK)
          << zrt_cuda::last_error();
      expectSameBits(refN, host(dN, n), "init_normal " + what);
      expectSameBits(refU, host(dU, n), "init_uniform " + what);
      zrt_cuda::arena_reset(arena_);
    }
  // A degenerate uniform range (every value is low).
  std::vector<float> ref(100);
  ASSERT_EQ(zrt_init_uniform(ref.data(), 100, 2.0f, 2.0f, 5, 0), ZRT_OK);
  float *d = dev(100);
  ASSERT_EQ(zrt_cuda::init_uniform(d, 100, 2.0f, 2.0f, 5, 0), ZRT_OK);
  expectSameBits(ref, host(d, 100), "low == high");
}

TEST_F(CudaKernels, InitAcrossStagingChunks) {
  // More elements than one staging chunk (16M): two copies. Its own arena,
  // as the fixture's holds 64 MiB.
  const int64_t n = (int64_t(16) << 20) + 5;
  zrt_arena big = nullptr;
  ASSERT_EQ(zrt_cuda::arena_create(n * 4, ZRT_MEM_PARAMETERS, &big), ZRT_OK);
  float *d = static_cast<float *>(zrt_cuda::arena_base(big));
  std::vector<float> ref(static_cast<size_t>(n));
  ASSERT_EQ(zrt_init_uniform(ref.data(), n, -1.0f, 1.0f, 7, 3), ZRT_OK);
  const int64_t allocs = zrt_cuda::heap_allocations();
  ASSERT_EQ(zrt_cuda::init_uniform(d, n, -1.0f, 1.0f, 7, 3), ZRT_OK)
      << zrt_cuda::last_error();
  // One staging buffer per call, counted.
  EXPECT_EQ(zrt_cuda::heap_allocations(), allocs + 1);
  std::vector<float> got(static_cast<size_t>(n));
  ASSERT_EQ(zrt_cuda::copy_to_host(got.data(), d, n * 4), ZRT_OK);
  // Spot the chunk boundary, then everything.
  const size_t b = size_t(16) << 20;
  for (size_t i = b - 2; i < static_cast<size_t>(n); ++i)
    ASSERT_EQ(got[i], ref[i]) << "at " << i;
  EXPECT_TRUE(std::memcmp(got.data(), ref.data(), ref.size() * 4) == 0);
  zrt_cuda::arena_destroy(big);
}

TEST_F(CudaKernels, InitParamSlice) {
  struct Case {
    int64_t sliceBegin, sliceN, memberOffset, memberNumel;
  };
  const Case cases[] = {
      {0, 100, 0, 100},      // whole tensor
      {0, 64, 10, 30},       // member inside the slice
      {32, 32, 10, 30},      // member starts before the slice
      {50, 40, 60, 100},     // member runs past the slice
      {64, 32, 0, 64},       // no overlap (member before)
      {0, 16, 20, 5},        // no overlap (member after)
      {100, 5000, 0, 70001}, // a shard of a large member
  };
  for (int dtype : {ZRT_F32, ZRT_BF16})
    for (int kind : {ZRT_INIT_NORMAL, ZRT_INIT_ZEROS, ZRT_INIT_ONES})
      for (const Case &c : cases) {
        const std::string what = "dtype=" + std::to_string(dtype) +
                                 " kind=" + std::to_string(kind) + " slice=[" +
                                 std::to_string(c.sliceBegin) + ", +" +
                                 std::to_string(c.sliceN) + ") member=[" +
                                 std::to_string(c.memberOffset) + ", +" +
                                 std::to_string(c.memberNumel) + ")";
        const uint64_t seed = zrt_param_seed(42, "h.0.attn.c_attn.weight");
        if (dtype == ZRT_F32) {
          // Elements outside the member keep their sentinel.
          std::vector<float> ref(static_cast<size_t>(c.sliceN), 7.0f);
          ASSERT_EQ(zrt_init_param_slice(ref.data(), dtype, c.sliceBegin,
                                         c.sliceN, c.memberOffset,
                                         c.memberNumel, kind, 0.02f, seed),
                    ZRT_OK);
          float *d = dev(std::vector<float>(ref.size(), 7.0f));
          ASSERT_EQ(zrt_cuda::init_param_slice(d, dtype, c.sliceBegin, c.sliceN,
                                               c.memberOffset, c.memberNumel,
                                               kind, 0.02f, seed),
                    ZRT_OK)
              << what << ": " << zrt_cuda::last_error();
          expectSameBits(ref, host(d, c.sliceN), what);
        } else {
          std::vector<zrt_bf16> ref(static_cast<size_t>(c.sliceN), 0x1234);
          ASSERT_EQ(zrt_init_param_slice(ref.data(), dtype, c.sliceBegin,
                                         c.sliceN, c.memberOffset,
                                         c.memberNumel, kind, 0.02f, seed),
                    ZRT_OK);
          zrt_bf16 *d = devOf(std::vector<zrt_bf16>(ref.size(), 0x1234));
          ASSERT_EQ(zrt_cuda::init_param_slice(d, dtype, c.sliceBegin, c.sliceN,
                                               c.memberOffset, c.memberNumel,
                                               kind, 0.02f, seed),
                    ZRT_OK)
              << what << ": " << zrt_cuda::last_error();
          expectSameBits(ref, hostOf(d, c.sliceN), what);
        }
        zrt_cuda::arena_reset(arena_);
      }
}

//===----------------------------------------------------------------------===//
// Argument checks: same status and message as the CPU runtime, before any
// CUDA call (these run without a device).
//===----------------------------------------------------------------------===//

TEST(CudaOptimizerArgs, SameErrorAsCpu) {
  float x[4] = {};
  zrt_bf16 h[4] = {};
  const int64_t offsets[] = {0}, numels[] = {4};
  const uint8_t decay[] = {1};
  // AdamW: n < 0, step < 1, NULL state or gradient.
  EXPECT_SAME_ERROR(zrt_cuda::adamw_step(x, x, x, x, nullptr, nullptr, -1, kLr,
                                         kBeta1, kBeta2, kEps, kWd, 1, 1),
                    zrt_adamw_step(x, x, x, x, nullptr, nullptr, -1, kLr,
                                   kBeta1, kBeta2, kEps, kWd, 1, 1));
  EXPECT_SAME_ERROR(zrt_cuda::adamw_step(x, x, x, x, nullptr, nullptr, 4, kLr,
                                         kBeta1, kBeta2, kEps, kWd, 1, 0),
                    zrt_adamw_step(x, x, x, x, nullptr, nullptr, 4, kLr, kBeta1,
                                   kBeta2, kEps, kWd, 1, 0));
  EXPECT_SAME_ERROR(zrt_cuda::adamw_step(x, nullptr, x, x, nullptr, nullptr, 4,
                                         kLr, kBeta1, kBeta2, kEps, kWd, 1, 1),
                    zrt_adamw_step(x, nullptr, x, x, nullptr, nullptr, 4, kLr,
                                   kBeta1, kBeta2, kEps, kWd, 1, 1));
  EXPECT_SAME_ERROR(zrt_cuda::adamw_step(x, x, x, nullptr, nullptr, nullptr, 4,
                                         kLr, kBeta1, kBeta2, kEps, kWd, 1, 1),
                    zrt_adamw_step(x, x, x, nullptr, nullptr, nullptr, 4, kLr,
                                   kBeta1, kBeta2, kEps, kWd, 1, 1));
  EXPECT_SAME_ERROR(
      zrt_cuda::adamw_step_bf16_grad(x, x, x, h, nullptr, nullptr, 4, kLr,
                                     kBeta1, kBeta2, kEps, kWd, 1, -3),
      zrt_adamw_step_bf16_grad(x, x, x, h, nullptr, nullptr, 4, kLr, kBeta1,
                               kBeta2, kEps, kWd, 1, -3));
  EXPECT_SAME_ERROR(
      zrt_cuda::adamw_step_bf16_grad(nullptr, x, x, h, nullptr, nullptr, 4, kLr,
                                     kBeta1, kBeta2, kEps, kWd, 1, 1),
      zrt_adamw_step_bf16_grad(nullptr, x, x, h, nullptr, nullptr, 4, kLr,
                               kBeta1, kBeta2, kEps, kWd, 1, 1));
  // shard_adamw: negative sizes, bad dtype, NULL layout, step < 1, NULL
  // buffers.
  EXPECT_SAME_ERROR(
      zrt_cuda::shard_adamw(x, x, x, x, ZRT_F32, -1, 0, 1, offsets, numels,
                            decay, kLr, kBeta1, kBeta2, kEps, kWd, 1, 1),
      zrt_shard_adamw(x, x, x, x, ZRT_F32, -1, 0, 1, offsets, numels, decay,
                      kLr, kBeta1, kBeta2, kEps, kWd, 1, 1));
  EXPECT_SAME_ERROR(
      zrt_cuda::shard_adamw(x, x, x, x, 7, 4, 0, 1, offsets, numels, decay, kLr,
                            kBeta1, kBeta2, kEps, kWd, 1, 1),
      zrt_shard_adamw(x, x, x, x, 7, 4, 0, 1, offsets, numels, decay, kLr,
                      kBeta1, kBeta2, kEps, kWd, 1, 1));
  EXPECT_SAME_ERROR(
      zrt_cuda::shard_adamw(x, x, x, x, ZRT_F32, 4, 0, 1, offsets, nullptr,
                            decay, kLr, kBeta1, kBeta2, kEps, kWd, 1, 1),
      zrt_shard_adamw(x, x, x, x, ZRT_F32, 4, 0, 1, offsets, nullptr, decay,
                      kLr, kBeta1, kBeta2, kEps, kWd, 1, 1));
  EXPECT_SAME_ERROR(
      zrt_cuda::shard_adamw(x, x, x, x, ZRT_BF16, 4, 0, 1, offsets, numels,
                            decay, kLr, kBeta1, kBeta2, kEps, kWd, 1, 0),
      zrt_shard_adamw(x, x, x, x, ZRT_BF16, 4, 0, 1, offsets, numels, decay,
                      kLr, kBeta1, kBeta2, kEps, kWd, 1, 0));
  EXPECT_SAME_ERROR(
      zrt_cuda::shard_adamw(x, x, nullptr, x, ZRT_F32, 4, 0, 1, offsets, numels,
                            decay, kLr, kBeta1, kBeta2, kEps, kWd, 1, 1),
      zrt_shard_adamw(x, x, nullptr, x, ZRT_F32, 4, 0, 1, offsets, numels,
                      decay, kLr, kBeta1, kBeta2, kEps, kWd, 1, 1));
  EXPECT_SAME_ERROR(
      zrt_cuda::shard_adamw(x, x, x, x, ZRT_F32, 4, -1, 1, offsets, numels,
                            decay, kLr, kBeta1, kBeta2, kEps, kWd, 1, 1),
      zrt_shard_adamw(x, x, x, x, ZRT_F32, 4, -1, 1, offsets, numels, decay,
                      kLr, kBeta1, kBeta2, kEps, kWd, 1, 1));
  // Norms and clipping.
  EXPECT_SAME_ERROR(zrt_cuda::sum_squares(x, -1, x), zrt_sum_squares(x, -1, x));
  EXPECT_SAME_ERROR(zrt_cuda::sum_squares(x, 4, nullptr),
                    zrt_sum_squares(x, 4, nullptr));
  EXPECT_SAME_ERROR(zrt_cuda::sum_squares(nullptr, 4, x),
                    zrt_sum_squares(nullptr, 4, x));
  EXPECT_SAME_ERROR(zrt_cuda::sum_squares_bf16(h, -2, x),
                    zrt_sum_squares_bf16(h, -2, x));
  EXPECT_SAME_ERROR(zrt_cuda::sum_squares_bf16(nullptr, 4, x),
                    zrt_sum_squares_bf16(nullptr, 4, x));
  EXPECT_SAME_ERROR(zrt_cuda::clip_coef_scaled(nullptr, x, 1, x, x),
                    zrt_clip_coef_scaled(nullptr, x, 1, x, x));
  EXPECT_SAME_ERROR(zrt_cuda::clip_coef_scaled(x, x, 1, x, nullptr),
                    zrt_clip_coef_scaled(x, x, 1, x, nullptr));
  // Initializers.
  EXPECT_SAME_ERROR(zrt_cuda::init_normal(x, -1, 0, 1, 0, 0),
                    zrt_init_normal(x, -1, 0, 1, 0, 0));
  EXPECT_SAME_ERROR(zrt_cuda::init_normal(x, 1, 0, 1, 0, -1),
                    zrt_init_normal(x, 1, 0, 1, 0, -1));
  EXPECT_SAME_ERROR(zrt_cuda::init_normal(x, 1, 0, -1, 0, 0),
                    zrt_init_normal(x, 1, 0, -1, 0, 0));
  EXPECT_SAME_ERROR(zrt_cuda::init_normal(nullptr, 1, 0, 1, 0, 0),
                    zrt_init_normal(nullptr, 1, 0, 1, 0, 0));
  EXPECT_SAME_ERROR(zrt_cuda::init_uniform(x, 1, 1, 0, 0, 0),
                    zrt_init_uniform(x, 1, 1, 0, 0, 0));
  EXPECT_SAME_ERROR(zrt_cuda::init_uniform(x, 1, 0, 1, 0, -5),
                    zrt_init_uniform(x, 1, 0, 1, 0, -5));
  EXPECT_SAME_ERROR(
      zrt_cuda::init_param_slice(x, 9, 0, 4, 0, 4, ZRT_INIT_NORMAL, 1, 0),
      zrt_init_param_slice(x, 9, 0, 4, 0, 4, ZRT_INIT_NORMAL, 1, 0));
  EXPECT_SAME_ERROR(
      zrt_cuda::init_param_slice(x, ZRT_F32, -1, 4, 0, 4, ZRT_INIT_NORMAL, 1,
                                 0),
      zrt_init_param_slice(x, ZRT_F32, -1, 4, 0, 4, ZRT_INIT_NORMAL, 1, 0));
  EXPECT_SAME_ERROR(
      zrt_cuda::init_param_slice(x, ZRT_F32, 0, 4, 0, -4, ZRT_INIT_NORMAL, 1,
                                 0),
      zrt_init_param_slice(x, ZRT_F32, 0, 4, 0, -4, ZRT_INIT_NORMAL, 1, 0));
  EXPECT_SAME_ERROR(
      zrt_cuda::init_param_slice(x, ZRT_BF16, 0, 4, 0, 4, 3, 1, 0),
      zrt_init_param_slice(x, ZRT_BF16, 0, 4, 0, 4, 3, 1, 0));
  EXPECT_SAME_ERROR(
      zrt_cuda::init_param_slice(x, ZRT_F32, 0, 4, 0, 4, ZRT_INIT_NORMAL, -1,
                                 0),
      zrt_init_param_slice(x, ZRT_F32, 0, 4, 0, 4, ZRT_INIT_NORMAL, -1, 0));
  EXPECT_SAME_ERROR(
      zrt_cuda::init_param_slice(nullptr, ZRT_F32, 0, 4, 0, 4, ZRT_INIT_ONES, 1,
                                 0),
      zrt_init_param_slice(nullptr, ZRT_F32, 0, 4, 0, 4, ZRT_INIT_ONES, 1, 0));
  // Empty: nothing to do, no device needed.
  EXPECT_EQ(zrt_cuda::adamw_step(nullptr, nullptr, nullptr, nullptr, nullptr,
                                 nullptr, 0, kLr, kBeta1, kBeta2, kEps, kWd, 1,
                                 1),
            ZRT_OK);
  EXPECT_EQ(zrt_cuda::init_normal(nullptr, 0, 0, 1, 0, 0), ZRT_OK);
  EXPECT_EQ(zrt_cuda::init_param_slice(nullptr, ZRT_BF16, 0, 0, 0, 9,
                                       ZRT_INIT_NORMAL, 1, 0),
            ZRT_OK);
  EXPECT_EQ(
      zrt_cuda::init_param_slice(x, ZRT_F32, 8, 4, 0, 8, ZRT_INIT_NORMAL, 1, 0),
      ZRT_OK); // no overlap
}

} // namespace
