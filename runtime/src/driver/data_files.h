//===- data_files.h - The files of --data and --val-data ---------*- C++ -*-===//
///
/// \file
/// Expands the training driver's --data / --val-data value (a
/// comma-separated list of paths and glob patterns) into the files of the
/// dataset (zrt_dataset_open_shards), checking each one exists, is a
/// regular file and is not empty. Internal to the runtime (the driver).
///
//===----------------------------------------------------------------------===//

#ifndef ZRT_SRC_DATA_FILES_H
#define ZRT_SRC_DATA_FILES_H

#include <string>
#include <vector>

namespace zrt {

/// The files of `spec`, the value of flag `flag` ("--data"), in order:
/// entries separated by ',' (a path cannot contain a comma), each either a
/// path or a glob(3) pattern (an entry with '*', '?' or '[') whose matches
/// are sorted by byte order (fineweb_train_000001.bin before ..._000002).
/// Returns "" and fills *files, or the one message of the first problem:
///   "--data: empty entry in 'a.bin,,b.bin'"
///   "--data: no file matches 'data/fineweb_train_*.bin'"
///   "cannot open data file 'x.bin': No such file or directory"
///   "data file 'd' is a directory"
///   "data file 'e.bin' is empty".
std::string expandDataFiles(const std::string &flag, const std::string &spec,
                            std::vector<std::string> *files);

} // namespace zrt

#endif // ZRT_SRC_DATA_FILES_H
