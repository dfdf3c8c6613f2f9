//===- checkpoint_layout.h - The checkpoint format (internal) ---*- C++ -*-===//
///
/// \file
/// What a checkpoint is, shared by the files of the Checkpointer
/// (checkpoint_*.cpp): the format's constants, the partition of the model's
/// states (Layout: the current program's, or a checkpoint's as its manifest
/// describes it) and the manifest parser. Format and rules:
/// docs/checkpoints.md. Internal to the runtime: only checkpoint_*.cpp
/// include this header.
///
//===----------------------------------------------------------------------===//
#ifndef ZRT_SRC_DRIVER_CHECKPOINT_LAYOUT_H
#define ZRT_SRC_DRIVER_CHECKPOINT_LAYOUT_H

#include "common/tensor_cut.h"
#include "driver/checkpoint.h"
#include "driver/strformat.h"
#include "zrt/model.h"
#include "zrt/zrt.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace zrt_ckpt {

/// The manifest's "format" and "format_version": a reader refuses a newer
/// version.
constexpr int kFormatVersion = 1;
constexpr const char *kFormatName = "zero-checkpoint";
/// The first 8 bytes of every shard file (rank_<r>.bin).
constexpr char kMagic[8] = {'Z', 'R', 'T', 'C', 'K', 'P', 'T', '1'};
/// A shard file's header: magic, then u32 format version, rank, world size,
/// number of states, then i64 step and file bytes; zero up to 64 bytes.
constexpr int64_t kHeaderBytes = 64;
/// Every state's data starts at a multiple of 64 bytes of its shard file.
constexpr int64_t kAlign = 64;
/// The exit code of a failed save (a user error: disk, permissions).
constexpr int kExitUser = 1;

/// The manifest's own checksum: the last member, "manifest_fnv1a64", is the
/// FNV-1a 64 of every byte before its line (this prefix of it).
constexpr const char *kManifestSumKey = "  \"manifest_fnv1a64\": \"";

/// `v` as the 16 lower-case hex digits the manifest writes checksums and
/// fingerprints in.
inline std::string hex64(uint64_t v) {
  return zrt::format("%016llx", (unsigned long long)v);
}

/// Parses hex64's output: exactly 16 lower-case hex digits into *out; false
/// (and *out unchanged) for anything else.
bool parseHex64(const std::string &s, uint64_t *out);

/// A parameter of the model: its name, shape as one rank stores it ([numel]
/// when the model description gives no shapes), that element count, and
/// its tensor-parallel cut (model.h zrt_param_cut; cutDim -1: whole on
/// every tensor rank).
struct ParamRec {
  std::string name;
  std::vector<int64_t> shape;
  int64_t numel = 0;
  int cutDim = -1;
  int64_t cutBlocks = 1, cutParts = 1;

  /// Whether tensor ranks hold cuts of it (not the whole tensor).
  bool isCut() const { return cutDim >= 0 && cutParts > 1; }
  /// The whole tensor's shape: `shape` with the cut dimension times parts.
  std::vector<int64_t> wholeShape() const {
    std::vector<int64_t> w = shape;
    if (isCut())
      w[cutDim] *= cutParts;
    return w;
  }
  /// The geometry of the cut (common/tensor_cut.h), over the whole shape.
  zrt::TensorCut cut() const {
    const std::vector<int64_t> w = wholeShape();
    return zrt::TensorCut::of(w.data(), static_cast<int>(w.size()),
                              isCut() ? cutDim : -1, cutBlocks, cutParts);
  }
  /// The same parameter, cut the same way.
  bool sameCut(const ParamRec &o) const {
    return isCut() == o.isCut() &&
           (!isCut() || (cutDim == o.cutDim && cutBlocks == o.cutBlocks &&
                         cutParts == o.cutParts));
  }
};

/// A member of a shard group: parameter `name` at elements [offset,
/// offset + numel) of the group's padded flat buffer.
struct MemberRec {
  std::string name;
  int64_t offset = 0, numel = 0;
};

