// The bf16 kernels of elementwise.cu, norm.cu and loss.cu (and the f32
// kernels they are compared with) on the emulator: bit for bit against the
// f32 kernels on the widened inputs where the arithmetic is the same,
// within tolerances of the CPU runtime (zrt_*), with special values (NaN,
// inf, subnormals), unaligned tensors (scalar paths), in-place calls,
// guard elements, staged and unstaged cross-entropy rows, the row-block
// loop (small kLossMaxRowBlocks) and the device error word for bad targets;
// the fused cross-entropy bit for bit against the forward and backward
// kernels it shares its row code with; the residual-add forms of layer norm
// (f32, bf16; staged and unstaged rows) bit for bit against add + layer
// norm and layer-norm backward + add; the bf16 embedding and its backward
// bit for bit against the f32 kernels (repeated and absent ids, bad ids).
#include "test_util.h"
#include "zrt_cuda.h"

#include <algorithm>

using emu_test::Args;
using emu_test::rnd;
using emu_test::toB;
using emu_test::wid;
using Vec = std::vector<float>;
using VecB = std::vector<zrt_bf16>;
#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "FAIL: " __VA_ARGS__);                                   \
      fprintf(stderr, "\n");                                                   \
      allok = false;                                                           \
    }                                                                          \
  } while (0)

static bool allok = true;

static VecB rndB(int64_t n, uint32_t seed, float lo = -1, float hi = 1) {
  return toB(rnd(n, seed, lo, hi));
}
/// bf16 buffer at `off` elements past an aligned boundary, guard elements
/// (a NaN pattern) on both sides.
struct BufB : emu_test::Guarded<zrt_bf16> {
  BufB(size_t n, int off, const VecB *init = nullptr)
      : Guarded(n, off, emu_test::kNaNB) {
    if (init)
      set(*init);
  }
};
static bool isNaNB(zrt_bf16 h) { return (h & 0x7fffu) > 0x7f80u; }
static bool sameB(const VecB &a, const VecB &b, const std::string &what) {
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i] && !(isNaNB(a[i]) && isNaNB(b[i]))) {
      fprintf(stderr, "FAIL %s at %zu: 0x%04x vs 0x%04x\n", what.c_str(), i,
              a[i], b[i]);
      allok = false;
      return false;
    }
  return true;
}
static double ulpB(double x) {
  x = std::fabs(x);
  if (!(x >= std::ldexp(1.0, -126)))
    return std::ldexp(1.0, -133);
  int e;
  std::frexp(x, &e);
  return std::ldexp(1.0, e - 8);
}
static bool nearB(const VecB &ref, const VecB &got, double atol, double rtol,
                  double ulps, const std::string &what) {
  Vec r = wid(ref), g = wid(got);
  for (size_t i = 0; i < r.size(); ++i) {
    if (!std::isfinite(r[i]) || !std::isfinite(g[i])) {
      if ((std::isnan(r[i]) && std::isnan(g[i])) || r[i] == g[i])
        continue;
      fprintf(stderr, "FAIL %s at %zu: %g vs %g\n", what.c_str(), i, r[i],
              g[i]);
      allok = false;
      return false;
    }
    double err = std::fabs((double)r[i] - g[i]),
           tol = atol + rtol * std::fabs(r[i]) +
                 ulps * ulpB(std::max(std::fabs(r[i]), std::fabs(g[i])));
    if (!(err <= tol)) {
      fprintf(stderr, "FAIL %s at %zu: %.9g vs %.9g tol %g\n", what.c_str(), i,
              r[i], g[i], tol);
      allok = false;
      return false;
    }
  }
  return true;
}
static VecB specials(int64_t n, uint32_t seed, float lo, float hi) {
  VecB v = rndB(n, seed, lo, hi);
  const zrt_bf16 sp[] = {0x7fc0, 0x7f80, 0xff80, 0x0000, 0x8000,
                         0x0001, 0x807f, 0x7f7f, 0xff7f, 0x3f80};
  for (size_t i = 0; i < std::min<size_t>(v.size(), 10); ++i)
    v[i] = sp[(i + seed) % 10];
  return v;
}

