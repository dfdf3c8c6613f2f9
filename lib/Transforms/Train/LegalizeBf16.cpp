//===- LegalizeBf16.cpp - train-legalize-bf16 -----------------------------===//
///
/// \file
/// Widens each compute op on bf16/f16 without a native bf16 kernel to f32
/// with explicit train.cast ops (see TrainPasses.td), as upstream's
/// arith-emulate-unsupported-floats does for arith. Which ops qualify is
/// zero::needsF32Widening (lib/Analysis/Kernels.cpp, reading the ops'
/// NativeBf16KernelOpInterface), the criterion the lowering checks too.
///
//===----------------------------------------------------------------------===//

#include "zero/Analysis/Kernels.h"
#include "zero/Analysis/NarrowFloat.h"
#include "zero/Analysis/StepPlan.h"
#include "zero/Transforms/Passes.h"

#include "Train/TrainOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::zero {
#define GEN_PASS_DEF_TRAINLEGALIZEBF16
#include "zero/Transforms/TrainPasses.h.inc"
} // namespace mlir::zero

using namespace mlir;

namespace {

/// Whether `v` is a bf16 or f16 tensor.
bool isNarrowTensor(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && zero::narrow::isNarrowFloat(t.getElementType());
}

/// The f32 tensor of `v`'s shape.
RankedTensorType widened(Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  return t.clone(Float32Type::get(v.getContext()));
}

struct TrainLegalizeBf16Pass
    : public zero::impl::TrainLegalizeBf16Base<TrainLegalizeBf16Pass> {
  using Base::Base;

  void runOnOperation() override {
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      // A function with its buffers assigned keeps the ops it was planned
      // with.
      if (fn.isExternal() || fn->hasAttr(zero::plan::kArenaBytesAttr))
        continue;
      SmallVector<Operation *> ops;
      fn.walk([&](Operation *op) {
        if (zero::needsF32Widening(op))
          ops.push_back(op);
      });
      for (Operation *op : ops)
        widen(op);
    }
  }

  /// Casts the narrow operands of `op` to f32 before it (one cast per
  /// distinct value), computes its narrow results in f32 and rounds them
  /// back after it for the op's uses.
  void widen(Operation *op) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    DenseMap<Value, Value> wide;
    for (OpOperand &use : op->getOpOperands()) {
      Value v = use.get();
      if (!isNarrowTensor(v))
        continue;
      auto [it, inserted] = wide.try_emplace(v);
      if (inserted) {
        it->second = train::CastOp::create(b, loc, widened(v), v);
        ++numCasts;
      }
      use.set(it->second);
    }
    b.setInsertionPointAfter(op);
    for (OpResult r : op->getResults()) {
      if (!isNarrowTensor(r))
        continue;
      Type narrowType = r.getType();
      r.setType(widened(r));
      auto back = train::CastOp::create(b, loc, narrowType, r);
      r.replaceAllUsesExcept(back.getResult(), back.getOperation());
      ++numCasts;
    }
    ++numWidened;
  }
};

} // namespace
