//===- ZeroLayout.cpp - the state layout and its verifier -----------------===//
///
/// \file
/// `#zero.slot` and the verifier of the state layout that
/// zero-layout-states writes (ZeroDialect.td, Zero_SlotAttr).
///
//===----------------------------------------------------------------------===//

#include "Zero/ZeroLayout.h"
#include "Zero/ZeroOps.h"

#include "Train/TrainOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::zero;

int64_t zero::alignToArena(int64_t bytes) {
  return static_cast<int64_t>(
      llvm::alignTo(static_cast<uint64_t>(bytes), kArenaAlignment));
}

int64_t zero::storageBytes(Type t) {
  if (t.isF32() || t.isInteger(32))
    return 4;
  if (t.isBF16() || t.isF16())
    return 2;
  if (t.isInteger(64))
    return 8;
  return 0;
}

int64_t zero::tensorStorageBytes(RankedTensorType t) {
  return t.getNumElements() * storageBytes(t.getElementType());
}

static Arena arenaOfTrainKind(train::StateKind k) {
  switch (k) {
  case train::StateKind::grad:
    return Arena::gradients;
  case train::StateKind::master:
    return Arena::master_weights;
  case train::StateKind::exp_avg:
  case train::StateKind::exp_avg_sq:
    return Arena::moments;
  }
  return Arena::gradients;
}

static Arena arenaOfShardKind(ShardKind k) {
  switch (k) {
  case ShardKind::param:
    return Arena::parameters;
  case ShardKind::grad:
    return Arena::gradients;
  case ShardKind::master:
    return Arena::master_weights;
  case ShardKind::exp_avg:
  case ShardKind::exp_avg_sq:
    return Arena::moments;
  }
  return Arena::gradients;
}

std::optional<StateDecl> zero::getStateDecl(Operation *op) {
  if (auto p = dyn_cast<train::ParamOp>(op)) {
    StateDecl d{op, p.getSymName(), p.getTensorType(), Arena::parameters};
    if (p->hasAttr("zero.sharded"))
      d.arena = std::nullopt;
    return d;
  }
  if (auto s = dyn_cast<train::StateOp>(op))
    return StateDecl{op, s.getSymName(), s.getTensorType(),
                     arenaOfTrainKind(s.getKind())};
  if (auto s = dyn_cast<ShardOp>(op))
    return StateDecl{op, s.getSymName(), s.getTensorType(),
                     arenaOfShardKind(s.getKind())};
  return std::nullopt;
}

LogicalResult SlotAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               Arena arena, int64_t offset, int64_t bytes) {
  if (offset < 0 || offset % kArenaAlignment)
    return emitError() << "#zero.slot offset " << offset
                       << " is not a non-negative multiple of the arena "
                          "alignment "
                       << kArenaAlignment;
  if (bytes < 0)
    return emitError() << "#zero.slot of " << bytes << " bytes";
  return success();
}

/// The slot attribute `name` on `op`, or an error when it is not one.
static FailureOr<SlotAttr> slotOf(Operation *op, StringRef name,
                                  Attribute attr) {
  auto slot = dyn_cast<SlotAttr>(attr);
  if (!slot)
    return op->emitOpError("'") << name << "' must be a #zero.slot";
  return slot;
}

