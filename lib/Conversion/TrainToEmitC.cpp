//===- TrainToEmitC.cpp - convert-train-to-emitc --------------------------===//
///
/// \file
/// Lowers a training step (train + zero dialects) to the EmitC dialect; the
/// C++ that `mlir::emitc::translateToCpp` prints from the result implements
/// runtime/include/zrt/model.h. See Conversion/Passes.td for the contract
/// and docs/codegen.md for the buffer model and how to read the C++.
///
/// The pass plans first and prints second, per function:
///  1. the plan (zero::plan::ModulePlan / FunctionPlan, lib/Analysis):
///     every tensor value gets a buffer — a view of a state symbol (load
///     without copy), a view of another value (reshape, unpack), or a block
///     in the activation or temporary arena (the function's inputs too:
///     token ids, targets and the optimizer's scalars are copied into arena
///     buffers at entry);
///  2. printing (TrainToEmitC/): one `emitc.call_opaque` of a zrt_*
///     function per op (a few for some), each wrapped in ZRT_CHECK, on
///     pointers computed from the arena base globals — the module by
///     ModuleLowering (Module.cpp), each function by FunctionLowering
///     (Function.cpp, the state family in State.cpp) and each op of the
///     other families by its OpEmitter (OpEmitter.h). Arena memory may be
///     device memory: the host never reads or writes it but through
///     zrt_copy_to_device / zrt_copy_to_host (docs/codegen.md, "The
///     host/device boundary").
///
//===----------------------------------------------------------------------===//

#include "zero/Conversion/Passes.h"

#include "TrainToEmitC/Lowering.h"

namespace mlir::zero {
#define GEN_PASS_DEF_CONVERTTRAINTOEMITC
#include "zero/Conversion/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using mlir::zero::lowering::ModuleLowering;

namespace {

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
