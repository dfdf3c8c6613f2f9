//===- checkpoint_manifest.cpp - manifest.json ----------------------------===//
//
// A checkpoint's manifest.json, which rank 0 writes last into the step
// directory: the model (name, fingerprint, parameter shapes), the partition
// (stage, world size, groups, states and their offsets), the run (step,
// schedule, data position, optimizer and loss-scaler state) and every shard
// file with its FNV-1a-64, closed by the manifest's own checksum. Written
// by hand (its byte layout is what the checksum covers); read with
// nlohmann::json, refusing duplicate keys, then checked field by field.
// docs/checkpoints.md describes the fields.
//
//===----------------------------------------------------------------------===//

#include "driver/checkpoint_impl.h"
#include "driver/checkpoint_layout.h"

#include "common/fnv1a.h"
#include "driver/fileio.h"
#include "driver/json_text.h"
#include "driver/strformat.h"
#include "zrt/zrt.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace zrt_ckpt {

using zrt::dtypeText;
using zrt::format;
using zrt::jsonString;
using zrt::kStateKindNames;

std::string Checkpointer::Impl::writeManifest(
    const std::string &tmpDir, int64_t step, const RunInfo &run,
    const std::vector<uint64_t> &sums) {
  std::string j = "{\n";
  j += format("  \"format\": \"%s\",\n  \"format_version\": %d,\n",
              kFormatName, kFormatVersion);
  j += "  \"model\": {\"name\": " + jsonString(m->name ? m->name : "") +
       ", \"fingerprint\": \"" + hex64(cur.fingerprint()) + "\"" +
       format(", \"num_params\": %lld,\n    \"params\": [",
              (long long)m->num_params);
  for (size_t i = 0; i < cur.params.size(); ++i) {
    const ParamRec &p = cur.params[i];
    // The whole shape; a tensor-parallel cut says how each rank's file
    // holds it.
    const std::vector<int64_t> whole = p.wholeShape();
    j += (i ? ",\n      " : "\n      ") + std::string("{\"name\": ") +
         jsonString(p.name) + ", \"shape\": [";
    for (size_t k = 0; k < whole.size(); ++k)
      j += format(k ? ", %lld" : "%lld", (long long)whole[k]);
    j += "]";
    if (p.isCut())
      j += format(", \"tensor_cut\": {\"dim\": %d, \"blocks\": %lld, "
                  "\"parts\": %lld}",
                  p.cutDim, (long long)p.cutBlocks, (long long)p.cutParts);
    j += "}";
  }
  j += "]},\n";
  j += format("  \"stage\": %d,\n  \"world_size\": %d,\n", m->stage, world);
  if (cur.tensor > 1) // the mesh N_d x M; absent: M = 1
    j += format("  \"tensor_parallel\": %d,\n", cur.tensor);
  j += format("  \"step\": %lld,\n", (long long)step);
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
         jsonString(r.name) +
         format(", \"padded\": %lld, \"shard\": %lld, \"members\": [",
                (long long)r.padded, (long long)r.shard);
    for (size_t k = 0; k < r.members.size(); ++k)
      j += (k ? ", " : "") + std::string("{\"name\": ") +
           jsonString(r.members[k].name) +
           format(", \"offset\": %lld, \"numel\": %lld}",
                  (long long)r.members[k].offset,
                  (long long)r.members[k].numel);
    j += "]}";
  }
  j += "],\n    \"states\": [";
  for (size_t i = 0; i < cur.states.size(); ++i) {
    const StateRec &s = cur.states[i];
    j += (i ? ",\n      " : "\n      ") + std::string("{\"name\": ") +
         jsonString(s.name) +
         format(", \"kind\": \"%s\", \"dtype\": \"%s\", \"numel\": %lld, "
                "\"group\": %d, \"offset\": %lld}",
                kStateKindNames[s.kind], dtypeText(s.dtype),
                (long long)s.numel, s.group, (long long)s.offset);
  }
  j += "]},\n  \"files\": [";
  for (int r = 0; r < world; ++r)
    j += format("%s\n    {\"rank\": %d, \"path\": \"rank_%05d.bin\", "
                "\"bytes\": %lld, \"fnv1a64\": \"%s\"}",
                r ? "," : "", r, r, (long long)cur.fileBytes,
                hex64(sums[r]).c_str());
  j += "],\n";
  zrt::Fnv1a64 self;
  self.add(j.data(), j.size());
  j += kManifestSumKey + hex64(self.h) + "\"\n}\n";

  const std::string tmp = tmpDir + "/manifest.json.tmp",
                    dst = tmpDir + "/manifest.json";
  if (!zrt::replaceFile(tmp, dst, j))
    return format("cannot write checkpoint manifest '%s': %s", dst.c_str(),
                  std::strerror(errno));
  return "";
}

//===----------------------------------------------------------------------===//
// Reading (writing: Impl::writeManifest above)
//===----------------------------------------------------------------------===//

