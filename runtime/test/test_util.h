//===- test_util.h - Helpers for the runtime unit tests ---------*- C++ -*-===//
#ifndef ZRT_TEST_UTIL_H
#define ZRT_TEST_UTIL_H

#include "zrt/zrt.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace zrt_test {

/// Deterministic uniform values in [lo, hi).
inline std::vector<float> randomVec(size_t n, uint32_t seed, float lo = -1.0f,
                                    float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(gen);
  return v;
}

/// sum_k w[k] * y[k] in double.
inline double weightedSum(const std::vector<float> &w,
                          const std::vector<float> &y) {
  EXPECT_EQ(w.size(), y.size());
  double s = 0.0;
  for (size_t k = 0; k < w.size() && k < y.size(); ++k)
    s += static_cast<double>(w[k]) * static_cast<double>(y[k]);
  return s;
}

/// Central finite differences of L(x) = loss() with respect to every element
/// of x (perturbed in place and restored). The difference quotient uses the
/// f32 perturbed values actually stored, and L is accumulated in double.
inline std::vector<double> numericGrad(std::vector<float> &x,
                                       const std::function<double()> &loss,
                                       float h = 1e-3f) {
  std::vector<double> g(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const float xi = x[i];
    const float xp = xi + h, xm = xi - h;
    x[i] = xp;
    const double lp = loss();
    x[i] = xm;
    const double lm = loss();
    x[i] = xi;
    g[i] = (lp - lm) / (static_cast<double>(xp) - static_cast<double>(xm));
  }
  return g;
}

/// Expects |a - n| <= atol + rtol * |n| elementwise.
inline void expectGradNear(const std::vector<float> &analytic,
                           const std::vector<double> &numeric,
                           const std::string &what, double rtol = 1e-2,
                           double atol = 2e-3) {
  ASSERT_EQ(analytic.size(), numeric.size()) << what;
  for (size_t i = 0; i < analytic.size(); ++i) {
    const double a = analytic[i], n = numeric[i];
    EXPECT_LE(std::fabs(a - n), atol + rtol * std::fabs(n))
        << what << "[" << i << "]: analytic " << a << " vs numeric " << n;
  }
}

/// Expects |a - b| <= atol + rtol * |b| elementwise.
inline void expectAllNear(const float *a, const std::vector<double> &b,
                          const std::string &what, double rtol = 1e-5,
                          double atol = 1e-6) {
  for (size_t i = 0; i < b.size(); ++i)
    EXPECT_LE(std::fabs(a[i] - b[i]), atol + rtol * std::fabs(b[i]))
        << what << "[" << i << "]: " << a[i] << " vs " << b[i];
}

/// Bit pattern of a float.
inline uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

/// Float with the given bit pattern.
inline float fromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

} // namespace zrt_test

#endif // ZRT_TEST_UTIL_H
