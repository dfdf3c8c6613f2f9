//===- Pipelines.h - the training-step pipeline -----------------*- C++ -*-===//
///
/// \file
/// The pipeline that turns a forward graph into a partitioned training step:
/// train-autodiff, train-checkpoint, train-fuse-epilogues,
/// train-fuse-layer-norm, train-optimizer, zero-partition, zero-bucket,
/// zero-prefetch, zero-offload-checkpoints, zero-place-progress,
/// train-legalize-bf16, zero-layout-states, train-fuse-adamw-cast,
/// zero-fuse-state-runs, zero-buffer-assign.
/// Registered with zero-opt as
/// `--zero-training-pipeline="stage=3 world-size=4 ..."`; zero-compile calls
/// the same builder.
///
//===----------------------------------------------------------------------===//

#ifndef ZERO_TRANSFORMS_PIPELINES_H
#define ZERO_TRANSFORMS_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::zero {

/// Options of the training-step pipeline; each mirrors the option of the
/// pass it is passed to (see TrainPasses.td / ZeroPasses.td for semantics).
struct TrainingPipelineOptions
    : public PassPipelineOptions<TrainingPipelineOptions> {
  Option<int64_t> tensorParallel{
      *this, "tensor-parallel", llvm::cl::init(1),
      llvm::cl::desc("Tensor-parallel size M: zero-tensor-parallel first "
                     "when > 1 (world-size is then N = N_d x M)")};
  Option<bool> vocabParallel{
      *this, "vocab-parallel", llvm::cl::init(false),
      llvm::cl::desc("With tensor-parallel > 1: zero-vocab-parallel after "
                     "zero-tensor-parallel (embedding, LM head and "
                     "cross-entropy cut by vocabulary)")};
  Option<bool> sequenceParallel{
      *this, "sequence-parallel", llvm::cl::init(false),
      llvm::cl::desc("With tensor-parallel > 1: zero-sequence-parallel after "
                     "the tensor and vocabulary cuts (norms and residual "
                     "adds on token rows cut over the tensor axis)")};
  Option<bool> sequenceRegather{
      *this, "sequence-regather", llvm::cl::init(true),
      llvm::cl::desc("With sequence-parallel: zero-sequence-regather after "
                     "train-checkpoint (the backward all-gathers the token "
                     "rows again instead of keeping them whole)")};
  Option<bool> autodiff{*this, "autodiff", llvm::cl::init(true),
                        llvm::cl::desc("Run train-autodiff")};
  Option<std::string> checkpoint{
      *this, "checkpoint", llvm::cl::init("none"),
      llvm::cl::desc("train-checkpoint policy: none or block")};
  Option<std::string> checkpointPartition{
      *this, "checkpoint-partition", llvm::cl::init("none"),
      llvm::cl::desc("train-checkpoint partition: none or tensor (P_a)")};
  Option<std::string> checkpointOffload{
      *this, "checkpoint-offload", llvm::cl::init("none"),
      llvm::cl::desc("train-checkpoint offload: none or host (P_a+cpu; "
                     "with target=cuda zero-offload-checkpoints moves the "
                     "slices to pinned host memory)")};
  Option<std::string> target{
      *this, "target", llvm::cl::init("cpu"),
      llvm::cl::desc("The backend the step is compiled for, cpu or cuda "
                     "(zero-offload-checkpoints' target)")};
  Option<bool> fuseEpilogues{
      *this, "fuse-epilogues", llvm::cl::init(true),
      llvm::cl::desc("Run train-fuse-epilogues (GELU into its matmuls)")};
  Option<bool> fuseLayerNorm{
      *this, "fuse-layer-norm", llvm::cl::init(true),
      llvm::cl::desc("Run train-fuse-layer-norm (residual adds into layer "
                     "norms)")};
  Option<bool> fuseCrossEntropy{
      *this, "fuse-cross-entropy", llvm::cl::init(true),
      llvm::cl::desc("Run train-fuse-cross-entropy (the loss and its "
                     "gradient in one pass, over the logits)")};
  Option<bool> optimizer{*this, "optimizer", llvm::cl::init(true),
                         llvm::cl::desc("Run train-optimizer")};
  Option<std::string> precision{*this, "precision", llvm::cl::init("fp32"),
                                llvm::cl::desc("fp32, bf16-mixed or fp16-mixed (fp16-mixed also "
                               "runs train-autodiff{loss-scale=true})")};
  Option<double> beta1{*this, "beta1", llvm::cl::init(0.9),
                       llvm::cl::desc("AdamW β1")};
  Option<double> beta2{*this, "beta2", llvm::cl::init(0.999),
                       llvm::cl::desc("AdamW β2")};
  Option<double> eps{*this, "eps", llvm::cl::init(1e-8),
                     llvm::cl::desc("AdamW ε")};
  Option<double> weightDecay{*this, "weight-decay", llvm::cl::init(0.01),
                             llvm::cl::desc("Decoupled weight decay")};
  Option<int64_t> decayMinRank{*this, "decay-min-rank", llvm::cl::init(2),
                               llvm::cl::desc("Only params of this rank decay")};
  Option<double> maxGradNorm{*this, "max-grad-norm", llvm::cl::init(1.0),
                             llvm::cl::desc("Global-norm clipping (<= 0: off)")};
  Option<bool> partition{*this, "partition", llvm::cl::init(true),
                         llvm::cl::desc("Run zero-partition")};
  Option<std::string> stage{*this, "stage", llvm::cl::init("0"),
                            llvm::cl::desc("ZeRO stage 0-3 or auto")};
  Option<int64_t> worldSize{*this, "world-size", llvm::cl::init(1),
                            llvm::cl::desc("Data-parallel ranks N")};
  Option<int64_t> deviceMemory{*this, "device-memory", llvm::cl::init(0),
                               llvm::cl::desc("Bytes per rank (stage=auto)")};
  Option<std::string> grouping{*this, "grouping", llvm::cl::init("block"),
                               llvm::cl::desc("block or param")};
  Option<int64_t> persistThreshold{
      *this, "persist-threshold", llvm::cl::init(0),
      llvm::cl::desc("Stage 3: params of at most this many elements stay whole")};
  Option<int64_t> bucketBytes{
      *this, "bucket-bytes", llvm::cl::init(0),
      llvm::cl::desc("Run zero-bucket with this bucket size (0: off)")};
  Option<int64_t> prefetch{
      *this, "prefetch", llvm::cl::init(-1),
      llvm::cl::desc("Run zero-prefetch with this distance (-1: off)")};
  Option<int64_t> maxLiveBytes{
      *this, "max-live-bytes", llvm::cl::init(0),
      llvm::cl::desc("zero-prefetch live-bytes budget (0: unbounded)")};
  Option<int64_t> progressInterval{
      *this, "progress-interval", llvm::cl::init(1),
      llvm::cl::desc("zero-place-progress: a zero.progress after every this "
                     "many compute ops while a collective is in flight (0: "
                     "none)")};
  Option<bool> fuseAdamWCast{
      *this, "fuse-adamw-cast", llvm::cl::init(true),
      llvm::cl::desc("Run train-fuse-adamw-cast (AdamW writes the bf16 "
                     "parameter copy) after zero-layout-states")};
  Option<bool> fuseStateRuns{
      *this, "fuse-state-runs", llvm::cl::init(true),
      llvm::cl::desc("Run zero-fuse-state-runs (one zeroing call per run of "
                     "adjacent states) after zero-layout-states")};
  Option<bool> bufferAssign{
      *this, "buffer-assign", llvm::cl::init(true),
      llvm::cl::desc("Run zero-buffer-assign last (it records where every "
                     "value lives; convert-train-to-emitc needs it): false "
                     "stops before it, for IR that is assigned later")};
  Option<std::string> bufferStrategy{
      *this, "buffer-strategy", llvm::cl::init("best-fit"),
      llvm::cl::desc("zero-buffer-assign's strategy: best-fit or bump "
                     "(program order, no reuse)")};
};

/// Adds the training-step passes selected by `options` to `pm` (a module
/// pass manager), in order: train-autodiff, train-checkpoint,
/// train-fuse-epilogues, train-fuse-layer-norm, train-fuse-cross-entropy,
/// train-optimizer,
/// zero-partition, zero-bucket, zero-prefetch, zero-offload-checkpoints
/// (with checkpoint-offload=host), zero-place-progress,
/// train-legalize-bf16 and zero-layout-states (always),
/// train-fuse-adamw-cast,
/// zero-fuse-state-runs, zero-buffer-assign.
void buildTrainingPipeline(OpPassManager &pm,
                           const TrainingPipelineOptions &options);

/// Registers `zero-training-pipeline` with the pass registry.
void registerTrainingPipeline();

} // namespace mlir::zero

#endif // ZERO_TRANSFORMS_PIPELINES_H
