//===- cuda_layout_norm_test.cpp - CUDA layout and norm kernels vs. CPU ---===//
//
// The byte-moving functions of layout.cu (copy_any, copy_2d,
// broadcast_leading, permute, permute_0213, local_shard), compared bit for
// bit with the CPU runtime, and the row kernels of norm.cu (layer norm,
// its backward and statistics, softmax and its backward), compared within
// f32 rounding of a different summation order; the residual-add forms of
// layer norm bit for bit against the unfused CUDA calls. Device tests skip
// without a GPU; the argument checks run everywhere.
//
//===----------------------------------------------------------------------===//

#include "cuda_test_util.h"

#include <algorithm>
#include <numeric>

namespace {

using namespace zrt_cuda_test;

/// Bytes of an element of `dtype` (ZRT_F32 or ZRT_BF16).
int64_t eltBytes(int dtype) { return dtype == ZRT_F32 ? 4 : 2; }

/// `bytes` random bytes (any pattern is a valid element to move).
std::vector<unsigned char> randomBytes(int64_t bytes, uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<unsigned char> v(static_cast<size_t>(bytes));
  for (unsigned char &b : v)
    b = static_cast<unsigned char>(gen() & 0xffu);
  return v;
}

std::string dtypeName(int dtype) { return dtype == ZRT_F32 ? "f32" : "bf16"; }

class CudaLayout : public CudaKernels {
protected:
  /// Device copy of host bytes.
  void *devBytesOf(const std::vector<unsigned char> &v) {
    return devBytes(static_cast<int64_t>(v.size()), v.data());
  }
  std::vector<unsigned char> hostBytes(const void *p, int64_t bytes) {
    return hostOf(static_cast<const unsigned char *>(p), bytes);
  }
};

//===----------------------------------------------------------------------===//
// Layout
//===----------------------------------------------------------------------===//

TEST_F(CudaLayout, CopyAny) {
  for (int dtype : {ZRT_F32, ZRT_BF16})
    for (int64_t n : {0, 1, 7, 1000, 70001}) {
      const int64_t eb = eltBytes(dtype);
      const auto src = randomBytes(n * eb, 40);
      void *ds = devBytesOf(src), *dd = devBytes(n * eb);
      ASSERT_EQ(zrt_cuda::copy_any(ds, dd, n, dtype), ZRT_OK);
      EXPECT_EQ(hostBytes(dd, n * eb), src) << dtypeName(dtype) << " n=" << n;
      // Overlapping, both directions, as the CPU's memmove.
      for (int64_t shift : {1, 3}) {
        for (int dir = 0; dir < 2; ++dir) {
          auto ref = randomBytes((n + shift) * eb, 41);
          unsigned char *d = static_cast<unsigned char *>(devBytesOf(ref));
          const int64_t from = dir ? shift * eb : 0, to = dir ? 0 : shift * eb;
          ASSERT_EQ(zrt_copy_any(ref.data() + from, ref.data() + to, n, dtype),
                    ZRT_OK);
          ASSERT_EQ(zrt_cuda::copy_any(d + from, d + to, n, dtype), ZRT_OK);
          EXPECT_EQ(hostBytes(d, (n + shift) * eb), ref)
              << dtypeName(dtype) << " n=" << n << " overlap " << from << " -> "
              << to;
        }
      }
      zrt_cuda::arena_reset(arena_);
    }
}

TEST_F(CudaLayout, Copy2d) {
  struct Case {
    int64_t rows, cols, srcLd, dstLd, srcOff, dstOff; // offsets in elements
  };
  const Case cases[] = {
      {0, 5, 5, 5, 0, 0},
      {3, 0, 2, 2, 0, 0},
      {1, 1, 1, 1, 0, 0},
      {1, 9, 20, 11, 1, 0}, // one row
      {4, 6, 6, 6, 0, 0},   // contiguous
      {5, 3, 7, 4, 0, 0},
      {7, 8, 16, 8, 0, 0}, // 16-byte words (f32)
      {7, 8, 16, 8, 1, 0},
      {7, 8, 16, 8, 0, 2}, // misaligned words
      {33, 17, 40, 19, 3, 1},
      {1024, 384, 768, 384, 0, 0},
      {1024, 768, 2304, 768, 768, 0}, // a column block of a [1024, 2304] qkv
  };
  for (int dtype : {ZRT_F32, ZRT_BF16})
    for (const Case &c : cases) {
      const int64_t eb = eltBytes(dtype);
      const int64_t srcElems =
          c.srcOff + (c.rows ? (c.rows - 1) * c.srcLd : 0) + c.cols;
      const int64_t dstElems =
          c.dstOff + (c.rows ? (c.rows - 1) * c.dstLd : 0) + c.cols;
      const auto src = randomBytes(srcElems * eb, 42);
      auto ref = randomBytes(dstElems * eb, 43); // gaps must stay as they are
      unsigned char *ds = static_cast<unsigned char *>(devBytesOf(src));
      unsigned char *dd = static_cast<unsigned char *>(devBytesOf(ref));
      ASSERT_EQ(zrt_copy_2d(src.data() + c.srcOff * eb, c.srcLd,
                            ref.data() + c.dstOff * eb, c.dstLd, c.rows, c.cols,
                            dtype),
                ZRT_OK);
      ASSERT_EQ(zrt_cuda::copy_2d(ds + c.srcOff * eb, c.srcLd,
                                  dd + c.dstOff * eb, c.dstLd, c.rows, c.cols,
                                  dtype),
                ZRT_OK)
          << zrt_cuda::last_error();
      EXPECT_EQ(hostBytes(dd, dstElems * eb), ref)
          << dtypeName(dtype) << " rows=" << c.rows << " cols=" << c.cols
          << " ld=" << c.srcLd << "," << c.dstLd << " off=" << c.srcOff << ","
          << c.dstOff;
      zrt_cuda::arena_reset(arena_);
    }
}

TEST_F(CudaLayout, BroadcastLeading) {
  const int64_t shapes[][2] = {{0, 4}, {3, 0}, {1, 5},      {4, 1},
                               {7, 9}, {5, 8}, {1024, 768}, {3, 70001}};
  for (int dtype : {ZRT_F32, ZRT_BF16})
    for (const auto &s : shapes) {
      const int64_t lead = s[0], n = s[1], eb = eltBytes(dtype);
      const auto in = randomBytes(n * eb, 44);
      std::vector<unsigned char> ref(static_cast<size_t>(lead * n * eb));
      ASSERT_EQ(zrt_broadcast_leading(in.data(), ref.data(), lead, n, dtype),
                ZRT_OK);
      void *di = devBytesOf(in), *dout = devBytes(lead * n * eb);
      ASSERT_EQ(zrt_cuda::broadcast_leading(di, dout, lead, n, dtype), ZRT_OK)
          << zrt_cuda::last_error();
      EXPECT_EQ(hostBytes(dout, lead * n * eb), ref)
          << dtypeName(dtype) << " lead=" << lead << " n=" << n;
      zrt_cuda::arena_reset(arena_);
    }
  // Misaligned input (a bf16 row starting at an odd element).
  const auto in = randomBytes(2 * 9, 45);
  std::vector<unsigned char> ref(2 * 8 * 6);
  ASSERT_EQ(zrt_broadcast_leading(in.data() + 2, ref.data(), 6, 8, ZRT_BF16),
            ZRT_OK);
  unsigned char *di = static_cast<unsigned char *>(devBytesOf(in));
  void *dout = devBytes(2 * 8 * 6);
  ASSERT_EQ(zrt_cuda::broadcast_leading(di + 2, dout, 6, 8, ZRT_BF16), ZRT_OK);
  EXPECT_EQ(hostBytes(dout, 2 * 8 * 6), ref) << "misaligned";
}

TEST_F(CudaLayout, Permute) {
  struct Case {
    std::vector<int64_t> shape, perm;
    int64_t off; // element offset of in and out in their buffers
  };
  std::vector<Case> cases = {
      {{}, {}, 0},              // rank 0: one element
      {{7}, {0}, 0},            // identity
      {{1024, 768}, {1, 0}, 0}, // transpose
      {{5, 3}, {1, 0}, 1},
      {{2, 64, 12, 64}, {0, 2, 1, 3}, 0}, // [B, T, H, D] -> [B, H, T, D]
      {{2, 64, 12, 64}, {0, 2, 1, 3}, 1}, // the same, misaligned
      {{3, 1, 4, 5}, {2, 1, 0, 3}, 0},    // a size-1 dimension
      {{1, 1, 1}, {2, 0, 1}, 0},
      {{2, 3, 4, 5}, {0, 1, 2, 3}, 0}, // identity, merged to one copy
      {{4, 6, 8}, {0, 2, 1}, 0},
      {{2, 3, 1, 2, 3, 2, 1, 2}, {7, 2, 5, 0, 3, 6, 1, 4}, 0},
      {{0, 5, 3}, {2, 1, 0}, 0}, // empty
  };
  // Every permutation of [3, 5, 7] and of [2, 3, 4, 6].
  for (std::vector<int64_t> shape :
       {std::vector<int64_t>{3, 5, 7}, std::vector<int64_t>{2, 3, 4, 6}}) {
    std::vector<int64_t> perm(shape.size());
    std::iota(perm.begin(), perm.end(), 0);
    do
      cases.push_back({shape, perm, 0});
    while (std::next_permutation(perm.begin(), perm.end()));
  }
  for (int dtype : {ZRT_F32, ZRT_BF16})
    for (const Case &c : cases) {
      const int rank = static_cast<int>(c.shape.size());
      const int64_t eb = eltBytes(dtype);
      int64_t n = 1;
      for (int64_t d : c.shape)
        n *= d;
      const auto in = randomBytes((n + c.off) * eb, 46);
      std::vector<unsigned char> ref((n + c.off) * eb, 0xab);
      ASSERT_EQ(zrt_permute(in.data() + c.off * eb, ref.data() + c.off * eb,
                            rank, c.shape.data(), c.perm.data(), dtype),
                ZRT_OK);
      unsigned char *di = static_cast<unsigned char *>(devBytesOf(in));
      const std::vector<unsigned char> pad((n + c.off) * eb, 0xab);
      unsigned char *dout = static_cast<unsigned char *>(devBytesOf(pad));
      ASSERT_EQ(zrt_cuda::permute(di + c.off * eb, dout + c.off * eb, rank,
                                  c.shape.data(), c.perm.data(), dtype),
                ZRT_OK)
          << zrt_cuda::last_error();
      std::string what = dtypeName(dtype) + " shape";
      for (int64_t d : c.shape)
        what += " " + std::to_string(d);
      what += " perm";
      for (int64_t p : c.perm)
        what += " " + std::to_string(p);
      what += " off " + std::to_string(c.off);
      EXPECT_EQ(hostBytes(dout, (n + c.off) * eb), ref) << what;
      zrt_cuda::arena_reset(arena_);
    }
}

TEST_F(CudaLayout, Permute0213) {
  const int64_t shapes[][4] = {{0, 2, 3, 4}, {1, 1, 1, 1}, {3, 5, 7, 9},
                               {2, 4, 6, 1}, {1, 7, 1, 5}, {4, 256, 12, 64}};
  for (const auto &s : shapes) {
    const int64_t n = s[0] * s[1] * s[2] * s[3];
    const auto in = randomVec(n, 47);
    std::vector<float> ref(static_cast<size_t>(n));
    ASSERT_EQ(zrt_permute_0213(in.data(), ref.data(), s[0], s[1], s[2], s[3]),
              ZRT_OK);
    float *dout = dev(n), *di = dev(in);
    ASSERT_EQ(zrt_cuda::permute_0213(di, dout, s[0], s[1], s[2], s[3]), ZRT_OK)
        << zrt_cuda::last_error();
    const std::string what = "[" + std::to_string(s[0]) + "," +
                             std::to_string(s[1]) + "," + std::to_string(s[2]) +
                             "," + std::to_string(s[3]) + "]";
    expectSameBits(ref, host(dout, n), what);
    // Its own backward: (A, C, B, D) on the result gives the input back.
    float *back = dev(n);
    ASSERT_EQ(zrt_cuda::permute_0213(dout, back, s[0], s[2], s[1], s[3]),
              ZRT_OK);
    expectSameBits(in, host(back, n), what + " round trip");
    zrt_cuda::arena_reset(arena_);
  }
}

TEST_F(CudaLayout, LocalShard) {
  for (int dtype : {ZRT_F32, ZRT_BF16})
    for (int64_t n : {0, 1, 7, 70001})
      for (int rank : {0, 1, 3}) {
        const int64_t eb = eltBytes(dtype);
        const auto in = randomBytes(4 * n * eb, 48);
        std::vector<unsigned char> ref(static_cast<size_t>(n * eb));
        ASSERT_EQ(zrt_local_shard(in.data(), ref.data(), n, rank, dtype),
                  ZRT_OK);
        void *di = devBytesOf(in), *dout = devBytes(n * eb);
        ASSERT_EQ(zrt_cuda::local_shard(di, dout, n, rank, dtype), ZRT_OK);
        EXPECT_EQ(hostBytes(dout, n * eb), ref)
            << dtypeName(dtype) << " n=" << n << " rank=" << rank;
        zrt_cuda::arena_reset(arena_);
      }
}

//===----------------------------------------------------------------------===//
// Normalization and softmax
//===----------------------------------------------------------------------===//

struct RowShape {
  int64_t N, C;
};
// The layer-norm kernels' paths: scalar (C not a multiple of 8), 16-byte
// vectors with the row in registers (C <= 1024: 1 to 4 chunks of 8 per
// lane, some lanes with fewer at C = 32 and 1000), and vectors re-reading
// the row (C = 1544, 3072).
const RowShape kRowShapes[] = {{0, 5},     {1, 1},      {3, 1},    {7, 33},
                               {5, 32},    {1024, 768}, {6, 1000}, {3, 1544},
                               {37, 3072}, {2, 70001}};

std::string shapeName(const RowShape &s) {
  return "N=" + std::to_string(s.N) + " C=" + std::to_string(s.C);
}

TEST_F(CudaKernels, LayerNormAndStats) {
  for (const RowShape &s : kRowShapes)
    for (int affine = 0; affine < 2; ++affine) {
      const int64_t N = s.N, C = s.C;
      // An offset mean, so the two-pass variance matters.
      const auto x = randomVec(N * C, 50, 2.0f, 4.0f);
      const auto w = randomVec(C, 51, 0.5f, 1.5f), b = randomVec(C, 52);
      const float *pw = affine ? w.data() : nullptr;
      const float *pb = affine ? b.data() : nullptr;
      const float eps = 1e-5f;
      std::vector<float> ref(static_cast<size_t>(N * C)),
          rm(static_cast<size_t>(N)), rr(rm.size());
      ASSERT_EQ(zrt_layer_norm(x.data(), pw, pb, ref.data(), rm.data(),
                               rr.data(), N, C, eps),
                ZRT_OK);
      float *dx = dev(x), *dout = dev(N * C), *dm = dev(N), *dr = dev(N);
      float *dw = affine ? dev(w) : nullptr, *db = affine ? dev(b) : nullptr;
      ASSERT_EQ(zrt_cuda::layer_norm(dx, dw, db, dout, dm, dr, N, C, eps),
                ZRT_OK)
          << zrt_cuda::last_error();
      const std::string what =
          shapeName(s) + " affine=" + std::to_string(affine);
      const auto got = host(dout, N * C);
      const auto gotMean = host(dm, N), gotRstd = host(dr, N);
      // The CPU's sequential f32 row sums of values around 3 carry an error
      // growing like C^1.5 ulps (the device's tree sums much less): the
      // absolute tolerance of the output grows with C.
      const float outTol = 1e-5f * (1.0f + static_cast<float>(C) / 1024.0f);
      expectClose(ref, got, outTol, 1e-5f, what + " out");
      expectClose(rm, gotMean, 1e-6f, 1e-5f, what + " mean");
      expectClose(rr, gotRstd, 0.0f, 1e-5f, what + " rstd");
      // Without mean / rstd, and in place: the same bits.
      ASSERT_EQ(
          zrt_cuda::layer_norm(dx, dw, db, dx, nullptr, nullptr, N, C, eps),
          ZRT_OK);
      expectSameBits(got, host(dx, N * C), what + " in place");
      // layer_norm_stats: exactly layer_norm's statistics.
      float *sm = dev(N), *sr = dev(N);
      ASSERT_EQ(zrt_cuda::layer_norm_stats(dev(x), sm, sr, N, C, eps), ZRT_OK);
      expectSameBits(gotMean, host(sm, N), what + " stats mean");
      expectSameBits(gotRstd, host(sr, N), what + " stats rstd");
      std::vector<float> cm(static_cast<size_t>(N)), cr(cm.size());
      ASSERT_EQ(zrt_layer_norm_stats(x.data(), cm.data(), cr.data(), N, C, eps),
                ZRT_OK);
      expectClose(cm, gotMean, 1e-6f, 1e-5f, what + " cpu stats mean");
      expectClose(cr, gotRstd, 0.0f, 1e-5f, what + " cpu stats rstd");
      zrt_cuda::arena_reset(arena_);
    }
}

TEST_F(CudaKernels, LayerNormBackward) {
  for (const RowShape &s : kRowShapes)
    for (int mask = 0; mask < 16; ++mask) {
      // mask bits: weight, dx, dweight, dbias.
      if (s.N * s.C > 100000 && mask != 15 && mask != 14 && mask != 3)
        continue; // the large shapes: all outputs, no weight, dx only
      const int64_t N = s.N, C = s.C;
      const bool hasW = mask & 1, wantDx = mask & 2, wantDw = mask & 4,
                 wantDb = mask & 8;
      const auto x = randomVec(N * C, 53, -2.0f, 3.0f);
      const auto g = randomVec(N * C, 54);
      const auto w = randomVec(C, 55, 0.5f, 1.5f);
      std::vector<float> mean(static_cast<size_t>(N)), rstd(mean.size());
      ASSERT_EQ(
          zrt_layer_norm_stats(x.data(), mean.data(), rstd.data(), N, C, 1e-5f),
          ZRT_OK);
      const std::vector<float> nanNC(static_cast<size_t>(N * C), NAN),
          nanC(static_cast<size_t>(C), NAN);
      std::vector<float> rdx = nanNC, rdw = nanC, rdb = nanC;
      ASSERT_EQ(zrt_layer_norm_backward(
                    g.data(), x.data(), hasW ? w.data() : nullptr, mean.data(),
                    rstd.data(), wantDx ? rdx.data() : nullptr,
                    wantDw ? rdw.data() : nullptr,
                    wantDb ? rdb.data() : nullptr, N, C),
                ZRT_OK);
      float *ddx = dev(nanNC), *ddw = dev(nanC), *ddb = dev(nanC);
      ASSERT_EQ(zrt_cuda::layer_norm_backward(
                    dev(g), dev(x), hasW ? dev(w) : nullptr, dev(mean),
                    dev(rstd), wantDx ? ddx : nullptr, wantDw ? ddw : nullptr,
                    wantDb ? ddb : nullptr, N, C),
                ZRT_OK)
          << zrt_cuda::last_error();
      const std::string what = shapeName(s) + " mask=" + std::to_string(mask);
      const float colTol = 1e-6f * static_cast<float>(N + 1);
      if (wantDx)
        expectClose(rdx, host(ddx, N * C), 1e-5f, 1e-5f, what + " dx");
      else
        expectSameBits(nanNC, host(ddx, N * C), what + " dx untouched");
      if (wantDw)
        expectClose(rdw, host(ddw, C), colTol, 1e-5f, what + " dweight");
      else
        expectSameBits(nanC, host(ddw, C), what + " dweight untouched");
      if (wantDb)
        expectClose(rdb, host(ddb, C), colTol, 1e-5f, what + " dbias");
      else
        expectSameBits(nanC, host(ddb, C), what + " dbias untouched");
      zrt_cuda::arena_reset(arena_);
    }
}

// The residual-add forms: bit for bit the unfused CUDA calls (add +
// layer_norm, layer_norm_backward + add) on every shape (staged rows in
// shared memory up to C = 3072, rows read back from sum at C = 70001), and
// within layer_norm's tolerances of the CPU's fused calls (sum, an exact
// elementwise add on both, bit for bit).
TEST_F(CudaKernels, AddLayerNormMatchesAddThenLayerNorm) {
  for (const RowShape &s : kRowShapes)
    for (int mask = 0; mask < 4; ++mask) {
      // mask bits: weight and bias, mean and rstd.
      const int64_t N = s.N, C = s.C;
      const bool affine = mask & 1, stats = mask & 2;
      const std::string what = shapeName(s) + " mask=" + std::to_string(mask);
      const auto a = randomVec(N * C, 56, 2.0f, 4.0f);
      const auto b = randomVec(N * C, 57, -1e-2f, 1e-2f);
      const auto w = randomVec(C, 58, 0.5f, 1.5f), bias = randomVec(C, 59);
      const float eps = 1e-5f;
      const std::vector<float> nanNC(static_cast<size_t>(N * C), NAN),
          nanN(static_cast<size_t>(N), NAN);
      float *da = dev(a), *db = dev(b);
      float *dw = affine ? dev(w) : nullptr,
            *dbias = affine ? dev(bias) : nullptr;
      float *refSum = dev(nanNC), *refOut = dev(nanNC), *refMean = dev(nanN),
            *refRstd = dev(nanN);
      ASSERT_EQ(zrt_cuda::add(da, db, refSum, N * C), ZRT_OK);
      ASSERT_EQ(zrt_cuda::layer_norm(refSum, dw, dbias, refOut,
                                     stats ? refMean : nullptr,
                                     stats ? refRstd : nullptr, N, C, eps),
                ZRT_OK);
      float *sum = dev(nanNC), *out = dev(nanNC), *mean = dev(nanN),
            *rstd = dev(nanN);
      ASSERT_EQ(zrt_cuda::add_layer_norm(da, db, dw, dbias, sum, out,
                                         stats ? mean : nullptr,
                                         stats ? rstd : nullptr, N, C, eps),
                ZRT_OK)
          << zrt_cuda::last_error();
      const auto gotSum = host(sum, N * C), gotOut = host(out, N * C);
      const auto gotMean = host(mean, N), gotRstd = host(rstd, N);
      expectSameBits(host(refSum, N * C), gotSum, what + " sum");
      expectSameBits(host(refOut, N * C), gotOut, what + " out");
      expectSameBits(host(refMean, N), gotMean, what + " mean");
      expectSameBits(host(refRstd, N), gotRstd, what + " rstd");
      std::vector<float> cSum(nanNC), cOut(nanNC), cMean(nanN), cRstd(nanN);
      ASSERT_EQ(zrt_add_layer_norm(a.data(), b.data(),
                                   affine ? w.data() : nullptr,
                                   affine ? bias.data() : nullptr, cSum.data(),
                                   cOut.data(), stats ? cMean.data() : nullptr,
                                   stats ? cRstd.data() : nullptr, N, C, eps),
                ZRT_OK);
      expectSameBits(cSum, gotSum, what + " sum vs cpu");
      const float outTol = 1e-5f * (1.0f + static_cast<float>(C) / 1024.0f);
      expectClose(cOut, gotOut, outTol, 1e-5f, what + " out vs cpu");
      if (stats) {
        expectClose(cMean, gotMean, 1e-6f, 1e-5f, what + " mean vs cpu");
        expectClose(cRstd, gotRstd, 0.0f, 1e-5f, what + " rstd vs cpu");
      }
      zrt_cuda::arena_reset(arena_);
    }
}

TEST_F(CudaKernels, LayerNormBackwardAddMatchesBackwardThenAdd) {
  for (const RowShape &s : kRowShapes)
    for (int mask = 0; mask < 8; ++mask) {
      // mask bits: weight, dweight, dbias.
      if (s.N * s.C > 100000 && mask != 7 && mask != 0)
        continue; // the large shapes: all outputs, or dx alone
      const int64_t N = s.N, C = s.C;
      const bool hasW = mask & 1, wantDw = mask & 2, wantDb = mask & 4;
      const std::string what = shapeName(s) + " mask=" + std::to_string(mask);
      const auto x = randomVec(N * C, 60, -2.0f, 3.0f);
      const auto g = randomVec(N * C, 61), addend = randomVec(N * C, 62);
      const auto w = randomVec(C, 63, 0.5f, 1.5f);
      // The statistics of x: layer_norm_stats, as the forward saves them.
      float *dx = dev(x), *dm = dev(N), *dr = dev(N);
      ASSERT_EQ(zrt_cuda::layer_norm_stats(dx, dm, dr, N, C, 1e-5f), ZRT_OK);
      const auto mean = host(dm, N), rstd = host(dr, N);
      const std::vector<float> nanNC(static_cast<size_t>(N * C), NAN),
          nanC(static_cast<size_t>(C), NAN);
      float *dg = dev(g), *dw = hasW ? dev(w) : nullptr, *dadd = dev(addend);
      float *tmp = dev(nanNC), *refDx = dev(nanNC), *refDw = dev(nanC),
            *refDb = dev(nanC);
      ASSERT_EQ(zrt_cuda::layer_norm_backward(dg, dx, dw, dm, dr, tmp,
                                              wantDw ? refDw : nullptr,
                                              wantDb ? refDb : nullptr, N, C),
                ZRT_OK);
      ASSERT_EQ(zrt_cuda::add(dadd, tmp, refDx, N * C), ZRT_OK);
      float *gotDx = dev(nanNC), *gotDw = dev(nanC), *gotDb = dev(nanC);
      ASSERT_EQ(zrt_cuda::layer_norm_backward_add(
                    dg, dx, dw, dm, dr, dadd, gotDx, wantDw ? gotDw : nullptr,
                    wantDb ? gotDb : nullptr, N, C),
                ZRT_OK)
          << zrt_cuda::last_error();
      const auto hDx = host(gotDx, N * C), hDw = host(gotDw, C),
                 hDb = host(gotDb, C);
      expectSameBits(host(refDx, N * C), hDx, what + " dx");
      expectSameBits(host(refDw, C), hDw, what + " dweight");
      expectSameBits(host(refDb, C), hDb, what + " dbias");
      std::vector<float> cDx(nanNC), cDw(nanC), cDb(nanC), cTmp(nanNC);
      ASSERT_EQ(zrt_layer_norm_backward_add(
                    g.data(), x.data(), hasW ? w.data() : nullptr, mean.data(),
                    rstd.data(), addend.data(), cDx.data(),
                    wantDw ? cDw.data() : nullptr,
                    wantDb ? cDb.data() : nullptr, N, C),
                ZRT_OK);
      ASSERT_EQ(zrt_layer_norm_backward(
                    g.data(), x.data(), hasW ? w.data() : nullptr, mean.data(),
                    rstd.data(), cTmp.data(), nullptr, nullptr, N, C),
                ZRT_OK);
      // LayerNormBackward's tolerance of dx_ln, relative to the terms of
      // addend + dx_ln (the sum may cancel).
      for (size_t i = 0; i < cDx.size(); ++i)
        ASSERT_NEAR(cDx[i], hDx[i],
                    1e-5f + 1e-5f * (std::fabs(addend[i]) + std::fabs(cTmp[i])))
            << what << " dx vs cpu at " << i;
      const float colTol = 1e-6f * static_cast<float>(N + 1);
      if (wantDw)
        expectClose(cDw, hDw, colTol, 1e-5f, what + " dweight vs cpu");
      if (wantDb)
        expectClose(cDb, hDb, colTol, 1e-5f, what + " dbias vs cpu");
      zrt_cuda::arena_reset(arena_);
    }
}

TEST_F(CudaKernels, SoftmaxAndBackward) {
  for (const RowShape &s : kRowShapes) {
    const int64_t N = s.N, C = s.C;
    auto x = randomVec(N * C, 56, -5.0f, 5.0f);
    if (N >= 3 && C >= 8) {
      for (int64_t j = 0; j < C; ++j) // a row of large magnitudes
        x[static_cast<size_t>(C + j)] =
            80.0f * x[static_cast<size_t>(C + j)] / 5.0f;
      for (int64_t j = 0; j < C; j += 2) // a masked row
        x[static_cast<size_t>(2 * C + j)] = -INFINITY;
    }
    std::vector<float> ref(static_cast<size_t>(N * C));
    ASSERT_EQ(zrt_softmax(x.data(), ref.data(), N, C), ZRT_OK);
    float *dx = dev(x), *dy = dev(N * C);
    ASSERT_EQ(zrt_cuda::softmax(dx, dy, N, C), ZRT_OK)
        << zrt_cuda::last_error();
    const auto got = host(dy, N * C);
    // expf of arguments down to -160 is within ~1e-5 relative. As in layer
    // norm, the CPU's sequential f32 row sum of the C exponentials carries
    // an error growing with C (6.7e-5 relative for the rows of C = 70001;
    // the device's tree sums much less): the tolerance grows with C.
    const float smTol = 2e-5f * (1.0f + static_cast<float>(C) / 8192.0f);
    expectClose(ref, got, 1e-30f, smTol, shapeName(s) + " softmax");
    ASSERT_EQ(zrt_cuda::softmax(dx, dx, N, C), ZRT_OK); // in place
    expectSameBits(got, host(dx, N * C), shapeName(s) + " softmax in place");

    const auto g = randomVec(N * C, 57);
    std::vector<float> rdx(static_cast<size_t>(N * C));
    ASSERT_EQ(zrt_softmax_backward(ref.data(), g.data(), rdx.data(), N, C),
              ZRT_OK);
    float *ddx = dev(N * C);
    ASSERT_EQ(zrt_cuda::softmax_backward(dev(ref), dev(g), ddx, N, C), ZRT_OK);
    expectClose(rdx, host(ddx, N * C), 1e-6f, 1e-5f,
                shapeName(s) + " softmax_backward");
    zrt_cuda::arena_reset(arena_);
  }
}

//===----------------------------------------------------------------------===//
// Argument checks (no device needed)
//===----------------------------------------------------------------------===//

TEST(CudaArgs, LayoutAndNormSameErrorsAsCpu) {
  float a[4] = {}, b[4] = {};
  const int64_t shape[3] = {2, 1, 2}, perm[3] = {2, 1, 0},
                badPerm[3] = {0, 0, 1}, outOfRange[3] = {0, 1, 3},
                negShape[3] = {2, -1, 2};
  // copy_any
  EXPECT_SAME_ERROR(zrt_cuda::copy_any(a, b, 1, 7), zrt_copy_any(a, b, 1, 7));
  EXPECT_SAME_ERROR(zrt_cuda::copy_any(a, b, -1, ZRT_F32),
                    zrt_copy_any(a, b, -1, ZRT_F32));
  EXPECT_SAME_ERROR(zrt_cuda::copy_any(nullptr, b, 1, ZRT_BF16),
                    zrt_copy_any(nullptr, b, 1, ZRT_BF16));
  EXPECT_SAME_ERROR(zrt_cuda::copy_any(a, nullptr, 1, ZRT_F32),
                    zrt_copy_any(a, nullptr, 1, ZRT_F32));
  EXPECT_EQ(zrt_cuda::copy_any(nullptr, nullptr, 0, ZRT_F32), ZRT_OK);
  // copy_2d
  EXPECT_SAME_ERROR(zrt_cuda::copy_2d(a, 2, b, 2, 1, 1, -1),
                    zrt_copy_2d(a, 2, b, 2, 1, 1, -1));
  EXPECT_SAME_ERROR(zrt_cuda::copy_2d(a, 2, b, 2, -1, 1, ZRT_F32),
                    zrt_copy_2d(a, 2, b, 2, -1, 1, ZRT_F32));
  EXPECT_SAME_ERROR(zrt_cuda::copy_2d(a, 2, b, 2, 1, -1, ZRT_F32),
                    zrt_copy_2d(a, 2, b, 2, 1, -1, ZRT_F32));
  EXPECT_SAME_ERROR(zrt_cuda::copy_2d(a, 1, b, 2, 1, 2, ZRT_F32),
                    zrt_copy_2d(a, 1, b, 2, 1, 2, ZRT_F32));
  EXPECT_SAME_ERROR(zrt_cuda::copy_2d(a, 2, b, 1, 1, 2, ZRT_BF16),
                    zrt_copy_2d(a, 2, b, 1, 1, 2, ZRT_BF16));
  EXPECT_SAME_ERROR(zrt_cuda::copy_2d(nullptr, 2, b, 2, 1, 2, ZRT_F32),
                    zrt_copy_2d(nullptr, 2, b, 2, 1, 2, ZRT_F32));
  EXPECT_SAME_ERROR(zrt_cuda::copy_2d(a, 2, nullptr, 2, 1, 2, ZRT_F32),
                    zrt_copy_2d(a, 2, nullptr, 2, 1, 2, ZRT_F32));
  EXPECT_EQ(zrt_cuda::copy_2d(nullptr, 3, nullptr, 3, 0, 2, ZRT_F32), ZRT_OK);
  // broadcast_leading
  EXPECT_SAME_ERROR(zrt_cuda::broadcast_leading(a, b, -1, 1, ZRT_F32),
                    zrt_broadcast_leading(a, b, -1, 1, ZRT_F32));
  EXPECT_SAME_ERROR(zrt_cuda::broadcast_leading(a, b, 1, -1, ZRT_F32),
                    zrt_broadcast_leading(a, b, 1, -1, ZRT_F32));
  EXPECT_SAME_ERROR(zrt_cuda::broadcast_leading(a, b, 1, 1, 7),
                    zrt_broadcast_leading(a, b, 1, 1, 7));
  EXPECT_SAME_ERROR(zrt_cuda::broadcast_leading(nullptr, b, 2, 1, ZRT_F32),
                    zrt_broadcast_leading(nullptr, b, 2, 1, ZRT_F32));
  EXPECT_SAME_ERROR(zrt_cuda::broadcast_leading(a, nullptr, 2, 1, ZRT_BF16),
                    zrt_broadcast_leading(a, nullptr, 2, 1, ZRT_BF16));
  EXPECT_EQ(zrt_cuda::broadcast_leading(nullptr, nullptr, 0, 5, ZRT_F32),
            ZRT_OK);
  // permute
  EXPECT_SAME_ERROR(zrt_cuda::permute(a, b, 3, shape, perm, 9),
                    zrt_permute(a, b, 3, shape, perm, 9));
  EXPECT_SAME_ERROR(zrt_cuda::permute(a, b, -1, shape, perm, ZRT_F32),
                    zrt_permute(a, b, -1, shape, perm, ZRT_F32));
  EXPECT_SAME_ERROR(
      zrt_cuda::permute(a, b, ZRT_MAX_RANK + 1, shape, perm, ZRT_F32),
      zrt_permute(a, b, ZRT_MAX_RANK + 1, shape, perm, ZRT_F32));
  EXPECT_SAME_ERROR(zrt_cuda::permute(a, b, 3, nullptr, perm, ZRT_F32),
                    zrt_permute(a, b, 3, nullptr, perm, ZRT_F32));
  EXPECT_SAME_ERROR(zrt_cuda::permute(a, b, 3, shape, nullptr, ZRT_F32),
                    zrt_permute(a, b, 3, shape, nullptr, ZRT_F32));
  EXPECT_SAME_ERROR(zrt_cuda::permute(a, b, 3, negShape, perm, ZRT_F32),
                    zrt_permute(a, b, 3, negShape, perm, ZRT_F32));
  EXPECT_SAME_ERROR(zrt_cuda::permute(a, b, 3, shape, badPerm, ZRT_F32),
                    zrt_permute(a, b, 3, shape, badPerm, ZRT_F32));
  EXPECT_SAME_ERROR(zrt_cuda::permute(a, b, 3, shape, outOfRange, ZRT_BF16),
                    zrt_permute(a, b, 3, shape, outOfRange, ZRT_BF16));
  EXPECT_SAME_ERROR(zrt_cuda::permute(nullptr, b, 3, shape, perm, ZRT_F32),
                    zrt_permute(nullptr, b, 3, shape, perm, ZRT_F32));
  EXPECT_SAME_ERROR(zrt_cuda::permute(a, nullptr, 3, shape, perm, ZRT_F32),
                    zrt_permute(a, nullptr, 3, shape, perm, ZRT_F32));
  EXPECT_SAME_ERROR(zrt_cuda::permute(a, a, 3, shape, perm, ZRT_F32),
                    zrt_permute(a, a, 3, shape, perm, ZRT_F32));
  const int64_t emptyShape[3] = {2, 0, 2};
  EXPECT_EQ(zrt_cuda::permute(nullptr, nullptr, 3, emptyShape, perm, ZRT_F32),
            ZRT_OK);
  // permute_0213
  EXPECT_SAME_ERROR(zrt_cuda::permute_0213(a, b, 1, -1, 1, 1),
                    zrt_permute_0213(a, b, 1, -1, 1, 1));
  EXPECT_SAME_ERROR(zrt_cuda::permute_0213(nullptr, b, 1, 1, 1, 1),
                    zrt_permute_0213(nullptr, b, 1, 1, 1, 1));
  EXPECT_SAME_ERROR(zrt_cuda::permute_0213(a, nullptr, 1, 1, 1, 1),
                    zrt_permute_0213(a, nullptr, 1, 1, 1, 1));
  EXPECT_SAME_ERROR(zrt_cuda::permute_0213(a, a, 1, 2, 2, 1),
                    zrt_permute_0213(a, a, 1, 2, 2, 1));
  EXPECT_EQ(zrt_cuda::permute_0213(nullptr, nullptr, 3, 0, 2, 2), ZRT_OK);
  // local_shard
  EXPECT_SAME_ERROR(zrt_cuda::local_shard(a, b, 1, 0, 5),
                    zrt_local_shard(a, b, 1, 0, 5));
  EXPECT_SAME_ERROR(zrt_cuda::local_shard(a, b, -1, 0, ZRT_F32),
                    zrt_local_shard(a, b, -1, 0, ZRT_F32));
  EXPECT_SAME_ERROR(zrt_cuda::local_shard(a, b, 1, -1, ZRT_F32),
                    zrt_local_shard(a, b, 1, -1, ZRT_F32));
  EXPECT_SAME_ERROR(zrt_cuda::local_shard(nullptr, b, 1, 0, ZRT_BF16),
                    zrt_local_shard(nullptr, b, 1, 0, ZRT_BF16));
  EXPECT_SAME_ERROR(zrt_cuda::local_shard(a, nullptr, 1, 0, ZRT_F32),
                    zrt_local_shard(a, nullptr, 1, 0, ZRT_F32));
  EXPECT_EQ(zrt_cuda::local_shard(nullptr, nullptr, 0, 3, ZRT_F32), ZRT_OK);
  // layer_norm
  EXPECT_SAME_ERROR(
      zrt_cuda::layer_norm(a, nullptr, nullptr, b, nullptr, nullptr, -1, 2,
                           1e-5f),
      zrt_layer_norm(a, nullptr, nullptr, b, nullptr, nullptr, -1, 2, 1e-5f));
  EXPECT_SAME_ERROR(
      zrt_cuda::layer_norm(a, nullptr, nullptr, b, nullptr, nullptr, 1, 0,
                           1e-5f),
      zrt_layer_norm(a, nullptr, nullptr, b, nullptr, nullptr, 1, 0, 1e-5f));
  EXPECT_SAME_ERROR(
      zrt_cuda::layer_norm(a, nullptr, nullptr, b, nullptr, nullptr, 1, 2,
                           -1.0f),
      zrt_layer_norm(a, nullptr, nullptr, b, nullptr, nullptr, 1, 2, -1.0f));
  EXPECT_SAME_ERROR(zrt_cuda::layer_norm(nullptr, nullptr, nullptr, b, nullptr,
                                         nullptr, 1, 2, 1e-5f),
                    zrt_layer_norm(nullptr, nullptr, nullptr, b, nullptr,
                                   nullptr, 1, 2, 1e-5f));
  EXPECT_SAME_ERROR(zrt_cuda::layer_norm(a, nullptr, nullptr, nullptr, nullptr,
                                         nullptr, 1, 2, 1e-5f),
                    zrt_layer_norm(a, nullptr, nullptr, nullptr, nullptr,
                                   nullptr, 1, 2, 1e-5f));
  EXPECT_EQ(zrt_cuda::layer_norm(nullptr, nullptr, nullptr, nullptr, nullptr,
                                 nullptr, 0, 3, 1e-5f),
            ZRT_OK);
  // layer_norm_backward
  EXPECT_SAME_ERROR(
      zrt_cuda::layer_norm_backward(a, a, nullptr, a, a, b, nullptr, nullptr,
                                    -1, 2),
      zrt_layer_norm_backward(a, a, nullptr, a, a, b, nullptr, nullptr, -1, 2));
  EXPECT_SAME_ERROR(
      zrt_cuda::layer_norm_backward(a, a, nullptr, a, a, b, nullptr, nullptr, 1,
                                    0),
      zrt_layer_norm_backward(a, a, nullptr, a, a, b, nullptr, nullptr, 1, 0));
  EXPECT_SAME_ERROR(zrt_cuda::layer_norm_backward(nullptr, a, nullptr, a, a, b,
                                                  nullptr, nullptr, 1, 2),
                    zrt_layer_norm_backward(nullptr, a, nullptr, a, a, b,
                                            nullptr, nullptr, 1, 2));
  EXPECT_SAME_ERROR(zrt_cuda::layer_norm_backward(a, nullptr, nullptr, a, a, b,
                                                  nullptr, nullptr, 1, 2),
                    zrt_layer_norm_backward(a, nullptr, nullptr, a, a, b,
                                            nullptr, nullptr, 1, 2));
  EXPECT_SAME_ERROR(zrt_cuda::layer_norm_backward(a, a, nullptr, nullptr, a, b,
                                                  nullptr, nullptr, 1, 2),
                    zrt_layer_norm_backward(a, a, nullptr, nullptr, a, b,
                                            nullptr, nullptr, 1, 2));
  EXPECT_SAME_ERROR(zrt_cuda::layer_norm_backward(a, a, nullptr, a, nullptr, b,
                                                  nullptr, nullptr, 1, 2),
                    zrt_layer_norm_backward(a, a, nullptr, a, nullptr, b,
                                            nullptr, nullptr, 1, 2));
  EXPECT_EQ(zrt_cuda::layer_norm_backward(nullptr, nullptr, nullptr, nullptr,
                                          nullptr, nullptr, nullptr, nullptr, 0,
                                          4),
            ZRT_OK);
  // add_layer_norm and layer_norm_backward_add (c, d: two more [1, 2]
  // tensors; a + 1 overlaps a and b)
  float c[2] = {}, d[2] = {};
  EXPECT_SAME_ERROR(zrt_cuda::add_layer_norm(a, b, nullptr, nullptr, c, d,
                                             nullptr, nullptr, 1, 0, 1e-5f),
                    zrt_add_layer_norm(a, b, nullptr, nullptr, c, d, nullptr,
                                       nullptr, 1, 0, 1e-5f));
  EXPECT_SAME_ERROR(zrt_cuda::add_layer_norm(a, b, nullptr, nullptr, c, d,
                                             nullptr, nullptr, 1, 2, -1.0f),
                    zrt_add_layer_norm(a, b, nullptr, nullptr, c, d, nullptr,
                                       nullptr, 1, 2, -1.0f));
  EXPECT_SAME_ERROR(zrt_cuda::add_layer_norm(a, nullptr, nullptr, nullptr, c, d,
                                             nullptr, nullptr, 1, 2, 1e-5f),
                    zrt_add_layer_norm(a, nullptr, nullptr, nullptr, c, d,
                                       nullptr, nullptr, 1, 2, 1e-5f));
  EXPECT_SAME_ERROR(zrt_cuda::add_layer_norm(a, b, nullptr, nullptr, nullptr, d,
                                             nullptr, nullptr, 1, 2, 1e-5f),
                    zrt_add_layer_norm(a, b, nullptr, nullptr, nullptr, d,
                                       nullptr, nullptr, 1, 2, 1e-5f));
  EXPECT_SAME_ERROR(zrt_cuda::add_layer_norm(a, b, nullptr, nullptr, c, c,
                                             nullptr, nullptr, 1, 2, 1e-5f),
                    zrt_add_layer_norm(a, b, nullptr, nullptr, c, c, nullptr,
                                       nullptr, 1, 2, 1e-5f));
  EXPECT_SAME_ERROR(zrt_cuda::add_layer_norm(a, b, nullptr, nullptr, a + 1, d,
                                             nullptr, nullptr, 1, 2, 1e-5f),
                    zrt_add_layer_norm(a, b, nullptr, nullptr, a + 1, d,
                                       nullptr, nullptr, 1, 2, 1e-5f));
  EXPECT_EQ(zrt_cuda::add_layer_norm(nullptr, nullptr, nullptr, nullptr,
                                     nullptr, nullptr, nullptr, nullptr, 0, 3,
                                     1e-5f),
            ZRT_OK);
  EXPECT_SAME_ERROR(zrt_cuda::layer_norm_backward_add(nullptr, a, nullptr, a, a,
                                                      c, d, nullptr, nullptr, 1,
                                                      2),
                    zrt_layer_norm_backward_add(nullptr, a, nullptr, a, a, c, d,
                                                nullptr, nullptr, 1, 2));
  EXPECT_SAME_ERROR(zrt_cuda::layer_norm_backward_add(a, a, nullptr, a, a,
                                                      nullptr, d, nullptr,
                                                      nullptr, 1, 2),
                    zrt_layer_norm_backward_add(a, a, nullptr, a, a, nullptr, d,
                                                nullptr, nullptr, 1, 2));
  EXPECT_SAME_ERROR(zrt_cuda::layer_norm_backward_add(a, a, nullptr, a, a, c,
                                                      nullptr, nullptr, nullptr,
                                                      1, 2),
                    zrt_layer_norm_backward_add(a, a, nullptr, a, a, c, nullptr,
                                                nullptr, nullptr, 1, 2));
  EXPECT_SAME_ERROR(zrt_cuda::layer_norm_backward_add(a, b, nullptr, a, a, c, c,
                                                      nullptr, nullptr, 1, 2),
                    zrt_layer_norm_backward_add(a, b, nullptr, a, a, c, c,
                                                nullptr, nullptr, 1, 2));
  EXPECT_SAME_ERROR(zrt_cuda::layer_norm_backward_add(
                        a, b, nullptr, a, a, c, b + 1, nullptr, nullptr, 1, 2),
                    zrt_layer_norm_backward_add(a, b, nullptr, a, a, c, b + 1,
                                                nullptr, nullptr, 1, 2));
  EXPECT_EQ(zrt_cuda::layer_norm_backward_add(nullptr, nullptr, nullptr,
                                              nullptr, nullptr, nullptr,
                                              nullptr, nullptr, nullptr, 0, 4),
            ZRT_OK);
  // layer_norm_stats
  EXPECT_SAME_ERROR(zrt_cuda::layer_norm_stats(a, b, b, -1, 2, 1e-5f),
                    zrt_layer_norm_stats(a, b, b, -1, 2, 1e-5f));
  EXPECT_SAME_ERROR(zrt_cuda::layer_norm_stats(a, b, b, 1, 0, 1e-5f),
                    zrt_layer_norm_stats(a, b, b, 1, 0, 1e-5f));
  EXPECT_SAME_ERROR(zrt_cuda::layer_norm_stats(a, b, b, 1, 2, -1.0f),
                    zrt_layer_norm_stats(a, b, b, 1, 2, -1.0f));
  EXPECT_SAME_ERROR(zrt_cuda::layer_norm_stats(nullptr, b, b, 1, 2, 1e-5f),
                    zrt_layer_norm_stats(nullptr, b, b, 1, 2, 1e-5f));
  EXPECT_SAME_ERROR(zrt_cuda::layer_norm_stats(a, nullptr, b, 1, 2, 1e-5f),
                    zrt_layer_norm_stats(a, nullptr, b, 1, 2, 1e-5f));
  EXPECT_SAME_ERROR(zrt_cuda::layer_norm_stats(a, b, nullptr, 1, 2, 1e-5f),
                    zrt_layer_norm_stats(a, b, nullptr, 1, 2, 1e-5f));
  EXPECT_EQ(zrt_cuda::layer_norm_stats(nullptr, nullptr, nullptr, 0, 2, 0.0f),
            ZRT_OK);
  // softmax, softmax_backward
  EXPECT_SAME_ERROR(zrt_cuda::softmax(a, b, -1, 2), zrt_softmax(a, b, -1, 2));
  EXPECT_SAME_ERROR(zrt_cuda::softmax(a, b, 1, 0), zrt_softmax(a, b, 1, 0));
  EXPECT_SAME_ERROR(zrt_cuda::softmax(nullptr, b, 1, 2),
                    zrt_softmax(nullptr, b, 1, 2));
  EXPECT_SAME_ERROR(zrt_cuda::softmax(a, nullptr, 1, 2),
                    zrt_softmax(a, nullptr, 1, 2));
  EXPECT_EQ(zrt_cuda::softmax(nullptr, nullptr, 0, 2), ZRT_OK);
  EXPECT_SAME_ERROR(zrt_cuda::softmax_backward(a, a, b, 1, 0),
                    zrt_softmax_backward(a, a, b, 1, 0));
  EXPECT_SAME_ERROR(zrt_cuda::softmax_backward(nullptr, a, b, 1, 2),
                    zrt_softmax_backward(nullptr, a, b, 1, 2));
  EXPECT_SAME_ERROR(zrt_cuda::softmax_backward(a, nullptr, b, 1, 2),
                    zrt_softmax_backward(a, nullptr, b, 1, 2));
  EXPECT_SAME_ERROR(zrt_cuda::softmax_backward(a, a, nullptr, 1, 2),
                    zrt_softmax_backward(a, a, nullptr, 1, 2));
  EXPECT_EQ(zrt_cuda::softmax_backward(nullptr, nullptr, nullptr, 0, 1),
            ZRT_OK);
}

} // namespace
