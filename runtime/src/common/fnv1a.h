//===- fnv1a.h - FNV-1a, 64 bit ---------------------------------*- C++ -*-===//
///
/// \file
/// The runtime's one FNV-1a 64 (Fowler-Noll-Vo, offset basis
/// 0xcbf29ce484222325, prime 0x100000001b3): the hash of a parameter name in
/// zrt_param_seed (common.cpp) and the checksums and model fingerprint of
/// the checkpoints (driver/checkpoint_*.cpp).
///
//===----------------------------------------------------------------------===//
#ifndef ZRT_SRC_COMMON_FNV1A_H
#define ZRT_SRC_COMMON_FNV1A_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace zrt {

/// FNV-1a 64, incremental: `h` is the hash of every byte added so far (the
/// offset basis before any).
struct Fnv1a64 {
  uint64_t h = 0xcbf29ce484222325ULL;

  /// Adds the `n` bytes at `p`.
  void add(const void *p, size_t n) {
    const unsigned char *b = static_cast<const unsigned char *>(p);
    for (size_t i = 0; i < n; ++i) {
      h ^= b[i];
      h *= 0x100000001b3ULL;
    }
  }
  /// Adds the bytes of `s` and its terminating NUL (so "ab","c" and "a","bc"
  /// differ).
  void addStr(const std::string &s) { add(s.c_str(), s.size() + 1); }
  /// Adds the 8 bytes of `v` (host byte order).
  void addInt(int64_t v) { add(&v, sizeof v); }
};

} // namespace zrt

#endif // ZRT_SRC_COMMON_FNV1A_H
