//===- Llama.cpp - the Llama 3 / Qwen3 training-step generator ------------===//
///
/// \file
/// Builds the decoder of Hugging Face `LlamaForCausalLM` /
/// `Qwen3ForCausalLM` (see zero/Models/Llama.h): token embedding, L
/// pre-RMSNorm layers (grouped-query causal attention with RoPE and, for
/// Qwen3, QK-norm; SwiGLU MLP), a final RMSNorm and the LM head, trained on
/// next-token cross-entropy with ignore_index −100.
///
//===----------------------------------------------------------------------===//

#include "ModelBuilder.h"

#include "zero/Models/Llama.h"

#include "mlir/IR/Diagnostics.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::zero::models;
using mlir::zero::models::detail::ModelBuilder;
using mlir::zero::models::detail::productFits;

//===----------------------------------------------------------------------===//
// Configuration
//===----------------------------------------------------------------------===//

int64_t LlamaConfig::getHeadDim() const {
  if (headDim != 0)
    return headDim;
  return nHeads > 0 ? dim / nHeads : 0;
}

int64_t LlamaConfig::getFfnDim() const {
  if (ffnDim != 0)
    return ffnDim;
  // Meta's / torchtitan's FeedForward: int(2 * 4C / 3), times the
  // multiplier (truncated), rounded up to a multiple of multiple_of.
  int64_t hidden = 2 * (4 * dim) / 3;
  if (ffnDimMultiplier)
    hidden =
        static_cast<int64_t>(*ffnDimMultiplier * static_cast<double>(hidden));
  if (multipleOf <= 0)
    return hidden;
  return multipleOf * ((hidden + multipleOf - 1) / multipleOf);
}

/// Llama 3.1 8B (HF meta-llama/Llama-3.1-8B config.json).
static LlamaConfig llama3_8b() { return LlamaConfig(); }

static LlamaConfig llama32_1b() {
  LlamaConfig c;
  c.dim = 2048;
  c.nLayers = 16;
  c.nHeads = 32;
  c.nKvHeads = 8;
  c.headDim = 64;
  c.ffnDim = 8192;
  c.ropeScaling = RopeScaling{32.0, 1.0, 4.0, 8192};
  c.tieEmbeddings = true;
  return c;
}

/// Qwen3 sizes: QK-norm, θ = 1e6, eps 1e-6, head_dim 128, vocab 151936.
static LlamaConfig qwen3Sized(int64_t dim, int64_t layers, int64_t heads,
                              int64_t ffn, bool tied) {
  LlamaConfig c;
  c.dim = dim;
  c.nLayers = layers;
  c.nHeads = heads;
  c.nKvHeads = 8;
  c.headDim = 128;
  c.ffnDim = ffn;
  c.vocabSize = 151936;
  c.ropeTheta = 1e6;
  c.ropeScaling = std::nullopt;
  c.normEps = 1e-6;
  c.tieEmbeddings = tied;
  c.qkNorm = true;
  return c;
}

/// torchtitan models/llama3 "debugmodel": dim 256, 6 layers, 16 heads
/// (MHA), vocab 2048, θ 500000, FFN from multiple_of 256 (= 768).
static LlamaConfig llama3Debug() {
  LlamaConfig c;
  c.dim = 256;
  c.nLayers = 6;
  c.nHeads = 16;
  c.nKvHeads = 16;
  c.headDim = 0;
  c.ffnDim = 0;
  c.multipleOf = 256;
  c.vocabSize = 2048;
  c.ropeScaling = std::nullopt;
  return c;
}

llvm::ArrayRef<StringRef> mlir::zero::models::getLlamaPresetNames() {
  static const StringRef names[] = {
      "llama",      "qwen3",    "llama3-8b",        "llama3.2-1b",
      "qwen3-0.6b", "qwen3-8b", "llama3-debugmodel"};
  return names;
}

std::optional<LlamaConfig> mlir::zero::models::getLlamaPreset(StringRef name) {
  if (name == "llama" || name == "llama3-8b")
    return llama3_8b();
  if (name == "llama3.2-1b")
    return llama32_1b();
  if (name == "qwen3-0.6b")
    return qwen3Sized(1024, 28, 16, 3072, /*tied=*/true);
  if (name == "qwen3" || name == "qwen3-8b")
    return qwen3Sized(4096, 36, 32, 12288, /*tied=*/false);
  if (name == "llama3-debugmodel")
    return llama3Debug();
  return std::nullopt;
}

