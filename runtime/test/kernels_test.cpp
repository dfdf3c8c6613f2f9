//===- kernels_test.cpp - Forward values and finite-difference gradients ---===//
//
// Every backward kernel is checked against central finite differences of
// L = sum(w * forward(x)) evaluated with the f32 forward kernel (L in
// double), with the upstream gradient dout = w.
//
//===----------------------------------------------------------------------===//

#include "test_util.h"

#include "common/internal.h"
#include "common/matmul_args.h"
#include "cpu/gemm.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

using namespace zrt_test;

namespace {

// Naive reference: C[b] = alpha op(A[b]) op(B[b]) + beta C[b] + bias, double.
std::vector<double> naiveMatmul(const std::vector<float> &A,
                                const std::vector<float> &B,
                                const float *bias, const std::vector<float> &C0,
                                int batch, int M, int N, int K, bool ta,
                                bool tb, float alpha, float beta) {
  std::vector<double> C(static_cast<size_t>(batch) * M * N);
  for (int b = 0; b < batch; ++b)
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        double acc = 0.0;
        for (int k = 0; k < K; ++k) {
          double a = ta ? A[b * M * K + k * M + i] : A[b * M * K + i * K + k];
          double bv = tb ? B[b * K * N + j * K + k] : B[b * K * N + k * N + j];
          acc += a * bv;
        }
        double c = alpha * acc + beta * C0[b * M * N + i * N + j];
        if (bias)
          c += bias[j];
        C[b * M * N + i * N + j] = c;
      }
  return C;
}

class MatmulTransposeTest
    : public ::testing::TestWithParam<std::tuple<bool, bool>> {};

} // namespace

TEST_P(MatmulTransposeTest, ForwardMatchesNaive) {
  const bool ta = std::get<0>(GetParam()), tb = std::get<1>(GetParam());
  const int batch = 3, M = 4, N = 5, K = 6;
  auto A = randomVec(batch * M * K, 1), B = randomVec(batch * K * N, 2);
  auto bias = randomVec(N, 3), C = randomVec(batch * M * N, 4);
  auto ref = naiveMatmul(A, B, bias.data(), C, batch, M, N, K, ta, tb, 0.75f,
                         0.5f);
  ASSERT_EQ(zrt_matmul(A.data(), B.data(), bias.data(), C.data(), batch, M, N,
                       K, ta, tb, 0.75f, 0.5f, ZRT_STRIDE_PACKED,
                       ZRT_STRIDE_PACKED, ZRT_STRIDE_PACKED),
            ZRT_OK);
  expectAllNear(C.data(), ref, "C");
}

// Checks the documented backward recipe (matmuls with flipped transposes and
// zrt_bias_backward) against finite differences, batched.
TEST_P(MatmulTransposeTest, GradientsMatchFiniteDifferences) {
  const bool ta = std::get<0>(GetParam()), tb = std::get<1>(GetParam());
  const int batch = 2, M = 3, N = 4, K = 5;
  auto A = randomVec(batch * M * K, 11), B = randomVec(batch * K * N, 12);
  auto bias = randomVec(N, 13), w = randomVec(batch * M * N, 14);
  const int64_t P = ZRT_STRIDE_PACKED;
  auto forward = [&] {
    std::vector<float> C(batch * M * N);
    EXPECT_EQ(zrt_matmul(A.data(), B.data(), bias.data(), C.data(), batch, M,
                         N, K, ta, tb, 1.0f, 0.0f, P, P, P),
              ZRT_OK);
    return weightedSum(w, C);
  };
  const float *dC = w.data();
  std::vector<float> dA(A.size()), dB(B.size()), dbias(N);
  // d op(A) = dC op(B)^T  [M, K];  d op(B) = op(A)^T dC  [K, N].
  if (!ta) {
    ASSERT_EQ(zrt_matmul(dC, B.data(), nullptr, dA.data(), batch, M, K, N, 0,
                         tb ? 0 : 1, 1.0f, 0.0f, P, P, P),
              ZRT_OK);
  } else { // dA stored [K, M] = op(B) dC^T
    ASSERT_EQ(zrt_matmul(B.data(), dC, nullptr, dA.data(), batch, K, M, N,
                         tb ? 1 : 0, 1, 1.0f, 0.0f, P, P, P),
              ZRT_OK);
  }
  if (!tb) {
    ASSERT_EQ(zrt_matmul(A.data(), dC, nullptr, dB.data(), batch, K, N, M,
                         ta ? 0 : 1, 0, 1.0f, 0.0f, P, P, P),
              ZRT_OK);
  } else { // dB stored [N, K] = dC^T op(A)
    ASSERT_EQ(zrt_matmul(dC, A.data(), nullptr, dB.data(), batch, N, K, M, 1,
                         ta ? 1 : 0, 1.0f, 0.0f, P, P, P),
              ZRT_OK);
  }
  ASSERT_EQ(zrt_bias_backward(dC, dbias.data(), batch * M, N), ZRT_OK);
  expectGradNear(dA, numericGrad(A, forward), "dA");
  expectGradNear(dB, numericGrad(B, forward), "dB");
  expectGradNear(dbias, numericGrad(bias, forward), "dbias");
}

INSTANTIATE_TEST_SUITE_P(AllTransposes, MatmulTransposeTest,
                         ::testing::Combine(::testing::Bool(),
                                            ::testing::Bool()));

TEST(MatmulTest, BroadcastStrideZeroReusesB) {
  const int batch = 3, M = 2, N = 3, K = 4;
  auto A = randomVec(batch * M * K, 21), B1 = randomVec(K * N, 22);
  std::vector<float> Bfull;
  for (int b = 0; b < batch; ++b)
    Bfull.insert(Bfull.end(), B1.begin(), B1.end());
  std::vector<float> C1(batch * M * N), C2(batch * M * N);
  ASSERT_EQ(zrt_matmul(A.data(), B1.data(), nullptr, C1.data(), batch, M, N, K,
                       0, 0, 1.0f, 0.0f, ZRT_STRIDE_PACKED, 0,
                       ZRT_STRIDE_PACKED),
            ZRT_OK);
  ASSERT_EQ(zrt_matmul(A.data(), Bfull.data(), nullptr, C2.data(), batch, M, N,
                       K, 0, 0, 1.0f, 0.0f, ZRT_STRIDE_PACKED,
                       ZRT_STRIDE_PACKED, ZRT_STRIDE_PACKED),
            ZRT_OK);
  EXPECT_EQ(C1, C2);
}

TEST(MatmulTest, BetaZeroIgnoresGarbageInC) {
  std::vector<float> A = {1, 2, 3, 4}, B = {1, 0, 0, 1};
  std::vector<float> C(4, std::numeric_limits<float>::quiet_NaN());
  ASSERT_EQ(zrt_matmul(A.data(), B.data(), nullptr, C.data(), 1, 2, 2, 2, 0, 0,
                       1.0f, 0.0f, ZRT_STRIDE_PACKED, ZRT_STRIDE_PACKED,
                       ZRT_STRIDE_PACKED),
            ZRT_OK);
  EXPECT_EQ(C, A);
}

TEST(MatmulTest, RejectsBadArguments) {
  float x[4] = {};
  EXPECT_EQ(zrt_matmul(x, x, nullptr, x, 1, -1, 2, 2, 0, 0, 1, 0, -1, -1, -1),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zrt_last_error()).find("zrt_matmul"),
            std::string::npos);
  EXPECT_EQ(zrt_matmul(x, x, nullptr, x, 2, 1, 1, 1, 0, 0, 1, 0, -1, -1, 0),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zrt_matmul(nullptr, x, nullptr, x, 1, 2, 2, 2, 0, 0, 1, 0, -1, -1,
                       -1),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zrt_matmul(x, x, nullptr, x, 1, 1, 1, 1, 0, 0, 1, 0, -5, -1, -1),
            ZRT_ERR_INVALID_ARGUMENT);
}

