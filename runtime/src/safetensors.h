//===- safetensors.h - The safetensors header parser -----------*- C++ -*-===//
///
/// \file
/// Parses the JSON header of a safetensors file for --import (driver.cpp)
/// and the fuzz target test/fuzz/fuzz_safetensors.cpp. Internal to the
/// runtime.
///
//===----------------------------------------------------------------------===//

#ifndef ZRT_SRC_SAFETENSORS_H
#define ZRT_SRC_SAFETENSORS_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace zrt {

/// One tensor of the header: dtype (ZRT_F32 or ZRT_BF16), shape, and its
/// byte range [begin, end) relative to the start of the data.
struct SafetensorsEntry {
  int dtype = 0;
  std::vector<int64_t> shape;
  int64_t begin = 0, end = 0;
};

/// Parses `header` (the n bytes after the length) of a file with
/// `dataBytes` bytes of data into *out (by name; "__metadata__" skipped).
/// Refuses, with a message naming `what` (e.g. "--import file 'w.st'") and
/// the tensor: invalid JSON, a non-object, a tensor twice, a missing or
/// malformed dtype / shape / data_offsets, a dtype other than F32 and BF16,
/// and offsets that do not match the shape and dtype within the data.
/// Never throws.
std::string parseSafetensorsHeader(const std::string &header,
                                   int64_t dataBytes, const std::string &what,
                                   std::map<std::string, SafetensorsEntry> *out);

} // namespace zrt

#endif // ZRT_SRC_SAFETENSORS_H
