// flash_attention.cu (SIMT flash attention, f32 and bf16 instantiations)
// on the emulator: the f32 kernels against a double-precision reference
// (tolerances), bitwise identical under every scheduling order; the bf16
// kernels bit for bit against the f32 kernels on the widened inputs,
// rounded (the same f32 arithmetic), with aligned (vector) and unaligned
// (scalar) tensors and guard elements; smaller shared-memory opt-ins and a
// small gridDim.y cap reach the fallbacks and the slice loop. The packed
// entry points (qkv [B, T, 3 H D], out / dout [B, T, H D]; f32 and bf16)
// bit for bit against the [B, H, T, D] ones on split copies, with the
// packed tensors aligned and one element off (vector and scalar loads).
// The grouped-query kernels (Hkv K/V heads) bit for bit the multi-head ones
// on repeated K/V (out, lse, dq; dk / dv within rounding of the group sums),
// in every order, through the fast, fallback and generic paths and the
// slice loop; their bf16 forms bit for bit the f32 ones on widened values.
#include "test_util.h"
#include "zrt_cuda.h"

#include <algorithm>
#include <type_traits>

using namespace emu_test;

static Vec rndSym(int64_t n, uint32_t seed, float a = 1) {
  return emu_test::rnd(n, seed, -a, a);
}
struct RefOut {
  std::vector<double> out, lse, dq, dk, dv;
};
static void refForward(const Vec &q, const Vec &k, const Vec &v, int64_t BH,
                       int64_t T, int64_t D, RefOut &r) {
  const double s = 1.0f / std::sqrt((float)D);
  r.out.assign(BH * T * D, 0);
  r.lse.assign(BH * T, 0);
  std::vector<double> S(T);
  for (int64_t bh = 0; bh < BH; ++bh) {
    const int64_t b = bh * T * D;
    for (int64_t i = 0; i < T; ++i) {
      double m = -INFINITY;
      for (int64_t j = 0; j <= i; ++j) {
        double acc = 0;
        for (int64_t d = 0; d < D; ++d)
          acc += (double)q[b + i * D + d] * k[b + j * D + d];
        S[j] = s * acc;
        m = std::max(m, S[j]);
      }
      double l = 0;
      for (int64_t j = 0; j <= i; ++j)
        l += std::exp(S[j] - m);
      const double L = m + std::log(l);
      r.lse[bh * T + i] = L;
      for (int64_t j = 0; j <= i; ++j) {
        const double p = std::exp(S[j] - L);
        for (int64_t d = 0; d < D; ++d)
          r.out[b + i * D + d] += p * v[b + j * D + d];
      }
    }
  }
}
static void refBackward(const Vec &dout, const Vec &q, const Vec &k,
                        const Vec &v, const Vec &o, const Vec &lse, int64_t BH,
                        int64_t T, int64_t D, RefOut &r) {
  const double s = 1.0f / std::sqrt((float)D);
  r.dq.assign(BH * T * D, 0);
  r.dk.assign(BH * T * D, 0);
  r.dv.assign(BH * T * D, 0);
  for (int64_t bh = 0; bh < BH; ++bh) {
    const int64_t b = bh * T * D;
    for (int64_t i = 0; i < T; ++i) {
      double delta = 0;
      for (int64_t d = 0; d < D; ++d)
        delta += (double)dout[b + i * D + d] * o[b + i * D + d];
      for (int64_t j = 0; j <= i; ++j) {
        double acc = 0, dp = 0;
        for (int64_t d = 0; d < D; ++d) {
          acc += (double)q[b + i * D + d] * k[b + j * D + d];
          dp += (double)dout[b + i * D + d] * v[b + j * D + d];
        }
        const double p = std::exp(s * acc - lse[bh * T + i]);
        const double ds = p * (dp - delta);
        for (int64_t d = 0; d < D; ++d) {
          r.dv[b + j * D + d] += p * dout[b + i * D + d];
          r.dq[b + i * D + d] += s * ds * k[b + j * D + d];
          r.dk[b + j * D + d] += s * ds * q[b + i * D + d];
        }
      }
    }
  }
}
static bool close(const std::vector<double> &ref, const Vec &got, double atol,
                  double rtol, const char *what, const std::string &cs) {
  double worst = 0;
  size_t at = 0;
  bool ok = true;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double err = std::fabs(ref[i] - got[i]);
    const double tol = atol + rtol * std::fabs(ref[i]);
    if (!(err <= tol)) {
      if (ok)
        fprintf(stderr, "FAIL %s %s at %zu: ref %.9g got %.9g\n", cs.c_str(),
                what, i, ref[i], got[i]);
      ok = false;
    }
    if (err / tol > worst || std::isnan(err)) {
      worst = err / tol;
      at = i;
    }
  }
  printf("  %-4s worst err/tol %.3f (at %zu)\n", what, worst, at);
  return ok;
}