/// bf16 copies of random values in [lo, hi) (rounded with zrt_f32_to_bf16).
std::vector<zrt_bf16> randomBf16(size_t n, uint32_t seed, float lo = -1.0f,
                                 float hi = 1.0f) {
  std::vector<float> f = randomVec(n, seed, lo, hi);
  std::vector<zrt_bf16> out(n);
  for (size_t i = 0; i < n; ++i)
    out[i] = zrt_f32_to_bf16(f[i]);
  return out;
}

/// The exact f32 widening of x (zrt_cast_bf16_to_f32).
std::vector<float> widen(const std::vector<zrt_bf16> &x) {
  std::vector<float> f(x.size());
  zrt_cast_bf16_to_f32(x.data(), f.data(), static_cast<int64_t>(x.size()));
  return f;
}

/// x rounded once to bf16 (zrt_cast_f32_to_bf16).
std::vector<zrt_bf16> roundBf16(const std::vector<float> &x) {
  std::vector<zrt_bf16> h(x.size());
  zrt_cast_f32_to_bf16(x.data(), h.data(), static_cast<int64_t>(x.size()));
  return h;
}

/// The reference of the bf16 products: zrt_matmul (f32, alpha 1, beta 0) on
/// the widened packed operands and bias (NULL: none); [batch, M, N] f32.
std::vector<float> widenedMatmul(const std::vector<zrt_bf16> &A,
                                 const std::vector<zrt_bf16> &B,
                                 const zrt_bf16 *bias, int64_t batch, int64_t M,
                                 int64_t N, int64_t K, int ta, int tb) {
  std::vector<float> fbias(static_cast<size_t>(N)),
      fc(static_cast<size_t>(batch * M * N));
  if (bias)
    zrt_cast_bf16_to_f32(bias, fbias.data(), N);
  EXPECT_EQ(zrt_matmul(widen(A).data(), widen(B).data(),
                       bias ? fbias.data() : nullptr, fc.data(), batch, M, N, K,
                       ta, tb, 1.0f, 0.0f, ZRT_STRIDE_PACKED, ZRT_STRIDE_PACKED,
                       ZRT_STRIDE_PACKED),
            ZRT_OK)
      << zrt_last_error();
  return fc;
}

/// Whether this runtime multiplies bf16 natively (zrt::gemmBf16: oneDNN's
/// matmul) rather than widening to f32.
bool nativeBf16Gemm() {
  const zrt_bf16 one = zrt_f32_to_bf16(1.0f);
  float c = 0.0f;
  zrt::GemmOut out;
  out.f32 = &c;
  int st = ZRT_OK;
  return zrt::gemmBf16(false, false, 1, 1, 1, &one, 1, &one, 1, nullptr, out,
                       1, &st) &&
         st == ZRT_OK;
}

/// acc = op(A) op(B) + bias (NULL: none) in f32, [batch, M, N] of packed
/// matrices, as zrt_matmul_bf16 computes it before its epilogue:
/// zrt::gemmBf16 with f32 C per matrix when the runtime has a native bf16
/// GEMM, else widenedMatmul.
std::vector<float> runtimeAcc(const std::vector<zrt_bf16> &A,
                              const std::vector<zrt_bf16> &B,
                              const zrt_bf16 *bias, int64_t batch, int64_t M,
                              int64_t N, int64_t K, int ta, int tb) {
  if (!nativeBf16Gemm())
    return widenedMatmul(A, B, bias, batch, M, N, K, ta, tb);
  std::vector<float> acc(static_cast<size_t>(batch * M * N));
  for (int64_t s = 0; s < batch; ++s) {
    zrt::GemmOut out;
    out.f32 = acc.data() + s * M * N;
    int st = ZRT_OK;
    EXPECT_TRUE(zrt::gemmBf16(ta, tb, M, N, K, A.data() + s * M * K,
                              ta ? M : K, B.data() + s * K * N, tb ? K : N,
                              bias, out, N, &st));
    EXPECT_EQ(st, ZRT_OK) << zrt_last_error();
  }
  return acc;
}

// zrt_matmul_bf16 is zrt_matmul on the widened operands, C rounded once:
// bit for bit where the runtime widens, for every transpose combination,
// batched, with and without a bias. A native bf16 GEMM (oneDNN: AMX's
// TDPBF16PS adds pairs of exact products) sums in another order, so there
// C is either rounding of the f32 product, up to the f32 error of a K-term
// sum: |C - fc| <= 2^-7 |fc| + K 2^-23 sum_k |a_k b_k| (+ |bias|).
TEST(MatmulBf16Test, EqualsWidenedMatmulRoundedOnce) {
  const int64_t batch = 3, M = 5, N = 7, K = 6;
  for (int ta : {0, 1})
    for (int tb : {0, 1})
      for (bool withBias : {false, true}) {
        auto A = randomBf16(batch * M * K, 1), B = randomBf16(batch * K * N, 2),
             bias = randomBf16(N, 3);
        const std::vector<float> fc = widenedMatmul(
            A, B, withBias ? bias.data() : nullptr, batch, M, N, K, ta, tb);
        const std::vector<zrt_bf16> want = roundBf16(fc);
        std::vector<zrt_bf16> got(fc.size(), 0xffff);
        const int64_t ws =
            zrt_matmul_bf16_workspace(batch, M, N, K, withBias ? 1 : 0);
        // One widened op(B), the bias, one chunk of rows (here all M) of
        // widened op(A) and f32 C; independent of the batch size.
        ASSERT_EQ(ws, K * N + (withBias ? N : 0) + M * (K + N));
        std::vector<float> work(static_cast<size_t>(ws));
        ASSERT_EQ(zrt_matmul_bf16(A.data(), B.data(),
                                  withBias ? bias.data() : nullptr, got.data(),
                                  batch, M, N, K, ta, tb, work.data()),
                  ZRT_OK)
            << zrt_last_error();
        if (!nativeBf16Gemm()) {
          EXPECT_EQ(got, want) << "ta=" << ta << " tb=" << tb
                               << " bias=" << withBias;
          continue;
        }
        std::vector<zrt_bf16> absA(A), absB(B), absBias(bias);
        for (auto *v : {&absA, &absB, &absBias})
          for (zrt_bf16 &x : *v)
            x &= 0x7fff;
        const std::vector<float> mag =
            widenedMatmul(absA, absB, withBias ? absBias.data() : nullptr,
                          batch, M, N, K, ta, tb);
        const std::vector<float> g = widen(got);
        for (size_t i = 0; i < g.size(); ++i)
          EXPECT_LE(std::fabs(g[i] - fc[i]),
                    std::ldexp(std::fabs(fc[i]), -7) +
                        std::ldexp(float(K) * mag[i], -23))
              << "i=" << i << " ta=" << ta << " tb=" << tb
              << " bias=" << withBias;
      }
}

