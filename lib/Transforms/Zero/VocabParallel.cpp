//===- VocabParallel.cpp - zero-vocab-parallel: vocabulary cuts -----------===//
///
/// \file
/// Cuts the token embedding tables and the LM head's weight by vocabulary
/// rows over the tensor axis, and makes the cross-entropy of the head's
/// logits vocabulary-parallel (ZeroPasses.td, ZeroVocabParallel; the ops in
/// ZeroVocabParallelOps.td). Runs on the forward graph after
/// `zero-tensor-parallel`; `train-autodiff` derives the backward through
/// the ops' gradient rules.
///
//===----------------------------------------------------------------------===//

#include "zero/Transforms/Passes.h"

#include "Train/TrainOps.h"
#include "Zero/ZeroOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROVOCABPARALLEL
#include "zero/Transforms/ZeroPasses.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

namespace {

/// The parameter `v` loads (trainable or frozen), or null.
train::ParamOp loadedParam(Value v, SymbolTable &symbols) {
  auto load = v ? v.getDefiningOp<train::LoadOp>() : train::LoadOp();
  return load ? symbols.lookup<train::ParamOp>(load.getName())
              : train::ParamOp();
}

/// A cross-entropy of the head's logits: `ce` reads them, through
/// `reshape` when not null; `classes` is its class count.
struct Loss {
  train::ReshapeOp reshape;
  train::CrossEntropyOp ce;
  int64_t classes = 0;
};

/// An LM head: `x · Wᵀ` of a weight to cut, and what reads its logits.
struct Head {
  train::MatmulOp matmul;
  SmallVector<Loss> losses;
  SmallVector<OpOperand *> returns;
};

RankedTensorType withDim(Type t, int64_t dim, int64_t n) {
  auto rt = cast<RankedTensorType>(t);
  SmallVector<int64_t> shape(rt.getShape());
  shape[dim] = n;
  return RankedTensorType::get(shape, rt.getElementType());
}

struct ZeroVocabParallelPass
    : public zero::impl::ZeroVocabParallelBase<ZeroVocabParallelPass> {
  using Base::Base;

  /// Whether `m` is an LM head candidate: x · Wᵀ without bias of a 2-D
  /// parameter that no other pass has cut.
  static train::ParamOp headWeight(train::MatmulOp m, SymbolTable &symbols) {
    if (!m.getTransposeB() || m.getTransposeA() || m.getBias())
      return {};
    train::ParamOp p = loadedParam(m.getB(), symbols);
    if (!p || p.getTensorType().getRank() != 2 ||
        p->hasAttr(ZeroDialect::kTensorSplitAttrName))
      return {};
    return p;
  }

  /// What reads `h.matmul`'s logits: losses and returns; emits the error
  /// for anything else.
  LogicalResult collectUses(Head &h) {
    for (OpOperand &use : h.matmul.getResult().getUses()) {
      Operation *user = use.getOwner();
      if (isa<func::ReturnOp>(user)) {
        h.returns.push_back(&use);
        continue;
      }
      Loss loss;
      if (auto r = dyn_cast<train::ReshapeOp>(user)) {
        auto ce = r.getResult().hasOneUse()
                      ? dyn_cast<train::CrossEntropyOp>(
                            *r.getResult().getUsers().begin())
                      : train::CrossEntropyOp();
        if (ce && ce.getLogits() == r.getResult() &&
            r.getType().getRank() == 2) {
          loss.reshape = r;
          loss.ce = ce;
        }
      } else if (auto ce = dyn_cast<train::CrossEntropyOp>(user)) {
        if (ce.getLogits() == use.get())
          loss.ce = ce;
      }
      if (!loss.ce)
        return user->emitOpError("reads the LM head's logits, which "
                                 "zero-vocab-parallel cuts by vocabulary "
                                 "columns; only train.cross_entropy (through "
                                 "train.reshape to [N, V]) and a return may");
      loss.classes = loss.ce.getEffectiveNumClasses();
      h.losses.push_back(loss);
    }
    return success();
  }

  /// The parallel cross-entropy in place of `loss.ce`, on logits already
  /// cut to [N, V/M].
  void rewrite(Loss &loss, int64_t m) {
    train::CrossEntropyOp ce = loss.ce;
    OpBuilder b(ce);
    Location loc = ce.getLoc();
    Value logits = ce.getLogits();
    int64_t rows = cast<RankedTensorType>(logits.getType()).getDimSize(0);
    Type f32 = b.getF32Type();
    auto rowType = RankedTensorType::get({rows}, f32);
    auto sumsType = RankedTensorType::get({rows, 2}, f32);
    Value localMax = VocabMaxOp::create(b, loc, rowType, logits, m,
                                        loss.classes);
    Value max = AllReduceOp::create(b, loc, rowType, localMax,
                                    ReduceKind::max, m, MeshAxis::tensor);
    Value sums = VocabExpSumsOp::create(b, loc, sumsType, logits,
                                        ce.getTargets(), max, m, loss.classes);
    Value whole = TensorParallelG::create(b, loc, sumsType, sums, m);
    Value l = VocabLossOp::create(b, loc, ce.getType(), whole, max,
                                  ce.getTargets(), loss.classes,
                                  ce.getIgnoreIndexAttr());
    ce.getResult().replaceAllUsesWith(l);
    ce.erase();
    ++numLosses;
  }

  /// The whole logits [..., V] from this rank's [..., V/M] for a return:
  /// all-gathered flat over the tensor axis ([M, ..., V/M] in rank order),
  /// the rank dimension moved next to the columns, merged with them.
  void gatherForReturn(OpOperand *use, Value local, int64_t m) {
    OpBuilder b(use->getOwner());
    Location loc = use->getOwner()->getLoc();
    auto t = cast<RankedTensorType>(local.getType());
    Type elt = t.getElementType();
    int64_t n = t.getNumElements(), rank = t.getRank();
    Value flat = train::ReshapeOp::create(
        b, loc, RankedTensorType::get({n}, elt), local);
    Value all = AllGatherOp::create(b, loc, RankedTensorType::get({n * m}, elt),
                                    flat, m, MeshAxis::tensor);
    SmallVector<int64_t> byRank{m};
    byRank.append(t.getShape().begin(), t.getShape().end());
    Value split = train::ReshapeOp::create(
        b, loc, RankedTensorType::get(byRank, elt), all);
    SmallVector<int64_t> perm, moved;
    for (int64_t i = 1; i < rank; ++i)
      perm.push_back(i);
    perm.push_back(0);
    perm.push_back(rank);
    for (int64_t i : perm)
      moved.push_back(byRank[i]);
    Value together = train::TransposeOp::create(
        b, loc, RankedTensorType::get(moved, elt), split,
        b.getDenseI64ArrayAttr(perm));
    SmallVector<int64_t> whole(t.getShape());
    whole.back() *= m;
    use->set(train::ReshapeOp::create(
        b, loc, RankedTensorType::get(whole, elt), together));
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto mesh = module->getAttrOfType<MeshAttr>(ZeroDialect::kMeshAttrName);
    if (!mesh || mesh.getTensor() < 2) {
      module.emitError("zero-vocab-parallel: the module has no tensor axis "
                       "of at least 2 ranks (run zero-tensor-parallel with "
                       "size >= 2 first)");
      return signalPassFailure();
    }
    if (module->hasAttr(kStageAttr) ||
        module.lookupSymbol<func::FuncOp>("forward_backward")) {
      module.emitError("zero-vocab-parallel: runs on the forward graph, "
                       "before train-autodiff and zero-partition");
      return signalPassFailure();
    }
    int64_t m = mesh.getTensor();
    SymbolTable symbols(module);

    // Find the embeddings and heads of every function, and their weights.
    SmallVector<train::EmbeddingOp> embeddings;
    SmallVector<Head> heads;
    llvm::SetVector<Operation *> params;
    llvm::DenseSet<Operation *> readers;
    for (auto fn : module.getOps<func::FuncOp>()) {
      fn.walk([&](train::EmbeddingOp e) {
        train::ParamOp p = loadedParam(e.getTable(), symbols);
        if (!p || p->hasAttr(ZeroDialect::kTensorSplitAttrName))
          return;
        embeddings.push_back(e);
        params.insert(p);
        readers.insert(e);
      });
      fn.walk([&](train::MatmulOp mm) {
        train::ParamOp p = headWeight(mm, symbols);
        if (!p)
          return;
        // A head: its logits reach a loss or a return.
        bool logits = llvm::any_of(mm->getUsers(), [](Operation *u) {
          if (isa<func::ReturnOp, train::CrossEntropyOp>(u))
            return true;
          auto r = dyn_cast<train::ReshapeOp>(u);
          return r && llvm::any_of(r->getUsers(), [](Operation *v) {
                   return isa<train::CrossEntropyOp>(v);
                 });
        });
        if (!logits)
          return;
        heads.push_back({mm, {}, {}});
        params.insert(p);
        readers.insert(mm);
      });
    }
    if (embeddings.empty() && heads.empty()) {
      module.emitError("zero-vocab-parallel: found no token embedding "
                       "(train.embedding of a parameter) or LM head (a "
                       "matmul of a parameter whose logits reach "
                       "train.cross_entropy) to cut by vocabulary");
      return signalPassFailure();
    }
    // Check everything before changing anything.
    for (Head &h : heads)
      if (failed(collectUses(h)))
        return signalPassFailure();
    for (Operation *op : params) {
      auto p = cast<train::ParamOp>(op);
      int64_t rows = p.getTensorType().getDimSize(0);
      if (rows % m != 0) {
        p.emitOpError("has a vocabulary of ")
            << rows << " rows, which the tensor-parallel size " << m
            << " does not divide (" << rows << " % " << m << " = "
            << rows % m << "); pad the vocabulary to a multiple of " << m;
        return signalPassFailure();
      }
      std::optional<SymbolTable::UseRange> uses =
          SymbolTable::getSymbolUses(p.getSymNameAttr(), module);
      for (const SymbolTable::SymbolUse &use : *uses) {
        auto load = dyn_cast<train::LoadOp>(use.getUser());
        bool ok = load && llvm::all_of(load->getUses(), [&](OpOperand &u) {
                    if (!readers.contains(u.getOwner()))
                      return false;
                    // The table of an embedding, the weight of a head.
                    return isa<train::EmbeddingOp>(u.getOwner())
                               ? u.getOperandNumber() == 0
                               : u.getOperandNumber() == 1;
                  });
        if (!ok) {
          use.getUser()->emitOpError("uses @")
              << p.getSymName() << ", which zero-vocab-parallel cuts by "
              << "vocabulary rows over " << m
              << " tensor ranks, outside a token embedding or the LM head";
          return signalPassFailure();
        }
      }
    }

    // Cut the declarations and their loads: rows [t·V/M, (t+1)·V/M).
    for (Operation *op : params) {
      auto p = cast<train::ParamOp>(op);
      RankedTensorType full = p.getTensorType();
      RankedTensorType local = withDim(full, 0, full.getDimSize(0) / m);
      p.setTypeAttr(TypeAttr::get(local));
      p->setAttr(ZeroDialect::kTensorSplitAttrName,
                 TensorSplitAttr::get(&getContext(), 0, 1, m, full.getShape()));
      std::optional<SymbolTable::UseRange> loads =
          SymbolTable::getSymbolUses(p.getSymNameAttr(), module);
      for (const SymbolTable::SymbolUse &use : *loads)
        use.getUser()->getResult(0).setType(local);
      ++numCutParams;
    }
    for (train::EmbeddingOp e : embeddings) {
      OpBuilder b(e);
      Value part = VocabEmbeddingOp::create(b, e.getLoc(), e.getType(),
                                            e.getTable(), e.getIds(), m);
      Value whole =
          TensorParallelG::create(b, e.getLoc(), e.getType(), part, m);
      e.getResult().replaceAllUsesWith(whole);
      e.erase();
      ++numEmbeddings;
    }
    for (Head &h : heads) {
      train::MatmulOp mm = h.matmul;
      OpBuilder b(mm);
      Value x = mm.getA();
      mm.getAMutable().assign(
          TensorParallelF::create(b, mm.getLoc(), x.getType(), x, m));
      auto logits = cast<RankedTensorType>(mm.getType());
      int64_t last = logits.getRank() - 1;
      mm.getResult().setType(
          withDim(logits, last, logits.getDimSize(last) / m));
      for (Loss &loss : h.losses) {
        if (loss.reshape)
          loss.reshape.getResult().setType(
              withDim(loss.reshape.getType(), 1,
                      loss.reshape.getType().getDimSize(1) / m));
        rewrite(loss, m);
      }
      for (OpOperand *use : h.returns)
        gatherForReturn(use, mm.getResult(), m);
      ++numHeads;
    }
  }
};

} // namespace
