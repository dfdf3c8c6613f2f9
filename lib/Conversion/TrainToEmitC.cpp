//===- TrainToEmitC.cpp - convert-train-to-emitc --------------------------===//
///
/// \file
/// Lowers a training step (train + zero dialects) to the EmitC dialect; the
/// C++ that `mlir::emitc::translateToCpp` prints from the result implements
/// runtime/include/zrt/model.h. See Conversion/Passes.td for the contract
/// and docs/codegen.md for the buffer model and how to read the C++.
///
/// The pass plans first and emits second, per function:
///  1. placement: every tensor value gets a buffer — a view of a state
///     symbol (load without copy), a view of another value (reshape,
///     unpack), or a block in the activation or temporary arena (the
///     function's inputs too: token ids, targets and the optimizer's
///     scalars are copied into arena buffers at entry);
///  2. emission: one `emitc.call_opaque` of a zrt_* function per op (a few
///     for some), each wrapped in ZRT_CHECK, on pointers computed from the
///     arena base globals. Arena memory may be device memory: the host
///     never reads or writes it but through zrt_copy_to_device /
///     zrt_copy_to_host (docs/codegen.md, "The host/device boundary").
///
//===----------------------------------------------------------------------===//

#include "zero/Conversion/Passes.h"
#include "zero/Conversion/BufferPlan.h"
#include "zero/Conversion/CompileInfo.h"
#include "zero/Analysis/Report.h"

#include "NarrowFloat.h"
#include "TrainToEmitC/OpEmitter.h"

#include "Train/TrainOps.h"
#include "Zero/ZeroLayout.h"
#include "Zero/ZeroOps.h"

#include "mlir/Dialect/EmitC/IR/EmitC.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace mlir::zero {
#define GEN_PASS_DEF_CONVERTTRAINTOEMITC
#include "zero/Conversion/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;

