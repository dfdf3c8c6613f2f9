//===- SequenceParallel.cpp - zero-sequence-parallel: token rows over M ---===//
///
/// \file
/// Cuts the token rows of the activations between the tensor-parallel
/// regions over the tensor axis (ZeroPasses.td, ZeroSequenceParallel;
/// Korthikanti et al., arXiv 2205.05198, §4.2.2): the norms and residual
/// adds that lie between a region's `zero.tp_g` and the next region's
/// `zero.tp_f` run on this rank's R = B·T/M rows, each such g becomes a
/// `zero.sp_scatter` and each such f a `zero.sp_gather`; replicated values
/// entering the row region are cut by `zero.sp_split`, rows leaving it for
/// a replicated reader are gathered whole (`zero.sp_gather {slice_grad}`),
/// and the weights the row ops read go through `zero.tp_f`, since each rank
/// sees only its rows. Runs on @forward after zero-tensor-parallel (and
/// zero-vocab-parallel), before train-autodiff.
///
//===----------------------------------------------------------------------===//

#include "zero/Transforms/Passes.h"

#include "Train/TrainOps.h"
#include "Zero/ZeroOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROSEQUENCEPARALLEL
#include "zero/Transforms/ZeroPasses.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

namespace {

/// The token shape of @forward: B sequences of T positions.
struct Tokens {
  int64_t batch = 0, seq = 0, m = 1;

  /// A float activation [B, T, C].
  bool isToken(Value v) const {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    return t && t.getRank() == 3 && isa<FloatType>(t.getElementType()) &&
           t.getDimSize(0) == batch && t.getDimSize(1) == seq;
  }

  /// [B, T, C] -> this rank's rows [B·T/M, C].
  RankedTensorType rowsType(Type whole) const {
    auto t = cast<RankedTensorType>(whole);
    return RankedTensorType::get({batch * seq / m, t.getDimSize(2)},
                                 t.getElementType());
  }

  /// An op that works row by row on [B, T, C] activations with replicated
  /// weights, so it can run on any cut of the rows: a residual add, a
  /// layer norm, an RMS norm.
  bool isRowLocal(Operation *op) const {
    if (auto add = dyn_cast<train::AddOp>(op))
      return isToken(add.getLhs()) && add.getLhs().getType() ==
                                          add.getRhs().getType();
    if (auto ln = dyn_cast<train::LayerNormOp>(op))
      return isToken(ln.getInput());
    if (auto rms = dyn_cast<train::RmsNormOp>(op))
      return isToken(rms.getInput());
    return false;
  }
};

struct ZeroSequenceParallelPass
    : public zero::impl::ZeroSequenceParallelBase<ZeroSequenceParallelPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto fail = [&](Operation *at) {
      return at->emitError() << "zero-sequence-parallel: ";
    };
    auto mesh = module->getAttrOfType<MeshAttr>(ZeroDialect::kMeshAttrName);
    if (!mesh || mesh.getTensor() < 2) {
      fail(module) << "sequence parallelism cuts token rows over the tensor "
                   << "axis; the module has no tensor axis of M >= 2 (got M = "
                   << (mesh ? mesh.getTensor() : 1)
                   << "; run zero-tensor-parallel with size >= 2 first)";
      return signalPassFailure();
    }
    if (module.lookupSymbol("forward_backward")) {
      fail(module) << "the module is differentiated already; sequence "
                   << "parallelism cuts the forward graph";
      return signalPassFailure();
    }
    auto fn = module.lookupSymbol<func::FuncOp>("forward");
    if (!fn || fn.isExternal()) {
      fail(module) << "no @forward to cut";
      return signalPassFailure();
    }
    Tokens tokens;
    tokens.m = mesh.getTensor();
    for (Type t : fn.getArgumentTypes()) {
      auto rt = dyn_cast<RankedTensorType>(t);
      if (rt && rt.getRank() == 2 && isa<IntegerType>(rt.getElementType())) {
        tokens.batch = rt.getDimSize(0);
        tokens.seq = rt.getDimSize(1);
        break;
      }
    }
    if (!tokens.batch) {
      fail(fn) << "@forward has no [B, T] token-id argument to take the "
               << "sequence length from";
      return signalPassFailure();
    }
    if (tokens.seq % tokens.m != 0) {
      fail(fn) << "the sequence length T = " << tokens.seq
               << " is not a multiple of the tensor-parallel size M = "
               << tokens.m << " (" << tokens.seq << " % " << tokens.m << " = "
               << tokens.seq % tokens.m << "); each tensor rank keeps T/M "
               << "positions";
      return signalPassFailure();
    }

    Block &body = fn.getBody().front();
    SmallVector<TensorParallelG> gs;
    SmallVector<TensorParallelF> fs;
    for (Operation &op : body) {
      if (auto g = dyn_cast<TensorParallelG>(op); g && tokens.isToken(g))
        gs.push_back(g);
      if (auto f = dyn_cast<TensorParallelF>(op); f && tokens.isToken(f))
        fs.push_back(f);
    }
    if (gs.empty()) {
      fail(fn) << "no tensor-parallel region (zero.tp_g of [" << tokens.batch
               << ", " << tokens.seq << ", C] activations) in @forward";
      return signalPassFailure();
    }

