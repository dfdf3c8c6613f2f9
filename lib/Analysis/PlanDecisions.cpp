//===- PlanDecisions.cpp - placement decisions ----------------------------===//
///
/// \file
/// The placement decisions of the function plan (StepPlan.h): load
/// copies, in-place updates and store forwarding, pack slots, fused casts,
/// fill / AdamW / sum-of-squares runs over adjacent states, group spans.
///
//===----------------------------------------------------------------------===//

#include "zero/Analysis/StepPlan.h"

#include <map>

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
    for (int64_t q : writes.lookup(loadSymbol(&op)))
      if (q > p && q < last)
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
      for (Operation &other : block) {
        int64_t q = pos.lookup(&other);
        // No other write of the symbol while the result is live.
        if (writtenSymbol(&other) == sym && q > p && q <= lastR &&
            storedValue(&other) != r)
          ok = false;
        // No other load of the symbol that would observe the early write.
        if (&other != load && isLoad(&other) && loadSymbol(&other) == sym) {
          if (q > p && q <= lastR)
            ok = false;
          if (q < p && !copyLoads.contains(&other) &&
              lastUse(other.getResult(0)) >= p)
            ok = false;
        }
      }
      if (ok)
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
      for (Operation &other : block) {
        int64_t o = pos.lookup(&other);
        if (writtenSymbol(&other) == sym && o > p && o < q)
          ok = false;
        if (isLoad(&other) && loadSymbol(&other) == sym) {
          if (o > p && o < q)
            ok = false;
          if (o < p && !copyLoads.contains(&other) &&
              lastUse(other.getResult(0)) >= p)
            ok = false;
        }
      }
      if (ok)
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
          pos.lookup(def) < (seedPos == INT64_MAX ? 0 : seedPos))
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

/// Zeroing gradients after the update is one `train.fill 0` computed in
/// each gradient state: fills of states that lie back to back in their
/// arena (each state 64-byte aligned, the gaps belong to no state) become
/// one call over the whole range, at the last fill's position, when no
/// state of the run is read or written between its own fill and there
/// (PyTorch's zero_grad over a flat gradient buffer; stage 0 of GPT-2: 148
/// calls become 1). zero-fuse-state-runs chooses the runs
/// (`zero.state_run`); the plan adopts its marks.
SmallVector<FunctionPlan::FillRunCandidate>
FunctionPlan::fillRunCandidates() {
  Block &block = fn.getBody().front();
  struct Fill {
    Operation *op;
    StringRef sym;
    const StateInfo *state;
  };
  SmallVector<Fill> fills;
  for (Operation &op : block) {
    auto fill = dyn_cast<train::FillOp>(op);
    if (!fill || fill.getValue().convertToDouble() != 0.0)
      continue;
    StringRef sym = forwardedResults.lookup(fill.getResult());
    auto it = mp.stateIndex.find(sym);
    if (sym.empty() || it == mp.stateIndex.end() ||
        !mp.states[it->second].hasStorage)
      continue;
    fills.push_back({&op, sym, &mp.states[it->second]});
  }
  llvm::stable_sort(fills, [](const Fill &a, const Fill &b) {
    return std::make_pair(a.state->place.mem, a.state->place.offset) <
           std::make_pair(b.state->place.mem, b.state->place.offset);
  });
  auto end = [](const Fill &f) {
    return f.state->place.offset + alignUp(tensorBytes(f.state->type));
  };
  SmallVector<FillRunCandidate> out;
  for (size_t i = 0; i < fills.size();) {
    size_t j = i + 1;
    while (j < fills.size() &&
           fills[j].state->place.mem == fills[i].state->place.mem &&
           fills[j].state->place.offset == end(fills[j - 1]) &&
           fills[j].state->type.getElementType() ==
               fills[i].state->type.getElementType())
      ++j;
    if (j - i >= 2) {
      Operation *last = fills[i].op;
      for (size_t k = i; k < j; ++k)
        if (pos.lookup(fills[k].op) > pos.lookup(last))
          last = fills[k].op;
      // Each zeroing moves from its fill to the last: no other access of
      // its state may fall in between.
      bool ok = true;
      for (size_t k = i; k < j && ok; ++k) {
        Value z = fills[k].op->getResult(0);
        SmallVector<Operation *> own(z.getUsers().begin(), z.getUsers().end());
        ok = !accessedIn(fills[k].sym, pos.lookup(fills[k].op) + 1,
                         pos.lookup(last), /*reads=*/true, /*writes=*/true,
                         own);
      }
      if (ok) {
        FillRunCandidate c{{}, last, fills[i].state->place,
                           end(fills[j - 1]) - fills[i].state->place.offset,
                           fills[i].state->type.getElementType()};
        for (size_t k = i; k < j; ++k)
          c.fills.push_back(fills[k].op);
        llvm::sort(c.fills, [&](Operation *x, Operation *y) {
          return pos.lookup(x) < pos.lookup(y);
        });
        out.push_back(std::move(c));
      }
    }
    i = j;
  }
  return out;
}

