//===- Passes.h - Zero's lowering passes ------------------------*- C++ -*-===//
///
/// \file
/// Declares the lowering passes (generated from Conversion/Passes.td):
/// `convert-train-to-emitc`, which turns a training step into EmitC that
/// `mlir::emitc::translateToCpp` prints as the C++ of the model.h contract.
///
//===----------------------------------------------------------------------===//

#ifndef ZERO_CONVERSION_PASSES_H
#define ZERO_CONVERSION_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::emitc {
class EmitCDialect;
} // namespace mlir::emitc

namespace mlir::zero {

#define GEN_PASS_DECL
#include "zero/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "zero/Conversion/Passes.h.inc"

} // namespace mlir::zero

#endif // ZERO_CONVERSION_PASSES_H
