//===- bf16_kernels_test.cpp - the native bf16 kernels, bit for bit -------===//
//
// Every zrt_X_bf16 of zrt.h's "Native bf16 kernels" section against its
// definition: widen the bf16 inputs (zrt_cast_bf16_to_f32), call the f32
// zrt_X, round the bf16 outputs (zrt_cast_f32_to_bf16). Outputs are compared
// with memcmp (bf16 outputs and the f32 statistics, loss and log-sum-exp),
// on random inputs of several shapes (sizes that are no multiple of a
// vector width, single rows and columns, empty tensors, padded
// vocabularies, attention tiles), special values (infinities, NaN, ties of
// the rounding, denormals), and misaligned views. Bad arguments must fail
// with the f32 function's status and message (under the bf16 name), and no
// call allocates when given its workspace. The residual-add forms of layer
// norm (zrt_add_layer_norm, zrt_layer_norm_backward_add; f32 and bf16) are
// checked bit for bit against the unfused calls they replace.
//
//===----------------------------------------------------------------------===//

#include "test_util.h"

#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

using namespace zrt_test;

namespace {

using Bf16Vec = std::vector<zrt_bf16>;
using FloatVec = std::vector<float>;

/// bf16 values of uniform f32 in [lo, hi) (rounded to nearest even).
Bf16Vec randomBf16(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  const FloatVec f = randomVec(n, seed, lo, hi);
  Bf16Vec b(n);
  for (size_t i = 0; i < n; ++i)
    b[i] = zrt_f32_to_bf16(f[i]);
  return b;
}

/// The exact f32 values of b (zrt_cast_bf16_to_f32).
FloatVec widen(const Bf16Vec &b) {
  FloatVec f(b.size());
  EXPECT_EQ(
      zrt_cast_bf16_to_f32(b.data(), f.data(), static_cast<int64_t>(b.size())),
      ZRT_OK);
  return f;
}

/// f rounded to bf16 (zrt_cast_f32_to_bf16).
Bf16Vec narrow(const FloatVec &f) {
  Bf16Vec b(f.size());
  EXPECT_EQ(
      zrt_cast_f32_to_bf16(f.data(), b.data(), static_cast<int64_t>(f.size())),
      ZRT_OK);
  return b;
}

/// memcmp equality of two arrays; names the first element that differs.
template <typename T>
::testing::AssertionResult bitsEqual(const T *got, const T *want, size_t n) {
  if (n == 0 || std::memcmp(got, want, n * sizeof(T)) == 0)
    return ::testing::AssertionSuccess();
  for (size_t i = 0; i < n; ++i)
    if (std::memcmp(got + i, want + i, sizeof(T)) != 0) {
      uint32_t g = 0, w = 0;
      std::memcpy(&g, got + i, sizeof(T));
      std::memcpy(&w, want + i, sizeof(T));
      return ::testing::AssertionFailure()
             << "element " << i << " of " << n << ": bits 0x" << std::hex << g
             << " vs 0x" << w;
    }
  return ::testing::AssertionFailure() << "memcmp differs";
}

template <typename T>
::testing::AssertionResult bitsEqual(const std::vector<T> &got,
                                     const std::vector<T> &want) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure()
           << "sizes " << got.size() << " vs " << want.size();
  return bitsEqual(got.data(), want.data(), got.size());
}

/// bf16 bit patterns worth a special look: signed zeros, infinities, quiet
/// and signaling NaNs with payloads, denormals, the largest finite value
/// and 1 + 2^-8 style values whose sums and products are rounding ties.
const Bf16Vec kSpecials = {
    0x0000, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0x7f81, 0x0001,
    0x807f, 0x7f7f, 0xff7f, 0x3f80, 0x3b80, 0x3f81, 0x3c00,
    0xbf80, 0x4049, 0x0080, 0xc120, 0x4120, 0xc2c8,
};

/// Writes kSpecials over every `stride`-th element of b starting at `at`.
void sprinkleSpecials(Bf16Vec &b, size_t at, size_t stride) {
  for (size_t i = at, s = 0; i < b.size(); i += stride, ++s)
    b[i] = kSpecials[s % kSpecials.size()];
}

/// Element counts for the elementwise kernels: empty, single, around the
/// 4/8/16/32-lane vector widths, and above the parallel grains (gelu runs
/// in parallel chunks above 4096 elements, the other loops above 32768).
const std::vector<int64_t> kCounts = {0,   1,   2,    3,    7,    8,    15,
                                      16,  17,  31,   33,   63,   64,   65,
                                      127, 255, 1000, 4095, 4097, 9999, 40001};

/// Expects fn to allocate nothing on the heap.
void expectNoAllocation(const std::function<void()> &fn,
                        const std::string &what) {
  const int64_t before = zrt_heap_allocations();
  fn();
  EXPECT_EQ(zrt_heap_allocations(), before) << what;
}

/// Runs the f32 call and the bf16 call, which must both return `want`; when
/// that is a failure, the bf16 message must be the f32 one with the
/// function's name replaced.
void expectSameStatus(int want, const char *f32Name,
                      const std::function<int()> &f32, const char *bf16Name,
                      const std::function<int()> &bf16,
                      const std::string &what) {
  zrt_clear_error();
  const int s32 = f32();
  const std::string m32 = zrt_last_error();
  zrt_clear_error();
  const int s16 = bf16();
  const std::string m16 = zrt_last_error();
  EXPECT_EQ(s32, want) << what << ": " << m32;
  EXPECT_EQ(s16, s32) << what << ": " << m16;
  if (s32 == ZRT_OK)
    return;
  const std::string name32 = f32Name, name16 = bf16Name;
  ASSERT_EQ(m32.compare(0, name32.size() + 1, name32 + ":"), 0)
      << what << ": " << m32;
  EXPECT_EQ(m16, name16 + m32.substr(name32.size())) << what;
}

//===----------------------------------------------------------------------===//
// Elementwise: zrt_add_bf16, zrt_gelu_bf16, zrt_gelu_backward_bf16
//===----------------------------------------------------------------------===//

TEST(Bf16KernelsTest, AddMatchesF32) {
  for (int64_t n : kCounts) {
    // offset 1: the bf16 tensors start 2 bytes into their buffers.
    for (size_t offset : {size_t(0), size_t(1)}) {
      SCOPED_TRACE("n=" + std::to_string(n) +
                   " offset=" + std::to_string(offset));
      Bf16Vec a = randomBf16(n + offset, 11 + n, -4.0f, 4.0f),
              b = randomBf16(n + offset, 12 + n, -4.0f, 4.0f);
      sprinkleSpecials(a, offset, 5);
      sprinkleSpecials(b, offset + 2, 7);
      const Bf16Vec a0(a.begin() + offset, a.end()),
          b0(b.begin() + offset, b.end());
      FloatVec ref(n);
      ASSERT_EQ(zrt_add(widen(a0).data(), widen(b0).data(), ref.data(), n),
                ZRT_OK);
      const Bf16Vec want = narrow(ref);
      Bf16Vec out(n + offset, 0xdead);
      expectNoAllocation(
          [&] {
            ASSERT_EQ(zrt_add_bf16(a.data() + offset, b.data() + offset,
                                   out.data() + offset, n),
                      ZRT_OK)
                << zrt_last_error();
          },
          "zrt_add_bf16");
      EXPECT_TRUE(bitsEqual(out.data() + offset, want.data(), n));
      // In place: out == a.
      ASSERT_EQ(zrt_add_bf16(a.data() + offset, b.data() + offset,
                             a.data() + offset, n),
                ZRT_OK);
      EXPECT_TRUE(bitsEqual(a.data() + offset, want.data(), n));
    }
  }
}

TEST(Bf16KernelsTest, AddRoundsTiesToEvenAndKeepsSpecials) {
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: even (1) wins; 1 + 2^-7 +
  // 2^-8 is halfway between 1 + 2^-7 (odd) and 1 + 2^-6 (even).
  const Bf16Vec a = {0x3f80, 0x3f81, 0x7f7f, 0x7f80, 0x7fc0, 0xff80, 0x0001},
                b = {0x3b80, 0x3b80, 0x7f7f, 0xff80, 0x3f80, 0xbf80, 0x0001};
  Bf16Vec out(a.size());
  ASSERT_EQ(zrt_add_bf16(a.data(), b.data(), out.data(), 7), ZRT_OK);
  EXPECT_EQ(out[0], 0x3f80);
  EXPECT_EQ(out[1], 0x3f82);
  EXPECT_EQ(out[2], 0x7f80); // overflow to +Inf
  EXPECT_TRUE((out[3] & 0x7f80) == 0x7f80 && (out[3] & 0x007f) != 0); // NaN
  EXPECT_EQ(out[4], 0x7fc0);
  EXPECT_EQ(out[5], 0xff80);
  EXPECT_EQ(out[6], 0x0002); // denormals add exactly
}