namespace {

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
constexpr const char *kMemEnum[kNumMem] = {
    "ZRT_MEM_PARAMETERS", "ZRT_MEM_GRADIENTS",   "ZRT_MEM_MASTER_WEIGHTS",
    "ZRT_MEM_MOMENTS",    "ZRT_MEM_ACTIVATIONS", "ZRT_MEM_TEMPORARIES",
    "ZRT_MEM_CONSTANTS"};
constexpr const char *kMemName[kNumMem] = {
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

constexpr int64_t kAlign = zero::kArenaAlignment;

int64_t alignUp(int64_t bytes) { return zero::alignToArena(bytes); }

/// Storage bytes of one element; 0 for types the lowering cannot store.
int64_t elementBytes(Type t) { return zero::storageBytes(t); }

using zero::emit::elementType;
using zero::emit::numel;
using zero::emit::rowsCols;
using zero::emit::tensorType;
/// Bytes of a tensor's buffer (a 0-D tensor is one element).
int64_t tensorBytes(RankedTensorType t) {
  return t.getNumElements() * elementBytes(t.getElementType());
}

/// ZRT_F32 / ZRT_BF16 / ZRT_F16 for collective and copy dtypes.
std::optional<StringRef> dtypeName(Type t) {
  if (std::optional<const char *> d = zero::narrow::dtype(t))
    return StringRef(*d);
  return std::nullopt;
}

/// A C string literal.
std::string cString(StringRef s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
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
  enum Kind { None, Arena, View } kind = None;
  Placement place;        ///< Arena.
  Value base;             ///< View: the value viewed.
  int64_t elemOffset = 0; ///< View: element offset into `base`.
};

using zero::emit::CArg;

/// The per-op emission patterns (lib/Conversion/TrainToEmitC/), looked up
/// before the cases of this file.
const zero::emit::OpEmitterSet &emitters() {
  static const zero::emit::OpEmitterSet set = [] {
    zero::emit::OpEmitterSet s;
    zero::emit::populateAllEmitters(s);
    return s;
  }();
  return set;
}

class ModuleLowering;

//===----------------------------------------------------------------------===//
// One function
//===----------------------------------------------------------------------===//

class FunctionLowering : public zero::emit::EmitContext {
public:
  FunctionLowering(ModuleLowering &ml, func::FuncOp fn, Role role,
                   Assign assign = Assign::Bump)
      : ml(ml), fn(fn), role(role), assign(assign) {}

  /// Places every value; fills the arena high-water marks of `ml`.
  LogicalResult plan();
  /// Writes the placement into the IR (zero-buffer-assign), after plan().
  void annotate();
  /// Bytes of the activation / temporary arena this function needs.
  int64_t arenaExtent(int mem) const { return bump[mem]; }
  /// Sum of the sizes of its blocks in `mem` (no reuse).
  int64_t blockSum(int mem) const;
  /// Emits the emitc.func (after plan()).
  LogicalResult emit(OpBuilder &mb, StringRef symbol);

  // zero::emit::EmitContext: what the per-op emitters may ask.
  Value ptr(Value tensor) override;
  Value scalar(Value tensor) override;
  Value scratch(int64_t elems) override;
  void call(StringRef callee, ArrayRef<CArg> args) override;
  Attribute i64(int64_t v) override;
  Attribute f32(double v) override;
  Attribute f64(double v) override;
  Attribute opq(StringRef text) override;

private:
  // Planning.
  LogicalResult planArguments();
  /// `const void *const *`: an array model's inputs argument.
  Type inputsPtrType() {
    return emitc::PointerType::get(
        emitc::OpaqueType::get(fn.getContext(), "const void *const"));
  }
  void decideLoadCopies();
  void decideInPlaceUpdates();
  void decidePackSlots();
  void decideFusedCasts();
  void decideFillRuns();
  void decideAdamWRuns();
  void decideSumSquaresRuns();
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
  SmallVector<Value> aliasSet(Value v);
  int64_t lastUse(Value v);
  bool isActivation(Value v);

  // Emission helpers.
  Location loc() { return curLoc; }
  Value memBase(int mem);
  Value pointerAt(Placement p, Type elt);
  Value offsetPtr(Value p, int64_t elems);
  /// The runtime function for an f32 kernel name: its zrt_X_bf16 variant
  /// while the op being emitted runs natively in bf16.
  std::string kernel(StringRef f32Name) const {
    return (f32Name + (nativeBf16 ? "_bf16" : "")).str();
  }
  Value literal(Type t, StringRef text);
  Value rankValue();
  /// `ZRT_CHECK(name(args...))` for the zrt.h collective `name` on `axis`:
  /// the axis-less form on the data axis, else its `_axis` form (`_start`
  /// kept last) with the axis first.
  void collective(StringRef name, zero::MeshAxis axis, ArrayRef<CArg> args);
  /// A `zrt_request` variable for a nonblocking collective; returns its
  /// address.
  Value request(Operation *start);
  Value statePtr(const StateInfo &s);
  Placement rootPlacement(Value v, bool &isArena);
  void comment(Operation *op, StringRef suffix = "");

  LogicalResult emitOp(Operation *op);
  LogicalResult emitCompute(Operation *op);
  LogicalResult emitReturn(func::ReturnOp op);
  LogicalResult emitStateLoad(Operation *op, StringRef sym);
  LogicalResult emitStateStore(Operation *op, Value value, StringRef sym,
                               bool accumulate);
  LogicalResult emitAdamWRun(Operation *op);
  LogicalResult emitAdamW(Operation *op, Value p, Value g, Value m, Value v,
                          Value lr, Value step, Value coef, Value finiteCheck,
                          double b1, double b2, double eps, double wd,
                          int group);

  ModuleLowering &ml;
  func::FuncOp fn;
  Role role;
  Assign assign;

  // Plan.
  DenseMap<Operation *, int64_t> pos;
  int64_t seedPos = INT64_MAX;
  DenseMap<Value, Buffer> buffers;
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
  struct SumSquaresRun {
    Value first;     ///< The first state's value (its pointer starts the range).
    int64_t total;   ///< Elements of the range.
    Value base;      ///< Added to the sum (null: none).
  };
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

  // Emission.
  OpBuilder b{fn.getContext()};
  Location curLoc = fn.getLoc();
  Block *body = nullptr;
  DenseMap<Value, Value> pointers;  ///< tensor -> emitted pointer.
  DenseMap<Value, Value> overrides; ///< bf16 tensor -> f32 scratch pointer.
  DenseMap<Value, Value> requests;  ///< !zero.pending -> zrt_request lvalue.
  DenseMap<Value, Value> hostScalars; ///< 0-D tensor -> its host copy.
  Value bases[kNumMem];
  Value rank;
  Operation *prologueEnd = nullptr; ///< Arena bases and the rank go before it.
  int64_t scratchCursor = 0;
  bool nativeBf16 = false; ///< The op being emitted calls zrt_X_bf16.
};

//===----------------------------------------------------------------------===//
// The module
//===----------------------------------------------------------------------===//

class ModuleLowering {
public:
  ModuleLowering(ModuleOp module, bool emitMain, bool emitComments)
      : module(module), ctx(module.getContext()), emitMain(emitMain),
        emitComments(emitComments) {}

  LogicalResult run();
  /// Plans the buffers only (BestFit), optionally annotating the IR.
  FailureOr<zero::BufferPlan> planOnly(bool annotate);

  // Shared with FunctionLowering.
  ModuleOp module;
  MLIRContext *ctx;
  bool emitMain, emitComments;
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
  OpBuilder globals{module.getContext()};
  unsigned numPermutations = 0;
  /// zero-report's analysis of the module, for the model's plan.
  zero::StepReport report;

  /// A state by symbol name; emits an error at `user` when missing or
  /// without storage.
  const StateInfo *lookupState(Operation *user, StringRef name);
  /// Emitted C type of an element type.
  Type cType(Type elt);
  Type ptrType(Type elt) { return emitc::PointerType::get(cType(elt)); }
  Type intType() { return emitc::OpaqueType::get(ctx, "int"); }
  /// Creates a static const int64_t array global; returns its name.
  std::string int64Array(StringRef prefix, ArrayRef<int64_t> values);
  /// The same as a static const uint8_t array.
  std::string uint8Array(StringRef prefix, ArrayRef<int64_t> values);

private:
  LogicalResult collectDeclarations();
  LogicalResult describe();
  /// describe() of an array model: every argument of @forward named (a
  /// unique C-identifier `train.name`), a static tensor of rank >= 1 of
  /// f32/bf16/f16/i32/i64 with one leading batch size B; seq = 1, vocab 0.
  LogicalResult describeInputs(func::FuncOp forward);
  void emitPrologue(OpBuilder &mb);
  void emitTables(OpBuilder &mb);
  void emitInit(OpBuilder &mb);
  void emitDestroy(OpBuilder &mb);
  void emitModelDesc(OpBuilder &mb);

  // Description.
  std::string modelName = "model";
  /// describeCompiledStep of the IR before the rewrite (compile_info).
  std::string compileInfo;
  int64_t worldSize = 1, stage = 0, batch = 0, seq = 0, vocab = 0,
          paddedVocab = 0, numParams = 0, numParamInfos = 0;
  func::FuncOp functions[4];
  std::string functionSymbols[4];

public:
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
};

//===----------------------------------------------------------------------===//
// ModuleLowering: declarations and description
//===----------------------------------------------------------------------===//

Type ModuleLowering::cType(Type elt) {
  if (elt.isBF16())
    return emitc::OpaqueType::get(ctx, "zrt_bf16");
  if (elt.isF16())
    return emitc::OpaqueType::get(ctx, "zrt_f16");
  if (elt.isInteger(32))
    return emitc::OpaqueType::get(ctx, "const int32_t");
  return elt; // f32, i64
}

const StateInfo *ModuleLowering::lookupState(Operation *user, StringRef name) {
  auto it = stateIndex.find(name);
  if (it == stateIndex.end()) {
    user->emitOpError("refers to @") << name << ", which is not a state symbol";
    return nullptr;
  }
  const StateInfo &s = states[it->second];
  if (!s.hasStorage) {
    user->emitOpError("reads parameter @")
        << name
        << " which has no storage of its own (zero.sharded: its data lives in "
           "its group's zero.shard of kind param)";
    return nullptr;
  }
  return &s;
}

static int stateKindOf(train::StateKind k) {
  switch (k) {
  case train::StateKind::grad:
    return kStateGrad;
  case train::StateKind::master:
    return kStateMaster;
  case train::StateKind::exp_avg:
    return kStateExpAvg;
  case train::StateKind::exp_avg_sq:
    return kStateExpAvgSq;
  }
  return kStateGrad;
}

static int stateKindOf(zero::ShardKind k) {
  switch (k) {
  case zero::ShardKind::param:
    return kStateParam;
  case zero::ShardKind::grad:
    return kStateGrad;
  case zero::ShardKind::master:
    return kStateMaster;
  case zero::ShardKind::exp_avg:
    return kStateExpAvg;
  case zero::ShardKind::exp_avg_sq:
    return kStateExpAvgSq;
  }
  return kStateGrad;
}

/// Checks the element type of a state or value the lowering must store.
static LogicalResult checkStorable(Operation *op, RankedTensorType t) {
  Type e = t.getElementType();
  if (!e.isF32() && !zero::narrow::isNarrowFloat(e) && !e.isInteger(32) &&
      !e.isInteger(64))
    return op->emitOpError("element type ")
           << e << " is not supported by the CPU lowering";
  return success();
}

LogicalResult ModuleLowering::collectDeclarations() {
  // Groups first: shards refer to them by index.
  for (auto g : module.getOps<zero::GroupOp>()) {
    GroupInfo info;
    info.op = g;
    info.name = g.getSymName().str();
    info.padded = g.getPadded();
    info.shard = g.getShardSize();
    for (auto [i, m] : llvm::enumerate(g.getMembers())) {
      StringRef name = cast<FlatSymbolRefAttr>(m).getValue();
      auto param = module.lookupSymbol<train::ParamOp>(name);
      if (!param)
        return g.emitOpError("member @")
               << name
               << " is not a train.param; the lowering initializes "
                  "shards from their members' declarations";
      info.members.push_back(name.str());
      info.offsets.push_back(g.getOffsets()[i]);
      info.numels.push_back(param.getTensorType().getNumElements());
      info.decay.push_back(g.getDecay()[i]);
    }
    groupIndex[info.name] = groups.size();
    groups.push_back(std::move(info));
  }

  for (Operation &op : module.getBody()->getOperations()) {
    StateInfo s;
    s.op = &op;
    if (auto p = dyn_cast<train::ParamOp>(op)) {
      params[p.getSymName()] = p;
      s.name = p.getSymName().str();
      s.type = p.getTensorType();
      s.kind = kStateParam;
      s.hasStorage = !p->hasAttr("zero.sharded");
      numParams += s.type.getNumElements();
    } else if (auto st = dyn_cast<train::StateOp>(op)) {
      s.name = st.getSymName().str();
      s.type = st.getTensorType();
      s.kind = stateKindOf(st.getKind());
    } else if (auto sh = dyn_cast<zero::ShardOp>(op)) {
      s.name = sh.getSymName().str();
      s.type = sh.getTensorType();
      s.kind = stateKindOf(sh.getKind());
      auto it = groupIndex.find(sh.getGroup());
      if (it == groupIndex.end())
        return sh.emitOpError("refers to @")
               << sh.getGroup() << ", which is not a zero.group";
      s.group = it->second;
    } else if (isa<zero::GroupOp, func::FuncOp>(op)) {
      continue;
    } else {
      return op.emitOpError("is not supported at module level by "
                            "convert-train-to-emitc");
    }
    if (failed(checkStorable(&op, s.type)))
      return failure();
    if (!s.type.getElementType().isF32() &&
        !zero::narrow::isNarrowFloat(s.type.getElementType()))
      return op.emitOpError("state of element type ")
             << s.type.getElementType()
             << " is not supported by the CPU lowering (f32, bf16 or f16)";
    stateIndex[s.name] = states.size();
    states.push_back(std::move(s));
  }
  // The state layout is zero-layout-states' (#zero.slot): read, never
  // decided here.
  auto sizes = module->getAttrOfType<DictionaryAttr>(
      zero::ZeroDialect::kStateArenaBytesAttrName);
  if (!sizes)
    return module.emitError("convert-train-to-emitc: the module has no state "
                            "layout (")
           << zero::ZeroDialect::kStateArenaBytesAttrName
           << "); run zero-layout-states first";
  for (int m : {kMemParams, kMemGrads, kMemMaster, kMemMoments, kMemConsts})
    if (auto bytes = sizes.getAs<IntegerAttr>(kMemName[m]))
      arenaBytes[m] = bytes.getInt();
  for (StateInfo &s : states) {
    if (!s.hasStorage)
      continue;
    auto slot = s.op->getAttrOfType<zero::SlotAttr>(
        zero::ZeroDialect::kSlotAttrName);
    if (!slot)
      return s.op->emitOpError("has no ")
             << zero::ZeroDialect::kSlotAttrName
             << " (its place in the state arenas); run zero-layout-states "
                "after the last pass that adds states";
    s.place = {static_cast<int>(slot.getArena()), slot.getOffset()};
  }
  for (GroupInfo &g : groups) {
    auto span = [&](StringRef name) -> std::optional<Placement> {
      if (auto a = g.op->getAttrOfType<zero::SlotAttr>(name))
        return Placement{static_cast<int>(a.getArena()), a.getOffset()};
      return std::nullopt;
    };
    g.paramSpan = span(zero::ZeroDialect::kParamSpanAttrName);
    g.gradSpan = span(zero::ZeroDialect::kGradSpanAttrName);
  }
  return success();
}

LogicalResult ModuleLowering::describe() {
  if (auto name = module->getAttrOfType<StringAttr>("zero.model_name"))
    modelName = name.getValue().str();
  if (auto ws = module->getAttrOfType<IntegerAttr>("zero.world_size"))
    worldSize = ws.getInt();
  if (auto mesh = module->getAttrOfType<zero::MeshAttr>(
          zero::ZeroDialect::kMeshAttrName))
    tensorSize = mesh.getTensor();
  if (auto st = module->getAttrOfType<IntegerAttr>("zero.stage"))
    stage = st.getInt();

  static constexpr StringLiteral names[4] = {"forward", "forward_backward",
                                             "optimizer_step", "logits"};
  for (auto f : module.getOps<func::FuncOp>()) {
    auto it = llvm::find(names, f.getSymName());
    if (it == std::end(names))
      return f.emitOpError("@")
             << f.getSymName()
             << " is not part of the model.h contract (@forward, "
                "@forward_backward, @optimizer_step, @logits)";
    if (f.isExternal() || !f.getBody().hasOneBlock())
      return f.emitOpError("must have a body of exactly one block");
    functions[it - std::begin(names)] = f;
  }
  func::FuncOp forward = functions[0];
  if (!forward)
    return module.emitError("convert-train-to-emitc: the module has no "
                            "@forward (the model.h contract needs it)");
  if (forward.getNumArguments() &&
      llvm::any_of(llvm::seq(forward.getNumArguments()), [&](unsigned i) {
        return forward.getArgAttr(i, "train.name") != nullptr;
      }))
    return describeInputs(forward);
  auto ids = forward.getNumArguments()
                 ? dyn_cast<RankedTensorType>(forward.getArgumentTypes()[0])
                 : RankedTensorType();
  if (!ids || ids.getRank() != 2 || !ids.getElementType().isInteger(32))
    return forward.emitOpError(
        "must take token ids tensor<BxTxi32> as its first argument (the "
        "model.h contract)");
  batch = ids.getDimSize(0);
  seq = ids.getDimSize(1);
  forward.walk([&](train::CrossEntropyOp ce) {
    paddedVocab = ce.getLogits().getType().getShape().back();
    vocab = ce.getEffectiveNumClasses();
  });
  return success();
}

LogicalResult ModuleLowering::describeInputs(func::FuncOp forward) {
  for (unsigned i = 0; i < forward.getNumArguments(); ++i) {
    auto name = forward.getArgAttrOfType<StringAttr>(i, "train.name");
    if (!name || name.getValue().empty())
      return forward.emitOpError("argument #")
             << i
             << " has no train.name; either every argument of @forward is "
                "a named input (an array model) or none is (token ids and "
                "targets)";
    StringRef n = name.getValue();
    if (!llvm::all_of(n, [](char c) { return llvm::isAlnum(c) || c == '_'; }))
      return forward.emitOpError("input name '")
             << n << "' is not made of letters, digits and '_'";
    if (llvm::any_of(inputs, [&](const InputInfo &in) { return in.name == n; }))
      return forward.emitOpError("input name '") << n << "' appears twice";
    auto t = dyn_cast<RankedTensorType>(forward.getArgumentTypes()[i]);
    Type elt = t ? t.getElementType() : Type();
    if (!t || t.getRank() < 1 || !t.hasStaticShape() ||
        !(elt.isF32() || elt.isBF16() || elt.isF16() || elt.isInteger(32) ||
          elt.isInteger(64)))
      return forward.emitOpError("input '")
             << n << "' has type " << forward.getArgumentTypes()[i]
             << "; the model.h contract passes static tensors [B, ...] of "
                "f32, bf16, f16, i32 or i64";
    if (!inputs.empty() && t.getDimSize(0) != inputs[0].type.getDimSize(0))
      return forward.emitOpError("input '")
             << n << "' has batch size " << t.getDimSize(0) << ", input '"
             << inputs[0].name << "' " << inputs[0].type.getDimSize(0)
             << " (the first dimension of every input is the batch)";
    inputs.push_back({n.str(), t});
  }
  batch = inputs[0].type.getDimSize(0);
  seq = 1; // one row is one sample (model.h)
  if (functions[3])
    return functions[3].emitOpError(
        "is for token models; a model with named inputs has no @logits");
  return success();
}

std::string ModuleLowering::int64Array(StringRef prefix,
                                       ArrayRef<int64_t> values) {
  std::string name = llvm::formatv("zrt_{0}{1}", prefix, numPermutations).str();
  auto type = emitc::ArrayType::get({static_cast<int64_t>(values.size())},
                                    IntegerType::get(ctx, 64));
  auto init = DenseIntElementsAttr::get(
      RankedTensorType::get({static_cast<int64_t>(values.size())},
                            IntegerType::get(ctx, 64)),
      values);
  emitc::GlobalOp::create(globals, module.getLoc(), name, type, init,
                          /*extern=*/false, /*static=*/true, /*const=*/true);
  return name;
}

std::string ModuleLowering::uint8Array(StringRef prefix,
                                       ArrayRef<int64_t> values) {
  std::string name = llvm::formatv("zrt_{0}{1}", prefix, numPermutations).str();
  auto u8 = IntegerType::get(ctx, 8, IntegerType::Unsigned);
  int64_t n = static_cast<int64_t>(values.size());
  SmallVector<APInt> bits;
  for (int64_t v : values)
    bits.push_back(APInt(8, static_cast<uint64_t>(v)));
  emitc::GlobalOp::create(
      globals, module.getLoc(), name, emitc::ArrayType::get({n}, u8),
      DenseIntElementsAttr::get(RankedTensorType::get({n}, u8), bits),
      /*extern=*/false, /*static=*/true, /*const=*/true);
  return name;
}

//===----------------------------------------------------------------------===//
// FunctionLowering: planning
//===----------------------------------------------------------------------===//

static bool isLoad(Operation *op) {
  return isa<train::LoadOp, zero::ShardLoadOp>(op);
}
static StringRef loadSymbol(Operation *op) {
  if (auto l = dyn_cast<train::LoadOp>(op))
    return l.getName();
  return cast<zero::ShardLoadOp>(op).getName();
}
/// The symbol an op writes (store, accumulate), or "".
static StringRef writtenSymbol(Operation *op) {
  return TypeSwitch<Operation *, StringRef>(op)
      .Case([](train::StoreOp o) { return o.getName(); })
      .Case([](train::AccumulateOp o) { return o.getName(); })
      .Case([](zero::ShardStoreOp o) { return o.getName(); })
      .Case([](zero::ShardAccumulateOp o) { return o.getName(); })
      .Default([](Operation *) { return StringRef(); });
}
static Value storedValue(Operation *op) {
  return TypeSwitch<Operation *, Value>(op)
      .Case([](train::StoreOp o) { return o.getValue(); })
      .Case([](zero::ShardStoreOp o) { return o.getValue(); })
      .Default([](Operation *) { return Value(); });
}

SmallVector<Value> FunctionLowering::aliasSet(Value v) {
  SmallVector<Value> set{v};
  for (unsigned i = 0; i < set.size(); ++i)
    for (Operation *user : set[i].getUsers())
      if (isa<train::ReshapeOp, zero::UnpackOp, zero::SplitOp>(user) ||
          (isa<zero::PackOp>(user) && stateSpans.count(user->getResult(0))))
        llvm::append_range(set, user->getResults());
      else if (auto ce = dyn_cast<train::CrossEntropyFusedOp>(user))
        set.push_back(ce.getGrad()); // over the logits
  return set;
}

/// The zero.wait of a zero.*_start op, or null.
static Operation *waitOf(Operation *start) {
  if (!isa<zero::AllGatherStartOp, zero::ReduceScatterStartOp,
           zero::AllReduceStartOp>(start))
    return nullptr;
  for (Operation *user : start->getResult(0).getUsers())
    if (isa<zero::WaitOp>(user))
      return user;
  return nullptr;
}

int64_t FunctionLowering::lastUse(Value v) {
  int64_t last = -1;
  for (Value a : aliasSet(v)) {
    last = std::max(last, extendedLife.lookup_or(a, -1));
    for (Operation *user : a.getUsers()) {
      // A nonblocking collective reads its input until its wait.
      if (Operation *wait = waitOf(user))
        user = wait;
      last = std::max(last, pos.lookup(user));
    }
  }
  return last;
}

bool FunctionLowering::isActivation(Value v) {
  if (role != Role::ForwardBackward || seedPos == INT64_MAX)
    return false;
  Operation *def = v.getDefiningOp();
  if (!def || pos.lookup(def) >= seedPos)
    return false;
  return lastUse(v) > seedPos;
}

void FunctionLowering::request(Value v, int mem, int64_t first) {
  PlanBlock blk;
  blk.mem = mem;
  blk.bytes = alignUp(std::max<int64_t>(tensorBytes(tensorType(v)), 1));
  blk.first = first;
  blk.last = std::max(first, lastUse(v));
  blk.value = v;
  valueBlock[v] = blocks.size();
  blocks.push_back(blk);
  buffers[v] = {Buffer::Arena, Placement{mem, -1}};
}

int64_t FunctionLowering::blockSum(int mem) const {
  // What bump allocation needs: every value, plus one scratch pool.
  int64_t sum = 0, pool = 0;
  for (const PlanBlock &blk : blocks)
    if (blk.mem == mem) {
      if (blk.value)
        sum += blk.bytes;
      else
        pool = std::max(pool, blk.bytes);
    }
  return sum + pool;
}

/// The functions run one at a time and the activation arena only matters
/// to @forward_backward: the values of another function (@forward's logits
/// at validation, @logits, the optimizer step) go to the activation arena
/// instead of the temporaries when they fit into what @forward_backward
/// already needs there, so the temporaries arena is sized by the largest
/// function that does not fit (scratch stays in the temporaries). Best-fit
/// planning only; the annotations record the arena, which the lowering
/// then follows.
void FunctionLowering::shareActivations() {
  if (role == Role::ForwardBackward || ml.forwardBackwardActivations <= 0)
    return;
  for (PlanBlock &blk : blocks)
    if (blk.value)
      blk.mem = kMemActs;
  bestFit(kMemActs);
  if (bump[kMemActs] <= ml.forwardBackwardActivations)
    return;
  for (PlanBlock &blk : blocks)
    if (blk.value)
      blk.mem = kMemTemps;
  bump[kMemActs] = 0;
}

/// Greedy best fit, largest block first: each block goes into the smallest
/// gap (lowest offset on ties) between the blocks already placed whose live
/// intervals overlap its own, else above all of them.
void FunctionLowering::bestFit(int mem) {
  SmallVector<unsigned> order;
  for (auto [i, blk] : llvm::enumerate(blocks))
    if (blk.mem == mem)
      order.push_back(i);
  llvm::stable_sort(order, [&](unsigned a, unsigned b) {
    if (blocks[a].bytes != blocks[b].bytes)
      return blocks[a].bytes > blocks[b].bytes;
    return blocks[a].first < blocks[b].first;
  });
  SmallVector<unsigned> placed;
  int64_t extent = 0;
  for (unsigned i : order) {
    PlanBlock &blk = blocks[i];
    SmallVector<std::pair<int64_t, int64_t>> busy; // [offset, end)
    for (unsigned j : placed) {
      const PlanBlock &o = blocks[j];
      if (o.first <= blk.last && blk.first <= o.last)
        busy.push_back({o.offset, o.offset + o.bytes});
    }
    llvm::sort(busy);
    int64_t cursor = 0, best = -1, bestGap = INT64_MAX;
    for (auto [begin, end] : busy) {
      int64_t gap = begin - cursor;
      if (gap >= blk.bytes && gap < bestGap) {
        best = cursor;
        bestGap = gap;
      }
      cursor = std::max(cursor, end);
    }
    blk.offset = best >= 0 ? best : cursor;
    extent = std::max(extent, blk.offset + blk.bytes);
    placed.push_back(i);
  }
  bump[mem] = extent;
}

static constexpr StringLiteral kPlacementAttr = "zero.placement";
static constexpr StringLiteral kScratchAttr = "zero.scratch";
static constexpr StringLiteral kArenaBytesAttr = "zero.arena_bytes";

/// The arena of a zero.placement / zero.scratch entry, or -1.
static int arenaOf(DictionaryAttr d) {
  auto a = d ? d.getAs<StringAttr>("arena") : StringAttr();
  if (!a)
    return -1;
  if (a.getValue() == kMemName[kMemActs])
    return kMemActs;
  if (a.getValue() == kMemName[kMemTemps])
    return kMemTemps;
  return -1;
}

static int64_t intOf(DictionaryAttr d, StringRef key) {
  auto a = d ? d.getAs<IntegerAttr>(key) : IntegerAttr();
  return a ? a.getInt() : -1;
}

/// The zero.placement entry of a block's value (an op result or, for the
/// optimizer step's scalars, a function argument).
static DictionaryAttr placementEntry(func::FuncOp fn, Value v) {
  if (auto a = dyn_cast<BlockArgument>(v))
    return fn.getArgAttrOfType<DictionaryAttr>(a.getArgNumber(),
                                               kPlacementAttr);
  auto r = cast<OpResult>(v);
  auto list = r.getOwner()->getAttrOfType<ArrayAttr>(kPlacementAttr);
  if (!list || list.size() != r.getOwner()->getNumResults())
    return {};
  return dyn_cast<DictionaryAttr>(list[r.getResultNumber()]);
}

LogicalResult FunctionLowering::readAnnotations() {
  for (PlanBlock &blk : blocks) {
    Operation *where = blk.value ? blk.value.getDefiningOp() : blk.scratchOp;
    if (!where)
      where = fn;
    DictionaryAttr d =
        blk.value ? placementEntry(fn, blk.value)
                  : blk.scratchOp->getAttrOfType<DictionaryAttr>(kScratchAttr);
    int64_t offset = intOf(d, "offset"), bytes = intOf(d, "bytes");
    // Outside @forward_backward a value may use either arena
    // (shareActivations); scratch is always a temporary.
    if (blk.value && role != Role::ForwardBackward && arenaOf(d) >= 0)
      blk.mem = arenaOf(d);
    if (arenaOf(d) != blk.mem || offset < 0 || offset % kAlign ||
        bytes < blk.bytes) {
      InFlightDiagnostic diag = where->emitOpError("has no ");
      diag << (blk.value ? kPlacementAttr : kScratchAttr) << " for "
           << (blk.value ? "a result" : "its scratch")
           << " that matches the plan (arena \"" << kMemName[blk.mem]
           << "\", at least " << blk.bytes
           << " bytes, 64-byte aligned offset); rerun zero-buffer-assign "
              "after the last transformation";
      return diag;
    }
    blk.offset = offset;
  }
  // Values live at the same time must not share a byte.
  for (auto [i, a] : llvm::enumerate(blocks))
    for (unsigned j = i + 1; j < blocks.size(); ++j) {
      const PlanBlock &c = blocks[j];
      if (a.mem != c.mem || a.last < c.first || c.last < a.first ||
          a.offset + a.bytes <= c.offset || c.offset + c.bytes <= a.offset)
        continue;
      const PlanBlock &later = a.first >= c.first ? a : c;
      const PlanBlock &other = &later == &a ? c : a;
      Operation *where =
          later.value ? later.value.getDefiningOp() : later.scratchOp;
      if (!where)
        where = fn;
      InFlightDiagnostic diag = where->emitOpError("zero.placement: bytes [");
      diag << later.offset << ", " << later.offset + later.bytes << ") of the "
           << kMemName[later.mem] << " arena overlap bytes [" << other.offset
           << ", " << other.offset + other.bytes
           << ") of a buffer live at the same time";
      Operation *otherOp =
          other.value ? other.value.getDefiningOp() : other.scratchOp;
      if (otherOp)
        diag.attachNote(otherOp->getLoc()) << "the other buffer is defined here";
      return diag;
    }
  for (int m : {kMemActs, kMemTemps}) {
    bump[m] = 0;
    for (const PlanBlock &blk : blocks)
      if (blk.mem == m)
        bump[m] = std::max(bump[m], blk.offset + blk.bytes);
  }
  return success();
}

LogicalResult FunctionLowering::assignOffsets() {
  switch (assign) {
  case Assign::Bump: {
    // Values in program order, then one scratch pool as large as the
    // largest op's scratch.
    for (PlanBlock &blk : blocks)
      if (blk.value) {
        blk.offset = bump[blk.mem];
        bump[blk.mem] += blk.bytes;
      }
    for (PlanBlock &blk : blocks)
      if (!blk.value)
        blk.offset = bump[kMemTemps];
    bump[kMemTemps] += scratchSize;
    break;
  }
  case Assign::BestFit:
    bestFit(kMemActs);
    bestFit(kMemTemps);
    break;
  case Assign::Annotated:
    if (failed(readAnnotations()))
      return failure();
    break;
  }
  for (const PlanBlock &blk : blocks) {
    if (blk.value)
      buffers[blk.value].place = {blk.mem, blk.offset};
    else
      scratchAt[blk.scratchOp] = blk.offset;
  }
  return success();
}

void FunctionLowering::annotate() {
  MLIRContext *ctx = fn.getContext();
  Builder bld(ctx);
  auto entry = [&](const PlanBlock &blk) {
    SmallVector<NamedAttribute> attrs{
        bld.getNamedAttr("arena", bld.getStringAttr(kMemName[blk.mem])),
        bld.getNamedAttr("offset", bld.getI64IntegerAttr(blk.offset)),
        bld.getNamedAttr("bytes", bld.getI64IntegerAttr(blk.bytes)),
        bld.getNamedAttr("live",
                         bld.getDenseI64ArrayAttr({blk.first, blk.last}))};
    return bld.getDictionaryAttr(attrs);
  };
  for (Operation &op : fn.getBody().front()) {
    op.removeAttr(kPlacementAttr);
    op.removeAttr(kScratchAttr);
    SmallVector<Attribute> list;
    bool any = false;
    for (Value r : op.getResults()) {
      auto it = valueBlock.find(r);
      if (it == valueBlock.end()) {
        list.push_back(bld.getDictionaryAttr({}));
        continue;
      }
      list.push_back(entry(blocks[it->second]));
      any = true;
    }
    if (any)
      op.setAttr(kPlacementAttr, bld.getArrayAttr(list));
  }
  for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
    fn.removeArgAttr(i, kPlacementAttr);
    auto it = valueBlock.find(fn.getArgument(i));
    if (it != valueBlock.end())
      fn.setArgAttr(i, kPlacementAttr, entry(blocks[it->second]));
  }
  for (const PlanBlock &blk : blocks)
    if (!blk.value) {
      SmallVector<NamedAttribute> attrs{
          bld.getNamedAttr("arena", bld.getStringAttr(kMemName[blk.mem])),
          bld.getNamedAttr("offset", bld.getI64IntegerAttr(blk.offset)),
          bld.getNamedAttr("bytes", bld.getI64IntegerAttr(blk.bytes))};
      blk.scratchOp->setAttr(kScratchAttr, bld.getDictionaryAttr(attrs));
    }
  fn->setAttr(kArenaBytesAttr,
              bld.getDictionaryAttr(
                  {bld.getNamedAttr("activations",
                                    bld.getI64IntegerAttr(bump[kMemActs])),
                   bld.getNamedAttr("temporaries",
                                    bld.getI64IntegerAttr(bump[kMemTemps]))}));
  (void)ctx;
}

void FunctionLowering::decideLoadCopies() {
  // Writes per symbol, by position.
  llvm::StringMap<SmallVector<int64_t>> writes;
  for (Operation &op : fn.getBody().front()) {
    StringRef sym = writtenSymbol(&op);
    if (!sym.empty())
      writes[sym].push_back(pos.lookup(&op));
  }
  for (Operation &op : fn.getBody().front()) {
    if (!isLoad(&op))
      continue;
    int64_t p = pos.lookup(&op), last = lastUse(op.getResult(0));
    for (int64_t q : writes.lookup(loadSymbol(&op)))
      if (q > p && q < last)
        copyLoads.insert(&op);
  }
}

void FunctionLowering::decideInPlaceUpdates() {
  Block &block = fn.getBody().front();
  for (Operation &op : block) {
    SmallVector<std::pair<Value, Value>> pairs; // (operand, result)
    if (auto a = dyn_cast<train::AdamWOp>(op))
      pairs = {{a.getParam(), a.getNewParam()},
               {a.getExpAvg(), a.getNewExpAvg()},
               {a.getExpAvgSq(), a.getNewExpAvgSq()}};
    else if (auto a = dyn_cast<zero::ShardAdamWOp>(op))
      pairs = {{a.getParam(), a.getNewParam()},
               {a.getExpAvg(), a.getNewExpAvg()},
               {a.getExpAvgSq(), a.getNewExpAvgSq()}};
    else
      continue;
    int64_t p = pos.lookup(&op);
    for (auto [x, r] : pairs) {
      Operation *load = x.getDefiningOp();
      if (!load || !isLoad(load) || copyLoads.contains(load) || !x.hasOneUse())
        continue;
      StringRef sym = loadSymbol(load);
      // The update must be stored back into the same symbol.
      bool stored = false;
      for (Operation *user : r.getUsers())
        stored |= writtenSymbol(user) == sym && storedValue(user) == r;
      if (!stored)
        continue;
      int64_t lastR = lastUse(r);
      bool ok = true;
      for (Operation &other : block) {
        int64_t q = pos.lookup(&other);
        // No other write of the symbol while the result is live.
        if (writtenSymbol(&other) == sym && q > p && q <= lastR &&
            storedValue(&other) != r)
          ok = false;
        // No other load of the symbol that would observe the early write.
        if (&other != load && isLoad(&other) && loadSymbol(&other) == sym) {
          if (q > p && q <= lastR)
            ok = false;
          if (q < p && !copyLoads.contains(&other) &&
              lastUse(other.getResult(0)) >= p)
            ok = false;
        }
      }
      if (ok)
        inPlaceResults.insert(r);
    }
  }

  // Store forwarding: a value computed only to be stored into a state is
  // computed in the state (e.g. `fill 0` then `store` zeroes a gradient in
  // place), when nothing reads or writes the state in between.
  for (Operation &op : block) {
    if (isLoad(&op) ||
        isa<train::ReshapeOp, zero::UnpackOp, zero::SplitOp, zero::WaitOp,
            train::AdamWOp, zero::ShardAdamWOp>(op))
      continue;
    int64_t p = pos.lookup(&op);
    for (Value r : op.getResults()) {
      if (!r.hasOneUse())
        continue;
      Operation *store = *r.getUsers().begin();
      StringRef sym = writtenSymbol(store);
      if (sym.empty() || storedValue(store) != r)
        continue;
      int64_t q = pos.lookup(store);
      bool ok = true;
      for (Operation &other : block) {
        int64_t o = pos.lookup(&other);
        if (writtenSymbol(&other) == sym && o > p && o < q)
          ok = false;
        if (isLoad(&other) && loadSymbol(&other) == sym) {
          if (o > p && o < q)
            ok = false;
          if (o < p && !copyLoads.contains(&other) &&
              lastUse(other.getResult(0)) >= p)
            ok = false;
        }
      }
      if (ok)
        forwardedResults[r] = sym;
    }
  }
}

/// Contiguous gradients (DeepSpeed's contiguous_gradients, XLA's in-place
/// concatenation): a value whose only use is a zero.pack is computed
/// directly in its slot of the pack's flat buffer, so the pack copies
/// nothing for it and the value and the flat buffer never coexist. The
/// flat buffer then lives from its first such member's definition. Only
/// values that would otherwise get a buffer of their own qualify (not
/// loads, views, collective results, AdamW updates in place or values
/// computed in a state), defined after the loss seed or in a function
/// without one, so that no activation moves into the flat buffer; a pack
/// whose result is itself computed in a state keeps its copies.
void FunctionLowering::decidePackSlots() {
  for (Operation &op : fn.getBody().front()) {
    auto pack = dyn_cast<zero::PackOp>(op);
    if (!pack || forwardedResults.count(pack.getResult()) ||
        inPlaceResults.contains(pack.getResult()))
      continue;
    auto g = ml.groupIndex.find(pack.getGroup());
    if (g == ml.groupIndex.end())
      continue; // the emission reports it
    const GroupInfo &gi = ml.groups[g->second];
    for (auto [i, m] : llvm::enumerate(pack.getMembers())) {
      auto r = dyn_cast<OpResult>(m);
      if (!r || !m.hasOneUse() || i >= gi.offsets.size())
        continue;
      Operation *def = r.getOwner();
      if (def->getBlock() != pack->getBlock() || isLoad(def) ||
          isa<train::ReshapeOp, zero::UnpackOp, zero::SplitOp, zero::WaitOp,
              train::AdamWOp, zero::ShardAdamWOp>(def) ||
          inPlaceResults.contains(m) || forwardedResults.count(m) ||
          pos.lookup(def) < (seedPos == INT64_MAX ? 0 : seedPos))
        continue;
      packSlots[m] = {pack.getResult(), gi.offsets[i]};
      int64_t p = pos.lookup(def);
      auto [it, inserted] = packFirst.try_emplace(pack.getResult(), p);
      if (!inserted)
        it->second = std::min(it->second, p);
    }
  }
}

/// The AdamW kernels write the bf16 copy of the updated master weights
/// themselves (zrt_adamw_step's out_bf16, the same round-to-nearest-even as
/// zrt_cast_f32_to_bf16): a `train.cast` f32 -> bf16 of a `train.adamw`'s
/// new parameter that is computed in a state (the bf16 parameter) is
/// folded into the AdamW call when nothing reads or writes that state
/// between the two, and no earlier load that reads the state in place is
/// still read at the AdamW (the write moves from the cast to the AdamW).
/// Not under skip_nonfinite (fp16-mixed), where the update may not run.
void FunctionLowering::decideFusedCasts() {
  Block &block = fn.getBody().front();
  for (Operation &op : block) {
    auto adamw = dyn_cast<train::AdamWOp>(op);
    if (!adamw || adamw.getFiniteCheck())
      continue;
    for (Operation *user : adamw.getNewParam().getUsers()) {
      auto cast = dyn_cast<train::CastOp>(user);
      if (!cast || !cast.getType().getElementType().isBF16() ||
          cast->getBlock() != &block)
        continue;
      StringRef sym = forwardedResults.lookup(cast.getResult());
      if (sym.empty())
        continue;
      // The write moves from the cast to the AdamW: no other access of the
      // parameter (a read still live there included) may fall in between.
      SmallVector<Operation *> own(cast.getResult().getUsers().begin(),
                                   cast.getResult().getUsers().end());
      if (accessedIn(sym, pos.lookup(&op), pos.lookup(cast), /*reads=*/true,
                     /*writes=*/true, own))
        continue;
      fusedCasts[&op] = cast;
      castsInAdamW.insert(cast);
      break;
    }
  }
}

/// Zeroing gradients after the update is one `train.fill 0` computed in
/// each gradient state: fills of states that lie back to back in their
/// arena (each state 64-byte aligned, the gaps belong to no state) become
/// one call over the whole range, at the last fill's position, when no
/// state of the run is read or written between its own fill and there
/// (PyTorch's zero_grad over a flat gradient buffer; stage 0 of GPT-2: 148
/// calls become 1).
void FunctionLowering::decideFillRuns() {
  Block &block = fn.getBody().front();
  struct Fill {
    Operation *op;
    StringRef sym;
    const StateInfo *state;
  };
  SmallVector<Fill> fills;
  for (Operation &op : block) {
    auto fill = dyn_cast<train::FillOp>(op);
    if (!fill || fill.getValue().convertToDouble() != 0.0)
      continue;
    StringRef sym = forwardedResults.lookup(fill.getResult());
    auto it = ml.stateIndex.find(sym);
    if (sym.empty() || it == ml.stateIndex.end() ||
        !ml.states[it->second].hasStorage)
      continue;
    fills.push_back({&op, sym, &ml.states[it->second]});
  }
  llvm::stable_sort(fills, [](const Fill &a, const Fill &b) {
    return std::make_pair(a.state->place.mem, a.state->place.offset) <
           std::make_pair(b.state->place.mem, b.state->place.offset);
  });
  auto end = [](const Fill &f) {
    return f.state->place.offset + alignUp(tensorBytes(f.state->type));
  };
  for (size_t i = 0; i < fills.size();) {
    size_t j = i + 1;
    while (j < fills.size() &&
           fills[j].state->place.mem == fills[i].state->place.mem &&
           fills[j].state->place.offset == end(fills[j - 1]) &&
           fills[j].state->type.getElementType() ==
               fills[i].state->type.getElementType())
      ++j;
    if (j - i >= 2) {
      Operation *last = fills[i].op;
      for (size_t k = i; k < j; ++k)
        if (pos.lookup(fills[k].op) > pos.lookup(last))
          last = fills[k].op;
      // Each zeroing moves from its fill to the last: no other access of
      // its state may fall in between.
      bool ok = true;
      for (size_t k = i; k < j && ok; ++k) {
        Value z = fills[k].op->getResult(0);
        SmallVector<Operation *> own(z.getUsers().begin(), z.getUsers().end());
        ok = !accessedIn(fills[k].sym, pos.lookup(fills[k].op) + 1,
                         pos.lookup(last), /*reads=*/true, /*writes=*/true,
                         own);
      }
      if (ok) {
        fillRuns[last] = {fills[i].state->place,
                          end(fills[j - 1]) - fills[i].state->place.offset,
                          fills[i].state->type.getElementType()};
        for (size_t k = i; k < j; ++k)
          fillsInRuns.insert(fills[k].op);
      }
    }
    i = j;
  }
}

/// The state a non-copying train.load defines `v` as (nullptr otherwise).
const StateInfo *FunctionLowering::loadedState(Value v) {
  auto load = v.getDefiningOp<train::LoadOp>();
  if (!load || copyLoads.contains(load))
    return nullptr;
  auto it = ml.stateIndex.find(load.getName());
  if (it == ml.stateIndex.end() || !ml.states[it->second].hasStorage)
    return nullptr;
  return &ml.states[it->second];
}

/// The state whose memory `v` is: a non-copying load's, or the member's of
/// a zero.unpack result whose flat value is a state span (stateSpans).
const StateInfo *FunctionLowering::stateAt(Value v) {
  if (const StateInfo *s = loadedState(v))
    return s;
  auto r = dyn_cast<OpResult>(v);
  auto u = r ? dyn_cast<zero::UnpackOp>(r.getOwner()) : zero::UnpackOp();
  if (!u)
    return nullptr;
  auto span = stateSpans.find(u.getFlat());
  auto g = ml.groupIndex.find(u.getGroup());
  if (span == stateSpans.end() || g == ml.groupIndex.end())
    return nullptr;
  Placement p = span->second;
  p.offset += ml.groups[g->second].offsets[r.getResultNumber()] *
              elementBytes(elementType(v));
  for (const StateInfo &s : ml.states)
    if (s.hasStorage && s.place == p && s.type == tensorType(v))
      return &s;
  return nullptr;
}

/// The accesses of state `sym`, where they take effect: a non-copying load
/// reads it from the load to its value's last use (views read the state
/// where the value is used); a copying load at the load. A store or
/// accumulate writes it at its position, or, when the stored value may
/// have been computed in the state (store forwarding, AdamW in place, a
/// flat buffer placed in a state span: anything but a copy), from the
/// stored value's definition on (a collective's result from its start).
SmallVector<FunctionLowering::Access>
FunctionLowering::accesses(StringRef sym) {
  SmallVector<Access> out;
  for (Operation &op : fn.getBody().front()) {
    int64_t p = pos.lookup(&op);
    if (isLoad(&op) && loadSymbol(&op) == sym) {
      out.push_back({&op, p,
                     copyLoads.contains(&op) ? p : std::max(p, lastUse(op.getResult(0))),
                     false});
      continue;
    }
    if (writtenSymbol(&op) != sym)
      continue;
    int64_t first = p;
    if (Value v = storedValue(&op))
      if (Operation *def = v.getDefiningOp(); def && def->getBlock() == op.getBlock()) {
        first = std::min(first, pos.lookup(def));
        if (auto w = dyn_cast<zero::WaitOp>(def))
          if (Operation *start = w->getOperand(0).getDefiningOp())
            first = std::min(first, pos.lookup(start));
        // An unpack's results are views of its flat value.
        if (auto u = dyn_cast<zero::UnpackOp>(def))
          if (Operation *fd = u.getFlat().getDefiningOp()) {
            first = std::min(first, pos.lookup(fd));
            if (auto w = dyn_cast<zero::WaitOp>(fd))
              if (Operation *start = w->getOperand(0).getDefiningOp())
                first = std::min(first, pos.lookup(start));
          }
      }
    out.push_back({&op, first, p, true});
  }
  for (const InPlaceReduction &r : inPlaceReductions)
    if (llvm::is_contained(r.syms, sym))
      out.push_back({nullptr, r.start, r.wait, true});
  return out;
}

bool FunctionLowering::accessedIn(StringRef sym, int64_t from, int64_t to,
                                  bool reads, bool writes,
                                  ArrayRef<Operation *> own) {
  for (const Access &a : accesses(sym))
    if ((a.write ? writes : reads) && !llvm::is_contained(own, a.op) &&
        a.first <= to && a.last >= from)
      return true;
  return false;
}

/// Whether state b starts exactly where state a ends (no alignment gap), in
/// the same arena: elements of a run then share one flat index.
static bool backToBack(const StateInfo *a, const StateInfo *b) {
  return a && b && a->place.mem == b->place.mem &&
         b->place.offset == a->place.offset + tensorBytes(a->type);
}

/// Multi-tensor AdamW (AdamWRun): consecutive train.adamw ops (in program
/// order) whose parameter or master weights, gradient, moments and fused
/// bf16 copy each start where the previous op's end (PyTorch's fused AdamW
/// and DeepSpeed's flat optimizer buffers; stage 0 of GPT-2: 148 calls
/// become one), with the same step, learning rate, clip coefficient and
/// hyperparameters (weight decay W or 0 per tensor), and each updated in
/// place. The run's call happens at its first op, so no op before a later
/// member's own position may read or write that member's states (other than
/// its own loads). zrt_shard_adamw is bit-identical to zrt_adamw_step per
/// element, so the numbers do not change.
void FunctionLowering::decideAdamWRuns() {
  struct Member {
    train::AdamWOp op;
    const StateInfo *p, *g, *m, *v, *bf16;
    SmallVector<Operation *> loads;
  };
  auto describe = [&](train::AdamWOp a) -> std::optional<Member> {
    if (a.getFiniteCheck())
      return std::nullopt;
    for (Value r : a->getResults())
      if (!inPlaceResults.contains(r))
        return std::nullopt;
    Member mb{a,
              loadedState(a.getParam()),
              stateAt(a.getGrad()),
              loadedState(a.getExpAvg()),
              loadedState(a.getExpAvgSq()),
              nullptr,
              {}};
    if (!mb.p || !mb.g || !mb.m || !mb.v)
      return std::nullopt;
    for (Value x : {a.getParam(), a.getGrad(), a.getExpAvg(), a.getExpAvgSq()})
      mb.loads.push_back(x.getDefiningOp());
    if (auto c = fusedCasts.find(a); c != fusedCasts.end()) {
      auto it = ml.stateIndex.find(forwardedResults.lookup(c->second->getResult(0)));
      if (it == ml.stateIndex.end())
        return std::nullopt;
      mb.bf16 = &ml.states[it->second];
    }
    return mb;
  };
  auto syms = [](const Member &mb) {
    SmallVector<StringRef> out = {mb.p->name, mb.g->name, mb.m->name,
                                  mb.v->name};
    if (mb.bf16)
      out.push_back(mb.bf16->name);
    return out;
  };
  auto close = [&](SmallVector<Member> &run) {
    if (run.size() >= 2) {
      AdamWRun r;
      for (Member &mb : run) {
        double wd = mb.op.getWeightDecay().convertToDouble();
        r.ops.push_back(mb.op);
        r.offsets.push_back(r.total);
        r.numels.push_back(mb.p->type.getNumElements());
        r.decay.push_back(wd != 0.0);
        if (wd != 0.0)
          r.weightDecay = wd;
        r.total += mb.p->type.getNumElements();
        if (mb.op != run.front().op)
          adamwInRuns.insert(mb.op);
      }
      adamwRuns[run.front().op] = std::move(r);
    }
    run.clear();
  };
  SmallVector<Member> run;
  double runDecay = 0.0;
  for (Operation &op : fn.getBody().front()) {
    auto a = dyn_cast<train::AdamWOp>(op);
    if (!a)
      continue;
    std::optional<Member> mb = describe(a);
    if (!mb) {
      close(run);
      continue;
    }
    double wd = a.getWeightDecay().convertToDouble();
    bool extends = false;
    if (!run.empty()) {
      const Member &last = run.back();
      train::AdamWOp first = run.front().op;
      extends =
          backToBack(last.p, mb->p) && backToBack(last.g, mb->g) &&
          backToBack(last.m, mb->m) && backToBack(last.v, mb->v) &&
          (!last.bf16) == (!mb->bf16) &&
          (!mb->bf16 || backToBack(last.bf16, mb->bf16)) &&
          mb->p->type.getElementType() == last.p->type.getElementType() &&
          mb->g->type.getElementType() == last.g->type.getElementType() &&
          a.getLr() == first.getLr() && a.getStep() == first.getStep() &&
          a.getCoef() == first.getCoef() &&
          a.getBeta1() == first.getBeta1() &&
          a.getBeta2() == first.getBeta2() && a.getEps() == first.getEps() &&
          (wd == 0.0 || runDecay == 0.0 || wd == runDecay);
      // The member's update moves from its own op to the run's first: no
      // other access of its states may fall in between (its operand loads
      // and the stores of its results, in place, are its own).
      int64_t from = pos.lookup(first), to = pos.lookup(a);
      SmallVector<Operation *> own(mb->loads.begin(), mb->loads.end());
      for (Value r : a->getResults())
        for (Operation *user : r.getUsers())
          if (writtenSymbol(user).size())
            own.push_back(user);
      if (auto c = fusedCasts.find(a); c != fusedCasts.end())
        for (Operation *user : c->second->getResult(0).getUsers())
          own.push_back(user);
      for (StringRef sym : syms(*mb))
        extends = extends && !accessedIn(sym, from, to, /*reads=*/true,
                                         /*writes=*/true, own);
    }
    if (!extends) {
      close(run);
      runDecay = 0.0;
    }
    if (wd != 0.0)
      runDecay = wd;
    run.push_back(std::move(*mb));
  }
  close(run);
}

/// One sum of squares over adjacent gradient states (sumSquaresRuns): the
/// gradient norm of stage 0 sums the squares of each gradient and adds the
/// per-tensor sums in f32; over states that lie back to back, one call sums
/// all of them (in double, as each call does) instead. The result differs
/// from the chain only in f32 rounding (it is the more accurate one). The
/// call happens at the chain's last add: no gradient of the chain may be
/// written between its own sum and there.
void FunctionLowering::decideSumSquaresRuns() {
  // Only the gradient norm (the optimizer step): elsewhere (a loss with a
  // penalty) the f32 result must stay the IR's.
  if (role != Role::OptimizerStep)
    return;
  // A chain value -> its first input, last state, elements, the value it
  // adds the chain's sum to (base: null when the chain starts with two
  // sums), its sum_squares and add ops, and the states it reads.
  struct Chain {
    Value first, base;
    const StateInfo *last = nullptr;
    int64_t total = 0;
    int leaves = 0;
    SmallVector<Operation *> ops;
    SmallVector<std::pair<const StateInfo *, Operation *>> reads;
  };
  DenseMap<Value, Chain> chains;
  DenseSet<Value> extended; // chain values that a later add continues
  auto leaf = [&](Value v) -> std::optional<Chain> {
    auto ss = v.getDefiningOp<train::SumSquaresOp>();
    if (!ss || !v.hasOneUse())
      return std::nullopt;
    const StateInfo *s = stateAt(ss.getInput());
    if (!s)
      return std::nullopt;
    return Chain{ss.getInput(), {}, s, s->type.getNumElements(), 1, {ss},
                 {{s, ss}}};
  };
  auto follows = [](const Chain &a, const Chain &b) {
    return backToBack(a.last, b.last) &&
           a.last->type.getElementType() == b.last->type.getElementType();
  };
  SmallVector<train::AddOp> adds;
  for (Operation &op : fn.getBody().front()) {
    auto add = dyn_cast<train::AddOp>(op);
    if (!add || add.getResult().getType().getRank() != 0)
      continue;
    std::optional<Chain> rhs = leaf(add.getRhs());
    if (!rhs)
      continue;
    Chain c;
    auto it = chains.find(add.getLhs());
    std::optional<Chain> lhsLeaf;
    if (it != chains.end() && add.getLhs().hasOneUse() &&
        follows(it->second, *rhs)) {
      c = it->second; // continues the chain
      extended.insert(add.getLhs());
    } else if ((lhsLeaf = leaf(add.getLhs())) && follows(*lhsLeaf, *rhs)) {
      c = *lhsLeaf; // two adjacent sums start a chain
    } else {
      // The chain's sum is added to the left side later (at the chain's
      // last add): only a value with a buffer of its own (a sum or an add
      // computed here), not a view of a state that may change meanwhile.
      Operation *def = add.getLhs().getDefiningOp();
      if (!def || !isa<train::AddOp, train::SumSquaresOp>(def) ||
          forwardedResults.count(add.getLhs()) ||
          inSumSquaresRuns.contains(def))
        continue;
      c = *rhs;
      c.base = add.getLhs();
      c.ops.push_back(add);
      chains[add.getResult()] = std::move(c);
      adds.push_back(add);
      continue;
    }
    c.last = rhs->last;
    c.total += rhs->total;
    c.leaves += rhs->leaves;
    c.ops.append(rhs->ops);
    c.reads.append(rhs->reads);
    c.ops.push_back(add);
    chains[add.getResult()] = std::move(c);
    adds.push_back(add);
  }
  // Maximal chains of two sums or more.
  for (train::AddOp add : adds) {
    Value r = add.getResult();
    const Chain &c = chains[r];
    if (extended.contains(r) || c.leaves < 2)
      continue;
    // Each state is read at the last add instead of at its own sum.
    int64_t to = pos.lookup(add);
    bool ok = true;
    for (auto [s, read] : c.reads)
      ok = ok && !accessedIn(s->name, pos.lookup(read) + 1, to,
                             /*reads=*/false, /*writes=*/true);
    if (!ok)
      continue;
    sumSquaresRuns[add] = {c.first, c.total, c.base};
    if (c.base)
      extendedLife[c.base] = std::max(extendedLife.lookup_or(c.base, -1), to);
    for (Operation *op : c.ops)
      if (op != add)
        inSumSquaresRuns.insert(op);
  }
}

/// Flat buffers that are state spans (stateSpans). A zero.pack whose
/// member i is a non-copying load of the state at the group's span plus
/// its offset (gradients at stages 0-1: the reduce-scatter or all-reduce
/// reads the gradients where they live) when none of those states is
/// written while the flat value is live. A zero.unpack whose flat operand
/// has no other use and is computed into a buffer of its own (a cast, a
/// collective's result), and whose results are each stored into its
/// member's parameter only: the flat value is computed in the group's
/// parameter span (stages 1-2: the all-gather writes the parameters) when
/// nothing else reads or writes those parameters from its definition (a
/// collective's start) to the last store.
void FunctionLowering::decideStateSpans() {
  Block &block = fn.getBody().front();
  for (Operation &op : block) {
    if (auto pack = dyn_cast<zero::PackOp>(op)) {
      auto g = ml.groupIndex.find(pack.getGroup());
      Value flat = pack.getResult();
      if (g == ml.groupIndex.end() || packFirst.count(flat) ||
          forwardedResults.count(flat) || inPlaceResults.contains(flat))
        continue;
      const GroupInfo &gi = ml.groups[g->second];
      const int64_t eb = elementBytes(elementType(flat));
      std::optional<Placement> span;
      bool ok = pack.getMembers().size() == gi.members.size();
      for (auto [i, m] : llvm::enumerate(pack.getMembers())) {
        const StateInfo *s = ok ? loadedState(m) : nullptr;
        if (!s) {
          ok = false;
          break;
        }
        Placement want = *(span ? span : (span = s->place));
        want.offset += gi.offsets[i] * eb;
        std::optional<Placement> groupSpan =
            s->kind == kStateGrad ? gi.gradSpan : gi.paramSpan;
        ok = groupSpan && *groupSpan == *span && s->place == want;
      }
      if (!ok)
        continue;
      // The states must not change while the flat value is live.
      int64_t from = pos.lookup(pack), to = lastUse(flat);
      for (Value m : pack.getMembers())
        ok = ok && !accessedIn(loadSymbol(m.getDefiningOp()), from, to,
                               /*reads=*/false, /*writes=*/true);
      if (ok)
        stateSpans[flat] = *span;
      continue;
    }
    // An all-reduce of a gradient span, in place (stage 0: the averaged
    // gradients overwrite the gradients they average) when the span's
    // states are not read again and not written until it completes.
    Value input, reduced;
    Operation *start = nullptr;
    if (auto ar = dyn_cast<zero::AllReduceOp>(op)) {
      input = ar.getInput();
      reduced = ar.getResult();
      start = ar;
    } else if (auto w = dyn_cast<zero::WaitOp>(op)) {
      if (auto st = w->getOperand(0).getDefiningOp<zero::AllReduceStartOp>()) {
        input = st.getInput();
        reduced = w.getResult();
        start = st;
      }
    }
    if (reduced) {
      auto span = stateSpans.find(input);
      auto pack = input.getDefiningOp<zero::PackOp>();
      if (span == stateSpans.end() || !pack || !input.hasOneUse() ||
          input.getType() != reduced.getType() ||
          inPlaceResults.contains(reduced) || forwardedResults.count(reduced))
        continue;
      // The states hold the averages from the start on, read through the
      // result's views until its last use: nothing else may access them
      // from the start until a store overwrites each of them after that
      // last use (so no average outlives the function, e.g. into the next
      // step's gradient accumulation).
      bool ok = true;
      const int64_t from = pos.lookup(start), waitPos = pos.lookup(&op);
      // Where each member's averages are last read: its unpacked view's
      // last use; any other use of the result reads every member.
      int64_t whole = waitPos;
      SmallVector<int64_t> memberLive(pack.getMembers().size(), waitPos);
      for (Operation *user : reduced.getUsers()) {
        auto u = dyn_cast<zero::UnpackOp>(user);
        if (!u || u.getMembers().size() != memberLive.size()) {
          whole = std::max(whole, pos.lookup(user));
          continue;
        }
        for (auto [k, r] : llvm::enumerate(u.getMembers()))
          memberLive[k] = std::max(memberLive[k], lastUse(r));
      }
      SmallVector<Operation *> own;
      for (Value m : pack.getMembers())
        own.push_back(m.getDefiningOp());
      InPlaceReduction rec{from, waitPos, {}};
      for (auto [k, m] : llvm::enumerate(pack.getMembers())) {
        const int64_t live = std::max(whole, memberLive[k]);
        StringRef sym = loadSymbol(m.getDefiningOp());
        rec.syms.push_back(sym.str());
        int64_t overwrite = INT64_MAX;
        for (Operation &other : block)
          if (isa<train::StoreOp>(other) && writtenSymbol(&other) == sym &&
              pos.lookup(&other) > live)
            overwrite = std::min(overwrite, pos.lookup(&other));
        if (overwrite == INT64_MAX) {
          ok = false;
          break;
        }
        // The overwriting store's own write interval may start earlier
        // (a fill computed in the state): it must start after `live` too.
        for (const Access &a : accesses(sym)) {
          if (llvm::is_contained(own, a.op))
            continue;
          if (a.op && pos.lookup(a.op) == overwrite) {
            ok = ok && a.first > live;
            continue;
          }
          if (a.first <= overwrite && a.last > from)
            ok = false;
        }
      }
      if (ok) {
        stateSpans[reduced] = span->second;
        inPlaceReductions.push_back(std::move(rec));
      }
      continue;
    }
    auto unpack = dyn_cast<zero::UnpackOp>(op);
    if (!unpack)
      continue;
    auto g = ml.groupIndex.find(unpack.getGroup());
    Value flat = unpack.getFlat();
    Operation *def = flat.getDefiningOp();
    if (g == ml.groupIndex.end() || !def || !flat.hasOneUse() ||
        def->getBlock() != &block || isLoad(def) ||
        isa<train::ReshapeOp, zero::UnpackOp, zero::SplitOp, zero::PackOp,
            train::AdamWOp, zero::ShardAdamWOp>(def) ||
        inPlaceResults.contains(flat) || forwardedResults.count(flat) ||
        packSlots.count(flat) || packFirst.count(flat) ||
        castsInAdamW.contains(def))
      continue;
    const GroupInfo &gi = ml.groups[g->second];
    if (!gi.paramSpan || gi.paramSpan->mem != kMemParams)
      continue;
    SmallVector<Operation *> stores;
    bool ok = true;
    for (auto [i, r] : llvm::enumerate(unpack.getMembers())) {
      Operation *user = r.hasOneUse() ? *r.getUsers().begin() : nullptr;
      ok = ok && user && isa<train::StoreOp>(user) &&
           writtenSymbol(user) == gi.members[i] && storedValue(user) == r;
      if (ok)
        stores.push_back(user);
    }
    if (!ok)
      continue;
    int64_t from = pos.lookup(def), to = 0;
    if (auto w = dyn_cast<zero::WaitOp>(def))
      if (Operation *start = w->getOperand(0).getDefiningOp())
        from = pos.lookup(start);
    for (Operation *st : stores)
      to = std::max(to, pos.lookup(st));
    // The parameters change from the flat value's definition on: nothing
    // else may read or write them until the last store.
    for (const std::string &m : gi.members)
      ok = ok && !accessedIn(m, from, to, /*reads=*/true, /*writes=*/true,
                             stores);
    if (ok)
      stateSpans[flat] = *gi.paramSpan;
  }
}

static bool hasNativeBf16Kernel(Operation *op);

/// Whether `op` runs as one zrt.h native bf16 kernel (zrt_X_bf16, the same
/// numbers as widening to f32, zrt_X and rounding back, without the f32
/// copies): every floating tensor it reads or writes is bf16, except the
/// f32 scalar loss and loss gradient of cross-entropy.
static bool hasNativeBf16Kernel(Operation *op) {
  if (const zero::emit::OpEmitter *e = emitters().lookup(op))
    return e->isNativeBf16(op);
  return false;
}

/// Whether `op` is a compute op (Train/NotCompute.h): bf16 operands of one
/// without a native kernel are widened to f32 around it.
static bool isComputeOp(Operation *op) { return train::isComputeOp(op); }

/// The bf16 and f16 tensors a compute op reads or writes, each once.
static SmallVector<Value> bf16Tensors(Operation *op) {
  SmallVector<Value> out;
  auto add = [&](Value v) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (t && zero::narrow::isNarrowFloat(t.getElementType()) &&
        !llvm::is_contained(out, v))
      out.push_back(v);
  };
  for (Value v : op->getOperands())
    add(v);
  for (Value v : op->getResults())
    add(v);
  return out;
}

