//===- checkpoint_save.cpp - Saving a checkpoint --------------------------===//
//
// --checkpoint-dir / --checkpoint-every: the collective save of a step
// directory and --keep-checkpoints. Rank 0 makes DIR/.step_<S>.tmp/, every
// rank writes its shard file into it (checkpoint_shard.cpp), rank 0 gathers
// the checksums, writes manifest.json last (checkpoint_manifest.cpp),
// renames the directory to DIR/step_<S>/ and only then replaces DIR/latest,
// so that a crash mid-save leaves the previous checkpoint as it was. A state
// with NaN or Inf values is never saved.
//
//===----------------------------------------------------------------------===//

#include "driver/checkpoint.h"
#include "driver/checkpoint_impl.h"

#include "comm/host_comm.h"
#include "driver/fileio.h"
#include "driver/paths.h"
#include "driver/strformat.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace zrt_ckpt {

using zrt::format;
using zrt::isDir;
using zrt::makeDirs;

namespace {

/// rm -r of a directory that holds only files (a step directory).
void removeTree(const std::string &dir) {
  if (DIR *d = ::opendir(dir.c_str())) {
    while (struct dirent *e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n != "." && n != "..")
        ::unlink((dir + "/" + n).c_str());
    }
    ::closedir(d);
  }
  ::rmdir(dir.c_str());
}

/// The step directories of checkpoint directory `dir` other than the
/// `keep` with the highest step numbers and `current` (the one `latest`
/// names): what --keep-checkpoints removes. Names that are not
/// `step_<digits>` (temporary and user files) are never listed.
std::vector<std::string> stepsBeyond(const std::string &dir, int64_t keep,
                                     const std::string &current) {
  std::vector<std::pair<long long, std::string>> steps;
  if (DIR *d = ::opendir(dir.c_str())) {
    while (struct dirent *e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (!zrt::isStepDirName(n) || n.size() > 5 + 18 || !isDir(dir + "/" + n))
        continue;
      steps.emplace_back(std::stoll(n.substr(5)), n);
    }
    ::closedir(d);
  }
  std::sort(steps.begin(), steps.end(),
            [](const auto &a, const auto &b) { return a.first > b.first; });
  std::vector<std::string> out;
  for (size_t i = static_cast<size_t>(keep); i < steps.size(); ++i)
    if (steps[i].second != current)
      out.push_back(steps[i].second);
  return out;
}

} // namespace

std::string Checkpointer::prepare(const std::string &dir) {
  if (std::string err = impl_->ensureLayout(); !err.empty())
    return err;
  struct stat st;
  if (impl_->rank == 0 && ::stat(dir.c_str(), &st) == 0 && !S_ISDIR(st.st_mode))
    return format("--checkpoint-dir '%s' exists and is not a directory",
                  dir.c_str());
  if (impl_->rank == 0 && !makeDirs(dir))
    return format("cannot create --checkpoint-dir '%s': %s", dir.c_str(),
                  std::strerror(errno));
  return "";
}

int Checkpointer::save(const std::string &dir, int64_t step,
                       const RunInfo &run, std::vector<std::string> *notes) {
  Impl &I = *impl_;
  if (int code = I.agree(I.ensureLayout(), kExitUser))
    return code;
  const std::string name = format("step_%lld", (long long)step);
  const std::string final = dir + "/" + name;
  const std::string tmpDir = dir + "/." + name + ".tmp";
  // 1. Rank 0 makes a fresh temporary step directory.
  std::string err;
  if (I.rank == 0) {
    if (isDir(tmpDir))
      removeTree(tmpDir); // left by an interrupted save
    if (!makeDirs(dir) || ::mkdir(tmpDir.c_str(), 0755) != 0)
      err = format("cannot create checkpoint directory '%s': %s",
                   tmpDir.c_str(), std::strerror(errno));
  }
  if (int code = I.agree(err, kExitUser))
    return code;
  // 2. Every rank writes its shard file.
  //    A state with NaN or Inf values is never made a checkpoint: the
  //    temporary directory is removed and `latest` stays where it was.
  uint64_t sum = 0;
  int64_t nonFinite = 0;
  std::string badState;
  err = I.writeShard(tmpDir + format("/rank_%05d.bin", I.rank), step, &sum,
                     &nonFinite, &badState);
  if (err.empty() && nonFinite > 0)
    err = format("checkpoint step %lld not saved: state '%s' on rank %d holds "
                 "non-finite values (%lld NaN or Inf on this rank); 'latest' "
                 "is unchanged",
                 (long long)step, badState.c_str(), I.rank,
                 (long long)nonFinite);
  if (int code = I.agree(err, kExitUser)) {
    if (I.rank == 0)
      removeTree(tmpDir);
    return code;
  }
  // 3. Rank 0 collects the checksums, writes the manifest last, renames the
  //    directory into place and then updates `latest`.
  std::vector<uint64_t> sums(static_cast<size_t>(I.world));
  if (!zrt::host::gatherBytes(&sum, sizeof sum, sums.data()))
    err = "the gather of checkpoint checksums failed";
  if (I.rank == 0 && err.empty()) {
    err = I.writeManifest(tmpDir, step, run, sums);
    if (err.empty()) {
      zrt::fsyncDir(tmpDir);
      std::string trash;
      if (isDir(final)) { // an older save of the same step: replace it
        trash = dir + "/." + name + ".old";
        if (isDir(trash))
          removeTree(trash);
        if (std::rename(final.c_str(), trash.c_str()) != 0)
          err = format("cannot replace checkpoint '%s': %s", final.c_str(),
                       std::strerror(errno));
      }
      if (err.empty() && std::rename(tmpDir.c_str(), final.c_str()) != 0)
        err = format("cannot rename '%s' to '%s': %s", tmpDir.c_str(),
                     final.c_str(), std::strerror(errno));
      zrt::fsyncDir(dir);
      if (!trash.empty())
        removeTree(trash);
    }
    if (err.empty()) {
      const std::string latest = dir + "/latest", tmp = dir + "/.latest.tmp";
      if (!zrt::replaceFile(tmp, latest, name + "\n"))
        err = format("cannot update '%s': %s", latest.c_str(),
                     std::strerror(errno));
      zrt::fsyncDir(dir);
    }
    if (err.empty() && I.keepLast > 0)
      for (const std::string &old : stepsBeyond(dir, I.keepLast, name)) {
        removeTree(dir + "/" + old);
        if (notes)
          notes->push_back(
              isDir(dir + "/" + old)
                  ? format("warning: --keep-checkpoints: cannot remove "
                           "'%s/%s' (it holds more than a checkpoint's files)",
                           dir.c_str(), old.c_str())
                  : format("checkpoint: removed %s/%s (--keep-checkpoints "
                           "%lld)",
                           dir.c_str(), old.c_str(), (long long)I.keepLast));
      }
  }
  return I.agree(err, kExitUser);
}

} // namespace zrt_ckpt
