//===- cuda_gqa_masked_test.cpp - CUDA GQA attention, masked cross-entropy ===//
//
// The grouped-query attention (zrt_cuda::attention_*_gqa, _gqa_bf16_simt,
// _gqa_bf16_tc: flash_attention.cu, flash_attention_tc.cu) and the masked
// cross-entropy (zrt_cuda::cross_entropy_masked(_backward)(_bf16): loss.cu)
// of zrt/decoder.h against the CPU runtime's zrt_* on the same inputs:
//  * GQA at H = 4 with Hkv = 2 and Hkv = 1 (and Hkv = H), f32 within the
//    f32 flash tests' tolerances of the CPU; out, lse and dq bit for bit
//    the multi-head kernels on materialized repeated K/V (each query head
//    runs the same arithmetic), dk / dv their group sums within f32
//    rounding; Hkv = H bit for bit the multi-head entry points; bf16 (CUDA
//    cores) bit for bit the f32 GQA kernels on the widened inputs, rounded,
//    and within a bf16 ulp of the CPU's bf16 GQA; bf16 on tensor cores
//    within the tensor-core tests' row-scaled bounds of the CPU's f32 GQA on
//    the widened inputs; repeated runs bit-identical.
//  * Masked cross-entropy with some rows ignored (ignore_index -100, and an
//    ignore_index that is a real class), every row ignored (NaN loss, zero
//    gradient), f32 and bf16 (staged rows and rows too long for shared
//    memory), padding columns and ignored rows exactly 0; without ignored
//    rows bit for bit the padded kernels (f32); a counted target outside
//    the classes raises the device error word.
//  * The argument checks, message for message the CPU's (no device needed).
// Runs on a GPU and, unchanged, on the emulator (zrt.cuda.emulated.unit.*):
// the shapes are small.
//
//===----------------------------------------------------------------------===//

#include "cuda_test_util.h"

#include "flash_attention_tc.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace {

using namespace zrt_cuda_test;
using Bf16Vec = std::vector<zrt_bf16>;

Bf16Vec toBf16(const std::vector<float> &v) {
  Bf16Vec r(v.size());
  EXPECT_EQ(
      zrt_cast_f32_to_bf16(v.data(), r.data(), static_cast<int64_t>(v.size())),
      ZRT_OK);
  return r;
}

std::vector<float> widen(const Bf16Vec &v) {
  std::vector<float> r(v.size());
  EXPECT_EQ(
      zrt_cast_bf16_to_f32(v.data(), r.data(), static_cast<int64_t>(v.size())),
      ZRT_OK);
  return r;
}

/// Widened bf16 values within atol + rtol |ref| + one bf16 ulp of the
/// larger magnitude (2^-8 relative).
void expectBf16Close(const Bf16Vec &ref, const Bf16Vec &got, double atol,
                     double rtol, const std::string &what) {
  ASSERT_EQ(ref.size(), got.size()) << what;
  const std::vector<float> r = widen(ref), g = widen(got);
  for (size_t i = 0; i < r.size(); ++i) {
    const double big = std::max(std::fabs(r[i]), std::fabs(g[i]));
    const double tol = atol + rtol * std::fabs(r[i]) + big / 128.0;
    ASSERT_TRUE(std::fabs(static_cast<double>(r[i]) - g[i]) <= tol)
        << what << " at " << i << ": expected " << r[i] << ", got " << g[i];
  }
}

/// The tensor-core tests' row-scaled check (cuda_flash_attention_tc_test):
/// |got - ref| <= bound (max_d |ref[row][d]| + 0.02 max |ref| + 1e-4).
void expectRowScaled(const std::vector<float> &ref,
                     const std::vector<float> &got, int64_t D, double bound,
                     const std::string &what) {
  ASSERT_EQ(ref.size(), got.size()) << what;
  double globalMax = 0.0;
  for (float x : ref)
    globalMax = std::max(globalMax, static_cast<double>(std::fabs(x)));
  for (size_t r = 0; r < ref.size() / static_cast<size_t>(D); ++r) {
    double rowMax = 0.0;
    for (int64_t d = 0; d < D; ++d)
      rowMax = std::max(rowMax, static_cast<double>(std::fabs(ref[r * D + d])));
    const double scale = rowMax + 0.02 * globalMax + 1e-4;
    for (int64_t d = 0; d < D; ++d) {
      const size_t i = r * D + d;
      ASSERT_TRUE(std::fabs(static_cast<double>(got[i]) - ref[i]) <=
                  bound * scale)
          << what << " at row " << r << " col " << d << ": expected "
          << ref[i] << ", got " << got[i];
    }
  }
}

//===----------------------------------------------------------------------===//
// Grouped-query attention
//===----------------------------------------------------------------------===//

struct GqaShape {
  int64_t B, H, Hkv, T, D;
};

std::string describe(const GqaShape &s) {
  return "B=" + std::to_string(s.B) + " H=" + std::to_string(s.H) +
         " Hkv=" + std::to_string(s.Hkv) + " T=" + std::to_string(s.T) +
         " D=" + std::to_string(s.D);
}

/// k [B, Hkv, T, D] repeated to [B, H, T, D] (Hugging Face repeat_kv).
std::vector<float> repeatKv(const std::vector<float> &k, const GqaShape &s) {
  const int64_t slice = s.T * s.D, group = s.H / s.Hkv;
  std::vector<float> r(static_cast<size_t>(s.B * s.H * slice));
  for (int64_t b = 0; b < s.B; ++b)
    for (int64_t h = 0; h < s.H; ++h)
      std::copy_n(k.begin() + (b * s.Hkv + h / group) * slice, slice,
                  r.begin() + (b * s.H + h) * slice);
  return r;
}

