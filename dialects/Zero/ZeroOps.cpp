//===- ZeroOps.cpp - zero dialect operations ------------------------------===//

#include "Zero/ZeroOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"

#include "Train/TrainOps.h"

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

//===----------------------------------------------------------------------===//
// Split collectives
//===----------------------------------------------------------------------===//

LogicalResult AllGatherStartOp::verify() {
  return verifyShardPair(*this, getShard().getType(),
                         getPending().getType().getResult(), getWorldSize(),
                         "shard", "result");
}

LogicalResult ReduceScatterStartOp::verify() {
  if (getKind() == ReduceKind::max)
    return emitOpError("reduction kind must be sum or avg");
  return verifyShardPair(*this, getPending().getType().getResult(),
                         getInput().getType(), getWorldSize(), "result",
                         "input");
}

LogicalResult AllReduceStartOp::verify() {
  if (getPending().getType().getResult() != getInput().getType())
    return emitOpError("pending result type ")
           << getPending().getType().getResult() << " differs from input type "
           << getInput().getType();
  return success();
}

LogicalResult WaitOp::verify() {
  if (!getPending().hasOneUse())
    return emitOpError("a pending collective must be waited exactly once");
  return success();
}

//===----------------------------------------------------------------------===//
// Buckets
//===----------------------------------------------------------------------===//

/// Checks that `whole` has the pieces' element type and their total size.
static LogicalResult verifyPieces(Operation *op, TypeRange pieces,
                                  RankedTensorType whole, int64_t worldSize) {
  if (pieces.empty())
    return op->emitOpError("needs at least one piece");
  int64_t total = 0;
  for (Type t : pieces) {
    auto piece = cast<RankedTensorType>(t);
    if (piece.getElementType() != whole.getElementType())
      return op->emitOpError("piece ")
             << piece << " has another element type than " << whole;
    if (piece.getNumElements() % worldSize != 0)
      return op->emitOpError("piece ")
             << piece << " is not a multiple of world_size " << worldSize;
    total += piece.getNumElements();
  }
  if (total != whole.getNumElements())
    return op->emitOpError("pieces add up to ")
           << total << " elements, not " << whole.getNumElements();
  return success();
}

LogicalResult BucketInterleaveOp::verify() {
  return verifyPieces(*this, getInputs().getTypes(), getType(), getWorldSize());
}
LogicalResult BucketDeinterleaveOp::verify() {
  return verifyPieces(*this, getResultTypes(), getInput().getType(),
                      getWorldSize());
}
LogicalResult ConcatOp::verify() {
  return verifyPieces(*this, getInputs().getTypes(), getType(), 1);
}
LogicalResult SplitOp::verify() {
  return verifyPieces(*this, getResultTypes(), getInput().getType(), 1);
}

//===----------------------------------------------------------------------===//
// Layout and shards
//===----------------------------------------------------------------------===//

LogicalResult GroupOp::verify() {
  size_t n = getMembers().size();
  if (n == 0)
    return emitOpError("has no members");
  if (getOffsets().size() != n || getDecay().size() != n)
    return emitOpError("has ")
           << n << " members but " << getOffsets().size() << " offsets and "
           << getDecay().size() << " decay flags";
  if (getPadded() % getWorldSize() != 0)
    return emitOpError("padded size ")
           << getPadded() << " is not a multiple of world_size "
           << getWorldSize();
  return success();
}

LogicalResult GroupOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  int64_t offset = 0;
  for (auto [i, ref] : llvm::enumerate(getMembers().getAsRange<FlatSymbolRefAttr>())) {
    auto param = symbolTable.lookupNearestSymbolFrom<train::ParamOp>(*this, ref);
    if (!param)
      return emitOpError("member '") << ref.getValue() << "' is not a train.param";
    if (getOffsets()[i] != offset)
      return emitOpError("member '")
             << ref.getValue() << "' is at offset " << getOffsets()[i]
             << "; members are laid out back to back, expected " << offset;
    offset += param.getTensorType().getNumElements();
  }
  int64_t minPadded = (offset + getWorldSize() - 1) / getWorldSize() * getWorldSize();
  if (getPadded() != minPadded)
    return emitOpError("padded size ")
           << getPadded() << " must be the members' " << offset
           << " elements rounded up to a multiple of world_size: " << minPadded;
  return success();
}

