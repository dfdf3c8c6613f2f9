//===- Optimizer.cpp - the optimizer step's reductions to zrt calls -------===//
///
/// \file
/// Emitters of train.sum_squares (zrt_sum_squares, or its zrt_*_bf16 /
/// _f16 form on a narrow gradient: the sum in f32) and train.clip_coef
/// (zrt_clip_coef_scaled: the clipping coefficient and the norm of the
/// unscaled gradient). AdamW, and sums of squares over runs of adjacent
/// states, follow the state plan: State.cpp. Prints only; the rule of the
/// folder is in OpEmitter.h.
///
//===----------------------------------------------------------------------===//

#include "OpEmitter.h"

#include "Train/TrainOps.h"

using namespace mlir;
using namespace mlir::zero::emit;

namespace {

/// train.sum_squares -> zrt_sum_squares(x, n, out [1] f32).
struct SumSquaresEmitter : OpEmitterFor<train::SumSquaresOp> {
  LogicalResult emit(train::SumSquaresOp o, EmitContext &c,
                     bool) const override {
    Type elt = elementType(o.getInput());
    c.call(zero::narrow::isNarrowFloat(elt)
               ? zero::narrow::fn("zrt_sum_squares", elt)
               : std::string("zrt_sum_squares"),
           {c.ptr(o.getInput()), c.i64(numel(o.getInput())),
            c.ptr(o.getResult())});
    return success();
  }
};

/// train.clip_coef -> zrt_clip_coef_scaled(sum of squares, gradient scale,
/// max norm, coef out, norm out).
struct ClipCoefEmitter : OpEmitterFor<train::ClipCoefOp> {
  LogicalResult emit(train::ClipCoefOp o, EmitContext &c,
                     bool) const override {
    c.call("zrt_clip_coef_scaled",
           {c.ptr(o.getSumSquares()), c.ptr(o.getGradScale()),
            c.f32(o.getMaxNorm().convertToDouble()), c.ptr(o.getCoef()),
            c.ptr(o.getNorm())});
    return success();
  }
};

} // namespace

void mlir::zero::emit::populateOptimizerEmitters(OpEmitterSet &set) {
  set.add<train::SumSquaresOp, SumSquaresEmitter>();
  set.add<train::ClipCoefOp, ClipCoefEmitter>();
}
