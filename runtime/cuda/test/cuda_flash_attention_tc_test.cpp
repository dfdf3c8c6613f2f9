//===- cuda_flash_attention_tc_test.cpp - tensor-core causal attention ----===//
//
// zrt_cuda::attention_forward_bf16_tc / attention_backward_bf16_tc
// (flash_attention_tc.cu) against the CPU runtime's f32
// zrt_attention_forward / zrt_attention_backward on the widened (exact)
// bf16 inputs: out and lse, then dq, dk, dv from the device's own out and
// lse (as a training step does). Shapes: a single row, T = 17 (a tile
// larger than T), 64 (one full key tile), 100 and 130 (a partial last
// tile), 128 and 192 (one and 1.5 of the 128-row query tiles of D <= 64),
// 256, 1024 (16 key tiles), for every supported head size (32, 64, 128),
// and peaked rows (large |q|, |k|: the running maximum of the online
// softmax moves between tiles). Outputs are pre-filled with NaN; repeated runs are
// bit-identical; tensors that are not 16-byte aligned (the plain-load path)
// give the same bits as aligned ones. DISABLED_TimingGpt2 prints TFLOP/s at
// GPT-2 124M's shape.
//
// Tolerances. The kernels round P (and dS) to bf16 before their products,
// as FlashAttention-2 does, and round every output to bf16 once; the
// reference is f32 without those roundings. Errors are measured against
// the scale of the output row (max_d |ref[row][d]|, plus 2% of the
// tensor's largest magnitude, plus 1e-4 for rows that are zero in exact
// arithmetic, such as dq of row 0 or everything at T = 1, where both sides
// hold f32 rounding noise of dP - delta): bf16 rounding of P perturbs each
// term of a row's sum by at most 2^-9 of itself, so the error of a row is
// a small multiple of 2^-9 (0.002) of its scale. Bounds: out 1.5e-2,
// dq / dk / dv 3e-2 (dS carries the cancellation dP - delta), lse 1e-5
// relative to max(1, |lse|) (lse is f32 throughout: only the order of the
// f32 sums and exp2 differ). The CPU emulator of the kernels
// (runtime/cuda/emulator, which also runs this file in CI) measured at most 5.2e-3 (out), 6.4e-3 (dq, dk,
// dv) and 2.4e-7 (lse) on these shapes.
//
//===----------------------------------------------------------------------===//

#include "cuda_test_util.h"

#include "flash_attention_tc.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using namespace zrt_cuda_test;
using Bits = std::vector<uint16_t>;

struct Shape {
  int64_t B, H, T, D;
  /// q and k are uniform in [-amp, amp] (v, dout in [-1, 1]).
  float amp = 1.0f;
};

std::string describe(const Shape &s) {
  return "B=" + std::to_string(s.B) + " H=" + std::to_string(s.H) +
         " T=" + std::to_string(s.T) + " D=" + std::to_string(s.D) +
         " amp=" + std::to_string(s.amp);
}