TEST(Bf16KernelsTest, GeluMatchesF32) {
  for (int64_t n : kCounts) {
    for (size_t offset : {size_t(0), size_t(1)}) {
      SCOPED_TRACE("n=" + std::to_string(n) +
                   " offset=" + std::to_string(offset));
      // [-12, 12] reaches both clamps of the exponential.
      Bf16Vec x = randomBf16(n + offset, 21 + n, -12.0f, 12.0f),
              dout = randomBf16(n + offset, 22 + n, -2.0f, 2.0f);
      sprinkleSpecials(x, offset + 1, 6);
      const Bf16Vec x0(x.begin() + offset, x.end()),
          d0(dout.begin() + offset, dout.end());
      const FloatVec xf = widen(x0), df = widen(d0);
      FloatVec ref(n), refGrad(n);
      ASSERT_EQ(zrt_gelu(xf.data(), ref.data(), n), ZRT_OK);
      ASSERT_EQ(zrt_gelu_backward(xf.data(), df.data(), refGrad.data(), n),
                ZRT_OK);
      const Bf16Vec want = narrow(ref), wantGrad = narrow(refGrad);
      Bf16Vec out(n + offset, 0xdead), dx(n + offset, 0xdead);
      expectNoAllocation(
          [&] {
            ASSERT_EQ(zrt_gelu_bf16(x.data() + offset, out.data() + offset, n),
                      ZRT_OK);
            ASSERT_EQ(zrt_gelu_backward_bf16(x.data() + offset,
                                             dout.data() + offset,
                                             dx.data() + offset, n),
                      ZRT_OK);
          },
          "gelu");
      EXPECT_TRUE(bitsEqual(out.data() + offset, want.data(), n));
      EXPECT_TRUE(bitsEqual(dx.data() + offset, wantGrad.data(), n));
      // In place (out == x, dx == dout).
      Bf16Vec xi = x0, di = d0;
      ASSERT_EQ(zrt_gelu_backward_bf16(x0.data(), di.data(), di.data(), n),
                ZRT_OK);
      ASSERT_EQ(zrt_gelu_bf16(xi.data(), xi.data(), n), ZRT_OK);
      EXPECT_TRUE(bitsEqual(xi, want));
      EXPECT_TRUE(bitsEqual(di, wantGrad));
    }
  }
}

TEST(Bf16KernelsTest, ElementwiseBadArguments) {
  float f[4] = {};
  zrt_bf16 h[4] = {};
  for (int64_t n : {int64_t(-1), int64_t(-100)}) {
    expectSameStatus(
        ZRT_ERR_INVALID_ARGUMENT, "zrt_add",
        [&] { return zrt_add(f, f, f, n); }, "zrt_add_bf16",
        [&] { return zrt_add_bf16(h, h, h, n); }, "add n<0");
    expectSameStatus(
        ZRT_ERR_INVALID_ARGUMENT, "zrt_gelu", [&] { return zrt_gelu(f, f, n); },
        "zrt_gelu_bf16", [&] { return zrt_gelu_bf16(h, h, n); }, "gelu n<0");
    expectSameStatus(
        ZRT_ERR_INVALID_ARGUMENT, "zrt_gelu_backward",
        [&] { return zrt_gelu_backward(f, f, f, n); }, "zrt_gelu_backward_bf16",
        [&] { return zrt_gelu_backward_bf16(h, h, h, n); }, "gelu' n<0");
  }
  for (int which = 0; which < 3; ++which) {
    float *fp[3] = {f, f, f};
    zrt_bf16 *hp[3] = {h, h, h};
    fp[which] = nullptr;
    hp[which] = nullptr;
    const std::string what = "NULL #" + std::to_string(which);
    expectSameStatus(
        ZRT_ERR_INVALID_ARGUMENT, "zrt_add",
        [&] { return zrt_add(fp[0], fp[1], fp[2], 4); }, "zrt_add_bf16",
        [&] { return zrt_add_bf16(hp[0], hp[1], hp[2], 4); }, "add " + what);
    expectSameStatus(
        ZRT_ERR_INVALID_ARGUMENT, "zrt_gelu_backward",
        [&] { return zrt_gelu_backward(fp[0], fp[1], fp[2], 4); },
        "zrt_gelu_backward_bf16",
        [&] { return zrt_gelu_backward_bf16(hp[0], hp[1], hp[2], 4); },
        "gelu' " + what);
    if (which < 2)
      expectSameStatus(
          ZRT_ERR_INVALID_ARGUMENT, "zrt_gelu",
          [&] { return zrt_gelu(fp[0], fp[1], 4); }, "zrt_gelu_bf16",
          [&] { return zrt_gelu_bf16(hp[0], hp[1], 4); }, "gelu " + what);
  }
  // Nothing to do: NULL is fine.
  expectSameStatus(
      ZRT_OK, "zrt_add", [&] { return zrt_add(nullptr, nullptr, nullptr, 0); },
      "zrt_add_bf16",
      [&] { return zrt_add_bf16(nullptr, nullptr, nullptr, 0); }, "add n=0");
  expectSameStatus(
      ZRT_OK, "zrt_gelu", [&] { return zrt_gelu(nullptr, nullptr, 0); },
      "zrt_gelu_bf16", [&] { return zrt_gelu_bf16(nullptr, nullptr, 0); },
      "gelu n=0");
}

//===----------------------------------------------------------------------===//
// zrt_bias_backward_bf16
//===----------------------------------------------------------------------===//

TEST(Bf16KernelsTest, BiasBackwardMatchesF32) {
  for (const auto &shape :
       std::vector<std::pair<int64_t, int64_t>>{{0, 5},
                                                {5, 0},
                                                {1, 1},
                                                {3, 1},
                                                {1, 70},
                                                {17, 65},
                                                {64, 128},
                                                {33, 129},
                                                {300, 200},
                                                {1000, 3}}) {
    const int64_t rows = shape.first, N = shape.second;
    SCOPED_TRACE("rows=" + std::to_string(rows) + " N=" + std::to_string(N));
    Bf16Vec dout = randomBf16(rows * N, 31 + rows * N, -3.0f, 3.0f);
    if (rows * N > 40) {
      // An infinity in one column, a NaN in another, a large value
      // swamping the small ones of a third.
      dout[2] = 0x7f80;
      dout[N + 3 < rows * N ? N + 3 : 3] = 0x7fc0;
      dout[5] = 0x4f00;
    }
    FloatVec ref(N);
    ASSERT_EQ(zrt_bias_backward(widen(dout).data(), ref.data(), rows, N),
              ZRT_OK);
    Bf16Vec dbias(N, 0xdead);
    expectNoAllocation(
        [&] {
          ASSERT_EQ(zrt_bias_backward_bf16(dout.data(), dbias.data(), rows, N),
                    ZRT_OK);
        },
        "bias_backward");
    EXPECT_TRUE(bitsEqual(dbias, narrow(ref)));
  }
}

TEST(Bf16KernelsTest, BiasBackwardBadArguments) {
  float f[4] = {};
  zrt_bf16 h[4] = {};
  for (const auto &shape :
       std::vector<std::pair<int64_t, int64_t>>{{-1, 2}, {2, -1}, {-3, -3}}) {
    const int64_t rows = shape.first, N = shape.second;
    expectSameStatus(
        ZRT_ERR_INVALID_ARGUMENT, "zrt_bias_backward",
        [&] { return zrt_bias_backward(f, f, rows, N); },
        "zrt_bias_backward_bf16",
        [&] { return zrt_bias_backward_bf16(h, h, rows, N); }, "sizes");
  }
  expectSameStatus(
      ZRT_ERR_INVALID_ARGUMENT, "zrt_bias_backward",
      [&] { return zrt_bias_backward(nullptr, f, 2, 2); },
      "zrt_bias_backward_bf16",
      [&] { return zrt_bias_backward_bf16(nullptr, h, 2, 2); }, "NULL dout");
  expectSameStatus(
      ZRT_ERR_INVALID_ARGUMENT, "zrt_bias_backward",
      [&] { return zrt_bias_backward(f, nullptr, 2, 2); },
      "zrt_bias_backward_bf16",
      [&] { return zrt_bias_backward_bf16(h, nullptr, 2, 2); }, "NULL dbias");
  // rows == 0: dout may be NULL, dbias is zeroed.
  expectSameStatus(
      ZRT_OK, "zrt_bias_backward",
      [&] { return zrt_bias_backward(nullptr, f, 0, 2); },
      "zrt_bias_backward_bf16",
      [&] { return zrt_bias_backward_bf16(nullptr, h, 0, 2); }, "rows=0");
}

