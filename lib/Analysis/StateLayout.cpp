//===- StateLayout.cpp - the state layout of a compiled step -------------===//
///
/// \file
/// Where each model state lives in the compiled program's state arenas:
/// the algorithm of zero-layout-states (ZeroPasses.td has the rule), kept
/// apart from the pass so that zero-report can lay out a copy of a module
/// it must not change.
///
//===----------------------------------------------------------------------===//

#include "zero/Analysis/StateLayout.h"

#include "Train/TrainOps.h"
#include "Zero/ZeroLayout.h"
#include "Zero/ZeroOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace mlir::zero;

namespace {
constexpr int kNumStateArenas = 4; // parameters .. moments (zrt_mem_kind)
} // namespace

StateLayoutStats zero::layoutStates(ModuleOp module) {
  StateLayoutStats stats;
  MLIRContext *ctx = module.getContext();
  Block &body = *module.getBody();

  SmallVector<StateDecl> states;
  llvm::StringMap<unsigned> bySymbol, gradOf;
  for (Operation &op : body) {
    std::optional<StateDecl> d = getStateDecl(&op);
    if (!d)
      continue;
    op.removeAttr(ZeroDialect::kSlotAttrName);
    if (auto st = dyn_cast<train::StateOp>(op);
        st && st.getKind() == train::StateKind::grad)
      gradOf[st.getParam()] = states.size();
    bySymbol[d->name] = states.size();
    states.push_back(*d);
  }

  int64_t arenaBytes[kNumStateArenas] = {};
  SmallVector<bool> placed(states.size(), false);
  auto place = [&](unsigned i) {
    StateDecl &s = states[i];
    int a = static_cast<int>(*s.arena);
    int64_t bytes = tensorStorageBytes(s.type);
    s.op->setAttr(ZeroDialect::kSlotAttrName,
                  SlotAttr::get(ctx, *s.arena, arenaBytes[a], bytes));
    arenaBytes[a] += alignToArena(bytes);
    placed[i] = true;
    ++stats.statesPlaced;
  };

  // Each group's members' parameters, then their gradients, back to
  // back, each run followed by the group's padding.
  for (auto g : body.getOps<GroupOp>()) {
    g->removeAttr(ZeroDialect::kParamSpanAttrName);
    g->removeAttr(ZeroDialect::kGradSpanAttrName);
    for (bool grads : {false, true}) {
      std::optional<int64_t> first;
      int64_t end = -1, eltBytes = 0;
      Arena arena = grads ? Arena::gradients : Arena::parameters;
      bool contiguous = true;
      llvm::StringMap<unsigned> &index = grads ? gradOf : bySymbol;
      StringRef lastMember;
      for (Attribute m : g.getMembers()) {
        StringRef name = cast<FlatSymbolRefAttr>(m).getValue();
        lastMember = name;
        auto it = index.find(name);
        if (it == index.end() || placed[it->second] ||
            !states[it->second].arena) {
          contiguous = false;
          break;
        }
        unsigned i = it->second;
        int64_t offset = arenaBytes[static_cast<int>(arena)];
        place(i);
        eltBytes = storageBytes(states[i].type.getElementType());
        if (!first)
          first = offset;
        else if (offset != end)
          contiguous = false;
        end = offset + tensorStorageBytes(states[i].type);
      }
      if (!first || !contiguous)
        continue;
      // The padding starts right after the last member, inside the bytes
      // its alignment left and these.
      // The members' elements end where the last one's do (the group's
      // verifier keeps them back to back).
      int64_t total = g.getOffsets().back() +
                      states[index.lookup(lastMember)].type.getNumElements();
      arenaBytes[static_cast<int>(arena)] +=
          alignToArena((g.getPadded() - total) * eltBytes);
      g->setAttr(grads ? ZeroDialect::kGradSpanAttrName
                       : ZeroDialect::kParamSpanAttrName,
                 SlotAttr::get(ctx, arena, *first, g.getPadded() * eltBytes));
      ++stats.groupSpans;
    }
  }
  // The other states in declaration order; in the moments arena all
  // first moments before all second moments.
  for (bool second : {false, true})
    for (unsigned i = 0; i < states.size(); ++i) {
      if (placed[i] || !states[i].arena)
        continue;
      auto st = dyn_cast<train::StateOp>(states[i].op);
      auto sh = dyn_cast<ShardOp>(states[i].op);
      bool isSecond =
          (st && st.getKind() == train::StateKind::exp_avg_sq) ||
          (sh && sh.getKind() == ShardKind::exp_avg_sq);
      if (isSecond == second)
        place(i);
    }

  // The program's constants (train.rope_table): one slot per distinct
  // table (attributes and type), in the order they first appear; equal
  // tables of several functions share it.
  int64_t constantBytes = 0;
  llvm::DenseMap<std::pair<Attribute, Type>, SlotAttr> tables;
  module.walk([&](train::RopeTableOp t) {
    t->removeAttr(ZeroDialect::kSlotAttrName);
    // The op's own attributes (theta, scaling) and its [T, D/2, 2] type.
    auto key =
        std::make_pair(t->getPropertiesAsAttribute(), Type(t.getType()));
    SlotAttr &slot = tables[key];
    if (!slot) {
      int64_t bytes = tensorStorageBytes(t.getType());
      slot = SlotAttr::get(ctx, Arena::constants, constantBytes, bytes);
      constantBytes += alignToArena(bytes);
      ++stats.constantsPlaced;
    }
    t->setAttr(ZeroDialect::kSlotAttrName, slot);
  });

  Builder b(ctx);
  SmallVector<NamedAttribute> sizes;
  for (int a = 0; a < kNumStateArenas; ++a) {
    sizes.push_back(b.getNamedAttr(stringifyArena(static_cast<Arena>(a)),
                                   b.getI64IntegerAttr(arenaBytes[a])));
    stats.stateBytes += arenaBytes[a];
  }
  // Only a program with constants has the entry (and the arena).
  if (constantBytes)
    sizes.push_back(b.getNamedAttr(stringifyArena(Arena::constants),
                                   b.getI64IntegerAttr(constantBytes)));
  module->setAttr(ZeroDialect::kStateArenaBytesAttrName,
                  b.getDictionaryAttr(sizes));
  return stats;
}