Bits toBf16(const std::vector<float> &x) {
  Bits r(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    r[i] = zrt_f32_to_bf16(x[i]);
  return r;
}
std::vector<float> widen(const Bits &x) {
  std::vector<float> r(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    r[i] = zrt_bf16_to_f32(x[i]);
  return r;
}

/// Row-scaled error check of a [rows, D] tensor (see the file header):
/// |got - ref| <= bound * (max_d |ref[row][d]| + 0.02 max |ref| + 1e-4)
/// everywhere (NaN fails). Returns the largest ratio error / scale.
double expectRowScaled(const std::vector<float> &ref,
                       const std::vector<float> &got, int64_t D, double bound,
                       const std::string &what) {
  EXPECT_EQ(ref.size(), got.size()) << what;
  if (ref.size() != got.size())
    return INFINITY;
  double globalMax = 0.0;
  for (float x : ref)
    globalMax = std::max(globalMax, static_cast<double>(std::fabs(x)));
  double worst = 0.0;
  const size_t rows = ref.size() / static_cast<size_t>(D);
  for (size_t r = 0; r < rows; ++r) {
    double rowMax = 0.0;
    for (int64_t d = 0; d < D; ++d)
      rowMax = std::max(rowMax, static_cast<double>(std::fabs(ref[r * D + d])));
    const double scale = rowMax + 0.02 * globalMax + 1e-4;
    for (int64_t d = 0; d < D; ++d) {
      const size_t i = r * D + d;
      const double err = std::fabs(static_cast<double>(got[i]) - ref[i]);
      const double ratio = err / scale;
      if (!(ratio <= bound)) {
        ADD_FAILURE() << what << " at row " << r << " col " << d
                      << ": expected " << ref[i] << ", got " << got[i]
                      << " (error " << err << " > " << bound << " x row scale "
                      << scale << ")";
        return INFINITY;
      }
      worst = std::max(worst, ratio);
    }
  }
  return worst;
}

/// |got - ref| <= 1e-5 max(1, |ref|) (lse).
double expectLse(const std::vector<float> &ref, const std::vector<float> &got,
                 const std::string &what) {
  EXPECT_EQ(ref.size(), got.size()) << what;
  double worst = 0.0;
  for (size_t i = 0; i < ref.size() && i < got.size(); ++i) {
    const double scale = std::max(1.0, static_cast<double>(std::fabs(ref[i])));
    const double ratio = std::fabs(static_cast<double>(got[i]) - ref[i]) / scale;
    if (!(ratio <= 1e-5)) {
      ADD_FAILURE() << what << " at " << i << ": expected " << ref[i]
                    << ", got " << got[i];
      return INFINITY;
    }
    worst = std::max(worst, ratio);
  }
  return worst;
}

constexpr double kOutBound = 1.5e-2;
constexpr double kGradBound = 3e-2;

class CudaFlashAttentionTc : public CudaKernels {
protected:
  /// bf16 device copy of `x` at an offset of `shift` elements from a
  /// 64-byte aligned arena block (shift 1: 2-byte aligned only).
  uint16_t *devBf16(const Bits &x, int shift = 0) {
    auto *p = static_cast<uint16_t *>(
        devBytes(static_cast<int64_t>(x.size() + 8) * 2));
    EXPECT_EQ(zrt_cuda::copy_to_device(p + shift, x.data(),
                                       static_cast<int64_t>(x.size()) * 2),
              ZRT_OK)
        << zrt_cuda::last_error();
    return p + shift;
  }
  /// A bf16 device buffer of n NaNs (0xffff), `shift` as devBf16.
  uint16_t *nanBf16(int64_t n, int shift = 0) {
    return devBf16(Bits(static_cast<size_t>(n), 0xffff), shift);
  }
  float *nanF32(int64_t n) {
    float *p = dev(n);
    EXPECT_EQ(zrt_cuda::fill(p, NAN, n), ZRT_OK) << zrt_cuda::last_error();
    return p;
  }

  struct Result {
    Bits out, dq, dk, dv;
    std::vector<float> lse;
  };

  /// Forward, then backward from the forward's out and lse, on device
  /// copies of the inputs at element offset `shift`.
  Result run(const Shape &sh, const Bits &q, const Bits &k, const Bits &v,
             const Bits &dout, int shift) {
    const int64_t n = sh.B * sh.H * sh.T * sh.D, nl = sh.B * sh.H * sh.T;
    uint16_t *gq = devBf16(q, shift), *gk = devBf16(k, shift);
    uint16_t *gv = devBf16(v, shift), *gdo = devBf16(dout, shift);
    uint16_t *gout = nanBf16(n, shift);
    uint16_t *gdq = nanBf16(n, shift), *gdk = nanBf16(n, shift);
    uint16_t *gdv = nanBf16(n, shift);
    float *glse = nanF32(nl);
    Result r;
    EXPECT_EQ(zrt_cuda::attention_forward_bf16_tc(gq, gk, gv, gout, glse, sh.B,
                                                  sh.H, sh.T, sh.D),
              ZRT_OK)
        << zrt_cuda::last_error();
    EXPECT_EQ(zrt_cuda::attention_backward_bf16_tc(gdo, gq, gk, gv, gout, glse,
                                                   gdq, gdk, gdv, sh.B, sh.H,
                                                   sh.T, sh.D),
              ZRT_OK)
        << zrt_cuda::last_error();
    r.out = hostOf(gout, n);
    r.lse = host(glse, nl);
    r.dq = hostOf(gdq, n);
    r.dk = hostOf(gdk, n);
    r.dv = hostOf(gdv, n);
    return r;
  }

  /// Forward and backward of one shape against the CPU runtime.
  void checkShape(const Shape &sh, uint32_t seed) {
    const std::string what = describe(sh);
    SCOPED_TRACE(what);
    ASSERT_TRUE(zrt_cuda::attention_tc_forward_supported(sh.D));
    ASSERT_TRUE(zrt_cuda::attention_tc_backward_supported(sh.D));
    const int64_t n = sh.B * sh.H * sh.T * sh.D, nl = sh.B * sh.H * sh.T;
    const Bits q = toBf16(randomVec(n, seed, -sh.amp, sh.amp));
    const Bits k = toBf16(randomVec(n, seed + 1, -sh.amp, sh.amp));
    const Bits v = toBf16(randomVec(n, seed + 2));
    const Bits dout = toBf16(randomVec(n, seed + 3));
    const Result r = run(sh, q, k, v, dout, 0);
    if (HasFailure())
      return;

    const auto q32 = widen(q), k32 = widen(k), v32 = widen(v);
    const auto do32 = widen(dout);
    std::vector<float> out(n), lse(nl);
    ASSERT_EQ(zrt_attention_forward(q32.data(), k32.data(), v32.data(),
                                    out.data(), lse.data(), nullptr, sh.B,
                                    sh.H, sh.T, sh.D),
              ZRT_OK)
        << zrt_last_error();
    const double eOut =
        expectRowScaled(out, widen(r.out), sh.D, kOutBound, "out " + what);
    const double eLse = expectLse(lse, r.lse, "lse " + what);

    // The CPU backward from the device's out (widened) and lse.
    const auto out32 = widen(r.out);
    std::vector<float> dq(n), dk(n), dv(n);
    ASSERT_EQ(zrt_attention_backward(do32.data(), q32.data(), k32.data(),
                                     v32.data(), out32.data(), r.lse.data(),
                                     dq.data(), dk.data(), dv.data(), nullptr,
                                     sh.B, sh.H, sh.T, sh.D),
              ZRT_OK)
        << zrt_last_error();
    const double eDq =
        expectRowScaled(dq, widen(r.dq), sh.D, kGradBound, "dq " + what);
    const double eDk =
        expectRowScaled(dk, widen(r.dk), sh.D, kGradBound, "dk " + what);
    const double eDv =
        expectRowScaled(dv, widen(r.dv), sh.D, kGradBound, "dv " + what);
    printf("  %s: worst error / row scale: out %.2e (bound %.1e), dq %.2e, "
           "dk %.2e, dv %.2e (bound %.1e); lse relative %.2e (bound 1e-5)\n",
           what.c_str(), eOut, kOutBound, eDq, eDk, eDv, kGradBound, eLse);
  }
};

// Without a device: the head sizes, and the calls that return before any
// CUDA call (empty batch, unsupported D).
TEST(CudaFlashAttentionTcArgs, SupportedHeadSizes) {
  for (int64_t D : {32, 64, 128}) {
    EXPECT_TRUE(zrt_cuda::attention_tc_forward_supported(D)) << D;
    EXPECT_TRUE(zrt_cuda::attention_tc_backward_supported(D)) << D;
  }
  for (int64_t D : {1, 16, 48, 80, 96, 160, 256}) {
    EXPECT_FALSE(zrt_cuda::attention_tc_forward_supported(D)) << D;
    EXPECT_FALSE(zrt_cuda::attention_tc_backward_supported(D)) << D;
  }
}

TEST_F(CudaFlashAttentionTc, Gpt2HeadSize) {
  checkShape({2, 3, 1, 64}, 1);    // a single row
  checkShape({2, 3, 17, 64}, 10);  // a tile larger than T
  checkShape({2, 3, 64, 64}, 20);  // exactly one tile
  checkShape({1, 2, 100, 64}, 30); // a partial second tile
  checkShape({3, 1, 130, 64}, 40); // three tiles, the last with 2 rows
  checkShape({1, 2, 128, 64}, 45); // one 128-row query tile
  checkShape({1, 2, 192, 64}, 47); // 1.5 query tiles of 128 rows
  checkShape({1, 2, 256, 64}, 50); // four key tiles
}

TEST_F(CudaFlashAttentionTc, HeadSize32) {
  checkShape({2, 3, 1, 32}, 60);
  checkShape({2, 3, 17, 32}, 70);
  checkShape({2, 3, 64, 32}, 80);
  checkShape({1, 2, 100, 32}, 90);
  checkShape({1, 2, 256, 32}, 100);
}

TEST_F(CudaFlashAttentionTc, HeadSize128) {
  checkShape({2, 3, 1, 128}, 110);
  checkShape({2, 3, 17, 128}, 120);
  checkShape({2, 3, 64, 128}, 130);
  checkShape({1, 2, 100, 128}, 140);
  checkShape({1, 2, 256, 128}, 150);
}

TEST_F(CudaFlashAttentionTc, LongSequence) {
  checkShape({1, 2, 1024, 64}, 160); // 16 tiles, GPT-2's T
}

TEST_F(CudaFlashAttentionTc, PeakedRows) {
  checkShape({2, 1, 130, 64, 4.0f}, 170);
  checkShape({1, 1, 300, 64, 8.0f}, 180);
  checkShape({1, 1, 200, 128, 3.0f}, 190);
}

TEST_F(CudaFlashAttentionTc, RepeatedRunsAreBitIdentical) {
  for (const Shape sh : {Shape{2, 2, 300, 64}, Shape{1, 3, 90, 128}}) {
    SCOPED_TRACE(describe(sh));
    const int64_t n = sh.B * sh.H * sh.T * sh.D;
    const Bits q = toBf16(randomVec(n, 7)), k = toBf16(randomVec(n, 8));
    const Bits v = toBf16(randomVec(n, 9)), dout = toBf16(randomVec(n, 10));
    const Result a = run(sh, q, k, v, dout, 0);
    const Result b = run(sh, q, k, v, dout, 0);
    expectSameBits(a.out, b.out, "out");
    expectSameBits(a.lse, b.lse, "lse");
    expectSameBits(a.dq, b.dq, "dq");
    expectSameBits(a.dk, b.dk, "dk");
    expectSameBits(a.dv, b.dv, "dv");
  }
}

TEST_F(CudaFlashAttentionTc, UnalignedTensorsGiveTheSameBits) {
  // Tensors 2 bytes past a 16-byte boundary take the plain-load path (no
  // cp.async, 2-byte stores): the same arithmetic, so the same bits.
  for (const Shape sh : {Shape{2, 3, 65, 64}, Shape{1, 2, 100, 32},
                         Shape{1, 2, 70, 128}}) {
    SCOPED_TRACE(describe(sh));
    const int64_t n = sh.B * sh.H * sh.T * sh.D;
    const Bits q = toBf16(randomVec(n, 11)), k = toBf16(randomVec(n, 12));
    const Bits v = toBf16(randomVec(n, 13)), dout = toBf16(randomVec(n, 14));
    const Result a = run(sh, q, k, v, dout, 0);
    const Result b = run(sh, q, k, v, dout, 1);
    expectSameBits(a.out, b.out, "out");
    expectSameBits(a.lse, b.lse, "lse");
    expectSameBits(a.dq, b.dq, "dq");
    expectSameBits(a.dk, b.dk, "dk");
    expectSameBits(a.dv, b.dv, "dv");
  }
}

TEST(CudaFlashAttentionTcArgs, EmptyBatchIsANoOp) {
  uint16_t buf[8] = {};
  float lbuf[8] = {};
  uint16_t *p = buf;
  float *l = lbuf;
  EXPECT_EQ(zrt_cuda::attention_forward_bf16_tc(p, p, p, p, l, 0, 4, 8, 64),
            ZRT_OK);
  EXPECT_EQ(zrt_cuda::attention_backward_bf16_tc(p, p, p, p, p, l, p, p, p, 4,
                                                 0, 8, 64),
            ZRT_OK);
}

TEST(CudaFlashAttentionTcArgs, UnsupportedHeadSizeIsAnError) {
  uint16_t buf[8] = {};
  float lbuf[8] = {};
  uint16_t *p = buf;
  float *l = lbuf;
  zrt_cuda::clear_error();
  EXPECT_EQ(zrt_cuda::attention_forward_bf16_tc(p, p, p, p, l, 1, 1, 8, 48),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zrt_cuda::last_error()).find("D = 48"),
            std::string::npos)
      << zrt_cuda::last_error();
  zrt_cuda::clear_error();
  EXPECT_EQ(zrt_cuda::attention_backward_bf16_tc(p, p, p, p, p, l, p, p, p, 1,
                                                 1, 8, 96),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zrt_cuda::last_error()).find("D = 96"),
            std::string::npos)
      << zrt_cuda::last_error();
}