/// The zero.group named `ref`, or an error on `op`.
static FailureOr<GroupOp> lookupGroup(Operation *op, FlatSymbolRefAttr ref,
                                      SymbolTableCollection &symbolTable) {
  auto group = symbolTable.lookupNearestSymbolFrom<GroupOp>(op, ref);
  if (!group)
    return op->emitOpError("'") << ref.getValue() << "' is not a zero.group";
  return group;
}

LogicalResult ShardOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<GroupOp> group = lookupGroup(*this, getGroupAttr(), symbolTable);
  if (failed(group))
    return failure();
  if (getTensorType().getNumElements() != group->getShardSize())
    return emitOpError("has ")
           << getTensorType().getNumElements() << " elements; a shard of '"
           << getGroup() << "' has " << group->getShardSize();
  return success();
}

/// Checks that `name` is a zero.shard of type `type`.
static LogicalResult verifyShardUse(Operation *op, FlatSymbolRefAttr name,
                                    Type type,
                                    SymbolTableCollection &symbolTable) {
  auto shard = symbolTable.lookupNearestSymbolFrom<ShardOp>(op, name);
  if (!shard)
    return op->emitOpError("'") << name.getValue() << "' is not a zero.shard";
  if (shard.getType() != type)
    return op->emitOpError("type ")
           << type << " does not match the shard's " << shard.getType();
  return success();
}

LogicalResult ShardLoadOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyShardUse(*this, getNameAttr(), getType(), symbolTable);
}
LogicalResult ShardStoreOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyShardUse(*this, getNameAttr(), getValue().getType(), symbolTable);
}
LogicalResult
ShardAccumulateOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyShardUse(*this, getNameAttr(), getValue().getType(), symbolTable);
}

/// Checks that `members` have the shapes of the group's members and `flat`
/// the group's padded size.
static LogicalResult verifyPacking(Operation *op, FlatSymbolRefAttr groupRef,
                                   TypeRange members, RankedTensorType flat,
                                   SymbolTableCollection &symbolTable) {
  FailureOr<GroupOp> group = lookupGroup(op, groupRef, symbolTable);
  if (failed(group))
    return failure();
  if (members.size() != group->getMembers().size())
    return op->emitOpError("has ")
           << members.size() << " member values; '" << groupRef.getValue()
           << "' has " << group->getMembers().size() << " members";
  for (auto [type, ref] :
       llvm::zip(members, group->getMembers().getAsRange<FlatSymbolRefAttr>())) {
    auto param = symbolTable.lookupNearestSymbolFrom<train::ParamOp>(op, ref);
    auto t = cast<RankedTensorType>(type);
    if (!param || t.getShape() != param.getTensorType().getShape() ||
        t.getElementType() != flat.getElementType())
      return op->emitOpError("member value ")
             << t << " does not match member '" << ref.getValue() << "'";
  }
  if (flat.getNumElements() != group->getPadded())
    return op->emitOpError("flat buffer has ")
           << flat.getNumElements() << " elements; '" << groupRef.getValue()
           << "' has " << group->getPadded();
  return success();
}

LogicalResult PackOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyPacking(*this, getGroupAttr(), getMembers().getTypes(),
                       getType(), symbolTable);
}

LogicalResult UnpackOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyPacking(*this, getGroupAttr(), getMembers().getTypes(),
                       getFlat().getType(), symbolTable);
}

LogicalResult LocalShardOp::verify() {
  return verifyShardPair(*this, getType(), getInput().getType(),
                         getWorldSize(), "result", "input");
}

LogicalResult ShardAdamWOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<GroupOp> group = lookupGroup(*this, getGroupAttr(), symbolTable);
  if (failed(group))
    return failure();
  for (Value v : {getParam(), getGrad(), getExpAvg(), getExpAvgSq()})
    if (cast<RankedTensorType>(v.getType()).getNumElements() !=
        group->getShardSize())
      return emitOpError("operand ")
             << v.getType() << " is not a shard of '" << getGroup() << "' ("
             << group->getShardSize() << " elements)";
  if (!getParam().getType().getElementType().isF32())
    return emitOpError("param, exp_avg and exp_avg_sq must be f32");
  return success();
}

#define GET_OP_CLASSES
#include "Zero/ZeroOps.cpp.inc"
