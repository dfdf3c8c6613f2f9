//===- ZeroOps.h - zero dialect operations ----------------------*- C++ -*-===//
///
/// \file
/// Declares the operations of the `zero` dialect (see ZeroOps.td).
///
//===----------------------------------------------------------------------===//

#ifndef ZERO_ZERO_ZEROOPS_H
#define ZERO_ZERO_ZEROOPS_H

#include "Zero/ZeroDialect.h"
#include "Train/TrainOps.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"

#define GET_OP_CLASSES
#include "Zero/ZeroOps.h.inc"

#endif // ZERO_ZERO_ZEROOPS_H
