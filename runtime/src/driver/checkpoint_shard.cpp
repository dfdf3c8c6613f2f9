//===- checkpoint_shard.cpp - A rank's shard file -------------------------===//
//
// rank_<r>.bin of a step directory: a 64-byte header (magic "ZRTCKPT1",
// u32 format version, rank, world size, number of states; i64 step, file
// bytes), then every saved state of the rank's state table at 64-byte
// aligned offsets (the same on every rank), zero padding between. Written
// by its rank at save (staged from arena memory, checked for NaN and Inf),
// checked whole against the manifest at --resume (header and FNV-1a-64),
// and read in element ranges while loading (converted between f32, bf16
// and f16 as the loading layout needs).
//
//===----------------------------------------------------------------------===//

#include "driver/checkpoint_impl.h"
#include "driver/checkpoint_layout.h"

#include "common/fnv1a.h"
#include "driver/fileio.h"
#include "driver/state_io.h"
#include "driver/strformat.h"
#include "zrt/zrt.h"

#include <fcntl.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace zrt_ckpt {

using zrt::format;
using zrt::preadAll;
using zrt::writeAll;

namespace {

/// Shard files this process has written (--checkpoint-crash-after-files
/// counts over the run).
int64_t g_filesWritten = 0;

/// NaN and Inf values among n elements of `dtype` (f32, bf16 or f16) at p:
/// an all-ones exponent.
int64_t countNonFinite(const void *p, int dtype, int64_t n) {
  const char *b = static_cast<const char *>(p);
  int64_t bad = 0;
  if (dtype == ZRT_BF16) {
    for (int64_t i = 0; i < n; ++i) {
      uint16_t v;
      std::memcpy(&v, b + 2 * i, 2);
      bad += (v & 0x7F80u) == 0x7F80u;
    }
  } else if (dtype == ZRT_F16) {
    for (int64_t i = 0; i < n; ++i) {
      uint16_t v;
      std::memcpy(&v, b + 2 * i, 2);
      bad += (v & 0x7C00u) == 0x7C00u;
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      uint32_t v;
      std::memcpy(&v, b + 4 * i, 4);
      bad += (v & 0x7F800000u) == 0x7F800000u;
    }
  }
  return bad;
}

} // namespace

std::string Checkpointer::Impl::writeShard(const std::string &path,
                                           int64_t step, uint64_t *sum,
                                           int64_t *nonFinite,
                                           std::string *badState) {
  *nonFinite = 0;
  const std::string what = format("cannot write checkpoint file '%s'",
                                  path.c_str());
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return what + ": " + std::strerror(errno);
  zrt::Fnv1a64 h;
  bool ok = true;
  auto put = [&](const void *p, size_t n) {
    h.add(p, n);
    ok = ok && writeAll(fd, p, n);
  };
  unsigned char header[kHeaderBytes] = {};
  std::memcpy(header, kMagic, 8);
  uint32_t u32[4] = {static_cast<uint32_t>(kFormatVersion),
                     static_cast<uint32_t>(rank), static_cast<uint32_t>(world),
                     static_cast<uint32_t>(cur.states.size())};
  std::memcpy(header + 8, u32, sizeof u32);
  int64_t i64[2] = {step, cur.fileBytes};
  std::memcpy(header + 24, i64, sizeof i64);
  put(header, sizeof header);
  static const unsigned char zeros[kAlign] = {};
  int64_t pos = kHeaderBytes;
  std::vector<char> staged; // one state at a time, copied from arena memory
  for (const StateRec &s : cur.states) {
    const int64_t bytes = s.numel * static_cast<int64_t>(zrt::elementBytes(s.dtype));
    staged.resize(static_cast<size_t>(bytes));
    if (std::string err =
            zrt::stageToHost(staged.data(), m->states[s.index].data, bytes);
        !err.empty()) {
      ::close(fd);
      return what + ": " + err;
    }
    const int64_t bad = countNonFinite(staged.data(), s.dtype, s.numel);
    if (bad > 0 && *nonFinite == 0)
      *badState = s.name;
    *nonFinite += bad;
    put(staged.data(), static_cast<size_t>(bytes));
    pos += bytes;
    const int64_t pad = (kAlign - pos % kAlign) % kAlign;
    put(zeros, static_cast<size_t>(pad));
    pos += pad;
  }
  if (ok && ::fsync(fd) != 0)
    ok = false;
  const int e = errno;
  if (::close(fd) != 0)
    ok = false;
  if (!ok)
    return what + ": " + std::strerror(e ? e : errno);
  *sum = h.h;
  ++g_filesWritten;
  if (crashAfter >= 0 && g_filesWritten >= crashAfter) {
    std::fprintf(stderr,
                 "checkpoint: --checkpoint-crash-after-files %lld reached "
                 "(rank %d); exiting\n",
                 (long long)crashAfter, rank);
    std::fflush(stderr);
    ::_exit(1);
  }
  return "";
}

