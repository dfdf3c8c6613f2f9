//===- Report.cpp - per-rank memory and communication of a step -----------===//

#include "zero/Analysis/Report.h"
#include "zero/Analysis/Flops.h"
#include "zero/Transforms/Passes.h"

#include "Train/TrainOps.h"
#include "Zero/ZeroLayout.h"
#include "Zero/ZeroOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"

using namespace mlir;
using namespace mlir::zero;

int64_t StepReport::totalStateBytes() const {
  int64_t total = 0;
  for (int64_t b : stateBytes)
    total += b;
  return total;
}

/// Bytes of a statically shaped tensor, failing on overflow.
static FailureOr<int64_t> tensorBytes(Operation *op, Type type) {
  auto t = cast<RankedTensorType>(type);
  int64_t elt = t.getElementTypeBitWidth() / 8;
  int64_t numel = t.getNumElements();
  if (numel > std::numeric_limits<int64_t>::max() / std::max<int64_t>(elt, 1))
    return op->emitOpError("tensor of ") << numel << " elements overflows 64-bit byte counts";
  return numel * elt;
}

static StateCategory categoryOf(train::StateKind kind) {
  switch (kind) {
  case train::StateKind::grad:
    return StateCategory::Grad;
  case train::StateKind::master:
    return StateCategory::Master;
  case train::StateKind::exp_avg:
    return StateCategory::ExpAvg;
  case train::StateKind::exp_avg_sq:
    return StateCategory::ExpAvgSq;
  }
  llvm_unreachable("unknown state kind");
}

static StateCategory categoryOf(ShardKind kind) {
  switch (kind) {
  case ShardKind::param:
    return StateCategory::Param;
  case ShardKind::grad:
    return StateCategory::Grad;
  case ShardKind::master:
    return StateCategory::Master;
  case ShardKind::exp_avg:
    return StateCategory::ExpAvg;
  case ShardKind::exp_avg_sq:
    return StateCategory::ExpAvgSq;
  }
  llvm_unreachable("unknown shard kind");
}

namespace {
/// The traffic of one function's collectives.
struct FunctionTraffic {
  /// Bytes per mesh axis and CollectiveKind.
  std::array<CollectiveBytes, kNumMeshAxes> bytes{};
  /// Data-axis elements of non-scalar collectives (Ψ units).
  int64_t elements = 0;
  /// Bytes of scalar (0-D) reductions, either axis.
  int64_t scalarBytes = 0;
  /// Tensor-axis bytes before and after the loss seed.
  int64_t tensorBeforeSeed = 0, tensorAfterSeed = 0;
};
} // namespace

