//===- ModelBuilder.h - shared helpers of the model builders ----*- C++ -*-===//
///
/// \file
/// Internal to lib/Models: a thin wrapper over OpBuilder that declares
/// `train.param`s, loads them, and builds the `@forward` function the
/// training-step contract expects. Not installed; use zero/Models/Models.h.
///
//===----------------------------------------------------------------------===//

#ifndef ZERO_LIB_MODELS_MODELBUILDER_H
#define ZERO_LIB_MODELS_MODELBUILDER_H

#include "Train/TrainOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringMap.h"

#include <string>

namespace mlir::zero::models::detail {

/// True when the product of `dims` (all positive) fits in int64_t.
bool productFits(ArrayRef<int64_t> dims);

/// Builds one model module: parameters first (in declaration order), then
/// `func.func @forward` returning the f32 loss.
class ModelBuilder {
public:
  /// Starts an empty module; `elementType` is the storage type of
  /// parameters and activations. Loads the train and func dialects.
  ModelBuilder(MLIRContext &ctx, Type elementType);

  /// A tensor of the model's element type.
  RankedTensorType tensor(ArrayRef<int64_t> shape) const {
    return RankedTensorType::get(shape, elementType);
  }

  /// Declares trainable parameter `name` : tensor<shape x elementType>.
  void declareParam(const std::string &name, ArrayRef<int64_t> shape,
                    train::InitAttr init);
  /// `#train.init<normal, std>`.
  train::InitAttr normal(double std) const;
  /// `#train.init<zeros>`.
  train::InitAttr zeros() const;
  /// `#train.init<ones>`.
  train::InitAttr ones() const;

  /// Creates `func.func @forward(argTypes) -> tensor<f32>` after the
  /// parameters and moves the insertion point into its body; returns the
  /// entry block's arguments.
  Block::BlockArgListType beginForward(TypeRange argTypes);
  /// Names @forward's argument `i` (`train.name`): the model takes named
  /// inputs (an array model, fed arrays of these names).
  void nameInput(unsigned i, StringRef name) {
    forward.setArgAttr(i, "train.name", b.getStringAttr(name));
  }
  /// Returns `loss` from @forward and hands out the finished module.
  OwningOpRef<ModuleOp> finish(Value loss);

  /// Ends the function being built with `func.return values`.
  void ret(ValueRange values);
  /// Creates `func.func @name(argTypes) -> resultTypes` at the end of the
  /// module (after @forward) and moves the insertion point into its body;
  /// returns the entry block's arguments.
  Block::BlockArgListType beginFunction(StringRef name, TypeRange argTypes,
                                        TypeRange resultTypes);
  /// Hands out the module (every function must have been ended with ret).
  OwningOpRef<ModuleOp> release() { return std::move(module); }

  /// `train.load @name` with the declared type.
  Value load(const std::string &name);
  /// Linear layer `prefix`: x · prefix.weightᵀ + prefix.bias (PyTorch
  /// layout [out, in], `transpose_b`). The result keeps x's leading dims.
  Value linear(Value x, const std::string &prefix);

  /// Location for the ops built next: a NameLoc `name` (e.g. "h3.attn"),
  /// visible with --mlir-print-debuginfo.
  void setScope(const std::string &name);

  OpBuilder b;
  Location loc;
  Type elementType;

private:
  MLIRContext &ctx;
  OwningOpRef<ModuleOp> module;
  func::FuncOp forward;
  llvm::StringMap<RankedTensorType> paramTypes;
};

} // namespace mlir::zero::models::detail

#endif // ZERO_LIB_MODELS_MODELBUILDER_H
