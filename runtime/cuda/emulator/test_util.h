// Helpers shared by the emulated kernel tests: command line, random data,
// bf16 buffers with guard elements, comparisons.
#pragma once
#include "zrt/zrt.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace emu_test {
using Vec = std::vector<float>;
using VecB = std::vector<zrt_bf16>;

/// Command line: `set=ci|full` (case list), `orders=0,2` (scheduling
/// orders, emu::order values), `case=N` (one case of the set), `part=I/N`
/// (every N-th case from I, to split a set over ctest entries).
struct Args {
  std::string set = "ci";
  std::vector<int> orders = {0, 2};
  int only = -1, part = 0, parts = 1;
  Args(int argc, char **argv) {
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      const size_t eq = a.find('=');
      const std::string k = a.substr(0, eq),
                        v = eq == std::string::npos ? "" : a.substr(eq + 1);
      if (k == "set")
        set = v;
      else if (k == "case")
        only = atoi(v.c_str());
      else if (k == "part")
        sscanf(v.c_str(), "%d/%d", &part, &parts);
      else if (k == "orders") {
        orders.clear();
        std::stringstream ss(v);
        for (std::string o; std::getline(ss, o, ',');)
          orders.push_back(atoi(o.c_str()));
      } else {
        fprintf(stderr,
                "usage: %s [set=ci|full] [orders=0,2] [case=N] [part=I/N]\n",
                argv[0]);
        exit(2);
      }
    }
    setvbuf(stdout, nullptr, _IOLBF, 0);
  }
  bool selected(int ci) const {
    return only >= 0 ? ci == only : ci % parts == part;
  }
};

inline Vec rnd(int64_t n, uint32_t seed, float lo = -1, float hi = 1) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  Vec v(n);
  for (auto &x : v)
    x = d(g);
  return v;
}
inline VecB toB(const Vec &v) {
  VecB r(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    r[i] = zrt_f32_to_bf16(v[i]);
  return r;
}
inline Vec wid(const VecB &v) {
  Vec r(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    r[i] = zrt_bf16_to_f32(v[i]);
  return r;
}
inline Vec wid(const zrt_bf16 *p, size_t n) { return wid(VecB(p, p + n)); }

/// `n` elements of T at `off` elements past a 64-byte boundary, with guard
/// elements (a NaN pattern) on both sides that must stay untouched.
template <class T> struct Guarded {
  std::vector<T> store;
  T *p;
  size_t n;
  T fill;
  Guarded(size_t n_, int off, T fill_)
      : store(n_ + 2 * 64 / sizeof(T) + 64, fill_), n(n_), fill(fill_) {
    uintptr_t a = reinterpret_cast<uintptr_t>(store.data());
    a = (a + 63) / 64 * 64 + 64;
    p = reinterpret_cast<T *>(a) + off;
  }
  std::vector<T> get() const { return std::vector<T>(p, p + n); }
  void set(const std::vector<T> &v) { std::copy(v.begin(), v.end(), p); }
  bool guardsOk() const {
    for (const T *q = store.data(); q < p; ++q)
      if (memcmp(q, &fill, sizeof(T)))
        return false;
    for (const T *q = p + n; q < store.data() + store.size(); ++q)
      if (memcmp(q, &fill, sizeof(T)))
        return false;
    return true;
  }
};
using BufB = Guarded<zrt_bf16>;
inline constexpr zrt_bf16 kNaNB = 0x7fc1;

/// The packed attention layouts (zrt_attention_forward_packed): rows of W
/// elements per token, [B, T, W]; head h of one operand at column
/// col + h D. splitHeads copies that operand out as [B, H, T, D];
/// mergeHeads writes a [B, H, T, D] tensor into those columns of `rows`.
template <class T>
std::vector<T> splitHeads(const std::vector<T> &rows, int64_t B, int64_t Tn,
                          int64_t H, int64_t D, int64_t W, int64_t col) {
  std::vector<T> out(B * H * Tn * D);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t t = 0; t < Tn; ++t)
        for (int64_t d = 0; d < D; ++d)
          out[((b * H + h) * Tn + t) * D + d] =
              rows[(b * Tn + t) * W + col + h * D + d];
  return out;
}
template <class T>
void mergeHeads(const std::vector<T> &heads, std::vector<T> &rows, int64_t B,
                int64_t Tn, int64_t H, int64_t D, int64_t W, int64_t col) {
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t t = 0; t < Tn; ++t)
        for (int64_t d = 0; d < D; ++d)
          rows[(b * Tn + t) * W + col + h * D + d] =
              heads[((b * H + h) * Tn + t) * D + d];
}
} // namespace emu_test