// The CPU computes C in chunks of rows within a fixed f32 budget, so the
// workspace stays bounded for any M (the LM head of GPT-2 at B = 16, T =
// 1024: 55M floats instead of 875M). At these small sizes chunks of 1, 2
// and 3 rows give the bits of the single chunk, for every transpose
// combination (at large ones OpenBLAS may round a few chunk-edge elements
// differently: see matmul.cpp).
TEST(MatmulBf16Test, RowChunksGiveTheSameBits) {
  const int64_t batch = 2, M = 7, N = 5, K = 9;
  for (int ta : {0, 1})
    for (int tb : {0, 1})
      for (bool withBias : {false, true}) {
        auto A = randomBf16(batch * M * K, 11),
             B = randomBf16(batch * K * N, 12), bias = randomBf16(N, 13);
        const zrt_bf16 *b = withBias ? bias.data() : nullptr;
        auto run = [&](int64_t chunkFloats) {
          const int64_t rows = zrt::matmulBf16ChunkRows(M, N, K, chunkFloats);
          std::vector<float> work(static_cast<size_t>(
              zrt::matmulBf16Workspace(batch, M, N, K, withBias, chunkFloats)));
          EXPECT_EQ(work.size(),
                    size_t(K * N + (withBias ? N : 0) + rows * (K + N)));
          std::vector<zrt_bf16> c(batch * M * N, 0xffff);
          EXPECT_EQ(zrt::matmulBf16Chunked(A.data(), B.data(), b, c.data(),
                                           batch, M, N, K, ta, tb, work.data(),
                                           chunkFloats),
                    ZRT_OK)
              << zrt_last_error();
          return c;
        };
        const auto whole = run(zrt::kMatmulBf16ChunkFloats);
        for (int64_t rows : {1, 2, 3})
          EXPECT_EQ(run(rows * (K + N)), whole)
              << "rows=" << rows << " ta=" << ta << " tb=" << tb
              << " bias=" << withBias;
      }
  // The budget bounds the rows: at least one, at most M.
  EXPECT_EQ(zrt::matmulBf16ChunkRows(1000, 50304, 768),
            (int64_t(1) << 24) / (50304 + 768));
  EXPECT_EQ(zrt::matmulBf16ChunkRows(3, 50304, 768), 3);
  EXPECT_EQ(zrt::matmulBf16ChunkRows(1000, int64_t(1) << 25, 1), 1);
  EXPECT_EQ(zrt_matmul_bf16_workspace(16, 1024, 50304, 768, 0),
            768 * 50304 + 328 * (768 + 50304));
  // The lowering reserves the same (test/Transforms/Zero/
  // zero-buffer-assign.mlir pins this number on its side).
  EXPECT_EQ(zrt_matmul_bf16_workspace(1, 4096, 4096, 64, 0), 17035264);
}

TEST(MatmulBf16Test, RejectsBadArguments) {
  zrt_bf16 x[4] = {};
  float work[16] = {};
  EXPECT_EQ(zrt_matmul_bf16(x, x, nullptr, x, 1, 2, 2, 2, 0, 0, nullptr),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zrt_last_error()).find("zrt_matmul_bf16: workspace"),
            std::string::npos)
      << zrt_last_error();
  EXPECT_EQ(zrt_matmul_bf16(x, x, nullptr, x, 1, -1, 2, 2, 0, 0, work),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zrt_last_error()).find("zrt_matmul_bf16: negative"),
            std::string::npos)
      << zrt_last_error();
  EXPECT_EQ(zrt_matmul_bf16(x, nullptr, nullptr, x, 1, 2, 2, 2, 0, 0, work),
            ZRT_ERR_INVALID_ARGUMENT);
  // Nothing to compute: no workspace needed.
  EXPECT_EQ(zrt_matmul_bf16(x, x, nullptr, x, 0, 2, 2, 2, 0, 0, nullptr),
            ZRT_OK);
  EXPECT_EQ(zrt_matmul_bf16_workspace(-1, 1, 1, 1, 0), -1);
  // K N overflows (M no longer multiplies: the rows come in chunks).
  EXPECT_EQ(zrt_matmul_bf16_workspace(1, 4, INT64_MAX / 2, 4, 0), -1);
  EXPECT_EQ(zrt_matmul_bf16_workspace(1, INT64_MAX / 2, 4, 1, 0),
            4 + (int64_t(1) << 24) / 5 * 5);
}

//===----------------------------------------------------------------------===//
// zrt_matmul_gelu_bf16 / zrt_matmul_gelu_backward_bf16: the matmul's
// unrounded f32 values through zrt_gelu / zrt_gelu_backward, rounded once.
//===----------------------------------------------------------------------===//

/// The CPU's fused results' reference: the f32 GELU (forward) or GELU
/// gradient (backward, pre given) of the f32 products acc, rounded once.
std::vector<zrt_bf16> geluReference(const std::vector<float> &acc,
                                    const std::vector<zrt_bf16> *pre) {
  std::vector<float> f(acc.size());
  const int64_t n = static_cast<int64_t>(acc.size());
  if (pre)
    EXPECT_EQ(zrt_gelu_backward(widen(*pre).data(), acc.data(), f.data(), n),
              ZRT_OK);
  else
    EXPECT_EQ(zrt_gelu(acc.data(), f.data(), n), ZRT_OK);
  return roundBf16(f);
}

// The forward writes pre = bf16(acc) and out = bf16(gelu(acc)) from the
// f32 acc of the product (runtimeAcc: zrt_matmul on the widened operands,
// or the native bf16 GEMM), bit for bit: every
// transpose combination, batched, with and without a bias, with and
// without pre. K = 40 spreads acc over about [-4, 4], so GELU's negative
// side (where gelu(acc) is far from acc) is covered.
TEST(MatmulGeluBf16Test, EqualsWidenedMatmulThenGelu) {
  const int64_t batch = 3, M = 5, N = 7, K = 40;
  for (int ta : {0, 1})
    for (int tb : {0, 1})
      for (bool withBias : {false, true}) {
        const auto A = randomBf16(batch * M * K, 41),
                   B = randomBf16(batch * K * N, 42), bias = randomBf16(N, 43);
        const zrt_bf16 *b = withBias ? bias.data() : nullptr;
        const std::vector<float> acc =
            runtimeAcc(A, B, b, batch, M, N, K, ta, tb);
        const std::vector<zrt_bf16> wantPre = roundBf16(acc),
                                    wantOut = geluReference(acc, nullptr);
        std::vector<float> work(static_cast<size_t>(
            zrt_matmul_bf16_workspace(batch, M, N, K, withBias)));
        for (bool withPre : {true, false}) {
          std::vector<zrt_bf16> pre(acc.size(), 0xffff),
              out(acc.size(), 0xffff);
          ASSERT_EQ(zrt_matmul_gelu_bf16(
                        A.data(), B.data(), b, withPre ? pre.data() : nullptr,
                        out.data(), batch, M, N, K, ta, tb, work.data()),
                    ZRT_OK)
              << zrt_last_error();
          EXPECT_EQ(out, wantOut) << "ta=" << ta << " tb=" << tb
                                  << " bias=" << withBias << " pre=" << withPre;
          if (withPre)
            EXPECT_EQ(pre, wantPre)
                << "ta=" << ta << " tb=" << tb << " bias=" << withBias;
        }
      }
}

// The backward writes dpre = bf16(acc * gelu'(f32(pre))) from the f32 acc
// of the product, bit for bit, out of place and in place (dpre == pre).
TEST(MatmulGeluBf16Test, BackwardEqualsWidenedMatmulThenGeluBackward) {
  const int64_t batch = 2, M = 6, N = 5, K = 9;
  for (int ta : {0, 1})
    for (int tb : {0, 1}) {
      const auto A = randomBf16(batch * M * K, 51),
                 B = randomBf16(batch * K * N, 52),
                 pre = randomBf16(batch * M * N, 53, -4.0f, 4.0f);
      const std::vector<float> acc =
          runtimeAcc(A, B, nullptr, batch, M, N, K, ta, tb);
      const std::vector<zrt_bf16> want = geluReference(acc, &pre);
      std::vector<float> work(
          static_cast<size_t>(zrt_matmul_bf16_workspace(batch, M, N, K, 0)));
      std::vector<zrt_bf16> dpre(acc.size(), 0xffff);
      ASSERT_EQ(zrt_matmul_gelu_backward_bf16(A.data(), B.data(), pre.data(),
                                              dpre.data(), batch, M, N, K, ta,
                                              tb, work.data()),
                ZRT_OK)
          << zrt_last_error();
      EXPECT_EQ(dpre, want) << "ta=" << ta << " tb=" << tb;
      std::vector<zrt_bf16> inPlace = pre;
      ASSERT_EQ(zrt_matmul_gelu_backward_bf16(
                    A.data(), B.data(), inPlace.data(), inPlace.data(), batch,
                    M, N, K, ta, tb, work.data()),
                ZRT_OK)
          << zrt_last_error();
      EXPECT_EQ(inPlace, want) << "in place, ta=" << ta << " tb=" << tb;
    }
}

