//===- TrainDecoderOps.cpp - verifiers of the Llama/Qwen decoder ops ------===//
///
/// \file
/// Verifiers of the ops in TrainDecoderOps.td (RMSNorm, SiLU/SwiGLU,
/// rotary embeddings). Every check names the expected shape; tensors with
/// an empty dimension are rejected by the NonEmptyTensors trait of every
/// train op.
///
//===----------------------------------------------------------------------===//

#include "Train/TrainOps.h"

using namespace mlir;
using namespace mlir::train;

/// The checks of the RMSNorm ops: x of rank >= 1,
/// weight [C] (C = x's last dimension) of x's element type.
static LogicalResult verifyRmsNorm(Operation *op, RankedTensorType x,
                                   RankedTensorType w) {
  if (x.getRank() < 1)
    return op->emitOpError("input must have rank >= 1");
  if (w.getElementType() != x.getElementType())
    return op->emitOpError("weight element type ")
           << w.getElementType() << " differs from the input's "
           << x.getElementType();
  if (w.getRank() != 1 || w.getDimSize(0) != x.getShape().back())
    return op->emitOpError("weight must be [")
           << x.getShape().back() << "] (the last dimension of the input), got "
           << w;
  return success();
}

LogicalResult RmsNormOp::verify() {
  return verifyRmsNorm(*this, getInput().getType(), getWeight().getType());
}

LogicalResult AddRmsNormOp::verify() {
  return verifyRmsNorm(*this, getLhs().getType(), getWeight().getType());
}

LogicalResult RmsNormGradOp::verify() {
  return verifyRmsNorm(*this, getInput().getType(), getWeight().getType());
}

LogicalResult RopeTableOp::verify() {
  RankedTensorType t = getType();
  if (t.getRank() != 3 || t.getDimSize(2) != 2)
    return emitOpError("result must be [T, D/2, 2] (cos and sin per "
                       "position and frequency), got ")
           << t;
  bool any = getFactor() || getLowFreqFactor() || getHighFreqFactor() ||
             getOriginalMaxPositions();
  if (!any)
    return success();
  if (!getFactor() || !getLowFreqFactor() || !getHighFreqFactor() ||
      !getOriginalMaxPositions())
    return emitOpError("llama3 scaling needs factor, low_freq_factor, "
                       "high_freq_factor and original_max_positions together");
  double factor = getFactor()->convertToDouble();
  double low = getLowFreqFactor()->convertToDouble();
  double high = getHighFreqFactor()->convertToDouble();
  if (!(factor > 0.0))
    return emitOpError("llama3 factor must be positive, got ") << factor;
  if (!(low > 0.0) || !(high > low))
    return emitOpError("llama3 frequency factors need 0 < low_freq_factor < "
                       "high_freq_factor, got ")
           << low << " and " << high;
  if (*getOriginalMaxPositions() <= 0)
    return emitOpError("llama3 original_max_positions must be positive, got ")
           << *getOriginalMaxPositions();
  return success();
}

LogicalResult RopeOp::verify() {
  RankedTensorType x = getInput().getType(), table = getTable().getType();
  if (x.getRank() != 4)
    return emitOpError("input must be [B, T, H, D], got ") << x;
  int64_t T = x.getDimSize(1), D = x.getDimSize(3);
  if (D % 2 != 0)
    return emitOpError("head dimension D = ")
           << D << " must be even (rotary pairs)";
  if (table.getShape() != ArrayRef<int64_t>{T, D / 2, 2})
    return emitOpError("table must be [")
           << T << ", " << D / 2 << ", 2] (positions, D/2 frequencies, cos "
           << "and sin) for input " << x << ", got " << table;
  return success();
}
