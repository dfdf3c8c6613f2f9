//===- Linear.cpp - embedding and bias gradient to zrt calls --------------===//
///
/// \file
/// Emitters of train.embedding, train.embedding_grad and train.reduce_sum
/// (the bias gradient: the sum over the leading dimensions); the matmuls
/// are in Matmul.cpp. Prints only; the rule of the folder is in
/// OpEmitter.h.
///
//===----------------------------------------------------------------------===//

#include "OpEmitter.h"

#include "Train/TrainOps.h"

using namespace mlir;
using namespace mlir::zero::emit;

namespace {

/// train.embedding -> zrt_embedding(table [V, C], ids, out, N, V, C).
struct EmbeddingEmitter : OpEmitterFor<train::EmbeddingOp> {
  // The ids are i32.
  LogicalResult emit(train::EmbeddingOp op, EmitContext &c,
                     bool native) const override {
    RankedTensorType t = tensorType(op.getTable());
    c.call(kernelName("zrt_embedding", native),
           {c.ptr(op.getTable()), c.ptr(op.getIds()), c.ptr(op.getResult()),
            c.i64(numel(op.getIds())), c.i64(t.getDimSize(0)),
            c.i64(t.getDimSize(1))});
    return success();
  }
};

/// train.embedding_grad -> zrt_embedding_backward(dy, ids, dtable, N, V,
/// C); in bf16 with zrt_abi_embedding_backward_bf16_workspace words of
/// scratch (the positions sorted by id).
struct EmbeddingGradEmitter : OpEmitterFor<train::EmbeddingGradOp> {
  LogicalResult emit(train::EmbeddingGradOp op, EmitContext &c,
                     bool native) const override {
    RankedTensorType t = op.getType();
    Value work = native ? c.scratch() : Value();
    SmallVector<CArg> args = {c.ptr(op.getGrad()), c.ptr(op.getIds()),
                              c.ptr(op.getResult()), c.i64(numel(op.getIds())),
                              c.i64(t.getDimSize(0)), c.i64(t.getDimSize(1))};
    if (work)
      args.push_back(work);
    c.call(kernelName("zrt_embedding_backward", native), args);
    return success();
  }
};

/// train.reduce_sum -> zrt_bias_backward(x, out, rows, n): the sum of x
/// [rows, n] over its rows.
struct ReduceSumEmitter : OpEmitterFor<train::ReduceSumOp> {
  LogicalResult emit(train::ReduceSumOp op, EmitContext &c,
                     bool native) const override {
    int64_t n = numel(op.getResult());
    c.call(kernelName("zrt_bias_backward", native),
           {c.ptr(op.getInput()), c.ptr(op.getResult()),
            c.i64(n ? numel(op.getInput()) / n : 0), c.i64(n)});
    return success();
  }
};

} // namespace

void mlir::zero::emit::populateLinearEmitters(OpEmitterSet &set) {
  set.add<train::EmbeddingOp, EmbeddingEmitter>();
  set.add<train::EmbeddingGradOp, EmbeddingGradEmitter>();
  set.add<train::ReduceSumOp, ReduceSumEmitter>();
}