SmallVector<SmallVector<train::FillOp>> FunctionPlan::foldableFillRuns() {
  numberOps();
  decideLoadCopies();
  decideInPlaceUpdates();
  SmallVector<SmallVector<train::FillOp>> out;
  for (const FillRunCandidate &c : fillRunCandidates()) {
    SmallVector<train::FillOp> run;
    for (Operation *f : c.fills)
      run.push_back(cast<train::FillOp>(f));
    out.push_back(std::move(run));
  }
  return out;
}

LogicalResult FunctionPlan::adoptFillRuns() {
  // The marked groups, by run id, in program order.
  std::map<int64_t, SmallVector<Operation *>> marked;
  for (Operation &op : fn.getBody().front())
    if (auto id = op.getAttrOfType<IntegerAttr>(
            zero::ZeroDialect::kStateRunAttrName);
        id && isa<train::FillOp>(op))
      marked[id.getInt()].push_back(&op);
  if (marked.empty())
    return success();
  SmallVector<FillRunCandidate> candidates = fillRunCandidates();
  for (auto &[id, ops] : marked) {
    const FillRunCandidate *match = nullptr;
    for (const FillRunCandidate &c : candidates)
      if (c.fills == ops)
        match = &c;
    if (!match)
      return ops.front()->emitOpError("is marked ")
             << zero::ZeroDialect::kStateRunAttrName << " = " << id
             << " with " << ops.size()
             << " fill(s), which are not a run one call can zero: the "
                "zero fills of states back to back in one arena, with no "
                "other access of a state between its fill and the run's "
                "last (zero-fuse-state-runs decides this)";
    fillRuns[match->last] = {match->place, match->bytes, match->elt};
    for (Operation *f : ops)
      fillsInRuns.insert(f);
  }
  return success();
}

