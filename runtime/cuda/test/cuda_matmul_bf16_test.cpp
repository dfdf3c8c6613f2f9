//===- cuda_matmul_bf16_test.cpp - zrt_matmul_bf16 on CUDA vs the CPU -----===//
//
// The bf16 tensor-core GEMM against the CPU's widen / SGEMM / round once:
// the f32 sums may be added in another order, so an element may differ by
// one bf16 rounding step (2^-8 relative), and results near cancellation by
// the f32 rounding of a K-term sum; everything else must agree. The GELU
// forms (zrt_matmul_gelu_bf16, zrt_matmul_gelu_backward_bf16) likewise,
// plus the difference between cuBLASLt's GELU (its own tanh form) and the
// CPU's (see below).
//
//===----------------------------------------------------------------------===//

#include "cuda_test_util.h"

namespace {

using namespace zrt_cuda_test;

std::vector<zrt_bf16> toBf16(const std::vector<float> &f) {
  std::vector<zrt_bf16> out(f.size());
  for (size_t i = 0; i < f.size(); ++i)
    out[i] = zrt_f32_to_bf16(f[i]);
  return out;
}

TEST(CudaMatmulBf16Args, SameErrorsAsCpu) {
  zrt_bf16 x[4] = {};
  float work[16] = {};
  EXPECT_EQ(zrt_cuda::matmul_bf16(x, x, nullptr, x, 1, 2, 2, 2, 0, 0, nullptr),
            zrt_matmul_bf16(x, x, nullptr, x, 1, 2, 2, 2, 0, 0, nullptr));
  EXPECT_EQ(zrt_cuda::matmul_bf16(x, x, nullptr, x, 1, -1, 2, 2, 0, 0, work),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zrt_cuda::last_error()).find("zrt_matmul_bf16"),
            std::string::npos);
  EXPECT_EQ(zrt_cuda::matmul_bf16(x, x, nullptr, x, 0, 2, 2, 2, 0, 0, nullptr),
            ZRT_OK);
}

TEST_F(CudaKernels, MatmulBf16MatchesCpu) {
  struct Case {
    int64_t batch, M, N, K;
  };
  // Small odd shapes, a batched one, and GPT-2-like projections
  // (rows x 768 -> 2304 with bias; the tied LM head without).
  const Case cases[] = {{1, 1, 1, 1},     {1, 5, 7, 3},      {4, 33, 17, 65},
                        {1, 512, 2304, 768}, {1, 256, 1000, 768}, {2, 3, 4, 0}};
  for (const Case &c : cases)
    for (int ta : {0, 1})
      for (int tb : {0, 1})
        for (bool withBias : {false, true}) {
          const auto A = toBf16(randomVec(c.batch * c.M * c.K, 11));
          const auto B = toBf16(randomVec(c.batch * c.K * c.N, 12));
          const auto bias = toBf16(randomVec(c.N, 13));
          const int64_t ws = zrt_matmul_bf16_workspace(c.batch, c.M, c.N, c.K,
                                                       withBias);
          std::vector<float> work(static_cast<size_t>(ws));
          std::vector<zrt_bf16> want(c.batch * c.M * c.N);
          ASSERT_EQ(zrt_matmul_bf16(A.data(), B.data(),
                                    withBias ? bias.data() : nullptr,
                                    want.data(), c.batch, c.M, c.N, c.K, ta,
                                    tb, work.data()),
                    ZRT_OK);
          zrt_bf16 *dA = devOf(A), *dB = devOf(B), *dBias = devOf(bias);
          auto *dC = static_cast<zrt_bf16 *>(devBytes(2 * want.size()));
          float *dWork = dev(ws);
          ASSERT_EQ(zrt_cuda::matmul_bf16(dA, dB, withBias ? dBias : nullptr,
                                          dC, c.batch, c.M, c.N, c.K, ta, tb,
                                          dWork),
                    ZRT_OK)
              << zrt_cuda::last_error();
          const std::vector<zrt_bf16> got = hostOf(dC, want.size());
          for (size_t i = 0; i < want.size(); ++i) {
            const float w = zrt_bf16_to_f32(want[i]),
                        g = zrt_bf16_to_f32(got[i]);
            // One bf16 step (2^-8 relative, doubled for margin), plus the
            // f32 accumulation-order difference near cancellation.
            const float atol = 1e-4f * (1.0f + static_cast<float>(c.K) / 64);
            ASSERT_NEAR(g, w, atol + std::ldexp(std::fabs(w), -7))
                << "case " << c.batch << "x" << c.M << "x" << c.N << "x" << c.K
                << " ta=" << ta << " tb=" << tb << " bias=" << withBias
                << " at " << i;
          }
          zrt_cuda::arena_reset(arena_);
        }
}

