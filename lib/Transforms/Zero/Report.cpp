//===- Report.cpp - zero-report: print the per-rank plan ------------------===//

#include "zero/Analysis/Report.h"
#include "zero/Analysis/StateLayout.h"
#include "zero/Analysis/BufferPlan.h"
#include "zero/Transforms/Passes.h"

#include "Train/TrainDialect.h"
#include "Zero/ZeroDialect.h"
#include "Zero/ZeroOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROREPORT
#include "zero/Transforms/ZeroPasses.h.inc"
} // namespace mlir::zero

using namespace mlir;

/// Undoes zero-offload-checkpoints on a copy of the step (P_a+cpu): each
/// fetched slice's uses read the device slice again and the four copy ops
/// go, so the plan keeps the slices in the activation arena; the
/// zero.storage records of the copy are dropped (it is planned afresh).
static void keepSlicesOnDevice(ModuleOp module) {
  SmallVector<zero::FetchWaitOp> fetches;
  module.walk([&](zero::FetchWaitOp w) { fetches.push_back(w); });
  for (zero::FetchWaitOp back : fetches) {
    auto fetch = back.getPending().getDefiningOp<zero::FetchStartOp>();
    auto host = fetch.getHost().getDefiningOp<zero::OffloadWaitOp>();
    auto start = host.getPending().getDefiningOp<zero::OffloadStartOp>();
    back.getResult().replaceAllUsesWith(start.getInput());
    back->erase();
    fetch->erase();
    host->erase();
    start->erase();
  }
  module.walk([](Operation *op) {
    op->removeAttr(zero::ZeroDialect::kStorageAttrName);
    op->removeAttr(zero::ZeroDialect::kScratchAttrName);
  });
}

namespace {
struct ZeroReportPass : public zero::impl::ZeroReportBase<ZeroReportPass> {
  using Base::Base;

  /// Partitions copies of the (unpartitioned) step at stages 0-3 and draws
  /// their per-rank model states.
  LogicalResult writeChart(ModuleOp module) {
    if (module->hasAttr(zero::kStageAttr))
      return module.emitError("zero-report: svg needs the training step "
                              "before zero-partition (it partitions copies at "
                              "every stage)");
    int64_t n = svgWorldSize;
    // A tensor-parallel step partitions over N_d = n / M: n must hold
    // whole tensor groups, and the mesh's N_d when it is fixed.
    if (auto mesh = module->getAttrOfType<zero::MeshAttr>(
            zero::ZeroDialect::kMeshAttrName)) {
      if (n % mesh.getTensor() != 0)
        return module.emitError("zero-report: svg-world-size ")
               << n << " is not a multiple of the mesh's tensor size "
               << mesh.getTensor();
      if (mesh.getData() != 0 && mesh.getData() * mesh.getTensor() != n)
        return module.emitError("zero-report: svg-world-size ")
               << n << " differs from the mesh's " << mesh.getData() << " x "
               << mesh.getTensor() << " ranks";
    }
    SmallVector<zero::StepReport, 4> reports;
    for (int stage = 0; stage <= 3; ++stage) {
      OwningOpRef<ModuleOp> copy = cast<ModuleOp>(module->clone());
      PassManager pm(module.getContext());
      std::string pipeline = llvm::formatv(
          "zero-partition{{stage={0} world-size={1}}", stage, n);
      if (failed(parsePassPipeline(pipeline, pm)) || failed(pm.run(*copy)))
        return failure();
      FailureOr<zero::StepReport> r = zero::analyzeStep(*copy);
      if (failed(r))
        return failure();
      reports.push_back(*r);
    }
    std::error_code ec;
    llvm::raw_fd_ostream os(svgFile, ec, llvm::sys::fs::OF_Text);
    if (ec)
      return module.emitError("zero-report: cannot write '")
             << svgFile << "': " << ec.message();
    const zero::StepReport &first = reports.front();
    std::string title =
        first.tensorSize > 1
            ? llvm::formatv("Model states per rank: {0} parameters, N = {1} "
                            "= {2} x {3} (N_d x N_m)",
                            first.numModelParams, n, first.dataSize,
                            first.tensorSize)
                  .str()
            : llvm::formatv("Model states per rank: {0} parameters, N = {1}",
                            first.numParams, n)
                  .str();
    zero::printMemoryChartSvg(reports, title, os);
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (microBatches < 1) {
      module.emitError("zero-report: micro-batches must be >= 1, got ")
          << static_cast<int64_t>(microBatches);
      return signalPassFailure();
    }
    if (svgWorldSize < 1) {
      module.emitError("zero-report: svg-world-size must be >= 1, got ")
          << static_cast<int64_t>(svgWorldSize);
      return signalPassFailure();
    }
    FailureOr<zero::StepReport> report = zero::analyzeStep(module);
    if (failed(report))
      return signalPassFailure();
    // The arenas as zero-buffer-assign plans them, when the step can be
    // lowered (a partial step, e.g. before train-optimizer, cannot: its
    // diagnostics are dropped and the planned lines left out).
    {
      ScopedDiagnosticHandler silence(module.getContext(),
                                      [](Diagnostic &) { return success(); });
      // A step without a state layout yet is planned on a copy laid out
      // as zero-layout-states would: the report changes no IR.
      OwningOpRef<ModuleOp> copy;
      ModuleOp planned = module;
      if (!module->hasAttr(zero::ZeroDialect::kStateArenaBytesAttrName)) {
        copy = module.clone();
        zero::layoutStates(*copy);
        planned = *copy;
      }
      FailureOr<zero::BufferPlan> plan =
          zero::planBuffers(planned, /*annotate=*/false);
      if (succeeded(plan)) {
        report->plannedActivationBytes = plan->arenas.activations;
        report->plannedTemporaryBytes = plan->arenas.temporaries;
        for (const auto &[name, bytes] : plan->functions) {
          if (report->plannedActivationFunction.empty() &&
              bytes.activations == plan->arenas.activations)
            report->plannedActivationFunction = name;
          if (report->plannedTemporaryFunction.empty() &&
              bytes.temporaries == plan->arenas.temporaries)
            report->plannedTemporaryFunction = name;
        }
        report->plannedStateArenaBytes = plan->stateArenaBytes;
        report->plannedConstantArenaBytes = plan->constantArenaBytes;
        report->bumpActivationBytes = plan->bumpBytes.activations;
        report->bumpTemporaryBytes = plan->bumpBytes.temporaries;
      }
      // P_a+cpu: the activation arena the slices would need on the device.
      if (succeeded(plan) && report->offloadedSlices) {
        OwningOpRef<ModuleOp> kept = planned.clone();
        keepSlicesOnDevice(*kept);
        FailureOr<zero::BufferPlan> without =
            zero::planBuffers(*kept, /*annotate=*/false);
        if (succeeded(without))
          report->plannedActivationBytesWithoutOffload =
              without->arenas.activations;
      }
    }
    if (!quiet)
      zero::printReportTable(*report, microBatches, llvm::outs());
    if (!jsonFile.empty()) {
      if (jsonFile == "-") {
        zero::printReportJson(*report, microBatches, llvm::outs());
      } else {
        std::error_code ec;
        llvm::raw_fd_ostream os(jsonFile, ec, llvm::sys::fs::OF_Text);
        if (ec) {
          module.emitError("zero-report: cannot write '")
              << jsonFile << "': " << ec.message();
          return signalPassFailure();
        }
        zero::printReportJson(*report, microBatches, os);
      }
    }
    if (!svgFile.empty() && failed(writeChart(module)))
      return signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
