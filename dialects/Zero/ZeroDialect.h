//===- ZeroDialect.h - the zero dialect -------------------------*- C++ -*-===//
///
/// \file
/// Declares the `zero` dialect (ZeRO shards and collectives), its enums,
/// attributes and the side-effect resource that orders collectives.
///
//===----------------------------------------------------------------------===//

#ifndef ZERO_ZERO_ZERODIALECT_H
#define ZERO_ZERO_ZERODIALECT_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/Dialect.h"

#include "Train/NonEmptyTensors.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "Zero/ZeroDialect.h.inc"
#include "Zero/ZeroEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "Zero/ZeroAttrs.h.inc"

#include "mlir/IR/BuiltinTypes.h"
#define GET_TYPEDEF_CLASSES
#include "Zero/ZeroTypes.h.inc"

namespace mlir::zero {
/// The side-effect resource every collective reads and writes: the ordered
/// stream of operations on the data-parallel communicator. Two collectives
/// never commute, so no rewrite merges, drops or reorders them.
struct CommResource : public SideEffects::Resource::Base<CommResource> {
  llvm::StringRef getName() final { return "zero::CommResource"; }
};
/// The side-effect resource of the checkpoint copies between device and
/// host memory (zero.offload_start / _wait, zero.fetch_start / _wait).
struct OffloadResource : public SideEffects::Resource::Base<OffloadResource> {
  llvm::StringRef getName() final { return "zero::OffloadResource"; }
};
/// The side-effect resource of sharded state (zero.shard): shard loads read
/// it, shard stores and accumulations write it.
struct ShardResource : public SideEffects::Resource::Base<ShardResource> {
  llvm::StringRef getName() final { return "zero::ShardResource"; }
};

/// Verifies `zero.mesh` (only on a module, a #zero.mesh) and
/// `zero.tensor_split` (only on a train.param, a #zero.tensor_split whose
/// `full` shape cut at `dim` is the declared type); ZeroTensorParallel.cpp.
llvm::LogicalResult verifyTensorParallelAttr(Operation *op,
                                             llvm::StringRef name,
                                             Attribute value);
/// Verifies `zero.storage` (on an op: one #zero.storage per result that fits
/// it) and `zero.scratch` (a temporaries block live at its op);
/// ZeroStorage.cpp.
llvm::LogicalResult verifyStorageAttr(Operation *op, llvm::StringRef name,
                                      Attribute value);
} // namespace mlir::zero

#endif // ZERO_ZERO_ZERODIALECT_H