//===----------------------------------------------------------------------===//
// Layer norm: zrt_layer_norm_bf16, zrt_layer_norm_stats_bf16,
// zrt_layer_norm_backward_bf16
//===----------------------------------------------------------------------===//

const std::vector<std::pair<int64_t, int64_t>> kRowShapes = {
    {0, 1},  {0, 8},  {1, 1},    {3, 1},     {1, 7},   {5, 64},
    {7, 65}, {2, 63}, {17, 257}, {64, 1000}, {2, 3000}};

/// bf16 rows with a nonzero mean; from the fourth row on, row 3 holds an
/// infinity and row 4 a NaN (each row one kind of special).
Bf16Vec layerNormInput(int64_t N, int64_t C, uint32_t seed) {
  Bf16Vec x = randomBf16(N * C, seed, -2.0f, 3.0f);
  if (N > 4 && C > 2) {
    x[3 * C + 1] = 0x7f80;
    x[4 * C + 2] = 0x7fc0;
  }
  return x;
}

TEST(Bf16KernelsTest, LayerNormMatchesF32) {
  for (const auto &shape : kRowShapes) {
    const int64_t N = shape.first, C = shape.second;
    for (float eps : {1e-5f, 0.0f}) {
      const Bf16Vec x = layerNormInput(N, C, 41 + N * C);
      const Bf16Vec w = randomBf16(C, 42 + C, 0.5f, 1.5f),
                    b = randomBf16(C, 43 + C, -0.5f, 0.5f);
      const FloatVec xf = widen(x), wf = widen(w), bf = widen(b);
      for (int mask = 0; mask < 16; ++mask) {
        const bool hasW = mask & 1, hasB = mask & 2, hasMean = mask & 4,
                   hasRstd = mask & 8;
        SCOPED_TRACE("N=" + std::to_string(N) + " C=" + std::to_string(C) +
                     " eps=" + std::to_string(eps) +
                     " mask=" + std::to_string(mask));
        FloatVec ref(N * C), refMean(N, -7.0f), refRstd(N, -7.0f);
        ASSERT_EQ(zrt_layer_norm(xf.data(), hasW ? wf.data() : nullptr,
                                 hasB ? bf.data() : nullptr, ref.data(),
                                 hasMean ? refMean.data() : nullptr,
                                 hasRstd ? refRstd.data() : nullptr, N, C, eps),
                  ZRT_OK);
        Bf16Vec out(N * C, 0xdead);
        FloatVec mean(N, -7.0f), rstd(N, -7.0f);
        expectNoAllocation(
            [&] {
              ASSERT_EQ(zrt_layer_norm_bf16(
                            x.data(), hasW ? w.data() : nullptr,
                            hasB ? b.data() : nullptr, out.data(),
                            hasMean ? mean.data() : nullptr,
                            hasRstd ? rstd.data() : nullptr, N, C, eps),
                        ZRT_OK)
                  << zrt_last_error();
            },
            "layer_norm");
        EXPECT_TRUE(bitsEqual(out, narrow(ref)));
        EXPECT_TRUE(bitsEqual(mean, refMean));
        EXPECT_TRUE(bitsEqual(rstd, refRstd));
      }
    }
  }
}

TEST(Bf16KernelsTest, LayerNormStatsMatchF32AndLayerNorm) {
  for (const auto &shape : kRowShapes) {
    const int64_t N = shape.first, C = shape.second;
    SCOPED_TRACE("N=" + std::to_string(N) + " C=" + std::to_string(C));
    const Bf16Vec x = layerNormInput(N, C, 51 + N * C);
    FloatVec refMean(N), refRstd(N), mean(N, -7.0f), rstd(N, -7.0f), lnMean(N),
        lnRstd(N);
    ASSERT_EQ(zrt_layer_norm_stats(widen(x).data(), refMean.data(),
                                   refRstd.data(), N, C, 1e-5f),
              ZRT_OK);
    expectNoAllocation(
        [&] {
          ASSERT_EQ(zrt_layer_norm_stats_bf16(x.data(), mean.data(),
                                              rstd.data(), N, C, 1e-5f),
                    ZRT_OK);
        },
        "layer_norm_stats");
    EXPECT_TRUE(bitsEqual(mean, refMean));
    EXPECT_TRUE(bitsEqual(rstd, refRstd));
    // The same values zrt_layer_norm_bf16 saves.
    Bf16Vec out(N * C);
    ASSERT_EQ(zrt_layer_norm_bf16(x.data(), nullptr, nullptr, out.data(),
                                  lnMean.data(), lnRstd.data(), N, C, 1e-5f),
              ZRT_OK);
    EXPECT_TRUE(bitsEqual(mean, lnMean));
    EXPECT_TRUE(bitsEqual(rstd, lnRstd));
  }
}

TEST(Bf16KernelsTest, LayerNormBackwardMatchesF32) {
  for (const auto &shape : kRowShapes) {
    const int64_t N = shape.first, C = shape.second;
    const Bf16Vec x = layerNormInput(N, C, 61 + N * C),
                  dout = randomBf16(N * C, 62 + N * C, -1.0f, 1.0f),
                  w = randomBf16(C, 63 + C, 0.5f, 1.5f);
    FloatVec mean(N), rstd(N);
    ASSERT_EQ(zrt_layer_norm_stats_bf16(x.data(), mean.data(), rstd.data(), N,
                                        C, 1e-5f),
              ZRT_OK);
    const FloatVec xf = widen(x), df = widen(dout), wf = widen(w);
    for (int mask = 0; mask < 16; ++mask) {
      const bool hasW = mask & 1, hasDx = mask & 2, hasDw = mask & 4,
                 hasDb = mask & 8;
      SCOPED_TRACE("N=" + std::to_string(N) + " C=" + std::to_string(C) +
                   " mask=" + std::to_string(mask));
      FloatVec rdx(N * C, -7.0f), rdw(C, -7.0f), rdb(C, -7.0f);
      ASSERT_EQ(zrt_layer_norm_backward(
                    df.data(), xf.data(), hasW ? wf.data() : nullptr,
                    mean.data(), rstd.data(), hasDx ? rdx.data() : nullptr,
                    hasDw ? rdw.data() : nullptr, hasDb ? rdb.data() : nullptr,
                    N, C),
                ZRT_OK);
      // Outputs that are skipped stay untouched: the bf16 of -7.
      Bf16Vec dx(N * C, 0xc0e0), dw(C, 0xc0e0), db(C, 0xc0e0);
      expectNoAllocation(
          [&] {
            ASSERT_EQ(zrt_layer_norm_backward_bf16(
                          dout.data(), x.data(), hasW ? w.data() : nullptr,
                          mean.data(), rstd.data(), hasDx ? dx.data() : nullptr,
                          hasDw ? dw.data() : nullptr,
                          hasDb ? db.data() : nullptr, N, C),
                      ZRT_OK)
                << zrt_last_error();
          },
          "layer_norm_backward");
      EXPECT_TRUE(bitsEqual(dx, narrow(rdx)));
      EXPECT_TRUE(bitsEqual(dw, narrow(rdw)));
      EXPECT_TRUE(bitsEqual(db, narrow(rdb)));
    }
  }
}

/// Shapes and eps that the layer-norm functions reject.
struct BadLayerNormShape {
  int64_t N, C;
  float eps;
  std::string name() const {
    return "N=" + std::to_string(N) + " C=" + std::to_string(C) +
           " eps=" + std::to_string(eps);
  }
};
const BadLayerNormShape kBadLayerNormShapes[] = {
    {-1, 2, 0.0f}, {2, 0, 0.0f}, {2, -1, 0.0f}, {2, 2, -1e-5f}};

