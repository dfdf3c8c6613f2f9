//===- import_files.cpp - which safetensors files an --import path names --===//
///
/// \file
/// See import_files.h. The index format is what transformers'
/// `save_pretrained` writes for sharded checkpoints:
///   {"metadata": {"total_size": N}, "weight_map": {"name": "model-00001-of-00002.safetensors", ...}}
///
//===----------------------------------------------------------------------===//

#include "driver/import_files.h"

#include "driver/fileio.h"

#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <fstream>
#include <sstream>

namespace {

bool exists(const std::string &p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string dirName(const std::string &p) {
  size_t slash = p.find_last_of('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : p.substr(0, slash);
}

std::string readIndex(const std::string &index, zrt::ImportFiles *out) {
  const std::string what = "--import index '" + index + "'";
  std::ifstream in(index);
  if (!in)
    return "cannot open " + what;
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json root;
  try {
    root = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::parse_error &e) {
    return what + " is not JSON (at byte " + std::to_string(e.byte) + ")";
  }
  auto map = root.is_object() ? root.find("weight_map") : root.end();
  if (!root.is_object() || map == root.end() || !map->is_object() ||
      map->empty())
    return what + " has no \"weight_map\" object of tensor names to shard "
                  "files (not a Hugging Face safetensors index)";
  std::map<std::string, size_t> shardIndex;
  for (const auto &[name, shard] : map->items()) {
    if (!shard.is_string())
      return what + ": the shard of tensor '" + name + "' is not a file name";
    const std::string &file = shard.get_ref<const std::string &>();
    if (file.empty() || file[0] == '/' || file.find("..") != std::string::npos)
      return what + ": shard '" + file + "' of tensor '" + name +
             "' is not a file next to the index";
    shardIndex.emplace(file, 0);
  }
  size_t i = 0;
  const std::string dir = dirName(index);
  for (auto &[file, at] : shardIndex) {
    at = i++;
    out->files.push_back(dir + "/" + file);
  }
  for (const auto &[name, shard] : map->items())
    out->weightMap[name] = shardIndex.at(shard.get<std::string>());
  out->index = index;
  return "";
}

} // namespace

std::string zrt::resolveImportFiles(const std::string &path, ImportFiles *out) {
  *out = ImportFiles();
  if (zrt::isDir(path)) {
    const std::string index = path + "/model.safetensors.index.json";
    if (exists(index))
      return readIndex(index, out);
    const std::string single = path + "/model.safetensors";
    if (!exists(single))
      return "--import directory '" + path +
             "' has neither model.safetensors nor "
             "model.safetensors.index.json";
    out->files.push_back(single);
    return "";
  }
  if (endsWith(path, ".json"))
    return readIndex(path, out);
  out->files.push_back(path);
  return "";
}
