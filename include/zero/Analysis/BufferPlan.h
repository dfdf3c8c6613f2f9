//===- BufferPlan.h - static buffer assignment of a step --------*- C++ -*-===//
///
/// \file
/// The buffer planner of a step (StepPlan.h, lib/Analysis/BufferPlan.cpp),
/// shared by zero-buffer-assign, zero-report and the lowering: every
/// tensor value that needs storage of its own in a function of the step
/// (not a view, a state or a value computed in place; the function's
/// arguments too: token ids, targets and the optimizer's scalars are copied
/// from the host into arena buffers at entry, docs/codegen.md) gets a
/// byte offset in the activation arena (defined in @forward_backward before
/// the loss seed and read after it) or the temporary arena (everything
/// else, and the scratch single ops need for their duration), by a greedy
/// best-fit over live intervals (largest first; TFLite's / XLA's heap
/// simulators): values live at the same time never share a byte, values
/// whose lives are disjoint reuse them. A view extends the life of its base.
/// P_a+cpu's host slots (zero.offload_wait results) are in no arena: they
/// are laid out in program order in one pinned host block (hostSlotBytes).
///
/// `zero-buffer-assign` runs it and records the placement in the IR
/// (`zero.placement`, `zero.scratch`, `zero.arena_bytes`); the lowering uses
/// those offsets when present (checking them), else bump-allocates without
/// reuse; `zero-report` prints the planned arena bytes.
///
//===----------------------------------------------------------------------===//

#ifndef ZERO_ANALYSIS_BUFFERPLAN_H
#define ZERO_ANALYSIS_BUFFERPLAN_H

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::zero {

/// Arena bytes of one function, or of the step (max over its functions,
/// which never run at the same time).
struct ArenaBytes {
  int64_t activations = 0;
  int64_t temporaries = 0;
};

struct BufferPlan {
  /// @forward, @forward_backward, @optimizer_step, @logits that exist.
  std::vector<std::pair<std::string, ArenaBytes>> functions;
  /// Max over the functions: what the program allocates.
  ArenaBytes arenas;
  /// The model-state arenas (parameters, gradients, master weights,
  /// moments): each state's bytes rounded up to 64.
  int64_t stateArenaBytes = 0;
  /// The constants arena (train.rope_table tables, computed at init); 0
  /// when the program has none.
  int64_t constantArenaBytes = 0;
  /// What bump allocation without reuse needs (max over the functions of
  /// every value's bytes plus one scratch pool): the saving of the plan.
  ArenaBytes bumpBytes;
  /// The pinned host block of P_a+cpu's host slots (zero.offload_wait
  /// results, #zero.storage<host_slot>); 0 without them.
  int64_t hostSlotBytes = 0;
};

/// Plans the buffers of `module` (a step after zero-partition, which the
/// lowering accepts) by best fit over live intervals. With `annotate`,
/// writes the placement into the IR. Fails with the lowering's diagnostics
/// on IR it cannot lower.
FailureOr<BufferPlan> planBuffers(ModuleOp module, bool annotate,
                                  bool bump = false);

} // namespace mlir::zero

#endif // ZERO_ANALYSIS_BUFFERPLAN_H
