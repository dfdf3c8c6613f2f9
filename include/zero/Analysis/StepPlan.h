//===- StepPlan.h - the storage plan of a training step ---------*- C++ -*-===//
///
/// \file
/// The analysis convert-train-to-emitc and zero-buffer-assign share: the
/// model.h contract of a step (ModulePlan: its functions, inputs, states and
/// groups with their #zero.slot placements) and, per function, where every
/// tensor value lives (FunctionPlan): a view of a state symbol (a load
/// without copy), a view of another value (reshape, unpack, split, pack
/// slots), a state it is computed in (AdamW in place, store forwarding,
/// group spans), or a block of the activation or temporary arena placed by
/// greedy best fit over live intervals (BufferPlan.h) or read back from
/// zero-buffer-assign's annotations. The lowering only reads the plan.
///
/// The decisions still made here (load copies, in-place updates, pack
/// slots, fused casts, fill / AdamW / sum-of-squares runs, state spans) are
/// the ones issue #17 moves into passes of their own, one at a time.
///
//===----------------------------------------------------------------------===//

#ifndef ZERO_ANALYSIS_STEPPLAN_H
#define ZERO_ANALYSIS_STEPPLAN_H

#include "zero/Analysis/BufferPlan.h"
#include "zero/Analysis/Kernels.h"
#include "zero/Analysis/NarrowFloat.h"

#include "Train/TrainOps.h"
#include "Zero/ZeroLayout.h"
#include "Zero/ZeroOps.h"
#include "zrt/abi.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <map>

#include <optional>
#include <string>
#include <vector>

