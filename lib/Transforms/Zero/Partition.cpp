//===- Partition.cpp - zero-partition: ZeRO-DP stages 0-3 -----------------===//
///
/// \file
/// Shards the model states of a training step over data-parallel ranks and
/// inserts the collectives (ZeRO §5). See ZeroPasses.td for the contract.
///
/// Input: a module after train-autodiff and train-optimizer, with
/// @forward_backward (accumulating into `train.state kind(<grad>)`) and
/// @optimizer_step (train.adamw per parameter). Output, by stage:
///   0: @optimizer_step all-reduces each group's gradients first.
///   1: @optimizer_step reduce-scatters, updates shards, all-gathers.
///   2: @forward_backward reduce-scatters each group when its gradients are
///      complete; @optimizer_step works on gradient shards.
///   3: as 2, and every function all-gathers parameter groups before use.
///
//===----------------------------------------------------------------------===//

#include "zero/Analysis/Blocks.h"
#include "zero/Analysis/Report.h"
#include "zero/Transforms/Passes.h"

#include "Train/TrainOps.h"
#include "Zero/ZeroOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROPARTITION
#include "zero/Transforms/ZeroPasses.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;
using train::StateKind;

namespace {

/// One trainable parameter and what the optimizer does with it.
struct Member {
  train::ParamOp param;
  train::StateOp grad;
  double weightDecay = 0.0;
};

/// A flat shard group being built.
struct Group {
  std::string name;
  SmallVector<Member> members;
  GroupOp op;
  int64_t total = 0, padded = 0;
  /// Sharded state of the group, by kind (null when not sharded).
  ShardOp param, grad, master, expAvg, expAvgSq;
  /// Persistent groups (parameters at or below persist-threshold) keep
  /// their parameters whole at stage 3: they are partitioned as stage 2.
  bool persistent = false;

  int64_t shard(int64_t n) const { return padded / n; }
};

/// AdamW hyperparameters recovered from @optimizer_step.
struct AdamWConfig {
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8, maxNorm = 1.0;
  /// Skip the update when the norm is not finite (fp16 loss scaling).
  bool skipNonFinite = false;
};

struct ZeroPartitionPass
    : public zero::impl::ZeroPartitionBase<ZeroPartitionPass> {
  using Base::Base;
  void runOnOperation() override;

private:
  LogicalResult partition(ModuleOp module, int stageNum);
  FailureOr<int> chooseStage(ModuleOp module);

  int64_t n = 1;
  /// The mesh's tensor size M (1 without #zero.mesh); n = world-size / M.
  int64_t tensorSize = 1;
  bool mixed = false;
  SmallVector<Group> groups;
  AdamWConfig adamw;
};

/// The group key of a parameter for grouping=block: its block
/// (zero::blockOfParameter: `h3`, `model.layers.3`), else "rest".
std::string blockKey(StringRef name) {
  StringRef block = zero::blockOfParameter(name);
  return block.empty() ? "rest" : block.str();
}

RankedTensorType flatType(Type elt, int64_t numel) {
  return RankedTensorType::get({numel}, elt);
}

int64_t bytesOf(Type elt) { return elt.getIntOrFloatBitWidth() / 8; }

/// Whether `p` is cut over the tensor axis (zero-tensor-parallel).
bool isTensorCut(train::ParamOp p) {
  return p && p->hasAttr(ZeroDialect::kTensorSplitAttrName);
}

/// Splits the gradient norm's sum of squares in `step` (the add chain of
/// train.sum_squares feeding train.clip_coef, possibly through one data-axis
/// zero.all_reduce) into the whole parameters' part and the tensor-cut
/// parameters' part, the latter summed over the `m` tensor ranks first:
/// every parameter counts once. `isCut` says whether a sum_squares input is
/// a cut parameter's gradient. No-op when nothing is cut.
void splitNormOverTensor(func::FuncOp step, int64_t m,
                         llvm::function_ref<bool(Value)> isCut) {
  train::ClipCoefOp clip;
  step.walk([&](train::ClipCoefOp c) { clip = c; });
  if (!clip)
    return;
  OpOperand *sumUse = &clip->getOpOperand(0);
  if (auto ar = sumUse->get().getDefiningOp<AllReduceOp>())
    sumUse = &ar->getOpOperand(0);
  SmallVector<train::SumSquaresOp> leaves;
  SmallVector<Operation *> adds;
  SmallVector<Value> work{sumUse->get()};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (auto ss = v.getDefiningOp<train::SumSquaresOp>()) {
      leaves.push_back(ss);
    } else if (auto add = v.getDefiningOp<train::AddOp>()) {
      adds.push_back(add);
      work.push_back(add.getLhs());
      work.push_back(add.getRhs());
    }
  }
  if (llvm::none_of(leaves, [&](train::SumSquaresOp ss) {
        return isCut(ss.getInput());
      }))
    return;
  OpBuilder b(sumUse->getOwner());
  Location loc = clip.getLoc();
  Type scalar = clip.getSumSquares().getType();
  Value whole, cut;
  // Leaves in program order, so the sums add in the order they did.
  llvm::sort(leaves, [](train::SumSquaresOp x, train::SumSquaresOp y) {
    return x->isBeforeInBlock(y);
  });
  for (train::SumSquaresOp ss : leaves) {
    Value &acc = isCut(ss.getInput()) ? cut : whole;
    acc = acc ? train::AddOp::create(b, loc, scalar, acc, ss).getResult()
              : ss.getResult();
  }
  cut = AllReduceOp::create(b, loc, scalar, cut, ReduceKind::sum, m,
                            MeshAxis::tensor);
  Value total =
      whole ? train::AddOp::create(b, loc, scalar, whole, cut).getResult()
            : cut;
  sumUse->set(total);
  for (Operation *add : adds)
    if (add->use_empty())
      add->erase();
}

} // namespace

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

void ZeroPartitionPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (worldSize < 1) {
    module.emitError("zero-partition: world-size must be >= 1, got ")
        << static_cast<int64_t>(worldSize);
    return signalPassFailure();
  }
  if (persistThreshold < 0 || deviceMemory < 0) {
    module.emitError("zero-partition: ")
        << (persistThreshold < 0 ? "persist-threshold" : "device-memory")
        << " must be >= 0, got "
        << static_cast<int64_t>(persistThreshold < 0 ? persistThreshold
                                                     : deviceMemory);
    return signalPassFailure();
  }
  if (module->hasAttr(kStageAttr)) {
    module.emitError("zero-partition: the module is already partitioned");
    return signalPassFailure();
  }
  tensorSize = 1;
  if (auto mesh = module->getAttrOfType<MeshAttr>(ZeroDialect::kMeshAttrName)) {
    tensorSize = mesh.getTensor();
    if (worldSize % tensorSize != 0) {
      module.emitError("zero-partition: world-size ")
          << static_cast<int64_t>(worldSize)
          << " is not a multiple of the mesh's tensor size " << tensorSize;
      return signalPassFailure();
    }
    if (mesh.getData() != 0 && mesh.getData() * tensorSize != worldSize) {
      module.emitError("zero-partition: world-size ")
          << static_cast<int64_t>(worldSize) << " differs from the mesh's "
          << mesh.getData() << " x " << tensorSize << " ranks";
      return signalPassFailure();
    }
    module->setAttr(ZeroDialect::kMeshAttrName,
                    MeshAttr::get(module.getContext(),
                                  worldSize / tensorSize, tensorSize));
  }
  // Model states are sharded over the data axis: N_d = N / M ranks.
  n = worldSize / tensorSize;
  int stageNum;
  if (stage == "auto") {
    FailureOr<int> chosen = chooseStage(module);
    if (failed(chosen))
      return signalPassFailure();
    stageNum = *chosen;
  } else if (stage.size() == 1 && stage[0] >= '0' && stage[0] <= '3') {
    stageNum = stage[0] - '0';
  } else {
    module.emitError("zero-partition: stage must be 0, 1, 2, 3 or auto, got '")
        << stage << "'";
    return signalPassFailure();
  }
  if (failed(partition(module, stageNum)))
    return signalPassFailure();
}

