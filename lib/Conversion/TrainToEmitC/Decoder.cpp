//===- Decoder.cpp - the Llama 3 / Qwen3 ops to zrt calls -----------------===//
///
/// \file
/// Emitters of the decoder op family (dialects/Train/TrainDecoderOps.td)
/// onto the kernels of runtime/include/zrt/decoder.h. Prints only; the
/// rule of the folder is in OpEmitter.h.
///
//===----------------------------------------------------------------------===//

#include "OpEmitter.h"

#include "Train/TrainOps.h"


using namespace mlir;
using namespace mlir::zero::emit;

namespace {

//===----------------------------------------------------------------------===//
// RMSNorm
//===----------------------------------------------------------------------===//

/// train.rms_norm -> zrt_rms_norm(x, w, out, N, C, eps).
struct RmsNormEmitter : OpEmitterFor<train::RmsNormOp> {
  LogicalResult emit(train::RmsNormOp op, EmitContext &c,
                     bool native) const override {
    auto [n, cols] = rowsCols(op.getInput());
    c.call(kernelName("zrt_rms_norm", native),
           {c.ptr(op.getInput()), c.ptr(op.getWeight()), c.ptr(op.getResult()),
            c.i64(n), c.i64(cols), c.f32(op.getEps().convertToDouble())});
    return success();
  }
};

/// train.add_rms_norm -> zrt_add_rms_norm(a, b, w, sum, out, N, C, eps).
struct AddRmsNormEmitter : OpEmitterFor<train::AddRmsNormOp> {
  LogicalResult emit(train::AddRmsNormOp op, EmitContext &c,
                     bool native) const override {
    auto [n, cols] = rowsCols(op.getLhs());
    c.call(kernelName("zrt_add_rms_norm", native),
           {c.ptr(op.getLhs()), c.ptr(op.getRhs()), c.ptr(op.getWeight()),
            c.ptr(op.getSum()), c.ptr(op.getResult()), c.i64(n), c.i64(cols),
            c.f32(op.getEps().convertToDouble())});
    return success();
  }
};

/// train.rms_norm_grad -> zrt_rms_norm_backward(dy, x, w, addend | NULL,
/// dx, dw, workspace, N, C, eps) with N floats of workspace (the rows'
/// statistics of the weight-gradient pass; never a heap allocation).
struct RmsNormGradEmitter : OpEmitterFor<train::RmsNormGradOp> {
  LogicalResult emit(train::RmsNormGradOp op, EmitContext &c,
                     bool native) const override {
    auto [n, cols] = rowsCols(op.getInput());
    Value work = c.scratch();
    Value addend = op.getAddend();
    c.call(kernelName("zrt_rms_norm_backward", native),
           {c.ptr(op.getGrad()), c.ptr(op.getInput()), c.ptr(op.getWeight()),
            addend ? CArg(c.ptr(addend)) : CArg(c.opq("NULL")),
            c.ptr(op.getInputGrad()), c.ptr(op.getWeightGrad()), work, c.i64(n),
            c.i64(cols), c.f32(op.getEps().convertToDouble())});
    return success();
  }
};

//===----------------------------------------------------------------------===//
// SiLU and SwiGLU
//===----------------------------------------------------------------------===//

struct SiluEmitter : OpEmitterFor<train::SiluOp> {
  LogicalResult emit(train::SiluOp op, EmitContext &c,
                     bool native) const override {
    c.call(kernelName("zrt_silu", native),
           {c.ptr(op.getInput()), c.ptr(op.getResult()),
            c.i64(numel(op.getResult()))});
    return success();
  }
};

struct SiluGradEmitter : OpEmitterFor<train::SiluGradOp> {
  LogicalResult emit(train::SiluGradOp op, EmitContext &c,
                     bool native) const override {
    c.call(kernelName("zrt_silu_backward", native),
           {c.ptr(op.getInput()), c.ptr(op.getGrad()), c.ptr(op.getResult()),
            c.i64(numel(op.getResult()))});
    return success();
  }
};

struct SwigluEmitter : OpEmitterFor<train::SwigluOp> {
  LogicalResult emit(train::SwigluOp op, EmitContext &c,
                     bool native) const override {
    c.call(kernelName("zrt_swiglu", native),
           {c.ptr(op.getGate()), c.ptr(op.getUp()), c.ptr(op.getResult()),
            c.i64(numel(op.getResult()))});
    return success();
  }
};

struct SwigluGradEmitter : OpEmitterFor<train::SwigluGradOp> {
  LogicalResult emit(train::SwigluGradOp op, EmitContext &c,
                     bool native) const override {
    c.call(kernelName("zrt_swiglu_backward", native),
           {c.ptr(op.getGate()), c.ptr(op.getUp()), c.ptr(op.getGrad()),
            c.ptr(op.getGateGrad()), c.ptr(op.getUpGrad()),
            c.i64(numel(op.getGate()))});
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Rotary position embedding
//===----------------------------------------------------------------------===//

/// train.rope -> zrt_rope(x, table, out, B, T, H, D, layout, inverse); the
/// table is f32 in every precision, so the op is native when x is bf16.
struct RopeEmitter : OpEmitterFor<train::RopeOp> {
  LogicalResult emit(train::RopeOp op, EmitContext &c,
                     bool native) const override {
    ArrayRef<int64_t> s = tensorType(op.getInput()).getShape();
    bool interleaved = op.getLayout() == train::RopeLayout::interleaved;
    c.call(kernelName("zrt_rope", native),
           {c.ptr(op.getInput()), c.ptr(op.getTable()), c.ptr(op.getResult()),
            c.i64(s[0]), c.i64(s[1]), c.i64(s[2]), c.i64(s[3]),
            c.opq(interleaved ? "ZRT_ROPE_INTERLEAVED" : "ZRT_ROPE_ROTATE_HALF"),
            c.i64(op.getInverse() ? 1 : 0)});
    return success();
  }
};

/// train.rope_table: a constant of the program, computed once by the
/// initializer into its recorded slot (`zero.constant_slot`); nothing is
/// printed where it stands in a function.
struct RopeTableEmitter : OpEmitterFor<train::RopeTableOp> {
  LogicalResult emit(train::RopeTableOp, EmitContext &, bool) const override {
    return success();
  }
};

} // namespace

void mlir::zero::emit::populateDecoderEmitters(OpEmitterSet &set) {
  set.add<train::RmsNormOp, RmsNormEmitter>();
  set.add<train::AddRmsNormOp, AddRmsNormEmitter>();
  set.add<train::RmsNormGradOp, RmsNormGradEmitter>();
  set.add<train::SiluOp, SiluEmitter>();
  set.add<train::SiluGradOp, SiluGradEmitter>();
  set.add<train::SwigluOp, SwigluEmitter>();
  set.add<train::SwigluGradOp, SwigluGradEmitter>();
  set.add<train::RopeOp, RopeEmitter>();
  set.add<train::RopeTableOp, RopeTableEmitter>();
}
