//===- Elementwise.cpp - elementwise ops and softmax to zrt calls ---------===//
///
/// \file
/// Emitters of the elementwise train ops (one zrt_X(inputs..., out, n) call
/// over the elements) and of softmax (rows of the last dimension). Prints
/// only; the rule of the folder is in OpEmitter.h.
///
//===----------------------------------------------------------------------===//

#include "OpEmitter.h"

#include "Train/TrainOps.h"

#include <string>

using namespace mlir;
using namespace mlir::zero::emit;

namespace {

/// zrt_X(operands..., result, n) over the result's n elements (zrt_X_bf16
/// where the op runs natively in bf16: zero/Analysis/Kernels.h).
template <typename OpTy> struct ElementwiseEmitter : OpEmitterFor<OpTy> {
  explicit ElementwiseEmitter(std::string kernel)
      : kernel(std::move(kernel)) {}
  LogicalResult emit(OpTy op, EmitContext &c, bool native) const override {
    SmallVector<CArg> args;
    for (Value v : op->getOperands())
      args.push_back(c.ptr(v));
    args.append({c.ptr(op.getResult()), c.i64(numel(op.getResult()))});
    c.call(kernelName(kernel, native), args);
    return success();
  }
  std::string kernel;
};

/// train.scale -> zrt_scale(x, factor, out, n).
struct ScaleEmitter : OpEmitterFor<train::ScaleOp> {
  LogicalResult emit(train::ScaleOp op, EmitContext &c, bool) const override {
    c.call("zrt_scale", {c.ptr(op.getInput()),
                         c.f32(op.getFactor().convertToDouble()),
                         c.ptr(op.getResult()), c.i64(numel(op.getResult()))});
    return success();
  }
};

/// train.softmax -> zrt_softmax(x, out, rows, cols).
struct SoftmaxEmitter : OpEmitterFor<train::SoftmaxOp> {
  LogicalResult emit(train::SoftmaxOp op, EmitContext &c, bool) const override {
    auto [n, cols] = rowsCols(op.getInput());
    c.call("zrt_softmax", {c.ptr(op.getInput()), c.ptr(op.getResult()),
                           c.i64(n), c.i64(cols)});
    return success();
  }
};

/// train.softmax_grad -> zrt_softmax_backward(y, dy, dx, rows, cols).
struct SoftmaxGradEmitter : OpEmitterFor<train::SoftmaxGradOp> {
  LogicalResult emit(train::SoftmaxGradOp op, EmitContext &c,
                     bool) const override {
    auto [n, cols] = rowsCols(op.getOutput());
    c.call("zrt_softmax_backward",
           {c.ptr(op.getOutput()), c.ptr(op.getGrad()), c.ptr(op.getResult()),
            c.i64(n), c.i64(cols)});
    return success();
  }
};

} // namespace

void mlir::zero::emit::populateElementwiseEmitters(OpEmitterSet &set) {
  set.add<train::AddOp, ElementwiseEmitter<train::AddOp>>("zrt_add");
  set.add<train::MulOp, ElementwiseEmitter<train::MulOp>>("zrt_mul");
  set.add<train::GeluOp, ElementwiseEmitter<train::GeluOp>>("zrt_gelu");
  set.add<train::ReluOp, ElementwiseEmitter<train::ReluOp>>("zrt_relu");
  set.add<train::GeluGradOp, ElementwiseEmitter<train::GeluGradOp>>(
      "zrt_gelu_backward");
  set.add<train::ReluGradOp, ElementwiseEmitter<train::ReluGradOp>>(
      "zrt_relu_backward");
  set.add<train::ScaleOp, ScaleEmitter>();
  set.add<train::SoftmaxOp, SoftmaxEmitter>();
  set.add<train::SoftmaxGradOp, SoftmaxGradEmitter>();
}