/// dk [B, H, T, D] of the repeated heads summed over each group, in f32 in
/// head order (repeat_kv's gradient).
std::vector<float> sumGroups(const std::vector<float> &dk, const GqaShape &s) {
  const int64_t slice = s.T * s.D, group = s.H / s.Hkv;
  std::vector<float> r(static_cast<size_t>(s.B * s.Hkv * slice), 0.0f);
  for (int64_t b = 0; b < s.B; ++b)
    for (int64_t h = 0; h < s.H; ++h)
      for (int64_t i = 0; i < slice; ++i)
        r[(b * s.Hkv + h / group) * slice + i] += dk[(b * s.H + h) * slice + i];
  return r;
}

/// Random inputs of one shape: q, dout [B, H, T, D], k, v [B, Hkv, T, D].
struct GqaInputs {
  std::vector<float> q, k, v, dout;
  GqaInputs(const GqaShape &s, uint32_t seed) {
    const int64_t nq = s.B * s.H * s.T * s.D, nk = s.B * s.Hkv * s.T * s.D;
    q = randomVec(nq, seed);
    k = randomVec(nk, seed + 1);
    v = randomVec(nk, seed + 2);
    dout = randomVec(nq, seed + 3);
  }
};

class CudaGqa : public CudaKernels {
protected:
  float *nanF32(int64_t n) {
    float *p = dev(n);
    EXPECT_EQ(zrt_cuda::fill(p, NAN, n), ZRT_OK) << zrt_cuda::last_error();
    return p;
  }
  zrt_bf16 *devB(const Bf16Vec &v) { return devOf(v); }
  /// n bf16 NaNs (every call must overwrite its outputs).
  zrt_bf16 *nanB(int64_t n) {
    return devOf(Bf16Vec(static_cast<size_t>(n), 0x7fc1));
  }

  /// Outputs of one f32 GQA forward + backward (the backward from the
  /// forward's out and lse).
  struct F32Result {
    std::vector<float> out, lse, dq, dk, dv;
  };
  F32Result runF32(const GqaShape &s, const GqaInputs &in) {
    const int64_t nq = s.B * s.H * s.T * s.D, nk = s.B * s.Hkv * s.T * s.D,
                  nl = s.B * s.H * s.T;
    float *q = dev(in.q), *k = dev(in.k), *v = dev(in.v), *d = dev(in.dout);
    float *out = nanF32(nq), *lse = nanF32(nl);
    float *dq = nanF32(nq), *dk = nanF32(nk), *dv = nanF32(nk);
    F32Result r;
    EXPECT_EQ(zrt_cuda::attention_forward_gqa(q, k, v, out, lse, nullptr, s.B,
                                              s.H, s.Hkv, s.T, s.D),
              ZRT_OK)
        << zrt_cuda::last_error();
    EXPECT_EQ(zrt_cuda::attention_backward_gqa(d, q, k, v, out, lse, dq, dk, dv,
                                               nullptr, s.B, s.H, s.Hkv, s.T,
                                               s.D),
              ZRT_OK)
        << zrt_cuda::last_error();
    r.out = host(out, nq);
    r.lse = host(lse, nl);
    r.dq = host(dq, nq);
    r.dk = host(dk, nk);
    r.dv = host(dv, nk);
    return r;
  }

  /// The f32 GQA kernels against the CPU's zrt_attention_*_gqa and against
  /// the multi-head kernels on repeated K/V; repeated runs bit-identical.
  void checkF32(const GqaShape &s, uint32_t seed) {
    const std::string what = describe(s);
    SCOPED_TRACE(what);
    const GqaInputs in(s, seed);
    const int64_t nq = s.B * s.H * s.T * s.D, nk = s.B * s.Hkv * s.T * s.D,
                  nl = s.B * s.H * s.T, group = s.H / s.Hkv;
    const F32Result r = runF32(s, in);
    if (HasFailure())
      return;

    // The CPU, its backward from the device's out and lse (one input).
    std::vector<float> out(nq), lse(nl), dq(nq), dk(nk), dv(nk);
    ASSERT_EQ(zrt_attention_forward_gqa(in.q.data(), in.k.data(), in.v.data(),
                                        out.data(), lse.data(), nullptr, s.B,
                                        s.H, s.Hkv, s.T, s.D),
              ZRT_OK)
        << zrt_last_error();
    ASSERT_EQ(zrt_attention_backward_gqa(
                  in.dout.data(), in.q.data(), in.k.data(), in.v.data(),
                  r.out.data(), r.lse.data(), dq.data(), dk.data(), dv.data(),
                  nullptr, s.B, s.H, s.Hkv, s.T, s.D),
              ZRT_OK)
        << zrt_last_error();
    const float rtol = 1e-5f;
    const float atol = 1e-6f * std::sqrt(static_cast<float>(s.T));
    expectClose(out, r.out, atol, rtol, "out vs CPU");
    expectClose(lse, r.lse, atol, rtol, "lse vs CPU");
    expectClose(dq, r.dq, atol, rtol, "dq vs CPU");
    // Sums of `group` heads' gradients.
    expectClose(dk, r.dk, atol * group, rtol, "dk vs CPU");
    expectClose(dv, r.dv, atol * group, rtol, "dv vs CPU");

    // The multi-head kernels on repeated K/V: the same per-head
    // arithmetic (out, lse, dq bit for bit); dk / dv the group sums of
    // theirs, accumulated in another order (f32 rounding).
    const std::vector<float> rk = repeatKv(in.k, s), rv = repeatKv(in.v, s);
    float *q = dev(in.q), *k = dev(rk), *v = dev(rv), *d = dev(in.dout);
    float *mo = nanF32(nq), *ml = nanF32(nl);
    float *mdq = nanF32(nq), *mdk = nanF32(nq), *mdv = nanF32(nq);
    ASSERT_EQ(zrt_cuda::attention_forward(q, k, v, mo, ml, nullptr, s.B, s.H,
                                          s.T, s.D),
              ZRT_OK)
        << zrt_cuda::last_error();
    ASSERT_EQ(zrt_cuda::attention_backward(d, q, k, v, mo, ml, mdq, mdk, mdv,
                                           nullptr, s.B, s.H, s.T, s.D),
              ZRT_OK)
        << zrt_cuda::last_error();
    expectSameBits(host(mo, nq), r.out, "out vs repeated K/V");
    expectSameBits(host(ml, nl), r.lse, "lse vs repeated K/V");
    expectSameBits(host(mdq, nq), r.dq, "dq vs repeated K/V");
    expectClose(sumGroups(host(mdk, nq), s), r.dk, atol * group, rtol,
                "dk vs repeated K/V");
    expectClose(sumGroups(host(mdv, nq), s), r.dv, atol * group, rtol,
                "dv vs repeated K/V");

    const F32Result again = runF32(s, in);
    expectSameBits(r.out, again.out, "out, second run");
    expectSameBits(r.dk, again.dk, "dk, second run");
    expectSameBits(r.dv, again.dv, "dv, second run");
    zrt_cuda::arena_reset(arena_);
  }

