//===- PlaceProgress.cpp - zero-place-progress ------------------------------===//
///
/// \file
/// Puts `zero.progress` after the compute ops that run while a nonblocking
/// collective is in flight, so the lowering only prints them; see
/// ZeroPasses.td.
///
//===----------------------------------------------------------------------===//

#include "zero/Transforms/Passes.h"

#include "Train/TrainDialect.h"
#include "Zero/ZeroDialect.h"
#include "Zero/ZeroOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROPLACEPROGRESS
#include "zero/Transforms/ZeroPasses.h.inc"
} // namespace mlir::zero

using namespace mlir;

namespace {
struct ZeroPlaceProgressPass
    : public zero::impl::ZeroPlaceProgressBase<ZeroPlaceProgressPass> {
  using Base::Base;

  void runOnOperation() override {
    if (interval < 0) {
      getOperation().emitError()
          << "zero-place-progress: interval must be >= 0 (got "
          << static_cast<int64_t>(interval)
          << ")";
      return signalPassFailure();
    }
    if (interval == 0)
      return markAllAnalysesPreserved();
    for (auto fn : getOperation().getOps<func::FuncOp>())
      for (Block &block : fn.getBody())
        placeIn(block);
  }

  /// One pass over `block` in program order: `inFlight` counts the starts
  /// not yet waited for (starts and waits pair up in one block: the
  /// zero.wait verifier and zero-prefetch check it).
  void placeIn(Block &block) {
    int64_t inFlight = 0, sinceLast = 0;
    OpBuilder b(&getContext());
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (isa<zero::AllGatherStartOp, zero::ReduceScatterStartOp,
              zero::AllReduceStartOp>(op)) {
        ++inFlight;
        continue;
      }
      if (isa<zero::WaitOp>(op)) {
        if (--inFlight == 0)
          sinceLast = 0;
        continue;
      }
      if (isa<zero::ProgressOp>(op)) {
        sinceLast = 0;
        continue;
      }
      if (inFlight <= 0 || !train::isComputeOp(&op) || ++sinceLast < interval)
        continue;
      sinceLast = 0;
      Operation *next = op.getNextNode();
      if (next && isa<zero::ProgressOp>(next))
        continue; // already placed (a second run of the pass)
      b.setInsertionPointAfter(&op);
      zero::ProgressOp::create(b, op.getLoc());
      ++numProgress;
    }
  }
};
} // namespace
