//===- Function.cpp - convert-train-to-emitc: one function --------------===//
///
/// \file
/// FunctionLowering (Lowering.h): the emitc.func of one function of the
/// step, printed from its plan — the dispatch of each op to the state
/// family (State.cpp) or to the emitters of the other families
/// (OpEmitter.h), and the helpers every emitter uses (pointers from the
/// planned buffers, scratch, host scalars, calls). Prints only: a compute
/// op on bf16/f16 without a native bf16 kernel is an error here
/// (train-legalize-bf16 widens it in the IR).
///
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "Train/NotCompute.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::zero::lowering;

const mlir::zero::emit::OpEmitterSet &mlir::zero::lowering::emitters() {
  static const zero::emit::OpEmitterSet set = [] {
    zero::emit::OpEmitterSet s;
    zero::emit::populateAllEmitters(s);
    return s;
  }();
  return set;
}

FunctionLowering::FunctionLowering(ModuleLowering &ml, func::FuncOp fn,
                                   Role role, Assign assign)
    : FunctionPlan(ml, fn, role, assign), ml(ml) {}

//===----------------------------------------------------------------------===//
// FunctionLowering: emission helpers
//===----------------------------------------------------------------------===//

Attribute FunctionLowering::i64(int64_t v) { return b.getI64IntegerAttr(v); }
Attribute FunctionLowering::f32(double v) {
  return b.getF32FloatAttr(static_cast<float>(v));
}
Attribute FunctionLowering::f64(double v) { return b.getF64FloatAttr(v); }
Attribute FunctionLowering::opq(StringRef text) {
  return emitc::OpaqueAttr::get(b.getContext(), text);
}

Value FunctionLowering::literal(Type t, StringRef text) {
  return emitc::LiteralOp::create(b, loc(), t, text);
}

void FunctionLowering::call(StringRef callee, ArrayRef<CArg> args) {
  SmallVector<Value> operands;
  SmallVector<Attribute> attrs;
  for (const CArg &a : args) {
    if (a.value) {
      attrs.push_back(b.getIndexAttr(operands.size()));
      operands.push_back(a.value);
    } else {
      attrs.push_back(a.attr);
    }
  }
  auto c = emitc::CallOpaqueOp::create(b, loc(), TypeRange{ml.intType()},
                                       callee, operands, b.getArrayAttr(attrs));
  emitc::CallOpaqueOp::create(b, loc(), TypeRange{}, "ZRT_CHECK",
                              ValueRange{c.getResult(0)});
}

Value FunctionLowering::memBase(int mem) {
  if (!bases[mem]) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(prologueEnd);
    auto u8 = emitc::PointerType::get(
        IntegerType::get(b.getContext(), 8, IntegerType::Unsigned));
    Value g =
        emitc::GetGlobalOp::create(b, fn.getLoc(), emitc::LValueType::get(u8),
                                   std::string("zrt_mem_") + kMemName[mem]);
    bases[mem] = emitc::LoadOp::create(b, fn.getLoc(), u8, g);
  }
  return bases[mem];
}

Value FunctionLowering::pointerAt(Placement p, Type elt) {
  Value base = memBase(p.mem);
  if (p.offset != 0)
    base =
        emitc::AddOp::create(b, loc(), base.getType(), base,
                             literal(b.getI64Type(), std::to_string(p.offset)));
  return emitc::CastOp::create(b, loc(), ml.ptrType(elt), base);
}

Value FunctionLowering::offsetPtr(Value p, int64_t elems) {
  if (elems == 0)
    return p;
  return emitc::AddOp::create(b, loc(), p.getType(), p,
                              literal(b.getI64Type(), std::to_string(elems)));
}

