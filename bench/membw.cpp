//===- membw.cpp - STREAM triad against the runtime's memory-bound steps ---===//
//
// The optimizer step and the gradient norm move bytes, they barely compute:
// their speed is a fraction of the machine's memory bandwidth. This program
// measures, on the same threads (OMP_NUM_THREADS) and the same buffers:
//
//   triad        a[i] = b[i] + s c[i] over f32 arrays (McCalpin's STREAM
//                triad; 3 x 4 bytes per element: two reads, one write,
//                write-allocate not counted, as STREAM counts), twice: with
//                ordinary stores and with non-temporal (streaming) stores,
//                which skip the write-allocate read; the faster of the two
//                is the reference ("best triad")
//   adamw        zrt_adamw_step over one flat f32 shard: reads param, m, v,
//                grad, writes param, m, v (7 x 4 bytes per element)
//   sum-squares  zrt_sum_squares over the gradient (4 bytes per element)
//
// for each element count n given (default: the demo GPT's 842,496
// parameters, cache-resident, and 2^27, 512 MB per array, several times the
// last-level cache), best of --reps repetitions after one untimed pass each,
// and prints GB/s (1e9 bytes/s) and each kernel's fraction of the triad's.
//
// Usage: membw [--reps R] [--record FILE] [--gate FILE] [n...]
//   --record FILE  appends one JSON line per n (threads, bytes, seconds) for
//                  bench/cpu_adam_peer.py, which times DeepSpeedCPUAdam on
//                  the same n and threads and prints the ratio
//   --gate FILE    writes the parameters after kGateSteps zrt_adamw_step
//                  calls on the gate's inputs (writeGate) as raw f32: the
//                  peer's correctness gate
// (built with -O3 -march=native and run by bench/memory-bandwidth)
//
//===----------------------------------------------------------------------===//

#include "best_seconds.h"

#include "zrt/zrt.h"

#include <immintrin.h>
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

/// STREAM's triad over [0, n) on the OpenMP team (static schedule, as
/// STREAM's OpenMP build).
void triad(float *a, const float *b, const float *c, float s, int64_t n) {
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; ++i)
    a[i] = b[i] + s * c[i];
}

/// The triad with non-temporal stores (the stored lines bypass the cache, so
/// the write costs no read for ownership), 16 or 8 floats per store where the
/// build has AVX-512 or AVX; the ordinary triad otherwise. Each thread's
/// static range starts at a multiple of the vector width of a 64-byte
/// aligned array (as STREAM's tuned triads).
void triadStreaming(float *a, const float *b, const float *c, float s,
                    int64_t n) {
#if defined(__AVX512F__) || defined(__AVX__)
#if defined(__AVX512F__)
  constexpr int64_t w = 16;
#else
  constexpr int64_t w = 8;
#endif
  const int64_t vectors = n / w;
#pragma omp parallel for schedule(static)
  for (int64_t v = 0; v < vectors; ++v) {
    const int64_t i = v * w;
#if defined(__AVX512F__)
    _mm512_stream_ps(a + i, _mm512_fmadd_ps(_mm512_set1_ps(s),
                                            _mm512_loadu_ps(c + i),
                                            _mm512_loadu_ps(b + i)));
#else
    _mm256_stream_ps(a + i, _mm256_add_ps(_mm256_loadu_ps(b + i),
                                          _mm256_mul_ps(_mm256_set1_ps(s),
                                                        _mm256_loadu_ps(c + i))));
#endif
  }
  _mm_sfence();
  for (int64_t i = vectors * w; i < n; ++i)
    a[i] = b[i] + s * c[i];
#else
  triad(a, b, c, s, n);
#endif
}

/// The gate's problem: kGateN elements, kGateSteps steps of AdamW with the
/// hyperparameters below and the same gradient every step. Every input is
/// exactly representable (multiples of 2^-8), so the peer builds the same
/// bits with any arithmetic: param 1 + (i mod 64) / 128, grad
/// ((37 i) mod 256 - 128) / 256, m = v = 0.
constexpr int64_t kGateN = 65536;
constexpr int kGateSteps = 5;
constexpr double kLr = 1e-3, kBeta1 = 0.9, kBeta2 = 0.999, kEps = 1e-8,
                 kWeightDecay = 0.1;

/// Runs the gate's steps and writes the parameters to `path` (raw f32);
/// false with a message when a call or the write fails.
bool writeGate(const char *path) {
  std::vector<float> p(kGateN), m(kGateN, 0.0f), v(kGateN, 0.0f), g(kGateN);
  for (int64_t i = 0; i < kGateN; ++i) {
    p[i] = 1.0f + static_cast<float>(i % 64) / 128.0f;
    g[i] = static_cast<float>((37 * i) % 256 - 128) / 256.0f;
  }
  for (int step = 1; step <= kGateSteps; ++step)
    if (zrt_adamw_step(p.data(), m.data(), v.data(), g.data(), nullptr,
                       nullptr, kGateN, kLr, kBeta1, kBeta2, kEps,
                       kWeightDecay, 1.0f, step) != ZRT_OK) {
      std::fprintf(stderr, "membw: zrt_adamw_step failed: %s\n",
                   zrt_last_error());
      return false;
    }
  FILE *f = std::fopen(path, "wb");
  if (!f || std::fwrite(p.data(), sizeof(float), p.size(), f) != p.size() ||
      std::fclose(f) != 0) {
    std::fprintf(stderr, "membw: cannot write %s\n", path);
    return false;
  }
  return true;
}

