//===- VocabParallel.cpp - vocabulary-parallel ops to zrt calls -----------===//
///
/// \file
/// Emitters of the vocabulary-parallel embedding and cross-entropy
/// (ZeroVocabParallelOps.td) as the zrt_vocab_* kernels of
/// zrt/vocab_parallel.h. Every call takes this rank's tensor index (the
/// part of the vocabulary it holds, zrt_axis_rank(ZRT_AXIS_TENSOR)); the
/// kernels are f32, so bf16 operands reach them widened by
/// train-legalize-bf16 (no native bf16 kernel). Prints only; the rule of
/// the folder is in OpEmitter.h.
///
//===----------------------------------------------------------------------===//

#include "OpEmitter.h"

#include "Zero/ZeroOps.h"

using namespace mlir;
using namespace mlir::zero::emit;

namespace {

/// The has_ignore, ignore arguments of zrt_vocab_loss*.
void ignoreArgs(EmitContext &c, std::optional<int64_t> ignore,
                SmallVectorImpl<CArg> &args) {
  args.push_back(c.i64(ignore ? 1 : 0));
  args.push_back(c.opq("(int32_t)" + std::to_string(ignore ? *ignore : 0)));
}

struct VocabEmbeddingEmitter : OpEmitterFor<zero::VocabEmbeddingOp> {
  LogicalResult emit(zero::VocabEmbeddingOp op, EmitContext &c,
                     bool native) const override {
    auto [vl, cols] = rowsCols(op.getTable());
    c.call("zrt_vocab_embedding",
           {c.ptr(op.getTable()), c.ptr(op.getIds()), c.ptr(op.getResult()),
            c.i64(numel(op.getIds())), c.i64(vl), c.i64(cols),
            c.axisRank(zero::MeshAxis::tensor),
            c.i64(static_cast<int64_t>(op.getSize()))});
    return success();
  }
};

struct VocabEmbeddingGradEmitter : OpEmitterFor<zero::VocabEmbeddingGradOp> {
  LogicalResult emit(zero::VocabEmbeddingGradOp op, EmitContext &c,
                     bool native) const override {
    auto [vl, cols] = rowsCols(op.getResult());
    c.call("zrt_vocab_embedding_backward",
           {c.ptr(op.getGrad()), c.ptr(op.getIds()), c.ptr(op.getResult()),
            c.i64(numel(op.getIds())), c.i64(vl), c.i64(cols),
            c.axisRank(zero::MeshAxis::tensor),
            c.i64(static_cast<int64_t>(op.getSize()))});
    return success();
  }
};

struct VocabMaxEmitter : OpEmitterFor<zero::VocabMaxOp> {
  LogicalResult emit(zero::VocabMaxOp op, EmitContext &c,
                     bool native) const override {
    auto [n, vl] = rowsCols(op.getLogits());
    c.call("zrt_vocab_max",
           {c.ptr(op.getLogits()), c.ptr(op.getResult()), c.i64(n), c.i64(vl),
            c.i64(static_cast<int64_t>(op.getNumClasses())),
            c.axisRank(zero::MeshAxis::tensor)});
    return success();
  }
};

struct VocabExpSumsEmitter : OpEmitterFor<zero::VocabExpSumsOp> {
  LogicalResult emit(zero::VocabExpSumsOp op, EmitContext &c,
                     bool native) const override {
    auto [n, vl] = rowsCols(op.getLogits());
    c.call("zrt_vocab_exp_sums",
           {c.ptr(op.getLogits()), c.ptr(op.getTargets()), c.ptr(op.getMax()),
            c.ptr(op.getResult()), c.i64(n), c.i64(vl),
            c.i64(static_cast<int64_t>(op.getNumClasses())),
            c.axisRank(zero::MeshAxis::tensor)});
    return success();
  }
};

struct VocabExpSumsGradEmitter : OpEmitterFor<zero::VocabExpSumsGradOp> {
  LogicalResult emit(zero::VocabExpSumsGradOp op, EmitContext &c,
                     bool native) const override {
    auto [n, vl] = rowsCols(op.getLogits());
    c.call("zrt_vocab_exp_sums_backward",
           {c.ptr(op.getLogits()), c.ptr(op.getTargets()), c.ptr(op.getMax()),
            c.ptr(op.getGrad()), c.ptr(op.getResult()), c.i64(n), c.i64(vl),
            c.i64(static_cast<int64_t>(op.getNumClasses())),
            c.axisRank(zero::MeshAxis::tensor)});
    return success();
  }
};

struct VocabLossEmitter : OpEmitterFor<zero::VocabLossOp> {
  LogicalResult emit(zero::VocabLossOp op, EmitContext &c,
                     bool native) const override {
    SmallVector<CArg> args = {c.ptr(op.getSums()), c.ptr(op.getMax()),
                              c.ptr(op.getTargets()), c.ptr(op.getResult()),
                              c.i64(numel(op.getTargets())),
                              c.i64(static_cast<int64_t>(op.getNumClasses()))};
    ignoreArgs(c, op.getIgnoreIndex(), args);
    c.call("zrt_vocab_loss", args);
    return success();
  }
};

struct VocabLossGradEmitter : OpEmitterFor<zero::VocabLossGradOp> {
  LogicalResult emit(zero::VocabLossGradOp op, EmitContext &c,
                     bool native) const override {
    SmallVector<CArg> args = {c.ptr(op.getSums()), c.ptr(op.getTargets()),
                              c.ptr(op.getGrad()), c.ptr(op.getResult()),
                              c.i64(numel(op.getTargets()))};
    ignoreArgs(c, op.getIgnoreIndex(), args);
    c.call("zrt_vocab_loss_backward", args);
    return success();
  }
};

} // namespace

void mlir::zero::emit::populateVocabParallelEmitters(OpEmitterSet &set) {
  set.add<zero::VocabEmbeddingOp, VocabEmbeddingEmitter>();
  set.add<zero::VocabEmbeddingGradOp, VocabEmbeddingGradEmitter>();
  set.add<zero::VocabMaxOp, VocabMaxEmitter>();
  set.add<zero::VocabExpSumsOp, VocabExpSumsEmitter>();
  set.add<zero::VocabExpSumsGradOp, VocabExpSumsGradEmitter>();
  set.add<zero::VocabLossOp, VocabLossEmitter>();
  set.add<zero::VocabLossGradOp, VocabLossGradEmitter>();
}
