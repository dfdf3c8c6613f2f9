//===- TrainGradients.cpp - gradient rules of the train dialect -----------===//
///
/// \file
/// Each differentiable op's vector-Jacobian product (GradientOpInterface).
/// `train-autodiff` calls these; it knows no op by name. Conventions:
/// `resultGrads[i]` is the gradient of result i (never null); `needGrad[j]`
/// says whether operand j's gradient is wanted, and a rule emits no work
/// that only unwanted gradients need.
///
//===----------------------------------------------------------------------===//

#include "Train/TrainOps.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::train;

static RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

static UnitAttr unitIf(OpBuilder &b, bool flag) {
  return flag ? b.getUnitAttr() : UnitAttr();
}

/// result = op(x) · op(y) of type `type`.
static Value matmul(OpBuilder &b, Location loc, Type type, Value x, Value y,
                    bool transposeX, bool transposeY) {
  return MatmulOp::create(b, loc, type, x, y, /*bias=*/Value(),
                          unitIf(b, transposeX), unitIf(b, transposeY));
}

/// Collapses every dimension but the last of `v` into one.
static Value flattenToMatrix(OpBuilder &b, Location loc, Value v) {
  RankedTensorType t = tensorType(v);
  if (t.getRank() == 2)
    return v;
  int64_t last = t.getShape().back();
  auto flat = RankedTensorType::get({t.getNumElements() / last, last},
                                    t.getElementType());
  return ReshapeOp::create(b, loc, flat, v);
}

LogicalResult MatmulOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                      ArrayRef<bool> needGrad,
                                      SmallVectorImpl<Value> &operandGrads) {
  Location loc = getLoc();
  Value dC = resultGrads[0], a = getA(), bm = getB();
  bool ta = getTransposeA(), tb = getTransposeB();
  // With C = op(A)·op(B):
  //   dA = dC·op(B)ᵀ, laid out like A;  dB = op(A)ᵀ·dC, laid out like B.
  if (needGrad[0]) {
    operandGrads[0] = ta ? matmul(b, loc, a.getType(), bm, dC, tb, true)
                         : matmul(b, loc, a.getType(), dC, bm, false, !tb);
  }
  if (needGrad[1]) {
    Value x = a, dy = dC;
    if (tensorType(bm).getRank() == 2 && tensorType(a).getRank() > 2) {
      // One matrix shared by the batch (a linear layer): sum over the batch
      // by flattening it into the rows (transpose_a is unset here).
      x = flattenToMatrix(b, loc, a);
      dy = flattenToMatrix(b, loc, dC);
    }
    Type type = bm.getType();
    if (!tb)
      operandGrads[1] = ta ? matmul(b, loc, type, x, dy, false, false)
                           : matmul(b, loc, type, x, dy, true, false);
    else
      operandGrads[1] = ta ? matmul(b, loc, type, dy, x, true, true)
                           : matmul(b, loc, type, dy, x, true, false);
  }
  if (getBias() && needGrad[2])
    operandGrads[2] = ReduceSumOp::create(b, loc, getBias().getType(), dC);
  return success();
}

LogicalResult EmbeddingOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                         ArrayRef<bool> needGrad,
                                         SmallVectorImpl<Value> &operandGrads) {
  if (needGrad[0])
    operandGrads[0] = EmbeddingGradOp::create(b, getLoc(), getTable().getType(),
                                              getIds(), resultGrads[0]);
  return success();
}

LogicalResult AddOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                   ArrayRef<bool> needGrad,
                                   SmallVectorImpl<Value> &operandGrads) {
  for (unsigned i = 0; i < 2; ++i)
    if (needGrad[i])
      operandGrads[i] = resultGrads[0];
  return success();
}

LogicalResult MulOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                   ArrayRef<bool> needGrad,
                                   SmallVectorImpl<Value> &operandGrads) {
  if (needGrad[0])
    operandGrads[0] = MulOp::create(b, getLoc(), getType(), resultGrads[0], getRhs());
  if (needGrad[1])
    operandGrads[1] = MulOp::create(b, getLoc(), getType(), resultGrads[0], getLhs());
  return success();
}

LogicalResult ScaleOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                     ArrayRef<bool> needGrad,
                                     SmallVectorImpl<Value> &operandGrads) {
  if (needGrad[0])
    operandGrads[0] =
        ScaleOp::create(b, getLoc(), getType(), resultGrads[0], getFactorAttr());
  return success();
}

LogicalResult GeluOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    ArrayRef<bool> needGrad,
                                    SmallVectorImpl<Value> &operandGrads) {
  if (needGrad[0])
    operandGrads[0] =
        GeluGradOp::create(b, getLoc(), getType(), getInput(), resultGrads[0]);
  return success();
}

