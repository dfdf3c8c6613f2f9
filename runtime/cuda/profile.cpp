//===- profile.cpp - CUDA backend: per-function time (ZRT_PROFILE) --------===//
//
// With the environment variable ZRT_PROFILE set, every zrt_* call that queues
// GPU work (abi.cpp wraps them in a profile::Scope) records a pair of CUDA
// events around its work on the compute stream, and the host time it took
// to queue it. The GPU time of a call is the time between its two events:
// the time its kernels, copies and cuBLAS calls occupied the compute stream
// (for zrt_wait: how long compute stalled on the collective). Completed
// pairs are folded into per-function totals whenever kFold are pending
// (which synchronizes the compute stream: profiling changes the timing of
// the overlap it measures, a little) and at zrt_finalize, which reports:
//   ZRT_PROFILE=<file>.json  one JSON object per process to that file
//                            (".rank<r>" appended when the world has more
//                            than one rank);
//   any other value          a table on stderr (rank 0 only).
// Profiling allocates events outside the counted arenas: the driver's
// per-step "allocations" stay 0 (these are not zrt heap allocations), but
// step times are those of a profiled run.
//
//===----------------------------------------------------------------------===//

#include "zrt_cuda.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace {

struct Pending {
  const char *name;
  std::string shape; ///< "" when the call has no shape breakdown.
  cudaEvent_t start, stop;
  double hostMs;
};

struct Totals {
  int64_t calls = 0;
  double gpuMs = 0.0, hostMs = 0.0;
};

struct Profiler {
  bool enabled = false;
  std::string target; ///< ZRT_PROFILE's value.
  std::vector<Pending> pending;
  std::vector<cudaEvent_t> freeEvents;
  std::map<std::string, Totals> totals;
  /// Per (function, shape), for the calls that name a shape.
  std::map<std::pair<std::string, std::string>, Totals> shapeTotals;
  bool broken = false;  ///< An event call failed: stop profiling.
  bool checked = false; ///< The output file was tried once.
};

/// Where the JSON goes ("" for the stderr table).
std::string jsonPath(const Profiler &p) {
  const std::string &t = p.target;
  if (!(t.size() > 5 && t.compare(t.size() - 5, 5, ".json") == 0))
    return "";
  return zrt_cuda::world_size() > 1
             ? t + ".rank" + std::to_string(zrt_cuda::rank())
             : t;
}

Profiler &prof() {
  static Profiler p = [] {
    Profiler q;
    if (const char *v = std::getenv("ZRT_PROFILE"); v && *v) {
      q.enabled = true;
      q.target = v;
    }
    return q;
  }();
  return p;
}

/// Pairs folded at a time (and the most kept pending).
constexpr size_t kFold = 4096;

cudaEvent_t takeEvent() {
  Profiler &p = prof();
  if (!p.freeEvents.empty()) {
    cudaEvent_t e = p.freeEvents.back();
    p.freeEvents.pop_back();
    return e;
  }
  cudaEvent_t e = nullptr;
  if (cudaEventCreate(&e) != cudaSuccess) {
    (void)cudaGetLastError();
    p.broken = true;
    return nullptr;
  }
  return e;
}

/// Adds every pending pair to the totals (synchronizes the compute stream).
void fold() {
  Profiler &p = prof();
  if (p.pending.empty())
    return;
  cudaStreamSynchronize(zrt_cuda::stream());
  for (const Pending &r : p.pending) {
    float ms = 0.0f;
    if (cudaEventElapsedTime(&ms, r.start, r.stop) != cudaSuccess) {
      (void)cudaGetLastError();
      ms = 0.0f;
    }
    for (Totals *t :
         {&p.totals[r.name],
          r.shape.empty() ? nullptr : &p.shapeTotals[{r.name, r.shape}]}) {
      if (!t)
        continue;
      t->calls += 1;
      t->hostMs += r.hostMs;
      t->gpuMs += ms;
    }
    p.freeEvents.push_back(r.start);
    p.freeEvents.push_back(r.stop);
  }
  p.pending.clear();
}

double nowMs() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double, std::milli>(
             clock::now().time_since_epoch())
      .count();
}

} // namespace

