//===- ZeroOffload.cpp - checkpoint slices to host memory and back --------===//
///
/// \file
/// Verifiers of `zero.offload_start`, `zero.offload_wait`,
/// `zero.fetch_start` and `zero.fetch_wait` (ZeroOffloadOps.td): each start
/// pairs with exactly one wait of its kind, the pending value carries the
/// copied tensor's type, and a fetch reads a host slot (an offload's wait).
///
//===----------------------------------------------------------------------===//

#include "Zero/ZeroOps.h"

using namespace mlir;
using namespace mlir::zero;

/// A start's pending value: of the copied tensor's type, used exactly once,
/// by a `WaitTy` op.
template <typename WaitTy>
static LogicalResult verifyStart(Operation *op, Value copied, Value pending,
                                 StringRef waitName) {
  auto type = cast<PendingType>(pending.getType());
  if (type.getResult() != copied.getType())
    return op->emitOpError("copies a ")
           << copied.getType() << ", but its pending value is of "
           << type.getResult();
  if (!pending.hasOneUse() || !isa<WaitTy>(*pending.getUsers().begin()))
    return op->emitOpError("must be waited exactly once, by a ") << waitName;
  return success();
}

/// A wait's pending value comes from a `StartTy` op.
template <typename StartTy>
static LogicalResult verifyWait(Operation *op, Value pending,
                                StringRef startName) {
  if (!pending.getDefiningOp<StartTy>())
    return op->emitOpError("waits for a ")
           << startName << ", not for what defines its operand";
  return success();
}

LogicalResult OffloadStartOp::verify() {
  return verifyStart<OffloadWaitOp>(*this, getInput(), getPending(),
                                    "zero.offload_wait");
}

LogicalResult OffloadWaitOp::verify() {
  return verifyWait<OffloadStartOp>(*this, getPending(), "zero.offload_start");
}

LogicalResult FetchStartOp::verify() {
  if (!getHost().getDefiningOp<OffloadWaitOp>())
    return emitOpError("fetches a host slot, the result of a "
                       "zero.offload_wait");
  return verifyStart<FetchWaitOp>(*this, getHost(), getPending(),
                                  "zero.fetch_wait");
}

LogicalResult FetchWaitOp::verify() {
  return verifyWait<FetchStartOp>(*this, getPending(), "zero.fetch_start");
}
