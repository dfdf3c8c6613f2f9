//===- Models.h - builders of model training graphs -------------*- C++ -*-===//
///
/// \file
/// Generates the input of Zero's training-step contract — a module of
/// `train.param` declarations plus `func.func @forward` that returns the
/// scalar f32 loss — for GPT-2 style transformers and small MLPs, and counts
/// parameters. `zero-model` (tools/zero-model) is the command-line front end;
/// tests and other tools call these functions directly.
///
/// Error reporting (one convention for every builder here): a bad
/// configuration makes `buildGPT` / `buildMLP` emit one error diagnostic with
/// `mlir::emitError(mlir::UnknownLoc)` on the given context and return
/// `mlir::failure()`; the diagnostic's text is exactly what
/// `checkGPTConfig` / `checkMLPConfig` return, so a caller that wants the
/// message without a diagnostic handler can call those first.
///
//===----------------------------------------------------------------------===//

#ifndef ZERO_MODELS_MODELS_H
#define ZERO_MODELS_MODELS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::zero::models {

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

/// Storage element type of every parameter and activation of a generated
/// model. Ids and targets are always i32 and the loss is always an f32
/// scalar, whatever this is (see the `train` dialect's numerics policy:
/// reductions and statistics accumulate in f32).
enum class ElementType {
  f32,  ///< IEEE single precision.
  bf16, ///< bfloat16 (mixed precision: f32 accumulation, bf16 storage).
  f16,  ///< IEEE half (fp16-mixed: f32 accumulation, f16 storage, dynamic
        ///< loss scaling in the step).
};

/// The MLIR type of `type` in `ctx` (`f32`, `bf16` or `f16`).
mlir::Type getElementType(mlir::MLIRContext &ctx, ElementType type);

/// Parses "f32" or "bf16"; std::nullopt for anything else.
std::optional<ElementType> parseElementType(llvm::StringRef name);

/// "f32" or "bf16".
llvm::StringRef stringifyElementType(ElementType type);

//===----------------------------------------------------------------------===//
// GPT-2
//===----------------------------------------------------------------------===//

/// Hyper-parameters of a GPT-2 model (nanoGPT `GPTConfig` in model.py,
/// llm.c `GPT2Config` in train_gpt2.c) plus the static batch shape of the
/// training step. All sizes are element counts, not bytes.
///
/// The defaults are the 124M `gpt2` preset with a batch of 4.
struct GPTConfig {
  /// Number of transformer blocks, L (`n_layer`, llm.c `num_layers`).
  int64_t nLayer = 12;
  /// Attention heads per block, H (`n_head`, llm.c `num_heads`).
  int64_t nHead = 12;
  /// Embedding (channel) size, C (`n_embd`, llm.c `channels`); must be a
  /// multiple of nHead; the head size is D = C / H.
  int64_t nEmbd = 768;
  /// Real vocabulary size, V (`vocab_size`; 50257 for the GPT-2 tokenizer).
  int64_t vocabSize = 50257;
  /// Rows of the token embedding table, Vp ≥ V (llm.c `padded_vocab_size`).
  /// 0 means "round V up to a multiple of 128", as llm.c does (50257 →
  /// 50304). The padding rows are parameters (they are counted) but never
  /// take part in the loss: cross_entropy gets `num_classes = V`.
  int64_t paddedVocabSize = 0;
  /// Sequence length of the step, T. It is also the number of rows of the
  /// position table @wpe (nanoGPT `block_size`, llm.c `max_seq_len`); the
  /// generated step always runs full-length sequences (T == block size).
  int64_t seqLen = 1024;
  /// Micro-batch size, B (sequences per step).
  int64_t batchSize = 4;
  /// Storage type of parameters and activations.
  ElementType elementType = ElementType::f32;
  /// Layer-norm epsilon (PyTorch's and llm.c's 1e-5).
  double layerNormEps = 1e-5;
  /// Standard deviation of the normal initializer of every weight matrix
  /// and of both embedding tables (nanoGPT `_init_weights`: 0.02).
  double initStd = 0.02;