    // The row region: row-local ops reached forward from a g, or backward
    // from an f's input, through row-local ops; then closed forward.
    llvm::SetVector<Operation *> region;
    SmallVector<Operation *> back;
    for (TensorParallelF f : fs)
      if (Operation *def = f.getInput().getDefiningOp())
        back.push_back(def);
    while (!back.empty()) {
      Operation *op = back.pop_back_val();
      if (!tokens.isRowLocal(op) || !region.insert(op))
        continue;
      for (Value v : op->getOperands())
        if (Operation *def = v.getDefiningOp(); def && tokens.isToken(v))
          back.push_back(def);
    }
    SmallVector<Value> fwd;
    for (TensorParallelG g : gs)
      fwd.push_back(g.getResult());
    for (Operation *op : region)
      fwd.push_back(op->getResult(0));
    while (!fwd.empty()) {
      Value v = fwd.pop_back_val();
      for (Operation *user : v.getUsers())
        if (tokens.isRowLocal(user) && region.insert(user))
          fwd.push_back(user->getResult(0));
    }

    // A residual add of two replicated values (the token and position
    // embeddings) stays replicated: one split of its sum, not one of each
    // operand (each split costs an all-gather in the backward).
    llvm::SmallPtrSet<Operation *, 8> gOps;
    for (TensorParallelG g : gs)
      gOps.insert(g);
    auto onRows = [&](Value v) {
      Operation *def = v.getDefiningOp();
      return def && (region.contains(def) || gOps.contains(def));
    };
    for (bool changed = true; changed;) {
      changed = false;
      for (Operation *op : llvm::to_vector(region))
        if (isa<train::AddOp>(op) && llvm::none_of(op->getOperands(), onRows)) {
          region.remove(op);
          changed = true;
        }
    }

    int64_t m = tokens.m;
    llvm::DenseMap<Value, Value> rowsOf;
    // Each g of [B, T, C] partials: a reduce-scatter into this rank's rows.
    for (TensorParallelG g : gs) {
      OpBuilder b(g);
      rowsOf[g.getResult()] = SequenceScatterOp::create(
          b, g.getLoc(), tokens.rowsType(g.getType()), g.getInput(), m);
      ++numScatters;
    }
    // This rank's rows of a replicated value a row op reads: a bias
    // broadcast is rebuilt on the rows (its gradient is then partial, so
    // the bias goes through f); anything else is split.
    SmallVector<train::BroadcastOp> rebuilt;
    auto rowsFor = [&](Value v, OpBuilder &b) -> Value {
      if (Value r = rowsOf.lookup(v))
        return r;
      Location loc = v.getLoc();
      Value r;
      auto bcast = v.getDefiningOp<train::BroadcastOp>();
      auto src = bcast ? dyn_cast<RankedTensorType>(bcast.getInput().getType())
                       : RankedTensorType();
      if (src && src.getRank() == 1) {
        Value in = bcast.getInput();
        Value inF = TensorParallelF::create(b, loc, in.getType(), in, m);
        r = train::BroadcastOp::create(b, loc, tokens.rowsType(v.getType()),
                                       inF);
        rebuilt.push_back(bcast);
      } else {
        r = SequenceSplitOp::create(b, loc, tokens.rowsType(v.getType()), v, m);
        ++numSplits;
      }
      rowsOf[v] = r;
      return r;
    };

    SmallVector<Operation *> order;
    for (Operation &op : body)
      if (region.contains(&op))
        order.push_back(&op);
    for (Operation *op : order) {
      OpBuilder b(op);
      IRMapping map;
      for (Value v : op->getOperands()) {
        if (tokens.isToken(v))
          map.map(v, rowsFor(v, b));
        else // A weight: whole on every rank, its gradient partial.
          map.map(v, TensorParallelF::create(b, op->getLoc(), v.getType(),
                                             v, m));
      }
      Operation *rowOp = b.clone(*op, map);
      rowOp->getResult(0).setType(tokens.rowsType(op->getResult(0).getType()));
      rowsOf[op->getResult(0)] = rowOp->getResult(0);
      ++numRowOps;
    }

    // Readers outside the region: an f (a column-parallel region) reads the
    // all-gathered rows, its gradient a reduce-scatter; any other reader
    // the rows gathered whole, its gradient this rank's rows.
    SmallVector<Value> leaving;
    for (TensorParallelG g : gs)
      leaving.push_back(g.getResult());
    for (Operation *op : order)
      leaving.push_back(op->getResult(0));
    for (Value whole : leaving) {
      Value rows = rowsOf.lookup(whole);
      Value gathered;
      for (OpOperand &use : llvm::make_early_inc_range(whole.getUses())) {
        Operation *user = use.getOwner();
        if (region.contains(user))
          continue;
        OpBuilder b(user);
        if (auto f = dyn_cast<TensorParallelF>(user)) {
          Value g = SequenceGatherOp::create(b, f.getLoc(), f.getType(), rows,
                                             m, /*slice_grad=*/false);
          f.getResult().replaceAllUsesWith(g);
          f.erase();
          ++numGathers;
          continue;
        }
        if (!gathered) {
          b.setInsertionPointAfterValue(rows);
          gathered = SequenceGatherOp::create(b, whole.getLoc(),
                                              whole.getType(), rows, m,
                                              /*slice_grad=*/true);
          ++numGathers;
        }
        use.set(gathered);
      }
    }
    for (Operation *op : llvm::reverse(order))
      op->erase();
    for (TensorParallelG g : gs)
      g.erase();
    for (train::BroadcastOp bcast : rebuilt)
      if (bcast->use_empty())
        bcast.erase();
  }
};

} // namespace
