//===- fileio.h - POSIX I/O helpers of the driver and checkpoints -*- C++ -*-===//
///
/// \file
/// Complete reads and writes over POSIX file descriptors (retrying short
/// transfers and EINTR), shared by the training driver (safetensors export
/// and import) and the checkpoint writer/reader. Internal to the runtime.
///
//===----------------------------------------------------------------------===//

#ifndef ZRT_SRC_FILEIO_H
#define ZRT_SRC_FILEIO_H

#include <cerrno>
#include <cstddef>
#include <sys/types.h>
#include <unistd.h>

namespace zrt {

/// Writes all `n` bytes of `buf` at the file position; false on failure
/// (errno set).
inline bool writeAll(int fd, const void *buf, size_t n) {
  const char *p = static_cast<const char *>(buf);
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

/// Writes all `n` bytes of `buf` at byte `offset`; false on failure (errno
/// set).
inline bool pwriteAll(int fd, const void *buf, size_t n, off_t offset) {
  const char *p = static_cast<const char *>(buf);
  while (n > 0) {
    ssize_t w = ::pwrite(fd, p, n, offset);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return false;
    p += w;
    n -= static_cast<size_t>(w);
    offset += w;
  }
  return true;
}

/// Reads exactly `n` bytes at byte `offset` into `buf`; false on failure or
/// end of file (errno = EIO then).
inline bool preadAll(int fd, void *buf, size_t n, off_t offset) {
  char *p = static_cast<char *>(buf);
  while (n > 0) {
    ssize_t r = ::pread(fd, p, n, offset);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0) {
      if (r == 0)
        errno = EIO;
      return false;
    }
    p += r;
    n -= static_cast<size_t>(r);
    offset += r;
  }
  return true;
}

} // namespace zrt

#endif // ZRT_SRC_FILEIO_H
