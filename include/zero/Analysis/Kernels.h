//===- Kernels.h - what the runtime's kernels need of each op ---*- C++ -*-===//
///
/// \file
/// The two facts about an op's zrt.h kernel that the passes and the
/// lowering must agree on, in one place (the emitters in
/// lib/Conversion/TrainToEmitC/ print the calls; the buffer planner and the
/// emitters both read these):
///  - whether the op runs as one native bf16 kernel (zrt_X_bf16: the same
///    numbers as widening its bf16 tensors to f32, zrt_X and rounding back,
///    without the f32 copies); otherwise the lowering widens around it;
///  - the scratch blocks its calls take, in the order the emitter asks for
///    them, in 4-byte words (the workspace formulas of zrt/abi.h, shared
///    with the runtime).
///
//===----------------------------------------------------------------------===//

#ifndef ZERO_ANALYSIS_KERNELS_H
#define ZERO_ANALYSIS_KERNELS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace mlir::zero {

/// The ranked tensor type of `v` (every value the lowering prints has one).
inline RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}
/// Elements of the tensor `v`.
inline int64_t numel(Value v) { return tensorType(v).getNumElements(); }
/// Element type of the tensor `v`.
inline Type elementType(Value v) { return tensorType(v).getElementType(); }
/// Rows and last dimension of a tensor [..., C] (rows = elements / C; a
/// 0-D tensor is one row of one).
inline std::pair<int64_t, int64_t> rowsCols(Value v) {
  RankedTensorType t = tensorType(v);
  int64_t c = t.getRank() ? t.getShape().back() : 1;
  return {c ? t.getNumElements() / c : 0, c};
}

/// Whether every tensor of `vs` is bf16.
inline bool allBf16(ValueRange vs) {
  for (Value v : vs) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t || !t.getElementType().isBF16())
      return false;
  }
  return true;
}

/// Whether every operand and result of `op` is bf16 (the rule of most
/// native bf16 kernels).
inline bool allOperandsBf16(Operation *op) {
  return allBf16(op->getOperands()) && allBf16(op->getResults());
}


/// The GEMM of a train.matmul (and its GELU forms) as zrt_matmul sees it:
/// `batch` packed products of [M, K] x [K, N]. A rank-2 B shared by a
/// batched A is one product over all of A's rows (valid because the
/// verifier rejects transpose_a in that form).
struct MatmulShape {
  int64_t batch = 1, M = 0, N = 0, K = 0;
};
MatmulShape matmulShape(Value a, Value b, Value result, bool transposeA);
template <typename MatmulLikeOp> MatmulShape matmulShape(MatmulLikeOp o) {
  return matmulShape(o.getA(), o.getB(), o.getResult(), o.getTransposeA());
}

/// Whether `op` runs as its one native zrt_X_bf16 kernel on bf16 storage:
/// every floating tensor it reads or writes is bf16 (except the f32 scalar
/// loss and loss gradient of cross-entropy, and rope's f32 table), and the
/// runtime has the kernel. False for ops without a kernel of their own.
bool hasNativeBf16Kernel(Operation *op);

/// The scratch blocks the kernel calls of `op` take (in the order the
/// emitter asks for them; `native` as hasNativeBf16Kernel answered), each
/// in 4-byte words, beyond the widened copies the lowering adds itself; a
/// negative size when a workspace formula overflows int64 (zrt/abi.h).
SmallVector<int64_t, 2> kernelScratchWords(Operation *op, bool native);

} // namespace mlir::zero

#endif // ZERO_ANALYSIS_KERNELS_H
