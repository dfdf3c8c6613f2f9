//===- Optimizer.cpp - train-optimizer: AdamW, clipping, mixed precision --===//
///
/// \file
/// Adds optimizer state and the `@optimizer_step` function (see
/// TrainPasses.td for the contract). Semantics follow torch.optim.AdamW and
/// torch.nn.utils.clip_grad_norm_.
///
//===----------------------------------------------------------------------===//

#include "zero/Transforms/Passes.h"

#include "Train/TrainOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

#include <cmath>

namespace mlir::zero {
#define GEN_PASS_DEF_TRAINOPTIMIZER
#include "zero/Transforms/TrainPasses.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::train;

namespace {

/// One parameter with its gradient and the optimizer state added for it.
struct Slot {
  ParamOp param;
  StateOp grad;
  StateOp master; // null in fp32
  StateOp expAvg, expAvgSq;
};

struct TrainOptimizerPass
    : public zero::impl::TrainOptimizerBase<TrainOptimizerPass> {
  using Base::Base;
  void runOnOperation() override;
};

} // namespace

void TrainOptimizerPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  bool mixed = precision != "fp32";
  bool fp16 = precision == "fp16-mixed";
  if (precision != "fp32" && precision != "bf16-mixed" && !fp16) {
    module.emitError("train-optimizer: unknown precision '")
        << precision << "'; expected fp32, bf16-mixed or fp16-mixed";
    return signalPassFailure();
  }
  // Hyperparameters: finite and in range (NaN fails every comparison).
  auto badOption = [&](StringRef name, double value, StringRef range) {
    module.emitError("train-optimizer: ")
        << name << " must be " << range << ", got " << value;
    signalPassFailure();
  };
  if (!(beta1 >= 0.0 && beta1 < 1.0))
    return badOption("beta1", beta1, "in [0, 1)");
  if (!(beta2 >= 0.0 && beta2 < 1.0))
    return badOption("beta2", beta2, "in [0, 1)");
  if (!(eps > 0.0 && std::isfinite(eps)))
    return badOption("eps", eps, "a finite number > 0");
  if (!(weightDecay >= 0.0 && std::isfinite(weightDecay)))
    return badOption("weight-decay", weightDecay, "a finite number >= 0");
  if (!std::isfinite(maxGradNorm))
    return badOption("max-grad-norm", maxGradNorm,
                     "a finite number (<= 0: no clipping)");
  if (decayMinRank < 0) {
    module.emitError("train-optimizer: decay-min-rank must be >= 0, got ")
        << static_cast<int64_t>(decayMinRank);
    return signalPassFailure();
  }
  if (module.lookupSymbol("optimizer_step")) {
    module.emitError("train-optimizer: '@optimizer_step' already exists");
    return signalPassFailure();
  }

  SymbolTable symbols(module);
  SmallVector<Slot> slots;
  for (auto state : module.getOps<StateOp>()) {
    if (state.getKind() != StateKind::grad)
      continue;
    auto param = symbols.lookup<ParamOp>(state.getParam());
    Type elt = param.getTensorType().getElementType();
    if (!mixed && !elt.isF32()) {
      param.emitOpError("has element type ")
          << elt << "; precision=fp32 needs f32 parameters (use "
                    "precision=bf16-mixed for bf16)";
      return signalPassFailure();
    }
    if (mixed && !fp16 && !elt.isBF16()) {
      param.emitOpError("has element type ")
          << elt << "; precision=bf16-mixed needs bf16 parameters";
      return signalPassFailure();
    }
    if (fp16 && !elt.isF16()) {
      param.emitOpError("has element type ")
          << elt << "; precision=fp16-mixed needs f16 parameters";
      return signalPassFailure();
    }
    slots.push_back({param, state, nullptr, nullptr, nullptr});
  }
  if (slots.empty()) {
    module.emitError("train-optimizer: no gradient state in the module; run "
                     "train-autodiff first");
    return signalPassFailure();
  }
  if (fp16) {
    // Dynamic loss scaling needs a step function that scales the loss.
    bool scaled = false;
    for (auto fn : module.getOps<func::FuncOp>())
      for (unsigned i = 0; i < fn.getNumArguments(); ++i)
        if (auto name = fn.getArgAttrOfType<StringAttr>(i, "train.name"))
          scaled |= name.getValue() == "loss_scale";
    if (!scaled) {
      module.emitError("train-optimizer: precision=fp16-mixed needs dynamic "
                       "loss scaling: run train-autodiff{loss-scale=true}");
      return signalPassFailure();
    }
  }

