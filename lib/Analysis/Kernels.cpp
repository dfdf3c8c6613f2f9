//===- Kernels.cpp - what the runtime's kernels need of each op -----------===//
///
/// \file
/// The scratch of the zrt.h kernels, per op family (the same family names
/// as test/Dialect/Train/ and the emitters), and the reading of the ops'
/// native bf16 capability (NativeBf16KernelOpInterface, in ODS). See
/// Kernels.h.
///
//===----------------------------------------------------------------------===//

#include "zero/Analysis/Kernels.h"
#include "zero/Analysis/NarrowFloat.h"

#include "Train/TrainOps.h"
#include "Zero/ZeroOps.h"
#include "zrt/abi.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace {

//===----------------------------------------------------------------------===//
// Linear: matmuls (zrt_matmul_bf16 widens row chunks of A and B)
//===----------------------------------------------------------------------===//

template <typename MatmulLikeOp>
int64_t matmulWorkspace(MatmulLikeOp o, Value bias) {
  zero::MatmulShape d = zero::matmulShape(o);
  return zrt_abi_matmul_bf16_workspace(d.batch, d.M, d.N, d.K, bias ? 1 : 0,
                                       ZRT_MATMUL_BF16_CHUNK_FLOATS);
}

//===----------------------------------------------------------------------===//
// NN: attention (flash-style kernels; the workspace of zrt/abi.h)
//===----------------------------------------------------------------------===//

int64_t attentionWorkspace(int64_t T, int64_t D, bool native) {
  return native ? zrt_abi_attention_workspace_bf16(T, D)
                : zrt_abi_attention_workspace(T);
}

/// T and D of q [B, H, T, D].
int64_t attentionWorkspace(Value q, bool native) {
  ArrayRef<int64_t> s = cast<RankedTensorType>(q.getType()).getShape();
  return attentionWorkspace(s[2], s[3], native);
}

/// T and D of a packed projection [B, T, 3 H D].
int64_t packedAttentionWorkspace(Value qkv, uint64_t heads, bool native) {
  ArrayRef<int64_t> s = cast<RankedTensorType>(qkv.getType()).getShape();
  return attentionWorkspace(s[1], s[2] / 3 / static_cast<int64_t>(heads),
                            native);
}

} // namespace

zero::MatmulShape zero::matmulShape(Value a, Value b, Value result,
                                    bool transposeA) {
  auto at = cast<RankedTensorType>(a.getType());
  auto bt = cast<RankedTensorType>(b.getType());
  auto r = cast<RankedTensorType>(result.getType());
  int64_t rank = at.getRank();
  MatmulShape d;
  d.K = transposeA ? at.getDimSize(rank - 2) : at.getDimSize(rank - 1);
  d.M = transposeA ? at.getDimSize(rank - 1) : at.getDimSize(rank - 2);
  d.N = r.getShape().back();
  if (bt.getRank() == 2 && rank > 2)
    d.M = d.K ? at.getNumElements() / d.K : 0; // rows of all batch entries
  else
    d.batch = d.M * d.N ? r.getNumElements() / (d.M * d.N) : 0;
  return d;
}

bool zero::hasNativeBf16Kernel(Operation *op) {
  auto kernel = dyn_cast<train::NativeBf16KernelOpInterface>(op);
  return kernel && kernel.hasNativeBf16Kernel();
}

SmallVector<Value> zero::narrowFloatTensors(Operation *op) {
  SmallVector<Value> out;
  auto add = [&](Value v) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (t && narrow::isNarrowFloat(t.getElementType()) &&
        !llvm::is_contained(out, v))
      out.push_back(v);
  };
  for (Value v : op->getOperands())
    add(v);
  for (Value v : op->getResults())
    add(v);
  return out;
}

bool zero::needsF32Widening(Operation *op) {
  return train::isComputeOp(op) && !hasNativeBf16Kernel(op) &&
         !narrowFloatTensors(op).empty();
}

SmallVector<int64_t, 2> zero::kernelScratchWords(Operation *op, bool native) {
  using Words = SmallVector<int64_t, 2>;
  return llvm::TypeSwitch<Operation *, Words>(op)
      // The bf16 GEMMs widen row chunks of their operands.
      .Case([&](train::MatmulOp o) {
        return native ? Words{matmulWorkspace(o, o.getBias())} : Words{};
      })
      .Case([&](train::MatmulGeluOp o) {
        return native ? Words{matmulWorkspace(o, o.getBias())} : Words{};
      })
      .Case([&](train::MatmulGeluGradOp o) {
        return native ? Words{matmulWorkspace(o, Value())} : Words{};
      })
      .Case([&](train::EmbeddingGradOp o) {
        if (!native)
          return Words{};
        return Words{zrt_abi_embedding_backward_bf16_workspace(
            cast<RankedTensorType>(o.getIds().getType()).getNumElements(),
            o.getType().getDimSize(0))};
      })
      // Norm gradients: the per-row statistics (layer norm: mean and rstd).
      .Case([](train::LayerNormGradOp o) {
        int64_t rows = zero::rowsCols(o.getInput()).first;
        return Words{rows, rows};
      })
      .Case([](train::RmsNormGradOp o) {
        return Words{zero::rowsCols(o.getInput()).first};
      })
      .Case<train::CausalAttentionOp, train::AttentionGradOp>([&](auto o) {
        return Words{attentionWorkspace(o.getQuery(), native)};
      })
      .Case<train::CausalAttentionPackedOp, train::AttentionPackedGradOp>(
          [&](auto o) {
            return Words{
                packedAttentionWorkspace(o.getQkv(), o.getHeads(), native)};
          })
      .Default([](Operation *) { return Words{}; });
}
