//===- paths.h - Which files a training run reads and writes -*- C++ -*-===//
///
/// \file
/// The training driver's guard against losing a user's files: every output
/// path (--metrics, --export, --dump-batches) is compared with every input
/// (--data, --import) and with the other outputs before anything is opened,
/// and a fresh run refuses a --checkpoint-dir that already holds another
/// run's checkpoints. Internal to the runtime (the driver).
///
//===----------------------------------------------------------------------===//

#ifndef ZRT_SRC_PATHS_H
#define ZRT_SRC_PATHS_H

#include <string>
#include <utility>
#include <vector>

namespace zrt {

/// True when `a` and `b` name the same file: the same inode when both
/// exist, else the same canonical path (realpath of the parent directory
/// plus the last component), so "./m.jsonl" and "m.jsonl" match before
/// either exists.
bool samePath(const std::string &a, const std::string &b);

/// A named path of the run: {"--metrics", "run.jsonl"}.
using NamedPath = std::pair<std::string, std::string>;

/// "" when no output is the same file as an input or as another output,
/// else the message naming both flags (empty paths are skipped).
std::string checkOutputPaths(const std::vector<NamedPath> &inputs,
                             const std::vector<NamedPath> &outputs);

/// "" when `path` may become the --export file (absent, or a regular file
/// to be replaced), else why not (an existing directory, a device, ...).
std::string checkExportTarget(const std::string &path);

/// Whether `name` is a step directory's name: "step_" and one or more
/// decimal digits (what a checkpoint save creates, what `latest` may name;
/// temporary ".step_<N>.tmp" and user files are not).
inline bool isStepDirName(const std::string &name) {
  return name.size() > 5 && name.compare(0, 5, "step_") == 0 &&
         name.find_first_not_of("0123456789", 5) == std::string::npos;
}

/// The checkpoint directory's existing checkpoints, for the message that
/// refuses a fresh run into it: "" when DIR does not exist or holds neither
/// `latest` nor a step_<N> directory, else a short description ("latest:
/// step_20" or "step_10, step_20").
std::string existingCheckpoints(const std::string &dir);

/// True when the --resume path lies in checkpoint directory `dir` (DIR
/// itself or one of its step directories): continuing a run in place.
bool resumesInto(const std::string &resume, const std::string &dir);

} // namespace zrt

#endif // ZRT_SRC_PATHS_H
