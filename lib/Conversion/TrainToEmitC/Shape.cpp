//===- Shape.cpp - views, layout changes and casts to zrt calls -----------===//
///
/// \file
/// Emitters of the ops that move or retype elements without arithmetic:
/// train.cast, train.broadcast, train.transpose, train.split, train.concat,
/// zero.concat and the bucket (de)interleave of zero-bucket; and the views
/// that print nothing (train.reshape, zero.unpack, zero.split: the buffer
/// plan made their results views of their operand). Prints only; the rule
/// of the folder is in OpEmitter.h.
///
//===----------------------------------------------------------------------===//

#include "OpEmitter.h"

#include "Train/TrainOps.h"
#include "Zero/ZeroOps.h"

using namespace mlir;
using namespace mlir::zero::emit;

namespace {

/// A view (train.reshape, zero.unpack, zero.split): its results are views
/// of the operand's storage; nothing to print.
template <typename OpTy> struct ViewEmitter : OpEmitterFor<OpTy> {
  LogicalResult emit(OpTy, EmitContext &, bool) const override {
    return success();
  }
};

/// train.cast -> zrt_copy_any (same type), zrt_cast_f32_to_X or
/// zrt_cast_X_to_f32; other pairs are an error (the lowering casts to and
/// from f32 only).
struct CastEmitter : OpEmitterFor<train::CastOp> {
  LogicalResult emit(train::CastOp o, EmitContext &c, bool) const override {
    Type from = elementType(o.getInput()), to = o.getType().getElementType();
    int64_t n = numel(o.getResult());
    if (from == to)
      c.call("zrt_copy_any", {c.ptr(o.getInput()), c.ptr(o.getResult()),
                              c.i64(n), c.opq(*dtypeName(to))});
    else if (from.isF32())
      c.call(zero::narrow::castFromF32(to),
             {c.ptr(o.getInput()), c.ptr(o.getResult()), c.i64(n)});
    else if (to.isF32())
      c.call(zero::narrow::castToF32(from),
             {c.ptr(o.getInput()), c.ptr(o.getResult()), c.i64(n)});
    else
      return o.emitOpError("casts between ")
             << from << " and " << to
             << " directly; the lowering casts to and from f32 only";
    return success();
  }
};

/// train.broadcast -> zrt_broadcast_leading(x, y, copies, n, dtype): x [n]
/// repeated over the leading dimensions of y.
struct BroadcastEmitter : OpEmitterFor<train::BroadcastOp> {
  LogicalResult emit(train::BroadcastOp o, EmitContext &c,
                     bool) const override {
    int64_t n = numel(o.getInput());
    c.call("zrt_broadcast_leading",
           {c.ptr(o.getInput()), c.ptr(o.getResult()),
            c.i64(n ? numel(o.getResult()) / n : 0), c.i64(n),
            c.opq(*dtypeName(elementType(o.getInput())))});
    return success();
  }
};

/// train.transpose -> zrt_copy_any (the identity), zrt_permute_0213 (f32,
/// [0, 2, 1, 3]: heads to and from the sequence) or zrt_permute over the
/// op's shape and permutation tables (rank <= 8, else an error).
struct TransposeEmitter : OpEmitterFor<train::TransposeOp> {
  LogicalResult emit(train::TransposeOp o, EmitContext &c,
                     bool) const override {
    ArrayRef<int64_t> perm = o.getPermutation();
    ArrayRef<int64_t> shape = tensorType(o.getInput()).getShape();
    Type elt = elementType(o.getInput());
    if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size()))) {
      c.call("zrt_copy_any",
             {c.ptr(o.getInput()), c.ptr(o.getResult()),
              c.i64(numel(o.getInput())), c.opq(*dtypeName(elt))});
      return success();
    }
    if (elt.isF32() && perm == ArrayRef<int64_t>{0, 2, 1, 3}) {
      c.call("zrt_permute_0213",
             {c.ptr(o.getInput()), c.ptr(o.getResult()), c.i64(shape[0]),
              c.i64(shape[1]), c.i64(shape[2]), c.i64(shape[3])});
      return success();
    }
    if (perm.size() > 8)
      return o.emitOpError("has rank ")
             << perm.size()
             << "; the CPU lowering permutes at most 8 "
                "dimensions";
    SmallVector<std::string, 2> t =
        c.int64Tables({{"perm_shape", shape}, {"perm", perm}});
    c.call("zrt_permute",
           {c.ptr(o.getInput()), c.ptr(o.getResult()), c.i64(perm.size()),
            c.opq(t[0]), c.opq(t[1]), c.opq(*dtypeName(elt))});
    return success();
  }
};

/// The products of the dimensions before and after `d` of `shape`.
std::pair<int64_t, int64_t> outerInner(ArrayRef<int64_t> shape, int64_t d) {
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < d; ++i)
    outer *= shape[i];
  for (int64_t i = d + 1; i < static_cast<int64_t>(shape.size()); ++i)
    inner *= shape[i];
  return {outer, inner};
}