// Chunks of 1, 2 and 3 rows give the single chunk's bits for the GELU
// epilogues too (each chunk's f32 values go through the epilogue before the
// next chunk overwrites them).
TEST(MatmulGeluBf16Test, RowChunksGiveTheSameBits) {
  const int64_t batch = 2, M = 7, N = 5, K = 9;
  const auto A = randomBf16(batch * M * K, 61),
             B = randomBf16(batch * K * N, 62), bias = randomBf16(N, 63),
             preIn = randomBf16(batch * M * N, 64, -4.0f, 4.0f);
  for (int ta : {0, 1})
    for (bool backward : {false, true}) {
      const zrt_bf16 *b = backward ? nullptr : bias.data();
      auto run = [&](int64_t chunkFloats) {
        std::vector<float> work(static_cast<size_t>(zrt::matmulBf16Workspace(
            batch, M, N, K, b != nullptr, chunkFloats)));
        std::vector<zrt_bf16> pre(batch * M * N, 0xffff),
            out(batch * M * N, 0xffff);
        const auto epilogue =
            backward ? zrt::MatmulBf16Epilogue::geluBackward(preIn.data())
                     : zrt::MatmulBf16Epilogue::gelu(pre.data());
        EXPECT_EQ(zrt::matmulBf16Chunked(A.data(), B.data(), b, out.data(),
                                         batch, M, N, K, ta, 1, work.data(),
                                         chunkFloats, epilogue),
                  ZRT_OK)
            << zrt_last_error();
        out.insert(out.end(), pre.begin(), pre.end());
        return out;
      };
      const auto whole = run(zrt::kMatmulBf16ChunkFloats);
      for (int64_t rows : {1, 2, 3})
        EXPECT_EQ(run(rows * (K + N)), whole)
            << "rows=" << rows << " ta=" << ta << " backward=" << backward;
    }
}

// A product larger than one row chunk through the zrt.h functions (as
// GPT-2's MLP at B = 16, T = 1024: 16384 rows of K + N = 3840, 4369 rows
// per chunk; here K + N = 128, 2^17 rows per chunk, and 128 more). The
// reference is chunked the same way (zrt_matmul on each chunk's widened
// rows, then the f32 GELU and one rounding) and must match bit for bit:
// OpenBLAS computes the same sub-products. It is not one whole-matrix
// zrt_matmul because that one may round a few elements at the chunk edge
// differently in the last bit (see matmul.cpp). With a native bf16 GEMM
// the chunks' acc is that GEMM's (runtimeAcc), which the epilogue must
// read exactly. pre must also be zrt_matmul_bf16's C exactly.
TEST(MatmulGeluBf16Test, LargerThanOneChunk) {
  const int64_t M = (int64_t(1) << 17) + 128, N = 64, K = 64;
  const int64_t rows = zrt::matmulBf16ChunkRows(M, N, K);
  ASSERT_LT(rows, M) << "the case must need more than one chunk";
  const auto A = randomBf16(M * K, 71), B = randomBf16(N * K, 72),
             bias = randomBf16(N, 73);
  const auto preIn = randomBf16(M * N, 74, -4.0f, 4.0f);
  // acc chunk by chunk of rows [m0, m0 + mc), as the runtime computes it
  // (trans_b = 1).
  auto chunkedAcc = [&](const zrt_bf16 *b) {
    std::vector<float> acc;
    for (int64_t m0 = 0; m0 < M; m0 += rows) {
      const int64_t mc = std::min(rows, M - m0);
      const std::vector<zrt_bf16> chunk(A.begin() + m0 * K,
                                        A.begin() + (m0 + mc) * K);
      const auto part = runtimeAcc(chunk, B, b, 1, mc, N, K, 0, 1);
      acc.insert(acc.end(), part.begin(), part.end());
    }
    return acc;
  };
  const std::vector<float> acc = chunkedAcc(bias.data());
  std::vector<float> work(
      static_cast<size_t>(zrt_matmul_bf16_workspace(1, M, N, K, 1)));
  std::vector<zrt_bf16> pre(M * N), out(M * N), c(M * N);
  ASSERT_EQ(zrt_matmul_gelu_bf16(A.data(), B.data(), bias.data(), pre.data(),
                                 out.data(), 1, M, N, K, 0, 1, work.data()),
            ZRT_OK)
      << zrt_last_error();
  EXPECT_TRUE(out == geluReference(acc, nullptr));
  EXPECT_TRUE(pre == roundBf16(acc));
  ASSERT_EQ(zrt_matmul_bf16(A.data(), B.data(), bias.data(), c.data(), 1, M, N,
                            K, 0, 1, work.data()),
            ZRT_OK);
  EXPECT_TRUE(pre == c);
  // The backward (no bias).
  ASSERT_EQ(zrt_matmul_gelu_backward_bf16(A.data(), B.data(), preIn.data(),
                                          out.data(), 1, M, N, K, 0, 1,
                                          work.data()),
            ZRT_OK)
      << zrt_last_error();
  EXPECT_TRUE(out == geluReference(chunkedAcc(nullptr), &preIn));
}

// zrt_matmul_bf16's argument errors (with the fused functions' names), a
// NULL pre for the backward, and nothing written on an error.
TEST(MatmulGeluBf16Test, RejectsBadArguments) {
  zrt_bf16 x[4] = {1, 2, 3, 4}, pre[4] = {5, 6, 7, 8}, out[4] = {9, 9, 9, 9};
  float work[16] = {};
  auto expectError = [](int status, const char *what) {
    EXPECT_EQ(status, ZRT_ERR_INVALID_ARGUMENT) << what;
    EXPECT_NE(std::string(zrt_last_error()).find(what), std::string::npos)
        << zrt_last_error();
  };
  expectError(
      zrt_matmul_gelu_bf16(x, x, x, pre, out, 1, 2, 2, 2, 0, 0, nullptr),
      "zrt_matmul_gelu_bf16: workspace is NULL");
  expectError(zrt_matmul_gelu_bf16(x, x, x, pre, out, 1, -1, 2, 2, 0, 0, work),
              "zrt_matmul_gelu_bf16: negative");
  expectError(zrt_matmul_gelu_bf16(x, x, x, pre, out, -2, 2, 2, 2, 0, 0, work),
              "zrt_matmul_gelu_bf16: negative");
  expectError(
      zrt_matmul_gelu_bf16(x, nullptr, x, pre, out, 1, 2, 2, 2, 0, 0, work),
      "zrt_matmul_gelu_bf16: A or B is NULL");
  expectError(
      zrt_matmul_gelu_bf16(x, x, x, pre, nullptr, 1, 2, 2, 2, 0, 0, work),
      "zrt_matmul_gelu_bf16: C is NULL");
  expectError(
      zrt_matmul_gelu_backward_bf16(x, x, pre, out, 1, 2, 2, 2, 0, 0, nullptr),
      "zrt_matmul_gelu_backward_bf16: workspace is NULL");
  expectError(
      zrt_matmul_gelu_backward_bf16(x, x, pre, out, 1, 2, 2, -3, 0, 0, work),
      "zrt_matmul_gelu_backward_bf16: negative");
  expectError(
      zrt_matmul_gelu_backward_bf16(x, x, nullptr, out, 1, 2, 2, 2, 0, 0, work),
      "zrt_matmul_gelu_backward_bf16: pre is NULL");
  const zrt_bf16 pre0[4] = {5, 6, 7, 8}, out0[4] = {9, 9, 9, 9};
  EXPECT_TRUE(std::equal(pre, pre + 4, pre0) && std::equal(out, out + 4, out0))
      << "an output was written before the arguments were checked";
  // Nothing to compute: no workspace (and for the backward no pre) needed.
  EXPECT_EQ(zrt_matmul_gelu_bf16(x, x, x, pre, out, 0, 2, 2, 2, 0, 0, nullptr),
            ZRT_OK);
  EXPECT_EQ(zrt_matmul_gelu_backward_bf16(x, x, nullptr, out, 1, 0, 2, 2, 0, 0,
                                          nullptr),
            ZRT_OK);
  // K = 0: acc = bias, so pre = bias and out = gelu(bias) on every row.
  const zrt_bf16 b2[2] = {zrt_f32_to_bf16(1.5f), zrt_f32_to_bf16(-2.0f)};
  ASSERT_EQ(zrt_matmul_gelu_bf16(nullptr, nullptr, b2, pre, out, 1, 2, 2, 0, 0,
                                 0, work),
            ZRT_OK)
      << zrt_last_error();
  float g[2];
  const float bf[2] = {1.5f, -2.0f};
  zrt_gelu(bf, g, 2);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(pre[i], b2[i % 2]) << i;
    EXPECT_EQ(out[i], zrt_f32_to_bf16(g[i % 2])) << i;
  }
}

