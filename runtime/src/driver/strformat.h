//===- strformat.h - printf-style std::string -------------------*- C++ -*-===//
///
/// \file
/// zrt::format: the runtime's messages (errors, the driver's lines) built
/// printf-style into a std::string. One definition for the files that print
/// (driver, checkpoints, safetensors, array data).
///
//===----------------------------------------------------------------------===//

#ifndef ZRT_STRFORMAT_H
#define ZRT_STRFORMAT_H

#include <cstdarg>
#include <cstdio>
#include <string>

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

} // namespace zrt

#endif // ZRT_STRFORMAT_H