// A batched biased product whose f32 result does not fit the (bounded)
// workspace at once: the CUDA fallback runs it in chunks of rows per batch
// matrix (here 2 x 2 chunks of at most 4161 rows), each with its own bias
// rounding, and still matches the CPU.
TEST_F(CudaKernels, MatmulBf16BiasedBatchInRowChunks) {
  const int64_t batch = 2, M = 8192, N = 4096, K = 64;
  const int64_t ws = zrt_matmul_bf16_workspace(batch, M, N, K, 1);
  ASSERT_LT(ws / N, M) << "the case must need more than one chunk";
  // C (134 MB) and the workspace (68 MB) need a larger arena than the
  // fixture's 64 MiB.
  zrt_cuda::arena_destroy(arena_);
  ASSERT_EQ(zrt_cuda::arena_create(int64_t(512) << 20, ZRT_MEM_TEMPORARIES,
                                   &arena_),
            ZRT_OK)
      << zrt_cuda::last_error();
  for (int ta : {0, 1}) {
    const auto A = toBf16(randomVec(batch * M * K, 21));
    const auto B = toBf16(randomVec(batch * K * N, 22));
    const auto bias = toBf16(randomVec(N, 23));
    std::vector<float> work(static_cast<size_t>(ws));
    std::vector<zrt_bf16> want(batch * M * N);
    ASSERT_EQ(zrt_matmul_bf16(A.data(), B.data(), bias.data(), want.data(),
                              batch, M, N, K, ta, 1, work.data()),
              ZRT_OK);
    zrt_bf16 *dA = devOf(A), *dB = devOf(B), *dBias = devOf(bias);
    auto *dC = static_cast<zrt_bf16 *>(devBytes(2 * want.size()));
    ASSERT_EQ(zrt_cuda::matmul_bf16(dA, dB, dBias, dC, batch, M, N, K, ta, 1,
                                    dev(ws)),
              ZRT_OK)
        << zrt_cuda::last_error();
    const std::vector<zrt_bf16> got = hostOf(dC, want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      const float w = zrt_bf16_to_f32(want[i]), g = zrt_bf16_to_f32(got[i]);
      ASSERT_NEAR(g, w, 2e-4f + std::ldexp(std::fabs(w), -7))
          << "ta=" << ta << " at " << i;
    }
    zrt_cuda::arena_reset(arena_);
  }
}