  /// The bf16 GQA on the CUDA cores: bit for bit the f32 GQA kernels on the
  /// widened inputs (rounded), within a bf16 ulp of the CPU's bf16 GQA.
  void checkBf16Simt(const GqaShape &s, uint32_t seed) {
    const std::string what = describe(s);
    SCOPED_TRACE(what);
    const GqaInputs raw(s, seed);
    const Bf16Vec q = toBf16(raw.q), k = toBf16(raw.k), v = toBf16(raw.v),
                  dout = toBf16(raw.dout);
    GqaInputs wide = raw;
    wide.q = widen(q), wide.k = widen(k), wide.v = widen(v),
    wide.dout = widen(dout);
    const int64_t nq = s.B * s.H * s.T * s.D, nk = s.B * s.Hkv * s.T * s.D,
                  nl = s.B * s.H * s.T;
    zrt_bf16 *gq = devB(q), *gk = devB(k), *gv = devB(v), *gd = devB(dout);
    zrt_bf16 *gout = nanB(nq), *gdq = nanB(nq), *gdk = nanB(nk),
             *gdv = nanB(nk);
    float *glse = nanF32(nl);
    ASSERT_EQ(zrt_cuda::attention_forward_gqa_bf16_simt(
                  gq, gk, gv, gout, glse, nullptr, s.B, s.H, s.Hkv, s.T, s.D),
              ZRT_OK)
        << zrt_cuda::last_error();
    // The backward from the f32 kernels' out (rounded) and lse, so that the
    // f32 run below sees the same inputs.
    const F32Result f = runF32(s, wide);
    expectSameBits(toBf16(f.out), hostOf(gout, nq), "out vs f32 kernels");
    expectSameBits(f.lse, host(glse, nl), "lse vs f32 kernels");
    const Bf16Vec outB = toBf16(f.out);
    const std::vector<float> outW = widen(outB);
    zrt_bf16 *cout = devB(outB);
    float *clse = dev(f.lse);
    ASSERT_EQ(zrt_cuda::attention_backward_gqa_bf16_simt(
                  gd, gq, gk, gv, cout, clse, gdq, gdk, gdv, nullptr, s.B, s.H,
                  s.Hkv, s.T, s.D),
              ZRT_OK)
        << zrt_cuda::last_error();
    float *fq = dev(wide.q), *fk = dev(wide.k), *fv = dev(wide.v),
          *fd = dev(wide.dout);
    float *fdq = nanF32(nq), *fdk = nanF32(nk), *fdv = nanF32(nk);
    ASSERT_EQ(zrt_cuda::attention_backward_gqa(fd, fq, fk, fv, dev(outW), clse,
                                               fdq, fdk, fdv, nullptr, s.B, s.H,
                                               s.Hkv, s.T, s.D),
              ZRT_OK)
        << zrt_cuda::last_error();
    const Bf16Vec bdq = hostOf(gdq, nq), bdk = hostOf(gdk, nk),
                  bdv = hostOf(gdv, nk);
    expectSameBits(toBf16(host(fdq, nq)), bdq, "dq vs f32 kernels");
    expectSameBits(toBf16(host(fdk, nk)), bdk, "dk vs f32 kernels");
    expectSameBits(toBf16(host(fdv, nk)), bdv, "dv vs f32 kernels");

    // The CPU's bf16 GQA (its f32 slices widened, group sums rounded once).
    Bf16Vec cOut(nq), cDq(nq), cDk(nk), cDv(nk);
    std::vector<float> cLse(nl);
    ASSERT_EQ(zrt_attention_forward_gqa_bf16(q.data(), k.data(), v.data(),
                                             cOut.data(), cLse.data(), nullptr,
                                             s.B, s.H, s.Hkv, s.T, s.D),
              ZRT_OK)
        << zrt_last_error();
    ASSERT_EQ(zrt_attention_backward_gqa_bf16(
                  dout.data(), q.data(), k.data(), v.data(), outB.data(),
                  f.lse.data(), cDq.data(), cDk.data(), cDv.data(), nullptr,
                  s.B, s.H, s.Hkv, s.T, s.D),
              ZRT_OK)
        << zrt_last_error();
    const double atol = 1e-6 * std::sqrt(static_cast<double>(s.T));
    expectBf16Close(cOut, hostOf(gout, nq), atol, 1e-5, "out vs CPU bf16");
    expectClose(cLse, host(glse, nl), static_cast<float>(atol), 1e-5f,
                "lse vs CPU bf16");
    expectBf16Close(cDq, bdq, atol, 1e-5, "dq vs CPU bf16");
    expectBf16Close(cDk, bdk, atol * 4, 1e-5, "dk vs CPU bf16");
    expectBf16Close(cDv, bdv, atol * 4, 1e-5, "dv vs CPU bf16");
    zrt_cuda::arena_reset(arena_);
  }