  // Optimizer state next to each gradient state.
  auto f32 = Float32Type::get(ctx);
  for (Slot &slot : slots) {
    OpBuilder sb(slot.grad);
    sb.setInsertionPointAfter(slot.grad);
    auto f32Type = RankedTensorType::get(slot.param.getTensorType().getShape(), f32);
    auto paramRef = FlatSymbolRefAttr::get(slot.param.getSymNameAttr());
    auto make = [&](StringRef suffix, StateKind kind) {
      return StateOp::create(sb, slot.param.getLoc(),
                             (slot.param.getSymName() + suffix).str(), f32Type,
                             kind, paramRef.getValue());
    };
    if (mixed)
      slot.master = make(".master", StateKind::master);
    slot.expAvg = make(".exp_avg", StateKind::exp_avg);
    slot.expAvgSq = make(".exp_avg_sq", StateKind::exp_avg_sq);
  }

  // @optimizer_step(%lr, %step, %grad_scale) -> grad norm.
  auto scalarF32 = RankedTensorType::get({}, f32);
  auto scalarI64 = RankedTensorType::get({}, IntegerType::get(ctx, 64));
  OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
  Location loc = module.getLoc();
  auto fn = func::FuncOp::create(
      mb, loc, "optimizer_step",
      FunctionType::get(ctx, {scalarF32, scalarI64, scalarF32}, {scalarF32}));
  fn.setArgAttr(0, "train.name", mb.getStringAttr("lr"));
  fn.setArgAttr(1, "train.name", mb.getStringAttr("step"));
  fn.setArgAttr(2, "train.name", mb.getStringAttr("grad_scale"));
  Block *entry = fn.addEntryBlock();
  OpBuilder b = OpBuilder::atBlockEnd(entry);
  Value lr = entry->getArgument(0), step = entry->getArgument(1),
        gradScale = entry->getArgument(2);
  auto ref = [&](StateOp s) { return FlatSymbolRefAttr::get(s.getSymNameAttr()); };

  // 1-2. Global gradient norm and the clipping coefficient.
  SmallVector<Value> gradValues;
  Value sumSquares;
  for (Slot &slot : slots) {
    Value g = LoadOp::create(b, loc, slot.grad.getType(), ref(slot.grad));
    gradValues.push_back(g);
    Value ss = SumSquaresOp::create(b, loc, scalarF32, g);
    sumSquares = sumSquares ? AddOp::create(b, loc, scalarF32, sumSquares, ss)
                                  .getResult()
                            : ss;
  }
  auto clip = ClipCoefOp::create(b, loc, scalarF32, scalarF32, sumSquares,
                                 gradScale, b.getF64FloatAttr(maxGradNorm));

  // 3-4. AdamW per parameter.
  unsigned decayed = 0;
  for (auto [slot, g] : llvm::zip(slots, gradValues)) {
    RankedTensorType paramType = slot.param.getTensorType();
    bool decay = paramType.getRank() >= decayMinRank;
    decayed += decay;
    StateOp masterState = slot.master;
    auto masterRef = masterState ? ref(masterState)
                                 : FlatSymbolRefAttr::get(slot.param.getSymNameAttr());
    auto f32Type = cast<RankedTensorType>(slot.expAvg.getType());
    Value w = LoadOp::create(b, loc, f32Type, masterRef);
    Value m = LoadOp::create(b, loc, f32Type, ref(slot.expAvg));
    Value v = LoadOp::create(b, loc, f32Type, ref(slot.expAvgSq));
    auto upd = AdamWOp::create(
        b, loc, f32Type, f32Type, f32Type, w, g, m, v, lr, step,
        clip.getCoef(), fp16 ? clip.getNorm() : Value(),
        b.getF64FloatAttr(beta1), b.getF64FloatAttr(beta2),
        b.getF64FloatAttr(eps), b.getF64FloatAttr(decay ? weightDecay : 0.0));
    StoreOp::create(b, loc, upd.getNewParam(), masterRef);
    if (masterState) {
      Value p = CastOp::create(b, loc, paramType, upd.getNewParam());
      StoreOp::create(b, loc, p,
                      FlatSymbolRefAttr::get(slot.param.getSymNameAttr()));
    }
    StoreOp::create(b, loc, upd.getNewExpAvg(), ref(slot.expAvg));
    StoreOp::create(b, loc, upd.getNewExpAvgSq(), ref(slot.expAvgSq));
    Value zero = FillOp::create(b, loc, slot.grad.getType(), b.getF64FloatAttr(0.0));
    StoreOp::create(b, loc, zero, ref(slot.grad));
  }
  func::ReturnOp::create(b, loc, clip.getNorm());
  numUpdated = slots.size();
  numDecayed = decayed;
}
