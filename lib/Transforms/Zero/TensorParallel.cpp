//===- TensorParallel.cpp - zero-tensor-parallel: Megatron's cuts ---------===//
///
/// \file
/// Cuts a transformer's MLP and attention regions over the tensor axis of
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

struct ZeroTensorParallelPass
    : public zero::impl::ZeroTensorParallelBase<ZeroTensorParallelPass> {
  using Base::Base;

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

  /// Rewrites one region for M tensor ranks (parameter types already cut).
  void rewrite(Region r, int64_t m) {
    OpBuilder b(r.first);
    Location loc = r.first.getLoc();
    // f at the region's input.
    Value x = r.first.getA();
    Value xf = TensorParallelF::create(b, loc, x.getType(), x, m);
    r.first.getAMutable().assign(xf);
    Type firstType = r.first.getType();
    int64_t width = cast<RankedTensorType>(firstType).getShape().back();
    r.first.getResult().setType(withLastDim(firstType, width / m));
    Value middle;
    if (r.attention) {
      auto attn = cast<train::CausalAttentionPackedOp>(r.middle);
      b.setInsertionPoint(attn);
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
    b.setInsertionPoint(r.second);
    Location loc2 = r.second.getLoc();
    Type outType = r.second.getType();
    Value partial = train::MatmulOp::create(
        b, loc2, outType, middle, r.second.getB(), /*bias=*/Value(),
        /*transpose_a=*/false, /*transpose_b=*/true);
    Value out = TensorParallelG::create(b, loc2, outType, partial, m);
    if (Value bias = r.second.getBias()) {
      Value wide = train::BroadcastOp::create(b, loc2, outType, bias);
      out = train::AddOp::create(b, loc2, outType, out, wide);
    }
    r.second.getResult().replaceAllUsesWith(out);
    r.second.erase();
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
    for (auto fn : module.getOps<func::FuncOp>())
      findRegions(fn, symbols, regions);
    // A mesh with nothing cut would only repeat every op on M ranks.
    if (regions.empty()) {
      module.emitError("zero-tensor-parallel: found no column-/row-parallel "
                       "projection pair to cut over ")
          << m
          << " tensor ranks (the GPT MLP and attention blocks are cut; "
             "Llama/Qwen blocks not yet); use size=1";
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
  }
};

} // namespace