/// Runs the partition at each stage on a copy and keeps the lowest stage
/// whose model states plus activation estimate fit `device-memory`.
FailureOr<int> ZeroPartitionPass::chooseStage(ModuleOp module) {
  if (deviceMemory <= 0)
    return module.emitError(
        "zero-partition: stage=auto needs device-memory=<bytes per rank>");
  // Activation estimate: bytes of forward values the backward reads.
  int64_t activations = 0;
  if (auto fb = module.lookupSymbol<func::FuncOp>("forward_backward"))
    activations = savedActivationBytes(fb);
  int64_t needed = 0;
  for (int s = 0; s <= 3; ++s) {
    OwningOpRef<ModuleOp> copy = cast<ModuleOp>(module->clone());
    ZeroPartitionPass trial;
    trial.n = n;
    trial.tensorSize = tensorSize;
    trial.worldSize = static_cast<int64_t>(worldSize);
    trial.grouping = std::string(grouping);
    if (failed(trial.partition(*copy, s)))
      return failure();
    FailureOr<StepReport> report = analyzeStep(*copy);
    if (failed(report))
      return failure();
    needed = report->totalStateBytes() + activations;
    if (needed <= deviceMemory)
      return s;
  }
  return module.emitError("zero-partition: stage=auto: even stage 3 needs ")
         << needed << " bytes per rank (model states + " << activations
         << " bytes of activations), more than device-memory="
         << static_cast<int64_t>(deviceMemory);
}

//===----------------------------------------------------------------------===//
// The rewrite
//===----------------------------------------------------------------------===//

