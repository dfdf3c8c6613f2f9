//===- data_files.cpp - The files of --data and --val-data -----------------===//

#include "driver/data_files.h"

#include <glob.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace {

std::string quoted(const std::string &s) { return "'" + s + "'"; }

/// "" when `path` is a non-empty regular file, else the message.
std::string checkFile(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return "cannot open data file " + quoted(path) + ": " +
           std::strerror(errno);
  if (S_ISDIR(st.st_mode))
    return "data file " + quoted(path) +
           " is a directory (arrays of .npy files feed models with named "
           "inputs only; this one takes token ids)";
  if (st.st_size == 0)
    return "data file " + quoted(path) + " is empty";
  return "";
}

} // namespace

std::string zrt::expandDataFiles(const std::string &flag,
                                 const std::string &spec,
                                 std::vector<std::string> *files) {
  files->clear();
  size_t begin = 0;
  while (true) {
    const size_t comma = spec.find(',', begin);
    const std::string entry =
        spec.substr(begin, comma == std::string::npos ? std::string::npos
                                                      : comma - begin);
    if (entry.empty())
      return flag + ": empty entry in " + quoted(spec);
    if (entry.find_first_of("*?[") == std::string::npos) {
      files->push_back(entry);
    } else {
      glob_t g;
      const int rc = ::glob(entry.c_str(), GLOB_NOSORT, nullptr, &g);
      if (rc == GLOB_NOMATCH || (rc == 0 && g.gl_pathc == 0)) {
        ::globfree(&g);
        return flag + ": no file matches " + quoted(entry);
      }
      if (rc != 0) {
        ::globfree(&g);
        return flag + ": cannot expand " + quoted(entry) +
               (rc == GLOB_NOSPACE ? ": out of memory"
                                   : ": a directory cannot be read");
      }
      std::vector<std::string> matches(g.gl_pathv, g.gl_pathv + g.gl_pathc);
      ::globfree(&g);
      std::sort(matches.begin(), matches.end());
      files->insert(files->end(), matches.begin(), matches.end());
    }
    if (comma == std::string::npos)
      break;
    begin = comma + 1;
  }
  for (const std::string &f : *files)
    if (std::string err = checkFile(f); !err.empty())
      return err;
  return "";
}