int64_t FunctionLowering::scratchBytes(Operation *op) {
  int64_t bytes = 0;
  bool native = hasNativeBf16Kernel(op);
  // A workspace formula (zrt/abi.h) says -1 when the size overflows int64.
  bool overflow = false;
  auto words = [&](int64_t n) {
    overflow |= n < 0;
    return n;
  };
  if (isComputeOp(op) && !native)
    for (Value v : bf16Tensors(op))
      bytes += alignUp(std::max<int64_t>(numel(v), 1) * 4);
  if (const zero::emit::OpEmitter *e = emitters().lookup(op))
    for (int64_t w : e->scratchWords(op, native))
      bytes += alignUp(std::max<int64_t>(words(w), 1) * 4);
  if (auto r = dyn_cast<func::ReturnOp>(op))
    if (role == Role::Logits && r.getNumOperands() == 1) {
      // As emitReturn: the last positions [B, Vp] in f32 (and in bf16 first
      // for bf16 logits) before the copy to the host.
      ArrayRef<int64_t> s = tensorType(r.getOperand(0)).getShape();
      if (zero::narrow::isNarrowFloat(elementType(r.getOperand(0))))
        bytes += alignUp((s[0] * s.back() + 1) / 2 * 4);
      bytes += alignUp(s[0] * s.back() * 4);
    }
  return overflow ? -1 : bytes;
}