/// The traffic of the collectives in `fn`. Ring costs, as the runtime
/// counts them (runtime/src/comm/comm.cpp), N the size of the collective's
/// axis: all-gather of a shard of n elements sends n·(N−1)·e bytes;
/// reduce-scatter to a shard of n the same; all-reduce (zero.tp_g too) of n
/// elements 2·n·e·(N−1)/N (integer division).
static FunctionTraffic countCollectives(func::FuncOp fn) {
  FunctionTraffic traffic;
  bool afterSeed = false;
  fn.walk([&](Operation *op) {
    auto count = [&](CollectiveKind kind, Type shardOrWhole, int64_t n,
                     MeshAxis axis, bool allReduce) {
      auto t = cast<RankedTensorType>(shardOrWhole);
      int64_t numel = t.getNumElements();
      int64_t e = t.getElementTypeBitWidth() / 8;
      int64_t sent = allReduce ? 2 * numel * e * (n - 1) / n : numel * (n - 1) * e;
      traffic.bytes[static_cast<int>(axis)][static_cast<int>(kind)] += sent;
      if (axis == MeshAxis::tensor)
        (afterSeed ? traffic.tensorAfterSeed : traffic.tensorBeforeSeed) +=
            sent;
      if (allReduce && t.getRank() == 0) {
        // Counted in bytes (the runtime sends it) but not in Ψ units.
        traffic.scalarBytes += sent;
        return;
      }
      if (axis == MeshAxis::data)
        traffic.elements +=
            allReduce ? 2 * numel * (n - 1) / n : numel * (n - 1);
    };
    if (auto fill = dyn_cast<train::FillOp>(op))
      afterSeed |= fill->hasAttr(kLossSeedAttr);
    else if (auto ag = dyn_cast<AllGatherOp>(op))
      count(CollectiveKind::AllGather, ag.getShard().getType(),
            ag.getWorldSize(), ag.getAxis(), false);
    else if (auto rs = dyn_cast<ReduceScatterOp>(op))
      count(CollectiveKind::ReduceScatter, rs.getType(), rs.getWorldSize(),
            rs.getAxis(), false);
    else if (auto ar = dyn_cast<AllReduceOp>(op))
      count(CollectiveKind::AllReduce, ar.getType(), ar.getWorldSize(),
            ar.getAxis(), true);
    else if (auto ags = dyn_cast<AllGatherStartOp>(op))
      count(CollectiveKind::AllGather, ags.getShard().getType(),
            ags.getWorldSize(), ags.getAxis(), false);
    else if (auto rss = dyn_cast<ReduceScatterStartOp>(op))
      count(CollectiveKind::ReduceScatter,
            rss.getPending().getType().getResult(), rss.getWorldSize(),
            rss.getAxis(), false);
    else if (auto ars = dyn_cast<AllReduceStartOp>(op))
      count(CollectiveKind::AllReduce, ars.getInput().getType(),
            ars.getWorldSize(), ars.getAxis(), true);
    else if (auto g = dyn_cast<TensorParallelG>(op))
      count(CollectiveKind::AllReduce, g.getType(),
            static_cast<int64_t>(g.getSize()), MeshAxis::tensor, true);
    else if (auto sg = dyn_cast<SequenceGatherOp>(op))
      count(CollectiveKind::AllGather, sg.getInput().getType(), sg.getSize(),
            MeshAxis::tensor, false);
    else if (auto ss = dyn_cast<SequenceScatterOp>(op))
      count(CollectiveKind::ReduceScatter, ss.getType(), ss.getSize(),
            MeshAxis::tensor, false);
  });
  return traffic;
}

/// Whether `param` is cut over the tensor axis (zero.tensor_split).
static bool isCut(train::ParamOp param) {
  return param && param->hasAttr(ZeroDialect::kTensorSplitAttrName);
}

int64_t mlir::zero::savedActivationBytes(func::FuncOp fn) {
  if (fn.isExternal())
    return 0;
  Operation *seed = findLossSeed(fn.getBody().front());
  if (!seed)
    return 0;
  int64_t bytes = 0;
  for (Operation &op : fn.getBody().front()) {
    if (&op == seed)
      break;
    if (isa<train::LoadOp, ShardLoadOp, UnpackOp>(op))
      continue; // Parameters are accounted as model states.
    if (isa<OffloadWaitOp>(op))
      continue; // A host slot (P_a+cpu): pinned host memory, not the device's.
    for (Value r : op.getResults()) {
      auto t = dyn_cast<RankedTensorType>(r.getType());
      if (!t)
        continue;
      bool usedInBackward = llvm::any_of(r.getUsers(), [&](Operation *u) {
        return seed->isBeforeInBlock(u) && !u->hasTrait<OpTrait::IsTerminator>();
      });
      if (usedInBackward)
        bytes += t.getNumElements() * (t.getElementTypeBitWidth() / 8);
    }
  }
  return bytes;
}

static int64_t bytesOfTensor(Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  return t.getNumElements() * (t.getElementTypeBitWidth() / 8);
}

void mlir::zero::countCheckpointSlices(func::FuncOp fn, StepReport &report) {
  fn.walk([&](LocalShardOp slice) {
    if (!slice->hasAttr(kCheckpointSliceAttr))
      return;
    ++report.checkpointSlices;
    report.checkpointSliceBytes += bytesOfTensor(slice.getResult());
    // The whole checkpoint: the flat input, or its first part when
    // train-checkpoint padded it (zero.concat with zeros).
    Value whole = slice.getInput();
    if (auto concat = whole.getDefiningOp<ConcatOp>())
      whole = concat.getInputs().front();
    report.checkpointWholeBytes += bytesOfTensor(whole);
  });
}

