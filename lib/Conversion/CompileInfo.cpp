//===- CompileInfo.cpp - What a compiled step says about itself -----------===//
///
/// \file
/// describeCompiledStep (zero/Conversion/CompileInfo.h): the JSON that the
/// lowering puts in zrt_model_desc::compile_info for --print-config.
///
//===----------------------------------------------------------------------===//

#include "zero/Conversion/CompileInfo.h"

#include "Train/TrainOps.h"
#include "Zero/ZeroOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace {

double attrOr(Operation *op, StringRef name, double otherwise) {
  if (auto a = op->getAttrOfType<FloatAttr>(name))
    return a.getValueAsDouble();
  return otherwise;
}

/// Blocking and asynchronous collectives of one function.
llvm::json::Object collectivesOf(func::FuncOp fn) {
  int64_t allGather = 0, reduceScatter = 0, allReduce = 0, async = 0,
          bucketed = 0;
  fn.walk([&](Operation *op) {
    if (isa<zero::AllGatherOp>(op))
      ++allGather;
    else if (isa<zero::ReduceScatterOp>(op))
      ++reduceScatter;
    else if (isa<zero::AllReduceOp>(op))
      ++allReduce;
    else if (isa<zero::AllGatherStartOp, zero::ReduceScatterStartOp,
                 zero::AllReduceStartOp>(op))
      ++async;
    else if (isa<zero::BucketInterleaveOp, zero::ConcatOp>(op))
      ++bucketed; // one per bucket (reduce-scatter / all-gather side)
  });
  return llvm::json::Object{{"all_gather", allGather},
                            {"reduce_scatter", reduceScatter},
                            {"all_reduce", allReduce},
                            {"async", async},
                            {"bucketed", bucketed}};
}

} // namespace

std::string mlir::zero::describeCompiledStep(ModuleOp module) {
  llvm::json::Object info;
  // Precision: the parameters' element type.
  for (auto param : module.getOps<train::ParamOp>()) {
    Type elt = cast<ShapedType>(param.getType()).getElementType();
    info["precision"] = elt.isBF16()   ? "bf16-mixed"
                        : elt.isF16()  ? "fp16-mixed"
                                       : "fp32";
    break;
  }
  if (auto step = module.lookupSymbol<func::FuncOp>("optimizer_step")) {
    int64_t updates = 0, decayed = 0;
    double beta1 = 0, beta2 = 0, eps = 0, weightDecay = 0;
    std::optional<double> maxNorm;
    step.walk([&](Operation *op) {
      if (isa<train::AdamWOp, zero::ShardAdamWOp>(op)) {
        ++updates;
        beta1 = attrOr(op, "beta1", beta1);
        beta2 = attrOr(op, "beta2", beta2);
        eps = attrOr(op, "eps", eps);
        double wd = attrOr(op, "weight_decay", 0.0);
        if (wd > 0)
          ++decayed;
        weightDecay = std::max(weightDecay, wd);
      } else if (isa<train::ClipCoefOp>(op)) {
        maxNorm = attrOr(op, "max_norm", 0.0);
      }
    });
    if (updates)
      info["optimizer"] = llvm::json::Object{{"type", "AdamW"},
                                             {"beta1", beta1},
                                             {"beta2", beta2},
                                             {"eps", eps},
                                             {"weight_decay", weightDecay},
                                             {"decayed", decayed},
                                             {"updates", updates}};
    if (maxNorm)
      info["max_grad_norm"] = *maxNorm;
  }
  info["shard_groups"] =
      static_cast<int64_t>(llvm::range_size(module.getOps<zero::GroupOp>()));
  llvm::json::Object collectives;
  for (StringRef name : {"forward_backward", "optimizer_step"})
    if (auto fn = module.lookupSymbol<func::FuncOp>(name))
      collectives[name] = collectivesOf(fn);
  info["collectives"] = std::move(collectives);
  if (auto v = module->getAttrOfType<StringAttr>("zero.compile_version"))
    info["compiler"] = v.getValue();
  if (auto f = module->getAttrOfType<StringAttr>("zero.compile_flags"))
    info["compile_flags"] = f.getValue();
  std::string out;
  llvm::raw_string_ostream os(out);
  os << llvm::json::Value(std::move(info));
  return out;
}