TEST(Bf16KernelsTest, LayerNormBadArguments) {
  float f[8] = {};
  zrt_bf16 h[8] = {};
  for (const BadLayerNormShape &s : kBadLayerNormShapes) {
    const std::string what = s.name();
    expectSameStatus(
        ZRT_ERR_INVALID_ARGUMENT, "zrt_layer_norm",
        [&] { return zrt_layer_norm(f, f, f, f, f, f, s.N, s.C, s.eps); },
        "zrt_layer_norm_bf16",
        [&] { return zrt_layer_norm_bf16(h, h, h, h, f, f, s.N, s.C, s.eps); },
        what);
    expectSameStatus(
        ZRT_ERR_INVALID_ARGUMENT, "zrt_layer_norm_stats",
        [&] { return zrt_layer_norm_stats(f, f, f, s.N, s.C, s.eps); },
        "zrt_layer_norm_stats_bf16",
        [&] { return zrt_layer_norm_stats_bf16(h, f, f, s.N, s.C, s.eps); },
        what);
    if (s.eps >= 0.0f)
      expectSameStatus(
          ZRT_ERR_INVALID_ARGUMENT, "zrt_layer_norm_backward",
          [&] {
            return zrt_layer_norm_backward(f, f, f, f, f, f, f, f, s.N, s.C);
          },
          "zrt_layer_norm_backward_bf16",
          [&] {
            return zrt_layer_norm_backward_bf16(h, h, h, f, f, h, h, h, s.N,
                                                s.C);
          },
          what);
  }
  // NULL required pointers, one at a time.
  expectSameStatus(
      ZRT_ERR_INVALID_ARGUMENT, "zrt_layer_norm",
      [&] { return zrt_layer_norm(nullptr, f, f, f, f, f, 2, 2, 0.0f); },
      "zrt_layer_norm_bf16",
      [&] { return zrt_layer_norm_bf16(nullptr, h, h, h, f, f, 2, 2, 0.0f); },
      "NULL x");
  expectSameStatus(
      ZRT_ERR_INVALID_ARGUMENT, "zrt_layer_norm",
      [&] { return zrt_layer_norm(f, f, f, nullptr, f, f, 2, 2, 0.0f); },
      "zrt_layer_norm_bf16",
      [&] { return zrt_layer_norm_bf16(h, h, h, nullptr, f, f, 2, 2, 0.0f); },
      "NULL out");
  for (int which = 0; which < 3; ++which) {
    float *fp[3] = {f, f, f};
    fp[which] = nullptr;
    zrt_bf16 *x = which == 0 ? nullptr : h;
    expectSameStatus(
        ZRT_ERR_INVALID_ARGUMENT, "zrt_layer_norm_stats",
        [&] { return zrt_layer_norm_stats(fp[0], fp[1], fp[2], 2, 2, 0.0f); },
        "zrt_layer_norm_stats_bf16",
        [&] { return zrt_layer_norm_stats_bf16(x, fp[1], fp[2], 2, 2, 0.0f); },
        "stats NULL #" + std::to_string(which));
  }
  for (int which = 0; which < 4; ++which) {
    // dout, x, mean, rstd.
    float *fp[4] = {f, f, f, f};
    fp[which] = nullptr;
    zrt_bf16 *dout = which == 0 ? nullptr : h, *x = which == 1 ? nullptr : h;
    expectSameStatus(
        ZRT_ERR_INVALID_ARGUMENT, "zrt_layer_norm_backward",
        [&] {
          return zrt_layer_norm_backward(fp[0], fp[1], f, fp[2], fp[3], f, f, f,
                                         2, 2);
        },
        "zrt_layer_norm_backward_bf16",
        [&] {
          return zrt_layer_norm_backward_bf16(dout, x, h, fp[2], fp[3], h, h, h,
                                              2, 2);
        },
        "backward NULL #" + std::to_string(which));
  }
  // N == 0: nothing to do.
  expectSameStatus(
      ZRT_OK, "zrt_layer_norm",
      [&] {
        return zrt_layer_norm(nullptr, nullptr, nullptr, nullptr, nullptr,
                              nullptr, 0, 3, 1e-5f);
      },
      "zrt_layer_norm_bf16",
      [&] {
        return zrt_layer_norm_bf16(nullptr, nullptr, nullptr, nullptr, nullptr,
                                   nullptr, 0, 3, 1e-5f);
      },
      "N=0");
}

//===----------------------------------------------------------------------===//
// Residual add fused into layer norm, f32 and bf16: zrt_add_layer_norm(_bf16)
// and zrt_layer_norm_backward_add(_bf16) against the unfused calls
//===----------------------------------------------------------------------===//

/// The f32 and the bf16 functions of the layer-norm tests, by element type.
template <typename T> struct LayerNormApi;
template <> struct LayerNormApi<float> {
  static constexpr auto add = zrt_add;
  static constexpr auto layerNorm = zrt_layer_norm;
  static constexpr auto addLayerNorm = zrt_add_layer_norm;
  static constexpr auto stats = zrt_layer_norm_stats;
  static constexpr auto backward = zrt_layer_norm_backward;
  static constexpr auto backwardAdd = zrt_layer_norm_backward_add;
  static constexpr const char *suffix = "";
};
template <> struct LayerNormApi<zrt_bf16> {
  static constexpr auto add = zrt_add_bf16;
  static constexpr auto layerNorm = zrt_layer_norm_bf16;
  static constexpr auto addLayerNorm = zrt_add_layer_norm_bf16;
  static constexpr auto stats = zrt_layer_norm_stats_bf16;
  static constexpr auto backward = zrt_layer_norm_backward_bf16;
  static constexpr auto backwardAdd = zrt_layer_norm_backward_add_bf16;
  static constexpr const char *suffix = "_bf16";
};

/// f as a T (bf16: rounded).
template <typename T> T ofFloat(float f);
template <> float ofFloat<float>(float f) { return f; }
template <> zrt_bf16 ofFloat<zrt_bf16>(float f) { return zrt_f32_to_bf16(f); }

/// A tensor of n uniform values in [lo, hi) as T, viewed `offset` elements
/// into its buffer (the buffer holds offset + n values).
template <typename T>
std::vector<T> valuesOf(int64_t n, size_t offset, uint32_t seed, float lo,
                        float hi) {
  const FloatVec f = randomVec(n + offset, seed, lo, hi);
  std::vector<T> v(f.size());
  for (size_t i = 0; i < f.size(); ++i)
    v[i] = ofFloat<T>(f[i]);
  return v;
}

/// valuesOf for rows [N, C], where from the fourth row on row 3 holds an
/// infinity and row 4 a NaN (as layerNormInput).
template <typename T>
std::vector<T> rowsOf(int64_t N, int64_t C, size_t offset, uint32_t seed,
                      float lo, float hi) {
  std::vector<T> v = valuesOf<T>(N * C, offset, seed, lo, hi);
  if (N > 4 && C > 2) {
    v[offset + 3 * C + 1] = ofFloat<T>(std::numeric_limits<float>::infinity());
    v[offset + 4 * C + 2] = ofFloat<T>(std::numeric_limits<float>::quiet_NaN());
  }
  return v;
}

/// The layer-norm shapes plus GPT-2's width, both vector alignments.
std::vector<std::pair<int64_t, int64_t>> fusedRowShapes() {
  auto shapes = kRowShapes;
  shapes.push_back({9, 768});
  return shapes;
}

/// zrt_add_layer_norm(_bf16) == zrt_add(_bf16) + zrt_layer_norm(_bf16), bit
/// for bit, for every combination of weight, bias, mean and rstd.
template <typename T> void checkAddLayerNormMatchesUnfused() {
  using Api = LayerNormApi<T>;
  const T garbage = ofFloat<T>(-7.0f);
  for (const auto &shape : fusedRowShapes())
    for (size_t off : {size_t(0), size_t(1)}) {
      const int64_t N = shape.first, C = shape.second, NC = N * C;
      const float eps = 1e-5f;
      // a + b has a nonzero mean; b is small, so the sum rounds.
      const std::vector<T> a = rowsOf<T>(N, C, off, 71 + NC, -2.0f, 3.0f),
                           b = valuesOf<T>(NC, off, 72 + NC, -1e-2f, 1e-2f),
                           w = valuesOf<T>(C, off, 73 + C, 0.5f, 1.5f),
                           bias = valuesOf<T>(C, off, 74 + C, -0.5f, 0.5f);
      std::vector<T> refSum(off + NC, garbage), refOut = refSum;
      ASSERT_EQ(
          Api::add(a.data() + off, b.data() + off, refSum.data() + off, NC),
          ZRT_OK);
      for (int mask = 0; mask < 16; ++mask) {
        const bool hasW = mask & 1, hasB = mask & 2, hasMean = mask & 4,
                   hasRstd = mask & 8;
        SCOPED_TRACE(std::string(Api::suffix[0] ? "bf16" : "f32") +
                     " N=" + std::to_string(N) + " C=" + std::to_string(C) +
                     " offset=" + std::to_string(off) +
                     " mask=" + std::to_string(mask));
        const T *pw = hasW ? w.data() + off : nullptr;
        const T *pb = hasB ? bias.data() + off : nullptr;
        FloatVec refMean(N, -7.0f), refRstd(N, -7.0f);
        ASSERT_EQ(Api::layerNorm(refSum.data() + off, pw, pb,
                                 refOut.data() + off,
                                 hasMean ? refMean.data() : nullptr,
                                 hasRstd ? refRstd.data() : nullptr, N, C, eps),
                  ZRT_OK);
        std::vector<T> sum(off + NC, garbage), out = sum;
        FloatVec mean(N, -7.0f), rstd(N, -7.0f);
        expectNoAllocation(
            [&] {
              ASSERT_EQ(
                  Api::addLayerNorm(a.data() + off, b.data() + off, pw, pb,
                                    sum.data() + off, out.data() + off,
                                    hasMean ? mean.data() : nullptr,
                                    hasRstd ? rstd.data() : nullptr, N, C, eps),
                  ZRT_OK)
                  << zrt_last_error();
            },
            "add_layer_norm");
        EXPECT_TRUE(bitsEqual(sum, refSum));
        EXPECT_TRUE(bitsEqual(out, refOut));
        EXPECT_TRUE(bitsEqual(mean, refMean));
        EXPECT_TRUE(bitsEqual(rstd, refRstd));
      }
    }
}

