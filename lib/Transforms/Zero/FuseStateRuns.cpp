//===- FuseStateRuns.cpp - zero-fuse-state-runs ---------------------------===//
///
/// \file
/// Marks the runs of zero fills into back-to-back states that one call
/// zeroes (`zero.state_run`; see ZeroPasses.td). The criteria are the step
/// plan's (zero::plan::FunctionPlan::fillRunCandidates, lib/Analysis),
/// which the lowering checks again for every marked run.
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
      fn.walk([&](train::FillOp f) { marked |= f->hasAttr(name); });
      if (marked)
        continue;
      FunctionPlan fp(mp, fn, Role::OptimizerStep);
      int64_t id = 0;
      for (const SmallVector<train::FillOp> &run : fp.foldableFillRuns()) {
        IntegerAttr attr = IntegerAttr::get(IntegerType::get(&getContext(), 64), id++);
        for (train::FillOp f : run)
          f->setAttr(name, attr);
        ++numFillRuns;
        numFills += run.size();
      }
    }
  }
};

} // namespace
