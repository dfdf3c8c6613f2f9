//===- Attention.cpp - causal attention to zrt calls ----------------------===//
///
/// \file
/// Emitters of train.causal_attention and train.attention_grad (q, o
/// [B, H, T, D]; k, v [B, Hkv, T, D]) onto the flash-style kernels of
/// zrt.h: zrt_attention_{forward,backward} when Hkv = H, their
/// grouped-query forms zrt_attention_{forward,backward}_gqa
/// (runtime/include/zrt/decoder.h; K/V heads shared by H / Hkv query
/// heads, never repeated in memory) otherwise. Prints only; the rule of
/// the folder is in OpEmitter.h.
///
//===----------------------------------------------------------------------===//

#include "OpEmitter.h"

#include "Train/TrainOps.h"

using namespace mlir;
using namespace mlir::zero::emit;

namespace {

/// The sizes of an attention op: batch, query heads, K/V heads, tokens,
/// head size.
struct Dims {
  int64_t B, H, Hkv, T, D;
};

Dims dimsOf(Value q, Value k) {
  ArrayRef<int64_t> s = tensorType(q).getShape();
  return {s[0], s[1], tensorType(k).getDimSize(1), s[2], s[3]};
}

/// zrt_attention_forward[_gqa][_bf16] name.
std::string kernel(StringRef base, const Dims &d, bool native) {
  return kernelName((base + (d.Hkv != d.H ? "_gqa" : "")).str(), native);
}

/// The dimension arguments: B, H[, Hkv], T, D.
SmallVector<CArg> dimArgs(EmitContext &c, const Dims &d) {
  SmallVector<CArg> args = {c.i64(d.B), c.i64(d.H)};
  if (d.Hkv != d.H)
    args.push_back(c.i64(d.Hkv));
  args.append({c.i64(d.T), c.i64(d.D)});
  return args;
}

struct CausalAttentionEmitter : OpEmitterFor<train::CausalAttentionOp> {
  // Q, K, V and O share one element type; lse is f32.
  LogicalResult emit(train::CausalAttentionOp op, EmitContext &c,
                     bool native) const override {
    Dims d = dimsOf(op.getQuery(), op.getKey());
    Value work = c.scratch();
    SmallVector<CArg> args = {c.ptr(op.getQuery()),  c.ptr(op.getKey()),
                              c.ptr(op.getValue()),  c.ptr(op.getResult()),
                              c.ptr(op.getLse()),    work};
    args.append(dimArgs(c, d));
    c.call(kernel("zrt_attention_forward", d, native), args);
    return success();
  }
};

/// The probabilities are recomputed tile by tile from the forward's
/// log-sum-exp; a group's dK/dV are the sums over its query heads.
struct AttentionGradEmitter : OpEmitterFor<train::AttentionGradOp> {
  LogicalResult emit(train::AttentionGradOp op, EmitContext &c,
                     bool native) const override {
    Dims d = dimsOf(op.getQuery(), op.getKey());
    Value work = c.scratch();
    SmallVector<CArg> args = {
        c.ptr(op.getGrad()),      c.ptr(op.getQuery()),    c.ptr(op.getKey()),
        c.ptr(op.getValue()),     c.ptr(op.getOutput()),   c.ptr(op.getLse()),
        c.ptr(op.getQueryGrad()), c.ptr(op.getKeyGrad()),
        c.ptr(op.getValueGrad()), work};
    args.append(dimArgs(c, d));
    c.call(kernel("zrt_attention_backward", d, native), args);
    return success();
  }
};

/// The packed forms read q, k, v from one [B, T, 3 H D] projection (and
/// write its gradient): Dims with D = C3 / 3 / H.
Dims packedDims(Value qkv, uint64_t heads) {
  ArrayRef<int64_t> s = tensorType(qkv).getShape();
  int64_t H = static_cast<int64_t>(heads);
  return {s[0], H, H, s[1], s[2] / 3 / H};
}

struct CausalAttentionPackedEmitter
    : OpEmitterFor<train::CausalAttentionPackedOp> {
  LogicalResult emit(train::CausalAttentionPackedOp op, EmitContext &c,
                     bool native) const override {
    Dims d = packedDims(op.getQkv(), op.getHeads());
    Value work = c.scratch();
    c.call(kernelName("zrt_attention_forward_packed", native),
           {c.ptr(op.getQkv()), c.ptr(op.getResult()), c.ptr(op.getLse()), work,
            c.i64(d.B), c.i64(d.T), c.i64(d.H), c.i64(d.D)});
    return success();
  }
};

struct AttentionPackedGradEmitter
    : OpEmitterFor<train::AttentionPackedGradOp> {
  LogicalResult emit(train::AttentionPackedGradOp op, EmitContext &c,
                     bool native) const override {
    Dims d = packedDims(op.getQkv(), op.getHeads());
    Value work = c.scratch();
    c.call(kernelName("zrt_attention_backward_packed", native),
           {c.ptr(op.getGrad()), c.ptr(op.getQkv()), c.ptr(op.getOutput()),
            c.ptr(op.getLse()), c.ptr(op.getResult()), work, c.i64(d.B),
            c.i64(d.T), c.i64(d.H), c.i64(d.D)});
    return success();
  }
};

} // namespace

void mlir::zero::emit::populateAttentionEmitters(OpEmitterSet &set) {
  set.add<train::CausalAttentionOp, CausalAttentionEmitter>();
  set.add<train::AttentionGradOp, AttentionGradEmitter>();
  set.add<train::CausalAttentionPackedOp, CausalAttentionPackedEmitter>();
  set.add<train::AttentionPackedGradOp, AttentionPackedGradEmitter>();
}
