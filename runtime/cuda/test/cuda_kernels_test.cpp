//===- cuda_kernels_test.cpp - CUDA backend vs. CPU runtime ---------------===//
//
// Runs each function the CUDA backend implements (namespace zrt_cuda, the
// implementations behind zero_runtime_cuda's zrt_* symbols) on device
// memory and compares it with the CPU runtime's zrt_* on the same small
// inputs. The device tests skip when cudaGetDeviceCount reports no device;
// the argument checks (which return before any CUDA call) always run.
//
//===----------------------------------------------------------------------===//

#include "cuda_test_util.h"

namespace {

using namespace zrt_cuda_test;

const int64_t kSizes[] = {0, 1, 7, 1000, 70001};

TEST_F(CudaKernels, ArenaAndCounters) {
  const int64_t live0 = zrt_cuda::memory_bytes(ZRT_MEM_ACTIVATIONS);
  const int64_t total0 = zrt_cuda::memory_total_bytes();
  const int64_t allocs0 = zrt_cuda::heap_allocations();
  zrt_arena a = nullptr, cpu = nullptr;
  ASSERT_EQ(zrt_cuda::arena_create(1000, ZRT_MEM_ACTIVATIONS, &a), ZRT_OK);
  ASSERT_EQ(zrt_arena_create(1000, ZRT_MEM_ACTIVATIONS, &cpu), ZRT_OK);
  EXPECT_GT(zrt_cuda::heap_allocations(), allocs0);
  EXPECT_EQ(zrt_cuda::arena_size(a), zrt_arena_size(cpu));
  EXPECT_EQ(zrt_cuda::memory_bytes(ZRT_MEM_ACTIVATIONS), live0 + 1000);
  EXPECT_EQ(zrt_cuda::memory_total_bytes(), total0 + 1000);
  EXPECT_GE(zrt_cuda::memory_peak_bytes(ZRT_MEM_ACTIVATIONS), live0 + 1000);
  EXPECT_GE(zrt_cuda::memory_peak_total_bytes(), total0 + 1000);
  void *base = zrt_cuda::arena_base(a);
  ASSERT_NE(base, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(base) % 64, 0u);
  cudaPointerAttributes attr{};
  ASSERT_EQ(cudaPointerGetAttributes(&attr, base), cudaSuccess);
  EXPECT_EQ(attr.type, cudaMemoryTypeDevice);
  // Zero-filled.
  std::vector<unsigned char> bytes(1000, 0xff);
  ASSERT_EQ(zrt_cuda::copy_to_host(bytes.data(), base, 1000), ZRT_OK);
  for (unsigned char b : bytes)
    ASSERT_EQ(b, 0);
  // Bump allocation gives the CPU runtime's offsets.
  for (int64_t req : {10, 100, 3, 500}) {
    int64_t o1 = -1, o2 = -1;
    ASSERT_EQ(zrt_cuda::arena_alloc(a, req, req == 3 ? 8 : 0, &o1),
              zrt_arena_alloc(cpu, req, req == 3 ? 8 : 0, &o2));
    EXPECT_EQ(o1, o2);
    EXPECT_EQ(zrt_cuda::arena_used(a), zrt_arena_used(cpu));
  }
  int64_t off = 0;
  EXPECT_EQ(zrt_cuda::arena_alloc(a, 1000, 0, &off), ZRT_ERR_OUT_OF_MEMORY);
  zrt_cuda::arena_reset(a);
  EXPECT_EQ(zrt_cuda::arena_used(a), 0);
  zrt_cuda::memory_reset_peak();
  zrt_cuda::arena_destroy(a);
  zrt_arena_destroy(cpu);
  EXPECT_EQ(zrt_cuda::memory_bytes(ZRT_MEM_ACTIVATIONS), live0);
  EXPECT_EQ(zrt_cuda::memory_peak_bytes(ZRT_MEM_ACTIVATIONS), live0 + 1000);
  // Zero-byte arena: valid base.
  ASSERT_EQ(zrt_cuda::arena_create(0, ZRT_MEM_PARAMETERS, &a), ZRT_OK);
  EXPECT_NE(zrt_cuda::arena_base(a), nullptr);
  EXPECT_EQ(zrt_cuda::arena_size(a), 0);
  zrt_cuda::arena_destroy(a);
  zrt_cuda::arena_destroy(nullptr);
}

TEST_F(CudaKernels, CopyRoundTrip) {
  const std::vector<float> x = randomVec(1234, 1);
  float *d = dev(x);
  EXPECT_EQ(host(d, 1234), x);
  int32_t ids[5] = {1, -2, 3, 4, 5}, back[5] = {};
  float *di = dev(5);
  ASSERT_EQ(zrt_cuda::copy_to_device(di, ids, sizeof ids), ZRT_OK);
  ASSERT_EQ(zrt_cuda::copy_to_host(back, di, sizeof back), ZRT_OK);
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(back[i], ids[i]);
  EXPECT_EQ(zrt_cuda::copy_to_device(nullptr, nullptr, 0), ZRT_OK);
  EXPECT_EQ(zrt_cuda::copy_to_host(nullptr, nullptr, 0), ZRT_OK);
}

TEST_F(CudaKernels, Fill) {
  for (int64_t n : kSizes) {
    std::vector<float> ref(static_cast<size_t>(n));
    ASSERT_EQ(zrt_fill(ref.data(), -2.5f, n), ZRT_OK);
    float *d = dev(n);
    ASSERT_EQ(zrt_cuda::fill(n ? d : nullptr, -2.5f, n), ZRT_OK);
    EXPECT_EQ(host(d, n), ref) << "n=" << n;
  }
}

TEST_F(CudaKernels, AddAndInPlace) {
  for (int64_t n : kSizes) {
    const auto a = randomVec(n, 2), b = randomVec(n, 3);
    std::vector<float> ref(static_cast<size_t>(n));
    ASSERT_EQ(zrt_add(a.data(), b.data(), ref.data(), n), ZRT_OK);
    float *da = dev(a), *db = dev(b), *dout = dev(n);
    ASSERT_EQ(zrt_cuda::add(da, db, dout, n), ZRT_OK);
    EXPECT_EQ(host(dout, n), ref) << "n=" << n; // one rounding: exact
    ASSERT_EQ(zrt_cuda::add(da, db, da, n), ZRT_OK); // out == a
    EXPECT_EQ(host(da, n), ref) << "in place, n=" << n;
  }
}

TEST_F(CudaKernels, Scale) {
  for (int64_t n : kSizes) {
    const auto x = randomVec(n, 4);
    std::vector<float> ref(static_cast<size_t>(n));
    ASSERT_EQ(zrt_scale(x.data(), 0.37f, ref.data(), n), ZRT_OK);
    float *dx = dev(x);
    ASSERT_EQ(zrt_cuda::scale(dx, 0.37f, dx, n), ZRT_OK); // in place
    EXPECT_EQ(host(dx, n), ref) << "n=" << n;
  }
}

TEST_F(CudaKernels, GeluAndBackward) {
  for (int64_t n : kSizes) {
    auto x = randomVec(n, 5, -6.0f, 6.0f);
    if (n >= 7) { // the tails and zero
      x[0] = -100.0f;
      x[1] = 100.0f;
      x[2] = 0.0f;
    }
    const auto dout = randomVec(n, 6);
    std::vector<float> ref(static_cast<size_t>(n)), refd(ref.size());
    ASSERT_EQ(zrt_gelu(x.data(), ref.data(), n), ZRT_OK);
    ASSERT_EQ(zrt_gelu_backward(x.data(), dout.data(), refd.data(), n),
              ZRT_OK);
    float *dx = dev(x), *ddout = dev(dout), *dy = dev(n), *dg = dev(n);
    ASSERT_EQ(zrt_cuda::gelu(dx, dy, n), ZRT_OK);
    ASSERT_EQ(zrt_cuda::gelu_backward(dx, ddout, dg, n), ZRT_OK);
    expectClose(ref, host(dy, n), 1e-6f, 1e-5f, "gelu n=" + std::to_string(n));
    expectClose(refd, host(dg, n), 1e-6f, 1e-5f,
                "gelu_backward n=" + std::to_string(n));
  }
}

TEST_F(CudaKernels, Matmul) {
  struct Case {
    int64_t batch, M, N, K;
    int64_t sa, sb, sc;
  };
  const Case cases[] = {
      {1, 1, 1, 1, -1, -1, -1},   {1, 5, 7, 3, -1, -1, -1},
      {3, 4, 6, 33, -1, -1, -1},  {2, 8, 5, 16, -1, 0, -1}, // shared B
      {2, 3, 4, 2, 0, -1, -1},                              // shared A
      {2, 4, 3, 0, -1, -1, -1},                             // K == 0
      {2, 3, 5, 4, 20, 30, 17}, // explicit (padded) strides
  };
  for (const Case &c : cases)
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb)
        for (int withBias = 0; withBias < 2; ++withBias)
          for (float beta : {0.0f, 0.5f}) {
            const int64_t sa = c.sa < 0 ? c.M * c.K : c.sa;
            const int64_t sb = c.sb < 0 ? c.K * c.N : c.sb;
            const int64_t sc = c.sc < 0 ? c.M * c.N : c.sc;
            const int64_t na = (c.batch - 1) * sa + c.M * c.K;
            const int64_t nb = (c.batch - 1) * sb + c.K * c.N;
            const int64_t nc = (c.batch - 1) * sc + c.M * c.N;
            const auto A = randomVec(na, 7), B = randomVec(nb, 8),
                       bias = randomVec(c.N, 9), C0 = randomVec(nc, 10);
            std::vector<float> ref = C0;
            const float alpha = 1.25f;
            const std::string what =
                "batch=" + std::to_string(c.batch) + " M=" +
                std::to_string(c.M) + " N=" + std::to_string(c.N) +
                " K=" + std::to_string(c.K) + " ta=" + std::to_string(ta) +
                " tb=" + std::to_string(tb) + " bias=" +
                std::to_string(withBias) + " beta=" + std::to_string(beta);
            ASSERT_EQ(zrt_matmul(A.data(), B.data(),
                                 withBias ? bias.data() : nullptr, ref.data(),
                                 c.batch, c.M, c.N, c.K, ta, tb, alpha, beta,
                                 c.sa, c.sb, c.sc),
                      ZRT_OK)
                << what;
            float *dA = dev(A), *dB = dev(B), *dbias = dev(bias),
                  *dC = dev(C0);
            ASSERT_EQ(zrt_cuda::matmul(dA, dB, withBias ? dbias : nullptr, dC,
                                       c.batch, c.M, c.N, c.K, ta, tb, alpha,
                                       beta, c.sa, c.sb, c.sc),
                      ZRT_OK)
                << what << ": " << zrt_cuda::last_error();
            expectClose(ref, host(dC, nc), 1e-5f * (c.K + 1), 1e-5f, what);
            zrt_cuda::arena_reset(arena_);
          }
}

