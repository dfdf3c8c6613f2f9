//===- TrainToEmitC.cpp - convert-train-to-emitc --------------------------===//
///
/// \file
/// Lowers a training step (train + zero dialects) to the EmitC dialect; the
/// C++ that `mlir::emitc::translateToCpp` prints from the result implements
/// runtime/include/zrt/model.h. See Conversion/Passes.td for the contract
/// and docs/codegen.md for the buffer model and how to read the C++.
///
/// The pass plans first and emits second, per function:
///  1. placement: every tensor value gets a buffer — a view of a state
///     symbol (load without copy), a view of another value (reshape,
///     unpack), or a block in the activation or temporary arena (the
///     function's inputs too: token ids, targets and the optimizer's
///     scalars are copied into arena buffers at entry);
///  2. emission: one `emitc.call_opaque` of a zrt_* function per op (a few
///     for some), each wrapped in ZRT_CHECK, on pointers computed from the
///     arena base globals. Arena memory may be device memory: the host
///     never reads or writes it but through zrt_copy_to_device /
///     zrt_copy_to_host (docs/codegen.md, "The host/device boundary").
///
//===----------------------------------------------------------------------===//

#include "zero/Conversion/Passes.h"
#include "zero/Conversion/CompileInfo.h"
#include "zero/Analysis/Report.h"
#include "zero/Analysis/StepPlan.h"

#include "TrainToEmitC/OpEmitter.h"

#include "Train/TrainOps.h"
#include "Zero/ZeroLayout.h"
#include "Zero/ZeroOps.h"

#include "mlir/Dialect/EmitC/IR/EmitC.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace mlir::zero {
#define GEN_PASS_DEF_CONVERTTRAINTOEMITC
#include "zero/Conversion/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero::plan;

