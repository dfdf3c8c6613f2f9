//===- GPT.cpp - the GPT-2 training-step generator ------------------------===//
///
/// \file
/// Builds GPT-2 exactly as nanoGPT (model.py) and llm.c (train_gpt2.c)
/// define it: token + learned position embeddings, L pre-LayerNorm blocks
/// (causal self-attention, then a 4·C tanh-GELU MLP, each added to the
/// residual stream), a final LayerNorm, and an LM head tied to the token
/// embedding, trained on next-token cross-entropy.
///
//===----------------------------------------------------------------------===//

#include "ModelBuilder.h"

#include "zero/Models/Models.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::zero::models;
using mlir::zero::models::detail::ModelBuilder;
using mlir::zero::models::detail::productFits;

//===----------------------------------------------------------------------===//
// Configuration
//===----------------------------------------------------------------------===//

int64_t GPTConfig::getPaddedVocabSize() const {
  if (paddedVocabSize != 0)
    return paddedVocabSize;
  return static_cast<int64_t>(llvm::alignTo(static_cast<uint64_t>(vocabSize), 128));
}

double GPTConfig::getResidualInitStd() const {
  return initStd / std::sqrt(2.0 * static_cast<double>(nLayer));
}

/// The 124M configuration with `layers`, `heads` and `channels` replaced.
static GPTConfig gpt2Sized(int64_t layers, int64_t heads, int64_t channels) {
  GPTConfig config;
  config.nLayer = layers;
  config.nHead = heads;
  config.nEmbd = channels;
  config.vocabSize = 50257;
  config.seqLen = 1024;
  return config;
}

GPTConfig GPTConfig::gpt2() { return gpt2Sized(12, 12, 768); }
GPTConfig GPTConfig::gpt2Medium() { return gpt2Sized(24, 16, 1024); }
GPTConfig GPTConfig::gpt2Large() { return gpt2Sized(36, 20, 1280); }
GPTConfig GPTConfig::gpt2XL() { return gpt2Sized(48, 25, 1600); }

llvm::ArrayRef<StringRef> mlir::zero::models::getGPTPresetNames() {
  static const StringRef names[] = {"gpt", "gpt2", "gpt2-medium", "gpt2-large",
                                    "gpt2-xl"};
  return names;
}

std::optional<GPTConfig> mlir::zero::models::getGPTPreset(StringRef name) {
  if (name == "gpt" || name == "gpt2")
    return GPTConfig::gpt2();
  if (name == "gpt2-medium")
    return GPTConfig::gpt2Medium();
  if (name == "gpt2-large")
    return GPTConfig::gpt2Large();
  if (name == "gpt2-xl")
    return GPTConfig::gpt2XL();
  return std::nullopt;
}

std::string mlir::zero::models::checkGPTConfig(const GPTConfig &c) {
  auto positive = [](const char *what, int64_t v) -> std::string {
    if (v > 0)
      return "";
    return std::string(what) + " must be positive, got " + std::to_string(v);
  };
  for (const std::string &error :
       {positive("n_layer", c.nLayer), positive("n_head", c.nHead),
        positive("n_embd", c.nEmbd), positive("vocab_size", c.vocabSize),
        positive("seq_len", c.seqLen), positive("batch_size", c.batchSize)})
    if (!error.empty())
      return error;
  if (c.paddedVocabSize < 0)
    return "padded_vocab_size must be positive (or 0 for automatic), got " +
           std::to_string(c.paddedVocabSize);
  if (c.nEmbd % c.nHead != 0)
    return "n_embd (" + std::to_string(c.nEmbd) +
           ") must be divisible by n_head (" + std::to_string(c.nHead) + ")";
  constexpr int64_t maxId = std::numeric_limits<int32_t>::max();
  if (c.vocabSize > maxId)
    return "vocab_size (" + std::to_string(c.vocabSize) +
           ") does not fit the i32 token ids";
  int64_t padded = c.getPaddedVocabSize();
  if (padded < c.vocabSize)
    return "vocab_size (" + std::to_string(c.vocabSize) +
           ") exceeds padded_vocab_size (" + std::to_string(padded) + ")";
  if (padded > maxId)
    return "padded_vocab_size (" + std::to_string(padded) +
           ") does not fit the i32 token ids";
  // The largest tensors: logits [B, T, Vp], the tables, the MLP weights and
  // activations. 4·C must fit too.
  if (!productFits({4, c.nEmbd, c.nEmbd}) || !productFits({padded, c.nEmbd}) ||
      !productFits({c.seqLen, c.nEmbd}) ||
      !productFits({c.batchSize, c.seqLen, padded}) ||
      !productFits({c.batchSize, c.seqLen, 4, c.nEmbd}))
    return "the model's tensors are too large (element counts overflow int64)";
  if (!(c.layerNormEps > 0))
    return "layer-norm eps must be positive";
  if (!(c.initStd > 0))
    return "init std must be positive";
  return "";
}