Value FunctionLowering::ptr(Value tensor) {
  if (Value p = pointers.lookup(tensor))
    return p;
  Buffer buf = buffers.lookup(tensor);
  Value p;
  switch (buf.kind) {
  case Buffer::Arena:
    p = pointerAt(buf.place, elementType(tensor));
    break;
  case Buffer::View:
    p = offsetPtr(ptr(buf.base), buf.elemOffset);
    break;
  case Buffer::HostSlot: {
    // The pinned host block of P_a+cpu (zrt_offload_host_create in init).
    if (!hostBase) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(prologueEnd);
      auto u8 = emitc::PointerType::get(
          IntegerType::get(b.getContext(), 8, IntegerType::Unsigned));
      Value base =
          emitc::CallOpaqueOp::create(
              b, fn.getLoc(),
              TypeRange{emitc::PointerType::get(
                  emitc::OpaqueType::get(b.getContext(), "void"))},
              "zrt_offload_host_base", ValueRange{})
              .getResult(0);
      hostBase = emitc::CastOp::create(b, fn.getLoc(), u8, base);
    }
    Value base = hostBase;
    if (buf.place.offset != 0)
      base = emitc::AddOp::create(
          b, loc(), base.getType(), base,
          literal(b.getI64Type(), std::to_string(buf.place.offset)));
    p = emitc::CastOp::create(b, loc(), ml.ptrType(elementType(tensor)), base);
    break;
  }
  case Buffer::None:
    llvm_unreachable("tensor without a buffer");
  }
  pointers[tensor] = p;
  return p;
}

Placement FunctionLowering::rootPlacement(Value v, bool &isArena) {
  Buffer buf = buffers.lookup(v);
  int64_t extra = 0;
  while (buf.kind == Buffer::View) {
    extra += buf.elemOffset * elementBytes(elementType(buf.base));
    buf = buffers.lookup(buf.base);
  }
  isArena = buf.kind == Buffer::Arena;
  Placement p = buf.place;
  p.offset += extra;
  return p;
}

Value FunctionLowering::scratch() {
  if (kernelScratchNext >= kernelScratch.size())
    llvm::report_fatal_error(
        "convert-train-to-emitc: an emitter asked for more scratch blocks "
        "than zero::kernelScratchWords declares");
  return scratchWords(kernelScratch[kernelScratchNext++]);
}

Value FunctionLowering::scratchWords(int64_t elems) {
  Placement p{kMemTemps, scratchBase + scratchCursor};
  scratchCursor += alignUp(std::max<int64_t>(elems, 1) * 4);
  if (scratchCursor > scratchSize || scratchBase < 0)
    llvm::report_fatal_error(
        "convert-train-to-emitc: scratch plan out of sync");
  return pointerAt(p, b.getF32Type());
}

Value FunctionLowering::scalar(Value tensor) {
  // The optimizer step's scalar arguments are host values already.
  for (auto [which, irArg] : scalarArgs)
    if (irArg == tensor && which != kLossScaleArg)
      return body->getArgument(which);
  if (Value v = hostScalars.lookup(tensor))
    return v;
  // Anything else lives in an arena: copy it to a host local.
  Value p = ptr(tensor);
  Type elt = cast<emitc::PointerType>(p.getType()).getPointee();
  Value lv = emitc::VariableOp::create(b, loc(), emitc::LValueType::get(elt),
                                       opq("0"));
  Value addr =
      emitc::AddressOfOp::create(b, loc(), emitc::PointerType::get(elt), lv);
  call("zrt_copy_to_host", {addr, p, i64(elementBytes(elementType(tensor)))});
  Value v = emitc::LoadOp::create(b, loc(), elt, lv);
  hostScalars[tensor] = v;
  return v;
}

Value FunctionLowering::rankValue() {
  if (!rank) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(prologueEnd);
    // Shards are over the data axis: the data rank d on a mesh.
    rank = ml.tensorSize > 1
               ? emitc::CallOpaqueOp::create(
                     b, fn.getLoc(), TypeRange{b.getI32Type()},
                     "zrt_axis_rank", ValueRange{},
                     b.getArrayAttr({opq("ZRT_AXIS_DATA")}))
                     .getResult(0)
               : emitc::CallOpaqueOp::create(b, fn.getLoc(),
                                             TypeRange{b.getI32Type()},
                                             "zrt_rank", ValueRange{})
                     .getResult(0);
  }
  return rank;
}

