//===- NotCompute.h - Op trait: not a compute op ---------------*- C++ -*-===//
///
/// \file
/// The op trait of the `train` ops that are not compute ops (Train_NotCompute
/// in TrainDialect.td): state accesses (load, store, accumulate), fills,
/// views and layout changes (reshape, broadcast, transpose, split, concat),
/// casts, constant tables (rope_table) and the optimizer step's own ops
/// (sum_squares, adamw, clip_coef), whose kernels take narrow floats as they
/// are. Every other `train` op is a compute op: a runtime kernel over its
/// tensors, in f32 unless it has a native bf16 kernel. Two things follow
/// from it: train-legalize-bf16 widens the bf16/f16 tensors of a compute op
/// without a native kernel (NativeBf16KernelOpInterface) to f32 with
/// explicit train.cast ops, and zero-place-progress
/// puts a zero.progress after each compute op while a nonblocking collective
/// is in flight (the compute it overlaps with).
///
//===----------------------------------------------------------------------===//

#ifndef ZERO_TRAIN_NOTCOMPUTE_H
#define ZERO_TRAIN_NOTCOMPUTE_H

#include "mlir/IR/OpDefinition.h"

namespace mlir::OpTrait {

template <typename ConcreteType>
class NotCompute : public TraitBase<ConcreteType, NotCompute> {};

/// An op of another dialect that is a compute op all the same (Zero_Compute:
/// the zero dialect's vocabulary-parallel kernels).
template <typename ConcreteType>
class Compute : public TraitBase<ConcreteType, Compute> {};

} // namespace mlir::OpTrait

namespace mlir::train {

/// Whether `op` is a compute op: an op of the `train` dialect without the
/// NotCompute trait, or an op with the Compute trait. Other ops of other
/// dialects (zero collectives, func.return) are not.
inline bool isComputeOp(Operation *op) {
  Dialect *d = op->getDialect();
  if (op->hasTrait<OpTrait::Compute>())
    return true;
  return d && d->getNamespace() == "train" &&
         !op->hasTrait<OpTrait::NotCompute>();
}

} // namespace mlir::train

#endif // ZERO_TRAIN_NOTCOMPUTE_H
