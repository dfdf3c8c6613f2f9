//===- PlanDecisions.cpp - placement decisions ----------------------------===//
///
/// \file
/// The placement decisions of the function plan (StepPlan.h): load
/// copies, in-place updates and store forwarding, pack slots, fused casts,
/// group spans; the runs over adjacent states are in StateRuns.cpp.
///
//===----------------------------------------------------------------------===//

#include "zero/Analysis/StepPlan.h"

using namespace mlir;

namespace mlir::zero::plan {

void FunctionPlan::decideLoadCopies() {
  // Writes per symbol, by position.
  llvm::StringMap<SmallVector<int64_t>> writes;
  for (Operation &op : fn.getBody().front()) {
    StringRef sym = writtenSymbol(&op);
    if (!sym.empty())
      writes[sym].push_back(pos.lookup(&op));
  }
  for (Operation &op : fn.getBody().front()) {
    if (!isLoad(&op))
      continue;
    int64_t p = pos.lookup(&op), last = lastUse(op.getResult(0));
    bool mustCopy = false;
    for (int64_t q : writes.lookup(loadSymbol(&op)))
      mustCopy |= q > p && q < last;
    // A view of the state unless it must copy (or the IR says it copies).
    if (!take(op.getResult(0), StorageKind::state, !mustCopy))
      copyLoads.insert(&op);
  }
}

void FunctionPlan::decideInPlaceUpdates() {
  Block &block = fn.getBody().front();
  for (Operation &op : block) {
    SmallVector<std::pair<Value, Value>> pairs; // (operand, result)
    if (auto a = dyn_cast<train::AdamWOp>(op))
      pairs = {{a.getParam(), a.getNewParam()},
               {a.getExpAvg(), a.getNewExpAvg()},
               {a.getExpAvgSq(), a.getNewExpAvgSq()}};
    else if (auto a = dyn_cast<zero::ShardAdamWOp>(op))
      pairs = {{a.getParam(), a.getNewParam()},
               {a.getExpAvg(), a.getNewExpAvg()},
               {a.getExpAvgSq(), a.getNewExpAvgSq()}};
    else
      continue;
    int64_t p = pos.lookup(&op);
    for (auto [x, r] : pairs) {
      Operation *load = x.getDefiningOp();
      if (!load || !isLoad(load) || copyLoads.contains(load) || !x.hasOneUse())
        continue;
      StringRef sym = loadSymbol(load);
      // The update must be stored back into the same symbol.
      bool stored = false;
      for (Operation *user : r.getUsers())
        stored |= writtenSymbol(user) == sym && storedValue(user) == r;
      if (!stored)
        continue;
      int64_t lastR = lastUse(r);
      bool ok = true;
      for (Operation *other : opsOf(sym)) {
        int64_t q = pos.lookup(other);
        // No other write of the symbol while the result is live.
        if (!isLoad(other) && q > p && q <= lastR && storedValue(other) != r)
          ok = false;
        // No other load of the symbol that would observe the early write.
        if (other != load && isLoad(other)) {
          if (q > p && q <= lastR)
            ok = false;
          if (q < p && !copyLoads.contains(other) &&
              lastUse(other->getResult(0)) >= p)
            ok = false;
        }
      }
      if (take(r, StorageKind::tied, ok))
        inPlaceResults.insert(r);
    }
  }

  // Store forwarding: a value computed only to be stored into a state is
  // computed in the state (e.g. `fill 0` then `store` zeroes a gradient in
  // place), when nothing reads or writes the state in between.
  for (Operation &op : block) {
    if (isLoad(&op) ||
        isa<train::ReshapeOp, zero::UnpackOp, zero::SplitOp, zero::WaitOp,
            train::AdamWOp, zero::ShardAdamWOp>(op))
      continue;
    int64_t p = pos.lookup(&op);
    for (Value r : op.getResults()) {
      if (!r.hasOneUse())
        continue;
      Operation *store = *r.getUsers().begin();
      StringRef sym = writtenSymbol(store);
      if (sym.empty() || storedValue(store) != r)
        continue;
      int64_t q = pos.lookup(store);
      bool ok = true;
      for (Operation *other : opsOf(sym)) {
        int64_t o = pos.lookup(other);
        if (o > p && o < q)
          ok = false; // a read or a write in between
        if (isLoad(other) && o < p && !copyLoads.contains(other) &&
            lastUse(other->getResult(0)) >= p)
          ok = false;
      }
      if (take(r, StorageKind::state, ok))
        forwardedResults[r] = sym;
    }
  }
}

/// Contiguous gradients (DeepSpeed's contiguous_gradients, XLA's in-place
/// concatenation): a value whose only use is a zero.pack is computed
/// directly in its slot of the pack's flat buffer, so the pack copies
/// nothing for it and the value and the flat buffer never coexist. The
/// flat buffer then lives from its first such member's definition. Only
/// values that would otherwise get a buffer of their own qualify (not
/// loads, views, collective results, AdamW updates in place or values
/// computed in a state), defined after the loss seed or in a function
/// without one, so that no activation moves into the flat buffer; a pack
/// whose result is itself computed in a state keeps its copies.
void FunctionPlan::decidePackSlots() {
  for (Operation &op : fn.getBody().front()) {
    auto pack = dyn_cast<zero::PackOp>(op);
    if (!pack || forwardedResults.count(pack.getResult()) ||
        inPlaceResults.contains(pack.getResult()))
      continue;
    auto g = mp.groupIndex.find(pack.getGroup());
    if (g == mp.groupIndex.end())
      continue; // the emission reports it
    const GroupInfo &gi = mp.groups[g->second];
    for (auto [i, m] : llvm::enumerate(pack.getMembers())) {
      auto r = dyn_cast<OpResult>(m);
      if (!r || !m.hasOneUse() || i >= gi.offsets.size())
        continue;
      Operation *def = r.getOwner();
      if (def->getBlock() != pack->getBlock() || isLoad(def) ||
          isa<train::ReshapeOp, zero::UnpackOp, zero::SplitOp, zero::WaitOp,
              train::AdamWOp, zero::ShardAdamWOp>(def) ||
          inPlaceResults.contains(m) || forwardedResults.count(m) ||
          pos.lookup(def) < (seedPos == INT64_MAX ? 0 : seedPos) ||
          !take(m, StorageKind::pack_slot, true))
        continue;
      packSlots[m] = {pack.getResult(), gi.offsets[i]};
      int64_t p = pos.lookup(def);
      auto [it, inserted] = packFirst.try_emplace(pack.getResult(), p);
      if (!inserted)
        it->second = std::min(it->second, p);
    }
  }
}
/// Fused casts (the fused out_bf16 parameter of zrt_adamw_step, not a
/// separate zrt_cast_f32_to_bf16): a `train.cast` f32 -> bf16 of a
/// `train.adamw`'s new parameter that is computed in a state (the bf16
/// parameter) can be written by the AdamW call when nothing reads or writes
/// that state between the two, and no earlier load that reads the state in
/// place is still read at the AdamW (the write moves from the cast to the
/// AdamW). Not under skip_nonfinite (fp16-mixed), where the update may not
/// run. train-fuse-adamw-cast chooses (zero.written_by_adamw); the plan
/// adopts its marks.
bool FunctionPlan::canFoldCast(train::AdamWOp adamw, train::CastOp cast) {
  Block &block = fn.getBody().front();
  if (adamw.getFiniteCheck() || adamw->getBlock() != &block ||
      cast->getBlock() != &block || cast.getInput() != adamw.getNewParam() ||
      !cast.getInput().getType().getElementType().isF32() ||
      !cast.getType().getElementType().isBF16())
    return false;
  StringRef sym = forwardedResults.lookup(cast.getResult());
  if (sym.empty())
    return false;
  // The write moves from the cast to the AdamW: no other access of the
  // parameter (a read still live there included) may fall in between.
  SmallVector<Operation *> own(cast.getResult().getUsers().begin(),
                               cast.getResult().getUsers().end());
  return !accessedIn(sym, pos.lookup(adamw), pos.lookup(cast), /*reads=*/true,
                     /*writes=*/true, own);
}

SmallVector<train::CastOp> FunctionPlan::foldableAdamWCasts() {
  numberOps();
  decideLoadCopies();
  decideInPlaceUpdates();
  SmallVector<train::CastOp> out;
  for (Operation &op : fn.getBody().front()) {
    auto adamw = dyn_cast<train::AdamWOp>(op);
    if (!adamw)
      continue;
    for (Operation *user : adamw.getNewParam().getUsers()) {
      auto cast = dyn_cast<train::CastOp>(user);
      if (cast && canFoldCast(adamw, cast)) {
        out.push_back(cast);
        break;
      }
    }
  }
  llvm::sort(out, [&](train::CastOp a, train::CastOp b) {
    return pos.lookup(a) < pos.lookup(b);
  });
  return out;
}

LogicalResult FunctionPlan::adoptFusedCasts() {
  for (Operation &op : fn.getBody().front()) {
    auto cast = dyn_cast<train::CastOp>(op);
    if (!cast || !cast->hasAttr(zero::ZeroDialect::kWrittenByAdamWAttrName))
      continue;
    // The attribute's verifier holds: the input is an AdamW's new parameter.
    auto adamw = cast.getInput().getDefiningOp<train::AdamWOp>();
    if (!adamw || !canFoldCast(adamw, cast))
      return cast.emitOpError("is marked ")
             << zero::ZeroDialect::kWrittenByAdamWAttrName
             << ", but its AdamW cannot write it: its result must be stored "
                "into a state with no other access of that state between "
                "the AdamW and the cast (train-fuse-adamw-cast decides this)";
    if (!fusedCasts.try_emplace(adamw, cast).second)
      return cast.emitOpError("is a second cast marked ")
             << zero::ZeroDialect::kWrittenByAdamWAttrName
             << " of the same AdamW; the AdamW writes one bf16 copy";
    castsInAdamW.insert(cast);
  }
  return success();
}

/// Flat buffers that are state spans (stateSpans). A zero.pack whose
/// member i is a non-copying load of the state at the group's span plus
/// its offset (gradients at stages 0-1: the reduce-scatter or all-reduce
/// reads the gradients where they live) when none of those states is
/// written while the flat value is live. A zero.unpack whose flat operand
/// has no other use and is computed into a buffer of its own (a cast, a
/// collective's result), and whose results are each stored into its
/// member's parameter only: the flat value is computed in the group's
/// parameter span (stages 1-2: the all-gather writes the parameters) when
/// nothing else reads or writes those parameters from its definition (a
/// collective's start) to the last store.
void FunctionPlan::decideStateSpans() {
  Block &block = fn.getBody().front();
  for (Operation &op : block) {
    if (auto pack = dyn_cast<zero::PackOp>(op)) {
      auto g = mp.groupIndex.find(pack.getGroup());
      Value flat = pack.getResult();
      if (g == mp.groupIndex.end() || packFirst.count(flat) ||
          forwardedResults.count(flat) || inPlaceResults.contains(flat))
        continue;
      const GroupInfo &gi = mp.groups[g->second];
      const int64_t eb = elementBytes(elementType(flat));
      std::optional<Placement> span;
      bool ok = pack.getMembers().size() == gi.members.size();
      for (auto [i, m] : llvm::enumerate(pack.getMembers())) {
        const StateInfo *s = ok ? loadedState(m) : nullptr;
        if (!s) {
          ok = false;
          break;
        }
        Placement want = *(span ? span : (span = s->place));
        want.offset += gi.offsets[i] * eb;
        std::optional<Placement> groupSpan =
            s->kind == kStateGrad ? gi.gradSpan : gi.paramSpan;
        ok = groupSpan && *groupSpan == *span && s->place == want;
      }
      if (!ok)
        continue;
      // The states must not change while the flat value is live.
      int64_t from = pos.lookup(pack), to = lastUse(flat);
      for (Value m : pack.getMembers())
        ok = ok && !accessedIn(loadSymbol(m.getDefiningOp()), from, to,
                               /*reads=*/false, /*writes=*/true);
      if (take(flat, StorageKind::span, ok))
        stateSpans[flat] = *span;
      continue;
    }
    // An all-reduce of a gradient span, in place (stage 0: the averaged
    // gradients overwrite the gradients they average) when the span's
    // states are not read again and not written until it completes.
    Value input, reduced;
    Operation *start = nullptr;
    if (auto ar = dyn_cast<zero::AllReduceOp>(op)) {
      input = ar.getInput();
      reduced = ar.getResult();
      start = ar;
    } else if (auto w = dyn_cast<zero::WaitOp>(op)) {
      if (auto st = w->getOperand(0).getDefiningOp<zero::AllReduceStartOp>()) {
        input = st.getInput();
        reduced = w.getResult();
        start = st;
      }
    }
    if (reduced) {
      auto span = stateSpans.find(input);
      auto pack = input.getDefiningOp<zero::PackOp>();
      if (span == stateSpans.end() || !pack || !input.hasOneUse() ||
          input.getType() != reduced.getType() ||
          inPlaceResults.contains(reduced) || forwardedResults.count(reduced))
        continue;
      // The states hold the averages from the start on, read through the
      // result's views until its last use: nothing else may access them
      // from the start until a store overwrites each of them after that
      // last use (so no average outlives the function, e.g. into the next
      // step's gradient accumulation).
      bool ok = true;
      const int64_t from = pos.lookup(start), waitPos = pos.lookup(&op);
      // Where each member's averages are last read: its unpacked view's
      // last use; any other use of the result reads every member.
      int64_t whole = waitPos;
      SmallVector<int64_t> memberLive(pack.getMembers().size(), waitPos);
      for (Operation *user : reduced.getUsers()) {
        auto u = dyn_cast<zero::UnpackOp>(user);
        if (!u || u.getMembers().size() != memberLive.size()) {
          whole = std::max(whole, pos.lookup(user));
          continue;
        }
        for (auto [k, r] : llvm::enumerate(u.getMembers()))
          memberLive[k] = std::max(memberLive[k], lastUse(r));
      }
      SmallVector<Operation *> own;
      for (Value m : pack.getMembers())
        own.push_back(m.getDefiningOp());
      InPlaceReduction rec{from, waitPos, {}};
      for (auto [k, m] : llvm::enumerate(pack.getMembers())) {
        const int64_t live = std::max(whole, memberLive[k]);
        StringRef sym = loadSymbol(m.getDefiningOp());
        rec.syms.push_back(sym.str());
        int64_t overwrite = INT64_MAX;
        for (Operation *other : opsOf(sym))
          if (isa<train::StoreOp>(other) && pos.lookup(other) > live)
            overwrite = std::min(overwrite, pos.lookup(other));
        if (overwrite == INT64_MAX) {
          ok = false;
          break;
        }
        // The overwriting store's own write interval may start earlier
        // (a fill computed in the state): it must start after `live` too.
        for (const Access &a : accesses(sym)) {
          if (llvm::is_contained(own, a.op))
            continue;
          if (a.op && pos.lookup(a.op) == overwrite) {
            ok = ok && a.first > live;
            continue;
          }
          if (a.first <= overwrite && a.last > from)
            ok = false;
        }
      }
      if (take(reduced, StorageKind::span, ok)) {
        // A copy: inserting into stateSpans may grow it and free the
        // bucket `span` points into.
        const Placement where = span->second;
        stateSpans[reduced] = where;
        inPlaceReductions.push_back(std::move(rec));
      }
      continue;
    }
    auto unpack = dyn_cast<zero::UnpackOp>(op);
    if (!unpack)
      continue;
    auto g = mp.groupIndex.find(unpack.getGroup());
    Value flat = unpack.getFlat();
    Operation *def = flat.getDefiningOp();
    if (g == mp.groupIndex.end() || !def || !flat.hasOneUse() ||
        def->getBlock() != &block || isLoad(def) ||
        isa<train::ReshapeOp, zero::UnpackOp, zero::SplitOp, zero::PackOp,
            train::AdamWOp, zero::ShardAdamWOp>(def) ||
        inPlaceResults.contains(flat) || forwardedResults.count(flat) ||
        packSlots.count(flat) || packFirst.count(flat) ||
        castsInAdamW.contains(def))
      continue;
    const GroupInfo &gi = mp.groups[g->second];
    if (!gi.paramSpan || gi.paramSpan->mem != kMemParams)
      continue;
    SmallVector<Operation *> stores;
    bool ok = true;
    for (auto [i, r] : llvm::enumerate(unpack.getMembers())) {
      Operation *user = r.hasOneUse() ? *r.getUsers().begin() : nullptr;
      ok = ok && user && isa<train::StoreOp>(user) &&
           writtenSymbol(user) == gi.members[i] && storedValue(user) == r;
      if (ok)
        stores.push_back(user);
    }
    if (!ok)
      continue;
    int64_t from = pos.lookup(def), to = 0;
    if (auto w = dyn_cast<zero::WaitOp>(def))
      if (Operation *start = w->getOperand(0).getDefiningOp())
        from = pos.lookup(start);
    for (Operation *st : stores)
      to = std::max(to, pos.lookup(st));
    // The parameters change from the flat value's definition on: nothing
    // else may read or write them until the last store.
    for (const std::string &m : gi.members)
      ok = ok && !accessedIn(m, from, to, /*reads=*/true, /*writes=*/true,
                             stores);
    if (take(flat, StorageKind::span, ok))
      stateSpans[flat] = *gi.paramSpan;
  }
}


} // namespace mlir::zero::plan