/// Multi-tensor AdamW (AdamWRun): consecutive train.adamw ops (in program
/// order) whose parameter or master weights, gradient, moments and fused
/// bf16 copy each start where the previous op's end (PyTorch's fused AdamW
/// and DeepSpeed's flat optimizer buffers; stage 0 of GPT-2: 148 calls
/// become one), with the same step, learning rate, clip coefficient and
/// hyperparameters (weight decay W or 0 per tensor), and each updated in
/// place. The run's call happens at its first op, so no op before a later
/// member's own position may read or write that member's states (other than
/// its own loads). zrt_shard_adamw is bit-identical to zrt_adamw_step per
/// element, so the numbers do not change. zero-fuse-state-runs chooses the
/// runs (`zero.state_run` on the AdamW ops); the plan adopts its marks.
SmallVector<SmallVector<train::AdamWOp>> FunctionPlan::adamwRunCandidates() {
  SmallVector<SmallVector<train::AdamWOp>> out;
  struct Member {
    train::AdamWOp op;
    const StateInfo *p, *g, *m, *v, *bf16;
    SmallVector<Operation *> loads;
  };
  auto describe = [&](train::AdamWOp a) -> std::optional<Member> {
    if (a.getFiniteCheck())
      return std::nullopt;
    for (Value r : a->getResults())
      if (!inPlaceResults.contains(r))
        return std::nullopt;
    Member mb{a,
              loadedState(a.getParam()),
              stateAt(a.getGrad()),
              loadedState(a.getExpAvg()),
              loadedState(a.getExpAvgSq()),
              nullptr,
              {}};
    if (!mb.p || !mb.g || !mb.m || !mb.v)
      return std::nullopt;
    for (Value x : {a.getParam(), a.getGrad(), a.getExpAvg(), a.getExpAvgSq()})
      mb.loads.push_back(x.getDefiningOp());
    if (auto c = fusedCasts.find(a); c != fusedCasts.end()) {
      auto it = mp.stateIndex.find(forwardedResults.lookup(c->second->getResult(0)));
      if (it == mp.stateIndex.end())
        return std::nullopt;
      mb.bf16 = &mp.states[it->second];
    }
    return mb;
  };
  auto syms = [](const Member &mb) {
    SmallVector<StringRef> out = {mb.p->name, mb.g->name, mb.m->name,
                                  mb.v->name};
    if (mb.bf16)
      out.push_back(mb.bf16->name);
    return out;
  };
  auto close = [&](SmallVector<Member> &run) {
    if (run.size() >= 2) {
      SmallVector<train::AdamWOp> ops;
      for (Member &mb : run)
        ops.push_back(mb.op);
      out.push_back(std::move(ops));
    }
    run.clear();
  };
  SmallVector<Member> run;
  double runDecay = 0.0;
  for (Operation &op : fn.getBody().front()) {
    auto a = dyn_cast<train::AdamWOp>(op);
    if (!a)
      continue;
    std::optional<Member> mb = describe(a);
    if (!mb) {
      close(run);
      continue;
    }
    double wd = a.getWeightDecay().convertToDouble();
    bool extends = false;
    if (!run.empty()) {
      const Member &last = run.back();
      train::AdamWOp first = run.front().op;
      extends =
          backToBack(last.p, mb->p) && backToBack(last.g, mb->g) &&
          backToBack(last.m, mb->m) && backToBack(last.v, mb->v) &&
          (!last.bf16) == (!mb->bf16) &&
          (!mb->bf16 || backToBack(last.bf16, mb->bf16)) &&
          mb->p->type.getElementType() == last.p->type.getElementType() &&
          mb->g->type.getElementType() == last.g->type.getElementType() &&
          a.getLr() == first.getLr() && a.getStep() == first.getStep() &&
          a.getCoef() == first.getCoef() &&
          a.getBeta1() == first.getBeta1() &&
          a.getBeta2() == first.getBeta2() && a.getEps() == first.getEps() &&
          (wd == 0.0 || runDecay == 0.0 || wd == runDecay);
      // The member's update moves from its own op to the run's first: no
      // other access of its states may fall in between (its operand loads
      // and the stores of its results, in place, are its own).
      int64_t from = pos.lookup(first), to = pos.lookup(a);
      SmallVector<Operation *> own(mb->loads.begin(), mb->loads.end());
      for (Value r : a->getResults())
        for (Operation *user : r.getUsers())
          if (writtenSymbol(user).size())
            own.push_back(user);
      if (auto c = fusedCasts.find(a); c != fusedCasts.end())
        for (Operation *user : c->second->getResult(0).getUsers())
          own.push_back(user);
      for (StringRef sym : syms(*mb))
        extends = extends && !accessedIn(sym, from, to, /*reads=*/true,
                                         /*writes=*/true, own);
    }
    if (!extends) {
      close(run);
      runDecay = 0.0;
    }
    if (wd != 0.0)
      runDecay = wd;
    run.push_back(std::move(*mb));
  }
  close(run);
  return out;
}

SmallVector<SmallVector<train::AdamWOp>> FunctionPlan::foldableAdamWRuns() {
  numberOps();
  decideLoadCopies();
  decideInPlaceUpdates();
  decidePackSlots();
  if (failed(adoptFusedCasts()))
    return {};
  decideStateSpans();
  return adamwRunCandidates();
}