static void testElementwise() {
  struct Off {
    int a, b, o;
  };
  const Off offs[] = {{0, 0, 0}, {3, 3, 3}, {1, 0, 5}, {0, 0, 2}, {7, 7, 7}};
  for (int64_t n : {0, 1, 7, 8, 9, 17, 1000, 4099})
    for (const Off &o : offs) {
      const std::string cs = "n=" + std::to_string(n) + " off " +
                             std::to_string(o.a) + std::to_string(o.b) +
                             std::to_string(o.o);
      const VecB a = specials(n, 1, -4, 4), b = specials(n, 2, -4, 4);
      Vec wa = wid(a), wb = wid(b), s(n), gy(n), gg(n);
      zrt_add(wa.data(), wb.data(), s.data(), n);
      zrt_gelu(wa.data(), gy.data(), n);
      zrt_gelu_backward(wa.data(), wb.data(), gg.data(), n);
      BufB A(n, o.a, &a), B(n, o.b, &b), O(n, o.o), Y(n, o.o), G(n, o.o);
      CHECK(zrt_cuda::add_bf16(A.p, B.p, O.p, n) == 0, "add");
      CHECK(zrt_cuda::gelu_bf16(A.p, Y.p, n) == 0, "gelu");
      CHECK(zrt_cuda::gelu_backward_bf16(A.p, B.p, G.p, n) == 0, "gelu bwd");
      sameB(toB(s), O.get(), "add " + cs);
      nearB(toB(gy), Y.get(), 1e-6, 1e-5, 1, "gelu vs cpu " + cs);
      nearB(toB(gg), G.get(), 1e-6, 1e-5, 1, "gelu_backward vs cpu " + cs);
      Vec fy(n), fg(n);
      zrt_cuda::gelu(wa.data(), fy.data(), n);
      zrt_cuda::gelu_backward(wa.data(), wb.data(), fg.data(), n);
      sameB(toB(fy), Y.get(), "gelu vs f32 kernel " + cs);
      sameB(toB(fg), G.get(), "gelu_backward vs f32 kernel " + cs);
      CHECK(O.guardsOk() && Y.guardsOk() && G.guardsOk(), "guards %s",
            cs.c_str());
      // in place
      CHECK(zrt_cuda::add_bf16(A.p, B.p, A.p, n) == 0, "add ip");
      sameB(toB(s), A.get(), "add in place " + cs);
      CHECK(zrt_cuda::gelu_backward_bf16(Y.p, B.p, B.p, n) == 0, "gb ip");
      Vec wy = wid(Y.get()), g2(n);
      zrt_cuda::gelu_backward(wy.data(), wb.data(), g2.data(), n);
      sameB(toB(g2), B.get(), "gelu_backward in place " + cs);
      CHECK(A.guardsOk() && B.guardsOk(), "guards ip %s", cs.c_str());
    }
  printf("elementwise done\n");
}

static void testBias() {
  struct C {
    int64_t rows, N;
    int off;
  };
  for (C c : {C{0, 5, 0}, C{1, 1, 0}, C{7, 33, 1}, C{300, 1, 3}, C{65, 769, 5},
              C{5, 0, 0}}) {
    const std::string cs =
        "rows=" + std::to_string(c.rows) + " N=" + std::to_string(c.N);
    const VecB d = rndB(c.rows * c.N, 33);
    Vec wd = wid(d), ref(c.N, NAN), f32(c.N, NAN);
    zrt_bias_backward(wd.data(), ref.data(), c.rows, c.N);
    CHECK(zrt_cuda::bias_backward(wd.data(), f32.data(), c.rows, c.N) == 0,
          "bias f32");
    BufB D(c.rows * c.N, c.off, &d), O(c.N, c.off);
    CHECK(zrt_cuda::bias_backward_bf16(D.p, O.p, c.rows, c.N) == 0,
          "bias bf16");
    sameB(toB(f32), O.get(), "bias vs f32 kernel " + cs);
    nearB(toB(ref), O.get(), 1e-6 * (c.rows + 1), 1e-5, 1, "bias vs cpu " + cs);
    CHECK(O.guardsOk(), "bias guards");
  }
  printf("bias done\n");
}

