//===- ZeroOps.cpp - zero dialect operations ------------------------------===//

#include "Zero/ZeroOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::zero;

/// Checks that `full` holds exactly `worldSize` shards of `shard`'s size and
/// element type. `fullName`/`shardName` name them in the diagnostic.
static LogicalResult verifyShardPair(Operation *op, RankedTensorType shard,
                                     RankedTensorType full, int64_t worldSize,
                                     StringRef shardName, StringRef fullName) {
  if (shard.getElementType() != full.getElementType())
    return op->emitOpError("element types differ: ")
           << shardName << " " << shard.getElementType() << ", " << fullName
           << " " << full.getElementType();
  if (full.getNumElements() != shard.getNumElements() * worldSize)
    return op->emitOpError() << fullName << " has " << full.getNumElements()
                             << " elements; expected world_size ("
                             << worldSize << ") x " << shardName << " size ("
                             << shard.getNumElements()
                             << ") = " << shard.getNumElements() * worldSize;
  return success();
}

LogicalResult AllGatherOp::verify() {
  return verifyShardPair(*this, getShard().getType(), getType(),
                         getWorldSize(), "shard", "result");
}

LogicalResult ReduceScatterOp::verify() {
  if (getKind() == ReduceKind::max)
    return emitOpError("reduction kind must be sum or avg");
  return verifyShardPair(*this, getType(), getInput().getType(),
                         getWorldSize(), "result", "input");
}

#define GET_OP_CLASSES
#include "Zero/ZeroOps.cpp.inc"
