//===- safetensors.cpp - The safetensors header parser --------------------===//
//
// See safetensors.h. The format (https://github.com/huggingface/safetensors):
// an 8-byte little-endian header length n, n bytes of JSON
//   {"__metadata__": {"k": "v", ..}, "name": {"dtype": "F32", "shape": [..],
//    "data_offsets": [begin, end]}, ..}
// then the raw little-endian data; offsets are relative to its start.
//
//===----------------------------------------------------------------------===//

#include "driver/safetensors.h"
#include "driver/strformat.h"

#include "driver/state_io.h"
#include "zrt/zrt.h"

#include <nlohmann/json.hpp>

#include <cstdarg>
#include <cstdio>
#include <set>

namespace zrt {
namespace {


/// A JSON integer literal in [0, 2^62]; false for anything else.
bool jsonIndex(const nlohmann::ordered_json &v, int64_t *out) {
  if (!v.is_number_unsigned())
    return false;
  const uint64_t x = v.get<uint64_t>();
  if (x > (uint64_t(1) << 62))
    return false;
  *out = static_cast<int64_t>(x);
  return true;
}


} // namespace

std::string parseSafetensorsHeader(const std::string &header,
                                   int64_t dataBytes, const std::string &what,
                                   std::map<std::string, SafetensorsEntry> *out,
                                   bool integers) {
  // Parsed in file order; a duplicate top-level key would silently replace
  // the first, so the parser callback notes it.
  using ojson = nlohmann::ordered_json;
  std::string duplicate;
  std::set<std::string> seen;
  auto noteKeys = [&](int depth, ojson::parse_event_t ev, ojson &parsed) {
    if (depth == 1 && ev == ojson::parse_event_t::key && duplicate.empty()) {
      const std::string &k = parsed.get_ref<const std::string &>();
      if (k != "__metadata__" && !seen.insert(k).second)
        duplicate = k;
    }
    return true;
  };
  ojson root;
  try {
    root = ojson::parse(header, noteKeys);
  } catch (const ojson::parse_error &e) {
    return format("%s is not a safetensors file (header: invalid JSON at "
                  "byte %zu)",
                  what.c_str(), e.byte);
  } catch (const ojson::exception &e) {
    // Valid syntax the parser cannot hold, e.g. a number beyond double's
    // range (out_of_range.406): found by fuzz_safetensors.
    return format("%s is not a safetensors file (header: %s)", what.c_str(),
                  e.what());
  }
  if (!root.is_object())
    return format("%s is not a safetensors file (header: not a JSON object)",
                  what.c_str());
  if (!duplicate.empty())
    return format("tensor '%s' in %s appears twice", duplicate.c_str(),
                  what.c_str());
  out->clear();
  for (const auto &[name, v] : root.items()) {
    if (name == "__metadata__")
      continue;
    const std::string t = format("tensor '%s' in %s", name.c_str(),
                                 what.c_str());
    const ojson *dtype = nullptr, *shape = nullptr, *offsets = nullptr;
    if (v.is_object()) {
      if (auto it = v.find("dtype"); it != v.end())
        dtype = &*it;
      if (auto it = v.find("shape"); it != v.end())
        shape = &*it;
      if (auto it = v.find("data_offsets"); it != v.end())
        offsets = &*it;
    }
    if (!dtype || !dtype->is_string() || !shape || !shape->is_array() ||
        !offsets || !offsets->is_array() || offsets->size() != 2)
      return format("%s lacks dtype, shape or data_offsets", t.c_str());
    const std::string &dtypeName = dtype->get_ref<const std::string &>();
    int dt;
    if (dtypeName == "F32")
      dt = ZRT_F32;
    else if (dtypeName == "BF16")
      dt = ZRT_BF16;
    else if (dtypeName == "F16")
      dt = ZRT_F16;
    else if (integers && dtypeName == "I32")
      dt = ZRT_I32;
    else if (integers && dtypeName == "I64")
      dt = ZRT_I64;
    else if (integers)
      return format("%s has dtype %s (only F32, BF16, F16, I32 and I64 are "
                    "supported)",
                    t.c_str(), dtypeName.c_str());
    else
      return format("%s has dtype %s (only F32, BF16 and F16 are supported)",
                    t.c_str(), dtypeName.c_str());
    std::vector<int64_t> dims;
    int64_t numel = 1;
    for (const ojson &d : *shape) {
      int64_t x;
      if (!jsonIndex(d, &x) || (x > 0 && numel > (int64_t(1) << 60) / x))
        return format("%s has a malformed shape", t.c_str());
      dims.push_back(x);
      numel *= x;
    }
    int64_t begin, end;
    if (!jsonIndex((*offsets)[0], &begin) || !jsonIndex((*offsets)[1], &end) ||
        end < begin || end > dataBytes ||
        end - begin != numel * static_cast<int64_t>(zrt::elementBytes(dt)))
      return format("%s has data_offsets that do not match its shape %s and "
                    "dtype %s within the %lld data bytes",
                    t.c_str(), shapeText(dims).c_str(), dtypeName.c_str(),
                    (long long)dataBytes);
    (*out)[name] = SafetensorsEntry{dt, dims, begin, end};
  }
  return "";
}

} // namespace zrt
