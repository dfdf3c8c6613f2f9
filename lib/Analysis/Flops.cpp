//===- Flops.cpp - model FLOPs of a training step --------------------------===//

#include "zero/Analysis/Flops.h"

#include "Train/TrainOps.h"

using namespace mlir;

/// 2 · numel(result) · K for a (batched) product whose result is `result`
/// and whose `a` operand (before its optional transpose) is `a`.
static double productFlops(Value a, bool transposeA, Value result) {
  auto aType = cast<RankedTensorType>(a.getType());
  auto rType = cast<RankedTensorType>(result.getType());
  int64_t rank = aType.getRank();
  int64_t k = aType.getDimSize(transposeA ? rank - 2 : rank - 1);
  return 2.0 * double(rType.getNumElements()) * double(k);
}

double mlir::zero::matmulFlops(func::FuncOp fn) {
  double total = 0;
  fn.walk([&](Operation *op) {
    if (auto mm = dyn_cast<train::MatmulOp>(op)) {
      total += productFlops(mm.getA(), mm.getTransposeA(), mm.getResult());
    } else if (auto mg = dyn_cast<train::MatmulGeluOp>(op)) {
      total += productFlops(mg.getA(), mg.getTransposeA(), mg.getResult());
    } else if (auto at = dyn_cast<train::CausalAttentionOp>(op)) {
      // result [B, H, T, D]: q·kᵀ (2·T·T·D per head) and p·v (the same).
      auto t = cast<RankedTensorType>(at.getResult().getType());
      double seq = double(t.getDimSize(2));
      total += 4.0 * double(t.getNumElements()) * seq;
    } else if (auto ap = dyn_cast<train::CausalAttentionPackedOp>(op)) {
      // result [B, T, C]: the same over the heads side by side.
      auto t = cast<RankedTensorType>(ap.getResult().getType());
      double seq = double(t.getDimSize(1));
      total += 4.0 * double(t.getNumElements()) * seq;
    }
  });
  return total;
}

double mlir::zero::modelFlopsPerMicroBatch(ModuleOp module) {
  auto fwd = module.lookupSymbol<func::FuncOp>("forward");
  return fwd ? 3.0 * matmulFlops(fwd) : 0.0;
}
