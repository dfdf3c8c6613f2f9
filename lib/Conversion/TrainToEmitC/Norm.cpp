//===- Norm.cpp - layer norms to zrt calls ---------------------------------===//
///
/// \file
/// Emitters of train.layer_norm, train.add_layer_norm and
/// train.layer_norm_grad over the rows of the last dimension (GPT-2's
/// LayerNorm; RMSNorm is in Decoder.cpp). Prints only; the rule of the
/// folder is in OpEmitter.h.
///
//===----------------------------------------------------------------------===//

#include "OpEmitter.h"

#include "Train/TrainOps.h"

using namespace mlir;
using namespace mlir::zero::emit;

namespace {

/// train.layer_norm -> zrt_layer_norm(x, w, b, out, NULL, NULL, N, C, eps)
/// (the statistics are not kept: the backward recomputes them).
struct LayerNormEmitter : OpEmitterFor<train::LayerNormOp> {
  LogicalResult emit(train::LayerNormOp op, EmitContext &c,
                     bool native) const override {
    auto [n, cols] = rowsCols(op.getInput());
    c.call(kernelName("zrt_layer_norm", native),
           {c.ptr(op.getInput()), c.ptr(op.getWeight()), c.ptr(op.getBias()),
            c.ptr(op.getResult()), c.opq("NULL"), c.opq("NULL"), c.i64(n),
            c.i64(cols), c.f32(op.getEps().convertToDouble())});
    return success();
  }
};

/// train.add_layer_norm -> zrt_add_layer_norm(a, b, w, bias, sum, out,
/// NULL, NULL, N, C, eps).
struct AddLayerNormEmitter : OpEmitterFor<train::AddLayerNormOp> {
  LogicalResult emit(train::AddLayerNormOp op, EmitContext &c,
                     bool native) const override {
    auto [n, cols] = rowsCols(op.getLhs());
    c.call(kernelName("zrt_add_layer_norm", native),
           {c.ptr(op.getLhs()), c.ptr(op.getRhs()), c.ptr(op.getWeight()),
            c.ptr(op.getBias()), c.ptr(op.getSum()), c.ptr(op.getResult()),
            c.opq("NULL"), c.opq("NULL"), c.i64(n), c.i64(cols),
            c.f32(op.getEps().convertToDouble())});
    return success();
  }
};

/// train.layer_norm_grad -> zrt_layer_norm_stats into two N-float scratch
/// blocks (mean, rstd), then zrt_layer_norm_backward[_add] (with an
/// addend: the residual gradient added in the same pass).
struct LayerNormGradEmitter : OpEmitterFor<train::LayerNormGradOp> {
  LogicalResult emit(train::LayerNormGradOp op, EmitContext &c,
                     bool native) const override {
    auto [n, cols] = rowsCols(op.getInput());
    Value mean = c.scratch(), rstd = c.scratch();
    float eps = op.getEps().convertToDouble();
    c.call(kernelName("zrt_layer_norm_stats", native),
           {c.ptr(op.getInput()), mean, rstd, c.i64(n), c.i64(cols),
            c.f32(eps)});
    SmallVector<CArg> args = {c.ptr(op.getGrad()), c.ptr(op.getInput()),
                              c.ptr(op.getWeight()), mean, rstd};
    if (Value addend = op.getAddend())
      args.push_back(c.ptr(addend));
    args.append({c.ptr(op.getInputGrad()), c.ptr(op.getWeightGrad()),
                 c.ptr(op.getBiasGrad()), c.i64(n), c.i64(cols)});
    c.call(kernelName(op.getAddend() ? "zrt_layer_norm_backward_add"
                                     : "zrt_layer_norm_backward",
                      native),
           args);
    return success();
  }
};

} // namespace

void mlir::zero::emit::populateNormEmitters(OpEmitterSet &set) {
  set.add<train::LayerNormOp, LayerNormEmitter>();
  set.add<train::AddLayerNormOp, AddLayerNormEmitter>();
  set.add<train::LayerNormGradOp, LayerNormGradEmitter>();
}