namespace zrt_cuda::profile {

bool enabled() {
  Profiler &p = prof();
  // Only once the process group (and so the device) is set up.
  if (!p.enabled || p.broken || zrt_cuda::world_size() <= 0)
    return false;
  if (!p.checked) {
    // A file that cannot be written is said at once, not after the run.
    p.checked = true;
    if (std::string path = jsonPath(p); !path.empty()) {
      FILE *f = std::fopen(path.c_str(), "w");
      if (!f) {
        std::fprintf(stderr,
                     "zrt: ZRT_PROFILE file '%s' cannot be written (%s); "
                     "profiling is off\n",
                     path.c_str(), std::strerror(errno));
        p.enabled = false;
        return false;
      }
      std::fclose(f);
    }
  }
  return true;
}

Scope::Scope(const char *name, std::string shape)
    : name_(name), shape_(std::move(shape)) {
  start_ = takeEvent();
  stop_ = takeEvent();
  if (!start_ || !stop_)
    return;
  cudaEventRecord(static_cast<cudaEvent_t>(start_), zrt_cuda::stream());
  hostStart_ = nowMs();
}

Scope::~Scope() {
  Profiler &p = prof();
  if (!start_ || !stop_) {
    if (start_)
      p.freeEvents.push_back(static_cast<cudaEvent_t>(start_));
    if (stop_)
      p.freeEvents.push_back(static_cast<cudaEvent_t>(stop_));
    return;
  }
  const double hostMs = nowMs() - hostStart_;
  cudaEventRecord(static_cast<cudaEvent_t>(stop_), zrt_cuda::stream());
  p.pending.push_back({name_, std::move(shape_),
                       static_cast<cudaEvent_t>(start_),
                       static_cast<cudaEvent_t>(stop_), hostMs});
  if (p.pending.size() >= kFold)
    fold();
}

void report() {
  Profiler &p = prof();
  if (!p.enabled || zrt_cuda::world_size() <= 0)
    return;
  fold();
  const int rank = zrt_cuda::rank(), world = zrt_cuda::world_size();
  std::vector<std::pair<std::string, Totals>> rows(p.totals.begin(),
                                                   p.totals.end());
  std::sort(rows.begin(), rows.end(), [](const auto &a, const auto &b) {
    return a.second.gpuMs > b.second.gpuMs;
  });
  double gpu = 0.0, host = 0.0;
  for (const auto &r : rows) {
    gpu += r.second.gpuMs;
    host += r.second.hostMs;
  }
  if (std::string path = jsonPath(p); !path.empty()) {
    FILE *f = std::fopen(path.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "zrt: cannot write ZRT_PROFILE file '%s'\n",
                   path.c_str());
      return;
    }
    std::fprintf(f,
                 "{\"rank\": %d, \"world_size\": %d, \"total_gpu_ms\": %.3f, "
                 "\"total_host_ms\": %.3f, \"functions\": [",
                 rank, world, gpu, host);
    for (size_t i = 0; i < rows.size(); ++i)
      std::fprintf(f,
                   "%s{\"name\": \"%s\", \"calls\": %lld, \"gpu_ms\": %.3f, "
                   "\"host_ms\": %.3f}",
                   i ? ", " : "", rows[i].first.c_str(),
                   (long long)rows[i].second.calls, rows[i].second.gpuMs,
                   rows[i].second.hostMs);
    std::vector<std::pair<std::pair<std::string, std::string>, Totals>> shapes(
        p.shapeTotals.begin(), p.shapeTotals.end());
    std::sort(shapes.begin(), shapes.end(), [](const auto &a, const auto &b) {
      return a.second.gpuMs > b.second.gpuMs;
    });
    std::fprintf(f, "], \"shapes\": [");
    for (size_t i = 0; i < shapes.size(); ++i)
      std::fprintf(f,
                   "%s{\"name\": \"%s\", \"shape\": \"%s\", \"calls\": "
                   "%lld, \"gpu_ms\": %.3f, \"host_ms\": %.3f}",
                   i ? ", " : "", shapes[i].first.first.c_str(),
                   shapes[i].first.second.c_str(),
                   (long long)shapes[i].second.calls, shapes[i].second.gpuMs,
                   shapes[i].second.hostMs);
    std::fprintf(f, "]}\n");
    std::fclose(f);
    return;
  }
  if (rank != 0)
    return;
  std::fprintf(stderr,
               "zrt profile (rank 0): %.1f ms of GPU work, %.1f ms "
               "of host time in zrt calls\n",
               gpu, host);
  std::fprintf(stderr, "  %-36s %10s %12s %7s %12s\n", "function", "calls",
               "gpu ms", "gpu %", "host ms");
  for (const auto &r : rows)
    std::fprintf(stderr, "  %-36s %10lld %12.3f %6.1f%% %12.3f\n",
                 r.first.c_str(), (long long)r.second.calls, r.second.gpuMs,
                 gpu > 0 ? 100.0 * r.second.gpuMs / gpu : 0.0, r.second.hostMs);
}

} // namespace zrt_cuda::profile
