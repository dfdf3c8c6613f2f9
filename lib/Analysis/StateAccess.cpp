//===- StateAccess.cpp - state access of a step ---------------------------===//
///
/// \file
/// Positions, aliases, last uses and state access intervals of one
/// function of the step (StepPlan.h): a memory-effect analysis over state
/// symbols that every placement decision consults.
///
//===----------------------------------------------------------------------===//

#include "zero/Analysis/StepPlan.h"

using namespace mlir;

namespace mlir::zero::plan {

bool isLoad(Operation *op) {
  return isa<train::LoadOp, zero::ShardLoadOp>(op);
}
StringRef loadSymbol(Operation *op) {
  if (auto l = dyn_cast<train::LoadOp>(op))
    return l.getName();
  return cast<zero::ShardLoadOp>(op).getName();
}
/// The symbol an op writes (store, accumulate), or "".
StringRef writtenSymbol(Operation *op) {
  return TypeSwitch<Operation *, StringRef>(op)
      .Case([](train::StoreOp o) { return o.getName(); })
      .Case([](train::AccumulateOp o) { return o.getName(); })
      .Case([](zero::ShardStoreOp o) { return o.getName(); })
      .Case([](zero::ShardAccumulateOp o) { return o.getName(); })
      .Default([](Operation *) { return StringRef(); });
}
Value storedValue(Operation *op) {
  return TypeSwitch<Operation *, Value>(op)
      .Case([](train::StoreOp o) { return o.getValue(); })
      .Case([](zero::ShardStoreOp o) { return o.getValue(); })
      .Default([](Operation *) { return Value(); });
}

SmallVector<Value> FunctionPlan::aliasSet(Value v) {
  SmallVector<Value> set{v};
  for (unsigned i = 0; i < set.size(); ++i)
    for (Operation *user : set[i].getUsers())
      if (isa<train::ReshapeOp, zero::UnpackOp, zero::SplitOp>(user) ||
          (isa<zero::PackOp>(user) && stateSpans.count(user->getResult(0))))
        llvm::append_range(set, user->getResults());
      else if (auto ce = dyn_cast<train::CrossEntropyFusedOp>(user))
        set.push_back(ce.getGrad()); // over the logits
  return set;
}

/// The zero.wait of a zero.*_start op (the zero.offload_wait /
/// zero.fetch_wait of an offload or fetch start), or null.
Operation *waitOf(Operation *start) {
  if (!isa<zero::AllGatherStartOp, zero::ReduceScatterStartOp,
           zero::AllReduceStartOp, zero::OffloadStartOp, zero::FetchStartOp>(
          start))
    return nullptr;
  for (Operation *user : start->getResult(0).getUsers())
    if (isa<zero::WaitOp, zero::OffloadWaitOp, zero::FetchWaitOp>(user))
      return user;
  return nullptr;
}

int64_t FunctionPlan::lastUse(Value v) {
  int64_t last = -1;
  for (Value a : aliasSet(v)) {
    last = std::max(last, extendedLife.lookup_or(a, -1));
    for (Operation *user : a.getUsers()) {
      // A nonblocking collective reads its input until its wait.
      if (Operation *wait = waitOf(user))
        user = wait;
      last = std::max(last, pos.lookup(user));
    }
  }
  return last;
}

bool FunctionPlan::isActivation(Value v) {
  if (role != Role::ForwardBackward || seedPos == INT64_MAX)
    return false;
  Operation *def = v.getDefiningOp();
  if (!def || pos.lookup(def) >= seedPos)
    return false;
  return lastUse(v) > seedPos;
}


/// The state a non-copying train.load defines `v` as (nullptr otherwise).
const StateInfo *FunctionPlan::loadedState(Value v) {
  auto load = v.getDefiningOp<train::LoadOp>();
  if (!load || copyLoads.contains(load))
    return nullptr;
  auto it = mp.stateIndex.find(load.getName());
  if (it == mp.stateIndex.end() || !mp.states[it->second].hasStorage)
    return nullptr;
  return &mp.states[it->second];
}

/// The state whose memory `v` is: a non-copying load's, or the member's of
/// a zero.unpack result whose flat value is a state span (stateSpans).
const StateInfo *FunctionPlan::stateAt(Value v) {
  if (const StateInfo *s = loadedState(v))
    return s;
  auto r = dyn_cast<OpResult>(v);
  auto u = r ? dyn_cast<zero::UnpackOp>(r.getOwner()) : zero::UnpackOp();
  if (!u)
    return nullptr;
  auto span = stateSpans.find(u.getFlat());
  auto g = mp.groupIndex.find(u.getGroup());
  if (span == stateSpans.end() || g == mp.groupIndex.end())
    return nullptr;
  Placement p = span->second;
  p.offset += mp.groups[g->second].offsets[r.getResultNumber()] *
              elementBytes(elementType(v));
  for (const StateInfo &s : mp.states)
    if (s.hasStorage && s.place == p && s.type == tensorType(v))
      return &s;
  return nullptr;
}

/// The accesses of state `sym`, where they take effect: a non-copying load
/// reads it from the load to its value's last use (views read the state
/// where the value is used); a copying load at the load. A store or
/// accumulate writes it at its position, or, when the stored value may
/// have been computed in the state (store forwarding, AdamW in place, a
/// flat buffer placed in a state span: anything but a copy), from the
/// stored value's definition on (a collective's result from its start).
SmallVector<FunctionPlan::Access>
FunctionPlan::accesses(StringRef sym) {
  SmallVector<Access> out;
  for (Operation *op : opsOf(sym)) {
    int64_t p = pos.lookup(op);
    if (isLoad(op)) {
      out.push_back({op, p,
                     copyLoads.contains(op) ? p : std::max(p, lastUse(op->getResult(0))),
                     false});
      continue;
    }
    int64_t first = p;
    if (Value v = storedValue(op))
      if (Operation *def = v.getDefiningOp(); def && def->getBlock() == op->getBlock()) {
        first = std::min(first, pos.lookup(def));
        if (auto w = dyn_cast<zero::WaitOp>(def))
          if (Operation *start = w->getOperand(0).getDefiningOp())
            first = std::min(first, pos.lookup(start));
        // An unpack's results are views of its flat value.
        if (auto u = dyn_cast<zero::UnpackOp>(def))
          if (Operation *fd = u.getFlat().getDefiningOp()) {
            first = std::min(first, pos.lookup(fd));
            if (auto w = dyn_cast<zero::WaitOp>(fd))
              if (Operation *start = w->getOperand(0).getDefiningOp())
                first = std::min(first, pos.lookup(start));
          }
      }
    out.push_back({op, first, p, true});
  }
  for (const InPlaceReduction &r : inPlaceReductions)
    if (llvm::is_contained(r.syms, sym))
      out.push_back({nullptr, r.start, r.wait, true});
  return out;
}

bool FunctionPlan::accessedIn(StringRef sym, int64_t from, int64_t to,
                                  bool reads, bool writes,
                                  ArrayRef<Operation *> own) {
  for (const Access &a : accesses(sym))
    if ((a.write ? writes : reads) && !llvm::is_contained(own, a.op) &&
        a.first <= to && a.last >= from)
      return true;
  return false;
}

/// Whether state b starts exactly where state a ends (no alignment gap), in
/// the same arena: elements of a run then share one flat index.
bool backToBack(const StateInfo *a, const StateInfo *b) {
  return a && b && a->place.mem == b->place.mem &&
         b->place.offset == a->place.offset + tensorBytes(a->type);
}


} // namespace mlir::zero::plan
