//===- BufferAssign.cpp - zero-buffer-assign --------------------------------===//
///
/// \file
/// Static buffer assignment, the single owner of storage: runs the buffer
/// planner (include/zero/Analysis/BufferPlan.h: liveness, aliases, the
/// placement choices, greedy best fit per arena) and records a
/// #zero.storage for every value, which convert-train-to-emitc only reads.
/// See ZeroPasses.td.
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
    if (strategy != "best-fit" && strategy != "bump") {
      getOperation().emitError("zero-buffer-assign: strategy must be "
                               "best-fit or bump, not '")
          << strategy << "'";
      return signalPassFailure();
    }
    FailureOr<zero::BufferPlan> plan = zero::planBuffers(
        getOperation(), /*annotate=*/true, /*bump=*/strategy == "bump");
    if (failed(plan))
      return signalPassFailure();
    activationBytes = plan->arenas.activations;
    temporaryBytes = plan->arenas.temporaries;
    bumpTemporaryBytes = plan->bumpBytes.temporaries;
    markAllAnalysesPreserved();
  }
};
} // namespace