namespace mlir::zero::plan {

/// The tensor helpers of Kernels.h, unqualified in the plan's code.
using zero::elementType;
using zero::StorageAttr;
using zero::StorageKind;
using zero::numel;
using zero::rowsCols;
using zero::tensorType;

//===----------------------------------------------------------------------===//
// Constants of the runtime ABI
//===----------------------------------------------------------------------===//

/// Arenas (zrt_mem_kind, zrt/abi.h: the ones the lowering uses).
enum MemKind : int {
  kMemParams = ZRT_MEM_PARAMETERS,
  kMemGrads = ZRT_MEM_GRADIENTS,
  kMemMaster = ZRT_MEM_MASTER_WEIGHTS,
  kMemMoments = ZRT_MEM_MOMENTS,
  kMemActs = ZRT_MEM_ACTIVATIONS,
  kMemTemps = ZRT_MEM_TEMPORARIES,
  /// The program's constants (ZRT_MEM_CONSTANTS; the lowering's arenas skip
  /// the comm buffers, so its index here is not the zrt kind).
  kMemConsts = ZRT_MEM_COMM_BUFFERS,
  kNumMem
};
inline constexpr const char *kMemEnum[kNumMem] = {
    "ZRT_MEM_PARAMETERS", "ZRT_MEM_GRADIENTS",   "ZRT_MEM_MASTER_WEIGHTS",
    "ZRT_MEM_MOMENTS",    "ZRT_MEM_ACTIVATIONS", "ZRT_MEM_TEMPORARIES",
    "ZRT_MEM_CONSTANTS"};
inline constexpr const char *kMemName[kNumMem] = {
    "parameters",  "gradients",   "master_weights", "moments",
    "activations", "temporaries", "constants"};

/// zrt_state_kind (zrt/abi.h).
enum StateKindC : int {
  kStateParam = ZRT_STATE_PARAM,
  kStateGrad = ZRT_STATE_GRAD,
  kStateMaster = ZRT_STATE_MASTER,
  kStateExpAvg = ZRT_STATE_EXP_AVG,
  kStateExpAvgSq = ZRT_STATE_EXP_AVG_SQ
};

inline constexpr int64_t kAlign = zero::kArenaAlignment;

inline int64_t alignUp(int64_t bytes) { return zero::alignToArena(bytes); }

/// Storage bytes of one element; 0 for types the lowering cannot store.
inline int64_t elementBytes(Type t) { return zero::storageBytes(t); }


/// Bytes of a tensor's buffer (a 0-D tensor is one element).
inline int64_t tensorBytes(RankedTensorType t) {
  return t.getNumElements() * elementBytes(t.getElementType());
}


//===----------------------------------------------------------------------===//
// Module-level description
//===----------------------------------------------------------------------===//

/// A byte placement in one arena.
struct Placement {
  int mem = -1;
  int64_t offset = 0;
  bool operator==(const Placement &o) const {
    return mem == o.mem && offset == o.offset;
  }
};

/// One state symbol (train.param, train.state, zero.shard).
struct StateInfo {
  Operation *op = nullptr;
  std::string name;
  RankedTensorType type;
  int kind = kStateParam; ///< zrt_state_kind.
  int group = -1;         ///< Group index of a zero.shard, else -1.
  bool hasStorage = true; ///< false for a {zero.sharded} train.param.
  Placement place;
};

/// One zero.group.
struct GroupInfo {
  zero::GroupOp op;
  std::string name;
  SmallVector<std::string> members;
  SmallVector<int64_t> offsets, numels;
  SmallVector<bool> decay;
  int64_t padded = 0, shard = 0;
  /// The members' parameters (and gradient states) lie back to back in
  /// their arena in member order, from `paramSpan` (`gradSpan`), with
  /// (padded - total) zero elements reserved after them: a flat buffer of
  /// the group may be that range (decideStateSpans).
  std::optional<Placement> paramSpan, gradSpan;
};

/// The role of a function in the model.h contract.
enum class Role { Forward, ForwardBackward, OptimizerStep, Logits };

/// How values and scratch get their offsets in the activation and
/// temporary arenas.
enum class Assign {
  Bump,      ///< In program order, no reuse; one scratch pool at the end.
  BestFit,   ///< Greedy best fit over live intervals (zero-buffer-assign).
  Annotated, ///< The offsets zero-buffer-assign recorded in the IR, checked.
};

/// One block of the activation or temporary arena: a value's own buffer or
/// the scratch of one op, live over [first, last] (op positions; -1 is the
/// function's entry).
struct PlanBlock {
  int mem = kMemTemps;
  int64_t bytes = 0;
  int64_t first = 0, last = 0;
  Value value;                    ///< Null for scratch.
  Operation *scratchOp = nullptr; ///< The op whose scratch this is.
  int64_t offset = -1;
};

/// Where a tensor value lives.
struct Buffer {
  enum Kind { None, Arena, View, HostSlot } kind = None;
  Placement place;        ///< Arena; HostSlot: offset in the host block.
  Value base;             ///< View: the value viewed.
  int64_t elemOffset = 0; ///< View: element offset into `base`.
};


/// zero-buffer-assign's per-module arena sizes (a dictionary of
/// `activations` and `temporaries` bytes).
inline constexpr StringLiteral kArenaBytesAttr = "zero.arena_bytes";
/// zero-buffer-assign's size of the pinned host block of P_a+cpu's host
/// slots (an i64, on the function and the module; absent without slots).
inline constexpr StringLiteral kHostSlotBytesAttr = "zero.host_slot_bytes";

//===----------------------------------------------------------------------===//
// State access (lib/Analysis/StateAccess.cpp)
//===----------------------------------------------------------------------===//

/// train.load or zero.shard_load.
bool isLoad(Operation *op);
/// The state symbol a load reads.
StringRef loadSymbol(Operation *op);
/// The state symbol a store, accumulate or fill writes (empty otherwise).
StringRef writtenSymbol(Operation *op);
/// The value a store or accumulate writes into its state.
Value storedValue(Operation *op);
/// The zero.wait of a nonblocking collective's start, the zero.offload_wait
/// / zero.fetch_wait of an offload or fetch start (null when none).
Operation *waitOf(Operation *start);
/// Whether state `b` starts right where state `a` ends in the same arena.
bool backToBack(const StateInfo *a, const StateInfo *b);
/// Checks the element type of a state or value the lowering must store.
LogicalResult checkStorable(Operation *op, RankedTensorType t);

//===----------------------------------------------------------------------===//
// The module (lib/Analysis/ModulePlan.cpp)
//===----------------------------------------------------------------------===//

/// The model.h contract of a step after zero-layout-states: its functions
/// and their roles, the inputs, the states and groups with their
/// placements, and the arena sizes the function plans fill in.
class ModulePlan {
public:
  explicit ModulePlan(ModuleOp module)
      : module(module), ctx(module.getContext()) {}

