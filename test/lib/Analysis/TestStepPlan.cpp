//===- TestStepPlan.cpp - test passes of the step plan's analyses ---------===//
///
/// \file
/// `test-state-access` prints the state-access analysis of each function of
/// a step (lib/Analysis/StateAccess.cpp: op positions, last uses through
/// aliases, the activation split, and every state's read and write
/// intervals); `test-buffer-plan` prints the buffer planner's blocks
/// (lib/Analysis/BufferPlan.cpp: arena, byte range and live range of every
/// value and scratch, and the arena extents against bump allocation). Both
/// run the plan as zero-buffer-assign does (best fit, the placement choices
/// included) and change nothing. test/Analysis/*.mlir check them, as
/// Triton's test-allocation and IREE's VM analysis tests do.
///
//===----------------------------------------------------------------------===//

#include "zero/Analysis/StepPlan.h"

#include "mlir/Pass/Pass.h"
#include "llvm/ADT/SetVector.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::zero::plan;

namespace {

/// The function plan with its analysis results opened for printing.
class PlanProbe : public FunctionPlan {
public:
  using FunctionPlan::FunctionPlan;

  /// `%N` for op position N's results, `%argK` for arguments.
  std::string nameOf(Value v) {
    if (auto a = dyn_cast<BlockArgument>(v))
      return ("%arg" + Twine(a.getArgNumber())).str();
    auto r = cast<OpResult>(v);
    std::string s = ("%" + Twine(pos.lookup(r.getOwner()))).str();
    if (r.getOwner()->getNumResults() > 1)
      s += ("#" + Twine(r.getResultNumber())).str();
    return s;
  }

  void printStateAccess(raw_ostream &os) {
    os << "test-state-access @" << fn.getSymName() << "\n";
    llvm::SetVector<StringRef> symbols;
    for (Operation &op : fn.getBody().front()) {
      if (isLoad(&op))
        symbols.insert(loadSymbol(&op));
      if (StringRef w = writtenSymbol(&op); !w.empty())
        symbols.insert(w);
      for (Value r : op.getResults()) {
        if (!isa<RankedTensorType>(r.getType()))
          continue;
        os << "  " << nameOf(r) << " = " << op.getName()
           << ": last use " << lastUse(r);
        SmallVector<Value> aliases = aliasSet(r);
        if (aliases.size() > 1) {
          os << ", aliases";
          for (Value a : ArrayRef<Value>(aliases).drop_front())
            os << " " << nameOf(a);
        }
        if (isActivation(r))
          os << ", activation";
        if (const StateInfo *s = stateAt(r))
          os << ", in @" << s->name;
        os << "\n";
      }
    }
    for (StringRef sym : symbols) {
      os << "  @" << sym << ":";
      for (const Access &a : accesses(sym)) {
        os << " " << (a.write ? "write" : "read") << " [" << a.first << ", "
           << a.last << "]";
        if (a.op)
          os << " by " << a.op->getName() << " (" << pos.lookup(a.op) << ")";
        else
          os << " by an in-place all-reduce";
        os << ";";
      }
      os << "\n";
    }
  }

  void printBufferPlan(raw_ostream &os) {
    os << "test-buffer-plan @" << fn.getSymName() << ": activations "
       << arenaExtent(kMemActs) << ", temporaries " << arenaExtent(kMemTemps)
       << " (without reuse: activations " << blockSum(kMemActs)
       << ", temporaries " << blockSum(kMemTemps) << ")\n";
    for (const PlanBlock &blk : blocks) {
      os << "  ";
      if (blk.value)
        os << nameOf(blk.value);
      else
        os << "scratch of " << pos.lookup(blk.scratchOp);
      os << ": " << kMemName[blk.mem] << " [" << blk.offset << ", "
         << blk.offset + blk.bytes << ") live [" << blk.first << ", "
         << blk.last << "]\n";
    }
  }
};

template <typename Derived>
struct StepPlanTestPass
    : public PassWrapper<Derived, OperationPass<ModuleOp>> {
  void runOnOperation() override {
    ModulePlan mp(this->getOperation());
    if (failed(mp.analyze()))
      return this->signalPassFailure();
    static constexpr Role roles[4] = {Role::Forward, Role::ForwardBackward,
                                      Role::OptimizerStep, Role::Logits};
    // @forward_backward first, as zero-buffer-assign plans them.
    for (int i : {1, 0, 2, 3}) {
      if (!mp.functions[i])
        continue;
      PlanProbe probe(mp, mp.functions[i], roles[i], Assign::BestFit);
      if (failed(probe.plan()))
        return this->signalPassFailure();
      static_cast<Derived *>(this)->print(probe, llvm::outs());
    }
    this->markAllAnalysesPreserved();
  }
};

struct TestStateAccessPass : StepPlanTestPass<TestStateAccessPass> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestStateAccessPass)
  StringRef getArgument() const final { return "test-state-access"; }
  StringRef getDescription() const final {
    return "Print the state-access analysis of each function of the step";
  }
  void print(PlanProbe &p, raw_ostream &os) { p.printStateAccess(os); }
};

struct TestBufferPlanPass : StepPlanTestPass<TestBufferPlanPass> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestBufferPlanPass)
  StringRef getArgument() const final { return "test-buffer-plan"; }
  StringRef getDescription() const final {
    return "Print the buffer planner's blocks of each function of the step";
  }
  void print(PlanProbe &p, raw_ostream &os) { p.printBufferPlan(os); }
};

} // namespace

namespace mlir::zero::test {
void registerTestPasses() {
  PassRegistration<TestStateAccessPass>();
  PassRegistration<TestBufferPlanPass>();
}
} // namespace mlir::zero::test
