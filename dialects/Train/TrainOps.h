//===- TrainOps.h - train dialect operations --------------------*- C++ -*-===//
///
/// \file
/// Declares the operations of the `train` dialect (see TrainOps.td for each
/// op's semantics).
///
//===----------------------------------------------------------------------===//

#ifndef ZERO_TRAIN_TRAINOPS_H
#define ZERO_TRAIN_TRAINOPS_H

#include "Train/TrainDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::train {
/// The side-effect resource of long-lived training state (parameters,
/// gradients, optimizer state): loads read it, stores and accumulations
/// write it, so no rewrite reorders a load across a store.
struct StateResource : public SideEffects::Resource::Base<StateResource> {
  llvm::StringRef getName() final { return "train::StateResource"; }
};
} // namespace mlir::train

#include "Train/NativeBf16.h"
#include "Train/TrainInterfaces.h.inc"

#define GET_OP_CLASSES
#include "Train/TrainOps.h.inc"

namespace mlir::train {
/// The shape rule of an embedding lookup (`train.embedding` and the zero
/// dialect's `zero.vocab_embedding`): `table` is [rows, C] (`tableName`
/// names the rows in the message) and `result` is ids' shape x [C] in the
/// table's element type; else one emitOpError on `op`.
LogicalResult verifyEmbeddingShapes(Operation *op, RankedTensorType table,
                                    RankedTensorType ids,
                                    RankedTensorType result,
                                    StringRef tableName);
} // namespace mlir::train

#endif // ZERO_TRAIN_TRAINOPS_H
