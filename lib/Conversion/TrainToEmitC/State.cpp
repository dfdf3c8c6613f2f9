//===- State.cpp - convert-train-to-emitc: the state family -------------===//
///
/// \file
/// The ops whose printing follows the state plan (zero::plan::FunctionPlan,
/// lib/Analysis/PlanDecisions.cpp): state loads (a copy, or nothing for a
/// view), stores and accumulations (nothing when computed in place),
/// fills and fills over back-to-back states, zero.pack (members computed
/// in their slot are not copied), AdamW (in place, with the bf16 copy of a
/// folded cast) and AdamW and sum-of-squares runs over adjacent states.
/// Prints what the plan recorded; the choices are the plan's.
///
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::zero::lowering;

LogicalResult FunctionLowering::emitStateLoad(Operation *op, StringRef sym) {
  if (!copyLoads.contains(op))
    return success(); // a view of the state
  const StateInfo *s = ml.lookupState(op, sym);
  if (!s)
    return failure();
  Value r = op->getResult(0);
  call("zrt_copy_any",
       {statePtr(*s), ptr(r), i64(numel(r)), opq(*dtypeName(elementType(r)))});
  return success();
}

LogicalResult FunctionLowering::emitStateStore(Operation *op, Value value,
                                               StringRef sym, bool accumulate) {
  const StateInfo *s = ml.lookupState(op, sym);
  if (!s)
    return failure();
  if (s->type.getElementType() != elementType(value) ||
      s->type.getNumElements() != numel(value))
    return op->emitOpError("value type ")
           << value.getType() << " does not match @" << sym << " (" << s->type
           << ")";
  Type elt = elementType(value);
  if (accumulate) {
    if (elt.isF32())
      call("zrt_axpy", {f32(1.0), ptr(value), statePtr(*s), i64(numel(value))});
    else
      call(zero::narrow::fn("zrt_accumulate", elt),
           {ptr(value), statePtr(*s), i64(numel(value))});
    return success();
  }
  bool isArena = false;
  Placement root = rootPlacement(value, isArena);
  if (isArena && root == s->place) {
    comment(op, " (no copy: computed in place)");
    return success();
  }
  comment(op);
  call("zrt_copy_any",
       {ptr(value), statePtr(*s), i64(numel(value)), opq(*dtypeName(elt))});
  return success();
}

LogicalResult FunctionLowering::emitAdamW(Operation *op, Value p, Value g,
                                          Value m, Value v, Value lr,
                                          Value step, Value coef,
                                          Value finiteCheck, double b1,
                                          double b2, double eps, double wd,
                                          int group) {
  if (!elementType(p).isF32() || !elementType(m).isF32() ||
      !elementType(v).isF32())
    return op->emitOpError("needs f32 parameters and moments (the master "
                           "weights under mixed precision)");
  Value results[3] = {op->getResult(0), op->getResult(1), op->getResult(2)};
  Value inputs[3] = {p, m, v};
  for (int k = 0; k < 3; ++k)
    if (!inPlaceResults.contains(results[k]))
      call("zrt_copy_any", {ptr(inputs[k]), ptr(results[k]),
                            i64(numel(results[k])), opq("ZRT_F32")});
  Value lrV = scalar(lr), stepV = scalar(step), coefV = scalar(coef);
  Type gradElt = elementType(g);
  bool narrowGrad = zero::narrow::isNarrowFloat(gradElt);
  if (group >= 0 && numel(p) != ml.groups[group].shard)
    return op->emitOpError("operates on ")
           << numel(p) << " elements, but a shard of @" << ml.groups[group].name
           << " has " << ml.groups[group].shard;
  // Every pointer before a possible `if`: later ops may use them too.
  Value pp = ptr(results[0]), pm = ptr(results[1]), pv = ptr(results[2]),
        pg = ptr(g);
  Value rankV = group >= 0 ? rankValue() : Value();
  // skip_nonfinite: the update runs only when the check value is finite
  // (otherwise the results keep the inputs, as GradScaler.step skips).
  OpBuilder::InsertionGuard guard(b);
  if (finiteCheck) {
    Value finite = emitc::CallOpaqueOp::create(
                       b, loc(), TypeRange{b.getI1Type()}, "std::isfinite",
                       ValueRange{scalar(finiteCheck)})
                       .getResult(0);
    auto ifOp = emitc::IfOp::create(b, loc(), finite); // then: yield only
    b.setInsertionPoint(ifOp.getThenRegion().front().getTerminator());
  }
  if (group < 0) {
    // The bf16 copy of the new parameter, when its cast is folded in.
    auto fused = fusedCasts.find(op);
    CArg outBf16 = fused != fusedCasts.end()
                       ? CArg(ptr(fused->second->getResult(0)))
                       : CArg(opq("NULL"));
    call(narrowGrad ? zero::narrow::fn("zrt_adamw_step", gradElt) + "_grad"
                    : std::string("zrt_adamw_step"),
         {pp, pm, pv, pg, opq("NULL"), outBf16, i64(numel(p)), lrV, f64(b1),
          f64(b2), f64(eps), f64(wd), coefV, stepV});
    return success();
  }
  const GroupInfo &gi = ml.groups[group];
  std::string prefix = llvm::formatv("zrt_group{0}_", group).str();
  call("zrt_shard_adamw",
       {pp, pm, pv, pg, opq(*dtypeName(gradElt)), i64(gi.shard),
        rankV, i64(gi.members.size()), opq(prefix + "offsets"),
        opq(prefix + "numels"), opq(prefix + "decay"), lrV, f64(b1), f64(b2),
        f64(eps), f64(wd), coefV, stepV});
  return success();
}