LogicalResult FunctionLowering::planArguments() {
  Block &entry = fn.getBody().front();
  if (role == Role::OptimizerStep) {
    // lr, step, grad_scale by their train.name (else by position).
    static constexpr StringLiteral names[3] = {"lr", "step", "grad_scale"};
    if (entry.getNumArguments() != 3)
      return fn.emitOpError(
          "must take (lr: tensor<f32>, step: tensor<i64>, "
          "grad_scale: tensor<f32>) for the model.h contract");
    for (BlockArgument a : entry.getArguments()) {
      unsigned which = a.getArgNumber();
      if (auto n = fn.getArgAttrOfType<StringAttr>(which, "train.name")) {
        auto it = llvm::find(names, n.getValue());
        if (it != std::end(names))
          which = it - std::begin(names);
      }
      auto t = dyn_cast<RankedTensorType>(a.getType());
      Type want = which == 1 ? Type(IntegerType::get(fn.getContext(), 64))
                             : Type(Float32Type::get(fn.getContext()));
      if (!t || t.getRank() != 0 || t.getElementType() != want)
        return fn.emitOpError("argument #")
               << a.getArgNumber() << " (" << names[which] << ") must be "
               << RankedTensorType::get({}, want);
      request(a, kMemTemps, /*first=*/-1);
      scalarArgs.push_back({which, a});
    }
    return success();
  }
  // The data inputs: (ids, targets), or an array model's named inputs.
  const unsigned numInputs = ml.arrayInputs() ? ml.inputs.size() : 2;
  unsigned maxArgs = role == Role::Logits ? 1 : numInputs;
  if (role == Role::ForwardBackward &&
      entry.getNumArguments() == numInputs + 1) {
    // fp16-mixed: the loss scale S (train-autodiff{loss-scale=true}), set
    // through the model description's set_loss_scale.
    BlockArgument s = entry.getArgument(numInputs);
    auto name = fn.getArgAttrOfType<StringAttr>(numInputs, "train.name");
    auto t = dyn_cast<RankedTensorType>(s.getType());
    if (!name || name.getValue() != "loss_scale" || !t || t.getRank() != 0 ||
        !t.getElementType().isF32())
      return fn.emitOpError("argument #")
             << numInputs
             << " must be the loss scale "
                "(tensor<f32> {train.name = \"loss_scale\"}) "
                "for the model.h contract";
    request(s, kMemTemps, /*first=*/-1);
    scalarArgs.push_back({kLossScaleArg, s});
    ml.lossScaled = true;
    maxArgs = numInputs + 1;
  }
  if (ml.arrayInputs()) {
    // The named inputs of @forward, in its order (describeInputs).
    if (entry.getNumArguments() != maxArgs)
      return fn.emitOpError("takes ")
             << entry.getNumArguments() << " arguments; @forward's "
             << numInputs << " named inputs"
             << (ml.lossScaled ? " and the loss scale" : "")
             << " are what the model.h contract passes";
    for (unsigned i = 0; i < numInputs; ++i) {
      BlockArgument a = entry.getArgument(i);
      auto name = fn.getArgAttrOfType<StringAttr>(i, "train.name");
      if (!name || name.getValue() != ml.inputs[i].name ||
          a.getType() != ml.inputs[i].type)
        return fn.emitOpError("argument #")
               << i << " must be @forward's input '" << ml.inputs[i].name
               << "' (" << ml.inputs[i].type << ")";
      if (a.use_empty())
        continue;
      request(a, kMemTemps, /*first=*/-1);
      inputArgs.push_back(a);
    }
    return success();
  }
  if (entry.getNumArguments() > maxArgs)
    return fn.emitOpError("takes ")
           << entry.getNumArguments() << " arguments; the model.h contract "
           << (role == Role::Logits ? "passes token ids only"
                                    : "passes token ids and targets");
  for (BlockArgument a : entry.getArguments()) {
    if (maxArgs == 3 && a.getArgNumber() == 2)
      continue; // the loss scale, above
    auto t = dyn_cast<RankedTensorType>(a.getType());
    if (!t || !t.getElementType().isInteger(32))
      return fn.emitOpError("argument #")
             << a.getArgNumber() << " has type " << a.getType()
             << "; the model.h contract passes int32 token ids / targets";
    // Copied from the caller's host memory into an arena buffer at entry.
    if (a.use_empty())
      continue;
    request(a, kMemTemps, /*first=*/-1);
    inputArgs.push_back(a);
  }
  return success();
}