LogicalResult ReluOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    ArrayRef<bool> needGrad,
                                    SmallVectorImpl<Value> &operandGrads) {
  if (needGrad[0])
    operandGrads[0] =
        ReluGradOp::create(b, getLoc(), getType(), getInput(), resultGrads[0]);
  return success();
}

LogicalResult SoftmaxOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                       ArrayRef<bool> needGrad,
                                       SmallVectorImpl<Value> &operandGrads) {
  if (needGrad[0])
    operandGrads[0] =
        SoftmaxGradOp::create(b, getLoc(), getType(), getResult(), resultGrads[0]);
  return success();
}

LogicalResult LayerNormOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                         ArrayRef<bool> needGrad,
                                         SmallVectorImpl<Value> &operandGrads) {
  auto grad = LayerNormGradOp::create(
      b, getLoc(), getInput().getType(), getWeight().getType(),
      getWeight().getType(), getInput(), getWeight(), resultGrads[0],
      /*addend=*/Value(), getEpsAttr());
  for (unsigned i = 0; i < 3; ++i)
    if (needGrad[i])
      operandGrads[i] = grad->getResult(i);
  return success();
}

LogicalResult CausalAttentionOp::buildGradient(
    OpBuilder &b, ArrayRef<Value> resultGrads, ArrayRef<bool> needGrad,
    SmallVectorImpl<Value> &operandGrads) {
  // dK and dV have the K/V type (fewer heads under grouped-query attention).
  Type t = getQuery().getType(), kv = getKey().getType();
  auto grad = AttentionGradOp::create(b, getLoc(), t, kv, kv, getQuery(),
                                      getKey(), getValue(), getResult(),
                                      getLse(), resultGrads[0]);
  for (unsigned i = 0; i < 3; ++i)
    if (needGrad[i])
      operandGrads[i] = grad->getResult(i);
  return success();
}

bool CausalAttentionOp::isDifferentiableResult(unsigned index) {
  return index == 0; // the log-sum-exp is a statistic, not a value
}

LogicalResult CausalAttentionPackedOp::buildGradient(
    OpBuilder &b, ArrayRef<Value> resultGrads, ArrayRef<bool> needGrad,
    SmallVectorImpl<Value> &operandGrads) {
  if (needGrad[0])
    operandGrads[0] = AttentionPackedGradOp::create(
        b, getLoc(), getQkv().getType(), getQkv(), getResult(), getLse(),
        resultGrads[0], getHeadsAttr());
  return success();
}

bool CausalAttentionPackedOp::isDifferentiableResult(unsigned index) {
  return index == 0; // the log-sum-exp is a statistic, not a value
}

LogicalResult BroadcastOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                         ArrayRef<bool> needGrad,
                                         SmallVectorImpl<Value> &operandGrads) {
  if (needGrad[0])
    operandGrads[0] = ReduceSumOp::create(b, getLoc(), getInput().getType(),
                                          resultGrads[0]);
  return success();
}

LogicalResult ReshapeOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                       ArrayRef<bool> needGrad,
                                       SmallVectorImpl<Value> &operandGrads) {
  if (needGrad[0])
    operandGrads[0] = ReshapeOp::create(b, getLoc(), getInput().getType(),
                                        resultGrads[0]);
  return success();
}

LogicalResult TransposeOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                         ArrayRef<bool> needGrad,
                                         SmallVectorImpl<Value> &operandGrads) {
  if (!needGrad[0])
    return success();
  ArrayRef<int64_t> perm = getPermutation();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = static_cast<int64_t>(i);
  operandGrads[0] = TransposeOp::create(b, getLoc(), getInput().getType(),
                                        resultGrads[0], inverse);
  return success();
}

LogicalResult SplitOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                     ArrayRef<bool> needGrad,
                                     SmallVectorImpl<Value> &operandGrads) {
  if (needGrad[0])
    operandGrads[0] = ConcatOp::create(b, getLoc(), getInput().getType(),
                                       resultGrads, getDimAttr());
  return success();
}

LogicalResult ConcatOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                      ArrayRef<bool> needGrad,
                                      SmallVectorImpl<Value> &operandGrads) {
  if (llvm::none_of(needGrad, [](bool n) { return n; }))
    return success();
  auto split = SplitOp::create(b, getLoc(), getInputs().getTypes(),
                               resultGrads[0], getDimAttr());
  for (auto [i, need] : llvm::enumerate(needGrad))
    if (need)
      operandGrads[i] = split->getResult(i);
  return success();
}

