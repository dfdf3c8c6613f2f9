//===- InitAll.h - register every dialect and pass of Zero -----*- C++ -*-===//
///
/// \file
/// The top of the library stack (MLIR's InitAllPasses.h / InitAllDialects.h):
/// the tools call these; lib/InitAll links the transforms and the
/// conversion, which do not link each other.
///
//===----------------------------------------------------------------------===//

#ifndef ZERO_INITALL_H
#define ZERO_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::zero {

/// Registers every pass and pass pipeline of the project with the global
/// registry (for zero-opt and zero-compile).
void registerAllPasses();

/// Adds the `train` and `zero` dialects and the upstream dialects the
/// project's IR uses (func, arith, cf, tensor, emitc) to `registry`.
void registerAllDialects(DialectRegistry &registry);

} // namespace mlir::zero

#endif // ZERO_INITALL_H