LogicalResult FunctionLowering::plan() {
  Block &block = fn.getBody().front();
  int64_t i = 0;
  for (Operation &op : block) {
    pos[&op] = i;
    if (op.hasAttr("train.loss_seed") && seedPos == INT64_MAX)
      seedPos = i;
    ++i;
  }
  if (role == Role::Forward || role == Role::ForwardBackward) {
    if (fn.getNumResults() != 1 ||
        fn.getResultTypes()[0] !=
            RankedTensorType::get({}, Float32Type::get(fn.getContext())))
      return fn.emitOpError("must return exactly the f32 loss (tensor<f32>) "
                            "for the model.h contract");
  } else if (role == Role::OptimizerStep) {
    if (fn.getNumResults() != 1 ||
        fn.getResultTypes()[0] !=
            RankedTensorType::get({}, Float32Type::get(fn.getContext())))
      return fn.emitOpError("must return exactly the gradient norm "
                            "(tensor<f32>) for the model.h contract");
  } else {
    auto t = fn.getNumResults() == 1
                 ? dyn_cast<RankedTensorType>(fn.getResultTypes()[0])
                 : RankedTensorType();
    if (!t || t.getRank() != 3)
      return fn.emitOpError("must return the logits tensor<BxTxVp> for the "
                            "model.h contract");
  }
  if (failed(planArguments()))
    return failure();
  decideLoadCopies();
  decideInPlaceUpdates();
  decidePackSlots();
  decideFusedCasts();
  decideFillRuns();
  decideStateSpans();
  decideAdamWRuns();
  decideSumSquaresRuns();

  for (Operation &op : block) {
    for (Value v : op.getResults())
      if (auto t = dyn_cast<RankedTensorType>(v.getType()))
        if (failed(checkStorable(&op, t)))
          return failure();
    if (isLoad(&op)) {
      const StateInfo *s = ml.lookupState(&op, loadSymbol(&op));
      if (!s)
        return failure();
      if (copyLoads.contains(&op))
        request(op.getResult(0), kMemTemps, pos.lookup(&op));
      else
        buffers[op.getResult(0)] = {Buffer::Arena, s->place};
      continue;
    }
    if (auto r = dyn_cast<train::ReshapeOp>(op)) {
      buffers[r.getResult()] = {Buffer::View, {}, r.getInput(), 0};
      continue;
    }
    if (auto u = dyn_cast<zero::UnpackOp>(op)) {
      auto g = ml.groupIndex.find(u.getGroup());
      if (g == ml.groupIndex.end())
        return u.emitOpError("refers to @")
               << u.getGroup() << ", which is not a zero.group";
      for (auto [i, v] : llvm::enumerate(u.getMembers()))
        buffers[v] = {
            Buffer::View, {}, u.getFlat(), ml.groups[g->second].offsets[i]};
      continue;
    }
    if (auto sp = dyn_cast<zero::SplitOp>(op)) {
      int64_t offset = 0;
      for (Value v : sp.getResults()) {
        buffers[v] = {Buffer::View, {}, sp.getInput(), offset};
        offset += numel(v);
      }
      continue;
    }
    if (isa<zero::AllGatherStartOp, zero::ReduceScatterStartOp,
            zero::AllReduceStartOp>(op) &&
        (!op.getResult(0).hasOneUse() || !waitOf(&op)))
      return op.emitOpError("must be waited exactly once (zero.wait)");
    for (Value v : op.getResults()) {
      if (!isa<RankedTensorType>(v.getType()))
        continue; // !zero.pending: the buffer is its zero.wait's result
      if (inPlaceResults.contains(v)) {
        // (new_param, new_exp_avg, new_exp_avg_sq) update operands
        // (param, exp_avg, exp_avg_sq) = #0, #2, #3 of both AdamW ops.
        unsigned k = cast<OpResult>(v).getResultNumber();
        Value operand = op.getOperand(k == 0 ? 0 : k == 1 ? 2 : 3);
        buffers[v] = buffers.lookup(operand);
        continue;
      }
      if (StringRef sym = forwardedResults.lookup(v); !sym.empty()) {
        const StateInfo *s = ml.lookupState(&op, sym);
        if (!s)
          return failure();
        buffers[v] = {Buffer::Arena, s->place};
        continue;
      }
      if (auto span = stateSpans.find(v); span != stateSpans.end()) {
        buffers[v] = {Buffer::Arena, span->second};
        continue;
      }
      // A program constant lives in its slot of the constants arena
      // (zero-layout-states), computed once by init().
      if (isa<train::RopeTableOp>(op)) {
        auto slot =
            op.getAttrOfType<zero::SlotAttr>(zero::ZeroDialect::kSlotAttrName);
        if (!slot)
          return op.emitOpError("has no ")
                 << zero::ZeroDialect::kSlotAttrName
                 << " (its place in the constants arena); run "
                    "zero-layout-states first";
        buffers[v] = {Buffer::Arena, {kMemConsts, slot.getOffset()}};
        continue;
      }
      if (auto ce = dyn_cast<train::CrossEntropyFusedOp>(op);
          ce && v == ce.getGrad()) {
        buffers[v] = {Buffer::View, {}, ce.getLogits(), 0};
        continue;
      }
      if (auto slot = packSlots.find(v); slot != packSlots.end()) {
        buffers[v] = {Buffer::View, {}, slot->second.first,
                      slot->second.second};
        continue;
      }
      // A collective's result is written from its start on; a pack's flat
      // buffer from its first slot member's definition on.
      int64_t first = pos.lookup(&op);
      if (auto w = dyn_cast<zero::WaitOp>(op))
        if (Operation *start = w->getOperand(0).getDefiningOp())
          first = pos.lookup(start);
      if (auto f = packFirst.find(v); f != packFirst.end())
        first = std::min(first, f->second);
      request(v, isActivation(v) ? kMemActs : kMemTemps, first);
    }
    int64_t sb = scratchBytes(&op);
    if (sb < 0)
      return op.emitOpError("needs a kernel workspace larger than int64 "
                            "bytes (zrt/abi.h)");
    if (sb) {
      PlanBlock blk;
      blk.bytes = sb;
      blk.first = blk.last = pos.lookup(&op);
      blk.scratchOp = &op;
      blocks.push_back(blk);
      scratchLen[&op] = sb;
      scratchSize = std::max(scratchSize, sb);
    }
  }
  if (assign == Assign::BestFit)
    shareActivations();
  if (failed(assignOffsets()))
    return failure();
  for (int m : {kMemActs, kMemTemps})
    ml.arenaBytes[m] = std::max(ml.arenaBytes[m], bump[m]);
  if (role == Role::ForwardBackward)
    ml.forwardBackwardActivations = bump[kMemActs];
  return success();
}

//===----------------------------------------------------------------------===//
// FunctionLowering: emission helpers
//===----------------------------------------------------------------------===//

Attribute FunctionLowering::i64(int64_t v) { return b.getI64IntegerAttr(v); }
Attribute FunctionLowering::f32(double v) {
  return b.getF32FloatAttr(static_cast<float>(v));
}
Attribute FunctionLowering::f64(double v) { return b.getF64FloatAttr(v); }
Attribute FunctionLowering::opq(StringRef text) {
  return emitc::OpaqueAttr::get(b.getContext(), text);
}

Value FunctionLowering::literal(Type t, StringRef text) {
  return emitc::LiteralOp::create(b, loc(), t, text);
}

void FunctionLowering::call(StringRef callee, ArrayRef<CArg> args) {
  SmallVector<Value> operands;
  SmallVector<Attribute> attrs;
  for (const CArg &a : args) {
    if (a.value) {
      attrs.push_back(b.getIndexAttr(operands.size()));
      operands.push_back(a.value);
    } else {
      attrs.push_back(a.attr);
    }
  }
  auto c = emitc::CallOpaqueOp::create(b, loc(), TypeRange{ml.intType()},
                                       callee, operands, b.getArrayAttr(attrs));
  emitc::CallOpaqueOp::create(b, loc(), TypeRange{}, "ZRT_CHECK",
                              ValueRange{c.getResult(0)});
}

Value FunctionLowering::memBase(int mem) {
  if (!bases[mem]) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(prologueEnd);
    auto u8 = emitc::PointerType::get(
        IntegerType::get(b.getContext(), 8, IntegerType::Unsigned));
    Value g =
        emitc::GetGlobalOp::create(b, fn.getLoc(), emitc::LValueType::get(u8),
                                   std::string("zrt_mem_") + kMemName[mem]);
    bases[mem] = emitc::LoadOp::create(b, fn.getLoc(), u8, g);
  }
  return bases[mem];
}

Value FunctionLowering::pointerAt(Placement p, Type elt) {
  Value base = memBase(p.mem);
  if (p.offset != 0)
    base =
        emitc::AddOp::create(b, loc(), base.getType(), base,
                             literal(b.getI64Type(), std::to_string(p.offset)));
  return emitc::CastOp::create(b, loc(), ml.ptrType(elt), base);
}

Value FunctionLowering::offsetPtr(Value p, int64_t elems) {
  if (elems == 0)
    return p;
  return emitc::AddOp::create(b, loc(), p.getType(), p,
                              literal(b.getI64Type(), std::to_string(elems)));
}

Value FunctionLowering::ptr(Value tensor) {
  if (Value o = overrides.lookup(tensor))
    return o;
  if (Value p = pointers.lookup(tensor))
    return p;
  Buffer buf = buffers.lookup(tensor);
  Value p;
  switch (buf.kind) {
  case Buffer::Arena:
    p = pointerAt(buf.place, elementType(tensor));
    break;
  case Buffer::View:
    p = offsetPtr(ptr(buf.base), buf.elemOffset);
    break;
  case Buffer::None:
    llvm_unreachable("tensor without a buffer");
  }
  pointers[tensor] = p;
  return p;
}

Placement FunctionLowering::rootPlacement(Value v, bool &isArena) {
  Buffer buf = buffers.lookup(v);
  int64_t extra = 0;
  while (buf.kind == Buffer::View) {
    extra += buf.elemOffset * elementBytes(elementType(buf.base));
    buf = buffers.lookup(buf.base);
  }
  isArena = buf.kind == Buffer::Arena;
  Placement p = buf.place;
  p.offset += extra;
  return p;
}

Value FunctionLowering::scratch(int64_t elems) {
  Placement p{kMemTemps, scratchBase + scratchCursor};
  scratchCursor += alignUp(std::max<int64_t>(elems, 1) * 4);
  if (scratchCursor > scratchSize || scratchBase < 0)
    llvm::report_fatal_error(
        "convert-train-to-emitc: scratch plan out of sync");
  return pointerAt(p, b.getF32Type());
}

Value FunctionLowering::scalar(Value tensor) {
  // The optimizer step's scalar arguments are host values already.
  for (auto [which, irArg] : scalarArgs)
    if (irArg == tensor && which != kLossScaleArg)
      return body->getArgument(which);
  if (Value v = hostScalars.lookup(tensor))
    return v;
  // Anything else lives in an arena: copy it to a host local.
  Value p = ptr(tensor);
  Type elt = cast<emitc::PointerType>(p.getType()).getPointee();
  Value lv = emitc::VariableOp::create(b, loc(), emitc::LValueType::get(elt),
                                       opq("0"));
  Value addr =
      emitc::AddressOfOp::create(b, loc(), emitc::PointerType::get(elt), lv);
  call("zrt_copy_to_host", {addr, p, i64(elementBytes(elementType(tensor)))});
  Value v = emitc::LoadOp::create(b, loc(), elt, lv);
  hostScalars[tensor] = v;
  return v;
}

Value FunctionLowering::rankValue() {
  if (!rank) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(prologueEnd);
    // Shards are over the data axis: the data rank d on a mesh.
    rank = ml.tensorSize > 1
               ? emitc::CallOpaqueOp::create(
                     b, fn.getLoc(), TypeRange{b.getI32Type()},
                     "zrt_axis_rank", ValueRange{},
                     b.getArrayAttr({opq("ZRT_AXIS_DATA")}))
                     .getResult(0)
               : emitc::CallOpaqueOp::create(b, fn.getLoc(),
                                             TypeRange{b.getI32Type()},
                                             "zrt_rank", ValueRange{})
                     .getResult(0);
  }
  return rank;
}

void FunctionLowering::collective(StringRef name, zero::MeshAxis axis,
                                  ArrayRef<CArg> args) {
  if (axis == zero::MeshAxis::data)
    return call(name, args);
  bool start = name.consume_back("_start");
  std::string callee = (name + "_axis" + (start ? "_start" : "")).str();
  SmallVector<CArg> withAxis{opq("ZRT_AXIS_TENSOR")};
  withAxis.append(args.begin(), args.end());
  call(callee, withAxis);
}

Value FunctionLowering::statePtr(const StateInfo &s) {
  return pointerAt(s.place, s.type.getElementType());
}

void FunctionLowering::comment(Operation *op, StringRef suffix) {
  if (!ml.emitComments)
    return;
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "// " << op->getName();
  if (auto sym = op->getAttrOfType<FlatSymbolRefAttr>("name"))
    os << " @" << sym.getValue();
  if (op->getNumResults()) {
    os << " -> ";
    llvm::interleaveComma(op->getResultTypes(), os);
  }
  os << suffix;
  if (auto name = dyn_cast<NameLoc>(op->getLoc()))
    os << "  [" << name.getName().getValue() << "]";
  emitc::VerbatimOp::create(b, loc(), os.str());
}

//===----------------------------------------------------------------------===//
// FunctionLowering: ops
//===----------------------------------------------------------------------===//

LogicalResult FunctionLowering::emitStateLoad(Operation *op, StringRef sym) {
  if (!copyLoads.contains(op))
    return success(); // a view of the state
  const StateInfo *s = ml.lookupState(op, sym);
  if (!s)
    return failure();
  Value r = op->getResult(0);
  call("zrt_copy_any",
       {statePtr(*s), ptr(r), i64(numel(r)), opq(*dtypeName(elementType(r)))});
  return success();
}

LogicalResult FunctionLowering::emitStateStore(Operation *op, Value value,
                                               StringRef sym, bool accumulate) {
  const StateInfo *s = ml.lookupState(op, sym);
  if (!s)
    return failure();
  if (s->type.getElementType() != elementType(value) ||
      s->type.getNumElements() != numel(value))
    return op->emitOpError("value type ")
           << value.getType() << " does not match @" << sym << " (" << s->type
           << ")";
  Type elt = elementType(value);
  if (accumulate) {
    if (elt.isF32())
      call("zrt_axpy", {f32(1.0), ptr(value), statePtr(*s), i64(numel(value))});
    else
      call(zero::narrow::fn("zrt_accumulate", elt),
           {ptr(value), statePtr(*s), i64(numel(value))});
    return success();
  }
  bool isArena = false;
  Placement root = rootPlacement(value, isArena);
  if (isArena && root == s->place) {
    comment(op, " (no copy: computed in place)");
    return success();
  }
  comment(op);
  call("zrt_copy_any",
       {ptr(value), statePtr(*s), i64(numel(value)), opq(*dtypeName(elt))});
  return success();
}

LogicalResult FunctionLowering::emitAdamW(Operation *op, Value p, Value g,
                                          Value m, Value v, Value lr,
                                          Value step, Value coef,
                                          Value finiteCheck, double b1,
                                          double b2, double eps, double wd,
                                          int group) {
  if (!elementType(p).isF32() || !elementType(m).isF32() ||
      !elementType(v).isF32())
    return op->emitOpError("needs f32 parameters and moments (the master "
                           "weights under mixed precision)");
  Value results[3] = {op->getResult(0), op->getResult(1), op->getResult(2)};
  Value inputs[3] = {p, m, v};
  for (int k = 0; k < 3; ++k)
    if (!inPlaceResults.contains(results[k]))
      call("zrt_copy_any", {ptr(inputs[k]), ptr(results[k]),
                            i64(numel(results[k])), opq("ZRT_F32")});
  Value lrV = scalar(lr), stepV = scalar(step), coefV = scalar(coef);
  Type gradElt = elementType(g);
  bool narrowGrad = zero::narrow::isNarrowFloat(gradElt);
  if (group >= 0 && numel(p) != ml.groups[group].shard)
    return op->emitOpError("operates on ")
           << numel(p) << " elements, but a shard of @" << ml.groups[group].name
           << " has " << ml.groups[group].shard;
  // Every pointer before a possible `if`: later ops may use them too.
  Value pp = ptr(results[0]), pm = ptr(results[1]), pv = ptr(results[2]),
        pg = ptr(g);
  Value rankV = group >= 0 ? rankValue() : Value();
  // skip_nonfinite: the update runs only when the check value is finite
  // (otherwise the results keep the inputs, as GradScaler.step skips).
  OpBuilder::InsertionGuard guard(b);
  if (finiteCheck) {
    Value finite = emitc::CallOpaqueOp::create(
                       b, loc(), TypeRange{b.getI1Type()}, "std::isfinite",
                       ValueRange{scalar(finiteCheck)})
                       .getResult(0);
    auto ifOp = emitc::IfOp::create(b, loc(), finite); // then: yield only
    b.setInsertionPoint(ifOp.getThenRegion().front().getTerminator());
  }
  if (group < 0) {
    // The bf16 copy of the new parameter, when its cast is folded in.
    auto fused = fusedCasts.find(op);
    CArg outBf16 = fused != fusedCasts.end()
                       ? CArg(ptr(fused->second->getResult(0)))
                       : CArg(opq("NULL"));
    call(narrowGrad ? zero::narrow::fn("zrt_adamw_step", gradElt) + "_grad"
                    : std::string("zrt_adamw_step"),
         {pp, pm, pv, pg, opq("NULL"), outBf16, i64(numel(p)), lrV, f64(b1),
          f64(b2), f64(eps), f64(wd), coefV, stepV});
    return success();
  }
  const GroupInfo &gi = ml.groups[group];
  std::string prefix = llvm::formatv("zrt_group{0}_", group).str();
  call("zrt_shard_adamw",
       {pp, pm, pv, pg, opq(*dtypeName(gradElt)), i64(gi.shard),
        rankV, i64(gi.members.size()), opq(prefix + "offsets"),
        opq(prefix + "numels"), opq(prefix + "decay"), lrV, f64(b1), f64(b2),
        f64(eps), f64(wd), coefV, stepV});
  return success();
}

LogicalResult FunctionLowering::emitAdamWRun(Operation *op) {
  const AdamWRun &run = adamwRuns.find(op)->second;
  train::AdamWOp a = run.ops.front();
  std::string offsets = ml.int64Array("adamw_run_offsets", run.offsets);
  std::string numels = ml.int64Array("adamw_run_numels", run.numels);
  SmallVector<int64_t> decay(run.decay.begin(), run.decay.end());
  std::string decayName = ml.uint8Array("adamw_run_decay", decay);
  ++ml.numPermutations;
  Value pp = ptr(a.getNewParam()), pm = ptr(a.getNewExpAvg()),
        pv = ptr(a.getNewExpAvgSq()), pg = ptr(a.getGrad());
  call("zrt_shard_adamw",
       {pp, pm, pv, pg,
        opq(*dtypeName(elementType(a.getGrad()))),
        i64(run.total), opq("0"), i64(run.ops.size()), opq(offsets),
        opq(numels), opq(decayName), scalar(a.getLr()),
        f64(a.getBeta1().convertToDouble()), f64(a.getBeta2().convertToDouble()),
        f64(a.getEps().convertToDouble()), f64(run.weightDecay),
        scalar(a.getCoef()), scalar(a.getStep())});
  // The bf16 copies of the new parameters (the fused casts, back to back).
  if (auto c = fusedCasts.find(a); c != fusedCasts.end())
    call("zrt_cast_f32_to_bf16",
         {pp, ptr(c->second->getResult(0)), i64(run.total)});
  return success();
}

