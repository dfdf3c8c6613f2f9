//===- Bucket.cpp - zero-bucket: fuse collectives into buckets ------------===//
///
/// \file
/// Fuses consecutive all-gathers / reduce-scatters of several shard groups
/// into bucket collectives of bounded size (see ZeroPasses.td).
///
//===----------------------------------------------------------------------===//

#include "zero/Transforms/Passes.h"

#include "Train/TrainOps.h"
#include "Zero/ZeroOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROBUCKET
#include "zero/Transforms/ZeroPasses.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

namespace {

struct ZeroBucketPass : public zero::impl::ZeroBucketBase<ZeroBucketPass> {
  using Base::Base;
  void runOnOperation() override;

private:
  void bucketFunction(func::FuncOp fn);
  bool fuseReduceScatters(ArrayRef<ReduceScatterOp> bucket);
  bool fuseAllGathers(ArrayRef<AllGatherOp> bucket);
};

int64_t bytesOf(Type t) {
  auto tt = cast<RankedTensorType>(t);
  return tt.getNumElements() * (tt.getElementTypeBitWidth() / 8);
}

/// The state symbol an op reads or writes by name, if any.
StringRef stateSymbol(Operation *op) {
  if (auto ref = op->getAttrOfType<FlatSymbolRefAttr>("name"))
    return ref.getValue();
  return {};
}

/// Moves the ops strictly between `from` and `anchor` that depend on
/// `roots` to right after `after`, in order. Fails (moving nothing) if one
/// of them has side effects other than writing a state, or if an op that
/// stays touches (reads or writes) a state that a moved write wrote before
/// it: the write would pass it. A state touched only before its moved write
/// keeps its order (the optimizer step's stage-1/2 all-gathers: the load of
/// group k+1's parameter precedes its store, which moves down to the
/// bucket).
LogicalResult moveDependentsAfter(ArrayRef<Value> roots, Operation *from,
                                  Operation *anchor, Operation *after) {
  llvm::SetVector<Operation *> deps;
  DenseSet<Value> tainted(roots.begin(), roots.end());
  DenseSet<StringRef> written; // by moved writes up to the current op
  for (Operation *op = from->getNextNode(); op && op != anchor;
       op = op->getNextNode()) {
    if (llvm::any_of(op->getOperands(),
                     [&](Value v) { return tainted.contains(v); })) {
      deps.insert(op);
      for (Value r : op->getResults())
        tainted.insert(r);
      if (isMemoryEffectFree(op))
        continue;
      if (!isa<ShardAccumulateOp, ShardStoreOp, train::StoreOp,
               train::AccumulateOp>(op))
        return failure();
      written.insert(stateSymbol(op));
      continue;
    }
    StringRef sym = stateSymbol(op);
    if (!sym.empty() && written.contains(sym))
      return failure();
  }
  Operation *prev = after;
  for (Operation *op : deps) {
    op->moveAfter(prev);
    prev = op;
  }
  return success();
}

/// Replaces each member collective's result by its part of the bucket and
/// erases the member.
template <typename OpT>
void replaceMembers(ArrayRef<OpT> bucket, ValueRange parts) {
  for (auto [op, part] : llvm::zip(bucket, parts)) {
    OpT member = op;
    member->getResult(0).replaceAllUsesWith(part);
    member->erase();
  }
}

/// Erases a half-built bucket (users first).
void eraseOps(std::initializer_list<Operation *> ops) {
  for (Operation *op : ops)
    op->erase();
}

} // namespace

void ZeroBucketPass::runOnOperation() {
  if (bucketBytes <= 0) {
    getOperation().emitError("zero-bucket: bucket-bytes must be > 0, got ")
        << static_cast<int64_t>(bucketBytes);
    return signalPassFailure();
  }
  for (auto fn : getOperation().getOps<func::FuncOp>())
    if (!fn.isExternal() && fn.getBody().hasOneBlock())
      bucketFunction(fn);
}

