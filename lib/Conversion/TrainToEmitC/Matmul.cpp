//===- Matmul.cpp - matmuls and their GELU epilogues to zrt calls ---------===//
///
/// \file
/// Emitters of train.matmul, train.matmul_gelu and train.matmul_gelu_grad:
/// in f32 one zrt_matmul (alpha 1, beta 0, packed operands) of the product,
/// the fused forms followed by zrt_gelu / zrt_gelu_backward (exactly the
/// pairs they replace); in bf16 (every tensor bf16, a, b and bias distinct
/// values) one zrt_matmul_bf16 / zrt_matmul_gelu_bf16 /
/// zrt_matmul_gelu_backward_bf16 call with zrt_abi_matmul_bf16_workspace
/// floats of scratch (bounded: the CPU widens row chunks), the epilogues
/// applied to the f32 product before the rounding. Prints only; the rule of
/// the folder is in OpEmitter.h.
///
//===----------------------------------------------------------------------===//

#include "OpEmitter.h"

#include "Train/TrainOps.h"
#include "zero/Analysis/Kernels.h"

using namespace mlir;
using namespace mlir::zero::emit;

namespace {

using zero::matmulShape;

/// The shared shape of the three emitters (which of them runs natively in
/// bf16 and its workspace: zero/Analysis/Kernels.h).
template <typename OpTy> struct MatmulEmitterBase : OpEmitterFor<OpTy> {
  /// callee(A, B, middle..., batch, M, N, K, trans_a, trans_b, workspace),
  /// the workspace taken first (the pointers then in argument order).
  void emitBf16(OpTy op, EmitContext &c, StringRef callee,
                function_ref<SmallVector<CArg>()> middle) const {
    Value work = c.scratch();
    zero::MatmulShape d = matmulShape(op);
    SmallVector<CArg> args = {c.ptr(op.getA()), c.ptr(op.getB())};
    args.append(middle());
    args.append({c.i64(d.batch), c.i64(d.M), c.i64(d.N), c.i64(d.K),
                 c.i64(op.getTransposeA() ? 1 : 0),
                 c.i64(op.getTransposeB() ? 1 : 0), work});
    c.call(callee, args);
  }
  /// One zrt_matmul of the product into `out`, plus `biasValue` (null:
  /// none).
  void emitF32(OpTy op, EmitContext &c, Value biasValue, Value out) const {
    zero::MatmulShape d = matmulShape(op);
    c.call("zrt_matmul",
           {c.ptr(op.getA()), c.ptr(op.getB()),
            biasValue ? CArg(c.ptr(biasValue)) : CArg(c.opq("NULL")),
            c.ptr(out), c.i64(d.batch), c.i64(d.M), c.i64(d.N), c.i64(d.K),
            c.i64(op.getTransposeA() ? 1 : 0),
            c.i64(op.getTransposeB() ? 1 : 0), c.f32(1.0), c.f32(0.0),
            c.opq("ZRT_STRIDE_PACKED"), c.opq("ZRT_STRIDE_PACKED"),
            c.opq("ZRT_STRIDE_PACKED")});
  }
  static CArg orNull(EmitContext &c, Value v) {
    return v ? CArg(c.ptr(v)) : CArg(c.opq("NULL"));
  }
};

struct MatmulEmitter : MatmulEmitterBase<train::MatmulOp> {
  LogicalResult emit(train::MatmulOp op, EmitContext &c,
                     bool native) const override {
    if (!native) {
      emitF32(op, c, op.getBias(), op.getResult());
      return success();
    }
    emitBf16(op, c, "zrt_matmul_bf16", [&] {
      return SmallVector<CArg>{orNull(c, op.getBias()), c.ptr(op.getResult())};
    });
    return success();
  }
};

struct MatmulGeluEmitter : MatmulEmitterBase<train::MatmulGeluOp> {
  LogicalResult emit(train::MatmulGeluOp op, EmitContext &c,
                     bool native) const override {
    if (!native) {
      emitF32(op, c, op.getBias(), op.getPre());
      c.call("zrt_gelu", {c.ptr(op.getPre()), c.ptr(op.getResult()),
                          c.i64(numel(op.getResult()))});
      return success();
    }
    // Nothing reads an unused pre-activation (the forward-only function).
    emitBf16(op, c, "zrt_matmul_gelu_bf16", [&] {
      CArg b = orNull(c, op.getBias());
      CArg pre = orNull(c, op.getPre().use_empty() ? Value() : op.getPre());
      return SmallVector<CArg>{b, pre, c.ptr(op.getResult())};
    });
    return success();
  }
};

struct MatmulGeluGradEmitter : MatmulEmitterBase<train::MatmulGeluGradOp> {
  LogicalResult emit(train::MatmulGeluGradOp op, EmitContext &c,
                     bool native) const override {
    if (!native) {
      emitF32(op, c, Value(), op.getResult());
      c.call("zrt_gelu_backward",
             {c.ptr(op.getPre()), c.ptr(op.getResult()), c.ptr(op.getResult()),
              c.i64(numel(op.getResult()))});
      return success();
    }
    emitBf16(op, c, "zrt_matmul_gelu_backward_bf16", [&] {
      CArg pre = c.ptr(op.getPre());
      return SmallVector<CArg>{pre, c.ptr(op.getResult())};
    });
    return success();
  }
};

} // namespace

void mlir::zero::emit::populateMatmulEmitters(OpEmitterSet &set) {
  set.add<train::MatmulOp, MatmulEmitter>();
  set.add<train::MatmulGeluOp, MatmulGeluEmitter>();
  set.add<train::MatmulGeluGradOp, MatmulGeluGradEmitter>();
}
