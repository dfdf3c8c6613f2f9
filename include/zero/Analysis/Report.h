//===- Report.h - per-rank memory and communication of a step ---*- C++ -*-===//
///
/// \file
/// The analysis behind `zero-report`: from a training step's IR (after
/// train-autodiff, train-optimizer and zero-partition), the bytes each rank
/// keeps per model-state category and the bytes each rank sends per
/// collective kind — exactly, at compile time (64-bit sizes throughout).
///
//===----------------------------------------------------------------------===//

#ifndef ZERO_ANALYSIS_REPORT_H
#define ZERO_ANALYSIS_REPORT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <string>
#include <cstdint>

namespace mlir::zero {

/// Model-state categories, in the order of the runtime's zrt_state_kind.
enum class StateCategory { Param = 0, Grad, Master, ExpAvg, ExpAvgSq };
constexpr int kNumStateCategories = 5;

/// Collective kinds, in the order of the runtime's zrt_coll_kind.
enum class CollectiveKind { AllGather = 0, ReduceScatter, AllReduce, Broadcast };
constexpr int kNumCollectiveKinds = 4;
/// Bytes per CollectiveKind.
using CollectiveBytes = std::array<int64_t, kNumCollectiveKinds>;

/// Axes of the rank mesh, in the order of zero::MeshAxis and the runtime's
/// zrt_axis: data (N_d ranks), tensor (N_m = M ranks).
constexpr int kNumMeshAxes = 2;

/// What one rank keeps and sends.
struct StepReport {
  int64_t worldSize = 1; ///< N, ranks in all (zero.world_size).
  /// Whether the module has a #zero.mesh (zero-tensor-parallel); without
  /// one the mesh is N × 1.
  bool hasMesh = false;
  /// The mesh N_d × N_m in ranks: N_d = N / M when the mesh leaves it 0
  /// (before zero-partition: 0 there too without zero.world_size).
  int64_t dataSize = 1, tensorSize = 1;
  int stage = 0;                       ///< From the module's zero.stage attribute (0 if absent).
  /// Parameter elements this rank declares, unpadded: Ψ without a mesh; a
  /// tensor rank's part of every cut parameter (1/M of it) with one.
  int64_t numParams = 0;
  int64_t numPaddedParams = 0; ///< numParams with shard-group padding.
  /// Ψ of the whole model in elements: cut parameters (zero.tensor_split)
  /// at their full size; numParams without cut ones.
  int64_t numModelParams = 0;
  /// Bytes this rank stores per StateCategory (shards count their local size).
  std::array<int64_t, kNumStateCategories> stateBytes{};
  /// Of stateBytes, bytes that are shard padding.
  int64_t paddingBytes = 0;
  /// Of stateBytes, bytes of the states of tensor-cut parameters (their
  /// parameters, gradients, master weights and moments, each 1/M of the
  /// whole and then sharded over N_d by zero-partition).
  int64_t cutStateBytes = 0;
  /// Bytes sent by this rank per CollectiveKind in one @forward_backward
  /// (one micro-batch), over both mesh axes, ring-algorithm cost (NCCL
  /// busBw convention): all-gather / reduce-scatter of S bytes send
  /// S·(N−1)/N, all-reduce 2·S·(N−1)/N, N the axis's size; what
  /// zrt_comm_bytes counts. zero.tp_g counts as an all-reduce.
  CollectiveBytes commBytesMicro{};
  /// The same for one @optimizer_step.
  CollectiveBytes commBytesStep{};
  /// commBytesMicro and commBytesStep split by mesh axis (index: zero::
  /// MeshAxis), what zrt_comm_axis_bytes counts: data-axis collectives of
  /// the sharded states over N_d, tensor-axis ones over M.
  std::array<CollectiveBytes, kNumMeshAxes> axisCommBytesMicro{},
      axisCommBytesStep{};
  /// Tensor-axis bytes of one @forward_backward before its loss seed (the
  /// forward: zero.tp_g's all-reduce of the row-parallel partial sums) and
  /// after it (the backward: the all-reduce of zero.tp_f's gradient, and
  /// any recomputed tp_g), in bytes per micro-batch.
  int64_t tensorForwardBytesMicro = 0, tensorBackwardBytesMicro = 0;
  /// Data-axis elements moved (not bytes) for the paper's Ψ units, per
  /// micro-batch and per optimizer step, excluding scalar (0-D) reductions
  /// such as the norm (tensor-axis traffic moves activations, not Ψ).
  int64_t commElementsMicro = 0, commElementsStep = 0;
  /// Bytes of scalar (0-D) reductions per optimizer step on either axis
  /// (gradient norm); included in commBytesStep, excluded from the element
  /// counts.
  int64_t scalarCommBytesStep = 0;
  /// Activation estimate of one micro-batch: bytes of values
  /// @forward_backward computes before the loss seed and reads after it
  /// (what the backward keeps alive; activation checkpointing shrinks it).
  int64_t activationBytes = 0;
  /// ZeRO-R's P_a (train-checkpoint partition=tensor): the number of
  /// block-input checkpoints kept as 1/M slices, the bytes of those slices
  /// (part of activationBytes) and the bytes the whole checkpoints would
  /// take without P_a (unpadded), one micro-batch.
  int64_t checkpointSlices = 0, checkpointSliceBytes = 0,
          checkpointWholeBytes = 0;
  /// P_a+cpu (offload=host) was asked for.
  bool checkpointOffloadHost = false;
  /// P_a+cpu done (zero-offload-checkpoints, CUDA): the slices copied to
  /// pinned host memory (zero.offload_start ops) and their host slots'
  /// bytes (zero.offload_wait results, each 64-byte aligned: the pinned
  /// host block), one micro-batch; not part of activationBytes.
  int64_t offloadedSlices = 0, hostSlotBytes = 0;
  /// The planned activation arena with the slices kept on the device (the
  /// step planned again without its offloads); -1 without offloads.
  int64_t plannedActivationBytesWithoutOffload = -1;
  /// The arenas zero-buffer-assign plans (max over the step's functions):
  /// activations (what the backward keeps, each block live across the loss
  /// seed) and temporaries (everything else, reused by liveness). -1 when
  /// not planned (the step cannot be lowered). The planned peak of a rank
  /// is plannedPeakBytes().
  int64_t plannedActivationBytes = -1, plannedTemporaryBytes = -1;
  /// The function whose plan sizes each arena (the first with the maximum;
  /// "" when not planned), e.g. "forward_backward".
  std::string plannedActivationFunction, plannedTemporaryFunction;
  /// The model-state arenas as allocated (each state rounded up to 64
  /// bytes); -1 when not planned.
  int64_t plannedStateArenaBytes = -1;
  /// The constants arena (RoPE tables computed at init); 0 without any.
  int64_t plannedConstantArenaBytes = 0;
  /// Model FLOPs of one @forward_backward of this rank's micro-batch
  /// (zero/Analysis/Flops.h: 3 × the forward's products and attention); 0
  /// without a @forward.
  double modelFlopsMicro = 0;
  /// The same without reuse (bump allocation), for comparison.
  int64_t bumpActivationBytes = -1, bumpTemporaryBytes = -1;

