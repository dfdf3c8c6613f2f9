//===- threads_test.cpp - The same numbers at every thread count ----------===//
//
// The kernels that split their work over the OpenMP team — attention over
// (slice, query tile) pairs, the reductions over fixed lanes — give the
// same bits with 1, 2 and 3 threads, and the tiled attention (several query
// tiles: T > 32) agrees with a double-precision reference.
//
//===----------------------------------------------------------------------===//

#include "test_util.h"

#include "zrt/decoder.h"
#include "zrt/zrt.h"

#include <omp.h>

#include <cmath>
#include <cstring>
#include <vector>

using namespace zrt_test;

namespace {

template <typename T>
bool sameBits(const std::vector<T> &a, const std::vector<T> &b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

/// Sets the OpenMP thread count for its lifetime, then restores it.
struct Threads {
  int saved = omp_get_max_threads();
  explicit Threads(int n) { omp_set_num_threads(n); }
  ~Threads() { omp_set_num_threads(saved); }
};

/// Grouped-query attention shapes: q, out [B, H, T, D], k, v [B, Hkv, T, D].
struct Shape {
  int64_t B, H, Hkv, T, D;
  int64_t q() const { return B * H * T * D; }
  int64_t kv() const { return B * Hkv * T * D; }
};

/// One run's outputs: forward out and lse, backward dq, dk, dv.
struct Result {
  std::vector<float> out, lse, dq, dk, dv;
};

Result runAttention(const Shape &s, int threads) {
  Threads scope(threads);
  const auto q = randomVec(s.q(), 1), k = randomVec(s.kv(), 2),
             v = randomVec(s.kv(), 3), dout = randomVec(s.q(), 4);
  Result r{std::vector<float>(s.q()), std::vector<float>(s.B * s.H * s.T),
           std::vector<float>(s.q()), std::vector<float>(s.kv()),
           std::vector<float>(s.kv())};
  std::vector<float> work(zrt_attention_workspace(s.T));
  EXPECT_EQ(zrt_attention_forward_gqa(q.data(), k.data(), v.data(),
                                      r.out.data(), r.lse.data(), work.data(),
                                      s.B, s.H, s.Hkv, s.T, s.D),
            ZRT_OK);
  EXPECT_EQ(zrt_attention_backward_gqa(
                dout.data(), q.data(), k.data(), v.data(), r.out.data(),
                r.lse.data(), r.dq.data(), r.dk.data(), r.dv.data(),
                work.data(), s.B, s.H, s.Hkv, s.T, s.D),
            ZRT_OK);
  return r;
}

/// Causal softmax attention and its gradients in double, slice by slice.
Result referenceAttention(const Shape &s) {
  const auto q = randomVec(s.q(), 1), k = randomVec(s.kv(), 2),
             v = randomVec(s.kv(), 3), dout = randomVec(s.q(), 4);
  const int64_t T = s.T, D = s.D, group = s.H / s.Hkv;
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  Result r{std::vector<float>(s.q()), std::vector<float>(s.B * s.H * T),
           std::vector<float>(s.q()), std::vector<float>(s.kv()),
           std::vector<float>(s.kv())};
  std::vector<double> dk(s.kv()), dv(s.kv()), p(T * T), dp(T * T);
  for (int64_t b = 0; b < s.B; ++b)
    for (int64_t h = 0; h < s.H; ++h) {
      const int64_t qo = (b * s.H + h) * T * D,
                    ko = (b * s.Hkv + h / group) * T * D;
      for (int64_t i = 0; i < T; ++i) {
        double mx = -INFINITY, sum = 0.0;
        for (int64_t j = 0; j <= i; ++j) {
          double dot = 0.0;
          for (int64_t c = 0; c < D; ++c)
            dot += double(q[qo + i * D + c]) * k[ko + j * D + c];
          p[i * T + j] = dot * scale;
          mx = std::max(mx, p[i * T + j]);
        }
        for (int64_t j = 0; j <= i; ++j)
          sum += (p[i * T + j] = std::exp(p[i * T + j] - mx));
        for (int64_t j = 0; j <= i; ++j)
          p[i * T + j] /= sum;
        r.lse[(b * s.H + h) * T + i] = static_cast<float>(mx + std::log(sum));
        for (int64_t c = 0; c < D; ++c) {
          double o = 0.0;
          for (int64_t j = 0; j <= i; ++j)
            o += p[i * T + j] * v[ko + j * D + c];
          r.out[qo + i * D + c] = static_cast<float>(o);
        }
      }
      // dP = dO V^T, dS = P (dP - rowsum(P dP)).
      for (int64_t i = 0; i < T; ++i) {
        double rowDot = 0.0;
        for (int64_t j = 0; j <= i; ++j) {
          double d = 0.0;
          for (int64_t c = 0; c < D; ++c)
            d += double(dout[qo + i * D + c]) * v[ko + j * D + c];
          dp[i * T + j] = d;
          rowDot += p[i * T + j] * d;
        }
        for (int64_t j = 0; j <= i; ++j)
          dp[i * T + j] = p[i * T + j] * (dp[i * T + j] - rowDot);
      }
      for (int64_t i = 0; i < T; ++i)
        for (int64_t c = 0; c < D; ++c) {
          double g = 0.0;
          for (int64_t j = 0; j <= i; ++j)
            g += dp[i * T + j] * k[ko + j * D + c];
          r.dq[qo + i * D + c] = static_cast<float>(g * scale);
        }
      for (int64_t j = 0; j < T; ++j)
        for (int64_t c = 0; c < D; ++c) {
          double gk = 0.0, gv = 0.0;
          for (int64_t i = j; i < T; ++i) {
            gk += dp[i * T + j] * q[qo + i * D + c];
            gv += p[i * T + j] * dout[qo + i * D + c];
          }
          dk[ko + j * D + c] += gk * scale;
          dv[ko + j * D + c] += gv;
        }
    }
  for (int64_t i = 0; i < s.kv(); ++i) {
    r.dk[i] = static_cast<float>(dk[i]);
    r.dv[i] = static_cast<float>(dv[i]);
  }
  return r;
}

std::vector<double> toDouble(const std::vector<float> &f) {
  return std::vector<double>(f.begin(), f.end());
}

} // namespace

// Large enough to go parallel (B H T^2 D >= 2^20), T not a multiple of the
// 32-row tile, grouped-query heads (dK, dV summed over a group).
TEST(ThreadsTest, AttentionSameBitsAtEveryThreadCount) {
  for (const Shape s : {Shape{2, 4, 2, 75, 32}, Shape{1, 4, 4, 130, 16}}) {
    const Result one = runAttention(s, 1);
    for (int threads : {2, 3}) {
      const Result r = runAttention(s, threads);
      EXPECT_TRUE(sameBits(r.out, one.out)) << "out, threads " << threads;
      EXPECT_TRUE(sameBits(r.lse, one.lse)) << "lse, threads " << threads;
      EXPECT_TRUE(sameBits(r.dq, one.dq)) << "dq, threads " << threads;
      EXPECT_TRUE(sameBits(r.dk, one.dk)) << "dk, threads " << threads;
      EXPECT_TRUE(sameBits(r.dv, one.dv)) << "dv, threads " << threads;
    }
    // The tiles (3 and 5 of them) compute causal attention.
    const Result ref = referenceAttention(s);
    const Result two = runAttention(s, 2);
    expectAllNear(two.out.data(), toDouble(ref.out), "out", 1e-4, 1e-5);
    expectAllNear(two.lse.data(), toDouble(ref.lse), "lse", 1e-4, 1e-5);
    expectAllNear(two.dq.data(), toDouble(ref.dq), "dq", 1e-3, 1e-5);
    expectAllNear(two.dk.data(), toDouble(ref.dk), "dk", 1e-3, 1e-5);
    expectAllNear(two.dv.data(), toDouble(ref.dv), "dv", 1e-3, 1e-5);
  }
}

// The packed form runs the same tiles on strided heads: the same bits as
// the unpacked form at any thread count.
TEST(ThreadsTest, PackedAttentionSameBitsAtEveryThreadCount) {
  const int64_t B = 2, T = 96, H = 4, D = 32, C = H * D;
  const auto qkv = randomVec(B * T * 3 * C, 7), dout = randomVec(B * T * C, 8);
  std::vector<float> work(zrt_attention_workspace(T));
  std::vector<float> out1, lse1, dqkv1;
  for (int threads : {1, 2, 3}) {
    Threads scope(threads);
    std::vector<float> out(B * T * C), lse(B * H * T), dqkv(B * T * 3 * C);
    ASSERT_EQ(zrt_attention_forward_packed(qkv.data(), out.data(), lse.data(),
                                           work.data(), B, T, H, D),
              ZRT_OK);
    ASSERT_EQ(zrt_attention_backward_packed(dout.data(), qkv.data(),
                                            out.data(), lse.data(),
                                            dqkv.data(), work.data(), B, T, H,
                                            D),
              ZRT_OK);
    if (threads == 1) {
      out1 = out, lse1 = lse, dqkv1 = dqkv;
      continue;
    }
    EXPECT_TRUE(sameBits(out, out1)) << "threads " << threads;
    EXPECT_TRUE(sameBits(lse, lse1)) << "threads " << threads;
    EXPECT_TRUE(sameBits(dqkv, dqkv1)) << "threads " << threads;
  }
}

// The bf16 packed forms widen each slice, run the f32 tiles and round once,
// the whole team converting rows: at every thread count, the f32 packed
// forms on the widened tensors, rounded, bit for bit.
TEST(ThreadsTest, PackedBf16AttentionIsF32OnWidenedAtEveryThreadCount) {
  const int64_t B = 2, T = 96, H = 4, D = 32, C = H * D;
  std::vector<zrt_bf16> qkv(B * T * 3 * C), dout(B * T * C);
  std::vector<float> fqkv(qkv.size()), fdout(dout.size());
  const auto rq = randomVec(qkv.size(), 17), rd = randomVec(dout.size(), 18);
  for (size_t i = 0; i < qkv.size(); ++i)
    fqkv[i] = zrt_bf16_to_f32(qkv[i] = zrt_f32_to_bf16(rq[i]));
  for (size_t i = 0; i < dout.size(); ++i)
    fdout[i] = zrt_bf16_to_f32(dout[i] = zrt_f32_to_bf16(rd[i]));
  std::vector<float> work(zrt_attention_workspace_bf16(T, D));
  for (int threads : {1, 2, 3}) {
    Threads scope(threads);
    std::vector<float> fout(B * T * C), flse(B * H * T), fdqkv(qkv.size());
    ASSERT_EQ(zrt_attention_forward_packed(fqkv.data(), fout.data(),
                                           flse.data(), work.data(), B, T, H,
                                           D),
              ZRT_OK);
    std::vector<zrt_bf16> fout16(fout.size());
    for (size_t i = 0; i < fout.size(); ++i)
      fout16[i] = zrt_f32_to_bf16(fout[i]);
    std::vector<float> fout16w(fout.size());
    for (size_t i = 0; i < fout.size(); ++i)
      fout16w[i] = zrt_bf16_to_f32(fout16[i]);
    ASSERT_EQ(zrt_attention_backward_packed(fdout.data(), fqkv.data(),
                                            fout16w.data(), flse.data(),
                                            fdqkv.data(), work.data(), B, T,
                                            H, D),
              ZRT_OK);
    std::vector<zrt_bf16> out(B * T * C), dqkv(qkv.size());
    std::vector<float> lse(B * H * T);
    ASSERT_EQ(zrt_attention_forward_packed_bf16(qkv.data(), out.data(),
                                                lse.data(), work.data(), B, T,
                                                H, D),
              ZRT_OK);
    ASSERT_EQ(zrt_attention_backward_packed_bf16(dout.data(), qkv.data(),
                                                 out.data(), lse.data(),
                                                 dqkv.data(), work.data(), B,
                                                 T, H, D),
              ZRT_OK);
    EXPECT_TRUE(sameBits(out, fout16)) << "out, threads " << threads;
    EXPECT_TRUE(sameBits(lse, flse)) << "lse, threads " << threads;
    std::vector<zrt_bf16> fdqkv16(fdqkv.size());
    for (size_t i = 0; i < fdqkv.size(); ++i)
      fdqkv16[i] = zrt_f32_to_bf16(fdqkv[i]);
    EXPECT_TRUE(sameBits(dqkv, fdqkv16)) << "dqkv, threads " << threads;
  }
}

// The gradient norm's sum of squares: fixed lanes, so the same bits at
// every thread count (an OpenMP reduction's grouping follows the team).
TEST(ThreadsTest, SumSquaresSameBitsAtEveryThreadCount) {
  const int64_t n = (1 << 20) + 37;
  const auto x = randomVec(n, 11);
  double ref = 0.0;
  for (float f : x)
    ref += double(f) * f;
  float one = 0.0f;
  {
    Threads scope(1);
    ASSERT_EQ(zrt_sum_squares(x.data(), n, &one), ZRT_OK);
  }
  EXPECT_NEAR(one, ref, 1e-6 * ref);
  for (int threads : {2, 3}) {
    Threads scope(threads);
    float got = 0.0f;
    ASSERT_EQ(zrt_sum_squares(x.data(), n, &got), ZRT_OK);
    EXPECT_EQ(bitsOf(got), bitsOf(one)) << "threads " << threads;
  }
}

// The fused cross-entropy's loss (a sum over rows) and gradient.
TEST(ThreadsTest, CrossEntropySameBitsAtEveryThreadCount) {
  const int64_t N = 1000, V = 264, classes = 256;
  const auto logits = randomVec(N * V, 12, -4.0f, 4.0f);
  std::vector<int32_t> targets(N);
  for (int64_t i = 0; i < N; ++i)
    targets[i] = static_cast<int32_t>((i * 37) % classes);
  float loss1 = 0.0f;
  std::vector<float> grad1;
  for (int threads : {1, 2, 3}) {
    Threads scope(threads);
    std::vector<float> g = logits;
    float loss = 0.0f;
    ASSERT_EQ(zrt_cross_entropy_padded_fused(g.data(), targets.data(), &loss,
                                             1.0f, N, V, classes),
              ZRT_OK);
    if (threads == 1) {
      loss1 = loss, grad1 = g;
      continue;
    }
    EXPECT_EQ(bitsOf(loss), bitsOf(loss1)) << "threads " << threads;
    EXPECT_TRUE(sameBits(g, grad1)) << "threads " << threads;
  }
}

// The GEMMs (zrt_matmul f32, zrt_matmul_bf16): oneDNN would split K over
// the threads for skinny or small-M N shapes (its GEMV path; its bf16
// matmul's parallel reduction), so the runtime runs it as fixed tiles of C,
// one thread each (cpu/gemm.h). Linear-layer shapes, weight gradients with
// long K (transpose_a), and GEMV-like ones.
TEST(ThreadsTest, MatmulSameBitsAtEveryThreadCount) {
  struct Gemm {
    int64_t M, N, K;
    int ta, tb;
  };
  for (const Gemm g : {Gemm{300, 200, 64, 0, 1}, Gemm{64, 96, 4096, 1, 0},
                       Gemm{128, 8, 20000, 1, 0}, Gemm{1, 512, 4096, 0, 0},
                       Gemm{3, 1, 65536, 1, 0}, Gemm{2, 64, 4096, 1, 0}}) {
    const auto a = randomVec(g.M * g.K, 21), b = randomVec(g.K * g.N, 22);
    std::vector<zrt_bf16> a16(a.size()), b16(b.size());
    zrt_cast_f32_to_bf16(a.data(), a16.data(), int64_t(a.size()));
    zrt_cast_f32_to_bf16(b.data(), b16.data(), int64_t(b.size()));
    std::vector<float> work(static_cast<size_t>(
        zrt_matmul_bf16_workspace(1, g.M, g.N, g.K, 0)));
    std::vector<float> c1;
    std::vector<zrt_bf16> d1;
    for (int threads : {1, 2, 3}) {
      Threads scope(threads);
      std::vector<float> c(g.M * g.N);
      std::vector<zrt_bf16> d(g.M * g.N);
      ASSERT_EQ(zrt_matmul(a.data(), b.data(), nullptr, c.data(), 1, g.M, g.N,
                           g.K, g.ta, g.tb, 1.0f, 0.0f, ZRT_STRIDE_PACKED,
                           ZRT_STRIDE_PACKED, ZRT_STRIDE_PACKED),
                ZRT_OK);
      ASSERT_EQ(zrt_matmul_bf16(a16.data(), b16.data(), nullptr, d.data(), 1,
                                g.M, g.N, g.K, g.ta, g.tb, work.data()),
                ZRT_OK)
          << zrt_last_error();
      if (threads == 1) {
        c1 = c, d1 = d;
        continue;
      }
      EXPECT_TRUE(sameBits(c, c1)) << "f32 " << g.M << "x" << g.N << "x"
                                   << g.K << ", threads " << threads;
      EXPECT_TRUE(sameBits(d, d1)) << "bf16 " << g.M << "x" << g.N << "x"
                                   << g.K << ", threads " << threads;
    }
  }
}
