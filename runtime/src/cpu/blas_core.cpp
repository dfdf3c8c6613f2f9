//===- blas_core.cpp - Make OpenBLAS use the CPU's vector kernels ----------===//
//
// Debian 12's OpenBLAS (0.3.21, DYNAMIC_ARCH) picks its kernels from a table
// of CPU models it knows when the library is loaded. On newer CPUs (e.g.
// Intel Emerald Rapids, family 6 model 0xCF) the model is not in the table
// and it falls back to "Prescott" (SSE3): sgemm runs 3-4x slower than with
// its AVX-512 kernels. The choice is made in the library's constructor,
// before main, from $OPENBLAS_CORETYPE; the only clean way to change it is to
// set that variable and exec the program again, before MPI starts.
//
// zrt::ensureBlasCore does exactly that, once, at the top of zrt_train_main:
// when $OPENBLAS_CORETYPE is unset, OpenBLAS reports an SSE-era core and the
// CPU (and OS) support AVX-512 (F, BW, DQ, VL) or AVX2 + FMA, it sets
// OPENBLAS_CORETYPE to SkylakeX or Haswell (zrt::blasCoreFor). A
// $OPENBLAS_CORETYPE already set is the user's choice and stays.
//
// The same exec also sets OMP_WAIT_POLICY=passive when it is unset. With
// OpenBLAS's pthread build the runtime mixed OpenMP regions (libgomp) with
// OpenBLAS's own pool, and with libgomp's default spin-waiting the two
// pools' idle threads busy-waited against each other (2-core machine, demo
// GPT, 2 threads: 350 ms per step spinning, 80-95 ms passive). The runtime
// now links OpenBLAS's OpenMP build (one pool, cmake/OpenBLASOpenMP.cmake),
// and passive waiting stays the default: on a machine shared with other
// work a spinning team loses whole time slices to a descheduled thread
// (demo GPT, batch 16, 2 threads, another build on the second core:
// 3456 ms per step with libgomp's default 300,000 spins, 115-290 ms
// passive; a short GOMP_SPINCOUNT=10000 measured no better than passive,
// and OMP_PROC_BIND=close OMP_PLACES=cores worse, 198-218 ms: a pinned
// thread cannot leave the core the other build runs on; docs/benchmarks.md,
// "Intra-op threads"). libgomp reads the variables only at start-up, hence
// the exec; set them to override.
//
// When either variable has to be set, it re-executes /proc/self/exe with the
// same argv (before MPI starts; ZRT_REEXECED=1 marks the second run). Set
// ZRT_BLAS_REEXEC=0 to disable it; a failing exec is ignored (the program
// then runs with the settings it started with).
//
//===----------------------------------------------------------------------===//

#include "common/internal.h"

#include <cctype>
#include <cstdlib>
#include <string>
#include <unistd.h>

#if ZRT_HAVE_OPENBLAS
extern "C" char *openblas_get_corename(void);
extern "C" void openblas_set_num_threads(int);
#endif

namespace zrt {

const char *blasCoreFor(const char *corename, bool avx512, bool avx2Fma) {
  std::string core(corename);
  for (char &c : core)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // SSE-era fallbacks that OpenBLAS uses for CPUs it does not recognize.
  const bool generic = core == "prescott" || core == "core2" ||
                       core == "nehalem" || core == "unknown" ||
                       core == "katmai" || core == "coppermine" ||
                       core == "northwood" || core == "penryn" ||
                       core == "dunnington" || core == "atom";
  if (avx512 && generic)
    return "SkylakeX";
  if (avx2Fma && generic)
    return "Haswell";
  return nullptr;
}

void ensureBlasCore(int argc, char **argv) {
#if ZRT_HAVE_OPENBLAS && defined(__x86_64__) && defined(__linux__) &&           \
    (defined(__GNUC__) || defined(__clang__))
  (void)argc;
  if (!argv || !argv[0])
    return;
  const char *optOut = std::getenv("ZRT_BLAS_REEXEC");
  if (optOut && std::strcmp(optOut, "0") == 0)
    return;
  if (std::getenv("ZRT_REEXECED"))
    return; // already re-executed once
  const char *want = nullptr;
  if (!std::getenv("OPENBLAS_CORETYPE")) {
    const char *name = openblas_get_corename();
    __builtin_cpu_init();
    want = blasCoreFor(name ? name : "",
                       __builtin_cpu_supports("avx512f") &&
                           __builtin_cpu_supports("avx512bw") &&
                           __builtin_cpu_supports("avx512dq") &&
                           __builtin_cpu_supports("avx512vl"),
                       __builtin_cpu_supports("avx2") &&
                           __builtin_cpu_supports("fma"));
  }
  const bool setWait = !std::getenv("OMP_WAIT_POLICY");
  if (!want && !setWait)
    return;
  char exe[4096];
  const ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len <= 0)
    return;
  exe[len] = '\0';
  if (want && setenv("OPENBLAS_CORETYPE", want, 1) != 0)
    return;
  if (setWait && setenv("OMP_WAIT_POLICY", "passive", 1) != 0)
    return;
  if (setenv("ZRT_REEXECED", "1", 1) != 0)
    return;
  execv(exe, argv);
  // exec failed: keep running with the settings the program started with
  // (ZRT_REEXECED stays set, so a child process would not loop either).
#else
  (void)argc;
  (void)argv;
#endif
}

void backendStartup(int argc, char **argv) { ensureBlasCore(argc, argv); }

} // namespace zrt

extern "C" int zrt_set_num_threads(int n) {
  ZRT_REQUIRE(n >= 1, "zrt_set_num_threads: n = %d must be >= 1", n);
#ifdef _OPENMP
  omp_set_num_threads(n);
#endif
#if ZRT_HAVE_OPENBLAS
  openblas_set_num_threads(n);
#endif
  return ZRT_OK;
}
