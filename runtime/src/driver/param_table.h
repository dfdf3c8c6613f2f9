//===- param_table.h - Where the model keeps each parameter -----*- C++ -*-===//
///
/// \file
/// ParamTable: the parameters of a model description (zrt/model.h) and the
/// states that hold them, whole or as slices of a shard group; what --export
/// writes and --import reads (import_export.cpp). Internal to the runtime.
///
//===----------------------------------------------------------------------===//

#ifndef ZRT_SRC_DRIVER_PARAM_TABLE_H
#define ZRT_SRC_DRIVER_PARAM_TABLE_H

#include "common/tensor_cut.h"
#include "zrt/model.h"

#include <cstdint>
#include <string>
#include <vector>

namespace zrt::train {

/// Where the model keeps one parameter (model.h): whole in a state and/or
/// as a member of a shard group whose slices the states hold.
struct ParamEntry {
  std::string name;
  std::vector<int64_t> shape; // one rank's; [numel] when the model gives none
  int64_t numel = 0;          ///< Elements of `shape`.
  /// The whole tensor's shape (what --export writes and --import reads):
  /// `shape` unless the parameter is cut over the tensor axis.
  std::vector<int64_t> wholeShape;
  /// The tensor-parallel cut (model.h zrt_param_cut): which elements of the
  /// whole tensor a tensor rank's `numel` are (one run when not cut).
  zrt::TensorCut cut;
  bool isCut = false;
  int whole = -1;       ///< Whole ZRT_STATE_PARAM state.
  int wholeMaster = -1; ///< Whole ZRT_STATE_MASTER state "<name>.master".
  int group = -1;       ///< Group with a sharded param/master state, or -1.
  int64_t offset = 0;   ///< Element offset in that group.
};

/// The parameters of a model description, sorted by name (the canonical
/// order of the exported file, the same for every stage and world size).
struct ParamTable {
  struct Shards {
    int param = -1, master = -1; // sharded state indices of a group
  };
  std::vector<ParamEntry> entries;
  std::vector<Shards> groups;
  bool shapesKnown = false;

  /// "" or why the description cannot be consolidated. `dataWorld`: the
  /// ranks a group is sharded over (N / M).
  std::string build(const zrt_model_desc *m, int dataWorld);

  /// The state an export reads for `e` (master weights first) and whether
  /// it is a group shard.
  int exportSource(const ParamEntry &e, bool *sharded) const {
    *sharded = false;
    if (e.wholeMaster >= 0)
      return e.wholeMaster;
    if (e.group >= 0 && groups[e.group].master >= 0)
      return *sharded = true, groups[e.group].master;
    if (e.whole >= 0)
      return e.whole;
    *sharded = true;
    return groups[e.group].param;
  }
};

} // namespace zrt::train

#endif // ZRT_SRC_DRIVER_PARAM_TABLE_H
