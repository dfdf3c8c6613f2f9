// flash_attention_tc.cu (tensor-core attention) on the emulator, against the
// CPU runtime's f32 zrt_attention_forward / zrt_attention_backward on the
// widened bf16 inputs: tolerances on out, lse, dq, dk, dv; bitwise identical
// results under every scheduling order; guard elements around the outputs
// untouched; cp.async sources inside the tensors; the race detector and
// the fragment-layout checks of shim.h abort on any violation. Packed cases
// (attention_*_packed_bf16_tc on qkv [B, T, 3 H D], out / dout [B, T, H D])
// against the [B, H, T, D] kernels on split copies, bit for bit, with the
// packed tensors aligned (cp.async) or not (plain loads), under every
// scheduling order. Grouped-query cases (attention_*_gqa_bf16_tc, Hkv K/V
// heads shared by H / Hkv query heads): out, lse, dq bit for bit the
// kernels on repeated K/V, dk / dv within the tolerances of the CPU's f32
// GQA, bit for bit under every order, aligned and not, with a work loop.
#include "flash_attention_tc.h"
#include "test_util.h"

#include <algorithm>

using namespace emu_test;

namespace {
struct Stat {
  double maxErr = 0, maxRef = 0,
         worstRel = 0; // worstRel: max |err| / (|ref| + 0.05 max|ref|)
  bool nan = false;
};
Stat compare(const Vec &ref, const Vec &got) {
  Stat s;
  for (float r : ref)
    s.maxRef = std::max(s.maxRef, (double)std::fabs(r));
  for (size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(got[i]))
      s.nan = true;
    const double e = std::fabs((double)ref[i] - got[i]);
    s.maxErr = std::max(s.maxErr, e);
    s.worstRel = std::max(
        s.worstRel, e / (std::fabs(ref[i]) + 0.05 * std::max(s.maxRef, 1e-3)));
  }
  return s;
}
struct Case {
  int64_t B, H, T, D;
  float amp;
  int shift;
  int64_t maxGrid;
};
constexpr int64_t kNoCap = 2147483647;

struct PackedCase {
  int64_t B, H, T, D;
  int shiftQkv, shiftOut; ///< element offsets of qkv, dqkv / out, dout
  int64_t maxGrid;
};

/// A forward and a backward of the [B, H, T, D] kernels (in `emu::order`)
/// on 16-byte aligned copies; out, lse, dq, dk, dv returned.
struct Heads {
  VecB out, dq, dk, dv;
  Vec lse;
};
bool runHeads(const VecB &q, const VecB &k, const VecB &v, const VecB &dout,
              int64_t B, int64_t H, int64_t T, int64_t D, Heads &r) {
  const int64_t n = B * H * T * D, nl = B * H * T;
  BufB bq(n, 0, kNaNB), bk(n, 0, kNaNB), bv(n, 0, kNaNB), bdo(n, 0, kNaNB),
      bout(n, 0, kNaNB), bdq(n, 0, kNaNB), bdk(n, 0, kNaNB), bdv(n, 0, kNaNB);
  bq.set(q);
  bk.set(k);
  bv.set(v);
  bdo.set(dout);
  r.lse.assign(nl, NAN);
  emu::regions.clear();
  for (BufB *b : {&bq, &bk, &bv, &bdo, &bout, &bdq, &bdk, &bdv})
    emu::regions.push_back({(const unsigned char *)b->p, 2 * (size_t)n});
  emu::regions.push_back({(const unsigned char *)r.lse.data(), 4 * (size_t)nl});
  if (zrt_cuda::attention_forward_bf16_tc(bq.p, bk.p, bv.p, bout.p,
                                          r.lse.data(), B, H, T, D) ||
      zrt_cuda::attention_backward_bf16_tc(bdo.p, bq.p, bk.p, bv.p, bout.p,
                                           r.lse.data(), bdq.p, bdk.p, bdv.p,
                                           B, H, T, D)) {
    printf("  FAIL: [B, H, T, D] kernels: %s\n", zrt_cuda::last_error());
    return false;
  }
  r.out = bout.get();
  r.dq = bdq.get();
  r.dk = bdk.get();
  r.dv = bdv.get();
  return true;
}