/// train.split -> one zrt_copy_2d per result: the result's columns of the
/// input viewed as [outer, dim · inner].
struct SplitEmitter : OpEmitterFor<train::SplitOp> {
  LogicalResult emit(train::SplitOp o, EmitContext &c, bool) const override {
    ArrayRef<int64_t> s = tensorType(o.getInput()).getShape();
    int64_t d = o.getDim();
    auto [outer, inner] = outerInner(s, d);
    int64_t offset = 0;
    StringRef dt = *dtypeName(elementType(o.getInput()));
    for (Value r : o.getResults()) {
      int64_t size = tensorType(r).getDimSize(d);
      c.call("zrt_copy_2d",
             {c.offsetPtr(c.ptr(o.getInput()), offset * inner),
              c.i64(s[d] * inner), c.ptr(r), c.i64(size * inner),
              c.i64(outer), c.i64(size * inner), c.opq(dt)});
      offset += size;
    }
    return success();
  }
};

/// train.concat -> one zrt_copy_2d per input, into its columns of the
/// result viewed as [outer, dim · inner].
struct ConcatEmitter : OpEmitterFor<train::ConcatOp> {
  LogicalResult emit(train::ConcatOp o, EmitContext &c, bool) const override {
    ArrayRef<int64_t> s = o.getType().getShape();
    int64_t d = o.getDim();
    auto [outer, inner] = outerInner(s, d);
    int64_t offset = 0;
    StringRef dt = *dtypeName(o.getType().getElementType());
    for (Value in : o.getInputs()) {
      int64_t size = tensorType(in).getDimSize(d);
      c.call("zrt_copy_2d",
             {c.ptr(in), c.i64(size * inner),
              c.offsetPtr(c.ptr(o.getResult()), offset * inner),
              c.i64(s[d] * inner), c.i64(outer), c.i64(size * inner),
              c.opq(dt)});
      offset += size;
    }
    return success();
  }
};

/// zero.concat -> one zrt_copy_any per input, back to back (flat).
struct FlatConcatEmitter : OpEmitterFor<zero::ConcatOp> {
  LogicalResult emit(zero::ConcatOp o, EmitContext &c, bool) const override {
    Value out = c.ptr(o.getResult());
    int64_t offset = 0;
    StringRef dt = *dtypeName(o.getType().getElementType());
    for (Value in : o.getInputs()) {
      c.call("zrt_copy_any", {c.ptr(in), c.offsetPtr(out, offset),
                              c.i64(numel(in)), c.opq(dt)});
      offset += numel(in);
    }
    return success();
  }
};

/// Copies between one flat buffer of N rows (`flat`, rank r's block = row
/// r) and the group buffers `groups`, each cut into N slices: slice r of
/// every group goes into row r, back to back (`toFlat`), or back.
void copyBucketRows(EmitContext &c, Value flat, ValueRange groups, int64_t n,
                    StringRef dt, bool toFlat) {
  int64_t row = numel(flat) / n;
  Value f = c.ptr(flat);
  int64_t offset = 0;
  for (Value g : groups) {
    int64_t slice = numel(g) / n;
    if (toFlat)
      c.call("zrt_copy_2d", {c.ptr(g), c.i64(slice), c.offsetPtr(f, offset),
                             c.i64(row), c.i64(n), c.i64(slice), c.opq(dt)});
    else
      c.call("zrt_copy_2d", {c.offsetPtr(f, offset), c.i64(row), c.ptr(g),
                             c.i64(slice), c.i64(n), c.i64(slice), c.opq(dt)});
    offset += slice;
  }
}

/// zero.bucket_interleave -> one zrt_copy_2d per group: rank r's block of
/// the result holds every group's slice r, back to back.
struct BucketInterleaveEmitter : OpEmitterFor<zero::BucketInterleaveOp> {
  LogicalResult emit(zero::BucketInterleaveOp o, EmitContext &c,
                     bool) const override {
    copyBucketRows(c, o.getResult(), o.getInputs(), o.getWorldSize(),
                   *dtypeName(o.getType().getElementType()), /*toFlat=*/true);
    return success();
  }
};

/// zero.bucket_deinterleave -> one zrt_copy_2d per group: the inverse.
struct BucketDeinterleaveEmitter : OpEmitterFor<zero::BucketDeinterleaveOp> {
  LogicalResult emit(zero::BucketDeinterleaveOp o, EmitContext &c,
                     bool) const override {
    copyBucketRows(c, o.getInput(), o.getResults(), o.getWorldSize(),
                   *dtypeName(elementType(o.getInput())), /*toFlat=*/false);
    return success();
  }
};

} // namespace

void mlir::zero::emit::populateShapeEmitters(OpEmitterSet &set) {
  set.add<train::ReshapeOp, ViewEmitter<train::ReshapeOp>>();
  set.add<zero::UnpackOp, ViewEmitter<zero::UnpackOp>>();
  set.add<zero::SplitOp, ViewEmitter<zero::SplitOp>>();
  set.add<train::CastOp, CastEmitter>();
  set.add<train::BroadcastOp, BroadcastEmitter>();
  set.add<train::TransposeOp, TransposeEmitter>();
  set.add<train::SplitOp, SplitEmitter>();
  set.add<train::ConcatOp, ConcatEmitter>();
  set.add<zero::ConcatOp, FlatConcatEmitter>();
  set.add<zero::BucketInterleaveOp, BucketInterleaveEmitter>();
  set.add<zero::BucketDeinterleaveOp, BucketDeinterleaveEmitter>();
}
