//===- gemm.cpp - GEMM libraries against the CPU's peak, per training shape ===//
//
// The training step's matrix products, one row per GEMM shape of a GPT's
// linear layers (forward y = x W^T, the input gradient dx = dy W and the
// weight gradient dW = dy^T x), timed with each library the runtime could
// call, on the same threads (OMP_NUM_THREADS):
//
//   openblas-f32   cblas_sgemm of the OpenBLAS the runtime links (its
//                  OpenMP build; the core it runs is printed)
//   onednn-f32     dnnl_sgemm (oneDNN's BLAS-like f32 GEMM)
//   onednn-bf16    a oneDNN matmul primitive: bf16 op(A), op(B), f32 C
//                  (its implementation is printed: brgemm:avx512_core_amx
//                  runs the AMX tiles)
//   zrt-f32        zrt_matmul, the runtime's f32 GEMM (what it routes to)
//   zrt-bf16       zrt_matmul_bf16, the runtime's bf16 GEMM
//
// and prints GFLOP/s (2 M N K / s, best of --reps after one untimed call)
// and its fraction of the peak of the threads' cores: f32 = cores x clock x
// 64 FLOP/cycle (two 16-lane AVX-512 FMA ports), bf16 = cores x clock x
// 1024 FLOP/cycle on a CPU with AMX-BF16 (TDPBF16PS: 16 x 16 x 32 x 2 FLOP
// per 16 cycles), else 128 FLOP/cycle (AVX512_BF16 VDPBF16PS: 16 lanes x 2
// products x 2 FLOP, two ports; e.g. AMD Zen 5). The clock is measured: a chain of dependent integer adds (one
// per cycle) timed against the wall clock, on the calling thread.
//
// Each library's C is also computed with one thread and compared bit for
// bit with the team's ("same bits" column: the runtime's tests demand the
// same numbers at every thread count).
//
// Usage: gemm [--reps R] [--shapes demo|c768|all]   (bench/gemm builds and
// runs it)
//
//===----------------------------------------------------------------------===//

#include "best_seconds.h"

#include "zrt/zrt.h"

#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl.hpp>
#include <omp.h>

#include <chrono>
#include <cpuid.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

extern "C" char *openblas_get_corename(void);

namespace {

/// One GEMM: C[M, N] = op(A) op(B), op(A) [M, K], op(B) [K, N], row-major.
struct Shape {
  std::string name; ///< which layer and which of its three products
  int64_t M, N, K;
  bool transA, transB;
};

/// The three products of a linear layer with `in` inputs and `out` outputs
/// over `tokens` rows (weights [out, in], PyTorch's layout).
void linear(std::vector<Shape> &s, const std::string &model,
            const std::string &layer, int64_t tokens, int64_t in,
            int64_t out) {
  const std::string p = model + " " + layer;
  s.push_back({p + " fwd", tokens, out, in, false, true});
  s.push_back({p + " dx", tokens, in, out, false, false});
  s.push_back({p + " dW", out, in, tokens, true, false});
}

/// A GPT's linear layers (qkv, attention out, MLP fc and proj, LM head over
/// the byte vocabulary) at width C over `tokens` = B T rows, and its
/// attention's per-tile GEMMs (32 query rows, T keys, head size D).
void gpt(std::vector<Shape> &s, const std::string &model, int64_t tokens,
         int64_t C, int64_t T, int64_t D, int64_t vocab) {
  linear(s, model, "qkv", tokens, C, 3 * C);
  linear(s, model, "attn-out", tokens, C, C);
  linear(s, model, "fc", tokens, C, 4 * C);
  linear(s, model, "proj", tokens, 4 * C, C);
  linear(s, model, "lm-head", tokens, C, vocab);
  s.push_back({model + " attn QK^T tile", 32, T, D, false, true});
  s.push_back({model + " attn PV tile", 32, D, T, false, false});
}

/// The core clock in Hz: 2^28 dependent register-register adds (one cycle
/// each; not `add $imm`, which Golden Cove and later cores can fold at
/// rename) against the wall clock, best of 5.
/// Whether the CPU has AMX-BF16 (CPUID leaf 7, EDX bit 22).
bool hasAmxBf16() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (d >> 22 & 1);
}

double measureClockHz() {
  const int64_t n = int64_t(1) << 28;
  double best = 1e30;
  for (int r = 0; r < 5; ++r) {
    uint64_t x = 0, one = 1;
    const auto t0 = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < n; i += 8)
      asm volatile("add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
                   "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0"
                   : "+r"(x)
                   : "r"(one));
    const std::chrono::duration<double> dt =
        std::chrono::steady_clock::now() - t0;
    best = dt.count() < best ? dt.count() : best;
  }
  return double(n) / best;
}

