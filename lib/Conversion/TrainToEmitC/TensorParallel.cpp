//===- TensorParallel.cpp - Megatron's f and g to zrt calls ---------------===//
///
/// \file
/// Emitters of zero.tp_f (identity forward: a copy into its result) and
/// zero.tp_g (the sum over the tensor axis: zrt_all_reduce_axis on
/// ZRT_AXIS_TENSOR), and of the sequence-parallel ops: zero.sp_split
/// (this tensor rank's rows: zrt_local_shard), zero.sp_gather
/// (zrt_all_gather_axis) and zero.sp_scatter (zrt_reduce_scatter_axis,
/// ZRT_SUM). All move their element type as is (f32, bf16 or f16:
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

/// zero.sp_split -> zrt_local_shard(x, y, rows' elements, tensor rank,
/// dtype): rank t's R·C elements start at t·R·C of the row-major whole.
struct SequenceSplitEmitter : OpEmitterFor<zero::SequenceSplitOp> {
  LogicalResult emit(zero::SequenceSplitOp op, EmitContext &c,
                     bool) const override {
    c.call("zrt_local_shard",
           {c.ptr(op.getInput()), c.ptr(op.getResult()),
            c.i64(numel(op.getResult())), c.axisRank(zero::MeshAxis::tensor),
            c.opq(*dtypeName(elementType(op.getInput())))});
    return success();
  }
};

/// zero.sp_gather -> zrt_all_gather_axis(ZRT_AXIS_TENSOR, rows, whole,
/// rows' elements, dtype): rank order is row order.
struct SequenceGatherEmitter : OpEmitterFor<zero::SequenceGatherOp> {
  LogicalResult emit(zero::SequenceGatherOp op, EmitContext &c,
                     bool) const override {
    c.collective("zrt_all_gather", zero::MeshAxis::tensor,
                 {c.ptr(op.getInput()), c.ptr(op.getResult()),
                  c.i64(numel(op.getInput())),
                  c.opq(*dtypeName(elementType(op.getInput())))});
    return success();
  }
};

/// zero.sp_scatter -> zrt_reduce_scatter_axis(ZRT_AXIS_TENSOR, whole,
/// rows, rows' elements, dtype, ZRT_SUM).
struct SequenceScatterEmitter : OpEmitterFor<zero::SequenceScatterOp> {
  LogicalResult emit(zero::SequenceScatterOp op, EmitContext &c,
                     bool) const override {
    c.collective("zrt_reduce_scatter", zero::MeshAxis::tensor,
                 {c.ptr(op.getInput()), c.ptr(op.getResult()),
                  c.i64(numel(op.getResult())),
                  c.opq(*dtypeName(elementType(op.getInput()))),
                  c.opq("ZRT_SUM")});
    return success();
  }
};

} // namespace

void mlir::zero::emit::populateTensorParallelEmitters(OpEmitterSet &set) {
  set.add<zero::TensorParallelF, TensorParallelFEmitter>();
  set.add<zero::TensorParallelG, TensorParallelGEmitter>();
  set.add<zero::SequenceSplitOp, SequenceSplitEmitter>();
  set.add<zero::SequenceGatherOp, SequenceGatherEmitter>();
  set.add<zero::SequenceScatterOp, SequenceScatterEmitter>();
}