TEST(PermuteTest, SwapsMiddleAxesAndInverts) {
  const int A = 2, B = 3, C = 4, D = 5;
  auto x = randomVec(A * B * C * D, 31);
  std::vector<float> y(x.size()), z(x.size());
  ASSERT_EQ(zrt_permute_0213(x.data(), y.data(), A, B, C, D), ZRT_OK);
  for (int a = 0; a < A; ++a)
    for (int b = 0; b < B; ++b)
      for (int c = 0; c < C; ++c)
        for (int d = 0; d < D; ++d)
          EXPECT_EQ(y[((a * C + c) * B + b) * D + d],
                    x[((a * B + b) * C + c) * D + d]);
  ASSERT_EQ(zrt_permute_0213(y.data(), z.data(), A, C, B, D), ZRT_OK);
  EXPECT_EQ(z, x);
  EXPECT_EQ(zrt_permute_0213(x.data(), x.data(), A, B, C, D),
            ZRT_ERR_INVALID_ARGUMENT);
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

TEST(ElementwiseTest, AddAndMulGradients) {
  const int n = 17;
  auto a = randomVec(n, 41), b = randomVec(n, 42), w = randomVec(n, 43);
  auto addLoss = [&] {
    std::vector<float> y(n);
    EXPECT_EQ(zrt_add(a.data(), b.data(), y.data(), n), ZRT_OK);
    return weightedSum(w, y);
  };
  std::vector<float> da(n), db(n);
  ASSERT_EQ(zrt_add_backward(w.data(), da.data(), db.data(), n), ZRT_OK);
  expectGradNear(da, numericGrad(a, addLoss), "add da");
  expectGradNear(db, numericGrad(b, addLoss), "add db");

  auto mulLoss = [&] {
    std::vector<float> y(n);
    EXPECT_EQ(zrt_mul(a.data(), b.data(), y.data(), n), ZRT_OK);
    return weightedSum(w, y);
  };
  ASSERT_EQ(zrt_mul_backward(a.data(), b.data(), w.data(), da.data(),
                             db.data(), n),
            ZRT_OK);
  expectGradNear(da, numericGrad(a, mulLoss), "mul da");
  expectGradNear(db, numericGrad(b, mulLoss), "mul db");

  auto scaleLoss = [&] {
    std::vector<float> y(n);
    EXPECT_EQ(zrt_scale(a.data(), -2.5f, y.data(), n), ZRT_OK);
    return weightedSum(w, y);
  };
  ASSERT_EQ(zrt_scale(w.data(), -2.5f, da.data(), n), ZRT_OK);
  expectGradNear(da, numericGrad(a, scaleLoss), "scale dx");
}

TEST(ElementwiseTest, ValuesInPlaceAndHelpers) {
  std::vector<float> a = {1, 2, 3}, b = {10, 20, 30}, y(3);
  ASSERT_EQ(zrt_add(a.data(), b.data(), a.data(), 3), ZRT_OK); // in place
  EXPECT_EQ(a, (std::vector<float>{11, 22, 33}));
  ASSERT_EQ(zrt_mul(a.data(), b.data(), y.data(), 3), ZRT_OK);
  EXPECT_EQ(y, (std::vector<float>{110, 440, 990}));
  ASSERT_EQ(zrt_axpy(2.0f, b.data(), y.data(), 3), ZRT_OK);
  EXPECT_EQ(y, (std::vector<float>{130, 480, 1050}));
  ASSERT_EQ(zrt_fill(y.data(), 7.0f, 3), ZRT_OK);
  EXPECT_EQ(y, (std::vector<float>{7, 7, 7}));
  ASSERT_EQ(zrt_copy(b.data(), y.data(), 3), ZRT_OK);
  EXPECT_EQ(y, b);
  EXPECT_EQ(zrt_add(a.data(), nullptr, y.data(), 3), ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zrt_add(a.data(), b.data(), y.data(), -1),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zrt_add(nullptr, nullptr, nullptr, 0), ZRT_OK);
}

TEST(ElementwiseTest, LargeParallelAdd) {
  const int64_t n = 300000; // above the OpenMP grain
  std::vector<float> a(n), b(n), y(n);
  for (int64_t i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i);
    b[i] = 1.0f;
  }
  ASSERT_EQ(zrt_add(a.data(), b.data(), y.data(), n), ZRT_OK);
  for (int64_t i = 0; i < n; i += 997)
    ASSERT_EQ(y[i], static_cast<float>(i) + 1.0f);
}

TEST(ElementwiseTest, GeluMatchesTanhFormulaAndGradient) {
  const int n = 25;
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i)
    x[i] = -3.0f + 0.25f * static_cast<float>(i);
  std::vector<float> y(n);
  ASSERT_EQ(zrt_gelu(x.data(), y.data(), n), ZRT_OK);
  std::vector<double> ref(n);
  for (int i = 0; i < n; ++i) {
    double v = x[i];
    ref[i] = 0.5 * v *
             (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
  }
  expectAllNear(y.data(), ref, "gelu", 1e-5, 1e-6);
  // torch.nn.functional.gelu(torch.tensor(1.0), approximate='tanh')
  float one = 1.0f, g1;
  zrt_gelu(&one, &g1, 1);
  EXPECT_NEAR(g1, 0.8411920071f, 1e-6);

  auto w = randomVec(n, 51);
  auto loss = [&] {
    std::vector<float> out(n);
    EXPECT_EQ(zrt_gelu(x.data(), out.data(), n), ZRT_OK);
    return weightedSum(w, out);
  };
  std::vector<float> dx(n);
  ASSERT_EQ(zrt_gelu_backward(x.data(), w.data(), dx.data(), n), ZRT_OK);
  expectGradNear(dx, numericGrad(x, loss), "gelu dx");
}

