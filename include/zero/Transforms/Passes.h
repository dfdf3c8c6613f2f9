//===- Passes.h - Zero's passes ---------------------------------*- C++ -*-===//
///
/// \file
/// Declares every pass of the project (generated from TrainPasses.td and
/// ZeroPasses.td) and the function that registers them all.
///
//===----------------------------------------------------------------------===//

#ifndef ZERO_TRANSFORMS_PASSES_H
#define ZERO_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::func {
class FuncDialect;
} // namespace mlir::func
namespace mlir::train {
class TrainDialect;
} // namespace mlir::train

namespace mlir {
class DialectRegistry;
} // namespace mlir

// Project passes live in the namespace of the `zero` dialect.
namespace mlir::zero {

// Each generated file #undefs the macro it reads: define it before each.
#define GEN_PASS_DECL
#include "zero/Transforms/TrainPasses.h.inc"
#define GEN_PASS_DECL
#include "zero/Transforms/ZeroPasses.h.inc"

#define GEN_PASS_REGISTRATION
#include "zero/Transforms/TrainPasses.h.inc"
#define GEN_PASS_REGISTRATION
#include "zero/Transforms/ZeroPasses.h.inc"

/// Unit attribute train-autodiff puts on the `train.fill 1.0` that seeds
/// the backward sweep: ops after it in the step function are backward ops.
inline constexpr llvm::StringLiteral kLossSeedAttr = "train.loss_seed";

/// The op in `body` that carries kLossSeedAttr (the last one, should there
/// be several), or null when `body` has no backward.
inline Operation *findLossSeed(Block &body) {
  Operation *seed = nullptr;
  for (Operation &op : body)
    if (op.hasAttr(kLossSeedAttr))
      seed = &op;
  return seed;
}

/// Unit attribute train-checkpoint's `partition=tensor` (ZeRO-R's P_a)
/// puts on each `zero.local_shard` that keeps a 1/M slice of a block-input
/// checkpoint; zero-report counts those slices (and their whole size).
inline constexpr llvm::StringLiteral kCheckpointSliceAttr =
    "zero.checkpoint_slice";
/// Module attribute (a string, "host") of train-checkpoint's
/// `offload=host` (P_a+cpu): the slices belong in host memory.
inline constexpr llvm::StringLiteral kCheckpointOffloadAttr =
    "zero.checkpoint_offload";

/// Module attributes zero-partition sets: the world size and ZeRO stage the
/// step was partitioned for.
inline constexpr llvm::StringLiteral kWorldSizeAttr = "zero.world_size";
inline constexpr llvm::StringLiteral kStageAttr = "zero.stage";
/// Unit attribute on a train.param whose storage is its group's zero.shard
/// of kind param (stage 3): the declaration keeps shape, initializer and
/// the trainable flag.
inline constexpr llvm::StringLiteral kShardedParamAttr = "zero.sharded";

} // namespace mlir::zero

#endif // ZERO_TRANSFORMS_PASSES_H