/// bf16 buffer of n elements at element offset `off` from a 16-byte-aligned
/// base.
static bool sameB(const VecB &ref, const zrt_bf16 *got, const char *what,
                  const std::string &cs) {
  for (size_t i = 0; i < ref.size(); ++i)
    if (ref[i] != got[i]) {
      fprintf(stderr, "FAIL bf16 %s %s at %zu: ref 0x%04x got 0x%04x\n",
              cs.c_str(), what, i, ref[i], got[i]);
      return false;
    }
  return true;
}
static bool sameF(const Vec &ref, const Vec &got, const char *what,
                  const std::string &cs) {
  if (memcmp(ref.data(), got.data(), ref.size() * 4)) {
    fprintf(stderr, "FAIL bf16 %s %s differs from f32 on widened values\n",
            cs.c_str(), what);
    return false;
  }
  return true;
}
/// bf16 instantiations against the f32 ones on the widened values, rounded:
/// bit for bit (the same f32 arithmetic). `off`: element offset of every
/// bf16 buffer from a 16-byte boundary (0: vector tile loads, else scalar).
static bool checkBf16(const Vec &q0, const Vec &k0, const Vec &v0,
                      const Vec &dout0, int64_t B, int64_t H, int64_t T,
                      int64_t D, int off, const std::string &cs) {
  const size_t n = q0.size(), nl = B * H * T;
  const VecB qb = toB(q0), kb = toB(k0), vb = toB(v0), db = toB(dout0);
  const Vec qw = wid(qb), kw = wid(kb), vw = wid(vb), dw = wid(db);
  Vec outW(n, NAN), lseW(nl, NAN);
  if (zrt_cuda::attention_forward(qw.data(), kw.data(), vw.data(), outW.data(),
                                  lseW.data(), nullptr, B, H, T, D))
    return false;
  BufB Q(n, off, 0x7fc0), K(n, off, 0x7fc0), V(n, off, 0x7fc0),
      DO(n, off, 0x7fc0), O(n, off, 0x7fc0), DQ(n, off, 0x7fc0),
      DK(n, off, 0x7fc0), DV(n, off, 0x7fc0);
  std::copy(qb.begin(), qb.end(), Q.p);
  std::copy(kb.begin(), kb.end(), K.p);
  std::copy(vb.begin(), vb.end(), V.p);
  std::copy(db.begin(), db.end(), DO.p);
  Vec lseB(nl, NAN);
  if (zrt_cuda::attention_forward_bf16_simt(Q.p, K.p, V.p, O.p, lseB.data(),
                                            nullptr, B, H, T, D)) {
    printf("bf16 forward failed %s\n", zrt_cuda::last_error());
    return false;
  }
  bool ok = sameB(toB(outW), O.p, "out", cs) && sameF(lseW, lseB, "lse", cs);
  // Backward from the bf16 forward's out and lse.
  const VecB ob(O.p, O.p + n);
  const Vec ow = wid(ob);
  Vec dqW(n, NAN), dkW(n, NAN), dvW(n, NAN);
  if (zrt_cuda::attention_backward(dw.data(), qw.data(), kw.data(), vw.data(),
                                   ow.data(), lseB.data(), dqW.data(),
                                   dkW.data(), dvW.data(), nullptr, B, H, T, D))
    return false;
  if (zrt_cuda::attention_backward_bf16_simt(DO.p, Q.p, K.p, V.p, O.p,
                                             lseB.data(), DQ.p, DK.p, DV.p,
                                             nullptr, B, H, T, D)) {
    printf("bf16 backward failed %s\n", zrt_cuda::last_error());
    return false;
  }
  ok = sameB(toB(dqW), DQ.p, "dq", cs) && ok;
  ok = sameB(toB(dkW), DK.p, "dk", cs) && ok;
  ok = sameB(toB(dvW), DV.p, "dv", cs) && ok;
  // Nothing written outside the tensors (the fill is a NaN pattern).
  for (BufB *b : {&O, &DQ, &DK, &DV}) {
    for (zrt_bf16 *p = b->store.data(); p < b->p; ++p)
      if (*p != 0x7fc0) {
        fprintf(stderr, "FAIL bf16 %s write before buffer\n", cs.c_str());
        ok = false;
        break;
      }
    for (zrt_bf16 *p = b->p + n; p < b->store.data() + b->store.size(); ++p)
      if (*p != 0x7fc0) {
        fprintf(stderr, "FAIL bf16 %s write after buffer\n", cs.c_str());
        ok = false;
        break;
      }
  }
  printf("  bf16 (offset %d): %s\n", off,
         ok ? "bit-identical to f32 on widened values, rounded" : "MISMATCH");
  return ok;
}
/// The packed entry points (E = float: attention_*_packed, zrt_bf16:
/// attention_*_packed_bf16_simt) against the [B, H, T, D] ones on split
/// copies: out, lse, dqkv bit for bit, nothing written outside out and
/// dqkv. `off`: element offset of the packed tensors from a 64-byte
/// boundary (0: vector tile loads where the strides allow, else scalar).
template <class E>
static bool checkPacked(int64_t B, int64_t H, int64_t T, int64_t D, int off,
                        uint32_t seed, const std::string &cs) {
  constexpr bool bf16 = std::is_same_v<E, zrt_bf16>;
  using V = std::vector<E>;
  auto make = [](const Vec &x) {
    if constexpr (bf16)
      return toB(x);
    else
      return x;
  };
  const int64_t C = H * D, W = 3 * C, n = B * T * C, nl = B * H * T;
  const V qkv = make(rndSym(B * T * W, seed)), dout = make(rndSym(n, seed + 1));
  const V q = splitHeads(qkv, B, T, H, D, W, 0),
          k = splitHeads(qkv, B, T, H, D, W, C),
          v = splitHeads(qkv, B, T, H, D, W, 2 * C),
          doH = splitHeads(dout, B, T, H, D, C, 0);
  V outH(n), dqH(n), dkH(n), dvH(n);
  Vec lseH(nl, NAN);
  int st;
  if constexpr (bf16) {
    st = zrt_cuda::attention_forward_bf16_simt(q.data(), k.data(), v.data(),
                                               outH.data(), lseH.data(), nullptr,
                                               B, H, T, D);
    st = st ? st
            : zrt_cuda::attention_backward_bf16_simt(
                  doH.data(), q.data(), k.data(), v.data(), outH.data(),
                  lseH.data(), dqH.data(), dkH.data(), dvH.data(), nullptr, B,
                  H, T, D);
  } else {
    st = zrt_cuda::attention_forward(q.data(), k.data(), v.data(), outH.data(),
                                     lseH.data(), nullptr, B, H, T, D);
    st = st ? st
            : zrt_cuda::attention_backward(doH.data(), q.data(), k.data(),
                                           v.data(), outH.data(), lseH.data(),
                                           dqH.data(), dkH.data(), dvH.data(),
                                           nullptr, B, H, T, D);
  }
  if (st) {
    printf("[B, H, T, D] kernels failed %s\n", zrt_cuda::last_error());
    return false;
  }
  V refOut(n), refDqkv(qkv.size());
  mergeHeads(outH, refOut, B, T, H, D, C, 0);
  mergeHeads(dqH, refDqkv, B, T, H, D, W, 0);
  mergeHeads(dkH, refDqkv, B, T, H, D, W, C);
  mergeHeads(dvH, refDqkv, B, T, H, D, W, 2 * C);

  E fill;
  if constexpr (bf16)
    fill = 0x7fc0;
  else
    fill = NAN;
  Guarded<E> P(qkv.size(), off, fill), DP(qkv.size(), off, fill),
      O(n, off, fill), DO(n, off, fill);
  P.set(qkv);
  DO.set(dout);
  Vec lse(nl, NAN);
  if constexpr (bf16) {
    st = zrt_cuda::attention_forward_packed_bf16_simt(P.p, O.p, lse.data(),
                                                      nullptr, B, T, H, D);
    st = st ? st
            : zrt_cuda::attention_backward_packed_bf16_simt(
                  DO.p, P.p, O.p, lse.data(), DP.p, nullptr, B, T, H, D);
  } else {
    st = zrt_cuda::attention_forward_packed(P.p, O.p, lse.data(), nullptr, B, T,
                                            H, D);
    st = st ? st
            : zrt_cuda::attention_backward_packed(DO.p, P.p, O.p, lse.data(),
                                                  DP.p, nullptr, B, T, H, D);
  }
  if (st) {
    printf("packed kernels failed %s\n", zrt_cuda::last_error());
    return false;
  }
  const V out = O.get(), dqkv = DP.get();
  const bool same[4] = {!memcmp(out.data(), refOut.data(), n * sizeof(E)),
                        !memcmp(lse.data(), lseH.data(), nl * 4),
                        !memcmp(dqkv.data(), refDqkv.data(),
                                dqkv.size() * sizeof(E)),
                        O.guardsOk() && DP.guardsOk()};
  const char *what[4] = {"out", "lse", "dqkv", "guards"};
  bool ok = true;
  for (int t = 0; t < 4; ++t)
    if (!same[t]) {
      fprintf(stderr, "FAIL packed %s %s (offset %d): %s differs from the "
              "[B, H, T, D] kernels\n", bf16 ? "bf16" : "f32", cs.c_str(),
              off, what[t]);
      ok = false;
    }
  printf("  packed %s (offset %d): %s\n", bf16 ? "bf16" : "f32", off,
         ok ? "bit-identical to the [B, H, T, D] kernels on split copies"
            : "MISMATCH");
  return ok;
}

