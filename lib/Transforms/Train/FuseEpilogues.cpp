//===- FuseEpilogues.cpp - train-fuse-epilogues: GELU into GEMMs ----------===//
///
/// \file
/// Fuses `train.gelu` and `train.gelu_grad` with the matmuls next to them
/// (see TrainPasses.td).
///
//===----------------------------------------------------------------------===//

#include "zero/Transforms/Passes.h"

#include "Fusion.h"
#include "Train/TrainOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::zero {
#define GEN_PASS_DEF_TRAINFUSEEPILOGUES
#include "zero/Transforms/TrainPasses.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::train;

using zero::fusion::availableBefore;

namespace {

struct TrainFuseEpiloguesPass
    : public zero::impl::TrainFuseEpiloguesBase<TrainFuseEpiloguesPass> {
  using Base::Base;
  void runOnOperation() override;
};

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
  // The two rewrites touch disjoint matmuls (a fused backward matmul has
  // one use, a gelu_grad's grad): either order gives the same IR.
  auto [first, second] = zero::fusion::fuseAll<GeluGradOp, GeluOp>(
      getOperation(), fuseGeluGrad, fuseGelu);
  numGeluGrad += first;
  numGelu += second;
}