TEST(ElementwiseTest, ReluValuesAndGradient) {
  const int n = 20;
  auto x = randomVec(n, 61);
  for (float &v : x) // keep away from the kink at 0
    v = v >= 0 ? v + 0.1f : v - 0.1f;
  auto w = randomVec(n, 62);
  auto loss = [&] {
    std::vector<float> out(n);
    EXPECT_EQ(zrt_relu(x.data(), out.data(), n), ZRT_OK);
    return weightedSum(w, out);
  };
  std::vector<float> dx(n), y(n);
  ASSERT_EQ(zrt_relu(x.data(), y.data(), n), ZRT_OK);
  for (int i = 0; i < n; ++i)
    EXPECT_EQ(y[i], x[i] > 0 ? x[i] : 0.0f);
  ASSERT_EQ(zrt_relu_backward(x.data(), w.data(), dx.data(), n), ZRT_OK);
  expectGradNear(dx, numericGrad(x, loss), "relu dx");
  float zero = 0.0f, g = 5.0f, d = -1.0f;
  zrt_relu_backward(&zero, &g, &d, 1);
  EXPECT_EQ(d, 0.0f);
}

//===----------------------------------------------------------------------===//
// Layer norm and softmax
//===----------------------------------------------------------------------===//

TEST(LayerNormTest, ForwardMatchesDoubleReference) {
  const int N = 4, C = 7;
  const float eps = 1e-5f;
  auto x = randomVec(N * C, 71, -2, 3), w = randomVec(C, 72), b = randomVec(C, 73);
  std::vector<float> y(N * C), mean(N), rstd(N);
  ASSERT_EQ(zrt_layer_norm(x.data(), w.data(), b.data(), y.data(), mean.data(),
                           rstd.data(), N, C, eps),
            ZRT_OK);
  std::vector<double> ref(N * C), refMean(N), refRstd(N);
  for (int i = 0; i < N; ++i) {
    double m = 0, v = 0;
    for (int j = 0; j < C; ++j)
      m += x[i * C + j];
    m /= C;
    for (int j = 0; j < C; ++j)
      v += (x[i * C + j] - m) * (x[i * C + j] - m);
    v /= C;
    refMean[i] = m;
    refRstd[i] = 1.0 / std::sqrt(v + eps);
    for (int j = 0; j < C; ++j)
      ref[i * C + j] = (x[i * C + j] - m) * refRstd[i] * w[j] + b[j];
  }
  expectAllNear(y.data(), ref, "y", 1e-5, 1e-5);
  expectAllNear(mean.data(), refMean, "mean", 1e-5, 1e-6);
  expectAllNear(rstd.data(), refRstd, "rstd", 1e-5, 1e-6);
}

TEST(LayerNormTest, GradientsMatchFiniteDifferences) {
  const int N = 3, C = 8;
  const float eps = 1e-5f;
  auto x = randomVec(N * C, 81, -2, 2), w = randomVec(C, 82, 0.5f, 1.5f);
  auto b = randomVec(C, 83), up = randomVec(N * C, 84);
  auto loss = [&] {
    std::vector<float> y(N * C);
    EXPECT_EQ(zrt_layer_norm(x.data(), w.data(), b.data(), y.data(), nullptr,
                             nullptr, N, C, eps),
              ZRT_OK);
    return weightedSum(up, y);
  };
  std::vector<float> y(N * C), mean(N), rstd(N), dx(N * C), dw(C), db(C);
  ASSERT_EQ(zrt_layer_norm(x.data(), w.data(), b.data(), y.data(), mean.data(),
                           rstd.data(), N, C, eps),
            ZRT_OK);
  ASSERT_EQ(zrt_layer_norm_backward(up.data(), x.data(), w.data(), mean.data(),
                                    rstd.data(), dx.data(), dw.data(),
                                    db.data(), N, C),
            ZRT_OK);
  expectGradNear(dx, numericGrad(x, loss), "dx");
  expectGradNear(dw, numericGrad(w, loss), "dweight");
  expectGradNear(db, numericGrad(b, loss), "dbias");
}

TEST(LayerNormTest, NoAffineAndErrors) {
  std::vector<float> x = {1, 2, 3, 4}, y(4);
  ASSERT_EQ(zrt_layer_norm(x.data(), nullptr, nullptr, y.data(), nullptr,
                           nullptr, 1, 4, 0.0f),
            ZRT_OK);
  double s = 0;
  for (float v : y)
    s += v;
  EXPECT_NEAR(s, 0.0, 1e-6);
  EXPECT_NEAR(y[3], 1.5 / std::sqrt(1.25), 1e-6);
  EXPECT_EQ(zrt_layer_norm(x.data(), nullptr, nullptr, y.data(), nullptr,
                           nullptr, 1, 0, 1e-5f),
            ZRT_ERR_INVALID_ARGUMENT);
}