  /// The bf16 GQA on tensor cores against the CPU's f32 GQA on the widened
  /// inputs (the backward from the device's out and lse), with the
  /// tensor-core tests' bounds (out 1.5e-2, gradients 3e-2 of the row
  /// scale; lse 1e-5 relative).
  void checkBf16Tc(const GqaShape &s, uint32_t seed) {
    const std::string what = describe(s);
    SCOPED_TRACE(what);
    ASSERT_TRUE(zrt_cuda::attention_tc_forward_supported(s.D));
    const GqaInputs raw(s, seed);
    const Bf16Vec q = toBf16(raw.q), k = toBf16(raw.k), v = toBf16(raw.v),
                  dout = toBf16(raw.dout);
    const int64_t nq = s.B * s.H * s.T * s.D, nk = s.B * s.Hkv * s.T * s.D,
                  nl = s.B * s.H * s.T;
    zrt_bf16 *gq = devB(q), *gk = devB(k), *gv = devB(v), *gd = devB(dout);
    zrt_bf16 *gout = nanB(nq), *gdq = nanB(nq), *gdk = nanB(nk),
             *gdv = nanB(nk);
    float *glse = nanF32(nl);
    ASSERT_EQ(zrt_cuda::attention_forward_gqa_bf16_tc(gq, gk, gv, gout, glse,
                                                      s.B, s.H, s.Hkv, s.T,
                                                      s.D),
              ZRT_OK)
        << zrt_cuda::last_error();
    ASSERT_EQ(zrt_cuda::attention_backward_gqa_bf16_tc(gd, gq, gk, gv, gout,
                                                       glse, gdq, gdk, gdv,
                                                       s.B, s.H, s.Hkv, s.T,
                                                       s.D),
              ZRT_OK)
        << zrt_cuda::last_error();
    const Bf16Vec bOut = hostOf(gout, nq);
    const std::vector<float> lseGot = host(glse, nl);
    const std::vector<float> wq = widen(q), wk = widen(k), wv = widen(v),
                             wd = widen(dout), wOut = widen(bOut);
    std::vector<float> out(nq), lse(nl), dq(nq), dk(nk), dv(nk);
    ASSERT_EQ(zrt_attention_forward_gqa(wq.data(), wk.data(), wv.data(),
                                        out.data(), lse.data(), nullptr, s.B,
                                        s.H, s.Hkv, s.T, s.D),
              ZRT_OK)
        << zrt_last_error();
    ASSERT_EQ(zrt_attention_backward_gqa(wd.data(), wq.data(), wk.data(),
                                         wv.data(), wOut.data(), lseGot.data(),
                                         dq.data(), dk.data(), dv.data(),
                                         nullptr, s.B, s.H, s.Hkv, s.T, s.D),
              ZRT_OK)
        << zrt_last_error();
    expectRowScaled(out, wOut, s.D, 1.5e-2, "out");
    for (int64_t i = 0; i < nl; ++i)
      ASSERT_LE(std::fabs(lseGot[i] - lse[i]),
                1e-5 * std::max(1.0f, std::fabs(lse[i])))
          << "lse at " << i;
    expectRowScaled(dq, widen(hostOf(gdq, nq)), s.D, 3e-2, "dq");
    expectRowScaled(dk, widen(hostOf(gdk, nk)), s.D, 3e-2, "dk");
    expectRowScaled(dv, widen(hostOf(gdv, nk)), s.D, 3e-2, "dv");
    zrt_cuda::arena_reset(arena_);
  }
};

TEST_F(CudaGqa, F32MatchesCpuAndRepeatedKv) {
  checkF32({2, 4, 2, 70, 16}, 1); // two heads per K/V head, two key tiles
  checkF32({1, 4, 1, 70, 16}, 2); // one K/V head (multi-query)
  checkF32({1, 4, 2, 33, 24}, 3); // D padded to 32: scalar tile loads
}

TEST_F(CudaGqa, F32GenericPath) {
  checkF32({1, 4, 2, 12, 160}, 4); // D > 128: a warp per row
}

TEST_F(CudaGqa, Bf16CudaCoresMatchF32KernelsAndCpu) {
  checkBf16Simt({2, 4, 2, 70, 16}, 10);
  checkBf16Simt({1, 4, 1, 70, 16}, 11);
}

TEST_F(CudaGqa, Bf16TensorCoresMatchCpu) {
  checkBf16Tc({1, 4, 2, 70, 32}, 20);
  checkBf16Tc({2, 4, 1, 70, 32}, 21);
}

