//===- Lowering.h - convert-train-to-emitc's function and module printers -===//
///
/// \file
/// The two printers of convert-train-to-emitc (private to this folder):
/// FunctionLowering prints one function from its plan
/// (zero::plan::FunctionPlan, lib/Analysis, which it only reads) —
/// Function.cpp holds the dispatch and the helpers, State.cpp the state
/// family (loads, stores, fills, packs and AdamW as the state plan placed
/// them); the per-op emitters of the other families are OpEmitters
/// (OpEmitter.h). ModuleLowering prints the module around them: the
/// tables, init, destroy, the model description and main (Module.cpp).
///
//===----------------------------------------------------------------------===//
#ifndef ZERO_LIB_CONVERSION_TRAINTOEMITC_LOWERING_H
#define ZERO_LIB_CONVERSION_TRAINTOEMITC_LOWERING_H

#include "OpEmitter.h"

#include "zero/Analysis/Report.h"
#include "zero/Analysis/StepPlan.h"

#include "Train/TrainOps.h"
#include "Zero/ZeroOps.h"

#include "mlir/Dialect/EmitC/IR/EmitC.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <string>

namespace mlir::zero::lowering {

using namespace mlir::zero::plan;
using zero::emit::CArg;
using zero::emit::dtypeName;
using zero::emit::elementType;
using zero::emit::numel;
using zero::emit::rowsCols;
using zero::emit::tensorType;

/// The per-op emitters of every family (OpEmitter.h), looked up by the
/// function printer.
const zero::emit::OpEmitterSet &emitters();

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
  Value offsetPtr(Value p, int64_t elems) override;
  void collective(StringRef name, zero::MeshAxis axis,
                  ArrayRef<CArg> args) override;
  Value request(Operation *start) override;
  Value pendingRequest(Value pending) override;
  Value offloadEvent(Operation *start) override;
  Value pendingOffload(Value pending) override;
  Value axisRank(zero::MeshAxis axis) override;
  SmallVector<std::string, 2> int64Tables(
      ArrayRef<std::pair<StringRef, ArrayRef<int64_t>>> tables) override;

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
  Value statePtr(const StateInfo &s);
  Placement rootPlacement(Value v, bool &isArena);
  void comment(Operation *op, StringRef suffix = "");

  LogicalResult emitOp(Operation *op);
  LogicalResult emitCompute(Operation *op);
  LogicalResult emitReturn(func::ReturnOp op);
  LogicalResult emitStateLoad(Operation *op, StringRef sym);
  LogicalResult emitStateStore(Operation *op, Value value, StringRef sym,
                               bool accumulate);
  // The state family (State.cpp): what the state plan decided, printed.
  LogicalResult emitAdamWRun(Operation *op);
  LogicalResult emitSumSquaresRun(Operation *op);
  LogicalResult emitFill(train::FillOp op);
  LogicalResult emitPack(zero::PackOp op);
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
  DenseMap<Value, Value> requests;  ///< !zero.pending -> zrt_request lvalue.
  DenseMap<Value, Value> hostScalars; ///< 0-D tensor -> its host copy.
  Value bases[kNumMem];
  Value rank, tensorRank;
  Value hostBase; ///< The pinned host block (P_a+cpu's host slots).
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


} // namespace mlir::zero::lowering

#endif // ZERO_LIB_CONVERSION_TRAINTOEMITC_LOWERING_H