/// A shard group (zrt_group_desc): `padded` elements (the members, then
/// zero padding to a multiple of the world size), `shard` = padded / world
/// of them on each rank.
struct GroupRec {
  std::string name;
  int64_t padded = 0, shard = 0;
  std::vector<MemberRec> members;
};

/// A saved state (gradients are never saved): what it holds (kind,
/// ZRT_STATE_*; dtype; numel elements), whether it is a rank's shard of
/// group `group`, and where it lies.
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
/// checkpoint's (from its manifest). Implemented in checkpoint_layout.cpp.
struct Layout {
  /// World size N (one shard file per rank), ZeRO stage, and the mesh's
  /// tensor axis M: rank r = d x M + t holds data shard d (of N / M) of
  /// tensor rank t's cut; groups are sharded over the N / M data ranks.
  int world = 1, stage = 0, tensor = 1;
  /// N_d = N / M: the ranks a group is sharded over.
  int dataWorld() const { return world / std::max(tensor, 1); }
  std::vector<ParamRec> params; // sorted by name
  std::vector<GroupRec> groups;
  std::vector<StateRec> states; // saved states (gradients left out)
  int64_t fileBytes = 0;
  std::map<std::pair<std::string, int>, Loc> locs; // (param, kind)
  std::map<std::string, int> extra; // states tied to no parameter, by name

  /// The parameter named `n`, or null (params must be sorted: finish()).
  const ParamRec *param(const std::string &n) const {
    auto it = std::lower_bound(
        params.begin(), params.end(), n,
        [](const ParamRec &p, const std::string &k) { return p.name < k; });
    return it != params.end() && it->name == n ? &*it : nullptr;
  }

  /// Sorts the parameters, assigns each state its byte offset in the shard
  /// files (after the header, 64-byte aligned; sets fileBytes) and resolves
  /// where each (parameter, kind) lives (locs; states of no parameter go to
  /// extra). "" or why the layout is inconsistent: an unknown kind, a
  /// sharded state that does not match its group, a group member that is
  /// not a parameter, a (parameter, kind) stored twice.
  std::string finish();

  /// FNV-1a of the parameters (names and whole shapes, in name order): the
  /// model's identity, independent of stage, mesh and precision.
  uint64_t fingerprint() const;

  /// Whether `o` partitions the states exactly as this layout does (mesh,
  /// every parameter's cut, every state's name, kind, dtype, size and
  /// group, every group's members): then a rank's file loads byte for byte.
  bool sameAs(const Layout &o) const;
};

/// The current program's layout from its model description (zrt/model.h)
/// at `world` ranks (its tensor axis: tensor_size, its cuts: param_cuts),
/// into *out (finished). "" or why the description cannot be checkpointed
/// (malformed groups, parameters or cuts, a tensor-parallel description
/// without cuts, a state of no name or an unknown dtype, finish()'s
/// errors).
std::string layoutOf(const zrt_model_desc *m, int world, Layout *out);

/// The checks of a manifest's text, in order: JSON without duplicate keys,
/// the format and its version, the manifest's own checksum, then every
/// field and the group rule. Fills the checkpoint's layout *L (finished),
/// *R (step, world size, stage, run information; not dir or resharded),
/// *files (per rank: file name, FNV-1a-64), *fingerprint (as written),
/// *fileBytes (each shard file's size) and *unchecked (the manifest has no
/// checksum of its own: an older writer). `dir` names the checkpoint in
/// messages. "" or the message ("checkpoint '<dir>': ..."). In
/// checkpoint_manifest.cpp.
std::string parseManifestText(
    const std::string &text, const std::string &dir, Layout *L, Resumed *R,
    std::vector<std::pair<std::string, uint64_t>> *files,
    std::string *fingerprint, int64_t *fileBytes, bool *unchecked);

} // namespace zrt_ckpt

#endif // ZRT_SRC_DRIVER_CHECKPOINT_LAYOUT_H