/// f32 -> bf16, round to nearest even (finite inputs).
uint16_t toBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

/// The operands of one shape, f32 and their bf16 roundings.
struct Operands {
  std::vector<float> a, b, c, c1;
  std::vector<uint16_t> a16, b16;
  explicit Operands(const Shape &s)
      : a(s.M * s.K), b(s.K * s.N), c(s.M * s.N), c1(s.M * s.N),
        a16(s.M * s.K), b16(s.K * s.N) {
    uint32_t state = 12345;
    auto next = [&] {
      state = state * 1664525u + 1013904223u;
      return float(state >> 8) / float(1u << 24) - 0.5f;
    };
    for (size_t i = 0; i < a.size(); ++i)
      a16[i] = toBf16(a[i] = next());
    for (size_t i = 0; i < b.size(); ++i)
      b16[i] = toBf16(b[i] = next());
  }
};

/// A oneDNN bf16 matmul for one shape: op(A), op(B) bf16 (transposes as
/// strides), C f32.
struct DnnlBf16 {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  dnnl::matmul prim;
  dnnl::memory::desc ad, bd, cd;
  std::string impl;
  explicit DnnlBf16(const Shape &s) {
    using dt = dnnl::memory::data_type;
    const dnnl::memory::dims as =
        s.transA ? dnnl::memory::dims{1, s.M} : dnnl::memory::dims{s.K, 1};
    const dnnl::memory::dims bs =
        s.transB ? dnnl::memory::dims{1, s.K} : dnnl::memory::dims{s.N, 1};
    ad = dnnl::memory::desc({s.M, s.K}, dt::bf16, as);
    bd = dnnl::memory::desc({s.K, s.N}, dt::bf16, bs);
    cd = dnnl::memory::desc({s.M, s.N}, dt::f32, dnnl::memory::dims{s.N, 1});
    dnnl::matmul::primitive_desc pd(
        dnnl::matmul::desc(ad, bd, cd), eng);
    impl = pd.impl_info_str();
    prim = dnnl::matmul(pd);
  }
  void run(const uint16_t *A, const uint16_t *B, float *C) {
    dnnl::memory am(ad, eng, const_cast<uint16_t *>(A)),
        bm(bd, eng, const_cast<uint16_t *>(B)), cm(cd, eng, C);
    prim.execute(strm, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm},
                        {DNNL_ARG_DST, cm}});
    strm.wait();
  }
};

/// One library's timing of one shape: GFLOP/s, and whether the team's C
/// equals the one-thread C bit for bit.
struct Result {
  double gflops;
  bool sameBits;
};

Result measure(const Shape &s, Operands &o, int reps, int threads,
               const std::function<void(float *)> &gemm) {
  omp_set_num_threads(1);
  gemm(o.c1.data());
  omp_set_num_threads(threads);
  const double sec = bestSeconds(reps, [&] { gemm(o.c.data()); });
  const bool same =
      std::memcmp(o.c.data(), o.c1.data(), o.c.size() * sizeof(float)) == 0;
  return {2.0 * s.M * s.N * s.K / sec * 1e-9, same};
}

} // namespace

