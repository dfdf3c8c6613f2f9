//===- TrainOps.cpp - train dialect operations ----------------------------===//

#include "Train/TrainOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"

#include <limits>

using namespace mlir;
using namespace mlir::train;

/// True for the element types the dialect computes on.
static bool isComputeFloat(Type t) { return t.isF32() || t.isBF16() || t.isF16(); }

//===----------------------------------------------------------------------===//
// ParamOp
//===----------------------------------------------------------------------===//

LogicalResult ParamOp::verify() {
  auto type = dyn_cast<RankedTensorType>(getType());
  if (!type || !type.hasStaticShape())
    return emitOpError("type must be a statically shaped tensor, got ")
           << getType();
  if (!isComputeFloat(type.getElementType()))
    return emitOpError("element type must be f32, bf16 or f16, got ")
           << type.getElementType();
  if (failed(OpTrait::verifyElementCount(getOperation(), type, "parameter type")))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// State and its accessors
//===----------------------------------------------------------------------===//

LogicalResult StateOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto param = symbolTable.lookupNearestSymbolFrom<ParamOp>(*this, getParamAttr());
  if (!param)
    return emitOpError("'") << getParam() << "' does not name a train.param";
  auto type = dyn_cast<RankedTensorType>(getType());
  if (!type || type.getShape() != param.getTensorType().getShape())
    return emitOpError("type ") << getType() << " must have the shape of parameter '"
                                << getParam() << "' " << param.getType();
  Type elt = type.getElementType();
  if (getKind() == StateKind::grad) {
    if (elt != param.getTensorType().getElementType())
      return emitOpError("a gradient has the parameter's element type ")
             << param.getTensorType().getElementType() << ", got " << elt;
  } else if (!elt.isF32()) {
    return emitOpError("master weights and moments are f32, got ") << elt;
  }
  if (getKind() == StateKind::master &&
      param.getTensorType().getElementType().isF32())
    return emitOpError("master weights are for bf16/f16 parameters; '")
           << getParam() << "' is f32";
  return success();
}

/// Checks that `name` names a train.param or train.state of type `type`.
static LogicalResult verifyStateUse(Operation *op, FlatSymbolRefAttr name,
                                    Type type, StringRef what,
                                    SymbolTableCollection &symbolTable) {
  Operation *target = symbolTable.lookupNearestSymbolFrom(op, name);
  Type declared;
  if (auto param = dyn_cast_or_null<ParamOp>(target))
    declared = param.getType();
  else if (auto state = dyn_cast_or_null<StateOp>(target))
    declared = state.getType();
  else
    return op->emitOpError("'") << name.getValue()
                                << "' does not name a train.param or train.state";
  if (declared != type)
    return op->emitOpError() << what << " type " << type
                             << " does not match declared type " << declared;
  return success();
}

LogicalResult LoadOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyStateUse(*this, getNameAttr(), getType(), "result", symbolTable);
}

LogicalResult StoreOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyStateUse(*this, getNameAttr(), getValue().getType(), "value",
                        symbolTable);
}

LogicalResult AccumulateOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  if (!symbolTable.lookupNearestSymbolFrom<StateOp>(*this, getNameAttr()))
    return emitOpError("'") << getName()
                            << "' is not a train.state (only state accumulates)";
  return verifyStateUse(*this, getNameAttr(), getValue().getType(), "value",
                        symbolTable);
}

//===----------------------------------------------------------------------===//
// Forward ops
//===----------------------------------------------------------------------===//

LogicalResult train::verifyEmbeddingShapes(Operation *op,
                                           RankedTensorType table,
                                           RankedTensorType ids,
                                           RankedTensorType result,
                                           StringRef tableName) {
  if (table.getRank() != 2)
    return op->emitOpError("table must be [")
           << tableName << ", C], got " << table;
  SmallVector<int64_t> expected(ids.getShape());
  expected.push_back(table.getDimSize(1));
  if (result.getShape() != ArrayRef<int64_t>(expected) ||
      result.getElementType() != table.getElementType())
    return op->emitOpError("result must be ")
           << RankedTensorType::get(expected, table.getElementType())
           << " (ids shape x [C]), got " << result;
  return success();
}

LogicalResult EmbeddingOp::verify() {
  return verifyEmbeddingShapes(*this, getTable().getType(),
                               getIds().getType(), getType(), "V");
}

