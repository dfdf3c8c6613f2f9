//===- json_text.h - JSON text the driver writes ----------------*- C++ -*-===//
///
/// \file
/// The one JSON string escaper of the files the driver writes by hand (the
/// checkpoint manifest, the safetensors header of --export). Internal to
/// the runtime.
///
//===----------------------------------------------------------------------===//
#ifndef ZRT_SRC_DRIVER_JSON_TEXT_H
#define ZRT_SRC_DRIVER_JSON_TEXT_H

#include <nlohmann/json.hpp>

#include <string>

namespace zrt {

/// `v` as a JSON string literal: quoted and escaped by nlohmann::json, on
/// one line, non-ASCII kept as UTF-8 and invalid UTF-8 replaced by U+FFFD.
inline std::string jsonString(const std::string &v) {
  return nlohmann::json(v).dump(-1, ' ', false,
                                nlohmann::json::error_handler_t::replace);
}

} // namespace zrt

#endif // ZRT_SRC_DRIVER_JSON_TEXT_H