void ZeroBucketPass::bucketFunction(func::FuncOp fn) {
  Block &block = fn.getBody().front();
  // Greedy buckets in program order, one kind at a time.
  auto makeBuckets = [&](auto opTag, auto keyOf, auto sizeOf) {
    using OpT = decltype(opTag);
    SmallVector<SmallVector<OpT>> buckets;
    int64_t bytes = 0;
    bool closed = false;
    for (auto op : block.getOps<OpT>()) {
      // Only the data axis's collectives are bucketed; one on the tensor
      // axis (train-checkpoint's P_a gathers) stays as it is and closes
      // the bucket before it.
      if (op.getAxis() != MeshAxis::data) {
        closed = true;
        continue;
      }
      int64_t size = sizeOf(op);
      if (closed || buckets.empty() ||
          keyOf(buckets.back().front()) != keyOf(op) ||
          bytes + size > bucketBytes) {
        closed = false;
        buckets.emplace_back();
        bytes = 0;
      }
      buckets.back().push_back(op);
      bytes += size;
    }
    return buckets;
  };
  auto rsBuckets = makeBuckets(
      ReduceScatterOp(),
      [](ReduceScatterOp op) {
        return std::make_tuple(op.getType().getElementType().getAsOpaquePointer(),
                               static_cast<int>(op.getKind()), op.getWorldSize());
      },
      [](ReduceScatterOp op) { return bytesOf(op.getInput().getType()); });
  for (auto &bucket : rsBuckets)
    if (bucket.size() > 1 && fuseReduceScatters(bucket))
      ++numBuckets;
  auto agBuckets = makeBuckets(
      AllGatherOp(),
      [](AllGatherOp op) {
        return std::make_tuple(op.getType().getElementType().getAsOpaquePointer(),
                               0, op.getWorldSize());
      },
      [](AllGatherOp op) { return bytesOf(op.getType()); });
  for (auto &bucket : agBuckets)
    if (bucket.size() > 1 && fuseAllGathers(bucket))
      ++numBuckets;
}

bool ZeroBucketPass::fuseReduceScatters(ArrayRef<ReduceScatterOp> bucket) {
  ReduceScatterOp last = bucket.back();
  // Everything computed from the earlier members' shards must wait for the
  // bucket: move it after the fused collective (below), or give up.
  SmallVector<Value> roots;
  for (ReduceScatterOp op : bucket.drop_back())
    roots.push_back(op.getResult());
  OpBuilder b(last);
  Location loc = last.getLoc();
  int64_t n = last.getWorldSize();
  SmallVector<Value> inputs;
  SmallVector<Type> shardTypes;
  int64_t total = 0;
  for (ReduceScatterOp op : bucket) {
    inputs.push_back(op.getInput());
    shardTypes.push_back(op.getType());
    total += op.getInput().getType().getNumElements();
  }
  Type elt = last.getType().getElementType();
  auto flat = [&](int64_t numel) { return RankedTensorType::get({numel}, elt); };
  auto packed = BucketInterleaveOp::create(b, loc, flat(total), inputs,
                                           b.getI64IntegerAttr(n));
  auto fused = ReduceScatterOp::create(b, loc, flat(total / n), packed,
                                       last.getKindAttr(), last.getWorldSizeAttr());
  auto parts = SplitOp::create(b, loc, shardTypes, fused.getResult());
  if (failed(moveDependentsAfter(roots, bucket.front(), packed, parts))) {
    eraseOps({parts, fused, packed});
    return false;
  }
  replaceMembers(bucket, parts.getResults());
  return true;
}

bool ZeroBucketPass::fuseAllGathers(ArrayRef<AllGatherOp> bucket) {
  AllGatherOp first = bucket.front();
  // The bucket is gathered where its first group is needed: later shards
  // must be available there (shard loads move up; computed shards — the
  // optimizer's updates — put the bucket at the last member instead).
  Operation *insertion = first;
  for (AllGatherOp op : bucket.drop_front()) {
    Value shard = op.getShard();
    auto load = shard.getDefiningOp<ShardLoadOp>();
    if (load && shard.hasOneUse())
      continue;
    if (Operation *def = shard.getDefiningOp())
      if (insertion->isBeforeInBlock(def))
        insertion = bucket.back();
  }
  bool atFirst = insertion == first.getOperation();
  if (atFirst) {
    for (AllGatherOp op : bucket.drop_front())
      if (auto load = op.getShard().getDefiningOp<ShardLoadOp>())
        load->moveBefore(first);
  }
  OpBuilder b(insertion);
  Location loc = insertion->getLoc();
  int64_t n = first.getWorldSize();
  SmallVector<Value> shards;
  SmallVector<Type> fullTypes;
  int64_t total = 0;
  for (AllGatherOp op : bucket) {
    shards.push_back(op.getShard());
    fullTypes.push_back(op.getType());
    total += op.getShard().getType().getNumElements();
  }
  Type elt = first.getType().getElementType();
  auto flat = [&](int64_t numel) { return RankedTensorType::get({numel}, elt); };
  auto concat = ConcatOp::create(b, loc, flat(total), shards);
  auto fused = AllGatherOp::create(b, loc, flat(total * n), concat.getResult(),
                                   first.getWorldSizeAttr());
  auto parts = BucketDeinterleaveOp::create(b, loc, fullTypes, fused.getResult(),
                                            b.getI64IntegerAttr(n));
  if (!atFirst) {
    SmallVector<Value> roots;
    for (AllGatherOp op : bucket.drop_back())
      roots.push_back(op.getResult());
    if (failed(moveDependentsAfter(roots, bucket.front(), concat, parts))) {
      eraseOps({parts, fused, concat});
      return false;
    }
  }
  replaceMembers(bucket, parts.getResults());
  return true;
}
