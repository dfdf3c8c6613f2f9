//===- membw.cpp - STREAM triad against the runtime's memory-bound steps ---===//
//
// The optimizer step and the gradient norm move bytes, they barely compute:
// their speed is a fraction of the machine's memory bandwidth. This program
// measures, on the same threads (OMP_NUM_THREADS) and the same buffers:
//
//   triad        a[i] = b[i] + s c[i] over f32 arrays (McCalpin's STREAM
//                triad; 3 x 4 bytes per element: two reads, one write,
//                write-allocate not counted, as STREAM counts)
//   adamw        zrt_adamw_step over one flat f32 shard: reads param, m, v,
//                grad, writes param, m, v (7 x 4 bytes per element)
//   sum-squares  zrt_sum_squares over the gradient (4 bytes per element)
//
// for each element count n given (default: the demo GPT's 842,496
// parameters, cache-resident, and 2^27, 512 MB per array, several times the
// last-level cache), best of --reps repetitions after one untimed pass each,
// and prints GB/s (1e9 bytes/s) and each kernel's fraction of the triad's.
//
// Usage: membw [--reps R] [n...]        (built and run by bench/memory-bandwidth)
//
//===----------------------------------------------------------------------===//

#include "best_seconds.h"

#include "zrt/zrt.h"

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
  std::vector<int64_t> sizes;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
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
  std::printf("threads %d, best of %d\n", omp_get_max_threads(), reps);
  std::printf("%12s %12s %10s %10s %8s %12s %8s\n", "n", "triad GB/s",
              "adamw GB/s", "x triad", "", "sumsq GB/s", "x triad");
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
    const double triadBw = 3 * gb / tTriad, adamwBw = 7 * gb / tAdamw,
                 sumsqBw = gb / tSumsq;
    std::printf("%12lld %12.1f %10.1f %10.2f %8s %12.1f %8.2f\n",
                static_cast<long long>(n), triadBw, adamwBw, adamwBw / triadBw,
                "", sumsqBw, sumsqBw / triadBw);
    std::free(a);
    std::free(b);
    std::free(c);
    std::free(d);
  }
  return 0;
}
