//===- fuzz_manifest.cpp - libFuzzer target: checkpoint manifests --------===//
//
// Feeds arbitrary bytes to the checks --resume runs on a checkpoint's
// manifest.json (zrt_ckpt::checkManifestText: JSON without duplicate keys,
// format and version, the manifest's own FNV-1a-64, every field, the group
// rule). Every input must end in "" or a message: never a crash, a hang, an
// uncaught exception or a sanitizer report.
//
//===----------------------------------------------------------------------===//

#include "driver/checkpoint.h"
#include "zrt/zrt.h"

#include <cstdint>
#include <string>

// The manifest checks touch no model state; the checkpoint files' state copies
// (state_io.h) link against these, which are never called here.
extern "C" int zrt_copy_to_device(void *, const void *, int64_t) {
  return ZRT_ERR_INVALID_ARGUMENT;
}
extern "C" int zrt_copy_to_host(void *, const void *, int64_t) {
  return ZRT_ERR_INVALID_ARGUMENT;
}

/// For odd-sized inputs, rewrites the manifest's own checksum to match its
/// contents (as a writer would), so that mutations also reach the field
/// checks behind it.
void reseal(std::string &text) {
  const std::string key = "  \"manifest_fnv1a64\": \"";
  const size_t at = text.rfind(key);
  if (at == std::string::npos || at + key.size() + 16 > text.size())
    return;
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < at; ++i) {
    h ^= static_cast<unsigned char>(text[i]);
    h *= 0x100000001b3ULL;
  }
  static const char kHex[] = "0123456789abcdef";
  for (int i = 0; i < 16; ++i)
    text[at + key.size() + i] = kHex[(h >> (60 - 4 * i)) & 15];
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  if (size % 2)
    reseal(text);
  (void)zrt_ckpt::checkManifestText(text);
  return 0;
}