int main(int argc, char **argv) {
  int reps = 10;
  std::string which = "all";
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--shapes") && i + 1 < argc)
      which = argv[++i];
    else {
      std::fprintf(stderr, "usage: gemm [--reps R] [--shapes demo|c768|all]\n");
      return 2;
    }
  }
  if (reps < 1 || (which != "demo" && which != "c768" && which != "all")) {
    std::fprintf(stderr, "gemm: --reps must be >= 1 and --shapes one of "
                         "demo, c768, all\n");
    return 2;
  }
  std::vector<Shape> shapes;
  // The demo GPT: C = 128, T = 128, B = 16 (2048 tokens), head size 32.
  if (which != "c768")
    gpt(shapes, "demo", 16 * 128, 128, 128, 32, 256);
  // GPT-2-small width, 2 layers: C = 768, T = 256, B = 4 (1024 tokens),
  // 12 heads of 64.
  if (which != "demo")
    gpt(shapes, "c768", 4 * 256, 768, 256, 64, 256);

  const int threads = omp_get_max_threads();
  const double hz = measureClockHz();
  const bool amx = hasAmxBf16();
  const char *bf16Unit = amx ? "AMX" : "AVX512_BF16";
  const double peakF32 = threads * hz * 64 * 1e-9,
               peakBf16 = threads * hz * (amx ? 1024 : 128) * 1e-9;
  std::printf("threads %d, clock %.2f GHz (measured), peak f32 %.0f GFLOP/s, "
              "%s bf16 %.0f GFLOP/s; OpenBLAS core %s; oneDNN %d.%d.%d\n",
              threads, hz * 1e-9, peakF32, bf16Unit, peakBf16,
              openblas_get_corename(),
              dnnl_version()->major, dnnl_version()->minor,
              dnnl_version()->patch);
  std::printf("| shape | M | N | K | OpenBLAS f32 | oneDNN f32 | zrt f32 | "
              "oneDNN bf16 | zrt bf16 | bf16 impl |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  std::string notSame;
  for (const Shape &s : shapes) {
    Operands o(s);
    const int lda = s.transA ? s.M : s.K, ldb = s.transB ? s.K : s.N;
    const Result ob = measure(s, o, reps, threads, [&](float *C) {
      cblas_sgemm(CblasRowMajor, s.transA ? CblasTrans : CblasNoTrans,
                  s.transB ? CblasTrans : CblasNoTrans, s.M, s.N, s.K, 1.0f,
                  o.a.data(), lda, o.b.data(), ldb, 0.0f, C, s.N);
    });
    const Result od = measure(s, o, reps, threads, [&](float *C) {
      dnnl_sgemm(s.transA ? 'T' : 'N', s.transB ? 'T' : 'N', s.M, s.N, s.K,
                 1.0f, o.a.data(), lda, o.b.data(), ldb, 0.0f, C, s.N);
    });
    const Result oz = measure(s, o, reps, threads, [&](float *C) {
      zrt_matmul(o.a.data(), o.b.data(), nullptr, C, 1, s.M, s.N, s.K,
                 s.transA, s.transB, 1.0f, 0.0f, ZRT_STRIDE_PACKED,
                 ZRT_STRIDE_PACKED, ZRT_STRIDE_PACKED);
    });
    DnnlBf16 mm(s);
    const Result o16 = measure(s, o, reps, threads, [&](float *C) {
      mm.run(o.a16.data(), o.b16.data(), C);
    });
    // zrt_matmul_bf16 writes bf16 C: time it into a bf16 buffer, compare
    // its bits through the f32 buffers (widened).
    // zrt_matmul_bf16 writes bf16 C: the one-thread call (into o.c1)
    // writes c16one, the team's c16; their bits are compared after.
    std::vector<zrt_bf16> c16(s.M * s.N), c16one(s.M * s.N);
    std::vector<float> ws(zrt_matmul_bf16_workspace(1, s.M, s.N, s.K, 0));
    Result oz16 = measure(s, o, reps, threads, [&](float *C) {
      zrt_matmul_bf16(reinterpret_cast<const zrt_bf16 *>(o.a16.data()),
                      reinterpret_cast<const zrt_bf16 *>(o.b16.data()),
                      nullptr, C == o.c1.data() ? c16one.data() : c16.data(),
                      1, s.M, s.N, s.K, s.transA, s.transB, ws.data());
    });
    oz16.sameBits = c16 == c16one;
    auto cell = [&](const Result &r, double peak, const char *lib) {
      if (!r.sameBits)
        notSame += "  " + s.name + ": " + lib + "\n";
      return std::to_string(int(r.gflops + 0.5)) + " (" +
             std::to_string(int(100 * r.gflops / peak + 0.5)) + " %)" +
             (r.sameBits ? "" : " *");
    };
    std::printf("| %s | %lld | %lld | %lld | %s | %s | %s | %s | %s | %s |\n",
                s.name.c_str(), (long long)s.M, (long long)s.N,
                (long long)s.K, cell(ob, peakF32, "openblas-f32").c_str(),
                cell(od, peakF32, "onednn-f32").c_str(),
                cell(oz, peakF32, "zrt-f32").c_str(),
                cell(o16, peakBf16, "onednn-bf16").c_str(),
                cell(oz16, peakBf16, "zrt-bf16").c_str(), mm.impl.c_str());
    std::fflush(stdout);
  }
  std::printf("\nGFLOP/s (%% of the peak of %d cores: f32 columns against "
              "AVX-512 FMA, bf16 against %s); * = C differs from the "
              "one-thread C\n",
              threads, bf16Unit);
  if (!notSame.empty())
    std::printf("not the same bits at 1 and %d threads:\n%s", threads,
                notSame.c_str());
  return 0;
}
