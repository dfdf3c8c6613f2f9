//===- zero-opt.cpp - mlir-opt for Zero's dialects and passes -------------===//
///
/// \file
/// `zero-opt` parses IR of the `train` and `zero` dialects (plus the upstream
/// dialects the project uses), runs passes named on the command line, and
/// prints the result, exactly like `mlir-opt` (it is MlirOptMain).
///
//===----------------------------------------------------------------------===//

#include "zero/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerTransformsPasses(); // canonicalize, cse, inline, ...
  mlir::zero::registerAllPasses();

  mlir::DialectRegistry registry;
  mlir::zero::registerAllDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Zero optimizer driver\n", registry));
}
