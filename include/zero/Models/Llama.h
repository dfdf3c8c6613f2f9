//===- Llama.h - the Llama 3 / Qwen3 training-step generator ----*- C++ -*-===//
///
/// \file
/// Generates the training-step input (train.param declarations + @forward
/// returning the loss, + @logits) of a Llama 3 or Qwen3 decoder: Hugging
/// Face `LlamaForCausalLM` / `Qwen3ForCausalLM` (and torchtitan's
/// `models/llama3`), with Hugging Face's state-dict names so weights move
/// between the two without renaming. Error convention as Models.h: a bad
/// configuration makes buildLlama emit checkLlamaConfig's message at
/// UnknownLoc and return failure.
///
//===----------------------------------------------------------------------===//

#ifndef ZERO_MODELS_LLAMA_H
#define ZERO_MODELS_LLAMA_H

#include "zero/Models/Models.h"

#include <optional>
#include <string>

namespace mlir::zero::models {

/// Llama 3.1's rotary frequency scaling (Hugging Face `rope_scaling` /
/// `rope_parameters` with rope_type "llama3").
struct RopeScaling {
  double factor = 8.0;
  double lowFreqFactor = 1.0;
  double highFreqFactor = 4.0;
  int64_t originalMaxPositions = 8192;
};

/// Hyper-parameters of a Llama 3 / Qwen3 decoder (HF `LlamaConfig` /
/// `Qwen3Config` names in parentheses) and the static batch shape.
struct LlamaConfig {
  /// Hidden size C (`hidden_size`, torchtitan `dim`).
  int64_t dim = 4096;
  /// Decoder layers L (`num_hidden_layers`).
  int64_t nLayers = 32;
  /// Query heads H (`num_attention_heads`).
  int64_t nHeads = 32;
  /// K/V heads Hkv, dividing H (`num_key_value_heads`; = H: multi-head).
  int64_t nKvHeads = 8;
  /// Head size D (`head_dim`); 0 = C / H. Qwen3 fixes 128 whatever C / H.
  int64_t headDim = 128;
  /// MLP width F (`intermediate_size`); 0 = derived from multipleOf and
  /// ffnDimMultiplier as Meta's / torchtitan's FeedForward does:
  /// F = 2·4C/3, times the multiplier when set, rounded up to multipleOf.
  int64_t ffnDim = 14336;
  int64_t multipleOf = 256;
  std::optional<double> ffnDimMultiplier;
  /// Vocabulary V (`vocab_size`); the table is not padded.
  int64_t vocabSize = 128256;
  /// RoPE base θ (`rope_theta`).
  double ropeTheta = 500000.0;
  /// llama3 frequency scaling, or none.
  std::optional<RopeScaling> ropeScaling = RopeScaling{};
  /// Which pairs rotate: rotate_half (HF checkpoints) or interleaved
  /// (Meta / torchtitan).
  bool interleavedRope = false;
  /// RMSNorm epsilon (`rms_norm_eps`).
  double normEps = 1e-5;
  /// LM head tied to the token embedding (`tie_word_embeddings`): no
  /// lm_head.weight parameter.
  bool tieEmbeddings = false;
  /// Qwen3's QK-norm: RMSNorm over head_dim on q and k before RoPE.
  bool qkNorm = false;
  /// Sequence length T and micro-batch B of the step.
  int64_t seqLen = 2048;
  int64_t batchSize = 4;
  ElementType elementType = ElementType::f32;
  /// Normal init std of every linear and the embedding
  /// (`initializer_range`); norm weights start at one.
  double initStd = 0.02;

  /// D: headDim, or C / H when it is 0.
  int64_t getHeadDim() const;
  /// F: ffnDim, or the multipleOf / ffnDimMultiplier rule when it is 0.
  int64_t getFfnDim() const;
};

/// The names getLlamaPreset accepts: "llama" (custom, from llama3-8b),
/// "qwen3" (custom, from qwen3-8b), "llama3-8b" (Llama 3.1 8B), "llama3.2-1b",
/// "qwen3-0.6b", "qwen3-8b", "llama3-debugmodel" (torchtitan's debugmodel).
llvm::ArrayRef<llvm::StringRef> getLlamaPresetNames();
/// The configuration named `name`; std::nullopt for an unknown name.
std::optional<LlamaConfig> getLlamaPreset(llvm::StringRef name);

/// Checks `config`: sizes positive (headDim and ffnDim may be 0 =
/// derived), Hkv dividing H, D even (rotary pairs), V within i32 ids,
/// tensor sizes within int64, eps, θ, init std positive, scaling factors
/// valid. Returns "" or one line naming the first problem.
std::string checkLlamaConfig(const LlamaConfig &config);

/// Builds the step. Parameters (all trainable; HF names):
///   model.embed_tokens.weight [V, C];
///   per layer i: model.layers.{i}.input_layernorm.weight [C],
///   .self_attn.q_proj.weight [H·D, C], .k_proj/.v_proj.weight [Hkv·D, C],
///   .o_proj.weight [C, H·D], (.self_attn.q_norm/.k_norm.weight [D] with
///   qkNorm), .post_attention_layernorm.weight [C],
///   .mlp.gate_proj/.up_proj.weight [F, C], .mlp.down_proj.weight [C, F];
///   model.norm.weight [C]; lm_head.weight [V, C] unless tied.
/// `@forward(%ids: tensor<BxTxi32>, %labels: tensor<BxTxi32>) -> tensor<f32>`
/// with labels already shifted (next tokens) and −100 ignored (HF
/// convention); `@logits(%ids) -> tensor<BxTxVxelt>`.
mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
buildLlama(mlir::MLIRContext &ctx, const LlamaConfig &config);

/// Closed-form parameter count of buildLlama(config) — what transformers'
/// `num_parameters()` reports for the same config (tied weights once):
/// V·C·(tied ? 1 : 2) + C + L·(2C + (2H + 2Hkv)·D·C + 3·F·C + (qk ? 2D : 0)).
uint64_t llamaParameterCount(const LlamaConfig &config);

} // namespace mlir::zero::models

#endif // ZERO_MODELS_LLAMA_H
