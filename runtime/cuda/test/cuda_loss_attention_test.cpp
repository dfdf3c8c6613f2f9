//===- cuda_loss_attention_test.cpp - CUDA embedding, losses, attention ---===//
//
// zrt_cuda's embedding(_backward), cross_entropy(_padded)(_backward),
// mse(_backward) and causal_attention(_backward) against the CPU runtime's
// zrt_* on the same inputs; cross_entropy_padded_fused bit for bit against
// the padded forward and backward on the device; the device error word for
// bad ids / targets; and the argument checks (which return before any CUDA
// call, so they run without a device too).
//
//===----------------------------------------------------------------------===//

#include "cuda_test_util.h"

#include <climits>
#include <string>

namespace {

using namespace zrt_cuda_test;

/// n ids in [0, V) from seed.
std::vector<int32_t> randomIds(int64_t n, int64_t V, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int32_t> dist(0, static_cast<int32_t>(V - 1));
  std::vector<int32_t> ids(static_cast<size_t>(n));
  for (int32_t &x : ids)
    x = dist(gen);
  return ids;
}

/// The device error raised by the kernels queued so far: the next
/// synchronizing copy reports ZRT_ERR_OUT_OF_RANGE once, the one after
/// succeeds.
void expectPendingDeviceError(const void *devicePtr, const std::string &what) {
  float sink[1] = {0.0f};
  EXPECT_EQ(zrt_cuda::copy_to_host(sink, devicePtr, sizeof(float)),
            ZRT_ERR_OUT_OF_RANGE)
      << what;
  EXPECT_NE(std::string(zrt_cuda::last_error()).find("zrt_copy_to_host"),
            std::string::npos)
      << zrt_cuda::last_error();
  EXPECT_EQ(zrt_cuda::copy_to_host(sink, devicePtr, sizeof(float)), ZRT_OK)
      << what << ": the error word was not cleared";
}

//===----------------------------------------------------------------------===//
// Embedding
//===----------------------------------------------------------------------===//

TEST_F(CudaKernels, EmbeddingAndBackward) {
  struct Case {
    int64_t N, V, C;
  };
  // {3000, 7, 36}: 9 vectors of 4 floats per row, in 2 column chunks.
  const Case cases[] = {{1, 1, 1},         {37, 11, 19}, {300, 50, 64},
                        {5, 3, 0},         {0, 7, 5},    {513, 1000, 33},
                        {4096, 50304, 32}, {3000, 7, 36}};
  for (const Case &c : cases) {
    const std::string what = "N=" + std::to_string(c.N) +
                             " V=" + std::to_string(c.V) +
                             " C=" + std::to_string(c.C);
    const auto table = randomVec(c.V * c.C, 30);
    const auto dout = randomVec(c.N * c.C, 31);
    auto ids = randomIds(c.N, c.V, 32);
    // Repeated ids, and one long run of a single id (a frequent token).
    for (int64_t i = 0; i < c.N; i += 3)
      ids[static_cast<size_t>(i)] = ids[0];
    std::vector<float> refOut(static_cast<size_t>(c.N * c.C));
    std::vector<float> refDtable(static_cast<size_t>(c.V * c.C), 5.0f);
    ASSERT_EQ(
        zrt_embedding(table.data(), ids.data(), refOut.data(), c.N, c.V, c.C),
        ZRT_OK)
        << what;
    ASSERT_EQ(zrt_embedding_backward(dout.data(), ids.data(), refDtable.data(),
                                     c.N, c.V, c.C),
              ZRT_OK)
        << what;
    float *dTable = dev(table), *dOut = dev(c.N * c.C), *dDout = dev(dout);
    // dtable starts as garbage: the call must zero it.
    float *dDtable = dev(std::vector<float>(refDtable.size(), 5.0f));
    int32_t *dIds = devOf(ids);
    ASSERT_EQ(zrt_cuda::embedding(dTable, dIds, dOut, c.N, c.V, c.C), ZRT_OK)
        << what << ": " << zrt_cuda::last_error();
    ASSERT_EQ(zrt_cuda::embedding_backward(dDout, dIds, dDtable, c.N, c.V, c.C),
              ZRT_OK)
        << what << ": " << zrt_cuda::last_error();
    expectSameBits(refOut, host(dOut, c.N * c.C), "embedding " + what);
    // Same summation order as the CPU (token order per id): bit-identical.
    expectSameBits(refDtable, host(dDtable, c.V * c.C),
                   "embedding_backward " + what);
    zrt_cuda::arena_reset(arena_);
  }
}

TEST_F(CudaKernels, EmbeddingBackwardIsDeterministic) {
  const int64_t N = 2048, V = 97, C = 40;
  const auto dout = randomVec(N * C, 33, -100.0f, 100.0f);
  const auto ids = randomIds(N, V, 34);
  float *dDout = dev(dout), *d1 = dev(V * C), *d2 = dev(V * C);
  int32_t *dIds = devOf(ids);
  ASSERT_EQ(zrt_cuda::embedding_backward(dDout, dIds, d1, N, V, C), ZRT_OK);
  ASSERT_EQ(zrt_cuda::embedding_backward(dDout, dIds, d2, N, V, C), ZRT_OK);
  expectSameBits(host(d1, V * C), host(d2, V * C), "two runs");
}

TEST_F(CudaKernels, EmbeddingBadIdRaisesDeviceError) {
  const int64_t N = 6, V = 5, C = 7;
  const auto table = randomVec(V * C, 35), dout = randomVec(N * C, 36);
  for (int32_t bad : {5, -1, INT_MAX, INT_MIN}) {
    const std::vector<int32_t> ids = {0, 4, bad, 2, 2, 1};
    float *dTable = dev(table), *dOut = dev(N * C), *dDout = dev(dout),
          *dDtable = dev(V * C);
    int32_t *dIds = devOf(ids);
    ASSERT_EQ(zrt_cuda::embedding(dTable, dIds, dOut, N, V, C), ZRT_OK);
    expectPendingDeviceError(dOut, "embedding id " + std::to_string(bad));
    // The good rows were written as usual.
    const auto out = host(dOut, N * C);
    for (int64_t i : {0, 1, 3, 5})
      for (int64_t j = 0; j < C; ++j)
        ASSERT_EQ(out[static_cast<size_t>(i * C + j)],
                  table[static_cast<size_t>(ids[i] * C + j)]);
    ASSERT_EQ(zrt_cuda::embedding_backward(dDout, dIds, dDtable, N, V, C),
              ZRT_OK);
    expectPendingDeviceError(dDtable,
                             "embedding_backward id " + std::to_string(bad));
    // C == 0: nothing to copy, the ids are still checked.
    ASSERT_EQ(zrt_cuda::embedding(dTable, dIds, dOut, N, V, 0), ZRT_OK);
    expectPendingDeviceError(dOut, "embedding C=0");
    ASSERT_EQ(zrt_cuda::embedding_backward(dDout, dIds, dDtable, N, V, 0),
              ZRT_OK);
    expectPendingDeviceError(dOut, "embedding_backward C=0");
    zrt_cuda::arena_reset(arena_);
  }
  // V == 0: every id is out of range (the table may be NULL).
  const std::vector<int32_t> zero = {0};
  int32_t *dIds = devOf(zero);
  float *dOut = dev(C);
  ASSERT_EQ(zrt_cuda::embedding(nullptr, dIds, dOut, 1, 0, C), ZRT_OK);
  expectPendingDeviceError(dOut, "embedding V=0");
  ASSERT_EQ(zrt_cuda::embedding_backward(dOut, dIds, nullptr, 1, 0, C), ZRT_OK);
  expectPendingDeviceError(dOut, "embedding_backward V=0");
}

//===----------------------------------------------------------------------===//
// Cross-entropy
//===----------------------------------------------------------------------===//

/// Tolerance of a gradient entry of cross-entropy: relative 1e-5, plus an
/// absolute part scaled to the per-row gradient g (the target entry is
/// softmax * g - g, which cancels when the prediction is confident).
void expectCloseGrad(const std::vector<float> &ref,
                     const std::vector<float> &got, float g,
                     const std::string &what) {
  expectClose(ref, got, 1e-6f * std::fabs(g) + 1e-30f, 1e-5f, what);
}

TEST_F(CudaKernels, CrossEntropyAndBackward) {
  struct Case {
    int64_t N, V;
    int32_t ignore; ///< ignore_index
    int every;      ///< every `every`-th target is ignore_index (0: none)
    float spread;   ///< logits in [-spread, spread]
  };
  const Case cases[] = {
      {1, 1, -100, 0, 1.0f},      {37, 300, -100, 5, 4.0f},
      {37, 300, 3, 4, 4.0f},      {5, 50304, -100, 0, 8.0f},
      {64, 1000, -100, 3, 30.0f}, {7, 13, -100, 1, 2.0f}, // all ignored
      {0, 10, -100, 0, 1.0f},                             // empty: NaN
  };
  const float dloss = 1.7f;
  for (const Case &c : cases) {
    const std::string what = "N=" + std::to_string(c.N) +
                             " V=" + std::to_string(c.V) +
                             " ignore=" + std::to_string(c.ignore) +
                             " every=" + std::to_string(c.every);
    const auto logits = randomVec(c.N * c.V, 40, -c.spread, c.spread);
    auto targets = randomIds(c.N, c.V, 41);
    int64_t count = c.N;
    if (c.every > 0)
      for (int64_t i = 0; i < c.N; i += c.every) {
        targets[static_cast<size_t>(i)] = c.ignore;
        --count;
      }
    float refLoss = 0.0f;
    std::vector<float> refD(static_cast<size_t>(c.N * c.V));
    ASSERT_EQ(zrt_cross_entropy(logits.data(), targets.data(), &refLoss, c.N,
                                c.V, c.ignore),
              ZRT_OK)
        << what;
    ASSERT_EQ(zrt_cross_entropy_backward(logits.data(), targets.data(), dloss,
                                         refD.data(), c.N, c.V, c.ignore),
              ZRT_OK)
        << what;
    float *dLogits = dev(logits), *dLoss = dev(1), *dD = dev(c.N * c.V);
    int32_t *dTargets = devOf(targets);
    ASSERT_EQ(
        zrt_cuda::cross_entropy(dLogits, dTargets, dLoss, c.N, c.V, c.ignore),
        ZRT_OK)
        << what << ": " << zrt_cuda::last_error();
    ASSERT_EQ(zrt_cuda::cross_entropy_backward(dLogits, dTargets, dloss, dD,
                                               c.N, c.V, c.ignore),
              ZRT_OK)
        << what << ": " << zrt_cuda::last_error();
    const float loss = host(dLoss, 1)[0];
    if (count == 0) {
      EXPECT_TRUE(std::isnan(refLoss)) << what;
      EXPECT_TRUE(std::isnan(loss)) << what;
    } else {
      EXPECT_NEAR(loss, refLoss, 1e-5f * std::fabs(refLoss) + 1e-7f) << what;
    }
    const float g = count > 0 ? dloss / static_cast<float>(count) : 0.0f;
    expectCloseGrad(refD, host(dD, c.N * c.V), g, "dlogits " + what);
    zrt_cuda::arena_reset(arena_);
  }
}

TEST_F(CudaKernels, CrossEntropyPaddedAndBackward) {
  struct Case {
    int64_t N, V, numClasses;
  };
  const Case cases[] = {{1, 1, 1},         {37, 300, 257}, {37, 300, 300},
                        {3, 50304, 50257}, {16, 64, 1},    {0, 8, 5}};
  const float dlossValue = 0.6f;
  for (const Case &c : cases) {
    const std::string what = "N=" + std::to_string(c.N) +
                             " V=" + std::to_string(c.V) +
                             " num_classes=" + std::to_string(c.numClasses);
    auto logits = randomVec(c.N * c.V, 42, -5.0f, 5.0f);
    // Padding columns hold garbage that must not count.
    for (int64_t i = 0; i < c.N; ++i)
      for (int64_t j = c.numClasses; j < c.V; ++j)
        logits[static_cast<size_t>(i * c.V + j)] = 1e30f;
    const auto targets = randomIds(c.N, c.numClasses, 43);
    float refLoss = 0.0f;
    std::vector<float> refD(static_cast<size_t>(c.N * c.V));
    ASSERT_EQ(zrt_cross_entropy_padded(logits.data(), targets.data(), &refLoss,
                                       c.N, c.V, c.numClasses),
              ZRT_OK)
        << what;
    ASSERT_EQ(zrt_cross_entropy_padded_backward(logits.data(), targets.data(),
                                                &dlossValue, refD.data(), c.N,
                                                c.V, c.numClasses),
              ZRT_OK)
        << what;
    float *dLogits = dev(logits), *dLoss = dev(1), *dD = dev(c.N * c.V);
    float *dDloss = dev(std::vector<float>{dlossValue});
    int32_t *dTargets = devOf(targets);
    ASSERT_EQ(zrt_cuda::cross_entropy_padded(dLogits, dTargets, dLoss, c.N, c.V,
                                             c.numClasses),
              ZRT_OK)
        << what << ": " << zrt_cuda::last_error();
    ASSERT_EQ(zrt_cuda::cross_entropy_padded_backward(
                  dLogits, dTargets, dDloss, dD, c.N, c.V, c.numClasses),
              ZRT_OK)
        << what << ": " << zrt_cuda::last_error();
    const float loss = host(dLoss, 1)[0];
    if (c.N == 0) {
      EXPECT_TRUE(std::isnan(refLoss)) << what;
      EXPECT_TRUE(std::isnan(loss)) << what;
    } else {
      EXPECT_NEAR(loss, refLoss, 1e-5f * std::fabs(refLoss) + 1e-7f) << what;
    }
    const float g = c.N > 0 ? dlossValue / static_cast<float>(c.N) : 0.0f;
    expectCloseGrad(refD, host(dD, c.N * c.V), g, "dlogits " + what);
    zrt_cuda::arena_reset(arena_);
  }
}

/// zrt_cross_entropy_padded_fused: the loss, the per-row losses and the
/// gradient (written over the logits) bit for bit those of
/// cross_entropy_padded followed by cross_entropy_padded_backward on the
/// same device (the same row code and launch configuration), and within the
/// f32 tests' tolerances of the CPU's fused call.
TEST_F(CudaKernels, CrossEntropyPaddedFusedMatchesTwoCalls) {
  struct Case {
    int64_t N, V, numClasses;
    float spread; ///< logits in [-spread, spread]
  };
  const Case cases[] = {
      {1, 1, 1, 1.0f},           {37, 300, 257, 5.0f},
      {37, 301, 300, 5.0f},      // odd V: rows differently aligned
      {16, 64, 1, 5.0f},         // one class: zero loss and gradient
      {0, 8, 5, 1.0f},           // empty: NaN loss, nothing written
      {3, 50304, 50257, 8.0f},   // GPT-2's vocabulary
      {64, 50304, 50257, 30.0f}, // peaked rows
      {70000, 16, 13, 3.0f},     // more rows than blocks: rows looped
  };
  // 1.7 / 3 and 1.7 / 37 differ from 1.7 * (1 / N) in f32: g is checked.
  const float dlossValue = 1.7f;
  for (const Case &c : cases) {
    const std::string what = "N=" + std::to_string(c.N) +
                             " V=" + std::to_string(c.V) +
                             " num_classes=" + std::to_string(c.numClasses);
    auto logits = randomVec(c.N * c.V, 47, -c.spread, c.spread);
    for (int64_t i = 0; i < c.N; ++i)
      for (int64_t j = c.numClasses; j < c.V; ++j)
        logits[static_cast<size_t>(i * c.V + j)] = 1e30f;
    const auto targets = randomIds(c.N, c.numClasses, 48);
    int32_t *dTargets = devOf(targets);
    // The two calls.
    float *dLogits = dev(logits), *dLoss = dev(1), *dD = dev(c.N * c.V);
    float *dDloss = dev(std::vector<float>{dlossValue});
    ASSERT_EQ(zrt_cuda::cross_entropy_padded(dLogits, dTargets, dLoss, c.N, c.V,
                                             c.numClasses),
              ZRT_OK)
        << what << ": " << zrt_cuda::last_error();
    const std::vector<double> rows = workspaceDoubles(c.N);
    ASSERT_EQ(zrt_cuda::cross_entropy_padded_backward(
                  dLogits, dTargets, dDloss, dD, c.N, c.V, c.numClasses),
              ZRT_OK)
        << what << ": " << zrt_cuda::last_error();
    // Fused, in place on a second copy.
    float *dFused = dev(logits), *dFusedLoss = dev(1);
    ASSERT_EQ(zrt_cuda::cross_entropy_padded_fused(dFused, dTargets, dFusedLoss,
                                                   dlossValue, c.N, c.V,
                                                   c.numClasses),
              ZRT_OK)
        << what << ": " << zrt_cuda::last_error();
    expectSameBits(rows, workspaceDoubles(c.N), "row losses " + what);
    const std::vector<float> fusedLoss = host(dFusedLoss, 1);
    const std::vector<float> fusedD = host(dFused, c.N * c.V);
    expectSameBits(host(dLoss, 1), fusedLoss, "loss " + what);
    expectSameBits(host(dD, c.N * c.V), fusedD, "gradient " + what);
    // The CPU's fused call.
    std::vector<float> cpu = logits;
    float cpuLoss = 0.0f;
    ASSERT_EQ(zrt_cross_entropy_padded_fused(cpu.data(), targets.data(),
                                             &cpuLoss, dlossValue, c.N, c.V,
                                             c.numClasses),
              ZRT_OK)
        << what << ": " << zrt_last_error();
    if (c.N == 0) {
      EXPECT_TRUE(std::isnan(cpuLoss)) << what;
      EXPECT_TRUE(std::isnan(fusedLoss[0])) << what;
    } else {
      EXPECT_NEAR(fusedLoss[0], cpuLoss, 1e-5f * std::fabs(cpuLoss) + 1e-7f)
          << what;
    }
    const float g = c.N > 0 ? dlossValue / static_cast<float>(c.N) : 0.0f;
    expectCloseGrad(cpu, fusedD, g, "gradient vs cpu " + what);
    zrt_cuda::arena_reset(arena_);
  }
}

TEST_F(CudaKernels, CrossEntropyBadTargetRaisesDeviceError) {
  const int64_t N = 4, V = 10;
  const auto logits = randomVec(N * V, 44);
  float *dLogits = dev(logits), *dLoss = dev(1), *dD = dev(N * V);
  float *dDloss = dev(std::vector<float>{1.0f});
  for (int32_t bad : {10, -1, -7}) {
    // -100 stays ignored; `bad` is neither ignored nor in range.
    const std::vector<int32_t> targets = {1, -100, bad, 9};
    int32_t *dTargets = devOf(targets);
    ASSERT_EQ(zrt_cuda::cross_entropy(dLogits, dTargets, dLoss, N, V, -100),
              ZRT_OK);
    expectPendingDeviceError(dLoss, "cross_entropy " + std::to_string(bad));
    ASSERT_EQ(zrt_cuda::cross_entropy_backward(dLogits, dTargets, 1.0f, dD, N,
                                               V, -100),
              ZRT_OK);
    expectPendingDeviceError(dD, "cross_entropy_backward");
  }
  // Padded: targets must lie in [0, num_classes), not [0, V).
  const std::vector<int32_t> targets = {1, 2, 8, 0};
  int32_t *dTargets = devOf(targets);
  ASSERT_EQ(zrt_cuda::cross_entropy_padded(dLogits, dTargets, dLoss, N, V, 8),
            ZRT_OK);
  expectPendingDeviceError(dLoss, "cross_entropy_padded");
  ASSERT_EQ(zrt_cuda::cross_entropy_padded_backward(dLogits, dTargets, dDloss,
                                                    dD, N, V, 8),
            ZRT_OK);
  expectPendingDeviceError(dD, "cross_entropy_padded_backward");
  ASSERT_EQ(
      zrt_cuda::cross_entropy_padded_fused(dD, dTargets, dLoss, 1.0f, N, V, 8),
      ZRT_OK);
  expectPendingDeviceError(dLoss, "cross_entropy_padded_fused");
  // With every target in range nothing is raised.
  ASSERT_EQ(zrt_cuda::cross_entropy_padded(dLogits, dTargets, dLoss, N, V, 9),
            ZRT_OK);
  float sink = 0.0f;
  EXPECT_EQ(zrt_cuda::copy_to_host(&sink, dLoss, sizeof sink), ZRT_OK);
}

//===----------------------------------------------------------------------===//
// MSE
//===----------------------------------------------------------------------===//

TEST_F(CudaKernels, MseAndBackward) {
  for (int64_t n : {0, 1, 7, 1000, 70001}) {
    const std::string what = "n=" + std::to_string(n);
    const auto pred = randomVec(n, 50, -3.0f, 3.0f);
    const auto target = randomVec(n, 51, -3.0f, 3.0f);
    float refLoss = 0.0f;
    ASSERT_EQ(zrt_mse(pred.data(), target.data(), &refLoss, n), ZRT_OK);
    std::vector<float> refDp(static_cast<size_t>(n)), refDt(refDp.size());
    ASSERT_EQ(zrt_mse_backward(pred.data(), target.data(), 0.3f, refDp.data(),
                               refDt.data(), n),
              ZRT_OK);
    float *dPred = dev(pred), *dTarget = dev(target), *dLoss = dev(1);
    float *dDp = dev(n), *dDt = dev(n);
    ASSERT_EQ(zrt_cuda::mse(dPred, dTarget, dLoss, n), ZRT_OK)
        << zrt_cuda::last_error();
    ASSERT_EQ(zrt_cuda::mse_backward(dPred, dTarget, 0.3f, dDp, dDt, n), ZRT_OK)
        << zrt_cuda::last_error();
    const float loss = host(dLoss, 1)[0];
    if (n == 0) {
      EXPECT_TRUE(std::isnan(refLoss));
      EXPECT_TRUE(std::isnan(loss));
    } else {
      EXPECT_NEAR(loss, refLoss, 2e-7f * refLoss) << what;
    }
    // Two separately rounded operations: bit-identical.
    expectSameBits(refDp, host(dDp, n), "dpred " + what);
    expectSameBits(refDt, host(dDt, n), "dtarget " + what);
    // Either output may be NULL.
    float *dDp2 = dev(n);
    ASSERT_EQ(zrt_cuda::mse_backward(dPred, dTarget, 0.3f, dDp2, nullptr, n),
              ZRT_OK);
    expectSameBits(refDp, host(dDp2, n), "dpred alone " + what);
    ASSERT_EQ(zrt_cuda::mse_backward(dPred, dTarget, 0.3f, nullptr, nullptr, n),
              ZRT_OK);
    zrt_cuda::arena_reset(arena_);
  }
}

//===----------------------------------------------------------------------===//
// Causal attention
//===----------------------------------------------------------------------===//

TEST_F(CudaKernels, CausalAttentionAndBackward) {
  struct Case {
    int64_t B, H, T, D;
    float atol; ///< absolute tolerance (relative 1e-5 on top)
  };
  // {1, 9, 1024, 16}: 9 slices, more than one pass of kWorkspaceBytes
  // (8 slices of [1024, 1024]) when probs is NULL and in the backward.
  const Case cases[] = {{1, 1, 1, 1, 1e-6f},
                        {1, 2, 7, 3, 1e-6f},
                        {2, 3, 65, 16, 2e-6f},
                        {0, 3, 5, 4, 1e-6f},
                        {1, 9, 1024, 16, 1e-5f}};
  for (const Case &c : cases) {
    const std::string what =
        "B=" + std::to_string(c.B) + " H=" + std::to_string(c.H) +
        " T=" + std::to_string(c.T) + " D=" + std::to_string(c.D);
    const int64_t n = c.B * c.H * c.T * c.D;
    const int64_t np = c.B * c.H * c.T * c.T;
    const auto q = randomVec(n, 60), k = randomVec(n, 61), v = randomVec(n, 62);
    const auto dout = randomVec(n, 63);
    std::vector<float> refOut(static_cast<size_t>(n)),
        refP(static_cast<size_t>(np)), refDq(refOut.size()),
        refDk(refOut.size()), refDv(refOut.size());
    ASSERT_EQ(zrt_causal_attention(q.data(), k.data(), v.data(), refOut.data(),
                                   refP.data(), nullptr, c.B, c.H, c.T, c.D),
              ZRT_OK)
        << what;
    ASSERT_EQ(zrt_causal_attention_backward(dout.data(), q.data(), k.data(),
                                            v.data(), refP.data(), refDq.data(),
                                            refDk.data(), refDv.data(), nullptr,
                                            c.B, c.H, c.T, c.D),
              ZRT_OK)
        << what;
    float *dQ = dev(q), *dK = dev(k), *dV = dev(v), *dDout = dev(dout);
    float *dOut = dev(n), *dP = dev(np), *dWs = dev(c.T * c.T);
    float *dDq = dev(n), *dDk = dev(n), *dDv = dev(n);
    // With probs.
    ASSERT_EQ(zrt_cuda::causal_attention(dQ, dK, dV, dOut, dP, nullptr, c.B,
                                         c.H, c.T, c.D),
              ZRT_OK)
        << what << ": " << zrt_cuda::last_error();
    expectClose(refOut, host(dOut, n), c.atol, 1e-5f, "out " + what);
    expectClose(refP, host(dP, np), c.atol, 1e-5f, "probs " + what);
    // Without probs: the workspace of zrt_cuda, then the caller's [T, T].
    for (float *ws : {static_cast<float *>(nullptr), dWs}) {
      const std::string how = ws ? " (caller workspace)" : " (no workspace)";
      ASSERT_EQ(zrt_cuda::fill(dOut, NAN, n), ZRT_OK);
      ASSERT_EQ(zrt_cuda::causal_attention(dQ, dK, dV, dOut, nullptr, ws, c.B,
                                           c.H, c.T, c.D),
                ZRT_OK)
          << what << how << ": " << zrt_cuda::last_error();
      expectClose(refOut, host(dOut, n), c.atol, 1e-5f,
                  "out without probs " + what + how);
    }
    // Backward, from the CPU's probs (in dP: the arena holds one [B, H, T, T]
    // for T = 1024), with and without a workspace.
    ASSERT_EQ(zrt_cuda::copy_to_device(dP, refP.data(), np * 4), ZRT_OK);
    float *dRefP = dP;
    for (float *ws : {static_cast<float *>(nullptr), dWs}) {
      const std::string how = ws ? " (caller workspace)" : " (no workspace)";
      ASSERT_EQ(zrt_cuda::causal_attention_backward(dDout, dQ, dK, dV, dRefP,
                                                    dDq, dDk, dDv, ws, c.B, c.H,
                                                    c.T, c.D),
                ZRT_OK)
          << what << how << ": " << zrt_cuda::last_error();
      expectClose(refDq, host(dDq, n), c.atol, 1e-5f, "dq " + what + how);
      expectClose(refDk, host(dDk, n), c.atol, 1e-5f, "dk " + what + how);
      expectClose(refDv, host(dDv, n), c.atol, 1e-5f, "dv " + what + how);
    }
    zrt_cuda::arena_reset(arena_);
  }
}

//===----------------------------------------------------------------------===//
// Argument checks: same status and message as the CPU runtime, before any
// CUDA call (these run without a device).
//===----------------------------------------------------------------------===//

TEST(CudaLossAttentionArgs, SameErrorAsCpu) {
  float x[4] = {};
  int32_t id[2] = {};
  // Embedding.
  EXPECT_SAME_ERROR(zrt_cuda::embedding(x, id, x, -1, 1, 1),
                    zrt_embedding(x, id, x, -1, 1, 1));
  EXPECT_SAME_ERROR(zrt_cuda::embedding(x, id, x, 1, -1, 1),
                    zrt_embedding(x, id, x, 1, -1, 1));
  EXPECT_SAME_ERROR(zrt_cuda::embedding(x, nullptr, x, 1, 1, 1),
                    zrt_embedding(x, nullptr, x, 1, 1, 1));
  EXPECT_SAME_ERROR(zrt_cuda::embedding(x, id, nullptr, 1, 1, 1),
                    zrt_embedding(x, id, nullptr, 1, 1, 1));
  EXPECT_SAME_ERROR(zrt_cuda::embedding(nullptr, id, x, 1, 1, 1),
                    zrt_embedding(nullptr, id, x, 1, 1, 1));
  EXPECT_SAME_ERROR(zrt_cuda::embedding_backward(x, id, x, 1, 1, -2),
                    zrt_embedding_backward(x, id, x, 1, 1, -2));
  EXPECT_SAME_ERROR(zrt_cuda::embedding_backward(nullptr, id, x, 1, 1, 1),
                    zrt_embedding_backward(nullptr, id, x, 1, 1, 1));
  EXPECT_SAME_ERROR(zrt_cuda::embedding_backward(x, nullptr, x, 1, 1, 1),
                    zrt_embedding_backward(x, nullptr, x, 1, 1, 1));
  EXPECT_SAME_ERROR(zrt_cuda::embedding_backward(x, id, nullptr, 1, 1, 1),
                    zrt_embedding_backward(x, id, nullptr, 1, 1, 1));
  // Cross-entropy.
  EXPECT_SAME_ERROR(zrt_cuda::cross_entropy(x, id, x, 1, 0, -100),
                    zrt_cross_entropy(x, id, x, 1, 0, -100));
  EXPECT_SAME_ERROR(zrt_cuda::cross_entropy(x, id, x, -1, 2, -100),
                    zrt_cross_entropy(x, id, x, -1, 2, -100));
  EXPECT_SAME_ERROR(zrt_cuda::cross_entropy(x, id, nullptr, 1, 2, -100),
                    zrt_cross_entropy(x, id, nullptr, 1, 2, -100));
  EXPECT_SAME_ERROR(zrt_cuda::cross_entropy(nullptr, id, x, 1, 2, -100),
                    zrt_cross_entropy(nullptr, id, x, 1, 2, -100));
  EXPECT_SAME_ERROR(zrt_cuda::cross_entropy(x, nullptr, x, 1, 2, -100),
                    zrt_cross_entropy(x, nullptr, x, 1, 2, -100));
  EXPECT_SAME_ERROR(zrt_cuda::cross_entropy_backward(x, id, 1, x, 1, 0, -100),
                    zrt_cross_entropy_backward(x, id, 1, x, 1, 0, -100));
  EXPECT_SAME_ERROR(
      zrt_cuda::cross_entropy_backward(x, id, 1, nullptr, 1, 2, -100),
      zrt_cross_entropy_backward(x, id, 1, nullptr, 1, 2, -100));
  EXPECT_SAME_ERROR(
      zrt_cuda::cross_entropy_backward(nullptr, id, 1, x, 1, 2, -100),
      zrt_cross_entropy_backward(nullptr, id, 1, x, 1, 2, -100));
  // Padded cross-entropy: num_classes outside [1, V], NULL scalars.
  EXPECT_SAME_ERROR(zrt_cuda::cross_entropy_padded(x, id, x, 1, 2, 3),
                    zrt_cross_entropy_padded(x, id, x, 1, 2, 3));
  EXPECT_SAME_ERROR(zrt_cuda::cross_entropy_padded(x, id, x, 1, 2, 0),
                    zrt_cross_entropy_padded(x, id, x, 1, 2, 0));
  EXPECT_SAME_ERROR(zrt_cuda::cross_entropy_padded(x, id, x, -1, 2, 2),
                    zrt_cross_entropy_padded(x, id, x, -1, 2, 2));
  EXPECT_SAME_ERROR(zrt_cuda::cross_entropy_padded(x, id, nullptr, 1, 2, 2),
                    zrt_cross_entropy_padded(x, id, nullptr, 1, 2, 2));
  EXPECT_SAME_ERROR(zrt_cuda::cross_entropy_padded(x, nullptr, x, 1, 2, 2),
                    zrt_cross_entropy_padded(x, nullptr, x, 1, 2, 2));
  EXPECT_SAME_ERROR(
      zrt_cuda::cross_entropy_padded_backward(x, id, x, x, 1, 4, 5),
      zrt_cross_entropy_padded_backward(x, id, x, x, 1, 4, 5));
  EXPECT_SAME_ERROR(
      zrt_cuda::cross_entropy_padded_backward(x, id, nullptr, x, 1, 4, 3),
      zrt_cross_entropy_padded_backward(x, id, nullptr, x, 1, 4, 3));
  EXPECT_SAME_ERROR(
      zrt_cuda::cross_entropy_padded_backward(x, id, x, nullptr, 1, 4, 3),
      zrt_cross_entropy_padded_backward(x, id, x, nullptr, 1, 4, 3));
  EXPECT_SAME_ERROR(
      zrt_cuda::cross_entropy_padded_backward(nullptr, id, x, x, 1, 4, 3),
      zrt_cross_entropy_padded_backward(nullptr, id, x, x, 1, 4, 3));
  // Fused padded cross-entropy: the forward's checks.
  EXPECT_SAME_ERROR(
      zrt_cuda::cross_entropy_padded_fused(x, id, x, 1.0f, 1, 2, 3),
      zrt_cross_entropy_padded_fused(x, id, x, 1.0f, 1, 2, 3));
  EXPECT_SAME_ERROR(
      zrt_cuda::cross_entropy_padded_fused(x, id, x, 1.0f, 1, 2, 0),
      zrt_cross_entropy_padded_fused(x, id, x, 1.0f, 1, 2, 0));
  EXPECT_SAME_ERROR(
      zrt_cuda::cross_entropy_padded_fused(x, id, x, 1.0f, -1, 2, 2),
      zrt_cross_entropy_padded_fused(x, id, x, 1.0f, -1, 2, 2));
  EXPECT_SAME_ERROR(
      zrt_cuda::cross_entropy_padded_fused(x, id, nullptr, 1.0f, 1, 2, 2),
      zrt_cross_entropy_padded_fused(x, id, nullptr, 1.0f, 1, 2, 2));
  EXPECT_SAME_ERROR(
      zrt_cuda::cross_entropy_padded_fused(x, nullptr, x, 1.0f, 1, 2, 2),
      zrt_cross_entropy_padded_fused(x, nullptr, x, 1.0f, 1, 2, 2));
  EXPECT_SAME_ERROR(
      zrt_cuda::cross_entropy_padded_fused(nullptr, id, x, 1.0f, 1, 2, 2),
      zrt_cross_entropy_padded_fused(nullptr, id, x, 1.0f, 1, 2, 2));
  // MSE.
  EXPECT_SAME_ERROR(zrt_cuda::mse(x, x, x, -1), zrt_mse(x, x, x, -1));
  EXPECT_SAME_ERROR(zrt_cuda::mse(x, x, nullptr, 1), zrt_mse(x, x, nullptr, 1));
  EXPECT_SAME_ERROR(zrt_cuda::mse(nullptr, x, x, 1), zrt_mse(nullptr, x, x, 1));
  EXPECT_SAME_ERROR(zrt_cuda::mse_backward(x, x, 1, x, x, -3),
                    zrt_mse_backward(x, x, 1, x, x, -3));
  EXPECT_SAME_ERROR(zrt_cuda::mse_backward(x, nullptr, 1, x, x, 2),
                    zrt_mse_backward(x, nullptr, 1, x, x, 2));
  // Attention: sizes, NULL pointers, T or D above INT32_MAX.
  EXPECT_SAME_ERROR(zrt_cuda::causal_attention(x, x, x, x, x, x, 1, 1, 0, 1),
                    zrt_causal_attention(x, x, x, x, x, x, 1, 1, 0, 1));
  EXPECT_SAME_ERROR(zrt_cuda::causal_attention(x, x, x, x, x, x, 1, 1, 1, 0),
                    zrt_causal_attention(x, x, x, x, x, x, 1, 1, 1, 0));
  EXPECT_SAME_ERROR(zrt_cuda::causal_attention(x, x, x, x, x, x, -1, 1, 1, 1),
                    zrt_causal_attention(x, x, x, x, x, x, -1, 1, 1, 1));
  EXPECT_SAME_ERROR(
      zrt_cuda::causal_attention(x, x, x, x, x, x, 1, 1, int64_t(1) << 31, 1),
      zrt_causal_attention(x, x, x, x, x, x, 1, 1, int64_t(1) << 31, 1));
  EXPECT_SAME_ERROR(
      zrt_cuda::causal_attention(nullptr, x, x, x, x, x, 1, 1, 1, 1),
      zrt_causal_attention(nullptr, x, x, x, x, x, 1, 1, 1, 1));
  EXPECT_SAME_ERROR(
      zrt_cuda::causal_attention(x, x, x, nullptr, x, x, 1, 1, 1, 1),
      zrt_causal_attention(x, x, x, nullptr, x, x, 1, 1, 1, 1));
  EXPECT_SAME_ERROR(zrt_cuda::causal_attention_backward(x, x, x, x, nullptr, x,
                                                        x, x, x, 1, 1, 1, 1),
                    zrt_causal_attention_backward(x, x, x, x, nullptr, x, x, x,
                                                  x, 1, 1, 1, 1));
  EXPECT_SAME_ERROR(zrt_cuda::causal_attention_backward(x, x, x, x, x, x, x,
                                                        nullptr, x, 1, 1, 1, 1),
                    zrt_causal_attention_backward(x, x, x, x, x, x, x, nullptr,
                                                  x, 1, 1, 1, 1));
  EXPECT_SAME_ERROR(
      zrt_cuda::causal_attention_backward(x, x, x, x, x, x, x, x, x, 1, -1, 1,
                                          1),
      zrt_causal_attention_backward(x, x, x, x, x, x, x, x, x, 1, -1, 1, 1));
  // Empty: nothing to do, no device needed.
  EXPECT_EQ(zrt_cuda::embedding(nullptr, nullptr, nullptr, 0, 0, 0), ZRT_OK);
  EXPECT_EQ(zrt_cuda::cross_entropy_backward(nullptr, nullptr, 1, nullptr, 0, 3,
                                             -100),
            ZRT_OK);
  EXPECT_EQ(zrt_cuda::cross_entropy_padded_backward(nullptr, nullptr, x,
                                                    nullptr, 0, 3, 3),
            ZRT_OK);
  EXPECT_EQ(zrt_cuda::mse_backward(nullptr, nullptr, 1, nullptr, nullptr, 0),
            ZRT_OK);
  EXPECT_EQ(zrt_cuda::causal_attention(nullptr, nullptr, nullptr, nullptr,
                                       nullptr, nullptr, 0, 4, 8, 8),
            ZRT_OK);
  EXPECT_EQ(zrt_cuda::causal_attention_backward(
                nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                nullptr, nullptr, 3, 0, 8, 8),
            ZRT_OK);
}

} // namespace
