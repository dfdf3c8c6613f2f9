//===- decoder_kernels_test.cpp - The Llama/Qwen kernels (zrt/decoder.h) --===//
//
// Each kernel against straightforward reference loops in double, each
// backward against central differences of its forward, the bf16 forms
// against the f32 arithmetic on the widened inputs, the grouped-query
// attention against multi-head attention on materialized repeated K/V
// (Hugging Face repeat_kv), and the masked cross-entropy against
// zrt_cross_entropy. PyTorch's own numbers: decoder_torch_test.cpp.
//
//===----------------------------------------------------------------------===//

#include "test_util.h"

#include <cmath>
#include <vector>

using namespace zrt_test;

namespace {

std::vector<zrt_bf16> toBf16(const std::vector<float> &v) {
  std::vector<zrt_bf16> out(v.size());
  zrt_cast_f32_to_bf16(v.data(), out.data(), static_cast<int64_t>(v.size()));
  return out;
}

std::vector<float> toF32(const std::vector<zrt_bf16> &v) {
  std::vector<float> out(v.size());
  zrt_cast_bf16_to_f32(v.data(), out.data(), static_cast<int64_t>(v.size()));
  return out;
}

/// Reference RMSNorm in double: w * x / sqrt(mean(x^2) + eps).
std::vector<double> rmsNormRef(const std::vector<float> &x,
                               const std::vector<float> &w, int64_t C,
                               double eps) {
  std::vector<double> y(x.size());
  for (size_t n = 0; n < x.size() / C; ++n) {
    double ss = 0;
    for (int64_t c = 0; c < C; ++c)
      ss += double(x[n * C + c]) * x[n * C + c];
    const double r = 1.0 / std::sqrt(ss / C + eps);
    for (int64_t c = 0; c < C; ++c)
      y[n * C + c] = w[c] * x[n * C + c] * r;
  }
  return y;
}

TEST(RmsNorm, MatchesReferenceLoops) {
  const int64_t N = 7, C = 96;
  auto x = randomVec(N * C, 1, -2, 2), w = randomVec(C, 2, 0.5f, 1.5f);
  std::vector<float> y(N * C);
  ASSERT_EQ(zrt_rms_norm(x.data(), w.data(), y.data(), N, C, 1e-5f), ZRT_OK);
  expectAllNear(y.data(), rmsNormRef(x, w, C, 1e-5), "y", 2e-6, 1e-7);
  // No weight = ones.
  std::vector<float> ones(C, 1.0f), y1(N * C);
  ASSERT_EQ(zrt_rms_norm(x.data(), nullptr, y1.data(), N, C, 1e-5f), ZRT_OK);
  expectAllNear(y1.data(), rmsNormRef(x, ones, C, 1e-5), "y1", 2e-6, 1e-7);
}

TEST(RmsNorm, AddFormIsAddThenNormBitForBit) {
  const int64_t N = 5, C = 33;
  auto a = randomVec(N * C, 3), b = randomVec(N * C, 4),
       w = randomVec(C, 5, 0.5f, 1.5f);
  std::vector<float> sum(N * C), y(N * C), sum2(N * C), y2(N * C);
  ASSERT_EQ(zrt_add_rms_norm(a.data(), b.data(), w.data(), sum.data(), y.data(),
                             N, C, 1e-6f),
            ZRT_OK);
  ASSERT_EQ(zrt_add(a.data(), b.data(), sum2.data(), N * C), ZRT_OK);
  ASSERT_EQ(zrt_rms_norm(sum2.data(), w.data(), y2.data(), N, C, 1e-6f),
            ZRT_OK);
  EXPECT_EQ(sum, sum2);
  EXPECT_EQ(y, y2);
}

TEST(RmsNorm, BackwardMatchesFiniteDifferences) {
  const int64_t N = 3, C = 16;
  auto x = randomVec(N * C, 6), w = randomVec(C, 7, 0.5f, 1.5f),
       c = randomVec(N * C, 8), add = randomVec(N * C, 9);
  std::vector<float> y(N * C);
  auto loss = [&]() {
    EXPECT_EQ(zrt_rms_norm(x.data(), w.data(), y.data(), N, C, 1e-5f), ZRT_OK);
    return weightedSum(c, y);
  };
  std::vector<float> dx(N * C), dw(C), dxa(N * C), work(N);
  ASSERT_EQ(zrt_rms_norm_backward(c.data(), x.data(), w.data(), nullptr,
                                  dx.data(), dw.data(), work.data(), N, C,
                                  1e-5f),
            ZRT_OK);
  expectGradNear(dx, numericGrad(x, loss), "dx", 1e-2, 1e-3);
  expectGradNear(dw, numericGrad(w, loss), "dw", 1e-2, 1e-3);
  // With an addend: dx + addend, rounded as zrt_add.
  ASSERT_EQ(zrt_rms_norm_backward(c.data(), x.data(), w.data(), add.data(),
                                  dxa.data(), nullptr, nullptr, N, C, 1e-5f),
            ZRT_OK);
  for (int64_t i = 0; i < N * C; ++i)
    EXPECT_EQ(dxa[i], add[i] + dx[i]) << i;
}

TEST(RmsNorm, Bf16RoundsTheNormalizedRowBeforeTheWeight) {
  const int64_t N = 4, C = 40;
  auto xf = toF32(toBf16(randomVec(N * C, 10, -3, 3)));
  auto wf = toF32(toBf16(randomVec(C, 11, 0.5f, 1.5f)));
  auto xb = toBf16(xf), wb = toBf16(wf);
  std::vector<zrt_bf16> yb(N * C);
  ASSERT_EQ(zrt_rms_norm_bf16(xb.data(), wb.data(), yb.data(), N, C, 1e-5f),
            ZRT_OK);
  // HF LlamaRMSNorm in bf16: weight * (x * r).to(bf16), the product rounded.
  std::vector<double> unit =
      rmsNormRef(xf, std::vector<float>(C, 1.0f), C, 1e-5);
  for (int64_t i = 0; i < N * C; ++i) {
    float xr = toF32(toBf16({static_cast<float>(unit[i])}))[0];
    float expected = toF32(toBf16({wf[i % C] * xr}))[0];
    float got = toF32({yb[i]})[0];
    // r in f32 may differ from the double reference in its last bits: at
    // most one bf16 step after each of the two roundings.
    EXPECT_NEAR(got, expected, std::fabs(expected) * (2.0 / 128)) << i;
  }
}

TEST(RmsNorm, BadArgumentsFailWithOneMessage) {
  float x[4] = {1, 2, 3, 4}, y[4];
  EXPECT_EQ(zrt_rms_norm(x, nullptr, y, 1, 0, 1e-5f), ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(zrt_last_error(),
               "zrt_rms_norm: need N >= 0 and C >= 1 (N=1 C=0)");
  EXPECT_EQ(zrt_rms_norm(x, nullptr, y, 1, 4, 0.0f), ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(zrt_last_error(),
               "zrt_rms_norm: eps must be positive and finite");
  EXPECT_EQ(zrt_rms_norm(nullptr, nullptr, y, 1, 4, 1e-5f),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(zrt_last_error(), "zrt_rms_norm: x is NULL");
  EXPECT_EQ(zrt_add_rms_norm(x, x, nullptr, x, y, 1, 4, 1e-5f),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(zrt_last_error(),
               "zrt_add_rms_norm: sum must not overlap a or b");
  EXPECT_EQ(zrt_rms_norm_backward(x, x, nullptr, x, nullptr, nullptr, nullptr,
                                  1, 4, 1e-5f),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(zrt_last_error(), "zrt_rms_norm_backward: an addend needs dx");
}

TEST(Swiglu, ForwardAndBackward) {
  const int64_t n = 50;
  auto g = randomVec(n, 12, -4, 4), u = randomVec(n, 13), c = randomVec(n, 14);
  std::vector<float> y(n), s(n);
  ASSERT_EQ(zrt_swiglu(g.data(), u.data(), y.data(), n), ZRT_OK);
  ASSERT_EQ(zrt_silu(g.data(), s.data(), n), ZRT_OK);
  std::vector<double> ref(n), sref(n);
  for (int64_t i = 0; i < n; ++i) {
    sref[i] = g[i] / (1.0 + std::exp(-double(g[i])));
    ref[i] = sref[i] * u[i];
  }
  expectAllNear(y.data(), ref, "swiglu", 1e-6, 1e-7);
  expectAllNear(s.data(), sref, "silu", 1e-6, 1e-7);
  auto loss = [&]() {
    EXPECT_EQ(zrt_swiglu(g.data(), u.data(), y.data(), n), ZRT_OK);
    return weightedSum(c, y);
  };
  std::vector<float> dg(n), du(n), ds(n);
  ASSERT_EQ(zrt_swiglu_backward(g.data(), u.data(), c.data(), dg.data(),
                                du.data(), n),
            ZRT_OK);
  expectGradNear(dg, numericGrad(g, loss), "dgate");
  expectGradNear(du, numericGrad(u, loss), "dup");
  auto siluLoss = [&]() {
    EXPECT_EQ(zrt_silu(g.data(), s.data(), n), ZRT_OK);
    return weightedSum(c, s);
  };
  ASSERT_EQ(zrt_silu_backward(g.data(), c.data(), ds.data(), n), ZRT_OK);
  expectGradNear(ds, numericGrad(g, siluLoss), "dsilu");
  // The gradients may overwrite dout.
  std::vector<float> d = c;
  ASSERT_EQ(
      zrt_swiglu_backward(g.data(), u.data(), d.data(), d.data(), nullptr, n),
      ZRT_OK);
  EXPECT_EQ(d, dg);
}

TEST(Swiglu, Bf16IsF32OnTheWidenedInputsRoundedOnce) {
  const int64_t n = 64;
  auto gb = toBf16(randomVec(n, 15, -4, 4)), ub = toBf16(randomVec(n, 16)),
       db = toBf16(randomVec(n, 17));
  auto gf = toF32(gb), uf = toF32(ub), df = toF32(db);
  std::vector<zrt_bf16> yb(n), dgb(n), dub(n);
  std::vector<float> yf(n), dgf(n), duf(n);
  ASSERT_EQ(zrt_swiglu_bf16(gb.data(), ub.data(), yb.data(), n), ZRT_OK);
  ASSERT_EQ(zrt_swiglu(gf.data(), uf.data(), yf.data(), n), ZRT_OK);
  EXPECT_EQ(yb, toBf16(yf));
  ASSERT_EQ(zrt_swiglu_backward_bf16(gb.data(), ub.data(), db.data(),
                                     dgb.data(), dub.data(), n),
            ZRT_OK);
  ASSERT_EQ(zrt_swiglu_backward(gf.data(), uf.data(), df.data(), dgf.data(),
                                duf.data(), n),
            ZRT_OK);
  EXPECT_EQ(dgb, toBf16(dgf));
  EXPECT_EQ(dub, toBf16(duf));
}

/// HF's f32 frequencies (see zrt_rope_table), then the angle in f32.
std::vector<float> tableRef(int64_t T, int64_t half, float theta,
                            const zrt_rope_scaling *s) {
  std::vector<float> t(T * half * 2);
  for (int64_t i = 0; i < half; ++i) {
    float inv = 1.0f / std::pow(theta, float(2 * i) / float(2 * half));
    if (s) {
      float wl = 2.0f * float(M_PI) / inv;
      float orig = float(s->original_max_positions);
      float lo = orig / float(s->low_freq_factor),
            hi = orig / float(s->high_freq_factor);
      if (wl > lo) {
        inv = inv / float(s->factor);
      } else if (!(wl < hi)) {
        float sm = (orig / wl - float(s->low_freq_factor)) /
                   float(s->high_freq_factor - s->low_freq_factor);
        inv = (1.0f - sm) * inv / float(s->factor) + sm * inv;
      }
    }
    for (int64_t p = 0; p < T; ++p) {
      float a = float(p) * inv;
      t[(p * half + i) * 2] = float(std::cos(double(a)));
      t[(p * half + i) * 2 + 1] = float(std::sin(double(a)));
    }
  }
  return t;
}

TEST(Rope, TableFollowsTheLlama3Bands) {
  const int64_t T = 20, half = 32;
  zrt_rope_scaling s{8.0, 1.0, 4.0, 64};
  std::vector<float> table(T * half * 2), plain(T * half * 2);
  ASSERT_EQ(zrt_rope_table(table.data(), T, half, 500000.0, &s), ZRT_OK);
  EXPECT_EQ(table, tableRef(T, half, 500000.0f, &s));
  ASSERT_EQ(zrt_rope_table(plain.data(), T, half, 500000.0, nullptr), ZRT_OK);
  EXPECT_EQ(plain, tableRef(T, half, 500000.0f, nullptr));
  // The highest frequency (wavelength 2 pi < 16) is kept; the lowest
  // (wavelength far above 64) is divided by the factor.
  EXPECT_EQ(table[(1 * half + 0) * 2 + 1], plain[(1 * half + 0) * 2 + 1]);
  float fLow =
      1.0f / std::pow(500000.0f, float(2 * (half - 1)) / float(2 * half));
  EXPECT_FLOAT_EQ(table[(1 * half + half - 1) * 2 + 1],
                  float(std::sin(double(fLow / 8.0f))));
  // Position 0 is the identity.
  for (int64_t i = 0; i < half; ++i) {
    EXPECT_EQ(table[i * 2], 1.0f);
    EXPECT_EQ(table[i * 2 + 1], 0.0f);
  }
}

TEST(Rope, LayoutsRotateTheirPairsAndInverseUndoes) {
  const int64_t B = 2, T = 6, H = 3, D = 8, half = D / 2, n = B * T * H * D;
  std::vector<float> table(T * half * 2);
  ASSERT_EQ(zrt_rope_table(table.data(), T, half, 10.0, nullptr), ZRT_OK);
  auto x = randomVec(n, 18);
  for (int layout : {ZRT_ROPE_ROTATE_HALF, ZRT_ROPE_INTERLEAVED}) {
    std::vector<float> y(n), back(n);
    ASSERT_EQ(zrt_rope(x.data(), table.data(), y.data(), B, T, H, D, layout, 0),
              ZRT_OK);
    for (int64_t row = 0; row < B * T * H; ++row) {
      int64_t t = (row / H) % T;
      for (int64_t i = 0; i < half; ++i) {
        int64_t ia = layout == ZRT_ROPE_ROTATE_HALF ? i : 2 * i;
        int64_t ib = layout == ZRT_ROPE_ROTATE_HALF ? i + half : 2 * i + 1;
        double c = table[(t * half + i) * 2], s = table[(t * half + i) * 2 + 1];
        double a = x[row * D + ia], b = x[row * D + ib];
        EXPECT_NEAR(y[row * D + ia], a * c - b * s, 1e-6);
        EXPECT_NEAR(y[row * D + ib], b * c + a * s, 1e-6);
      }
    }
    ASSERT_EQ(
        zrt_rope(y.data(), table.data(), back.data(), B, T, H, D, layout, 1),
        ZRT_OK);
    std::vector<double> xd(x.begin(), x.end());
    expectAllNear(back.data(), xd, "inverse", 0, 1e-6);
  }
  // In place.
  std::vector<float> y(n), z = x;
  ASSERT_EQ(zrt_rope(x.data(), table.data(), y.data(), B, T, H, D, 0, 0),
            ZRT_OK);
  ASSERT_EQ(zrt_rope(z.data(), table.data(), z.data(), B, T, H, D, 0, 0),
            ZRT_OK);
  EXPECT_EQ(y, z);
}

TEST(Rope, BadArgumentsFailWithOneMessage) {
  float t[4], x[8];
  EXPECT_EQ(zrt_rope(x, t, x, 1, 1, 1, 3, 0, 0), ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(zrt_last_error(), "zrt_rope: need B >= 0, H >= 0, T >= 1 and "
                                 "even D >= 2 (B=1 T=1 H=1 D=3)");
  EXPECT_EQ(zrt_rope(x, t, x, 1, 1, 1, 4, 7, 0), ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(zrt_last_error(),
               "zrt_rope: layout 7 is neither "
               "ZRT_ROPE_ROTATE_HALF nor ZRT_ROPE_INTERLEAVED");
  zrt_rope_scaling bad{8.0, 4.0, 1.0, 8192};
  EXPECT_EQ(zrt_rope_table(t, 1, 2, 1e4, &bad), ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(zrt_last_error(),
               "zrt_rope_table: need 0 < low_freq_factor < high_freq_factor");
  EXPECT_EQ(zrt_rope_table(t, 1, 2, 0.0, nullptr), ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(zrt_last_error(),
               "zrt_rope_table: theta must be positive and finite");
}

/// K/V [B, Hkv, T, D] repeated to [B, H, T, D] (HF repeat_kv).
std::vector<float> repeatKv(const std::vector<float> &kv, int64_t B,
                            int64_t Hkv, int64_t group, int64_t T, int64_t D) {
  std::vector<float> out(B * Hkv * group * T * D);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hkv * group; ++h)
      for (int64_t i = 0; i < T * D; ++i)
        out[((b * Hkv * group + h) * T * D) + i] =
            kv[((b * Hkv + h / group) * T * D) + i];
  return out;
}

TEST(GroupedQueryAttention, EqualsMultiHeadOnRepeatedKv) {
  const int64_t B = 2, H = 6, Hkv = 2, T = 9, D = 5, g = H / Hkv;
  auto q = randomVec(B * H * T * D, 19), k = randomVec(B * Hkv * T * D, 20),
       v = randomVec(B * Hkv * T * D, 21), dout = randomVec(B * H * T * D, 22);
  auto kr = repeatKv(k, B, Hkv, g, T, D), vr = repeatKv(v, B, Hkv, g, T, D);
  std::vector<float> o(q.size()), lse(B * H * T), o2(q.size()), lse2(B * H * T);
  ASSERT_EQ(zrt_attention_forward_gqa(q.data(), k.data(), v.data(), o.data(),
                                      lse.data(), nullptr, B, H, Hkv, T, D),
            ZRT_OK);
  ASSERT_EQ(zrt_attention_forward(q.data(), kr.data(), vr.data(), o2.data(),
                                  lse2.data(), nullptr, B, H, T, D),
            ZRT_OK);
  EXPECT_EQ(o, o2);
  EXPECT_EQ(lse, lse2);
  std::vector<float> dq(q.size()), dk(k.size()), dv(v.size()), dq2(q.size()),
      dk2(kr.size()), dv2(vr.size());
  ASSERT_EQ(zrt_attention_backward_gqa(
                dout.data(), q.data(), k.data(), v.data(), o.data(), lse.data(),
                dq.data(), dk.data(), dv.data(), nullptr, B, H, Hkv, T, D),
            ZRT_OK);
  ASSERT_EQ(zrt_attention_backward(dout.data(), q.data(), kr.data(), vr.data(),
                                   o2.data(), lse2.data(), dq2.data(),
                                   dk2.data(), dv2.data(), nullptr, B, H, T, D),
            ZRT_OK);
  EXPECT_EQ(dq, dq2);
  // dK, dV: the sum over each group of the repeated heads' gradients.
  std::vector<double> dkSum(k.size(), 0.0), dvSum(v.size(), 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < T * D; ++i) {
        dkSum[(b * Hkv + h / g) * T * D + i] += dk2[(b * H + h) * T * D + i];
        dvSum[(b * Hkv + h / g) * T * D + i] += dv2[(b * H + h) * T * D + i];
      }
  expectAllNear(dk.data(), dkSum, "dk", 1e-6, 1e-7);
  expectAllNear(dv.data(), dvSum, "dv", 1e-6, 1e-7);
}

TEST(GroupedQueryAttention, MultiHeadCaseIsTheOldKernelBitForBit) {
  const int64_t B = 1, H = 3, T = 7, D = 4;
  auto q = randomVec(B * H * T * D, 23), k = randomVec(q.size(), 24),
       v = randomVec(q.size(), 25), dout = randomVec(q.size(), 26);
  std::vector<float> o(q.size()), l(B * H * T), o2(q.size()), l2(B * H * T);
  ASSERT_EQ(zrt_attention_forward_gqa(q.data(), k.data(), v.data(), o.data(),
                                      l.data(), nullptr, B, H, H, T, D),
            ZRT_OK);
  ASSERT_EQ(zrt_attention_forward(q.data(), k.data(), v.data(), o2.data(),
                                  l2.data(), nullptr, B, H, T, D),
            ZRT_OK);
  EXPECT_EQ(o, o2);
  std::vector<float> d[6];
  for (auto &x : d)
    x.resize(q.size());
  ASSERT_EQ(zrt_attention_backward_gqa(
                dout.data(), q.data(), k.data(), v.data(), o.data(), l.data(),
                d[0].data(), d[1].data(), d[2].data(), nullptr, B, H, H, T, D),
            ZRT_OK);
  ASSERT_EQ(zrt_attention_backward(dout.data(), q.data(), k.data(), v.data(),
                                   o.data(), l.data(), d[3].data(), d[4].data(),
                                   d[5].data(), nullptr, B, H, T, D),
            ZRT_OK);
  EXPECT_EQ(d[0], d[3]);
  EXPECT_EQ(d[1], d[4]);
  EXPECT_EQ(d[2], d[5]);
}

TEST(GroupedQueryAttention, Bf16SumsTheGroupInF32) {
  const int64_t B = 1, H = 4, Hkv = 1, T = 6, D = 8;
  auto qb = toBf16(randomVec(B * H * T * D, 27)),
       kb = toBf16(randomVec(B * Hkv * T * D, 28)),
       vb = toBf16(randomVec(B * Hkv * T * D, 29)),
       db = toBf16(randomVec(B * H * T * D, 30));
  std::vector<float> work(zrt_attention_workspace_bf16(T, D));
  std::vector<zrt_bf16> ob(qb.size()), dqb(qb.size()), dkb(kb.size()),
      dvb(vb.size());
  std::vector<float> lse(B * H * T);
  ASSERT_EQ(zrt_attention_forward_gqa_bf16(qb.data(), kb.data(), vb.data(),
                                           ob.data(), lse.data(), work.data(),
                                           B, H, Hkv, T, D),
            ZRT_OK);
  ASSERT_EQ(zrt_attention_backward_gqa_bf16(db.data(), qb.data(), kb.data(),
                                            vb.data(), ob.data(), lse.data(),
                                            dqb.data(), dkb.data(), dvb.data(),
                                            work.data(), B, H, Hkv, T, D),
            ZRT_OK);
  // The f32 kernel on the widened tensors, rounded once.
  auto qf = toF32(qb), kf = toF32(kb), vf = toF32(vb), df = toF32(db),
       of = toF32(ob);
  std::vector<float> o2(qf.size()), l2(lse.size()), dq(qf.size()),
      dk(kf.size()), dv(vf.size());
  ASSERT_EQ(zrt_attention_forward_gqa(qf.data(), kf.data(), vf.data(),
                                      o2.data(), l2.data(), nullptr, B, H, Hkv,
                                      T, D),
            ZRT_OK);
  EXPECT_EQ(ob, toBf16(o2));
  ASSERT_EQ(zrt_attention_backward_gqa(df.data(), qf.data(), kf.data(),
                                       vf.data(), of.data(), lse.data(),
                                       dq.data(), dk.data(), dv.data(), nullptr,
                                       B, H, Hkv, T, D),
            ZRT_OK);
  EXPECT_EQ(dqb, toBf16(dq));
  EXPECT_EQ(dkb, toBf16(dk));
  EXPECT_EQ(dvb, toBf16(dv));
}

TEST(GroupedQueryAttention, KvHeadsMustDivideHeads) {
  float x[64], l[8];
  EXPECT_EQ(zrt_attention_forward_gqa(x, x, x, x, l, nullptr, 1, 6, 4, 2, 2),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(
      zrt_last_error(),
      "zrt_attention_forward_gqa: need 1 <= Hkv dividing H (H=6 Hkv=4)");
  EXPECT_EQ(zrt_attention_backward_gqa(x, x, x, x, x, l, x, x, x, nullptr, 1, 2,
                                       0, 2, 2),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(
      zrt_last_error(),
      "zrt_attention_backward_gqa: need 1 <= Hkv dividing H (H=2 Hkv=0)");
}

TEST(MaskedCrossEntropy, IgnoredRowsCountNowhere) {
  const int64_t N = 6, V = 9, classes = 7;
  auto logits = randomVec(N * V, 31, -3, 3);
  std::vector<int32_t> t = {0, -100, 6, 3, -100, 1};
  float loss = 0;
  ASSERT_EQ(zrt_cross_entropy_masked(logits.data(), t.data(), &loss, N, V,
                                     classes, -100),
            ZRT_OK);
  double ref = 0;
  int counted = 0;
  for (int64_t n = 0; n < N; ++n) {
    if (t[n] == -100)
      continue;
    ++counted;
    double m = -1e30, s = 0;
    for (int64_t j = 0; j < classes; ++j)
      m = std::max(m, double(logits[n * V + j]));
    for (int64_t j = 0; j < classes; ++j)
      s += std::exp(logits[n * V + j] - m);
    ref += m + std::log(s) - logits[n * V + t[n]];
  }
  EXPECT_NEAR(loss, ref / counted, 1e-6);
  // num_classes == V: zrt_cross_entropy with ignore_index.
  float full = 0, full2 = 0;
  ASSERT_EQ(
      zrt_cross_entropy_masked(logits.data(), t.data(), &full, N, V, V, -100),
      ZRT_OK);
  ASSERT_EQ(zrt_cross_entropy(logits.data(), t.data(), &full2, N, V, -100),
            ZRT_OK);
  EXPECT_FLOAT_EQ(full, full2);
  // Backward against finite differences; ignored rows and padding get 0.
  std::vector<float> dl(N * V);
  float one = 1.0f;
  ASSERT_EQ(zrt_cross_entropy_masked_backward(logits.data(), t.data(), &one,
                                              dl.data(), N, V, classes, -100),
            ZRT_OK);
  auto lossFn = [&]() {
    float l = 0;
    EXPECT_EQ(zrt_cross_entropy_masked(logits.data(), t.data(), &l, N, V,
                                       classes, -100),
              ZRT_OK);
    return double(l);
  };
  expectGradNear(dl, numericGrad(logits, lossFn, 1e-2f), "dlogits", 2e-2, 1e-3);
  for (int64_t j = 0; j < V; ++j) {
    EXPECT_EQ(dl[1 * V + j], 0.0f);
    EXPECT_EQ(dl[4 * V + j], 0.0f);
  }
  EXPECT_EQ(dl[0 * V + 7], 0.0f);
  EXPECT_EQ(dl[0 * V + 8], 0.0f);
}

TEST(MaskedCrossEntropy, AllIgnoredIsNanAndBadTargetsFail) {
  float logits[6] = {0, 1, 2, 3, 4, 5}, loss = 0;
  int32_t ignored[2] = {-100, -100}, bad[2] = {0, 2};
  ASSERT_EQ(zrt_cross_entropy_masked(logits, ignored, &loss, 2, 3, 3, -100),
            ZRT_OK);
  EXPECT_TRUE(std::isnan(loss));
  EXPECT_EQ(zrt_cross_entropy_masked(logits, bad, &loss, 2, 3, 2, -100),
            ZRT_ERR_OUT_OF_RANGE);
  EXPECT_STREQ(zrt_last_error(),
               "zrt_cross_entropy_masked: targets[1] = 2 is outside [0, 2) and "
               "is not ignore_index (-100)");
  EXPECT_EQ(zrt_cross_entropy_masked(logits, bad, &loss, 2, 3, 4, -100),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(zrt_last_error(),
               "zrt_cross_entropy_masked: need N >= 0 and 1 <= num_classes <= "
               "V (N=2 V=3 num_classes=4)");
}

TEST(MaskedCrossEntropy, Bf16IsF32OnTheWidenedLogits) {
  const int64_t N = 4, V = 12;
  auto lb = toBf16(randomVec(N * V, 32, -3, 3));
  auto lf = toF32(lb);
  std::vector<int32_t> t = {5, 11, -100, 0};
  float a = 0, b = 0, one = 1.0f;
  ASSERT_EQ(
      zrt_cross_entropy_masked_bf16(lb.data(), t.data(), &a, N, V, V, -100),
      ZRT_OK);
  ASSERT_EQ(zrt_cross_entropy_masked(lf.data(), t.data(), &b, N, V, V, -100),
            ZRT_OK);
  EXPECT_EQ(a, b);
  std::vector<zrt_bf16> db(N * V);
  std::vector<float> df(N * V);
  ASSERT_EQ(zrt_cross_entropy_masked_backward_bf16(lb.data(), t.data(), &one,
                                                   db.data(), N, V, V, -100),
            ZRT_OK);
  ASSERT_EQ(zrt_cross_entropy_masked_backward(lf.data(), t.data(), &one,
                                              df.data(), N, V, V, -100),
            ZRT_OK);
  EXPECT_EQ(db, toBf16(df));
}

} // namespace
