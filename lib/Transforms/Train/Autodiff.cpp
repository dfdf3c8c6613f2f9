//===- Autodiff.cpp - train-autodiff: reverse-mode AD ---------------------===//
///
/// \file
/// Builds the forward+backward function of a training step from its loss
/// function. The pass is generic over GradientOpInterface: it decides which
/// values carry gradients, walks the forward ops in reverse, asks each op for
/// its vector-Jacobian product, sums the gradients of values used more than
/// once, and accumulates each parameter's gradient into its gradient state.
///
//===----------------------------------------------------------------------===//

#include "zero/Transforms/Passes.h"

#include "Train/TrainOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::zero {
#define GEN_PASS_DEF_TRAINAUTODIFF
#include "zero/Transforms/TrainPasses.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::train;

namespace {

/// The name of a parameter's gradient state.
std::string gradStateName(StringRef param) { return (param + ".grad").str(); }

struct TrainAutodiffPass
    : public zero::impl::TrainAutodiffBase<TrainAutodiffPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  LogicalResult differentiate(ModuleOp module, func::FuncOp loss);
};

bool isFloatTensor(Type t) {
  return isa<FloatType>(getElementTypeOrSelf(t));
}

} // namespace

void TrainAutodiffPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto loss = module.lookupSymbol<func::FuncOp>(function);
  if (!loss) {
    module.emitError("train-autodiff: no function named '") << function << "'";
    return signalPassFailure();
  }
  if (Operation *existing = module.lookupSymbol(stepFunction)) {
    existing->emitError("train-autodiff: '")
        << stepFunction << "' already exists (was the pass run twice?)";
    return signalPassFailure();
  }
  if (failed(differentiate(module, loss)))
    signalPassFailure();
}

