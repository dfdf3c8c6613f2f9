//===- checkpoint.cpp - Sharded training checkpoints -----------------------===//
//
// --checkpoint-dir / --checkpoint-every / --resume of the training driver.
// Format, guarantees and re-partitioning rules: docs/checkpoints.md.
//
// A step directory DIR/step_<S>/ holds one file per rank (rank_<r>.bin: a
// 64-byte header, then every saved state of the rank's state table at
// 64-byte aligned offsets, the same offsets on every rank) and manifest.json,
// which rank 0 writes last. The directory is built under a temporary name
// and renamed into place once complete, and DIR/latest is replaced after
// that, so a crash mid-save leaves the previous checkpoint as it was.
//
// Loading at the same layout (world size, stage, groups, states) copies each
// rank's own file into its states byte for byte. Otherwise every state is
// rebuilt from per-parameter tensors: for each (parameter, kind) the whole
// unpadded tensor is read out of whichever states held it when saved (whole
// in rank 0's file, or slices of a shard group spread over the files), and
// the new layout's whole state or shard slice is cut from it; padding is
// zero. Every rank reads the files it needs itself (no MPI), so the step
// directory must be readable from every rank, like an --import file.
//
//===----------------------------------------------------------------------===//

#include "driver/checkpoint.h"
#include "driver/fileio.h"
#include "comm/host_comm.h"
#include "driver/state_io.h"
#include "driver/strformat.h"

#include "zrt/zrt.h"

#include <nlohmann/json.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <vector>

