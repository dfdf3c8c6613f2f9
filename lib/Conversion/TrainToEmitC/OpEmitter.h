//===- OpEmitter.h - per-op emission patterns of convert-train-to-emitc -===//
///
/// \file
/// The rule of every file in this folder: an emitter prints one op as calls
/// of the runtime (zrt.h) on the storage the passes recorded; it makes no
/// choice. An `OpEmitter` is the lowering's pattern for one op: the calls
/// (`emit`). What those calls need — whether the op runs as one native
/// bf16 kernel (else train-legalize-bf16 has widened its bf16 tensors to
/// f32 with explicit casts) and the scratch blocks the buffer plan reserves
/// for it — is zero/Analysis/Kernels.h, shared with the planner. Families
/// register their emitters with a `populate<Family>Emitters` function
/// (torch-mlir's `populate…Patterns`, IREE VMToEmitC's per-family files); the
/// lowering looks an op up in the `OpEmitterSet` before its own (older) cases.
///
//===----------------------------------------------------------------------===//
#ifndef ZERO_LIB_CONVERSION_TRAINTOEMITC_OPEMITTER_H
#define ZERO_LIB_CONVERSION_TRAINTOEMITC_OPEMITTER_H

#include "zero/Analysis/Kernels.h"
#include "zero/Analysis/NarrowFloat.h"

#include "Zero/ZeroDialect.h"

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <memory>
#include <optional>
#include <utility>
#include <string>

