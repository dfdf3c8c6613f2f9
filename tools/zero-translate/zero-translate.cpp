//===- zero-translate.cpp - training-step IR to C++ -----------------------===//
///
/// \file
/// `zero-translate --emit-cpp model.mlir` lowers a training step (after
/// train-autodiff, train-optimizer and, optionally, zero-partition) with
/// `zero-place-progress`, `train-legalize-bf16`,
/// `zero-layout-states` (when the module has no state layout yet),
/// `train-fuse-adamw-cast` and `zero-fuse-state-runs` (unless
/// `--fuse-adamw-cast=false` / `--fuse-state-runs=false`),
/// `zero-buffer-assign` (when the module is not assigned yet; strategy
/// `--buffer-strategy`, bump by default) and `convert-train-to-emitc` and
/// prints the C++ of the model.h contract
/// through the upstream EmitC emitter (`mlir::emitc::translateToCpp`).
/// It is mlir-translate (MlirTranslateMain) with Zero's dialects and this
/// one translation; `--no-main` leaves out `int main`.
///
//===----------------------------------------------------------------------===//

#include "zero/InitAll.h"
#include "zero/Support/Version.h"
#include "zero/Conversion/Passes.h"
#include "zero/Transforms/Passes.h"

#include "Zero/ZeroDialect.h"

#include "mlir/Dialect/EmitC/IR/EmitC.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/Cpp/CppEmitter.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"

using namespace mlir;

static llvm::cl::opt<bool> noMain("no-main",
                                  llvm::cl::desc("--emit-cpp: do not emit "
                                                 "`int main` (link your own)"),
                                  llvm::cl::init(false));

static llvm::cl::opt<bool> fuseAdamWCast(
    "fuse-adamw-cast",
    llvm::cl::desc("--emit-cpp: run train-fuse-adamw-cast before the "
                   "lowering (default on)"),
    llvm::cl::init(true));

static llvm::cl::opt<bool> fuseStateRuns(
    "fuse-state-runs",
    llvm::cl::desc("--emit-cpp: run zero-fuse-state-runs before the "
                   "lowering (default on)"),
    llvm::cl::init(true));

static llvm::cl::opt<std::string> bufferStrategy(
    "buffer-strategy",
    llvm::cl::desc("--emit-cpp: zero-buffer-assign's strategy for a module "
                   "whose buffers are not assigned yet: bump (program "
                   "order, no reuse: offsets easy to follow; the default) "
                   "or best-fit (zero-compile's)"),
    llvm::cl::init("bump"));

int main(int argc, char **argv) {
  zero::setVersionPrinter("zero-translate");
  TranslateFromMLIRRegistration emitCpp(
      "emit-cpp",
      "lower a training step to EmitC (zero-place-progress, "
      "train-legalize-bf16, zero-layout-states when the module has no state "
      "layout, "
      "train-fuse-adamw-cast, zero-fuse-state-runs, zero-buffer-assign, "
      "convert-train-to-emitc) "
      "and print it as C++ "
      "implementing zrt/model.h",
      [](Operation *op, llvm::raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("zero-translate: expected a module");
        PassManager pm(op->getContext());
        // Where in-flight collectives advance is an IR decision too
        // (zero-place-progress, idempotent: a module that has its
        // zero.progress ops keeps them).
        pm.addPass(zero::createZeroPlaceProgress());
        // So is widening bf16/f16 ops without a native kernel to f32
        // (train-legalize-bf16, idempotent; functions with assigned
        // buffers are left alone).
        pm.addPass(zero::createTrainLegalizeBf16());
        // The state layout is an IR decision (zero-layout-states); a module
        // that does not carry one yet gets the pipeline's.
        if (!module->hasAttr(zero::ZeroDialect::kStateArenaBytesAttrName))
          pm.addPass(zero::createZeroLayoutStates());
        // So is folding the bf16 casts into AdamW (train-fuse-adamw-cast,
        // idempotent; functions with assigned buffers are left alone).
        if (fuseAdamWCast)
          pm.addPass(zero::createTrainFuseAdamWCast());
        if (fuseStateRuns)
          pm.addPass(zero::createZeroFuseStateRuns());
        // Storage is zero-buffer-assign's (the lowering only reads it):
        // run it when the module is not assigned yet.
        if (!module->hasAttr("zero.arena_bytes")) {
          zero::ZeroBufferAssignOptions assign;
          assign.strategy = bufferStrategy;
          pm.addPass(zero::createZeroBufferAssign(assign));
        }
        zero::ConvertTrainToEmitCOptions options;
        options.emitMain = !noMain;
        pm.addPass(zero::createConvertTrainToEmitC(options));
        if (failed(pm.run(module)))
          return failure();
        return emitc::translateToCpp(module, os);
      },
      [](DialectRegistry &registry) { zero::registerAllDialects(registry); });
  return failed(mlirTranslateMain(argc, argv, "Zero translation driver"));
}
