//===- Report.cpp - zero-report: print the per-rank plan ------------------===//

#include "zero/Analysis/Report.h"
#include "zero/Transforms/Passes.h"

#include "Train/TrainDialect.h"
#include "Zero/ZeroDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROREPORT
#include "zero/Transforms/ZeroPasses.h.inc"
} // namespace mlir::zero

using namespace mlir;

namespace {
struct ZeroReportPass : public zero::impl::ZeroReportBase<ZeroReportPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (microBatches < 1) {
      module.emitError("zero-report: micro-batches must be >= 1, got ")
          << static_cast<int64_t>(microBatches);
      return signalPassFailure();
    }
    FailureOr<zero::StepReport> report = zero::analyzeStep(module);
    if (failed(report))
      return signalPassFailure();
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
    markAllAnalysesPreserved();
  }
};
} // namespace
