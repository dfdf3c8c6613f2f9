//===- FuseStateRuns.cpp - zero-fuse-state-runs ---------------------------===//
///
/// \file
/// Marks the runs of zero fills into back-to-back states that one call
/// zeroes, of AdamW updates of back-to-back states that one call updates,
/// and of gradient-norm sums over back-to-back gradients that one call sums
/// (`zero.state_run`; see ZeroPasses.td). The criteria are the step plan's
/// (zero::plan::FunctionPlan::fillRunCandidates, adamwRunCandidates and
/// sumSquaresCandidates, lib/Analysis), which the lowering checks again for
/// every marked run.
///
//===----------------------------------------------------------------------===//

#include "zero/Analysis/StepPlan.h"
#include "zero/Transforms/Passes.h"

#include "Zero/ZeroDialect.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROFUSESTATERUNS
#include "zero/Transforms/ZeroPasses.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero::plan;

namespace {

struct ZeroFuseStateRunsPass
    : public zero::impl::ZeroFuseStateRunsBase<ZeroFuseStateRunsPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    ModulePlan mp(module);
    if (failed(mp.analyzeStates()))
      return signalPassFailure();
    StringRef name = zero::ZeroDialect::kStateRunAttrName;
    for (auto fn : module.getOps<func::FuncOp>()) {
      // A function with its buffers assigned keeps the runs it was planned
      // with, and so does one marked already (idempotent).
      if (fn.isExternal() || !fn.getBody().hasOneBlock() ||
          fn->hasAttr(kArenaBytesAttr))
        continue;
      bool marked = false;
      fn.walk([&](Operation *op) { marked |= op->hasAttr(name); });
      if (marked)
        continue;
      int64_t id = 0;
      auto mark = [&](ArrayRef<Operation *> run) {
        IntegerAttr attr =
            IntegerAttr::get(IntegerType::get(&getContext(), 64), id++);
        for (Operation *op : run)
          op->setAttr(name, attr);
      };
      FunctionPlan fills(mp, fn, Role::OptimizerStep);
      for (const SmallVector<train::FillOp> &run : fills.foldableFillRuns()) {
        mark(llvm::to_vector(llvm::map_range(
            run, [](train::FillOp f) -> Operation * { return f; })));
        ++numFillRuns;
        numFills += run.size();
      }
      FunctionPlan updates(mp, fn, Role::OptimizerStep);
      for (const SmallVector<train::AdamWOp> &run :
           updates.foldableAdamWRuns()) {
        mark(llvm::to_vector(llvm::map_range(
            run, [](train::AdamWOp a) -> Operation * { return a; })));
        ++numAdamWRuns;
        numAdamW += run.size();
      }
      // Sums of squares only in the gradient norm (the optimizer step).
      FunctionPlan norms(mp, fn,
                         fn.getSymName() == "optimizer_step"
                             ? Role::OptimizerStep
                             : Role::ForwardBackward);
      for (const SmallVector<Operation *> &run : norms.foldableSumSquaresRuns()) {
        mark(run);
        ++numSumSquaresRuns;
      }
    }
  }
};

} // namespace
