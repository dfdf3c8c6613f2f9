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
    EXPECT_EQ(host(dout, n), ref) << "n=" << n;      // one rounding: exact
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
    ASSERT_EQ(zrt_gelu_backward(x.data(), dout.data(), refd.data(), n), ZRT_OK);
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
      {1, 1, 1, 1, -1, -1, -1},  {1, 5, 7, 3, -1, -1, -1},
      {3, 4, 6, 33, -1, -1, -1}, {2, 8, 5, 16, -1, 0, -1}, // shared B
      {2, 3, 4, 2, 0, -1, -1},                             // shared A
      {2, 4, 3, 0, -1, -1, -1},                            // K == 0
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
                "batch=" + std::to_string(c.batch) +
                " M=" + std::to_string(c.M) + " N=" + std::to_string(c.N) +
                " K=" + std::to_string(c.K) + " ta=" + std::to_string(ta) +
                " tb=" + std::to_string(tb) +
                " bias=" + std::to_string(withBias) +
                " beta=" + std::to_string(beta);
            ASSERT_EQ(zrt_matmul(A.data(), B.data(),
                                 withBias ? bias.data() : nullptr, ref.data(),
                                 c.batch, c.M, c.N, c.K, ta, tb, alpha, beta,
                                 c.sa, c.sb, c.sc),
                      ZRT_OK)
                << what;
            float *dA = dev(A), *dB = dev(B), *dbias = dev(bias), *dC = dev(C0);
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

