// The kernels of decoder.cu (RMSNorm, SiLU/SwiGLU, RoPE) on the emulator:
// within rounding of the CPU runtime's zrt_* (warp sums, CUDA's expf); the
// bf16 SiLU/SwiGLU/RoPE kernels bit for bit the f32 kernels on the widened
// inputs rounded once; the bf16 RMSNorm within two bf16 steps of the CPU's
// (x * r is rounded before the weight); the residual form bit for bit add
// + RMSNorm; the rotary table bit for bit the CPU's; the argument rules the
// CPU's. Prints ALL OK.
#include "test_util.h"
#include "zrt_cuda.h"

#include <cuda_runtime.h>

using emu_test::Args;
using emu_test::rnd;
using emu_test::toB;
using emu_test::wid;
using Vec = std::vector<float>;
using VecB = std::vector<zrt_bf16>;

static bool allok = true;
#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "FAIL: " __VA_ARGS__);                                   \
      fprintf(stderr, "\n");                                                   \
      allok = false;                                                           \
    }                                                                          \
  } while (0)

static void near(const Vec &got, const Vec &want, double rtol, double atol,
                 const std::string &what) {
  for (size_t i = 0; i < want.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= atol + rtol * std::fabs(want[i]))) {
      fprintf(stderr, "FAIL %s at %zu: %.9g vs %.9g\n", what.c_str(), i, got[i],
              want[i]);
      allok = false;
      return;
    }
}

static void same(const VecB &got, const VecB &want, const std::string &what) {
  for (size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i]) {
      fprintf(stderr, "FAIL %s at %zu: 0x%04x vs 0x%04x\n", what.c_str(), i,
              got[i], want[i]);
      allok = false;
      return;
    }
}

static void testRmsNorm() {
  struct S {
    int64_t N, C;
  };
  for (S s : {S{1, 1}, S{3, 31}, S{5, 64}, S{9, 200}}) {
    const std::string cs =
        "N=" + std::to_string(s.N) + " C=" + std::to_string(s.C);
    const int64_t N = s.N, C = s.C;
    Vec x = rnd(N * C, 60, -2, 2), w = rnd(C, 61, 0.5f, 1.5f),
        dy = rnd(N * C, 62), add = rnd(N * C, 63), b = rnd(N * C, 64);
    Vec g(N * C), c(N * C);
    CHECK(zrt_cuda::rms_norm(x.data(), w.data(), g.data(), N, C, 1e-5f) == 0,
          "rms");
    CHECK(zrt_rms_norm(x.data(), w.data(), c.data(), N, C, 1e-5f) == 0,
          "cpu rms");
    near(g, c, 2e-6, 1e-7, "rms_norm vs cpu " + cs);
    // Residual form: sum bit for bit, out = rms_norm(sum) bit for bit.
    Vec sum(N * C), out(N * C), ref(N * C);
    CHECK(zrt_cuda::add_rms_norm(x.data(), b.data(), w.data(), sum.data(),
                                 out.data(), N, C, 1e-5f) == 0,
          "add rms");
    for (int64_t i = 0; i < N * C; ++i)
      CHECK(sum[i] == x[i] + b[i], "sum %s at %lld", cs.c_str(), (long long)i);
    CHECK(zrt_cuda::rms_norm(sum.data(), w.data(), ref.data(), N, C, 1e-5f) ==
              0,
          "rms");
    CHECK(out == ref, "add_rms_norm vs rms_norm(sum) %s", cs.c_str());
    // Backward, with and without addend, against the CPU.
    Vec dx(N * C), dw(C), cdx(N * C), cdw(C), work(N);
    CHECK(zrt_cuda::rms_norm_backward(dy.data(), x.data(), w.data(), add.data(),
                                      dx.data(), dw.data(), work.data(), N, C,
                                      1e-5f) == 0,
          "bwd");
    CHECK(zrt_rms_norm_backward(dy.data(), x.data(), w.data(), add.data(),
                                cdx.data(), cdw.data(), nullptr, N, C,
                                1e-5f) == 0,
          "cpu bwd");
    near(dx, cdx, 1e-5, 1e-6, "rms_norm_backward dx " + cs);
    near(dw, cdw, 1e-5, 1e-6, "rms_norm_backward dw " + cs);
    // bf16: within two bf16 steps of the CPU's bf16.
    VecB xb = toB(x), wb = toB(w), ob(N * C), cb(N * C);
    CHECK(zrt_cuda::rms_norm_bf16(xb.data(), wb.data(), ob.data(), N, C,
                                  1e-5f) == 0,
          "bf16");
    CHECK(zrt_rms_norm_bf16(xb.data(), wb.data(), cb.data(), N, C, 1e-5f) == 0,
          "cpu bf16");
    near(wid(ob), wid(cb), 2.0 / 128, 0, "rms_norm_bf16 vs cpu " + cs);
    VecB dyb = toB(dy), dxb(N * C), dwb(C), cdxb(N * C), cdwb(C);
    CHECK(zrt_cuda::rms_norm_backward_bf16(dyb.data(), xb.data(), wb.data(),
                                           nullptr, dxb.data(), dwb.data(),
                                           nullptr, N, C, 1e-5f) == 0,
          "bf16 bwd");
    CHECK(zrt_rms_norm_backward_bf16(dyb.data(), xb.data(), wb.data(), nullptr,
                                     cdxb.data(), cdwb.data(), nullptr, N, C,
                                     1e-5f) == 0,
          "cpu bf16 bwd");
    near(wid(dxb), wid(cdxb), 2.0 / 128, 1e-6,
         "rms_norm_backward_bf16 dx " + cs);
    near(wid(dwb), wid(cdwb), 2.0 / 128, 1e-6,
         "rms_norm_backward_bf16 dw " + cs);
  }
  float x[4] = {1, 2, 3, 4}, y[4];
  CHECK(zrt_cuda::rms_norm(x, nullptr, y, 1, 4, 0.0f) ==
                ZRT_ERR_INVALID_ARGUMENT &&
            std::string(zrt_cuda::last_error()) ==
                "zrt_rms_norm: eps must be positive and finite",
        "eps message: %s", zrt_cuda::last_error());
  printf("rms_norm done\n");
}