FailureOr<StepReport> mlir::zero::analyzeStep(ModuleOp module) {
  StepReport report;
  if (auto ws = module->getAttrOfType<IntegerAttr>(kWorldSizeAttr))
    report.worldSize = ws.getInt();
  if (auto st = module->getAttrOfType<IntegerAttr>(kStageAttr))
    report.stage = st.getInt();
  report.dataSize = report.worldSize;
  if (auto mesh = module->getAttrOfType<MeshAttr>(ZeroDialect::kMeshAttrName)) {
    report.hasMesh = true;
    report.tensorSize = mesh.getTensor();
    report.dataSize =
        mesh.getData() ? mesh.getData() : report.worldSize / report.tensorSize;
  }

  for (Operation &op : *module.getBody()) {
    if (auto param = dyn_cast<train::ParamOp>(op)) {
      int64_t numel = param.getTensorType().getNumElements();
      report.numParams += numel;
      auto split = param->getAttrOfType<TensorSplitAttr>(
          ZeroDialect::kTensorSplitAttrName);
      report.numModelParams += split ? numel * split.getParts() : numel;
      if (param->hasAttr(kShardedParamAttr))
        continue;
      FailureOr<int64_t> bytes = tensorBytes(param, param.getType());
      if (failed(bytes))
        return failure();
      report.stateBytes[static_cast<int>(StateCategory::Param)] += *bytes;
      if (split)
        report.cutStateBytes += *bytes;
    } else if (auto state = dyn_cast<train::StateOp>(op)) {
      FailureOr<int64_t> bytes = tensorBytes(state, state.getType());
      if (failed(bytes))
        return failure();
      report.stateBytes[static_cast<int>(categoryOf(state.getKind()))] += *bytes;
      if (isCut(module.lookupSymbol<train::ParamOp>(state.getParam())))
        report.cutStateBytes += *bytes;
    } else if (auto shard = dyn_cast<ShardOp>(op)) {
      FailureOr<int64_t> bytes = tensorBytes(shard, shard.getType());
      if (failed(bytes))
        return failure();
      report.stateBytes[static_cast<int>(categoryOf(shard.getKind()))] += *bytes;
      auto group = module.lookupSymbol<GroupOp>(shard.getGroup());
      int64_t total = 0;
      bool cut = false;
      for (auto ref : group.getMembers().getAsRange<FlatSymbolRefAttr>()) {
        auto member = module.lookupSymbol<train::ParamOp>(ref);
        total += member.getTensorType().getNumElements();
        // zero-partition groups cut parameters apart from whole ones.
        cut |= isCut(member);
      }
      if (cut)
        report.cutStateBytes += *bytes;
      int64_t e = shard.getTensorType().getElementTypeBitWidth() / 8;
      // Padding sits at the end of the group; averaged over the ranks.
      report.paddingBytes += (group.getPadded() - total) * e / group.getWorldSize();
    }
  }
  report.numPaddedParams = report.numParams;
  for (auto group : module.getOps<GroupOp>()) {
    int64_t total = 0;
    for (auto ref : group.getMembers().getAsRange<FlatSymbolRefAttr>())
      total += module.lookupSymbol<train::ParamOp>(ref).getTensorType().getNumElements();
    report.numPaddedParams += group.getPadded() - total;
  }

  report.modelFlopsMicro = modelFlopsPerMicroBatch(module);
  report.checkpointOffloadHost = module->hasAttr(kCheckpointOffloadAttr);
  if (auto fb = module.lookupSymbol<func::FuncOp>("forward_backward")) {
    report.activationBytes = savedActivationBytes(fb);
    countCheckpointSlices(fb, report);
    fb.walk([&](OffloadWaitOp w) {
      ++report.offloadedSlices;
      report.hostSlotBytes += alignToArena(bytesOfTensor(w.getHost()));
    });
    FunctionTraffic t = countCollectives(fb);
    report.axisCommBytesMicro = t.bytes;
    report.commElementsMicro = t.elements;
    report.tensorForwardBytesMicro = t.tensorBeforeSeed;
    report.tensorBackwardBytesMicro = t.tensorAfterSeed;
  }
  if (auto step = module.lookupSymbol<func::FuncOp>("optimizer_step")) {
    FunctionTraffic t = countCollectives(step);
    report.axisCommBytesStep = t.bytes;
    report.commElementsStep = t.elements;
    report.scalarCommBytesStep = t.scalarBytes;
  }
  for (int k = 0; k < kNumCollectiveKinds; ++k)
    for (int a = 0; a < kNumMeshAxes; ++a) {
      report.commBytesMicro[k] += report.axisCommBytesMicro[a][k];
      report.commBytesStep[k] += report.axisCommBytesStep[a][k];
    }
  return report;
}

