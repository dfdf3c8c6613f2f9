//===- fuzz_dataset.cpp - libFuzzer target: token files ------------------===//
//
// Feeds arbitrary bytes to zrt_dataset_open as an llm.c .bin token file and
// as a text file (written to a memfd, opened through /proc/self/fd), then
// samples a few batches from whatever loads. Any crash, hang or sanitizer
// report is a bug: a bad file must be refused with ZRT_ERR_FORMAT/IO.
//
//===----------------------------------------------------------------------===//

#include "zrt/zrt.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

void tryOpen(const uint8_t *data, size_t size, const char *suffix) {
  int fd = memfd_create("zrt-fuzz", 0);
  if (fd < 0)
    return;
  size_t done = 0;
  while (done < size) {
    ssize_t w = ::write(fd, data + done, size - done);
    if (w <= 0)
      break;
    done += static_cast<size_t>(w);
  }
  // The loader picks the .bin reader by the name's suffix: a symlink with
  // that suffix to the memfd.
  char path[64];
  std::snprintf(path, sizeof path, "/dev/shm/zrt-fuzz-%d%s", getpid(), suffix);
  std::string src = "/proc/self/fd/" + std::to_string(fd);
  ::unlink(path);
  if (::symlink(src.c_str(), path) == 0) {
    zrt_dataset ds = nullptr;
    const double fractions[] = {0.0, 0.1, 0.5};
    for (double f : fractions) {
      if (zrt_dataset_open(path, f, &ds) != ZRT_OK)
        continue;
      std::vector<int32_t> in(4 * 8), tg(4 * 8);
      for (int split : {ZRT_SPLIT_TRAIN, ZRT_SPLIT_VAL}) {
        for (int shuffle : {0, 1})
          zrt_dataset_batch(ds, split, 4, 8, 7, 3, shuffle, 1, 2, in.data(),
                            tg.data());
        zrt_dataset_sequences(ds, split, 8, 7, 3, 5, 2, in.data(), tg.data());
        // The per-window id check (its error path on most inputs).
        zrt_dataset_set_vocab_limit(ds, 100);
        zrt_dataset_sequences(ds, split, 8, 7, 3, 5, 2, in.data(), tg.data());
        zrt_dataset_set_vocab_limit(ds, 0);
      }
      zrt_dataset_vocab_size(ds);
      zrt_dataset_close(ds);
      ds = nullptr;
    }
    ::unlink(path);
  }
  ::close(fd);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tryOpen(data, size, ".bin");
  tryOpen(data, size, ".txt");
  return 0;
}