uint64_t mlir::zero::models::gptParameterCount(const GPTConfig &c) {
  uint64_t C = c.nEmbd, L = c.nLayer, Vp = c.getPaddedVocabSize(), T = c.seqLen;
  // Per block: ln_1 (2C) + c_attn (3C·C + 3C) + attn.c_proj (C·C + C)
  //          + ln_2 (2C) + c_fc (4C·C + 4C) + mlp.c_proj (4C·C + C).
  uint64_t perBlock = 12 * C * C + 13 * C;
  return Vp * C + T * C + L * perBlock + 2 * C;
}

//===----------------------------------------------------------------------===//
// Builder
//===----------------------------------------------------------------------===//

namespace {

/// Builds one GPT-2 module; the shape names follow llm.c (B, T, C, H, D,
/// Vp).
class GPTBuilder {
public:
  GPTBuilder(MLIRContext &ctx, const GPTConfig &config)
      : config(config), mb(ctx, getElementType(ctx, config.elementType)),
        B(config.batchSize), T(config.seqLen), C(config.nEmbd),
        H(config.nHead), D(config.getHeadSize()),
        V(config.vocabSize), Vp(config.getPaddedVocabSize()) {}

  OwningOpRef<ModuleOp> build() {
    declareParams();
    auto ids = RankedTensorType::get({B, T}, mb.b.getI32Type());
    Block::BlockArgListType args = mb.beginForward({ids, ids});
    Value idx = args[0], targets = args[1];
    Value logits = trunk(idx);
    Value flatLogits = train::ReshapeOp::create(
        mb.b, mb.loc, mb.tensor({B * T, Vp}), logits);
    Value flatTargets = train::ReshapeOp::create(
        mb.b, mb.loc, RankedTensorType::get({B * T}, mb.b.getI32Type()), targets);
    IntegerAttr numClasses;
    if (Vp > V)
      numClasses = mb.b.getI64IntegerAttr(V);
    Value loss = train::CrossEntropyOp::create(
        mb.b, mb.loc, RankedTensorType::get({}, mb.b.getF32Type()), flatLogits,
        flatTargets, numClasses, /*ignore_index=*/IntegerAttr());
    mb.ret(loss);

    // @logits: the same graph without the loss (sampling).
    Block::BlockArgListType logitsArgs =
        mb.beginFunction("logits", {ids}, {act(Vp)});
    mb.ret(trunk(logitsArgs[0]));
    return mb.release();
  }

private:
  /// Activation [B, T, n].
  RankedTensorType act(int64_t n) const { return mb.tensor({B, T, n}); }

  /// The model up to the LM head: token ids [B, T] -> logits [B, T, Vp].
  Value trunk(Value idx) {
    // Embeddings: x = wte[idx] + wpe (broadcast over the batch).
    mb.setScope("embeddings");
    Value wte = mb.load("wte");
    Value tok = train::EmbeddingOp::create(mb.b, mb.loc, act(C), wte, idx);
    Value wpe = mb.load("wpe");
    Value pos = train::BroadcastOp::create(mb.b, mb.loc, act(C), wpe);
    Value x = train::AddOp::create(mb.b, mb.loc, act(C), tok, pos);

    for (int64_t i = 0; i < config.nLayer; ++i)
      x = block(x, "h" + std::to_string(i));

    // Final LayerNorm, tied LM head (x · wteᵀ).
    mb.setScope("lm_head");
    x = layerNorm(x, "ln_f");
    return train::MatmulOp::create(mb.b, mb.loc, act(Vp), x, wte,
                                   /*bias=*/Value(), /*transpose_a=*/false,
                                   /*transpose_b=*/true);
  }

