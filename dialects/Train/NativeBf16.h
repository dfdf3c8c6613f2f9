//===- NativeBf16.h - bf16 tensor predicates of native kernels -*- C++ -*-===//
///
/// \file
/// The type predicates behind NativeBf16KernelOpInterface
/// (TrainInterfaces.td): whether tensors are bf16, the rule of most native
/// zrt_X_bf16 kernels. The ops that differ implement the interface method in
/// TrainNativeBf16.cpp.
///
//===----------------------------------------------------------------------===//

#ifndef ZERO_TRAIN_NATIVEBF16_H
#define ZERO_TRAIN_NATIVEBF16_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

namespace mlir::train {

/// Whether every value of `vs` is a ranked tensor of bf16.
inline bool allBf16(ValueRange vs) {
  for (Value v : vs) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t || !t.getElementType().isBF16())
      return false;
  }
  return true;
}

/// Whether every operand and result of `op` is a bf16 tensor (the default
/// of NativeBf16KernelOpInterface::hasNativeBf16Kernel).
inline bool allTensorsBf16(Operation *op) {
  return allBf16(op->getOperands()) && allBf16(op->getResults());
}

} // namespace mlir::train

#endif // ZERO_TRAIN_NATIVEBF16_H
