//===- Offload.cpp - P_a+cpu's copies to zrt_offload / zrt_fetch calls ----===//
///
/// \file
/// Emitters of the checkpoint copies between device and pinned host memory
/// (ZeroOffloadOps.td): zero.offload_start -> zrt_offload_start(device,
/// host slot, bytes, &ev), zero.offload_wait -> zrt_offload_wait(ev),
/// zero.fetch_start -> zrt_fetch_start(host slot, device, bytes, &ev),
/// zero.fetch_wait -> zrt_fetch_wait(ev). The host slot is the storage
/// zero-buffer-assign recorded for the offload's wait
/// (#zero.storage<host_slot>), the device buffer of a fetch its wait's.
/// Prints only; the rule of the folder is in OpEmitter.h.
///
//===----------------------------------------------------------------------===//

#include "OpEmitter.h"

#include "zero/Analysis/StepPlan.h"

#include "Zero/ZeroOps.h"

using namespace mlir;
using namespace mlir::zero::emit;

namespace {

/// Bytes of a tensor's buffer.
int64_t bytesOf(Value v) {
  return zero::plan::tensorBytes(tensorType(v));
}

/// zero.offload_start -> zrt_offload_start(device, host slot, bytes, &ev).
struct OffloadStartEmitter : OpEmitterFor<zero::OffloadStartOp> {
  LogicalResult emit(zero::OffloadStartOp o, EmitContext &c,
                     bool) const override {
    Value host = c.ptr(zero::plan::waitOf(o)->getResult(0));
    c.call("zrt_offload_start", {c.ptr(o.getInput()), host,
                                 c.i64(bytesOf(o.getInput())),
                                 c.offloadEvent(o)});
    return success();
  }
};

/// zero.fetch_start -> zrt_fetch_start(host slot, device, bytes, &ev).
struct FetchStartEmitter : OpEmitterFor<zero::FetchStartOp> {
  LogicalResult emit(zero::FetchStartOp o, EmitContext &c,
                     bool) const override {
    Value device = c.ptr(zero::plan::waitOf(o)->getResult(0));
    c.call("zrt_fetch_start", {c.ptr(o.getHost()), device,
                               c.i64(bytesOf(o.getHost())),
                               c.offloadEvent(o)});
    return success();
  }
};

/// zero.offload_wait / zero.fetch_wait -> zrt_offload_wait / zrt_fetch_wait.
template <typename OpTy>
struct CopyWaitEmitter : OpEmitterFor<OpTy> {
  explicit CopyWaitEmitter(StringRef callee) : callee(callee) {}
  LogicalResult emit(OpTy o, EmitContext &c, bool) const override {
    c.call(callee, {c.pendingOffload(o.getPending())});
    return success();
  }
  StringRef callee;
};

} // namespace

void mlir::zero::emit::populateOffloadEmitters(OpEmitterSet &set) {
  set.add<zero::OffloadStartOp, OffloadStartEmitter>();
  set.add<zero::OffloadWaitOp, CopyWaitEmitter<zero::OffloadWaitOp>>(
      "zrt_offload_wait");
  set.add<zero::FetchStartOp, FetchStartEmitter>();
  set.add<zero::FetchWaitOp, CopyWaitEmitter<zero::FetchWaitOp>>(
      "zrt_fetch_wait");
}