  /// Vp: paddedVocabSize, or V rounded up to a multiple of 128 when it is 0.
  int64_t getPaddedVocabSize() const;
  /// Head size D = C / H.
  int64_t getHeadSize() const { return nHead ? nEmbd / nHead : 0; }
  /// Init std of the residual projections `attn.c_proj.weight` and
  /// `mlp.c_proj.weight`: initStd / √(2·L) (GPT-2 paper §2.3; nanoGPT
  /// model.py and llm.c train_gpt2.py scale these two the same way).
  double getResidualInitStd() const;

  /// `gpt2`: 124M parameters, L=12, H=12, C=768, V=50257, T=1024.
  static GPTConfig gpt2();
  /// `gpt2-medium`: 350M, L=24, H=16, C=1024, V=50257, T=1024.
  static GPTConfig gpt2Medium();
  /// `gpt2-large`: 774M, L=36, H=20, C=1280, V=50257, T=1024.
  static GPTConfig gpt2Large();
  /// `gpt2-xl`: 1558M, L=48, H=25, C=1600, V=50257, T=1024.
  static GPTConfig gpt2XL();
};

/// The preset names `getGPTPreset` accepts: "gpt2", "gpt2-medium",
/// "gpt2-large", "gpt2-xl", and "gpt" (custom: the `gpt2` values, meant to
/// be overridden field by field).
llvm::ArrayRef<llvm::StringRef> getGPTPresetNames();

/// The configuration named `name` (see getGPTPresetNames), batch size 4 and
/// f32 elements; std::nullopt for an unknown name.
std::optional<GPTConfig> getGPTPreset(llvm::StringRef name);

/// Checks `config`: every size positive (paddedVocabSize may be 0),
/// nEmbd divisible by nHead, V ≤ Vp, ids representable in i32 (Vp < 2^31),
/// every tensor's element count representable in int64, eps and initStd
/// positive. Returns "" when valid, otherwise one line describing the first
/// problem, e.g. "n_embd (100) must be divisible by n_head (3)".
std::string checkGPTConfig(const GPTConfig &config);

/// Builds the GPT-2 training-step input of nanoGPT model.py / llm.c
/// train_gpt2.c: pre-LayerNorm blocks, learned absolute positions, tanh
/// GELU, and an LM head tied to @wte (no separate lm_head parameter).
/// Weights use PyTorch's Linear layout [out, in] and enter `train.matmul`
/// with `transpose_b`.
///
/// Parameters (module-level `train.param`, all `trainable`, names as in
/// PyTorch/Hugging Face `transformer.*` without the prefix):
///   - @wte [Vp, C] normal(initStd), @wpe [T, C] normal(initStd);
///   - per block i in [0, L): @h{i}.ln_1.weight [C] ones, .ln_1.bias [C]
///     zeros, .attn.c_attn.weight [3C, C] normal(initStd), .attn.c_attn.bias
///     [3C] zeros, .attn.c_proj.weight [C, C] normal(residual std),
///     .attn.c_proj.bias [C] zeros, .ln_2.weight/.bias [C], .mlp.c_fc.weight
///     [4C, C] normal(initStd), .mlp.c_fc.bias [4C] zeros,
///     .mlp.c_proj.weight [C, 4C] normal(residual std), .mlp.c_proj.bias [C];
///   - @ln_f.weight [C] ones, @ln_f.bias [C] zeros.
///
/// `func.func @forward(%idx: tensor<BxTxi32>, %targets: tensor<BxTxi32>)
/// -> tensor<f32>`: token ids and next-token targets in [0, V); returns the
/// mean cross-entropy. The positions enter as `train.broadcast` of @wpe
/// ([T, C] → [B, T, C]) added to the token embeddings.
///
/// `func.func @logits(%idx: tensor<BxTxi32>) -> tensor<BxTxVpxelt>` (elt the
/// element type): the same
/// graph without the loss, returning the logits of every position (the
/// model.h `last_logits` function samples from its last position).
///
/// Loads the `train` and `func` dialects into `ctx`. On a bad `config`,
/// emits checkGPTConfig's message at UnknownLoc and returns failure.
mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
buildGPT(mlir::MLIRContext &ctx, const GPTConfig &config);

