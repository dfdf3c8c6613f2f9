//===- paths.cpp - Which files a training run reads and writes ------------===//
//
// See paths.h. Plain POSIX (stat, realpath, opendir).
//
//===----------------------------------------------------------------------===//

#include "driver/paths.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace zrt {
namespace {

/// realpath(parent) + "/" + last component, or the path as given when the
/// parent does not resolve.
std::string canonical(const std::string &path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/')
    p.pop_back();
  if (char *full = ::realpath(p.c_str(), nullptr)) {
    std::string r = full;
    std::free(full);
    return r;
  }
  const size_t slash = p.rfind('/');
  const std::string parent = slash == std::string::npos ? "."
                             : slash == 0               ? "/"
                                                        : p.substr(0, slash);
  const std::string leaf = slash == std::string::npos ? p : p.substr(slash + 1);
  if (char *full = ::realpath(parent.c_str(), nullptr)) {
    std::string r = full;
    std::free(full);
    return (r == "/" ? r : r + "/") + leaf;
  }
  return p;
}

} // namespace

bool samePath(const std::string &a, const std::string &b) {
  if (a.empty() || b.empty())
    return false;
  struct stat sa, sb;
  if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0)
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  return canonical(a) == canonical(b);
}

std::string checkOutputPaths(const std::vector<NamedPath> &inputs,
                             const std::vector<NamedPath> &outputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const auto &[flag, path] = outputs[i];
    if (path.empty())
      continue;
    for (const auto &[inFlag, inPath] : inputs)
      if (samePath(path, inPath))
        return flag + " '" + path + "' is the " + inFlag +
               " file: writing it would destroy the input (choose another "
               "path)";
    for (size_t j = 0; j < i; ++j)
      if (samePath(path, outputs[j].second))
        return flag + " and " + outputs[j].first + " name the same file '" +
               path + "' (each output needs its own path)";
  }
  return "";
}

std::string checkExportTarget(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return ""; // created at the end (a missing parent fails at mkstemp)
  if (S_ISDIR(st.st_mode))
    return "--export '" + path +
           "' is a directory (--export takes the path of a .safetensors "
           "file)";
  if (!S_ISREG(st.st_mode))
    return "--export '" + path +
           "' exists and is not a regular file (it would be replaced)";
  return "";
}

std::string existingCheckpoints(const std::string &dir) {
  struct stat st;
  std::string latest = dir + "/latest";
  std::vector<std::string> steps;
  if (DIR *d = ::opendir(dir.c_str())) {
    while (struct dirent *e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (isStepDirName(n))
        steps.push_back(n);
    }
    ::closedir(d);
  }
  const bool hasLatest = ::lstat(latest.c_str(), &st) == 0;
  if (!hasLatest && steps.empty())
    return "";
  std::sort(steps.begin(), steps.end(), [](const std::string &a,
                                           const std::string &b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  });
  std::string s;
  for (size_t i = 0; i < steps.size() && i < 3; ++i)
    s += (i ? ", " : "") + steps[steps.size() - 1 - i];
  if (steps.size() > 3)
    s += ", ...";
  if (hasLatest)
    s = s.empty() ? "a 'latest' pointer" : s + " and a 'latest' pointer";
  return s;
}

bool resumesInto(const std::string &resume, const std::string &dir) {
  if (resume.empty())
    return false;
  if (samePath(resume, dir))
    return true;
  std::string r = resume;
  while (r.size() > 1 && r.back() == '/')
    r.pop_back();
  const size_t slash = r.rfind('/');
  const std::string parent = slash == std::string::npos ? "."
                             : slash == 0               ? "/"
                                                        : r.substr(0, slash);
  return samePath(parent, dir);
}

} // namespace zrt
