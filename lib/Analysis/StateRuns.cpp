//===- StateRuns.cpp - runs over adjacent states --------------------------===//
///
/// \file
/// The runs of the function plan (StepPlan.h) over states that lie back to
/// back in their arenas: zero fills, multi-tensor AdamW and the gradient
/// norm's sums of squares. For each kind, the criterion (`*Candidates`),
/// what zero-fuse-state-runs marks (`foldable*Runs`) and how the plan adopts
/// the marks (`adopt*Runs`).
///
//===----------------------------------------------------------------------===//

#include "zero/Analysis/StepPlan.h"

#include <map>

using namespace mlir;

namespace mlir::zero::plan {

LogicalResult FunctionPlan::planBeforeRuns() {
  numberOps();
  decideLoadCopies();
  decideInPlaceUpdates();
  decidePackSlots();
  if (failed(adoptFusedCasts()))
    return failure();
  decideStateSpans();
  return success();
}

std::map<int64_t, SmallVector<Operation *>>
FunctionPlan::markedRuns(function_ref<bool(Operation *)> kind) {
  std::map<int64_t, SmallVector<Operation *>> marked;
  for (Operation &op : fn.getBody().front())
    if (auto id = op.getAttrOfType<IntegerAttr>(
            zero::ZeroDialect::kStateRunAttrName);
        id && kind(&op))
      marked[id.getInt()].push_back(&op);
  return marked;
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
  auto marked = markedRuns([](Operation *op) { return isa<train::FillOp>(op); });
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
  if (failed(planBeforeRuns()))
    return {};
  return adamwRunCandidates();
}

LogicalResult FunctionPlan::adoptAdamWRuns() {
  std::map<int64_t, SmallVector<train::AdamWOp>> marked;
  for (auto &[id, ops] :
       markedRuns([](Operation *op) { return isa<train::AdamWOp>(op); }))
    for (Operation *op : ops)
      marked[id].push_back(cast<train::AdamWOp>(op));
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
  if (failed(planBeforeRuns()))
    return {};
  SmallVector<SmallVector<Operation *>> out;
  for (SumSquaresCandidate &c : sumSquaresCandidates())
    out.push_back(std::move(c.ops));
  return out;
}

LogicalResult FunctionPlan::adoptSumSquaresRuns() {
  auto marked = markedRuns([](Operation *op) {
    return isa<train::SumSquaresOp, train::AddOp>(op);
  });
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

} // namespace mlir::zero::plan
