//===- Prefetch.cpp - zero-prefetch: overlap collectives with compute -----===//
///
/// \file
/// Splits collectives into start/wait and moves them apart (see
/// ZeroPasses.td). Works on single-block functions, in which the sequence
/// of collectives is static.
///
//===----------------------------------------------------------------------===//

#include "zero/Transforms/Passes.h"

#include "Zero/ZeroOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <limits>

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROPREFETCH
#include "zero/Transforms/ZeroPasses.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

namespace {

struct ZeroPrefetchPass : public zero::impl::ZeroPrefetchBase<ZeroPrefetchPass> {
  using Base::Base;
  void runOnOperation() override;

private:
  LogicalResult schedule(func::FuncOp fn);
};

/// An all-gather being scheduled: its ops and live range, as positions.
struct Gather {
  Operation *start, *wait;
  Operation *shardLoad; // moved with the start; may be null
  int64_t bytes;
  unsigned startPos, waitPos, lastUsePos;
};

int64_t bytesOf(Type t) {
  auto tt = cast<RankedTensorType>(t);
  return tt.getNumElements() * (tt.getElementTypeBitWidth() / 8);
}

/// Replaces a blocking collective by start + wait at the same place (on the
/// same mesh axis) and returns {start, wait}.
std::pair<Operation *, Operation *> split(Operation *op) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  Operation *start = nullptr;
  Type resultType = op->getResult(0).getType();
  auto pending = PendingType::get(op->getContext(), cast<RankedTensorType>(resultType));
  if (auto ag = dyn_cast<AllGatherOp>(op))
    start = AllGatherStartOp::create(b, loc, pending, ag.getShard(),
                                     ag.getWorldSizeAttr(), ag.getAxisAttr());
  else if (auto rs = dyn_cast<ReduceScatterOp>(op))
    start = ReduceScatterStartOp::create(b, loc, pending, rs.getInput(),
                                         rs.getKindAttr(), rs.getWorldSizeAttr(),
                                         rs.getAxisAttr());
  else if (auto ar = dyn_cast<AllReduceOp>(op))
    start = AllReduceStartOp::create(b, loc, pending, ar.getInput(),
                                     ar.getKindAttr(), ar.getWorldSizeAttr(),
                                     ar.getAxisAttr());
  auto wait = WaitOp::create(b, loc, resultType, start->getResult(0));
  op->getResult(0).replaceAllUsesWith(wait.getResult());
  op->erase();
  return {start, wait};
}

/// The last op in `block` that uses `v`, looking through zero.unpack
/// (whose results are views of its operand).
Operation *lastViewUse(Value v) {
  Operation *last = nullptr;
  for (Operation *user : v.getUsers()) {
    Operation *candidate = user;
    if (auto unpack = dyn_cast<UnpackOp>(user))
      for (Value member : unpack.getResults())
        if (Operation *u = lastViewUse(member))
          if (candidate->isBeforeInBlock(u))
            candidate = u;
    if (!last || last->isBeforeInBlock(candidate))
      last = candidate;
  }
  return last;
}

} // namespace

void ZeroPrefetchPass::runOnOperation() {
  if (distance < 0 || maxLiveBytes < 0) {
    getOperation().emitError("zero-prefetch: distance and max-live-bytes must "
                             "be >= 0");
    return signalPassFailure();
  }
  for (auto fn : getOperation().getOps<func::FuncOp>())
    if (!fn.isExternal() && failed(schedule(fn)))
      return signalPassFailure();
}