TEST(SoftmaxTest, RowsSumToOneAndGradient) {
  const int N = 3, C = 6;
  auto x = randomVec(N * C, 91, -3, 3), w = randomVec(N * C, 92);
  std::vector<float> y(N * C), dx(N * C);
  ASSERT_EQ(zrt_softmax(x.data(), y.data(), N, C), ZRT_OK);
  for (int i = 0; i < N; ++i) {
    double s = 0;
    for (int j = 0; j < C; ++j)
      s += y[i * C + j];
    EXPECT_NEAR(s, 1.0, 1e-6);
  }
  auto loss = [&] {
    std::vector<float> out(N * C);
    EXPECT_EQ(zrt_softmax(x.data(), out.data(), N, C), ZRT_OK);
    return weightedSum(w, out);
  };
  ASSERT_EQ(zrt_softmax_backward(y.data(), w.data(), dx.data(), N, C), ZRT_OK);
  expectGradNear(dx, numericGrad(x, loss), "softmax dx");
  // Large logits stay finite (max-subtracted).
  std::vector<float> big = {1000.0f, 1001.0f}, p(2);
  ASSERT_EQ(zrt_softmax(big.data(), p.data(), 1, 2), ZRT_OK);
  EXPECT_NEAR(p[1], 1.0 / (1.0 + std::exp(-1.0)), 1e-6);
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

TEST(AttentionTest, ForwardMatchesNaive) {
  const int B = 2, H = 2, T = 5, D = 3;
  const int n = B * H * T * D;
  auto q = randomVec(n, 101), k = randomVec(n, 102), v = randomVec(n, 103);
  std::vector<float> out(n), probs(B * H * T * T);
  ASSERT_EQ(zrt_causal_attention(q.data(), k.data(), v.data(), out.data(),
                                 probs.data(), nullptr, B, H, T, D),
            ZRT_OK);
  std::vector<double> ref(n), refP(B * H * T * T);
  for (int s = 0; s < B * H; ++s)
    for (int i = 0; i < T; ++i) {
      std::vector<double> sc(T, 0.0);
      double mx = -1e300;
      for (int j = 0; j <= i; ++j) {
        double d = 0;
        for (int c = 0; c < D; ++c)
          d += double(q[(s * T + i) * D + c]) * k[(s * T + j) * D + c];
        sc[j] = d / std::sqrt(double(D));
        mx = std::max(mx, sc[j]);
      }
      double z = 0;
      for (int j = 0; j <= i; ++j)
        z += std::exp(sc[j] - mx);
      for (int j = 0; j < T; ++j)
        refP[(s * T + i) * T + j] = j <= i ? std::exp(sc[j] - mx) / z : 0.0;
      for (int c = 0; c < D; ++c) {
        double o = 0;
        for (int j = 0; j <= i; ++j)
          o += refP[(s * T + i) * T + j] * v[(s * T + j) * D + c];
        ref[(s * T + i) * D + c] = o;
      }
    }
  expectAllNear(out.data(), ref, "out", 1e-5, 1e-6);
  expectAllNear(probs.data(), refP, "probs", 1e-5, 1e-6);
  // probs == NULL gives the same output, through the caller's [T, T]
  // workspace without allocating, or through one the call allocates.
  std::vector<float> out2(n), work(T * T);
  const int64_t allocs = zrt_heap_allocations();
  ASSERT_EQ(zrt_causal_attention(q.data(), k.data(), v.data(), out2.data(),
                                 nullptr, work.data(), B, H, T, D),
            ZRT_OK);
  EXPECT_EQ(zrt_heap_allocations(), allocs);
  EXPECT_EQ(out, out2);
  std::vector<float> out3(n);
  ASSERT_EQ(zrt_causal_attention(q.data(), k.data(), v.data(), out3.data(),
                                 nullptr, nullptr, B, H, T, D),
            ZRT_OK);
  EXPECT_EQ(zrt_heap_allocations(), allocs + 1);
  EXPECT_EQ(out, out3);
}

TEST(AttentionTest, GradientsMatchFiniteDifferences) {
  const int B = 1, H = 2, T = 4, D = 3;
  const int n = B * H * T * D;
  auto q = randomVec(n, 111), k = randomVec(n, 112), v = randomVec(n, 113);
  auto w = randomVec(n, 114);
  auto loss = [&] {
    std::vector<float> out(n);
    EXPECT_EQ(zrt_causal_attention(q.data(), k.data(), v.data(), out.data(),
                                   nullptr, nullptr, B, H, T, D),
              ZRT_OK);
    return weightedSum(w, out);
  };
  std::vector<float> out(n), probs(B * H * T * T), dq(n), dk(n), dv(n);
  ASSERT_EQ(zrt_causal_attention(q.data(), k.data(), v.data(), out.data(),
                                 probs.data(), nullptr, B, H, T, D),
            ZRT_OK);
  // With a workspace the backward allocates nothing.
  std::vector<float> work(T * T);
  const int64_t allocs = zrt_heap_allocations();
  ASSERT_EQ(zrt_causal_attention_backward(
                w.data(), q.data(), k.data(), v.data(), probs.data(),
                dq.data(), dk.data(), dv.data(), work.data(), B, H, T, D),
            ZRT_OK);
  EXPECT_EQ(zrt_heap_allocations(), allocs);
  expectGradNear(dq, numericGrad(q, loss), "dq");
  expectGradNear(dk, numericGrad(k, loss), "dk");
  expectGradNear(dv, numericGrad(v, loss), "dv");
  // Without one it allocates its own (counted) and agrees bit for bit.
  std::vector<float> dq2(n), dk2(n), dv2(n);
  const int64_t allocs2 = zrt_heap_allocations();
  ASSERT_EQ(zrt_causal_attention_backward(
                w.data(), q.data(), k.data(), v.data(), probs.data(),
                dq2.data(), dk2.data(), dv2.data(), nullptr, B, H, T, D),
            ZRT_OK);
  EXPECT_EQ(zrt_heap_allocations(), allocs2 + 1);
  EXPECT_EQ(dq, dq2);
  EXPECT_EQ(dk, dk2);
  EXPECT_EQ(dv, dv2);
}

// zrt_attention_forward / _backward (the flash-attention interface) against
// zrt_causal_attention / _backward with saved probabilities: the same
// values up to f32 rounding; lse against a double computation.
TEST(AttentionLseTest, MatchesAttentionWithProbabilities) {
  for (auto [B, H, T, D] : {std::tuple<int64_t, int64_t, int64_t, int64_t>{
                                1, 1, 1, 1},
                            {2, 3, 17, 8},
                            {1, 2, 64, 16}}) {
    const int64_t n = B * H * T * D;
    auto q = randomVec(n, 41), k = randomVec(n, 42), v = randomVec(n, 43),
         dO = randomVec(n, 44);
    std::vector<float> out(n), lse(B * H * T), probs(B * H * T * T),
        refOut(n), work(zrt_attention_workspace(T));
    ASSERT_EQ(zrt_causal_attention(q.data(), k.data(), v.data(), refOut.data(),
                                   probs.data(), nullptr, B, H, T, D),
              ZRT_OK);
    ASSERT_EQ(zrt_attention_forward(q.data(), k.data(), v.data(), out.data(),
                                    lse.data(), work.data(), B, H, T, D),
              ZRT_OK)
        << zrt_last_error();
    for (int64_t i = 0; i < n; ++i)
      ASSERT_NEAR(out[i], refOut[i], 1e-6f + 1e-5f * std::fabs(refOut[i]));
    const double scale = 1.0 / std::sqrt(static_cast<double>(D));
    for (int64_t s = 0; s < B * H; ++s)
      for (int64_t i = 0; i < T; ++i) {
        double mx = -INFINITY, sum = 0.0;
        std::vector<double> row(i + 1);
        for (int64_t j = 0; j <= i; ++j) {
          double dot = 0.0;
          for (int64_t c = 0; c < D; ++c)
            dot += double(q[(s * T + i) * D + c]) * k[(s * T + j) * D + c];
          row[j] = dot * scale;
          mx = std::max(mx, row[j]);
        }
        for (int64_t j = 0; j <= i; ++j)
          sum += std::exp(row[j] - mx);
        EXPECT_NEAR(lse[s * T + i], mx + std::log(sum), 1e-5)
            << "slice " << s << " row " << i;
      }
    std::vector<float> dq(n), dk(n), dv(n), rq(n), rk(n), rv(n);
    ASSERT_EQ(zrt_causal_attention_backward(dO.data(), q.data(), k.data(),
                                            v.data(), probs.data(), rq.data(),
                                            rk.data(), rv.data(), nullptr, B, H,
                                            T, D),
              ZRT_OK);
    ASSERT_EQ(zrt_attention_backward(dO.data(), q.data(), k.data(), v.data(),
                                     out.data(), lse.data(), dq.data(),
                                     dk.data(), dv.data(), work.data(), B, H, T,
                                     D),
              ZRT_OK)
        << zrt_last_error();
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_NEAR(dq[i], rq[i], 1e-5f + 1e-4f * std::fabs(rq[i])) << i;
      ASSERT_NEAR(dk[i], rk[i], 1e-5f + 1e-4f * std::fabs(rk[i])) << i;
      ASSERT_NEAR(dv[i], rv[i], 1e-5f + 1e-4f * std::fabs(rv[i])) << i;
    }
    // Without a workspace the call allocates one (counted) and agrees.
    const int64_t allocs = zrt_heap_allocations();
    std::vector<float> out2(n), lse2(B * H * T);
    ASSERT_EQ(zrt_attention_forward(q.data(), k.data(), v.data(), out2.data(),
                                    lse2.data(), nullptr, B, H, T, D),
              ZRT_OK);
    EXPECT_EQ(out2, out);
    EXPECT_EQ(lse2, lse);
    EXPECT_GT(zrt_heap_allocations(), allocs);
  }
}

