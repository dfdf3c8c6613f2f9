//===- fuzz_safetensors.cpp - libFuzzer target: safetensors headers ------===//
//
// Feeds arbitrary bytes to the safetensors header parser of --import
// (zrt::parseSafetensorsHeader): as a whole file (8-byte length, header,
// data) and, for odd-sized inputs, as the header JSON itself. Every input
// must end in "" or a message: never a crash, a hang, an uncaught exception
// or a sanitizer report.
//
//===----------------------------------------------------------------------===//

#include "driver/safetensors.h"

#include <cstdint>
#include <cstring>
#include <map>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::map<std::string, zrt::SafetensorsEntry> out;
  if (size % 2) {
    const std::string header(reinterpret_cast<const char *>(data), size);
    (void)zrt::parseSafetensorsHeader(header, 1 << 20, "fuzz", &out);
    return 0;
  }
  if (size < 8)
    return 0;
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i)
    n = (n << 8) | data[i];
  if (n > size - 8)
    return 0;
  const std::string header(reinterpret_cast<const char *>(data) + 8,
                           static_cast<size_t>(n));
  (void)zrt::parseSafetensorsHeader(
      header, static_cast<int64_t>(size - 8 - n), "fuzz", &out);
  return 0;
}