/// Shape of op(x): the last two dimensions swapped when `transpose`.
static SmallVector<int64_t> applyTranspose(RankedTensorType t, bool transpose) {
  SmallVector<int64_t> shape(t.getShape());
  if (transpose && shape.size() >= 2)
    std::swap(shape[shape.size() - 1], shape[shape.size() - 2]);
  return shape;
}

/// The operand and result checks of `train.matmul`, shared by the fused
/// `train.matmul_gelu` / `train.matmul_gelu_grad`: `result` = op(a) · op(b)
/// (+ bias) in one element type (see TrainOps.td).
static LogicalResult verifyMatmul(Operation *op, RankedTensorType aType,
                                  RankedTensorType bType, Value bias,
                                  RankedTensorType rType, bool transposeA,
                                  bool transposeB) {
  if (aType.getRank() < 2 || bType.getRank() < 2)
    return op->emitOpError("operands must have rank >= 2, got ")
           << aType << " and " << bType;
  if (aType.getElementType() != bType.getElementType() ||
      aType.getElementType() != rType.getElementType())
    return op->emitOpError("operands and result must have one element type");
  SmallVector<int64_t> a = applyTranspose(aType, transposeA);
  SmallVector<int64_t> b = applyTranspose(bType, transposeB);
  int64_t rank = aType.getRank();
  bool sharedB = bType.getRank() == 2 && rank > 2;
  if (sharedB && transposeA)
    return op->emitOpError("transpose_a is not supported with a rank-2 b "
                           "shared across the batch");
  if (!sharedB && bType.getRank() != rank)
    return op->emitOpError("b must have rank 2 or the rank of a (")
           << rank << "), got " << bType.getRank();
  if (!sharedB &&
      ArrayRef<int64_t>(a).drop_back(2) != ArrayRef<int64_t>(b).drop_back(2))
    return op->emitOpError("batch dimensions of a and b differ");
  int64_t k = a[rank - 1], kb = b[b.size() - 2];
  if (k != kb)
    return op->emitOpError("contraction sizes differ: a gives K = ")
           << k << ", b gives K = " << kb;
  SmallVector<int64_t> expected(ArrayRef<int64_t>(a).drop_back(1));
  expected.push_back(b.back());
  if (rType.getShape() != ArrayRef<int64_t>(expected))
    return op->emitOpError("result must be ")
           << RankedTensorType::get(expected, rType.getElementType())
           << ", got " << rType;
  if (bias) {
    auto biasType = cast<RankedTensorType>(bias.getType());
    if (biasType.getRank() != 1 || biasType.getDimSize(0) != b.back() ||
        biasType.getElementType() != rType.getElementType())
      return op->emitOpError("bias must be ")
             << RankedTensorType::get({b.back()}, rType.getElementType())
             << ", got " << biasType;
  }
  return success();
}

LogicalResult MatmulOp::verify() {
  return verifyMatmul(*this, getA().getType(), getB().getType(), getBias(),
                      getType(), getTransposeA(), getTransposeB());
}

LogicalResult MatmulGeluOp::verify() {
  return verifyMatmul(*this, getA().getType(), getB().getType(), getBias(),
                      getResult().getType(), getTransposeA(), getTransposeB());
}

LogicalResult MatmulGeluGradOp::verify() {
  return verifyMatmul(*this, getA().getType(), getB().getType(), Value(),
                      getResult().getType(), getTransposeA(), getTransposeB());
}

/// The checks of `train.layer_norm` (and `train.add_layer_norm`): x of rank
/// >= 1, weight and bias [C] of x's element type.
static LogicalResult verifyLayerNorm(Operation *op, RankedTensorType x,
                                     RankedTensorType w) {
  if (x.getRank() < 1)
    return op->emitOpError("input must have rank >= 1");
  if (w.getElementType() != x.getElementType())
    return op->emitOpError("weight and bias element type ")
           << w.getElementType() << " differs from the input's "
           << x.getElementType();
  if (w.getRank() != 1 || w.getDimSize(0) != x.getShape().back())
    return op->emitOpError("weight and bias must be [")
           << x.getShape().back() << "] (the last dimension of the input), got "
           << w;
  return success();
}

LogicalResult LayerNormOp::verify() {
  return verifyLayerNorm(*this, getInput().getType(), getWeight().getType());
}

LogicalResult AddLayerNormOp::verify() {
  return verifyLayerNorm(*this, getLhs().getType(), getWeight().getType());
}

