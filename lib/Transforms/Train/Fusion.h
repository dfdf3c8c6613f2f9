//===- Fusion.h - helpers of the train fusion passes ------------*- C++ -*-===//
///
/// \file
/// What train-fuse-epilogues and train-fuse-layer-norm share: where a fused
/// op may go, and the collect-then-rewrite driver.
///
//===----------------------------------------------------------------------===//

#ifndef ZERO_LIB_TRANSFORMS_TRAIN_FUSION_H
#define ZERO_LIB_TRANSFORMS_TRAIN_FUSION_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <utility>

namespace mlir::zero::fusion {

/// Whether `v` is available right before `op`: an argument of a block that
/// encloses `op`, or defined by an op before `op` in `op`'s block.
inline bool availableBefore(Value v, Operation *op) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return v.getParentRegion()->isAncestor(op->getParentRegion());
  return def->getBlock() == op->getBlock() && def->isBeforeInBlock(op);
}

/// Collects every op of type `First` and of type `Second` under `root` (in
/// walk order) before rewriting anything, then calls `fuseFirst` on each
/// `First` and `fuseSecond` on each `Second`; each returns whether it fused.
/// `fuseFirst` may erase its op and ops of neither type (the `Second`s are
/// still to come); `fuseSecond` runs after every `First`, so it may erase
/// its op and any but other `Second`s. Returns the numbers of fusions
/// {first, second}.
template <typename First, typename Second, typename FuseFirst,
          typename FuseSecond>
std::pair<uint64_t, uint64_t> fuseAll(Operation *root, FuseFirst fuseFirst,
                                      FuseSecond fuseSecond) {
  llvm::SmallVector<First> firsts;
  llvm::SmallVector<Second> seconds;
  root->walk([&](Operation *op) {
    if (auto f = llvm::dyn_cast<First>(op))
      firsts.push_back(f);
    else if (auto s = llvm::dyn_cast<Second>(op))
      seconds.push_back(s);
  });
  std::pair<uint64_t, uint64_t> n{0, 0};
  for (First f : firsts)
    n.first += fuseFirst(f) ? 1 : 0;
  for (Second s : seconds)
    n.second += fuseSecond(s) ? 1 : 0;
  return n;
}

} // namespace mlir::zero::fusion

#endif // ZERO_LIB_TRANSFORMS_TRAIN_FUSION_H
