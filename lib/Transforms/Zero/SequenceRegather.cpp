//===- SequenceRegather.cpp - zero-sequence-regather ----------------------===//
///
/// \file
/// Keeps the token rows, not the gathered activation, for the backward:
/// each `zero.sp_gather` of the forward whose whole result the backward
/// reads is issued again right before its first backward reader, which
/// then reads the new gather (Korthikanti et al., arXiv 2205.05198, §4.2.2:
/// the all-gather of the column-parallel input is repeated in the
/// backward). See ZeroPasses.td.
///
//===----------------------------------------------------------------------===//

#include "zero/Transforms/Passes.h"

#include "Zero/ZeroOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROSEQUENCEREGATHER
#include "zero/Transforms/ZeroPasses.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

namespace {
struct ZeroSequenceRegatherPass
    : public zero::impl::ZeroSequenceRegatherBase<ZeroSequenceRegatherPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto fn = module.lookupSymbol<func::FuncOp>(stepFunction);
    if (!fn || fn.isExternal()) {
      module.emitError() << "zero-sequence-regather: no function named '"
                         << stepFunction << "' (run train-autodiff first)";
      return signalPassFailure();
    }
    Block &body = fn.getBody().front();
    Operation *seed = findLossSeed(body);
    if (!seed) {
      fn.emitError() << "zero-sequence-regather: '" << stepFunction
                     << "' has no backward (no train.loss_seed)";
      return signalPassFailure();
    }
    SmallVector<SequenceGatherOp> forward;
    for (Operation &op : body) {
      if (&op == seed)
        break;
      if (auto g = dyn_cast<SequenceGatherOp>(op))
        forward.push_back(g);
    }
    for (SequenceGatherOp g : forward) {
      SmallVector<OpOperand *> late;
      Operation *first = nullptr;
      for (OpOperand &use : g.getResult().getUses()) {
        Operation *user = body.findAncestorOpInBlock(*use.getOwner());
        // A return is not a backward reader: the value lives to the end.
        if (!user || !seed->isBeforeInBlock(user) ||
            user->hasTrait<OpTrait::IsTerminator>())
          continue;
        late.push_back(&use);
        if (!first || user->isBeforeInBlock(first))
          first = user;
      }
      if (late.empty())
        continue;
      OpBuilder b(first);
      Operation *again = b.clone(*g);
      for (OpOperand *use : late)
        use->set(again->getResult(0));
      ++numRegathered;
    }
  }
};
} // namespace