namespace zrt_ckpt {
namespace {

using zrt::isDir;
using zrt::isFile;
using zrt::makeDirs;
using zrt::preadAll;
using zrt::writeAll;

constexpr int kFormatVersion = 1;
constexpr const char *kFormatName = "zero-checkpoint";
constexpr char kMagic[8] = {'Z', 'R', 'T', 'C', 'K', 'P', 'T', '1'};
constexpr int64_t kHeaderBytes = 64;
constexpr int64_t kAlign = 64;
constexpr int kExitUser = 1;

using zrt::format;
using zrt::kStateKindNames;

/// FNV-1a, 64 bit, incremental.
struct Fnv64 {
  uint64_t h = 0xcbf29ce484222325ULL;
  void add(const void *p, size_t n) {
    const unsigned char *b = static_cast<const unsigned char *>(p);
    for (size_t i = 0; i < n; ++i) {
      h ^= b[i];
      h *= 0x100000001b3ULL;
    }
  }
  void addStr(const std::string &s) { add(s.c_str(), s.size() + 1); }
  void addInt(int64_t v) { add(&v, sizeof v); }
};

std::string hex64(uint64_t v) {
  return format("%016llx", (unsigned long long)v);
}



void fsyncPath(const std::string &dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

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
      if (n.size() <= 5 || n.compare(0, 5, "step_") != 0 ||
          n.find_first_not_of("0123456789", 5) != std::string::npos ||
          n.size() > 5 + 18 || !isDir(dir + "/" + n))
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

std::string dtypeName(int dtype) {
  return dtype == ZRT_BF16 ? "bf16" : dtype == ZRT_F16 ? "f16" : "f32";
}

/// NaN and Inf values among n elements of `dtype` (f32, bf16 or f16) at p:
/// an all-ones exponent.
int64_t countNonFinite(const void *p, int dtype, int64_t n) {
  const char *b = static_cast<const char *>(p);
  int64_t bad = 0;
  if (dtype == ZRT_BF16) {
    for (int64_t i = 0; i < n; ++i) {
      uint16_t v;
      std::memcpy(&v, b + 2 * i, 2);
      bad += (v & 0x7F80u) == 0x7F80u;
    }
  } else if (dtype == ZRT_F16) {
    for (int64_t i = 0; i < n; ++i) {
      uint16_t v;
      std::memcpy(&v, b + 2 * i, 2);
      bad += (v & 0x7C00u) == 0x7C00u;
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      uint32_t v;
      std::memcpy(&v, b + 4 * i, 4);
      bad += (v & 0x7F800000u) == 0x7F800000u;
    }
  }
  return bad;
}

//===----------------------------------------------------------------------===//
// JSON (the manifest): string escaping and field access over nlohmann::json.
//===----------------------------------------------------------------------===//

std::string jstr(const std::string &v) {
  return nlohmann::json(v).dump(-1, ' ', false,
                                nlohmann::json::error_handler_t::replace);
}

using JVal = nlohmann::json;

/// Throws-free field access for the manifest: records the first problem.
struct Fields {
  std::string err;
  const JVal *get(const JVal *parent, const char *k) {
    if (!parent || !parent->is_object())
      return nullptr;
    auto it = parent->find(k);
    return it == parent->end() ? nullptr : &*it;
  }
  const JVal *obj(const JVal *parent, const char *k) {
    const JVal *v = get(parent, k);
    if (!v || !v->is_structured()) {
      fail(k);
      return nullptr;
    }
    return v;
  }
  int64_t integer(const JVal *parent, const char *k) {
    const JVal *v = get(parent, k);
    if (!v || !isInt64(*v)) {
      fail(k);
      return 0;
    }
    return v->get<int64_t>();
  }
  double number(const JVal *parent, const char *k) {
    const JVal *v = get(parent, k);
    if (!v || !v->is_number()) {
      fail(k);
      return 0;
    }
    return v->get<double>();
  }
  std::string string(const JVal *parent, const char *k) {
    const JVal *v = get(parent, k);
    if (!v || !v->is_string()) {
      fail(k);
      return "";
    }
    return v->get<std::string>();
  }
  void fail(const char *k) {
    if (err.empty())
      err = format("field '%s' is missing or malformed", k);
  }
  static bool isInt64(const JVal &v) {
    return v.is_number_integer() && (!v.is_number_unsigned() ||
                                     v.get<uint64_t>() <= uint64_t(INT64_MAX));
  }
};

/// A decimal uint64 written as a JSON string ("7"): digits only, no sign,
/// no overflow.
bool parseU64(const std::string &s, uint64_t *out) {
  if (s.empty() || s.size() > 20 ||
      s.find_first_not_of("0123456789") != std::string::npos)
    return false;
  errno = 0;
  char *end = nullptr;
  unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (errno == ERANGE || *end != '\0')
    return false;
  *out = v;
  return true;
}

/// Exactly 16 lower-case hex digits (hex64's output).
bool parseHex64(const std::string &s, uint64_t *out) {
  if (s.size() != 16 ||
      s.find_first_not_of("0123456789abcdef") != std::string::npos)
    return false;
  *out = std::strtoull(s.c_str(), nullptr, 16);
  return true;
}

/// The manifest's own checksum: the last member, "manifest_fnv1a64", is the
/// FNV-1a 64 of every byte before its line.
constexpr const char *kManifestSumKey = "  \"manifest_fnv1a64\": \"";

//===----------------------------------------------------------------------===//
// Layouts
//===----------------------------------------------------------------------===//

struct ParamRec {
  std::string name;
  std::vector<int64_t> shape;
  int64_t numel = 0;
};

struct MemberRec {
  std::string name;
  int64_t offset = 0, numel = 0;
};

struct GroupRec {
  std::string name;
  int64_t padded = 0, shard = 0;
  std::vector<MemberRec> members;
};

struct StateRec {
  std::string name;
  int kind = 0, dtype = ZRT_F32;
  int64_t numel = 0;
  bool sharded = false;
  int group = -1;
  int64_t offset = 0; ///< Byte offset in every rank's file.
  int index = -1;     ///< Index in the model's state table (current layout).
};

/// Where one (parameter, kind) lives in a layout.
struct Loc {
  int state = -1;      ///< Index into Layout::states.
  bool sharded = false;
  int64_t offset = 0;  ///< Element offset in the group (sharded).
};

/// A partition of the model's states: the current program's, or a
/// checkpoint's (from its manifest).
struct Layout {
  int world = 1, stage = 0;
  std::vector<ParamRec> params; // sorted by name
  std::vector<GroupRec> groups;
  std::vector<StateRec> states; // saved states (gradients left out)
  int64_t fileBytes = 0;
  std::map<std::pair<std::string, int>, Loc> locs; // (param, kind)
  std::map<std::string, int> extra; // states tied to no parameter, by name

  const ParamRec *param(const std::string &n) const {
    auto it = std::lower_bound(
        params.begin(), params.end(), n,
        [](const ParamRec &p, const std::string &k) { return p.name < k; });
    return it != params.end() && it->name == n ? &*it : nullptr;
  }

  /// Assigns file offsets and resolves where each parameter lives.
  std::string finish() {
    std::sort(params.begin(), params.end(),
              [](const ParamRec &a, const ParamRec &b) {
                return a.name < b.name;
              });
    int64_t off = kHeaderBytes;
    locs.clear();
    extra.clear();
    for (size_t i = 0; i < states.size(); ++i) {
      StateRec &s = states[i];
      s.offset = off;
      off += (s.numel * static_cast<int64_t>(zrt::elementBytes(s.dtype)) + kAlign -
              1) /
             kAlign * kAlign;
      if (s.kind < 0 || s.kind > 4)
        return format("state '%s' has unknown kind %d", s.name.c_str(),
                      s.kind);
      if (s.sharded) {
        if (s.group < 0 || s.group >= static_cast<int>(groups.size()))
          return format("sharded state '%s' refers to group %d of %zu",
                        s.name.c_str(), s.group, groups.size());
        const GroupRec &g = groups[s.group];
        if (g.shard != s.numel || g.shard * world != g.padded)
          return format("sharded state '%s' holds %lld elements, but group "
                        "'%s' has shards of %lld (padded %lld, world size %d)",
                        s.name.c_str(), (long long)s.numel, g.name.c_str(),
                        (long long)g.shard, (long long)g.padded, world);
        for (const MemberRec &m : g.members) {
          const ParamRec *p = param(m.name);
          if (!p || p->numel != m.numel || m.offset < 0 ||
              m.offset + m.numel > g.padded)
            return format("group '%s' has a member '%s' that does not match "
                          "the parameters",
                          g.name.c_str(), m.name.c_str());
          if (!locs.emplace(std::make_pair(m.name, s.kind),
                            Loc{static_cast<int>(i), true, m.offset})
                   .second)
            return format("the %s of '%s' is stored twice",
                          kStateKindNames[s.kind], m.name.c_str());
        }
        continue;
      }
      // Whole: "<param>" or "<param>.<suffix>" (".master", ".exp_avg", ...).
      std::string p = s.name;
      const ParamRec *rec = param(p);
      if (!rec || s.kind != ZRT_STATE_PARAM) {
        size_t dot = p.rfind('.');
        rec = dot == std::string::npos ? nullptr : param(p.substr(0, dot));
        if (rec)
          p = rec->name;
      }
      if (rec && rec->numel == s.numel &&
          locs.emplace(std::make_pair(p, s.kind), Loc{static_cast<int>(i)})
              .second)
        continue;
      extra[s.name] = static_cast<int>(i);
    }
    fileBytes = off;
    return "";
  }

  /// FNV-1a of the parameters (names and shapes, in name order): the
  /// model's identity, independent of stage, world size and precision.
  uint64_t fingerprint() const {
    Fnv64 f;
    for (const ParamRec &p : params) {
      f.addStr(p.name);
      f.addInt(static_cast<int64_t>(p.shape.size()));
      for (int64_t d : p.shape)
        f.addInt(d);
    }
    return f.h;
  }

  bool sameAs(const Layout &o) const {
    if (world != o.world || states.size() != o.states.size() ||
        groups.size() != o.groups.size())
      return false;
    for (size_t i = 0; i < states.size(); ++i) {
      const StateRec &a = states[i], &b = o.states[i];
      if (a.name != b.name || a.kind != b.kind || a.dtype != b.dtype ||
          a.numel != b.numel || a.sharded != b.sharded || a.group != b.group)
        return false;
    }
    for (size_t g = 0; g < groups.size(); ++g) {
      const GroupRec &a = groups[g], &b = o.groups[g];
      if (a.padded != b.padded || a.shard != b.shard ||
          a.members.size() != b.members.size())
        return false;
      for (size_t j = 0; j < a.members.size(); ++j)
        if (a.members[j].name != b.members[j].name ||
            a.members[j].offset != b.members[j].offset ||
            a.members[j].numel != b.members[j].numel)
          return false;
    }
    return true;
  }
};

/// The current program's layout (model.h description).
std::string layoutOf(const zrt_model_desc *m, int world, Layout *out) {
  Layout &L = *out;
  L.world = world;
  L.stage = m->stage;
  if (m->num_groups > 0 && !m->groups)
    return "the model description has groups but no group table";
  for (int g = 0; g < m->num_groups; ++g) {
    const zrt_group_desc &d = m->groups[g];
    GroupRec r;
    r.name = d.name ? d.name : format("group%d", g);
    r.padded = d.padded;
    r.shard = d.shard;
    if (d.num_members < 0 ||
        (d.num_members > 0 && (!d.members || !d.offsets || !d.numels)))
      return format("group %d of the model description is malformed", g);
    for (int j = 0; j < d.num_members; ++j)
      r.members.push_back(
          {d.members[j] ? d.members[j] : "", d.offsets[j], d.numels[j]});
    L.groups.push_back(std::move(r));
  }
  std::map<std::string, bool> seen;
  if (m->num_param_infos > 0 && m->param_infos) {
    for (int i = 0; i < m->num_param_infos; ++i) {
      const zrt_param_info &p = m->param_infos[i];
      if (!p.name || p.rank < 0 || p.rank > 16 || (p.rank > 0 && !p.shape))
        return format("parameter %d of the model description is malformed", i);
      ParamRec r;
      r.name = p.name;
      r.shape.assign(p.shape, p.shape + p.rank);
      r.numel = 1;
      for (int64_t d : r.shape)
        r.numel *= d;
      if (seen[r.name])
        return format("parameter '%s' is declared twice", p.name);
      seen[r.name] = true;
      L.params.push_back(std::move(r));
    }
  } else { // as the driver's --export: whole params, members of param groups
    for (int i = 0; i < m->num_states; ++i) {
      const zrt_state_desc &s = m->states[i];
      if (s.name && s.kind == ZRT_STATE_PARAM && !s.sharded && !seen[s.name]) {
        seen[s.name] = true;
        L.params.push_back({s.name, {s.numel}, s.numel});
      }
    }
    for (int i = 0; i < m->num_states; ++i) {
      const zrt_state_desc &s = m->states[i];
      if (s.kind != ZRT_STATE_PARAM || !s.sharded || s.group < 0 ||
          s.group >= m->num_groups)
        continue;
      for (const MemberRec &mr : L.groups[s.group].members)
        if (!seen[mr.name]) {
          seen[mr.name] = true;
          L.params.push_back({mr.name, {mr.numel}, mr.numel});
        }
    }
  }
  for (int i = 0; i < m->num_states; ++i) {
    const zrt_state_desc &s = m->states[i];
    if (std::string err = zrt::checkStateDesc(s, i); !err.empty())
      return err;
    if (s.kind == ZRT_STATE_GRAD) // zero between optimizer steps
      continue;
    StateRec r;
    r.name = s.name;
    r.kind = s.kind;
    r.dtype = s.dtype;
    r.numel = s.numel;
    r.sharded = s.sharded != 0;
    r.group = s.sharded ? s.group : -1;
    r.index = i;
    L.states.push_back(std::move(r));
  }
  return L.finish();
}

/// Parses a manifest into its layout and run information.
std::string parseManifest(const JVal &root, Layout *L, Resumed *R,
                          std::vector<std::pair<std::string, uint64_t>> *files,
                          std::string *fingerprint, int64_t *fileBytes) {
  Fields f;
  const JVal *model = f.obj(&root, "model");
  *fingerprint = f.string(model, "fingerprint");
  const JVal *params = f.obj(model, "params");
  L->world = static_cast<int>(f.integer(&root, "world_size"));
  L->stage = static_cast<int>(f.integer(&root, "stage"));
  R->world = L->world;
  R->stage = L->stage;
  R->step = f.integer(&root, "step");
  const JVal *sched = f.obj(&root, "schedule");
  R->run.lr = f.number(sched, "lr");
  R->run.minLr = f.number(sched, "min_lr");
  R->run.warmup = f.integer(sched, "warmup");
  R->run.steps = f.integer(sched, "steps");
  const JVal *data = f.obj(&root, "data");
  const std::string seed = f.string(data, "seed");
  if (f.err.empty() && !parseU64(seed, &R->run.seed))
    return format("data.seed '%s' is not a decimal uint64", seed.c_str());
  R->run.gradAccum = f.integer(data, "grad_accum");
  R->run.globalBatch = f.integer(data, "global_batch");
  R->run.seq = f.integer(data, "seq");
  R->run.nextSample = f.integer(data, "next_sample_index");
  // Written since the sample stream; before, the stream's batch was the
  // run's global batch.
  R->run.streamBatch = f.get(data, "sample_stream_batch")
                           ? f.integer(data, "sample_stream_batch")
                           : R->run.globalBatch;
  // Optional (written since fp16-mixed): AdamW's update count and the
  // loss scaler.
  // (Checked with the schedule below.)
  if (f.get(&root, "optimizer"))
    R->run.updates = f.integer(f.obj(&root, "optimizer"), "updates");
  if (f.get(&root, "loss_scaler")) {
    const JVal *ls = f.obj(&root, "loss_scaler");
    R->run.lossScaled = true;
    R->run.lossScale = f.number(ls, "scale");
    R->run.lossScaleGoodSteps = f.integer(ls, "good_steps");
  }
  const JVal *layout = f.obj(&root, "layout");
  const JVal *groups = f.obj(layout, "groups");
  const JVal *states = f.obj(layout, "states");
  const JVal *fl = f.obj(&root, "files");
  if (!f.err.empty())
    return f.err;
  for (const JVal &p : *params) {
    ParamRec r;
    r.name = f.string(&p, "name");
    const JVal *shape = f.obj(&p, "shape");
    r.numel = 1;
    if (shape)
      for (const JVal &d : *shape) {
        int64_t x = Fields::isInt64(d) ? d.get<int64_t>() : -1;
        if (x < 0 || (x > 0 && r.numel > (int64_t(1) << 50) / x)) {
          f.fail("shape");
          x = 0;
        }
        r.shape.push_back(x);
        r.numel *= x;
      }
    L->params.push_back(std::move(r));
  }
  for (const JVal &g : *groups) {
    GroupRec r;
    r.name = f.string(&g, "name");
    r.padded = f.integer(&g, "padded");
    r.shard = f.integer(&g, "shard");
    const JVal *members = f.obj(&g, "members");
    if (members)
      for (const JVal &m : *members)
        r.members.push_back({f.string(&m, "name"), f.integer(&m, "offset"),
                             f.integer(&m, "numel")});
    L->groups.push_back(std::move(r));
  }
  std::vector<int64_t> offsets;
  for (const JVal &s : *states) {
    StateRec r;
    r.name = f.string(&s, "name");
    std::string kind = f.string(&s, "kind");
    r.kind = -1;
    for (int k = 0; k < 5; ++k)
      if (kind == kStateKindNames[k])
        r.kind = k;
    const std::string dtype = f.string(&s, "dtype");
    r.dtype = dtype == "bf16" ? ZRT_BF16 : dtype == "f16" ? ZRT_F16 : ZRT_F32;
    if (dtype != "bf16" && dtype != "f16" && dtype != "f32")
      f.fail("layout.states.dtype");
    r.numel = f.integer(&s, "numel");
    r.group = static_cast<int>(f.integer(&s, "group"));
    r.sharded = r.group >= 0;
    offsets.push_back(f.integer(&s, "offset"));
    L->states.push_back(std::move(r));
  }
  *fileBytes =
      f.integer(fl->is_array() && !fl->empty() ? &(*fl)[0] : nullptr, "bytes");
  for (const JVal &x : *fl) {
    const int64_t r = f.integer(&x, "rank");
    std::string path = f.string(&x, "path");
    uint64_t sum = 0;
    if (!parseHex64(f.string(&x, "fnv1a64"), &sum))
      f.fail("files.fnv1a64");
    if (!f.err.empty())
      return f.err;
    const int64_t i = static_cast<int64_t>(files->size());
    if (r != i || path != format("rank_%05lld.bin", (long long)i))
      return format("files[%lld] is rank %lld at '%s', expected rank %lld at "
                    "rank_%05lld.bin",
                    (long long)i, (long long)r, path.c_str(), (long long)i,
                    (long long)i);
    if (f.integer(&x, "bytes") != *fileBytes)
      return format("files[%lld] has %lld bytes, files[0] %lld (every shard "
                    "file has the same size)",
                    (long long)i, (long long)f.integer(&x, "bytes"),
                    (long long)*fileBytes);
    files->emplace_back(path, sum);
  }
  if (!f.err.empty())
    return f.err;
  // Values in range (a wrong one would train wrongly or fail later).
  if (R->step < 0)
    return format("step %lld is negative", (long long)R->step);
  if (f.integer(sched, "next_step") != R->step + 1)
    return format("schedule.next_step %lld is not step + 1 = %lld",
                  (long long)f.integer(sched, "next_step"),
                  (long long)(R->step + 1));
  if (L->stage < 0 || L->stage > 3)
    return format("stage %d is not a ZeRO stage (0-3)", L->stage);
  if (L->world < 1 || L->world > (1 << 20))
    return format("world_size %d is out of range", L->world);
  if (!(R->run.lr >= 0 && std::isfinite(R->run.lr)) ||
      !(R->run.minLr >= 0 && std::isfinite(R->run.minLr)) ||
      R->run.warmup < 0 || R->run.steps < 0)
    return "the schedule (lr, min_lr, warmup, steps) is out of range";
  if (R->run.gradAccum < 1 || R->run.globalBatch < 1 || R->run.seq < 1 ||
      R->run.streamBatch < 1 || R->run.nextSample < 0)
    return "the data position (grad_accum, global_batch, seq, "
           "next_sample_index, sample_stream_batch) is out of range";
  if (R->run.updates > R->step || (R->run.updates < 0 &&
                                    f.get(&root, "optimizer")))
    return format("optimizer.updates %lld is not in [0, step %lld]",
                  (long long)R->run.updates, (long long)R->step);
  if (R->run.lossScaled &&
      (!(R->run.lossScale > 0) || !std::isfinite(R->run.lossScale) ||
       R->run.lossScaleGoodSteps < 0))
    return "loss_scaler has a scale that is not finite and > 0, or negative "
           "good_steps";
  if (static_cast<int>(files->size()) != L->world)
    return format("the manifest lists %zu shard files for world size %d",
                  files->size(), L->world);
  // Layouts follow the group rule (zrt_group_desc): members back to back
  // from 0, padded to the next multiple of the world size.
  for (const GroupRec &g : L->groups) {
    int64_t total = 0;
    for (const MemberRec &m : g.members) {
      if (m.offset != total || m.numel < 0 || m.numel > (int64_t(1) << 50))
        return format("group '%s': member '%s' is at offset %lld, but the "
                      "members before it end at %lld",
                      g.name.c_str(), m.name.c_str(), (long long)m.offset,
                      (long long)total);
      total += m.numel;
    }
    const int64_t padded = (total + L->world - 1) / L->world * L->world;
    if (g.padded != padded || g.shard * L->world != g.padded)
      return format("group '%s' has padded %lld and shard %lld; its %lld "
                    "elements at world size %d give padded %lld and shard "
                    "%lld",
                    g.name.c_str(), (long long)g.padded, (long long)g.shard,
                    (long long)total, L->world, (long long)padded,
                    (long long)(padded / L->world));
  }
  for (const ParamRec &p : L->params)
    if (p.numel < 0 || p.shape.size() > 16)
      return format("parameter '%s' has a malformed shape", p.name.c_str());
  if (std::string err = L->finish(); !err.empty())
    return err;
  for (size_t i = 0; i < offsets.size(); ++i)
    if (offsets[i] != L->states[i].offset)
      return format("state '%s' is at byte %lld, expected %lld",
                    L->states[i].name.c_str(), (long long)offsets[i],
                    (long long)L->states[i].offset);
  if (*fileBytes != L->fileBytes)
    return format("shard files of %lld bytes, expected %lld",
                  (long long)*fileBytes, (long long)L->fileBytes);
  return "";
}

/// The checks of a manifest's text, in order: JSON without duplicate keys,
/// the format and its version, the manifest's own checksum, then every
/// field (parseManifest). `dir` names the checkpoint in messages.
std::string parseManifestText(
    const std::string &text, const std::string &dir, Layout *L, Resumed *R,
    std::vector<std::pair<std::string, uint64_t>> *files,
    std::string *fingerprint, int64_t *fileBytes, bool *unchecked) {
  // A duplicate key would silently replace the first: refused.
  std::string duplicate;
  std::vector<std::set<std::string>> keys; // of each open object
  auto noteDuplicates = [&](int, JVal::parse_event_t ev, JVal &parsed) {
    if (ev == JVal::parse_event_t::object_start)
      keys.emplace_back();
    else if (ev == JVal::parse_event_t::object_end && !keys.empty())
      keys.pop_back();
    else if (ev == JVal::parse_event_t::key && !keys.empty() &&
             parsed.is_string() &&
             !keys.back().insert(parsed.get<std::string>()).second &&
             duplicate.empty())
      duplicate = parsed.get<std::string>();
    return true;
  };
  const JVal root = JVal::parse(text, noteDuplicates,
                                /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object())
    return format("checkpoint '%s': manifest.json is not valid JSON",
                  dir.c_str());
  if (!duplicate.empty())
    return format("checkpoint '%s': manifest.json has the key '%s' twice",
                  dir.c_str(), duplicate.c_str());
  Fields f;
  if (f.string(&root, "format") != kFormatName)
    return format("checkpoint '%s': manifest.json is not a %s manifest",
                  dir.c_str(), kFormatName);
  const int64_t version = f.integer(&root, "format_version");
  if (!f.err.empty() || version < 1)
    return format("checkpoint '%s': manifest.json has no valid "
                  "format_version",
                  dir.c_str());
  if (version > kFormatVersion)
    return format("checkpoint '%s' has format version %lld, newer than the "
                  "version %d this program reads (use a newer runtime)",
                  dir.c_str(), (long long)version, kFormatVersion);
  // The manifest's own checksum (absent in manifests written before it
  // existed: accepted with a note).
  *unchecked = !root.contains("manifest_fnv1a64");
  if (!*unchecked) {
    const size_t at = text.rfind(kManifestSumKey);
    const std::string keyLen = kManifestSumKey;
    uint64_t want = 0;
    Fnv64 h;
    if (at != std::string::npos)
      h.add(text.data(), at);
    if (at == std::string::npos ||
        !parseHex64(text.substr(at + keyLen.size(), 16), &want) ||
        f.string(&root, "manifest_fnv1a64") != hex64(want) || h.h != want)
      return format("checkpoint '%s': manifest.json was modified or damaged "
                    "(its FNV-1a-64 checksum %s does not match its contents, "
                    "%s); restore it, or resume from another checkpoint",
                    dir.c_str(),
                    at == std::string::npos ? "(missing)" : hex64(want).c_str(),
                    hex64(h.h).c_str());
  }
  if (std::string err = parseManifest(root, L, R, files, fingerprint,
                                      fileBytes);
      !err.empty())
    return format("checkpoint '%s': malformed manifest.json: %s", dir.c_str(),
                  err.c_str());
  return "";
}

int64_t g_filesWritten = 0;

} // namespace

//===----------------------------------------------------------------------===//
// Checkpointer
//===----------------------------------------------------------------------===//

struct Checkpointer::Impl {
  Impl(const zrt_model_desc *model, int r, int w, Agree a)
      : m(model), rank(r), world(w), agree(std::move(a)) {}
  const zrt_model_desc *m;
  int rank, world;
  Agree agree;
  int64_t crashAfter = -1;
  int64_t keepLast = 0;
  Layout cur;
  bool curReady = false;
  std::string curErr;
  // --resume
  Resumed res;
  Layout old;
  std::vector<std::pair<std::string, uint64_t>> files;
  std::vector<int> fds;
  bool manifestUnchecked = false; ///< No manifest_fnv1a64 (older writer).