/// Closed-form parameter count of buildGPT(config), in elements:
/// Vp·C + T·C + L·(12·C² + 13·C) + 2·C (124,475,904 for `gpt2` with
/// Vp = 50304; 124,439,808 with Vp = V = 50257, the figure Hugging Face
/// reports). `config` must pass checkGPTConfig.
uint64_t gptParameterCount(const GPTConfig &config);

//===----------------------------------------------------------------------===//
// MLP
//===----------------------------------------------------------------------===//

/// Activation between the layers of an MLP.
enum class Activation {
  relu, ///< max(x, 0) (`train.relu`).
  gelu, ///< tanh-approximate GELU (`train.gelu`).
};

/// Parses "relu" or "gelu"; std::nullopt for anything else.
std::optional<Activation> parseActivation(llvm::StringRef name);

/// "relu" or "gelu".
llvm::StringRef stringifyActivation(Activation activation);

/// The loss of an MLP.
enum class MLPLoss {
  mse,          ///< train.mse of the output against a float target [B, out].
  crossEntropy, ///< train.cross_entropy of the output [B, out] (logits of
                ///< `out` classes) against i32 class ids [B].
};

/// Parses "mse" or "cross-entropy"; std::nullopt for anything else.
std::optional<MLPLoss> parseMLPLoss(llvm::StringRef name);

/// A multi-layer perceptron trained on mean squared error (or cross-entropy
/// over `outputDim` classes, `loss`): Linear layers
/// inputDim → hiddenDims[0] → … → outputDim with `activation` after every
/// layer but the last. Sizes are element counts.
struct MLPConfig {
  /// Features per input row.
  int64_t inputDim = 0;
  /// Widths of the hidden layers, in order (may be empty: one linear layer).
  std::vector<int64_t> hiddenDims;
  /// Features per output row (and per target row).
  int64_t outputDim = 0;
  /// Rows per step, B.
  int64_t batchSize = 0;
  /// Activation after each hidden layer.
  Activation activation = Activation::relu;
  /// The loss: a regressor (mse) or a classifier (cross-entropy).
  MLPLoss loss = MLPLoss::mse;
  /// Storage type of parameters, activations, inputs and targets.
  ElementType elementType = ElementType::f32;
};

/// Checks `config`: inputDim, outputDim, batchSize and every hidden width
/// positive and every tensor's element count representable in int64.
/// Returns "" when valid, otherwise one line describing the first problem.
std::string checkMLPConfig(const MLPConfig &config);

/// Builds the MLP training-step input. Layer i (0-based, n = number of
/// hidden layers + 1 layers) maps in_i → out_i with parameters
///   - @fc{i}.weight [out_i, in_i], normal with std = 1/√(3·in_i) — the
///     standard deviation of PyTorch's default nn.Linear weight init
///     (kaiming_uniform with a = √5, i.e. U(−1/√in, 1/√in)), since
///     `#train.init` only has a normal initializer;
///   - @fc{i}.bias [out_i], zeros (PyTorch draws it uniformly; zero is
///     the usual choice for a from-scratch net and keeps runs comparable).
/// `func.func @forward(%x: tensor<Bxinput> {train.name = "x"}, %target:
/// tensor<Bxoutput> {train.name = "target"}) -> tensor<f32>` returns
/// `train.mse` of the last layer's output against %target; with
/// MLPLoss::crossEntropy %target is tensor<Bxi32> (class ids) and the loss
/// `train.cross_entropy`. The names make it an array model (the training
/// driver feeds arrays "x" and "target", runtime/README.md).
///
/// Loads the `train` and `func` dialects into `ctx`. On a bad `config`,
/// emits checkMLPConfig's message at UnknownLoc and returns failure.
mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
buildMLP(mlir::MLIRContext &ctx, const MLPConfig &config);

/// Closed-form parameter count of buildMLP(config): Σ (in_i·out_i + out_i).
uint64_t mlpParameterCount(const MLPConfig &config);

//===----------------------------------------------------------------------===//
// Counting
//===----------------------------------------------------------------------===//

/// Sum of the element counts of every `train.param` directly in `module`
/// (frozen ones included), i.e. the model's parameter count.
uint64_t countParameters(mlir::ModuleOp module);

} // namespace mlir::zero::models

#endif // ZERO_MODELS_MODELS_H
