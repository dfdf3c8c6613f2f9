//===- Loss.cpp - cross-entropy to zrt calls ------------------------------===//
///
/// \file
/// Emitters of train.cross_entropy, train.cross_entropy_fused and
/// train.cross_entropy_grad over logits [N, V] whose first num_classes
/// columns are classes (the rest padding): zrt_cross_entropy_padded*, and
/// with `ignore_index` zrt_cross_entropy_masked* (runtime/include/zrt/
/// decoder.h: ignored rows count neither in the loss nor in the mean).
/// train-fuse-cross-entropy never fuses a masked loss, so the fused form
/// has no masked kernel. Prints only; the rule of the folder is in
/// OpEmitter.h.
///
//===----------------------------------------------------------------------===//

#include "OpEmitter.h"

#include "Train/TrainOps.h"

using namespace mlir;
using namespace mlir::zero::emit;

namespace {

bool isF32(Value v) { return elementType(v).isF32(); }

/// The ignore_index argument of the masked kernels (an i32 literal).
Attribute ignoreArg(EmitContext &c, int64_t ignore) {
  return c.opq("(int32_t)" + std::to_string(ignore));
}

struct CrossEntropyEmitter : OpEmitterFor<train::CrossEntropyOp> {
  // The loss is an f32 scalar in every precision.
  LogicalResult emit(train::CrossEntropyOp op, EmitContext &c,
                     bool native) const override {
    auto [n, v] = rowsCols(op.getLogits());
    SmallVector<CArg> args = {c.ptr(op.getLogits()), c.ptr(op.getTargets()),
                              c.ptr(op.getResult()), c.i64(n), c.i64(v),
                              c.i64(op.getEffectiveNumClasses())};
    if (auto ignore = op.getIgnoreIndex()) {
      args.push_back(ignoreArg(c, static_cast<int64_t>(*ignore)));
      c.call(kernelName("zrt_cross_entropy_masked", native), args);
      return success();
    }
    c.call(kernelName("zrt_cross_entropy_padded", native), args);
    return success();
  }
};

/// The loss and its gradient in one pass; the gradient overwrites the
/// logits (the op's tie, train-fuse-cross-entropy).
struct CrossEntropyFusedEmitter : OpEmitterFor<train::CrossEntropyFusedOp> {
  LogicalResult emit(train::CrossEntropyFusedOp op, EmitContext &c,
                     bool native) const override {
    auto [n, v] = rowsCols(op.getLogits());
    c.call(kernelName("zrt_cross_entropy_padded_fused", native),
           {c.ptr(op.getLogits()), c.ptr(op.getTargets()), c.ptr(op.getLoss()),
            c.f32(op.getScale().convertToDouble()), c.i64(n), c.i64(v),
            c.i64(op.getEffectiveNumClasses())});
    return success();
  }
};

struct CrossEntropyGradEmitter : OpEmitterFor<train::CrossEntropyGradOp> {
  LogicalResult emit(train::CrossEntropyGradOp op, EmitContext &c,
                     bool native) const override {
    auto [n, v] = rowsCols(op.getLogits());
    int64_t classes =
        op.getNumClasses() ? static_cast<int64_t>(*op.getNumClasses()) : v;
    SmallVector<CArg> args = {c.ptr(op.getLogits()), c.ptr(op.getTargets()),
                              c.ptr(op.getGrad()),   c.ptr(op.getResult()),
                              c.i64(n),              c.i64(v),
                              c.i64(classes)};
    if (auto ignore = op.getIgnoreIndex()) {
      args.push_back(ignoreArg(c, static_cast<int64_t>(*ignore)));
      c.call(kernelName("zrt_cross_entropy_masked_backward", native), args);
      return success();
    }
    c.call(kernelName("zrt_cross_entropy_padded_backward", native), args);
    return success();
  }
};

/// train.mse -> zrt_mse(x, target, loss, n).
struct MseEmitter : OpEmitterFor<train::MseOp> {
  LogicalResult emit(train::MseOp op, EmitContext &c, bool) const override {
    c.call("zrt_mse", {c.ptr(op.getInput()), c.ptr(op.getTarget()),
                       c.ptr(op.getResult()), c.i64(numel(op.getInput()))});
    return success();
  }
};

/// train.mse_grad -> zrt_mse_backward(x, target, dloss (host), dx, NULL,
/// n).
struct MseGradEmitter : OpEmitterFor<train::MseGradOp> {
  LogicalResult emit(train::MseGradOp op, EmitContext &c, bool) const override {
    c.call("zrt_mse_backward",
           {c.ptr(op.getInput()), c.ptr(op.getTarget()), c.scalar(op.getGrad()),
            c.ptr(op.getResult()), c.opq("NULL"), c.i64(numel(op.getInput()))});
    return success();
  }
};

} // namespace

void mlir::zero::emit::populateLossEmitters(OpEmitterSet &set) {
  set.add<train::MseOp, MseEmitter>();
  set.add<train::MseGradOp, MseGradEmitter>();
  set.add<train::CrossEntropyOp, CrossEntropyEmitter>();
  set.add<train::CrossEntropyFusedOp, CrossEntropyFusedEmitter>();
  set.add<train::CrossEntropyGradOp, CrossEntropyGradEmitter>();
}
