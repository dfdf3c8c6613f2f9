//===- fuzz_dialects.cpp - libFuzzer target: train/zero IR parsing -------===//
//
// Parses arbitrary bytes as MLIR text with the `train` and `zero` dialects
// (and the upstream ones the project's IR uses) and verifies what parses:
// the parsers, custom assembly formats and verifiers of dialects/ must
// reject any input with a diagnostic, never crash, assert or trip a
// sanitizer. The seeds are the .mlir files of test/ (bench/fuzz copies
// them).
//
//===----------------------------------------------------------------------===//

#include "Train/TrainOps.h"
#include "Zero/ZeroOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static mlir::DialectRegistry *registry = [] {
    auto *r = new mlir::DialectRegistry;
    r->insert<mlir::train::TrainDialect, mlir::zero::ZeroDialect,
              mlir::func::FuncDialect, mlir::arith::ArithDialect,
              mlir::tensor::TensorDialect>();
    return r;
  }();
  mlir::MLIRContext context(*registry,
                            mlir::MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  context.getDiagEngine().registerHandler([](mlir::Diagnostic &) {});
  mlir::ParserConfig config(&context);
  const std::string text(reinterpret_cast<const char *>(data), size);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, config);
  if (module)
    (void)mlir::verify(*module);
  return 0;
}