/// Hkv = H: the grouped-query entry points are the multi-head ones, bit for
/// bit (f32, bf16 on CUDA cores and on tensor cores).
TEST_F(CudaGqa, EqualHeadsIsMultiHeadBitForBit) {
  const GqaShape s{1, 2, 2, 70, 32};
  const GqaInputs in(s, 30);
  const int64_t n = s.B * s.H * s.T * s.D, nl = s.B * s.H * s.T;
  float *q = dev(in.q), *k = dev(in.k), *v = dev(in.v), *d = dev(in.dout);
  std::vector<float> ref[5];
  {
    float *out = nanF32(n), *lse = nanF32(nl), *dq = nanF32(n),
          *dk = nanF32(n), *dv = nanF32(n);
    ASSERT_EQ(zrt_cuda::attention_forward(q, k, v, out, lse, nullptr, s.B, s.H,
                                          s.T, s.D),
              ZRT_OK);
    ASSERT_EQ(zrt_cuda::attention_backward(d, q, k, v, out, lse, dq, dk, dv,
                                           nullptr, s.B, s.H, s.T, s.D),
              ZRT_OK);
    ref[0] = host(out, n), ref[1] = host(lse, nl), ref[2] = host(dq, n),
    ref[3] = host(dk, n), ref[4] = host(dv, n);
  }
  const F32Result g = runF32(s, in);
  expectSameBits(ref[0], g.out, "out");
  expectSameBits(ref[1], g.lse, "lse");
  expectSameBits(ref[2], g.dq, "dq");
  expectSameBits(ref[3], g.dk, "dk");
  expectSameBits(ref[4], g.dv, "dv");

  const Bf16Vec bq = toBf16(in.q), bk = toBf16(in.k), bv = toBf16(in.v),
                bd = toBf16(in.dout);
  zrt_bf16 *gq = devB(bq), *gk = devB(bk), *gv = devB(bv), *gd = devB(bd);
  for (bool tc : {false, true}) {
    SCOPED_TRACE(tc ? "tensor cores" : "CUDA cores");
    zrt_bf16 *o1 = nanB(n), *o2 = nanB(n);
    zrt_bf16 *g1[3] = {nanB(n), nanB(n), nanB(n)},
             *g2[3] = {nanB(n), nanB(n), nanB(n)};
    float *l1 = nanF32(nl), *l2 = nanF32(nl);
    if (tc) {
      ASSERT_EQ(zrt_cuda::attention_forward_bf16_tc(gq, gk, gv, o1, l1, s.B,
                                                    s.H, s.T, s.D),
                ZRT_OK);
      ASSERT_EQ(zrt_cuda::attention_forward_gqa_bf16_tc(gq, gk, gv, o2, l2, s.B,
                                                        s.H, s.H, s.T, s.D),
                ZRT_OK);
      ASSERT_EQ(zrt_cuda::attention_backward_bf16_tc(gd, gq, gk, gv, o1, l1,
                                                     g1[0], g1[1], g1[2], s.B,
                                                     s.H, s.T, s.D),
                ZRT_OK);
      ASSERT_EQ(zrt_cuda::attention_backward_gqa_bf16_tc(
                    gd, gq, gk, gv, o1, l1, g2[0], g2[1], g2[2], s.B, s.H, s.H,
                    s.T, s.D),
                ZRT_OK);
    } else {
      ASSERT_EQ(zrt_cuda::attention_forward_bf16_simt(gq, gk, gv, o1, l1,
                                                      nullptr, s.B, s.H, s.T,
                                                      s.D),
                ZRT_OK);
      ASSERT_EQ(zrt_cuda::attention_forward_gqa_bf16_simt(
                    gq, gk, gv, o2, l2, nullptr, s.B, s.H, s.H, s.T, s.D),
                ZRT_OK);
      ASSERT_EQ(zrt_cuda::attention_backward_bf16_simt(
                    gd, gq, gk, gv, o1, l1, g1[0], g1[1], g1[2], nullptr, s.B,
                    s.H, s.T, s.D),
                ZRT_OK);
      ASSERT_EQ(zrt_cuda::attention_backward_gqa_bf16_simt(
                    gd, gq, gk, gv, o1, l1, g2[0], g2[1], g2[2], nullptr, s.B,
                    s.H, s.H, s.T, s.D),
                ZRT_OK);
    }
    expectSameBits(hostOf(o1, n), hostOf(o2, n), "bf16 out");
    expectSameBits(host(l1, nl), host(l2, nl), "bf16 lse");
    for (int t = 0; t < 3; ++t)
      expectSameBits(hostOf(g1[t], n), hostOf(g2[t], n), "bf16 gradient");
  }
}

//===----------------------------------------------------------------------===//
// Masked cross-entropy
//===----------------------------------------------------------------------===//

/// Targets in [0, classes), every `every`-th (from row 1) set to `ignore`.
std::vector<int32_t> maskedTargets(int64_t N, int64_t classes, int every,
                                   int32_t ignore, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int32_t> dist(
      0, static_cast<int32_t>(classes - 1));
  std::vector<int32_t> t(static_cast<size_t>(N));
  for (int64_t i = 0; i < N; ++i)
    t[i] = (every > 0 && i % every == 1) ? ignore : dist(gen);
  return t;
}

struct MaskedCase {
  int64_t N, V, classes;
  int every;      ///< every `every`-th target ignored (1: all; 0: none)
  int32_t ignore; ///< ignore_index
};