/// Checks one `zero.slot` on a state declaration.
static LogicalResult verifyStateSlot(Operation *op, Attribute attr) {
  FailureOr<SlotAttr> slot = slotOf(op, ZeroDialect::kSlotAttrName, attr);
  if (failed(slot))
    return failure();
  if (auto table = dyn_cast<train::RopeTableOp>(op)) {
    if (slot->getArena() != Arena::constants)
      return op->emitOpError("'")
             << ZeroDialect::kSlotAttrName << "' is in the "
             << stringifyArena(slot->getArena())
             << " arena; a program constant belongs in the constants arena";
    int64_t need = tensorStorageBytes(table.getType());
    if (slot->getBytes() < need)
      return op->emitOpError("'")
             << ZeroDialect::kSlotAttrName << "' has " << slot->getBytes()
             << " bytes; the table needs " << need;
    return success();
  }
  std::optional<StateDecl> decl = getStateDecl(op);
  if (!decl)
    return op->emitOpError("'")
           << ZeroDialect::kSlotAttrName
           << "' is only for state declarations (train.param, train.state, "
              "zero.shard) and program constants (train.rope_table)";
  if (!decl->arena)
    return op->emitOpError("is zero.sharded (no storage of its own) but has a '")
           << ZeroDialect::kSlotAttrName << "'";
  if (slot->getArena() != *decl->arena)
    return op->emitOpError("'")
           << ZeroDialect::kSlotAttrName << "' is in the "
           << stringifyArena(slot->getArena()) << " arena; this state belongs "
           << "in the " << stringifyArena(*decl->arena) << " arena";
  int64_t need = tensorStorageBytes(decl->type);
  if (slot->getBytes() < need)
    return op->emitOpError("'")
           << ZeroDialect::kSlotAttrName << "' has " << slot->getBytes()
           << " bytes; the state needs " << need;
  return success();
}

/// Checks one group span (`zero.param_span` / `zero.grad_span`).
static LogicalResult verifySpan(Operation *op, StringRef name, Attribute attr) {
  FailureOr<SlotAttr> slot = slotOf(op, name, attr);
  if (failed(slot))
    return failure();
  if (!isa<GroupOp>(op))
    return op->emitOpError("'") << name << "' is only for zero.group";
  Arena want = name == ZeroDialect::kParamSpanAttrName ? Arena::parameters
                                                       : Arena::gradients;
  if (slot->getArena() != want)
    return op->emitOpError("'") << name << "' must be in the "
                                << stringifyArena(want) << " arena";
  return success();
}

/// zero.written_by_adamw: a unit attribute on a train.cast f32 -> bf16 whose
/// input is the new parameter (result #0) of a train.adamw without
/// skip_nonfinite.
static LogicalResult verifyWrittenByAdamW(Operation *op, Attribute value) {
  StringRef name = ZeroDialect::kWrittenByAdamWAttrName;
  if (!isa<UnitAttr>(value))
    return op->emitOpError("'") << name << "' must be a unit attribute";
  auto cast = dyn_cast<train::CastOp>(op);
  if (!cast)
    return op->emitOpError("'") << name << "' is only for train.cast";
  auto adamw = cast.getInput().getDefiningOp<train::AdamWOp>();
  if (!adamw || cast.getInput() != adamw.getNewParam() ||
      !cast.getType().getElementType().isBF16())
    return op->emitOpError("'")
           << name
           << "' needs a cast to bf16 of a train.adamw's new parameter";
  if (adamw.getFiniteCheck())
    return op->emitOpError("'")
           << name
           << "' cannot fold into an AdamW with skip_nonfinite (the update "
              "may not run)";
  return success();
}

/// zero.state_run: a non-negative i64 on a train.fill of 0, a train.adamw,
/// a train.sum_squares or a train.add.
static LogicalResult verifyStateRun(Operation *op, Attribute value) {
  StringRef name = ZeroDialect::kStateRunAttrName;
  auto id = dyn_cast<IntegerAttr>(value);
  if (!id || !id.getType().isInteger(64) || id.getInt() < 0)
    return op->emitOpError("'") << name
                                << "' must be a non-negative i64 run id";
  if (isa<train::AdamWOp, train::SumSquaresOp, train::AddOp>(op))
    return success();
  auto fill = dyn_cast<train::FillOp>(op);
  if (!fill || fill.getValue().convertToDouble() != 0.0)
    return op->emitOpError("'")
           << name
           << "' is only for a train.fill of 0, a train.adamw, or the "
              "train.sum_squares and train.add of a gradient-norm chain";
  return success();
}

