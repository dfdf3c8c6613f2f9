//===- TrainDialect.td - the training-graph dialect ---------*- tablegen -*-===//
//
// The `train` dialect holds a training step: parameters and optimizer state
// as module-level symbols, the forward graph, and (after `train-autodiff`
// and `train-optimizer`) its backward graph and optimizer update.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_TRAIN_DIALECT_TD
#define ZERO_TRAIN_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Train_Dialect : Dialect {
  let name = "train";
  let cppNamespace = "::mlir::train";
  let summary = "Training graphs: parameters, forward ops, gradients, optimizer";
  let description = [{
    The `train` dialect describes one training step of a neural network on
    ranked, statically shaped tensors with `f32`, `bf16` or `f16` elements
    (token ids and targets are `i32`).

    Parameters are module-level symbols (`train.param`) read inside functions
    with `train.load`; this keeps the initializer and the trainable flag next
    to the declaration and never materializes weights as IR constants.

    Numerics policy for `bf16`/`f16`: tensors are *stored* in the narrow type,
    while every reduction (matrix products, sums, norms) accumulates in `f32`
    and layer-norm and softmax statistics are computed in `f32`.
  }];
  let useDefaultAttributePrinterParser = 1;
}

/// Every tensor operand and result has at least one element
/// (Train/NonEmptyTensors.h).
def Train_NonEmptyTensors : NativeOpTrait<"NonEmptyTensors">;

/// Not a compute op: a state access, fill, view, cast, constant table or
/// optimizer-step op, whose kernel (if any) takes bf16/f16 tensors as they
/// are. The other train ops are compute ops: train-legalize-bf16 widens
/// their narrow-float tensors to f32 with train.cast when they have no
/// native bf16 kernel (NativeBf16KernelOpInterface), and
/// zero-place-progress advances in-flight collectives after them
/// (Train/NotCompute.h).
def Train_NotCompute : NativeOpTrait<"NotCompute">;

class Train_Op<string mnemonic, list<Trait> traits = []>
    : Op<Train_Dialect, mnemonic, !listconcat(traits, [Train_NonEmptyTensors])>;

class Train_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Train_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

//===----------------------------------------------------------------------===//
// Enums and attributes
//===----------------------------------------------------------------------===//

def Train_InitKind : I32EnumAttr<"InitKind", "parameter initializer", [
    I32EnumAttrCase<"normal", 0>,
    I32EnumAttrCase<"zeros", 1>,
    I32EnumAttrCase<"ones", 2>
  ]> {
  let cppNamespace = "::mlir::train";
  let genSpecializedAttr = 0;
}
def Train_InitKindAttr : EnumAttr<Train_Dialect, Train_InitKind, "init_kind">;

def Train_InitAttr : Train_Attr<"Init", "init"> {
  let summary = "How a parameter is initialized";
  let description = [{
    `#train.init<normal, 0.02>` draws from N(0, std²) (PyTorch
    `torch.nn.init.normal_`); `#train.init<zeros>` and `#train.init<ones>`
    fill with a constant. `std` is ignored (and printed only) for `normal`.

    Example:
    ```mlir
    train.param @wte : tensor<256x64xf32> init(<normal, 2.000000e-02>) trainable
    ```
  }];
  let parameters = (ins "InitKind":$kind,
                        APFloatParameter<"standard deviation">:$std);
  let builders = [
    AttrBuilder<(ins "InitKind":$kind, CArg<"double", "0.0">:$stdDev), [{
      return $_get($_ctxt, kind, ::llvm::APFloat(stdDev));
    }]>
  ];
  let extraClassDeclaration = [{
    /// The standard deviation as a double (0 for constant initializers).
    double getStdDev() const { return getStd().convertToDouble(); }
  }];
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

#endif // ZERO_TRAIN_DIALECT_TD
