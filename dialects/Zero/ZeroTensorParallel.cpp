//===- ZeroTensorParallel.cpp - the tensor axis: mesh, cuts, f and g -------===//
///
/// \file
/// `#zero.mesh`, `#zero.tensor_split` and their verifiers, and the gradient
/// rules of Megatron's conjugate pair `zero.tp_f` / `zero.tp_g`
/// (ZeroDialect.td, ZeroOps.td).
///
//===----------------------------------------------------------------------===//

#include "Zero/ZeroOps.h"

#include "Train/TrainOps.h"

#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::zero;

LogicalResult MeshAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t data, int64_t tensor) {
  if (tensor < 1)
    return emitError() << "mesh tensor size must be at least 1, got "
                       << tensor;
  if (data < 0)
    return emitError() << "mesh data size must not be negative, got " << data;
  return success();
}

LogicalResult
TensorSplitAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        int64_t dim, int64_t blocks, int64_t parts,
                        ArrayRef<int64_t> full) {
  if (dim < 0 || dim >= static_cast<int64_t>(full.size()))
    return emitError() << "tensor_split dim " << dim << " is not a dimension "
                       << "of the rank-" << full.size() << " full shape";
  if (blocks < 1 || parts < 1)
    return emitError() << "tensor_split blocks (" << blocks << ") and parts ("
                       << parts << ") must be at least 1";
  if (full[dim] % (blocks * parts) != 0)
    return emitError() << "tensor_split full[" << dim << "] = " << full[dim]
                       << " is not a multiple of blocks × parts = "
                       << blocks * parts;
  return success();
}

LogicalResult zero::verifyTensorParallelAttr(Operation *op, StringRef name,
                                             Attribute value) {
  if (name == ZeroDialect::kMeshAttrName) {
    if (!isa<ModuleOp>(op))
      return op->emitOpError("'") << name << "' is only for the module";
    if (!isa<MeshAttr>(value))
      return op->emitOpError("'") << name << "' must be a #zero.mesh";
    return success();
  }
  auto param = dyn_cast<train::ParamOp>(op);
  if (!param)
    return op->emitOpError("'") << name << "' is only for a train.param";
  auto split = dyn_cast<TensorSplitAttr>(value);
  if (!split)
    return op->emitOpError("'") << name << "' must be a #zero.tensor_split";
  SmallVector<int64_t> local(split.getFull());
  local[split.getDim()] /= split.getParts();
  ArrayRef<int64_t> declared = param.getTensorType().getShape();
  if (ArrayRef<int64_t>(local) != declared)
    return op->emitOpError("'")
           << name << "' cuts the full shape [" << split.getFull()
           << "] into [" << ArrayRef<int64_t>(local)
           << "] per tensor rank, but the parameter is declared ["
           << declared << "]";
  return success();
}

LogicalResult TensorParallelF::buildGradient(OpBuilder &b,
                                             ArrayRef<Value> resultGrads,
                                             ArrayRef<bool> needGrad,
                                             SmallVectorImpl<Value> &operandGrads) {
  if (!needGrad[0])
    return success();
  // Every tensor rank's branch read the same input: sum their gradients.
  operandGrads[0] = AllReduceOp::create(
      b, getLoc(), resultGrads[0].getType(), resultGrads[0], ReduceKind::sum,
      getSize(), MeshAxis::tensor);
  return success();
}

LogicalResult TensorParallelG::buildGradient(OpBuilder &b,
                                             ArrayRef<Value> resultGrads,
                                             ArrayRef<bool> needGrad,
                                             SmallVectorImpl<Value> &operandGrads) {
  (void)b;
  // d(sum over ranks)/d(this rank's part) = 1: the gradient passes through.
  if (needGrad[0])
    operandGrads[0] = resultGrads[0];
  return success();
}