/// Checks one shard file as --resume does before loading anything: it
/// reads the whole file, its 64-byte header must repeat the manifest (magic
/// and format version, this file's rank, the world size, the number of
/// states, the step, the file size) and its FNV-1a-64 must be the
/// manifest's. `dir` and `name` only name it in the message. "" or the
/// message.
std::string checkShardFile(const std::string &dir, const std::string &path,
                           const std::string &name, int r, int world,
                           int64_t states, int64_t step, int64_t fileBytes,
                           uint64_t checksum) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return format("checkpoint '%s': cannot open shard file %s: %s",
                  dir.c_str(), name.c_str(),
                  std::strerror(errno));
  zrt::Fnv1a64 h;
  std::vector<char> buf(1 << 20);
  unsigned char header[kHeaderBytes] = {};
  int64_t total = 0;
  for (;;) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      return format("checkpoint '%s': cannot read shard file %s: %s",
                    dir.c_str(), name.c_str(),
                    std::strerror(e));
    }
    if (n == 0)
      break;
    if (total < kHeaderBytes)
      std::memcpy(header + total, buf.data(),
                  static_cast<size_t>(std::min<int64_t>(n, kHeaderBytes - total)));
    h.add(buf.data(), static_cast<size_t>(n));
    total += n;
  }
  ::close(fd);
  // The header repeats what the manifest says: the format version, this
  // file's rank, the world size, the number of states, the step and the
  // file size (a file copied in from another checkpoint or rank fails).
  uint32_t u32[4];
  std::memcpy(u32, header + 8, sizeof u32);
  int64_t i64[2];
  std::memcpy(i64, header + 24, sizeof i64);
  if (std::memcmp(header, kMagic, 8) != 0 ||
      u32[0] != static_cast<uint32_t>(kFormatVersion))
    return format("checkpoint '%s': shard file %s is not a version-%d shard "
                  "file (bad header)",
                  dir.c_str(), name.c_str(), kFormatVersion);
  if (u32[1] != static_cast<uint32_t>(r) ||
      u32[2] != static_cast<uint32_t>(world) ||
      u32[3] != static_cast<uint32_t>(states) ||
      i64[0] != step || i64[1] != fileBytes)
    return format("checkpoint '%s': shard file %s does not belong to this "
                  "checkpoint (its header says rank %u of %u, %u states, step "
                  "%lld, %lld bytes; the manifest: rank %d of %d, %lld states, "
                  "step %lld, %lld bytes)",
                  dir.c_str(), name.c_str(), u32[1], u32[2],
                  u32[3], (long long)i64[0], (long long)i64[1], r, world,
                  (long long)states, (long long)step,
                  (long long)fileBytes);
  if (h.h != checksum)
    return format("checkpoint '%s': shard file %s is corrupt (FNV-1a-64 "
                  "checksum %s, the manifest says %s)",
                  dir.c_str(), name.c_str(), hex64(h.h).c_str(),
                  hex64(checksum).c_str());
  return "";
}

std::string Checkpointer::Impl::verify(int r) {
  return checkShardFile(res.dir, filePath(r), files[r].first, r, old.world,
                        static_cast<int64_t>(old.states.size()), res.step,
                        old.fileBytes, files[r].second);
}

std::string Checkpointer::Impl::readRaw(const StateRec &s, int file,
                                        int64_t lo, int64_t hi, int dtype,
                                        void *dst) {
  if (fds.empty())
    fds.assign(files.size(), -1);
  int &fd = fds[file];
  if (fd < 0)
    fd = ::open(filePath(file).c_str(), O_RDONLY | O_CLOEXEC);
  const size_t eb = zrt::elementBytes(s.dtype);
  const int64_t n = hi - lo;
  std::vector<char> raw;
  void *buf = dst;
  if (s.dtype != dtype) {
    raw.resize(static_cast<size_t>(n) * eb);
    buf = raw.data();
  }
  if (fd < 0 || !preadAll(fd, buf, static_cast<size_t>(n) * eb,
                          static_cast<off_t>(s.offset + lo * (int64_t)eb)))
    return format("checkpoint '%s': cannot read shard file %s: %s",
                  res.dir.c_str(), files[file].first.c_str(),
                  std::strerror(errno));
  if (s.dtype == dtype)
    return "";
  if (dtype == ZRT_F32) // bf16 / f16 -> f32, exact
    zrt::hostToF32(buf, s.dtype, static_cast<float *>(dst), n);
  else if (s.dtype == ZRT_F32) // f32 -> bf16 / f16, round to nearest even
    zrt::hostFromF32(static_cast<const float *>(buf), dst, dtype, n);
  else { // bf16 <-> f16 through f32
    std::vector<float> wide(static_cast<size_t>(n));
    zrt::hostToF32(buf, s.dtype, wide.data(), n);
    zrt::hostFromF32(wide.data(), dst, dtype, n);
  }
  return "";
}

} // namespace zrt_ckpt
