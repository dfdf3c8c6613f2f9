//===- fuzz_shard.cpp - libFuzzer target: checkpoint shard files ----------===//
//
// Feeds arbitrary bytes to the check --resume runs on each shard file
// (rank_<r>.bin) before it loads anything (zrt_ckpt::checkShardFile: the
// 64-byte header against the manifest's rank, world size, state count, step
// and size, and the whole file's FNV-1a-64). The input's first 32 bytes are
// what the manifest says (rank, world size, states, flags; step, file
// bytes), the rest is the file; with flag bit 0 the expected checksum is
// the file's own and with bit 1 the expected size is the file's (as for an
// untouched file), so mutations also reach the header checks. Every input
// must end in "" or a message: never a crash, a hang or a sanitizer report.
//
//===----------------------------------------------------------------------===//

#include "driver/checkpoint.h"
#include "zrt/zrt.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <unistd.h>

// The shard check touches no model state; the checkpoint files' state copies
// (state_io.h) link against these, which are never called here.
extern "C" int zrt_copy_to_device(void *, const void *, int64_t) {
  return ZRT_ERR_INVALID_ARGUMENT;
}
extern "C" int zrt_copy_to_host(void *, const void *, int64_t) {
  return ZRT_ERR_INVALID_ARGUMENT;
}

namespace {
uint64_t fnv1a64(const uint8_t *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

/// A private scratch file for this process (the fuzzer may run jobs in
/// parallel).
const std::string &scratchPath() {
  static const std::string path = [] {
    const char *dir = getenv("TMPDIR");
    return std::string(dir && *dir ? dir : "/tmp") + "/zero_fuzz_shard_" +
           std::to_string(getpid()) + ".bin";
  }();
  return path;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 32)
    return 0;
  uint32_t u32[4];
  int64_t i64[2];
  std::memcpy(u32, data, sizeof u32);
  std::memcpy(i64, data + 16, sizeof i64);
  const uint8_t *file = data + 32;
  const size_t fileSize = size - 32;
  FILE *f = std::fopen(scratchPath().c_str(), "wb");
  if (!f)
    return 0;
  if (fileSize)
    std::fwrite(file, 1, fileSize, f);
  std::fclose(f);
  const uint32_t flags = u32[3];
  const uint64_t checksum =
      (flags & 1) ? fnv1a64(file, fileSize) : static_cast<uint64_t>(i64[1]);
  const int64_t bytes = (flags & 2) ? static_cast<int64_t>(fileSize) : i64[1];
  (void)zrt_ckpt::checkShardFile("<fuzz>", scratchPath(), "rank_0.bin",
                                 static_cast<int>(u32[0] & 0xffff),
                                 static_cast<int>(u32[1] & 0xffff),
                                 static_cast<int64_t>(u32[2] & 0xffff), i64[0],
                                 bytes, checksum);
  return 0;
}