namespace {

//===----------------------------------------------------------------------===//
// Emission helpers
//===----------------------------------------------------------------------===//

using zero::emit::elementType;
using zero::emit::numel;
using zero::emit::rowsCols;
using zero::emit::tensorType;
/// ZRT_F32 / ZRT_BF16 / ZRT_F16 for collective and copy dtypes.
std::optional<StringRef> dtypeName(Type t) {
  if (std::optional<const char *> d = zero::narrow::dtype(t))
    return StringRef(*d);
  return std::nullopt;
}

/// A C string literal.
std::string cString(StringRef s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

using zero::emit::CArg;

/// The per-op emission patterns (lib/Conversion/TrainToEmitC/), looked up
/// before the cases of this file.
const zero::emit::OpEmitterSet &emitters() {
  static const zero::emit::OpEmitterSet set = [] {
    zero::emit::OpEmitterSet s;
    zero::emit::populateAllEmitters(s);
    return s;
  }();
  return set;
}

class ModuleLowering;

//===----------------------------------------------------------------------===//
// One function
//===----------------------------------------------------------------------===//

/// Prints one function from its plan (zero::plan::FunctionPlan, which it
/// only reads).
class FunctionLowering : public FunctionPlan, public zero::emit::EmitContext {
public:
  FunctionLowering(ModuleLowering &ml, func::FuncOp fn, Role role,
                   Assign assign = Assign::Bump);

  /// Emits the emitc.func (after plan()).
  LogicalResult emit(OpBuilder &mb, StringRef symbol);

  // zero::emit::EmitContext: what the per-op emitters may ask.
  Value ptr(Value tensor) override;
  Value scalar(Value tensor) override;
  Value scratch() override;
  void call(StringRef callee, ArrayRef<CArg> args) override;
  Attribute i64(int64_t v) override;
  Attribute f32(double v) override;
  Attribute f64(double v) override;
  Attribute opq(StringRef text) override;

private:
  /// `const void *const *`: an array model's inputs argument.
  Type inputsPtrType() {
    return emitc::PointerType::get(
        emitc::OpaqueType::get(fn.getContext(), "const void *const"));
  }
  // Emission helpers.
  Location loc() { return curLoc; }
  Value memBase(int mem);
  Value pointerAt(Placement p, Type elt);
  Value offsetPtr(Value p, int64_t elems);
  /// The runtime function for an f32 kernel name: its zrt_X_bf16 variant
  /// while the op being emitted runs natively in bf16.
  std::string kernel(StringRef f32Name) const {
    return (f32Name + (nativeBf16 ? "_bf16" : "")).str();
  }
  Value literal(Type t, StringRef text);
  /// The next `elems` 4-byte words of the op's planned scratch.
  Value scratchWords(int64_t elems);
  /// Calls `e` on `op` with the op's kernel scratch blocks to hand out.
  LogicalResult emitWith(const zero::emit::OpEmitter &e, Operation *op,
                         bool native);
  Value rankValue();
  /// `ZRT_CHECK(name(args...))` for the zrt.h collective `name` on `axis`:
  /// the axis-less form on the data axis, else its `_axis` form (`_start`
  /// kept last) with the axis first.
  void collective(StringRef name, zero::MeshAxis axis, ArrayRef<CArg> args);
  /// A `zrt_request` variable for a nonblocking collective; returns its
  /// address.
  Value request(Operation *start);
  Value statePtr(const StateInfo &s);
  Placement rootPlacement(Value v, bool &isArena);
  void comment(Operation *op, StringRef suffix = "");

  LogicalResult emitOp(Operation *op);
  LogicalResult emitCompute(Operation *op);
  LogicalResult emitReturn(func::ReturnOp op);
  LogicalResult emitStateLoad(Operation *op, StringRef sym);
  LogicalResult emitStateStore(Operation *op, Value value, StringRef sym,
                               bool accumulate);
  LogicalResult emitAdamWRun(Operation *op);
  LogicalResult emitAdamW(Operation *op, Value p, Value g, Value m, Value v,
                          Value lr, Value step, Value coef, Value finiteCheck,
                          double b1, double b2, double eps, double wd,
                          int group);

  ModuleLowering &ml;

  // Emission.
  OpBuilder b{fn.getContext()};
  Location curLoc = fn.getLoc();
  Block *body = nullptr;
  DenseMap<Value, Value> pointers;  ///< tensor -> emitted pointer.
  DenseMap<Value, Value> overrides; ///< bf16 tensor -> f32 scratch pointer.
  DenseMap<Value, Value> requests;  ///< !zero.pending -> zrt_request lvalue.
  DenseMap<Value, Value> hostScalars; ///< 0-D tensor -> its host copy.
  Value bases[kNumMem];
  Value rank;
  Operation *prologueEnd = nullptr; ///< Arena bases and the rank go before it.
  int64_t scratchCursor = 0;
  bool nativeBf16 = false; ///< The op being emitted calls zrt_X_bf16.
  /// The kernel scratch blocks (words) of the op being emitted, and the
  /// next one EmitContext::scratch hands out.
  SmallVector<int64_t, 2> kernelScratch;
  unsigned kernelScratchNext = 0;
};

//===----------------------------------------------------------------------===//
// The module
//===----------------------------------------------------------------------===//

/// Prints the module: the plan of ModulePlan, the tables, init, destroy,
/// the model description and the functions.
class ModuleLowering : public ModulePlan {
public:
  ModuleLowering(ModuleOp module, bool emitMain, bool emitComments)
      : ModulePlan(module), emitMain(emitMain), emitComments(emitComments) {}

  LogicalResult run();

  // Shared with FunctionLowering.
  bool emitMain, emitComments;
  OpBuilder globals{module.getContext()};
  unsigned numPermutations = 0;
  /// zero-report's analysis of the module, for the model's plan.
  zero::StepReport report;

  /// Emitted C type of an element type.
  Type cType(Type elt);
  Type ptrType(Type elt) { return emitc::PointerType::get(cType(elt)); }
  Type intType() { return emitc::OpaqueType::get(ctx, "int"); }
  /// Creates a static const int64_t array global; returns its name.
  std::string int64Array(StringRef prefix, ArrayRef<int64_t> values);
  /// The same as a static const uint8_t array.
  std::string uint8Array(StringRef prefix, ArrayRef<int64_t> values);

private:
  void emitPrologue(OpBuilder &mb);
  void emitTables(OpBuilder &mb);
  void emitInit(OpBuilder &mb);
  void emitDestroy(OpBuilder &mb);
  void emitModelDesc(OpBuilder &mb);

  /// describeCompiledStep of the IR before the rewrite (compile_info).
  std::string compileInfo;
  std::string functionSymbols[4];
};

FunctionLowering::FunctionLowering(ModuleLowering &ml, func::FuncOp fn,
                                   Role role, Assign assign)
    : FunctionPlan(ml, fn, role, assign), ml(ml) {}

//===----------------------------------------------------------------------===//
// ModuleLowering: declarations and description
//===----------------------------------------------------------------------===//

Type ModuleLowering::cType(Type elt) {
  if (elt.isBF16())
    return emitc::OpaqueType::get(ctx, "zrt_bf16");
  if (elt.isF16())
    return emitc::OpaqueType::get(ctx, "zrt_f16");
  if (elt.isInteger(32))
    return emitc::OpaqueType::get(ctx, "const int32_t");
  return elt; // f32, i64
}

std::string ModuleLowering::int64Array(StringRef prefix,
                                       ArrayRef<int64_t> values) {
  std::string name = llvm::formatv("zrt_{0}{1}", prefix, numPermutations).str();
  auto type = emitc::ArrayType::get({static_cast<int64_t>(values.size())},
                                    IntegerType::get(ctx, 64));
  auto init = DenseIntElementsAttr::get(
      RankedTensorType::get({static_cast<int64_t>(values.size())},
                            IntegerType::get(ctx, 64)),
      values);
  emitc::GlobalOp::create(globals, module.getLoc(), name, type, init,
                          /*extern=*/false, /*static=*/true, /*const=*/true);
  return name;
}

std::string ModuleLowering::uint8Array(StringRef prefix,
                                       ArrayRef<int64_t> values) {
  std::string name = llvm::formatv("zrt_{0}{1}", prefix, numPermutations).str();
  auto u8 = IntegerType::get(ctx, 8, IntegerType::Unsigned);
  int64_t n = static_cast<int64_t>(values.size());
  SmallVector<APInt> bits;
  for (int64_t v : values)
    bits.push_back(APInt(8, static_cast<uint64_t>(v)));
  emitc::GlobalOp::create(
      globals, module.getLoc(), name, emitc::ArrayType::get({n}, u8),
      DenseIntElementsAttr::get(RankedTensorType::get({n}, u8), bits),
      /*extern=*/false, /*static=*/true, /*const=*/true);
  return name;
}

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
  if (Value o = overrides.lookup(tensor))
    return o;
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

//===----------------------------------------------------------------------===//
// FunctionLowering: ops
//===----------------------------------------------------------------------===//

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

/// ZRT_SUM / ZRT_AVG / ZRT_MAX.
static StringRef reduceOpName(zero::ReduceKind kind) {
  switch (kind) {
  case zero::ReduceKind::sum:
    return "ZRT_SUM";
  case zero::ReduceKind::avg:
    return "ZRT_AVG";
  case zero::ReduceKind::max:
    return "ZRT_MAX";
  }
  return "ZRT_SUM";
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
  if (adamwInRuns.contains(op) || inSumSquaresRuns.contains(op))
    return success();
  if (adamwRuns.count(op))
    return emitAdamWRun(op);
  if (auto run = sumSquaresRuns.find(op); run != sumSquaresRuns.end()) {
    const SumSquaresRun &r = run->second;
    Value out = ptr(op->getResult(0));
    Type elt = elementType(r.first);
    call(zero::narrow::isNarrowFloat(elt) ? zero::narrow::fn("zrt_sum_squares", elt)
                                          : std::string("zrt_sum_squares"),
         {ptr(r.first), i64(r.total), out});
    if (r.base)
      call("zrt_add", {ptr(r.base), out, out, i64(1)});
    return success();
  }

  // Ops with a native bf16 kernel: one zrt_X_bf16 call on the bf16 tensors.
  if (zero::hasNativeBf16Kernel(op)) {
    nativeBf16 = true;
    LogicalResult r = emitCompute(op);
    nativeBf16 = false;
    return r;
  }

  // Other compute ops on bf16: widen to f32 scratch, compute, round back.
  if (train::isComputeOp(op)) {
    SmallVector<Value> narrow = bf16Tensors(op);
    for (Value v : narrow) {
      Value s = scratchWords(numel(v));
      if (v.getDefiningOp() != op)
        call(zero::narrow::castToF32(elementType(v)), {ptr(v), s, i64(numel(v))});
      overrides[v] = s;
    }
    if (failed(emitCompute(op)))
      return failure();
    for (Value v : narrow) {
      Value s = overrides[v];
      overrides.erase(v);
      if (v.getDefiningOp() == op)
        call(zero::narrow::castFromF32(elementType(v)), {s, ptr(v), i64(numel(v))});
    }
    return success();
  }

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
      .Case([&](train::ReshapeOp) { return success(); })
      .Case([&](zero::UnpackOp) { return success(); })
      .Case([&](train::FillOp o) {
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
          call("zrt_fill",
               {ptr(o.getResult()), f32(v), i64(numel(o.getResult()))});
        else
          call(zero::narrow::fn("zrt_fill", o.getType().getElementType()),
               {ptr(o.getResult()), f32(v), i64(numel(o.getResult()))});
        return success();
      })
      .Case([&](train::CastOp o) -> LogicalResult {
        if (castsInAdamW.contains(o))
          return success();
        Type from = elementType(o.getInput()),
             to = o.getType().getElementType();
        int64_t n = numel(o.getResult());
        if (from == to)
          call("zrt_copy_any", {ptr(o.getInput()), ptr(o.getResult()), i64(n),
                                opq(*dtypeName(to))});
        else if (from.isF32())
          call(zero::narrow::castFromF32(to),
               {ptr(o.getInput()), ptr(o.getResult()), i64(n)});
        else if (to.isF32())
          call(zero::narrow::castToF32(from),
               {ptr(o.getInput()), ptr(o.getResult()), i64(n)});
        else
          return o.emitOpError("casts between ")
                 << from << " and " << to
                 << " directly; the lowering casts to and from f32 only";
        return success();
      })
      .Case([&](train::BroadcastOp o) {
        int64_t n = numel(o.getInput());
        call("zrt_broadcast_leading",
             {ptr(o.getInput()), ptr(o.getResult()),
              i64(n ? numel(o.getResult()) / n : 0), i64(n),
              opq(*dtypeName(elementType(o.getInput())))});
        return success();
      })
      .Case([&](train::TransposeOp o) -> LogicalResult {
        ArrayRef<int64_t> perm = o.getPermutation();
        ArrayRef<int64_t> shape = tensorType(o.getInput()).getShape();
        Type elt = elementType(o.getInput());
        if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size()))) {
          call("zrt_copy_any",
               {ptr(o.getInput()), ptr(o.getResult()), i64(numel(o.getInput())),
                opq(*dtypeName(elt))});
          return success();
        }
        if (elt.isF32() && perm == ArrayRef<int64_t>{0, 2, 1, 3}) {
          call("zrt_permute_0213",
               {ptr(o.getInput()), ptr(o.getResult()), i64(shape[0]),
                i64(shape[1]), i64(shape[2]), i64(shape[3])});
          return success();
        }
        if (perm.size() > 8)
          return o.emitOpError("has rank ")
                 << perm.size()
                 << "; the CPU lowering permutes at most 8 "
                    "dimensions";
        std::string s = ml.int64Array("perm_shape", shape);
        std::string p = ml.int64Array("perm", perm);
        ++ml.numPermutations;
        call("zrt_permute",
             {ptr(o.getInput()), ptr(o.getResult()), i64(perm.size()), opq(s),
              opq(p), opq(*dtypeName(elt))});
        return success();
      })
      .Case([&](train::SplitOp o) {
        ArrayRef<int64_t> s = tensorType(o.getInput()).getShape();
        int64_t d = o.getDim();
        int64_t outer = 1, inner = 1;
        for (int64_t i = 0; i < d; ++i)
          outer *= s[i];
        for (int64_t i = d + 1; i < static_cast<int64_t>(s.size()); ++i)
          inner *= s[i];
        int64_t offset = 0;
        StringRef dt = *dtypeName(elementType(o.getInput()));
        for (Value r : o.getResults()) {
          int64_t size = tensorType(r).getDimSize(d);
          call("zrt_copy_2d", {offsetPtr(ptr(o.getInput()), offset * inner),
                               i64(s[d] * inner), ptr(r), i64(size * inner),
                               i64(outer), i64(size * inner), opq(dt)});
          offset += size;
        }
        return success();
      })
      .Case([&](train::ConcatOp o) {
        ArrayRef<int64_t> s = o.getType().getShape();
        int64_t d = o.getDim();
        int64_t outer = 1, inner = 1;
        for (int64_t i = 0; i < d; ++i)
          outer *= s[i];
        for (int64_t i = d + 1; i < static_cast<int64_t>(s.size()); ++i)
          inner *= s[i];
        int64_t offset = 0;
        StringRef dt = *dtypeName(o.getType().getElementType());
        for (Value in : o.getInputs()) {
          int64_t size = tensorType(in).getDimSize(d);
          call("zrt_copy_2d",
               {ptr(in), i64(size * inner),
                offsetPtr(ptr(o.getResult()), offset * inner),
                i64(s[d] * inner), i64(outer), i64(size * inner), opq(dt)});
          offset += size;
        }
        return success();
      })
      .Case([&](train::SumSquaresOp o) {
        Type elt = elementType(o.getInput());
        call(zero::narrow::isNarrowFloat(elt)
                 ? zero::narrow::fn("zrt_sum_squares", elt)
                 : std::string("zrt_sum_squares"),
             {ptr(o.getInput()), i64(numel(o.getInput())), ptr(o.getResult())});
        return success();
      })
      .Case([&](train::ClipCoefOp o) {
        call("zrt_clip_coef_scaled",
             {ptr(o.getSumSquares()), ptr(o.getGradScale()),
              f32(o.getMaxNorm().convertToDouble()), ptr(o.getCoef()),
              ptr(o.getNorm())});
        return success();
      })
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
      .Case([&](zero::AllGatherOp o) {
        collective("zrt_all_gather", o.getAxis(),
             {ptr(o.getShard()), ptr(o.getResult()), i64(numel(o.getShard())),
              opq(*dtypeName(elementType(o.getShard())))});
        return success();
      })
      .Case([&](zero::ReduceScatterOp o) {
        collective("zrt_reduce_scatter", o.getAxis(),
             {ptr(o.getInput()), ptr(o.getResult()), i64(numel(o.getResult())),
              opq(*dtypeName(elementType(o.getInput()))),
              opq(reduceOpName(o.getKind()))});
        return success();
      })
      .Case([&](zero::AllReduceOp o) {
        collective("zrt_all_reduce", o.getAxis(),
             {ptr(o.getInput()), ptr(o.getResult()), i64(numel(o.getResult())),
              opq(*dtypeName(elementType(o.getInput()))),
              opq(reduceOpName(o.getKind()))});
        return success();
      })
      .Case([&](zero::PackOp o) -> LogicalResult {
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
          // A member computed in its slot (decidePackSlots), or loaded
          // from a state the flat buffer spans (decideStateSpans), is there.
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
      })
      .Case([&](zero::SplitOp) { return success(); })
      .Case([&](zero::ConcatOp o) {
        Value out = ptr(o.getResult());
        int64_t offset = 0;
        StringRef dt = *dtypeName(o.getType().getElementType());
        for (Value in : o.getInputs()) {
          call("zrt_copy_any",
               {ptr(in), offsetPtr(out, offset), i64(numel(in)), opq(dt)});
          offset += numel(in);
        }
        return success();
      })
      .Case([&](zero::BucketInterleaveOp o) {
        // Rank r's block holds every group's slice r, back to back.
        int64_t n = o.getWorldSize(), row = numel(o.getResult()) / n;
        Value out = ptr(o.getResult());
        int64_t offset = 0;
        StringRef dt = *dtypeName(o.getType().getElementType());
        for (Value in : o.getInputs()) {
          int64_t slice = numel(in) / n;
          call("zrt_copy_2d", {ptr(in), i64(slice), offsetPtr(out, offset),
                               i64(row), i64(n), i64(slice), opq(dt)});
          offset += slice;
        }
        return success();
      })
      .Case([&](zero::BucketDeinterleaveOp o) {
        int64_t n = o.getWorldSize(), row = numel(o.getInput()) / n;
        Value in = ptr(o.getInput());
        int64_t offset = 0;
        StringRef dt = *dtypeName(elementType(o.getInput()));
        for (Value r : o.getResults()) {
          int64_t slice = numel(r) / n;
          call("zrt_copy_2d", {offsetPtr(in, offset), i64(row), ptr(r),
                               i64(slice), i64(n), i64(slice), opq(dt)});
          offset += slice;
        }
        return success();
      })
      .Case([&](zero::AllGatherStartOp o) {
        Value recv = ptr(waitOf(o)->getResult(0));
        collective("zrt_all_gather_start", o.getAxis(),
             {ptr(o.getShard()), recv, i64(numel(o.getShard())),
              opq(*dtypeName(elementType(o.getShard()))), request(o)});
        return success();
      })
      .Case([&](zero::ReduceScatterStartOp o) {
        Value result = waitOf(o)->getResult(0);
        collective("zrt_reduce_scatter_start", o.getAxis(),
             {ptr(o.getInput()), ptr(result), i64(numel(result)),
              opq(*dtypeName(elementType(o.getInput()))),
              opq(reduceOpName(o.getKind())), request(o)});
        return success();
      })
      .Case([&](zero::AllReduceStartOp o) {
        Value result = waitOf(o)->getResult(0);
        collective("zrt_all_reduce_start", o.getAxis(),
             {ptr(o.getInput()), ptr(result), i64(numel(result)),
              opq(*dtypeName(elementType(o.getInput()))),
              opq(reduceOpName(o.getKind())), request(o)});
        return success();
      })
      .Case([&](zero::WaitOp o) {
        Value lv = requests.lookup(o.getPending());
        Type reqT = emitc::OpaqueType::get(b.getContext(), "zrt_request");
        call("zrt_wait", {Value(emitc::LoadOp::create(b, loc(), reqT, lv))});
        return success();
      })
      .Case([&](zero::LocalShardOp o) {
        call("zrt_local_shard",
             {ptr(o.getInput()), ptr(o.getResult()), i64(numel(o.getResult())),
              rankValue(), opq(*dtypeName(elementType(o.getInput())))});
        return success();
      })
      .Case([&](func::ReturnOp o) { return emitReturn(o); })
      .Default([&](Operation *other) -> LogicalResult {
        // An op with an emitter that is not a compute op (a constant).
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

//===----------------------------------------------------------------------===//
// ModuleLowering: emission
//===----------------------------------------------------------------------===//

void ModuleLowering::emitPrologue(OpBuilder &mb) {
  Location loc = module.getLoc();
  emitc::VerbatimOp::create(
      mb, loc,
      "// Generated by zero (convert-train-to-emitc): the training step of "
      "model '" +
          modelName + "' implementing runtime/include/zrt/model.h.");
  emitc::IncludeOp::create(mb, loc, "cmath", /*is_standard_include=*/true);
  emitc::IncludeOp::create(mb, loc, "cstddef", /*is_standard_include=*/true);
  emitc::IncludeOp::create(mb, loc, "zrt/model.h", true);
  emitc::IncludeOp::create(mb, loc, "zrt/zrt.h", true);
  emitc::VerbatimOp::create(
      mb, loc,
      "// Returns the status of a failing runtime call from the step.\n"
      "#define ZRT_CHECK(call) do { int zrt_status_ = (call); if (zrt_status_ "
      "!= ZRT_OK) return zrt_status_; } while (0)");
  auto u8 =
      emitc::PointerType::get(IntegerType::get(ctx, 8, IntegerType::Unsigned));
  auto arena = emitc::OpaqueType::get(ctx, "zrt_arena");
  for (int m = 0; m < kNumMem; ++m) {
    if (!hasArena(m))
      continue;
    emitc::GlobalOp::create(mb, loc, std::string("zrt_arena_") + kMemName[m],
                            arena, emitc::OpaqueAttr::get(ctx, "NULL"), false,
                            true, false);
    emitc::GlobalOp::create(mb, loc, std::string("zrt_mem_") + kMemName[m], u8,
                            emitc::OpaqueAttr::get(ctx, "NULL"), false, true,
                            false);
  }
}

void ModuleLowering::emitTables(OpBuilder &mb) {
  Location loc = module.getLoc();
  auto i64 = IntegerType::get(ctx, 64);
  auto u8 = IntegerType::get(ctx, 8, IntegerType::Unsigned);
  for (auto [gi, g] : llvm::enumerate(groups)) {
    int64_t n = g.members.size();
    std::string prefix = llvm::formatv("zrt_group{0}_", gi).str();
    std::string names = "{";
    for (auto [i, m] : llvm::enumerate(g.members))
      names += (i ? ", " : "") + cString(m);
    names += "}";
    emitc::GlobalOp::create(
        mb, loc, prefix + "members",
        emitc::ArrayType::get(
            {n},
            emitc::PointerType::get(emitc::OpaqueType::get(ctx, "const char"))),
        emitc::OpaqueAttr::get(ctx, names), false, true, false);
    auto ints = [&](ArrayRef<int64_t> v) {
      return DenseIntElementsAttr::get(RankedTensorType::get({n}, i64), v);
    };
    emitc::GlobalOp::create(mb, loc, prefix + "offsets",
                            emitc::ArrayType::get({n}, i64), ints(g.offsets),
                            false, true, true);
    emitc::GlobalOp::create(mb, loc, prefix + "numels",
                            emitc::ArrayType::get({n}, i64), ints(g.numels),
                            false, true, true);
    SmallVector<APInt> decay;
    for (bool d : g.decay)
      decay.push_back(APInt(8, d ? 1 : 0));
    emitc::GlobalOp::create(
        mb, loc, prefix + "decay", emitc::ArrayType::get({n}, u8),
        DenseIntElementsAttr::get(RankedTensorType::get({n}, u8), decay), false,
        true, true);
  }
  if (!groups.empty()) {
    std::string text = "{";
    for (auto [gi, g] : llvm::enumerate(groups)) {
      std::string p = llvm::formatv("zrt_group{0}_", gi).str();
      text +=
          llvm::formatv("\n  {{{0}, {1}, {2}members, {2}offsets, "
                        "{2}numels, {2}decay, {3}, {4}},",
                        cString(g.name), g.members.size(), p, g.padded, g.shard)
              .str();
    }
    text += "\n}";
    emitc::GlobalOp::create(
        mb, loc, "zrt_groups",
        emitc::ArrayType::get({static_cast<int64_t>(groups.size())},
                              emitc::OpaqueType::get(ctx, "zrt_group_desc")),
        emitc::OpaqueAttr::get(ctx, text), false, true, true);
  }
  // Every parameter with its shape (model.h zrt_param_info), whatever its
  // storage.
  std::string infos = "{";
  int64_t numInfos = 0;
  for (auto p : module.getOps<train::ParamOp>()) {
    RankedTensorType t = p.getTensorType();
    std::string shape = "NULL";
    if (t.getRank() > 0) {
      shape = llvm::formatv("zrt_param{0}_shape", numInfos).str();
      emitc::GlobalOp::create(
          mb, loc, shape, emitc::ArrayType::get({t.getRank()}, i64),
          DenseIntElementsAttr::get(RankedTensorType::get({t.getRank()}, i64),
                                    t.getShape()),
          false, true, true);
    }
    infos +=
        llvm::formatv("\n  {{{0}, {1}, {2}, {3}},", cString(p.getSymName()),
                      *dtypeName(t.getElementType()),
                      t.getRank(), shape)
            .str();
    ++numInfos;
  }
  if (numInfos)
    emitc::GlobalOp::create(
        mb, loc, "zrt_params",
        emitc::ArrayType::get({numInfos},
                              emitc::OpaqueType::get(ctx, "zrt_param_info")),
        emitc::OpaqueAttr::get(ctx, infos + "\n}"), false, true, true);
  numParamInfos = numInfos;

  // An array model's inputs (model.h zrt_input_desc), in @forward's order.
  if (arrayInputs()) {
    std::string table = "{";
    for (auto [i, in] : llvm::enumerate(inputs)) {
      std::string shape = llvm::formatv("zrt_input{0}_shape", i).str();
      int64_t rank = in.type.getRank();
      emitc::GlobalOp::create(
          mb, loc, shape, emitc::ArrayType::get({rank}, i64),
          DenseIntElementsAttr::get(RankedTensorType::get({rank}, i64),
                                    in.type.getShape()),
          false, true, true);
      Type elt = in.type.getElementType();
      StringRef dtype = elt.isInteger(32)   ? "ZRT_I32"
                        : elt.isInteger(64) ? "ZRT_I64"
                                            : *dtypeName(elt);
      table += llvm::formatv("\n  {{{0}, {1}, {2}, {3}},", cString(in.name),
                             dtype, rank, shape)
                   .str();
    }
    emitc::GlobalOp::create(
        mb, loc, "zrt_inputs",
        emitc::ArrayType::get({static_cast<int64_t>(inputs.size())},
                              emitc::OpaqueType::get(ctx, "zrt_input_desc")),
        emitc::OpaqueAttr::get(ctx, table + "\n}"), false, true, true);
  }

  // The state table: data pointers are filled by init().
  std::string text = "{";
  int64_t count = 0;
  for (const StateInfo &s : states) {
    if (!s.hasStorage)
      continue;
    ++count;
    text +=
        llvm::formatv("\n  {{{0}, {1}, {2}, {3}, {4}, {5}, NULL},",
                      cString(s.name), s.kind,
                      *dtypeName(s.type.getElementType()),
                      s.type.getNumElements(), s.group >= 0 ? 1 : 0, s.group)
            .str();
  }
  text += "\n}";
  emitc::GlobalOp::create(
      mb, loc, "zrt_states",
      emitc::ArrayType::get({std::max<int64_t>(count, 1)},
                            emitc::OpaqueType::get(ctx, "zrt_state_desc")),
      emitc::OpaqueAttr::get(ctx,
                             count ? text : "{{NULL, 0, 0, 0, 0, -1, NULL}}"),
      false, true, false);
}

void ModuleLowering::emitInit(OpBuilder &mb) {
  Location loc = module.getLoc();
  OpBuilder b(ctx);
  auto fnOp = emitc::FuncOp::create(
      mb, loc, "zrt_gen_init",
      FunctionType::get(ctx, {IntegerType::get(ctx, 64, IntegerType::Unsigned)},
                        {intType()}));
  fnOp.setSpecifiersAttr(mb.getStrArrayAttr({"static"}));
  Block *body = fnOp.addEntryBlock();
  b.setInsertionPointToEnd(body);
  Value seed = body->getArgument(0);
  auto u8 =
      emitc::PointerType::get(IntegerType::get(ctx, 8, IntegerType::Unsigned));
  auto arenaT = emitc::OpaqueType::get(ctx, "zrt_arena");
  auto voidPtr = emitc::PointerType::get(emitc::OpaqueType::get(ctx, "void"));
  auto lit = [&](Type t, StringRef s) -> Value {
    return emitc::LiteralOp::create(b, loc, t, s);
  };
  auto check = [&](Value status) {
    emitc::CallOpaqueOp::create(b, loc, TypeRange{}, "ZRT_CHECK",
                                ValueRange{status});
  };
  auto verbatim = [&](const Twine &t) {
    if (emitComments)
      emitc::VerbatimOp::create(b, loc, t.str());
  };

  verbatim("// One arena per memory kind, allocated once (zero-filled).");
  Value memBase[kNumMem];
  for (int m = 0; m < kNumMem; ++m) {
    if (!hasArena(m))
      continue;
    Value arenaLv =
        emitc::GetGlobalOp::create(b, loc, emitc::LValueType::get(arenaT),
                                   std::string("zrt_arena_") + kMemName[m]);
    Value addr = emitc::AddressOfOp::create(
        b, loc, emitc::PointerType::get(arenaT), arenaLv);
    auto created = emitc::CallOpaqueOp::create(
        b, loc, TypeRange{intType()}, "zrt_arena_create", ValueRange{addr},
        b.getArrayAttr({b.getI64IntegerAttr(arenaBytes[m]),
                        emitc::OpaqueAttr::get(ctx, kMemEnum[m]),
                        b.getIndexAttr(0)}));
    check(created.getResult(0));
    Value arena = emitc::LoadOp::create(b, loc, arenaT, arenaLv);
    Value base =
        emitc::CallOpaqueOp::create(b, loc, TypeRange{voidPtr},
                                    "zrt_arena_base", ValueRange{arena})
            .getResult(0);
    Value baseU8 = emitc::CastOp::create(b, loc, u8, base);
    Value memLv =
        emitc::GetGlobalOp::create(b, loc, emitc::LValueType::get(u8),
                                   std::string("zrt_mem_") + kMemName[m]);
    emitc::AssignOp::create(b, loc, memLv, baseU8);
    memBase[m] = baseU8;
  }
  auto pointer = [&](Placement p, Type elt) -> Value {
    Value base = memBase[p.mem];
    if (p.offset)
      base = emitc::AddOp::create(
          b, loc, u8, base, lit(b.getI64Type(), std::to_string(p.offset)));
    return emitc::CastOp::create(b, loc, ptrType(elt), base);
  };

  verbatim("// Where each state lives (the driver reads zrt_states).");
  Value table = emitc::GetGlobalOp::create(
      b, loc,
      emitc::ArrayType::get(
          {std::max<int64_t>(
              1, llvm::count_if(states, [](auto &s) { return s.hasStorage; }))},
          emitc::OpaqueType::get(ctx, "zrt_state_desc")),
      "zrt_states");
  int64_t row = 0;
  for (const StateInfo &s : states) {
    if (!s.hasStorage)
      continue;
    Value idx = lit(emitc::SizeTType::get(ctx), std::to_string(row++));
    Value entry = emitc::SubscriptOp::create(
        b, loc,
        emitc::LValueType::get(emitc::OpaqueType::get(ctx, "zrt_state_desc")),
        table, ValueRange{idx});
    Value data = emitc::MemberOp::create(
        b, loc, emitc::LValueType::get(voidPtr), "data", entry);
    Value p = emitc::CastOp::create(b, loc, voidPtr,
                                    pointer(s.place, b.getF32Type()));
    emitc::AssignOp::create(b, loc, data, p);
  }

  // Parameter streams: zrt_param_seed(seed, name), one per parameter.
  llvm::StringMap<Value> seeds;
  auto seedOf = [&](StringRef name) -> Value {
    Value &v = seeds[name];
    if (!v)
      v = emitc::CallOpaqueOp::create(
              b, loc,
              TypeRange{IntegerType::get(ctx, 64, IntegerType::Unsigned)},
              "zrt_param_seed", ValueRange{seed},
              b.getArrayAttr({b.getIndexAttr(0),
                              emitc::OpaqueAttr::get(ctx, cString(name))}))
              .getResult(0);
    return v;
  };
  Value rank, tensorRank;
  auto rankTimes = [&](int64_t shard) -> Value {
    // Shards are over the data axis: the data rank d on a mesh.
    if (!rank)
      rank = tensorSize > 1
                 ? emitc::CallOpaqueOp::create(
                       b, loc, TypeRange{b.getI32Type()}, "zrt_axis_rank",
                       ValueRange{},
                       b.getArrayAttr(
                           {emitc::OpaqueAttr::get(ctx, "ZRT_AXIS_DATA")}))
                       .getResult(0)
                 : emitc::CallOpaqueOp::create(b, loc,
                                               TypeRange{b.getI32Type()},
                                               "zrt_rank", ValueRange{})
                       .getResult(0);
    Value r64 = emitc::CastOp::create(b, loc, b.getI64Type(), rank);
    return emitc::MulOp::create(b, loc, b.getI64Type(), r64,
                                lit(b.getI64Type(), std::to_string(shard)));
  };
  // Initializes `data` (flat elements [begin, begin + n)) from `param`,
  // which occupies [offset, offset + numel) of the flat layout.
  auto initSlice = [&](Value data, Type elt, Value begin, int64_t beginConst,
                       int64_t n, int64_t offset, train::ParamOp param) {
    train::InitAttr init = param.getInit();
    int kind = init.getKind() == train::InitKind::normal  ? 0
               : init.getKind() == train::InitKind::zeros ? 1
                                                          : 2;
    static constexpr const char *kinds[3] = {"ZRT_INIT_NORMAL",
                                             "ZRT_INIT_ZEROS", "ZRT_INIT_ONES"};
    SmallVector<Value> operands{data};
    SmallVector<Attribute> attrs{b.getIndexAttr(0),
                                 emitc::OpaqueAttr::get(ctx, *dtypeName(elt))};
    if (begin) {
      attrs.push_back(b.getIndexAttr(operands.size()));
      operands.push_back(begin);
    } else {
      attrs.push_back(b.getI64IntegerAttr(beginConst));
    }
    attrs.append({b.getI64IntegerAttr(n), b.getI64IntegerAttr(offset),
                  b.getI64IntegerAttr(param.getTensorType().getNumElements()),
                  emitc::OpaqueAttr::get(ctx, kinds[kind]),
                  b.getF32FloatAttr(static_cast<float>(init.getStdDev()))});
    attrs.push_back(b.getIndexAttr(operands.size()));
    operands.push_back(seedOf(param.getSymName()));
    auto cut = param->getAttrOfType<zero::TensorSplitAttr>(
        zero::ZeroDialect::kTensorSplitAttrName);
    if (cut) {
      // zrt_init_param_cut(data, dtype, begin, n, offset, outer, rows,
      // inner, blocks, parts, part, kind, std, seed): this tensor rank's
      // cut of the whole initialization.
      ArrayRef<int64_t> full = cut.getFull();
      int64_t outer = 1, inner = 1;
      for (int64_t i = 0; i < cut.getDim(); ++i)
        outer *= full[i];
      for (int64_t i = cut.getDim() + 1; i < static_cast<int64_t>(full.size());
           ++i)
        inner *= full[i];
      if (!tensorRank)
        tensorRank = emitc::CallOpaqueOp::create(
                         b, loc, TypeRange{b.getI32Type()}, "zrt_axis_rank",
                         ValueRange{},
                         b.getArrayAttr({emitc::OpaqueAttr::get(
                             ctx, "ZRT_AXIS_TENSOR")}))
                         .getResult(0);
      Value part = emitc::CastOp::create(b, loc, b.getI64Type(), tensorRank);
      // Replace the member's element count by the cut's view of the full
      // tensor; the initializer kind, std and seed follow.
      SmallVector<Attribute> cutAttrs(attrs.begin(), attrs.begin() + 5);
      cutAttrs.append({b.getI64IntegerAttr(outer),
                       b.getI64IntegerAttr(full[cut.getDim()]),
                       b.getI64IntegerAttr(inner),
                       b.getI64IntegerAttr(cut.getBlocks()),
                       b.getI64IntegerAttr(cut.getParts()),
                       b.getIndexAttr(operands.size())});
      cutAttrs.append(attrs.begin() + 6, attrs.end());
      operands.push_back(part);
      check(emitc::CallOpaqueOp::create(b, loc, TypeRange{intType()},
                                        "zrt_init_param_cut", operands,
                                        b.getArrayAttr(cutAttrs))
                .getResult(0));
      return;
    }
    check(emitc::CallOpaqueOp::create(b, loc, TypeRange{intType()},
                                      "zrt_init_param_slice", operands,
                                      b.getArrayAttr(attrs))
              .getResult(0));
  };

  verbatim("// Parameters from their initializers; master weights from the "
           "same streams; everything else stays 0.");
  for (const StateInfo &s : states) {
    if (!s.hasStorage)
      continue;
    Type elt = s.type.getElementType();
    int64_t n = s.type.getNumElements();
    if (auto p = dyn_cast<train::ParamOp>(s.op)) {
      initSlice(pointer(s.place, elt), elt, Value(), 0, n, 0, p);
    } else if (auto st = dyn_cast<train::StateOp>(s.op)) {
      if (s.kind == kStateMaster)
        if (auto p = params.lookup(st.getParam()))
          initSlice(pointer(s.place, elt), elt, Value(), 0, n, 0, p);
    } else if (s.group >= 0 &&
               (s.kind == kStateParam || s.kind == kStateMaster)) {
      const GroupInfo &g = groups[s.group];
      Value data = pointer(s.place, elt);
      Value begin = rankTimes(g.shard);
      for (auto [i, m] : llvm::enumerate(g.members))
        initSlice(data, elt, begin, 0, g.shard, g.offsets[i], params.lookup(m));
    }
  }

  // The program's constants, each slot once (zero-layout-states).
  llvm::SmallDenseSet<int64_t> computed;
  module.walk([&](train::RopeTableOp t) {
    auto slot =
        t->getAttrOfType<zero::SlotAttr>(zero::ZeroDialect::kSlotAttrName);
    if (!slot || !computed.insert(slot.getOffset()).second)
      return;
    if (computed.size() == 1)
      verbatim("// Program constants (RoPE cos/sin tables), computed once.");
    ArrayRef<int64_t> shape = t.getType().getShape(); // [T, D/2, 2]
    Value scaling = lit(emitc::OpaqueType::get(ctx, "const zrt_rope_scaling *"),
                        "NULL");
    if (t.hasLlama3Scaling()) {
      std::string name = llvm::formatv("zrt_rope_scaling{0}",
                                       slot.getOffset() / kAlign)
                             .str();
      // Before zrt_gen_init, which reads it; doubles printed exactly.
      OpBuilder gb(ctx);
      gb.setInsertionPoint(fnOp);
      char text[160];
      snprintf(text, sizeof(text), "{%.17g, %.17g, %.17g, %lld}",
               t.getFactor()->convertToDouble(),
               t.getLowFreqFactor()->convertToDouble(),
               t.getHighFreqFactor()->convertToDouble(),
               static_cast<long long>(*t.getOriginalMaxPositions()));
      emitc::GlobalOp::create(
          gb, loc, name, emitc::OpaqueType::get(ctx, "zrt_rope_scaling"),
          emitc::OpaqueAttr::get(ctx, text), false, true, true);
      Value g = emitc::GetGlobalOp::create(
          b, loc,
          emitc::LValueType::get(
              emitc::OpaqueType::get(ctx, "zrt_rope_scaling")),
          name);
      scaling = emitc::AddressOfOp::create(
          b, loc,
          emitc::PointerType::get(
              emitc::OpaqueType::get(ctx, "zrt_rope_scaling")),
          g);
    }
    Value table = pointer({kMemConsts, slot.getOffset()}, b.getF32Type());
    check(emitc::CallOpaqueOp::create(
              b, loc, TypeRange{intType()}, "zrt_rope_table",
              ValueRange{table, scaling},
              b.getArrayAttr({b.getIndexAttr(0), b.getI64IntegerAttr(shape[0]),
                              b.getI64IntegerAttr(shape[1]),
                              b.getF64FloatAttr(t.getTheta().convertToDouble()),
                              b.getIndexAttr(1)}))
              .getResult(0));
  });
  emitc::ReturnOp::create(b, loc, lit(intType(), "ZRT_OK"));
}

void ModuleLowering::emitDestroy(OpBuilder &mb) {
  Location loc = module.getLoc();
  auto fnOp = emitc::FuncOp::create(mb, loc, "zrt_gen_destroy",
                                    FunctionType::get(ctx, {}, {}));
  fnOp.setSpecifiersAttr(mb.getStrArrayAttr({"static"}));
  Block *body = fnOp.addEntryBlock();
  OpBuilder b = OpBuilder::atBlockEnd(body);
  auto arenaT = emitc::OpaqueType::get(ctx, "zrt_arena");
  auto u8 =
      emitc::PointerType::get(IntegerType::get(ctx, 8, IntegerType::Unsigned));
  for (int m = 0; m < kNumMem; ++m) {
    if (!hasArena(m))
      continue;
    Value lv =
        emitc::GetGlobalOp::create(b, loc, emitc::LValueType::get(arenaT),
                                   std::string("zrt_arena_") + kMemName[m]);
    Value a = emitc::LoadOp::create(b, loc, arenaT, lv);
    emitc::CallOpaqueOp::create(b, loc, TypeRange{}, "zrt_arena_destroy",
                                ValueRange{a});
    emitc::AssignOp::create(b, loc, lv,
                            emitc::LiteralOp::create(b, loc, arenaT, "NULL"));
    Value mem =
        emitc::GetGlobalOp::create(b, loc, emitc::LValueType::get(u8),
                                   std::string("zrt_mem_") + kMemName[m]);
    emitc::AssignOp::create(b, loc, mem,
                            emitc::LiteralOp::create(b, loc, u8, "NULL"));
  }
  emitc::ReturnOp::create(b, loc, Value());
}

/// The compile-time plan of the model description.
/// The zrt_plan_desc initializer: zero-report's per-rank model-state bytes
/// and bytes sent per collective kind (include/zero/Analysis/Report.h),
/// which the driver compares with what the runtime measures.
static std::string planInitializer(const zero::StepReport &r,
                                   const int64_t (&arenas)[kNumMem]) {
  auto list = [](llvm::ArrayRef<int64_t> v) {
    std::string out = "{";
    for (auto [i, x] : llvm::enumerate(v))
      out += (i ? ", " : "") + std::to_string(x);
    return out + "}";
  };
  SmallVector<int64_t> arenaList(arenas, arenas + kMemConsts);
  arenaList.push_back(0); // ZRT_MEM_COMM_BUFFERS: none
  if (arenas[kMemConsts])
    arenaList.push_back(arenas[kMemConsts]); // ZRT_MEM_CONSTANTS
  std::string flops;
  llvm::raw_string_ostream(flops) << llvm::format("%.17g", r.modelFlopsMicro);
  return "{" + list(r.stateBytes) + ", " + std::to_string(r.paddingBytes) +
         ", " + list(r.commBytesMicro) + ", " + list(r.commBytesStep) + ", " +
         list(arenaList) + ", /*model_flops_micro=*/" + flops + "}";
}

void ModuleLowering::emitModelDesc(OpBuilder &mb) {
  Location loc = module.getLoc();
  int64_t numStates =
      llvm::count_if(states, [](auto &s) { return s.hasStorage; });
  auto fnName = [&](int i) -> std::string {
    // An array model's forward functions take its inputs (the fields
    // after set_loss_scale).
    if (arrayInputs() && i < 2)
      return "NULL";
    return functions[i] ? functionSymbols[i] : "NULL";
  };
  std::string text =
      llvm::formatv(
          "{{\n  ZRT_MODEL_ABI_VERSION, {0}, {1}, {2},\n"
          "  /*batch=*/{3}, /*seq=*/{4}, /*vocab=*/{5}, /*padded_vocab=*/{6},\n"
          "  /*num_params=*/{7},\n  {8}, zrt_states, {9}, {10},\n"
          "  /*plan=*/{11},\n  zrt_gen_init, {12}, {13}, {14}, {15}, "
          "zrt_gen_destroy,\n  {16}, {17},\n  /*compile_info=*/{18}, {19}\n}",
          cString(modelName), worldSize, stage, batch, seq, vocab, paddedVocab,
          numParams, numStates, groups.size(),
          groups.empty() ? "NULL" : "zrt_groups",
          planInitializer(report, arenaBytes),
          fnName(0), fnName(1), fnName(2), fnName(3), numParamInfos,
          numParamInfos ? "zrt_params" : "NULL", cString(compileInfo),
          lossScaled ? "zrt_gen_set_loss_scale" : "NULL")
          .str();
  if (arrayInputs()) {
    // Appended after set_loss_scale: token models' initializers are
    // unchanged (and leave these zero).
    text.pop_back(); // "\n}"
    text.pop_back();
    text += llvm::formatv(",\n  /*num_inputs=*/{0}, zrt_inputs, {1}, {2}\n}",
                          inputs.size(), functionSymbols[0],
                          functions[1] ? functionSymbols[1] : "NULL")
                .str();
  }
  if (tensorSize > 1) {
    // Appended last (zero-tensor-parallel): other initializers leave it 0.
    text.pop_back(); // "\n}"
    text.pop_back();
    if (!arrayInputs())
      text += ",\n  /*num_inputs=*/0, NULL, NULL, NULL";
    text += llvm::formatv(",\n  /*tensor_size=*/{0}\n}", tensorSize).str();
  }
  auto descT = emitc::OpaqueType::get(ctx, "zrt_model_desc");
  emitc::GlobalOp::create(mb, loc, "zrt_model", descT,
                          emitc::OpaqueAttr::get(ctx, text), false, true,
                          false);

  // const zrt_model_desc *zrt_model_get(void) { return &zrt_model; }
  auto constDescPtr = emitc::PointerType::get(
      emitc::OpaqueType::get(ctx, "const zrt_model_desc"));
  auto get = emitc::FuncOp::create(mb, loc, "zrt_model_get",
                                   FunctionType::get(ctx, {}, {constDescPtr}));
  {
    OpBuilder b = OpBuilder::atBlockEnd(get.addEntryBlock());
    Value lv = emitc::GetGlobalOp::create(b, loc, emitc::LValueType::get(descT),
                                          "zrt_model");
    Value addr =
        emitc::AddressOfOp::create(b, loc, emitc::PointerType::get(descT), lv);
    emitc::ReturnOp::create(b, loc,
                            emitc::CastOp::create(b, loc, constDescPtr, addr));
  }
  if (!emitMain)
    return;
  // int main(int argc, char **argv) { return zrt_train_main(argc, argv,
  // zrt_model_get()); }
  auto argv = emitc::PointerType::get(
      emitc::PointerType::get(emitc::OpaqueType::get(ctx, "char")));
  auto mainFn = emitc::FuncOp::create(
      mb, loc, "main", FunctionType::get(ctx, {intType(), argv}, {intType()}));
  OpBuilder b = OpBuilder::atBlockEnd(mainFn.addEntryBlock());
  Value desc = emitc::CallOp::create(b, loc, get, ValueRange{}).getResult(0);
  Value r = emitc::CallOpaqueOp::create(
                b, loc, TypeRange{intType()}, "zrt_train_main",
                ValueRange{mainFn.getArgument(0), mainFn.getArgument(1), desc})
                .getResult(0);
  emitc::ReturnOp::create(b, loc, r);
}

LogicalResult ModuleLowering::run() {
  // The plan is computed on the IR before it is rewritten.
  FailureOr<zero::StepReport> analyzed = zero::analyzeStep(module);
  if (failed(analyzed))
    return failure();
  report = *analyzed;
  compileInfo = zero::describeCompiledStep(module);
  SmallVector<Operation *> old;
  for (Operation &op : module.getBody()->getOperations())
    old.push_back(&op);
  if (failed(analyze()))
    return failure();

  static constexpr Role roles[4] = {Role::Forward, Role::ForwardBackward,
                                    Role::OptimizerStep, Role::Logits};
  static constexpr const char *symbols[4] = {
      "zrt_gen_forward", "zrt_gen_forward_backward", "zrt_gen_optimizer_step",
      "zrt_gen_last_logits"};
  SmallVector<std::unique_ptr<FunctionLowering>> lowerings;
  for (int i = 0; i < 4; ++i) {
    functionSymbols[i] = symbols[i];
    if (!functions[i])
      continue;
    // zero-buffer-assign's offsets when it ran, else bump allocation.
    Assign assign = functions[i]->hasAttr(kArenaBytesAttr) ? Assign::Annotated
                                                            : Assign::Bump;
    lowerings.push_back(std::make_unique<FunctionLowering>(
        *this, functions[i], roles[i], assign));
    if (failed(lowerings.back()->plan()))
      return failure();
  }

  OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
  emitPrologue(mb);
  emitTables(mb);
  // Globals created while lowering functions (permutation tables) go here,
  // before the first function.
  auto anchor = emitc::VerbatimOp::create(mb, module.getLoc(), "");
  globals.setInsertionPoint(anchor);
  emitInit(mb);
  if (lossScaled) {
    // fp16-mixed: S for @forward_backward's %loss_scale (model.h
    // set_loss_scale; 1 until the driver sets it).
    emitc::GlobalOp::create(mb, module.getLoc(), "zrt_gen_loss_scale",
                            Float32Type::get(ctx), mb.getF32FloatAttr(1.0f),
                            false, true, false);
    emitc::VerbatimOp::create(
        mb, module.getLoc(),
        "static int zrt_gen_set_loss_scale(float scale) {\n"
        "  if (!(scale > 0.0f) || !std::isfinite(scale))\n"
        "    return ZRT_ERR_INVALID_ARGUMENT;\n"
        "  zrt_gen_loss_scale = scale;\n  return ZRT_OK;\n}");
  }
  int li = 0;
  for (int i = 0; i < 4; ++i) {
    if (!functions[i])
      continue;
    if (failed(lowerings[li++]->emit(mb, symbols[i])))
      return failure();
  }
  emitDestroy(mb);
  emitModelDesc(mb);
  anchor->erase();

  for (Operation *op : llvm::reverse(old))
    op->erase();
  // The layout described the states just lowered.
  module->removeAttr(zero::ZeroDialect::kStateArenaBytesAttrName);
  return success();
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

struct ConvertTrainToEmitCPass
    : public zero::impl::ConvertTrainToEmitCBase<ConvertTrainToEmitCPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleLowering lowering(getOperation(), emitMain, emitComments);
    if (failed(lowering.run()))
      signalPassFailure();
  }
};

} // namespace
