//===- Kernels.cpp - what the runtime's kernels need of each op -----------===//
///
/// \file
/// Native bf16 capability and scratch of the zrt.h kernels, per op family
/// (the same family names as test/Dialect/Train/ and the emitters). See
/// Kernels.h.
///
//===----------------------------------------------------------------------===//

#include "zero/Analysis/Kernels.h"

#include "Train/TrainOps.h"
#include "Zero/ZeroOps.h"
#include "zrt/abi.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace {

using zero::allBf16;
using zero::allOperandsBf16;

bool isF32(Value v) { return zero::elementType(v).isF32(); }

//===----------------------------------------------------------------------===//
// Linear: matmuls (zrt_matmul_bf16 widens row chunks of A and B)
//===----------------------------------------------------------------------===//

/// Whether a, b, bias (may be null) and the result are bf16 and a, b, bias
/// distinct values (the bf16 GEMM widens them in chunks of its own).
bool isBf16Matmul(Value a, Value b, Value bias, Value result) {
  return allBf16({a, b, result}) && (!bias || allBf16(bias)) && a != b &&
         (!bias || (bias != a && bias != b));
}

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
  return llvm::TypeSwitch<Operation *, bool>(op)
      // Elementwise (zrt_add_bf16, zrt_gelu_bf16, zrt_gelu_backward_bf16;
      // mul, relu, scale and softmax have f32 kernels only).
      .Case<train::AddOp, train::GeluOp, train::GeluGradOp>(
          [](Operation *o) { return allOperandsBf16(o); })
      // Norms and the decoder's elementwise ops.
      .Case<train::LayerNormOp, train::AddLayerNormOp, train::LayerNormGradOp,
            train::RmsNormOp, train::AddRmsNormOp, train::RmsNormGradOp,
            train::SiluOp, train::SiluGradOp, train::SwigluOp,
            train::SwigluGradOp, train::ReduceSumOp>(
          [](Operation *o) { return allOperandsBf16(o); })
      // Megatron's f and g (a copy, an all-reduce over the tensor axis) on
      // the storage type.
      .Case<zero::TensorParallelF, zero::TensorParallelG>(
          [](Operation *o) { return allOperandsBf16(o); })
      // The rope table is f32 in every precision.
      .Case([](train::RopeOp o) {
        return allBf16({o.getInput(), o.getResult()});
      })
      // Linear.
      .Case([](train::MatmulOp o) {
        return isBf16Matmul(o.getA(), o.getB(), o.getBias(), o.getResult());
      })
      .Case([](train::MatmulGeluOp o) {
        return isBf16Matmul(o.getA(), o.getB(), o.getBias(), o.getResult());
      })
      .Case([](train::MatmulGeluGradOp o) {
        // The pre-activation must be a third buffer.
        return o.getPre() != o.getA() && o.getPre() != o.getB() &&
               isBf16Matmul(o.getA(), o.getB(), Value(), o.getResult());
      })
      .Case([](train::EmbeddingOp o) {
        return allBf16({o.getTable(), o.getResult()});
      })
      .Case([](train::EmbeddingGradOp o) {
        return allBf16({o.getGrad(), o.getResult()});
      })
      // Attention.
      .Case<train::CausalAttentionOp, train::AttentionGradOp>(
          [](auto o) { return allBf16(o.getQuery()); })
      .Case<train::CausalAttentionPackedOp, train::AttentionPackedGradOp>(
          [](auto o) { return allBf16(o.getQkv()); })
      // Losses: the loss is an f32 scalar in every precision.
      .Case([](train::CrossEntropyOp o) {
        return allBf16(o.getLogits()) && isF32(o.getResult());
      })
      .Case([](train::CrossEntropyFusedOp o) {
        return allBf16(o.getLogits());
      })
      .Case([](train::CrossEntropyGradOp o) {
        return allBf16({o.getLogits(), o.getResult()}) && isF32(o.getGrad());
      })
      .Default([](Operation *) { return false; });
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
