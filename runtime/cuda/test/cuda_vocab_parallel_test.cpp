//===- cuda_vocab_parallel_test.cpp - vocab_parallel.cu against the CPU ---===//
//
// The CUDA vocabulary-parallel kernels (zrt/vocab_parallel.h) on device
// memory against the CPU runtime's on the same inputs, part by part: the
// embedding, its gradient (both the tiled and the per-run sums of loss.cu's
// scatter), the row maxima, the target logits and the loss's gradient bit
// for bit; the softmax denominators and their backward (CUDA's expf, a
// block's double sum) and the loss (a block's double sum) within 1e-6
// relative.
// Bad ids and counted targets raise the device error word, reported by the
// next copy; the argument rules are the CPU's, message for message (no
// device needed). Runs on a GPU and, unchanged, on the emulator.
//
//===----------------------------------------------------------------------===//

#include "cuda_test_util.h"

#include <climits>

namespace {

using namespace zrt_cuda_test;

class CudaVocabParallel : public CudaKernels {
protected:
  void checkRowStatistics(int64_t N, int64_t Vl, int64_t classes,
                          int64_t part);
};

/// Ids over a vocabulary of `whole` rows, with repeats (runs of one id
/// summed in token order) and some of every part.
std::vector<int32_t> someIds(int64_t n, int64_t whole, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int32_t> dist(0, static_cast<int32_t>(whole - 1));
  std::vector<int32_t> ids(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    ids[i] = i % 3 == 0 ? 7 : dist(gen);
  return ids;
}

TEST_F(CudaVocabParallel, EmbeddingAndItsGradientMatchCpuBitForBit) {
  constexpr int64_t kParts = 3, kVl = 20, kN = 300;
  // C = 5: the per-run sums; C = 8: the tiles (a multiple of 4 f32).
  for (int64_t C : {5, 8}) {
    const std::vector<float> dout = randomVec(kN * C, 2);
    const std::vector<int32_t> ids = someIds(kN, kVl * kParts, 3);
    const int32_t *dIds = devOf(ids);
    const float *dDout = dev(dout);
    for (int64_t part = 0; part < kParts; ++part) {
      const std::vector<float> table = randomVec(kVl * C, 10 + part);
      std::vector<float> out(kN * C), dtable(kVl * C);
      ASSERT_EQ(zrt_vocab_embedding(table.data(), ids.data(), out.data(), kN,
                                    kVl, C, part, kParts),
                ZRT_OK);
      ASSERT_EQ(zrt_vocab_embedding_backward(dout.data(), ids.data(),
                                             dtable.data(), kN, kVl, C, part,
                                             kParts),
                ZRT_OK);
      float *dOut = dev(kN * C), *dTable = dev(kVl * C);
      ASSERT_EQ(zrt_cuda::vocab_embedding(dev(table), dIds, dOut, kN, kVl, C,
                                          part, kParts),
                ZRT_OK)
          << zrt_cuda::last_error();
      ASSERT_EQ(zrt_cuda::vocab_embedding_backward(dDout, dIds, dTable, kN, kVl,
                                                   C, part, kParts),
                ZRT_OK)
          << zrt_cuda::last_error();
      const std::string what =
          "C " + std::to_string(C) + " part " + std::to_string(part);
      expectSameBits(out, host(dOut, kN * C), "embedding, " + what);
      expectSameBits(dtable, host(dTable, kVl * C), "gradient, " + what);
    }
  }
}

/// The CPU's and the CUDA backend's row statistics and their gradient on
/// part `part` of [N, Vl] logits, `classes` classes in all.
void CudaVocabParallel::checkRowStatistics(int64_t N, int64_t Vl,
                                           int64_t classes, int64_t part) {
  const std::vector<float> logits = randomVec(N * Vl, 20 + part, -4.0f, 4.0f);
  std::vector<int32_t> targets(static_cast<size_t>(N));
  for (int64_t n = 0; n < N; ++n)
    targets[n] = static_cast<int32_t>((n * 5) % classes);
  const std::vector<float> max = randomVec(N, 30, 3.0f, 5.0f);
  const std::vector<float> grad = randomVec(2 * N, 31);
  std::vector<float> mx(N), sums(2 * N), dlogits(N * Vl);
  ASSERT_EQ(zrt_vocab_max(logits.data(), mx.data(), N, Vl, classes, part),
            ZRT_OK);
  ASSERT_EQ(zrt_vocab_exp_sums(logits.data(), targets.data(), max.data(),
                               sums.data(), N, Vl, classes, part),
            ZRT_OK);
  ASSERT_EQ(zrt_vocab_exp_sums_backward(logits.data(), targets.data(),
                                        max.data(), grad.data(),
                                        dlogits.data(), N, Vl, classes, part),
            ZRT_OK);
  const float *dLogits = dev(logits), *dMax = dev(max);
  const int32_t *dTargets = devOf(targets);
  float *dMx = dev(N), *dSums = dev(2 * N), *dD = dev(N * Vl);
  ASSERT_EQ(zrt_cuda::vocab_max(dLogits, dMx, N, Vl, classes, part), ZRT_OK);
  ASSERT_EQ(zrt_cuda::vocab_exp_sums(dLogits, dTargets, dMax, dSums, N, Vl,
                                     classes, part),
            ZRT_OK);
  ASSERT_EQ(zrt_cuda::vocab_exp_sums_backward(dLogits, dTargets, dMax,
                                              dev(grad), dD, N, Vl, classes,
                                              part),
            ZRT_OK);
  const std::string what = "part " + std::to_string(part);
  expectSameBits(mx, host(dMx, N), "max, " + what);
  const std::vector<float> gotSums = host(dSums, 2 * N);
  for (int64_t n = 0; n < N; ++n) {
    EXPECT_NEAR(gotSums[2 * n], sums[2 * n], 1e-6f * sums[2 * n])
        << "sum of row " << n << ", " << what;
    EXPECT_EQ(gotSums[2 * n + 1], sums[2 * n + 1])
        << "target logit of row " << n << ", " << what;
  }
  // expf: the CPU's libm, within CUDA's 2 ulp on a GPU.
  expectClose(dlogits, host(dD, N * Vl), 1e-7f, 1e-6f, "dlogits, " + what);
}

TEST_F(CudaVocabParallel, RowStatisticsMatchCpu) {
  // 4 parts of 300 columns, 700 classes: part 2 holds 100 classes and 200
  // padding columns, part 3 none (its maxima -FLT_MAX, its sums 0).
  for (int64_t part = 0; part < 4; ++part)
    checkRowStatistics(9, 300, 700, part);
  // Rows shorter than a warp.
  checkRowStatistics(5, 7, 12, 1);
}

TEST_F(CudaVocabParallel, LossAndGradientMatchCpu) {
  constexpr int64_t N = 1500, classes = 50;
  std::vector<float> sums(2 * N), max = randomVec(N, 41, -2.0f, 2.0f);
  const std::vector<float> s = randomVec(2 * N, 40, 1.0f, 30.0f);
  for (int64_t i = 0; i < 2 * N; ++i)
    sums[i] = s[i];
  std::vector<int32_t> targets(N);
  for (int64_t n = 0; n < N; ++n)
    targets[n] = n % 7 == 0 ? -100 : static_cast<int32_t>(n % classes);
  const float dloss = 0.75f;
  const float *dS = dev(sums), *dM = dev(max), *dDloss = dev(std::vector<float>{dloss});
  const int32_t *dT = devOf(targets);
  for (int hasIgnore : {0, 1}) {
    std::vector<int32_t> tg = targets;
    if (!hasIgnore) // every target counts: none may be -100
      for (int32_t &x : tg)
        x = x < 0 ? 0 : x;
    const int32_t *dTg = hasIgnore ? dT : devOf(tg);
    float want = 0.0f;
    std::vector<float> dwant(2 * N);
    ASSERT_EQ(zrt_vocab_loss(sums.data(), max.data(), tg.data(), &want, N,
                             classes, hasIgnore, -100),
              ZRT_OK);
    ASSERT_EQ(zrt_vocab_loss_backward(sums.data(), tg.data(), &dloss,
                                      dwant.data(), N, hasIgnore, -100),
              ZRT_OK);
    float *dLoss = dev(1), *dDs = dev(2 * N);
    ASSERT_EQ(zrt_cuda::vocab_loss(dS, dM, dTg, dLoss, N, classes, hasIgnore,
                                   -100),
              ZRT_OK);
    ASSERT_EQ(zrt_cuda::vocab_loss_backward(dS, dTg, dDloss, dDs, N, hasIgnore,
                                            -100),
              ZRT_OK);
    const float got = host(dLoss, 1)[0];
    EXPECT_NEAR(got, want, 1e-6f * std::fabs(want)) << "has_ignore " << hasIgnore;
    expectSameBits(dwant, host(dDs, 2 * N),
                   "dsums, has_ignore " + std::to_string(hasIgnore));
  }
  // Every row ignored: NaN, as the CPU.
  const std::vector<int32_t> none(N, -100);
  float *dLoss = dev(1);
  ASSERT_EQ(zrt_cuda::vocab_loss(dS, dM, devOf(none), dLoss, N, classes, 1, -100),
            ZRT_OK);
  EXPECT_TRUE(std::isnan(host(dLoss, 1)[0]));
}

TEST_F(CudaVocabParallel, BadIdsAndTargetsRaiseTheErrorWord) {
  constexpr int64_t N = 4, Vl = 6, C = 3, parts = 2;
  float *dTable = dev(randomVec(Vl * C, 50)), *dOut = dev(N * C),
        *dD = dev(Vl * C), *dLoss = dev(1);
  float sink = 0.0f;
  for (int32_t bad : {12, -1, INT_MAX}) {
    const int32_t *dIds = devOf(std::vector<int32_t>{1, 7, bad, 0});
    ASSERT_EQ(zrt_cuda::vocab_embedding(dTable, dIds, dOut, N, Vl, C, 1, parts),
              ZRT_OK);
    EXPECT_EQ(zrt_cuda::copy_to_host(&sink, dOut, sizeof sink),
              ZRT_ERR_OUT_OF_RANGE)
        << "embedding, id " << bad;
    EXPECT_NE(std::string(zrt_cuda::last_error()).find("zrt_vocab_embedding"),
              std::string::npos)
        << zrt_cuda::last_error();
    ASSERT_EQ(zrt_cuda::vocab_embedding_backward(dOut, dIds, dD, N, Vl, C, 0,
                                                 parts),
              ZRT_OK);
    EXPECT_EQ(zrt_cuda::copy_to_host(&sink, dD, sizeof sink),
              ZRT_ERR_OUT_OF_RANGE)
        << "backward, id " << bad;
    // Targets: [0, classes = 12) when counted; an ignored one may be anything.
    const float *dS = dev(std::vector<float>(2 * N, 2.0f)),
                *dM = dev(std::vector<float>(N, 0.0f));
    ASSERT_EQ(zrt_cuda::vocab_loss(dS, dM, dIds, dLoss, N, 12, 0, 0), ZRT_OK);
    EXPECT_EQ(zrt_cuda::copy_to_host(&sink, dLoss, sizeof sink),
              ZRT_ERR_OUT_OF_RANGE)
        << "loss, target " << bad;
    EXPECT_NE(std::string(zrt_cuda::last_error()).find("zrt_vocab_loss"),
              std::string::npos)
        << zrt_cuda::last_error();
    ASSERT_EQ(zrt_cuda::vocab_loss(dS, dM, dIds, dLoss, N, 12, 1, bad), ZRT_OK);
    EXPECT_EQ(zrt_cuda::copy_to_host(&sink, dLoss, sizeof sink), ZRT_OK)
        << "ignored target " << bad << ": " << zrt_cuda::last_error();
  }
}

TEST(CudaVocabParallelArgs, SameErrorsAsTheCpu) {
  float x[8] = {}, y[8] = {};
  int32_t ids[4] = {};
  EXPECT_SAME_ERROR(zrt_cuda::vocab_embedding(x, ids, y, 1, 2, 2, 2, 2),
                    zrt_vocab_embedding(x, ids, y, 1, 2, 2, 2, 2));
  EXPECT_SAME_ERROR(zrt_cuda::vocab_embedding(x, ids, y, 1, 2, 0, 0, 2),
                    zrt_vocab_embedding(x, ids, y, 1, 2, 0, 0, 2));
  EXPECT_SAME_ERROR(
      zrt_cuda::vocab_embedding_backward(x, nullptr, y, 1, 2, 2, 0, 2),
      zrt_vocab_embedding_backward(x, nullptr, y, 1, 2, 2, 0, 2));
  EXPECT_SAME_ERROR(zrt_cuda::vocab_max(x, y, 0, 2, 4, 0),
                    zrt_vocab_max(x, y, 0, 2, 4, 0));
  EXPECT_SAME_ERROR(zrt_cuda::vocab_exp_sums(x, ids, x, y, 1, 2, 0, 0),
                    zrt_vocab_exp_sums(x, ids, x, y, 1, 2, 0, 0));
  EXPECT_SAME_ERROR(
      zrt_cuda::vocab_exp_sums_backward(x, ids, x, nullptr, y, 1, 2, 4, -1),
      zrt_vocab_exp_sums_backward(x, ids, x, nullptr, y, 1, 2, 4, -1));
  EXPECT_SAME_ERROR(zrt_cuda::vocab_loss(x, x, ids, nullptr, 1, 4, 0, 0),
                    zrt_vocab_loss(x, x, ids, nullptr, 1, 4, 0, 0));
  EXPECT_SAME_ERROR(zrt_cuda::vocab_loss_backward(x, ids, x, nullptr, 1, 0, 0),
                    zrt_vocab_loss_backward(x, ids, x, nullptr, 1, 0, 0));
}

} // namespace
