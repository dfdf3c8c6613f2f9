//===- ZeroPasses.td - ZeRO sharding passes -------------------*- tablegen -*-===//

#ifndef ZERO_TRANSFORMS_ZEROPASSES_TD
#define ZERO_TRANSFORMS_ZEROPASSES_TD

include "mlir/Pass/PassBase.td"

def ZeroPartition : Pass<"zero-partition", "::mlir::ModuleOp"> {
  let summary = "ZeRO-DP stages 0-3: shard model states over data-parallel ranks";
  let description = [{
    Partitions a complete training step (after `train-autodiff` and
    `train-optimizer`) over `world-size` data-parallel ranks, as ZeRO-DP
    (Rajbhandari et al., arXiv 1910.02054, §5):

    * stage 0 (plain DP): every gradient is all-reduced (avg) once per
      optimizer step; every rank keeps everything (16Ψ bytes).
    * stage 1 (P_os): master weights and moments become 1/N shards; the
      gradients are reduce-scattered once per optimizer step, each rank
      updates its slice, the parameters are all-gathered (4Ψ + 12Ψ/N).
    * stage 2 (P_os+g): also the gradients: each group is reduce-scattered
      in the backward pass as soon as its gradients are complete and
      accumulated into the rank's gradient shard, every micro-batch
      (2Ψ + 14Ψ/N).
    * stage 3 (P_os+g+p): also the parameters: each group is all-gathered
      before its forward use and again before its backward use (16Ψ/N).

    Trainable parameters are laid out in flat shard groups (`zero.group`):
    with `grouping=block`, one per block (parameters whose name starts with
    the same `<word><number>.` prefix, e.g. `h3.`) plus one for all the rest
    (embeddings, final norm); with `grouping=param`, one per parameter. Each
    group is padded to a multiple of N with zeros, which never change a
    result: padding gradients are zero, so they add nothing to norms, and
    padded elements take no weight decay. Frozen parameters stay whole on
    every rank. The global gradient norm is the sum of each rank's shard
    sums, one scalar all-reduce: identical to the unsharded value.

    `stage=auto` picks the lowest stage whose per-rank model states plus an
    activation estimate (bytes of forward values the backward reads, per
    micro-batch) fit in `device-memory` bytes, and fails with the number
    stage 3 would need when nothing fits.

    Sets the module attributes `zero.stage` and `zero.world_size`.
  }];
  let dependentDialects = ["::mlir::train::TrainDialect",
                           "::mlir::zero::ZeroDialect",
                           "::mlir::func::FuncDialect"];
  let options = [
    Option<"stage", "stage", "std::string", /*default=*/"\"0\"",
           "ZeRO stage: 0, 1, 2, 3 or auto">,
    Option<"worldSize", "world-size", "int64_t", /*default=*/"1",
           "Number of data-parallel ranks N (>= 1)">,
    Option<"deviceMemory", "device-memory", "int64_t", /*default=*/"0",
           "Bytes per rank available to stage=auto">,
    Option<"grouping", "grouping", "std::string", /*default=*/"\"block\"",
           "Shard groups: block (one per <word><n>. prefix, plus the rest) or "
           "param (one per parameter)">
  ];
  let statistics = [
    Statistic<"numGroups", "groups", "Shard groups">,
    Statistic<"numCollectives", "collectives", "Collectives inserted">,
    Statistic<"numPadding", "padding-elements", "Padding elements over all groups">
  ];
}

def ZeroReport : Pass<"zero-report", "::mlir::ModuleOp"> {
  let summary = "Per-rank memory and communication of a training step";
  let description = [{
    Prints, for the step as partitioned, the bytes one rank keeps for
    parameters, gradients, master weights, moments and padding, and the
    bytes it sends per optimizer step for each collective kind, with the
    paper's Ψ units beside them (ZeRO §5, Figure 1). With `micro-batches`
    = k, forward_backward traffic counts k times (stages 2-3 reduce every
    micro-batch; stages 0-1 once per step). The IR is unchanged.

    With `svg=FILE` on a step that is not partitioned yet, it partitions
    copies at stages 0-3 for `svg-world-size` ranks and draws their per-rank
    model states side by side, by category (ZeRO Figure 1).
  }];
  let options = [
    Option<"microBatches", "micro-batches", "int64_t", /*default=*/"1",
           "Micro-batches per optimizer step (gradient accumulation)">,
    Option<"jsonFile", "json", "std::string", /*default=*/"\"\"",
           "Also write the report as JSON to this file ('-' = stdout)">,
    Option<"quiet", "quiet", "bool", /*default=*/"false",
           "Do not print the table">,
    Option<"svgFile", "svg", "std::string", /*default=*/"\"\"",
           "Write an SVG chart of per-rank model states for stages 0-3 side "
           "by side (the paper's Figure 1 for this model); needs the step "
           "before zero-partition">,
    Option<"svgWorldSize", "svg-world-size", "int64_t", /*default=*/"64",
           "World size N of the SVG chart">
  ];
}

#endif // ZERO_TRANSFORMS_ZEROPASSES_TD