TEST(AttentionLseTest, RejectsBadArguments) {
  float x[8] = {};
  EXPECT_EQ(zrt_attention_workspace(3), 21);
  EXPECT_EQ(zrt_attention_workspace(-1), -1);
  EXPECT_EQ(zrt_attention_forward(x, x, x, x, x, x, -1, 1, 2, 2),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zrt_last_error()).find("zrt_attention_forward: need"),
            std::string::npos)
      << zrt_last_error();
  EXPECT_EQ(zrt_attention_forward(x, x, x, x, nullptr, x, 1, 1, 2, 2),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(
      std::string(zrt_last_error()).find("zrt_attention_forward: lse is NULL"),
      std::string::npos)
      << zrt_last_error();
  EXPECT_EQ(zrt_attention_backward(x, x, x, x, x, x, x, x, nullptr, x, 1, 1, 2,
                                   2),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(
      std::string(zrt_last_error()).find("zrt_attention_backward: dv is NULL"),
      std::string::npos)
      << zrt_last_error();
  EXPECT_EQ(zrt_attention_backward(x, x, x, x, x, x, x, x, x, x, 1, 1, 0, 2),
            ZRT_ERR_INVALID_ARGUMENT);
  // Nothing to compute (B = 0): no pointers needed.
  EXPECT_EQ(zrt_attention_forward(nullptr, nullptr, nullptr, nullptr, nullptr,
                                  nullptr, 0, 4, 2, 2),
            ZRT_OK);
}

TEST(AttentionTest, RejectsBadShapes) {
  float x[4] = {};
  EXPECT_EQ(zrt_causal_attention(x, x, x, x, nullptr, nullptr, 1, 1, 0, 4),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zrt_causal_attention(nullptr, x, x, x, nullptr, nullptr, 1, 1, 1, 4),
            ZRT_ERR_INVALID_ARGUMENT);
}

//===----------------------------------------------------------------------===//
// Embedding and losses
//===----------------------------------------------------------------------===//

TEST(EmbeddingTest, ForwardAndScatterAddBackward) {
  const int V = 5, C = 3, N = 6;
  auto table = randomVec(V * C, 121);
  std::vector<int32_t> ids = {2, 0, 2, 4, 2, 0}; // repeated ids accumulate
  std::vector<float> out(N * C);
  ASSERT_EQ(zrt_embedding(table.data(), ids.data(), out.data(), N, V, C),
            ZRT_OK);
  for (int i = 0; i < N; ++i)
    for (int c = 0; c < C; ++c)
      EXPECT_EQ(out[i * C + c], table[ids[i] * C + c]);
  auto w = randomVec(N * C, 122);
  auto loss = [&] {
    std::vector<float> o(N * C);
    EXPECT_EQ(zrt_embedding(table.data(), ids.data(), o.data(), N, V, C),
              ZRT_OK);
    return weightedSum(w, o);
  };
  std::vector<float> dtable(V * C, 123.0f); // garbage: must be overwritten
  ASSERT_EQ(zrt_embedding_backward(w.data(), ids.data(), dtable.data(), N, V,
                                   C),
            ZRT_OK);
  expectGradNear(dtable, numericGrad(table, loss), "dtable");
  for (int c = 0; c < C; ++c) {
    EXPECT_EQ(dtable[1 * C + c], 0.0f); // unused row
    EXPECT_FLOAT_EQ(dtable[2 * C + c], w[0 * C + c] + w[2 * C + c] + w[4 * C + c]);
  }
}

TEST(EmbeddingTest, OutOfRangeIdsAreErrors) {
  std::vector<float> table(6, 1.0f), out(4, -7.0f), dtable(6, -7.0f);
  std::vector<int32_t> ids = {1, 3};
  EXPECT_EQ(zrt_embedding(table.data(), ids.data(), out.data(), 2, 3, 2),
            ZRT_ERR_OUT_OF_RANGE);
  EXPECT_NE(std::string(zrt_last_error()).find("ids[1] = 3"),
            std::string::npos)
      << zrt_last_error();
  EXPECT_EQ(out, std::vector<float>(4, -7.0f)); // nothing written
  EXPECT_EQ(zrt_embedding_backward(out.data(), ids.data(), dtable.data(), 2, 3,
                                   2),
            ZRT_ERR_OUT_OF_RANGE);
  EXPECT_EQ(dtable, std::vector<float>(6, -7.0f));
  ids = {-1, 0};
  EXPECT_EQ(zrt_embedding(table.data(), ids.data(), out.data(), 2, 3, 2),
            ZRT_ERR_OUT_OF_RANGE);
}

TEST(CrossEntropyTest, ValueMatchesReference) {
  const int N = 3, V = 4;
  auto logits = randomVec(N * V, 131, -2, 2);
  std::vector<int32_t> t = {3, 0, 2};
  double ref = 0;
  for (int i = 0; i < N; ++i) {
    double z = 0;
    for (int j = 0; j < V; ++j)
      z += std::exp(double(logits[i * V + j]));
    ref += std::log(z) - logits[i * V + t[i]];
  }
  ref /= N;
  float loss = 0;
  ASSERT_EQ(zrt_cross_entropy(logits.data(), t.data(), &loss, N, V,
                              ZRT_IGNORE_INDEX_DEFAULT),
            ZRT_OK);
  EXPECT_NEAR(loss, ref, 1e-6);
  // Uniform logits: loss = log(V), even for huge magnitudes.
  std::vector<float> big(N * V, 1e4f);
  ASSERT_EQ(zrt_cross_entropy(big.data(), t.data(), &loss, N, V, -100),
            ZRT_OK);
  EXPECT_NEAR(loss, std::log(4.0), 1e-6);
}

TEST(CrossEntropyTest, GradientMatchesFiniteDifferences) {
  const int N = 4, V = 5;
  auto logits = randomVec(N * V, 141, -2, 2);
  std::vector<int32_t> t = {1, 4, -100, 0}; // one ignored row
  const float dloss = 1.7f;
  auto loss = [&] {
    float l = 0;
    EXPECT_EQ(zrt_cross_entropy(logits.data(), t.data(), &l, N, V, -100),
              ZRT_OK);
    return double(dloss) * l;
  };
  std::vector<float> d(N * V);
  ASSERT_EQ(zrt_cross_entropy_backward(logits.data(), t.data(), dloss,
                                       d.data(), N, V, -100),
            ZRT_OK);
  expectGradNear(d, numericGrad(logits, loss), "dlogits");
  for (int j = 0; j < V; ++j)
    EXPECT_EQ(d[2 * V + j], 0.0f);
}

TEST(CrossEntropyTest, IgnoreIndexAndErrors) {
  std::vector<float> logits = {0, 1, 2, 3, 4, 5};
  std::vector<int32_t> t = {5, 1};
  float loss = -1;
  EXPECT_EQ(zrt_cross_entropy(logits.data(), t.data(), &loss, 2, 3, -100),
            ZRT_ERR_OUT_OF_RANGE);
  EXPECT_EQ(loss, -1.0f);
  EXPECT_NE(std::string(zrt_last_error()).find("targets[0] = 5"),
            std::string::npos);
  t = {5, 5};
  ASSERT_EQ(zrt_cross_entropy(logits.data(), t.data(), &loss, 2, 3, 5),
            ZRT_OK);
  EXPECT_TRUE(std::isnan(loss)); // all ignored: NaN, as PyTorch
  t = {5, 1};
  ASSERT_EQ(zrt_cross_entropy(logits.data(), t.data(), &loss, 2, 3, 5),
            ZRT_OK);
  EXPECT_NEAR(loss, std::log(std::exp(3.) + std::exp(4.) + std::exp(5.)) - 4.,
              1e-5);
}

TEST(MseTest, ValueAndGradient) {
  const int n = 9;
  auto p = randomVec(n, 151), t = randomVec(n, 152);
  float loss = 0;
  ASSERT_EQ(zrt_mse(p.data(), t.data(), &loss, n), ZRT_OK);
  double ref = 0;
  for (int i = 0; i < n; ++i)
    ref += double(p[i] - t[i]) * (p[i] - t[i]);
  EXPECT_NEAR(loss, ref / n, 1e-6);
  const float dloss = 0.5f;
  auto fn = [&] {
    float l = 0;
    EXPECT_EQ(zrt_mse(p.data(), t.data(), &l, n), ZRT_OK);
    return double(dloss) * l;
  };
  std::vector<float> dp(n), dt(n);
  ASSERT_EQ(zrt_mse_backward(p.data(), t.data(), dloss, dp.data(), dt.data(),
                             n),
            ZRT_OK);
  expectGradNear(dp, numericGrad(p, fn), "dpred");
  expectGradNear(dt, numericGrad(t, fn), "dtarget");
}
