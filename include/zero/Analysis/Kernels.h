//===- Kernels.h - what the runtime's kernels need of each op ---*- C++ -*-===//
///
/// \file
/// The two facts about an op's zrt.h kernel that the passes and the
/// lowering must agree on, in one place (the emitters in
/// lib/Conversion/TrainToEmitC/ print the calls; the buffer planner and the
/// emitters both read these):
///  - whether the op runs as one native bf16 kernel (zrt_X_bf16: the same
///    numbers as widening its bf16 tensors to f32, zrt_X and rounding back,
///    without the f32 copies), read from the op's
///    NativeBf16KernelOpInterface; otherwise train-legalize-bf16 has
///    widened it with explicit train.cast ops;
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

/// Whether `op` runs as its one native zrt_X_bf16 kernel on bf16 storage,
/// as the op says in ODS (train::NativeBf16KernelOpInterface,
/// dialects/Train/TrainInterfaces.td); false for ops without the interface.
/// train-legalize-bf16 widens the compute ops answering false; the
/// lowering only reads the answer to name the kernel.
bool hasNativeBf16Kernel(Operation *op);

/// The bf16 and f16 tensors `op` reads or writes, each once (operands
/// first, in order, then results).
SmallVector<Value> narrowFloatTensors(Operation *op);

/// Whether `op` must be widened to f32 before it is printed: a compute op
/// (Train/NotCompute.h) with bf16 or f16 tensors and no native bf16 kernel.
/// The one criterion of train-legalize-bf16 (which widens these ops with
/// explicit train.cast) and of the lowering (which rejects them).
bool needsF32Widening(Operation *op);

/// The scratch blocks the kernel calls of `op` take (in the order the
/// emitter asks for them; `native` as hasNativeBf16Kernel answered), each
/// in 4-byte words; a negative size when a workspace formula overflows
/// int64 (zrt/abi.h). The f32 copies of a widened op are not scratch: they
/// are the results of train-legalize-bf16's casts, planned as temporaries.
SmallVector<int64_t, 2> kernelScratchWords(Operation *op, bool native);

} // namespace mlir::zero

#endif // ZERO_ANALYSIS_KERNELS_H
