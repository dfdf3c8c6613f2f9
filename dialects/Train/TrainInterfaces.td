//===- TrainInterfaces.td - gradient interface ---------------*- tablegen -*-===//

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

#endif // ZERO_TRAIN_INTERFACES_TD