  /// Reads the states, groups and the model description; fails with the
  /// lowering's diagnostics on IR it cannot lower.
  LogicalResult analyze() {
    return failure(failed(collectDeclarations()) || failed(describe()));
  }
  /// Reads only the states and groups with their placements (what the
  /// decision passes need; no model.h contract).
  LogicalResult analyzeStates() { return collectDeclarations(); }
  /// Plans the buffers of every function by best fit, or in program order
  /// without reuse when `bump` (after analyze()), optionally writing the
  /// placement into the IR (zero-buffer-assign).
  FailureOr<BufferPlan> planBuffers(bool annotate, bool bump = false);

  ModuleOp module;
  MLIRContext *ctx;
  std::vector<StateInfo> states;
  llvm::StringMap<unsigned> stateIndex;
  std::vector<GroupInfo> groups;
  llvm::StringMap<unsigned> groupIndex;
  llvm::StringMap<train::ParamOp> params;
  int64_t arenaBytes[kNumMem] = {};
  /// Whether the program has arena `m` (the constants arena only when it
  /// has constants, so programs without any are unchanged).
  bool hasArena(int m) const { return m != kMemConsts || arenaBytes[m] > 0; }
  /// The activation arena @forward_backward's plan needs (-1 before it is
  /// planned): what the other functions may use of it (shareActivations).
  int64_t forwardBackwardActivations = -1;
  /// Bytes of the pinned host block of the host slots (P_a+cpu; max over
  /// the functions, 0 without slots).
  int64_t hostSlotBytes = 0;

  /// A state by symbol name; emits an error at `user` when missing or
  /// without storage.
  const StateInfo *lookupState(Operation *user, StringRef name);

  // Description.
  std::string modelName = "model";
  int64_t worldSize = 1, stage = 0, batch = 0, seq = 0, vocab = 0,
          paddedVocab = 0, numParams = 0, numParamInfos = 0;
  /// @forward, @forward_backward, @optimizer_step, @logits (null: absent).
  func::FuncOp functions[4];
  /// M of the module's #zero.mesh (1 without one).
  int64_t tensorSize = 1;

  /// One named input of an array model (model.h zrt_input_desc): an
  /// argument of @forward with a `train.name`, in argument order.
  struct InputInfo {
    std::string name;
    RankedTensorType type; ///< The per-rank [B, ...] tensor.
  };
  /// Set when @forward's arguments carry `train.name`s (describe()): the
  /// program takes these inputs through forward_inputs /
  /// forward_backward_inputs instead of (ids, targets).
  SmallVector<InputInfo> inputs;
  bool arrayInputs() const { return !inputs.empty(); }

  /// Whether @forward_backward takes the loss scale (fp16-mixed): the
  /// program then defines zrt_gen_loss_scale and zrt_gen_set_loss_scale.
  bool lossScaled = false;

protected:
  LogicalResult collectDeclarations();
  LogicalResult describe();
  /// describe() of an array model: every argument of @forward named (a
  /// unique C-identifier `train.name`), a static tensor of rank >= 1 of
  /// f32/bf16/f16/i32/i64 with one leading batch size B; seq = 1, vocab 0.
  LogicalResult describeInputs(func::FuncOp forward);
};

//===----------------------------------------------------------------------===//
// One function (lib/Analysis/BufferPlan.cpp, PlanDecisions.cpp)
//===----------------------------------------------------------------------===//

/// Where every tensor value of one function of the step lives.
class FunctionPlan {
public:
  FunctionPlan(ModulePlan &mp, func::FuncOp fn, Role role,
               Assign assign = Assign::Bump)
      : mp(mp), fn(fn), role(role), assign(assign) {}

