//===- LayoutStates.cpp - zero-layout-states ------------------------------===//
///
/// \file
/// The state layout of the compiled program as `#zero.slot` attributes
/// (lib/Analysis/StateLayout.cpp holds the algorithm); see ZeroPasses.td.
///
//===----------------------------------------------------------------------===//

#include "zero/Analysis/StateLayout.h"
#include "zero/Transforms/Passes.h"

#include "Zero/ZeroDialect.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROLAYOUTSTATES
#include "zero/Transforms/ZeroPasses.h.inc"
} // namespace mlir::zero

using namespace mlir;

namespace {
struct ZeroLayoutStatesPass
    : public zero::impl::ZeroLayoutStatesBase<ZeroLayoutStatesPass> {
  using Base::Base;
  void runOnOperation() override {
    zero::StateLayoutStats stats = zero::layoutStates(getOperation());
    numPlaced = stats.statesPlaced;
    numSpans = stats.groupSpans;
    stateBytes = stats.stateBytes;
    numConstants = stats.constantsPlaced;
    markAllAnalysesPreserved();
  }
};
} // namespace
