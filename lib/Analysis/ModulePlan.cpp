//===- ModulePlan.cpp - the model.h contract of a step --------------------===//
///
/// \file
/// States, groups and the model description of a step (StepPlan.h), and
/// the buffer plan of all its functions (zero-buffer-assign, zero-report).
///
//===----------------------------------------------------------------------===//

#include "zero/Analysis/StepPlan.h"

using namespace mlir;

namespace mlir::zero::plan {

const StateInfo *ModulePlan::lookupState(Operation *user, StringRef name) {
  auto it = stateIndex.find(name);
  if (it == stateIndex.end()) {
    user->emitOpError("refers to @") << name << ", which is not a state symbol";
    return nullptr;
  }
  const StateInfo &s = states[it->second];
  if (!s.hasStorage) {
    user->emitOpError("reads parameter @")
        << name
        << " which has no storage of its own (zero.sharded: its data lives in "
           "its group's zero.shard of kind param)";
    return nullptr;
  }
  return &s;
}

static int stateKindOf(train::StateKind k) {
  switch (k) {
  case train::StateKind::grad:
    return kStateGrad;
  case train::StateKind::master:
    return kStateMaster;
  case train::StateKind::exp_avg:
    return kStateExpAvg;
  case train::StateKind::exp_avg_sq:
    return kStateExpAvgSq;
  }
  return kStateGrad;
}

static int stateKindOf(zero::ShardKind k) {
  switch (k) {
  case zero::ShardKind::param:
    return kStateParam;
  case zero::ShardKind::grad:
    return kStateGrad;
  case zero::ShardKind::master:
    return kStateMaster;
  case zero::ShardKind::exp_avg:
    return kStateExpAvg;
  case zero::ShardKind::exp_avg_sq:
    return kStateExpAvgSq;
  }
  return kStateGrad;
}

/// Checks the element type of a state or value the lowering must store.
LogicalResult checkStorable(Operation *op, RankedTensorType t) {
  Type e = t.getElementType();
  if (!e.isF32() && !zero::narrow::isNarrowFloat(e) && !e.isInteger(32) &&
      !e.isInteger(64))
    return op->emitOpError("element type ")
           << e << " is not supported by the CPU lowering";
  return success();
}

LogicalResult ModulePlan::collectDeclarations() {
  // Groups first: shards refer to them by index.
  for (auto g : module.getOps<zero::GroupOp>()) {
    GroupInfo info;
    info.op = g;
    info.name = g.getSymName().str();
    info.padded = g.getPadded();
    info.shard = g.getShardSize();
    for (auto [i, m] : llvm::enumerate(g.getMembers())) {
      StringRef name = cast<FlatSymbolRefAttr>(m).getValue();
      auto param = module.lookupSymbol<train::ParamOp>(name);
      if (!param)
        return g.emitOpError("member @")
               << name
               << " is not a train.param; the lowering initializes "
                  "shards from their members' declarations";
      info.members.push_back(name.str());
      info.offsets.push_back(g.getOffsets()[i]);
      info.numels.push_back(param.getTensorType().getNumElements());
      info.decay.push_back(g.getDecay()[i]);
    }
    groupIndex[info.name] = groups.size();
    groups.push_back(std::move(info));
  }

  for (Operation &op : module.getBody()->getOperations()) {
    StateInfo s;
    s.op = &op;
    if (auto p = dyn_cast<train::ParamOp>(op)) {
      params[p.getSymName()] = p;
      s.name = p.getSymName().str();
      s.type = p.getTensorType();
      s.kind = kStateParam;
      s.hasStorage = !p->hasAttr("zero.sharded");
      // The whole model's count: a tensor rank's cut counts as its whole
      // tensor (#zero.tensor_split's full shape).
      if (auto cut = p->getAttrOfType<zero::TensorSplitAttr>(
              zero::ZeroDialect::kTensorSplitAttrName))
        numParams += RankedTensorType::get(cut.getFull(),
                                           s.type.getElementType())
                         .getNumElements();
      else
        numParams += s.type.getNumElements();
    } else if (auto st = dyn_cast<train::StateOp>(op)) {
      s.name = st.getSymName().str();
      s.type = st.getTensorType();
      s.kind = stateKindOf(st.getKind());
    } else if (auto sh = dyn_cast<zero::ShardOp>(op)) {
      s.name = sh.getSymName().str();
      s.type = sh.getTensorType();
      s.kind = stateKindOf(sh.getKind());
      auto it = groupIndex.find(sh.getGroup());
      if (it == groupIndex.end())
        return sh.emitOpError("refers to @")
               << sh.getGroup() << ", which is not a zero.group";
      s.group = it->second;
    } else if (isa<zero::GroupOp, func::FuncOp>(op)) {
      continue;
    } else {
      return op.emitOpError("is not supported at module level by "
                            "convert-train-to-emitc");
    }
    if (failed(checkStorable(&op, s.type)))
      return failure();
    if (!s.type.getElementType().isF32() &&
        !zero::narrow::isNarrowFloat(s.type.getElementType()))
      return op.emitOpError("state of element type ")
             << s.type.getElementType()
             << " is not supported by the CPU lowering (f32, bf16 or f16)";
    stateIndex[s.name] = states.size();
    states.push_back(std::move(s));
  }
  // The state layout is zero-layout-states' (#zero.slot): read, never
  // decided here.
  auto sizes = module->getAttrOfType<DictionaryAttr>(
      zero::ZeroDialect::kStateArenaBytesAttrName);
  if (!sizes)
    return module.emitError("convert-train-to-emitc: the module has no state "
                            "layout (")
           << zero::ZeroDialect::kStateArenaBytesAttrName
           << "); run zero-layout-states first";
  for (int m : {kMemParams, kMemGrads, kMemMaster, kMemMoments, kMemConsts})
    if (auto bytes = sizes.getAs<IntegerAttr>(kMemName[m]))
      arenaBytes[m] = bytes.getInt();
  for (StateInfo &s : states) {
    if (!s.hasStorage)
      continue;
    auto slot = s.op->getAttrOfType<zero::SlotAttr>(
        zero::ZeroDialect::kSlotAttrName);
    if (!slot)
      return s.op->emitOpError("has no ")
             << zero::ZeroDialect::kSlotAttrName
             << " (its place in the state arenas); run zero-layout-states "
                "after the last pass that adds states";
    s.place = {static_cast<int>(slot.getArena()), slot.getOffset()};
  }
  for (GroupInfo &g : groups) {
    auto span = [&](StringRef name) -> std::optional<Placement> {
      if (auto a = g.op->getAttrOfType<zero::SlotAttr>(name))
        return Placement{static_cast<int>(a.getArena()), a.getOffset()};
      return std::nullopt;
    };
    g.paramSpan = span(zero::ZeroDialect::kParamSpanAttrName);
    g.gradSpan = span(zero::ZeroDialect::kGradSpanAttrName);
  }
  return success();
}

LogicalResult ModulePlan::describe() {
  if (auto name = module->getAttrOfType<StringAttr>("zero.model_name"))
    modelName = name.getValue().str();
  if (auto ws = module->getAttrOfType<IntegerAttr>("zero.world_size"))
    worldSize = ws.getInt();
  if (auto mesh = module->getAttrOfType<zero::MeshAttr>(
          zero::ZeroDialect::kMeshAttrName))
    tensorSize = mesh.getTensor();
  if (auto st = module->getAttrOfType<IntegerAttr>("zero.stage"))
    stage = st.getInt();

  static constexpr StringLiteral names[4] = {"forward", "forward_backward",
                                             "optimizer_step", "logits"};
  for (auto f : module.getOps<func::FuncOp>()) {
    auto it = llvm::find(names, f.getSymName());
    if (it == std::end(names))
      return f.emitOpError("@")
             << f.getSymName()
             << " is not part of the model.h contract (@forward, "
                "@forward_backward, @optimizer_step, @logits)";
    if (f.isExternal() || !f.getBody().hasOneBlock())
      return f.emitOpError("must have a body of exactly one block");
    functions[it - std::begin(names)] = f;
  }
  func::FuncOp forward = functions[0];
  if (!forward)
    return module.emitError("convert-train-to-emitc: the module has no "
                            "@forward (the model.h contract needs it)");
  if (forward.getNumArguments() &&
      llvm::any_of(llvm::seq(forward.getNumArguments()), [&](unsigned i) {
        return forward.getArgAttr(i, "train.name") != nullptr;
      }))
    return describeInputs(forward);
  auto ids = forward.getNumArguments()
                 ? dyn_cast<RankedTensorType>(forward.getArgumentTypes()[0])
                 : RankedTensorType();
  if (!ids || ids.getRank() != 2 || !ids.getElementType().isInteger(32))
    return forward.emitOpError(
        "must take token ids tensor<BxTxi32> as its first argument (the "
        "model.h contract)");
  batch = ids.getDimSize(0);
  seq = ids.getDimSize(1);
  forward.walk([&](train::CrossEntropyOp ce) {
    paddedVocab = ce.getLogits().getType().getShape().back();
    vocab = ce.getEffectiveNumClasses();
  });
  // The vocabulary-parallel loss (zero-vocab-parallel): each tensor rank
  // holds Vp / M logit columns of the whole Vp.
  forward.walk([&](zero::VocabExpSumsOp sums) {
    paddedVocab =
        sums.getLogits().getType().getShape().back() * sums.getSize();
    vocab = sums.getNumClasses();
  });
  return success();
}

LogicalResult ModulePlan::describeInputs(func::FuncOp forward) {
  for (unsigned i = 0; i < forward.getNumArguments(); ++i) {
    auto name = forward.getArgAttrOfType<StringAttr>(i, "train.name");
    if (!name || name.getValue().empty())
      return forward.emitOpError("argument #")
             << i
             << " has no train.name; either every argument of @forward is "
                "a named input (an array model) or none is (token ids and "
                "targets)";
    StringRef n = name.getValue();
    if (!llvm::all_of(n, [](char c) { return llvm::isAlnum(c) || c == '_'; }))
      return forward.emitOpError("input name '")
             << n << "' is not made of letters, digits and '_'";
    if (llvm::any_of(inputs, [&](const InputInfo &in) { return in.name == n; }))
      return forward.emitOpError("input name '") << n << "' appears twice";
    auto t = dyn_cast<RankedTensorType>(forward.getArgumentTypes()[i]);
    Type elt = t ? t.getElementType() : Type();
    if (!t || t.getRank() < 1 || !t.hasStaticShape() ||
        !(elt.isF32() || elt.isBF16() || elt.isF16() || elt.isInteger(32) ||
          elt.isInteger(64)))
      return forward.emitOpError("input '")
             << n << "' has type " << forward.getArgumentTypes()[i]
             << "; the model.h contract passes static tensors [B, ...] of "
                "f32, bf16, f16, i32 or i64";
    if (!inputs.empty() && t.getDimSize(0) != inputs[0].type.getDimSize(0))
      return forward.emitOpError("input '")
             << n << "' has batch size " << t.getDimSize(0) << ", input '"
             << inputs[0].name << "' " << inputs[0].type.getDimSize(0)
             << " (the first dimension of every input is the batch)";
    inputs.push_back({n.str(), t});
  }
  batch = inputs[0].type.getDimSize(0);
  seq = 1; // one row is one sample (model.h)
  if (functions[3])
    return functions[3].emitOpError(
        "is for token models; a model with named inputs has no @logits");
  return success();
}


FailureOr<zero::BufferPlan> ModulePlan::planBuffers(bool annotate, bool bump) {
  static constexpr Role roles[4] = {Role::Forward, Role::ForwardBackward,
                                    Role::OptimizerStep, Role::Logits};
  zero::BufferPlan plan;
  for (int m : {kMemParams, kMemGrads, kMemMaster, kMemMoments})
    plan.stateArenaBytes += arenaBytes[m];
  plan.constantArenaBytes = arenaBytes[kMemConsts];
  // @forward_backward first: the others may share its activation arena.
  SmallVector<std::pair<int, zero::ArenaBytes>> planned;
  for (int i : {1, 0, 2, 3}) {
    if (!functions[i])
      continue;
    FunctionPlan fl(*this, functions[i], roles[i],
                    bump ? Assign::Bump : Assign::BestFit);
    if (failed(fl.plan()))
      return failure();
    zero::ArenaBytes a{fl.arenaExtent(kMemActs), fl.arenaExtent(kMemTemps)};
    planned.push_back({i, a});
    plan.arenas.activations = std::max(plan.arenas.activations, a.activations);
    plan.arenas.temporaries = std::max(plan.arenas.temporaries, a.temporaries);
    plan.bumpBytes.activations =
        std::max(plan.bumpBytes.activations, fl.blockSum(kMemActs));
    plan.bumpBytes.temporaries =
        std::max(plan.bumpBytes.temporaries, fl.blockSum(kMemTemps));
    if (annotate)
      fl.annotate();
  }
  llvm::sort(planned, [](const auto &a, const auto &b) {
    return a.first < b.first;
  });
  for (auto &[i, a] : planned)
    plan.functions.push_back({functions[i].getSymName().str(), a});
  plan.hostSlotBytes = hostSlotBytes;
  if (annotate) {
    Builder bld(ctx);
    if (hostSlotBytes > 0)
      module->setAttr(kHostSlotBytesAttr, bld.getI64IntegerAttr(hostSlotBytes));
    else
      module->removeAttr(kHostSlotBytesAttr);
    module->setAttr(
        kArenaBytesAttr,
        bld.getDictionaryAttr(
            {bld.getNamedAttr("activations",
                              bld.getI64IntegerAttr(plan.arenas.activations)),
             bld.getNamedAttr("temporaries",
                              bld.getI64IntegerAttr(plan.arenas.temporaries))}));
  }
  return plan;
}


} // namespace mlir::zero::plan

FailureOr<zero::BufferPlan> mlir::zero::planBuffers(ModuleOp module,
                                                    bool annotate, bool bump) {
  zero::plan::ModulePlan plan(module);
  if (failed(plan.analyze()))
    return failure();
  return plan.planBuffers(annotate, bump);
}

