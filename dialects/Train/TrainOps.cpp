//===- TrainOps.cpp - train dialect operations ----------------------------===//

#include "Train/TrainOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::train;

/// True for the element types the dialect computes on.
static bool isComputeFloat(Type t) { return t.isF32() || t.isBF16() || t.isF16(); }

//===----------------------------------------------------------------------===//
// ParamOp
//===----------------------------------------------------------------------===//

LogicalResult ParamOp::verify() {
  auto type = dyn_cast<RankedTensorType>(getType());
  if (!type || !type.hasStaticShape())
    return emitOpError("type must be a statically shaped tensor, got ")
           << getType();
  if (!isComputeFloat(type.getElementType()))
    return emitOpError("element type must be f32, bf16 or f16, got ")
           << type.getElementType();
  if (type.getNumElements() == 0)
    return emitOpError("parameter has no elements");
  return success();
}

//===----------------------------------------------------------------------===//
// LoadOp
//===----------------------------------------------------------------------===//

LogicalResult LoadOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  Operation *target = symbolTable.lookupNearestSymbolFrom(*this, getNameAttr());
  auto param = dyn_cast_or_null<ParamOp>(target);
  if (!param)
    return emitOpError("'") << getName() << "' does not name a train.param";
  if (param.getType() != getType())
    return emitOpError("result type ")
           << getType() << " does not match parameter type "
           << param.getType();
  return success();
}

#define GET_OP_CLASSES
#include "Train/TrainOps.cpp.inc"
