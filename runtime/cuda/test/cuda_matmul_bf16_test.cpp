//===- cuda_matmul_bf16_test.cpp - zrt_matmul_bf16 on CUDA vs the CPU -----===//
//
// The bf16 tensor-core GEMM against the CPU's widen / SGEMM / round once:
// the f32 sums may be added in another order, so an element may differ by
// one bf16 rounding step (2^-8 relative), and results near cancellation by
// the f32 rounding of a K-term sum; everything else must agree.
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

} // namespace
