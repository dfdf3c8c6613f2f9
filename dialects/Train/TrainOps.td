//===- TrainOps.td - train dialect operations ----------------*- tablegen -*-===//

#ifndef ZERO_TRAIN_OPS_TD
#define ZERO_TRAIN_OPS_TD

include "Train/TrainDialect.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributes.td"

/// A statically shaped tensor of floating-point elements the dialect computes
/// on (f32, bf16 or f16).
def Train_FloatTensor : StaticShapeTensorOf<[F32, BF16, F16]>;

//===----------------------------------------------------------------------===//
// Parameters and state
//===----------------------------------------------------------------------===//

def Train_ParamOp : Train_Op<"param", [Symbol]> {
  let summary = "A model parameter: a named, statically shaped tensor";
  let description = [{
    Declares one parameter of the model at module level. `type` gives its
    shape and storage element type; `init` its initializer; `trainable`
    whether `train-autodiff` computes a gradient for it (a parameter without
    it is frozen: no gradient, no optimizer state, no backward work that only
    it needs).

    Example:
    ```mlir
    train.param @wte : tensor<256x64xf32> init(<normal, 2.000000e-02>) trainable
    train.param @ln_f.bias : tensor<64xf32> init(<zeros>)
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<AnyRankedTensor>:$type,
                       Train_InitAttr:$init,
                       UnitAttr:$trainable);
  let assemblyFormat = [{
    $sym_name `:` $type `init` `(` $init `)` (`trainable` $trainable^)? attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The parameter's tensor type (static shape, float elements).
    ::mlir::RankedTensorType getTensorType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getType());
    }
  }];
}

def Train_LoadOp : Train_Op<"load", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    MemoryEffects<[MemRead]>]> {
  let summary = "Reads the current value of a parameter";
  let description = [{
    Yields the value of the `train.param` named by `name`. The result type
    must equal the parameter's declared type.

    Example:
    ```mlir
    %w = train.load @wte : tensor<256x64xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$name);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

def Train_AddOp : Train_Op<"add", [Pure, Commutative,
                                   AllTypesMatch<["lhs", "rhs", "result"]>]> {
  let summary = "Elementwise sum of two tensors of one type";
  let description = [{
    `%r = train.add %a, %b` computes a + b elementwise. Both operands and
    the result have the same shape and element type (no broadcasting).

    Example:
    ```mlir
    %r = train.add %a, %b : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$lhs, Train_FloatTensor:$rhs);
  let results = (outs Train_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

#endif // ZERO_TRAIN_OPS_TD
