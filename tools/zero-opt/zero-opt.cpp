//===- zero-opt.cpp - mlir-opt for Zero's dialects and passes -------------===//
///
/// \file
/// `zero-opt` parses IR of the `train` and `zero` dialects (plus the upstream
/// dialects the project uses), runs passes named on the command line, and
/// prints the result, exactly like `mlir-opt` (it is MlirOptMain), except
/// that `--mlir-print-op-on-diagnostic` defaults to off (as in zero-compile):
/// a diagnostic names its location instead of appending the op it is
/// attached to, which for a pass-option error is the whole module.
///
//===----------------------------------------------------------------------===//

#include "zero/InitAll.h"
#include "zero/Support/Version.h"
#include "zero/Transforms/Passes.h"

namespace mlir::zero::test {
/// The analyses' test passes (test/lib/Analysis).
void registerTestPasses();
} // namespace mlir::zero::test

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"

int main(int argc, char **argv) {
  mlir::zero::setVersionPrinter("zero-opt");
  mlir::registerTransformsPasses(); // canonicalize, cse, inline, ...
  mlir::zero::registerAllPasses();
  mlir::zero::test::registerTestPasses(); // test-state-access, ...

  // The context's options exist once registered; change the default before
  // MlirOptMain parses the command line (an explicit flag still wins).
  mlir::registerMLIRContextCLOptions();
  auto &options = llvm::cl::getRegisteredOptions();
  if (auto it = options.find("mlir-print-op-on-diagnostic");
      it != options.end())
    if (auto *printOp = static_cast<llvm::cl::opt<bool> *>(it->second))
      printOp->setInitialValue(false);

  mlir::DialectRegistry registry;
  mlir::zero::registerAllDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Zero optimizer driver\n", registry));
}