static void testGated() {
  for (int64_t n : {int64_t(1), int64_t(37), int64_t(1000)}) {
    const std::string cs = "n=" + std::to_string(n);
    Vec g = rnd(n, 70, -6, 6), u = rnd(n, 71), d = rnd(n, 72);
    Vec y(n), cy(n), s(n), cs_(n);
    CHECK(zrt_cuda::swiglu(g.data(), u.data(), y.data(), n) == 0, "swiglu");
    CHECK(zrt_swiglu(g.data(), u.data(), cy.data(), n) == 0, "cpu swiglu");
    near(y, cy, 1e-6, 1e-7, "swiglu " + cs);
    CHECK(zrt_cuda::silu(g.data(), s.data(), n) == 0, "silu");
    CHECK(zrt_silu(g.data(), cs_.data(), n) == 0, "cpu silu");
    near(s, cs_, 1e-6, 1e-7, "silu " + cs);
    Vec dg(n), du(n), cdg(n), cdu(n), ds(n), cds(n);
    CHECK(zrt_cuda::swiglu_backward(g.data(), u.data(), d.data(), dg.data(),
                                    du.data(), n) == 0,
          "swiglu bwd");
    CHECK(zrt_swiglu_backward(g.data(), u.data(), d.data(), cdg.data(),
                              cdu.data(), n) == 0,
          "cpu swiglu bwd");
    near(dg, cdg, 1e-6, 1e-7, "dgate " + cs);
    near(du, cdu, 1e-6, 1e-7, "dup " + cs);
    CHECK(zrt_cuda::silu_backward(g.data(), d.data(), ds.data(), n) == 0,
          "silu bwd");
    CHECK(zrt_silu_backward(g.data(), d.data(), cds.data(), n) == 0,
          "cpu silu bwd");
    near(ds, cds, 1e-6, 1e-7, "dsilu " + cs);
    // bf16 = the f32 kernel on the widened inputs, rounded once.
    VecB gb = toB(g), ub = toB(u), db = toB(d), yb(n), dgb(n), dub(n);
    Vec gw = wid(gb), uw = wid(ub), dw = wid(db), yw(n), dgw(n), duw(n);
    CHECK(zrt_cuda::swiglu_bf16(gb.data(), ub.data(), yb.data(), n) == 0, "b");
    CHECK(zrt_cuda::swiglu(gw.data(), uw.data(), yw.data(), n) == 0, "w");
    same(yb, toB(yw), "swiglu_bf16 " + cs);
    CHECK(zrt_cuda::swiglu_backward_bf16(gb.data(), ub.data(), db.data(),
                                         dgb.data(), dub.data(), n) == 0,
          "b");
    CHECK(zrt_cuda::swiglu_backward(gw.data(), uw.data(), dw.data(), dgw.data(),
                                    duw.data(), n) == 0,
          "w");
    same(dgb, toB(dgw), "dgate_bf16 " + cs);
    same(dub, toB(duw), "dup_bf16 " + cs);
  }
  printf("silu/swiglu done\n");
}

