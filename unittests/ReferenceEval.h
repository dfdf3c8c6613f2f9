//===- ReferenceEval.h - f64 reference evaluation of train ops --*- C++ -*-===//
///
/// \file
/// Evaluates the body of a `func.func` of `train` ops on host arrays in f64,
/// following each op's definition in TrainOps.td / TrainDecoderOps.td
/// literally (no tiling, no rounding to the storage type). The gradient-rule
/// tests run a forward op and the ops its rule emits through it, and compare
/// the rule's gradients with central differences of the forward.
///
/// Covered ops: rms_norm, add_rms_norm, rms_norm_grad, silu, silu_grad,
/// swiglu, swiglu_grad, rope_table, rope, causal_attention, attention_grad,
/// cross_entropy, cross_entropy_grad, add. Any other op is an error.
///
//===----------------------------------------------------------------------===//

#ifndef ZERO_UNITTESTS_REFERENCEEVAL_H
#define ZERO_UNITTESTS_REFERENCEEVAL_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"

#include <string>
#include <vector>

namespace zero::test {

/// Row-major f64 contents of one tensor value (i32 ids stored as doubles).
using Array = std::vector<double>;

/// Values computed so far, by SSA value.
using Env = llvm::DenseMap<mlir::Value, Array>;

/// Evaluates every op of `fn`'s single block but the terminator, in order,
/// into `env` (which must hold the block arguments). Returns "" on success,
/// else the name of the first op it cannot evaluate.
std::string evaluate(mlir::func::FuncOp fn, Env &env);

} // namespace zero::test

#endif // ZERO_UNITTESTS_REFERENCEEVAL_H