TEST_F(CudaKernels, MatmulBetaZeroIgnoresNaN) {
  const auto A = randomVec(6, 11), B = randomVec(6, 12);
  const std::vector<float> nan(4, NAN);
  std::vector<float> ref = nan;
  ASSERT_EQ(zrt_matmul(A.data(), B.data(), nullptr, ref.data(), 1, 2, 2, 3, 0,
                       0, 1.0f, 0.0f, -1, -1, -1),
            ZRT_OK);
  float *dC = dev(nan);
  ASSERT_EQ(zrt_cuda::matmul(dev(A), dev(B), nullptr, dC, 1, 2, 2, 3, 0, 0,
                             1.0f, 0.0f, -1, -1, -1),
            ZRT_OK);
  expectClose(ref, host(dC, 4), 1e-5f, 1e-5f, "beta=0 over NaN");
}

// Argument checks return before any CUDA call: same status as the CPU
// runtime, with or without a device.
TEST(CudaArgs, SameStatusAsCpu) {
  float x = 0;
  EXPECT_EQ(zrt_cuda::fill(&x, 1, -1), zrt_fill(&x, 1, -1));
  EXPECT_EQ(zrt_cuda::fill(nullptr, 1, 3), zrt_fill(nullptr, 1, 3));
  EXPECT_EQ(zrt_cuda::fill(nullptr, 1, 0), ZRT_OK);
  EXPECT_EQ(zrt_cuda::add(&x, nullptr, &x, 1), zrt_add(&x, nullptr, &x, 1));
  EXPECT_EQ(zrt_cuda::scale(nullptr, 2, &x, 1), zrt_scale(nullptr, 2, &x, 1));
  EXPECT_EQ(zrt_cuda::gelu(&x, &x, -5), zrt_gelu(&x, &x, -5));
  EXPECT_EQ(zrt_cuda::gelu_backward(&x, nullptr, &x, 1),
            zrt_gelu_backward(&x, nullptr, &x, 1));
  EXPECT_EQ(zrt_cuda::copy_to_device(&x, &x, -1), ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zrt_cuda::copy_to_host(nullptr, &x, 4), ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zrt_cuda::last_error()).find("zrt_copy_to_host"),
            std::string::npos);
  zrt_cuda::clear_error();
  EXPECT_STREQ(zrt_cuda::last_error(), "");
  EXPECT_STREQ(zrt_cuda::status_name(ZRT_ERR_IO), zrt_status_name(ZRT_ERR_IO));
  // zrt_matmul: negative size, stride_c == 0 with batch > 1, NULL C, bad
  // stride, and the empty products that succeed without touching anything.
  EXPECT_EQ(zrt_cuda::matmul(&x, &x, nullptr, &x, 1, -1, 1, 1, 0, 0, 1, 0, -1,
                             -1, -1),
            zrt_matmul(&x, &x, nullptr, &x, 1, -1, 1, 1, 0, 0, 1, 0, -1, -1,
                       -1));
  EXPECT_EQ(zrt_cuda::matmul(&x, &x, nullptr, &x, 2, 1, 1, 1, 0, 0, 1, 0, -1,
                             -1, 0),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zrt_cuda::matmul(&x, &x, nullptr, nullptr, 1, 1, 1, 1, 0, 0, 1, 0,
                             -1, -1, -1),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zrt_cuda::matmul(&x, &x, nullptr, &x, 1, 1, 1, 1, 0, 0, 1, 0, -7,
                             -1, -1),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zrt_cuda::matmul(nullptr, nullptr, nullptr, nullptr, 0, 3, 3, 3, 0,
                             0, 1, 0, -1, -1, -1),
            ZRT_OK);
  zrt_arena a = nullptr;
  EXPECT_EQ(zrt_cuda::arena_create(-1, 0, &a), ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zrt_cuda::arena_create(8, ZRT_MEM_NUM_KINDS, &a),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(a, nullptr);
  EXPECT_EQ(zrt_cuda::memory_bytes(-1), -1);
  EXPECT_EQ(zrt_cuda::arena_size(nullptr), -1);
  EXPECT_EQ(zrt_cuda::arena_base(nullptr), nullptr);
}

} // namespace
