//===- ZeroLayout.h - the state layout of a compiled step -------*- C++ -*-===//
///
/// \file
/// What the state layout (`#zero.slot`, written by zero-layout-states, read
/// by convert-train-to-emitc) is made of: which declarations are states,
/// the arena of each, and their bytes. Shared by the pass, the dialect's
/// attribute verifier and the lowering, so the three agree by construction.
///
//===----------------------------------------------------------------------===//

#ifndef ZERO_ZERO_ZEROLAYOUT_H
#define ZERO_ZERO_ZEROLAYOUT_H

#include "Zero/ZeroDialect.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

#include "zrt/abi.h"

#include <cstdint>
#include <optional>

namespace mlir::zero {

/// The arenas' alignment in bytes (zrt/abi.h).
constexpr int64_t kArenaAlignment = ZRT_ARENA_ALIGNMENT;

/// `bytes` rounded up to kArenaAlignment.
int64_t alignToArena(int64_t bytes);

/// Storage bytes of one element of `t` (f32/i32 4, bf16/f16 2, i64 8); 0
/// for types no arena stores.
int64_t storageBytes(Type t);

/// Bytes of a tensor's buffer (a 0-D tensor is one element).
int64_t tensorStorageBytes(RankedTensorType t);

/// A state declaration at module level: `train.param`, `train.state` or
/// `zero.shard`. `arena` is nullopt for a `train.param` marked
/// `zero.sharded` (its data lives in its group's shard: no storage).
struct StateDecl {
  Operation *op = nullptr;
  StringRef name;
  RankedTensorType type;
  std::optional<Arena> arena;
};

/// The state declared by `op`, or nullopt when `op` declares none.
std::optional<StateDecl> getStateDecl(Operation *op);

/// Checks the state layout of `module` (the verifier of
/// zero.state_arena_bytes): every slot and group span inside its arena, no
/// two state slots sharing a byte, each span's members back to back from
/// the span's offset. Diagnostics go to the offending op.
LogicalResult verifyStateLayout(Operation *module);

} // namespace mlir::zero

#endif // ZERO_ZERO_ZEROLAYOUT_H
