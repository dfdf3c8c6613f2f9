//===- param_cuts.h - A model description's tensor cuts ---------*- C++ -*-===//
///
/// \file
/// The checks of zrt_model_desc::param_cuts (model.h) shared by what reads
/// them: the checkpoint layout (checkpoint_layout.cpp) and --import /
/// --export's parameter table (import_export.cpp). Internal to the runtime.
///
//===----------------------------------------------------------------------===//
#ifndef ZRT_SRC_DRIVER_PARAM_CUTS_H
#define ZRT_SRC_DRIVER_PARAM_CUTS_H

#include "driver/strformat.h"
#include "zrt/model.h"

#include <string>

namespace zrt {

/// "" when `m` has no tensor axis or lists its parameters with their cuts;
/// else why a tensor-parallel description cannot be read.
inline std::string checkCutTable(const zrt_model_desc *m) {
  if (m->tensor_size <= 1 ||
      (m->num_param_infos > 0 && m->param_infos && m->param_cuts))
    return "";
  return format("the program is tensor-parallel (M = %d), but its "
                "description does not say how its parameters are cut",
                m->tensor_size);
}

/// The cut of parameter `i` (param_infos[i], well-formed) into *cut: null
/// when it is whole on every tensor rank. "" or why the cut is malformed.
/// Call after checkCutTable.
inline std::string paramCutOf(const zrt_model_desc *m, int i,
                              const zrt_param_cut **cut) {
  *cut = nullptr;
  if (m->tensor_size <= 1 || m->param_cuts[i].dim < 0)
    return "";
  const zrt_param_info &p = m->param_infos[i];
  const zrt_param_cut &c = m->param_cuts[i];
  if (c.dim >= p.rank || c.blocks < 1 || c.parts != m->tensor_size ||
      p.shape[c.dim] % c.blocks != 0)
    return format("parameter '%s' has a malformed tensor cut (dimension %d of "
                  "%d, %lld blocks, %lld parts at M = %d)",
                  p.name, c.dim, p.rank, (long long)c.blocks,
                  (long long)c.parts, m->tensor_size);
  *cut = &c;
  return "";
}

} // namespace zrt

#endif // ZRT_SRC_DRIVER_PARAM_CUTS_H
