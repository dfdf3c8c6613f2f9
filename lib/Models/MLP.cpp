//===- MLP.cpp - the MLP training-step generator --------------------------===//
///
/// \file
/// Builds a multi-layer perceptron (a stack of PyTorch nn.Linear layers with
/// an activation between them) trained on mean squared error or
/// cross-entropy over classes: the smallest model that exercises matmul,
/// bias, activations, and a loss end to end, and the array-input model
/// (named inputs "x" and "target").
///
//===----------------------------------------------------------------------===//

#include "ModelBuilder.h"

#include "zero/Models/Models.h"

#include "mlir/IR/Diagnostics.h"

#include <cmath>

using namespace mlir;
using namespace mlir::zero::models;
using mlir::zero::models::detail::ModelBuilder;
using mlir::zero::models::detail::productFits;

/// Widths inputDim, hiddenDims..., outputDim: layer i maps dims[i] →
/// dims[i + 1].
static SmallVector<int64_t> layerDims(const MLPConfig &c) {
  SmallVector<int64_t> dims{c.inputDim};
  dims.append(c.hiddenDims.begin(), c.hiddenDims.end());
  dims.push_back(c.outputDim);
  return dims;
}

std::optional<MLPLoss> mlir::zero::models::parseMLPLoss(StringRef name) {
  if (name == "mse")
    return MLPLoss::mse;
  if (name == "cross-entropy")
    return MLPLoss::crossEntropy;
  return std::nullopt;
}

std::string mlir::zero::models::checkMLPConfig(const MLPConfig &c) {
  auto positive = [](const std::string &what, int64_t v) -> std::string {
    if (v > 0)
      return "";
    return what + " must be positive, got " + std::to_string(v);
  };
  std::string error = positive("input dim", c.inputDim);
  for (size_t i = 0; error.empty() && i < c.hiddenDims.size(); ++i)
    error = positive("hidden dim " + std::to_string(i), c.hiddenDims[i]);
  if (error.empty())
    error = positive("output dim", c.outputDim);
  if (error.empty())
    error = positive("batch size", c.batchSize);
  if (!error.empty())
    return error;
  SmallVector<int64_t> dims = layerDims(c);
  for (size_t i = 0; i + 1 < dims.size(); ++i)
    if (!productFits({dims[i], dims[i + 1]}) ||
        !productFits({c.batchSize, dims[i + 1]}) ||
        !productFits({c.batchSize, dims[i]}))
      return "the model's tensors are too large (element counts overflow int64)";
  return "";
}

uint64_t mlir::zero::models::mlpParameterCount(const MLPConfig &c) {
  SmallVector<int64_t> dims = layerDims(c);
  uint64_t total = 0;
  for (size_t i = 0; i + 1 < dims.size(); ++i)
    total += static_cast<uint64_t>(dims[i]) * dims[i + 1] + dims[i + 1];
  return total;
}

FailureOr<OwningOpRef<ModuleOp>>
mlir::zero::models::buildMLP(MLIRContext &ctx, const MLPConfig &config) {
  std::string error = checkMLPConfig(config);
  if (!error.empty()) {
    emitError(UnknownLoc::get(&ctx)) << error;
    return failure();
  }

  ModelBuilder mb(ctx, getElementType(ctx, config.elementType));
  SmallVector<int64_t> dims = layerDims(config);
  size_t numLayers = dims.size() - 1;
  for (size_t i = 0; i < numLayers; ++i) {
    std::string fc = "fc" + std::to_string(i);
    // std of PyTorch's default U(-1/sqrt(in), 1/sqrt(in)) weight init.
    double std = 1.0 / std::sqrt(3.0 * static_cast<double>(dims[i]));
    mb.declareParam(fc + ".weight", {dims[i + 1], dims[i]}, mb.normal(std));
    mb.declareParam(fc + ".bias", {dims[i + 1]}, mb.zeros());
  }

  int64_t B = config.batchSize;
  bool classifier = config.loss == MLPLoss::crossEntropy;
  Type targetType =
      classifier
          ? Type(RankedTensorType::get({B}, mb.b.getI32Type()))
          : Type(mb.tensor({B, config.outputDim}));
  Block::BlockArgListType args =
      mb.beginForward({mb.tensor({B, config.inputDim}), targetType});
  // Named inputs: the driver feeds the arrays of these names.
  mb.nameInput(0, "x");
  mb.nameInput(1, "target");
  Value h = args[0], target = args[1];
  for (size_t i = 0; i < numLayers; ++i) {
    std::string fc = "fc" + std::to_string(i);
    mb.setScope(fc);
    h = mb.linear(h, fc);
    if (i + 1 == numLayers)
      break;
    if (config.activation == Activation::relu)
      h = train::ReluOp::create(mb.b, mb.loc, h.getType(), h);
    else
      h = train::GeluOp::create(mb.b, mb.loc, h.getType(), h);
  }
  mb.setScope("loss");
  auto scalar = RankedTensorType::get({}, mb.b.getF32Type());
  Value loss =
      classifier
          ? Value(train::CrossEntropyOp::create(mb.b, mb.loc, scalar, h, target,
                                                /*num_classes=*/IntegerAttr(),
                                                /*ignore_index=*/IntegerAttr()))
          : Value(train::MseOp::create(mb.b, mb.loc, scalar, h, target));
  return mb.finish(loss);
}
