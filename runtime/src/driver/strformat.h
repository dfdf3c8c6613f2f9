//===- strformat.h - printf-style std::string -------------------*- C++ -*-===//
///
/// \file
/// zrt::format: the runtime's messages (errors, the driver's lines) built
/// printf-style into a std::string, and the few pieces of text that several
/// of them print (sizes, shapes, dtype and state-kind names). One
/// definition for the files that print (driver, checkpoints, safetensors,
/// array data, the program description).
///
//===----------------------------------------------------------------------===//

#ifndef ZRT_STRFORMAT_H
#define ZRT_STRFORMAT_H

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace zrt {

/// `fmt` formatted with the arguments, as vsnprintf does; a result longer
/// than 2047 bytes is cut there (messages name paths and numbers, never
/// data).
inline std::string format(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
inline std::string format(const char *fmt, ...) {
  char buf[2048];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return buf;
}

/// Bytes in decimal megabytes with two decimals: "12.35 MB".
inline std::string megabytes(int64_t bytes) {
  return format("%.2f MB", static_cast<double>(bytes) / 1e6);
}

/// A shape as "[2, 3]" ("[]" for a scalar).
inline std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += format(i ? ", %lld" : "%lld", (long long)shape[i]);
  return s + "]";
}

/// The name of element type `dtype` (zrt.h enum zrt_dtype) in messages,
/// manifests and the program description: "f32", "bf16", "f16", "i32",
/// "i64", else "?".
inline const char *dtypeText(int dtype) {
  static const char *const kNames[5] = {"f32", "bf16", "f16", "i32", "i64"};
  return dtype >= 0 && dtype < 5 ? kNames[dtype] : "?";
}

/// The names of the state kinds (zrt/model.h ZRT_STATE_*, in their order)
/// in messages, manifests and the program description.
inline const char *const kStateKindNames[5] = {"param", "grad", "master",
                                               "exp_avg", "exp_avg_sq"};

} // namespace zrt

#endif // ZRT_STRFORMAT_H
