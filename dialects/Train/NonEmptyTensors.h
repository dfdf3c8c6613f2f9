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

/// Largest element count of a tensor (2^62: byte sizes of any element type
/// stay within int64).
inline constexpr int64_t kMaxTensorElements = int64_t(1) << 62;

/// Fails (with an error on `op` naming `what` and the type) when the static
/// tensor `type` has a zero-sized dimension or more than kMaxTensorElements
/// elements; RankedTensorType::getNumElements would wrap around to 0 or a
/// negative count then.
inline LogicalResult verifyElementCount(Operation *op, RankedTensorType type,
                                        const llvm::Twine &what) {
  int64_t n = 1;
  for (int64_t d : type.getShape()) {
    if (d == 0)
      return op->emitOpError()
             << what << " has a zero-sized dimension (" << type
             << "); every tensor needs at least one element";
    if (d < 0) // dynamic: not counted here
      continue;
    if (n > kMaxTensorElements / d)
      return op->emitOpError()
             << what << " " << type << " has more than 2^62 elements (its "
             << "element count overflows)";
    n *= d;
  }
  return success();
}

template <typename ConcreteType>
class NonEmptyTensors : public TraitBase<ConcreteType, NonEmptyTensors> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    auto check = [&](Type type, StringRef what, unsigned i) -> LogicalResult {
      auto tensor = dyn_cast<RankedTensorType>(type);
      return tensor ? verifyElementCount(op, tensor, what + " #" + Twine(i))
                    : success();
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