LogicalResult TrainAutodiffPass::differentiate(ModuleOp module,
                                               func::FuncOp loss) {
  FunctionType fnType = loss.getFunctionType();
  auto scalarF32 = RankedTensorType::get({}, Float32Type::get(&getContext()));
  if (fnType.getNumResults() != 1 || fnType.getResult(0) != scalarF32)
    return loss.emitError("the loss function must return one tensor<f32>, got ")
           << fnType.getResults();
  if (!loss.getBody().hasOneBlock())
    return loss.emitError("the loss function must have a single block");

  // Arguments marked for differentiation.
  SmallVector<unsigned> wrtArgs;
  for (unsigned i = 0; i < loss.getNumArguments(); ++i) {
    if (!loss.getArgAttr(i, "train.requires_grad"))
      continue;
    Type t = loss.getArgument(i).getType();
    if (!isFloatTensor(t))
      return loss.emitError("cannot differentiate with respect to argument #")
             << i << " of type " << t
             << ": integer values (token ids, targets) are not differentiable";
    wrtArgs.push_back(i);
  }

  // The step function starts as a copy of the loss function.
  OpBuilder moduleBuilder(module.getContext());
  moduleBuilder.setInsertionPointAfter(loss);
  auto step = cast<func::FuncOp>(moduleBuilder.clone(*loss));
  step.setSymName(stepFunction);
  step->removeAttr("sym_visibility");
  Block &body = step.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  Value lossValue = ret.getOperand(0);

  SymbolTable symbols(module);
  // 1. Active values: those that depend on a trainable parameter or a marked
  //    argument through differentiable operands.
  DenseSet<Value> active;
  for (unsigned i : wrtArgs)
    active.insert(body.getArgument(i));
  llvm::SmallSetVector<StringRef, 8> frozen;
  for (Operation &op : body.without_terminator()) {
    if (auto load = dyn_cast<LoadOp>(op)) {
      auto param = symbols.lookup<ParamOp>(load.getName());
      if (param && param.getTrainable())
        active.insert(load.getResult());
      else if (param)
        frozen.insert(param.getSymName());
      continue;
    }
    auto grad = dyn_cast<GradientOpInterface>(op);
    bool anyActive = false;
    for (OpOperand &operand : op.getOpOperands()) {
      if (!active.contains(operand.get()))
        continue;
      if (grad && !grad.isDifferentiableOperand(operand.getOperandNumber()))
        continue;
      anyActive = true;
    }
    if (anyActive)
      for (Value r : op.getResults())
        active.insert(r);
  }
  numFrozen = frozen.size();

  // 2. Useful values: those the loss depends on.
  DenseSet<Value> useful;
  useful.insert(lossValue);
  for (Operation &op : llvm::reverse(body.without_terminator())) {
    if (llvm::none_of(op.getResults(),
                      [&](Value r) { return useful.contains(r); }))
      continue;
    for (Value operand : op.getOperands())
      useful.insert(operand);
  }

  // 3. The reverse sweep. Backward ops go before the return, in reverse
  //    order of the forward ops.
  OpBuilder b(ret);
  DenseMap<Value, Value> grads;
  auto addGrad = [&](Value v, Value g) {
    auto [it, inserted] = grads.try_emplace(v, g);
    if (!inserted) {
      it->second = AddOp::create(b, g.getLoc(), v.getType(), it->second, g);
      ++numBackwardOps;
    }
  };
  Location lossLoc = lossValue.getLoc();
  // The seed marks where the backward part starts (zero-partition gathers
  // stage-3 parameters again for their backward uses after it).
  auto seed = FillOp::create(b, lossLoc, scalarF32, b.getF64FloatAttr(1.0));
  seed->setAttr(zero::kLossSeedAttr, b.getUnitAttr());
  grads[lossValue] = seed;
  if (lossScale) {
    // d(loss·S)/d(loss) = S: the backward of the scaled loss.
    // Through the function interface, so that argument attributes (the
    // train.name of an array model's inputs) stay one per argument.
    unsigned at = step.getNumArguments();
    if (failed(step.insertArgument(at, scalarF32, DictionaryAttr(), lossLoc)))
      return step.emitError("cannot add the loss-scale argument");
    Value scale = body.getArgument(at);
    grads[lossValue] = MulOp::create(b, lossLoc, scalarF32, seed, scale);
  }

  // Each parameter's gradient is accumulated when the sweep reaches its
  // first load in program order: by then every use has been differentiated.
  DenseMap<Operation *, SmallVector<LoadOp>> loadsByFirst;
  llvm::StringMap<LoadOp> firstLoad;
  for (auto load : body.getOps<LoadOp>()) {
    if (!active.contains(load.getResult()))
      continue;
    auto [it, inserted] = firstLoad.try_emplace(load.getName(), load);
    loadsByFirst[it->second].push_back(load);
  }

  unsigned numGradients = 0;
  for (Operation &op : llvm::reverse(body.without_terminator())) {
    if (auto load = dyn_cast<LoadOp>(op)) {
      auto it = loadsByFirst.find(load);
      if (it == loadsByFirst.end())
        continue;
      Value total;
      for (LoadOp l : it->second) {
        Value g = grads.lookup(l.getResult());
        if (!g)
          continue;
        total = total ? AddOp::create(b, l.getLoc(), g.getType(), total, g)
                            .getResult()
                      : g;
      }
      if (!total)
        continue; // A trainable parameter the loss does not depend on.
      std::string name = gradStateName(load.getName());
      if (!symbols.lookup(name)) {
        auto param = symbols.lookup<ParamOp>(load.getName());
        OpBuilder sb(param);
        sb.setInsertionPointAfter(param);
        StateOp::create(sb, param.getLoc(), name, param.getTensorType(),
                        StateKind::grad, param.getSymName());
      }
      AccumulateOp::create(b, load.getLoc(), total,
                           FlatSymbolRefAttr::get(&getContext(), name));
      ++numGradients;
      continue;
    }

    bool onPath = llvm::any_of(op.getResults(), [&](Value r) {
      return active.contains(r) && useful.contains(r) && grads.count(r);
    });
    if (!onPath)
      continue;
    auto gradOp = dyn_cast<GradientOpInterface>(op);
    if (!gradOp)
      return op.emitOpError("is on a path from a trainable parameter to the "
                            "loss but has no gradient rule");

    SmallVector<Value> resultGrads;
    for (OpResult r : op.getResults()) {
      if (!gradOp.isDifferentiableResult(r.getResultNumber())) {
        resultGrads.push_back(Value());
        continue;
      }
      Value g = grads.lookup(r);
      if (!g) {
        if (!isFloatTensor(r.getType()))
          return op.emitOpError("result of type ")
                 << r.getType() << " has no gradient";
        g = FillOp::create(b, op.getLoc(), r.getType(), b.getF64FloatAttr(0.0));
      }
      resultGrads.push_back(g);
    }
    SmallVector<bool> needGrad;
    for (OpOperand &operand : op.getOpOperands())
      needGrad.push_back(active.contains(operand.get()) &&
                         gradOp.isDifferentiableOperand(
                             operand.getOperandNumber()));
    SmallVector<Value> operandGrads(op.getNumOperands(), Value());

    Block::iterator before = b.getInsertionPoint();
    Operation *prev = before == body.begin() ? nullptr : &*std::prev(before);
    if (failed(gradOp.buildGradient(b, resultGrads, needGrad, operandGrads)))
      return failure();
    // Count what the rule emitted.
    for (Block::iterator it = prev ? std::next(prev->getIterator()) : body.begin();
         it != b.getInsertionPoint(); ++it)
      ++numBackwardOps;

    for (auto [operand, g] : llvm::zip(op.getOperands(), operandGrads))
      if (g)
        addGrad(operand, g);
  }
  this->numGradients = numGradients;

  // 4. Return the loss and the gradients of the marked arguments.
  SmallVector<Value> results{lossValue};
  SmallVector<Type> resultTypes{lossValue.getType()};
  for (unsigned i : wrtArgs) {
    Value arg = body.getArgument(i);
    Value g = grads.lookup(arg);
    if (!g)
      g = FillOp::create(b, ret.getLoc(), arg.getType(), b.getF64FloatAttr(0.0));
    results.push_back(g);
    resultTypes.push_back(arg.getType());
  }
  ret->setOperands(results);
  SmallVector<Type> inputs(fnType.getInputs());
  if (lossScale)
    inputs.push_back(scalarF32);
  step.setFunctionType(FunctionType::get(&getContext(), inputs, resultTypes));
  if (lossScale)
    step.setArgAttr(inputs.size() - 1, "train.name",
                    StringAttr::get(&getContext(), "loss_scale"));
  return success();
}