/// ZRT_SUM / ZRT_AVG / ZRT_MAX.
static StringRef reduceOpName(zero::ReduceKind kind) {
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

Value FunctionLowering::request(Operation *start) {
  // zrt_request req = NULL; ... &req
  Type reqT = emitc::OpaqueType::get(b.getContext(), "zrt_request");
  Value lv = emitc::VariableOp::create(b, loc(), emitc::LValueType::get(reqT),
                                       opq("NULL"));
  requests[start->getResult(0)] = lv;
  return emitc::AddressOfOp::create(b, loc(), emitc::PointerType::get(reqT),
                                    lv);
}

LogicalResult FunctionLowering::emitCompute(Operation *op) {
  if (const zero::emit::OpEmitter *e = emitters().lookup(op))
    return e->emit(op, *this, nativeBf16);
  return op->emitOpError("is not supported by convert-train-to-emitc");
}

LogicalResult FunctionLowering::emitOp(Operation *op) {
  curLoc = op->getLoc();
  // zero-place-progress put it here; printed without a comment.
  if (isa<zero::ProgressOp>(op)) {
    call("zrt_comm_progress", {});
    return success();
  }
  scratchCursor = 0;
  scratchBase = scratchAt.lookup_or(op, -1);
  scratchSize = scratchLen.lookup(op);
  if (!isa<train::ReshapeOp, zero::UnpackOp, zero::SplitOp, train::StoreOp,
           zero::ShardStoreOp>(op) &&
      !(isLoad(op) && !copyLoads.contains(op)))
    comment(op, castsInAdamW.contains(op) ? " (written by the AdamW call)"
                : isa<train::CrossEntropyFusedOp>(op)
                    ? " (the gradient over the logits)"
                : fillRuns.count(op) ? " (one fill over adjacent states)"
                : fillsInRuns.contains(op)
                    ? " (zeroed by a later fill of adjacent states)"
                : adamwRuns.count(op) ? " (one AdamW call over adjacent states)"
                : adamwInRuns.contains(op)
                    ? " (updated by an earlier AdamW call of adjacent states)"
                : sumSquaresRuns.count(op)
                    ? " (one sum of squares over adjacent states)"
                : inSumSquaresRuns.contains(op)
                    ? " (in a later sum of squares over adjacent states)"
                    : "");
  if (adamwInRuns.contains(op) || inSumSquaresRuns.contains(op))
    return success();
  if (adamwRuns.count(op))
    return emitAdamWRun(op);
  if (auto run = sumSquaresRuns.find(op); run != sumSquaresRuns.end()) {
    const SumSquaresRun &r = run->second;
    Value out = ptr(op->getResult(0));
    Type elt = elementType(r.first);
    call(zero::narrow::isNarrowFloat(elt) ? zero::narrow::fn("zrt_sum_squares", elt)
                                          : std::string("zrt_sum_squares"),
         {ptr(r.first), i64(r.total), out});
    if (r.base)
      call("zrt_add", {ptr(r.base), out, out, i64(1)});
    return success();
  }

  // Ops with a native bf16 kernel: one zrt_X_bf16 call on the bf16 tensors.
  if (hasNativeBf16Kernel(op)) {
    nativeBf16 = true;
    LogicalResult r = emitCompute(op);
    nativeBf16 = false;
    return r;
  }

  // Other compute ops on bf16: widen to f32 scratch, compute, round back.
  if (isComputeOp(op)) {
    SmallVector<Value> narrow = bf16Tensors(op);
    for (Value v : narrow) {
      Value s = scratch(numel(v));
      if (v.getDefiningOp() != op)
        call(zero::narrow::castToF32(elementType(v)), {ptr(v), s, i64(numel(v))});
      overrides[v] = s;
    }
    if (failed(emitCompute(op)))
      return failure();
    for (Value v : narrow) {
      Value s = overrides[v];
      overrides.erase(v);
      if (v.getDefiningOp() == op)
        call(zero::narrow::castFromF32(elementType(v)), {s, ptr(v), i64(numel(v))});
    }
    return success();
  }

  return TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](train::LoadOp o) { return emitStateLoad(o, o.getName()); })
      .Case([&](zero::ShardLoadOp o) { return emitStateLoad(o, o.getName()); })
      .Case([&](train::StoreOp o) {
        return emitStateStore(o, o.getValue(), o.getName(), false);
      })
      .Case([&](zero::ShardStoreOp o) {
        return emitStateStore(o, o.getValue(), o.getName(), false);
      })
      .Case([&](train::AccumulateOp o) {
        return emitStateStore(o, o.getValue(), o.getName(), true);
      })
      .Case([&](zero::ShardAccumulateOp o) {
        return emitStateStore(o, o.getValue(), o.getName(), true);
      })
      .Case([&](train::ReshapeOp) { return success(); })
      .Case([&](zero::UnpackOp) { return success(); })
      .Case([&](train::FillOp o) {
        if (fillsInRuns.contains(o)) {
          auto run = fillRuns.find(o);
          if (run == fillRuns.end())
            return success();
          // One call over back-to-back states, gaps included.
          const FillRun &r = run->second;
          Value base = pointerAt(r.place, r.elt);
          int64_t n = r.bytes / elementBytes(r.elt);
          call(r.elt.isF32() ? std::string("zrt_fill")
                             : zero::narrow::fn("zrt_fill", r.elt),
               {base, f32(0.0), i64(n)});
          return success();
        }
        double v = o.getValue().convertToDouble();
        if (o.getType().getElementType().isF32())
          call("zrt_fill",
               {ptr(o.getResult()), f32(v), i64(numel(o.getResult()))});
        else
          call(zero::narrow::fn("zrt_fill", o.getType().getElementType()),
               {ptr(o.getResult()), f32(v), i64(numel(o.getResult()))});
        return success();
      })
      .Case([&](train::CastOp o) -> LogicalResult {
        if (castsInAdamW.contains(o))
          return success();
        Type from = elementType(o.getInput()),
             to = o.getType().getElementType();
        int64_t n = numel(o.getResult());
        if (from == to)
          call("zrt_copy_any", {ptr(o.getInput()), ptr(o.getResult()), i64(n),
                                opq(*dtypeName(to))});
        else if (from.isF32())
          call(zero::narrow::castFromF32(to),
               {ptr(o.getInput()), ptr(o.getResult()), i64(n)});
        else if (to.isF32())
          call(zero::narrow::castToF32(from),
               {ptr(o.getInput()), ptr(o.getResult()), i64(n)});
        else
          return o.emitOpError("casts between ")
                 << from << " and " << to
                 << " directly; the lowering casts to and from f32 only";
        return success();
      })
      .Case([&](train::BroadcastOp o) {
        int64_t n = numel(o.getInput());
        call("zrt_broadcast_leading",
             {ptr(o.getInput()), ptr(o.getResult()),
              i64(n ? numel(o.getResult()) / n : 0), i64(n),
              opq(*dtypeName(elementType(o.getInput())))});
        return success();
      })
      .Case([&](train::TransposeOp o) -> LogicalResult {
        ArrayRef<int64_t> perm = o.getPermutation();
        ArrayRef<int64_t> shape = tensorType(o.getInput()).getShape();
        Type elt = elementType(o.getInput());
        if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size()))) {
          call("zrt_copy_any",
               {ptr(o.getInput()), ptr(o.getResult()), i64(numel(o.getInput())),
                opq(*dtypeName(elt))});
          return success();
        }
        if (elt.isF32() && perm == ArrayRef<int64_t>{0, 2, 1, 3}) {
          call("zrt_permute_0213",
               {ptr(o.getInput()), ptr(o.getResult()), i64(shape[0]),
                i64(shape[1]), i64(shape[2]), i64(shape[3])});
          return success();
        }
        if (perm.size() > 8)
          return o.emitOpError("has rank ")
                 << perm.size()
                 << "; the CPU lowering permutes at most 8 "
                    "dimensions";
        std::string s = ml.int64Array("perm_shape", shape);
        std::string p = ml.int64Array("perm", perm);
        ++ml.numPermutations;
        call("zrt_permute",
             {ptr(o.getInput()), ptr(o.getResult()), i64(perm.size()), opq(s),
              opq(p), opq(*dtypeName(elt))});
        return success();
      })
      .Case([&](train::SplitOp o) {
        ArrayRef<int64_t> s = tensorType(o.getInput()).getShape();
        int64_t d = o.getDim();
        int64_t outer = 1, inner = 1;
        for (int64_t i = 0; i < d; ++i)
          outer *= s[i];
        for (int64_t i = d + 1; i < static_cast<int64_t>(s.size()); ++i)
          inner *= s[i];
        int64_t offset = 0;
        StringRef dt = *dtypeName(elementType(o.getInput()));
        for (Value r : o.getResults()) {
          int64_t size = tensorType(r).getDimSize(d);
          call("zrt_copy_2d", {offsetPtr(ptr(o.getInput()), offset * inner),
                               i64(s[d] * inner), ptr(r), i64(size * inner),
                               i64(outer), i64(size * inner), opq(dt)});
          offset += size;
        }
        return success();
      })
      .Case([&](train::ConcatOp o) {
        ArrayRef<int64_t> s = o.getType().getShape();
        int64_t d = o.getDim();
        int64_t outer = 1, inner = 1;
        for (int64_t i = 0; i < d; ++i)
          outer *= s[i];
        for (int64_t i = d + 1; i < static_cast<int64_t>(s.size()); ++i)
          inner *= s[i];
        int64_t offset = 0;
        StringRef dt = *dtypeName(o.getType().getElementType());
        for (Value in : o.getInputs()) {
          int64_t size = tensorType(in).getDimSize(d);
          call("zrt_copy_2d",
               {ptr(in), i64(size * inner),
                offsetPtr(ptr(o.getResult()), offset * inner),
                i64(s[d] * inner), i64(outer), i64(size * inner), opq(dt)});
          offset += size;
        }
        return success();
      })
      .Case([&](train::SumSquaresOp o) {
        Type elt = elementType(o.getInput());
        call(zero::narrow::isNarrowFloat(elt)
                 ? zero::narrow::fn("zrt_sum_squares", elt)
                 : std::string("zrt_sum_squares"),
             {ptr(o.getInput()), i64(numel(o.getInput())), ptr(o.getResult())});
        return success();
      })
      .Case([&](train::ClipCoefOp o) {
        call("zrt_clip_coef_scaled",
             {ptr(o.getSumSquares()), ptr(o.getGradScale()),
              f32(o.getMaxNorm().convertToDouble()), ptr(o.getCoef()),
              ptr(o.getNorm())});
        return success();
      })
      .Case([&](train::AdamWOp o) {
        return emitAdamW(o, o.getParam(), o.getGrad(), o.getExpAvg(),
                         o.getExpAvgSq(), o.getLr(), o.getStep(), o.getCoef(),
                         o.getFiniteCheck(), o.getBeta1().convertToDouble(),
                         o.getBeta2().convertToDouble(),
                         o.getEps().convertToDouble(),
                         o.getWeightDecay().convertToDouble(), -1);
      })
      .Case([&](zero::ShardAdamWOp o) -> LogicalResult {
        auto g = ml.groupIndex.find(o.getGroup());
        if (g == ml.groupIndex.end())
          return o.emitOpError("refers to @")
                 << o.getGroup() << ", which is not a zero.group";
        return emitAdamW(o, o.getParam(), o.getGrad(), o.getExpAvg(),
                         o.getExpAvgSq(), o.getLr(), o.getStep(), o.getCoef(),
                         o.getFiniteCheck(), o.getBeta1().convertToDouble(),
                         o.getBeta2().convertToDouble(),
                         o.getEps().convertToDouble(),
                         o.getWeightDecay().convertToDouble(), g->second);
      })
      .Case([&](zero::AllGatherOp o) {
        collective("zrt_all_gather", o.getAxis(),
             {ptr(o.getShard()), ptr(o.getResult()), i64(numel(o.getShard())),
              opq(*dtypeName(elementType(o.getShard())))});
        return success();
      })
      .Case([&](zero::ReduceScatterOp o) {
        collective("zrt_reduce_scatter", o.getAxis(),
             {ptr(o.getInput()), ptr(o.getResult()), i64(numel(o.getResult())),
              opq(*dtypeName(elementType(o.getInput()))),
              opq(reduceOpName(o.getKind()))});
        return success();
      })
      .Case([&](zero::AllReduceOp o) {
        collective("zrt_all_reduce", o.getAxis(),
             {ptr(o.getInput()), ptr(o.getResult()), i64(numel(o.getResult())),
              opq(*dtypeName(elementType(o.getInput()))),
              opq(reduceOpName(o.getKind()))});
        return success();
      })
      .Case([&](zero::PackOp o) -> LogicalResult {
        auto g = ml.groupIndex.find(o.getGroup());
        if (g == ml.groupIndex.end())
          return o.emitOpError("refers to @")
                 << o.getGroup() << ", which is not a zero.group";
        const GroupInfo &gi = ml.groups[g->second];
        Type elt = o.getType().getElementType();
        StringRef dt = *dtypeName(elt);
        Value flat = ptr(o.getResult());
        auto fillZero = [&](int64_t from, int64_t to) {
          if (to <= from)
            return;
          call(elt.isF32() ? std::string("zrt_fill")
                           : zero::narrow::fn("zrt_fill", elt),
               {offsetPtr(flat, from), f32(0.0), i64(to - from)});
        };
        int64_t at = 0;
        for (auto [i, m] : llvm::enumerate(o.getMembers())) {
          fillZero(at, gi.offsets[i]);
          // A member computed in its slot (decidePackSlots), or loaded
          // from a state the flat buffer spans (decideStateSpans), is there.
          bool memberArena = false, flatArena = false;
          Placement mp = rootPlacement(m, memberArena),
                    fp = rootPlacement(o.getResult(), flatArena);
          fp.offset += gi.offsets[i] * elementBytes(elt);
          bool inPlace = memberArena && flatArena && mp == fp;
          if (!packSlots.count(m) && !inPlace)
            call("zrt_copy_any", {ptr(m), offsetPtr(flat, gi.offsets[i]),
                                  i64(numel(m)), opq(dt)});
          at = gi.offsets[i] + numel(m);
        }
        fillZero(at, numel(o.getResult()));
        return success();
      })
      .Case([&](zero::SplitOp) { return success(); })
      .Case([&](zero::ConcatOp o) {
        Value out = ptr(o.getResult());
        int64_t offset = 0;
        StringRef dt = *dtypeName(o.getType().getElementType());
        for (Value in : o.getInputs()) {
          call("zrt_copy_any",
               {ptr(in), offsetPtr(out, offset), i64(numel(in)), opq(dt)});
          offset += numel(in);
        }
        return success();
      })
      .Case([&](zero::BucketInterleaveOp o) {
        // Rank r's block holds every group's slice r, back to back.
        int64_t n = o.getWorldSize(), row = numel(o.getResult()) / n;
        Value out = ptr(o.getResult());
        int64_t offset = 0;
        StringRef dt = *dtypeName(o.getType().getElementType());
        for (Value in : o.getInputs()) {
          int64_t slice = numel(in) / n;
          call("zrt_copy_2d", {ptr(in), i64(slice), offsetPtr(out, offset),
                               i64(row), i64(n), i64(slice), opq(dt)});
          offset += slice;
        }
        return success();
      })
      .Case([&](zero::BucketDeinterleaveOp o) {
        int64_t n = o.getWorldSize(), row = numel(o.getInput()) / n;
        Value in = ptr(o.getInput());
        int64_t offset = 0;
        StringRef dt = *dtypeName(elementType(o.getInput()));
        for (Value r : o.getResults()) {
          int64_t slice = numel(r) / n;
          call("zrt_copy_2d", {offsetPtr(in, offset), i64(row), ptr(r),
                               i64(slice), i64(n), i64(slice), opq(dt)});
          offset += slice;
        }
        return success();
      })
      .Case([&](zero::AllGatherStartOp o) {
        Value recv = ptr(waitOf(o)->getResult(0));
        collective("zrt_all_gather_start", o.getAxis(),
             {ptr(o.getShard()), recv, i64(numel(o.getShard())),
              opq(*dtypeName(elementType(o.getShard()))), request(o)});
        return success();
      })
      .Case([&](zero::ReduceScatterStartOp o) {
        Value result = waitOf(o)->getResult(0);
        collective("zrt_reduce_scatter_start", o.getAxis(),
             {ptr(o.getInput()), ptr(result), i64(numel(result)),
              opq(*dtypeName(elementType(o.getInput()))),
              opq(reduceOpName(o.getKind())), request(o)});
        return success();
      })
      .Case([&](zero::AllReduceStartOp o) {
        Value result = waitOf(o)->getResult(0);
        collective("zrt_all_reduce_start", o.getAxis(),
             {ptr(o.getInput()), ptr(result), i64(numel(result)),
              opq(*dtypeName(elementType(o.getInput()))),
              opq(reduceOpName(o.getKind())), request(o)});
        return success();
      })
      .Case([&](zero::WaitOp o) {
        Value lv = requests.lookup(o.getPending());
        Type reqT = emitc::OpaqueType::get(b.getContext(), "zrt_request");
        call("zrt_wait", {Value(emitc::LoadOp::create(b, loc(), reqT, lv))});
        return success();
      })
      .Case([&](zero::LocalShardOp o) {
        call("zrt_local_shard",
             {ptr(o.getInput()), ptr(o.getResult()), i64(numel(o.getResult())),
              rankValue(), opq(*dtypeName(elementType(o.getInput())))});
        return success();
      })
      .Case([&](func::ReturnOp o) { return emitReturn(o); })
      .Default([&](Operation *other) -> LogicalResult {
        // An op with an emitter that is not a compute op (a constant).
        if (const zero::emit::OpEmitter *e = emitters().lookup(other))
          return e->emit(other, *this, /*native=*/false);
        return other->emitOpError("is not supported by convert-train-to-emitc");
      });
}

LogicalResult FunctionLowering::emitReturn(func::ReturnOp op) {
  Value result = op.getOperand(0);
  switch (role) {
  case Role::Forward:
  case Role::ForwardBackward:
  case Role::OptimizerStep: {
    // The loss / gradient norm: device -> the caller's host float.
    Value out = body->getArgument(role == Role::OptimizerStep ? 3
                                  : ml.arrayInputs()          ? 1
                                                              : 2);
    call("zrt_copy_to_host", {out, ptr(result), i64(4)});
    return success();
  }
  case Role::Logits: {
    // The last position of every row: [B, T, Vp] -> [B, Vp].
    ArrayRef<int64_t> s = tensorType(result).getShape();
    int64_t B = s[0], T = s[1], V = s[2];
    // Gathered into scratch on the device, then copied to the caller's host
    // buffer [B, Vp] f32.
    Value out = body->getArgument(1);
    Value src = offsetPtr(ptr(result), (T - 1) * V);
    Value last;
    if (elementType(result).isF32()) {
      last = scratch(B * V);
      call("zrt_copy_2d",
           {src, i64(T * V), last, i64(V), i64(B), i64(V), opq("ZRT_F32")});
    } else {
      Type elt = elementType(result);
      Value rows = scratch((B * V + 1) / 2); // B·V 16-bit elements
      call("zrt_copy_2d",
           {src, i64(T * V), rows, i64(V), i64(B), i64(V),
            opq(*dtypeName(elt))});
      Value asNarrow = emitc::CastOp::create(b, loc(), ml.ptrType(elt), rows);
      last = scratch(B * V);
      call(zero::narrow::castToF32(elt), {asNarrow, last, i64(B * V)});
    }
    call("zrt_copy_to_host", {out, last, i64(B * V * 4)});
    return success();
  }
  }
  return success();
}

