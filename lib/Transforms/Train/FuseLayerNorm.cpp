//===- FuseLayerNorm.cpp - train-fuse-layer-norm: residual adds -----------===//
///
/// \file
/// Fuses residual adds into the layer norms next to them, forward and
/// backward (see TrainPasses.td).
///
//===----------------------------------------------------------------------===//

#include "zero/Transforms/Passes.h"

#include "Train/TrainOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::zero {
#define GEN_PASS_DEF_TRAINFUSELAYERNORM
#include "zero/Transforms/TrainPasses.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::train;

namespace {

struct TrainFuseLayerNormPass
    : public zero::impl::TrainFuseLayerNormBase<TrainFuseLayerNormPass> {
  using Base::Base;
  void runOnOperation() override;
};

/// Whether `v` is available right before `op`: an argument of an enclosing
/// block, or defined by an op before `op` in its block.
bool availableBefore(Value v, Operation *op) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return v.getParentRegion()->isAncestor(op->getParentRegion());
  return def->getBlock() == op->getBlock() && def->isBeforeInBlock(op);
}

/// Whether every use of `v` other than by `except` is after `op` (in `op`'s
/// block, counting a use inside a nested region at its ancestor there).
bool usedOnlyAfter(Value v, Operation *op, Operation *except) {
  for (Operation *user : v.getUsers()) {
    if (user == except)
      continue;
    Operation *at = op->getBlock()->findAncestorOpInBlock(*user);
    if (!at || !op->isBeforeInBlock(at))
      return false;
  }
  return true;
}

/// add + layer_norm → add_layer_norm. Returns whether it fused.
bool fuseForward(LayerNormOp norm) {
  auto add = norm.getInput().getDefiningOp<AddOp>();
  if (!add || add->getBlock() != norm->getBlock())
    return false;
  Operation *at = nullptr;
  if (availableBefore(norm.getWeight(), add) &&
      availableBefore(norm.getBias(), add))
    at = add;
  else if (usedOnlyAfter(add.getResult(), norm, norm))
    at = norm;
  if (!at)
    return false;
  OpBuilder b(at);
  auto fused = AddLayerNormOp::create(
      b, norm.getLoc(), add.getType(), norm.getType(), add.getLhs(),
      add.getRhs(), norm.getWeight(), norm.getBias(), norm.getEpsAttr());
  norm.getResult().replaceAllUsesWith(fused.getResult());
  norm.erase();
  add.getResult().replaceAllUsesWith(fused.getSum());
  add.erase();
  return true;
}

/// add(layer_norm_grad's input gradient, other) → layer_norm_grad ... plus
/// other. Returns whether it fused.
bool fuseBackward(AddOp add) {
  for (unsigned i = 0; i < 2; ++i) {
    auto grad = add->getOperand(i).getDefiningOp<LayerNormGradOp>();
    Value other = add->getOperand(1 - i);
    if (!grad || grad.getAddend() || grad->getBlock() != add->getBlock() ||
        add->getOperand(i) != grad.getInputGrad() ||
        !grad.getInputGrad().hasOneUse() || !availableBefore(other, grad))
      continue;
    OpBuilder b(grad);
    auto fused = LayerNormGradOp::create(
        b, grad.getLoc(), grad->getResultTypes(), grad.getInput(),
        grad.getWeight(), grad.getGrad(), other, grad.getEpsAttr());
    add.getResult().replaceAllUsesWith(fused.getInputGrad());
    add.erase();
    grad.getWeightGrad().replaceAllUsesWith(fused.getWeightGrad());
    grad.getBiasGrad().replaceAllUsesWith(fused.getBiasGrad());
    grad.erase();
    return true;
  }
  return false;
}

} // namespace

void TrainFuseLayerNormPass::runOnOperation() {
  SmallVector<LayerNormOp> norms;
  SmallVector<AddOp> adds;
  getOperation()->walk([&](Operation *op) {
    if (auto n = dyn_cast<LayerNormOp>(op))
      norms.push_back(n);
    else if (auto a = dyn_cast<AddOp>(op))
      adds.push_back(a);
  });
  // Backward first: a forward fusion erases adds, and the adds a backward
  // fusion erases are the gradient sums no layer norm reads.
  for (AddOp a : adds)
    if (fuseBackward(a))
      ++numBackward;
  for (LayerNormOp n : norms)
    if (fuseForward(n))
      ++numForward;
}
