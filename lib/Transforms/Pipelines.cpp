//===- Pipelines.cpp - the training-step pipeline -------------------------===//

#include "zero/Transforms/Pipelines.h"
#include "zero/Transforms/Passes.h"

#include "Train/TrainDialect.h"
#include "Zero/ZeroDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

void zero::buildTrainingPipeline(OpPassManager &pm,
                                 const TrainingPipelineOptions &options) {
  if (options.tensorParallel > 1) {
    ZeroTensorParallelOptions tp;
    tp.size = options.tensorParallel;
    tp.worldSize = options.worldSize;
    pm.addPass(createZeroTensorParallel(tp));
    if (options.vocabParallel)
      pm.addPass(createZeroVocabParallel());
    if (options.sequenceParallel)
      pm.addPass(createZeroSequenceParallel());
  }
  if (options.autodiff) {
    // fp16-mixed: dynamic loss scaling (the step takes %loss_scale).
    TrainAutodiffOptions autodiff;
    autodiff.lossScale = options.precision == "fp16-mixed";
    pm.addPass(createTrainAutodiff(autodiff));
  }
  if (options.checkpoint != "none") {
    TrainCheckpointOptions checkpoint;
    checkpoint.policy = options.checkpoint;
    checkpoint.partition = options.checkpointPartition;
    checkpoint.offload = options.checkpointOffload;
    pm.addPass(createTrainCheckpoint(checkpoint));
  }
  if (options.sequenceParallel && options.tensorParallel > 1 &&
      options.sequenceRegather)
    pm.addPass(createZeroSequenceRegather());
  if (options.fuseEpilogues)
    pm.addPass(createTrainFuseEpilogues());
  if (options.fuseLayerNorm)
    pm.addPass(createTrainFuseLayerNorm());
  if (options.fuseCrossEntropy)
    pm.addPass(createTrainFuseCrossEntropy());
  if (options.optimizer) {
    TrainOptimizerOptions optimizer;
    optimizer.precision = options.precision;
    optimizer.beta1 = options.beta1;
    optimizer.beta2 = options.beta2;
    optimizer.eps = options.eps;
    optimizer.weightDecay = options.weightDecay;
    optimizer.decayMinRank = options.decayMinRank;
    optimizer.maxGradNorm = options.maxGradNorm;
    pm.addPass(createTrainOptimizer(optimizer));
  }
  if (options.partition) {
    ZeroPartitionOptions partition;
    partition.stage = options.stage;
    partition.worldSize = options.worldSize;
    partition.deviceMemory = options.deviceMemory;
    partition.grouping = options.grouping;
    partition.persistThreshold = options.persistThreshold;
    pm.addPass(createZeroPartition(partition));
  }
  if (options.bucketBytes > 0) {
    ZeroBucketOptions bucket;
    bucket.bucketBytes = options.bucketBytes;
    pm.addPass(createZeroBucket(bucket));
  }
  if (options.prefetch >= 0) {
    ZeroPrefetchOptions prefetch;
    prefetch.distance = options.prefetch;
    prefetch.maxLiveBytes = options.maxLiveBytes;
    pm.addPass(createZeroPrefetch(prefetch));
  }
  // P_a+cpu: after zero-prefetch placed the slices' all-gathers (the fetches
  // go ahead of them) and before zero-buffer-assign (the slices leave the
  // activation arena). Only a module train-checkpoint marked offload=host.
  if (options.checkpointOffload == "host") {
    ZeroOffloadCheckpointsOptions offload;
    offload.target = options.target;
    pm.addPass(createZeroOffloadCheckpoints(offload));
  }
  // After the last pass that moves collectives: where in-flight ones are
  // moved forward (nothing to do without zero-prefetch's starts).
  {
    ZeroPlaceProgressOptions progress;
    progress.interval = options.progressInterval;
    pm.addPass(createZeroPlaceProgress(progress));
  }
  // The lowering prints only native bf16 kernels: every other compute op on
  // bf16/f16 is widened to f32 in the IR, before the buffers are planned.
  pm.addPass(createTrainLegalizeBf16());
  // The state layout is part of the step whatever else runs: the lowering
  // reads it (zero-layout-states).
  pm.addPass(createZeroLayoutStates());
  if (options.fuseAdamWCast)
    pm.addPass(createTrainFuseAdamWCast());
  if (options.fuseStateRuns)
    pm.addPass(createZeroFuseStateRuns());
  if (options.bufferAssign) {
    ZeroBufferAssignOptions assign;
    assign.strategy = options.bufferStrategy;
    pm.addPass(createZeroBufferAssign(assign));
  }
}

void zero::registerTrainingPipeline() {
  PassPipelineRegistration<TrainingPipelineOptions>(
      "zero-training-pipeline",
      "Forward graph to partitioned training step: train-autodiff, "
      "train-checkpoint, train-fuse-epilogues, train-fuse-layer-norm, "
      "train-fuse-cross-entropy, "
      "train-optimizer, zero-partition, zero-bucket, "
      "zero-prefetch, zero-offload-checkpoints, zero-place-progress, "
      "train-legalize-bf16, "
      "zero-layout-states, "
      "train-fuse-adamw-cast, zero-fuse-state-runs, zero-buffer-assign",
      buildTrainingPipeline);
}