LogicalResult FunctionLowering::emit(OpBuilder &mb, StringRef symbol) {
  MLIRContext *ctx = fn.getContext();
  auto idsPtr =
      emitc::PointerType::get(emitc::OpaqueType::get(ctx, "const int32_t"));
  auto f32Ptr = emitc::PointerType::get(Float32Type::get(ctx));
  SmallVector<Type> args;
  switch (role) {
  case Role::Forward:
  case Role::ForwardBackward:
    // An array model's (const void *const *inputs, float *loss).
    if (ml.arrayInputs())
      args = {inputsPtrType(), f32Ptr};
    else
      args = {idsPtr, idsPtr, f32Ptr};
    break;
  case Role::OptimizerStep:
    args = {Float32Type::get(ctx), IntegerType::get(ctx, 64),
            Float32Type::get(ctx), f32Ptr};
    break;
  case Role::Logits:
    args = {idsPtr, f32Ptr};
    break;
  }
  auto func = emitc::FuncOp::create(
      mb, fn.getLoc(), symbol, FunctionType::get(ctx, args, {ml.intType()}));
  func.setSpecifiersAttr(mb.getStrArrayAttr({"static"}));
  body = func.addEntryBlock();
  b.setInsertionPointToEnd(body);
  if (ml.emitComments)
    emitc::VerbatimOp::create(
        b, fn.getLoc(),
        llvm::formatv("// @{0}: {1} bytes of activations, {2} bytes of "
                      "temporaries",
                      fn.getSymName(), bump[kMemActs], bump[kMemTemps])
            .str());

  // Arena bases (loaded once) and the rank are inserted before this marker.
  prologueEnd = emitc::VerbatimOp::create(b, fn.getLoc(), "");

  // Host inputs cross into their arena buffers (zrt_copy_to_device): the
  // token ids / targets, and the optimizer step's scalar arguments (through
  // a local, whose address the copy takes).
  // (The kernels read int32 buffers as `const int32_t *`: cast for the copy.)
  auto voidPtr = emitc::PointerType::get(emitc::OpaqueType::get(ctx, "void"));
  for (BlockArgument a : inputArgs) {
    Value source = body->getArgument(a.getArgNumber());
    if (ml.arrayInputs()) {
      // An array model's input i is inputs[i].
      auto elt = emitc::OpaqueType::get(ctx, "const void *const");
      Value index = emitc::LiteralOp::create(
          b, fn.getLoc(), emitc::OpaqueType::get(ctx, "size_t"),
          std::to_string(a.getArgNumber()));
      Value slot = emitc::SubscriptOp::create(
          b, fn.getLoc(), emitc::LValueType::get(elt), body->getArgument(0),
          ValueRange{index});
      source = emitc::LoadOp::create(b, fn.getLoc(), elt, slot);
    }
    call("zrt_copy_to_device",
         {Value(emitc::CastOp::create(b, fn.getLoc(), voidPtr, ptr(a))),
          source, i64(tensorBytes(tensorType(a)))});
  }
  for (auto [which, irArg] : scalarArgs) {
    if (irArg.use_empty())
      continue;
    Value p = ptr(irArg);
    Type elt = cast<emitc::PointerType>(p.getType()).getPointee();
    Value lv = emitc::VariableOp::create(b, fn.getLoc(),
                                         emitc::LValueType::get(elt), opq("0"));
    // The loss scale is the generated global set_loss_scale writes.
    Value source =
        which == kLossScaleArg
            ? Value(emitc::LoadOp::create(
                  b, fn.getLoc(), elt,
                  emitc::GetGlobalOp::create(b, fn.getLoc(),
                                             emitc::LValueType::get(elt),
                                             kLossScaleGlobal)))
            : Value(body->getArgument(which));
    emitc::AssignOp::create(b, fn.getLoc(), lv, source);
    Value addr = emitc::AddressOfOp::create(b, fn.getLoc(),
                                            emitc::PointerType::get(elt), lv);
    call("zrt_copy_to_device",
         {p, addr, i64(elementBytes(elementType(irArg)))});
  }

  for (Operation &op : fn.getBody().front())
    if (failed(emitOp(&op)))
      return failure();
  curLoc = fn.getLoc();
  emitc::ReturnOp::create(b, fn.getLoc(), literal(ml.intType(), "ZRT_OK"));
  prologueEnd->erase();
  return success();
}

//===----------------------------------------------------------------------===//
// ModuleLowering: emission
//===----------------------------------------------------------------------===//

void ModuleLowering::emitPrologue(OpBuilder &mb) {
  Location loc = module.getLoc();
  emitc::VerbatimOp::create(
      mb, loc,
      "// Generated by zero (convert-train-to-emitc): the training step of "
      "model '" +
          modelName + "' implementing runtime/include/zrt/model.h.");
  emitc::IncludeOp::create(mb, loc, "cmath", /*is_standard_include=*/true);
  emitc::IncludeOp::create(mb, loc, "cstddef", /*is_standard_include=*/true);
  emitc::IncludeOp::create(mb, loc, "zrt/model.h", true);
  emitc::IncludeOp::create(mb, loc, "zrt/zrt.h", true);
  emitc::VerbatimOp::create(
      mb, loc,
      "// Returns the status of a failing runtime call from the step.\n"
      "#define ZRT_CHECK(call) do { int zrt_status_ = (call); if (zrt_status_ "
      "!= ZRT_OK) return zrt_status_; } while (0)");
  auto u8 =
      emitc::PointerType::get(IntegerType::get(ctx, 8, IntegerType::Unsigned));
  auto arena = emitc::OpaqueType::get(ctx, "zrt_arena");
  for (int m = 0; m < kNumMem; ++m) {
    if (!hasArena(m))
      continue;
    emitc::GlobalOp::create(mb, loc, std::string("zrt_arena_") + kMemName[m],
                            arena, emitc::OpaqueAttr::get(ctx, "NULL"), false,
                            true, false);
    emitc::GlobalOp::create(mb, loc, std::string("zrt_mem_") + kMemName[m], u8,
                            emitc::OpaqueAttr::get(ctx, "NULL"), false, true,
                            false);
  }
}

void ModuleLowering::emitTables(OpBuilder &mb) {
  Location loc = module.getLoc();
  auto i64 = IntegerType::get(ctx, 64);
  auto u8 = IntegerType::get(ctx, 8, IntegerType::Unsigned);
  for (auto [gi, g] : llvm::enumerate(groups)) {
    int64_t n = g.members.size();
    std::string prefix = llvm::formatv("zrt_group{0}_", gi).str();
    std::string names = "{";
    for (auto [i, m] : llvm::enumerate(g.members))
      names += (i ? ", " : "") + cString(m);
    names += "}";
    emitc::GlobalOp::create(
        mb, loc, prefix + "members",
        emitc::ArrayType::get(
            {n},
            emitc::PointerType::get(emitc::OpaqueType::get(ctx, "const char"))),
        emitc::OpaqueAttr::get(ctx, names), false, true, false);
    auto ints = [&](ArrayRef<int64_t> v) {
      return DenseIntElementsAttr::get(RankedTensorType::get({n}, i64), v);
    };
    emitc::GlobalOp::create(mb, loc, prefix + "offsets",
                            emitc::ArrayType::get({n}, i64), ints(g.offsets),
                            false, true, true);
    emitc::GlobalOp::create(mb, loc, prefix + "numels",
                            emitc::ArrayType::get({n}, i64), ints(g.numels),
                            false, true, true);
    SmallVector<APInt> decay;
    for (bool d : g.decay)
      decay.push_back(APInt(8, d ? 1 : 0));
    emitc::GlobalOp::create(
        mb, loc, prefix + "decay", emitc::ArrayType::get({n}, u8),
        DenseIntElementsAttr::get(RankedTensorType::get({n}, u8), decay), false,
        true, true);
  }
  if (!groups.empty()) {
    std::string text = "{";
    for (auto [gi, g] : llvm::enumerate(groups)) {
      std::string p = llvm::formatv("zrt_group{0}_", gi).str();
      text +=
          llvm::formatv("\n  {{{0}, {1}, {2}members, {2}offsets, "
                        "{2}numels, {2}decay, {3}, {4}},",
                        cString(g.name), g.members.size(), p, g.padded, g.shard)
              .str();
    }
    text += "\n}";
    emitc::GlobalOp::create(
        mb, loc, "zrt_groups",
        emitc::ArrayType::get({static_cast<int64_t>(groups.size())},
                              emitc::OpaqueType::get(ctx, "zrt_group_desc")),
        emitc::OpaqueAttr::get(ctx, text), false, true, true);
  }
  // Every parameter with its shape (model.h zrt_param_info), whatever its
  // storage.
  std::string infos = "{";
  int64_t numInfos = 0;
  for (auto p : module.getOps<train::ParamOp>()) {
    RankedTensorType t = p.getTensorType();
    std::string shape = "NULL";
    if (t.getRank() > 0) {
      shape = llvm::formatv("zrt_param{0}_shape", numInfos).str();
      emitc::GlobalOp::create(
          mb, loc, shape, emitc::ArrayType::get({t.getRank()}, i64),
          DenseIntElementsAttr::get(RankedTensorType::get({t.getRank()}, i64),
                                    t.getShape()),
          false, true, true);
    }
    infos +=
        llvm::formatv("\n  {{{0}, {1}, {2}, {3}},", cString(p.getSymName()),
                      *dtypeName(t.getElementType()),
                      t.getRank(), shape)
            .str();
    ++numInfos;
  }
  if (numInfos)
    emitc::GlobalOp::create(
        mb, loc, "zrt_params",
        emitc::ArrayType::get({numInfos},
                              emitc::OpaqueType::get(ctx, "zrt_param_info")),
        emitc::OpaqueAttr::get(ctx, infos + "\n}"), false, true, true);
  numParamInfos = numInfos;

  // An array model's inputs (model.h zrt_input_desc), in @forward's order.
  if (arrayInputs()) {
    std::string table = "{";
    for (auto [i, in] : llvm::enumerate(inputs)) {
      std::string shape = llvm::formatv("zrt_input{0}_shape", i).str();
      int64_t rank = in.type.getRank();
      emitc::GlobalOp::create(
          mb, loc, shape, emitc::ArrayType::get({rank}, i64),
          DenseIntElementsAttr::get(RankedTensorType::get({rank}, i64),
                                    in.type.getShape()),
          false, true, true);
      Type elt = in.type.getElementType();
      StringRef dtype = elt.isInteger(32)   ? "ZRT_I32"
                        : elt.isInteger(64) ? "ZRT_I64"
                                            : *dtypeName(elt);
      table += llvm::formatv("\n  {{{0}, {1}, {2}, {3}},", cString(in.name),
                             dtype, rank, shape)
                   .str();
    }
    emitc::GlobalOp::create(
        mb, loc, "zrt_inputs",
        emitc::ArrayType::get({static_cast<int64_t>(inputs.size())},
                              emitc::OpaqueType::get(ctx, "zrt_input_desc")),
        emitc::OpaqueAttr::get(ctx, table + "\n}"), false, true, true);
  }

  // The state table: data pointers are filled by init().
  std::string text = "{";
  int64_t count = 0;
  for (const StateInfo &s : states) {
    if (!s.hasStorage)
      continue;
    ++count;
    text +=
        llvm::formatv("\n  {{{0}, {1}, {2}, {3}, {4}, {5}, NULL},",
                      cString(s.name), s.kind,
                      *dtypeName(s.type.getElementType()),
                      s.type.getNumElements(), s.group >= 0 ? 1 : 0, s.group)
            .str();
  }
  text += "\n}";
  emitc::GlobalOp::create(
      mb, loc, "zrt_states",
      emitc::ArrayType::get({std::max<int64_t>(count, 1)},
                            emitc::OpaqueType::get(ctx, "zrt_state_desc")),
      emitc::OpaqueAttr::get(ctx,
                             count ? text : "{{NULL, 0, 0, 0, 0, -1, NULL}}"),
      false, true, false);
}

void ModuleLowering::emitInit(OpBuilder &mb) {
  Location loc = module.getLoc();
  OpBuilder b(ctx);
  auto fnOp = emitc::FuncOp::create(
      mb, loc, "zrt_gen_init",
      FunctionType::get(ctx, {IntegerType::get(ctx, 64, IntegerType::Unsigned)},
                        {intType()}));
  fnOp.setSpecifiersAttr(mb.getStrArrayAttr({"static"}));
  Block *body = fnOp.addEntryBlock();
  b.setInsertionPointToEnd(body);
  Value seed = body->getArgument(0);
  auto u8 =
      emitc::PointerType::get(IntegerType::get(ctx, 8, IntegerType::Unsigned));
  auto arenaT = emitc::OpaqueType::get(ctx, "zrt_arena");
  auto voidPtr = emitc::PointerType::get(emitc::OpaqueType::get(ctx, "void"));
  auto lit = [&](Type t, StringRef s) -> Value {
    return emitc::LiteralOp::create(b, loc, t, s);
  };
  auto check = [&](Value status) {
    emitc::CallOpaqueOp::create(b, loc, TypeRange{}, "ZRT_CHECK",
                                ValueRange{status});
  };
  auto verbatim = [&](const Twine &t) {
    if (emitComments)
      emitc::VerbatimOp::create(b, loc, t.str());
  };

  verbatim("// One arena per memory kind, allocated once (zero-filled).");
  Value memBase[kNumMem];
  for (int m = 0; m < kNumMem; ++m) {
    if (!hasArena(m))
      continue;
    Value arenaLv =
        emitc::GetGlobalOp::create(b, loc, emitc::LValueType::get(arenaT),
                                   std::string("zrt_arena_") + kMemName[m]);
    Value addr = emitc::AddressOfOp::create(
        b, loc, emitc::PointerType::get(arenaT), arenaLv);
    auto created = emitc::CallOpaqueOp::create(
        b, loc, TypeRange{intType()}, "zrt_arena_create", ValueRange{addr},
        b.getArrayAttr({b.getI64IntegerAttr(arenaBytes[m]),
                        emitc::OpaqueAttr::get(ctx, kMemEnum[m]),
                        b.getIndexAttr(0)}));
    check(created.getResult(0));
    Value arena = emitc::LoadOp::create(b, loc, arenaT, arenaLv);
    Value base =
        emitc::CallOpaqueOp::create(b, loc, TypeRange{voidPtr},
                                    "zrt_arena_base", ValueRange{arena})
            .getResult(0);
    Value baseU8 = emitc::CastOp::create(b, loc, u8, base);
    Value memLv =
        emitc::GetGlobalOp::create(b, loc, emitc::LValueType::get(u8),
                                   std::string("zrt_mem_") + kMemName[m]);
    emitc::AssignOp::create(b, loc, memLv, baseU8);
    memBase[m] = baseU8;
  }
  auto pointer = [&](Placement p, Type elt) -> Value {
    Value base = memBase[p.mem];
    if (p.offset)
      base = emitc::AddOp::create(
          b, loc, u8, base, lit(b.getI64Type(), std::to_string(p.offset)));
    return emitc::CastOp::create(b, loc, ptrType(elt), base);
  };

  verbatim("// Where each state lives (the driver reads zrt_states).");
  Value table = emitc::GetGlobalOp::create(
      b, loc,
      emitc::ArrayType::get(
          {std::max<int64_t>(
              1, llvm::count_if(states, [](auto &s) { return s.hasStorage; }))},
          emitc::OpaqueType::get(ctx, "zrt_state_desc")),
      "zrt_states");
  int64_t row = 0;
  for (const StateInfo &s : states) {
    if (!s.hasStorage)
      continue;
    Value idx = lit(emitc::SizeTType::get(ctx), std::to_string(row++));
    Value entry = emitc::SubscriptOp::create(
        b, loc,
        emitc::LValueType::get(emitc::OpaqueType::get(ctx, "zrt_state_desc")),
        table, ValueRange{idx});
    Value data = emitc::MemberOp::create(
        b, loc, emitc::LValueType::get(voidPtr), "data", entry);
    Value p = emitc::CastOp::create(b, loc, voidPtr,
                                    pointer(s.place, b.getF32Type()));
    emitc::AssignOp::create(b, loc, data, p);
  }

  // Parameter streams: zrt_param_seed(seed, name), one per parameter.
  llvm::StringMap<Value> seeds;
  auto seedOf = [&](StringRef name) -> Value {
    Value &v = seeds[name];
    if (!v)
      v = emitc::CallOpaqueOp::create(
              b, loc,
              TypeRange{IntegerType::get(ctx, 64, IntegerType::Unsigned)},
              "zrt_param_seed", ValueRange{seed},
              b.getArrayAttr({b.getIndexAttr(0),
                              emitc::OpaqueAttr::get(ctx, cString(name))}))
              .getResult(0);
    return v;
  };
  Value rank, tensorRank;
  auto rankTimes = [&](int64_t shard) -> Value {
    // Shards are over the data axis: the data rank d on a mesh.
    if (!rank)
      rank = tensorSize > 1
                 ? emitc::CallOpaqueOp::create(
                       b, loc, TypeRange{b.getI32Type()}, "zrt_axis_rank",
                       ValueRange{},
                       b.getArrayAttr(
                           {emitc::OpaqueAttr::get(ctx, "ZRT_AXIS_DATA")}))
                       .getResult(0)
                 : emitc::CallOpaqueOp::create(b, loc,
                                               TypeRange{b.getI32Type()},
                                               "zrt_rank", ValueRange{})
                       .getResult(0);
    Value r64 = emitc::CastOp::create(b, loc, b.getI64Type(), rank);
    return emitc::MulOp::create(b, loc, b.getI64Type(), r64,
                                lit(b.getI64Type(), std::to_string(shard)));
  };
  // Initializes `data` (flat elements [begin, begin + n)) from `param`,
  // which occupies [offset, offset + numel) of the flat layout.
  auto initSlice = [&](Value data, Type elt, Value begin, int64_t beginConst,
                       int64_t n, int64_t offset, train::ParamOp param) {
    train::InitAttr init = param.getInit();
    int kind = init.getKind() == train::InitKind::normal  ? 0
               : init.getKind() == train::InitKind::zeros ? 1
                                                          : 2;
    static constexpr const char *kinds[3] = {"ZRT_INIT_NORMAL",
                                             "ZRT_INIT_ZEROS", "ZRT_INIT_ONES"};
    SmallVector<Value> operands{data};
    SmallVector<Attribute> attrs{b.getIndexAttr(0),
                                 emitc::OpaqueAttr::get(ctx, *dtypeName(elt))};
    if (begin) {
      attrs.push_back(b.getIndexAttr(operands.size()));
      operands.push_back(begin);
    } else {
      attrs.push_back(b.getI64IntegerAttr(beginConst));
    }
    attrs.append({b.getI64IntegerAttr(n), b.getI64IntegerAttr(offset),
                  b.getI64IntegerAttr(param.getTensorType().getNumElements()),
                  emitc::OpaqueAttr::get(ctx, kinds[kind]),
                  b.getF32FloatAttr(static_cast<float>(init.getStdDev()))});
    attrs.push_back(b.getIndexAttr(operands.size()));
    operands.push_back(seedOf(param.getSymName()));
    auto cut = param->getAttrOfType<zero::TensorSplitAttr>(
        zero::ZeroDialect::kTensorSplitAttrName);
    if (cut) {
      // zrt_init_param_cut(data, dtype, begin, n, offset, outer, rows,
      // inner, blocks, parts, part, kind, std, seed): this tensor rank's
      // cut of the whole initialization.
      ArrayRef<int64_t> full = cut.getFull();
      int64_t outer = 1, inner = 1;
      for (int64_t i = 0; i < cut.getDim(); ++i)
        outer *= full[i];
      for (int64_t i = cut.getDim() + 1; i < static_cast<int64_t>(full.size());
           ++i)
        inner *= full[i];
      if (!tensorRank)
        tensorRank = emitc::CallOpaqueOp::create(
                         b, loc, TypeRange{b.getI32Type()}, "zrt_axis_rank",
                         ValueRange{},
                         b.getArrayAttr({emitc::OpaqueAttr::get(
                             ctx, "ZRT_AXIS_TENSOR")}))
                         .getResult(0);
      Value part = emitc::CastOp::create(b, loc, b.getI64Type(), tensorRank);
      // Replace the member's element count by the cut's view of the full
      // tensor; the initializer kind, std and seed follow.
      SmallVector<Attribute> cutAttrs(attrs.begin(), attrs.begin() + 5);
      cutAttrs.append({b.getI64IntegerAttr(outer),
                       b.getI64IntegerAttr(full[cut.getDim()]),
                       b.getI64IntegerAttr(inner),
                       b.getI64IntegerAttr(cut.getBlocks()),
                       b.getI64IntegerAttr(cut.getParts()),
                       b.getIndexAttr(operands.size())});
      cutAttrs.append(attrs.begin() + 6, attrs.end());
      operands.push_back(part);
      check(emitc::CallOpaqueOp::create(b, loc, TypeRange{intType()},
                                        "zrt_init_param_cut", operands,
                                        b.getArrayAttr(cutAttrs))
                .getResult(0));
      return;
    }
    check(emitc::CallOpaqueOp::create(b, loc, TypeRange{intType()},
                                      "zrt_init_param_slice", operands,
                                      b.getArrayAttr(attrs))
              .getResult(0));
  };

  verbatim("// Parameters from their initializers; master weights from the "
           "same streams; everything else stays 0.");
  for (const StateInfo &s : states) {
    if (!s.hasStorage)
      continue;
    Type elt = s.type.getElementType();
    int64_t n = s.type.getNumElements();
    if (auto p = dyn_cast<train::ParamOp>(s.op)) {
      initSlice(pointer(s.place, elt), elt, Value(), 0, n, 0, p);
    } else if (auto st = dyn_cast<train::StateOp>(s.op)) {
      if (s.kind == kStateMaster)
        if (auto p = params.lookup(st.getParam()))
          initSlice(pointer(s.place, elt), elt, Value(), 0, n, 0, p);
    } else if (s.group >= 0 &&
               (s.kind == kStateParam || s.kind == kStateMaster)) {
      const GroupInfo &g = groups[s.group];
      Value data = pointer(s.place, elt);
      Value begin = rankTimes(g.shard);
      for (auto [i, m] : llvm::enumerate(g.members))
        initSlice(data, elt, begin, 0, g.shard, g.offsets[i], params.lookup(m));
    }
  }

  // The program's constants, each slot once (zero-layout-states).
  llvm::SmallDenseSet<int64_t> computed;
  module.walk([&](train::RopeTableOp t) {
    auto slot =
        t->getAttrOfType<zero::SlotAttr>(zero::ZeroDialect::kSlotAttrName);
    if (!slot || !computed.insert(slot.getOffset()).second)
      return;
    if (computed.size() == 1)
      verbatim("// Program constants (RoPE cos/sin tables), computed once.");
    ArrayRef<int64_t> shape = t.getType().getShape(); // [T, D/2, 2]
    Value scaling = lit(emitc::OpaqueType::get(ctx, "const zrt_rope_scaling *"),
                        "NULL");
    if (t.hasLlama3Scaling()) {
      std::string name = llvm::formatv("zrt_rope_scaling{0}",
                                       slot.getOffset() / kAlign)
                             .str();
      // Before zrt_gen_init, which reads it; doubles printed exactly.
      OpBuilder gb(ctx);
      gb.setInsertionPoint(fnOp);
      char text[160];
      snprintf(text, sizeof(text), "{%.17g, %.17g, %.17g, %lld}",
               t.getFactor()->convertToDouble(),
               t.getLowFreqFactor()->convertToDouble(),
               t.getHighFreqFactor()->convertToDouble(),
               static_cast<long long>(*t.getOriginalMaxPositions()));
      emitc::GlobalOp::create(
          gb, loc, name, emitc::OpaqueType::get(ctx, "zrt_rope_scaling"),
          emitc::OpaqueAttr::get(ctx, text), false, true, true);
      Value g = emitc::GetGlobalOp::create(
          b, loc,
          emitc::LValueType::get(
              emitc::OpaqueType::get(ctx, "zrt_rope_scaling")),
          name);
      scaling = emitc::AddressOfOp::create(
          b, loc,
          emitc::PointerType::get(
              emitc::OpaqueType::get(ctx, "zrt_rope_scaling")),
          g);
    }
    Value table = pointer({kMemConsts, slot.getOffset()}, b.getF32Type());
    check(emitc::CallOpaqueOp::create(
              b, loc, TypeRange{intType()}, "zrt_rope_table",
              ValueRange{table, scaling},
              b.getArrayAttr({b.getIndexAttr(0), b.getI64IntegerAttr(shape[0]),
                              b.getI64IntegerAttr(shape[1]),
                              b.getF64FloatAttr(t.getTheta().convertToDouble()),
                              b.getIndexAttr(1)}))
              .getResult(0));
  });
  emitc::ReturnOp::create(b, loc, lit(intType(), "ZRT_OK"));
}

