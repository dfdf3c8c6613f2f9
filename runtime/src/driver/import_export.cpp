//===- import_export.cpp - --import and --export of the parameters --------===//
//
// Parameters as safetensors (--export / --import)
//
// Format (https://github.com/huggingface/safetensors): 8-byte little-endian
// header length n, n bytes of JSON
//   {"__metadata__": {"k": "v", ..}, "name": {"dtype": "F32", "shape": [..],
//    "data_offsets": [begin, end]}, ..}
// (padded with spaces to a multiple of 8), then the raw little-endian data;
// offsets are relative to the end of the header.
//===----------------------------------------------------------------------===//

//
// ParamTable::build consolidates the model description; --import reads the
// parameters (and master weights) after init on every rank, --export writes
// the f32 parameters on rank 0 after training (driver.h).
//
//===----------------------------------------------------------------------===//

#include "driver/driver.h"

#include "comm/host_comm.h"
#include "common/internal.h"
#include "driver/fileio.h"
#include "driver/import_files.h"
#include "driver/json_text.h"
#include "driver/param_cuts.h"
#include "driver/safetensors.h"
#include "driver/state_io.h"
#include "driver/strformat.h"
#include "zrt/zrt.h"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace zrt::train {

using zrt::format;

using zrt::jsonString;
using zrt::preadAll;
using zrt::pwriteAll;

