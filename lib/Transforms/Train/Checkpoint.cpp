//===- Checkpoint.cpp - train-checkpoint: activation recomputation --------===//
///
/// \file
/// Recomputes each block's forward in the backward (see TrainPasses.td).
///
//===----------------------------------------------------------------------===//

#include "zero/Analysis/Blocks.h"
#include "zero/Transforms/Passes.h"

#include "Train/TrainOps.h"
#include "Zero/ZeroDialect.h"
#include "Zero/ZeroOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir::zero {
#define GEN_PASS_DEF_TRAINCHECKPOINT
#include "zero/Transforms/TrainPasses.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::train;

namespace {

struct TrainCheckpointPass
    : public zero::impl::TrainCheckpointBase<TrainCheckpointPass> {
  using Base::Base;
  void runOnOperation() override;
};

/// `h3` for `h3.attn.c_attn.weight`, `model.layers.3` for Hugging Face's
/// names; "" for names outside a block (zero::blockOfParameter).
StringRef blockOf(StringRef param) { return zero::blockOfParameter(param); }

/// A block-input checkpoint P_a keeps: a floating-point activation the
/// forward computed from other values (not a parameter load, nor a table
/// made from nothing such as train.rope_table, which costs nothing to keep
/// replicated next to its recomputation).
bool isPartitionable(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def || isa<LoadOp>(def) || def->getNumOperands() == 0)
    return false;
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.hasStaticShape() && type.getRank() > 0 &&
         isa<FloatType>(type.getElementType());
}

/// ZeRO-R's P_a for one checkpoint `v` of S elements on M tensor ranks,
/// k = ceil(S / M): right after `v` is computed, this rank keeps its slice
///   flat = train.reshape v                       (S)
///   flat = zero.concat flat, zeros               (k·M, when M ∤ S)
///   slice = zero.local_shard flat axis(<tensor>) (k, a copy)
/// and `gather` rebuilds `v` from it before the block's recomputation.
struct TensorSlice {
  Value slice;
  RankedTensorType type; ///< The checkpoint's own type.
  int64_t padding;       ///< k·M − S zeros at the end of the last slice.
};

TensorSlice sliceCheckpoint(Value v, int64_t m) {
  auto type = cast<RankedTensorType>(v.getType());
  Type elt = type.getElementType();
  int64_t n = type.getNumElements();
  int64_t k = (n + m - 1) / m;
  OpBuilder b(v.getContext());
  b.setInsertionPointAfterValue(v);
  Location loc = v.getLoc();
  Value flat = ReshapeOp::create(b, loc, RankedTensorType::get({n}, elt), v);
  if (k * m != n) {
    Value zeros = FillOp::create(b, loc, RankedTensorType::get({k * m - n}, elt),
                                 b.getF64FloatAttr(0.0));
    flat = zero::ConcatOp::create(b, loc, RankedTensorType::get({k * m}, elt),
                                  ValueRange{flat, zeros});
  }
  auto slice = zero::LocalShardOp::create(
      b, loc, RankedTensorType::get({k}, elt), flat, m, zero::MeshAxis::tensor);
  slice->setAttr(zero::kCheckpointSliceAttr, b.getUnitAttr());
  return {slice.getResult(), type, k * m - n};
}

/// The checkpoint again, whole, at `b`'s insertion point: one all-gather
/// of the slices over the tensor axis (zero-prefetch may start it early).
Value gatherCheckpoint(const TensorSlice &s, int64_t m, OpBuilder &b) {
  Location loc = s.slice.getLoc();
  Type elt = s.type.getElementType();
  int64_t n = s.type.getNumElements();
  int64_t k = cast<RankedTensorType>(s.slice.getType()).getNumElements();
  Value full = zero::AllGatherOp::create(
      b, loc, RankedTensorType::get({k * m}, elt), s.slice, m,
      zero::MeshAxis::tensor);
  if (s.padding)
    full = zero::SplitOp::create(
               b, loc,
               TypeRange{RankedTensorType::get({n}, elt),
                         RankedTensorType::get({s.padding}, elt)},
               full)
               .getResult(0);
  return ReshapeOp::create(b, loc, s.type, full);
}

} // namespace

void TrainCheckpointPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (policy != "none" && policy != "block") {
    module.emitError("train-checkpoint: policy must be none or block, got '")
        << policy << "'";
    return signalPassFailure();
  }
  if (partition != "none" && partition != "tensor") {
    module.emitError("train-checkpoint: partition must be none or tensor, "
                     "got '")
        << partition << "'";
    return signalPassFailure();
  }
  if (offload != "none" && offload != "host") {
    module.emitError("train-checkpoint: offload must be none or host, got '")
        << offload << "'";
    return signalPassFailure();
  }
  if (offload == "host" && partition != "tensor") {
    module.emitError("train-checkpoint: offload=host moves P_a's slices and "
                     "needs partition=tensor");
    return signalPassFailure();
  }
  if (policy == "none") {
    if (partition != "none") {
      module.emitError("train-checkpoint: partition=")
          << partition << " needs policy=block (there are no checkpoints "
                          "to partition)";
      return signalPassFailure();
    }
    return;
  }
  // P_a partitions over the tensor axis of the mesh.
  int64_t tensorSize = 1;
  if (auto mesh = module->getAttrOfType<zero::MeshAttr>(
          zero::ZeroDialect::kMeshAttrName))
    tensorSize = mesh.getTensor();
  if (partition == "tensor" && tensorSize < 2) {
    module.emitError("train-checkpoint: partition=tensor needs a tensor axis "
                     "of at least 2 ranks, but the mesh has ")
        << tensorSize
        << " (run zero-tensor-parallel with size=M > 1 first)";
    return signalPassFailure();
  }
  // Under sequence parallelism the block inputs are this rank's token
  // rows, different on each tensor rank: nothing replicated to partition.
  if (partition == "tensor") {
    WalkResult sp = module.walk([](zero::SequenceScatterOp op) {
      op.emitError("train-checkpoint: partition=tensor (P_a) cuts "
                   "checkpoints replicated over the tensor axis, but "
                   "sequence parallelism cut the block inputs by token rows "
                   "already");
      return WalkResult::interrupt();
    });
    if (sp.wasInterrupted())
      return signalPassFailure();
  }
  if (offload == "host")
    module->setAttr(zero::kCheckpointOffloadAttr,
                    StringAttr::get(module.getContext(), "host"));
  auto fn = module.lookupSymbol<func::FuncOp>(stepFunction);
  if (!fn) {
    module.emitError("train-checkpoint: no function named '")
        << stepFunction << "' (run train-autodiff first)";
    return signalPassFailure();
  }
  Block &body = fn.getBody().front();
  Operation *seed = zero::findLossSeed(body);
  if (!seed) {
    fn.emitError("train-checkpoint: '")
        << stepFunction << "' has no backward (no train.loss_seed)";
    return signalPassFailure();
  }

  // Spans of forward ops per block: a new span starts at the first load of
  // another block's parameter (or of one outside any block).
  struct Span {
    Operation *begin, *end; // [begin, end)
  };
  SmallVector<Span> spans;
  StringRef current;
  Operation *spanBegin = nullptr;
  for (Operation &op : body) {
    if (&op == seed)
      break;
    auto load = dyn_cast<LoadOp>(op);
    if (!load)
      continue;
    StringRef block = blockOf(load.getName());
    if (block == current)
      continue;
    if (spanBegin && !current.empty())
      spans.push_back({spanBegin, &op});
    current = block;
    spanBegin = &op;
  }
  if (spanBegin && !current.empty()) {
    // The last block ends where the forward's non-block tail begins, or at
    // the seed.
    spans.push_back({spanBegin, seed});
  }

  DenseMap<Value, TensorSlice> slices; // P_a: checkpoint -> its slice
  for (Span span : spans) {
    SmallVector<Operation *> ops;
    DenseSet<Operation *> inSpan;
    for (Operation *op = span.begin; op != span.end; op = op->getNextNode()) {
      ops.push_back(op);
      inSpan.insert(op);
    }
    // The span's outputs (values later forward ops read: the residual
    // stream leaving the block) are kept; everything else it defines is
    // recomputed for the backward.
    auto isOutput = [&](Value r) {
      return llvm::any_of(r.getUsers(), [&](Operation *user) {
        return !inSpan.contains(user) && user->isBeforeInBlock(seed);
      });
    };
    Operation *firstBackwardUse = nullptr;
    for (Operation *op : ops)
      for (Value r : op->getResults())
        if (!isOutput(r))
          for (Operation *user : r.getUsers())
            if (seed->isBeforeInBlock(user) &&
                (!firstBackwardUse || user->isBeforeInBlock(firstBackwardUse)))
              firstBackwardUse = user;
    if (!firstBackwardUse)
      continue;
    // Clone the span right before that use; backward uses read the clones.
    OpBuilder b(firstBackwardUse);
    IRMapping mapping;
    if (partition == "tensor") {
      // P_a: the block's inputs (read by the span, computed before it) are
      // kept as 1/M slices and gathered here, when every backward use is
      // at or after this point (otherwise the whole value stays live
      // anyway and there is nothing to save).
      SetVector<Value> inputs;
      for (Operation *op : ops)
        for (Value operand : op->getOperands())
          if (!inSpan.contains(operand.getDefiningOp()) &&
              isPartitionable(operand))
            inputs.insert(operand);
      for (Value v : inputs) {
        bool late = llvm::all_of(v.getUsers(), [&](Operation *user) {
          return user->isBeforeInBlock(seed) ||
                 !user->isBeforeInBlock(firstBackwardUse);
        });
        if (!late)
          continue;
        auto it = slices.find(v);
        if (it == slices.end()) {
          it = slices.try_emplace(v, sliceCheckpoint(v, tensorSize)).first;
          ++numPartitioned;
        }
        Value whole = gatherCheckpoint(it->second, tensorSize, b);
        v.replaceUsesWithIf(whole, [&](OpOperand &use) {
          Operation *user = use.getOwner();
          return seed->isBeforeInBlock(user) &&
                 user->getBlock() == whole.getParentBlock() &&
                 !user->isBeforeInBlock(whole.getDefiningOp());
        });
        mapping.map(v, whole);
      }
    }
    SmallVector<Operation *> clones;
    for (Operation *op : ops) {
      clones.push_back(b.clone(*op, mapping));
      ++numRecomputed;
    }
    DenseSet<Operation *> cloneSet(clones.begin(), clones.end());
    for (Operation *op : ops)
      for (Value r : op->getResults()) {
        if (isOutput(r))
          continue;
        r.replaceUsesWithIf(mapping.lookup(r), [&](OpOperand &use) {
          Operation *user = use.getOwner();
          return seed->isBeforeInBlock(user) && !cloneSet.contains(user);
        });
      }
    // Clones whose results nothing reads (e.g. recomputed outputs) go.
    for (Operation *clone : llvm::reverse(clones))
      if (clone->use_empty() && isOpTriviallyDead(clone)) {
        clone->erase();
        --numRecomputed;
      }
    ++numBlocks;
  }
}
