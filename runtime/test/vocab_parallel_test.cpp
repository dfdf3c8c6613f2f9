//===- vocab_parallel_test.cpp - The vocabulary-parallel kernels ----------===//
//
// zrt/vocab_parallel.h against the whole-vocabulary kernels: the sum over
// the parts of zrt_vocab_embedding is zrt_embedding of the whole table and
// the parts' backward are its rows of zrt_embedding_backward; the loss from
// the parts' statistics (max over parts, sums over parts, as the tensor
// axis's all-reduces compute them) is zrt_cross_entropy_padded (and the
// masked form with ignore_index), and its gradient per part is that part's
// columns of zrt_cross_entropy_padded_backward. Bad ids and targets fail
// with their position.
//
//===----------------------------------------------------------------------===//

#include "test_util.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

using namespace zrt_test;

namespace {

constexpr int64_t kN = 7, kC = 5, kParts = 4, kVl = 6, kV = kVl * kParts;

/// Part `p`'s rows [p·Vl, (p+1)·Vl) of a [V, C] table (or its columns of
/// [N, V] logits when `cols`).
std::vector<float> partOf(const std::vector<float> &whole, int64_t p,
                          int64_t rows, int64_t width, bool cols) {
  std::vector<float> out;
  if (!cols)
    return {whole.begin() + p * kVl * width,
            whole.begin() + (p + 1) * kVl * width};
  for (int64_t n = 0; n < rows; ++n)
    out.insert(out.end(), whole.begin() + n * width + p * kVl,
               whole.begin() + n * width + (p + 1) * kVl);
  return out;
}

TEST(VocabParallel, EmbeddingPartsSumToTheWholeLookup) {
  std::vector<float> table = randomVec(kV * kC, 3);
  std::vector<int32_t> ids = {0, 5, 6, 23, 11, 11, 17};
  std::vector<float> whole(kN * kC), sum(kN * kC, 0.0f), part(kN * kC);
  ASSERT_EQ(zrt_embedding(table.data(), ids.data(), whole.data(), kN, kV, kC),
            ZRT_OK);
  std::vector<float> dout = randomVec(kN * kC, 4), dwhole(kV * kC);
  ASSERT_EQ(zrt_embedding_backward(dout.data(), ids.data(), dwhole.data(), kN,
                                   kV, kC),
            ZRT_OK);
  for (int64_t p = 0; p < kParts; ++p) {
    std::vector<float> rows = partOf(table, p, kV, kC, false);
    ASSERT_EQ(zrt_vocab_embedding(rows.data(), ids.data(), part.data(), kN,
                                  kVl, kC, p, kParts),
              ZRT_OK)
        << zrt_last_error();
    for (int64_t i = 0; i < kN * kC; ++i)
      sum[i] += part[i];
    std::vector<float> dpart(kVl * kC, 99.0f);
    ASSERT_EQ(zrt_vocab_embedding_backward(dout.data(), ids.data(),
                                           dpart.data(), kN, kVl, kC, p,
                                           kParts),
              ZRT_OK);
    // Bit for bit: the same additions in the same order.
    EXPECT_EQ(dpart, partOf(dwhole, p, kV, kC, false)) << "part " << p;
  }
  // Each id is on one part: the other parts add zeros, exactly.
  EXPECT_EQ(sum, whole);
}

TEST(VocabParallel, EmbeddingRefusesIdsOutsideTheVocabulary) {
  std::vector<float> rows(kVl * kC), out(kN * kC);
  std::vector<int32_t> ids = {0, 1, 2, kV, 3, 4, 5};
  EXPECT_EQ(zrt_vocab_embedding(rows.data(), ids.data(), out.data(), kN, kVl,
                                kC, 1, kParts),
            ZRT_ERR_OUT_OF_RANGE);
  EXPECT_EQ(std::string(zrt_last_error()),
            "zrt_vocab_embedding: ids[3] = 24 is outside the vocabulary [0, "
            "24)");
  EXPECT_EQ(zrt_vocab_embedding(rows.data(), ids.data(), out.data(), kN, kVl,
                                kC, kParts, kParts),
            ZRT_ERR_INVALID_ARGUMENT);
}

/// The parallel loss and gradient from `parts` tensor ranks' columns, the
/// reductions done as the program's all-reduces would.
void parallelLoss(const std::vector<float> &logits,
                  const std::vector<int32_t> &targets, int64_t classes,
                  int hasIgnore, int32_t ignore, float *loss,
                  std::vector<float> *dlogits) {
  std::vector<float> max(kN, -INFINITY), m(kN), sums(2 * kN, 0.0f),
      s(2 * kN);
  for (int64_t p = 0; p < kParts; ++p) {
    std::vector<float> cols = partOf(logits, p, kN, kV, true);
    ASSERT_EQ(zrt_vocab_max(cols.data(), m.data(), kN, kVl, classes, p),
              ZRT_OK);
    for (int64_t n = 0; n < kN; ++n)
      max[n] = std::max(max[n], m[n]);
  }
  for (int64_t p = 0; p < kParts; ++p) {
    std::vector<float> cols = partOf(logits, p, kN, kV, true);
    ASSERT_EQ(zrt_vocab_exp_sums(cols.data(), targets.data(), max.data(),
                                 s.data(), kN, kVl, classes, p),
              ZRT_OK);
    for (int64_t i = 0; i < 2 * kN; ++i)
      sums[i] += s[i];
  }
  ASSERT_EQ(zrt_vocab_loss(sums.data(), max.data(), targets.data(), loss, kN,
                           classes, hasIgnore, ignore),
            ZRT_OK)
      << zrt_last_error();
  const float dloss = 0.75f;
  std::vector<float> dsums(2 * kN);
  ASSERT_EQ(zrt_vocab_loss_backward(sums.data(), targets.data(), &dloss,
                                    dsums.data(), kN, hasIgnore, ignore),
            ZRT_OK);
  dlogits->assign(kN * kV, 0.0f);
  for (int64_t p = 0; p < kParts; ++p) {
    std::vector<float> cols = partOf(logits, p, kN, kV, true), d(kN * kVl);
    ASSERT_EQ(zrt_vocab_exp_sums_backward(cols.data(), targets.data(),
                                          max.data(), dsums.data(), d.data(),
                                          kN, kVl, classes, p),
              ZRT_OK);
    for (int64_t n = 0; n < kN; ++n)
      std::copy(d.begin() + n * kVl, d.begin() + (n + 1) * kVl,
                dlogits->begin() + n * kV + p * kVl);
  }
}

TEST(VocabParallel, LossAndGradientEqualTheWholeCrossEntropy) {
  // 17 classes of 24 columns: part 2 holds 5 classes, part 3 none.
  const int64_t classes = 17;
  std::vector<float> logits = randomVec(kN * kV, 5, -4.0f, 4.0f);
  std::vector<int32_t> targets = {0, 16, 6, 12, 5, 11, 3};
  float want = 0, got = 0;
  ASSERT_EQ(zrt_cross_entropy_padded(logits.data(), targets.data(), &want, kN,
                                     kV, classes),
            ZRT_OK);
  std::vector<float> dwant(kN * kV), dgot;
  const float dloss = 0.75f;
  ASSERT_EQ(zrt_cross_entropy_padded_backward(logits.data(), targets.data(),
                                              &dloss, dwant.data(), kN, kV,
                                              classes),
            ZRT_OK);
  parallelLoss(logits, targets, classes, 0, 0, &got, &dgot);
  EXPECT_NEAR(got, want, 1e-6 * std::fabs(want));
  for (int64_t i = 0; i < kN * kV; ++i)
    EXPECT_NEAR(dgot[i], dwant[i], 1e-7) << "element " << i;
}

TEST(VocabParallel, IgnoredRowsCountNeitherInTheLossNorInTheMean) {
  std::vector<float> logits = randomVec(kN * kV, 6, -3.0f, 3.0f);
  std::vector<int32_t> targets = {-100, 16, 23, -100, 5, 11, 0};
  float want = 0, got = 0;
  ASSERT_EQ(zrt_cross_entropy_masked(logits.data(), targets.data(), &want, kN,
                                     kV, kV, -100),
            ZRT_OK);
  std::vector<float> dgot;
  parallelLoss(logits, targets, kV, 1, -100, &got, &dgot);
  EXPECT_NEAR(got, want, 1e-6 * std::fabs(want));
  for (int64_t j = 0; j < kV; ++j) // row 0 is ignored: no gradient
    EXPECT_EQ(dgot[j], 0.0f);
}

TEST(VocabParallel, LossRefusesTargetsOutsideTheClasses) {
  std::vector<float> sums(2 * kN, 1.0f), max(kN, 0.0f);
  std::vector<int32_t> targets = {0, 1, 2, 3, 17, 5, 6};
  float loss = 0;
  EXPECT_EQ(zrt_vocab_loss(sums.data(), max.data(), targets.data(), &loss, kN,
                           17, 0, 0),
            ZRT_ERR_OUT_OF_RANGE);
  EXPECT_EQ(std::string(zrt_last_error()),
            "zrt_vocab_loss: targets[4] = 17 is outside [0, 17)");
}

} // namespace
