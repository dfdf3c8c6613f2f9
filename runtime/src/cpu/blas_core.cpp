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
// The same exec sets OMP_WAIT_POLICY=passive when the node is
// oversubscribed (zrt::waitPolicyFor), and otherwise leaves libgomp's
// default: a waiting thread spins 300,000 times before it sleeps on a futex.
// A training step opens ~200 short parallel regions (the demo GPT, batch 8:
// 4,352 GOMP_parallel calls in 20 steps), and a futex wake-up per region
// costs more than the region's work on a VM. Measured on the 2-core AMD VM,
// demo GPT, batch 8, 2 threads (bench/cpu-threads, docs/benchmarks.md
// "Intra-op threads"):
//   quiet machine        spin 22.2 ms/step, passive 37.7 (1 thread: 43.2)
//   + 1 busy process     spin 46-49,        passive 46-48
//   + 2 busy processes   spin 126-129,      passive 46-48
// Spinning is 1.7x faster on a quiet node, and the 2-thread team only beats
// 1 thread when its threads have cores of their own; once other work wants
// the cores, a spinning thread burns the time slice its partner needs, and
// passive waiting degrades to the 1-thread speed instead of collapsing.
// Hence: passive when this rank's team plus the node's other ranks' teams
// plus the other runnable tasks (sampled from /proc/loadavg at start) exceed
// the cores, libgomp's default otherwise. A set OMP_WAIT_POLICY or
// GOMP_SPINCOUNT is the user's choice and stays. (With OpenBLAS's pthread
// build the two pools' idle threads spun against each other; the runtime now
// links the OpenMP build: one pool, cmake/OpenBLASOpenMP.cmake.) Pinning
// (OMP_PROC_BIND=close OMP_PLACES=cores) measured worse on a shared machine
// (a pinned thread cannot leave the core another process runs on) and is not
// set. libgomp reads the variables only at start-up, hence the exec.
//
// When either variable has to be set, it re-executes /proc/self/exe with the
// same argv (before MPI starts; ZRT_REEXECED=1 marks the second run). Set
// ZRT_BLAS_REEXEC=0 to disable it; a failing exec is ignored (the program
// then runs with the settings it started with).
//
//===----------------------------------------------------------------------===//

#include "common/internal.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
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

const char *waitPolicyFor(int threads, int localRanks, int cores,
                          int otherTasks) {
  if (threads <= 1)
    return nullptr; // no team: nothing waits
  const long wanted = static_cast<long>(threads) * std::max(1, localRanks) +
                      std::max(0, otherTasks);
  return wanted > std::max(1, cores) ? "passive" : nullptr;
}

namespace {

/// The --threads value in argv (--threads N or --threads=N; 0 when absent
/// or not a count), read before the driver parses its flags.
int threadsFlag(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
      return positiveCount(argv[i + 1]);
    if (std::strncmp(argv[i], "--threads=", 10) == 0)
      return positiveCount(argv[i] + 10);
  }
  return 0;
}

/// Ranks the launcher starts on this node (Open MPI, MPICH/Hydra), before
/// MPI is initialized; 1 when unknown.
int startupLocalRanks() {
  if (int n = positiveCount(std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE")))
    return n;
  if (int n = positiveCount(std::getenv("MPI_LOCALNRANKS")))
    return n;
  return 1;
}

/// Runnable tasks on the node other than this process and its sibling
/// ranks: the fewest of five samples of /proc/loadavg's running count, 1 ms
/// apart (a task that stays runnable, like a compiler, shows in every
/// sample; a blip does not), less this reader and the other local ranks.
/// 0 when the file cannot be read.
int otherRunnableTasks(int localRanks) {
  int fewest = -1;
  for (int i = 0; i < 5; ++i) {
    if (i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    FILE *f = std::fopen("/proc/loadavg", "r");
    if (!f)
      return 0;
    int running = 0; // the fourth field: runnable / total tasks
    const int got = std::fscanf(f, "%*f %*f %*f %d/", &running);
    std::fclose(f);
    if (got != 1)
      return 0;
    fewest = fewest < 0 ? running : std::min(fewest, running);
  }
  return std::max(0, fewest - 1 - (localRanks - 1));
}

} // namespace

void ensureBlasCore(int argc, char **argv) {
#if ZRT_HAVE_OPENBLAS && defined(__x86_64__) && defined(__linux__) &&           \
    (defined(__GNUC__) || defined(__clang__))
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
  bool setWait = false;
  if (!std::getenv("OMP_WAIT_POLICY") && !std::getenv("GOMP_SPINCOUNT")) {
    int local = startupLocalRanks();
    const int threads = teamThreads(
        threadsFlag(argc, argv),
        [](void *ranks) { return *static_cast<int *>(ranks); }, &local);
    setWait = waitPolicyFor(threads, local,
                            static_cast<int>(std::thread::hardware_concurrency()),
                            otherRunnableTasks(local)) != nullptr;
  }
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
