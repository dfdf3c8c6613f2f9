//===- lowering_support_test.cpp - the functions generated code calls -----===//
//
// Exact values for the copies, permutations, fills and initialization;
// central finite differences for the padded cross-entropy backward; the
// sharded AdamW and sharded initialization against their unsharded forms,
// bit for bit.
//
//===----------------------------------------------------------------------===//

#include "test_util.h"

#include <cmath>
#include <cstring>
#include <numeric>
#include <string>
#include <tuple>

using namespace zrt_test;

namespace {

std::vector<float> iota(size_t n, float start = 0.0f) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

TEST(LoweringSupportTest, CopyToDeviceAndToHost) {
  // Sizes are in bytes: a scalar, token ids, and a partial copy.
  std::vector<int32_t> ids = {3, 1, 4, 1, 5}, dev(5, -1), host(5, -1);
  ASSERT_EQ(zrt_copy_to_device(dev.data(), ids.data(), 5 * sizeof(int32_t)),
            ZRT_OK);
  EXPECT_EQ(dev, ids);
  ASSERT_EQ(zrt_copy_to_host(host.data(), dev.data(), 2 * sizeof(int32_t)),
            ZRT_OK);
  EXPECT_EQ(host, (std::vector<int32_t>{3, 1, -1, -1, -1}));
  float lr = 3e-4f, onDevice = 0.0f, back = 0.0f;
  ASSERT_EQ(zrt_copy_to_device(&onDevice, &lr, sizeof(float)), ZRT_OK);
  ASSERT_EQ(zrt_copy_to_host(&back, &onDevice, sizeof(float)), ZRT_OK);
  EXPECT_EQ(back, lr);
  // Zero bytes do nothing, even with NULL pointers.
  EXPECT_EQ(zrt_copy_to_device(nullptr, nullptr, 0), ZRT_OK);
  EXPECT_EQ(zrt_copy_to_host(nullptr, nullptr, 0), ZRT_OK);
  EXPECT_EQ(zrt_copy_to_device(dev.data(), ids.data(), -1),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zrt_copy_to_host(host.data(), nullptr, 4),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zrt_copy_to_device(nullptr, ids.data(), 4),
            ZRT_ERR_INVALID_ARGUMENT);
}

TEST(LoweringSupportTest, CopyAnyAndCopy2d) {
  std::vector<float> a = iota(6), b(6, -1.0f);
  ASSERT_EQ(zrt_copy_any(a.data(), b.data(), 6, ZRT_F32), ZRT_OK);
  EXPECT_EQ(a, b);
  std::vector<zrt_bf16> h = {1, 2, 3}, g(3, 0);
  ASSERT_EQ(zrt_copy_any(h.data(), g.data(), 3, ZRT_BF16), ZRT_OK);
  EXPECT_EQ(h, g);
  EXPECT_EQ(zrt_copy_any(a.data(), b.data(), 6, 7), ZRT_ERR_INVALID_ARGUMENT);

  // Split a [2, 6] matrix into columns [0, 2) and [2, 6): the strided copy
  // behind train.split along the last dimension.
  std::vector<float> m = iota(12), left(4), right(8);
  ASSERT_EQ(zrt_copy_2d(m.data(), 6, left.data(), 2, 2, 2, ZRT_F32), ZRT_OK);
  ASSERT_EQ(zrt_copy_2d(m.data() + 2, 6, right.data(), 4, 2, 4, ZRT_F32),
            ZRT_OK);
  EXPECT_EQ(left, (std::vector<float>{0, 1, 6, 7}));
  EXPECT_EQ(right, (std::vector<float>{2, 3, 4, 5, 8, 9, 10, 11}));
  // And back (concat).
  std::vector<float> back(12, -1.0f);
  ASSERT_EQ(zrt_copy_2d(left.data(), 2, back.data(), 6, 2, 2, ZRT_F32), ZRT_OK);
  ASSERT_EQ(zrt_copy_2d(right.data(), 4, back.data() + 2, 6, 2, 4, ZRT_F32),
            ZRT_OK);
  EXPECT_EQ(back, m);
  EXPECT_EQ(zrt_copy_2d(m.data(), 1, left.data(), 2, 2, 2, ZRT_F32),
            ZRT_ERR_INVALID_ARGUMENT);
}

TEST(LoweringSupportTest, BroadcastLeading) {
  std::vector<float> in = {1, 2, 3}, out(9, 0.0f);
  ASSERT_EQ(zrt_broadcast_leading(in.data(), out.data(), 3, 3, ZRT_F32),
            ZRT_OK);
  EXPECT_EQ(out, (std::vector<float>{1, 2, 3, 1, 2, 3, 1, 2, 3}));
  EXPECT_EQ(zrt_broadcast_leading(in.data(), out.data(), -1, 3, ZRT_F32),
            ZRT_ERR_INVALID_ARGUMENT);
}

TEST(LoweringSupportTest, PermuteMatchesNaiveAndPermute0213) {
  const int64_t shape[4] = {2, 3, 4, 5};
  std::vector<float> in = iota(120);
  // Every permutation of 4 axes against the index formula.
  int64_t perm[4] = {0, 1, 2, 3};
  do {
    std::vector<float> out(120, -1.0f);
    ASSERT_EQ(zrt_permute(in.data(), out.data(), 4, shape, perm, ZRT_F32),
              ZRT_OK);
    int64_t os[4] = {shape[perm[0]], shape[perm[1]], shape[perm[2]],
                     shape[perm[3]]};
    for (int64_t i0 = 0; i0 < os[0]; ++i0)
      for (int64_t i1 = 0; i1 < os[1]; ++i1)
        for (int64_t i2 = 0; i2 < os[2]; ++i2)
          for (int64_t i3 = 0; i3 < os[3]; ++i3) {
            int64_t j[4];
            const int64_t i[4] = {i0, i1, i2, i3};
            for (int k = 0; k < 4; ++k)
              j[perm[k]] = i[k];
            const int64_t src = ((j[0] * 3 + j[1]) * 4 + j[2]) * 5 + j[3];
            const int64_t dst = ((i0 * os[1] + i1) * os[2] + i2) * os[3] + i3;
            ASSERT_EQ(out[dst], in[src]);
          }
  } while (std::next_permutation(perm, perm + 4));

  const int64_t p0213[4] = {0, 2, 1, 3};
  std::vector<float> a(120), b(120);
  ASSERT_EQ(zrt_permute(in.data(), a.data(), 4, shape, p0213, ZRT_F32), ZRT_OK);
  ASSERT_EQ(zrt_permute_0213(in.data(), b.data(), 2, 3, 4, 5), ZRT_OK);
  EXPECT_EQ(a, b);

  // bf16 data moves as raw bits; a rank-2 transpose.
  const int64_t s2[2] = {2, 3}, p10[2] = {1, 0};
  std::vector<zrt_bf16> h = {1, 2, 3, 4, 5, 6}, ht(6);
  ASSERT_EQ(zrt_permute(h.data(), ht.data(), 2, s2, p10, ZRT_BF16), ZRT_OK);
  EXPECT_EQ(ht, (std::vector<zrt_bf16>{1, 4, 2, 5, 3, 6}));

  const int64_t bad[2] = {0, 0};
  EXPECT_EQ(zrt_permute(h.data(), ht.data(), 2, s2, bad, ZRT_BF16),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zrt_permute(h.data(), ht.data(), 9, s2, p10, ZRT_BF16),
            ZRT_ERR_INVALID_ARGUMENT);
}

TEST(LoweringSupportTest, CrossEntropyPaddedEqualsUnpaddedAndGradient) {
  const int64_t N = 3, V = 7, C = 5;
  std::vector<float> logits = randomVec(N * V, 11, -2.0f, 2.0f);
  const std::vector<int32_t> targets = {0, 4, 2};
  // Against zrt_cross_entropy on the first C columns, copied out.
  std::vector<float> narrow(N * C);
  ASSERT_EQ(zrt_copy_2d(logits.data(), V, narrow.data(), C, N, C, ZRT_F32),
            ZRT_OK);
  float padded = 0, plain = 0;
  ASSERT_EQ(
      zrt_cross_entropy_padded(logits.data(), targets.data(), &padded, N, V, C),
      ZRT_OK);
  ASSERT_EQ(zrt_cross_entropy(narrow.data(), targets.data(), &plain, N, C,
                              ZRT_IGNORE_INDEX_DEFAULT),
            ZRT_OK);
  EXPECT_EQ(padded, plain);

  // Gradient: finite differences of the loss; padding columns get 0.
  const float dloss = 0.75f;
  std::vector<float> grad(N * V, 123.0f);
  ASSERT_EQ(zrt_cross_entropy_padded_backward(logits.data(), targets.data(),
                                              &dloss, grad.data(), N, V, C),
            ZRT_OK);
  std::vector<double> numeric = numericGrad(logits, [&] {
    float l = 0;
    zrt_cross_entropy_padded(logits.data(), targets.data(), &l, N, V, C);
    return static_cast<double>(dloss) * l;
  });
  expectGradNear(grad, numeric, "dlogits");
  for (int64_t i = 0; i < N; ++i)
    for (int64_t j = C; j < V; ++j)
      EXPECT_EQ(grad[i * V + j], 0.0f);

  const std::vector<int32_t> outside = {0, 5, 2};
  float l = 0;
  EXPECT_EQ(
      zrt_cross_entropy_padded(logits.data(), outside.data(), &l, N, V, C),
      ZRT_ERR_OUT_OF_RANGE);
  EXPECT_EQ(
      zrt_cross_entropy_padded(logits.data(), targets.data(), &l, N, V, V + 1),
      ZRT_ERR_INVALID_ARGUMENT);
}

// The fused cross-entropy is the forward then the backward, bit for bit:
// the loss, and the gradient written over the logits (f32 and bf16; large
// enough rows for the OpenMP path; padding columns zeroed).
TEST(LoweringSupportTest, CrossEntropyFusedIsForwardThenBackward) {
  for (auto [N, V, C] : {std::tuple<int64_t, int64_t, int64_t>{3, 7, 5},
                         {64, 1031, 1000},
                         {1, 1, 1}}) {
    SCOPED_TRACE("N=" + std::to_string(N) + " V=" + std::to_string(V) +
                 " C=" + std::to_string(C));
    std::vector<float> logits = randomVec(N * V, 21, -4.0f, 4.0f);
    std::vector<int32_t> targets(N);
    for (int64_t i = 0; i < N; ++i)
      targets[i] = static_cast<int32_t>((i * 7919) % C);
    const float dloss = 0.75f;
    float want = 0, got = 0;
    std::vector<float> grad(N * V);
    ASSERT_EQ(zrt_cross_entropy_padded(logits.data(), targets.data(), &want, N,
                                       V, C),
              ZRT_OK);
    ASSERT_EQ(zrt_cross_entropy_padded_backward(logits.data(), targets.data(),
                                                &dloss, grad.data(), N, V, C),
              ZRT_OK);
    std::vector<float> fused = logits;
    ASSERT_EQ(zrt_cross_entropy_padded_fused(fused.data(), targets.data(),
                                             &got, dloss, N, V, C),
              ZRT_OK);
    EXPECT_EQ(bitsOf(got), bitsOf(want));
    EXPECT_EQ(0, std::memcmp(fused.data(), grad.data(), grad.size() * 4));

    std::vector<zrt_bf16> h(N * V), hgrad(N * V);
    for (size_t i = 0; i < h.size(); ++i)
      h[i] = zrt_f32_to_bf16(logits[i]);
    ASSERT_EQ(zrt_cross_entropy_padded_bf16(h.data(), targets.data(), &want, N,
                                            V, C),
              ZRT_OK);
    ASSERT_EQ(zrt_cross_entropy_padded_backward_bf16(
                  h.data(), targets.data(), &dloss, hgrad.data(), N, V, C),
              ZRT_OK);
    ASSERT_EQ(zrt_cross_entropy_padded_fused_bf16(h.data(), targets.data(),
                                                  &got, dloss, N, V, C),
              ZRT_OK);
    EXPECT_EQ(bitsOf(got), bitsOf(want));
    EXPECT_EQ(h, hgrad);
  }
  // Errors leave the logits alone; N = 0 is the NaN of an empty mean.
  std::vector<float> logits = randomVec(6, 5), before = logits;
  const std::vector<int32_t> outside = {0, 3};
  float l = 0;
  EXPECT_EQ(zrt_cross_entropy_padded_fused(logits.data(), outside.data(), &l,
                                           1.0f, 2, 3, 3),
            ZRT_ERR_OUT_OF_RANGE);
  EXPECT_EQ(logits, before);
  EXPECT_EQ(zrt_cross_entropy_padded_fused(logits.data(), outside.data(),
                                           nullptr, 1.0f, 2, 3, 3),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zrt_cross_entropy_padded_fused(nullptr, nullptr, &l, 1.0f, 0, 3, 3),
            ZRT_OK);
  EXPECT_TRUE(std::isnan(l));
}

TEST(LoweringSupportTest, LayerNormStatsMatchLayerNorm) {
  const int64_t N = 4, C = 6;
  std::vector<float> x = randomVec(N * C, 3), out(N * C), mean(N), rstd(N),
                     m2(N), r2(N);
  ASSERT_EQ(zrt_layer_norm(x.data(), nullptr, nullptr, out.data(), mean.data(),
                           rstd.data(), N, C, 1e-5f),
            ZRT_OK);
  ASSERT_EQ(zrt_layer_norm_stats(x.data(), m2.data(), r2.data(), N, C, 1e-5f),
            ZRT_OK);
  EXPECT_EQ(mean, m2);
  EXPECT_EQ(rstd, r2);
}

TEST(LoweringSupportTest, Bf16FillAndAccumulate) {
  std::vector<zrt_bf16> y(3), x(3);
  ASSERT_EQ(zrt_fill_bf16(y.data(), 1.5f, 3), ZRT_OK);
  EXPECT_EQ(zrt_bf16_to_f32(y[1]), 1.5f);
  ASSERT_EQ(zrt_fill_bf16(x.data(), 0.25f, 3), ZRT_OK);
  ASSERT_EQ(zrt_accumulate_bf16(x.data(), y.data(), 3), ZRT_OK);
  EXPECT_EQ(zrt_bf16_to_f32(y[2]), 1.75f);
  // The sum is rounded once: 256 + 1 is not representable in bf16 (8 bits
  // of mantissa) and rounds to even (256).
  y[0] = zrt_f32_to_bf16(256.0f);
  x[0] = zrt_f32_to_bf16(1.0f);
  ASSERT_EQ(zrt_accumulate_bf16(x.data(), y.data(), 1), ZRT_OK);
  EXPECT_EQ(zrt_bf16_to_f32(y[0]), 256.0f);
}

TEST(LoweringSupportTest, ClipCoefScaled) {
  const float ss = 16.0f, s = 0.5f; // norm = 0.5 * 4 = 2
  float coef = 0, norm = 0;
  ASSERT_EQ(zrt_clip_coef_scaled(&ss, &s, 1.0f, &coef, &norm), ZRT_OK);
  EXPECT_FLOAT_EQ(norm, 2.0f);
  EXPECT_FLOAT_EQ(coef, 0.5f * (1.0f / (2.0f + 1e-6f)));
  ASSERT_EQ(zrt_clip_coef_scaled(&ss, &s, 10.0f, &coef, &norm), ZRT_OK);
  EXPECT_EQ(coef, 0.5f); // below max_norm: no clipping
  ASSERT_EQ(zrt_clip_coef_scaled(&ss, &s, 0.0f, &coef, &norm), ZRT_OK);
  EXPECT_EQ(coef, 0.5f); // disabled
  EXPECT_EQ(zrt_clip_coef_scaled(nullptr, &s, 1.0f, &coef, &norm),
            ZRT_ERR_INVALID_ARGUMENT);
}

TEST(LoweringSupportTest, ShardAdamWEqualsWholeAdamW) {
  // Group: member 0 [0, 7) decays, member 1 [7, 10) does not; padded to 12
  // over 3 ranks (shard 4).
  const int64_t offsets[2] = {0, 7}, numels[2] = {7, 3};
  const uint8_t decay[2] = {1, 0};
  const int64_t padded = 12, shard = 4;
  std::vector<float> p = randomVec(padded, 1), g = randomVec(padded, 2);
  for (int64_t i = 10; i < padded; ++i)
    p[i] = g[i] = 0.0f; // padding
  std::vector<float> m = randomVec(padded, 3, 0.0f, 0.1f),
                     v = randomVec(padded, 4, 0.0f, 0.1f);
  for (int64_t i = 10; i < padded; ++i)
    m[i] = v[i] = 0.0f;
  const double lr = 1e-2, b1 = 0.9, b2 = 0.95, eps = 1e-8, wd = 0.1;
  const float coef = 0.8f;
  const int64_t step = 3;

  // Whole: member by member.
  std::vector<float> pw = p, mw = m, vw = v;
  ASSERT_EQ(zrt_adamw_step(pw.data(), mw.data(), vw.data(), g.data(), nullptr,
                           nullptr, 7, lr, b1, b2, eps, wd, coef, step),
            ZRT_OK);
  ASSERT_EQ(zrt_adamw_step(pw.data() + 7, mw.data() + 7, vw.data() + 7,
                           g.data() + 7, nullptr, nullptr, 3, lr, b1, b2, eps,
                           0.0, coef, step),
            ZRT_OK);

  for (int rank = 0; rank < 3; ++rank) {
    std::vector<float> ps(p.begin() + rank * shard,
                          p.begin() + (rank + 1) * shard),
        ms(m.begin() + rank * shard, m.begin() + (rank + 1) * shard),
        vs(v.begin() + rank * shard, v.begin() + (rank + 1) * shard),
        gs(g.begin() + rank * shard, g.begin() + (rank + 1) * shard);
    ASSERT_EQ(zrt_shard_adamw(ps.data(), ms.data(), vs.data(), gs.data(),
                              ZRT_F32, shard, rank, 2, offsets, numels, decay,
                              lr, b1, b2, eps, wd, coef, step),
              ZRT_OK);
    for (int64_t i = 0; i < shard; ++i) {
      const int64_t e = rank * shard + i;
      EXPECT_EQ(bitsOf(ps[i]), bitsOf(e < 10 ? pw[e] : 0.0f)) << e;
      EXPECT_EQ(bitsOf(ms[i]), bitsOf(e < 10 ? mw[e] : 0.0f)) << e;
      EXPECT_EQ(bitsOf(vs[i]), bitsOf(e < 10 ? vw[e] : 0.0f)) << e;
    }
  }

  // bf16 gradients go through zrt_adamw_step_bf16_grad.
  std::vector<zrt_bf16> gb(shard);
  zrt_cast_f32_to_bf16(g.data(), gb.data(), shard);
  std::vector<float> p1(p.begin(), p.begin() + shard),
      m1(m.begin(), m.begin() + shard), v1(v.begin(), v.begin() + shard),
      p2 = p1, m2 = m1, v2 = v1;
  ASSERT_EQ(zrt_shard_adamw(p1.data(), m1.data(), v1.data(), gb.data(),
                            ZRT_BF16, shard, 0, 2, offsets, numels, decay, lr,
                            b1, b2, eps, wd, coef, step),
            ZRT_OK);
  ASSERT_EQ(zrt_adamw_step_bf16_grad(p2.data(), m2.data(), v2.data(), gb.data(),
                                     nullptr, nullptr, shard, lr, b1, b2, eps,
                                     wd, coef, step),
            ZRT_OK);
  EXPECT_EQ(p1, p2);
  EXPECT_EQ(zrt_shard_adamw(p1.data(), m1.data(), v1.data(), gb.data(), 5,
                            shard, 0, 2, offsets, numels, decay, lr, b1, b2,
                            eps, wd, coef, step),
            ZRT_ERR_INVALID_ARGUMENT);
}

TEST(LoweringSupportTest, LocalShard) {
  std::vector<float> in = iota(12), out(4);
  ASSERT_EQ(zrt_local_shard(in.data(), out.data(), 4, 2, ZRT_F32), ZRT_OK);
  EXPECT_EQ(out, (std::vector<float>{8, 9, 10, 11}));
  EXPECT_EQ(zrt_local_shard(in.data(), out.data(), 4, -1, ZRT_F32),
            ZRT_ERR_INVALID_ARGUMENT);
}

TEST(LoweringSupportTest, ParamSeedIsDeterministicAndNameDependent) {
  EXPECT_EQ(zrt_param_seed(1, "wte"), zrt_param_seed(1, "wte"));
  EXPECT_NE(zrt_param_seed(1, "wte"), zrt_param_seed(1, "wpe"));
  EXPECT_NE(zrt_param_seed(1, "wte"), zrt_param_seed(2, "wte"));
  // FNV-1a of "" is the offset basis; splitmix64(0xcbf29ce484222325).
  uint64_t x = 0xcbf29ce484222325ull + 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  x ^= x >> 31;
  EXPECT_EQ(zrt_param_seed(0, ""), x);
}

TEST(LoweringSupportTest, InitParamSliceShardedEqualsWhole) {
  // Two members (normal 9 elements, ones 3 elements) in a group padded to
  // 16 over 4 ranks; each rank's shard equals the slice of the whole
  // initialization, padding untouched (0).
  const uint64_t s0 = zrt_param_seed(42, "a"), s1 = zrt_param_seed(42, "b");
  std::vector<float> whole(16, 0.0f);
  ASSERT_EQ(zrt_init_param_slice(whole.data(), ZRT_F32, 0, 9, 0, 9,
                                 ZRT_INIT_NORMAL, 0.02f, s0),
            ZRT_OK);
  ASSERT_EQ(zrt_init_param_slice(whole.data() + 9, ZRT_F32, 0, 3, 0, 3,
                                 ZRT_INIT_ONES, 0.0f, s1),
            ZRT_OK);
  std::vector<float> direct(9);
  ASSERT_EQ(zrt_init_normal(direct.data(), 9, 0.0f, 0.02f, s0, 0), ZRT_OK);
  for (int i = 0; i < 9; ++i)
    EXPECT_EQ(bitsOf(whole[i]), bitsOf(direct[i]));
  for (int rank = 0; rank < 4; ++rank) {
    std::vector<float> shard(4, 0.0f);
    ASSERT_EQ(zrt_init_param_slice(shard.data(), ZRT_F32, rank * 4, 4, 0, 9,
                                   ZRT_INIT_NORMAL, 0.02f, s0),
              ZRT_OK);
    ASSERT_EQ(zrt_init_param_slice(shard.data(), ZRT_F32, rank * 4, 4, 9, 3,
                                   ZRT_INIT_ONES, 0.0f, s1),
              ZRT_OK);
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(bitsOf(shard[i]), bitsOf(whole[rank * 4 + i])) << rank;
  }
  // bf16: the rounding of the f32 values (what a master copy holds).
  std::vector<zrt_bf16> h(9);
  ASSERT_EQ(zrt_init_param_slice(h.data(), ZRT_BF16, 0, 9, 0, 9,
                                 ZRT_INIT_NORMAL, 0.02f, s0),
            ZRT_OK);
  for (int i = 0; i < 9; ++i)
    EXPECT_EQ(h[i], zrt_f32_to_bf16(direct[i]));
  // Zeros overwrite.
  std::vector<float> z(3, 5.0f);
  ASSERT_EQ(zrt_init_param_slice(z.data(), ZRT_F32, 0, 3, 0, 3, ZRT_INIT_ZEROS,
                                 0.0f, 0),
            ZRT_OK);
  EXPECT_EQ(z, (std::vector<float>{0, 0, 0}));
  EXPECT_EQ(zrt_init_param_slice(z.data(), ZRT_F32, 0, 3, 0, 3, 9, 0.0f, 0),
            ZRT_ERR_INVALID_ARGUMENT);
}

TEST(LoweringSupportTest, InitParamCutEqualsItsPartOfTheWhole) {
  // A full [2, 12, 3] tensor cut on its middle dimension in 3 blocks
  // (packed q/k/v) of 2 slices: part t holds rows b*4 + t*2 + {0, 1} of
  // each block, for each of the 2 outer indices.
  const int64_t outer = 2, rows = 12, inner = 3, blocks = 3, parts = 2;
  const uint64_t seed = zrt_param_seed(7, "h0.attn.c_attn.weight");
  std::vector<float> full(outer * rows * inner);
  ASSERT_EQ(zrt_init_normal(full.data(), static_cast<int64_t>(full.size()),
                            0.0f, 0.02f, seed, 0),
            ZRT_OK);
  const int64_t s = rows / (blocks * parts), local = outer * blocks * s * inner;
  for (int64_t part = 0; part < parts; ++part) {
    std::vector<float> mine(local, -1.0f);
    ASSERT_EQ(zrt_init_param_cut(mine.data(), ZRT_F32, 0, local, 0, outer,
                                 rows, inner, blocks, parts, part,
                                 ZRT_INIT_NORMAL, 0.02f, seed),
              ZRT_OK)
        << zrt_last_error();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t b = 0; b < blocks; ++b)
        for (int64_t j = 0; j < s; ++j)
          for (int64_t i = 0; i < inner; ++i) {
            int64_t l = ((o * blocks + b) * s + j) * inner + i;
            int64_t f = (o * rows + b * (rows / blocks) + part * s + j) * inner + i;
            EXPECT_EQ(bitsOf(mine[l]), bitsOf(full[f])) << part << " " << l;
          }
    // A data-parallel shard of a group holding the cut at offset 5: the
    // shard [8, 8 + 16) of the flat layout, padding untouched.
    std::vector<float> shard(16, -1.0f);
    ASSERT_EQ(zrt_init_param_cut(shard.data(), ZRT_F32, 8, 16, 5, outer,
                                 rows, inner, blocks, parts, part,
                                 ZRT_INIT_NORMAL, 0.02f, seed),
              ZRT_OK);
    for (int64_t k = 0; k < 16; ++k)
      EXPECT_EQ(bitsOf(shard[k]), bitsOf(mine[8 + k - 5])) << part << " " << k;
  }
  // Constants fill the overlap only.
  std::vector<float> ones(4, -1.0f);
  ASSERT_EQ(zrt_init_param_cut(ones.data(), ZRT_F32, 34, 4, 0, outer, rows,
                               inner, blocks, parts, 0, ZRT_INIT_ONES, 0.0f, 0),
            ZRT_OK);
  EXPECT_EQ(ones, (std::vector<float>{1, 1, -1, -1}));
  // Errors name the numbers.
  EXPECT_EQ(zrt_init_param_cut(ones.data(), ZRT_F32, 0, 4, 0, 1, 10, 1, 3, 2,
                               0, ZRT_INIT_NORMAL, 0.02f, 0),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zrt_last_error())
                .find("10 rows are not 3 blocks of 2 equal slices"),
            std::string::npos);
  EXPECT_EQ(zrt_init_param_cut(ones.data(), ZRT_F32, 0, 4, 0, 1, 12, 1, 3, 2,
                               2, ZRT_INIT_NORMAL, 0.02f, 0),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zrt_last_error()).find("part 2 is outside [0, 2)"),
            std::string::npos);
}

} // namespace