Value FunctionLowering::axisRank(zero::MeshAxis axis) {
  if (axis == zero::MeshAxis::data)
    return rankValue();
  if (!tensorRank) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(prologueEnd);
    tensorRank = emitc::CallOpaqueOp::create(
                     b, fn.getLoc(), TypeRange{b.getI32Type()},
                     "zrt_axis_rank", ValueRange{},
                     b.getArrayAttr({opq("ZRT_AXIS_TENSOR")}))
                     .getResult(0);
  }
  return tensorRank;
}

void FunctionLowering::collective(StringRef name, zero::MeshAxis axis,
                                  ArrayRef<CArg> args) {
  if (axis == zero::MeshAxis::data)
    return call(name, args);
  bool start = name.consume_back("_start");
  std::string callee = (name + "_axis" + (start ? "_start" : "")).str();
  SmallVector<CArg> withAxis{opq("ZRT_AXIS_TENSOR")};
  withAxis.append(args.begin(), args.end());
  call(callee, withAxis);
}

Value FunctionLowering::statePtr(const StateInfo &s) {
  return pointerAt(s.place, s.type.getElementType());
}

void FunctionLowering::comment(Operation *op, StringRef suffix) {
  if (!ml.emitComments)
    return;
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "// " << op->getName();
  if (auto sym = op->getAttrOfType<FlatSymbolRefAttr>("name"))
    os << " @" << sym.getValue();
  if (op->getNumResults()) {
    os << " -> ";
    llvm::interleaveComma(op->getResultTypes(), os);
  }
  os << suffix;
  if (auto name = dyn_cast<NameLoc>(op->getLoc()))
    os << "  [" << name.getName().getValue() << "]";
  emitc::VerbatimOp::create(b, loc(), os.str());
}

Value FunctionLowering::pendingRequest(Value pending) {
  Value lv = requests.lookup(pending);
  Type reqT = emitc::OpaqueType::get(b.getContext(), "zrt_request");
  return emitc::LoadOp::create(b, loc(), reqT, lv);
}

SmallVector<std::string, 2> FunctionLowering::int64Tables(
    ArrayRef<std::pair<StringRef, ArrayRef<int64_t>>> tables) {
  SmallVector<std::string, 2> names;
  for (auto [prefix, values] : tables)
    names.push_back(ml.int64Array(prefix, values));
  ++ml.numPermutations;
  return names;
}

Value FunctionLowering::offloadEvent(Operation *start) {
  // zrt_offload ev = NULL; ... &ev
  Type evT = emitc::OpaqueType::get(b.getContext(), "zrt_offload");
  Value lv = emitc::VariableOp::create(b, loc(), emitc::LValueType::get(evT),
                                       opq("NULL"));
  requests[start->getResult(0)] = lv;
  return emitc::AddressOfOp::create(b, loc(), emitc::PointerType::get(evT), lv);
}

Value FunctionLowering::pendingOffload(Value pending) {
  Value lv = requests.lookup(pending);
  Type evT = emitc::OpaqueType::get(b.getContext(), "zrt_offload");
  return emitc::LoadOp::create(b, loc(), evT, lv);
}

Value FunctionLowering::request(Operation *start) {
  // zrt_request req = NULL; ... &req
  Type reqT = emitc::OpaqueType::get(b.getContext(), "zrt_request");
  Value lv = emitc::VariableOp::create(b, loc(), emitc::LValueType::get(reqT),
                                       opq("NULL"));
  requests[start->getResult(0)] = lv;
  return emitc::AddressOfOp::create(b, loc(), emitc::PointerType::get(reqT),
                                    lv);
}