LogicalResult FunctionLowering::emitAdamWRun(Operation *op) {
  const AdamWRun &run = adamwRuns.find(op)->second;
  train::AdamWOp a = run.ops.front();
  std::string offsets = ml.int64Array("adamw_run_offsets", run.offsets);
  std::string numels = ml.int64Array("adamw_run_numels", run.numels);
  SmallVector<int64_t> decay(run.decay.begin(), run.decay.end());
  std::string decayName = ml.uint8Array("adamw_run_decay", decay);
  ++ml.numPermutations;
  Value pp = ptr(a.getNewParam()), pm = ptr(a.getNewExpAvg()),
        pv = ptr(a.getNewExpAvgSq()), pg = ptr(a.getGrad());
  call("zrt_shard_adamw",
       {pp, pm, pv, pg,
        opq(*dtypeName(elementType(a.getGrad()))),
        i64(run.total), opq("0"), i64(run.ops.size()), opq(offsets),
        opq(numels), opq(decayName), scalar(a.getLr()),
        f64(a.getBeta1().convertToDouble()), f64(a.getBeta2().convertToDouble()),
        f64(a.getEps().convertToDouble()), f64(run.weightDecay),
        scalar(a.getCoef()), scalar(a.getStep())});
  // The bf16 copies of the new parameters (the fused casts, back to back).
  if (auto c = fusedCasts.find(a); c != fusedCasts.end())
    call("zrt_cast_f32_to_bf16",
         {pp, ptr(c->second->getResult(0)), i64(run.total)});
  return success();
}

LogicalResult FunctionLowering::emitSumSquaresRun(Operation *op) {
  const SumSquaresRun &r = sumSquaresRuns.find(op)->second;
  Value out = ptr(op->getResult(0));
  Type elt = elementType(r.first);
  call(zero::narrow::isNarrowFloat(elt) ? zero::narrow::fn("zrt_sum_squares", elt)
                                        : std::string("zrt_sum_squares"),
       {ptr(r.first), i64(r.total), out});
  if (r.base)
    call("zrt_add", {ptr(r.base), out, out, i64(1)});
  return success();
}

LogicalResult FunctionLowering::emitFill(train::FillOp o) {
  if (fillsInRuns.contains(o)) {
    auto run = fillRuns.find(o);
    if (run == fillRuns.end())
      return success();
    // One call over back-to-back states, gaps included.
    const FillRun &r = run->second;
    Value base = pointerAt(r.place, r.elt);
    int64_t n = r.bytes / elementBytes(r.elt);
    call(r.elt.isF32() ? std::string("zrt_fill")
                       : zero::narrow::fn("zrt_fill", r.elt),
         {base, f32(0.0), i64(n)});
    return success();
  }
  double v = o.getValue().convertToDouble();
  if (o.getType().getElementType().isF32())
    call("zrt_fill", {ptr(o.getResult()), f32(v), i64(numel(o.getResult()))});
  else
    call(zero::narrow::fn("zrt_fill", o.getType().getElementType()),
         {ptr(o.getResult()), f32(v), i64(numel(o.getResult()))});
  return success();
}

LogicalResult FunctionLowering::emitPack(zero::PackOp o) {
  auto g = ml.groupIndex.find(o.getGroup());
  if (g == ml.groupIndex.end())
    return o.emitOpError("refers to @")
           << o.getGroup() << ", which is not a zero.group";
  const GroupInfo &gi = ml.groups[g->second];
  Type elt = o.getType().getElementType();
  StringRef dt = *dtypeName(elt);
  Value flat = ptr(o.getResult());
  auto fillZero = [&](int64_t from, int64_t to) {
    if (to <= from)
      return;
    call(elt.isF32() ? std::string("zrt_fill")
                     : zero::narrow::fn("zrt_fill", elt),
         {offsetPtr(flat, from), f32(0.0), i64(to - from)});
  };
  int64_t at = 0;
  for (auto [i, m] : llvm::enumerate(o.getMembers())) {
    fillZero(at, gi.offsets[i]);
    // A member computed in its slot (decidePackSlots), or loaded from a
    // state the flat buffer spans (decideStateSpans), is there.
    bool memberArena = false, flatArena = false;
    Placement mp = rootPlacement(m, memberArena),
              fp = rootPlacement(o.getResult(), flatArena);
    fp.offset += gi.offsets[i] * elementBytes(elt);
    bool inPlace = memberArena && flatArena && mp == fp;
    if (!packSlots.count(m) && !inPlace)
      call("zrt_copy_any", {ptr(m), offsetPtr(flat, gi.offsets[i]),
                            i64(numel(m)), opq(dt)});
    at = gi.offsets[i] + numel(m);
  }
  fillZero(at, numel(o.getResult()));
  return success();
}
