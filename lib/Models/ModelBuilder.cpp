//===- ModelBuilder.cpp - shared helpers of the model builders ------------===//
///
/// \file
/// ModelBuilder, element-type and activation names, and parameter counting
/// (everything in zero/Models/Models.h that is not GPT- or MLP-specific).
///
//===----------------------------------------------------------------------===//

#include "ModelBuilder.h"

#include "zero/Models/Models.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/MathExtras.h"

#include <cassert>

using namespace mlir;
using namespace mlir::zero::models;
using namespace mlir::zero::models::detail;

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

Type mlir::zero::models::getElementType(MLIRContext &ctx, ElementType type) {
  switch (type) {
  case ElementType::f32:
    return Float32Type::get(&ctx);
  case ElementType::bf16:
    return BFloat16Type::get(&ctx);
  case ElementType::f16:
    return Float16Type::get(&ctx);
  }
  llvm_unreachable("unknown ElementType");
}

std::optional<ElementType> mlir::zero::models::parseElementType(StringRef name) {
  if (name == "f32")
    return ElementType::f32;
  if (name == "bf16")
    return ElementType::bf16;
  if (name == "f16")
    return ElementType::f16;
  return std::nullopt;
}

StringRef mlir::zero::models::stringifyElementType(ElementType type) {
  switch (type) {
  case ElementType::f32:
    return "f32";
  case ElementType::bf16:
    return "bf16";
  case ElementType::f16:
    return "f16";
  }
  llvm_unreachable("unknown ElementType");
}

std::optional<Activation> mlir::zero::models::parseActivation(StringRef name) {
  if (name == "relu")
    return Activation::relu;
  if (name == "gelu")
    return Activation::gelu;
  return std::nullopt;
}

StringRef mlir::zero::models::stringifyActivation(Activation activation) {
  return activation == Activation::relu ? "relu" : "gelu";
}

uint64_t mlir::zero::models::countParameters(ModuleOp module) {
  uint64_t total = 0;
  for (auto param : module.getBody()->getOps<train::ParamOp>())
    total += static_cast<uint64_t>(param.getTensorType().getNumElements());
  return total;
}

//===----------------------------------------------------------------------===//
// ModelBuilder
//===----------------------------------------------------------------------===//

bool mlir::zero::models::detail::productFits(ArrayRef<int64_t> dims) {
  int64_t product = 1;
  for (int64_t d : dims) {
    assert(d > 0 && "productFits expects positive sizes");
    if (llvm::MulOverflow(product, d, product))
      return false;
  }
  return true;
}

ModelBuilder::ModelBuilder(MLIRContext &ctx, Type elementType)
    : b(&ctx), loc(UnknownLoc::get(&ctx)), elementType(elementType), ctx(ctx) {
  ctx.getOrLoadDialect<train::TrainDialect>();
  ctx.getOrLoadDialect<func::FuncDialect>();
  module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
}

void ModelBuilder::setScope(const std::string &name) {
  loc = NameLoc::get(StringAttr::get(&ctx, name));
}

train::InitAttr ModelBuilder::normal(double std) const {
  return train::InitAttr::get(&ctx, train::InitKind::normal, std);
}
train::InitAttr ModelBuilder::zeros() const {
  return train::InitAttr::get(&ctx, train::InitKind::zeros);
}
train::InitAttr ModelBuilder::ones() const {
  return train::InitAttr::get(&ctx, train::InitKind::ones);
}

void ModelBuilder::declareParam(const std::string &name, ArrayRef<int64_t> shape,
                                train::InitAttr init) {
  assert(!forward && "parameters are declared before @forward");
  RankedTensorType type = tensor(shape);
  bool inserted = paramTypes.try_emplace(name, type).second;
  assert(inserted && "parameter declared twice");
  (void)inserted;
  train::ParamOp::create(b, NameLoc::get(StringAttr::get(&ctx, name)), name,
                         type, init, /*trainable=*/true);
}

Block::BlockArgListType ModelBuilder::beginForward(TypeRange argTypes) {
  auto lossType = RankedTensorType::get({}, b.getF32Type());
  forward = func::FuncOp::create(b, UnknownLoc::get(&ctx), "forward",
                                 b.getFunctionType(argTypes, lossType));
  Block *entry = forward.addEntryBlock();
  b.setInsertionPointToStart(entry);
  return entry->getArguments();
}

OwningOpRef<ModuleOp> ModelBuilder::finish(Value loss) {
  func::ReturnOp::create(b, loc, loss);
  return std::move(module);
}

void ModelBuilder::ret(ValueRange values) {
  func::ReturnOp::create(b, loc, values);
}

Block::BlockArgListType ModelBuilder::beginFunction(StringRef name,
                                                    TypeRange argTypes,
                                                    TypeRange resultTypes) {
  b.setInsertionPointToEnd(module->getBody());
  auto fn = func::FuncOp::create(b, UnknownLoc::get(&ctx), name,
                                 b.getFunctionType(argTypes, resultTypes));
  Block *entry = fn.addEntryBlock();
  b.setInsertionPointToStart(entry);
  return entry->getArguments();
}

Value ModelBuilder::load(const std::string &name) {
  auto it = paramTypes.find(name);
  assert(it != paramTypes.end() && "load of an undeclared parameter");
  return train::LoadOp::create(b, loc, it->second, name);
}

Value ModelBuilder::linear(Value x, const std::string &prefix) {
  Value weight = load(prefix + ".weight");
  Value bias = load(prefix + ".bias");
  auto xType = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> shape(xType.getShape());
  shape.back() = cast<RankedTensorType>(weight.getType()).getDimSize(0);
  return train::MatmulOp::create(b, loc, tensor(shape), x, weight, bias,
                                 /*transpose_a=*/false, /*transpose_b=*/true);
}