/// The grouped-query kernels (attention_*_gqa: Hkv K/V heads shared by
/// H / Hkv query heads) in every scheduling order: f32 out, lse, dq bit for
/// bit the multi-head kernels on repeated K/V (each query head runs the
/// same arithmetic), dk / dv within f32 rounding of the group sums of
/// theirs; bf16 (attention_*_gqa_bf16_simt, tensors `off` elements past a
/// 16-byte boundary) bit for bit the f32 GQA kernels on the widened
/// inputs, rounded; every order bit for bit the first.
static bool checkGqa(int64_t B, int64_t H, int64_t Hkv, int64_t T, int64_t D,
                     int off, const std::vector<int> &orders, uint32_t seed,
                     const std::string &cs) {
  const int64_t nq = B * H * T * D, nk = B * Hkv * T * D, nl = B * H * T,
                slice = T * D, group = H / Hkv;
  const Vec q = rndSym(nq, seed), k = rndSym(nk, seed + 1),
            v = rndSym(nk, seed + 2), dout = rndSym(nq, seed + 3);
  auto repeat = [&](const Vec &x) {
    Vec r(nq);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        std::copy_n(x.begin() + (b * Hkv + h / group) * slice, slice,
                    r.begin() + (b * H + h) * slice);
    return r;
  };
  emu::order = orders[0];
  const Vec rk = repeat(k), rv = repeat(v);
  Vec mOut(nq, NAN), mLse(nl, NAN), mDq(nq, NAN), mDk(nq, NAN), mDv(nq, NAN);
  if (zrt_cuda::attention_forward(q.data(), rk.data(), rv.data(), mOut.data(),
                                  mLse.data(), nullptr, B, H, T, D) ||
      zrt_cuda::attention_backward(dout.data(), q.data(), rk.data(), rv.data(),
                                   mOut.data(), mLse.data(), mDq.data(),
                                   mDk.data(), mDv.data(), nullptr, B, H, T,
                                   D)) {
    printf("multi-head kernels failed %s\n", zrt_cuda::last_error());
    return false;
  }
  std::vector<double> sumDk(nk, 0.0), sumDv(nk, 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < slice; ++i) {
        sumDk[(b * Hkv + h / group) * slice + i] += mDk[(b * H + h) * slice + i];
        sumDv[(b * Hkv + h / group) * slice + i] += mDv[(b * H + h) * slice + i];
      }
  const double atol = 1e-6 * std::sqrt((double)T) * group, rtol = 1e-5;
  bool ok = true;
  Vec first[5];
  for (size_t oi = 0; oi < orders.size(); ++oi) {
    emu::order = orders[oi];
    Vec out(nq, NAN), lse(nl, NAN), dq(nq, NAN), dk(nk, NAN), dv(nk, NAN);
    if (zrt_cuda::attention_forward_gqa(q.data(), k.data(), v.data(),
                                        out.data(), lse.data(), nullptr, B, H,
                                        Hkv, T, D) ||
        zrt_cuda::attention_backward_gqa(dout.data(), q.data(), k.data(),
                                         v.data(), out.data(), lse.data(),
                                         dq.data(), dk.data(), dv.data(),
                                         nullptr, B, H, Hkv, T, D)) {
      printf("GQA kernels failed %s\n", zrt_cuda::last_error());
      return false;
    }
    if (oi == 0) {
      ok = sameF(mOut, out, "GQA out vs repeated K/V", cs) && ok;
      ok = sameF(mLse, lse, "GQA lse vs repeated K/V", cs) && ok;
      ok = sameF(mDq, dq, "GQA dq vs repeated K/V", cs) && ok;
      ok = close(sumDk, dk, atol, rtol, "dk", cs) && ok;
      ok = close(sumDv, dv, atol, rtol, "dv", cs) && ok;
      first[0] = out, first[1] = lse, first[2] = dq, first[3] = dk,
      first[4] = dv;
      continue;
    }
    const Vec *g[5] = {&out, &lse, &dq, &dk, &dv};
    for (int t = 0; t < 5; ++t)
      if (memcmp(first[t].data(), g[t]->data(), first[t].size() * 4)) {
        printf("  FAIL: GQA output %d differs under scheduling order %d\n", t,
               emu::order);
        ok = false;
      }
  }
  // bf16 against the f32 GQA kernels on the widened values.
  emu::order = orders.back();
  const VecB qb = toB(q), kb = toB(k), vb = toB(v), db = toB(dout);
  const Vec qw = wid(qb), kw = wid(kb), vw = wid(vb), dw = wid(db);
  BufB Q(nq, off, kNaNB), K(nk, off, kNaNB), V(nk, off, kNaNB),
      DO(nq, off, kNaNB), O(nq, off, kNaNB), DQ(nq, off, kNaNB),
      DK(nk, off, kNaNB), DV(nk, off, kNaNB);
  Q.set(qb);
  K.set(kb);
  V.set(vb);
  DO.set(db);
  Vec lseB(nl, NAN), outW(nq, NAN), lseW(nl, NAN);
  if (zrt_cuda::attention_forward_gqa_bf16_simt(Q.p, K.p, V.p, O.p,
                                                lseB.data(), nullptr, B, H,
                                                Hkv, T, D) ||
      zrt_cuda::attention_forward_gqa(qw.data(), kw.data(), vw.data(),
                                      outW.data(), lseW.data(), nullptr, B, H,
                                      Hkv, T, D)) {
    printf("GQA forward failed %s\n", zrt_cuda::last_error());
    return false;
  }
  ok = sameB(toB(outW), O.p, "GQA out", cs) && ok;
  ok = sameF(lseW, lseB, "GQA lse", cs) && ok;
  const Vec ow = wid(O.get());
  Vec dqW(nq, NAN), dkW(nk, NAN), dvW(nk, NAN);
  if (zrt_cuda::attention_backward_gqa_bf16_simt(DO.p, Q.p, K.p, V.p, O.p,
                                                 lseB.data(), DQ.p, DK.p, DV.p,
                                                 nullptr, B, H, Hkv, T, D) ||
      zrt_cuda::attention_backward_gqa(dw.data(), qw.data(), kw.data(),
                                       vw.data(), ow.data(), lseB.data(),
                                       dqW.data(), dkW.data(), dvW.data(),
                                       nullptr, B, H, Hkv, T, D)) {
    printf("GQA backward failed %s\n", zrt_cuda::last_error());
    return false;
  }
  ok = sameB(toB(dqW), DQ.p, "GQA dq", cs) && ok;
  ok = sameB(toB(dkW), DK.p, "GQA dk", cs) && ok;
  ok = sameB(toB(dvW), DV.p, "GQA dv", cs) && ok;
  for (BufB *b : {&O, &DQ, &DK, &DV})
    if (!b->guardsOk()) {
      fprintf(stderr, "FAIL GQA bf16 %s: write outside a tensor\n",
              cs.c_str());
      ok = false;
    }
  printf("  GQA Hkv=%lld: %s\n", (long long)Hkv,
         ok ? "out, lse, dq bit-identical to repeated K/V, dk / dv its group "
              "sums; bf16 bit-identical to f32 on widened values"
            : "MISMATCH");
  return ok;
}

