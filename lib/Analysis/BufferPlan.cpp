//===- BufferPlan.cpp - static buffer plan of a step ----------------------===//
///
/// \file
/// The function plan (StepPlan.h): arguments, views, states and arena
/// blocks; greedy best fit over live intervals per arena (BufferPlan.h);
/// zero-buffer-assign's annotations written and read back.
///
//===----------------------------------------------------------------------===//

#include "zero/Analysis/StepPlan.h"

using namespace mlir;

namespace mlir::zero::plan {

void FunctionPlan::request(Value v, int mem, int64_t first) {
  PlanBlock blk;
  blk.mem = mem;
  blk.bytes = alignUp(std::max<int64_t>(tensorBytes(tensorType(v)), 1));
  blk.first = first;
  blk.last = std::max(first, lastUse(v));
  blk.value = v;
  valueBlock[v] = blocks.size();
  blocks.push_back(blk);
  buffers[v] = {Buffer::Arena, Placement{mem, -1}};
}

int64_t FunctionPlan::blockSum(int mem) const {
  // What bump allocation needs: every value, plus one scratch pool.
  int64_t sum = 0, pool = 0;
  for (const PlanBlock &blk : blocks)
    if (blk.mem == mem) {
      if (blk.value)
        sum += blk.bytes;
      else
        pool = std::max(pool, blk.bytes);
    }
  return sum + pool;
}

/// The functions run one at a time and the activation arena only matters
/// to @forward_backward: the values of another function (@forward's logits
/// at validation, @logits, the optimizer step) go to the activation arena
/// instead of the temporaries when they fit into what @forward_backward
/// already needs there, so the temporaries arena is sized by the largest
/// function that does not fit (scratch stays in the temporaries). Best-fit
/// planning only; the annotations record the arena, which the lowering
/// then follows.
void FunctionPlan::shareActivations() {
  if (role == Role::ForwardBackward || mp.forwardBackwardActivations <= 0)
    return;
  for (PlanBlock &blk : blocks)
    if (blk.value)
      blk.mem = kMemActs;
  bestFit(kMemActs);
  if (bump[kMemActs] <= mp.forwardBackwardActivations)
    return;
  for (PlanBlock &blk : blocks)
    if (blk.value)
      blk.mem = kMemTemps;
  bump[kMemActs] = 0;
}

/// Greedy best fit, largest block first: each block goes into the smallest
/// gap (lowest offset on ties) between the blocks already placed whose live
/// intervals overlap its own, else above all of them.
void FunctionPlan::bestFit(int mem) {
  SmallVector<unsigned> order;
  for (auto [i, blk] : llvm::enumerate(blocks))
    if (blk.mem == mem)
      order.push_back(i);
  llvm::stable_sort(order, [&](unsigned a, unsigned b) {
    if (blocks[a].bytes != blocks[b].bytes)
      return blocks[a].bytes > blocks[b].bytes;
    return blocks[a].first < blocks[b].first;
  });
  SmallVector<unsigned> placed;
  int64_t extent = 0;
  for (unsigned i : order) {
    PlanBlock &blk = blocks[i];
    SmallVector<std::pair<int64_t, int64_t>> busy; // [offset, end)
    for (unsigned j : placed) {
      const PlanBlock &o = blocks[j];
      if (o.first <= blk.last && blk.first <= o.last)
        busy.push_back({o.offset, o.offset + o.bytes});
    }
    llvm::sort(busy);
    int64_t cursor = 0, best = -1, bestGap = INT64_MAX;
    for (auto [begin, end] : busy) {
      int64_t gap = begin - cursor;
      if (gap >= blk.bytes && gap < bestGap) {
        best = cursor;
        bestGap = gap;
      }
      cursor = std::max(cursor, end);
    }
    blk.offset = best >= 0 ? best : cursor;
    extent = std::max(extent, blk.offset + blk.bytes);
    placed.push_back(i);
  }
  bump[mem] = extent;
}

static constexpr StringLiteral kStorageAttr =
    zero::ZeroDialect::kStorageAttrName;
static constexpr StringLiteral kScratchAttr =
    zero::ZeroDialect::kScratchAttrName;

/// The zero::Arena of arena `mem` (MemKind) and back.
static zero::Arena arenaOfMem(int mem) {
  return mem == kMemConsts ? zero::Arena::constants
                           : static_cast<zero::Arena>(mem);
}
static int memOfArena(zero::Arena a) {
  return a == zero::Arena::constants ? kMemConsts : static_cast<int>(a);
}

StorageAttr FunctionPlan::recorded(Value v) {
  if (auto a = dyn_cast<BlockArgument>(v))
    return fn.getArgAttrOfType<StorageAttr>(a.getArgNumber(), kStorageAttr);
  auto r = cast<OpResult>(v);
  auto list = r.getOwner()->getAttrOfType<ArrayAttr>(kStorageAttr);
  if (!list || list.size() != r.getOwner()->getNumResults())
    return {};
  return dyn_cast<StorageAttr>(list[r.getResultNumber()]);
}

bool FunctionPlan::take(Value v, StorageKind kind, bool legal) {
  if (assign != Assign::Annotated)
    return legal;
  StorageAttr r = recorded(v);
  return legal && r && r.getKind() == kind;
}

StorageAttr FunctionPlan::storageOf(Value v) {
  MLIRContext *ctx = fn.getContext();
  if (!isa<RankedTensorType>(v.getType()))
    return StorageAttr::getNone(ctx);
  if (auto it = hostSlots.find(v); it != hostSlots.end())
    return StorageAttr::getHostSlot(ctx, it->second.offset, it->second.bytes,
                                    it->second.first, it->second.last);
  if (auto it = valueBlock.find(v); it != valueBlock.end()) {
    const PlanBlock &blk = blocks[it->second];
    return StorageAttr::getArena(ctx, arenaOfMem(blk.mem), blk.offset,
                                 blk.bytes, blk.first, blk.last);
  }
  auto r = dyn_cast<OpResult>(v);
  Operation *op = r ? r.getOwner() : nullptr;
  Buffer b = buffers.lookup(v);
  if (!op || b.kind == Buffer::None)
    return StorageAttr::getNone(ctx);
  if (b.kind == Buffer::View) {
    if (packSlots.count(v))
      return StorageAttr::getPackSlot(ctx, b.elemOffset);
    for (OpOperand &o : op->getOpOperands())
      if (o.get() == b.base)
        return StorageAttr::getView(ctx, o.getOperandNumber(), b.elemOffset);
    return StorageAttr::getNone(ctx);
  }
  if (isLoad(op))
    return StorageAttr::getState(ctx, loadSymbol(op));
  if (inPlaceResults.contains(v)) {
    // (new_param, new_exp_avg, new_exp_avg_sq) update operands #0, #2, #3.
    unsigned k = r.getResultNumber();
    return StorageAttr::getTied(ctx, k == 0 ? 0 : k == 1 ? 2 : 3);
  }
  if (StringRef sym = forwardedResults.lookup(v); !sym.empty())
    return StorageAttr::getState(ctx, sym);
  if (auto span = stateSpans.find(v); span != stateSpans.end())
    for (const GroupInfo &g : mp.groups) {
      if (g.gradSpan && *g.gradSpan == span->second)
        return StorageAttr::getSpan(ctx, g.name, zero::Arena::gradients);
      if (g.paramSpan && *g.paramSpan == span->second)
        return StorageAttr::getSpan(ctx, g.name, zero::Arena::parameters);
    }
  if (b.place.mem == kMemConsts)
    if (auto slot = op->getAttrOfType<zero::SlotAttr>(
            zero::ZeroDialect::kSlotAttrName))
      return StorageAttr::getArena(ctx, zero::Arena::constants,
                                   slot.getOffset(), slot.getBytes(), 0, 0);
  return StorageAttr::getNone(ctx);
}

LogicalResult FunctionPlan::checkStorage() {
  auto check = [&](Operation *where, Value v, StringRef what) -> LogicalResult {
    StorageAttr rec = recorded(v);
    if (!rec)
      return where->emitOpError("has no ")
             << kStorageAttr << " for " << what
             << "; run zero-buffer-assign after the last transformation";
    // A block of its own: its offsets are checked by readAnnotations.
    const bool ownBlock = valueBlock.count(v);
    if (ownBlock && rec.getKind() == StorageKind::arena &&
        rec.getArena() != zero::Arena::constants)
      return success();
    StorageAttr want = ownBlock ? StorageAttr() : storageOf(v);
    if (rec == want)
      return success();
    InFlightDiagnostic diag = where->emitOpError(kStorageAttr);
    diag << " of " << what << " is " << rec << ", but here the step allows ";
    if (ownBlock)
      diag << "a buffer of its own (#zero.storage<arena ...>)";
    else
      diag << "only " << want;
    if (rec.getKind() == StorageKind::state && isLoad(where))
      diag << ": the state is written while the loaded value is live, so "
              "the load must copy";
    else
      diag << ": zero-buffer-assign records only the choices the step "
              "allows; rerun it after the last transformation";
    return diag;
  };
  for (BlockArgument a : fn.getArguments())
    if (valueBlock.count(a))
      if (failed(check(fn, a,
                       ("argument #" + Twine(a.getArgNumber())).str())))
        return failure();
  for (Operation &op : fn.getBody().front())
    for (OpResult r : op.getResults())
      if (failed(check(&op, r, ("result #" + Twine(r.getResultNumber())).str())))
        return failure();
  return success();
}

LogicalResult FunctionPlan::readAnnotations() {
  for (PlanBlock &blk : blocks) {
    Operation *where = blk.value ? blk.value.getDefiningOp() : blk.scratchOp;
    if (!where)
      where = fn;
    StorageAttr d =
        blk.value ? recorded(blk.value)
                  : blk.scratchOp->getAttrOfType<StorageAttr>(kScratchAttr);
    const bool isArena = d && d.getKind() == StorageKind::arena &&
                         d.getArena() != zero::Arena::constants;
    int mem = isArena ? memOfArena(d.getArena()) : -1;
    int64_t offset = isArena ? d.getOffset() : -1,
            bytes = isArena ? d.getBytes() : -1;
    // Outside @forward_backward a value may use either arena
    // (shareActivations); scratch is always a temporary.
    if (blk.value && role != Role::ForwardBackward && mem >= 0)
      blk.mem = mem;
    if (mem != blk.mem || offset < 0 || offset % kAlign || bytes < blk.bytes) {
      InFlightDiagnostic diag = where->emitOpError("has no ");
      diag << (blk.value ? kStorageAttr : kScratchAttr) << " for "
           << (blk.value ? "a result" : "its scratch")
           << " that matches the plan (arena \"" << kMemName[blk.mem]
           << "\", at least " << blk.bytes
           << " bytes, 64-byte aligned offset); rerun zero-buffer-assign "
              "after the last transformation";
      return diag;
    }
    blk.offset = offset;
  }
  // Values live at the same time must not share a byte.
  for (auto [i, a] : llvm::enumerate(blocks))
    for (unsigned j = i + 1; j < blocks.size(); ++j) {
      const PlanBlock &c = blocks[j];
      if (a.mem != c.mem || a.last < c.first || c.last < a.first ||
          a.offset + a.bytes <= c.offset || c.offset + c.bytes <= a.offset)
        continue;
      const PlanBlock &later = a.first >= c.first ? a : c;
      const PlanBlock &other = &later == &a ? c : a;
      Operation *where =
          later.value ? later.value.getDefiningOp() : later.scratchOp;
      if (!where)
        where = fn;
      InFlightDiagnostic diag = where->emitOpError("zero.storage: bytes [");
      diag << later.offset << ", " << later.offset + later.bytes << ") of the "
           << kMemName[later.mem] << " arena overlap bytes [" << other.offset
           << ", " << other.offset + other.bytes
           << ") of a buffer live at the same time";
      Operation *otherOp =
          other.value ? other.value.getDefiningOp() : other.scratchOp;
      if (otherOp)
        diag.attachNote(otherOp->getLoc()) << "the other buffer is defined here";
      return diag;
    }
  for (int m : {kMemActs, kMemTemps}) {
    bump[m] = 0;
    for (const PlanBlock &blk : blocks)
      if (blk.mem == m)
        bump[m] = std::max(bump[m], blk.offset + blk.bytes);
  }
  return success();
}

LogicalResult FunctionPlan::assignOffsets() {
  switch (assign) {
  case Assign::Bump: {
    // Values in program order, then one scratch pool as large as the
    // largest op's scratch.
    for (PlanBlock &blk : blocks)
      if (blk.value) {
        blk.offset = bump[blk.mem];
        bump[blk.mem] += blk.bytes;
      }
    for (PlanBlock &blk : blocks)
      if (!blk.value)
        blk.offset = bump[kMemTemps];
    bump[kMemTemps] += scratchSize;
    break;
  }
  case Assign::BestFit:
    bestFit(kMemActs);
    bestFit(kMemTemps);
    break;
  case Assign::Annotated:
    if (failed(readAnnotations()))
      return failure();
    break;
  }
  for (const PlanBlock &blk : blocks) {
    if (blk.value)
      buffers[blk.value].place = {blk.mem, blk.offset};
    else
      scratchAt[blk.scratchOp] = blk.offset;
  }
  return success();
}

void FunctionPlan::annotate() {
  Builder bld(fn.getContext());
  for (Operation &op : fn.getBody().front()) {
    op.removeAttr(kStorageAttr);
    op.removeAttr(kScratchAttr);
    if (op.getNumResults() == 0)
      continue;
    SmallVector<Attribute> list;
    for (Value r : op.getResults())
      list.push_back(storageOf(r));
    op.setAttr(kStorageAttr, bld.getArrayAttr(list));
  }
  for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
    fn.removeArgAttr(i, kStorageAttr);
    if (valueBlock.count(fn.getArgument(i)))
      fn.setArgAttr(i, kStorageAttr, storageOf(fn.getArgument(i)));
  }
  for (const PlanBlock &blk : blocks)
    if (!blk.value)
      blk.scratchOp->setAttr(
          kScratchAttr,
          StorageAttr::getArena(fn.getContext(), arenaOfMem(blk.mem),
                                blk.offset, blk.bytes, blk.first, blk.last));
  if (hostBytes > 0)
    fn->setAttr(kHostSlotBytesAttr, bld.getI64IntegerAttr(hostBytes));
  else
    fn->removeAttr(kHostSlotBytesAttr);
  fn->setAttr(kArenaBytesAttr,
              bld.getDictionaryAttr(
                  {bld.getNamedAttr("activations",
                                    bld.getI64IntegerAttr(bump[kMemActs])),
                   bld.getNamedAttr("temporaries",
                                    bld.getI64IntegerAttr(bump[kMemTemps]))}));
}

