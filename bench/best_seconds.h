//===- best_seconds.h - The benchmarks' timer -------------------*- C++ -*-===//
///
/// \file
/// The timing rule of bench/membw.cpp and bench/gemm.cpp: one untimed call
/// (first-touch page faults, lazy initialization), then the fastest of
/// `reps` calls on the steady clock.
///
//===----------------------------------------------------------------------===//
#ifndef ZERO_BENCH_BEST_SECONDS_H
#define ZERO_BENCH_BEST_SECONDS_H

#include <chrono>

/// Seconds of the fastest of `reps` calls of f after one untimed call.
template <typename F> double bestSeconds(int reps, F &&f) {
  f();
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    const std::chrono::duration<double> dt =
        std::chrono::steady_clock::now() - t0;
    best = dt.count() < best ? dt.count() : best;
  }
  return best;
}

#endif // ZERO_BENCH_BEST_SECONDS_H
