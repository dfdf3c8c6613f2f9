//===- FuseAdamWCast.cpp - train-fuse-adamw-cast --------------------------===//
///
/// \file
/// Marks the f32 -> bf16 casts of AdamW results that the AdamW call writes
/// itself (`zero.written_by_adamw`; see TrainPasses.td). The criteria are
/// the step plan's (zero::plan::FunctionPlan::canFoldCast, lib/Analysis),
/// which the lowering checks again for every mark.
///
//===----------------------------------------------------------------------===//

#include "zero/Analysis/StepPlan.h"
#include "zero/Transforms/Passes.h"

#include "Zero/ZeroDialect.h"

namespace mlir::zero {
#define GEN_PASS_DEF_TRAINFUSEADAMWCAST
#include "zero/Transforms/TrainPasses.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero::plan;

namespace {

struct TrainFuseAdamWCastPass
    : public zero::impl::TrainFuseAdamWCastBase<TrainFuseAdamWCastPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The criteria read only the function's own loads and stores (load
    // copies, store forwarding, state accesses): no module analysis, no
    // model.h contract, no state layout needed.
    ModulePlan mp(module);
    UnitAttr unit = UnitAttr::get(&getContext());
    for (auto fn : module.getOps<func::FuncOp>()) {
      // A function with its buffers assigned keeps the casts it was
      // planned with.
      if (fn.isExternal() || !fn.getBody().hasOneBlock() ||
          fn->hasAttr(kArenaBytesAttr))
        continue;
      FunctionPlan fp(mp, fn, Role::OptimizerStep);
      for (train::CastOp cast : fp.foldableAdamWCasts()) {
        if (cast->hasAttr(zero::ZeroDialect::kWrittenByAdamWAttrName))
          continue;
        cast->setAttr(zero::ZeroDialect::kWrittenByAdamWAttrName, unit);
        ++numFolded;
      }
    }
  }
};

} // namespace