int64_t FunctionPlan::scratchBytes(Operation *op) {
  int64_t bytes = 0;
  bool native = hasNativeBf16Kernel(op);
  // A workspace formula (zrt/abi.h) says -1 when the size overflows int64.
  bool overflow = false;
  auto words = [&](int64_t n) {
    overflow |= n < 0;
    return n;
  };
  for (int64_t w : zero::kernelScratchWords(op, native))
    bytes += alignUp(std::max<int64_t>(words(w), 1) * 4);
  if (auto r = dyn_cast<func::ReturnOp>(op))
    if (role == Role::Logits && r.getNumOperands() == 1) {
      // As emitReturn: the last positions [B, Vp] in f32 (and in bf16 first
      // for bf16 logits) before the copy to the host.
      ArrayRef<int64_t> s = tensorType(r.getOperand(0)).getShape();
      if (zero::narrow::isNarrowFloat(elementType(r.getOperand(0))))
        bytes += alignUp((s[0] * s.back() + 1) / 2 * 4);
      bytes += alignUp(s[0] * s.back() * 4);
    }
  return overflow ? -1 : bytes;
}

LogicalResult FunctionPlan::planArguments() {
  Block &entry = fn.getBody().front();
  if (role == Role::OptimizerStep) {
    // lr, step, grad_scale by their train.name (else by position).
    static constexpr StringLiteral names[3] = {"lr", "step", "grad_scale"};
    if (entry.getNumArguments() != 3)
      return fn.emitOpError(
          "must take (lr: tensor<f32>, step: tensor<i64>, "
          "grad_scale: tensor<f32>) for the model.h contract");
    for (BlockArgument a : entry.getArguments()) {
      unsigned which = a.getArgNumber();
      if (auto n = fn.getArgAttrOfType<StringAttr>(which, "train.name")) {
        auto it = llvm::find(names, n.getValue());
        if (it != std::end(names))
          which = it - std::begin(names);
      }
      auto t = dyn_cast<RankedTensorType>(a.getType());
      Type want = which == 1 ? Type(IntegerType::get(fn.getContext(), 64))
                             : Type(Float32Type::get(fn.getContext()));
      if (!t || t.getRank() != 0 || t.getElementType() != want)
        return fn.emitOpError("argument #")
               << a.getArgNumber() << " (" << names[which] << ") must be "
               << RankedTensorType::get({}, want);
      request(a, kMemTemps, /*first=*/-1);
      scalarArgs.push_back({which, a});
    }
    return success();
  }
  // The data inputs: (ids, targets), or an array model's named inputs.
  const unsigned numInputs = mp.arrayInputs() ? mp.inputs.size() : 2;
  unsigned maxArgs = role == Role::Logits ? 1 : numInputs;
  if (role == Role::ForwardBackward &&
      entry.getNumArguments() == numInputs + 1) {
    // fp16-mixed: the loss scale S (train-autodiff{loss-scale=true}), set
    // through the model description's set_loss_scale.
    BlockArgument s = entry.getArgument(numInputs);
    auto name = fn.getArgAttrOfType<StringAttr>(numInputs, "train.name");
    auto t = dyn_cast<RankedTensorType>(s.getType());
    if (!name || name.getValue() != "loss_scale" || !t || t.getRank() != 0 ||
        !t.getElementType().isF32())
      return fn.emitOpError("argument #")
             << numInputs
             << " must be the loss scale "
                "(tensor<f32> {train.name = \"loss_scale\"}) "
                "for the model.h contract";
    request(s, kMemTemps, /*first=*/-1);
    scalarArgs.push_back({kLossScaleArg, s});
    mp.lossScaled = true;
    maxArgs = numInputs + 1;
  }
  if (mp.arrayInputs()) {
    // The named inputs of @forward, in its order (describeInputs).
    if (entry.getNumArguments() != maxArgs)
      return fn.emitOpError("takes ")
             << entry.getNumArguments() << " arguments; @forward's "
             << numInputs << " named inputs"
             << (mp.lossScaled ? " and the loss scale" : "")
             << " are what the model.h contract passes";
    for (unsigned i = 0; i < numInputs; ++i) {
      BlockArgument a = entry.getArgument(i);
      auto name = fn.getArgAttrOfType<StringAttr>(i, "train.name");
      if (!name || name.getValue() != mp.inputs[i].name ||
          a.getType() != mp.inputs[i].type)
        return fn.emitOpError("argument #")
               << i << " must be @forward's input '" << mp.inputs[i].name
               << "' (" << mp.inputs[i].type << ")";
      if (a.use_empty())
        continue;
      request(a, kMemTemps, /*first=*/-1);
      inputArgs.push_back(a);
    }
    return success();
  }
  if (entry.getNumArguments() > maxArgs)
    return fn.emitOpError("takes ")
           << entry.getNumArguments() << " arguments; the model.h contract "
           << (role == Role::Logits ? "passes token ids only"
                                    : "passes token ids and targets");
  for (BlockArgument a : entry.getArguments()) {
    if (maxArgs == 3 && a.getArgNumber() == 2)
      continue; // the loss scale, above
    auto t = dyn_cast<RankedTensorType>(a.getType());
    if (!t || !t.getElementType().isInteger(32))
      return fn.emitOpError("argument #")
             << a.getArgNumber() << " has type " << a.getType()
             << "; the model.h contract passes int32 token ids / targets";
    // Copied from the caller's host memory into an arena buffer at entry.
    if (a.use_empty())
      continue;
    request(a, kMemTemps, /*first=*/-1);
    inputArgs.push_back(a);
  }
  return success();
}