LogicalResult FunctionPlan::adoptAdamWRuns() {
  std::map<int64_t, SmallVector<train::AdamWOp>> marked;
  for (Operation &op : fn.getBody().front())
    if (auto a = dyn_cast<train::AdamWOp>(op))
      if (auto id = a->getAttrOfType<IntegerAttr>(
              zero::ZeroDialect::kStateRunAttrName))
        marked[id.getInt()].push_back(a);
  if (marked.empty())
    return success();
  SmallVector<SmallVector<train::AdamWOp>> candidates = adamwRunCandidates();
  for (auto &[id, ops] : marked) {
    if (!llvm::is_contained(candidates, ops))
      return ops.front().emitOpError("is marked ")
             << zero::ZeroDialect::kStateRunAttrName << " = " << id
             << " with " << ops.size()
             << " AdamW update(s), which are not a run one call can "
                "update: consecutive updates in place of states back to back "
                "in every arena, with the same step, learning rate, clip "
                "coefficient and hyperparameters (zero-fuse-state-runs "
                "decides this)";
    AdamWRun r;
    for (train::AdamWOp a : ops) {
      double wd = a.getWeightDecay().convertToDouble();
      int64_t n = cast<RankedTensorType>(a.getParam().getType()).getNumElements();
      r.ops.push_back(a);
      r.offsets.push_back(r.total);
      r.numels.push_back(n);
      r.decay.push_back(wd != 0.0);
      if (wd != 0.0)
        r.weightDecay = wd;
      r.total += n;
      if (a != ops.front())
        adamwInRuns.insert(a);
    }
    adamwRuns[ops.front()] = std::move(r);
  }
  return success();
}

/// One sum of squares over adjacent gradient states (sumSquaresRuns): the
/// gradient norm of stage 0 sums the squares of each gradient and adds the
/// per-tensor sums in f32; over states that lie back to back, one call sums
/// all of them (in double, as each call does) instead. The result differs
/// from the chain only in f32 rounding (it is the more accurate one). The
/// call happens at the chain's last add: no gradient of the chain may be
/// written between its own sum and there. zero-fuse-state-runs chooses the
/// chains (`zero.state_run` on their sums and adds); the plan adopts them.
SmallVector<FunctionPlan::SumSquaresCandidate>
FunctionPlan::sumSquaresCandidates() {
  SmallVector<SumSquaresCandidate> out;
  // Only the gradient norm (the optimizer step): elsewhere (a loss with a
  // penalty) the f32 result must stay the IR's.
  if (role != Role::OptimizerStep)
    return out;
  // A chain value -> its first input, last state, elements, the value it
  // adds the chain's sum to (base: null when the chain starts with two
  // sums), its sum_squares and add ops, and the states it reads.
  struct Chain {
    Value first, base;
    const StateInfo *last = nullptr;
    int64_t total = 0;
    int leaves = 0;
    SmallVector<Operation *> ops;
    SmallVector<std::pair<const StateInfo *, Operation *>> reads;
  };
  DenseMap<Value, Chain> chains;
  DenseSet<Value> extended; // chain values that a later add continues
  auto leaf = [&](Value v) -> std::optional<Chain> {
    auto ss = v.getDefiningOp<train::SumSquaresOp>();
    if (!ss || !v.hasOneUse())
      return std::nullopt;
    const StateInfo *s = stateAt(ss.getInput());
    if (!s)
      return std::nullopt;
    return Chain{ss.getInput(), {}, s, s->type.getNumElements(), 1, {ss},
                 {{s, ss}}};
  };
  auto follows = [](const Chain &a, const Chain &b) {
    return backToBack(a.last, b.last) &&
           a.last->type.getElementType() == b.last->type.getElementType();
  };
  SmallVector<train::AddOp> adds;
  for (Operation &op : fn.getBody().front()) {
    auto add = dyn_cast<train::AddOp>(op);
    if (!add || add.getResult().getType().getRank() != 0)
      continue;
    std::optional<Chain> rhs = leaf(add.getRhs());
    if (!rhs)
      continue;
    Chain c;
    auto it = chains.find(add.getLhs());
    std::optional<Chain> lhsLeaf;
    if (it != chains.end() && add.getLhs().hasOneUse() &&
        follows(it->second, *rhs)) {
      c = it->second; // continues the chain
      extended.insert(add.getLhs());
    } else if ((lhsLeaf = leaf(add.getLhs())) && follows(*lhsLeaf, *rhs)) {
      c = *lhsLeaf; // two adjacent sums start a chain
    } else {
      // The chain's sum is added to the left side later (at the chain's
      // last add): only a value with a buffer of its own (a sum or an add
      // computed here), not a view of a state that may change meanwhile.
      Operation *def = add.getLhs().getDefiningOp();
      if (!def || !isa<train::AddOp, train::SumSquaresOp>(def) ||
          forwardedResults.count(add.getLhs()) ||
          inSumSquaresRuns.contains(def))
        continue;
      c = *rhs;
      c.base = add.getLhs();
      c.ops.push_back(add);
      chains[add.getResult()] = std::move(c);
      adds.push_back(add);
      continue;
    }
    c.last = rhs->last;
    c.total += rhs->total;
    c.leaves += rhs->leaves;
    c.ops.append(rhs->ops);
    c.reads.append(rhs->reads);
    c.ops.push_back(add);
    chains[add.getResult()] = std::move(c);
    adds.push_back(add);
  }
  // Maximal chains of two sums or more.
  for (train::AddOp add : adds) {
    Value r = add.getResult();
    const Chain &c = chains[r];
    if (extended.contains(r) || c.leaves < 2)
      continue;
    // Each state is read at the last add instead of at its own sum.
    int64_t to = pos.lookup(add);
    bool ok = true;
    for (auto [s, read] : c.reads)
      ok = ok && !accessedIn(s->name, pos.lookup(read) + 1, to,
                             /*reads=*/false, /*writes=*/true);
    if (!ok)
      continue;
    SumSquaresCandidate cand{add, {c.first, c.total, c.base}, c.ops, to};
    llvm::sort(cand.ops, [&](Operation *x, Operation *y) {
      return pos.lookup(x) < pos.lookup(y);
    });
    out.push_back(std::move(cand));
  }
  return out;
}