std::string describe(const MaskedCase &c) {
  return "N=" + std::to_string(c.N) + " V=" + std::to_string(c.V) +
         " classes=" + std::to_string(c.classes) +
         " every=" + std::to_string(c.every) +
         " ignore=" + std::to_string(c.ignore);
}

/// Padding columns of logits [N, V] set to a value that must not count.
std::vector<float> maskedLogits(const MaskedCase &c, uint32_t seed) {
  std::vector<float> x = randomVec(c.N * c.V, seed, -5.0f, 5.0f);
  for (int64_t i = 0; i < c.N; ++i)
    for (int64_t j = c.classes; j < c.V; ++j)
      x[static_cast<size_t>(i * c.V + j)] = 1e30f;
  return x;
}

/// Ignored rows and padding columns of dlogits are exactly zero.
template <typename T>
void expectZeroRows(const std::vector<T> &d, const std::vector<int32_t> &t,
                    const MaskedCase &c) {
  for (int64_t i = 0; i < c.N; ++i)
    for (int64_t j = 0; j < c.V; ++j)
      if (t[i] == c.ignore || j >= c.classes)
        ASSERT_EQ(d[static_cast<size_t>(i * c.V + j)], T(0))
            << "row " << i << " col " << j;
}

int64_t counted(const std::vector<int32_t> &t, int32_t ignore) {
  return std::count_if(t.begin(), t.end(),
                       [&](int32_t x) { return x != ignore; });
}

class CudaMaskedCrossEntropy : public CudaKernels {};

TEST_F(CudaMaskedCrossEntropy, F32MatchesCpu) {
  const MaskedCase cases[] = {
      {37, 300, 257, 3, -100}, // a third of the rows ignored
      {37, 300, 300, 4, 7},    // ignore_index a real class: rows skipped
      {16, 64, 60, 1, -100},   // every row ignored: NaN loss, zero gradient
      {0, 8, 5, 0, -100},      // empty: NaN
  };
  const float dlossValue = 0.6f;
  for (const MaskedCase &c : cases) {
    const std::string what = describe(c);
    SCOPED_TRACE(what);
    const std::vector<float> logits = maskedLogits(c, 40);
    const std::vector<int32_t> t =
        c.every == 1 ? std::vector<int32_t>(c.N, c.ignore)
                     : maskedTargets(c.N, c.classes, c.every, c.ignore, 41);
    float refLoss = 0.0f;
    // One spare element: the CPU wants a dlogits pointer even for N = 0.
    std::vector<float> refD(static_cast<size_t>(c.N * c.V + 1));
    ASSERT_EQ(zrt_cross_entropy_masked(logits.data(), t.data(), &refLoss, c.N,
                                       c.V, c.classes, c.ignore),
              ZRT_OK)
        << zrt_last_error();
    ASSERT_EQ(zrt_cross_entropy_masked_backward(logits.data(), t.data(),
                                                &dlossValue, refD.data(), c.N,
                                                c.V, c.classes, c.ignore),
              ZRT_OK)
        << zrt_last_error();
    float *dLogits = dev(logits), *dLoss = dev(1), *dD = dev(c.N * c.V);
    float *dDloss = dev(std::vector<float>{dlossValue});
    int32_t *dT = devOf(t);
    ASSERT_EQ(zrt_cuda::fill(dD, NAN, c.N * c.V), ZRT_OK);
    ASSERT_EQ(zrt_cuda::cross_entropy_masked(dLogits, dT, dLoss, c.N, c.V,
                                             c.classes, c.ignore),
              ZRT_OK)
        << zrt_cuda::last_error();
    ASSERT_EQ(zrt_cuda::cross_entropy_masked_backward(
                  dLogits, dT, dDloss, dD, c.N, c.V, c.classes, c.ignore),
              ZRT_OK)
        << zrt_cuda::last_error();
    const float loss = host(dLoss, 1)[0];
    const int64_t M = counted(t, c.ignore);
    if (M == 0) {
      EXPECT_TRUE(std::isnan(refLoss));
      EXPECT_TRUE(std::isnan(loss)) << loss;
    } else {
      EXPECT_NEAR(loss, refLoss, 1e-5f * std::fabs(refLoss) + 1e-7f);
    }
    const float g = M > 0 ? dlossValue / static_cast<float>(M) : 0.0f;
    const std::vector<float> got = host(dD, c.N * c.V);
    refD.pop_back();
    expectClose(refD, got, 1e-6f * g + 1e-30f, 1e-5f, "dlogits");
    expectZeroRows(got, t, c);
    zrt_cuda::arena_reset(arena_);
  }
}

/// Without ignored rows the masked kernels are the padded ones: the same
/// rows, the same mean (M = N), the same gradient scale, bit for bit.
TEST_F(CudaMaskedCrossEntropy, NoIgnoredRowsIsPaddedBitForBit) {
  const MaskedCase c{37, 300, 257, 0, -100};
  const std::vector<float> logits = maskedLogits(c, 42);
  const std::vector<int32_t> t = maskedTargets(c.N, c.classes, 0, 0, 43);
  float *dLogits = dev(logits), *l1 = dev(1), *l2 = dev(1);
  float *d1 = dev(c.N * c.V), *d2 = dev(c.N * c.V);
  float *dDloss = dev(std::vector<float>{0.7f});
  int32_t *dT = devOf(t);
  ASSERT_EQ(zrt_cuda::cross_entropy_padded(dLogits, dT, l1, c.N, c.V,
                                           c.classes),
            ZRT_OK);
  ASSERT_EQ(zrt_cuda::cross_entropy_masked(dLogits, dT, l2, c.N, c.V, c.classes,
                                           c.ignore),
            ZRT_OK);
  ASSERT_EQ(zrt_cuda::cross_entropy_padded_backward(dLogits, dT, dDloss, d1,
                                                    c.N, c.V, c.classes),
            ZRT_OK);
  ASSERT_EQ(zrt_cuda::cross_entropy_masked_backward(
                dLogits, dT, dDloss, d2, c.N, c.V, c.classes, c.ignore),
            ZRT_OK);
  expectSameBits(host(l1, 1), host(l2, 1), "loss");
  expectSameBits(host(d1, c.N * c.V), host(d2, c.N * c.V), "dlogits");
}