// Biased products with operands, bias and result at 2-byte (not 16-byte)
// alignment, as slices of flat buffers are: the cuBLASLt bias-epilogue plan
// is chosen for the pointers' alignment (or the cuBLAS path runs), and the
// result is the CPU's (also a second call with the same alignment class,
// which reuses the cached plan, and one at full alignment after it).
TEST_F(CudaKernels, MatmulBf16BiasAtAnyAlignment) {
  const int64_t M = 64, N = 96, K = 128;
  const auto A = toBf16(randomVec(M * K + 1, 21));
  const auto B = toBf16(randomVec(K * N + 1, 22));
  const auto bias = toBf16(randomVec(N + 1, 23));
  for (int offset : {1, 1, 0}) {
    const zrt_bf16 *hA = A.data() + offset, *hB = B.data() + offset,
                   *hBias = bias.data() + offset;
    const int64_t ws = zrt_matmul_bf16_workspace(1, M, N, K, 1);
    std::vector<float> work(static_cast<size_t>(ws));
    std::vector<zrt_bf16> want(M * N);
    ASSERT_EQ(zrt_matmul_bf16(hA, hB, hBias, want.data(), 1, M, N, K, 0, 1,
                              work.data()),
              ZRT_OK);
    zrt_bf16 *dA = devOf(A) + offset, *dB = devOf(B) + offset,
             *dBias = devOf(bias) + offset;
    auto *dC = static_cast<zrt_bf16 *>(devBytes(2 * (want.size() + 1))) + offset;
    ASSERT_EQ(zrt_cuda::matmul_bf16(dA, dB, dBias, dC, 1, M, N, K, 0, 1,
                                    dev(ws)),
              ZRT_OK)
        << zrt_cuda::last_error();
    std::vector<zrt_bf16> got(want.size());
    ASSERT_EQ(zrt_cuda::copy_to_host(got.data(), dC, 2 * got.size()), ZRT_OK);
    for (size_t i = 0; i < want.size(); ++i) {
      const float w = zrt_bf16_to_f32(want[i]), g = zrt_bf16_to_f32(got[i]);
      ASSERT_NEAR(g, w, 1e-4f * 3 + std::ldexp(std::fabs(w), -7))
          << "offset " << offset << " at " << i;
    }
    zrt_cuda::arena_reset(arena_);
  }
}

TEST(CudaMatmulGeluBf16Args, SameErrorsAsCpu) {
  zrt_bf16 x[4] = {}, pre[4] = {}, out[4] = {};
  float work[16] = {};
  EXPECT_SAME_ERROR(
      zrt_cuda::matmul_gelu_bf16(x, x, x, pre, out, 1, 2, 2, 2, 0, 0, nullptr),
      zrt_matmul_gelu_bf16(x, x, x, pre, out, 1, 2, 2, 2, 0, 0, nullptr));
  EXPECT_SAME_ERROR(
      zrt_cuda::matmul_gelu_bf16(x, x, x, pre, out, 1, -1, 2, 2, 0, 0, work),
      zrt_matmul_gelu_bf16(x, x, x, pre, out, 1, -1, 2, 2, 0, 0, work));
  EXPECT_SAME_ERROR(
      zrt_cuda::matmul_gelu_bf16(x, x, x, pre, nullptr, 1, 2, 2, 2, 0, 0, work),
      zrt_matmul_gelu_bf16(x, x, x, pre, nullptr, 1, 2, 2, 2, 0, 0, work));
  EXPECT_SAME_ERROR(
      zrt_cuda::matmul_gelu_backward_bf16(x, x, pre, out, 1, 2, 2, 2, 0, 0,
                                          nullptr),
      zrt_matmul_gelu_backward_bf16(x, x, pre, out, 1, 2, 2, 2, 0, 0, nullptr));
  EXPECT_SAME_ERROR(zrt_cuda::matmul_gelu_backward_bf16(x, nullptr, pre, out, 1,
                                                        2, 2, 2, 0, 0, work),
                    zrt_matmul_gelu_backward_bf16(x, nullptr, pre, out, 1, 2, 2,
                                                  2, 0, 0, work));
  EXPECT_SAME_ERROR(zrt_cuda::matmul_gelu_backward_bf16(x, x, nullptr, out, 1,
                                                        2, 2, 2, 0, 0, work),
                    zrt_matmul_gelu_backward_bf16(x, x, nullptr, out, 1, 2, 2,
                                                  2, 0, 0, work));
  // Nothing to compute: no workspace (or pre) needed.
  EXPECT_EQ(
      zrt_cuda::matmul_gelu_bf16(x, x, x, pre, out, 0, 2, 2, 2, 0, 0, nullptr),
      ZRT_OK);
  EXPECT_EQ(zrt_cuda::matmul_gelu_backward_bf16(x, x, nullptr, out, 1, 2, 0, 2,
                                                0, 0, nullptr),
            ZRT_OK);
}