LogicalResult ZeroPrefetchPass::schedule(func::FuncOp fn) {
  if (!fn.getBody().hasOneBlock())
    return fn.emitError("zero-prefetch: '")
           << fn.getSymName()
           << "' has more than one block; the collective schedule must be "
              "static";
  Block &block = fn.getBody().front();
  SmallVector<Operation *> collectives;
  for (Operation &op : block) {
    if (op.getNumRegions() != 0 &&
        op.walk([](Operation *inner) {
            return isa<AllGatherOp, ReduceScatterOp, AllReduceOp>(inner)
                       ? WalkResult::interrupt()
                       : WalkResult::advance();
          }).wasInterrupted())
      return op.emitOpError("contains a collective inside a region; the "
                            "collective schedule must be static");
    if (isa<AllGatherOp, ReduceScatterOp, AllReduceOp>(op))
      collectives.push_back(&op);
  }

  Operation *seed = findLossSeed(block); // null without a backward
  SmallVector<std::pair<Operation *, Operation *>> gathers;
  Operation *terminator = block.getTerminator();
  for (Operation *op : collectives) {
    bool isGather = isa<AllGatherOp>(op);
    auto [start, wait] = split(op);
    ++numSplit;
    if (isGather) {
      gathers.push_back({start, wait});
      continue;
    }
    // Reductions: wait as late as the uses allow; a result that is only
    // accumulated into a shard is accumulated at the end.
    Value result = wait->getResult(0);
    if (result.hasOneUse() && isa<ShardAccumulateOp>(*result.getUsers().begin())) {
      Operation *acc = *result.getUsers().begin();
      acc->moveBefore(terminator);
      wait->moveBefore(acc);
      continue;
    }
    Operation *firstUse = nullptr;
    for (Operation *user : result.getUsers())
      if (!firstUse || user->isBeforeInBlock(firstUse))
        firstUse = user;
    if (firstUse)
      wait->moveBefore(firstUse);
  }

  // All-gathers: hoist starts up to `distance` gathers ahead within the
  // live-bytes budget. Positions are op indices, recomputed once: moving a
  // start earlier never changes the relative order of the waits and uses.
  DenseMap<Operation *, unsigned> pos;
  auto renumber = [&] {
    unsigned i = 0;
    for (Operation &op : block)
      pos[&op] = i++;
  };
  renumber();
  int64_t budget = maxLiveBytes > 0 ? static_cast<int64_t>(maxLiveBytes)
                                    : std::numeric_limits<int64_t>::max();
  SmallVector<Gather> scheduled;
  for (auto [i, sw] : llvm::enumerate(gathers)) {
    auto [start, wait] = sw;
    Gather g;
    g.start = start;
    g.wait = wait;
    g.bytes = bytesOf(wait->getResult(0).getType());
    Value shard = start->getOperand(0);
    auto load = shard.getDefiningOp<ShardLoadOp>();
    g.shardLoad = load && shard.hasOneUse() ? load.getOperation() : nullptr;
    g.waitPos = pos[wait];
    Operation *lastUse = lastViewUse(wait->getResult(0));
    g.lastUsePos = lastUse ? pos[lastUse] : g.waitPos;
    // Earliest legal start: after the wait `distance` gathers back, and
    // after the shard's definition when it does not move with the start.
    unsigned lo = 0;
    if (distance == 0)
      lo = g.waitPos;
    else if (i >= static_cast<size_t>(distance))
      lo = scheduled[i - distance].waitPos + 1;
    if (!g.shardLoad) {
      if (Operation *def = shard.getDefiningOp())
        lo = std::max(lo, pos[def] + 1);
    }
    // A P_a checkpoint's gather starts in the backward: started in the
    // forward, the whole checkpoint would live across the loss seed, which
    // is what partitioning it saves.
    auto slice = shard.getDefiningOp<LocalShardOp>();
    if (seed && slice && slice->hasAttr(kCheckpointSliceAttr) &&
        seed->isBeforeInBlock(wait))
      lo = std::max(lo, pos[seed] + 1);
    // Where the start (with its shard load) sits now.
    unsigned original = g.shardLoad ? pos[g.shardLoad] : pos[start];
    lo = std::min(lo, original);
    // The smallest start position whose live range fits the budget.
    auto fits = [&](unsigned s) {
      if (g.bytes > budget)
        return s >= original;
      for (unsigned p = s; p <= g.lastUsePos; ++p) {
        int64_t live = g.bytes;
        for (const Gather &o : scheduled)
          if (o.startPos <= p && p <= o.lastUsePos)
            live += o.bytes;
        if (live > budget)
          return false;
      }
      return true;
    };
    unsigned s = lo;
    while (s < original && !fits(s))
      ++s;
    g.startPos = s;
    if (s < original) {
      // Move the start (and its shard load) before the op at position s.
      Operation *anchor = nullptr;
      for (Operation &op : block)
        if (pos[&op] == s) {
          anchor = &op;
          break;
        }
      if (g.shardLoad)
        g.shardLoad->moveBefore(anchor);
      start->moveBefore(anchor);
      ++numHoisted;
      renumber();
      // Positions shifted by the move: refresh this and earlier gathers.
      g.startPos = pos[start];
      g.waitPos = pos[wait];
      g.lastUsePos = lastUse ? pos[lastUse] : g.waitPos;
      for (Gather &o : scheduled) {
        o.startPos = pos[o.start];
        o.waitPos = pos[o.wait];
        Operation *u = lastViewUse(o.wait->getResult(0));
        o.lastUsePos = u ? pos[u] : o.waitPos;
      }
    }
    scheduled.push_back(g);
  }
  // The schedule's peak of gathered bytes (checked against the budget).
  int64_t peak = 0;
  for (unsigned p = 0; p < block.getOperations().size(); ++p) {
    int64_t live = 0;
    for (const Gather &o : scheduled)
      if (o.startPos <= p && p <= o.lastUsePos)
        live += o.bytes;
    peak = std::max(peak, live);
  }
  if (peak > static_cast<int64_t>(peakLiveBytes))
    peakLiveBytes = peak;
  if (remarks && !scheduled.empty()) {
    unsigned hoisted = 0;
    for (const Gather &o : scheduled)
      hoisted += o.start->getNextNode() != o.wait;
    fn.emitRemark("zero-prefetch: ")
        << scheduled.size() << " all-gathers, " << hoisted
        << " overlapping compute, peak " << peak << " live gathered bytes";
  }
  return success();
}