/// The packed entry points against the [B, H, T, D] ones on the split
/// copies (run in the first scheduling order): out, lse and dqkv bit for
/// bit under every order, nothing written outside out and dqkv.
bool checkPacked(const PackedCase &c, const std::vector<int> &orders,
                 uint32_t seed) {
  emu::tcMaxGrid = c.maxGrid;
  const int64_t C = c.H * c.D, W = 3 * C, n = c.B * c.T * C, nl = c.B * c.H * c.T;
  const VecB qkv = toB(rnd(c.B * c.T * W, seed, -1, 1)),
             dout = toB(rnd(n, seed + 1, -1, 1));
  emu::order = orders[0];
  Heads ref;
  if (!runHeads(splitHeads(qkv, c.B, c.T, c.H, c.D, W, 0),
                splitHeads(qkv, c.B, c.T, c.H, c.D, W, C),
                splitHeads(qkv, c.B, c.T, c.H, c.D, W, 2 * C),
                splitHeads(dout, c.B, c.T, c.H, c.D, C, 0), c.B, c.H, c.T, c.D,
                ref))
    return false;
  VecB refOut(n), refDqkv(qkv.size());
  mergeHeads(ref.out, refOut, c.B, c.T, c.H, c.D, C, 0);
  mergeHeads(ref.dq, refDqkv, c.B, c.T, c.H, c.D, W, 0);
  mergeHeads(ref.dk, refDqkv, c.B, c.T, c.H, c.D, W, C);
  mergeHeads(ref.dv, refDqkv, c.B, c.T, c.H, c.D, W, 2 * C);
  bool ok = true;
  for (int order : orders) {
    emu::order = order;
    BufB bqkv(qkv.size(), c.shiftQkv, kNaNB), bdqkv(qkv.size(), c.shiftQkv, kNaNB),
        bout(n, c.shiftOut, kNaNB), bdo(n, c.shiftOut, kNaNB);
    bqkv.set(qkv);
    bdo.set(dout);
    Vec lse(nl, NAN);
    emu::regions.clear();
    for (BufB *b : {&bqkv, &bdqkv, &bout, &bdo})
      emu::regions.push_back({(const unsigned char *)b->p, 2 * b->n});
    emu::regions.push_back({(const unsigned char *)lse.data(), 4 * (size_t)nl});
    if (zrt_cuda::attention_forward_packed_bf16_tc(bqkv.p, bout.p, lse.data(),
                                                   c.B, c.T, c.H, c.D) ||
        zrt_cuda::attention_backward_packed_bf16_tc(bdo.p, bqkv.p, bout.p,
                                                    lse.data(), bdqkv.p, c.B,
                                                    c.T, c.H, c.D)) {
      printf("  FAIL: packed kernels: %s\n", zrt_cuda::last_error());
      return false;
    }
    const bool same[4] = {bout.get() == refOut,
                          !memcmp(lse.data(), ref.lse.data(), 4 * nl),
                          bdqkv.get() == refDqkv,
                          bout.guardsOk() && bdqkv.guardsOk()};
    const char *what[4] = {"out", "lse", "dqkv", "guards"};
    for (int t = 0; t < 4; ++t)
      if (!same[t]) {
        printf("  FAIL: packed %s differs from the [B, H, T, D] kernels "
               "(order %d)\n",
               what[t], order);
        ok = false;
      }
  }
  if (ok)
    printf("  packed: bit-identical to the [B, H, T, D] kernels on split "
           "copies\n");
  return ok;
}
/// A grouped-query case: H query heads sharing Hkv K/V heads.
struct GqaCase {
  int64_t B, H, Hkv, T, D;
  int shift;
  int64_t maxGrid;
};