/// f32 buffer of n elements, every page touched by the team that will use
/// it (first touch places the pages; one NUMA node here, but as STREAM).
float *buffer(int64_t n, float value) {
  void *p = nullptr;
  if (posix_memalign(&p, 64, static_cast<size_t>(n) * sizeof(float)) != 0)
    return nullptr;
  float *f = static_cast<float *>(p);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    f[i] = value;
  return f;
}

} // namespace

int main(int argc, char **argv) {
  int reps = 10;
  const char *record = nullptr, *gate = nullptr;
  std::vector<int64_t> sizes;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
      continue;
    }
    if (std::strcmp(argv[i], "--record") == 0 && i + 1 < argc) {
      record = argv[++i];
      continue;
    }
    if (std::strcmp(argv[i], "--gate") == 0 && i + 1 < argc) {
      gate = argv[++i];
      continue;
    }
    char *end = nullptr;
    const long long n = std::strtoll(argv[i], &end, 10);
    if (!end || *end || n <= 0) {
      std::fprintf(stderr, "membw: %s is not an element count\n", argv[i]);
      return 2;
    }
    sizes.push_back(n);
  }
  if (reps < 1) {
    std::fprintf(stderr, "membw: --reps must be >= 1\n");
    return 2;
  }
  if (sizes.empty())
    sizes = {842496, int64_t(1) << 27};
  if (gate && !writeGate(gate))
    return 1;
  FILE *rec = record ? std::fopen(record, "a") : nullptr;
  if (record && !rec) {
    std::fprintf(stderr, "membw: cannot open %s\n", record);
    return 1;
  }
  const int threads = omp_get_max_threads();
  std::printf("threads %d, best of %d\n", threads, reps);
  std::printf("%12s %10s %10s %12s %10s %8s %12s %8s\n", "n", "triad GB/s",
              "nt GB/s", "adamw GB/s", "adamw ms", "x best", "sumsq GB/s",
              "x best");
  for (int64_t n : sizes) {
    float *a = buffer(n, 0.0f), *b = buffer(n, 1.0f), *c = buffer(n, 2.0f),
          *d = buffer(n, 0.5f);
    if (!a || !b || !c || !d) {
      std::fprintf(stderr, "membw: cannot allocate 4 x %lld floats\n",
                   static_cast<long long>(n));
      return 1;
    }
    const double gb = 1e-9 * static_cast<double>(n) * sizeof(float);
    const double tTriad = bestSeconds(reps, [&] { triad(a, b, c, 3.0f, n); });
    const double tStream =
        bestSeconds(reps, [&] { triadStreaming(a, b, c, 3.0f, n); });
    // a: param, b: m, c: v (positive), d: grad. One step number for every
    // call: the same arithmetic each time.
    int status = ZRT_OK;
    const double tAdamw = bestSeconds(reps, [&] {
      status |= zrt_adamw_step(a, b, c, d, nullptr, nullptr, n, 1e-3, 0.9,
                               0.999, 1e-8, 0.01, 1.0f, 10);
    });
    float sum = 0.0f;
    const double tSumsq = bestSeconds(
        reps, [&] { status |= zrt_sum_squares(d, n, &sum); });
    if (status != ZRT_OK) {
      std::fprintf(stderr, "membw: a runtime call failed: %s\n",
                   zrt_last_error());
      return 1;
    }
    const double triadBw = 3 * gb / tTriad, streamBw = 3 * gb / tStream,
                 bestBw = triadBw > streamBw ? triadBw : streamBw,
                 adamwBw = 7 * gb / tAdamw, sumsqBw = gb / tSumsq;
    std::printf("%12lld %10.1f %10.1f %12.1f %10.3f %8.2f %12.1f %8.2f\n",
                static_cast<long long>(n), triadBw, streamBw, adamwBw,
                1e3 * tAdamw, adamwBw / bestBw, sumsqBw, sumsqBw / bestBw);
    if (rec)
      std::fprintf(rec,
                   "{\"n\": %lld, \"threads\": %d, \"reps\": %d, "
                   "\"triad_gbs\": %.3f, \"adamw_seconds\": %.9g}\n",
                   static_cast<long long>(n), threads, reps, bestBw, tAdamw);
    std::free(a);
    std::free(b);
    std::free(c);
    std::free(d);
  }
  if (rec && std::fclose(rec) != 0) {
    std::fprintf(stderr, "membw: cannot write %s\n", record);
    return 1;
  }
  return 0;
}
