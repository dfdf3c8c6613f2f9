//===- TrainDialect.h - the train dialect -----------------------*- C++ -*-===//
///
/// \file
/// Declares the `train` dialect (training graphs), its enums and attributes.
///
//===----------------------------------------------------------------------===//

#ifndef ZERO_TRAIN_TRAINDIALECT_H
#define ZERO_TRAIN_TRAINDIALECT_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/Dialect.h"

#include "Train/NonEmptyTensors.h"
#include "Train/NotCompute.h"

#include "Train/TrainDialect.h.inc"
#include "Train/TrainEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "Train/TrainAttrs.h.inc"

#endif // ZERO_TRAIN_TRAINDIALECT_H