static const char *const kStateNames[] = {"parameters", "gradients",
                                          "master weights", "exp_avg",
                                          "exp_avg_sq"};
static const char *const kStateKeys[] = {"param", "grad", "master", "exp_avg",
                                         "exp_avg_sq"};
static const char *const kCollNames[] = {"all_gather", "reduce_scatter",
                                         "all_reduce", "broadcast"};

/// Bytes in decimal GB and binary GiB, like the paper (which uses GB).
static void printBytes(llvm::raw_ostream &os, int64_t bytes) {
  os << llvm::format("%20lld B %12.3f GB %12.3f GiB", (long long)bytes,
                     bytes / 1e9, bytes / double(1ull << 30));
}

/// Bytes one rank sends per optimizer step on one mesh axis, per kind:
/// `micro` (one forward_backward) k times plus `step`.
static CollectiveBytes perStep(const CollectiveBytes &micro,
                               const CollectiveBytes &step, int64_t k) {
  CollectiveBytes bytes;
  for (int i = 0; i < kNumCollectiveKinds; ++i)
    bytes[i] = micro[i] * k + step[i];
  return bytes;
}

/// The traffic of each mesh axis per optimizer step, and the tensor axis's
/// by phase.
static void printAxisTraffic(const StepReport &r, int64_t k,
                             llvm::raw_ostream &os) {
  static const char *const kAxisTitles[] = {"data axis, N_d",
                                            "tensor axis, N_m"};
  const int64_t sizes[] = {r.dataSize, r.tensorSize};
  os << "sent per rank per optimizer step, by mesh axis:\n";
  for (int a = 0; a < kNumMeshAxes; ++a) {
    os << "  " << kAxisTitles[a] << " = " << sizes[a] << ":\n";
    CollectiveBytes bytes =
        perStep(r.axisCommBytesMicro[a], r.axisCommBytesStep[a], k);
    int64_t total = 0;
    for (int i = 0; i < kNumCollectiveKinds; ++i) {
      total += bytes[i];
      os << llvm::format("    %-14s", kCollNames[i]);
      printBytes(os, bytes[i]);
      os << "\n";
    }
    os << llvm::format("    %-14s", "total");
    printBytes(os, total);
    os << "\n";
  }
  int64_t tensorStep =
      r.axisCommBytesStep[static_cast<int>(MeshAxis::tensor)]
                         [static_cast<int>(CollectiveKind::AllReduce)];
  os << llvm::format("    %-14s", "forward");
  printBytes(os, r.tensorForwardBytesMicro * k);
  os << "  (zero.tp_g: row-parallel partial sums)\n";
  os << llvm::format("    %-14s", "backward");
  printBytes(os, r.tensorBackwardBytesMicro * k);
  os << "  (zero.tp_f's gradient)\n";
  os << llvm::format("    %-14s", "optimizer");
  printBytes(os, tensorStep);
  os << "  (cut parameters' gradient norm)\n";
}

