//===- BufferAssign.cpp - zero-buffer-assign --------------------------------===//
///
/// \file
/// Static buffer assignment: runs the lowering's buffer planner
/// (include/zero/Analysis/BufferPlan.h: liveness, aliases, greedy best fit
/// per arena) and records the placement in the IR for
/// convert-train-to-emitc. See ZeroPasses.td.
///
//===----------------------------------------------------------------------===//

#include "zero/Analysis/BufferPlan.h"
#include "zero/Transforms/Passes.h"

#include "Zero/ZeroDialect.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROBUFFERASSIGN
#include "zero/Transforms/ZeroPasses.h.inc"
} // namespace mlir::zero

using namespace mlir;

namespace {
struct ZeroBufferAssignPass
    : public zero::impl::ZeroBufferAssignBase<ZeroBufferAssignPass> {
  using Base::Base;
  void runOnOperation() override {
    FailureOr<zero::BufferPlan> plan =
        zero::planBuffers(getOperation(), /*annotate=*/true);
    if (failed(plan))
      return signalPassFailure();
    activationBytes = plan->arenas.activations;
    temporaryBytes = plan->arenas.temporaries;
    bumpTemporaryBytes = plan->bumpBytes.temporaries;
    markAllAnalysesPreserved();
  }
};
} // namespace
