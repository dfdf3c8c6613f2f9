//===- FuseCrossEntropy.cpp - train-fuse-cross-entropy --------------------===//
///
/// \file
/// Fuses the loss and its gradient into one train.cross_entropy_fused whose
/// gradient overwrites the logits (see TrainPasses.td).
///
//===----------------------------------------------------------------------===//

#include "zero/Transforms/Passes.h"

#include "Train/TrainOps.h"
#include "Zero/ZeroOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::zero {
#define GEN_PASS_DEF_TRAINFUSECROSSENTROPY
#include "zero/Transforms/TrainPasses.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::train;

namespace {

struct TrainFuseCrossEntropyPass
    : public zero::impl::TrainFuseCrossEntropyBase<TrainFuseCrossEntropyPass> {
  using Base::Base;
  void runOnOperation() override;
};

/// The columns a cross_entropy_grad takes part in.
int64_t effectiveClasses(CrossEntropyGradOp g) {
  return g.getNumClasses() ? static_cast<int64_t>(*g.getNumClasses())
                           : g.getType().getDimSize(1);
}

/// Whether the logits `root` (the value under its train.reshape views) may
/// hold the gradient: computed in this block into a buffer of its own (not
/// a state, a view of another value, a collective's or AdamW's result), and
/// read only by `ce` and `g` (and views).
bool logitsFree(Value root, Operation *ce, Operation *g) {
  Operation *def = root.getDefiningOp();
  if (!def || def->getBlock() != g->getBlock() ||
      isa<LoadOp, zero::ShardLoadOp, zero::UnpackOp, zero::SplitOp,
          zero::WaitOp, AdamWOp, zero::ShardAdamWOp>(def))
    return false;
  SmallVector<Value> views{root};
  for (unsigned i = 0; i < views.size(); ++i)
    for (Operation *user : views[i].getUsers()) {
      if (auto r = dyn_cast<ReshapeOp>(user))
        views.push_back(r.getResult());
      else if (user != ce && user != g)
        return false;
    }
  return true;
}

/// Whether the gradient would rather be computed elsewhere: in a state
/// (stored once, store forwarding) or in its slot of a zero.pack.
bool gradientHasAHome(Value grad) {
  if (!grad.hasOneUse())
    return false;
  Operation *user = *grad.getUsers().begin();
  return isa<StoreOp, zero::ShardStoreOp, zero::PackOp>(user);
}

/// cross_entropy + cross_entropy_grad (seeded by a constant) →
/// cross_entropy_fused at the loss. Returns whether it fused.
bool fuse(CrossEntropyGradOp g) {
  Block *block = g->getBlock();
  auto seed = g.getGrad().getDefiningOp<FillOp>();
  if (!seed || seed->getBlock() != block)
    return false;
  CrossEntropyOp ce;
  for (Operation *user : g.getLogits().getUsers())
    if (auto c = dyn_cast<CrossEntropyOp>(user))
      if (c->getBlock() == block && c->isBeforeInBlock(g) &&
          c.getTargets() == g.getTargets() &&
          c.getEffectiveNumClasses() == effectiveClasses(g))
        ce = c;
  // The fused kernel has no ignored rows.
  if (!ce || ce.getIgnoreIndex() || g.getIgnoreIndex())
    return false;
  Type elt = g.getLogits().getType().getElementType();
  if (!elt.isF32() && !elt.isBF16())
    return false;
  Value root = g.getLogits();
  while (auto r = root.getDefiningOp<ReshapeOp>())
    root = r.getInput();
  if (!logitsFree(root, ce, g) || gradientHasAHome(g.getResult()))
    return false;

  OpBuilder b(ce);
  auto fused = CrossEntropyFusedOp::create(
      b, ce.getLoc(), ce.getType(), g.getType(), ce.getLogits(),
      ce.getTargets(), b.getF64FloatAttr(seed.getValue().convertToDouble()),
      ce.getNumClassesAttr());
  // Keep what autodiff and the other passes attached (the loss seed is on
  // the fill, which stays: it marks the forward/backward boundary).
  for (NamedAttribute a : ce->getDiscardableAttrs())
    fused->setAttr(a.getName(), a.getValue());
  ce.getResult().replaceAllUsesWith(fused.getLoss());
  g.getResult().replaceAllUsesWith(fused.getGrad());
  g->erase();
  ce->erase();
  return true;
}

void TrainFuseCrossEntropyPass::runOnOperation() {
  SmallVector<CrossEntropyGradOp> grads;
  getOperation()->walk([&](CrossEntropyGradOp g) { grads.push_back(g); });
  for (CrossEntropyGradOp g : grads)
    if (fuse(g))
      ++numFused;
}

} // namespace