std::string ParamTable::build(const zrt_model_desc *m, int dataWorld) {
  entries.clear();
  groups.assign(static_cast<size_t>(std::max(0, m->num_groups)), Shards());
  if (m->num_groups > 0 && !m->groups)
    return "the model description has groups but no group table";
  // Sharded param / master states per group.
  for (int i = 0; i < m->num_states; ++i) {
    const zrt_state_desc &s = m->states[i];
    if (std::string err = zrt::checkStateDesc(s, i); !err.empty())
      return err;
    if (!s.sharded)
      continue;
    if (s.group < 0 || s.group >= m->num_groups)
      return format("sharded state '%s' refers to group %d of %d", s.name,
                    s.group, m->num_groups);
    const zrt_group_desc &g = m->groups[s.group];
    if (s.numel != g.shard || g.shard * dataWorld != g.padded)
      return format("sharded state '%s' holds %lld elements, but group '%s' "
                    "has shards of %lld (padded %lld, %d data ranks)",
                    s.name, (long long)s.numel, g.name ? g.name : "?",
                    (long long)g.shard, (long long)g.padded, dataWorld);
    int *slot = s.kind == ZRT_STATE_PARAM    ? &groups[s.group].param
                : s.kind == ZRT_STATE_MASTER ? &groups[s.group].master
                                             : nullptr;
    if (slot && *slot >= 0)
      return format("group %d has two sharded %s states ('%s', '%s')",
                    s.group, kStateKindNames[s.kind], m->states[*slot].name,
                    s.name);
    if (slot)
      *slot = i;
  }
  // The parameter list: the model's own, else derived from the states.
  std::map<std::string, size_t> index;
  auto add = [&](const std::string &name, std::vector<int64_t> shape,
                 int64_t numel) -> std::string {
    if (index.count(name))
      return format("parameter '%s' is declared twice", name.c_str());
    index[name] = entries.size();
    ParamEntry e;
    e.name = name;
    e.shape = std::move(shape);
    e.numel = numel;
    e.wholeShape = e.shape; // and one run: not cut
    e.cut.inner = numel;
    entries.push_back(std::move(e));
    return "";
  };
  shapesKnown = m->num_param_infos > 0 && m->param_infos;
  if (std::string err = zrt::checkCutTable(m); !err.empty())
    return err;
  if (shapesKnown) {
    for (int i = 0; i < m->num_param_infos; ++i) {
      const zrt_param_info &p = m->param_infos[i];
      if (!p.name || p.rank < 0 || p.rank > 16 || (p.rank > 0 && !p.shape))
        return format("parameter %d of the model description is malformed", i);
      std::vector<int64_t> shape(p.shape, p.shape + p.rank);
      int64_t numel = 1;
      for (int64_t d : shape) {
        if (d < 0 || (d > 0 && numel > INT64_MAX / d))
          return format("parameter '%s' has a bad shape", p.name);
        numel *= d;
      }
      if (std::string err = add(p.name, shape, numel); !err.empty())
        return err;
      // Its tensor cut: the whole shape has the cut dimension x parts.
      ParamEntry &e = entries.back();
      const zrt_param_cut *c = nullptr;
      if (std::string err = zrt::paramCutOf(m, i, &c); !err.empty())
        return err;
      if (c) {
        e.wholeShape[c->dim] *= c->parts;
        e.isCut = true;
      }
      e.cut = zrt::TensorCut::of(e.wholeShape.data(), p.rank,
                                 e.isCut ? c->dim : -1,
                                 e.isCut ? c->blocks : 1,
                                 e.isCut ? c->parts : 1);
    }
  } else {
    for (int i = 0; i < m->num_states; ++i) {
      const zrt_state_desc &s = m->states[i];
      if (s.kind == ZRT_STATE_PARAM && !s.sharded)
        if (std::string err = add(s.name, {s.numel}, s.numel); !err.empty())
          return err;
    }
    for (int g = 0; g < m->num_groups; ++g) {
      if (groups[g].param < 0)
        continue;
      const zrt_group_desc &d = m->groups[g];
      for (int j = 0; j < d.num_members; ++j)
        if (!index.count(d.members[j]))
          add(d.members[j], {d.numels[j]}, d.numels[j]);
    }
  }
  // Where each parameter lives.
  for (int i = 0; i < m->num_states; ++i) {
    const zrt_state_desc &s = m->states[i];
    if (s.sharded)
      continue;
    if (s.kind == ZRT_STATE_PARAM) {
      auto it = index.find(s.name);
      if (it == index.end())
        return format("state '%s' holds a parameter the model does not "
                      "declare",
                      s.name);
      ParamEntry &e = entries[it->second];
      if (s.numel != e.numel)
        return format("state '%s' holds %lld elements, but the parameter has "
                      "%lld",
                      s.name, (long long)s.numel, (long long)e.numel);
      e.whole = i;
    } else if (s.kind == ZRT_STATE_MASTER) {
      std::string n = s.name;
      const std::string suffix = ".master";
      if (n.size() <= suffix.size() ||
          n.compare(n.size() - suffix.size(), suffix.size(), suffix) != 0)
        continue;
      auto it = index.find(n.substr(0, n.size() - suffix.size()));
      if (it == index.end())
        continue;
      ParamEntry &e = entries[it->second];
      if (s.numel != e.numel)
        return format("master state '%s' holds %lld elements, but the "
                      "parameter has %lld",
                      s.name, (long long)s.numel, (long long)e.numel);
      e.wholeMaster = i;
    }
  }
  for (int g = 0; g < m->num_groups; ++g) {
    if (groups[g].param < 0 && groups[g].master < 0)
      continue;
    const zrt_group_desc &d = m->groups[g];
    if (d.num_members < 0 || (d.num_members > 0 && (!d.members || !d.offsets ||
                                                    !d.numels)))
      return format("group %d of the model description is malformed", g);
    for (int j = 0; j < d.num_members; ++j) {
      auto it = index.find(d.members[j] ? d.members[j] : "");
      if (it == index.end())
        return format("group '%s' has member '%s', which the model does not "
                      "declare",
                      d.name ? d.name : "?",
                      d.members[j] ? d.members[j] : "(null)");
      ParamEntry &e = entries[it->second];
      if (d.numels[j] != e.numel || d.offsets[j] < 0 ||
          d.offsets[j] + e.numel > d.padded)
        return format("group '%s' places '%s' (%lld elements) at [%lld, "
                      "%lld) of %lld",
                      d.name ? d.name : "?", e.name.c_str(),
                      (long long)e.numel, (long long)d.offsets[j],
                      (long long)(d.offsets[j] + d.numels[j]),
                      (long long)d.padded);
      if (e.group >= 0)
        return format("parameter '%s' is in two groups", e.name.c_str());
      e.group = g;
      e.offset = d.offsets[j];
    }
  }
  for (const ParamEntry &e : entries)
    if (e.whole < 0 && (e.group < 0 || groups[e.group].param < 0))
      return format("parameter '%s' has no storage in the state table",
                    e.name.c_str());
  std::sort(entries.begin(), entries.end(),
            [](const ParamEntry &a, const ParamEntry &b) {
              return a.name < b.name;
            });
  return "";
}

