//===- TensorParallel.cpp - Megatron's f and g to zrt calls ---------------===//
///
/// \file
/// Emitters of zero.tp_f (identity forward: a copy into its result) and
/// zero.tp_g (the sum over the tensor axis: zrt_all_reduce_axis on
/// ZRT_AXIS_TENSOR). Both move their element type as is (f32, bf16 or f16:
/// the runtime reduces 16-bit types in f32). Prints only; the rule of the
/// folder is in OpEmitter.h.
///
//===----------------------------------------------------------------------===//

#include "OpEmitter.h"

#include "Zero/ZeroOps.h"

using namespace mlir;
using namespace mlir::zero::emit;

namespace {

/// zero.tp_f -> zrt_copy_any(x, y, n, dtype).
struct TensorParallelFEmitter : OpEmitterFor<zero::TensorParallelF> {
  LogicalResult emit(zero::TensorParallelF op, EmitContext &c,
                     bool native) const override {
    c.call("zrt_copy_any",
           {c.ptr(op.getInput()), c.ptr(op.getResult()),
            c.i64(numel(op.getInput())),
            c.opq(*dtypeName(elementType(op.getResult())))});
    return success();
  }
};

/// zero.tp_g -> zrt_all_reduce_axis(ZRT_AXIS_TENSOR, x, y, n, dtype,
/// ZRT_SUM).
struct TensorParallelGEmitter : OpEmitterFor<zero::TensorParallelG> {
  LogicalResult emit(zero::TensorParallelG op, EmitContext &c,
                     bool native) const override {
    c.call("zrt_all_reduce_axis",
           {c.opq("ZRT_AXIS_TENSOR"), c.ptr(op.getInput()),
            c.ptr(op.getResult()), c.i64(numel(op.getInput())),
            c.opq(*dtypeName(elementType(op.getResult()))), c.opq("ZRT_SUM")});
    return success();
  }
};

} // namespace

void mlir::zero::emit::populateTensorParallelEmitters(OpEmitterSet &set) {
  set.add<zero::TensorParallelF, TensorParallelFEmitter>();
  set.add<zero::TensorParallelG, TensorParallelGEmitter>();
}