TEST(LayerNormFusedTest, AddLayerNormMatchesAddThenLayerNorm) {
  checkAddLayerNormMatchesUnfused<float>();
  checkAddLayerNormMatchesUnfused<zrt_bf16>();
}

/// zrt_layer_norm_backward_add(_bf16) == zrt_layer_norm_backward(_bf16) into
/// a temporary + zrt_add(_bf16)(addend, temporary), bit for bit, with and
/// without weight, dweight, dbias.
template <typename T> void checkLayerNormBackwardAddMatchesUnfused() {
  using Api = LayerNormApi<T>;
  const T garbage = ofFloat<T>(-7.0f);
  for (const auto &shape : fusedRowShapes())
    for (size_t off : {size_t(0), size_t(1)}) {
      const int64_t N = shape.first, C = shape.second, NC = N * C;
      const std::vector<T> x = rowsOf<T>(N, C, off, 81 + NC, -2.0f, 3.0f),
                           dout = valuesOf<T>(NC, off, 82 + NC, -1.0f, 1.0f),
                           addend = valuesOf<T>(NC, off, 83 + NC, -1.0f, 1.0f),
                           w = valuesOf<T>(C, off, 84 + C, 0.5f, 1.5f);
      FloatVec mean(N), rstd(N);
      ASSERT_EQ(
          Api::stats(x.data() + off, mean.data(), rstd.data(), N, C, 1e-5f),
          ZRT_OK);
      for (int mask = 0; mask < 8; ++mask) {
        const bool hasW = mask & 1, hasDw = mask & 2, hasDb = mask & 4;
        SCOPED_TRACE(std::string(Api::suffix[0] ? "bf16" : "f32") +
                     " N=" + std::to_string(N) + " C=" + std::to_string(C) +
                     " offset=" + std::to_string(off) +
                     " mask=" + std::to_string(mask));
        const T *pw = hasW ? w.data() + off : nullptr;
        std::vector<T> tmp(off + NC, garbage),
            refDx = tmp, refDw(off + C, garbage), refDb = refDw;
        ASSERT_EQ(Api::backward(dout.data() + off, x.data() + off, pw,
                                mean.data(), rstd.data(), tmp.data() + off,
                                hasDw ? refDw.data() + off : nullptr,
                                hasDb ? refDb.data() + off : nullptr, N, C),
                  ZRT_OK);
        ASSERT_EQ(Api::add(addend.data() + off, tmp.data() + off,
                           refDx.data() + off, NC),
                  ZRT_OK);
        std::vector<T> dx(off + NC, garbage), dw(off + C, garbage), db = dw;
        expectNoAllocation(
            [&] {
              ASSERT_EQ(Api::backwardAdd(
                            dout.data() + off, x.data() + off, pw, mean.data(),
                            rstd.data(), addend.data() + off, dx.data() + off,
                            hasDw ? dw.data() + off : nullptr,
                            hasDb ? db.data() + off : nullptr, N, C),
                        ZRT_OK)
                  << zrt_last_error();
            },
            "layer_norm_backward_add");
        EXPECT_TRUE(bitsEqual(dx, refDx));
        EXPECT_TRUE(bitsEqual(dw, refDw));
        EXPECT_TRUE(bitsEqual(db, refDb));
      }
    }
}

TEST(LayerNormFusedTest, BackwardAddMatchesBackwardThenAdd) {
  checkLayerNormBackwardAddMatchesUnfused<float>();
  checkLayerNormBackwardAddMatchesUnfused<zrt_bf16>();
}

/// The argument rules of the fused forms (f32 and bf16 alike, messages
/// naming the function): the unfused function's shape rules and messages,
/// the new buffers, and the overlaps; nothing is written on an error.
template <typename T> void checkFusedLayerNormBadArguments() {
  using Api = LayerNormApi<T>;
  const std::string sfx = Api::suffix;
  const std::string lnName = "zrt_layer_norm" + sfx,
                    fusedName = "zrt_add_layer_norm" + sfx,
                    bwName = "zrt_layer_norm_backward" + sfx,
                    bwAddName = "zrt_layer_norm_backward_add" + sfx;
  std::vector<T> buf(64, ofFloat<T>(1.0f));
  T *t = buf.data(); // four disjoint [2, 2] tensors at t, t + 8, t + 16, ...
  T *a = t, *b = t + 8, *sum = t + 16, *out = t + 24, *x = t + 32, *g = t + 40;
  float f[8] = {};
  for (const BadLayerNormShape &s : kBadLayerNormShapes) {
    const std::string what = s.name();
    expectSameStatus(
        ZRT_ERR_INVALID_ARGUMENT, lnName.c_str(),
        [&] { return Api::layerNorm(a, t, t, out, f, f, s.N, s.C, s.eps); },
        fusedName.c_str(),
        [&] {
          return Api::addLayerNorm(a, b, t, t, sum, out, f, f, s.N, s.C, s.eps);
        },
        what);
    if (s.eps >= 0.0f)
      expectSameStatus(
          ZRT_ERR_INVALID_ARGUMENT, bwName.c_str(),
          [&] { return Api::backward(g, x, t, f, f, out, t, t, s.N, s.C); },
          bwAddName.c_str(),
          [&] {
            return Api::backwardAdd(g, x, t, f, f, a, out, t, t, s.N, s.C);
          },
          what);
  }
  // Buffers and overlaps of the forward: the first rule broken names it.
  const std::vector<T> before = buf;
  const struct {
    const T *a, *b;
    T *sum, *out;
    const char *message;
  } forward[] = {
      {nullptr, b, sum, out, "a is NULL"},
      {a, nullptr, sum, out, "b is NULL"},
      {a, b, nullptr, out, "sum is NULL"},
      {a, b, sum, nullptr, "out is NULL"},
      {a, b, out, out, "sum overlaps out"},
      {a, b, out + 3, out, "sum overlaps out"},
      {a, b, a, out, "sum overlaps a"},
      {a, b, b + 1, out, "sum overlaps b"},
      {a, b, sum, a, "out overlaps a"},
      {a, b, sum, b - 3, "out overlaps b"},
  };
  for (const auto &c : forward) {
    zrt_clear_error();
    EXPECT_EQ(Api::addLayerNorm(c.a, c.b, t, t, c.sum, c.out, f, f, 2, 2, 0.0f),
              ZRT_ERR_INVALID_ARGUMENT)
        << c.message;
    EXPECT_EQ(zrt_last_error(), fusedName + ": " + c.message);
  }
  // Buffers and overlaps of the backward: its dout, x, mean, rstd rules
  // with the unfused function's messages, then addend, dx, overlaps.
  for (int which = 0; which < 4; ++which) {
    float *fp[4] = {f, f, f, f};
    fp[which] = nullptr;
    const T *dout = which == 0 ? nullptr : g, *xx = which == 1 ? nullptr : x;
    expectSameStatus(
        ZRT_ERR_INVALID_ARGUMENT, bwName.c_str(),
        [&] {
          return Api::backward(dout, xx, t, fp[2], fp[3], out, t, t, 2, 2);
        },
        bwAddName.c_str(),
        [&] {
          return Api::backwardAdd(dout, xx, t, fp[2], fp[3], a, out, t, t, 2,
                                  2);
        },
        "backward NULL #" + std::to_string(which));
  }
  const struct {
    const T *addend;
    T *dx;
    const char *message;
  } backward[] = {
      {nullptr, out, "addend is NULL"}, {a, nullptr, "dx is NULL"},
      {a, a, "dx overlaps addend"},     {a, a + 2, "dx overlaps addend"},
      {a, g, "dx overlaps dout"},       {a, x - 1, "dx overlaps x"},
  };
  for (const auto &c : backward) {
    zrt_clear_error();
    EXPECT_EQ(
        Api::backwardAdd(g, x, t, f, f, c.addend, c.dx, t + 48, t + 56, 2, 2),
        ZRT_ERR_INVALID_ARGUMENT)
        << c.message;
    EXPECT_EQ(zrt_last_error(), bwAddName + ": " + c.message);
  }
  EXPECT_TRUE(bitsEqual(buf, before)); // no call wrote anything
  // N == 0: nothing to do, any pointer may be NULL.
  EXPECT_EQ(Api::addLayerNorm(nullptr, nullptr, nullptr, nullptr, nullptr,
                              nullptr, nullptr, nullptr, 0, 3, 1e-5f),
            ZRT_OK);
  EXPECT_EQ(Api::backwardAdd(nullptr, nullptr, nullptr, nullptr, nullptr,
                             nullptr, nullptr, nullptr, nullptr, 0, 3),
            ZRT_OK);
}

