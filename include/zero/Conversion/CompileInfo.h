//===- CompileInfo.h - What a compiled step says about itself ---*- C++ -*-===//
///
/// \file
/// The training program's `--print-config` reads a JSON text that the
/// lowering stores in zrt_model_desc::compile_info: what the passes decided,
/// read from the partitioned IR (not from flags), so it is right whatever
/// tool ran the passes.
///
//===----------------------------------------------------------------------===//
#ifndef ZERO_CONVERSION_COMPILEINFO_H
#define ZERO_CONVERSION_COMPILEINFO_H

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mlir::zero {

/// A JSON object (one line) describing the training step in `module`, the
/// partitioned IR before the lowering:
///
///   "precision":     "fp32" | "bf16-mixed" | "fp16-mixed" (the parameters'
///                    element type; mixed precision keeps f32 master weights)
///   "optimizer":     {"type": "AdamW", "beta1", "beta2", "eps",
///                     "weight_decay" (the largest of the updates'),
///                     "decayed": update ops with weight decay, "updates":
///                     all update ops (one per parameter, or per shard group
///                     once partitioned)}
///                    (absent without @optimizer_step)
///   "max_grad_norm": the clipping norm (<= 0: none; absent without it)
///   "shard_groups":  zero.group count
///   "collectives":   per function ("forward_backward", "optimizer_step"):
///                    {"all_gather", "reduce_scatter", "all_reduce": blocking
///                     ones, "async": start/wait pairs (zero-prefetch),
///                     "bucketed": collectives on zero-bucket buckets}
///   "compiler", "compile_flags": the module's zero.compile_version and
///                    zero.compile_flags strings when a tool set them
///                    (zero-compile does).
std::string describeCompiledStep(ModuleOp module);

} // namespace mlir::zero

#endif // ZERO_CONVERSION_COMPILEINFO_H
