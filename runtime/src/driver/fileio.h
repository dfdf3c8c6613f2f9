//===- fileio.h - POSIX I/O helpers of the driver and checkpoints -*- C++ -*-===//
///
/// \file
/// Complete reads and writes over POSIX file descriptors (retrying short
/// transfers and EINTR), shared by the training driver (safetensors export
/// and import) and the checkpoint writer/reader, and the file-system
/// predicates and mkdir -p of the driver's files (checkpoints, --import,
/// TensorBoard). Internal to the runtime.
///
//===----------------------------------------------------------------------===//

#ifndef ZRT_SRC_FILEIO_H
#define ZRT_SRC_FILEIO_H

#include <cerrno>
#include <cstddef>
#include <string>
#include <sys/stat.h>
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

/// Whether `p` names a directory (following links).
inline bool isDir(const std::string &p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

/// Whether `p` names a regular file (following links).
inline bool isFile(const std::string &p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

/// mkdir -p (mode 0755): whether `path` is a directory afterwards; on
/// failure errno is the failed mkdir's.
inline bool makeDirs(const std::string &path) {
  std::string cur;
  for (size_t i = 0; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      if (!cur.empty() && !isDir(cur) && ::mkdir(cur.c_str(), 0755) != 0 &&
          errno != EEXIST)
        return false;
    }
    if (i < path.size())
      cur += path[i];
  }
  return isDir(path);
}

} // namespace zrt

#endif // ZRT_SRC_FILEIO_H