void mlir::zero::printReportTable(const StepReport &r, int64_t k,
                                  llvm::raw_ostream &os) {
  // Ψ units: of the whole model under a tensor cut, else of the padded
  // parameters (the paper's accounting of one data-parallel replica).
  double psi =
      r.tensorSize > 1 ? double(r.numModelParams) : double(r.numPaddedParams);
  psi = psi ? psi : 1.0;
  if (r.hasMesh)
    os << "zero-report: stage " << r.stage << ", mesh N_d = " << r.dataSize
       << " x N_m = " << r.tensorSize << " (world size " << r.worldSize
       << "), Ψ = " << r.numModelParams << " parameters in the model, "
       << r.numParams << " on each tensor rank (" << r.numPaddedParams
       << " with padding), " << k << " micro-batch(es) per step\n";
  else
    os << "zero-report: stage " << r.stage << ", world size " << r.worldSize
       << ", " << r.numParams << " parameters (Ψ = " << r.numPaddedParams
       << " with padding), " << k << " micro-batch(es) per step\n";
  os << "model states per rank:\n";
  for (int i = 0; i < kNumStateCategories; ++i) {
    os << llvm::format("  %-16s", kStateNames[i]);
    printBytes(os, r.stateBytes[i]);
    os << llvm::format("  %8.4f Ψ\n", r.stateBytes[i] / psi);
  }
  os << llvm::format("  %-16s", "total");
  printBytes(os, r.totalStateBytes());
  os << llvm::format("  %8.4f Ψ\n", r.totalStateBytes() / psi);
  os << llvm::format("  %-16s", "(of it padding)");
  printBytes(os, r.paddingBytes);
  os << "\n";
  if (r.hasMesh) {
    os << llvm::format("  %-16s", "(of it cut)");
    printBytes(os, r.cutStateBytes);
    os << "  (states of tensor-cut parameters: 1/N_m of each, sharded over "
          "N_d)\n";
  }
  os << "activations kept for the backward (one micro-batch):\n";
  os << llvm::format("  %-16s", "activations");
  printBytes(os, r.activationBytes);
  os << "\n";
  if (r.checkpointSlices) {
    // ZeRO-R's P_a: what the block inputs take with and without it.
    os << llvm::format("  %-16s", r.offloadedSlices ? "P_a on the host"
                                                     : "(of it P_a)");
    printBytes(os, r.checkpointSliceBytes);
    os << llvm::format("  (%lld block-input checkpoints, 1/%lld each per "
                       "tensor rank)\n",
                       (long long)r.checkpointSlices, (long long)r.tensorSize);
    os << llvm::format("  %-16s", "without P_a");
    printBytes(os, r.checkpointWholeBytes);
    os << "  (the same checkpoints whole on every tensor rank)\n";
    if (r.offloadedSlices)
      os << llvm::format("  P_a+cpu (offload=host): %lld slices copied to "
                         "pinned host memory after their block's forward "
                         "and back before its recomputation; host slots "
                         "%lld B per rank\n",
                         (long long)r.offloadedSlices,
                         (long long)r.hostSlotBytes);
    else if (r.checkpointOffloadHost)
      os << "  P_a+cpu (offload=host): the CPU backend's arenas are host "
            "memory, so the slices stay where they are (no copy)\n";
  }
  if (r.plannedActivationBytes >= 0) {
    os << "planned arenas (zero-buffer-assign, max over the functions):\n";
    os << llvm::format("  %-16s", "activations");
    printBytes(os, r.plannedActivationBytes);
    if (!r.plannedActivationFunction.empty())
      os << "  (@" << r.plannedActivationFunction << ")";
    if (r.plannedActivationBytesWithoutOffload >= 0) {
      os << "\n" << llvm::format("  %-16s", "without P_a+cpu");
      printBytes(os, r.plannedActivationBytesWithoutOffload);
      os << "  (activations with the P_a slices on the device)\n";
      os << llvm::format("  %-16s", "host slots");
      printBytes(os, r.hostSlotBytes);
      os << "  (pinned host memory, not a device arena)";
    }
    os << "\n" << llvm::format("  %-16s", "temporaries");
    printBytes(os, r.plannedTemporaryBytes);
    os << "  (";
    if (!r.plannedTemporaryFunction.empty())
      os << "@" << r.plannedTemporaryFunction << "; ";
    os << llvm::format("no reuse: %lld B)\n",
                       (long long)r.bumpTemporaryBytes);
    os << llvm::format("  %-16s", "planned peak");
    printBytes(os, r.plannedPeakBytes());
    os << llvm::format("  (model-state arenas %lld B, each state 64-byte "
                       "aligned, + activations + temporaries",
                       (long long)r.plannedStateArenaBytes);
    if (r.plannedConstantArenaBytes)
      os << llvm::format(" + constants %lld B",
                         (long long)r.plannedConstantArenaBytes);
    os << ")\n";
  }
  os << "sent per rank per optimizer step:\n";
  int64_t total = 0;
  for (int i = 0; i < kNumCollectiveKinds; ++i) {
    int64_t bytes = r.commBytesMicro[i] * k + r.commBytesStep[i];
    total += bytes;
    os << llvm::format("  %-16s", kCollNames[i]);
    printBytes(os, bytes);
    os << "\n";
  }
  int64_t elements = r.commElementsMicro * k + r.commElementsStep;
  os << llvm::format("  %-16s", "total");
  printBytes(os, total);
  os << llvm::format("  %.6f Ψ elements\n", elements / psi);
  os << "  elements moved: " << elements << "\n";
  os << "  of which scalar all-reduces (gradient norm, not in Ψ units): "
     << r.scalarCommBytesStep << " B\n";
  if (r.hasMesh)
    printAxisTraffic(r, k, os);
  os << llvm::format("model FLOPs per rank per micro-batch: %.6g (3 x the "
                     "forward's products and attention; MFU's numerator)\n",
                     r.modelFlopsMicro);
}

