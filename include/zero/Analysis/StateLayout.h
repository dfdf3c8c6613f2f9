//===- StateLayout.h - the state layout of a compiled step ------*- C++ -*-===//
///
/// \file
/// Lays out the model states of a step in their arenas and records the
/// layout as `#zero.slot` attributes (zero-layout-states; ZeroPasses.td).
///
//===----------------------------------------------------------------------===//

#ifndef ZERO_ANALYSIS_STATELAYOUT_H
#define ZERO_ANALYSIS_STATELAYOUT_H

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>

namespace mlir::zero {

/// What one layout placed.
struct StateLayoutStats {
  int64_t statesPlaced = 0; ///< States given a zero.slot.
  int64_t groupSpans = 0;   ///< zero.param_span / zero.grad_span recorded.
  int64_t stateBytes = 0;   ///< Bytes of the four state arenas together.
  int64_t constantsPlaced = 0; ///< Distinct program constants given a slot.
};

/// Writes `zero.slot` on every state with storage and on every program
/// constant (`train.rope_table`, in the constants arena), the spans of the
/// groups whose members lie back to back, and `zero.state_arena_bytes` on
/// the module, replacing any earlier layout. Never fails: states of types no
/// arena stores get 0 bytes and are rejected by the lowering.
StateLayoutStats layoutStates(ModuleOp module);

} // namespace mlir::zero

#endif // ZERO_ANALYSIS_STATELAYOUT_H
