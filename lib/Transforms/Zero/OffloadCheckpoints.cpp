//===- OffloadCheckpoints.cpp - zero-offload-checkpoints: P_a+cpu ---------===//
///
/// \file
/// Moves P_a's checkpoint slices to pinned host memory between the forward
/// and the backward (ZeroPasses.td): an offload start/wait pair after each
/// slice in the forward, a fetch start/wait pair before its first use in
/// the backward. Works on the single block of the step function.
///
//===----------------------------------------------------------------------===//

#include "zero/Transforms/Passes.h"

#include "Zero/ZeroOps.h"
#include "zero/Analysis/StepPlan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROOFFLOADCHECKPOINTS
#include "zero/Transforms/ZeroPasses.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

namespace {

struct ZeroOffloadCheckpointsPass
    : public zero::impl::ZeroOffloadCheckpointsBase<
          ZeroOffloadCheckpointsPass> {
  using Base::Base;
  void runOnOperation() override;
};

/// One slice to move: its definition and its first use in the backward.
struct Slice {
  LocalShardOp def;
  Operation *firstUse;
};

/// Whether `op` is a P_a slice (train-checkpoint partition=tensor).
bool isSlice(Operation *op) {
  return isa<LocalShardOp>(op) && op->hasAttr(kCheckpointSliceAttr);
}

} // namespace

void ZeroOffloadCheckpointsPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (target != "cuda" && target != "cpu") {
    module.emitError("zero-offload-checkpoints: target must be cuda or cpu, "
                     "got '")
        << target << "'";
    return signalPassFailure();
  }
  auto mark = module->getAttrOfType<StringAttr>(kCheckpointOffloadAttr);
  // Nothing asked for, or nothing to move: the CPU backend's arenas are
  // host memory already.
  if (!mark || mark.getValue() != "host" || target == "cpu")
    return markAllAnalysesPreserved();
  auto fn = module.lookupSymbol<func::FuncOp>(stepFunction);
  if (!fn) {
    module.emitError("zero-offload-checkpoints: no function named '")
        << stepFunction << "' (run train-autodiff first)";
    return signalPassFailure();
  }
  Block &body = fn.getBody().front();
  Operation *seed = findLossSeed(body);
  if (!seed) {
    fn.emitError("zero-offload-checkpoints: '")
        << stepFunction << "' has no backward (no train.loss_seed)";
    return signalPassFailure();
  }

  // The slices kept across the loss seed: defined before it, every use
  // after it (a slice read in the forward stays on the device).
  SmallVector<Slice> slices;
  for (Operation &op : body) {
    if (&op == seed)
      break;
    if (!isSlice(&op))
      continue;
    Value s = op.getResult(0);
    Operation *first = nullptr;
    bool late = !s.use_empty();
    for (Operation *user : s.getUsers()) {
      if (user->getBlock() != &body || !seed->isBeforeInBlock(user)) {
        late = false;
        break;
      }
      if (!first || user->isBeforeInBlock(first))
        first = user;
    }
    if (late)
      slices.push_back({cast<LocalShardOp>(op), first});
  }
  if (slices.empty()) {
    fn.emitWarning("zero-offload-checkpoints: the module asks for "
                   "offload=host, but '")
        << stepFunction
        << "' keeps no P_a slice (zero.local_shard {zero.checkpoint_slice}) "
           "from the forward to the backward: nothing to move";
    return;
  }

  // Forward: offload each slice right after it is computed; wait before
  // the next slice is computed (or the loss seed).
  SmallVector<OffloadWaitOp> hostSlots;
  for (auto [i, s] : llvm::enumerate(slices)) {
    Value dev = s.def.getResult();
    auto pendingType =
        PendingType::get(&getContext(), cast<RankedTensorType>(dev.getType()));
    OpBuilder b(s.def->getBlock(), std::next(s.def->getIterator()));
    auto start = OffloadStartOp::create(b, s.def.getLoc(), pendingType, dev);
    Operation *waitAt = i + 1 < slices.size() ? slices[i + 1].def.getOperation()
                                              : seed;
    b.setInsertionPoint(waitAt);
    hostSlots.push_back(OffloadWaitOp::create(b, s.def.getLoc(),
                                              dev.getType(),
                                              start.getPending()));
    ++numOffloaded;
    numHostBytes += plan::tensorBytes(cast<RankedTensorType>(dev.getType()));
  }

  // Backward, in the order the slices are used: each fetch starts one
  // block ahead (right after the previous fetch's wait, the first right
  // after the loss seed) and is waited right before the slice's first use.
  SmallVector<unsigned> order(slices.size());
  for (unsigned i = 0; i < order.size(); ++i)
    order[i] = i;
  llvm::stable_sort(order, [&](unsigned a, unsigned b) {
    return slices[a].firstUse->isBeforeInBlock(slices[b].firstUse);
  });
  Operation *startAfter = seed;
  for (unsigned i : order) {
    Slice &s = slices[i];
    OffloadWaitOp host = hostSlots[i];
    Value dev = s.def.getResult();
    OpBuilder b(startAfter->getBlock(), std::next(startAfter->getIterator()));
    auto fetch = FetchStartOp::create(b, s.def.getLoc(),
                                      host.getPending().getType(),
                                      host.getHost());
    b.setInsertionPoint(s.firstUse);
    auto back = FetchWaitOp::create(b, s.def.getLoc(), dev.getType(),
                                    fetch.getPending());
    dev.replaceUsesWithIf(back.getResult(), [&](OpOperand &use) {
      Operation *user = use.getOwner();
      return user->getBlock() == &body && seed->isBeforeInBlock(user) &&
             user != fetch.getOperation() && user != back.getOperation();
    });
    startAfter = back;
  }
}