/// One safetensors file of --import (its tensors into imported_).
std::string Driver::openImportFile(const std::string &path, int file) {
  const std::string what = format("--import file '%s'", path.c_str());
  importFds_.push_back(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  const int fd = importFds_.back();
  if (fd < 0)
    return format("cannot open %s: %s", what.c_str(), std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    return format("%s is not a regular file", what.c_str());
  const int64_t size = st.st_size;
  unsigned char len[8];
  if (size < 8 || !preadAll(fd, len, 8, 0))
    return format("%s is not a safetensors file (shorter than the 8-byte "
                  "header length)",
                  what.c_str());
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i)
    n = (n << 8) | len[i];
  // The reference implementation refuses headers over 100 MB.
  if (n < 2 || n > 100000000 || static_cast<int64_t>(n) > size - 8)
    return format("%s is not a safetensors file (header length %llu, file "
                  "size %lld bytes)",
                  what.c_str(), (unsigned long long)n, (long long)size);
  std::string header(static_cast<size_t>(n), '\0');
  if (!preadAll(fd, &header[0], header.size(), 8))
    return format("cannot read %s: %s", what.c_str(), std::strerror(errno));
  const int64_t dataStart = 8 + static_cast<int64_t>(n);
  std::map<std::string, zrt::SafetensorsEntry> entries;
  if (std::string err = zrt::parseSafetensorsHeader(header, size - dataStart,
                                                    what, &entries);
      !err.empty())
    return err;
  for (const auto &[name, e] : entries) {
    if (imported_.count(name))
      return format("tensor '%s' is in two --import shards (%s and %s)",
                    name.c_str(), path.c_str(),
                    importShapes_.at(name).second.c_str());
    importShapes_[name] = {e.shape, path};
    imported_[name] = FileTensor{e.dtype, dataStart + e.begin, file};
  }
  return "";
}

/// --import PATH: a safetensors file, a sharded checkpoint's index, or a
/// Hugging Face model directory (import_files.h); every parameter must be
/// in it with the model's shape, and nothing else.
std::string Driver::openImport() {
  const std::string &path = o_.importPath;
  zrt::ImportFiles files;
  if (std::string err = zrt::resolveImportFiles(path, &files); !err.empty())
    return err;
  imported_.clear();
  importShapes_.clear();
  for (size_t f = 0; f < files.files.size(); ++f)
    if (std::string err = openImportFile(files.files[f], static_cast<int>(f));
        !err.empty())
      return err;
  for (const auto &[name, f] : files.weightMap) {
    auto it = imported_.find(name);
    if (it == imported_.end() || it->second.file != static_cast<int>(f))
      return format("tensor '%s' of --import index '%s' is not in its shard "
                    "'%s'",
                    name.c_str(), files.index.c_str(), files.files[f].c_str());
  }
  if (!files.index.empty() && files.weightMap.size() != imported_.size())
    for (const auto &[name, t] : imported_)
      if (!files.weightMap.count(name))
        return format("tensor '%s' of shard '%s' is not in --import index "
                      "'%s'",
                      name.c_str(), files.files[t.file].c_str(),
                      files.index.c_str());
  const std::string what = format("--import %s '%s'",
                                  files.index.empty() && files.files[0] == path
                                      ? "file"
                                      : "checkpoint",
                                  path.c_str());
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const auto &[name, entry] : importShapes_)
    shapes[name] = entry.first;
  // Every parameter with its shape, nothing else.
  std::vector<std::string> problems;
  for (const ParamEntry &e : params_.entries) {
    auto it = shapes.find(e.name);
    if (it == shapes.end()) {
      problems.push_back(format("parameter '%s' is missing from %s",
                                e.name.c_str(), what.c_str()));
      continue;
    }
    int64_t numel = 1;
    for (int64_t d : it->second)
      numel *= d;
    if (params_.shapesKnown ? it->second != e.wholeShape : numel != e.numel)
      problems.push_back(format("parameter '%s' has shape %s in %s, but the "
                                "model's is %s",
                                e.name.c_str(), shapeText(it->second).c_str(),
                                what.c_str(),
                                shapeText(e.wholeShape).c_str()));
  }
  for (const auto &[name, dims] : shapes) {
    bool known = false;
    for (const ParamEntry &e : params_.entries)
      known = known || e.name == name;
    if (!known)
      problems.push_back(format("tensor '%s' in %s is not a parameter of the "
                                "model",
                                name.c_str(), what.c_str()));
  }
  if (problems.empty())
    return "";
  if (problems.size() > 1)
    problems[0] += format(" (and %zu more problem%s)", problems.size() - 1,
                          problems.size() == 2 ? "" : "s");
  return problems[0];
}