LogicalResult FunctionLowering::emitWith(const zero::emit::OpEmitter &e,
                                         Operation *op, bool native) {
  kernelScratch = zero::kernelScratchWords(op, native);
  kernelScratchNext = 0;
  return e.emit(op, *this, native);
}

LogicalResult FunctionLowering::emitCompute(Operation *op) {
  if (const zero::emit::OpEmitter *e = emitters().lookup(op))
    return emitWith(*e, op, nativeBf16);
  return op->emitOpError("is not supported by convert-train-to-emitc");
}

LogicalResult FunctionLowering::emitOp(Operation *op) {
  curLoc = op->getLoc();
  // zero-place-progress put it here; printed without a comment.
  if (isa<zero::ProgressOp>(op)) {
    call("zrt_comm_progress", {});
    return success();
  }
  scratchCursor = 0;
  scratchBase = scratchAt.lookup_or(op, -1);
  scratchSize = scratchLen.lookup(op);
  if (!isa<train::ReshapeOp, zero::UnpackOp, zero::SplitOp, train::StoreOp,
           zero::ShardStoreOp>(op) &&
      !(isLoad(op) && !copyLoads.contains(op)))
    comment(op, castsInAdamW.contains(op) ? " (written by the AdamW call)"
                : isa<train::CrossEntropyFusedOp>(op)
                    ? " (the gradient over the logits)"
                : fillRuns.count(op) ? " (one fill over adjacent states)"
                : fillsInRuns.contains(op)
                    ? " (zeroed by a later fill of adjacent states)"
                : adamwRuns.count(op) ? " (one AdamW call over adjacent states)"
                : adamwInRuns.contains(op)
                    ? " (updated by an earlier AdamW call of adjacent states)"
                : sumSquaresRuns.count(op)
                    ? " (one sum of squares over adjacent states)"
                : inSumSquaresRuns.contains(op)
                    ? " (in a later sum of squares over adjacent states)"
                    : "");
  // Printed by another op of its run (or by the AdamW that writes it).
  if (adamwInRuns.contains(op) || inSumSquaresRuns.contains(op) ||
      castsInAdamW.contains(op))
    return success();
  if (adamwRuns.count(op))
    return emitAdamWRun(op);
  if (sumSquaresRuns.count(op))
    return emitSumSquaresRun(op);

  // train-legalize-bf16 widened every compute op without a native bf16
  // kernel to f32 (explicit train.cast ops, planned like any tensor); the
  // lowering prints kernels on the types it is given and widens nothing.
  if (zero::needsF32Widening(op))
    return op->emitOpError(
        "has bf16/f16 tensors but no native bf16 kernel; run "
        "train-legalize-bf16 (before zero-buffer-assign) to widen it "
        "to f32");
  if (train::isComputeOp(op)) {
    // A native bf16 kernel: one zrt_X_bf16 call on the bf16 tensors.
    nativeBf16 = zero::hasNativeBf16Kernel(op);
    LogicalResult r = emitCompute(op);
    nativeBf16 = false;
    return r;
  }

  // The state family (State.cpp), then the other families' emitters.
  return TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](train::LoadOp o) { return emitStateLoad(o, o.getName()); })
      .Case([&](zero::ShardLoadOp o) { return emitStateLoad(o, o.getName()); })
      .Case([&](train::StoreOp o) {
        return emitStateStore(o, o.getValue(), o.getName(), false);
      })
      .Case([&](zero::ShardStoreOp o) {
        return emitStateStore(o, o.getValue(), o.getName(), false);
      })
      .Case([&](train::AccumulateOp o) {
        return emitStateStore(o, o.getValue(), o.getName(), true);
      })
      .Case([&](zero::ShardAccumulateOp o) {
        return emitStateStore(o, o.getValue(), o.getName(), true);
      })
      .Case([&](train::FillOp o) { return emitFill(o); })
      .Case([&](zero::PackOp o) { return emitPack(o); })
      .Case([&](train::AdamWOp o) {
        return emitAdamW(o, o.getParam(), o.getGrad(), o.getExpAvg(),
                         o.getExpAvgSq(), o.getLr(), o.getStep(), o.getCoef(),
                         o.getFiniteCheck(), o.getBeta1().convertToDouble(),
                         o.getBeta2().convertToDouble(),
                         o.getEps().convertToDouble(),
                         o.getWeightDecay().convertToDouble(), -1);
      })
      .Case([&](zero::ShardAdamWOp o) -> LogicalResult {
        auto g = ml.groupIndex.find(o.getGroup());
        if (g == ml.groupIndex.end())
          return o.emitOpError("refers to @")
                 << o.getGroup() << ", which is not a zero.group";
        return emitAdamW(o, o.getParam(), o.getGrad(), o.getExpAvg(),
                         o.getExpAvgSq(), o.getLr(), o.getStep(), o.getCoef(),
                         o.getFiniteCheck(), o.getBeta1().convertToDouble(),
                         o.getBeta2().convertToDouble(),
                         o.getEps().convertToDouble(),
                         o.getWeightDecay().convertToDouble(), g->second);
      })
      .Case([&](func::ReturnOp o) { return emitReturn(o); })
      .Default([&](Operation *other) -> LogicalResult {
        // Not a compute op: shape, collective and optimizer emitters.
        if (const zero::emit::OpEmitter *e = emitters().lookup(other))
          return emitWith(*e, other, /*native=*/false);
        return other->emitOpError("is not supported by convert-train-to-emitc");
      });
}