  void declareParams() {
    double std = config.initStd, residualStd = config.getResidualInitStd();
    mb.declareParam("wte", {Vp, C}, mb.normal(std));
    mb.declareParam("wpe", {T, C}, mb.normal(std));
    for (int64_t i = 0; i < config.nLayer; ++i) {
      std::string h = "h" + std::to_string(i);
      mb.declareParam(h + ".ln_1.weight", {C}, mb.ones());
      mb.declareParam(h + ".ln_1.bias", {C}, mb.zeros());
      mb.declareParam(h + ".attn.c_attn.weight", {3 * C, C}, mb.normal(std));
      mb.declareParam(h + ".attn.c_attn.bias", {3 * C}, mb.zeros());
      mb.declareParam(h + ".attn.c_proj.weight", {C, C}, mb.normal(residualStd));
      mb.declareParam(h + ".attn.c_proj.bias", {C}, mb.zeros());
      mb.declareParam(h + ".ln_2.weight", {C}, mb.ones());
      mb.declareParam(h + ".ln_2.bias", {C}, mb.zeros());
      mb.declareParam(h + ".mlp.c_fc.weight", {4 * C, C}, mb.normal(std));
      mb.declareParam(h + ".mlp.c_fc.bias", {4 * C}, mb.zeros());
      mb.declareParam(h + ".mlp.c_proj.weight", {C, 4 * C}, mb.normal(residualStd));
      mb.declareParam(h + ".mlp.c_proj.bias", {C}, mb.zeros());
    }
    mb.declareParam("ln_f.weight", {C}, mb.ones());
    mb.declareParam("ln_f.bias", {C}, mb.zeros());
  }

  Value layerNorm(Value x, const std::string &prefix) {
    Value weight = mb.load(prefix + ".weight");
    Value bias = mb.load(prefix + ".bias");
    return train::LayerNormOp::create(mb.b, mb.loc, x.getType(), x, weight, bias,
                                      mb.b.getF64FloatAttr(config.layerNormEps));
  }

  /// One pre-LayerNorm block (nanoGPT `Block.forward`):
  /// x += attn(ln_1(x)); x += mlp(ln_2(x)).
  Value block(Value x, const std::string &h) {
    mb.setScope(h + ".attn");
    Value x1 = layerNorm(x, h + ".ln_1");
    // q, k, v split into heads, attention and the heads merged again, on
    // the packed projection (no split/transpose copies).
    Value qkv = mb.linear(x1, h + ".attn.c_attn");
    auto lseType = RankedTensorType::get({B, H, T}, mb.b.getF32Type());
    Value y = train::CausalAttentionPackedOp::create(
                  mb.b, mb.loc, act(C), lseType, qkv,
                  mb.b.getI64IntegerAttr(H))
                  .getResult();
    y = mb.linear(y, h + ".attn.c_proj");
    x = train::AddOp::create(mb.b, mb.loc, act(C), x, y);

    mb.setScope(h + ".mlp");
    Value x2 = layerNorm(x, h + ".ln_2");
    Value fc = mb.linear(x2, h + ".mlp.c_fc");
    Value g = train::GeluOp::create(mb.b, mb.loc, fc.getType(), fc);
    Value proj = mb.linear(g, h + ".mlp.c_proj");
    return train::AddOp::create(mb.b, mb.loc, act(C), x, proj);
  }

  const GPTConfig &config;
  ModelBuilder mb;
  int64_t B, T, C, H, D, V, Vp;
};

} // namespace

FailureOr<OwningOpRef<ModuleOp>>
mlir::zero::models::buildGPT(MLIRContext &ctx, const GPTConfig &config) {
  std::string error = checkGPTConfig(config);
  if (!error.empty()) {
    emitError(UnknownLoc::get(&ctx)) << error;
    return failure();
  }
  return GPTBuilder(ctx, config).build();
}