static void testLayerNorm() {
  struct S {
    int64_t N, C;
    int off;
  };
  // Scalar rows (C % 8 != 0, or misaligned), vector rows kept in registers
  // (C = 32, 768), vector rows re-read (C = 1544).
  for (S s : {S{0, 5, 0}, S{1, 1, 0}, S{3, 1, 1}, S{7, 33, 3}, S{5, 32, 0},
              S{9, 768, 1}, S{9, 768, 0}, S{3, 1544, 0}})
    for (int affine = 0; affine < 2; ++affine) {
      const std::string cs = "N=" + std::to_string(s.N) +
                             " C=" + std::to_string(s.C) +
                             " affine=" + std::to_string(affine);
      const int64_t N = s.N, C = s.C;
      const VecB x = rndB(N * C, 50, 2, 4), w = rndB(C, 51, 0.5, 1.5),
                 b = rndB(C, 52), g = rndB(N * C, 54);
      Vec wx = wid(x), ww = wid(w), wb = wid(b), wg = wid(g);
      Vec fo(N * C), fm(N), fr(N), cm(N), cr(N), co(N * C);
      zrt_cuda::layer_norm(wx.data(), affine ? ww.data() : nullptr,
                           affine ? wb.data() : nullptr, fo.data(), fm.data(),
                           fr.data(), N, C, 1e-5f);
      zrt_layer_norm(wx.data(), affine ? ww.data() : nullptr,
                     affine ? wb.data() : nullptr, co.data(), cm.data(),
                     cr.data(), N, C, 1e-5f);
      BufB X(N * C, s.off, &x), W(C, s.off, &w), Bb(C, s.off, &b),
          O(N * C, s.off), G(N * C, s.off, &g);
      Vec m(N, NAN), r(N, NAN);
      CHECK(zrt_cuda::layer_norm_bf16(X.p, affine ? W.p : nullptr,
                                      affine ? Bb.p : nullptr, O.p, m.data(),
                                      r.data(), N, C, 1e-5f) == 0,
            "ln");
      sameB(toB(fo), O.get(), "ln vs f32 " + cs);
      CHECK(!memcmp(fm.data(), m.data(), N * 4) &&
                !memcmp(fr.data(), r.data(), N * 4),
            "ln stats %s", cs.c_str());
      nearB(toB(co), O.get(), 1e-5 * (1 + C / 1024.0), 1e-5, 1,
            "ln vs cpu " + cs);
      Vec m2(N), r2(N);
      CHECK(zrt_cuda::layer_norm_stats_bf16(X.p, m2.data(), r2.data(), N, C,
                                            1e-5f) == 0,
            "stats");
      CHECK(!memcmp(m2.data(), m.data(), N * 4) &&
                !memcmp(r2.data(), r.data(), N * 4),
            "stats %s", cs.c_str());
      // backward, all outputs
      Vec fdx(N * C), fdw(C), fdb(C), cdx(N * C), cdw(C), cdb(C);
      zrt_cuda::layer_norm_backward(
          wg.data(), wx.data(), affine ? ww.data() : nullptr, m.data(),
          r.data(), fdx.data(), fdw.data(), fdb.data(), N, C);
      zrt_layer_norm_backward(wg.data(), wx.data(),
                              affine ? ww.data() : nullptr, m.data(), r.data(),
                              cdx.data(), cdw.data(), cdb.data(), N, C);
      BufB DX(N * C, s.off), DW(C, s.off), DB(C, s.off);
      CHECK(zrt_cuda::layer_norm_backward_bf16(G.p, X.p, affine ? W.p : nullptr,
                                               m.data(), r.data(), DX.p, DW.p,
                                               DB.p, N, C) == 0,
            "lnb");
      sameB(toB(fdx), DX.get(), "ln dx vs f32 " + cs);
      sameB(toB(fdw), DW.get(), "ln dw vs f32 " + cs);
      sameB(toB(fdb), DB.get(), "ln db vs f32 " + cs);
      nearB(toB(cdx), DX.get(), 1e-5, 1e-5, 1, "ln dx vs cpu " + cs);
      nearB(toB(cdw), DW.get(), 1e-6 * (N + 1), 1e-5, 1, "ln dw vs cpu " + cs);
      nearB(toB(cdb), DB.get(), 1e-6 * (N + 1), 1e-5, 1, "ln db vs cpu " + cs);
      CHECK(O.guardsOk() && DX.guardsOk() && DW.guardsOk() && DB.guardsOk(),
            "ln guards %s", cs.c_str());
      // in place
      CHECK(zrt_cuda::layer_norm_bf16(X.p, affine ? W.p : nullptr,
                                      affine ? Bb.p : nullptr, X.p, nullptr,
                                      nullptr, N, C, 1e-5f) == 0,
            "ln ip");
      sameB(O.get(), X.get(), "ln in place " + cs);
    }
  printf("layer norm done\n");
}

/// Bitwise equality of f32 vectors (any NaN matches any NaN).
static bool sameF(const Vec &a, const Vec &b, const std::string &what) {
  for (size_t i = 0; i < a.size(); ++i)
    if (memcmp(&a[i], &b[i], 4) && !(std::isnan(a[i]) && std::isnan(b[i]))) {
      fprintf(stderr, "FAIL %s at %zu: %.9g vs %.9g\n", what.c_str(), i, a[i],
              b[i]);
      allok = false;
      return false;
    }
  return true;
}
static bool sameBits(float a, float b) {
  return !memcmp(&a, &b, 4) || (std::isnan(a) && std::isnan(b));
}