/// Shapes of the GELU tests: single products of N a multiple of 8 (the
/// cuBLASLt path with the aux matrix) and not (the f32 path when there is
/// an aux matrix), a batched one (the f32 path), K = 0.
struct GeluCase {
  int64_t batch, M, N, K;
};
const GeluCase kGeluCases[] = {{1, 1, 1, 1},    {1, 5, 7, 3},
                               {1, 24, 16, 40}, {1, 64, 96, 128},
                               {3, 9, 16, 20},  {2, 3, 8, 0}};

/// |got - want| within what separates the device from the CPU:
///  * the order of the f32 sums (as MatmulBf16MatchesCpu: 1e-4 (1 + K/64)
///    absolute, doubled: GELU and GELU' have slopes up to 1.13);
///  * one bf16 rounding step (2^-8 relative, doubled for margin): the two
///    f32 values may straddle a rounding boundary;
///  * on the cuBLASLt path, cuBLASLt's own GELU: the tanh form
///    0.5 x (1 + tanh(u)) cancels in 1 + tanh(u) on GELU's negative tail,
///    and tanh may be an approximation (PTX tanh.approx: 2^-11 relative),
///    so 2^-10 |x| absolute for GELU (x = the GELU input) and
///    2^-10 (1 + x^2) |g| for g * GELU'(x).
void expectGeluClose(const std::vector<zrt_bf16> &want,
                     const std::vector<zrt_bf16> &got,
                     const std::vector<zrt_bf16> &x,
                     const std::vector<zrt_bf16> *g, int64_t K,
                     const std::string &what) {
  ASSERT_EQ(want.size(), got.size()) << what;
  const float atol = 2e-4f * (1.0f + static_cast<float>(K) / 64);
  for (size_t i = 0; i < want.size(); ++i) {
    const float w = zrt_bf16_to_f32(want[i]), v = zrt_bf16_to_f32(got[i]),
                xi = zrt_bf16_to_f32(x[i]);
    const float formula =
        g ? std::ldexp((1.0f + xi * xi) * std::fabs(zrt_bf16_to_f32((*g)[i])),
                       -10)
          : std::ldexp(std::fabs(xi), -10);
    ASSERT_NEAR(v, w, atol + std::ldexp(std::fabs(w), -7) + formula)
        << what << " at " << i;
  }
}

std::string describe(const GeluCase &c, int ta, int tb, const char *more) {
  return "case " + std::to_string(c.batch) + "x" + std::to_string(c.M) + "x" +
         std::to_string(c.N) + "x" + std::to_string(c.K) +
         " ta=" + std::to_string(ta) + " tb=" + std::to_string(tb) + " " + more;
}