void mlir::zero::printReportJson(const StepReport &r, int64_t k,
                                 llvm::raw_ostream &os) {
  llvm::json::Object states, micro, step;
  for (int i = 0; i < kNumStateCategories; ++i)
    states[kStateKeys[i]] = r.stateBytes[i];
  for (int i = 0; i < kNumCollectiveKinds; ++i) {
    micro[kCollNames[i]] = r.commBytesMicro[i];
    step[kCollNames[i]] = r.commBytesStep[i];
  }
  llvm::json::Object axisMicro, axisStep, axisTotal;
  static const char *const kAxisKeys[] = {"data", "tensor"};
  for (int a = 0; a < kNumMeshAxes; ++a) {
    llvm::json::Object m, s, t;
    CollectiveBytes total =
        perStep(r.axisCommBytesMicro[a], r.axisCommBytesStep[a], k);
    for (int i = 0; i < kNumCollectiveKinds; ++i) {
      m[kCollNames[i]] = r.axisCommBytesMicro[a][i];
      s[kCollNames[i]] = r.axisCommBytesStep[a][i];
      t[kCollNames[i]] = total[i];
    }
    axisMicro[kAxisKeys[a]] = std::move(m);
    axisStep[kAxisKeys[a]] = std::move(s);
    axisTotal[kAxisKeys[a]] = std::move(t);
  }
  llvm::json::Object root{
      {"mesh",
       llvm::json::Object{{"data", r.dataSize}, {"tensor", r.tensorSize}}},
      {"num_model_params", r.numModelParams},
      {"cut_state_bytes", r.cutStateBytes},
      {"comm_bytes_per_micro_batch_by_axis", std::move(axisMicro)},
      {"comm_bytes_per_optimizer_step_by_axis", std::move(axisStep)},
      {"comm_bytes_per_step_by_axis", std::move(axisTotal)},
      {"tensor_comm_bytes_per_micro_batch",
       llvm::json::Object{{"forward", r.tensorForwardBytesMicro},
                          {"backward", r.tensorBackwardBytesMicro}}},
      {"stage", r.stage},
      {"world_size", r.worldSize},
      {"num_params", r.numParams},
      {"num_padded_params", r.numPaddedParams},
      {"micro_batches", k},
      {"state_bytes", std::move(states)},
      {"state_bytes_total", r.totalStateBytes()},
      {"padding_bytes", r.paddingBytes},
      {"activation_bytes", r.activationBytes},
      {"checkpoint_slices", r.checkpointSlices},
      {"checkpoint_slice_bytes", r.checkpointSliceBytes},
      {"checkpoint_whole_bytes", r.checkpointWholeBytes},
      {"checkpoint_offload_host", r.checkpointOffloadHost},
      {"offloaded_checkpoint_slices", r.offloadedSlices},
      {"host_slot_bytes", r.hostSlotBytes},
      {"comm_bytes_per_micro_batch", std::move(micro)},
      {"comm_bytes_per_optimizer_step", std::move(step)},
      {"comm_elements_per_step", r.commElementsMicro * k + r.commElementsStep},
      {"scalar_comm_bytes_per_step", r.scalarCommBytesStep},
      {"model_flops_per_micro_batch", r.modelFlopsMicro},
  };
  if (r.plannedActivationBytes >= 0) {
    root["planned_activation_arena_bytes"] = r.plannedActivationBytes;
    root["planned_temporary_arena_bytes"] = r.plannedTemporaryBytes;
    root["planned_activation_arena_function"] = r.plannedActivationFunction;
    root["planned_temporary_arena_function"] = r.plannedTemporaryFunction;
    root["bump_temporary_arena_bytes"] = r.bumpTemporaryBytes;
    if (r.plannedActivationBytesWithoutOffload >= 0)
      root["planned_activation_arena_bytes_without_offload"] =
          r.plannedActivationBytesWithoutOffload;
    root["planned_state_arena_bytes"] = r.plannedStateArenaBytes;
    if (r.plannedConstantArenaBytes)
      root["planned_constant_arena_bytes"] = r.plannedConstantArenaBytes;
    root["planned_peak_bytes"] = r.plannedPeakBytes();
  }
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
}

