//===- TrainInterfaces.td - op interfaces of train ops -----*- tablegen -*-===//
//
// The gradient rule of an op (train-autodiff) and whether its runtime
// kernel has a native bf16 form (train-legalize-bf16).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_TRAIN_INTERFACES_TD
#define ZERO_TRAIN_INTERFACES_TD

include "mlir/IR/OpBase.td"

def Train_GradientOpInterface : OpInterface<"GradientOpInterface"> {
  let cppNamespace = "::mlir::train";
  let description = [{
    An op that `train-autodiff` can differentiate. The op builds its own
    vector-Jacobian product: given the gradients of its results, it emits
    the ops that compute the gradients of its operands. The pass knows no op
    by name; an op without this interface on the path from a trainable
    parameter to the loss is an error.
  }];
  let methods = [
    InterfaceMethod<[{
        Emits, at the builder's insertion point, the gradients of the
        operands. `resultGrads[i]` is the gradient of result i: never null for
        a differentiable result (the pass materializes zeros for results
        without uses on the path), always null for one that
        `isDifferentiableResult` excludes.
        `needGrad[j]` says whether operand j's gradient is wanted; the op
        emits no work that only unwanted gradients need and sets
        `operandGrads[j]` (pre-sized to the operand count, all null) for the
        wanted ones. Returns failure, with a diagnostic, when an operand
        whose gradient is wanted is not differentiable.
      }], "::llvm::LogicalResult", "buildGradient",
      (ins "::mlir::OpBuilder &":$builder,
           "::llvm::ArrayRef<::mlir::Value>":$resultGrads,
           "::llvm::ArrayRef<bool>":$needGrad,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>,
    InterfaceMethod<[{
        Whether operand `index` can carry a gradient at all (integer ids
        and targets cannot). The pass uses it to decide which values are
        active.
      }], "bool", "isDifferentiableOperand", (ins "unsigned":$index),
      /*methodBody=*/[{}], /*defaultImplementation=*/[{
        return ::llvm::isa<::mlir::FloatType>(
            ::mlir::getElementTypeOrSelf($_op->getOperand(index).getType()));
      }]>,
    InterfaceMethod<[{
        Whether result `index` carries a gradient. A statistic an op returns
        for its own backward (attention's log-sum-exp) does not: the pass
        gives it a null result gradient and materializes no zeros for it.
      }], "bool", "isDifferentiableResult", (ins "unsigned":$index),
      /*methodBody=*/[{}], /*defaultImplementation=*/[{
        return true;
      }]>
  ];
}

def Train_NativeBf16KernelOpInterface : OpInterface<"NativeBf16KernelOpInterface"> {
  let cppNamespace = "::mlir::train";
  let description = [{
    A compute op whose runtime kernel has a native bf16 form: `zrt_X_bf16`
    reads and writes the op's bf16 tensors as they are, accumulating in f32
    (the same numbers as widening them to f32, calling the f32 kernel `zrt_X`
    and rounding back, without the f32 copies). `train-legalize-bf16` widens
    every other compute op (Train/NotCompute.h) that has bf16 or f16 tensors
    with explicit `train.cast`s; f16 has no native kernels at all. The CPU
    and CUDA runtimes implement the same zrt.h (the generated C++ is the same
    for both targets), so the answer does not depend on the target.
  }];
  let methods = [
    InterfaceMethod<[{
        Whether the op, with the element types and operands it has, runs as
        its native bf16 kernel. The default: every tensor operand and result
        is bf16. Ops whose kernel keeps some tensor in f32 (the loss, the rope
        table) or needs distinct buffers (the bf16 GEMMs widen chunks of their
        operands) say so themselves (TrainNativeBf16.cpp).
      }], "bool", "hasNativeBf16Kernel", (ins),
      /*methodBody=*/[{}], /*defaultImplementation=*/[{
        return ::mlir::train::allTensorsBf16($_op);
      }]>
  ];
}

#endif // ZERO_TRAIN_INTERFACES_TD