/// The residual-add forms of layer norm (norm.cu), f32 (on the widened
/// bf16 values) and bf16: bit for bit the unfused kernels (add +
/// layer_norm, layer_norm_backward + add), with the rows staged in shared
/// memory and, under a small opt-in limit, read back from sum; guards.
static void testAddLayerNorm() {
  struct S {
    int64_t N, C;
    int off, optin;
  };
  for (S s : {S{0, 5, 0, 232448}, S{1, 1, 0, 232448}, S{3, 1, 1, 232448},
              S{7, 33, 3, 232448}, S{9, 768, 1, 232448}, S{9, 768, 2, 16384},
              S{10, 100, 5, 1024}, S{9, 768, 0, 232448}, S{3, 1544, 0, 232448},
              S{3, 1544, 0, 1024}})
    for (int affine = 0; affine < 2; ++affine) {
      // optin 16384: f32 rows unstaged, bf16 staged; 1024: both unstaged.
      // Offset 0 and C % 8 == 0: the vector paths (C = 768: rows kept in
      // registers, whatever the opt-in; C = 1544: staged or unstaged).
      emu::optin = s.optin;
      const int64_t N = s.N, C = s.C, NC = N * C;
      const std::string cs = "N=" + std::to_string(N) +
                             " C=" + std::to_string(C) +
                             " optin=" + std::to_string(s.optin) +
                             " affine=" + std::to_string(affine);
      const VecB a = rndB(NC, 60, 2, 4), b = rndB(NC, 61, -0.1f, 0.1f),
                 w = rndB(C, 62, 0.5f, 1.5f), bb = rndB(C, 63),
                 g = rndB(NC, 64), ad = rndB(NC, 65);
      Vec fa = wid(a), fb = wid(b), fw = wid(w), fbb = wid(bb), fg = wid(g),
          fad = wid(ad);
      const float *pw = affine ? fw.data() : nullptr;
      const float *pb = affine ? fbb.data() : nullptr;
      Vec s1(NC), o1(NC), m1(N), r1(N), s2(NC), o2(NC), m2(N), r2(N);
      zrt_cuda::add(fa.data(), fb.data(), s1.data(), NC);
      zrt_cuda::layer_norm(s1.data(), pw, pb, o1.data(), m1.data(), r1.data(),
                           N, C, 1e-5f);
      CHECK(zrt_cuda::add_layer_norm(fa.data(), fb.data(), pw, pb, s2.data(),
                                     o2.data(), m2.data(), r2.data(), N, C,
                                     1e-5f) == 0,
            "add ln f32 %s", cs.c_str());
      sameF(s1, s2, "add ln f32 sum " + cs);
      sameF(o1, o2, "add ln f32 out " + cs);
      sameF(m1, m2, "add ln f32 mean " + cs);
      sameF(r1, r2, "add ln f32 rstd " + cs);
      Vec t(NC), dx1(NC), dw1(C), db1(C), dx2(NC), dw2(C), db2(C);
      zrt_cuda::layer_norm_backward(fg.data(), s1.data(), pw, m1.data(),
                                    r1.data(), t.data(), dw1.data(), db1.data(),
                                    N, C);
      zrt_cuda::add(fad.data(), t.data(), dx1.data(), NC);
      CHECK(zrt_cuda::layer_norm_backward_add(
                fg.data(), s1.data(), pw, m1.data(), r1.data(), fad.data(),
                dx2.data(), dw2.data(), db2.data(), N, C) == 0,
            "lnb add f32 %s", cs.c_str());
      sameF(dx1, dx2, "lnb add f32 dx " + cs);
      sameF(dw1, dw2, "lnb add f32 dw " + cs);
      sameF(db1, db2, "lnb add f32 db " + cs);
      // bf16
      BufB A(NC, s.off, &a), B(NC, s.off, &b), W(C, s.off, &w),
          Bb(C, s.off, &bb), G(NC, s.off, &g), AD(NC, s.off, &ad),
          S1(NC, s.off), O1(NC, s.off), S2(NC, s.off), O2(NC, s.off);
      const zrt_bf16 *qw = affine ? W.p : nullptr,
                     *qb = affine ? Bb.p : nullptr;
      zrt_cuda::add_bf16(A.p, B.p, S1.p, NC);
      zrt_cuda::layer_norm_bf16(S1.p, qw, qb, O1.p, m1.data(), r1.data(), N, C,
                                1e-5f);
      CHECK(zrt_cuda::add_layer_norm_bf16(A.p, B.p, qw, qb, S2.p, O2.p,
                                          m2.data(), r2.data(), N, C,
                                          1e-5f) == 0,
            "add ln bf16 %s", cs.c_str());
      sameB(S1.get(), S2.get(), "add ln bf16 sum " + cs);
      sameB(O1.get(), O2.get(), "add ln bf16 out " + cs);
      sameF(m1, m2, "add ln bf16 mean " + cs);
      sameF(r1, r2, "add ln bf16 rstd " + cs);
      BufB T(NC, s.off), DX1(NC, s.off), DW1(C, s.off), DB1(C, s.off),
          DX2(NC, s.off), DW2(C, s.off), DB2(C, s.off);
      zrt_cuda::layer_norm_backward_bf16(G.p, S1.p, qw, m1.data(), r1.data(),
                                         T.p, DW1.p, DB1.p, N, C);
      zrt_cuda::add_bf16(AD.p, T.p, DX1.p, NC);
      CHECK(zrt_cuda::layer_norm_backward_add_bf16(G.p, S1.p, qw, m1.data(),
                                                   r1.data(), AD.p, DX2.p,
                                                   DW2.p, DB2.p, N, C) == 0,
            "lnb add bf16 %s", cs.c_str());
      sameB(DX1.get(), DX2.get(), "lnb add bf16 dx " + cs);
      sameB(DW1.get(), DW2.get(), "lnb add bf16 dw " + cs);
      sameB(DB1.get(), DB2.get(), "lnb add bf16 db " + cs);
      CHECK(S2.guardsOk() && O2.guardsOk() && DX2.guardsOk() &&
                DW2.guardsOk() && DB2.guardsOk(),
            "add ln guards %s", cs.c_str());
    }
  emu::optin = 232448;
  printf("add layer norm done\n");
}