/// Host vector of n bf16 values of f32 `v` (rounded as zrt_f32_to_bf16).
std::vector<zrt_bf16> toBf16(const std::vector<float> &v) {
  std::vector<zrt_bf16> out(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    out[i] = zrt_f32_to_bf16(v[i]);
  return out;
}

TEST_F(CudaKernels, CopyAndOverlap) {
  for (int64_t n : kSizes) {
    const auto x = randomVec(n, 20);
    float *dx = dev(x), *dout = dev(n);
    ASSERT_EQ(zrt_cuda::copy(n ? dx : nullptr, n ? dout : nullptr, n), ZRT_OK);
    EXPECT_EQ(host(dout, n), x) << "n=" << n;
    ASSERT_EQ(zrt_cuda::copy(dx, dx, n), ZRT_OK); // out == x: nothing
    EXPECT_EQ(host(dx, n), x) << "n=" << n;
    zrt_cuda::arena_reset(arena_);
  }
  // Overlapping ranges, both directions, as the CPU's memmove; the last
  // one larger than the workspace (staged in several chunks).
  struct Case {
    int64_t n, from, to;
  };
  const Case cases[] = {{1000, 5, 2},
                        {1000, 2, 5},
                        {70001, 0, 1},
                        {70001, 1, 0},
                        {70001, 0, 40000},
                        {(int64_t(10) << 20) + 7, 1000, 0},
                        {(int64_t(10) << 20) + 7, 0, 1000}};
  for (const Case &c : cases) {
    const int64_t total = c.n + (c.from > c.to ? c.from : c.to);
    std::vector<float> ref = randomVec(total, 21);
    float *d = dev(ref);
    ASSERT_EQ(zrt_copy(ref.data() + c.from, ref.data() + c.to, c.n), ZRT_OK);
    ASSERT_EQ(zrt_cuda::copy(d + c.from, d + c.to, c.n), ZRT_OK)
        << zrt_cuda::last_error();
    EXPECT_EQ(host(d, total), ref)
        << "n=" << c.n << " from=" << c.from << " to=" << c.to;
    zrt_cuda::arena_reset(arena_);
  }
}

TEST_F(CudaKernels, AddBackward) {
  for (int64_t n : kSizes) {
    const auto g = randomVec(n, 22);
    for (int mask = 0; mask < 4; ++mask) {
      float *dg = dev(g), *da = dev(n), *db = dev(n);
      ASSERT_EQ(zrt_cuda::fill(da, 7.0f, n), ZRT_OK);
      ASSERT_EQ(zrt_cuda::fill(db, 7.0f, n), ZRT_OK);
      ASSERT_EQ(zrt_cuda::add_backward(dg, (mask & 1) ? da : nullptr,
                                       (mask & 2) ? db : nullptr, n),
                ZRT_OK);
      const std::vector<float> seven(static_cast<size_t>(n), 7.0f);
      EXPECT_EQ(host(da, n), (mask & 1) ? g : seven) << n << " " << mask;
      EXPECT_EQ(host(db, n), (mask & 2) ? g : seven) << n << " " << mask;
    }
    float *dg = dev(g), *db = dev(n);
    ASSERT_EQ(zrt_cuda::add_backward(dg, dg, db, n), ZRT_OK); // da == dout
    EXPECT_EQ(host(dg, n), g);
    EXPECT_EQ(host(db, n), g);
    zrt_cuda::arena_reset(arena_);
  }
}

TEST_F(CudaKernels, AxpyMulExact) {
  for (int64_t n : kSizes) {
    const auto a = randomVec(n, 23), b = randomVec(n, 24, -3.0f, 3.0f);
    std::vector<float> y = b, yy = a, prod(static_cast<size_t>(n)), sq = a;
    ASSERT_EQ(zrt_axpy(-1.7f, a.data(), y.data(), n), ZRT_OK);
    ASSERT_EQ(zrt_axpy(0.3f, yy.data(), yy.data(), n), ZRT_OK); // x == y
    ASSERT_EQ(zrt_mul(a.data(), b.data(), prod.data(), n), ZRT_OK);
    ASSERT_EQ(zrt_mul(sq.data(), sq.data(), sq.data(), n), ZRT_OK);
    float *da = dev(a), *db = dev(b), *dyy = dev(a), *dp = dev(n),
          *dsq = dev(a);
    ASSERT_EQ(zrt_cuda::axpy(-1.7f, da, db, n), ZRT_OK);
    ASSERT_EQ(zrt_cuda::axpy(0.3f, dyy, dyy, n), ZRT_OK);
    ASSERT_EQ(zrt_cuda::mul(da, dev(b), dp, n), ZRT_OK);
    ASSERT_EQ(zrt_cuda::mul(dsq, dsq, dsq, n), ZRT_OK);
    // One rounding per operation on both sides (no FMA): bit-identical.
    expectSameBits(y, host(db, n), "axpy n=" + std::to_string(n));
    expectSameBits(yy, host(dyy, n), "axpy x == y n=" + std::to_string(n));
    expectSameBits(prod, host(dp, n), "mul n=" + std::to_string(n));
    expectSameBits(sq, host(dsq, n), "mul in place n=" + std::to_string(n));
    zrt_cuda::arena_reset(arena_);
  }
}

TEST_F(CudaKernels, MulBackward) {
  for (int64_t n : kSizes) {
    const auto a = randomVec(n, 25), b = randomVec(n, 26), g = randomVec(n, 27);
    std::vector<float> ra(static_cast<size_t>(n)), rb(ra.size());
    ASSERT_EQ(
        zrt_mul_backward(a.data(), b.data(), g.data(), ra.data(), rb.data(), n),
        ZRT_OK);
    for (int mask = 0; mask < 4; ++mask) {
      float *da = dev(n), *db = dev(n);
      ASSERT_EQ(zrt_cuda::fill(da, -1.0f, n), ZRT_OK);
      ASSERT_EQ(zrt_cuda::fill(db, -1.0f, n), ZRT_OK);
      ASSERT_EQ(zrt_cuda::mul_backward(dev(a), dev(b), dev(g),
                                       (mask & 1) ? da : nullptr,
                                       (mask & 2) ? db : nullptr, n),
                ZRT_OK);
      const std::vector<float> untouched(static_cast<size_t>(n), -1.0f);
      expectSameBits((mask & 1) ? ra : untouched, host(da, n),
                     "da n=" + std::to_string(n));
      expectSameBits((mask & 2) ? rb : untouched, host(db, n),
                     "db n=" + std::to_string(n));
    }
    zrt_cuda::arena_reset(arena_);
  }
}

TEST_F(CudaKernels, ReluAndBackward) {
  for (int64_t n : kSizes) {
    auto x = randomVec(n, 28);
    const auto g = randomVec(n, 29);
    if (n >= 7) { // NaN propagates; -0 and 0 take the CPU's branches
      x[0] = NAN;
      x[1] = -0.0f;
      x[2] = 0.0f;
      x[3] = INFINITY;
      x[4] = -INFINITY;
    }
    std::vector<float> ry(static_cast<size_t>(n)), rg(ry.size());
    ASSERT_EQ(zrt_relu(x.data(), ry.data(), n), ZRT_OK);
    ASSERT_EQ(zrt_relu_backward(x.data(), g.data(), rg.data(), n), ZRT_OK);
    float *dx = dev(x), *dg = dev(g), *dy = dev(n);
    ASSERT_EQ(zrt_cuda::relu(dx, dy, n), ZRT_OK);
    expectSameBits(ry, host(dy, n), "relu n=" + std::to_string(n));
    ASSERT_EQ(zrt_cuda::relu_backward(dx, dg, dg, n), ZRT_OK); // dx == dout
    expectSameBits(rg, host(dg, n), "relu_backward n=" + std::to_string(n));
    ASSERT_EQ(zrt_cuda::relu(dx, dx, n), ZRT_OK); // in place
    expectSameBits(ry, host(dx, n), "relu in place n=" + std::to_string(n));
    zrt_cuda::arena_reset(arena_);
  }
}

/// f32 bit patterns at the edges of bf16 rounding.
std::vector<float> bf16EdgeValues() {
  const uint32_t bits[] = {
      0x00000000u, 0x80000000u, // +-0
      0x7f800000u, 0xff800000u, // +-Inf
      0x7fc00000u, 0xffc00000u, // quiet NaNs
      0x7f800001u, 0xff812345u, // signalling NaNs (quieted, payload kept)
      0x7fffffffu, 0x7f80ffffu, // NaNs whose rounding would carry
      0x3f808000u, 0x3f818000u, // ties: to even down, to even up
      0x3f808001u, 0x3f807fffu, // just above / below a tie
      0x7f7fffffu, 0x7f7f8000u, // round up to Inf
      0x7f7f7fffu, 0xff7fffffu, // largest that stays finite; -> -Inf
      0x00000001u, 0x00008000u, // denormals (tie to even: 0)
      0x00018000u, 0x807fffffu, // denormal tie up; largest -denormal
      0x00800000u, 0x3f800000u, // smallest normal, 1
  };
  std::vector<float> v;
  for (uint32_t u : bits)
    v.push_back(bitsToFloat(u));
  return v;
}

TEST_F(CudaKernels, CastsExact) {
  // Every bf16 -> f32, and random f32 bit patterns plus the edges -> bf16.
  std::vector<zrt_bf16> all(65536);
  for (int i = 0; i < 65536; ++i)
    all[static_cast<size_t>(i)] = static_cast<zrt_bf16>(i);
  std::vector<float> widened(all.size());
  ASSERT_EQ(zrt_cast_bf16_to_f32(all.data(), widened.data(), 65536), ZRT_OK);
  float *dw = dev(65536);
  ASSERT_EQ(zrt_cuda::cast_bf16_to_f32(devOf(all), dw, 65536), ZRT_OK);
  expectSameBits(widened, host(dw, 65536), "bf16 -> f32");

  std::vector<float> f = bf16EdgeValues();
  std::mt19937 gen(30);
  for (int i = 0; i < 70001; ++i)
    f.push_back(bitsToFloat(static_cast<uint32_t>(gen())));
  for (int64_t n : {int64_t(0), int64_t(1), int64_t(7), int64_t(f.size())}) {
    std::vector<zrt_bf16> ref(static_cast<size_t>(n));
    ASSERT_EQ(zrt_cast_f32_to_bf16(f.data(), ref.data(), n), ZRT_OK);
    zrt_bf16 *db = static_cast<zrt_bf16 *>(devBytes(2 * n + 2));
    ASSERT_EQ(zrt_cuda::cast_f32_to_bf16(dev(f), db, n), ZRT_OK);
    expectSameBits(ref, hostOf(db, n), "f32 -> bf16 n=" + std::to_string(n));
  }
}

TEST_F(CudaKernels, FillBf16) {
  const std::vector<float> values = bf16EdgeValues();
  for (int64_t n : kSizes)
    for (float value : values) {
      std::vector<zrt_bf16> ref(static_cast<size_t>(n));
      ASSERT_EQ(zrt_fill_bf16(ref.data(), value, n), ZRT_OK);
      zrt_bf16 *d = static_cast<zrt_bf16 *>(devBytes(2 * n + 2));
      ASSERT_EQ(zrt_cuda::fill_bf16(d, value, n), ZRT_OK);
      expectSameBits(ref, hostOf(d, n), "fill_bf16 n=" + std::to_string(n));
      zrt_cuda::arena_reset(arena_);
    }
}

/// As expectSameBits, except that any NaN matches any NaN: NaN payloads
/// from arithmetic differ (x86 propagates an operand's NaN or makes
/// 0xffc00000, the GPU makes 0x7fffffff).
void expectSameBf16OrNaN(const std::vector<zrt_bf16> &ref,
                         const std::vector<zrt_bf16> &got,
                         const std::string &what) {
  ASSERT_EQ(ref.size(), got.size()) << what;
  for (size_t i = 0; i < ref.size(); ++i) {
    const bool refNaN = (ref[i] & 0x7fffu) > 0x7f80u;
    const bool gotNaN = (got[i] & 0x7fffu) > 0x7f80u;
    if (refNaN || gotNaN)
      ASSERT_TRUE(refNaN && gotNaN)
          << what << " at " << i << ": expected 0x" << std::hex << ref[i]
          << ", got 0x" << got[i] << std::dec;
    else
      ASSERT_EQ(ref[i], got[i]) << what << " at " << i;
  }
}

TEST_F(CudaKernels, AccumulateBf16) {
  // Random values plus edges: NaN, Inf + -Inf, overflow to Inf, ties of
  // the f32 sum. (Denormal sums are left out; the backend is built
  // without fast-math, so they would agree too.)
  std::vector<float> xs = randomVec(70001, 31, -4.0f, 4.0f);
  std::vector<float> ys = randomVec(70001, 32, -4.0f, 4.0f);
  const float edgeX[] = {NAN,  INFINITY, INFINITY, 3.0e38f,    1.0f,
                         1.0f, 0.0f,     -1.0f,    1.0f / 256, 3.0f / 256};
  const float edgeY[] = {1.0f,       -INFINITY, 1.0f, 3.0e38f, 1.0f / 256,
                         3.0f / 256, -0.0f,     1.0f, 1.0f,    1.0f};
  for (int i = 0; i < 10; ++i) {
    xs[static_cast<size_t>(i)] = edgeX[i];
    ys[static_cast<size_t>(i)] = edgeY[i];
  }
  for (int64_t n : kSizes) {
    const std::vector<float> xf(xs.begin(), xs.begin() + n),
        yf(ys.begin(), ys.begin() + n);
    const std::vector<zrt_bf16> x = toBf16(xf);
    std::vector<zrt_bf16> ref = toBf16(yf);
    zrt_bf16 *dx = devOf(x), *dy = devOf(ref); // y's bits before the sum
    ASSERT_EQ(zrt_accumulate_bf16(x.data(), ref.data(), n), ZRT_OK);
    ASSERT_EQ(zrt_cuda::accumulate_bf16(dx, dy, n), ZRT_OK);
    expectSameBf16OrNaN(ref, hostOf(dy, n),
                        "accumulate n=" + std::to_string(n));
    ASSERT_EQ(zrt_accumulate_bf16(x.data(), ref.data(), n), ZRT_OK); // again
    ASSERT_EQ(zrt_cuda::accumulate_bf16(dx, dy, n), ZRT_OK);
    expectSameBf16OrNaN(ref, hostOf(dy, n),
                        "accumulate twice n=" + std::to_string(n));
    // x and y off a 16-byte boundary: by the same offset (scalar head,
    // 16-byte vectors, scalar tail) and by different ones (all scalar).
    const int offsets[][2] = {{3, 3}, {1, 0}};
    for (const auto &off : offsets) {
      const std::string what = "accumulate n=" + std::to_string(n) +
                               " offsets " + std::to_string(off[0]) + "," +
                               std::to_string(off[1]);
      std::vector<zrt_bf16> want = toBf16(yf);
      auto at = [&](const std::vector<zrt_bf16> &v, int o) {
        zrt_bf16 *p = static_cast<zrt_bf16 *>(devBytes((n + 8) * 2)) + o;
        EXPECT_EQ(zrt_cuda::copy_to_device(p, v.data(), n * 2), ZRT_OK);
        return p;
      };
      zrt_bf16 *ox = at(x, off[0]), *oy = at(want, off[1]);
      ASSERT_EQ(zrt_accumulate_bf16(x.data(), want.data(), n), ZRT_OK);
      ASSERT_EQ(zrt_cuda::accumulate_bf16(ox, oy, n), ZRT_OK);
      expectSameBf16OrNaN(want, hostOf(oy, n), what);
    }
    zrt_cuda::arena_reset(arena_);
  }
}

TEST_F(CudaKernels, BiasBackward) {
  struct Case {
    int64_t rows, N;
  };
  // N a multiple of 4 (16-byte loads: 768, 776 with a partial column
  // tile, 64 with a partial last row chunk, 16) and not (scalar loads).
  const Case cases[] = {{0, 5},     {1, 1},      {7, 33},     {1000, 1},
                        {3, 70001}, {1024, 768}, {4097, 769}, {5, 0},
                        {100, 776}, {4100, 64},  {9, 16}};
  for (const Case &c : cases) {
    const auto dout = randomVec(c.rows * c.N, 33);
    std::vector<float> ref(static_cast<size_t>(c.N), NAN);
    ASSERT_EQ(zrt_bias_backward(dout.data(), ref.data(), c.rows, c.N), ZRT_OK);
    const std::vector<float> nan(static_cast<size_t>(c.N), NAN);
    float *dd = dev(dout), *db = dev(nan); // overwritten, NaN never read
    ASSERT_EQ(zrt_cuda::bias_backward(dd, db, c.rows, c.N), ZRT_OK)
        << zrt_cuda::last_error();
    const std::string what =
        "rows=" + std::to_string(c.rows) + " N=" + std::to_string(c.N);
    const auto got = host(db, c.N);
    // f32 sums in another order: rounding of about rows * 2^-24 each.
    expectClose(ref, got, 1e-6f * static_cast<float>(c.rows + 1), 1e-5f, what);
    // Deterministic: a second run gives the same bits.
    ASSERT_EQ(zrt_cuda::bias_backward(dd, db, c.rows, c.N), ZRT_OK);
    expectSameBits(got, host(db, c.N), what + " rerun");
    // dout one element off a 16-byte boundary (scalar loads): the same sums,
    // bit for bit.
    float *od = dev(c.rows * c.N + 1) + 1;
    ASSERT_EQ(zrt_cuda::copy_to_device(od, dout.data(), c.rows * c.N * 4),
              ZRT_OK);
    ASSERT_EQ(zrt_cuda::bias_backward(od, db, c.rows, c.N), ZRT_OK);
    expectSameBits(got, host(db, c.N), what + " dout misaligned");
    zrt_cuda::arena_reset(arena_);
  }
}

// The argument checks of the elementwise functions, casts, bf16 helpers and
// zrt_bias_backward: the CPU's status and message, before any CUDA call.
TEST(CudaArgs, ElementwiseSameErrorsAsCpu) {
  float x = 0, y = 0;
  zrt_bf16 h = 0;
  EXPECT_SAME_ERROR(zrt_cuda::copy(&x, &y, -1), zrt_copy(&x, &y, -1));
  EXPECT_SAME_ERROR(zrt_cuda::copy(nullptr, &y, 1), zrt_copy(nullptr, &y, 1));
  EXPECT_SAME_ERROR(zrt_cuda::copy(&x, nullptr, 1), zrt_copy(&x, nullptr, 1));
  EXPECT_EQ(zrt_cuda::copy(nullptr, nullptr, 0), ZRT_OK);
  EXPECT_SAME_ERROR(zrt_cuda::add_backward(&x, &y, &y, -2),
                    zrt_add_backward(&x, &y, &y, -2));
  EXPECT_SAME_ERROR(zrt_cuda::add_backward(nullptr, &y, &y, 3),
                    zrt_add_backward(nullptr, &y, &y, 3));
  EXPECT_EQ(zrt_cuda::add_backward(nullptr, nullptr, nullptr, 0), ZRT_OK);
  EXPECT_SAME_ERROR(zrt_cuda::axpy(1, &x, &y, -1), zrt_axpy(1, &x, &y, -1));
  EXPECT_SAME_ERROR(zrt_cuda::axpy(1, nullptr, &y, 1),
                    zrt_axpy(1, nullptr, &y, 1));
  EXPECT_SAME_ERROR(zrt_cuda::axpy(1, &x, nullptr, 1),
                    zrt_axpy(1, &x, nullptr, 1));
  EXPECT_SAME_ERROR(zrt_cuda::mul(&x, &x, &y, -1), zrt_mul(&x, &x, &y, -1));
  EXPECT_SAME_ERROR(zrt_cuda::mul(&x, nullptr, &y, 1),
                    zrt_mul(&x, nullptr, &y, 1));
  EXPECT_SAME_ERROR(zrt_cuda::mul(&x, &x, nullptr, 1),
                    zrt_mul(&x, &x, nullptr, 1));
  EXPECT_SAME_ERROR(zrt_cuda::mul_backward(&x, &x, &x, &y, &y, -1),
                    zrt_mul_backward(&x, &x, &x, &y, &y, -1));
  EXPECT_SAME_ERROR(zrt_cuda::mul_backward(nullptr, &x, &x, &y, &y, 1),
                    zrt_mul_backward(nullptr, &x, &x, &y, &y, 1));
  EXPECT_SAME_ERROR(zrt_cuda::mul_backward(&x, &x, nullptr, &y, &y, 1),
                    zrt_mul_backward(&x, &x, nullptr, &y, &y, 1));
  EXPECT_EQ(
      zrt_cuda::mul_backward(nullptr, nullptr, nullptr, nullptr, nullptr, 0),
      ZRT_OK);
  EXPECT_SAME_ERROR(zrt_cuda::relu(&x, &y, -1), zrt_relu(&x, &y, -1));
  EXPECT_SAME_ERROR(zrt_cuda::relu(nullptr, &y, 1), zrt_relu(nullptr, &y, 1));
  EXPECT_SAME_ERROR(zrt_cuda::relu_backward(&x, &x, &y, -1),
                    zrt_relu_backward(&x, &x, &y, -1));
  EXPECT_SAME_ERROR(zrt_cuda::relu_backward(&x, nullptr, &y, 1),
                    zrt_relu_backward(&x, nullptr, &y, 1));
  EXPECT_SAME_ERROR(zrt_cuda::relu_backward(&x, &x, nullptr, 1),
                    zrt_relu_backward(&x, &x, nullptr, 1));
  EXPECT_SAME_ERROR(zrt_cuda::cast_f32_to_bf16(&x, &h, -1),
                    zrt_cast_f32_to_bf16(&x, &h, -1));
  EXPECT_SAME_ERROR(zrt_cuda::cast_f32_to_bf16(nullptr, &h, 1),
                    zrt_cast_f32_to_bf16(nullptr, &h, 1));
  EXPECT_SAME_ERROR(zrt_cuda::cast_f32_to_bf16(&x, nullptr, 1),
                    zrt_cast_f32_to_bf16(&x, nullptr, 1));
  EXPECT_SAME_ERROR(zrt_cuda::cast_bf16_to_f32(&h, &x, -1),
                    zrt_cast_bf16_to_f32(&h, &x, -1));
  EXPECT_SAME_ERROR(zrt_cuda::cast_bf16_to_f32(nullptr, &x, 1),
                    zrt_cast_bf16_to_f32(nullptr, &x, 1));
  EXPECT_SAME_ERROR(zrt_cuda::cast_bf16_to_f32(&h, nullptr, 1),
                    zrt_cast_bf16_to_f32(&h, nullptr, 1));
  EXPECT_EQ(zrt_cuda::cast_bf16_to_f32(nullptr, nullptr, 0), ZRT_OK);
  EXPECT_SAME_ERROR(zrt_cuda::fill_bf16(&h, 1, -1), zrt_fill_bf16(&h, 1, -1));
  EXPECT_SAME_ERROR(zrt_cuda::fill_bf16(nullptr, 1, 2),
                    zrt_fill_bf16(nullptr, 1, 2));
  EXPECT_EQ(zrt_cuda::fill_bf16(nullptr, 1, 0), ZRT_OK);
  EXPECT_SAME_ERROR(zrt_cuda::accumulate_bf16(&h, &h, -1),
                    zrt_accumulate_bf16(&h, &h, -1));
  EXPECT_SAME_ERROR(zrt_cuda::accumulate_bf16(nullptr, &h, 1),
                    zrt_accumulate_bf16(nullptr, &h, 1));
  EXPECT_SAME_ERROR(zrt_cuda::accumulate_bf16(&h, nullptr, 1),
                    zrt_accumulate_bf16(&h, nullptr, 1));
  EXPECT_SAME_ERROR(zrt_cuda::bias_backward(&x, &y, -1, 1),
                    zrt_bias_backward(&x, &y, -1, 1));
  EXPECT_SAME_ERROR(zrt_cuda::bias_backward(&x, &y, 1, -1),
                    zrt_bias_backward(&x, &y, 1, -1));
  EXPECT_SAME_ERROR(zrt_cuda::bias_backward(&x, nullptr, 1, 1),
                    zrt_bias_backward(&x, nullptr, 1, 1));
  EXPECT_SAME_ERROR(zrt_cuda::bias_backward(nullptr, &y, 2, 1),
                    zrt_bias_backward(nullptr, &y, 2, 1));
  EXPECT_EQ(zrt_cuda::bias_backward(nullptr, nullptr, 4, 0), ZRT_OK);
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
  EXPECT_EQ(
      zrt_cuda::matmul(&x, &x, nullptr, &x, 1, -1, 1, 1, 0, 0, 1, 0, -1, -1,
                       -1),
      zrt_matmul(&x, &x, nullptr, &x, 1, -1, 1, 1, 0, 0, 1, 0, -1, -1, -1));
  EXPECT_EQ(
      zrt_cuda::matmul(&x, &x, nullptr, &x, 2, 1, 1, 1, 0, 0, 1, 0, -1, -1, 0),
      ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zrt_cuda::matmul(&x, &x, nullptr, nullptr, 1, 1, 1, 1, 0, 0, 1, 0,
                             -1, -1, -1),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(
      zrt_cuda::matmul(&x, &x, nullptr, &x, 1, 1, 1, 1, 0, 0, 1, 0, -7, -1, -1),
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