std::string Driver::loadImport() {
  const std::string what = format("--import file '%s'", o_.importPath.c_str());
  std::vector<float> buf;
  std::vector<char> raw;
  // Reads elements [lo, hi) of this rank's part of parameter `e` (its
  // tensor rank's cut of the whole tensor `t`, or `t` itself) as f32 into
  // buf, one read per contiguous run of the whole tensor.
  const int64_t tensorRank = rank_ % tensor_;
  auto read = [&](const ParamEntry &e, const FileTensor &t, int64_t lo,
                  int64_t hi) {
    const size_t eb = zrt::elementBytes(t.dtype);
    buf.resize(static_cast<size_t>(hi - lo));
    bool ok = true;
    e.cut.forEachRun(e.isCut ? tensorRank : 0, lo, hi,
                     [&](int64_t l, int64_t w, int64_t n) {
                       raw.resize(static_cast<size_t>(n) * eb);
                       ok = ok && preadAll(importFds_[t.file], raw.data(),
                                           raw.size(),
                                           static_cast<off_t>(
                                               t.begin +
                                               w * static_cast<int64_t>(eb)));
                       if (ok)
                         zrt::hostToF32(raw.data(), t.dtype,
                                        buf.data() + (l - lo), n);
                     });
    return ok;
  };
  // NaN or Inf in the file: refused, with the count, before any training.
  const char *sliceNote = "";
  auto nonFinite = [&](const std::string &name) {
    int64_t bad = 0;
    for (float v : buf)
      bad += !std::isfinite(v);
    return bad == 0 ? std::string()
                    : format("tensor '%s' in %s holds %lld non-finite values "
                             "(NaN or Inf)%s; refusing to train from it",
                             name.c_str(), what.c_str(), (long long)bad,
                             sliceNote);
  };
  auto element = [](const zrt_state_desc &s, int64_t i) {
    return static_cast<char *>(s.data) + i * zrt::elementBytes(s.dtype);
  };
  // Converts buf's n values to the state's dtype on the host and copies
  // them to `dst` (arena memory) across the host/device boundary.
  std::vector<char> staged;
  auto store = [&](const zrt_state_desc &s, void *dst, int64_t n) {
    staged.resize(static_cast<size_t>(n) * zrt::elementBytes(s.dtype));
    zrt::hostFromF32(buf.data(), staged.data(), s.dtype, n);
    return zrt::stageToDevice(dst, staged.data(),
                              static_cast<int64_t>(staged.size()));
  };
  for (const ParamEntry &e : params_.entries) {
    const FileTensor &t = imported_.at(e.name);
    // Whole copies: the parameter and its master weights.
    if (e.whole >= 0 || e.wholeMaster >= 0) {
      if (!read(e, t, 0, e.numel))
        return format("cannot read '%s' from %s: %s", e.name.c_str(),
                      what.c_str(), std::strerror(errno));
      sliceNote = "";
      if (std::string bad = nonFinite(e.name); !bad.empty())
        return bad;
      for (int i : {e.whole, e.wholeMaster})
        if (i >= 0)
          if (std::string err = store(m_->states[i], m_->states[i].data,
                                      e.numel);
              !err.empty())
            return err;
    }
    // This rank's slice of the group's flat buffer.
    if (e.group >= 0) {
      const zrt_group_desc &g = m_->groups[e.group];
      const int64_t own = static_cast<int64_t>(dataRank_) * g.shard;
      const int64_t lo = std::max(own, e.offset),
                    hi = std::min(own + g.shard, e.offset + e.numel);
      if (lo < hi) {
        if (!read(e, t, lo - e.offset, hi - e.offset))
          return format("cannot read '%s' from %s: %s", e.name.c_str(),
                        what.c_str(), std::strerror(errno));
        sliceNote = " in the slice this rank loads";
        if (std::string bad = nonFinite(e.name); !bad.empty())
          return bad;
        for (int i : {params_.groups[e.group].param,
                      params_.groups[e.group].master})
          if (i >= 0)
            if (std::string err = store(m_->states[i],
                                        element(m_->states[i], lo - own),
                                        hi - lo);
                !err.empty())
              return err;
      }
    }
  }
  for (int fd : importFds_)
    ::close(fd);
  importFds_.clear();
  return "";
}