/// The shape rules of causal_attention and attention_grad: query [B, H, T,
/// D], key and value [B, Hkv, T, D] with Hkv dividing H, no empty
/// dimension.
static LogicalResult verifyAttention(Operation *op, RankedTensorType q,
                                     RankedTensorType kv) {
  if (q.getRank() != 4)
    return op->emitOpError("query must be [B, H, T, D], got ") << q;
  if (kv.getRank() != 4 || kv.getDimSize(0) != q.getDimSize(0) ||
      kv.getDimSize(2) != q.getDimSize(2) ||
      kv.getDimSize(3) != q.getDimSize(3) || kv.getDimSize(1) == 0)
    return op->emitOpError("key and value must be [")
           << q.getDimSize(0) << ", Hkv, " << q.getDimSize(2) << ", "
           << q.getDimSize(3) << "] for query " << q << ", got " << kv;
  if (q.getDimSize(1) % kv.getDimSize(1) != 0)
    return op->emitOpError("")
           << kv.getDimSize(1) << " key/value heads do not divide "
           << q.getDimSize(1) << " query heads";
  return success();
}

LogicalResult CausalAttentionOp::verify() {
  return verifyAttention(*this, getQuery().getType(), getKey().getType());
}

/// The shape rules of causal_attention_packed and attention_packed_grad:
/// qkv [B, T, 3 C] with C divisible by heads, out (named `outName`)
/// [B, T, C], lse [B, heads, T].
static LogicalResult verifyPackedAttention(Operation *op, RankedTensorType qkv,
                                           StringRef outName,
                                           RankedTensorType out,
                                           RankedTensorType lse,
                                           int64_t heads) {
  if (qkv.getRank() != 3 || qkv.getDimSize(2) % 3 != 0)
    return op->emitOpError("qkv must be [B, T, 3 C], got ") << qkv;
  int64_t B = qkv.getDimSize(0), T = qkv.getDimSize(1),
          C = qkv.getDimSize(2) / 3;
  if (C % heads != 0)
    return op->emitOpError("C = ")
           << C << " (a third of qkv's last dimension) is not divisible by "
           << heads << " heads";
  if (out.getShape() != ArrayRef<int64_t>{B, T, C})
    return op->emitOpError() << outName << " must be ["
           << B << ", " << T << ", " << C << "] for qkv " << qkv << ", got "
           << out;
  if (lse.getShape() != ArrayRef<int64_t>{B, heads, T})
    return op->emitOpError("lse must be [")
           << B << ", " << heads << ", " << T << "] (batch, heads, tokens), got "
           << lse;
  return success();
}

LogicalResult CausalAttentionPackedOp::verify() {
  return verifyPackedAttention(*this, getQkv().getType(), "result",
                               getResult().getType(), getLse().getType(),
                               static_cast<int64_t>(getHeads()));
}

LogicalResult AttentionPackedGradOp::verify() {
  return verifyPackedAttention(*this, getQkv().getType(), "output",
                               getOutput().getType(), getLse().getType(),
                               static_cast<int64_t>(getHeads()));
}

LogicalResult BroadcastOp::verify() {
  RankedTensorType in = getInput().getType(), out = getType();
  if (in.getRank() > out.getRank() ||
      out.getShape().take_back(in.getRank()) != in.getShape() ||
      in.getElementType() != out.getElementType())
    return emitOpError("result ")
           << out << " must end with the dimensions of " << in;
  return success();
}

LogicalResult ReshapeOp::verify() {
  RankedTensorType in = getInput().getType(), out = getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError("element type changes from ")
           << in.getElementType() << " to " << out.getElementType();
  if (in.getNumElements() != out.getNumElements())
    return emitOpError("element count changes from ")
           << in.getNumElements() << " to " << out.getNumElements();
  return success();
}

LogicalResult TransposeOp::verify() {
  RankedTensorType in = getInput().getType(), out = getType();
  ArrayRef<int64_t> perm = getPermutation();
  if (static_cast<int64_t>(perm.size()) != in.getRank())
    return emitOpError("permutation has ")
           << perm.size() << " entries for an input of rank " << in.getRank();
  SmallVector<bool> seen(perm.size(), false);
  SmallVector<int64_t> expected;
  for (int64_t p : perm) {
    if (p < 0 || p >= in.getRank() || seen[p])
      return emitOpError("permutation is not a permutation of [0, ")
             << in.getRank() << ")";
    seen[p] = true;
    expected.push_back(in.getDimSize(p));
  }
  if (out.getShape() != ArrayRef<int64_t>(expected) ||
      out.getElementType() != in.getElementType())
    return emitOpError("result must be ")
           << RankedTensorType::get(expected, in.getElementType()) << ", got "
           << out;
  return success();
}