// Timing at GPT-2 124M's shape (B = 16, H = 12, T = 1024, D = 64), next to
// the f32 SIMT kernels of flash_attention.cu. Causal FLOPs: forward
// 4 B H T^2 D / 2, backward 2.5x that (FlashAttention's convention). Not a
// correctness test: run with --gtest_also_run_disabled_tests
// --gtest_filter='*TimingGpt2*'.
TEST_F(CudaFlashAttentionTc, DISABLED_TimingGpt2) {
  const int64_t B = 16, H = 12, T = 1024, D = 64;
  const int64_t n = B * H * T * D, nl = B * H * T;
  std::vector<void *> bufs;
  auto alloc = [&](int64_t bytes) {
    void *p = nullptr;
    if (cudaMalloc(&p, static_cast<size_t>(bytes)) != cudaSuccess)
      return static_cast<void *>(nullptr);
    bufs.push_back(p);
    return p;
  };
  auto bf = [&] { return static_cast<uint16_t *>(alloc(n * 2)); };
  uint16_t *q = bf(), *k = bf(), *v = bf(), *out = bf(), *dout = bf();
  uint16_t *dq = bf(), *dk = bf(), *dv = bf();
  auto *lse = static_cast<float *>(alloc(nl * 4));
  ASSERT_TRUE(q && k && v && out && dout && dq && dk && dv && lse);
  const Bits init = toBf16(randomVec(n, 200));
  for (uint16_t *p : {q, k, v, dout})
    ASSERT_EQ(zrt_cuda::copy_to_device(p, init.data(), n * 2), ZRT_OK);
  const double fwdFlop = 4.0 * B * H * (T * T / 2.0) * D;
  const float fwd = timeOnStream(20, [&] {
    return zrt_cuda::attention_forward_bf16_tc(q, k, v, out, lse, B, H, T, D);
  });
  const float bwd = timeOnStream(20, [&] {
    return zrt_cuda::attention_backward_bf16_tc(dout, q, k, v, out, lse, dq,
                                                dk, dv, B, H, T, D);
  });
  printf("tensor-core forward  %.3f ms (%.1f TFLOP/s)\n", fwd,
         fwdFlop / (fwd * 1e9));
  printf("tensor-core backward %.3f ms (%.1f TFLOP/s, 2.5x forward FLOPs)\n",
         bwd, 2.5 * fwdFlop / (bwd * 1e9));
  // The f32 SIMT kernels on the same shape (f32 buffers), for comparison.
  auto f32 = [&] { return static_cast<float *>(alloc(n * 4)); };
  float *fq = f32(), *fk = f32(), *fv = f32(), *fo = f32(), *fdo = f32();
  float *fdq = f32(), *fdk = f32(), *fdv = f32();
  if (fq && fk && fv && fo && fdo && fdq && fdk && fdv) {
    const auto finit = randomVec(n, 200);
    for (float *p : {fq, fk, fv, fdo})
      ASSERT_EQ(zrt_cuda::copy_to_device(p, finit.data(), n * 4), ZRT_OK);
    const float sf = timeOnStream(5, [&] {
      return zrt_cuda::attention_forward(fq, fk, fv, fo, lse, nullptr, B, H,
                                         T, D);
    });
    const float sb = timeOnStream(5, [&] {
      return zrt_cuda::attention_backward(fdo, fq, fk, fv, fo, lse, fdq, fdk,
                                          fdv, nullptr, B, H, T, D);
    });
    printf("SIMT f32 forward %.3f ms, backward %.3f ms\n", sf, sb);
  }
  for (void *p : bufs)
    cudaFree(p);
  EXPECT_GT(fwd, 0.0f);
  EXPECT_GT(bwd, 0.0f);
}

} // namespace