int main(int argc, char **argv) {
  const Args args(argc, argv);
  struct Case {
    int64_t B, H, T, D;
    int optin;
    int64_t ycap = 65535;
    float amp = 1;
  };
  const std::vector<Case> ci = {{1, 1, 1, 1, 232448},
                                {2, 3, 65, 16, 232448},
                                {1, 2, 130, 64, 232448},
                                {1, 1, 100, 128, 232448},
                                {1, 2, 70, 24, 232448},
                                {1, 1, 33, 3, 232448},
                                {1, 1, 40, 160, 232448},
                                {1, 1, 70, 64, 64 * 1024},
                                {1, 1, 70, 128, 100 * 1024},
                                {1, 3, 40, 24, 65536, 2},
                                {1, 2, 100, 64, 232448, 65535, 4.0f}};
  const std::vector<Case> full = {{1, 1, 1, 1, 232448},
                                  {2, 3, 65, 16, 232448},
                                  {1, 2, 130, 64, 232448},
                                  {1, 1, 100, 128, 232448},
                                  {1, 2, 70, 24, 232448},
                                  {2, 1, 17, 64, 232448},
                                  {1, 1, 33, 3, 232448},
                                  {1, 1, 40, 160, 232448},
                                  {1, 2, 130, 64, 64 * 1024},
                                  {1, 1, 70, 128, 100 * 1024},
                                  {1, 1, 129, 32, 232448},
                                  {2, 3, 130, 64, 232448, 4},
                                  {2, 3, 70, 160, 232448, 4},
                                  {2, 3, 70, 24, 65536, 4},
                                  {1, 2, 200, 64, 232448, 65535, 4.0f},
                                  {1, 1, 150, 128, 232448, 65535, 3.0f}};
  // Packed cases (checkPacked only), numbered after the cases above: the
  // fast kernels (vector and scalar loads), the fallbacks of a small
  // opt-in, the generic path (D > 128), the slice loop (gridDim.y cap).
  const std::vector<Case> packedCi = {{2, 3, 65, 16, 232448},
                                      {1, 3, 40, 24, 65536, 2},
                                      {2, 2, 9, 160, 232448, 3}};
  const std::vector<Case> packedFull = {{2, 3, 65, 16, 232448},
                                        {1, 3, 40, 24, 65536, 2},
                                        {2, 2, 9, 160, 232448, 3},
                                        {2, 3, 130, 64, 232448, 4},
                                        {1, 2, 70, 128, 232448},
                                        {2, 1, 70, 128, 100 * 1024},
                                        {2, 2, 70, 64, 64 * 1024},
                                        {3, 2, 33, 3, 232448}};
  const std::vector<Case> &cases = args.set == "ci" ? ci : full;
  const std::vector<Case> &packed = args.set == "ci" ? packedCi : packedFull;
  // Grouped-query cases (checkGqa), numbered after the packed ones: the
  // fast kernels, the dK/dV fallback of a small opt-in with the slice loop,
  // the generic path (D > 128) with the slice loop.
  struct GqaCase {
    int64_t B, H, Hkv, T, D;
    int optin;
    int64_t ycap;
    int off;
  };
  const std::vector<GqaCase> gqaCi = {{2, 4, 2, 70, 16, 232448, 65535, 0},
                                      {1, 4, 1, 40, 24, 65536, 2, 1},
                                      {2, 4, 2, 9, 160, 232448, 3, 3}};
  const std::vector<GqaCase> gqaFull = {{2, 4, 2, 70, 16, 232448, 65535, 0},
                                        {1, 4, 1, 40, 24, 65536, 2, 1},
                                        {2, 4, 2, 9, 160, 232448, 3, 3},
                                        {1, 8, 2, 130, 64, 232448, 65535, 0},
                                        {2, 6, 3, 70, 128, 100 * 1024, 4, 2},
                                        {1, 4, 4, 65, 32, 232448, 65535, 0}};
  const std::vector<GqaCase> &gqa = args.set == "ci" ? gqaCi : gqaFull;
  bool allok = true;
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    if (!args.selected((int)ci))
      continue;
    const Case c = cases[ci];
    emu::optin = c.optin;
    emu::ySlicesCap = c.ycap;
    const int64_t BH = c.B * c.H, n = BH * c.T * c.D, nl = BH * c.T;
    std::string cs = "B=" + std::to_string(c.B) + " H=" + std::to_string(c.H) +
                     " T=" + std::to_string(c.T) + " D=" + std::to_string(c.D) +
                     " optin=" + std::to_string(c.optin) +
                     " ycap=" + std::to_string(c.ycap);
    printf("case %zu: %s\n", ci, cs.c_str());
    Vec q = rndSym(n, 1 + ci, c.amp), k = rndSym(n, 100 + ci, c.amp),
        v = rndSym(n, 200 + ci), dout = rndSym(n, 300 + ci);
    RefOut r;
    refForward(q, k, v, BH, c.T, c.D, r);
    Vec oRef(n), lseRef(nl);
    for (int64_t i = 0; i < n; ++i)
      oRef[i] = (float)r.out[i];
    for (int64_t i = 0; i < nl; ++i)
      lseRef[i] = (float)r.lse[i];
    refBackward(dout, q, k, v, oRef, lseRef, BH, c.T, c.D, r);
    const double atol = 1e-6 * std::sqrt((double)c.T), rtol = 1e-5;
    Vec first[5];
    for (size_t oi = 0; oi < args.orders.size(); ++oi) {
      emu::order = args.orders[oi];
      Vec out(n, NAN), lse(nl, NAN), dq(n, NAN), dk(n, NAN), dv(n, NAN);
      int st =
          zrt_cuda::attention_forward(q.data(), k.data(), v.data(), out.data(),
                                      lse.data(), nullptr, c.B, c.H, c.T, c.D);
      if (st) {
        printf("forward status %d %s\n", st, zrt_cuda::last_error());
        return 1;
      }
      st = zrt_cuda::attention_backward(
          dout.data(), q.data(), k.data(), v.data(), oRef.data(), lseRef.data(),
          dq.data(), dk.data(), dv.data(), nullptr, c.B, c.H, c.T, c.D);
      if (st) {
        printf("backward status %d %s\n", st, zrt_cuda::last_error());
        return 1;
      }
      if (oi == 0) {
        allok &= close(r.out, out, atol, rtol, "out", cs);
        allok &= close(r.lse, lse, atol, rtol, "lse", cs);
        allok &= close(r.dq, dq, atol, rtol, "dq", cs);
        allok &= close(r.dk, dk, atol, rtol, "dk", cs);
        allok &= close(r.dv, dv, atol, rtol, "dv", cs);
        first[0] = out;
        first[1] = lse;
        first[2] = dq;
        first[3] = dk;
        first[4] = dv;
      } else {
        Vec *g[5] = {&out, &lse, &dq, &dk, &dv};
        for (int t = 0; t < 5; ++t)
          if (memcmp(first[t].data(), g[t]->data(), first[t].size() * 4)) {
            printf("  FAIL: output %d differs under scheduling order %d\n", t,
                   emu::order);
            allok = false;
          }
      }
    }
    // bf16 instantiations (one scheduling order per case, rotating).
    emu::order = args.orders[ci % args.orders.size()];
    allok &= checkBf16(q, k, v, dout, c.B, c.H, c.T, c.D, 0, cs);
    allok &=
        checkBf16(q, k, v, dout, c.B, c.H, c.T, c.D, (int)(1 + ci % 7), cs);
  }
  for (size_t pi = 0; pi < packed.size(); ++pi) {
    const size_t ci = cases.size() + pi;
    if (!args.selected((int)ci))
      continue;
    const Case c = packed[pi];
    emu::optin = c.optin;
    emu::ySlicesCap = c.ycap;
    emu::order = args.orders[ci % args.orders.size()];
    std::string cs = "B=" + std::to_string(c.B) + " H=" + std::to_string(c.H) +
                     " T=" + std::to_string(c.T) + " D=" + std::to_string(c.D) +
                     " optin=" + std::to_string(c.optin) +
                     " ycap=" + std::to_string(c.ycap);
    printf("case %zu: packed %s\n", ci, cs.c_str());
    // Aligned (offset 0) and one element off; in CI one of them per element
    // type, alternating between the cases.
    for (int off : {0, 1}) {
      if (args.set == "ci" && off != (int)(pi % 2))
        allok &= checkPacked<float>(c.B, c.H, c.T, c.D, off, 400 + ci, cs);
      else if (args.set == "ci")
        allok &= checkPacked<zrt_bf16>(c.B, c.H, c.T, c.D, off, 500 + ci, cs);
      else {
        allok &= checkPacked<float>(c.B, c.H, c.T, c.D, off, 400 + ci, cs);
        allok &= checkPacked<zrt_bf16>(c.B, c.H, c.T, c.D, off, 500 + ci, cs);
      }
    }
  }
  for (size_t gi = 0; gi < gqa.size(); ++gi) {
    const size_t ci = cases.size() + packed.size() + gi;
    if (!args.selected((int)ci))
      continue;
    const GqaCase c = gqa[gi];
    emu::optin = c.optin;
    emu::ySlicesCap = c.ycap;
    std::string cs = "B=" + std::to_string(c.B) + " H=" + std::to_string(c.H) +
                     " Hkv=" + std::to_string(c.Hkv) +
                     " T=" + std::to_string(c.T) + " D=" + std::to_string(c.D) +
                     " optin=" + std::to_string(c.optin) +
                     " ycap=" + std::to_string(c.ycap);
    printf("case %zu: GQA %s\n", ci, cs.c_str());
    allok &= checkGqa(c.B, c.H, c.Hkv, c.T, c.D, c.off, args.orders,
                      600 + (uint32_t)ci, cs);
  }
  printf(allok ? "ALL OK\n" : "FAILURES\n");
  return allok ? 0 : 1;
}