void FunctionPlan::numberOps() {
  int64_t i = 0;
  pos.clear();
  symbolOps.clear();
  for (Operation &op : fn.getBody().front()) {
    pos[&op] = i;
    if (isLoad(&op))
      symbolOps[loadSymbol(&op)].push_back(&op);
    else if (StringRef sym = writtenSymbol(&op); !sym.empty())
      symbolOps[sym].push_back(&op);
    if (op.hasAttr("train.loss_seed") && seedPos == INT64_MAX)
      seedPos = i;
    ++i;
  }
}

ArrayRef<Operation *> FunctionPlan::opsOf(StringRef sym) const {
  auto it = symbolOps.find(sym);
  return it == symbolOps.end() ? ArrayRef<Operation *>() : it->second;
}

LogicalResult FunctionPlan::plan() {
  Block &block = fn.getBody().front();
  numberOps();
  if (role == Role::Forward || role == Role::ForwardBackward) {
    if (fn.getNumResults() != 1 ||
        fn.getResultTypes()[0] !=
            RankedTensorType::get({}, Float32Type::get(fn.getContext())))
      return fn.emitOpError("must return exactly the f32 loss (tensor<f32>) "
                            "for the model.h contract");
  } else if (role == Role::OptimizerStep) {
    if (fn.getNumResults() != 1 ||
        fn.getResultTypes()[0] !=
            RankedTensorType::get({}, Float32Type::get(fn.getContext())))
      return fn.emitOpError("must return exactly the gradient norm "
                            "(tensor<f32>) for the model.h contract");
  } else {
    auto t = fn.getNumResults() == 1
                 ? dyn_cast<RankedTensorType>(fn.getResultTypes()[0])
                 : RankedTensorType();
    if (!t || t.getRank() != 3)
      return fn.emitOpError("must return the logits tensor<BxTxVp> for the "
                            "model.h contract");
  }
  if (failed(planArguments()))
    return failure();
  decideLoadCopies();
  decideInPlaceUpdates();
  decidePackSlots();
  if (failed(adoptFusedCasts()))
    return failure();
  if (failed(adoptFillRuns()))
    return failure();
  decideStateSpans();
  if (failed(adoptAdamWRuns()))
    return failure();
  if (failed(adoptSumSquaresRuns()))
    return failure();

  for (Operation &op : block) {
    for (Value v : op.getResults())
      if (auto t = dyn_cast<RankedTensorType>(v.getType()))
        if (failed(checkStorable(&op, t)))
          return failure();
    if (isLoad(&op)) {
      const StateInfo *s = mp.lookupState(&op, loadSymbol(&op));
      if (!s)
        return failure();
      if (copyLoads.contains(&op))
        request(op.getResult(0), kMemTemps, pos.lookup(&op));
      else
        buffers[op.getResult(0)] = {Buffer::Arena, s->place};
      continue;
    }
    if (auto r = dyn_cast<train::ReshapeOp>(op)) {
      buffers[r.getResult()] = {Buffer::View, {}, r.getInput(), 0};
      continue;
    }
    if (auto u = dyn_cast<zero::UnpackOp>(op)) {
      auto g = mp.groupIndex.find(u.getGroup());
      if (g == mp.groupIndex.end())
        return u.emitOpError("refers to @")
               << u.getGroup() << ", which is not a zero.group";
      for (auto [i, v] : llvm::enumerate(u.getMembers()))
        buffers[v] = {
            Buffer::View, {}, u.getFlat(), mp.groups[g->second].offsets[i]};
      continue;
    }
    if (auto sp = dyn_cast<zero::SplitOp>(op)) {
      int64_t offset = 0;
      for (Value v : sp.getResults()) {
        buffers[v] = {Buffer::View, {}, sp.getInput(), offset};
        offset += numel(v);
      }
      continue;
    }
    if (isa<zero::AllGatherStartOp, zero::ReduceScatterStartOp,
            zero::AllReduceStartOp>(op) &&
        (!op.getResult(0).hasOneUse() || !waitOf(&op)))
      return op.emitOpError("must be waited exactly once (zero.wait)");
    if (auto w = dyn_cast<zero::OffloadWaitOp>(op)) {
      // A host slot (P_a+cpu): written from its offload's start on, read
      // until its fetch's wait; its own pinned host block, not an arena.
      Value v = w.getHost();
      Operation *start = w.getPending().getDefiningOp();
      HostSlot slot{hostBytes, alignUp(tensorBytes(tensorType(v))),
                    start ? pos.lookup(start) : pos.lookup(&op), 0};
      slot.last = std::max(slot.first, lastUse(v));
      hostSlots[v] = slot;
      hostBytes += slot.bytes;
      // No device arena (mem -1): the offset is into the host block.
      buffers[v] = {Buffer::HostSlot, Placement{-1, slot.offset}};
      continue;
    }
    for (Value v : op.getResults()) {
      if (!isa<RankedTensorType>(v.getType()))
        continue; // !zero.pending: the buffer is its zero.wait's result
      if (inPlaceResults.contains(v)) {
        // (new_param, new_exp_avg, new_exp_avg_sq) update operands
        // (param, exp_avg, exp_avg_sq) = #0, #2, #3 of both AdamW ops.
        unsigned k = cast<OpResult>(v).getResultNumber();
        Value operand = op.getOperand(k == 0 ? 0 : k == 1 ? 2 : 3);
        buffers[v] = buffers.lookup(operand);
        continue;
      }
      if (StringRef sym = forwardedResults.lookup(v); !sym.empty()) {
        const StateInfo *s = mp.lookupState(&op, sym);
        if (!s)
          return failure();
        buffers[v] = {Buffer::Arena, s->place};
        continue;
      }
      if (auto span = stateSpans.find(v); span != stateSpans.end()) {
        buffers[v] = {Buffer::Arena, span->second};
        continue;
      }
      // A program constant lives in its slot of the constants arena
      // (zero-layout-states), computed once by init().
      if (isa<train::RopeTableOp>(op)) {
        auto slot =
            op.getAttrOfType<zero::SlotAttr>(zero::ZeroDialect::kSlotAttrName);
        if (!slot)
          return op.emitOpError("has no ")
                 << zero::ZeroDialect::kSlotAttrName
                 << " (its place in the constants arena); run "
                    "zero-layout-states first";
        buffers[v] = {Buffer::Arena, {kMemConsts, slot.getOffset()}};
        continue;
      }
      if (auto ce = dyn_cast<train::CrossEntropyFusedOp>(op);
          ce && v == ce.getGrad()) {
        buffers[v] = {Buffer::View, {}, ce.getLogits(), 0};
        continue;
      }
      if (auto slot = packSlots.find(v); slot != packSlots.end()) {
        buffers[v] = {Buffer::View, {}, slot->second.first,
                      slot->second.second};
        continue;
      }
      // A collective's result is written from its start on; a pack's flat
      // buffer from its first slot member's definition on.
      int64_t first = pos.lookup(&op);
      if (isa<zero::WaitOp, zero::FetchWaitOp>(op))
        if (Operation *start = op.getOperand(0).getDefiningOp())
          first = pos.lookup(start);
      if (auto f = packFirst.find(v); f != packFirst.end())
        first = std::min(first, f->second);
      request(v, isActivation(v) ? kMemActs : kMemTemps, first);
    }
    int64_t sb = scratchBytes(&op);
    if (sb < 0)
      return op.emitOpError("needs a kernel workspace larger than int64 "
                            "bytes (zrt/abi.h)");
    if (sb) {
      PlanBlock blk;
      blk.bytes = sb;
      blk.first = blk.last = pos.lookup(&op);
      blk.scratchOp = &op;
      blocks.push_back(blk);
      scratchLen[&op] = sb;
      scratchSize = std::max(scratchSize, sb);
    }
  }
  if (assign == Assign::BestFit)
    shareActivations();
  if (assign == Assign::Annotated && failed(checkStorage()))
    return failure();
  if (failed(assignOffsets()))
    return failure();
  for (int m : {kMemActs, kMemTemps})
    mp.arenaBytes[m] = std::max(mp.arenaBytes[m], bump[m]);
  if (role == Role::ForwardBackward)
    mp.forwardBackwardActivations = bump[kMemActs];
  mp.hostSlotBytes = std::max(mp.hostSlotBytes, hostBytes);
  return success();
}


} // namespace mlir::zero::plan
