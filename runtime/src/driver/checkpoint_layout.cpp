//===- checkpoint_layout.cpp - Partitions of the model's states -----------===//
//
// Layout (checkpoint_layout.h): the byte offsets of the states in every
// rank's shard file, where each (parameter, kind) lives, the model's
// fingerprint, and the current program's layout from its model description.
// The same code builds a checkpoint's layout from its manifest
// (checkpoint_manifest.cpp), so that both are checked by one rule.
//
//===----------------------------------------------------------------------===//

#include "driver/checkpoint_layout.h"

#include "common/fnv1a.h"
#include "driver/param_cuts.h"
#include "driver/state_io.h"
#include "driver/strformat.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace zrt_ckpt {

using zrt::format;
using zrt::kStateKindNames;

std::string Layout::finish() {
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
      if (g.shard != s.numel || g.shard * dataWorld() != g.padded)
        return format("sharded state '%s' holds %lld elements, but group "
                      "'%s' has shards of %lld (padded %lld, %d data ranks)",
                      s.name.c_str(), (long long)s.numel, g.name.c_str(),
                      (long long)g.shard, (long long)g.padded, dataWorld());
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

uint64_t Layout::fingerprint() const {
  zrt::Fnv1a64 f;
  for (const ParamRec &p : params) {
    f.addStr(p.name);
    f.addInt(static_cast<int64_t>(p.shape.size()));
    for (int64_t d : p.wholeShape())
      f.addInt(d);
  }
  return f.h;
}

bool Layout::sameAs(const Layout &o) const {
  if (world != o.world || tensor != o.tensor ||
      states.size() != o.states.size() || groups.size() != o.groups.size() ||
      params.size() != o.params.size())
    return false;
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].name != o.params[i].name ||
        !params[i].sameCut(o.params[i]))
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

/// The current program's layout (model.h description).
std::string layoutOf(const zrt_model_desc *m, int world, Layout *out) {
  Layout &L = *out;
  L.world = world;
  L.stage = m->stage;
  L.tensor = std::max(1, m->tensor_size);
  if (world % L.tensor != 0)
    return format("world size %d is not a multiple of the tensor axis %d",
                  world, L.tensor);
  if (std::string err = zrt::checkCutTable(m); !err.empty())
    return err;
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
      const zrt_param_cut *c = nullptr;
      if (std::string err = zrt::paramCutOf(m, i, &c); !err.empty())
        return err;
      if (c) {
        r.cutDim = c->dim;
        r.cutBlocks = c->blocks;
        r.cutParts = c->parts;
      }
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

} // namespace zrt_ckpt