TEST(LayerNormFusedTest, BadArguments) {
  checkFusedLayerNormBadArguments<float>();
  checkFusedLayerNormBadArguments<zrt_bf16>();
}

//===----------------------------------------------------------------------===//
// Padded cross-entropy: zrt_cross_entropy_padded(_backward)_bf16
//===----------------------------------------------------------------------===//

// The bf16 embedding: the gather copies rows; the backward is the f32
// backward on the widened dout, rounded once, bit for bit (repeated and
// absent ids, a C that is not a multiple of the 64-column blocks, enough
// work for the OpenMP path).
TEST(Bf16KernelsTest, EmbeddingMatchesF32) {
  for (auto [N, V, C] : {std::tuple<int64_t, int64_t, int64_t>{7, 5, 3},
                         {600, 97, 130},
                         {1, 1, 1}}) {
    SCOPED_TRACE("N=" + std::to_string(N) + " V=" + std::to_string(V) +
                 " C=" + std::to_string(C));
    std::vector<int32_t> ids(N);
    for (int64_t i = 0; i < N; ++i) // id 0 repeated, the last id absent
      ids[i] = static_cast<int32_t>(i % 3 == 0 ? 0 : (i * 7) % std::max<int64_t>(V - 1, 1));
    const Bf16Vec table = randomBf16(V * C, 31), dout = randomBf16(N * C, 32);
    Bf16Vec out(N * C, 0xffff);
    ASSERT_EQ(zrt_embedding_bf16(table.data(), ids.data(), out.data(), N, V, C),
              ZRT_OK);
    FloatVec fout(N * C);
    ASSERT_EQ(zrt_embedding(widen(table).data(), ids.data(), fout.data(), N, V,
                            C),
              ZRT_OK);
    EXPECT_TRUE(bitsEqual(out.data(), narrow(fout).data(), out.size()));

    const int64_t words = zrt_embedding_backward_bf16_workspace(N, V);
    ASSERT_EQ(words, N + V + 1);
    std::vector<int32_t> work(static_cast<size_t>(words));
    Bf16Vec dtable(V * C, 0xffff);
    const int64_t allocs = zrt_heap_allocations();
    ASSERT_EQ(zrt_embedding_backward_bf16(dout.data(), ids.data(),
                                          dtable.data(), N, V, C, work.data()),
              ZRT_OK);
    EXPECT_EQ(zrt_heap_allocations(), allocs);
    FloatVec fdtable(V * C);
    ASSERT_EQ(zrt_embedding_backward(widen(dout).data(), ids.data(),
                                     fdtable.data(), N, V, C),
              ZRT_OK);
    EXPECT_TRUE(bitsEqual(dtable.data(), narrow(fdtable).data(),
                          dtable.size()));
    // Without a workspace: one counted allocation, the same bits.
    Bf16Vec again(V * C, 0xffff);
    ASSERT_EQ(zrt_embedding_backward_bf16(dout.data(), ids.data(), again.data(),
                                          N, V, C, nullptr),
              ZRT_OK);
    EXPECT_EQ(zrt_heap_allocations(), allocs + 1);
    EXPECT_EQ(again, dtable);
  }
  // Ids out of range: nothing written; bad sizes; the workspace formula.
  const std::vector<int32_t> bad = {0, 3};
  Bf16Vec t(6, 0x3f80), o(6, 0x1234);
  EXPECT_EQ(zrt_embedding_bf16(t.data(), bad.data(), o.data(), 2, 3, 2),
            ZRT_ERR_OUT_OF_RANGE);
  EXPECT_EQ(o, Bf16Vec(6, 0x1234));
  EXPECT_EQ(zrt_embedding_backward_bf16(t.data(), bad.data(), o.data(), 2, 3, 2,
                                        nullptr),
            ZRT_ERR_OUT_OF_RANGE);
  EXPECT_EQ(o, Bf16Vec(6, 0x1234));
  EXPECT_EQ(zrt_embedding_backward_bf16(t.data(), bad.data(), o.data(), -1, 3,
                                        2, nullptr),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zrt_embedding_backward_bf16_workspace(-1, 3), -1);
  EXPECT_EQ(zrt_embedding_backward_bf16_workspace(INT64_MAX, 1), -1);
}

TEST(Bf16KernelsTest, CrossEntropyPaddedMatchesF32) {
  struct Shape {
    int64_t N, V, classes;
  };
  for (Shape s : {Shape{0, 5, 3}, Shape{1, 1, 1}, Shape{1, 8, 5},
                  Shape{5, 7, 7}, Shape{4, 9, 1}, Shape{33, 100, 61},
                  Shape{64, 600, 513}, Shape{3, 40000, 39999}}) {
    const int64_t N = s.N, V = s.V, classes = s.classes;
    Bf16Vec logits = randomBf16(N * V, 71 + N * V, -4.0f, 4.0f);
    // The padding columns hold garbage (NaN, Inf) that must not matter.
    for (int64_t i = 0; i < N; ++i)
      for (int64_t j = classes; j < V; ++j)
        logits[i * V + j] = (j % 2) ? 0x7fc0 : 0xff80;
    std::vector<int32_t> targets(N);
    for (int64_t i = 0; i < N; ++i)
      targets[i] = static_cast<int32_t>((i * 7919 + 3) % classes);
    if (N > 2)
      logits[2 * V + targets[2]] = 0x42f0; // a confident row (logit 120)
    const FloatVec lf = widen(logits);
    for (float dloss : {1.0f, 0.37f, -2.5f}) {
      SCOPED_TRACE("N=" + std::to_string(N) + " V=" + std::to_string(V) +
                   " classes=" + std::to_string(classes) +
                   " dloss=" + std::to_string(dloss));
      float refLoss = 0.0f, loss = 1.0f;
      FloatVec refGrad(N * V);
      ASSERT_EQ(zrt_cross_entropy_padded(lf.data(), targets.data(), &refLoss, N,
                                         V, classes),
                ZRT_OK);
      ASSERT_EQ(zrt_cross_entropy_padded_backward(lf.data(), targets.data(),
                                                  &dloss, refGrad.data(), N, V,
                                                  classes),
                ZRT_OK);
      Bf16Vec grad(N * V, 0xdead);
      expectNoAllocation(
          [&] {
            ASSERT_EQ(zrt_cross_entropy_padded_bf16(
                          logits.data(), targets.data(), &loss, N, V, classes),
                      ZRT_OK)
                << zrt_last_error();
            ASSERT_EQ(zrt_cross_entropy_padded_backward_bf16(
                          logits.data(), targets.data(), &dloss, grad.data(), N,
                          V, classes),
                      ZRT_OK)
                << zrt_last_error();
          },
          "cross_entropy");
      EXPECT_TRUE(bitsEqual(&loss, &refLoss, 1)); // NaN for N = 0
      if (N == 0)
        EXPECT_TRUE(std::isnan(loss));
      EXPECT_TRUE(bitsEqual(grad, narrow(refGrad)));
    }
  }
}

