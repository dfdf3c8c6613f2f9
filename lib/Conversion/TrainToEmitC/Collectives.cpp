//===- Collectives.cpp - collectives on a mesh axis to zrt calls ----------===//
///
/// \file
/// Emitters of the zero dialect's collectives: zero.all_gather,
/// zero.reduce_scatter and zero.all_reduce (zrt_all_gather, … on the data
/// axis; their zrt_*_axis forms with the axis first on the tensor axis),
/// their nonblocking `_start` forms (a zrt_request each, the receive
/// buffer of the matching zero.wait's result) and zero.wait (zrt_wait),
/// and zero.local_shard (this rank's slice on its axis). Megatron's f and g are
/// in TensorParallel.cpp. Prints only; the rule of the folder is in
/// OpEmitter.h.
///
//===----------------------------------------------------------------------===//

#include "OpEmitter.h"

#include "zero/Analysis/StepPlan.h"

#include "Zero/ZeroOps.h"

using namespace mlir;
using namespace mlir::zero::emit;

namespace {

/// ZRT_SUM / ZRT_AVG / ZRT_MAX.
StringRef reduceOpName(zero::ReduceKind kind) {
  switch (kind) {
  case zero::ReduceKind::sum:
    return "ZRT_SUM";
  case zero::ReduceKind::avg:
    return "ZRT_AVG";
  case zero::ReduceKind::max:
    return "ZRT_MAX";
  }
  return "ZRT_SUM";
}

/// zero.all_gather -> zrt_all_gather(shard, out, shard elements, dtype).
struct AllGatherEmitter : OpEmitterFor<zero::AllGatherOp> {
  LogicalResult emit(zero::AllGatherOp o, EmitContext &c,
                     bool) const override {
    c.collective("zrt_all_gather", o.getAxis(),
                 {c.ptr(o.getShard()), c.ptr(o.getResult()),
                  c.i64(numel(o.getShard())),
                  c.opq(*dtypeName(elementType(o.getShard())))});
    return success();
  }
};

/// zero.reduce_scatter / zero.all_reduce -> zrt_reduce_scatter /
/// zrt_all_reduce(in, out, result elements, dtype, op).
template <typename OpTy>
struct ReduceEmitter : OpEmitterFor<OpTy> {
  explicit ReduceEmitter(StringRef callee) : callee(callee) {}
  LogicalResult emit(OpTy o, EmitContext &c, bool) const override {
    c.collective(callee, o.getAxis(),
                 {c.ptr(o.getInput()), c.ptr(o.getResult()),
                  c.i64(numel(o.getResult())),
                  c.opq(*dtypeName(elementType(o.getInput()))),
                  c.opq(reduceOpName(o.getKind()))});
    return success();
  }
  StringRef callee;
};

/// zero.all_gather_start -> zrt_all_gather_start(shard, out, shard
/// elements, dtype, &request), into the storage of its wait's result.
struct AllGatherStartEmitter : OpEmitterFor<zero::AllGatherStartOp> {
  LogicalResult emit(zero::AllGatherStartOp o, EmitContext &c,
                     bool) const override {
    Value recv = c.ptr(zero::plan::waitOf(o)->getResult(0));
    c.collective("zrt_all_gather_start", o.getAxis(),
                 {c.ptr(o.getShard()), recv, c.i64(numel(o.getShard())),
                  c.opq(*dtypeName(elementType(o.getShard()))),
                  c.request(o)});
    return success();
  }
};

/// zero.reduce_scatter_start / zero.all_reduce_start ->
/// zrt_reduce_scatter_start / zrt_all_reduce_start(in, out, result
/// elements, dtype, op, &request), into the storage of the wait's result.
template <typename OpTy>
struct ReduceStartEmitter : OpEmitterFor<OpTy> {
  explicit ReduceStartEmitter(StringRef callee) : callee(callee) {}
  LogicalResult emit(OpTy o, EmitContext &c, bool) const override {
    Value result = zero::plan::waitOf(o)->getResult(0);
    c.collective(callee, o.getAxis(),
                 {c.ptr(o.getInput()), c.ptr(result), c.i64(numel(result)),
                  c.opq(*dtypeName(elementType(o.getInput()))),
                  c.opq(reduceOpName(o.getKind())), c.request(o)});
    return success();
  }
  StringRef callee;
};

/// zero.wait -> zrt_wait(request).
struct WaitEmitter : OpEmitterFor<zero::WaitOp> {
  LogicalResult emit(zero::WaitOp o, EmitContext &c, bool) const override {
    c.call("zrt_wait", {c.pendingRequest(o.getPending())});
    return success();
  }
};

/// zero.local_shard -> zrt_local_shard(in, out, shard elements, this
/// rank on the op's axis, dtype).
struct LocalShardEmitter : OpEmitterFor<zero::LocalShardOp> {
  LogicalResult emit(zero::LocalShardOp o, EmitContext &c,
                     bool) const override {
    c.call("zrt_local_shard",
           {c.ptr(o.getInput()), c.ptr(o.getResult()),
            c.i64(numel(o.getResult())), c.axisRank(o.getAxis()),
            c.opq(*dtypeName(elementType(o.getInput())))});
    return success();
  }
};

} // namespace

void mlir::zero::emit::populateCollectiveEmitters(OpEmitterSet &set) {
  set.add<zero::AllGatherOp, AllGatherEmitter>();
  set.add<zero::ReduceScatterOp, ReduceEmitter<zero::ReduceScatterOp>>(
      "zrt_reduce_scatter");
  set.add<zero::AllReduceOp, ReduceEmitter<zero::AllReduceOp>>(
      "zrt_all_reduce");
  set.add<zero::AllGatherStartOp, AllGatherStartEmitter>();
  set.add<zero::ReduceScatterStartOp,
          ReduceStartEmitter<zero::ReduceScatterStartOp>>(
      "zrt_reduce_scatter_start");
  set.add<zero::AllReduceStartOp, ReduceStartEmitter<zero::AllReduceStartOp>>(
      "zrt_all_reduce_start");
  set.add<zero::WaitOp, WaitEmitter>();
  set.add<zero::LocalShardOp, LocalShardEmitter>();
}