/// Checks that `pieces` tile `whole` along `dim`.
static LogicalResult verifyTiling(Operation *op, RankedTensorType whole,
                                  TypeRange pieces, int64_t dim) {
  if (dim < 0 || dim >= whole.getRank())
    return op->emitOpError("dim ") << dim << " is out of range for rank "
                                   << whole.getRank();
  if (pieces.empty())
    return op->emitOpError("needs at least one piece");
  int64_t total = 0;
  for (Type t : pieces) {
    auto piece = cast<RankedTensorType>(t);
    if (piece.getRank() != whole.getRank() ||
        piece.getElementType() != whole.getElementType())
      return op->emitOpError("piece ") << piece << " does not match " << whole;
    for (int64_t d = 0; d < whole.getRank(); ++d)
      if (d != dim && piece.getDimSize(d) != whole.getDimSize(d))
        return op->emitOpError("piece ")
               << piece << " differs from " << whole << " in dimension " << d;
    total += piece.getDimSize(dim);
  }
  if (total != whole.getDimSize(dim))
    return op->emitOpError("pieces add up to ")
           << total << " along dim " << dim << ", expected "
           << whole.getDimSize(dim);
  return success();
}

LogicalResult SplitOp::verify() {
  return verifyTiling(*this, getInput().getType(), getResultTypes(), getDim());
}

LogicalResult ConcatOp::verify() {
  return verifyTiling(*this, getType(), getInputs().getTypes(), getDim());
}

LogicalResult SoftmaxOp::verify() {
  if (getType().getRank() < 1)
    return emitOpError("needs rank >= 1 (it normalizes the last dimension)");
  return success();
}

LogicalResult SoftmaxGradOp::verify() {
  if (getType().getRank() < 1)
    return emitOpError("needs rank >= 1 (it normalizes the last dimension)");
  return success();
}

LogicalResult AttentionGradOp::verify() {
  return verifyAttention(*this, getQuery().getType(), getKey().getType());
}

LogicalResult CastOp::verify() {
  if (getInput().getType() == getType())
    return emitOpError("casts ") << getType() << " to itself";
  if (getInput().getType().getShape() != getType().getShape())
    return emitOpError("shape changes from ")
           << getInput().getType() << " to " << getType();
  return success();
}

int64_t CrossEntropyOp::getEffectiveNumClasses() {
  if (std::optional<uint64_t> n = getNumClasses())
    return static_cast<int64_t>(*n);
  return getLogits().getType().getDimSize(1);
}

/// The signed value of an optional `ignore_index` attribute.
static std::optional<int64_t> ignoreIndexOf(IntegerAttr attr) {
  if (!attr)
    return std::nullopt;
  return attr.getValue().getSExtValue();
}

/// The shape rules shared by cross_entropy and cross_entropy_grad.
static LogicalResult verifyCrossEntropy(Operation *op, RankedTensorType logits,
                                        RankedTensorType targets,
                                        std::optional<uint64_t> numClasses,
                                        std::optional<int64_t> ignoreIndex) {
  if (logits.getRank() != 2)
    return op->emitOpError("logits must be [N, V], got ") << logits;
  if (ignoreIndex && (*ignoreIndex < std::numeric_limits<int32_t>::min() ||
                      *ignoreIndex > std::numeric_limits<int32_t>::max()))
    return op->emitOpError("ignore_index ")
           << *ignoreIndex << " is not an i32 target value";
  if (targets.getRank() != 1 || targets.getDimSize(0) != logits.getDimSize(0))
    return op->emitOpError("targets must be [")
           << logits.getDimSize(0) << "] (one per row of logits), got "
           << targets;
  if (numClasses && static_cast<int64_t>(*numClasses) > logits.getDimSize(1))
    return op->emitOpError("num_classes ")
           << *numClasses << " exceeds the " << logits.getDimSize(1)
           << " logit columns";
  return success();
}

LogicalResult CrossEntropyGradOp::verify() {
  return verifyCrossEntropy(*this, getLogits().getType(),
                            getTargets().getType(), getNumClasses(),
                            ignoreIndexOf(getIgnoreIndexAttr()));
}

LogicalResult CrossEntropyOp::verify() {
  return verifyCrossEntropy(*this, getLogits().getType(),
                            getTargets().getType(), getNumClasses(),
                            ignoreIndexOf(getIgnoreIndexAttr()));
}

int64_t CrossEntropyFusedOp::getEffectiveNumClasses() {
  if (std::optional<uint64_t> n = getNumClasses())
    return static_cast<int64_t>(*n);
  return getLogits().getType().getDimSize(1);
}