/// attention_*_gqa_bf16_tc: out, lse and dq bit for bit the [B, H, T, D]
/// kernels on repeated K/V (each query head runs the same arithmetic), dk
/// and dv within the tolerances above of the CPU's f32 GQA on the widened
/// inputs (the backward from the kernel's own out and lse); bit for bit
/// under every scheduling order; nothing written outside the outputs.
bool checkGqa(const GqaCase &c, const std::vector<int> &orders,
              uint32_t seed) {
  emu::tcMaxGrid = c.maxGrid;
  const int64_t nq = c.B * c.H * c.T * c.D, nk = c.B * c.Hkv * c.T * c.D,
                nl = c.B * c.H * c.T, slice = c.T * c.D, group = c.H / c.Hkv;
  const VecB q = toB(rnd(nq, seed, -1, 1)), k = toB(rnd(nk, seed + 1, -1, 1)),
             v = toB(rnd(nk, seed + 2, -1, 1)),
             dout = toB(rnd(nq, seed + 3, -1, 1));
  auto repeat = [&](const VecB &x) {
    VecB r(nq);
    for (int64_t b = 0; b < c.B; ++b)
      for (int64_t h = 0; h < c.H; ++h)
        std::copy_n(x.begin() + (b * c.Hkv + h / group) * slice, slice,
                    r.begin() + (b * c.H + h) * slice);
    return r;
  };
  emu::order = orders[0];
  Heads ref;
  if (!runHeads(q, repeat(k), repeat(v), dout, c.B, c.H, c.T, c.D, ref))
    return false;
  bool ok = true;
  VecB first[3];
  for (size_t oi = 0; oi < orders.size(); ++oi) {
    emu::order = orders[oi];
    BufB bq(nq, c.shift, kNaNB), bk(nk, c.shift, kNaNB), bv(nk, c.shift, kNaNB),
        bdo(nq, c.shift, kNaNB), bout(nq, c.shift, kNaNB),
        bdq(nq, c.shift, kNaNB), bdk(nk, c.shift, kNaNB),
        bdv(nk, c.shift, kNaNB);
    bq.set(q);
    bk.set(k);
    bv.set(v);
    bdo.set(dout);
    Vec lse(nl, NAN);
    emu::regions.clear();
    for (BufB *b : {&bq, &bk, &bv, &bdo, &bout, &bdq, &bdk, &bdv})
      emu::regions.push_back({(const unsigned char *)b->p, 2 * b->n});
    emu::regions.push_back({(const unsigned char *)lse.data(), 4 * (size_t)nl});
    if (zrt_cuda::attention_forward_gqa_bf16_tc(bq.p, bk.p, bv.p, bout.p,
                                                lse.data(), c.B, c.H, c.Hkv,
                                                c.T, c.D) ||
        zrt_cuda::attention_backward_gqa_bf16_tc(
            bdo.p, bq.p, bk.p, bv.p, bout.p, lse.data(), bdq.p, bdk.p, bdv.p,
            c.B, c.H, c.Hkv, c.T, c.D)) {
      printf("  FAIL: GQA kernels: %s\n", zrt_cuda::last_error());
      return false;
    }
    const VecB out = bout.get(), dq = bdq.get(), dk = bdk.get(),
               dv = bdv.get();
    if (!(bout.guardsOk() && bdq.guardsOk() && bdk.guardsOk() &&
          bdv.guardsOk())) {
      printf("  FAIL: GQA: write outside an output tensor\n");
      ok = false;
    }
    // The forward (and so the backward's inputs) equal the repeated run's.
    if (out != ref.out || dq != ref.dq ||
        memcmp(lse.data(), ref.lse.data(), 4 * nl)) {
      printf("  FAIL: GQA out / lse / dq differ from the kernels on repeated "
             "K/V (order %d)\n",
             emu::order);
      ok = false;
    }
    if (oi == 0) {
      const Vec q32 = wid(q), k32 = wid(k), v32 = wid(v), do32 = wid(dout),
                out32 = wid(out);
      Vec rdq(nq), rdk(nk), rdv(nk);
      if (zrt_attention_backward_gqa(do32.data(), q32.data(), k32.data(),
                                     v32.data(), out32.data(), lse.data(),
                                     rdq.data(), rdk.data(), rdv.data(),
                                     nullptr, c.B, c.H, c.Hkv, c.T,
                                     c.D) != ZRT_OK) {
        printf("cpu GQA backward failed\n");
        return false;
      }
      const Stat sk = compare(rdk, wid(dk)), sv = compare(rdv, wid(dv));
      const double rk = sk.maxErr / std::max(sk.maxRef, 1e-3),
                   rv = sv.maxErr / std::max(sv.maxRef, 1e-3);
      printf("  GQA Hkv=%lld: dk rel %.2e dv rel %.2e (worst elementwise "
             "%.3f %.3f)\n",
             (long long)c.Hkv, rk, rv, sk.worstRel, sv.worstRel);
      if (sk.nan || sv.nan || !(rk < 2e-2 && rv < 2e-2 && sk.worstRel < 0.3 &&
                                sv.worstRel < 0.3)) {
        printf("  FAIL: GQA dk / dv outside the tolerances\n");
        ok = false;
      }
      first[0] = dk, first[1] = dv, first[2] = out;
    } else if (dk != first[0] || dv != first[1] || out != first[2]) {
      printf("  FAIL: GQA results differ under scheduling order %d\n",
             emu::order);
      ok = false;
    }
  }
  return ok;
}
} // namespace