// pre = bf16(acc) and out = bf16(gelu(acc)) against the CPU, with and
// without a bias and pre (the four cuBLASLt GELU epilogues), every
// transpose combination; pre once at an odd element offset (2-byte
// aligned: the f32 path, as every matrix less than 16-byte aligned; on the
// first H200 run cuBLASLt's kernel for it rounded before the bias).
TEST_F(CudaKernels, MatmulGeluBf16MatchesCpu) {
  const char *variants[] = {"bias, pre", "pre, no bias", "bias, no pre",
                            "no bias, no pre", "bias, pre at an odd offset"};
  for (const GeluCase &c : kGeluCases)
    for (int ta : {0, 1})
      for (int tb : {0, 1})
        for (int variant = 0; variant < 5; ++variant) {
          const bool withBias = variant != 1 && variant != 3,
                     withPre = variant != 2 && variant != 3;
          const int64_t offset = variant == 4 ? 1 : 0;
          const std::string what = describe(c, ta, tb, variants[variant]);
          const int64_t n = c.batch * c.M * c.N;
          const auto A = toBf16(randomVec(c.batch * c.M * c.K, 31));
          const auto B = toBf16(randomVec(c.batch * c.K * c.N, 32));
          const auto bias = toBf16(randomVec(c.N, 33));
          const int64_t ws =
              zrt_matmul_bf16_workspace(c.batch, c.M, c.N, c.K, withBias);
          std::vector<float> work(static_cast<size_t>(ws));
          std::vector<zrt_bf16> wantPre(n), wantOut(n);
          ASSERT_EQ(zrt_matmul_gelu_bf16(
                        A.data(), B.data(), withBias ? bias.data() : nullptr,
                        wantPre.data(), wantOut.data(), c.batch, c.M, c.N, c.K,
                        ta, tb, work.data()),
                    ZRT_OK);
          zrt_bf16 *dA = devOf(A), *dB = devOf(B), *dBias = devOf(bias);
          auto *dPre =
              static_cast<zrt_bf16 *>(devBytes(2 * (n + offset))) + offset;
          auto *dOut = static_cast<zrt_bf16 *>(devBytes(2 * n));
          ASSERT_EQ(zrt_cuda::matmul_gelu_bf16(
                        dA, dB, withBias ? dBias : nullptr,
                        withPre ? dPre : nullptr, dOut, c.batch, c.M, c.N, c.K,
                        ta, tb, dev(ws)),
                    ZRT_OK)
              << what << ": " << zrt_cuda::last_error();
          std::vector<zrt_bf16> got(n);
          ASSERT_EQ(zrt_cuda::copy_to_host(got.data(), dOut, 2 * n), ZRT_OK);
          expectGeluClose(wantOut, got, wantPre, nullptr, c.K, what + ": out");
          if (withPre) {
            ASSERT_EQ(zrt_cuda::copy_to_host(got.data(), dPre, 2 * n), ZRT_OK);
            // The same f32 sums as zrt_matmul_bf16, rounded once: no GELU
            // term.
            const std::vector<zrt_bf16> zeros(n, 0);
            expectGeluClose(wantPre, got, zeros, nullptr, c.K, what + ": pre");
          }
          zrt_cuda::arena_reset(arena_);
        }
}

// dpre = bf16(g * gelu'(pre)) against the CPU, out of place and in place
// (dpre == pre: the f32 path), every transpose combination.
TEST_F(CudaKernels, MatmulGeluBackwardBf16MatchesCpu) {
  for (const GeluCase &c : kGeluCases)
    for (int ta : {0, 1})
      for (int tb : {0, 1})
        for (bool inPlace : {false, true}) {
          const std::string what =
              describe(c, ta, tb, inPlace ? "in place" : "out of place");
          const int64_t n = c.batch * c.M * c.N;
          const auto A = toBf16(randomVec(c.batch * c.M * c.K, 41));
          const auto B = toBf16(randomVec(c.batch * c.K * c.N, 42));
          const auto pre = toBf16(randomVec(n, 43, -4.0f, 4.0f));
          const int64_t ws =
              zrt_matmul_bf16_workspace(c.batch, c.M, c.N, c.K, 0);
          std::vector<float> work(static_cast<size_t>(ws));
          std::vector<zrt_bf16> want(n), g(n);
          ASSERT_EQ(zrt_matmul_gelu_backward_bf16(
                        A.data(), B.data(), pre.data(), want.data(), c.batch,
                        c.M, c.N, c.K, ta, tb, work.data()),
                    ZRT_OK);
          ASSERT_EQ(zrt_matmul_bf16(A.data(), B.data(), nullptr, g.data(),
                                    c.batch, c.M, c.N, c.K, ta, tb,
                                    work.data()),
                    ZRT_OK);
          zrt_bf16 *dA = devOf(A), *dB = devOf(B), *dPre = devOf(pre);
          zrt_bf16 *dDpre =
              inPlace ? dPre : static_cast<zrt_bf16 *>(devBytes(2 * n));
          ASSERT_EQ(zrt_cuda::matmul_gelu_backward_bf16(dA, dB, dPre, dDpre,
                                                        c.batch, c.M, c.N, c.K,
                                                        ta, tb, dev(ws)),
                    ZRT_OK)
              << what << ": " << zrt_cuda::last_error();
          expectGeluClose(want, hostOf(dDpre, n), pre, &g, c.K, what);
          if (!inPlace)
            EXPECT_EQ(hostOf(dPre, n), pre) << what << ": pre changed";
          zrt_cuda::arena_reset(arena_);
        }
}

} // namespace