TEST(Bf16KernelsTest, CrossEntropyPaddedBadArguments) {
  float f[16] = {}, loss = 0.0f, dloss = 1.0f;
  zrt_bf16 h[16] = {};
  int32_t t[4] = {0, 1, 2, 1};
  struct Shape {
    int64_t N, V, classes;
  };
  for (Shape s : {Shape{-1, 4, 4}, Shape{2, 4, 0}, Shape{2, 4, 5},
                  Shape{2, 0, 0}, Shape{2, 4, -1}}) {
    const std::string what = "N=" + std::to_string(s.N) +
                             " V=" + std::to_string(s.V) +
                             " classes=" + std::to_string(s.classes);
    expectSameStatus(
        ZRT_ERR_INVALID_ARGUMENT, "zrt_cross_entropy_padded",
        [&] {
          return zrt_cross_entropy_padded(f, t, &loss, s.N, s.V, s.classes);
        },
        "zrt_cross_entropy_padded_bf16",
        [&] {
          return zrt_cross_entropy_padded_bf16(h, t, &loss, s.N, s.V,
                                               s.classes);
        },
        what);
    expectSameStatus(
        ZRT_ERR_INVALID_ARGUMENT, "zrt_cross_entropy_padded_backward",
        [&] {
          return zrt_cross_entropy_padded_backward(f, t, &dloss, f, s.N, s.V,
                                                   s.classes);
        },
        "zrt_cross_entropy_padded_backward_bf16",
        [&] {
          return zrt_cross_entropy_padded_backward_bf16(h, t, &dloss, h, s.N,
                                                        s.V, s.classes);
        },
        what);
  }
  // Targets outside [0, num_classes): out of range, and nothing written.
  for (int32_t bad : {-1, 3, 4, 1000}) {
    int32_t tb[4] = {0, 1, bad, 1};
    zrt_bf16 grad[16];
    for (zrt_bf16 &g : grad)
      g = 0xdead;
    float lossBefore = 42.0f;
    expectSameStatus(
        ZRT_ERR_OUT_OF_RANGE, "zrt_cross_entropy_padded",
        [&] { return zrt_cross_entropy_padded(f, tb, &loss, 4, 4, 3); },
        "zrt_cross_entropy_padded_bf16",
        [&] {
          return zrt_cross_entropy_padded_bf16(h, tb, &lossBefore, 4, 4, 3);
        },
        "target " + std::to_string(bad));
    EXPECT_EQ(lossBefore, 42.0f);
    expectSameStatus(
        ZRT_ERR_OUT_OF_RANGE, "zrt_cross_entropy_padded_backward",
        [&] {
          return zrt_cross_entropy_padded_backward(f, tb, &dloss, f, 4, 4, 3);
        },
        "zrt_cross_entropy_padded_backward_bf16",
        [&] {
          return zrt_cross_entropy_padded_backward_bf16(h, tb, &dloss, grad, 4,
                                                        4, 3);
        },
        "backward target " + std::to_string(bad));
    for (zrt_bf16 g : grad)
      EXPECT_EQ(g, 0xdead);
  }
  // NULL pointers.
  expectSameStatus(
      ZRT_ERR_INVALID_ARGUMENT, "zrt_cross_entropy_padded",
      [&] { return zrt_cross_entropy_padded(f, t, nullptr, 2, 4, 4); },
      "zrt_cross_entropy_padded_bf16",
      [&] { return zrt_cross_entropy_padded_bf16(h, t, nullptr, 2, 4, 4); },
      "NULL loss");
  expectSameStatus(
      ZRT_ERR_INVALID_ARGUMENT, "zrt_cross_entropy_padded",
      [&] { return zrt_cross_entropy_padded(nullptr, t, &loss, 2, 4, 4); },
      "zrt_cross_entropy_padded_bf16",
      [&] { return zrt_cross_entropy_padded_bf16(nullptr, t, &loss, 2, 4, 4); },
      "NULL logits");
  expectSameStatus(
      ZRT_ERR_INVALID_ARGUMENT, "zrt_cross_entropy_padded",
      [&] { return zrt_cross_entropy_padded(f, nullptr, &loss, 2, 4, 4); },
      "zrt_cross_entropy_padded_bf16",
      [&] { return zrt_cross_entropy_padded_bf16(h, nullptr, &loss, 2, 4, 4); },
      "NULL targets");
  expectSameStatus(
      ZRT_ERR_INVALID_ARGUMENT, "zrt_cross_entropy_padded_backward",
      [&] {
        return zrt_cross_entropy_padded_backward(f, t, nullptr, f, 2, 4, 4);
      },
      "zrt_cross_entropy_padded_backward_bf16",
      [&] {
        return zrt_cross_entropy_padded_backward_bf16(h, t, nullptr, h, 2, 4,
                                                      4);
      },
      "NULL dloss");
  expectSameStatus(
      ZRT_ERR_INVALID_ARGUMENT, "zrt_cross_entropy_padded_backward",
      [&] {
        return zrt_cross_entropy_padded_backward(f, t, &dloss, nullptr, 2, 4,
                                                 4);
      },
      "zrt_cross_entropy_padded_backward_bf16",
      [&] {
        return zrt_cross_entropy_padded_backward_bf16(h, t, &dloss, nullptr, 2,
                                                      4, 4);
      },
      "NULL dlogits");
  // N == 0: no rows, NULL tensors are fine (the loss is NaN).
  expectSameStatus(
      ZRT_OK, "zrt_cross_entropy_padded",
      [&] {
        return zrt_cross_entropy_padded(nullptr, nullptr, &loss, 0, 4, 4);
      },
      "zrt_cross_entropy_padded_bf16",
      [&] {
        return zrt_cross_entropy_padded_bf16(nullptr, nullptr, &loss, 0, 4, 4);
      },
      "N=0");
}

//===----------------------------------------------------------------------===//
// Attention: zrt_attention_workspace_bf16, zrt_attention_forward_bf16,
// zrt_attention_backward_bf16
//===----------------------------------------------------------------------===//

TEST(Bf16KernelsTest, AttentionWorkspaceFormula) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  for (int64_t T : {0, 1, 3, 17, 64, 1024})
    for (int64_t D : {0, 1, 16, 64, 128})
      EXPECT_EQ(zrt_attention_workspace_bf16(T, D),
                zrt_attention_workspace(T) + 8 * T * D)
          << "T=" << T << " D=" << D;
  EXPECT_EQ(zrt_attention_workspace_bf16(3, 2), 2 * 9 + 3 + 8 * 6);
  EXPECT_EQ(zrt_attention_workspace_bf16(-1, 4), -1);
  EXPECT_EQ(zrt_attention_workspace_bf16(4, -1), -1);
  EXPECT_EQ(zrt_attention_workspace_bf16(-1, -1), -1);
  EXPECT_EQ(zrt_attention_workspace_bf16(kMax, 1), -1);
  // 2 T^2 overflows although T^2 does not.
  EXPECT_EQ(zrt_attention_workspace_bf16(3037000499, 0), -1);
  // 8 T D overflows; then the sum with 2 T^2 + T = 3 at the very edge.
  EXPECT_EQ(zrt_attention_workspace_bf16(1, kMax / 8 + 1), -1);
  const int64_t dMax = (kMax - 3) / 8;
  EXPECT_EQ(zrt_attention_workspace_bf16(1, dMax), 3 + 8 * dMax);
  EXPECT_EQ(zrt_attention_workspace_bf16(1, dMax + 1), -1);
  // 8 T D = 2^63 exactly.
  EXPECT_EQ(zrt_attention_workspace_bf16(2, kMax / 16 + 1), -1);
}