int main(int argc, char **argv) {
  const Args args(argc, argv);
  std::vector<Case> cases;
  // Packed cases, numbered after `cases`.
  const std::vector<PackedCase> packedCi = {
      {1, 2, 70, 64, 0, 0, kNoCap}, // cp.async
      {1, 3, 40, 32, 1, 1, kNoCap}, // plain loads
      {2, 2, 33, 128, 0, 1, 3},     // out unaligned only; work loop
  };
  const std::vector<PackedCase> packedFull = {
      {2, 2, 70, 64, 0, 0, kNoCap},  {1, 3, 40, 32, 1, 1, kNoCap},
      {2, 2, 33, 128, 0, 1, 3},      {2, 3, 130, 64, 0, 0, kNoCap},
      {3, 2, 129, 64, 1, 0, 5},      {1, 2, 100, 128, 1, 1, kNoCap},
      {2, 1, 192, 32, 0, 0, kNoCap}, {1, 1, 1, 64, 1, 1, kNoCap},
  };
  const std::vector<PackedCase> &packed =
      args.set == "ci" ? packedCi : packedFull;
  // Grouped-query cases, numbered after the packed ones.
  const std::vector<GqaCase> gqaCi = {
      {2, 4, 2, 70, 32, 0, kNoCap}, // cp.async, two query heads per K/V
      {1, 4, 1, 65, 64, 1, 3},      // plain loads, work loop, one K/V head
  };
  const std::vector<GqaCase> gqaFull = {
      {2, 4, 2, 70, 32, 0, kNoCap}, {1, 4, 1, 65, 64, 1, 3},
      {1, 8, 2, 130, 64, 0, kNoCap}, {2, 4, 2, 100, 128, 0, 5},
      {1, 4, 4, 70, 32, 0, kNoCap},
  };
  const std::vector<GqaCase> &gqa = args.set == "ci" ? gqaCi : gqaFull;
  if (args.set == "ci") {
    cases = {
        {2, 3, 17, 64, 1.0f, 0, kNoCap},
        {2, 3, 64, 32, 1.0f, 0, kNoCap},
        {1, 2, 100, 128, 1.0f, 0, kNoCap},
        {2, 1, 130, 64, 4.0f, 0, kNoCap}, // peaked rows
        {2, 3, 65, 64, 1.0f, 1, kNoCap},  // unaligned: plain loads
        {3, 2, 129, 64, 1.0f, 0, 5},      // work loop (grid 5)
        {2, 2, 70, 128, 1.0f, 0, 3},      // work loop, D = 128
        {1, 2, 128, 64, 1.0f, 0, kNoCap}, // one 128-row forward tile
        {1, 1, 1, 32, 1.0f, 0, kNoCap},
    };
  } else {
    for (int64_t D : {64, 32, 128})
      for (int64_t T : {1, 17, 64, 100, 256})
        cases.push_back(
            {T <= 64 ? 2 : 1, T <= 64 ? 3 : 2, T, D, 1.0f, 0, kNoCap});
    cases.push_back({2, 1, 130, 64, 4.0f, 0, kNoCap}); // peaked rows
    cases.push_back({1, 1, 200, 128, 3.0f, 0, kNoCap});
    cases.push_back({2, 3, 65, 64, 1.0f, 1, kNoCap}); // unaligned: plain loads
    cases.push_back({1, 2, 100, 32, 1.0f, 1, kNoCap});
    cases.push_back({3, 2, 129, 64, 1.0f, 0, 5}); // work loop (grid 5)
    cases.push_back({2, 2, 70, 128, 1.0f, 0, 3});
    cases.push_back({1, 1, 300, 64, 8.0f, 0, kNoCap}); // very peaked
    cases.push_back(
        {1, 2, 128, 64, 1.0f, 0, kNoCap}); // one 128-row forward tile
    cases.push_back({1, 1, 192, 32, 1.0f, 0, kNoCap}); // 1.5 forward tiles
    cases.push_back(
        {2, 1, 320, 64, 1.0f, 0, 3}); // work loop, 2.5 forward tiles
    cases.push_back({1, 2, 70, 128, 1.0f, 1, kNoCap}); // unaligned, D = 128
  }
  bool allok = true;
  double worst[5] = {0, 0, 0, 0, 0}; // out lse dq dk dv
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    if (!args.selected((int)ci))
      continue;
    const Case c = cases[ci];
    emu::tcMaxGrid = c.maxGrid;
    const int64_t BH = c.B * c.H, n = BH * c.T * c.D, nl = BH * c.T;
    printf("case %zu: B=%lld H=%lld T=%lld D=%lld amp=%g shift=%d grid<=%lld\n",
           ci, (long long)c.B, (long long)c.H, (long long)c.T, (long long)c.D,
           c.amp, c.shift, (long long)c.maxGrid);
    emu::regions.clear();
    const VecB q = toB(rnd(n, 1 + ci, -c.amp, c.amp)),
               k = toB(rnd(n, 100 + ci, -c.amp, c.amp));
    const VecB v = toB(rnd(n, 200 + ci, -1, 1)),
               dout = toB(rnd(n, 300 + ci, -1, 1));
    BufB bq(n, c.shift, kNaNB), bk(n, c.shift, kNaNB), bv(n, c.shift, kNaNB),
        bdo(n, c.shift, kNaNB);
    bq.set(q);
    bk.set(k);
    bv.set(v);
    bdo.set(dout);
    for (BufB *b : {&bq, &bk, &bv, &bdo})
      emu::regions.push_back({(const unsigned char *)b->p, 2 * (size_t)n});
    const Vec q32 = wid(q), k32 = wid(k), v32 = wid(v), do32 = wid(dout);
    Vec refOut(n), refLse(nl);
    if (zrt_attention_forward(q32.data(), k32.data(), v32.data(), refOut.data(),
                              refLse.data(), nullptr, c.B, c.H, c.T,
                              c.D) != ZRT_OK) {
      printf("cpu forward failed\n");
      return 1;
    }
    VecB firstOut, firstDq, firstDk, firstDv;
    Vec firstLse;
    for (size_t oi = 0; oi < args.orders.size(); ++oi) {
      emu::order = args.orders[oi];
      BufB bout(n, c.shift, kNaNB), bdq(n, c.shift, kNaNB),
          bdk(n, c.shift, kNaNB), bdv(n, c.shift, kNaNB);
      Vec lse(nl, NAN);
      emu::regions.push_back(
          {(const unsigned char *)lse.data(), 4 * (size_t)nl});
      for (BufB *b : {&bout, &bdq, &bdk, &bdv})
        emu::regions.push_back({(const unsigned char *)b->p, 2 * (size_t)n});
      int st = zrt_cuda::attention_forward_bf16_tc(
          bq.p, bk.p, bv.p, bout.p, lse.data(), c.B, c.H, c.T, c.D);
      if (st) {
        printf("forward status %d %s\n", st, zrt_cuda::last_error());
        return 1;
      }
      st = zrt_cuda::attention_backward_bf16_tc(bdo.p, bq.p, bk.p, bv.p, bout.p,
                                                lse.data(), bdq.p, bdk.p, bdv.p,
                                                c.B, c.H, c.T, c.D);
      if (st) {
        printf("backward status %d %s\n", st, zrt_cuda::last_error());
        return 1;
      }
      emu::regions.resize(4);
      for (BufB *b : {&bout, &bdq, &bdk, &bdv})
        if (!b->guardsOk()) {
          printf("  FAIL: write outside an output tensor\n");
          allok = false;
        }
      const VecB out = bout.get(), dq = bdq.get(), dk = bdk.get(),
                 dv = bdv.get();
      if (oi == 0) {
        // CPU f32 backward from the kernel's own (bf16) out and lse.
        const Vec out32 = wid(out);
        Vec rdq(n), rdk(n), rdv(n);
        if (zrt_attention_backward(do32.data(), q32.data(), k32.data(),
                                   v32.data(), out32.data(), lse.data(),
                                   rdq.data(), rdk.data(), rdv.data(), nullptr,
                                   c.B, c.H, c.T, c.D) != ZRT_OK) {
          printf("cpu backward failed\n");
          return 1;
        }
        const Stat so = compare(refOut, out32), sq = compare(rdq, wid(dq)),
                   sk = compare(rdk, wid(dk)), sv = compare(rdv, wid(dv));
        double lseErr = 0;
        bool lseNan = false;
        for (int64_t i = 0; i < nl; ++i) {
          if (!std::isfinite(lse[i]))
            lseNan = true;
          lseErr =
              std::max(lseErr, std::fabs((double)lse[i] - refLse[i]) /
                                   std::max(1.0, (double)std::fabs(refLse[i])));
        }
        auto rel = [](const Stat &s) {
          return s.maxErr / std::max(s.maxRef, 1e-3);
        };
        const double r[5] = {rel(so), lseErr, rel(sq), rel(sk), rel(sv)};
        printf("  rel err: out %.2e lse %.2e dq %.2e dk %.2e dv %.2e; worst "
               "elementwise out %.3f dq %.3f dk %.3f dv %.3f\n",
               r[0], r[1], r[2], r[3], r[4], so.worstRel, sq.worstRel,
               sk.worstRel, sv.worstRel);
        for (int t = 0; t < 5; ++t)
          worst[t] = std::max(worst[t], r[t]);
        bool ok = !so.nan && !lseNan && !sq.nan && !sk.nan && !sv.nan;
        ok &= r[0] < 1e-2 && r[1] < 1e-5 && r[2] < 2e-2 && r[3] < 2e-2 &&
              r[4] < 2e-2;
        ok &= so.worstRel < 0.1 && sq.worstRel < 0.3 && sk.worstRel < 0.3 &&
              sv.worstRel < 0.3;
        if (!ok) {
          printf("  FAIL: outside the tolerances\n");
          allok = false;
        }
        firstOut = out;
        firstDq = dq;
        firstDk = dk;
        firstDv = dv;
        firstLse = lse;
      } else if (out != firstOut || dq != firstDq || dk != firstDk ||
                 dv != firstDv || memcmp(lse.data(), firstLse.data(), 4 * nl)) {
        printf("  FAIL: results differ under scheduling order %d\n",
               emu::order);
        allok = false;
      }
    }
  }
  for (size_t pi = 0; pi < packed.size(); ++pi) {
    const size_t ci = cases.size() + pi;
    if (!args.selected((int)ci))
      continue;
    const PackedCase &c = packed[pi];
    printf("case %zu: packed B=%lld H=%lld T=%lld D=%lld shift qkv %d out %d "
           "grid<=%lld\n",
           ci, (long long)c.B, (long long)c.H, (long long)c.T, (long long)c.D,
           c.shiftQkv, c.shiftOut, (long long)c.maxGrid);
    allok &= checkPacked(c, args.orders, 1000 + (uint32_t)ci);
  }
  for (size_t gi = 0; gi < gqa.size(); ++gi) {
    const size_t ci = cases.size() + packed.size() + gi;
    if (!args.selected((int)ci))
      continue;
    const GqaCase &c = gqa[gi];
    printf("case %zu: GQA B=%lld H=%lld Hkv=%lld T=%lld D=%lld shift %d "
           "grid<=%lld\n",
           ci, (long long)c.B, (long long)c.H, (long long)c.Hkv,
           (long long)c.T, (long long)c.D, c.shift, (long long)c.maxGrid);
    allok &= checkGqa(c, args.orders, 2000 + (uint32_t)ci);
  }
  printf("worst rel: out %.2e lse %.2e dq %.2e dk %.2e dv %.2e\n", worst[0],
         worst[1], worst[2], worst[3], worst[4]);
  printf("ldmatrix 8x8 phases %lld, bank-conflicted %lld; mma %lld; barriers "
         "%lld; cp.async %lld\n",
         emu::stats[0], emu::stats[1], emu::stats[2], emu::stats[3],
         emu::stats[4]);
  printf(allok ? "ALL OK\n" : "FAILURES\n");
  return allok ? 0 : 1;
}
