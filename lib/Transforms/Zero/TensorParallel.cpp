//===- TensorParallel.cpp - zero-tensor-parallel: Megatron's cuts ---------===//
///
/// \file
/// Cuts a transformer's MLP and attention regions (GPT-2's, and Llama's and
/// Qwen's SwiGLU MLP and grouped-query attention) over the tensor axis of
/// the rank mesh (ZeroPasses.td, ZeroTensorParallel): column-parallel
/// first projections, row-parallel second projections, Megatron's f and g
/// (`zero.tp_f`, `zero.tp_g`) around each region. Runs on the forward graph;
/// `train-autodiff` then derives the backward through the gradient rules of
/// f and g, and `zero-partition` shards over the data axis.
///
//===----------------------------------------------------------------------===//

#include "zero/Transforms/Passes.h"

#include "Train/TrainOps.h"
#include "Zero/ZeroOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROTENSORPARALLEL
#include "zero/Transforms/ZeroPasses.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

namespace {

/// How one parameter is cut: dimension `dim` of its full shape, in
/// `blocks` blocks (3 for packed q/k/v), each into M slices.
struct Cut {
  int64_t dim = 0;
  int64_t blocks = 1;
  bool operator==(const Cut &o) const {
    return dim == o.dim && blocks == o.blocks;
  }
};

/// One region: `first` (column-parallel) → `middle` (GELU or packed
/// attention) → `second` (row-parallel), each the single user of the last.
struct Region {
  train::MatmulOp first;
  Operation *middle;
  train::MatmulOp second;
  bool attention;
};

/// A Llama / Qwen MLP: `gate` and `up` (column-parallel, weights [F, C])
/// → `train.swiglu` → `down` (row-parallel, weight [C, F]).
struct GatedMlp {
  train::MatmulOp gate, up;
  train::SwigluOp act;
  train::MatmulOp down;
};

/// A Llama / Qwen attention: the q, k and v projections (column-parallel by
/// heads) reach `train.causal_attention` through head-preserving ops
/// (reshape to heads, the QK-norm `train.rms_norm`, `train.rope`,
/// `train.transpose`), and its result reaches the output projection
/// (row-parallel) through transpose and reshape. `chain` holds those ops in
/// program order; `cutDim` the dimension of each value that holds the
/// heads (the one cut M ways).
struct HeadAttention {
  SmallVector<train::MatmulOp, 3> proj; ///< q, k, v
  train::CausalAttentionOp attn;
  train::MatmulOp out;
  SmallVector<Operation *> chain;
  llvm::DenseMap<Value, int64_t> cutDim;
};

/// The trainable parameter `v` loads, or null.
train::ParamOp loadedParam(Value v, SymbolTable &symbols) {
  auto load = v ? v.getDefiningOp<train::LoadOp>() : train::LoadOp();
  if (!load)
    return {};
  auto p = symbols.lookup<train::ParamOp>(load.getName());
  return p && p.getTrainable() ? p : train::ParamOp();
}

/// A matmul x · Wᵀ (+ b) whose weight (and bias) are trainable parameters.
bool isLinear(train::MatmulOp m, SymbolTable &symbols) {
  return m && m.getTransposeB() && !m.getTransposeA() &&
         loadedParam(m.getB(), symbols) &&
         (!m.getBias() || loadedParam(m.getBias(), symbols));
}

/// The single user of `v` if it is an op of type T, else null.
template <typename T> T singleUser(Value v) {
  if (!v.hasOneUse())
    return {};
  return dyn_cast<T>(*v.getUsers().begin());
}

RankedTensorType withLastDim(Type t, int64_t n) {
  auto rt = cast<RankedTensorType>(t);
  SmallVector<int64_t> shape(rt.getShape());
  shape.back() = n;
  return RankedTensorType::get(shape, rt.getElementType());
}

/// `t` with dimension `dim` divided by `m`.
RankedTensorType cutType(Type t, int64_t dim, int64_t m) {
  auto rt = cast<RankedTensorType>(t);
  SmallVector<int64_t> shape(rt.getShape());
  shape[dim] /= m;
  return RankedTensorType::get(shape, rt.getElementType());
}

/// The dimension of `op`'s result that holds what dimension `dim` of its
/// first operand holds (the heads), or nullopt. A reshape keeps the
/// leading dimensions and splits or merges the heads with the head size
/// after them: the result dimension whose leading product equals the
/// operand's.
std::optional<int64_t> cutDimThrough(Operation *op, int64_t dim) {
  if (isa<train::RopeOp, train::RmsNormOp>(op))
    return dim;
  if (auto t = dyn_cast<train::TransposeOp>(op)) {
    auto it = llvm::find(t.getPermutation(), dim);
    if (it == t.getPermutation().end())
      return std::nullopt;
    return it - t.getPermutation().begin();
  }
  auto r = dyn_cast<train::ReshapeOp>(op);
  if (!r)
    return std::nullopt;
  ArrayRef<int64_t> in = cast<RankedTensorType>(r.getInput().getType()).getShape();
  ArrayRef<int64_t> out = r.getType().getShape();
  int64_t lead = 1;
  for (int64_t i = 0; i < dim; ++i)
    lead *= in[i];
  int64_t outLead = 1;
  for (int64_t j = 0; j < static_cast<int64_t>(out.size()); ++j) {
    if (outLead == lead)
      return j;
    outLead *= out[j];
  }
  return std::nullopt;
}

/// Walks back from `v` (an operand of the attention) through single-use
/// head-preserving ops to a projection; appends the ops walked (last
/// first) to `chain`. Null when the path is anything else.
train::MatmulOp projectionOf(Value v, SymbolTable &symbols,
                             SmallVectorImpl<Operation *> &chain) {
  while (v.hasOneUse()) {
    Operation *def = v.getDefiningOp();
    if (auto m = dyn_cast_or_null<train::MatmulOp>(def))
      return isLinear(m, symbols) ? m : train::MatmulOp();
    if (!def || !isa<train::ReshapeOp, train::TransposeOp, train::RopeOp,
                     train::RmsNormOp>(def))
      return {};
    chain.push_back(def);
    v = def->getOperand(0);
  }
  return {};
}

struct ZeroTensorParallelPass
    : public zero::impl::ZeroTensorParallelBase<ZeroTensorParallelPass> {
  using Base::Base;

  /// Finds the Llama / Qwen MLP and attention regions of `fn`.
  void findDecoderRegions(func::FuncOp fn, SymbolTable &symbols,
                          SmallVectorImpl<GatedMlp> &mlps,
                          SmallVectorImpl<HeadAttention> &attns) {
    fn.walk([&](train::SwigluOp act) {
      auto gate = act.getGate().getDefiningOp<train::MatmulOp>();
      auto up = act.getUp().getDefiningOp<train::MatmulOp>();
      auto down = singleUser<train::MatmulOp>(act.getResult());
      if (gate && up && down && isLinear(gate, symbols) &&
          isLinear(up, symbols) && isLinear(down, symbols) &&
          gate.getA() == up.getA() && act.getGate().hasOneUse() &&
          act.getUp().hasOneUse() && down.getA() == act.getResult())
        mlps.push_back({gate, up, act, down});
    });
    fn.walk([&](train::CausalAttentionOp attn) {
      if (!attn.getLse().use_empty())
        return;
      HeadAttention h;
      h.attn = attn;
      SmallVector<Operation *> back;
      for (Value in : {attn.getQuery(), attn.getKey(), attn.getValue()}) {
        SmallVector<Operation *> path;
        train::MatmulOp m = projectionOf(in, symbols, path);
        if (!m)
          return;
        h.proj.push_back(m);
        back.append(path.rbegin(), path.rend());
      }
      if (h.proj[0].getA() != h.proj[1].getA() ||
          h.proj[0].getA() != h.proj[2].getA())
        return;
      // Forward to the output projection.
      Value v = attn.getResult();
      SmallVector<Operation *> fwd;
      while (v.hasOneUse()) {
        Operation *user = *v.getUsers().begin();
        if (auto m = dyn_cast<train::MatmulOp>(user)) {
          if (m.getA() == v && isLinear(m, symbols))
            h.out = m;
          break;
        }
        if (!isa<train::ReshapeOp, train::TransposeOp>(user))
          break;
        fwd.push_back(user);
        v = user->getResult(0);
      }
      if (!h.out)
        return;
      h.chain = std::move(back);
      h.chain.append(fwd);
      attns.push_back(std::move(h));
    });
  }

  /// Computes `h.cutDim` for every value of the region, and checks that
  /// the heads divide by M; emits the error otherwise.
  LogicalResult checkAttention(HeadAttention &h, int64_t m) {
    auto qType = cast<RankedTensorType>(h.attn.getQuery().getType());
    auto kType = cast<RankedTensorType>(h.attn.getKey().getType());
    int64_t heads = qType.getDimSize(1), kvHeads = kType.getDimSize(1);
    if (heads % m != 0 || kvHeads % m != 0)
      return h.attn.emitOpError("has ")
             << heads << " query heads and " << kvHeads
             << " key/value heads; the tensor-parallel size " << m
             << " must divide both (" << heads << " % " << m << " = "
             << heads % m << ", " << kvHeads << " % " << m << " = "
             << kvHeads % m << ")";
    for (train::MatmulOp p : h.proj)
      h.cutDim[p.getResult()] =
          cast<RankedTensorType>(p.getType()).getRank() - 1;
    h.cutDim[h.attn.getResult()] = 1;
    h.cutDim[h.attn.getLse()] = 1;
    for (Operation *op : h.chain) {
      auto d = h.cutDim.find(op->getOperand(0));
      std::optional<int64_t> j =
          d == h.cutDim.end() ? std::nullopt : cutDimThrough(op, d->second);
      if (!j)
        return op->emitOpError("does not keep the attention heads on one "
                               "dimension; zero-tensor-parallel cannot cut "
                               "it by heads");
      h.cutDim[op->getResult(0)] = *j;
    }
    // The heads reach the attention on dimension 1 and leave it on the
    // last dimension, the output projection's input features.
    for (Value in : {h.attn.getQuery(), h.attn.getKey(), h.attn.getValue()})
      if (h.cutDim.lookup(in) != 1)
        return h.attn.emitOpError("does not get its heads on dimension 1 "
                                  "from its projections");
    Value outIn = h.out.getA();
    if (h.cutDim.lookup(outIn) !=
        cast<RankedTensorType>(outIn.getType()).getRank() - 1)
      return h.out.emitOpError("does not take the attention heads as its "
                               "input features");
    return success();
  }

  /// `zero.tp_f` of `x` before `at`; the operands `uses` of `x` take it.
  void insertF(Value x, ArrayRef<OpOperand *> uses, Operation *at,
               int64_t m) {
    OpBuilder b(at);
    Value xf = TensorParallelF::create(b, at->getLoc(), x.getType(), x, m);
    for (OpOperand *u : uses)
      u->set(xf);
  }

  /// Replaces the row-parallel `second` (on the local `middle`) by its
  /// partial product, `zero.tp_g` and its bias once after it.
  void rowParallel(train::MatmulOp second, Value middle, int64_t m) {
    OpBuilder b(second);
    Location loc = second.getLoc();
    Type outType = second.getType();
    Value partial = train::MatmulOp::create(
        b, loc, outType, middle, second.getB(), /*bias=*/Value(),
        /*transpose_a=*/false, /*transpose_b=*/true);
    Value out = TensorParallelG::create(b, loc, outType, partial, m);
    if (Value bias = second.getBias()) {
      Value wide = train::BroadcastOp::create(b, loc, outType, bias);
      out = train::AddOp::create(b, loc, outType, out, wide);
    }
    second.getResult().replaceAllUsesWith(out);
    second.erase();
  }

  /// Rewrites a Llama / Qwen MLP for M tensor ranks.
  void rewrite(GatedMlp r, int64_t m) {
    insertF(r.gate.getA(), {&r.gate.getAMutable(), &r.up.getAMutable()},
            r.gate->isBeforeInBlock(r.up) ? r.gate.getOperation()
                                          : r.up.getOperation(),
            m);
    RankedTensorType local = withLastDim(
        r.gate.getType(),
        cast<RankedTensorType>(r.gate.getType()).getShape().back() / m);
    r.gate.getResult().setType(local);
    r.up.getResult().setType(local);
    r.act.getResult().setType(local);
    rowParallel(r.down, r.act.getResult(), m);
  }

  /// Rewrites a Llama / Qwen attention for M tensor ranks: the values on
  /// its paths lose M-fold on their head dimension; a QK-norm weight (whole
  /// on every rank, applied to this rank's heads) goes through `zero.tp_f`
  /// so that its gradient is summed over the tensor axis.
  void rewrite(HeadAttention &h, int64_t m) {
    Operation *first = h.proj[0];
    for (train::MatmulOp p : h.proj)
      if (p->isBeforeInBlock(first))
        first = p;
    SmallVector<OpOperand *> uses;
    for (train::MatmulOp p : h.proj)
      uses.push_back(&p.getAMutable());
    insertF(h.proj[0].getA(), uses, first, m);
    for (auto &[v, dim] : h.cutDim)
      Value(v).setType(cutType(v.getType(), dim, m));
    for (Operation *op : h.chain)
      if (auto norm = dyn_cast<train::RmsNormOp>(op))
        insertF(norm.getWeight(), {&norm.getWeightMutable()}, norm, m);
    rowParallel(h.out, h.out.getA(), m);
  }

  /// Finds the regions of `fn`.
  void findRegions(func::FuncOp fn, SymbolTable &symbols,
                   SmallVectorImpl<Region> &out) {
    fn.walk([&](train::MatmulOp first) {
      if (!isLinear(first, symbols))
        return;
      Value y = first.getResult();
      if (auto gelu = singleUser<train::GeluOp>(y)) {
        auto second = singleUser<train::MatmulOp>(gelu.getResult());
        if (second && second.getA() == gelu.getResult() &&
            isLinear(second, symbols))
          out.push_back({first, gelu, second, /*attention=*/false});
        return;
      }
      if (auto attn = singleUser<train::CausalAttentionPackedOp>(y)) {
        if (!attn.getLse().use_empty())
          return;
        auto second = singleUser<train::MatmulOp>(attn.getResult());
        if (second && second.getA() == attn.getResult() &&
            isLinear(second, symbols))
          out.push_back({first, attn, second, /*attention=*/true});
      }
    });
  }

  /// Checks that `region` can be cut M ways; emits the error otherwise.
  LogicalResult checkRegion(Region r, int64_t m) {
    if (r.attention) {
      auto attn = cast<train::CausalAttentionPackedOp>(r.middle);
      int64_t heads = attn.getHeads();
      if (heads % m != 0)
        return attn.emitOpError("has ")
               << heads << " heads, which the tensor-parallel size " << m
               << " does not divide (" << heads << " % " << m << " = "
               << heads % m << ")";
      return success();
    }
    int64_t width = cast<RankedTensorType>(r.first.getType()).getShape().back();
    if (width % m != 0)
      return r.first.emitOpError("has an FFN width of ")
             << width << ", which the tensor-parallel size " << m
             << " does not divide (" << width << " % " << m << " = "
             << width % m << ")";
    return success();
  }

  /// Records that `param` is cut as `cut`; fails if it was cut otherwise.
  LogicalResult record(train::ParamOp param, Cut cut, Operation *at,
                       llvm::MapVector<Operation *, Cut> &cuts) {
    auto [it, inserted] = cuts.try_emplace(param, cut);
    if (!inserted && !(it->second == cut))
      return at->emitOpError("cuts @")
             << param.getSymName() << " on dimension " << cut.dim
             << " in " << cut.blocks << " block(s), but another region cuts "
             << "it on dimension " << it->second.dim << " in "
             << it->second.blocks << " block(s)";
    return success();
  }

  /// Records the cuts of a decoder region: the weights (and biases) of the
  /// column-parallel projections `cols` on dimension 0, the row-parallel
  /// `row`'s weight on dimension 1; the projections join `inRegions`.
  LogicalResult recordPair(ArrayRef<train::MatmulOp> cols,
                           train::MatmulOp row, SymbolTable &symbols,
                           llvm::MapVector<Operation *, Cut> &cuts,
                           llvm::DenseSet<Operation *> &inRegions) {
    for (train::MatmulOp col : cols) {
      if (failed(record(loadedParam(col.getB(), symbols), {0, 1}, col, cuts)))
        return failure();
      if (Value bias = col.getBias())
        if (failed(record(loadedParam(bias, symbols), {0, 1}, col, cuts)))
          return failure();
      inRegions.insert(col);
    }
    if (failed(record(loadedParam(row.getB(), symbols), {1, 1}, row, cuts)))
      return failure();
    inRegions.insert(row);
    return success();
  }

  /// Rewrites one region for M tensor ranks (parameter types already cut).
  void rewrite(Region r, int64_t m) {
    // f at the region's input.
    insertF(r.first.getA(), {&r.first.getAMutable()}, r.first, m);
    Type firstType = r.first.getType();
    int64_t width = cast<RankedTensorType>(firstType).getShape().back();
    r.first.getResult().setType(withLastDim(firstType, width / m));
    Value middle;
    if (r.attention) {
      auto attn = cast<train::CausalAttentionPackedOp>(r.middle);
      OpBuilder b(attn);
      auto lseType = cast<RankedTensorType>(attn.getLse().getType());
      SmallVector<int64_t> lseShape(lseType.getShape());
      lseShape[1] /= m;
      Type resultType = attn.getResult().getType();
      int64_t c = cast<RankedTensorType>(resultType).getShape().back();
      auto cut = train::CausalAttentionPackedOp::create(
          b, attn.getLoc(), withLastDim(resultType, c / m),
          RankedTensorType::get(lseShape, lseType.getElementType()),
          r.first.getResult(), b.getI64IntegerAttr(attn.getHeads() / m));
      middle = cut.getResult();
      attn.getResult().replaceAllUsesWith(middle);
      attn.erase();
    } else {
      auto gelu = cast<train::GeluOp>(r.middle);
      gelu.getResult().setType(r.first.getType());
      middle = gelu.getResult();
    }
    // The row-parallel product without its bias, g, then the bias once.
    rowParallel(r.second, middle, m);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    int64_t m = size;
    if (m < 1) {
      module.emitError("zero-tensor-parallel: size must be >= 1, got ") << m;
      return signalPassFailure();
    }
    if (worldSize < 0 || (worldSize > 0 && worldSize % m != 0)) {
      module.emitError("zero-tensor-parallel: the tensor-parallel size ")
          << m << " does not divide the world size "
          << static_cast<int64_t>(worldSize);
      return signalPassFailure();
    }
    if (module->hasAttr(ZeroDialect::kMeshAttrName)) {
      module.emitError("zero-tensor-parallel: the module has a mesh already (")
          << module->getAttr(ZeroDialect::kMeshAttrName) << ")";
      return signalPassFailure();
    }
    if (module->hasAttr(kStageAttr) ||
        module.lookupSymbol<func::FuncOp>("forward_backward")) {
      module.emitError("zero-tensor-parallel: runs on the forward graph, "
                       "before train-autodiff and zero-partition");
      return signalPassFailure();
    }
    module->setAttr(ZeroDialect::kMeshAttrName,
                    MeshAttr::get(&getContext(), worldSize / m, m));
    if (m == 1)
      return;

    SymbolTable symbols(module);
    SmallVector<Region> regions;
    SmallVector<GatedMlp> mlps;
    SmallVector<HeadAttention> attns;
    for (auto fn : module.getOps<func::FuncOp>()) {
      findRegions(fn, symbols, regions);
      findDecoderRegions(fn, symbols, mlps, attns);
    }
    // A mesh with nothing cut would only repeat every op on M ranks.
    if (regions.empty() && mlps.empty() && attns.empty()) {
      module.emitError("zero-tensor-parallel: found no column-/row-parallel "
                       "projection pair to cut over ")
          << m
          << " tensor ranks (GPT's GELU MLP and packed attention, Llama's "
             "and Qwen's SwiGLU MLP and attention are cut); use size=1";
      return signalPassFailure();
    }
    // Check everything before changing anything.
    llvm::MapVector<Operation *, Cut> cuts;
    llvm::DenseSet<Operation *> inRegions;
    for (Region r : regions) {
      if (failed(checkRegion(r, m)))
        return signalPassFailure();
      int64_t blocks = r.attention ? 3 : 1;
      auto w1 = loadedParam(r.first.getB(), symbols);
      auto w2 = loadedParam(r.second.getB(), symbols);
      if (failed(record(w1, {0, blocks}, r.first, cuts)) ||
          failed(record(w2, {1, 1}, r.second, cuts)))
        return signalPassFailure();
      if (Value bias = r.first.getBias())
        if (failed(record(loadedParam(bias, symbols), {0, blocks}, r.first,
                          cuts)))
          return signalPassFailure();
      inRegions.insert(r.first);
      inRegions.insert(r.second);
    }
    for (GatedMlp &r : mlps) {
      int64_t width =
          cast<RankedTensorType>(r.gate.getType()).getShape().back();
      if (width % m != 0) {
        r.gate.emitOpError("has an FFN width of ")
            << width << ", which the tensor-parallel size " << m
            << " does not divide (" << width << " % " << m << " = "
            << width % m << ")";
        return signalPassFailure();
      }
      if (failed(recordPair({r.gate, r.up}, r.down, symbols, cuts,
                            inRegions)))
        return signalPassFailure();
    }
    for (HeadAttention &h : attns) {
      if (failed(checkAttention(h, m)))
        return signalPassFailure();
      if (failed(recordPair(h.proj, h.out, symbols, cuts, inRegions)))
        return signalPassFailure();
    }
    // A cut parameter is read only by its regions' projections (as the
    // weight or bias of the first, the weight of the second).
    for (auto &[op, cut] : cuts) {
      auto param = cast<train::ParamOp>(op);
      std::optional<SymbolTable::UseRange> uses =
          SymbolTable::getSymbolUses(param.getSymNameAttr(), module);
      for (const SymbolTable::SymbolUse &use : *uses) {
        auto load = dyn_cast<train::LoadOp>(use.getUser());
        bool ok = load && llvm::all_of(load->getUsers(), [&](Operation *u) {
                    return inRegions.contains(u);
                  });
        if (!ok) {
          use.getUser()->emitOpError("uses @")
              << param.getSymName()
              << ", which zero-tensor-parallel cuts over " << m
              << " tensor ranks, outside a column- or row-parallel "
                 "projection";
          return signalPassFailure();
        }
      }
    }
    // Cut the declarations and their loads.
    for (auto &[op, cut] : cuts) {
      auto param = cast<train::ParamOp>(op);
      RankedTensorType full = param.getTensorType();
      SmallVector<int64_t> local(full.getShape());
      if (local[cut.dim] % (cut.blocks * m) != 0) {
        param.emitOpError("dimension ")
            << cut.dim << " of size " << local[cut.dim]
            << " cannot be cut into " << cut.blocks << " block(s) of " << m
            << " tensor slices";
        return signalPassFailure();
      }
      local[cut.dim] /= m;
      auto localType = RankedTensorType::get(local, full.getElementType());
      param.setTypeAttr(TypeAttr::get(localType));
      param->setAttr(ZeroDialect::kTensorSplitAttrName,
                     TensorSplitAttr::get(&getContext(), cut.dim, cut.blocks,
                                          m, full.getShape()));
      std::optional<SymbolTable::UseRange> loads =
          SymbolTable::getSymbolUses(param.getSymNameAttr(), module);
      for (const SymbolTable::SymbolUse &use : *loads)
        use.getUser()->getResult(0).setType(localType);
      ++numCutParams;
    }
    for (Region r : regions) {
      rewrite(r, m);
      ++(r.attention ? numAttention : numMlp);
    }
    for (GatedMlp &r : mlps) {
      rewrite(r, m);
      ++numMlp;
    }
    for (HeadAttention &h : attns) {
      rewrite(h, m);
      ++numAttention;
    }
  }
};

} // namespace
