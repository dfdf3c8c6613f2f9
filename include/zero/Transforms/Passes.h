//===- Passes.h - Zero's passes ---------------------------------*- C++ -*-===//
///
/// \file
/// Declares every pass of the project (generated from TrainPasses.td and
/// ZeroPasses.td) and the function that registers them all.
///
//===----------------------------------------------------------------------===//

#ifndef ZERO_TRANSFORMS_PASSES_H
#define ZERO_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::func {
class FuncDialect;
} // namespace mlir::func
namespace mlir::train {
class TrainDialect;
} // namespace mlir::train

namespace mlir {
class DialectRegistry;
} // namespace mlir

// Project passes live in the namespace of the `zero` dialect.
namespace mlir::zero {

#define GEN_PASS_DECL
#include "zero/Transforms/TrainPasses.h.inc"
#include "zero/Transforms/ZeroPasses.h.inc"

#define GEN_PASS_REGISTRATION
#include "zero/Transforms/TrainPasses.h.inc"
#include "zero/Transforms/ZeroPasses.h.inc"

/// Registers every pass and pass pipeline of the project with the global
/// registry (for zero-opt and zero-compile).
void registerAllPasses();

/// Adds the `train` and `zero` dialects and the upstream dialects the
/// project's IR uses (func, arith, tensor, emitc) to `registry`.
void registerAllDialects(DialectRegistry &registry);

} // namespace mlir::zero

#endif // ZERO_TRANSFORMS_PASSES_H
