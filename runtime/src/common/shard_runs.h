//===- shard_runs.h - zrt_shard_adamw's runs of equal weight decay -*- C++
//-*-===//
///
/// \file
/// How zrt_shard_adamw splits a rank's slice of a flat shard group into runs
/// of equal weight decay, shared by the CPU and CUDA backends so that both
/// decay exactly the same elements (see zrt.h). Internal to the runtime.
///
//===----------------------------------------------------------------------===//

#ifndef ZRT_SRC_SHARD_RUNS_H
#define ZRT_SRC_SHARD_RUNS_H

#include "zrt/zrt.h"

#include <cstdint>

namespace zrt {

/// Calls run(lo, hi, wd) for the runs of rank `rank`'s slice
/// [rank * shard, (rank + 1) * shard) of a flat group whose member i
/// occupies [offsets[i], offsets[i] + numels[i]) (increasing offsets): each
/// member's part of the slice with wd = decay[i] ? weightDecay : 0, and the
/// gaps before, between and after them (padding) with wd = 0; lo, hi are
/// flat element offsets (hi <= lo for an empty gap, which `run` must
/// accept). Stops at and returns the first nonzero status of `run`.
template <typename Run>
int forEachShardRun(int64_t shard, int rank, int numMembers,
                    const int64_t *offsets, const int64_t *numels,
                    const uint8_t *decay, double weightDecay, Run run) {
  const int64_t begin = static_cast<int64_t>(rank) * shard, end = begin + shard;
  int64_t pos = begin;
  for (int i = 0; i < numMembers; ++i) {
    const int64_t lo = offsets[i] > pos ? offsets[i] : pos;
    const int64_t memberEnd = offsets[i] + numels[i];
    const int64_t hi = memberEnd < end ? memberEnd : end;
    if (hi <= lo)
      continue;
    if (int st = run(pos, lo, 0.0))
      return st;
    if (int st = run(lo, hi, decay[i] ? weightDecay : 0.0))
      return st;
    pos = hi;
  }
  return run(pos, end, 0.0);
}

/// zrt_shard_adamw after its argument checks, for a backend whose
/// zrt_adamw_step, zrt_adamw_step_bf16_grad and zrt_adamw_step_f16_grad are
/// `stepF32` / `stepBf16` / `stepF16` (same signatures): one step per run of forEachShardRun, on the run's
/// elements of the rank's shard (param, m, v, grad hold [shard] elements
/// starting at flat offset rank * shard).
template <typename StepF32, typename StepBf16>
int shardAdamw(float *param, float *m, float *v, const void *grad,
               int gradDtype, int64_t shard, int rank, int numMembers,
               const int64_t *offsets, const int64_t *numels,
               const uint8_t *decay, double lr, double beta1, double beta2,
               double eps, double weightDecay, float gradScale, int64_t step,
               StepF32 stepF32, StepBf16 stepBf16, StepBf16 stepF16) {
  const int64_t begin = static_cast<int64_t>(rank) * shard;
  auto run = [&](int64_t lo, int64_t hi, double wd) -> int {
    if (hi <= lo)
      return ZRT_OK;
    const int64_t o = lo - begin, n = hi - lo;
    if (gradDtype == ZRT_F32)
      return stepF32(param + o, m + o, v + o,
                     static_cast<const float *>(grad) + o, nullptr, nullptr, n,
                     lr, beta1, beta2, eps, wd, gradScale, step);
    return (gradDtype == ZRT_F16 ? stepF16 : stepBf16)(param + o, m + o, v + o,
                    static_cast<const zrt_bf16 *>(grad) + o, nullptr, nullptr,
                    n, lr, beta1, beta2, eps, wd, gradScale, step);
  };
  return forEachShardRun(shard, rank, numMembers, offsets, numels, decay,
                         weightDecay, run);
}

} // namespace zrt

#endif // ZRT_SRC_SHARD_RUNS_H