void mlir::zero::printMemoryChartSvg(llvm::ArrayRef<StepReport> reports,
                                     llvm::StringRef title,
                                     llvm::raw_ostream &os) {
  static const char *const kColors[] = {"#4e79a7", "#f28e2b", "#e15759",
                                        "#76b7b2", "#59a14f"};
  const int width = 160 + 150 * static_cast<int>(reports.size()),
            height = 420, top = 60, bottom = 360, left = 90;
  int64_t maxBytes = 1;
  for (const StepReport &r : reports)
    maxBytes = std::max(maxBytes, r.totalStateBytes());
  auto y = [&](double bytes) {
    return bottom - (bottom - top) * bytes / double(maxBytes);
  };
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width
     << "\" height=\"" << height << "\" font-family=\"sans-serif\" "
     << "font-size=\"12\">\n";
  os << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  os << "<text x=\"" << width / 2 << "\" y=\"24\" text-anchor=\"middle\" "
     << "font-size=\"15\">";
  // Escape the title for XML.
  for (char c : title) {
    if (c == '<') os << "&lt;";
    else if (c == '>') os << "&gt;";
    else if (c == '&') os << "&amp;";
    else os << c;
  }
  os << "</text>\n";
  os << "<line x1=\"" << left << "\" y1=\"" << bottom << "\" x2=\""
     << width - 20 << "\" y2=\"" << bottom << "\" stroke=\"black\"/>\n";
  os << "<text x=\"20\" y=\"" << top - 10 << "\">GB per rank</text>\n";
  for (int t = 0; t <= 4; ++t) {
    double bytes = maxBytes * t / 4.0;
    os << llvm::format("<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.2f</text>\n",
                       left - 6, y(bytes) + 4, bytes / 1e9);
    os << llvm::format("<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
                       "stroke=\"#ddd\"/>\n",
                       left, y(bytes), width - 20, y(bytes));
  }
  for (auto [i, r] : llvm::enumerate(reports)) {
    int x = left + 30 + 150 * static_cast<int>(i);
    double base = 0;
    for (int c = 0; c < kNumStateCategories; ++c) {
      double bytes = r.stateBytes[c];
      if (bytes <= 0)
        continue;
      os << llvm::format("<rect x=\"%d\" y=\"%.2f\" width=\"80\" height=\"%.2f\" "
                         "fill=\"%s\"><title>%s: %.3f GB</title></rect>\n",
                         x, y(base + bytes), y(base) - y(base + bytes),
                         kColors[c], kStateNames[c], bytes / 1e9);
      base += bytes;
    }
    os << llvm::format("<text x=\"%d\" y=\"%.1f\" text-anchor=\"middle\">%.3f GB</text>\n",
                       x + 40, y(base) - 6, base / 1e9);
    os << "<text x=\"" << x + 40 << "\" y=\"" << bottom + 18
       << "\" text-anchor=\"middle\">stage " << r.stage << "</text>\n";
  }
  for (int c = 0; c < kNumStateCategories; ++c) {
    int x = left + 125 * c;
    os << "<rect x=\"" << x << "\" y=\"" << bottom + 32
       << "\" width=\"12\" height=\"12\" fill=\"" << kColors[c] << "\"/>\n";
    os << "<text x=\"" << x + 16 << "\" y=\"" << bottom + 43 << "\">"
       << kStateNames[c] << "</text>\n";
  }
  os << "</svg>\n";
}
