//===- safetensors.h - The safetensors header parser -----------*- C++ -*-===//
///
/// \file
/// Parses the JSON header of a safetensors file for --import (import_export.cpp)
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

/// One tensor of the header: dtype (ZRT_F32, ZRT_BF16, ZRT_F16; ZRT_I32,
/// ZRT_I64 with `integers`), shape, and its
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
/// With `integers` (array datasets, arrays.h) I32 and I64 are accepted too
/// (ZRT_I32, ZRT_I64). Never throws.
std::string parseSafetensorsHeader(const std::string &header,
                                   int64_t dataBytes, const std::string &what,
                                   std::map<std::string, SafetensorsEntry> *out,
                                   bool integers = false);

} // namespace zrt

#endif // ZRT_SRC_SAFETENSORS_H