LogicalResult ZeroDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == kSlotAttrName)
    return verifyStateSlot(op, attr.getValue());
  if (name == kParamSpanAttrName || name == kGradSpanAttrName)
    return verifySpan(op, name, attr.getValue());
  if (name == kMeshAttrName || name == kTensorSplitAttrName)
    return verifyTensorParallelAttr(op, name, attr.getValue());
  if (name == kWrittenByAdamWAttrName)
    return verifyWrittenByAdamW(op, attr.getValue());
  if (name == kStateRunAttrName)
    return verifyStateRun(op, attr.getValue());
  if (name == kStorageAttrName || name == kScratchAttrName)
    return verifyStorageAttr(op, name, attr.getValue());
  if (name == kStateArenaBytesAttrName) {
    if (!isa<ModuleOp>(op))
      return op->emitOpError("'") << name << "' is only for the module";
    return verifyStateLayout(op);
  }
  return success();
}

LogicalResult zero::verifyStateLayout(Operation *module) {
  auto sizes = module->getAttrOfType<DictionaryAttr>(
      ZeroDialect::kStateArenaBytesAttrName);
  if (!sizes)
    return module->emitOpError("'")
           << ZeroDialect::kStateArenaBytesAttrName
           << "' must be a dictionary of arena sizes";
  int64_t arenaBytes[4] = {}, constantBytes = 0;
  for (NamedAttribute e : sizes) {
    std::optional<Arena> a = symbolizeArena(e.getName().getValue());
    auto v = dyn_cast<IntegerAttr>(e.getValue());
    bool stateOrConstants =
        a && (*a <= Arena::moments || *a == Arena::constants);
    if (!stateOrConstants || !v || v.getInt() < 0)
      return module->emitOpError("'")
             << ZeroDialect::kStateArenaBytesAttrName << "' entry '"
             << e.getName().getValue()
             << "' must be a state arena (parameters, gradients, "
                "master_weights, moments) or constants, with a non-negative "
                "size";
    (*a == Arena::constants ? constantBytes
                            : arenaBytes[static_cast<int>(*a)]) = v.getInt();
  }
  auto inside = [&](Operation *op, StringRef what, SlotAttr s) -> LogicalResult {
    bool constant = s.getArena() == Arena::constants;
    int64_t size =
        constant ? constantBytes : arenaBytes[static_cast<int>(s.getArena())];
    if ((!constant && s.getArena() > Arena::moments) ||
        s.getOffset() + s.getBytes() > size)
      return op->emitOpError("'")
             << what << "' [" << s.getOffset() << ", "
             << s.getOffset() + s.getBytes() << ") lies outside the "
             << stringifyArena(s.getArena()) << " arena of " << size
             << " bytes (" << ZeroDialect::kStateArenaBytesAttrName << ")";
    return success();
  };

  Block &body = module->getRegion(0).front();
  struct Placed {
    Operation *op;
    SlotAttr slot;
    int64_t bytes; ///< The state's own bytes.
  };
  SmallVector<Placed> placed;
  llvm::StringMap<unsigned> bySymbol, gradOf;
  for (Operation &op : body) {
    auto slot = op.getAttrOfType<SlotAttr>(ZeroDialect::kSlotAttrName);
    if (!slot)
      continue;
    if (failed(inside(&op, ZeroDialect::kSlotAttrName, slot)))
      return failure();
    std::optional<StateDecl> d = getStateDecl(&op);
    if (!d)
      continue; // reported by the attribute's own verifier
    bySymbol[d->name] = placed.size();
    if (auto st = dyn_cast<train::StateOp>(op);
        st && st.getKind() == train::StateKind::grad)
      gradOf[st.getParam()] = placed.size();
    placed.push_back({&op, slot, tensorStorageBytes(d->type)});
  }
  // No two states share a byte (their own bytes; the rest of a slot is
  // alignment padding).
  SmallVector<unsigned> order(placed.size());
  for (unsigned i = 0; i < order.size(); ++i)
    order[i] = i;
  llvm::sort(order, [&](unsigned a, unsigned b) {
    auto ka = std::make_pair(placed[a].slot.getArena(), placed[a].slot.getOffset());
    auto kb = std::make_pair(placed[b].slot.getArena(), placed[b].slot.getOffset());
    return ka < kb;
  });
  for (unsigned k = 1; k < order.size(); ++k) {
    const Placed &p = placed[order[k - 1]], &q = placed[order[k]];
    if (p.slot.getArena() == q.slot.getArena() &&
        p.slot.getOffset() + p.bytes > q.slot.getOffset()) {
      InFlightDiagnostic diag = q.op->emitOpError("'")
                                << ZeroDialect::kSlotAttrName
                                << "' overlaps another state's bytes in the "
                                << stringifyArena(q.slot.getArena())
                                << " arena";
      diag.attachNote(p.op->getLoc()) << "the other state is declared here";
      return diag;
    }
  }
  // Program constants: inside the constants arena; two tables share a
  // slot whole or not at all.
  SmallVector<std::pair<SlotAttr, Operation *>> constants;
  WalkResult walked = module->walk([&](train::RopeTableOp t) {
    auto slot = t->getAttrOfType<SlotAttr>(ZeroDialect::kSlotAttrName);
    if (!slot)
      return WalkResult::advance();
    if (failed(inside(t, ZeroDialect::kSlotAttrName, slot)))
      return WalkResult::interrupt();
    constants.push_back({slot, t});
    return WalkResult::advance();
  });
  if (walked.wasInterrupted())
    return failure();
  llvm::sort(constants, [](auto &a, auto &b) {
    return std::make_pair(a.first.getOffset(), a.first.getBytes()) <
           std::make_pair(b.first.getOffset(), b.first.getBytes());
  });
  for (unsigned k = 1; k < constants.size(); ++k) {
    SlotAttr p = constants[k - 1].first, q = constants[k].first;
    if (p != q && p.getOffset() + p.getBytes() > q.getOffset())
      return constants[k].second->emitOpError("'")
             << ZeroDialect::kSlotAttrName
             << "' overlaps another constant's slot in the constants arena";
  }
  // Group spans: the members back to back from the span's offset.
  for (auto g : body.getOps<GroupOp>()) {
    for (StringRef spanName :
         {ZeroDialect::kParamSpanAttrName, ZeroDialect::kGradSpanAttrName}) {
      auto span = g->getAttrOfType<SlotAttr>(spanName);
      if (!span)
        continue;
      if (failed(inside(g, spanName, span)))
        return failure();
      bool grads = spanName == ZeroDialect::kGradSpanAttrName;
      int64_t eltBytes = 0;
      for (auto [i, m] : llvm::enumerate(g.getMembers())) {
        StringRef member = cast<FlatSymbolRefAttr>(m).getValue();
        auto it = grads ? gradOf.find(member) : bySymbol.find(member);
        const Placed *p =
            it == (grads ? gradOf.end() : bySymbol.end()) ? nullptr
                                                          : &placed[it->second];
        if (p)
          eltBytes = storageBytes(
              cast<RankedTensorType>(getStateDecl(p->op)->type)
                  .getElementType());
        if (!p || p->slot.getOffset() !=
                      span.getOffset() + g.getOffsets()[i] * eltBytes)
          return g.emitOpError("'")
                 << spanName << "': member @" << member << "'s "
                 << (grads ? "gradient " : "")
                 << "state does not lie at its offset in the span";
      }
      if (span.getBytes() != g.getPadded() * eltBytes)
        return g.emitOpError("'")
               << spanName << "' has " << span.getBytes()
               << " bytes; the group's flat buffer has "
               << g.getPadded() * eltBytes;
    }
  }
  return success();
}
