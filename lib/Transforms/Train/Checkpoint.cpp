//===- Checkpoint.cpp - train-checkpoint: activation recomputation --------===//
///
/// \file
/// Recomputes each block's forward in the backward (see TrainPasses.td).
///
//===----------------------------------------------------------------------===//

#include "zero/Analysis/Blocks.h"
#include "zero/Transforms/Passes.h"

#include "Train/TrainOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
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

} // namespace

void TrainCheckpointPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (policy != "none" && policy != "block") {
    module.emitError("train-checkpoint: policy must be none or block, got '")
        << policy << "'";
    return signalPassFailure();
  }
  if (policy == "none")
    return;
  auto fn = module.lookupSymbol<func::FuncOp>(stepFunction);
  if (!fn) {
    module.emitError("train-checkpoint: no function named '")
        << stepFunction << "' (run train-autodiff first)";
    return signalPassFailure();
  }
  Block &body = fn.getBody().front();
  Operation *seed = nullptr;
  for (auto fill : body.getOps<FillOp>())
    if (fill->hasAttr(zero::kLossSeedAttr))
      seed = fill;
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