std::string Driver::openExport() {
  if (rank_ != 0)
    return "";
  exportTmp_ = o_.exportPath + ".tmp.XXXXXX";
  exportFd_ = ::mkstemp(&exportTmp_[0]);
  if (exportFd_ < 0)
    return format("cannot write --export file '%s': %s",
                  o_.exportPath.c_str(), std::strerror(errno));
  ::fchmod(exportFd_, 0644);
  return "";
}

std::string Driver::writeExport() {
  // Header: names sorted, f32, back to back.
  std::string header = "{\"__metadata__\":{\"format\":\"pt\",\"producer\":"
                       "\"zero\",\"model\":" +
                       jsonString(m_->name ? m_->name : "") +
                       format(",\"step\":\"%lld\"}", (long long)o_.steps);
  std::vector<int64_t> begin;
  int64_t offset = 0;
  for (const ParamEntry &e : params_.entries) {
    begin.push_back(offset);
    // Whole tensors, whatever the mesh.
    header += "," + jsonString(e.name) + ":{\"dtype\":\"F32\",\"shape\":[";
    for (size_t i = 0; i < e.wholeShape.size(); ++i)
      header += format(i ? ",%lld" : "%lld", (long long)e.wholeShape[i]);
    const int64_t wholeBytes = 4 * e.cut.wholeNumel();
    header += format("],\"data_offsets\":[%lld,%lld]}", (long long)offset,
                     (long long)(offset + wholeBytes));
    offset += wholeBytes;
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');
  const int64_t dataStart = 8 + static_cast<int64_t>(header.size());

  std::string err; // rank 0: the first write error
  auto put = [&](const void *p, size_t n, int64_t at) {
    if (err.empty() && !pwriteAll(exportFd_, p, n, static_cast<off_t>(at)))
      err = format("cannot write --export file '%s': %s",
                   o_.exportPath.c_str(), std::strerror(errno));
  };
  std::vector<float> f32;
  std::vector<char> staged; // a state's bytes copied from arena memory
  if (rank_ == 0) {
    unsigned char len[8];
    for (int i = 0; i < 8; ++i)
      len[i] = static_cast<unsigned char>(header.size() >> (8 * i));
    put(len, 8, 0);
    put(header.data(), header.size(), 8);
    // Whole tensors on rank 0 need no communication.
    for (size_t k = 0; k < params_.entries.size(); ++k) {
      const ParamEntry &e = params_.entries[k];
      bool sharded;
      const int src = params_.exportSource(e, &sharded);
      if (sharded || e.isCut)
        continue;
      const zrt_state_desc &s = m_->states[src];
      staged.resize(static_cast<size_t>(e.numel) * zrt::elementBytes(s.dtype));
      if (std::string e2 = zrt::stageToHost(
              staged.data(), s.data, static_cast<int64_t>(staged.size()));
          !e2.empty())
        internalFailure(e2);
      f32.resize(static_cast<size_t>(e.numel));
      zrt::hostToF32(staged.data(), s.dtype, f32.data(), e.numel);
      put(f32.data(), f32.size() * 4, dataStart + begin[k]);
    }
  }
  // Sharded sources and tensor ranks' cuts: gather each such state from
  // every rank to rank 0 (host coordination, outside the zrt byte
  // counters), in state order on every rank. Rank d x M + t holds data
  // shard d of tensor rank t's state.
  std::vector<char> full;
  std::vector<std::vector<char>> flats; // per tensor rank: its whole group
  for (int i = 0; i < m_->num_states; ++i) {
    bool used = false;
    for (const ParamEntry &e : params_.entries) {
      bool sharded;
      used = used ||
             (params_.exportSource(e, &sharded) == i && (sharded || e.isCut));
    }
    if (!used)
      continue;
    const zrt_state_desc &s = m_->states[i];
    const int64_t bytes = s.numel * static_cast<int64_t>(zrt::elementBytes(s.dtype));
    full.resize(rank_ == 0 ? static_cast<size_t>(bytes * world_) : 0);
    staged.resize(static_cast<size_t>(bytes));
    if (std::string e2 = zrt::stageToHost(staged.data(), s.data, bytes);
        !e2.empty())
      internalFailure(e2);
    if (!zrt::host::gatherBytes(staged.data(), bytes, full.data()))
      internalFailure(format("the gather of '%s' for --export failed", s.name));
    if (rank_ != 0)
      continue;
    const int64_t eb = static_cast<int64_t>(zrt::elementBytes(s.dtype));
    // Tensor rank t's state: its data shards back to back (a group's whole
    // flat buffer), or rank t's copy of a whole state.
    auto stateOf = [&](int t) -> const char * {
      if (!s.sharded)
        return full.data() + t * bytes;
      if (tensor_ == 1)
        return full.data();
      flats.resize(static_cast<size_t>(tensor_));
      std::vector<char> &flat = flats[t];
      if (flat.empty()) {
        flat.resize(static_cast<size_t>(bytes * dataWorld_));
        for (int d = 0; d < dataWorld_; ++d)
          std::memcpy(flat.data() + d * bytes,
                      full.data() + (int64_t(d) * tensor_ + t) * bytes,
                      static_cast<size_t>(bytes));
      }
      return flat.data();
    };
    std::vector<float> local;
    for (size_t k = 0; k < params_.entries.size(); ++k) {
      const ParamEntry &e = params_.entries[k];
      bool sharded;
      if (params_.exportSource(e, &sharded) != i)
        continue;
      // The whole tensor from every tensor rank's cut (one when not cut).
      f32.resize(static_cast<size_t>(e.cut.wholeNumel()));
      local.resize(static_cast<size_t>(e.numel));
      for (int t = 0; t < (e.isCut ? tensor_ : 1); ++t) {
        zrt::hostToF32(stateOf(t) + (s.sharded ? e.offset * eb : 0), s.dtype,
                       local.data(), e.numel);
        e.cut.forEachRun(t, 0, e.numel, [&](int64_t l, int64_t w, int64_t n) {
          std::memcpy(f32.data() + w, local.data() + l,
                      static_cast<size_t>(n) * sizeof(float));
        });
      }
      put(f32.data(), f32.size() * 4, dataStart + begin[k]);
    }
    flats.clear();
  }
  if (rank_ == 0) {
    // Atomic replacement: data on disk, then the rename, then the directory.
    if (err.empty() && ::fsync(exportFd_) != 0)
      err = format("cannot write --export file '%s': %s",
                   o_.exportPath.c_str(), std::strerror(errno));
    if (::close(exportFd_) != 0 && err.empty())
      err = format("cannot write --export file '%s': %s",
                   o_.exportPath.c_str(), std::strerror(errno));
    exportFd_ = -1;
    if (err.empty() &&
        std::rename(exportTmp_.c_str(), o_.exportPath.c_str()) != 0)
      err = format("cannot rename '%s' to --export file '%s': %s",
                   exportTmp_.c_str(), o_.exportPath.c_str(),
                   std::strerror(errno));
    if (!err.empty()) {
      ::unlink(exportTmp_.c_str());
    } else {
      std::string dir = o_.exportPath;
      size_t slash = dir.rfind('/');
      dir = slash == std::string::npos ? "." : dir.substr(0, slash + 1);
      zrt::fsyncDir(dir);
      say(format("exported %zu parameters (%s of f32) to %s",
                 params_.entries.size(), megabytes(offset).c_str(),
                 o_.exportPath.c_str()));
    }
  }
  return err;
}

} // namespace zrt::train
