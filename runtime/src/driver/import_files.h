//===- import_files.h - which safetensors files an --import path names ----===//
///
/// \file
/// `--import PATH` takes one safetensors file, a Hugging Face sharded
/// checkpoint's index (`model.safetensors.index.json`: {"weight_map":
/// {tensor: shard file}}), or a Hugging Face model directory (its index
/// when there is one, else its `model.safetensors`).
///
//===----------------------------------------------------------------------===//

#ifndef ZRT_SRC_IMPORT_FILES_H
#define ZRT_SRC_IMPORT_FILES_H

#include <map>
#include <string>
#include <vector>

namespace zrt {

/// The safetensors files of an --import path.
struct ImportFiles {
  /// The files to read, in order (shard names sorted as in the index).
  std::vector<std::string> files;
  /// With an index: tensor name -> its entry of `files`; empty otherwise.
  std::map<std::string, size_t> weightMap;
  /// The index file, or empty.
  std::string index;
};

/// Resolves `path`; "" on success, else the one-line user error (a
/// directory without either file, an unreadable or malformed index, a
/// shard name that is absolute or leaves the index's directory).
std::string resolveImportFiles(const std::string &path, ImportFiles *out);

} // namespace zrt

#endif // ZRT_SRC_IMPORT_FILES_H
