//===- ZeroSequenceParallel.cpp - token rows over the tensor axis ---------===//
///
/// \file
/// Verifiers and gradient rules of the sequence-parallel ops
/// `zero.sp_split`, `zero.sp_gather` and `zero.sp_scatter`
/// (ZeroSequenceParallelOps.td).
///
//===----------------------------------------------------------------------===//

#include "Zero/ZeroOps.h"

using namespace mlir;
using namespace mlir::zero;

/// The shape rule of all three: `whole` [B, T, C...] (rank >= 3) and
/// `rows` [R, C...] with R·size = B·T, the same element type.
static LogicalResult verifyRowCut(Operation *op, Type wholeType,
                                  Type rowsType, int64_t size) {
  auto whole = cast<RankedTensorType>(wholeType);
  auto rows = cast<RankedTensorType>(rowsType);
  if (whole.getElementType() != rows.getElementType())
    return op->emitOpError("the token rows and the whole tensor must have "
                           "one element type, got ")
           << rows.getElementType() << " and " << whole.getElementType();
  if (whole.getRank() < 3)
    return op->emitOpError("the whole tensor must be [B, T, C...], got ")
           << whole;
  if (rows.getRank() != whole.getRank() - 1 ||
      rows.getShape().drop_front() != whole.getShape().drop_front(2))
    return op->emitOpError("the token rows must be [R")
           << ", " << whole.getShape().drop_front(2) << "] for the whole "
           << whole << ", got " << rows;
  int64_t tokens = whole.getDimSize(0) * whole.getDimSize(1);
  if (rows.getDimSize(0) * size != tokens)
    return op->emitOpError("size(")
           << size << ") ranks of " << rows.getDimSize(0)
           << " rows do not make the B·T = " << tokens << " token rows";
  return success();
}

LogicalResult SequenceSplitOp::verify() {
  return verifyRowCut(*this, getInput().getType(), getType(), getSize());
}

LogicalResult SequenceGatherOp::verify() {
  return verifyRowCut(*this, getType(), getInput().getType(), getSize());
}

LogicalResult SequenceScatterOp::verify() {
  return verifyRowCut(*this, getInput().getType(), getType(), getSize());
}

LogicalResult SequenceSplitOp::buildGradient(
    OpBuilder &b, ArrayRef<Value> resultGrads, ArrayRef<bool> needGrad,
    SmallVectorImpl<Value> &operandGrads) {
  if (!needGrad[0])
    return success();
  // Every rank's slice came from the same whole input: put the slices'
  // gradients back together.
  operandGrads[0] =
      SequenceGatherOp::create(b, getLoc(), getInput().getType(),
                               resultGrads[0], getSize(), /*slice_grad=*/true);
  return success();
}

LogicalResult SequenceGatherOp::buildGradient(
    OpBuilder &b, ArrayRef<Value> resultGrads, ArrayRef<bool> needGrad,
    SmallVectorImpl<Value> &operandGrads) {
  if (!needGrad[0])
    return success();
  if (getSliceGrad()) {
    // Replicated readers: the whole gradient is the same on every rank.
    operandGrads[0] = SequenceSplitOp::create(
        b, getLoc(), getInput().getType(), resultGrads[0], getSize());
    return success();
  }
  // A tensor-parallel region read the rows: sum its partial gradients and
  // keep this rank's rows.
  operandGrads[0] = SequenceScatterOp::create(
      b, getLoc(), getInput().getType(), resultGrads[0], getSize());
  return success();
}

LogicalResult SequenceScatterOp::buildGradient(
    OpBuilder &b, ArrayRef<Value> resultGrads, ArrayRef<bool> needGrad,
    SmallVectorImpl<Value> &operandGrads) {
  if (!needGrad[0])
    return success();
  // d(sum over ranks)/d(this rank's part) = 1, on every row.
  operandGrads[0] = SequenceGatherOp::create(b, getLoc(), getInput().getType(),
                                             resultGrads[0], getSize(),
                                             /*slice_grad=*/true);
  return success();
}