TEST_F(CudaMaskedCrossEntropy, Bf16MatchesCpu) {
  const MaskedCase cases[] = {
      {37, 300, 257, 3, -100},     // staged rows
      {16, 64, 60, 1, -100},       // every row ignored
      {3, 140000, 139999, 2, -100}, // longer than shared memory: unstaged
  };
  const float dlossValue = 0.6f;
  for (const MaskedCase &c : cases) {
    const std::string what = describe(c);
    SCOPED_TRACE(what);
    const Bf16Vec logits = toBf16(maskedLogits(c, 44));
    const std::vector<int32_t> t =
        c.every == 1 ? std::vector<int32_t>(c.N, c.ignore)
                     : maskedTargets(c.N, c.classes, c.every, c.ignore, 45);
    float refLoss = 0.0f;
    Bf16Vec refD(static_cast<size_t>(c.N * c.V));
    ASSERT_EQ(zrt_cross_entropy_masked_bf16(logits.data(), t.data(), &refLoss,
                                            c.N, c.V, c.classes, c.ignore),
              ZRT_OK)
        << zrt_last_error();
    ASSERT_EQ(zrt_cross_entropy_masked_backward_bf16(
                  logits.data(), t.data(), &dlossValue, refD.data(), c.N, c.V,
                  c.classes, c.ignore),
              ZRT_OK)
        << zrt_last_error();
    zrt_bf16 *dLogits = devOf(logits);
    zrt_bf16 *dD = devOf(Bf16Vec(static_cast<size_t>(c.N * c.V), 0x7fc1));
    float *dLoss = dev(1), *dDloss = dev(std::vector<float>{dlossValue});
    int32_t *dT = devOf(t);
    ASSERT_EQ(zrt_cuda::cross_entropy_masked_bf16(dLogits, dT, dLoss, c.N, c.V,
                                                  c.classes, c.ignore),
              ZRT_OK)
        << zrt_cuda::last_error();
    ASSERT_EQ(zrt_cuda::cross_entropy_masked_backward_bf16(
                  dLogits, dT, dDloss, dD, c.N, c.V, c.classes, c.ignore),
              ZRT_OK)
        << zrt_cuda::last_error();
    const float loss = host(dLoss, 1)[0];
    const int64_t M = counted(t, c.ignore);
    if (M == 0) {
      EXPECT_TRUE(std::isnan(refLoss));
      EXPECT_TRUE(std::isnan(loss)) << loss;
    } else {
      EXPECT_NEAR(loss, refLoss, 1e-5f * std::fabs(refLoss) + 1e-7f);
    }
    const float g = M > 0 ? dlossValue / static_cast<float>(M) : 0.0f;
    const Bf16Vec got = hostOf(dD, c.N * c.V);
    expectBf16Close(refD, got, 1e-6 * g + 1e-30, 1e-5, "dlogits");
    expectZeroRows(got, t, c);
    zrt_cuda::arena_reset(arena_);
  }
}

/// The device error word of cuda_loss_attention_test: the next synchronizing
/// copy reports ZRT_ERR_OUT_OF_RANGE once, the one after succeeds.
void expectPendingDeviceError(const void *p, const std::string &what) {
  float sink[1] = {0.0f};
  EXPECT_EQ(zrt_cuda::copy_to_host(sink, p, sizeof(float)),
            ZRT_ERR_OUT_OF_RANGE)
      << what;
  EXPECT_EQ(zrt_cuda::copy_to_host(sink, p, sizeof(float)), ZRT_OK) << what;
}

TEST_F(CudaMaskedCrossEntropy, CountedTargetOutsideClassesRaisesDeviceError) {
  const int64_t N = 4, V = 10, classes = 8;
  float *dLogits = dev(randomVec(N * V, 46)), *dLoss = dev(1),
        *dD = dev(N * V), *dDloss = dev(std::vector<float>{1.0f});
  // -100 is ignored; 8 is a padding column, -1 outside too.
  for (int32_t bad : {8, -1}) {
    int32_t *dT = devOf(std::vector<int32_t>{1, -100, bad, 7});
    ASSERT_EQ(zrt_cuda::cross_entropy_masked(dLogits, dT, dLoss, N, V, classes,
                                             -100),
              ZRT_OK);
    expectPendingDeviceError(dLoss, "forward " + std::to_string(bad));
    ASSERT_EQ(zrt_cuda::cross_entropy_masked_backward(dLogits, dT, dDloss, dD,
                                                      N, V, classes, -100),
              ZRT_OK);
    expectPendingDeviceError(dD, "backward " + std::to_string(bad));
  }
  // An ignored row's target is never checked.
  int32_t *dT = devOf(std::vector<int32_t>{1, -100, -100, 7});
  ASSERT_EQ(
      zrt_cuda::cross_entropy_masked(dLogits, dT, dLoss, N, V, classes, -100),
      ZRT_OK);
  float sink = 0.0f;
  EXPECT_EQ(zrt_cuda::copy_to_host(&sink, dLoss, sizeof sink), ZRT_OK);
}