  std::string ensureLayout() {
    if (!curReady) {
      curErr = layoutOf(m, world, &cur);
      curReady = true;
    }
    return curErr.empty() ? ""
                          : "the model's states cannot be checkpointed: " +
                                curErr;
  }
  std::string filePath(int r) const { return res.dir + "/" + files[r].first; }
  /// Writes this rank's file; *nonFinite / *badState: how many NaN or Inf
  /// values its states hold, and the first such state's name.
  std::string writeShard(const std::string &path, int64_t step, uint64_t *sum,
                         int64_t *nonFinite, std::string *badState);
  std::string writeManifest(const std::string &tmpDir, int64_t step,
                            const RunInfo &run,
                            const std::vector<uint64_t> &sums);
  std::string verify(int r);
  /// Elements [lo, hi) of (param, kind) of the checkpoint, as `dtype`.
  std::string readTensor(const std::string &param, int kind, int dtype,
                         int64_t lo, int64_t hi, void *dst);
  std::string readRaw(const StateRec &s, int file, int64_t lo, int64_t hi,
                      int dtype, void *dst);
};

Checkpointer::Checkpointer(const zrt_model_desc *model, int rank, int world,
                           Agree agree)
    : impl_(new Impl(model, rank, world, std::move(agree))) {}

Checkpointer::~Checkpointer() {
  for (int fd : impl_->fds)
    if (fd >= 0)
      ::close(fd);
}

void Checkpointer::setCrashAfterFiles(int64_t k) { impl_->crashAfter = k; }

void Checkpointer::setKeepLast(int64_t k) { impl_->keepLast = k; }

const Resumed &Checkpointer::resumed() const { return impl_->res; }

std::vector<std::string> Checkpointer::notes(const RunInfo &now) const {
  const Resumed &r = impl_->res;
  std::vector<std::string> out;
  out.push_back(format(
      "resumed from %s: step %lld, saved at world size %d, ZeRO stage %d%s "
      "(seed %llu from the checkpoint)",
      r.dir.c_str(), (long long)r.step, r.world, r.stage,
      r.resharded ? ", re-partitioned for this program" : "",
      (unsigned long long)r.run.seed));
  if (impl_->manifestUnchecked)
    out.push_back("note: its manifest.json has no checksum of its own "
                  "(written by an older runtime); its fields were checked "
                  "against the shard headers and the group rule only");
  if (now.lr != r.run.lr || now.minLr != r.run.minLr ||
      now.warmup != r.run.warmup || now.steps != r.run.steps)
    out.push_back(format(
        "note: the learning-rate schedule differs from the checkpoint's "
        "(--lr %g --min-lr %g --warmup %lld --steps %lld when saved)",
        r.run.lr, r.run.minLr, (long long)r.run.warmup,
        (long long)r.run.steps));
  if (now.gradAccum != r.run.gradAccum || now.globalBatch != r.run.globalBatch)
    out.push_back(format(
        "note: the batches differ from the saved run's (global batch %lld x "
        "%lld micro-batches when saved, %lld x %lld now); the data continues "
        "at sample %lld of the saved run's sample stream",
        (long long)r.run.globalBatch, (long long)r.run.gradAccum,
        (long long)now.globalBatch, (long long)now.gradAccum,
        (long long)r.run.nextSample));
  return out;
}

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

std::string Checkpointer::Impl::writeShard(const std::string &path,
                                           int64_t step, uint64_t *sum,
                                           int64_t *nonFinite,
                                           std::string *badState) {
  *nonFinite = 0;
  const std::string what = format("cannot write checkpoint file '%s'",
                                  path.c_str());
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return what + ": " + std::strerror(errno);
  Fnv64 h;
  bool ok = true;
  auto put = [&](const void *p, size_t n) {
    h.add(p, n);
    ok = ok && writeAll(fd, p, n);
  };
  unsigned char header[kHeaderBytes] = {};
  std::memcpy(header, kMagic, 8);
  uint32_t u32[4] = {static_cast<uint32_t>(kFormatVersion),
                     static_cast<uint32_t>(rank), static_cast<uint32_t>(world),
                     static_cast<uint32_t>(cur.states.size())};
  std::memcpy(header + 8, u32, sizeof u32);
  int64_t i64[2] = {step, cur.fileBytes};
  std::memcpy(header + 24, i64, sizeof i64);
  put(header, sizeof header);
  static const unsigned char zeros[kAlign] = {};
  int64_t pos = kHeaderBytes;
  std::vector<char> staged; // one state at a time, copied from arena memory
  for (const StateRec &s : cur.states) {
    const int64_t bytes = s.numel * static_cast<int64_t>(zrt::elementBytes(s.dtype));
    staged.resize(static_cast<size_t>(bytes));
    if (std::string err =
            zrt::stageToHost(staged.data(), m->states[s.index].data, bytes);
        !err.empty()) {
      ::close(fd);
      return what + ": " + err;
    }
    const int64_t bad = countNonFinite(staged.data(), s.dtype, s.numel);
    if (bad > 0 && *nonFinite == 0)
      *badState = s.name;
    *nonFinite += bad;
    put(staged.data(), static_cast<size_t>(bytes));
    pos += bytes;
    const int64_t pad = (kAlign - pos % kAlign) % kAlign;
    put(zeros, static_cast<size_t>(pad));
    pos += pad;
  }
  if (ok && ::fsync(fd) != 0)
    ok = false;
  const int e = errno;
  if (::close(fd) != 0)
    ok = false;
  if (!ok)
    return what + ": " + std::strerror(e ? e : errno);
  *sum = h.h;
  ++g_filesWritten;
  if (crashAfter >= 0 && g_filesWritten >= crashAfter) {
    std::fprintf(stderr,
                 "checkpoint: --checkpoint-crash-after-files %lld reached "
                 "(rank %d); exiting\n",
                 (long long)crashAfter, rank);
    std::fflush(stderr);
    ::_exit(1);
  }
  return "";
}

std::string Checkpointer::Impl::writeManifest(
    const std::string &tmpDir, int64_t step, const RunInfo &run,
    const std::vector<uint64_t> &sums) {
  std::string j = "{\n";
  j += format("  \"format\": \"%s\",\n  \"format_version\": %d,\n",
              kFormatName, kFormatVersion);
  j += "  \"model\": {\"name\": " + jstr(m->name ? m->name : "") +
       ", \"fingerprint\": \"" + hex64(cur.fingerprint()) + "\"" +
       format(", \"num_params\": %lld,\n    \"params\": [",
              (long long)m->num_params);
  for (size_t i = 0; i < cur.params.size(); ++i) {
    const ParamRec &p = cur.params[i];
    j += (i ? ",\n      " : "\n      ") + std::string("{\"name\": ") +
         jstr(p.name) + ", \"shape\": [";
    for (size_t k = 0; k < p.shape.size(); ++k)
      j += format(k ? ", %lld" : "%lld", (long long)p.shape[k]);
    j += "]}";
  }
  j += "]},\n";
  j += format("  \"stage\": %d,\n  \"world_size\": %d,\n  \"step\": %lld,\n",
              m->stage, world, (long long)step);
  j += format("  \"schedule\": {\"next_step\": %lld, \"lr\": %.17g, "
              "\"min_lr\": %.17g, \"warmup\": %lld, \"steps\": %lld},\n",
              (long long)(step + 1), run.lr, run.minLr, (long long)run.warmup,
              (long long)run.steps);
  j += format("  \"data\": {\"seed\": \"%llu\", \"grad_accum\": %lld, "
              "\"global_batch\": %lld, \"seq\": %lld, \"next_batch_index\": "
              "%lld, \"next_sample_index\": %lld, \"sample_stream_batch\": "
              "%lld},\n",
              (unsigned long long)run.seed, (long long)run.gradAccum,
              (long long)run.globalBatch, (long long)run.seq,
              (long long)(run.nextSample / std::max<int64_t>(1, run.globalBatch)),
              (long long)run.nextSample, (long long)run.streamBatch);
  if (run.updates >= 0)
    j += format("  \"optimizer\": {\"updates\": %lld},\n",
                (long long)run.updates);
  if (run.lossScaled)
    j += format("  \"loss_scaler\": {\"scale\": %.17g, \"good_steps\": "
                "%lld},\n",
                run.lossScale, (long long)run.lossScaleGoodSteps);
  j += format("  \"rng\": {\"generator\": \"philox4x32-10, counter-based\", "
              "\"seed\": \"%llu\", \"state\": null},\n",
              (unsigned long long)run.seed);
  j += "  \"layout\": {\n    \"not_saved\": \"gradients (zero between "
       "optimizer steps)\",\n    \"groups\": [";
  for (size_t g = 0; g < cur.groups.size(); ++g) {
    const GroupRec &r = cur.groups[g];
    j += (g ? ",\n      " : "\n      ") + std::string("{\"name\": ") +
         jstr(r.name) +
         format(", \"padded\": %lld, \"shard\": %lld, \"members\": [",
                (long long)r.padded, (long long)r.shard);
    for (size_t k = 0; k < r.members.size(); ++k)
      j += (k ? ", " : "") + std::string("{\"name\": ") +
           jstr(r.members[k].name) +
           format(", \"offset\": %lld, \"numel\": %lld}",
                  (long long)r.members[k].offset,
                  (long long)r.members[k].numel);
    j += "]}";
  }
  j += "],\n    \"states\": [";
  for (size_t i = 0; i < cur.states.size(); ++i) {
    const StateRec &s = cur.states[i];
    j += (i ? ",\n      " : "\n      ") + std::string("{\"name\": ") +
         jstr(s.name) +
         format(", \"kind\": \"%s\", \"dtype\": \"%s\", \"numel\": %lld, "
                "\"group\": %d, \"offset\": %lld}",
                kStateKindNames[s.kind], dtypeName(s.dtype).c_str(),
                (long long)s.numel, s.group, (long long)s.offset);
  }
  j += "]},\n  \"files\": [";
  for (int r = 0; r < world; ++r)
    j += format("%s\n    {\"rank\": %d, \"path\": \"rank_%05d.bin\", "
                "\"bytes\": %lld, \"fnv1a64\": \"%s\"}",
                r ? "," : "", r, r, (long long)cur.fileBytes,
                hex64(sums[r]).c_str());
  j += "],\n";
  Fnv64 self;
  self.add(j.data(), j.size());
  j += kManifestSumKey + hex64(self.h) + "\"\n}\n";

  const std::string tmp = tmpDir + "/manifest.json.tmp",
                    dst = tmpDir + "/manifest.json";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  bool ok = fd >= 0 && writeAll(fd, j.data(), j.size()) && ::fsync(fd) == 0;
  if (fd >= 0 && ::close(fd) != 0)
    ok = false;
  if (!ok || std::rename(tmp.c_str(), dst.c_str()) != 0)
    return format("cannot write checkpoint manifest '%s': %s", dst.c_str(),
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
      fsyncPath(tmpDir);
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
      fsyncPath(dir);
      if (!trash.empty())
        removeTree(trash);
    }
    if (err.empty()) {
      const std::string latest = dir + "/latest", tmp = dir + "/.latest.tmp";
      const std::string text = name + "\n";
      int fd =
          ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      bool ok = fd >= 0 && writeAll(fd, text.data(), text.size()) &&
                ::fsync(fd) == 0;
      if (fd >= 0 && ::close(fd) != 0)
        ok = false;
      if (!ok || std::rename(tmp.c_str(), latest.c_str()) != 0)
        err = format("cannot update '%s': %s", latest.c_str(),
                     std::strerror(errno));
      fsyncPath(dir);
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

//===----------------------------------------------------------------------===//
// --resume
//===----------------------------------------------------------------------===//

std::string Checkpointer::Impl::verify(int r) {
  return checkShardFile(res.dir, filePath(r), files[r].first, r, old.world,
                        static_cast<int64_t>(old.states.size()), res.step,
                        old.fileBytes, files[r].second);
}

std::string Checkpointer::open(const std::string &path) {
  Impl &I = *impl_;
  if (std::string err = I.ensureLayout(); !err.empty())
    return err;
  // A step directory, or a checkpoint directory and its `latest`.
  std::string dir = path;
  while (dir.size() > 1 && dir.back() == '/')
    dir.pop_back();
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0)
    return format("--resume: no checkpoint in '%s' (%s)", path.c_str(),
                  std::strerror(errno));
  if (!S_ISDIR(st.st_mode))
    return format("--resume: no checkpoint in '%s' (it is a file; --resume "
                  "takes a step directory or a checkpoint directory)",
                  path.c_str());
  if (!isFile(dir + "/manifest.json")) {
    std::string latest;
    if (std::FILE *f = std::fopen((dir + "/latest").c_str(), "r")) {
      char buf[256] = {};
      if (std::fgets(buf, sizeof buf, f))
        latest = buf;
      std::fclose(f);
    }
    while (!latest.empty() && (latest.back() == '\n' || latest.back() == ' '))
      latest.pop_back();
    if (latest.empty())
      return format("--resume: no checkpoint in '%s' (neither manifest.json "
                    "nor a 'latest' pointer)",
                    path.c_str());
    // Only a complete step directory: never a temporary one of a save in
    // progress (.step_N.tmp), nor a path elsewhere.
    if (latest.compare(0, 5, "step_") != 0 || latest.size() == 5 ||
        latest.find_first_not_of("0123456789", 5) != std::string::npos)
      return format("--resume: '%s/latest' names '%s', which is not a step "
                    "directory (step_<N>)",
                    path.c_str(), latest.c_str());
    dir += "/" + latest;
    if (!isFile(dir + "/manifest.json"))
      return format("--resume: '%s/latest' names %s, which has no "
                    "manifest.json",
                    path.c_str(), latest.c_str());
  }
  I.res.dir = dir;
  const std::string mpath = dir + "/manifest.json";
  std::string text;
  if (std::FILE *f = std::fopen(mpath.c_str(), "rb")) {
    char buf[65536];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0)
      text.append(buf, n);
    std::fclose(f);
  } else {
    return format("--resume: cannot read '%s': %s", mpath.c_str(),
                  std::strerror(errno));
  }
  std::string fp;
  int64_t fileBytes = 0;
  if (std::string err =
          parseManifestText(text, dir, &I.old, &I.res, &I.files, &fp,
                            &fileBytes, &I.manifestUnchecked);
      !err.empty())
    return err;
  // The same model?
  const std::string mine = hex64(I.cur.fingerprint());
  if (fp != mine || hex64(I.old.fingerprint()) != fp) {
    std::string diff;
    for (const ParamRec &p : I.cur.params) {
      const ParamRec *o = I.old.param(p.name);
      if (!o)
        diff = format("parameter '%s' is not in the checkpoint",
                      p.name.c_str());
      else if (o->shape != p.shape)
        diff = format("parameter '%s' has another shape in the checkpoint",
                      p.name.c_str());
      if (!diff.empty())
        break;
    }
    if (diff.empty() && I.old.params.size() != I.cur.params.size())
      diff = format("the checkpoint has %zu parameters, this model %zu",
                    I.old.params.size(), I.cur.params.size());
    return format("checkpoint '%s' is of a different model (fingerprint %s, "
                  "this program's %s)%s%s",
                  dir.c_str(), fp.c_str(), mine.c_str(),
                  diff.empty() ? "" : ": ", diff.c_str());
  }
  // Every shard file present and complete (all ranks check all: cheap).
  for (int r = 0; r < I.old.world; ++r) {
    struct stat st;
    const std::string p = I.filePath(r);
    if (::stat(p.c_str(), &st) != 0)
      return format("checkpoint '%s': shard file %s of rank %d is missing",
                    dir.c_str(), I.files[r].first.c_str(), r);
    if (!S_ISREG(st.st_mode))
      return format("checkpoint '%s': shard file %s of rank %d is not a "
                    "regular file (a directory?)",
                    dir.c_str(), I.files[r].first.c_str(), r);
    if (st.st_size != fileBytes)
      return format("checkpoint '%s': shard file %s is truncated or damaged "
                    "(%lld bytes, the manifest says %lld)",
                    dir.c_str(), I.files[r].first.c_str(),
                    (long long)st.st_size, (long long)fileBytes);
  }
  // Checksums, spread over the ranks.
  for (int r = I.rank; r < I.old.world; r += I.world)
    if (std::string err = I.verify(r); !err.empty())
      return err;
  I.res.resharded = !I.cur.sameAs(I.old);
  return "";
}

std::string Checkpointer::Impl::readRaw(const StateRec &s, int file,
                                        int64_t lo, int64_t hi, int dtype,
                                        void *dst) {
  if (fds.empty())
    fds.assign(files.size(), -1);
  int &fd = fds[file];
  if (fd < 0)
    fd = ::open(filePath(file).c_str(), O_RDONLY | O_CLOEXEC);
  const size_t eb = zrt::elementBytes(s.dtype);
  const int64_t n = hi - lo;
  std::vector<char> raw;
  void *buf = dst;
  if (s.dtype != dtype) {
    raw.resize(static_cast<size_t>(n) * eb);
    buf = raw.data();
  }
  if (fd < 0 || !preadAll(fd, buf, static_cast<size_t>(n) * eb,
                          static_cast<off_t>(s.offset + lo * (int64_t)eb)))
    return format("checkpoint '%s': cannot read shard file %s: %s",
                  res.dir.c_str(), files[file].first.c_str(),
                  std::strerror(errno));
  if (s.dtype == dtype)
    return "";
  if (dtype == ZRT_F32) // bf16 / f16 -> f32, exact
    zrt::hostToF32(buf, s.dtype, static_cast<float *>(dst), n);
  else if (s.dtype == ZRT_F32) // f32 -> bf16 / f16, round to nearest even
    zrt::hostFromF32(static_cast<const float *>(buf), dst, dtype, n);
  else { // bf16 <-> f16 through f32
    std::vector<float> wide(static_cast<size_t>(n));
    zrt::hostToF32(buf, s.dtype, wide.data(), n);
    zrt::hostFromF32(wide.data(), dst, dtype, n);
  }
  return "";
}

std::string Checkpointer::Impl::readTensor(const std::string &param, int kind,
                                           int dtype, int64_t lo, int64_t hi,
                                           void *dst) {
  // The source kind: the same one, with the f32 master weights standing in
  // for parameters of another dtype and parameters for missing masters.
  auto find = [&](int k) -> const Loc * {
    auto it = old.locs.find({param, k});
    return it == old.locs.end() ? nullptr : &it->second;
  };
  const Loc *loc = find(kind);
  if (kind == ZRT_STATE_PARAM) {
    const Loc *master = find(ZRT_STATE_MASTER);
    if (master && (!loc || old.states[loc->state].dtype != dtype))
      loc = master;
  } else if (kind == ZRT_STATE_MASTER && !loc) {
    loc = find(ZRT_STATE_PARAM);
  }
  if (!loc)
    return format("checkpoint '%s' holds no %s of parameter '%s' (was it "
                  "frozen when saved?)",
                  res.dir.c_str(), kStateKindNames[kind], param.c_str());
  const StateRec &s = old.states[loc->state];
  if (!loc->sharded) // whole: identical on every rank; rank 0's file
    return readRaw(s, 0, lo, hi, dtype, dst);
  // Slices of a shard group: flat elements [off+lo, off+hi) over the files.
  const int64_t S = old.groups[s.group].shard;
  char *out = static_cast<char *>(dst);
  for (int64_t e = loc->offset + lo, end = loc->offset + hi; e < end;) {
    const int q = static_cast<int>(e / S);
    const int64_t stop = std::min(end, (q + 1) * S);
    if (std::string err = readRaw(s, q, e - q * S, stop - q * S, dtype, out);
        !err.empty())
      return err;
    out += (stop - e) * static_cast<int64_t>(zrt::elementBytes(dtype));
    e = stop;
  }
  return "";
}

std::string Checkpointer::load() {
  Impl &I = *impl_;
  std::string err;
  // Each state is assembled in host memory, then copied to its arena
  // memory (state_io.h: device memory on a device backend).
  std::vector<char> staged;
  if (!I.res.resharded) {
    // Same layout: this rank's file, byte for byte (padding as stored).
    for (const StateRec &s : I.cur.states) {
      const int64_t bytes = s.numel * static_cast<int64_t>(zrt::elementBytes(s.dtype));
      staged.resize(static_cast<size_t>(bytes));
      err = I.readRaw(I.old.states[&s - I.cur.states.data()], I.rank, 0,
                      s.numel, s.dtype, staged.data());
      if (err.empty())
        err = zrt::stageToDevice(I.m->states[s.index].data, staged.data(),
                                 bytes);
      if (!err.empty())
        break;
    }
  } else {
    for (const StateRec &s : I.cur.states) {
      const size_t eb = zrt::elementBytes(s.dtype);
      staged.resize(static_cast<size_t>(s.numel) * eb);
      void *data = staged.data();
      if (!s.sharded) {
        // A whole state: of a parameter, or matched by name.
        std::string param;
        for (const auto &[key, loc] : I.cur.locs)
          if (!loc.sharded && &I.cur.states[loc.state] == &s)
            param = key.first;
        if (!param.empty()) {
          err = I.readTensor(param, s.kind, s.dtype, 0, s.numel, data);
        } else {
          auto it = I.old.extra.find(s.name);
          const StateRec *o = it == I.old.extra.end()
                                  ? nullptr
                                  : &I.old.states[it->second];
          if (!o || o->sharded || o->kind != s.kind || o->numel != s.numel)
            err = format("checkpoint '%s' has no state '%s' to restore",
                         I.res.dir.c_str(), s.name.c_str());
          else
            err = I.readRaw(*o, 0, 0, s.numel, s.dtype, data);
        }
      } else {
        // This rank's slice of the group: members cut from the whole
        // per-parameter tensors, zero padding.
        std::memset(data, 0, static_cast<size_t>(s.numel) * eb);
        const GroupRec &g = I.cur.groups[s.group];
        const int64_t own = static_cast<int64_t>(I.rank) * g.shard;
        for (const MemberRec &mem : g.members) {
          const int64_t lo = std::max(own, mem.offset),
                        hi = std::min(own + g.shard, mem.offset + mem.numel);
          if (lo >= hi)
            continue;
          err = I.readTensor(mem.name, s.kind, s.dtype, lo - mem.offset,
                             hi - mem.offset,
                             static_cast<char *>(data) + (lo - own) * eb);
          if (!err.empty())
            break;
        }
      }
      if (err.empty())
        err = zrt::stageToDevice(I.m->states[s.index].data, staged.data(),
                                 static_cast<int64_t>(staged.size()));
      if (!err.empty())
        break;
    }
  }
  for (int &fd : I.fds)
    if (fd >= 0)
      ::close(fd), fd = -1;
  return err;
}

/// Checks one shard file as --resume does before loading anything: it
/// reads the whole file, its 64-byte header must repeat the manifest (magic
/// and format version, this file's rank, the world size, the number of
/// states, the step, the file size) and its FNV-1a-64 must be the
/// manifest's. `dir` and `name` only name it in the message. "" or the
/// message.
std::string checkShardFile(const std::string &dir, const std::string &path,
                           const std::string &name, int r, int world,
                           int64_t states, int64_t step, int64_t fileBytes,
                           uint64_t checksum) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return format("checkpoint '%s': cannot open shard file %s: %s",
                  dir.c_str(), name.c_str(),
                  std::strerror(errno));
  Fnv64 h;
  std::vector<char> buf(1 << 20);
  unsigned char header[kHeaderBytes] = {};
  int64_t total = 0;
  for (;;) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      return format("checkpoint '%s': cannot read shard file %s: %s",
                    dir.c_str(), name.c_str(),
                    std::strerror(e));
    }
    if (n == 0)
      break;
    if (total < kHeaderBytes)
      std::memcpy(header + total, buf.data(),
                  static_cast<size_t>(std::min<int64_t>(n, kHeaderBytes - total)));
    h.add(buf.data(), static_cast<size_t>(n));
    total += n;
  }
  ::close(fd);
  // The header repeats what the manifest says: the format version, this
  // file's rank, the world size, the number of states, the step and the
  // file size (a file copied in from another checkpoint or rank fails).
  uint32_t u32[4];
  std::memcpy(u32, header + 8, sizeof u32);
  int64_t i64[2];
  std::memcpy(i64, header + 24, sizeof i64);
  if (std::memcmp(header, kMagic, 8) != 0 ||
      u32[0] != static_cast<uint32_t>(kFormatVersion))
    return format("checkpoint '%s': shard file %s is not a version-%d shard "
                  "file (bad header)",
                  dir.c_str(), name.c_str(), kFormatVersion);
  if (u32[1] != static_cast<uint32_t>(r) ||
      u32[2] != static_cast<uint32_t>(world) ||
      u32[3] != static_cast<uint32_t>(states) ||
      i64[0] != step || i64[1] != fileBytes)
    return format("checkpoint '%s': shard file %s does not belong to this "
                  "checkpoint (its header says rank %u of %u, %u states, step "
                  "%lld, %lld bytes; the manifest: rank %d of %d, %lld states, "
                  "step %lld, %lld bytes)",
                  dir.c_str(), name.c_str(), u32[1], u32[2],
                  u32[3], (long long)i64[0], (long long)i64[1], r, world,
                  (long long)states, (long long)step,
                  (long long)fileBytes);
  if (h.h != checksum)
    return format("checkpoint '%s': shard file %s is corrupt (FNV-1a-64 "
                  "checksum %s, the manifest says %s)",
                  dir.c_str(), name.c_str(), hex64(h.h).c_str(),
                  hex64(checksum).c_str());
  return "";
}

std::string checkManifestText(const std::string &text) {
  Layout L;
  Resumed R;
  std::vector<std::pair<std::string, uint64_t>> files;
  std::string fingerprint;
  int64_t fileBytes = 0;
  bool unchecked = false;
  return parseManifestText(text, "<fuzz>", &L, &R, &files, &fingerprint,
                           &fileBytes, &unchecked);
}

} // namespace zrt_ckpt