static void testRope() {
  const int64_t B = 2, T = 7, H = 3, D = 8, half = D / 2, n = B * T * H * D;
  zrt_rope_scaling s{8.0, 1.0, 4.0, 16};
  Vec cpu(T * half * 2), got(T * half * 2);
  float *dev = nullptr;
  CHECK(cudaMalloc(reinterpret_cast<void **>(&dev), got.size() * 4) ==
            cudaSuccess,
        "malloc");
  CHECK(zrt_cuda::rope_table(dev, T, half, 1e4, &s) == 0, "table");
  CHECK(cudaMemcpy(got.data(), dev, got.size() * 4, cudaMemcpyDeviceToHost) ==
            cudaSuccess,
        "copy");
  CHECK(zrt_rope_table(cpu.data(), T, half, 1e4, &s) == 0, "cpu table");
  CHECK(got == cpu, "rope_table bit for bit the CPU's");
  cudaFree(dev);
  Vec x = rnd(n, 80);
  for (int layout : {ZRT_ROPE_ROTATE_HALF, ZRT_ROPE_INTERLEAVED})
    for (int inverse : {0, 1}) {
      const std::string cs = "layout=" + std::to_string(layout) +
                             " inverse=" + std::to_string(inverse);
      Vec y(n), cy(n);
      CHECK(zrt_cuda::rope(x.data(), cpu.data(), y.data(), B, T, H, D, layout,
                           inverse) == 0,
            "rope");
      CHECK(zrt_rope(x.data(), cpu.data(), cy.data(), B, T, H, D, layout,
                     inverse) == 0,
            "cpu rope");
      near(y, cy, 1e-6, 1e-7, "rope " + cs);
      VecB xb = toB(x), yb(n);
      Vec xw = wid(xb), yw(n);
      CHECK(zrt_cuda::rope_bf16(xb.data(), cpu.data(), yb.data(), B, T, H, D,
                                layout, inverse) == 0,
            "b");
      CHECK(zrt_cuda::rope(xw.data(), cpu.data(), yw.data(), B, T, H, D, layout,
                           inverse) == 0,
            "w");
      same(yb, toB(yw), "rope_bf16 " + cs);
    }
  CHECK(zrt_cuda::rope(x.data(), cpu.data(), x.data(), 1, 1, 1, 3, 0, 0) ==
            ZRT_ERR_INVALID_ARGUMENT,
        "odd D");
  printf("rope done\n");
}

int main(int argc, char **argv) {
  const Args args(argc, argv);
  for (int order : args.orders) {
    emu::order = order;
    printf("scheduling order %d\n", order);
    testRmsNorm();
    testGated();
    testRope();
  }
  printf(allok ? "ALL OK\n" : "FAILURES\n");
  return allok ? 0 : 1;
}