LogicalResult ZeroPartitionPass::partition(ModuleOp module, int stageNum) {
  MLIRContext *ctx = module.getContext();
  SymbolTable symbols(module);
  auto step = module.lookupSymbol<func::FuncOp>("optimizer_step");
  auto fb = module.lookupSymbol<func::FuncOp>("forward_backward");

  // Gradient states in declaration order.
  SmallVector<Member> members;
  for (auto state : module.getOps<train::StateOp>())
    if (state.getKind() == StateKind::grad)
      members.push_back({symbols.lookup<train::ParamOp>(state.getParam()),
                         state, 0.0});
  if (stageNum >= 1 || n > 1) {
    if (members.empty() || !fb || !step)
      return module.emitError("zero-partition: stage ")
             << stageNum << " at world-size " << n
             << " needs a training step with gradients and an optimizer (run "
                "train-autodiff and train-optimizer first)";
  }
  OpBuilder mb(ctx);
  // The ranks the program runs on: N = N_d x M.
  module->setAttr(kWorldSizeAttr, mb.getI64IntegerAttr(n * tensorSize));
  module->setAttr(kStageAttr, mb.getI64IntegerAttr(stageNum));
  // A tensor-cut parameter's gradient holds this tensor rank's slice only.
  auto isCutGrad = [&](Value v) {
    if (auto load = v.getDefiningOp<train::LoadOp>())
      if (auto state = symbols.lookup<train::StateOp>(load.getName()))
        return isTensorCut(symbols.lookup<train::ParamOp>(state.getParam()));
    if (auto unpack = v.getDefiningOp<UnpackOp>()) {
      // Groups are newer than `symbols`.
      auto g = module.lookupSymbol<GroupOp>(unpack.getGroup());
      auto refs = g.getMembers();
      auto ref = cast<FlatSymbolRefAttr>(
          refs[cast<OpResult>(v).getResultNumber()]);
      return isTensorCut(symbols.lookup<train::ParamOp>(ref.getValue()));
    }
    return false;
  };
  if (members.empty() || (stageNum == 0 && n == 1)) {
    if (step && tensorSize > 1)
      splitNormOverTensor(step, tensorSize, isCutGrad);
    return success();
  }

  // Hyperparameters, per-parameter weight decay and precision from the
  // optimizer train-optimizer wrote.
  llvm::StringMap<double> decayOf;
  for (auto upd : step.getOps<train::AdamWOp>()) {
    adamw.beta1 = upd.getBeta1().convertToDouble();
    adamw.beta2 = upd.getBeta2().convertToDouble();
    adamw.eps = upd.getEps().convertToDouble();
    adamw.skipNonFinite = static_cast<bool>(upd.getFiniteCheck());
    // The first store of the new value names the master or the parameter.
    for (Operation *user : upd.getNewParam().getUsers())
      if (auto store = dyn_cast<train::StoreOp>(user)) {
        StringRef sym = store.getName();
        if (auto state = symbols.lookup<train::StateOp>(sym))
          sym = state.getParam();
        decayOf[sym] = upd.getWeightDecay().convertToDouble();
      }
  }
  for (auto clip : step.getOps<train::ClipCoefOp>())
    adamw.maxNorm = clip.getMaxNorm().convertToDouble();
  mixed = false;
  for (auto state : module.getOps<train::StateOp>())
    mixed |= state.getKind() == StateKind::master;
  for (Member &m : members) {
    auto it = decayOf.find(m.param.getSymName());
    if (it == decayOf.end())
      return m.param.emitOpError("has a gradient but no AdamW update in "
                                 "@optimizer_step");
    m.weightDecay = it->second;
  }

  // 1. Groups and their layout.
  groups.clear();
  llvm::StringMap<unsigned> groupIndex;
  for (Member &m : members) {
    std::string key = grouping == "param" ? m.param.getSymName().str()
                                          : blockKey(m.param.getSymName());
    if (grouping != "param" && grouping != "block")
      return module.emitError("zero-partition: grouping must be block or param, got '")
             << grouping << "'";
    bool persist = stageNum >= 3 && persistThreshold > 0 &&
                   m.param.getTensorType().getNumElements() <=
                       static_cast<int64_t>(persistThreshold);
    if (persist)
      key += ".persistent";
    // Cut and whole parameters never share a group: the norm sums their
    // squares over different axes.
    if (isTensorCut(m.param))
      key += ".tp";
    auto [it, inserted] = groupIndex.try_emplace(key, groups.size());
    if (inserted) {
      groups.emplace_back();
      groups.back().name = "group." + key;
      groups.back().persistent = persist;
    }
    groups[it->second].members.push_back(m);
  }
  double groupDecay = 0.0;
  for (Member &m : members)
    groupDecay = std::max(groupDecay, m.weightDecay);
  Operation *lastDecl = nullptr;
  for (Operation &op : *module.getBody())
    if (isa<train::ParamOp, train::StateOp>(op))
      lastDecl = &op;
  mb.setInsertionPointAfter(lastDecl);
  int64_t padding = 0;
  for (Group &g : groups) {
    SmallVector<Attribute> refs;
    SmallVector<int64_t> offsets;
    SmallVector<bool> decay;
    for (Member &m : g.members) {
      if (m.weightDecay != 0.0 && m.weightDecay != groupDecay)
        return m.param.emitOpError("weight decay ")
               << m.weightDecay << " differs from the group's " << groupDecay;
      refs.push_back(FlatSymbolRefAttr::get(m.param.getSymNameAttr()));
      offsets.push_back(g.total);
      decay.push_back(m.weightDecay != 0.0);
      g.total += m.param.getTensorType().getNumElements();
    }
    g.padded = (g.total + n - 1) / n * n;
    padding += g.padded - g.total;
    g.op = GroupOp::create(mb, module.getLoc(), g.name, n,
                           mb.getArrayAttr(refs), offsets, decay, g.padded);
  }
  numGroups = groups.size();
  numPadding = padding;

  // 2. Sharded state declarations.
  auto f32 = Float32Type::get(ctx);
  auto makeShard = [&](Group &g, StringRef suffix, zero::ShardKind kind,
                       Type elt) {
    return ShardOp::create(mb, module.getLoc(), g.name + suffix.str(),
                           flatType(elt, g.shard(n)), kind, g.name);
  };
  for (Group &g : groups) {
    Type paramElt = g.members.front().param.getTensorType().getElementType();
    for (Member &m : g.members)
      if (m.param.getTensorType().getElementType() != paramElt)
        return m.param.emitOpError("element type differs from the rest of ")
               << g.name;
    if (stageNum >= 3 && !g.persistent)
      g.param = makeShard(g, ".param", ShardKind::param, paramElt);
    if (stageNum >= 2)
      g.grad = makeShard(g, ".grad", ShardKind::grad, paramElt);
    if (stageNum >= 1) {
      if (mixed)
        g.master = makeShard(g, ".master", ShardKind::master, f32);
      g.expAvg = makeShard(g, ".exp_avg", ShardKind::exp_avg, f32);
      g.expAvgSq = makeShard(g, ".exp_avg_sq", ShardKind::exp_avg_sq, f32);
    }
  }

  auto groupRef = [&](Group &g) {
    return FlatSymbolRefAttr::get(g.op.getSymNameAttr());
  };
  auto shardRef = [&](ShardOp s) {
    return FlatSymbolRefAttr::get(s.getSymNameAttr());
  };
  auto reduceScatter = [&](OpBuilder &b, Location loc, Group &g, Value flat) -> Value {
    if (n == 1)
      return flat;
    ++numCollectives;
    auto type = flatType(cast<RankedTensorType>(flat.getType()).getElementType(),
                         g.shard(n));
    return ReduceScatterOp::create(b, loc, type, flat, ReduceKind::avg, n);
  };
  auto allGather = [&](OpBuilder &b, Location loc, Group &g, Value shard) -> Value {
    if (n == 1)
      return shard;
    ++numCollectives;
    auto type = flatType(cast<RankedTensorType>(shard.getType()).getElementType(),
                         g.padded);
    return AllGatherOp::create(b, loc, type, shard, n);
  };
  auto pack = [&](OpBuilder &b, Location loc, Group &g, ValueRange values) -> Value {
    Type elt = cast<RankedTensorType>(values.front().getType()).getElementType();
    return PackOp::create(b, loc, flatType(elt, g.padded), groupRef(g), values);
  };
  auto unpack = [&](OpBuilder &b, Location loc, Group &g, Value flat) {
    SmallVector<Type> types;
    Type elt = cast<RankedTensorType>(flat.getType()).getElementType();
    for (Member &m : g.members)
      types.push_back(RankedTensorType::get(m.param.getTensorType().getShape(), elt));
    return UnpackOp::create(b, loc, types, groupRef(g), flat).getResults();
  };

  // 3. Stage 0: all-reduce each group's gradients at the start of the step.
  if (stageNum == 0) {
    DenseMap<StringRef, train::LoadOp> gradLoads;
    for (auto load : step.getOps<train::LoadOp>())
      gradLoads.try_emplace(load.getName(), load);
    for (Group &g : groups) {
      SmallVector<Value> values;
      SmallVector<train::LoadOp> loads;
      Operation *first = nullptr;
      for (Member &m : g.members) {
        train::LoadOp load = gradLoads.lookup(m.grad.getSymName());
        if (!load)
          return step.emitOpError("does not load gradient '")
                 << m.grad.getSymName() << "'";
        values.push_back(load);
        loads.push_back(load);
        if (!first || load->isBeforeInBlock(first))
          first = load;
      }
      // Loads read state no one writes before them: gather the group's
      // loads at the first one, so the all-reduce precedes every use.
      Operation *last = first;
      for (train::LoadOp load : loads) {
        if (load == first)
          continue;
        load->moveAfter(last);
        last = load;
      }
      OpBuilder b(ctx);
      b.setInsertionPointAfter(last);
      Location loc = last->getLoc();
      Value flat = pack(b, loc, g, values);
      ++numCollectives;
      Value reduced = AllReduceOp::create(b, loc, flat.getType(), flat,
                                          ReduceKind::avg, n);
      auto averaged = unpack(b, loc, g, reduced);
      for (auto [v, a] : llvm::zip(values, averaged))
        v.replaceAllUsesExcept(a, flat.getDefiningOp());
    }
    if (tensorSize > 1)
      splitNormOverTensor(step, tensorSize, isCutGrad);
    return success();
  }

  // 4. Stages 2-3: reduce-scatter each group in the backward pass as soon
  //    as its gradients are complete, into the gradient shard.
  if (stageNum >= 2) {
    llvm::StringMap<train::AccumulateOp> accs;
    for (auto acc : llvm::make_early_inc_range(fb.getOps<train::AccumulateOp>()))
      accs[acc.getName()] = acc;
    for (Group &g : groups) {
      Operation *last = nullptr;
      for (Member &m : g.members)
        if (auto acc = accs.lookup(m.grad.getSymName()))
          if (!last || last->isBeforeInBlock(acc))
            last = acc;
      if (!last)
        continue; // The loss depends on no member of this group.
      OpBuilder b(last);
      b.setInsertionPointAfter(last);
      Location loc = last->getLoc();
      SmallVector<Value> values;
      for (Member &m : g.members) {
        if (auto acc = accs.lookup(m.grad.getSymName())) {
          values.push_back(acc.getValue());
          continue;
        }
        values.push_back(train::FillOp::create(b, loc, m.param.getType(),
                                               b.getF64FloatAttr(0.0)));
      }
      Value shard = reduceScatter(b, loc, g, pack(b, loc, g, values));
      ShardAccumulateOp::create(b, loc, shard, shardRef(g.grad));
      for (Member &m : g.members)
        if (auto acc = accs.lookup(m.grad.getSymName()))
          acc.erase();
    }
  }

  // 5. Stage 3: every function gathers a group's parameters before their
  //    first use, and again before their first backward use.
  if (stageNum >= 3) {
    llvm::StringMap<std::pair<Group *, unsigned>> memberOf;
    for (Group &g : groups)
      for (auto [i, m] : llvm::enumerate(g.members))
        memberOf[m.param.getSymName()] = {&g, static_cast<unsigned>(i)};
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (fn == step || fn.isExternal())
        continue;
      Block &body = fn.getBody().front();
      Operation *seed = findLossSeed(body);
      for (Group &g : groups) {
        if (!g.param)
          continue; // Persistent: the parameters stay whole.
        // Uses of the group's parameters, by segment (0 forward, 1 backward).
        SmallVector<std::pair<OpOperand *, unsigned>> uses[2];
        SmallVector<train::LoadOp> loads;
        for (auto load : body.getOps<train::LoadOp>()) {
          auto it = memberOf.find(load.getName());
          if (it == memberOf.end() || it->second.first != &g)
            continue;
          loads.push_back(load);
          for (OpOperand &use : load->getUses()) {
            unsigned segment = seed && seed->isBeforeInBlock(use.getOwner());
            uses[segment].push_back({&use, it->second.second});
          }
        }
        for (auto &segment : uses) {
          if (segment.empty())
            continue;
          Operation *first = segment.front().first->getOwner();
          for (auto &[use, idx] : segment)
            if (use->getOwner()->isBeforeInBlock(first))
              first = use->getOwner();
          OpBuilder b(first);
          Location loc = first->getLoc();
          Value shard = ShardLoadOp::create(b, loc, g.param.getType(),
                                            shardRef(g.param));
          auto params = unpack(b, loc, g, allGather(b, loc, g, shard));
          for (auto &[use, idx] : segment)
            use->set(params[idx]);
        }
        for (train::LoadOp load : loads)
          load.erase();
      }
    }
    for (Group &g : groups)
      if (g.param)
        for (Member &m : g.members)
          m.param->setAttr(kShardedParamAttr, UnitAttr::get(ctx));
  }

  // 6. Stages 1-3: the optimizer step on shards, rebuilt.
  auto scalarF32 = RankedTensorType::get({}, f32);
  Block &stepBody = step.getBody().front();
  Value lr = stepBody.getArgument(0), stepCount = stepBody.getArgument(1),
        gradScale = stepBody.getArgument(2);
  // Keep the arguments, drop the old body.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(stepBody)))
    op.erase();
  OpBuilder b = OpBuilder::atBlockEnd(&stepBody);
  Location loc = step.getLoc();
  SmallVector<Value> gradShards;
  Value sumSquares, cutSumSquares;
  for (Group &g : groups) {
    Value gs;
    if (stageNum >= 2) {
      gs = ShardLoadOp::create(b, loc, g.grad.getType(), shardRef(g.grad));
    } else {
      SmallVector<Value> grads;
      for (Member &m : g.members)
        grads.push_back(train::LoadOp::create(b, loc, m.grad.getType(),
                                              m.grad.getSymName()));
      gs = reduceScatter(b, loc, g, pack(b, loc, g, grads));
    }
    gradShards.push_back(gs);
    Value ss = train::SumSquaresOp::create(b, loc, scalarF32, gs);
    Value &acc = isTensorCut(g.members.front().param) ? cutSumSquares
                                                       : sumSquares;
    acc = acc ? train::AddOp::create(b, loc, scalarF32, acc, ss).getResult()
              : ss;
  }
  // Cut parameters' squares summed over the tensor ranks first, whole ones
  // not: each parameter counts once.
  if (cutSumSquares) {
    ++numCollectives;
    cutSumSquares = AllReduceOp::create(b, loc, scalarF32, cutSumSquares,
                                        ReduceKind::sum, tensorSize,
                                        MeshAxis::tensor);
    sumSquares = sumSquares ? train::AddOp::create(b, loc, scalarF32,
                                                   sumSquares, cutSumSquares)
                                  .getResult()
                            : cutSumSquares;
  }
  if (n > 1) {
    ++numCollectives;
    sumSquares = AllReduceOp::create(b, loc, scalarF32, sumSquares,
                                     ReduceKind::sum, n);
  }
  auto clip = train::ClipCoefOp::create(b, loc, scalarF32, scalarF32,
                                        sumSquares, gradScale,
                                        b.getF64FloatAttr(adamw.maxNorm));
  for (auto [g, gs] : llvm::zip(groups, gradShards)) {
    auto shardF32 = flatType(f32, g.shard(n));
    Value master;
    if (g.master) {
      master = ShardLoadOp::create(b, loc, shardF32, shardRef(g.master));
    } else if (g.param) {
      master = ShardLoadOp::create(b, loc, shardF32, shardRef(g.param));
    } else {
      SmallVector<Value> params;
      for (Member &m : g.members)
        params.push_back(train::LoadOp::create(b, loc, m.param.getType(),
                                               m.param.getSymName()));
      Value full = pack(b, loc, g, params);
      master = LocalShardOp::create(b, loc, shardF32, full, n);
    }
    Value m = ShardLoadOp::create(b, loc, shardF32, shardRef(g.expAvg));
    Value v = ShardLoadOp::create(b, loc, shardF32, shardRef(g.expAvgSq));
    auto upd = ShardAdamWOp::create(
        b, loc, shardF32, shardF32, shardF32, groupRef(g), master, gs, m, v,
        lr, stepCount, clip.getCoef(),
        adamw.skipNonFinite ? clip.getNorm() : Value(),
        b.getF64FloatAttr(adamw.beta1),
        b.getF64FloatAttr(adamw.beta2), b.getF64FloatAttr(adamw.eps),
        b.getF64FloatAttr(groupDecay));
    ShardStoreOp::create(b, loc, upd.getNewExpAvg(), shardRef(g.expAvg));
    ShardStoreOp::create(b, loc, upd.getNewExpAvgSq(), shardRef(g.expAvgSq));
    Value newParam = upd.getNewParam();
    if (g.master) {
      ShardStoreOp::create(b, loc, newParam, shardRef(g.master));
      Type paramElt = g.members.front().param.getTensorType().getElementType();
      newParam = train::CastOp::create(b, loc, flatType(paramElt, g.shard(n)),
                                       newParam);
    }
    if (g.param) {
      ShardStoreOp::create(b, loc, newParam, shardRef(g.param));
    } else {
      auto params = unpack(b, loc, g, allGather(b, loc, g, newParam));
      for (auto [mem, p] : llvm::zip(g.members, params))
        train::StoreOp::create(b, loc, p, mem.param.getSymName());
    }
    if (g.grad) {
      Value zero = train::FillOp::create(b, loc, g.grad.getType(),
                                         b.getF64FloatAttr(0.0));
      ShardStoreOp::create(b, loc, zero, shardRef(g.grad));
    } else {
      for (Member &mem : g.members) {
        Value zero = train::FillOp::create(b, loc, mem.grad.getType(),
                                           b.getF64FloatAttr(0.0));
        train::StoreOp::create(b, loc, zero, mem.grad.getSymName());
      }
    }
  }
  func::ReturnOp::create(b, loc, clip.getNorm());

  // 7. Drop the per-parameter state that is now sharded.
  for (auto state : llvm::make_early_inc_range(module.getOps<train::StateOp>())) {
    bool sharded = state.getKind() != StateKind::grad || stageNum >= 2;
    if (sharded)
      state.erase();
  }
  return success();
}