std::string mlir::zero::models::checkLlamaConfig(const LlamaConfig &c) {
  auto positive = [](const char *what, int64_t v) -> std::string {
    if (v > 0)
      return "";
    return std::string(what) + " must be positive, got " + std::to_string(v);
  };
  for (const std::string &error :
       {positive("dim", c.dim), positive("n_layers", c.nLayers),
        positive("n_heads", c.nHeads), positive("n_kv_heads", c.nKvHeads),
        positive("vocab_size", c.vocabSize), positive("seq_len", c.seqLen),
        positive("batch_size", c.batchSize)})
    if (!error.empty())
      return error;
  if (c.headDim < 0)
    return "head_dim must be positive (or 0 for dim / n_heads), got " +
           std::to_string(c.headDim);
  if (c.ffnDim < 0)
    return "ffn_dim must be positive (or 0 to derive it), got " +
           std::to_string(c.ffnDim);
  if (c.ffnDim == 0 && c.multipleOf <= 0)
    return "multiple_of must be positive, got " + std::to_string(c.multipleOf);
  if (c.ffnDimMultiplier && !(*c.ffnDimMultiplier > 0))
    return "ffn_dim_multiplier must be positive";
  if (c.nHeads % c.nKvHeads != 0)
    return "n_kv_heads (" + std::to_string(c.nKvHeads) +
           ") must divide n_heads (" + std::to_string(c.nHeads) + ")";
  if (c.headDim == 0 && c.dim % c.nHeads != 0)
    return "dim (" + std::to_string(c.dim) +
           ") must be divisible by n_heads (" + std::to_string(c.nHeads) +
           ") when head_dim is derived";
  int64_t D = c.getHeadDim(), F = c.getFfnDim();
  if (D <= 0 || D % 2 != 0)
    return "head_dim (" + std::to_string(D) +
           ") must be even and positive (rotary pairs)";
  if (F <= 0)
    return "ffn_dim must be positive, got " + std::to_string(F);
  if (c.vocabSize > std::numeric_limits<int32_t>::max())
    return "vocab_size (" + std::to_string(c.vocabSize) +
           ") does not fit the i32 token ids";
  if (!productFits({c.vocabSize, c.dim}) || !productFits({F, c.dim}) ||
      !productFits({c.nHeads, D, c.dim}) ||
      !productFits({c.batchSize, c.seqLen, c.vocabSize}) ||
      !productFits({c.batchSize, c.seqLen, F}) ||
      !productFits({c.batchSize, c.seqLen, c.nHeads, D}))
    return "the model's tensors are too large (element counts overflow int64)";
  if (!(c.normEps > 0))
    return "norm eps must be positive";
  if (!(c.ropeTheta > 0) || !std::isfinite(c.ropeTheta))
    return "rope theta must be positive";
  if (!(c.initStd > 0))
    return "init std must be positive";
  if (const std::optional<RopeScaling> &s = c.ropeScaling) {
    if (!(s->factor > 0))
      return "rope scaling factor must be positive";
    if (!(s->lowFreqFactor > 0) || !(s->highFreqFactor > s->lowFreqFactor))
      return "rope scaling needs 0 < low_freq_factor < high_freq_factor";
    if (s->originalMaxPositions <= 0)
      return "rope scaling original_max_positions must be positive";
  }
  return "";
}

uint64_t mlir::zero::models::llamaParameterCount(const LlamaConfig &c) {
  uint64_t C = c.dim, L = c.nLayers, H = c.nHeads, Hkv = c.nKvHeads,
           D = c.getHeadDim(), F = c.getFfnDim(), V = c.vocabSize;
  uint64_t perLayer =
      2 * C + (2 * H + 2 * Hkv) * D * C + 3 * F * C + (c.qkNorm ? 2 * D : 0);
  return V * C * (c.tieEmbeddings ? 1 : 2) + C + L * perLayer;
}

//===----------------------------------------------------------------------===//
// Builder
//===----------------------------------------------------------------------===//

namespace {

class LlamaBuilder {
public:
  LlamaBuilder(MLIRContext &ctx, const LlamaConfig &config)
      : config(config), mb(ctx, getElementType(ctx, config.elementType)),
        B(config.batchSize), T(config.seqLen), C(config.dim), H(config.nHeads),
        Hkv(config.nKvHeads), D(config.getHeadDim()), F(config.getFfnDim()),
        V(config.vocabSize) {}