  /// Places every value; fills the arena high-water marks of `mp`. With
  /// Assign::Annotated every choice is the IR's #zero.storage (checked to
  /// be one the step allows), else the plan decides.
  LogicalResult plan();
  /// Writes the placement into the IR (zero-buffer-assign), after plan():
  /// a #zero.storage for every result, used argument and scratch.
  void annotate();
  /// The f32 -> bf16 casts of AdamW results that the AdamW call can write
  /// itself (train-fuse-adamw-cast marks them `zero.written_by_adamw`): at
  /// most one per AdamW, in program order. Runs the load-copy and
  /// store-forwarding analysis plan() runs; call it instead of plan().
  SmallVector<train::CastOp> foldableAdamWCasts();
  /// The runs of `train.fill 0` into states that lie back to back in their
  /// arena that one call can zero (zero-fuse-state-runs marks them
  /// `zero.state_run`), each in program order. After
  /// ModulePlan::analyzeStates(); call it instead of plan().
  SmallVector<SmallVector<train::FillOp>> foldableFillRuns();
  /// The runs of AdamW updates of adjacent states that one call can do
  /// (zero-fuse-state-runs marks them `zero.state_run`), in program order.
  /// Honours the `zero.written_by_adamw` marks (run train-fuse-adamw-cast
  /// first); empty if one of them is invalid (plan() reports it). After
  /// ModulePlan::analyzeStates(); call it instead of plan().
  SmallVector<SmallVector<train::AdamWOp>> foldableAdamWRuns();
  /// The chains of sums of squares over adjacent gradients one call can do
  /// (zero-fuse-state-runs marks their sums and adds `zero.state_run`); only
  /// in the optimizer step (the role). As foldableAdamWRuns otherwise.
  SmallVector<SmallVector<Operation *>> foldableSumSquaresRuns();
  /// Bytes of the activation / temporary arena this function needs.
  int64_t arenaExtent(int mem) const { return bump[mem]; }
  /// Sum of the sizes of its blocks in `mem` (no reuse).
  int64_t blockSum(int mem) const;

protected:
  LogicalResult planArguments();
  void decideLoadCopies();
  void decideInPlaceUpdates();
  void decidePackSlots();
  /// Numbers the ops of the body (`pos`, `seedPos`).
  void numberOps();
  /// The decisions the run criteria depend on (what plan() does before
  /// the runs), for the foldable*Runs queries; fails on an invalid fused
  /// cast mark.
  LogicalResult planBeforeRuns();
  /// The ops of `kind` marked `zero.state_run`, by run id, in program order.
  std::map<int64_t, SmallVector<Operation *>>
  markedRuns(function_ref<bool(Operation *)> kind);
  /// Whether `cast` (a user of `adamw`'s new parameter) can be written by
  /// the AdamW call: f32 -> bf16 into a state it is computed in (store
  /// forwarding), with no other access of that state in between and no
  /// skip_nonfinite. After decideInPlaceUpdates.
  bool canFoldCast(train::AdamWOp adamw, train::CastOp cast);
  /// Adopts the casts marked `zero.written_by_adamw` (fusedCasts,
  /// castsInAdamW); a marked cast that cannot be folded is an error.
  LogicalResult adoptFusedCasts();
  /// A run of zero fills one call can zero (fillRunCandidates).
  struct FillRunCandidate {
    SmallVector<Operation *> fills; ///< In program order.
    Operation *last;                ///< Where the call happens.
    Placement place;
    int64_t bytes;
    Type elt;
  };
  /// Every run of two or more zero fills computed in states back to back in
  /// one arena with one element type, with no other access of a state
  /// between its fill and the run's last fill. After decideInPlaceUpdates.
  SmallVector<FillRunCandidate> fillRunCandidates();
  /// Adopts the fills marked `zero.state_run` (fillRuns, fillsInRuns); a
  /// marked group that is not a run is an error.
  LogicalResult adoptFillRuns();
  /// Every maximal run of two or more consecutive train.adamw updates,
  /// each in place, of states back to back in every arena (the fused bf16
  /// copies too), with one step, learning rate, clip coefficient and
  /// hyperparameters, and no other access of a member's states between the
  /// run's first op and its own. After decideStateSpans.
  SmallVector<SmallVector<train::AdamWOp>> adamwRunCandidates();
  /// Adopts the AdamW ops marked `zero.state_run` (adamwRuns,
  /// adamwInRuns); a marked group that is not a run is an error.
  LogicalResult adoptAdamWRuns();
  struct SumSquaresRun {
    Value first;     ///< The first state's value (its pointer starts the range).
    int64_t total;   ///< Elements of the range.
    Value base;      ///< Added to the sum (null: none).
  };
  /// A chain of sums of squares one call can do (sumSquaresCandidates).
  struct SumSquaresCandidate {
    Operation *last;               ///< The chain's last add: the call.
    SumSquaresRun run;
    SmallVector<Operation *> ops;  ///< Its sums and adds, program order.
    int64_t to;                    ///< pos(last): where the base is read.
  };

