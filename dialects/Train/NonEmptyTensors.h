//===- NonEmptyTensors.h - Op trait: no zero-sized tensors -----*- C++ -*-===//
///
/// \file
/// The op trait every `train` and `zero` op carries (through Train_Op and
/// Zero_Op): each operand and result of ranked tensor type has at least one
/// element. A zero-sized dimension (a batch of 0, an empty sequence) has no
/// meaning in a training step, and the passes and the lowering assume
/// non-empty tensors (an empty one once reached an LLVM fatal error in
/// convert-train-to-emitc), so the verifier rejects it with the operand or
/// result and its type.
///
//===----------------------------------------------------------------------===//

#ifndef ZERO_TRAIN_NONEMPTYTENSORS_H
#define ZERO_TRAIN_NONEMPTYTENSORS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"

namespace mlir::OpTrait {

template <typename ConcreteType>
class NonEmptyTensors : public TraitBase<ConcreteType, NonEmptyTensors> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    auto check = [&](Type type, StringRef what, unsigned i) -> LogicalResult {
      auto tensor = dyn_cast<RankedTensorType>(type);
      if (!tensor)
        return success();
      for (int64_t d : tensor.getShape())
        if (d == 0)
          return op->emitOpError()
                 << what << " #" << i << " has a zero-sized dimension ("
                 << type << "); every tensor needs at least one element";
      return success();
    };
    for (auto [i, v] : llvm::enumerate(op->getOperands()))
      if (failed(check(v.getType(), "operand", i)))
        return failure();
    for (auto [i, v] : llvm::enumerate(op->getResults()))
      if (failed(check(v.getType(), "result", i)))
        return failure();
    return success();
  }
};

} // namespace mlir::OpTrait

#endif // ZERO_TRAIN_NONEMPTYTENSORS_H