/// The per-row losses [N] (double) that the latest cross-entropy forward or
/// fused call left at the start of the workspace (loss.cu), to compare the
/// block reductions bit for bit (the f32 loss rounds most differences away).
static std::vector<double> rowLosses(int64_t N) {
  void *p = nullptr;
  zrt_cuda::workspace(N * 8, &p, "rowLosses"); // no growth: the same buffer
  const double *d = static_cast<const double *>(p);
  return std::vector<double>(d, d + N);
}

/// The fused padded cross-entropy (zrt_cuda::cross_entropy_padded_fused
/// and _fused_bf16) on the rows `wl` / `L` of one case, in place at
/// element offset `off`: loss and gradient bit for bit those of the two
/// calls (`f32Loss`, `f32D`, per-row losses `f32Rows`: f32 kernels; `loss`,
/// `bD`, `bRows`: bf16 kernels, staged when `staged`) and within tolerances of
/// the CPU's fused call; guards untouched; N == 0 writes the NaN loss and
/// leaves the logits alone.
static void checkFused(const std::string &cs, const Vec &wl, const VecB &L,
                       const std::vector<int32_t> &t, int64_t N, int64_t V,
                       int64_t K, int off, float dloss, float f32Loss,
                       const Vec &f32D, const std::vector<double> &f32Rows,
                       float loss, const VecB &bD,
                       const std::vector<double> &bRows, bool staged) {
  // f32
  emu_test::Guarded<float> F(N * V, off, NAN);
  F.set(wl);
  float fLoss = 0;
  CHECK(zrt_cuda::cross_entropy_padded_fused(F.p, t.data(), &fLoss, dloss, N, V,
                                             K) == 0,
        "fused f32 %s", cs.c_str());
  CHECK(rowLosses(N) == f32Rows, "fused f32 row losses %s", cs.c_str());
  CHECK(sameBits(fLoss, f32Loss), "fused f32 loss %s: %.9g vs %.9g", cs.c_str(),
        fLoss, f32Loss);
  sameF(N > 0 ? f32D : wl, F.get(), "fused f32 gradient vs backward " + cs);
  CHECK(F.guardsOk(), "fused f32 guards %s", cs.c_str());
  // bf16, the same kernel choice (staged or not) as the two calls
  BufB B(N * V, off, &L);
  float bLoss = 0;
  emu::maxDynSmem = 0;
  CHECK(zrt_cuda::cross_entropy_padded_fused_bf16(B.p, t.data(), &bLoss, dloss,
                                                  N, V, K) == 0,
        "fused bf16 %s", cs.c_str());
  CHECK(rowLosses(N) == bRows, "fused bf16 row losses %s", cs.c_str());
  CHECK(staged == (emu::maxDynSmem > 0), "fused staged %s", cs.c_str());
  CHECK(sameBits(bLoss, loss), "fused bf16 loss %s: %.9g vs %.9g", cs.c_str(),
        bLoss, loss);
  sameB(N > 0 ? bD : L, B.get(), "fused bf16 gradient vs backward " + cs);
  CHECK(B.guardsOk(), "fused bf16 guards %s", cs.c_str());
  // the CPU's fused call (its own bit-for-bit check is the CPU tests')
  Vec cpu = wl;
  float cpuLoss = 0;
  CHECK(zrt_cross_entropy_padded_fused(cpu.data(), t.data(), &cpuLoss, dloss, N,
                                       V, K) == 0,
        "cpu fused %s", cs.c_str());
  if (N == 0)
    CHECK(std::isnan(fLoss) && std::isnan(bLoss) && std::isnan(cpuLoss),
          "fused nan loss %s", cs.c_str());
  else
    CHECK(std::fabs(fLoss - cpuLoss) <= 1e-5f * std::fabs(cpuLoss) + 1e-7f,
          "fused loss %s: %.9g vs cpu %.9g", cs.c_str(), fLoss, cpuLoss);
  const float g = N > 0 ? dloss / N : 0.0f;
  nearB(toB(cpu), B.get(), 1e-6 * g + 1e-30, 1e-5, 1,
        "fused bf16 gradient vs cpu " + cs);
}