SmallVector<SmallVector<Operation *>> FunctionPlan::foldableSumSquaresRuns() {
  numberOps();
  decideLoadCopies();
  decideInPlaceUpdates();
  decidePackSlots();
  if (failed(adoptFusedCasts()))
    return {};
  decideStateSpans();
  SmallVector<SmallVector<Operation *>> out;
  for (SumSquaresCandidate &c : sumSquaresCandidates())
    out.push_back(std::move(c.ops));
  return out;
}

LogicalResult FunctionPlan::adoptSumSquaresRuns() {
  std::map<int64_t, SmallVector<Operation *>> marked;
  for (Operation &op : fn.getBody().front())
    if (auto id = op.getAttrOfType<IntegerAttr>(
            zero::ZeroDialect::kStateRunAttrName);
        id && isa<train::SumSquaresOp, train::AddOp>(op))
      marked[id.getInt()].push_back(&op);
  if (marked.empty())
    return success();
  SmallVector<SumSquaresCandidate> candidates = sumSquaresCandidates();
  for (auto &[id, ops] : marked) {
    const SumSquaresCandidate *match = nullptr;
    for (const SumSquaresCandidate &c : candidates)
      if (c.ops == ops)
        match = &c;
    if (!match)
      return ops.front()->emitOpError("is marked ")
             << zero::ZeroDialect::kStateRunAttrName << " = " << id
             << " with " << ops.size()
             << " op(s), which are not a sum of squares one call can do: a "
                "chain of train.add over train.sum_squares of gradients back "
                "to back in one arena, in @optimizer_step, none written "
                "before the chain's last add (zero-fuse-state-runs decides "
                "this)";
    const SumSquaresRun &r = match->run;
    sumSquaresRuns[match->last] = r;
    if (r.base)
      extendedLife[r.base] =
          std::max(extendedLife.lookup_or(r.base, -1), match->to);
    for (Operation *op : ops)
      if (op != match->last)
        inSumSquaresRuns.insert(op);
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
      if (ok)
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
        for (Operation &other : block)
          if (isa<train::StoreOp>(other) && writtenSymbol(&other) == sym &&
              pos.lookup(&other) > live)
            overwrite = std::min(overwrite, pos.lookup(&other));
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
      if (ok) {
        stateSpans[reduced] = span->second;
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
    if (ok)
      stateSpans[flat] = *gi.paramSpan;
  }
}


} // namespace mlir::zero::plan