  /// Every maximal chain add(...add(x, sum_squares(a))..., sum_squares(z))
  /// over gradients back to back in one arena, in the optimizer step, with
  /// none of them written between its own sum and the last add. After
  /// decideStateSpans.
  SmallVector<SumSquaresCandidate> sumSquaresCandidates();
  /// Adopts the sums and adds marked `zero.state_run` (sumSquaresRuns,
  /// inSumSquaresRuns, extendedLife); a marked group that is not a chain is
  /// an error.
  LogicalResult adoptSumSquaresRuns();
  void decideStateSpans();
  const StateInfo *loadedState(Value v);
  const StateInfo *stateAt(Value v);
  /// One access of a state by `op`, effective over positions [first, last].
  struct Access {
    Operation *op;
    int64_t first, last;
    bool write;
  };
  SmallVector<Access> accesses(StringRef sym);
  /// Whether an access of `sym` other than by `own` overlaps [from, to]:
  /// reads when `reads`, writes when `writes`.
  bool accessedIn(StringRef sym, int64_t from, int64_t to, bool reads,
                  bool writes, ArrayRef<Operation *> own = {});
  void shareActivations();
  int64_t scratchBytes(Operation *op);
  void request(Value v, int mem, int64_t first);
  LogicalResult assignOffsets();
  void bestFit(int mem);
  LogicalResult readAnnotations();
  /// The #zero.storage the IR records for `v` (null when none).
  StorageAttr recorded(Value v);
  /// Whether `v` takes storage of kind `kind`: deciding, whether `legal`;
  /// with Assign::Annotated, whether the IR records that kind (a recorded
  /// choice that is not legal is not taken, and checkStorage reports it).
  bool take(Value v, StorageKind kind, bool legal);
  /// The #zero.storage of `v` in this plan, after plan()'s placement.
  StorageAttr storageOf(Value v);
  /// Assign::Annotated: every value's recorded #zero.storage is the plan's.
  LogicalResult checkStorage();
  SmallVector<Value> aliasSet(Value v);
  int64_t lastUse(Value v);
  bool isActivation(Value v);


  ModulePlan &mp;
  func::FuncOp fn;
  Role role;
  Assign assign;

