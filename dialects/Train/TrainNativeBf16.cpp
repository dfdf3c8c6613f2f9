//===- TrainNativeBf16.cpp - native bf16 kernels of the train ops ---------===//
///
/// \file
/// NativeBf16KernelOpInterface::hasNativeBf16Kernel of the ops whose native
/// zrt_X_bf16 kernel does not simply take every tensor in bf16 (the other
/// ops with the interface use its default, Train/NativeBf16.h). Read by
/// train-legalize-bf16 (which widens the ops answering false) and by the
/// buffer plan and the lowering (which print the kernel the op names).
///
//===----------------------------------------------------------------------===//

#include "Train/TrainOps.h"

using namespace mlir;
using namespace mlir::train;

/// Whether `v` is a tensor of f32 (the loss and the rope table stay f32 in
/// every precision).
static bool isF32Tensor(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.getElementType().isF32();
}

/// Whether a, b, bias (may be null) and the result are bf16 and a, b, bias
/// distinct values (the bf16 GEMM widens row chunks of each on its own).
static bool isBf16Matmul(Value a, Value b, Value bias, Value result) {
  return allBf16({a, b, result}) && (!bias || allBf16(bias)) && a != b &&
         (!bias || (bias != a && bias != b));
}

//===----------------------------------------------------------------------===//
// Linear: matmuls (zrt_matmul_bf16 and its GELU epilogues), embeddings
//===----------------------------------------------------------------------===//

bool MatmulOp::hasNativeBf16Kernel() {
  return isBf16Matmul(getA(), getB(), getBias(), getResult());
}

bool MatmulGeluOp::hasNativeBf16Kernel() {
  return isBf16Matmul(getA(), getB(), getBias(), getResult());
}

bool MatmulGeluGradOp::hasNativeBf16Kernel() {
  // The pre-activation must be a third buffer.
  return getPre() != getA() && getPre() != getB() &&
         isBf16Matmul(getA(), getB(), Value(), getResult());
}

bool EmbeddingOp::hasNativeBf16Kernel() {
  return allBf16({getTable(), getResult()});
}

bool EmbeddingGradOp::hasNativeBf16Kernel() {
  return allBf16({getGrad(), getResult()});
}

//===----------------------------------------------------------------------===//
// Attention (flash-style kernels on bf16 q, k, v)
//===----------------------------------------------------------------------===//

bool CausalAttentionOp::hasNativeBf16Kernel() { return allBf16(getQuery()); }

bool AttentionGradOp::hasNativeBf16Kernel() { return allBf16(getQuery()); }

bool CausalAttentionPackedOp::hasNativeBf16Kernel() {
  return allBf16(getQkv());
}

bool AttentionPackedGradOp::hasNativeBf16Kernel() { return allBf16(getQkv()); }

//===----------------------------------------------------------------------===//
// Losses: the loss and its upstream gradient are f32 scalars
//===----------------------------------------------------------------------===//

bool CrossEntropyOp::hasNativeBf16Kernel() {
  return allBf16(getLogits()) && isF32Tensor(getResult());
}

bool CrossEntropyFusedOp::hasNativeBf16Kernel() { return allBf16(getLogits()); }

bool CrossEntropyGradOp::hasNativeBf16Kernel() {
  return allBf16({getLogits(), getResult()}) && isF32Tensor(getGrad());
}

//===----------------------------------------------------------------------===//
// Decoder: RoPE (its table is f32 in every precision)
//===----------------------------------------------------------------------===//

bool RopeOp::hasNativeBf16Kernel() {
  return allBf16({getInput(), getResult()});
}