  OwningOpRef<ModuleOp> build() {
    declareParams();
    auto ids = RankedTensorType::get({B, T}, mb.b.getI32Type());
    Block::BlockArgListType args = mb.beginForward({ids, ids});
    Value logits = trunk(args[0]);
    Value flatLogits =
        train::ReshapeOp::create(mb.b, mb.loc, mb.tensor({B * T, V}), logits);
    Value flatLabels = train::ReshapeOp::create(
        mb.b, mb.loc, RankedTensorType::get({B * T}, mb.b.getI32Type()),
        args[1]);
    Value loss = train::CrossEntropyOp::create(
        mb.b, mb.loc, RankedTensorType::get({}, mb.b.getF32Type()), flatLogits,
        flatLabels, /*num_classes=*/IntegerAttr(),
        mb.b.getI64IntegerAttr(-100));
    mb.ret(loss);

    Block::BlockArgListType logitsArgs =
        mb.beginFunction("logits", {ids}, {mb.tensor({B, T, V})});
    mb.ret(trunk(logitsArgs[0]));
    return mb.release();
  }

private:
  RankedTensorType act(int64_t n) const { return mb.tensor({B, T, n}); }

  void declareParams() {
    double std = config.initStd;
    mb.declareParam("model.embed_tokens.weight", {V, C}, mb.normal(std));
    for (int64_t i = 0; i < config.nLayers; ++i) {
      std::string l = layerName(i);
      mb.declareParam(l + ".input_layernorm.weight", {C}, mb.ones());
      mb.declareParam(l + ".self_attn.q_proj.weight", {H * D, C},
                      mb.normal(std));
      mb.declareParam(l + ".self_attn.k_proj.weight", {Hkv * D, C},
                      mb.normal(std));
      mb.declareParam(l + ".self_attn.v_proj.weight", {Hkv * D, C},
                      mb.normal(std));
      mb.declareParam(l + ".self_attn.o_proj.weight", {C, H * D},
                      mb.normal(std));
      if (config.qkNorm) {
        mb.declareParam(l + ".self_attn.q_norm.weight", {D}, mb.ones());
        mb.declareParam(l + ".self_attn.k_norm.weight", {D}, mb.ones());
      }
      mb.declareParam(l + ".post_attention_layernorm.weight", {C}, mb.ones());
      mb.declareParam(l + ".mlp.gate_proj.weight", {F, C}, mb.normal(std));
      mb.declareParam(l + ".mlp.up_proj.weight", {F, C}, mb.normal(std));
      mb.declareParam(l + ".mlp.down_proj.weight", {C, F}, mb.normal(std));
    }
    mb.declareParam("model.norm.weight", {C}, mb.ones());
    if (!config.tieEmbeddings)
      mb.declareParam("lm_head.weight", {V, C}, mb.normal(std));
  }

  static std::string layerName(int64_t i) {
    return "model.layers." + std::to_string(i);
  }

  /// x · weightᵀ without bias (PyTorch Linear(bias=False)).
  Value linear(Value x, const std::string &weight, int64_t out) {
    auto xt = cast<RankedTensorType>(x.getType());
    SmallVector<int64_t> shape(xt.getShape());
    shape.back() = out;
    return train::MatmulOp::create(mb.b, mb.loc, mb.tensor(shape), x,
                                   mb.load(weight), /*bias=*/Value(),
                                   /*transpose_a=*/false, /*transpose_b=*/true);
  }

  Value rmsNorm(Value x, const std::string &weight) {
    return train::RmsNormOp::create(mb.b, mb.loc, x.getType(), x,
                                    mb.load(weight),
                                    mb.b.getF64FloatAttr(config.normEps));
  }

  /// The cos/sin table [T, D/2, 2] (a constant of the program).
  Value ropeTable() {
    auto type = RankedTensorType::get({T, D / 2, 2}, mb.b.getF32Type());
    FloatAttr factor, low, high;
    IntegerAttr original;
    if (const std::optional<RopeScaling> &s = config.ropeScaling) {
      factor = mb.b.getF64FloatAttr(s->factor);
      low = mb.b.getF64FloatAttr(s->lowFreqFactor);
      high = mb.b.getF64FloatAttr(s->highFreqFactor);
      original = mb.b.getI64IntegerAttr(s->originalMaxPositions);
    }
    return train::RopeTableOp::create(mb.b, mb.loc, type,
                                      mb.b.getF64FloatAttr(config.ropeTheta),
                                      factor, low, high, original);
  }