LogicalResult CrossEntropyFusedOp::verify() {
  if (failed(verifyCrossEntropy(*this, getLogits().getType(),
                                getTargets().getType(), getNumClasses(),
                                std::nullopt)))
    return failure();
  if (getLogits().getType().getElementType().isF16())
    return emitOpError("logits must be f32 or bf16");
  // The gradient is stored over the logits: no view of them is read after
  // this op.
  Value root = getLogits();
  while (auto r = root.getDefiningOp<ReshapeOp>())
    root = r.getInput();
  SmallVector<Value> views{root};
  for (unsigned i = 0; i < views.size(); ++i)
    for (Operation *user : views[i].getUsers()) {
      if (auto r = dyn_cast<ReshapeOp>(user)) {
        views.push_back(r.getResult());
        continue;
      }
      if (user == getOperation())
        continue;
      if (user->getBlock() != getOperation()->getBlock() ||
          !user->isBeforeInBlock(getOperation())) {
        InFlightDiagnostic diag =
            emitOpError("overwrites its logits with the gradient, but they are "
                        "read after it");
        diag.attachNote(user->getLoc()) << "read here";
        return diag;
      }
    }
  return success();
}

//===----------------------------------------------------------------------===//
// Backward and optimizer ops
//===----------------------------------------------------------------------===//

LogicalResult ReduceSumOp::verify() {
  RankedTensorType in = getInput().getType(), out = getType();
  if (out.getRank() > in.getRank() ||
      in.getShape().take_back(out.getRank()) != out.getShape() ||
      in.getElementType() != out.getElementType())
    return emitOpError("result ")
           << out << " must keep trailing dimensions of " << in;
  return success();
}

LogicalResult EmbeddingGradOp::verify() {
  RankedTensorType ids = getIds().getType(), grad = getGrad().getType(),
                   out = getType();
  if (out.getRank() != 2 || grad.getRank() != ids.getRank() + 1 ||
      grad.getShape().drop_back() != ids.getShape() ||
      grad.getShape().back() != out.getDimSize(1) ||
      grad.getElementType() != out.getElementType())
    return emitOpError("expects grad = ids shape x [C] and result [V, C], got ")
           << grad << " and " << out;
  return success();
}

LogicalResult LayerNormGradOp::verify() {
  RankedTensorType x = getInput().getType(), w = getWeight().getType();
  if (x.getRank() < 1)
    return emitOpError("input must have rank >= 1");
  if (w.getRank() != 1 || w.getDimSize(0) != x.getShape().back())
    return emitOpError("weight must be [")
           << x.getShape().back() << "], got " << w;
  // As train.layer_norm, whose gradient this is.
  if (w.getElementType() != x.getElementType())
    return emitOpError("weight element type ")
           << w.getElementType() << " differs from the input's "
           << x.getElementType();
  return success();
}

LogicalResult AdamWOp::verify() {
  double b1 = getBeta1().convertToDouble(), b2 = getBeta2().convertToDouble();
  if (!(b1 >= 0.0 && b1 < 1.0) || !(b2 >= 0.0 && b2 < 1.0))
    return emitOpError("betas must be in [0, 1), got ") << b1 << ", " << b2;
  if (!(getEps().convertToDouble() > 0.0))
    return emitOpError("eps must be positive");
  if (getWeightDecay().convertToDouble() < 0.0)
    return emitOpError("weight_decay must be >= 0");
  if (!getParam().getType().getElementType().isF32())
    return emitOpError("param, exp_avg and exp_avg_sq must be f32, got ")
           << getParam().getType();
  if (getGrad().getType().getShape() != getParam().getType().getShape())
    return emitOpError("grad shape ")
           << getGrad().getType() << " differs from param " << getParam().getType();
  return success();
}

//===----------------------------------------------------------------------===//
// Custom assembly directives
//===----------------------------------------------------------------------===//

/// `custom<KeyValueType>`: attention's key/value type after the query's,
/// `, type`, printed only when it differs (grouped-query attention).
static ParseResult parseKeyValueType(OpAsmParser &parser, Type &kvType,
                                     Type queryType) {
  if (succeeded(parser.parseOptionalComma()))
    return parser.parseType(kvType);
  kvType = queryType;
  return success();
}

static void printKeyValueType(OpAsmPrinter &printer, Operation *, Type kvType,
                              Type queryType) {
  if (kvType != queryType)
    printer << ", " << kvType;
}

#define GET_OP_CLASSES
#include "Train/TrainOps.cpp.inc"