LogicalResult FunctionLowering::emitReturn(func::ReturnOp op) {
  Value result = op.getOperand(0);
  switch (role) {
  case Role::Forward:
  case Role::ForwardBackward:
  case Role::OptimizerStep: {
    // The loss / gradient norm: device -> the caller's host float.
    Value out = body->getArgument(role == Role::OptimizerStep ? 3
                                  : ml.arrayInputs()          ? 1
                                                              : 2);
    call("zrt_copy_to_host", {out, ptr(result), i64(4)});
    return success();
  }
  case Role::Logits: {
    // The last position of every row: [B, T, Vp] -> [B, Vp].
    ArrayRef<int64_t> s = tensorType(result).getShape();
    int64_t B = s[0], T = s[1], V = s[2];
    // Gathered into scratch on the device, then copied to the caller's host
    // buffer [B, Vp] f32.
    Value out = body->getArgument(1);
    Value src = offsetPtr(ptr(result), (T - 1) * V);
    Value last;
    if (elementType(result).isF32()) {
      last = scratchWords(B * V);
      call("zrt_copy_2d",
           {src, i64(T * V), last, i64(V), i64(B), i64(V), opq("ZRT_F32")});
    } else {
      Type elt = elementType(result);
      Value rows = scratchWords((B * V + 1) / 2); // B·V 16-bit elements
      call("zrt_copy_2d",
           {src, i64(T * V), rows, i64(V), i64(B), i64(V),
            opq(*dtypeName(elt))});
      Value asNarrow = emitc::CastOp::create(b, loc(), ml.ptrType(elt), rows);
      last = scratchWords(B * V);
      call(zero::narrow::castToF32(elt), {asNarrow, last, i64(B * V)});
    }
    call("zrt_copy_to_host", {out, last, i64(B * V * 4)});
    return success();
  }
  }
  return success();
}