static void testCrossEntropy(bool full) {
  struct C {
    int64_t N, V, K;
    int offL, offD;
    float spread;
    int64_t rowcap;
    int optin;
  };
  std::vector<C> cases = {
      {1, 1, 1, 0, 0, 1, 65536, 232448},
      {37, 300, 257, 0, 0, 5, 65536, 232448},
      {37, 300, 300, 1, 1, 5, 65536, 232448},
      {37, 301, 300, 0, 3, 5, 65536, 232448},
      {16, 64, 1, 0, 0, 5, 65536, 232448},
      {0, 8, 5, 0, 0, 1, 65536, 232448},
      {3, 50304, 50257, 0, 0, 8, 65536, 232448},
      {4, 50304, 50257, 5, 2, 8, 65536, 232448},
      {4, 50304, 50257, 7, 7, 8, 65536, 232448},
      {10, 37, 33, 3, 6, 3, 3, 232448}, // rows looped over 3 blocks
      {11, 1000, 999, 2, 1, 4, 4, 232448},
      {2, 140000, 139999, 1, 0, 5, 65536, 232448}, // unstaged (too long)
      {5, 3000, 2999, 1, 0, 5, 65536, 4096},       // unstaged (small optin)
  };
  if (full) // larger: rows looped at GPT-2's size, staged and unstaged
    cases.insert(cases.end(), {{16, 50304, 50257, 1, 3, 8, 5, 232448},
                               {3, 140000, 139999, 0, 0, 5, 2, 232448},
                               {64, 777, 700, 3, 3, 30, 7, 232448},
                               {9, 3000, 2999, 6, 6, 30, 4, 4096}});
  const float dloss = 0.6f;
  for (const C &c : cases) {
    emu::lossMaxRowBlocks = c.rowcap;
    emu::optin = c.optin;
    *zrt_cuda::device_error_word() = 0;
    const std::string cs =
        "N=" + std::to_string(c.N) + " V=" + std::to_string(c.V) +
        " K=" + std::to_string(c.K) + " off " + std::to_string(c.offL) + "," +
        std::to_string(c.offD);
    Vec raw = rnd(c.N * c.V, 42, -c.spread, c.spread);
    for (int64_t i = 0; i < c.N; ++i)
      for (int64_t j = c.K; j < c.V; ++j)
        raw[i * c.V + j] = 1e30f;
    const VecB L = toB(raw);
    const Vec wl = wid(L);
    std::vector<int32_t> t(c.N);
    std::mt19937 gen(43);
    for (auto &x : t)
      x = std::uniform_int_distribution<int32_t>(0, c.K - 1)(gen);
    float refLoss = 0, f32Loss = 0, loss = NAN;
    Vec refD(c.N * c.V), f32D(c.N * c.V);
    zrt_cross_entropy_padded(wl.data(), t.data(), &refLoss, c.N, c.V, c.K);
    zrt_cross_entropy_padded_backward(wl.data(), t.data(), &dloss, refD.data(),
                                      c.N, c.V, c.K);
    CHECK(zrt_cuda::cross_entropy_padded(wl.data(), t.data(), &f32Loss, c.N,
                                         c.V, c.K) == 0,
          "ce f32");
    const std::vector<double> f32Rows = rowLosses(c.N);
    CHECK(zrt_cuda::cross_entropy_padded_backward(
              wl.data(), t.data(), &dloss, f32D.data(), c.N, c.V, c.K) == 0,
          "ce f32 b");
    BufB LB(c.N * c.V, c.offL, &L), DB(c.N * c.V, c.offD);
    emu::maxDynSmem = 0;
    CHECK(zrt_cuda::cross_entropy_padded_bf16(LB.p, t.data(), &loss, c.N, c.V,
                                              c.K) == 0,
          "ce bf16");
    const std::vector<double> bRows = rowLosses(c.N);
    CHECK(zrt_cuda::cross_entropy_padded_backward_bf16(
              LB.p, t.data(), &dloss, DB.p, c.N, c.V, c.K) == 0,
          "ce bf16 b");
    const bool staged = emu::maxDynSmem > 0;
    if (c.N == 0)
      CHECK(std::isnan(loss) && std::isnan(refLoss), "nan loss");
    else {
      CHECK(std::fabs(loss - refLoss) <= 1e-5f * std::fabs(refLoss) + 1e-7f,
            "loss %s: %.9g vs cpu %.9g", cs.c_str(), loss, refLoss);
      CHECK(std::fabs(loss - f32Loss) <= 1e-6f * std::fabs(refLoss) + 1e-7f,
            "loss %s: %.9g vs f32 kernel %.9g", cs.c_str(), loss, f32Loss);
    }
    const float g = c.N > 0 ? dloss / c.N : 0.0f;
    nearB(toB(refD), DB.get(), 1e-6 * g + 1e-30, 1e-5, 1,
          "dlogits vs cpu " + cs);
    nearB(toB(f32D), DB.get(), 0, 0, 1, "dlogits vs f32 kernel " + cs);
    const VecB got = DB.get();
    for (int64_t i = 0; i < c.N; ++i)
      for (int64_t j = c.K; j < c.V; ++j)
        if (got[i * c.V + j] != 0) {
          CHECK(false, "padding %s", cs.c_str());
          i = c.N;
          break;
        }
    CHECK(DB.guardsOk(), "ce guards %s", cs.c_str());
    CHECK(*zrt_cuda::device_error_word() == 0, "error word %s", cs.c_str());
    int diff = 0;
    VecB f32R = toB(f32D);
    for (size_t i = 0; i < got.size(); ++i)
      diff += got[i] != f32R[i];
    printf("  CE %s: staged=%d loss %.9g (cpu %.9g, f32 kernel %.9g), %d/%zu "
           "dlogits differ from the f32 kernel's rounded\n",
           cs.c_str(), staged, loss, refLoss, f32Loss, diff, got.size());
    checkFused(cs, wl, L, t, c.N, c.V, c.K, c.offL, dloss, f32Loss, f32D,
               f32Rows, loss, got, bRows, staged);
  }
  // bad targets
  emu::lossMaxRowBlocks = 65536;
  emu::optin = 232448;
  for (int32_t bad : {12, -1, 2147483647}) {
    const VecB L = rndB(4 * 16, 44);
    BufB LB(64, 0, &L), DB(64, 0);
    std::vector<int32_t> t = {1, 2, bad, 0};
    float loss, dl = 1;
    *zrt_cuda::device_error_word() = 0;
    zrt_cuda::cross_entropy_padded_bf16(LB.p, t.data(), &loss, 4, 16, 12);
    CHECK(*zrt_cuda::device_error_word() == zrt_cuda::kDeviceErrorTarget,
          "bad target fwd %d", bad);
    *zrt_cuda::device_error_word() = 0;
    zrt_cuda::cross_entropy_padded_backward_bf16(LB.p, t.data(), &dl, DB.p, 4,
                                                 16, 12);
    CHECK(*zrt_cuda::device_error_word() == zrt_cuda::kDeviceErrorTarget,
          "bad target bwd %d", bad);
    CHECK(DB.guardsOk(), "bad target guards");
    *zrt_cuda::device_error_word() = 0;
    zrt_cuda::cross_entropy_padded_fused_bf16(LB.p, t.data(), &loss, dl, 4, 16,
                                              12);
    CHECK(*zrt_cuda::device_error_word() == zrt_cuda::kDeviceErrorTarget,
          "bad target fused bf16 %d", bad);
    CHECK(LB.guardsOk(), "bad target fused guards");
    emu_test::Guarded<float> F(64, 0, NAN);
    F.set(wid(L));
    *zrt_cuda::device_error_word() = 0;
    zrt_cuda::cross_entropy_padded_fused(F.p, t.data(), &loss, dl, 4, 16, 12);
    CHECK(*zrt_cuda::device_error_word() == zrt_cuda::kDeviceErrorTarget,
          "bad target fused f32 %d", bad);
    CHECK(F.guardsOk(), "bad target fused f32 guards");
  }
  *zrt_cuda::device_error_word() = 0;
  printf("cross-entropy done\n");
}