void ModuleLowering::emitDestroy(OpBuilder &mb) {
  Location loc = module.getLoc();
  auto fnOp = emitc::FuncOp::create(mb, loc, "zrt_gen_destroy",
                                    FunctionType::get(ctx, {}, {}));
  fnOp.setSpecifiersAttr(mb.getStrArrayAttr({"static"}));
  Block *body = fnOp.addEntryBlock();
  OpBuilder b = OpBuilder::atBlockEnd(body);
  auto arenaT = emitc::OpaqueType::get(ctx, "zrt_arena");
  auto u8 =
      emitc::PointerType::get(IntegerType::get(ctx, 8, IntegerType::Unsigned));
  for (int m = 0; m < kNumMem; ++m) {
    if (!hasArena(m))
      continue;
    Value lv =
        emitc::GetGlobalOp::create(b, loc, emitc::LValueType::get(arenaT),
                                   std::string("zrt_arena_") + kMemName[m]);
    Value a = emitc::LoadOp::create(b, loc, arenaT, lv);
    emitc::CallOpaqueOp::create(b, loc, TypeRange{}, "zrt_arena_destroy",
                                ValueRange{a});
    emitc::AssignOp::create(b, loc, lv,
                            emitc::LiteralOp::create(b, loc, arenaT, "NULL"));
    Value mem =
        emitc::GetGlobalOp::create(b, loc, emitc::LValueType::get(u8),
                                   std::string("zrt_mem_") + kMemName[m]);
    emitc::AssignOp::create(b, loc, mem,
                            emitc::LiteralOp::create(b, loc, u8, "NULL"));
  }
  emitc::ReturnOp::create(b, loc, Value());
}

/// The compile-time plan of the model description.
/// The zrt_plan_desc initializer: zero-report's per-rank model-state bytes
/// and bytes sent per collective kind (include/zero/Analysis/Report.h),
/// which the driver compares with what the runtime measures.
static std::string planInitializer(const zero::StepReport &r,
                                   const int64_t (&arenas)[kNumMem]) {
  auto list = [](llvm::ArrayRef<int64_t> v) {
    std::string out = "{";
    for (auto [i, x] : llvm::enumerate(v))
      out += (i ? ", " : "") + std::to_string(x);
    return out + "}";
  };
  SmallVector<int64_t> arenaList(arenas, arenas + kMemConsts);
  arenaList.push_back(0); // ZRT_MEM_COMM_BUFFERS: none
  if (arenas[kMemConsts])
    arenaList.push_back(arenas[kMemConsts]); // ZRT_MEM_CONSTANTS
  std::string flops;
  llvm::raw_string_ostream(flops) << llvm::format("%.17g", r.modelFlopsMicro);
  return "{" + list(r.stateBytes) + ", " + std::to_string(r.paddingBytes) +
         ", " + list(r.commBytesMicro) + ", " + list(r.commBytesStep) + ", " +
         list(arenaList) + ", /*model_flops_micro=*/" + flops + "}";
}

void ModuleLowering::emitModelDesc(OpBuilder &mb) {
  Location loc = module.getLoc();
  int64_t numStates =
      llvm::count_if(states, [](auto &s) { return s.hasStorage; });
  auto fnName = [&](int i) -> std::string {
    // An array model's forward functions take its inputs (the fields
    // after set_loss_scale).
    if (arrayInputs() && i < 2)
      return "NULL";
    return functions[i] ? functionSymbols[i] : "NULL";
  };
  std::string text =
      llvm::formatv(
          "{{\n  ZRT_MODEL_ABI_VERSION, {0}, {1}, {2},\n"
          "  /*batch=*/{3}, /*seq=*/{4}, /*vocab=*/{5}, /*padded_vocab=*/{6},\n"
          "  /*num_params=*/{7},\n  {8}, zrt_states, {9}, {10},\n"
          "  /*plan=*/{11},\n  zrt_gen_init, {12}, {13}, {14}, {15}, "
          "zrt_gen_destroy,\n  {16}, {17},\n  /*compile_info=*/{18}, {19}\n}",
          cString(modelName), worldSize, stage, batch, seq, vocab, paddedVocab,
          numParams, numStates, groups.size(),
          groups.empty() ? "NULL" : "zrt_groups",
          planInitializer(report, arenaBytes),
          fnName(0), fnName(1), fnName(2), fnName(3), numParamInfos,
          numParamInfos ? "zrt_params" : "NULL", cString(compileInfo),
          lossScaled ? "zrt_gen_set_loss_scale" : "NULL")
          .str();
  if (arrayInputs()) {
    // Appended after set_loss_scale: token models' initializers are
    // unchanged (and leave these zero).
    text.pop_back(); // "\n}"
    text.pop_back();
    text += llvm::formatv(",\n  /*num_inputs=*/{0}, zrt_inputs, {1}, {2}\n}",
                          inputs.size(), functionSymbols[0],
                          functions[1] ? functionSymbols[1] : "NULL")
                .str();
  }
  if (tensorSize > 1) {
    // Appended last (zero-tensor-parallel): other initializers leave it 0.
    text.pop_back(); // "\n}"
    text.pop_back();
    if (!arrayInputs())
      text += ",\n  /*num_inputs=*/0, NULL, NULL, NULL";
    text += llvm::formatv(",\n  /*tensor_size=*/{0}\n}", tensorSize).str();
  }
  auto descT = emitc::OpaqueType::get(ctx, "zrt_model_desc");
  emitc::GlobalOp::create(mb, loc, "zrt_model", descT,
                          emitc::OpaqueAttr::get(ctx, text), false, true,
                          false);

  // const zrt_model_desc *zrt_model_get(void) { return &zrt_model; }
  auto constDescPtr = emitc::PointerType::get(
      emitc::OpaqueType::get(ctx, "const zrt_model_desc"));
  auto get = emitc::FuncOp::create(mb, loc, "zrt_model_get",
                                   FunctionType::get(ctx, {}, {constDescPtr}));
  {
    OpBuilder b = OpBuilder::atBlockEnd(get.addEntryBlock());
    Value lv = emitc::GetGlobalOp::create(b, loc, emitc::LValueType::get(descT),
                                          "zrt_model");
    Value addr =
        emitc::AddressOfOp::create(b, loc, emitc::PointerType::get(descT), lv);
    emitc::ReturnOp::create(b, loc,
                            emitc::CastOp::create(b, loc, constDescPtr, addr));
  }
  if (!emitMain)
    return;
  // int main(int argc, char **argv) { return zrt_train_main(argc, argv,
  // zrt_model_get()); }
  auto argv = emitc::PointerType::get(
      emitc::PointerType::get(emitc::OpaqueType::get(ctx, "char")));
  auto mainFn = emitc::FuncOp::create(
      mb, loc, "main", FunctionType::get(ctx, {intType(), argv}, {intType()}));
  OpBuilder b = OpBuilder::atBlockEnd(mainFn.addEntryBlock());
  Value desc = emitc::CallOp::create(b, loc, get, ValueRange{}).getResult(0);
  Value r = emitc::CallOpaqueOp::create(
                b, loc, TypeRange{intType()}, "zrt_train_main",
                ValueRange{mainFn.getArgument(0), mainFn.getArgument(1), desc})
                .getResult(0);
  emitc::ReturnOp::create(b, loc, r);
}

LogicalResult ModuleLowering::run() {
  // The plan is computed on the IR before it is rewritten.
  FailureOr<zero::StepReport> analyzed = zero::analyzeStep(module);
  if (failed(analyzed))
    return failure();
  report = *analyzed;
  compileInfo = zero::describeCompiledStep(module);
  SmallVector<Operation *> old;
  for (Operation &op : module.getBody()->getOperations())
    old.push_back(&op);
  if (failed(collectDeclarations()) || failed(describe()))
    return failure();

  static constexpr Role roles[4] = {Role::Forward, Role::ForwardBackward,
                                    Role::OptimizerStep, Role::Logits};
  static constexpr const char *symbols[4] = {
      "zrt_gen_forward", "zrt_gen_forward_backward", "zrt_gen_optimizer_step",
      "zrt_gen_last_logits"};
  SmallVector<std::unique_ptr<FunctionLowering>> lowerings;
  for (int i = 0; i < 4; ++i) {
    functionSymbols[i] = symbols[i];
    if (!functions[i])
      continue;
    // zero-buffer-assign's offsets when it ran, else bump allocation.
    Assign assign = functions[i]->hasAttr(kArenaBytesAttr) ? Assign::Annotated
                                                            : Assign::Bump;
    lowerings.push_back(std::make_unique<FunctionLowering>(
        *this, functions[i], roles[i], assign));
    if (failed(lowerings.back()->plan()))
      return failure();
  }

  OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
  emitPrologue(mb);
  emitTables(mb);
  // Globals created while lowering functions (permutation tables) go here,
  // before the first function.
  auto anchor = emitc::VerbatimOp::create(mb, module.getLoc(), "");
  globals.setInsertionPoint(anchor);
  emitInit(mb);
  if (lossScaled) {
    // fp16-mixed: S for @forward_backward's %loss_scale (model.h
    // set_loss_scale; 1 until the driver sets it).
    emitc::GlobalOp::create(mb, module.getLoc(), "zrt_gen_loss_scale",
                            Float32Type::get(ctx), mb.getF32FloatAttr(1.0f),
                            false, true, false);
    emitc::VerbatimOp::create(
        mb, module.getLoc(),
        "static int zrt_gen_set_loss_scale(float scale) {\n"
        "  if (!(scale > 0.0f) || !std::isfinite(scale))\n"
        "    return ZRT_ERR_INVALID_ARGUMENT;\n"
        "  zrt_gen_loss_scale = scale;\n  return ZRT_OK;\n}");
  }
  int li = 0;
  for (int i = 0; i < 4; ++i) {
    if (!functions[i])
      continue;
    if (failed(lowerings[li++]->emit(mb, symbols[i])))
      return failure();
  }
  emitDestroy(mb);
  emitModelDesc(mb);
  anchor->erase();

  for (Operation *op : llvm::reverse(old))
    op->erase();
  // The layout described the states just lowered.
  module->removeAttr(zero::ZeroDialect::kStateArenaBytesAttrName);
  return success();
}

FailureOr<zero::BufferPlan> ModuleLowering::planOnly(bool annotate) {
  if (failed(collectDeclarations()) || failed(describe()))
    return failure();
  static constexpr Role roles[4] = {Role::Forward, Role::ForwardBackward,
                                    Role::OptimizerStep, Role::Logits};
  zero::BufferPlan plan;
  for (int m : {kMemParams, kMemGrads, kMemMaster, kMemMoments})
    plan.stateArenaBytes += arenaBytes[m];
  plan.constantArenaBytes = arenaBytes[kMemConsts];
  // @forward_backward first: the others may share its activation arena.
  SmallVector<std::pair<int, zero::ArenaBytes>> planned;
  for (int i : {1, 0, 2, 3}) {
    if (!functions[i])
      continue;
    FunctionLowering fl(*this, functions[i], roles[i], Assign::BestFit);
    if (failed(fl.plan()))
      return failure();
    zero::ArenaBytes a{fl.arenaExtent(kMemActs), fl.arenaExtent(kMemTemps)};
    planned.push_back({i, a});
    plan.arenas.activations = std::max(plan.arenas.activations, a.activations);
    plan.arenas.temporaries = std::max(plan.arenas.temporaries, a.temporaries);
    plan.bumpBytes.activations =
        std::max(plan.bumpBytes.activations, fl.blockSum(kMemActs));
    plan.bumpBytes.temporaries =
        std::max(plan.bumpBytes.temporaries, fl.blockSum(kMemTemps));
    if (annotate)
      fl.annotate();
  }
  llvm::sort(planned, [](const auto &a, const auto &b) {
    return a.first < b.first;
  });
  for (auto &[i, a] : planned)
    plan.functions.push_back({functions[i].getSymName().str(), a});
  if (annotate) {
    Builder bld(ctx);
    module->setAttr(
        kArenaBytesAttr,
        bld.getDictionaryAttr(
            {bld.getNamedAttr("activations",
                              bld.getI64IntegerAttr(plan.arenas.activations)),
             bld.getNamedAttr("temporaries",
                              bld.getI64IntegerAttr(plan.arenas.temporaries))}));
  }
  return plan;
}

} // namespace

FailureOr<zero::BufferPlan> mlir::zero::planBuffers(ModuleOp module,
                                                    bool annotate) {
  ModuleLowering lowering(module, /*emitMain=*/false, /*emitComments=*/false);
  return lowering.planOnly(annotate);
}

namespace {

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

struct ConvertTrainToEmitCPass
    : public zero::impl::ConvertTrainToEmitCBase<ConvertTrainToEmitCPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleLowering lowering(getOperation(), emitMain, emitComments);
    if (failed(lowering.run()))
      signalPassFailure();
  }
};

} // namespace
