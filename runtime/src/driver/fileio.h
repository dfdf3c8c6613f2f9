//===- fileio.h - POSIX I/O helpers of the driver and checkpoints -*- C++ -*-===//
///
/// \file
/// Complete reads and writes over POSIX file descriptors (retrying short
/// transfers and EINTR), shared by the training driver (safetensors export
/// and import) and the checkpoint writer/reader, and the file-system
/// predicates, mkdir -p, directory fsync and atomic small-file replacement
/// of the driver's files (checkpoints, --import, --export, TensorBoard).
/// Internal to the runtime.
///
//===----------------------------------------------------------------------===//

#ifndef ZRT_SRC_FILEIO_H
#define ZRT_SRC_FILEIO_H

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <fcntl.h>
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

/// fsync of directory `dir` (after a rename in it), best effort: a
/// directory that cannot be opened or synced is left as it is.
inline void fsyncDir(const std::string &dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

/// Replaces file `dst` by `text` atomically: writes it to `tmp` (created or
/// truncated, mode 0644), fsyncs and closes it, then renames it onto `dst`.
/// False on the first failure (errno set; `tmp` may be left behind); the
/// directory is not synced (fsyncDir).
inline bool replaceFile(const std::string &tmp, const std::string &dst,
                        const std::string &text) {
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  bool ok = fd >= 0 && writeAll(fd, text.data(), text.size()) &&
            ::fsync(fd) == 0;
  if (fd >= 0 && ::close(fd) != 0)
    ok = false;
  return ok && std::rename(tmp.c_str(), dst.c_str()) == 0;
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
