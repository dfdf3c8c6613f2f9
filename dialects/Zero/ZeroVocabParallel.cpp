//===- ZeroVocabParallel.cpp - vocabulary-parallel ops ---------------------===//
///
/// \file
/// Verifiers and gradient rules of the vocabulary-parallel embedding and
/// cross-entropy ops (ZeroVocabParallelOps.td).
///
//===----------------------------------------------------------------------===//

#include "Zero/ZeroOps.h"

#include "Train/TrainOps.h"

using namespace mlir;
using namespace mlir::zero;

namespace {

/// Checks that `logits` is [N, Vl] and `targets` (when given) is [N]; N
/// into *rows.
LogicalResult checkRows(Operation *op, RankedTensorType logits,
                        RankedTensorType targets, int64_t *rows) {
  if (logits.getRank() != 2)
    return op->emitOpError("logits must be [N, Vl], got ") << logits;
  *rows = logits.getDimSize(0);
  if (targets && (targets.getRank() != 1 || targets.getDimSize(0) != *rows))
    return op->emitOpError("targets must be [")
           << *rows << "] (one per logits row), got " << targets;
  return success();
}

/// Checks that `v` is [rows] (or [rows, cols] when cols > 0) f32; `what`
/// names it.
LogicalResult checkF32(Operation *op, Value v, StringRef what, int64_t rows,
                       int64_t cols = 0) {
  auto t = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> want{rows};
  if (cols > 0)
    want.push_back(cols);
  if (t.getShape() != ArrayRef<int64_t>(want) || !t.getElementType().isF32())
    return op->emitOpError() << what << " must be "
                             << RankedTensorType::get(
                                    want, Float32Type::get(op->getContext()))
                             << ", got " << t;
  return success();
}

/// The classes must lie within the whole vocabulary Vl · size.
LogicalResult checkClasses(Operation *op, int64_t vl, int64_t size,
                           int64_t classes) {
  if (classes > vl * size)
    return op->emitOpError("num_classes ")
           << classes << " exceeds the whole vocabulary " << vl << " x "
           << size << " = " << vl * size;
  return success();
}

} // namespace

LogicalResult VocabEmbeddingOp::verify() {
  return train::verifyEmbeddingShapes(*this, getTable().getType(),
                                      getIds().getType(), getType(), "Vl");
}

LogicalResult
VocabEmbeddingOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                ArrayRef<bool> needGrad,
                                SmallVectorImpl<Value> &operandGrads) {
  if (needGrad[0])
    operandGrads[0] = VocabEmbeddingGradOp::create(
        b, getLoc(), getTable().getType(), getIds(), resultGrads[0],
        getSize());
  return success();
}

LogicalResult VocabEmbeddingGradOp::verify() {
  RankedTensorType ids = getIds().getType(), grad = getGrad().getType(),
                   result = getType();
  if (result.getRank() != 2)
    return emitOpError("result must be [Vl, C], got ") << result;
  SmallVector<int64_t> expected(ids.getShape());
  expected.push_back(result.getDimSize(1));
  if (grad.getShape() != ArrayRef<int64_t>(expected) ||
      grad.getElementType() != result.getElementType())
    return emitOpError("grad must be ")
           << RankedTensorType::get(expected, result.getElementType())
           << " (ids shape x [C]), got " << grad;
  return success();
}

LogicalResult VocabMaxOp::verify() {
  int64_t rows = 0;
  RankedTensorType logits = getLogits().getType();
  if (failed(checkRows(*this, logits, {}, &rows)) ||
      failed(checkF32(*this, getResult(), "result", rows)))
    return failure();
  return checkClasses(*this, logits.getDimSize(1), getSize(),
                      getNumClasses());
}

LogicalResult VocabExpSumsOp::verify() {
  int64_t rows = 0;
  RankedTensorType logits = getLogits().getType();
  if (failed(checkRows(*this, logits, getTargets().getType(), &rows)) ||
      failed(checkF32(*this, getMax(), "max", rows)) ||
      failed(checkF32(*this, getResult(), "result", rows, 2)))
    return failure();
  return checkClasses(*this, logits.getDimSize(1), getSize(),
                      getNumClasses());
}

bool VocabExpSumsOp::isDifferentiableOperand(unsigned index) {
  return index == 0; // the shift `max` carries no gradient
}

LogicalResult
VocabExpSumsOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                              ArrayRef<bool> needGrad,
                              SmallVectorImpl<Value> &operandGrads) {
  if (needGrad[0])
    operandGrads[0] = VocabExpSumsGradOp::create(
        b, getLoc(), getLogits().getType(), getLogits(), getTargets(),
        getMax(), resultGrads[0], getSize(), getNumClasses());
  return success();
}

LogicalResult VocabExpSumsGradOp::verify() {
  int64_t rows = 0;
  RankedTensorType logits = getLogits().getType();
  if (failed(checkRows(*this, logits, getTargets().getType(), &rows)) ||
      failed(checkF32(*this, getMax(), "max", rows)) ||
      failed(checkF32(*this, getGrad(), "grad", rows, 2)))
    return failure();
  return checkClasses(*this, logits.getDimSize(1), getSize(),
                      getNumClasses());
}

LogicalResult VocabLossOp::verify() {
  auto targets = getTargets().getType();
  if (targets.getRank() != 1)
    return emitOpError("targets must be [N], got ") << targets;
  int64_t rows = targets.getDimSize(0);
  if (failed(checkF32(*this, getSums(), "sums", rows, 2)) ||
      failed(checkF32(*this, getMax(), "max", rows)))
    return failure();
  return success();
}

bool VocabLossOp::isDifferentiableOperand(unsigned index) {
  return index == 0; // the shift `max` cancels: d loss / d max = 0
}

LogicalResult VocabLossOp::buildGradient(OpBuilder &b,
                                         ArrayRef<Value> resultGrads,
                                         ArrayRef<bool> needGrad,
                                         SmallVectorImpl<Value> &operandGrads) {
  if (needGrad[0])
    operandGrads[0] = VocabLossGradOp::create(
        b, getLoc(), getSums().getType(), getSums(), getTargets(),
        resultGrads[0], getIgnoreIndexAttr());
  return success();
}

LogicalResult VocabLossGradOp::verify() {
  auto targets = getTargets().getType();
  if (targets.getRank() != 1)
    return emitOpError("targets must be [N], got ") << targets;
  return checkF32(*this, getSums(), "sums", targets.getDimSize(0), 2);
}