/// One attention case: forward and backward bf16 against widen + f32 +
/// round, with a workspace (no allocation) and without (one allocation per
/// call, same bits).
void checkAttention(int64_t B, int64_t H, int64_t T, int64_t D, uint32_t seed) {
  SCOPED_TRACE("B=" + std::to_string(B) + " H=" + std::to_string(H) +
               " T=" + std::to_string(T) + " D=" + std::to_string(D));
  const int64_t n = B * H * T * D, nl = B * H * T;
  const Bf16Vec q = randomBf16(n, seed, -2.0f, 2.0f),
                k = randomBf16(n, seed + 1, -2.0f, 2.0f),
                v = randomBf16(n, seed + 2), dout = randomBf16(n, seed + 3);
  const FloatVec qf = widen(q), kf = widen(k), vf = widen(v);

  // Forward.
  FloatVec work32(zrt_attention_workspace(T)), refOut(n), refLse(nl);
  ASSERT_EQ(zrt_attention_forward(qf.data(), kf.data(), vf.data(),
                                  refOut.data(), refLse.data(), work32.data(),
                                  B, H, T, D),
            ZRT_OK);
  const int64_t wsSize = zrt_attention_workspace_bf16(T, D);
  ASSERT_EQ(wsSize, zrt_attention_workspace(T) + 8 * T * D);
  FloatVec ws(wsSize, std::numeric_limits<float>::quiet_NaN());
  Bf16Vec out(n, 0xdead);
  FloatVec lse(nl, -7.0f);
  expectNoAllocation(
      [&] {
        ASSERT_EQ(zrt_attention_forward_bf16(q.data(), k.data(), v.data(),
                                             out.data(), lse.data(), ws.data(),
                                             B, H, T, D),
                  ZRT_OK)
            << zrt_last_error();
      },
      "attention_forward_bf16 with a workspace");
  const Bf16Vec wantOut = narrow(refOut);
  EXPECT_TRUE(bitsEqual(out, wantOut));
  EXPECT_TRUE(bitsEqual(lse, refLse));

  // Backward, from the bf16 forward's out and lse.
  const FloatVec of = widen(out), df = widen(dout);
  FloatVec rdq(n), rdk(n), rdv(n);
  ASSERT_EQ(zrt_attention_backward(df.data(), qf.data(), kf.data(), vf.data(),
                                   of.data(), lse.data(), rdq.data(),
                                   rdk.data(), rdv.data(), work32.data(), B, H,
                                   T, D),
            ZRT_OK);
  Bf16Vec dq(n, 0xdead), dk(n, 0xdead), dv(n, 0xdead);
  expectNoAllocation(
      [&] {
        ASSERT_EQ(zrt_attention_backward_bf16(dout.data(), q.data(), k.data(),
                                              v.data(), out.data(), lse.data(),
                                              dq.data(), dk.data(), dv.data(),
                                              ws.data(), B, H, T, D),
                  ZRT_OK)
            << zrt_last_error();
      },
      "attention_backward_bf16 with a workspace");
  const Bf16Vec wantDq = narrow(rdq), wantDk = narrow(rdk),
                wantDv = narrow(rdv);
  EXPECT_TRUE(bitsEqual(dq, wantDq));
  EXPECT_TRUE(bitsEqual(dk, wantDk));
  EXPECT_TRUE(bitsEqual(dv, wantDv));

  // Without a workspace: one counted allocation per call, the same bits.
  Bf16Vec out2(n), dq2(n), dk2(n), dv2(n);
  FloatVec lse2(nl);
  int64_t before = zrt_heap_allocations();
  ASSERT_EQ(zrt_attention_forward_bf16(q.data(), k.data(), v.data(),
                                       out2.data(), lse2.data(), nullptr, B, H,
                                       T, D),
            ZRT_OK);
  EXPECT_EQ(zrt_heap_allocations(), before + 1);
  before = zrt_heap_allocations();
  ASSERT_EQ(zrt_attention_backward_bf16(dout.data(), q.data(), k.data(),
                                        v.data(), out.data(), lse.data(),
                                        dq2.data(), dk2.data(), dv2.data(),
                                        nullptr, B, H, T, D),
            ZRT_OK);
  EXPECT_EQ(zrt_heap_allocations(), before + 1);
  EXPECT_TRUE(bitsEqual(out2, wantOut));
  EXPECT_TRUE(bitsEqual(lse2, refLse));
  EXPECT_TRUE(bitsEqual(dq2, wantDq));
  EXPECT_TRUE(bitsEqual(dk2, wantDk));
  EXPECT_TRUE(bitsEqual(dv2, wantDv));
}

TEST(Bf16KernelsTest, AttentionMatchesF32) {
  uint32_t seed = 81;
  for (int64_t T : {1, 5, 17, 33, 70})
    for (int64_t D : {1, 16, 64})
      checkAttention(2, 1, T, D, seed += 4);
  checkAttention(1, 3, 67, 16, seed += 4);
  checkAttention(2, 2, 129, 64, seed += 4);
}

TEST(Bf16KernelsTest, AttentionBadArguments) {
  float f[64] = {};
  zrt_bf16 h[64] = {};
  struct Shape {
    int64_t B, H, T, D;
  };
  for (Shape s : {Shape{-1, 1, 2, 2}, Shape{1, -1, 2, 2}, Shape{1, 1, 0, 2},
                  Shape{1, 1, 2, 0}, Shape{1, 1, -2, 2},
                  Shape{1, 1, int64_t(INT32_MAX) + 1, 2},
                  Shape{1, 1, 2, int64_t(INT32_MAX) + 1},
                  Shape{int64_t(1) << 20, int64_t(1) << 20, 2, 2}}) {
    const std::string what =
        "B=" + std::to_string(s.B) + " H=" + std::to_string(s.H) +
        " T=" + std::to_string(s.T) + " D=" + std::to_string(s.D);
    expectSameStatus(
        ZRT_ERR_INVALID_ARGUMENT, "zrt_attention_forward",
        [&] {
          return zrt_attention_forward(f, f, f, f, f, f, s.B, s.H, s.T, s.D);
        },
        "zrt_attention_forward_bf16",
        [&] {
          return zrt_attention_forward_bf16(h, h, h, h, f, f, s.B, s.H, s.T,
                                            s.D);
        },
        what);
    expectSameStatus(
        ZRT_ERR_INVALID_ARGUMENT, "zrt_attention_backward",
        [&] {
          return zrt_attention_backward(f, f, f, f, f, f, f, f, f, f, s.B, s.H,
                                        s.T, s.D);
        },
        "zrt_attention_backward_bf16",
        [&] {
          return zrt_attention_backward_bf16(h, h, h, h, h, f, h, h, h, f, s.B,
                                             s.H, s.T, s.D);
        },
        what);
  }
  // Each required pointer NULL in turn (the f32 names and order).
  for (int which = 0; which < 5; ++which) {
    const float *fp[5] = {f, f, f, f, f};
    const zrt_bf16 *hp[4] = {h, h, h, h};
    fp[which] = nullptr;
    if (which < 4)
      hp[which] = nullptr;
    expectSameStatus(
        ZRT_ERR_INVALID_ARGUMENT, "zrt_attention_forward",
        [&] {
          return zrt_attention_forward(
              fp[0], fp[1], fp[2], const_cast<float *>(fp[3]),
              const_cast<float *>(fp[4]), f, 1, 1, 2, 2);
        },
        "zrt_attention_forward_bf16",
        [&] {
          return zrt_attention_forward_bf16(
              hp[0], hp[1], hp[2], const_cast<zrt_bf16 *>(hp[3]),
              const_cast<float *>(fp[4]), f, 1, 1, 2, 2);
        },
        "forward NULL #" + std::to_string(which));
  }
  for (int which = 0; which < 9; ++which) {
    // dout, q, k, v, out, lse, dq, dk, dv; lse is the only f32 one.
    float *fp[9];
    zrt_bf16 *hp[9];
    for (int i = 0; i < 9; ++i) {
      fp[i] = f;
      hp[i] = h;
    }
    fp[which] = nullptr;
    hp[which] = nullptr;
    expectSameStatus(
        ZRT_ERR_INVALID_ARGUMENT, "zrt_attention_backward",
        [&] {
          return zrt_attention_backward(fp[0], fp[1], fp[2], fp[3], fp[4],
                                        fp[5], fp[6], fp[7], fp[8], f, 1, 1, 2,
                                        2);
        },
        "zrt_attention_backward_bf16",
        [&] {
          return zrt_attention_backward_bf16(hp[0], hp[1], hp[2], hp[3], hp[4],
                                             fp[5], hp[6], hp[7], hp[8], f, 1,
                                             1, 2, 2);
        },
        "backward NULL #" + std::to_string(which));
  }
  // B * H == 0: nothing to compute, no pointers needed, nothing allocated.
  expectNoAllocation(
      [&] {
        expectSameStatus(
            ZRT_OK, "zrt_attention_forward",
            [&] {
              return zrt_attention_forward(nullptr, nullptr, nullptr, nullptr,
                                           nullptr, nullptr, 0, 4, 2, 2);
            },
            "zrt_attention_forward_bf16",
            [&] {
              return zrt_attention_forward_bf16(nullptr, nullptr, nullptr,
                                                nullptr, nullptr, nullptr, 0, 4,
                                                2, 2);
            },
            "B=0");
        expectSameStatus(
            ZRT_OK, "zrt_attention_backward",
            [&] {
              return zrt_attention_backward(nullptr, nullptr, nullptr, nullptr,
                                            nullptr, nullptr, nullptr, nullptr,
                                            nullptr, nullptr, 3, 0, 2, 2);
            },
            "zrt_attention_backward_bf16",
            [&] {
              return zrt_attention_backward_bf16(
                  nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                  nullptr, nullptr, nullptr, 3, 0, 2, 2);
            },
            "H=0");
      },
      "empty attention");
}

} // namespace