LogicalResult FunctionLowering::emit(OpBuilder &mb, StringRef symbol) {
  MLIRContext *ctx = fn.getContext();
  auto idsPtr =
      emitc::PointerType::get(emitc::OpaqueType::get(ctx, "const int32_t"));
  auto f32Ptr = emitc::PointerType::get(Float32Type::get(ctx));
  SmallVector<Type> args;
  switch (role) {
  case Role::Forward:
  case Role::ForwardBackward:
    // An array model's (const void *const *inputs, float *loss).
    if (ml.arrayInputs())
      args = {inputsPtrType(), f32Ptr};
    else
      args = {idsPtr, idsPtr, f32Ptr};
    break;
  case Role::OptimizerStep:
    args = {Float32Type::get(ctx), IntegerType::get(ctx, 64),
            Float32Type::get(ctx), f32Ptr};
    break;
  case Role::Logits:
    args = {idsPtr, f32Ptr};
    break;
  }
  auto func = emitc::FuncOp::create(
      mb, fn.getLoc(), symbol, FunctionType::get(ctx, args, {ml.intType()}));
  func.setSpecifiersAttr(mb.getStrArrayAttr({"static"}));
  body = func.addEntryBlock();
  b.setInsertionPointToEnd(body);
  if (ml.emitComments)
    emitc::VerbatimOp::create(
        b, fn.getLoc(),
        llvm::formatv("// @{0}: {1} bytes of activations, {2} bytes of "
                      "temporaries",
                      fn.getSymName(), bump[kMemActs], bump[kMemTemps])
            .str());

  // Arena bases (loaded once) and the rank are inserted before this marker.
  prologueEnd = emitc::VerbatimOp::create(b, fn.getLoc(), "");

  // Host inputs cross into their arena buffers (zrt_copy_to_device): the
  // token ids / targets, and the optimizer step's scalar arguments (through
  // a local, whose address the copy takes).
  // (The kernels read int32 buffers as `const int32_t *`: cast for the copy.)
  auto voidPtr = emitc::PointerType::get(emitc::OpaqueType::get(ctx, "void"));
  for (BlockArgument a : inputArgs) {
    Value source = body->getArgument(a.getArgNumber());
    if (ml.arrayInputs()) {
      // An array model's input i is inputs[i].
      auto elt = emitc::OpaqueType::get(ctx, "const void *const");
      Value index = emitc::LiteralOp::create(
          b, fn.getLoc(), emitc::OpaqueType::get(ctx, "size_t"),
          std::to_string(a.getArgNumber()));
      Value slot = emitc::SubscriptOp::create(
          b, fn.getLoc(), emitc::LValueType::get(elt), body->getArgument(0),
          ValueRange{index});
      source = emitc::LoadOp::create(b, fn.getLoc(), elt, slot);
    }
    call("zrt_copy_to_device",
         {Value(emitc::CastOp::create(b, fn.getLoc(), voidPtr, ptr(a))),
          source, i64(tensorBytes(tensorType(a)))});
  }
  for (auto [which, irArg] : scalarArgs) {
    if (irArg.use_empty())
      continue;
    Value p = ptr(irArg);
    Type elt = cast<emitc::PointerType>(p.getType()).getPointee();
    Value lv = emitc::VariableOp::create(b, fn.getLoc(),
                                         emitc::LValueType::get(elt), opq("0"));
    // The loss scale is the generated global set_loss_scale writes.
    Value source =
        which == kLossScaleArg
            ? Value(emitc::LoadOp::create(
                  b, fn.getLoc(), elt,
                  emitc::GetGlobalOp::create(b, fn.getLoc(),
                                             emitc::LValueType::get(elt),
                                             kLossScaleGlobal)))
            : Value(body->getArgument(which));
    emitc::AssignOp::create(b, fn.getLoc(), lv, source);
    Value addr = emitc::AddressOfOp::create(b, fn.getLoc(),
                                            emitc::PointerType::get(elt), lv);
    call("zrt_copy_to_device",
         {p, addr, i64(elementBytes(elementType(irArg)))});
  }

  for (Operation &op : fn.getBody().front())
    if (failed(emitOp(&op)))
      return failure();
  curLoc = fn.getLoc();
  emitc::ReturnOp::create(b, fn.getLoc(), literal(ml.intType(), "ZRT_OK"));
  prologueEnd->erase();
  return success();
}