namespace mlir::zero::emit {

using zero::elementType;
using zero::numel;
using zero::rowsCols;
using zero::tensorType;

/// The runtime function of an f32 kernel name: its zrt_X_bf16 variant when
/// the op runs natively in bf16.
inline std::string kernelName(StringRef f32Name, bool native) {
  return (f32Name + (native ? "_bf16" : "")).str();
}

/// ZRT_F32 / ZRT_BF16 / ZRT_F16 (and ZRT_I32 / ZRT_I64): the zrt_dtype of an
/// element type, for collectives and copies; nullopt for other types.
inline std::optional<StringRef> dtypeName(Type t) {
  if (std::optional<const char *> d = zero::narrow::dtype(t))
    return StringRef(*d);
  return std::nullopt;
}

/// A call argument: an SSA value (a pointer the context made) or an
/// attribute printed inline (a literal).
struct CArg {
  CArg(Value v) : value(v) {}
  CArg(Attribute a) : attr(a) {}
  Value value;
  Attribute attr;
};

/// What an emitter may ask of the lowering. Every pointer comes from the
/// storage the plan recorded for the value; nothing here decides.
class EmitContext {
public:
  virtual ~EmitContext() = default;
  /// The pointer to `tensor`'s storage (its element type).
  virtual Value ptr(Value tensor) = 0;
  /// The next block of the op's planned scratch (the blocks of
  /// zero::kernelScratchWords, zero/Analysis/Kernels.h, in order), as a
  /// float pointer.
  virtual Value scratch() = 0;
  /// The host value of a 0-D tensor (a float or int64 local; arena
  /// tensors are copied to the host once per function).
  virtual Value scalar(Value tensor) = 0;
  /// `ZRT_CHECK(callee(args...))`.
  virtual void call(StringRef callee, ArrayRef<CArg> args) = 0;
  virtual Attribute i64(int64_t v) = 0;
  virtual Attribute f32(double v) = 0;
  virtual Attribute f64(double v) = 0;
  /// Verbatim C++ text as an argument (`NULL`, an enum constant).
  virtual Attribute opq(StringRef text) = 0;
  /// `p` advanced by `elems` elements of its pointee (`p` itself for 0).
  virtual Value offsetPtr(Value p, int64_t elems) = 0;
  /// `ZRT_CHECK(name(args...))` for the zrt.h collective `name` on `axis`:
  /// the axis-less form on the data axis, else its `_axis` form (`_start`
  /// kept last) with the axis first.
  virtual void collective(StringRef name, zero::MeshAxis axis,
                          ArrayRef<CArg> args) = 0;
  /// A new `zrt_request` variable for the nonblocking collective `start`
  /// (its `!zero.pending` result); returns the variable's address.
  virtual Value request(Operation *start) = 0;
  /// The `zrt_request` of a `!zero.pending` value, for zrt_wait.
  virtual Value pendingRequest(Value pending) = 0;
  /// A new `zrt_offload` variable for the copy `start` (a zero.offload_start
  /// or zero.fetch_start); returns the variable's address.
  virtual Value offloadEvent(Operation *start) = 0;
  /// The `zrt_offload` of a copy's `!zero.pending` value, for its wait.
  virtual Value pendingOffload(Value pending) = 0;
  /// This rank's index on mesh axis `axis`: on the data axis `zrt_rank()`,
  /// or `zrt_axis_rank(ZRT_AXIS_DATA)` on a mesh (shards are cut over the
  /// data axis); on the tensor axis `zrt_axis_rank(ZRT_AXIS_TENSOR)`.
  virtual Value axisRank(zero::MeshAxis axis) = 0;
  /// `static const int64_t` tables of the op, one per (prefix, values),
  /// named `zrt_<prefix><k>` with one index k for all tables of the op;
  /// returns their names.
  virtual SmallVector<std::string, 2>
  int64Tables(ArrayRef<std::pair<StringRef, ArrayRef<int64_t>>> tables) = 0;
};

/// The emission pattern of one op (see the file comment).
class OpEmitter {
public:
  virtual ~OpEmitter() = default;
  /// Prints `op`; `native`: whether it runs as its native bf16 kernel
  /// (zero::hasNativeBf16Kernel).
  virtual LogicalResult emit(Operation *op, EmitContext &ctx,
                             bool native) const = 0;
};

/// An OpEmitter of one op class (OpConversionPattern<OpTy>'s shape).
template <typename OpTy> class OpEmitterFor : public OpEmitter {
public:
  LogicalResult emit(Operation *op, EmitContext &ctx,
                     bool native) const final {
    return emit(cast<OpTy>(op), ctx, native);
  }
  virtual LogicalResult emit(OpTy op, EmitContext &ctx, bool native) const = 0;
};

/// The emitters by op name.
class OpEmitterSet {
public:
  /// Registers `Emitter(args...)` for the op class `OpTy`.
  template <typename OpTy, typename Emitter, typename... Args>
  void add(Args &&...args) {
    emitters[OpTy::getOperationName()] =
        std::make_unique<Emitter>(std::forward<Args>(args)...);
  }
  /// The emitter of `op`, or null (the lowering's own cases apply).
  const OpEmitter *lookup(Operation *op) const {
    auto it = emitters.find(op->getName().getStringRef());
    return it == emitters.end() ? nullptr : it->second.get();
  }

private:
  llvm::StringMap<std::unique_ptr<OpEmitter>> emitters;
};

/// The Llama 3 / Qwen3 op family (TrainDecoderOps.td): RMSNorm and its
/// residual form and gradient, SiLU and SwiGLU and their gradients, RoPE,
/// grouped-query attention and the masked cross-entropy (Decoder.cpp).
void populateDecoderEmitters(OpEmitterSet &set);

/// Attention: causal_attention and attention_grad, multi-head and
/// grouped-query, and the packed forms over a [B, T, 3 H D] projection
/// (Attention.cpp).
void populateAttentionEmitters(OpEmitterSet &set);

/// Losses: cross_entropy (padded, fused, masked by ignore_index) and its
/// gradient, mse and its gradient (Loss.cpp).
void populateLossEmitters(OpEmitterSet &set);

/// Elementwise ops and softmax: add, mul, scale, gelu, relu and their
/// gradients, softmax and its gradient (Elementwise.cpp).
void populateElementwiseEmitters(OpEmitterSet &set);

/// Matmuls and their GELU epilogues, f32 and bf16 (Matmul.cpp).
void populateMatmulEmitters(OpEmitterSet &set);

/// Layer norms: layer_norm, add_layer_norm, layer_norm_grad (Norm.cpp).
void populateNormEmitters(OpEmitterSet &set);

/// Embedding, its gradient and reduce_sum (the bias gradient) (Linear.cpp).
void populateLinearEmitters(OpEmitterSet &set);

/// Megatron's f and g: zero.tp_f (a copy) and zero.tp_g (the all-reduce
/// over the tensor axis) (TensorParallel.cpp).
void populateTensorParallelEmitters(OpEmitterSet &set);

/// Megatron's vocabulary-parallel embedding and cross-entropy:
/// zero.vocab_embedding and its gradient, vocab_max, vocab_exp_sums,
/// vocab_loss and their gradients (VocabParallel.cpp).
void populateVocabParallelEmitters(OpEmitterSet &set);

/// Views, layout changes and casts: cast, broadcast, transpose, split,
/// concat, the zero dialect's concat and bucket (de)interleave, and the
/// views that print nothing (reshape, unpack, zero.split) (Shape.cpp).
void populateShapeEmitters(OpEmitterSet &set);

/// Collectives on a mesh axis: all_gather, reduce_scatter, all_reduce,
/// their nonblocking `_start` forms and zero.wait, and zero.local_shard
/// (Collectives.cpp).
void populateCollectiveEmitters(OpEmitterSet &set);

/// P_a+cpu's copies between device and pinned host memory: offload_start,
/// offload_wait, fetch_start, fetch_wait (Offload.cpp).
void populateOffloadEmitters(OpEmitterSet &set);

/// The optimizer step's reductions: sum_squares and clip_coef
/// (Optimizer.cpp; AdamW is printed from the state plan, State.cpp).
void populateOptimizerEmitters(OpEmitterSet &set);

/// All families.
inline void populateAllEmitters(OpEmitterSet &set) {
  populateShapeEmitters(set);
  populateCollectiveEmitters(set);
  populateOffloadEmitters(set);
  populateOptimizerEmitters(set);
  populateElementwiseEmitters(set);
  populateNormEmitters(set);
  populateMatmulEmitters(set);
  populateLinearEmitters(set);
  populateDecoderEmitters(set);
  populateAttentionEmitters(set);
  populateLossEmitters(set);
  populateTensorParallelEmitters(set);
  populateVocabParallelEmitters(set);
}

} // namespace mlir::zero::emit

#endif // ZERO_LIB_CONVERSION_TRAINTOEMITC_OPEMITTER_H
