//===- FuseLayerNorm.cpp - train-fuse-layer-norm: residual adds -----------===//
///
/// \file
/// Fuses residual adds into the layer norms next to them, forward and
/// backward (see TrainPasses.td).
///
//===----------------------------------------------------------------------===//

#include "zero/Transforms/Passes.h"

#include "Fusion.h"
#include "Train/TrainOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::zero {
#define GEN_PASS_DEF_TRAINFUSELAYERNORM
#include "zero/Transforms/TrainPasses.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::train;

using zero::fusion::availableBefore;

namespace {

struct TrainFuseLayerNormPass
    : public zero::impl::TrainFuseLayerNormBase<TrainFuseLayerNormPass> {
  using Base::Base;
  void runOnOperation() override;
};

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
  // A sum that is also the weight or bias (rank-1 rows) would become an
  // operand of its own op.
  if (!add || add->getBlock() != norm->getBlock() ||
      norm.getWeight() == add.getResult() || norm.getBias() == add.getResult())
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
  // Backward first: a forward fusion erases adds, and the adds a backward
  // fusion erases are the gradient sums no layer norm reads.
  auto [first, second] = zero::fusion::fuseAll<AddOp, LayerNormOp>(
      getOperation(), fuseBackward, fuseForward);
  numBackward += first;
  numForward += second;
}