  /// [B, T, heads·D] -> [B, T, heads, D], QK-norm when asked, RoPE (q, k
  /// only), then [B, heads, T, D].
  Value heads(Value x, int64_t n, const std::string &norm, Value table) {
    Value h =
        train::ReshapeOp::create(mb.b, mb.loc, mb.tensor({B, T, n, D}), x);
    if (!norm.empty())
      h = rmsNorm(h, norm);
    if (table) {
      auto layout = train::RopeLayoutAttr::get(
          mb.b.getContext(), config.interleavedRope
                                 ? train::RopeLayout::interleaved
                                 : train::RopeLayout::rotate_half);
      h = train::RopeOp::create(mb.b, mb.loc, h.getType(), h, table, layout,
                                /*inverse=*/UnitAttr());
    }
    return train::TransposeOp::create(mb.b, mb.loc, mb.tensor({B, n, T, D}), h,
                                      ArrayRef<int64_t>{0, 2, 1, 3});
  }

  Value attention(Value x, const std::string &l, Value table) {
    std::string a = l + ".self_attn";
    std::string qNorm = config.qkNorm ? a + ".q_norm.weight" : "";
    std::string kNorm = config.qkNorm ? a + ".k_norm.weight" : "";
    Value q = heads(linear(x, a + ".q_proj.weight", H * D), H, qNorm, table);
    Value k =
        heads(linear(x, a + ".k_proj.weight", Hkv * D), Hkv, kNorm, table);
    Value v = heads(linear(x, a + ".v_proj.weight", Hkv * D), Hkv, "", Value());
    auto lseType = RankedTensorType::get({B, H, T}, mb.b.getF32Type());
    Value o = train::CausalAttentionOp::create(mb.b, mb.loc, q.getType(),
                                               lseType, q, k, v)
                  .getResult();
    o = train::TransposeOp::create(mb.b, mb.loc, mb.tensor({B, T, H, D}), o,
                                   ArrayRef<int64_t>{0, 2, 1, 3});
    o = train::ReshapeOp::create(mb.b, mb.loc, act(H * D), o);
    return linear(o, a + ".o_proj.weight", C);
  }

  Value mlp(Value x, const std::string &l) {
    Value gate = linear(x, l + ".mlp.gate_proj.weight", F);
    Value up = linear(x, l + ".mlp.up_proj.weight", F);
    Value h = train::SwigluOp::create(mb.b, mb.loc, gate.getType(), gate, up);
    return linear(h, l + ".mlp.down_proj.weight", C);
  }

  /// Token ids [B, T] -> logits [B, T, V] (HF LlamaModel + lm_head).
  Value trunk(Value ids) {
    mb.setScope("model.embed_tokens");
    Value table0 = mb.load("model.embed_tokens.weight");
    Value x = train::EmbeddingOp::create(mb.b, mb.loc, act(C), table0, ids);
    mb.setScope("model.rotary_emb");
    Value table = ropeTable();
    for (int64_t i = 0; i < config.nLayers; ++i) {
      std::string l = layerName(i);
      mb.setScope(l + ".self_attn");
      Value h = attention(rmsNorm(x, l + ".input_layernorm.weight"), l, table);
      x = train::AddOp::create(mb.b, mb.loc, act(C), x, h);
      mb.setScope(l + ".mlp");
      h = mlp(rmsNorm(x, l + ".post_attention_layernorm.weight"), l);
      x = train::AddOp::create(mb.b, mb.loc, act(C), x, h);
    }
    mb.setScope("lm_head");
    x = rmsNorm(x, "model.norm.weight");
    // A tied head reuses the embedding's load (one table, two uses).
    Value head = config.tieEmbeddings ? table0 : mb.load("lm_head.weight");
    return train::MatmulOp::create(mb.b, mb.loc, act(V), x, head,
                                   /*bias=*/Value(), /*transpose_a=*/false,
                                   /*transpose_b=*/true);
  }

  const LlamaConfig &config;
  ModelBuilder mb;
  int64_t B, T, C, H, Hkv, D, F, V;
};

} // namespace

FailureOr<OwningOpRef<ModuleOp>>
mlir::zero::models::buildLlama(MLIRContext &ctx, const LlamaConfig &config) {
  std::string error = checkLlamaConfig(config);
  if (!error.empty()) {
    emitError(UnknownLoc::get(&ctx)) << error;
    return failure();
  }
  return LlamaBuilder(ctx, config).build();
}