//===----------------------------------------------------------------------===//
// Argument checks (no device needed: they return before any CUDA call)
//===----------------------------------------------------------------------===//

TEST(CudaGqaMaskedArgs, SameErrorsAsTheCpu) {
  float x[8] = {};
  zrt_bf16 b[8] = {};
  int32_t t[2] = {};
  // Hkv not dividing H, Hkv < 1 (checked before the sizes), then the
  // multi-head checks under the gqa names.
  EXPECT_SAME_ERROR(
      zrt_cuda::attention_forward_gqa(x, x, x, x, x, nullptr, 1, 4, 3, 1, 1),
      zrt_attention_forward_gqa(x, x, x, x, x, nullptr, 1, 4, 3, 1, 1));
  EXPECT_SAME_ERROR(
      zrt_cuda::attention_forward_gqa(x, x, x, x, x, nullptr, 1, 4, 0, 0, 1),
      zrt_attention_forward_gqa(x, x, x, x, x, nullptr, 1, 4, 0, 0, 1));
  EXPECT_SAME_ERROR(
      zrt_cuda::attention_forward_gqa(x, x, x, x, x, nullptr, 1, 4, 2, 0, 1),
      zrt_attention_forward_gqa(x, x, x, x, x, nullptr, 1, 4, 2, 0, 1));
  EXPECT_SAME_ERROR(zrt_cuda::attention_forward_gqa(x, nullptr, x, x, x,
                                                    nullptr, 1, 4, 2, 1, 1),
                    zrt_attention_forward_gqa(x, nullptr, x, x, x, nullptr, 1,
                                              4, 2, 1, 1));
  EXPECT_SAME_ERROR(
      zrt_cuda::attention_backward_gqa(x, x, x, x, x, x, x, x, x, nullptr, 1,
                                       4, 3, 1, 1),
      zrt_attention_backward_gqa(x, x, x, x, x, x, x, x, x, nullptr, 1, 4, 3,
                                 1, 1));
  EXPECT_SAME_ERROR(
      zrt_cuda::attention_backward_gqa(x, x, x, x, x, x, x, nullptr, x,
                                       nullptr, 1, 4, 2, 1, 1),
      zrt_attention_backward_gqa(x, x, x, x, x, x, x, nullptr, x, nullptr, 1,
                                 4, 2, 1, 1));
  EXPECT_SAME_ERROR(zrt_cuda::attention_forward_gqa_bf16_simt(
                        b, b, b, b, x, nullptr, 1, 4, 3, 1, 1),
                    zrt_attention_forward_gqa_bf16(b, b, b, b, x, nullptr, 1,
                                                   4, 3, 1, 1));
  EXPECT_SAME_ERROR(zrt_cuda::attention_backward_gqa_bf16_simt(
                        b, b, b, b, b, x, b, b, nullptr, nullptr, 1, 4, 2, 1,
                        1),
                    zrt_attention_backward_gqa_bf16(b, b, b, b, b, x, b, b,
                                                    nullptr, nullptr, 1, 4, 2,
                                                    1, 1));
  // An empty batch needs no pointers.
  EXPECT_EQ(zrt_cuda::attention_forward_gqa(nullptr, nullptr, nullptr, nullptr,
                                            nullptr, nullptr, 0, 4, 2, 3, 8),
            ZRT_OK);
  // Masked cross-entropy: sizes, num_classes, NULL buffers, NULL dloss.
  EXPECT_SAME_ERROR(
      zrt_cuda::cross_entropy_masked(x, t, x, -1, 2, 2, -100),
      zrt_cross_entropy_masked(x, t, x, -1, 2, 2, -100));
  EXPECT_SAME_ERROR(
      zrt_cuda::cross_entropy_masked(x, t, x, 1, 2, 3, -100),
      zrt_cross_entropy_masked(x, t, x, 1, 2, 3, -100));
  EXPECT_SAME_ERROR(
      zrt_cuda::cross_entropy_masked(x, nullptr, x, 1, 2, 2, -100),
      zrt_cross_entropy_masked(x, nullptr, x, 1, 2, 2, -100));
  EXPECT_SAME_ERROR(
      zrt_cuda::cross_entropy_masked(x, t, nullptr, 1, 2, 2, -100),
      zrt_cross_entropy_masked(x, t, nullptr, 1, 2, 2, -100));
  EXPECT_SAME_ERROR(
      zrt_cuda::cross_entropy_masked_bf16(nullptr, t, x, 1, 2, 2, -100),
      zrt_cross_entropy_masked_bf16(nullptr, t, x, 1, 2, 2, -100));
  EXPECT_SAME_ERROR(zrt_cuda::cross_entropy_masked_backward(x, t, nullptr, x,
                                                            1, 2, 2, -100),
                    zrt_cross_entropy_masked_backward(x, t, nullptr, x, 1, 2,
                                                      2, -100));
  EXPECT_SAME_ERROR(zrt_cuda::cross_entropy_masked_backward(x, t, x, x, 1, 2,
                                                            0, -100),
                    zrt_cross_entropy_masked_backward(x, t, x, x, 1, 2, 0,
                                                      -100));
  EXPECT_SAME_ERROR(zrt_cuda::cross_entropy_masked_backward_bf16(
                        b, t, x, nullptr, 1, 2, 2, -100),
                    zrt_cross_entropy_masked_backward_bf16(b, t, x, nullptr, 1,
                                                           2, 2, -100));
}

} // namespace