namespace {

using JVal = nlohmann::json;

/// Throws-free field access for the manifest: records the first problem.
struct Fields {
  /// The first problem: "field '<k>' is missing or malformed", or "".
  std::string err;
  /// Member `k` of object `parent`, or null (no object, no such member).
  const JVal *get(const JVal *parent, const char *k) {
    if (!parent || !parent->is_object())
      return nullptr;
    auto it = parent->find(k);
    return it == parent->end() ? nullptr : &*it;
  }
  /// Member `k`, an object or an array; else null and a problem.
  const JVal *obj(const JVal *parent, const char *k) {
    const JVal *v = get(parent, k);
    if (!v || !v->is_structured()) {
      fail(k);
      return nullptr;
    }
    return v;
  }
  /// Member `k`, an integer that fits int64; else 0 and a problem.
  int64_t integer(const JVal *parent, const char *k) {
    const JVal *v = get(parent, k);
    if (!v || !isInt64(*v)) {
      fail(k);
      return 0;
    }
    return v->get<int64_t>();
  }
  /// Member `k`, a number; else 0 and a problem.
  double number(const JVal *parent, const char *k) {
    const JVal *v = get(parent, k);
    if (!v || !v->is_number()) {
      fail(k);
      return 0;
    }
    return v->get<double>();
  }
  /// Member `k`, a string; else "" and a problem.
  std::string string(const JVal *parent, const char *k) {
    const JVal *v = get(parent, k);
    if (!v || !v->is_string()) {
      fail(k);
      return "";
    }
    return v->get<std::string>();
  }
  /// Records "field '<k>' is missing or malformed" unless a problem is
  /// recorded already.
  void fail(const char *k) {
    if (err.empty())
      err = format("field '%s' is missing or malformed", k);
  }
  /// Whether `v` is an integer in int64 range.
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

/// Parses the fields of a manifest (JSON already checked for its format,
/// version and checksum) into its layout *L (finished), run information *R,
/// shard files *files, *fingerprint and *fileBytes, and checks each value's
/// range and the group rule. "" or the problem (without the checkpoint's
/// name: parseManifestText adds it).
std::string parseManifest(const JVal &root, Layout *L, Resumed *R,
                          std::vector<std::pair<std::string, uint64_t>> *files,
                          std::string *fingerprint, int64_t *fileBytes) {
  Fields f;
  const JVal *model = f.obj(&root, "model");
  *fingerprint = f.string(model, "fingerprint");
  const JVal *params = f.obj(model, "params");
  L->world = static_cast<int>(f.integer(&root, "world_size"));
  L->stage = static_cast<int>(f.integer(&root, "stage"));
  // Written when the mesh has a tensor axis (M > 1).
  const int64_t tensor = f.get(&root, "tensor_parallel")
                             ? f.integer(&root, "tensor_parallel")
                             : 1;
  if (f.err.empty() &&
      (tensor < 1 || tensor > (1 << 20) ||
       (L->world >= 1 && L->world % tensor != 0)))
    return format("tensor_parallel %lld does not divide world_size %d",
                  (long long)tensor, L->world);
  L->tensor = static_cast<int>(tensor);
  R->world = L->world;
  R->stage = L->stage;
  R->tensor = L->tensor;
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
    // A cut: this rank's shape has the cut dimension / parts (checked with
    // the other values below).
    if (const JVal *cut = f.get(&p, "tensor_cut")) {
      r.cutDim = static_cast<int>(f.integer(cut, "dim"));
      r.cutBlocks = f.integer(cut, "blocks");
      r.cutParts = f.integer(cut, "parts");
      if (!f.err.empty())
        return format("parameter '%s': %s", r.name.c_str(), f.err.c_str());
      if (r.cutDim < 0 || r.cutDim >= static_cast<int>(r.shape.size()) ||
          r.cutBlocks < 1 || r.cutParts < 2 || r.cutParts != L->tensor ||
          r.shape[r.cutDim] % (r.cutBlocks * r.cutParts) != 0)
        return format("parameter '%s' has a tensor_cut (dim %d, blocks %lld, "
                      "parts %lld) that does not cut its shape over "
                      "tensor_parallel %d",
                      r.name.c_str(), r.cutDim, (long long)r.cutBlocks,
                      (long long)r.cutParts, L->tensor);
      r.shape[r.cutDim] /= r.cutParts;
      r.numel /= r.cutParts;
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
  // from 0, padded to the next multiple of the data ranks N / M.
  const int dataWorld = L->dataWorld();
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
    const int64_t padded = (total + dataWorld - 1) / dataWorld * dataWorld;
    if (g.padded != padded || g.shard * dataWorld != g.padded)
      return format("group '%s' has padded %lld and shard %lld; its %lld "
                    "elements over %d data ranks give padded %lld and shard "
                    "%lld",
                    g.name.c_str(), (long long)g.padded, (long long)g.shard,
                    (long long)total, dataWorld, (long long)padded,
                    (long long)(padded / dataWorld));
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

} // namespace

bool parseHex64(const std::string &s, uint64_t *out) {
  if (s.size() != 16 ||
      s.find_first_not_of("0123456789abcdef") != std::string::npos)
    return false;
  *out = std::strtoull(s.c_str(), nullptr, 16);
  return true;
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
    zrt::Fnv1a64 h;
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
