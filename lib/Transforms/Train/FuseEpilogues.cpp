//===- FuseEpilogues.cpp - train-fuse-epilogues: GELU into GEMMs ----------===//
///
/// \file
/// Fuses `train.gelu` and `train.gelu_grad` with the matmuls next to them
/// (see TrainPasses.td).
///
//===----------------------------------------------------------------------===//

#include "zero/Transforms/Passes.h"

#include "Train/TrainOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::zero {
#define GEN_PASS_DEF_TRAINFUSEEPILOGUES
#include "zero/Transforms/TrainPasses.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::train;

namespace {

struct TrainFuseEpiloguesPass
    : public zero::impl::TrainFuseEpiloguesBase<TrainFuseEpiloguesPass> {
  using Base::Base;
  void runOnOperation() override;
};

/// Whether `v` is available right before `op`: a value of an enclosing
/// block argument, or one defined by an op before `op` in its block.
bool availableBefore(Value v, Operation *op) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return v.getParentRegion()->isAncestor(op->getParentRegion());
  return def->getBlock() == op->getBlock() && def->isBeforeInBlock(op);
}

/// matmul + gelu → matmul_gelu. Returns whether it fused.
bool fuseGelu(GeluOp gelu) {
  auto mm = gelu.getInput().getDefiningOp<MatmulOp>();
  if (!mm || mm->getBlock() != gelu->getBlock())
    return false;
  OpBuilder b(mm);
  auto fused = MatmulGeluOp::create(
      b, mm.getLoc(), mm.getType(), gelu.getType(), mm.getA(), mm.getB(),
      mm.getBias(), mm.getTransposeAAttr(), mm.getTransposeBAttr());
  gelu.getResult().replaceAllUsesWith(fused.getResult());
  gelu.erase();
  mm.getResult().replaceAllUsesWith(fused.getPre());
  mm.erase();
  return true;
}

/// matmul (one use, no bias) + gelu_grad → matmul_gelu_grad. Returns
/// whether it fused.
bool fuseGeluGrad(GeluGradOp grad) {
  auto mm = grad.getGrad().getDefiningOp<MatmulOp>();
  if (!mm || mm.getBias() || !mm.getResult().hasOneUse() ||
      mm->getBlock() != grad->getBlock())
    return false;
  Value pre = grad.getInput();
  // At the matmul's place the product is never live unfused; the GELU
  // input may however be computed after it (a recomputed block).
  OpBuilder b(availableBefore(pre, mm) ? mm.getOperation()
                                       : grad.getOperation());
  auto fused = MatmulGeluGradOp::create(
      b, grad.getLoc(), grad.getType(), mm.getA(), mm.getB(), pre,
      mm.getTransposeAAttr(), mm.getTransposeBAttr());
  grad.getResult().replaceAllUsesWith(fused.getResult());
  grad.erase();
  mm.erase();
  return true;
}

} // namespace

void TrainFuseEpiloguesPass::runOnOperation() {
  SmallVector<GeluOp> gelus;
  SmallVector<GeluGradOp> grads;
  getOperation()->walk([&](Operation *op) {
    if (auto g = dyn_cast<GeluOp>(op))
      gelus.push_back(g);
    else if (auto g = dyn_cast<GeluGradOp>(op))
      grads.push_back(g);
  });
  // The two rewrites touch disjoint matmuls (a fused backward matmul has
  // one use, a gelu_grad's grad): either order gives the same IR.
  for (GeluGradOp g : grads)
    if (fuseGeluGrad(g))
      ++numGeluGrad;
  for (GeluOp g : gelus)
    if (fuseGelu(g))
      ++numGelu;
}