LogicalResult CastOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    ArrayRef<bool> needGrad,
                                    SmallVectorImpl<Value> &operandGrads) {
  if (needGrad[0])
    operandGrads[0] =
        CastOp::create(b, getLoc(), getInput().getType(), resultGrads[0]);
  return success();
}

LogicalResult CrossEntropyOp::buildGradient(
    OpBuilder &b, ArrayRef<Value> resultGrads, ArrayRef<bool> needGrad,
    SmallVectorImpl<Value> &operandGrads) {
  if (needGrad[0])
    operandGrads[0] = CrossEntropyGradOp::create(
        b, getLoc(), getLogits().getType(), getLogits(), getTargets(),
        resultGrads[0], getNumClassesAttr(), getIgnoreIndexAttr());
  return success();
}

LogicalResult MseOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                   ArrayRef<bool> needGrad,
                                   SmallVectorImpl<Value> &operandGrads) {
  if (!needGrad[0] && !needGrad[1])
    return success();
  Value dInput = MseGradOp::create(b, getLoc(), getInput().getType(), getInput(), getTarget(),
                                   resultGrads[0]);
  if (needGrad[0])
    operandGrads[0] = dInput;
  if (needGrad[1])
    operandGrads[1] =
        ScaleOp::create(b, getLoc(), dInput.getType(), dInput,
                        b.getF64FloatAttr(-1.0));
  return success();
}

//===----------------------------------------------------------------------===//
// Llama/Qwen decoder ops (TrainDecoderOps.td)
//===----------------------------------------------------------------------===//

LogicalResult RmsNormOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                       ArrayRef<bool> needGrad,
                                       SmallVectorImpl<Value> &operandGrads) {
  if (!needGrad[0] && !needGrad[1])
    return success();
  auto grad = RmsNormGradOp::create(b, getLoc(), getInput().getType(),
                                    getWeight().getType(), getInput(),
                                    getWeight(), resultGrads[0],
                                    /*addend=*/Value(), getEpsAttr());
  for (unsigned i = 0; i < 2; ++i)
    if (needGrad[i])
      operandGrads[i] = grad->getResult(i);
  return success();
}

LogicalResult AddRmsNormOp::buildGradient(OpBuilder &b,
                                          ArrayRef<Value> resultGrads,
                                          ArrayRef<bool> needGrad,
                                          SmallVectorImpl<Value> &operandGrads) {
  if (llvm::none_of(needGrad, [](bool n) { return n; }))
    return success();
  // d sum = (the stream's own gradient) + (the norm's input gradient): one
  // rms_norm_grad with the stream's gradient as addend; lhs and rhs both
  // receive it (the gradient of train.add).
  auto grad = RmsNormGradOp::create(b, getLoc(), getLhs().getType(),
                                    getWeight().getType(), getSum(),
                                    getWeight(), resultGrads[1],
                                    /*addend=*/resultGrads[0], getEpsAttr());
  for (unsigned i = 0; i < 2; ++i)
    if (needGrad[i])
      operandGrads[i] = grad.getInputGrad();
  if (needGrad[2])
    operandGrads[2] = grad.getWeightGrad();
  return success();
}

LogicalResult SiluOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    ArrayRef<bool> needGrad,
                                    SmallVectorImpl<Value> &operandGrads) {
  if (needGrad[0])
    operandGrads[0] =
        SiluGradOp::create(b, getLoc(), getType(), getInput(), resultGrads[0]);
  return success();
}

LogicalResult SwigluOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                      ArrayRef<bool> needGrad,
                                      SmallVectorImpl<Value> &operandGrads) {
  if (!needGrad[0] && !needGrad[1])
    return success();
  Type t = getType();
  auto grad = SwigluGradOp::create(b, getLoc(), t, t, getGate(), getUp(),
                                   resultGrads[0]);
  for (unsigned i = 0; i < 2; ++i)
    if (needGrad[i])
      operandGrads[i] = grad->getResult(i);
  return success();
}

LogicalResult RopeOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    ArrayRef<bool> needGrad,
                                    SmallVectorImpl<Value> &operandGrads) {
  // A rotation's transpose is its inverse: the rotation by the negated angle.
  if (needGrad[0])
    operandGrads[0] = RopeOp::create(b, getLoc(), getType(), resultGrads[0],
                                     getTable(), getLayoutAttr(),
                                     unitIf(b, !getInverse()));
  return success();
}

bool RopeOp::isDifferentiableOperand(unsigned index) {
  return index == 0; // the cos/sin table is a constant
}