/// ids for an embedding of V rows: from the lower half of [0, V) (the upper
/// half absent), every third one the first (a long run of one id).
static std::vector<int32_t> embeddingIds(int64_t n, int64_t V, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int32_t> d(0,
                                           static_cast<int32_t>((V - 1) / 2));
  std::vector<int32_t> ids(n);
  for (auto &x : ids)
    x = d(gen);
  for (int64_t i = 3; i < n; i += 3)
    ids[i] = ids[0];
  return ids;
}

/// embedding_bf16 / embedding_backward_bf16 bit for bit against the f32
/// kernels (embedding, embedding_backward) on the widened inputs, rounded
/// (those against the CPU runtime); the gather also against the table's
/// rows themselves; repeated and absent ids, dtable garbage overwritten,
/// unaligned tensors, the row-block loop (small kLossMaxRowBlocks), guards,
/// the device error word for bad ids.
static void testEmbedding(bool full) {
  struct C {
    int64_t N, V, C;
    int off;
    int64_t rowcap;
  };
  std::vector<C> cases = {{1, 1, 1, 0, 65536},     {37, 11, 19, 1, 65536},
                          {300, 50, 64, 3, 65536}, {5, 3, 0, 0, 65536},
                          {0, 7, 5, 2, 65536},     {70, 5, 77, 1, 4},
                          {33, 1000, 9, 2, 65536}};
  if (full)
    cases.insert(cases.end(), {{2049, 97, 40, 7, 65536},
                               {513, 1000, 33, 3, 16},
                               {4096, 50304, 16, 0, 65536}});
  for (const C &c : cases) {
    emu::lossMaxRowBlocks = c.rowcap;
    *zrt_cuda::device_error_word() = 0;
    const std::string cs =
        "N=" + std::to_string(c.N) + " V=" + std::to_string(c.V) +
        " C=" + std::to_string(c.C) + " off=" + std::to_string(c.off);
    const VecB table = specials(c.V * c.C, 5, -2, 2);
    // A fifth of the values +-2^20, which cancel exactly in some sums and
    // leave the small ones rounded to multiples of 2^-3 (f32) only when
    // added after them: the order of the additions shows in the bf16 sums.
    Vec raw = rnd(c.N * c.C, 6);
    std::mt19937 gen(16);
    for (float &x : raw)
      if (gen() % 5 == 0)
        x = x < 0 ? -1048576.0f : 1048576.0f;
    const VecB dout = toB(raw);
    const std::vector<int32_t> ids = embeddingIds(c.N, c.V, 7);
    // f32: the kernels and the CPU
    const Vec wt = wid(table), wd = wid(dout);
    Vec fo(c.N * c.C), fdt(c.V * c.C, 5.0f), co(c.N * c.C), cdt(c.V * c.C);
    CHECK(zrt_cuda::embedding(wt.data(), ids.data(), fo.data(), c.N, c.V,
                              c.C) == 0,
          "emb f32 %s", cs.c_str());
    CHECK(zrt_cuda::embedding_backward(wd.data(), ids.data(), fdt.data(), c.N,
                                       c.V, c.C) == 0,
          "emb bwd f32 %s", cs.c_str());
    zrt_embedding(wt.data(), ids.data(), co.data(), c.N, c.V, c.C);
    zrt_embedding_backward(wd.data(), ids.data(), cdt.data(), c.N, c.V, c.C);
    sameF(co, fo, "embedding f32 kernel vs cpu " + cs);
    sameF(cdt, fdt, "embedding_backward f32 kernel vs cpu " + cs);
    // bf16 (outputs start as NaN garbage)
    BufB T(c.V * c.C, c.off, &table), O(c.N * c.C, c.off),
        D(c.N * c.C, c.off, &dout), DT(c.V * c.C, c.off);
    CHECK(zrt_cuda::embedding_bf16(T.p, ids.data(), O.p, c.N, c.V, c.C) == 0,
          "emb bf16 %s", cs.c_str());
    CHECK(zrt_cuda::embedding_backward_bf16(D.p, ids.data(), DT.p, c.N, c.V,
                                            c.C) == 0,
          "emb bwd bf16 %s", cs.c_str());
    const VecB got = O.get();
    VecB rows(c.N * c.C);
    for (int64_t i = 0; i < c.N; ++i)
      std::copy(table.begin() + ids[i] * c.C,
                table.begin() + (ids[i] + 1) * c.C, rows.begin() + i * c.C);
    CHECK(got == rows, "embedding_bf16 rows %s", cs.c_str());
    sameB(toB(fo), got, "embedding_bf16 vs f32 kernel " + cs);
    sameB(toB(fdt), DT.get(), "embedding_backward_bf16 vs f32 kernel " + cs);
    CHECK(T.guardsOk() && O.guardsOk() && D.guardsOk() && DT.guardsOk(),
          "emb guards %s", cs.c_str());
    CHECK(*zrt_cuda::device_error_word() == 0, "emb error word %s", cs.c_str());
  }
  emu::lossMaxRowBlocks = 65536;
  // bad ids
  for (int32_t bad : {5, -1, 2147483647, -2147483647 - 1}) {
    const int64_t N = 6, V = 5, C = 7;
    const std::vector<int32_t> ids = {0, 4, bad, 2, 2, 1};
    const VecB table = rndB(V * C, 8), dout = rndB(N * C, 9);
    BufB T(V * C, 1, &table), O(N * C, 1), D(N * C, 1, &dout), DT(V * C, 1);
    *zrt_cuda::device_error_word() = 0;
    zrt_cuda::embedding_bf16(T.p, ids.data(), O.p, N, V, C);
    CHECK(*zrt_cuda::device_error_word() == zrt_cuda::kDeviceErrorEmbeddingId,
          "bad id fwd %d", bad);
    *zrt_cuda::device_error_word() = 0;
    zrt_cuda::embedding_backward_bf16(D.p, ids.data(), DT.p, N, V, C);
    CHECK(*zrt_cuda::device_error_word() == zrt_cuda::kDeviceErrorEmbeddingId,
          "bad id bwd %d", bad);
    CHECK(O.guardsOk() && DT.guardsOk(), "bad id guards %d", bad);
  }
  *zrt_cuda::device_error_word() = 0;
  printf("embedding done\n");
}

int main(int argc, char **argv) {
  const Args args(argc, argv);
  for (int order : args.orders) {
    emu::order = order;
    printf("scheduling order %d\n", order);
    if (args.set == "ci" || args.set == "full" || args.set == "ew")
      testElementwise();
    if (args.set == "ci" || args.set == "full" || args.set == "bias")
      testBias();
    if (args.set == "ci" || args.set == "full" || args.set == "ln") {
      testLayerNorm();
      testAddLayerNorm();
    }
    if (args.set == "ci" || args.set == "full" || args.set == "ce")
      testCrossEntropy(args.set == "full");
    if (args.set == "ci" || args.set == "full" || args.set == "emb")
      testEmbedding(args.set == "full");
  }
  printf(allok ? "ALL OK\n" : "FAILURES\n");
  return allok ? 0 : 1;
}