  // Plan.
  DenseMap<Operation *, int64_t> pos;
  /// The ops of the block that load or write each state symbol, in block
  /// order (numberOps): the per-symbol queries (accesses, the in-place and
  /// forwarding checks) visit these instead of the whole block.
  llvm::StringMap<SmallVector<Operation *, 4>> symbolOps;
  /// symbolOps's list for `sym` (empty when the block never touches it).
  ArrayRef<Operation *> opsOf(StringRef sym) const;
  int64_t seedPos = INT64_MAX;
  DenseMap<Value, Buffer> buffers;
  /// P_a+cpu's host slots (zero.offload_wait results): bytes [offset,
  /// offset + bytes) of the pinned host block, live over [first, last]; in
  /// program order, no reuse (every slot lives across the loss seed).
  struct HostSlot {
    int64_t offset, bytes, first, last;
  };
  DenseMap<Value, HostSlot> hostSlots;
  int64_t hostBytes = 0; ///< The host block this function needs.
  DenseSet<Operation *> copyLoads;             ///< Loads that copy.
  DenseSet<Value> inPlaceResults;              ///< AdamW results on the state.
  DenseMap<Value, StringRef> forwardedResults; ///< Computed in this state.
  /// Values computed in their slot of a zero.pack's flat result (a view of
  /// it at an element offset), so the pack copies nothing for them.
  DenseMap<Value, std::pair<Value, int64_t>> packSlots;
  /// A zero.pack result with slot members -> the first member's position
  /// (where the flat buffer's life begins).
  DenseMap<Value, int64_t> packFirst;
  /// train.adamw -> the train.cast of its new parameter to bf16 that the
  /// AdamW call writes itself (out_bf16); the cast emits nothing.
  DenseMap<Operation *, Operation *> fusedCasts;
  DenseSet<Operation *> castsInAdamW;
  /// Zero fills of adjacent states merged into one call: the fill op where
  /// the merged call goes -> (state placement, bytes, element type); the
  /// other fills of the run emit nothing.
  struct FillRun {
    Placement place;
    int64_t bytes = 0;
    Type elt;
  };
  DenseMap<Operation *, FillRun> fillRuns;
  DenseSet<Operation *> fillsInRuns;
  /// Multi-tensor AdamW (PyTorch's fused AdamW over a flat buffer): the
  /// train.adamw ops of a run update states that lie back to back in every
  /// arena; the first op of the run emits one zrt_shard_adamw over the
  /// whole range (and one bf16 cast when their casts are fused), the others
  /// nothing.
  struct AdamWRun {
    SmallVector<train::AdamWOp> ops;
    SmallVector<int64_t> offsets, numels;
    SmallVector<bool> decay;
    double weightDecay = 0.0;
    int64_t total = 0;
  };
  DenseMap<Operation *, AdamWRun> adamwRuns;
  DenseSet<Operation *> adamwInRuns;
  /// Gradient norm over back-to-back states: the last train.add of a chain
  /// add(...add(x, sum_squares(a))..., sum_squares(z)) whose a..z are
  /// adjacent states (x another such sum, or any value) emits one sum of
  /// squares over the range (and adds x), the rest of the chain nothing.
  DenseMap<Operation *, SumSquaresRun> sumSquaresRuns;
  /// Values read later than their uses in the IR say (a sum-of-squares
  /// chain's base, read at the chain's last add) -> that position.
  DenseMap<Value, int64_t> extendedLife;
  DenseSet<Operation *> inSumSquaresRuns;
  /// Flat buffers of a group that are its members' states (FSDP's flat
  /// parameter, DeepSpeed's contiguous gradients): a zero.pack of the
  /// members' gradient (or parameter) loads, and the flat value a
  /// zero.unpack spreads into the members' parameter stores, placed at the
  /// group's span of that arena (GroupInfo), so the pack and the stores
  /// copy nothing.
  DenseMap<Value, Placement> stateSpans;
  /// All-reduces that run in place in a gradient span (decideStateSpans):
  /// they write the members' gradient states from the start to the wait.
  struct InPlaceReduction {
    int64_t start, wait;
    SmallVector<std::string> syms;
  };
  SmallVector<InPlaceReduction> inPlaceReductions;
  int64_t bump[kNumMem] = {};                  ///< Per-function acts / temps.
  SmallVector<PlanBlock> blocks;               ///< Acts / temps blocks.
  DenseMap<Value, unsigned> valueBlock;        ///< value -> its block.
  DenseMap<Operation *, int64_t> scratchAt;    ///< op -> its scratch offset.
  DenseMap<Operation *, int64_t> scratchLen;   ///< op -> its scratch bytes.
  int64_t scratchBase = 0, scratchSize = 0;
  SmallVector<std::pair<unsigned, Value>> scalarArgs; ///< (emitc arg, IR arg).
  /// The `which` of the loss scale in scalarArgs: read from the global
  /// kLossScaleGlobal, not from an argument of the emitted function.
  static constexpr unsigned kLossScaleArg = ~0u;
  static constexpr const char *kLossScaleGlobal = "zrt_gen_loss_scale";
  /// Token ids / targets copied into their arena buffers at entry.
  SmallVector<BlockArgument> inputArgs;

};

} // namespace mlir::zero::plan

#endif // ZERO_ANALYSIS_STEPPLAN_H