  /// Total model-state bytes on this rank.
  int64_t totalStateBytes() const;
  /// Every arena the program allocates: model states (64-byte aligned per
  /// state) + planned activations + planned temporaries + constants (comm
  /// buffers: none); what zrt_memory_peak_total_bytes measures. -1 when not
  /// planned.
  int64_t plannedPeakBytes() const {
    return plannedActivationBytes < 0
               ? -1
               : plannedStateArenaBytes + plannedActivationBytes +
                     plannedTemporaryBytes + plannedConstantArenaBytes;
  }
};

/// Bytes of the values `fn` defines before its `train.loss_seed` op and
/// reads after it (parameter loads and the returned loss excluded); 0 when
/// it has no seed.
int64_t savedActivationBytes(func::FuncOp fn);

/// P_a's slices in `fn` (zero.local_shard marked zero.checkpoint_slice):
/// adds their count, their bytes and the whole checkpoints' unpadded bytes
/// to `report`.
void countCheckpointSlices(func::FuncOp fn, StepReport &report);

/// Analyses `module`. Fails (with a diagnostic) on IR it cannot account
/// for, e.g. a collective whose size does not fit 64 bits.
FailureOr<StepReport> analyzeStep(ModuleOp module);

/// Prints the report as a table; `microBatches` (k) scales the per-step
/// traffic: forward_backward runs k times per optimizer step.
void printReportTable(const StepReport &report, int64_t microBatches,
                      llvm::raw_ostream &os);

/// Writes the report as JSON.
void printReportJson(const StepReport &report, int64_t microBatches,
                     llvm::raw_ostream &os);

/// Writes an SVG bar chart of per-rank model states by category, one bar per
/// report (e.g. stages 0-3 of one model at one world size), labelled
/// "stage <s>" with the total in GB.
void printMemoryChartSvg(llvm::ArrayRef<StepReport> reports,
                         llvm::StringRef title, llvm::raw_ostream &os);

} // namespace mlir::zero

#endif // ZERO_ANALYSIS_REPORT_H
