//===- zero-model.cpp - generate model training graphs --------------------===//
///
/// \file
/// `zero-model` writes the input of Zero's training-step contract (train
/// dialect parameters + `func.func @forward` returning the loss) for a
/// named model, as MLIR text:
///
///   zero-model gpt2 [--n-layer N --n-head N --n-embd N --vocab N
///                    --padded-vocab N --seq N --batch N --dtype f32|bf16|f16]
///                   [--print-param-count] [-o file]
///   zero-model mlp --input N [--hidden 64,64] --output N [--batch N]
///                  [--activation relu|gelu] [--loss mse|cross-entropy]
///                  [--dtype f32|bf16|f16] [-o file]
///
/// The MLP's @forward takes named inputs `x` [B, input] and `target`
/// ([B, output] float for mse, [B] i32 class ids for cross-entropy): an
/// array model, trained on a safetensors file (or .npy directory) with
/// arrays of those names (runtime/README.md, "Array data").
///   zero-model llama|qwen3|llama3-8b|llama3.2-1b|qwen3-0.6b|qwen3-8b|
///              llama3-debugmodel [--dim N --n-layers N --n-heads N
///              --n-kv-heads N --head-dim N --ffn-dim N | --multiple-of N
///              --ffn-dim-multiplier X --vocab N --rope-theta X
///              --rope-scaling none|llama3[:factor,low,high,original]
///              --rope-layout rotate_half|interleaved --norm-eps X
///              --tie-embeddings[=false] --qk-norm[=false] --seq N --batch N
///              --dtype f32|bf16|f16] [--print-param-count] [-o file]
///
/// Llama/Qwen3 models (zero/Models/Llama.h): `llama` and `qwen3` are custom
/// models starting from `llama3-8b` and `qwen3-8b`; flags override the
/// preset's fields. Parameter names are Hugging Face's state-dict names.
///
/// GPT models: `gpt2`, `gpt2-medium`, `gpt2-large`, `gpt2-xl` are the
/// GPT-2 presets and `gpt` is a custom model starting from the `gpt2`
/// values; with any of them, flags override the preset's fields.
/// `--padded-vocab 0` (the default) rounds the vocabulary up to a multiple
/// of 128, like llm.c. `--print-param-count` writes the parameter count
/// (one decimal number) instead of the IR. Bad input prints one
/// "zero-model: error: ..." line and exits with status 1.
///
//===----------------------------------------------------------------------===//

#include "zero/Models/Llama.h"
#include "zero/Support/Version.h"
#include "zero/Models/Models.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

#include <memory>
#include <string>

using namespace mlir;
using namespace mlir::zero::models;
namespace cl = llvm::cl;

static cl::OptionCategory modelCategory("zero-model options");
static cl::OptionCategory gptCategory("GPT options (gpt, gpt2, gpt2-medium, gpt2-large, gpt2-xl)");
static cl::OptionCategory mlpCategory("MLP options (mlp)");
static cl::OptionCategory llamaCategory(
    "Llama/Qwen3 options (llama, qwen3, llama3-8b, llama3.2-1b, qwen3-0.6b, "
    "qwen3-8b, llama3-debugmodel)");

static cl::opt<std::string>
    modelName(cl::Positional, cl::Required,
              cl::desc("<model: gpt | gpt2 | gpt2-medium | gpt2-large | gpt2-xl | mlp | "
                       "llama | qwen3 | llama3-8b | llama3.2-1b | qwen3-0.6b | qwen3-8b | "
                       "llama3-debugmodel>"),
              cl::cat(modelCategory));
static cl::opt<std::string> outputFilename("o", cl::desc("Output file (default: stdout)"),
                                           cl::value_desc("file"), cl::init("-"),
                                           cl::cat(modelCategory));
static cl::opt<int64_t> batchSize("batch", cl::desc("Batch size B (default 4)"),
                                  cl::value_desc("N"), cl::cat(modelCategory));
static cl::opt<std::string> dtype("dtype",
                                  cl::desc("Element type of parameters and activations: f32 (default), bf16 or f16 (for --precision=bf16-mixed / fp16-mixed)"),
                                  cl::value_desc("f32|bf16|f16"), cl::cat(modelCategory));
static cl::opt<bool> printParamCount("print-param-count",
                                     cl::desc("Print the parameter count instead of the IR"),
                                     cl::cat(modelCategory));

static cl::opt<int64_t> nLayer("n-layer", cl::desc("Transformer blocks L"),
                               cl::value_desc("N"), cl::cat(gptCategory));
static cl::opt<int64_t> nHead("n-head", cl::desc("Attention heads H"),
                              cl::value_desc("N"), cl::cat(gptCategory));
static cl::opt<int64_t> nEmbd("n-embd", cl::desc("Embedding size C (a multiple of H)"),
                              cl::value_desc("N"), cl::cat(gptCategory));
static cl::opt<int64_t> vocab("vocab", cl::desc("Vocabulary size V"),
                              cl::value_desc("N"), cl::cat(gptCategory));
static cl::opt<int64_t> paddedVocab("padded-vocab",
                                    cl::desc("Rows of the token table Vp >= V (0 = V rounded up to a multiple of 128)"),
                                    cl::value_desc("N"), cl::cat(gptCategory));
static cl::opt<int64_t> seqLen("seq", cl::desc("Sequence length T (= position-table rows)"),
                               cl::value_desc("N"), cl::cat(gptCategory));

static cl::opt<int64_t> dim("dim", cl::desc("Hidden size C (hidden_size)"),
                            cl::value_desc("N"), cl::cat(llamaCategory));
static cl::opt<int64_t> nLayers("n-layers", cl::desc("Decoder layers L"),
                                cl::value_desc("N"), cl::cat(llamaCategory));
static cl::opt<int64_t> nHeads("n-heads", cl::desc("Query heads H"),
                               cl::value_desc("N"), cl::cat(llamaCategory));
static cl::opt<int64_t> nKvHeads("n-kv-heads", cl::desc("Key/value heads (dividing H)"),
                                 cl::value_desc("N"), cl::cat(llamaCategory));
static cl::opt<int64_t> headDim("head-dim", cl::desc("Head size D (0 = dim / n-heads)"),
                                cl::value_desc("N"), cl::cat(llamaCategory));
static cl::opt<int64_t> ffnDim("ffn-dim", cl::desc("MLP width F (intermediate_size)"),
                               cl::value_desc("N"), cl::cat(llamaCategory));
static cl::opt<int64_t> multipleOf("multiple-of",
                                   cl::desc("Derive F as Meta/torchtitan: 8C/3 rounded up to a multiple of N"),
                                   cl::value_desc("N"), cl::cat(llamaCategory));
static cl::opt<double> ffnDimMultiplier("ffn-dim-multiplier",
                                        cl::desc("Multiplier of the derived F (before rounding)"),
                                        cl::value_desc("X"), cl::cat(llamaCategory));
static cl::opt<double> ropeTheta("rope-theta", cl::desc("RoPE base theta"),
                                 cl::value_desc("X"), cl::cat(llamaCategory));
static cl::opt<std::string> ropeScaling("rope-scaling",
                                        cl::desc("none, or llama3[:factor,low_freq_factor,high_freq_factor,original_max_positions] (default values 8,1,4,8192)"),
                                        cl::value_desc("spec"), cl::cat(llamaCategory));
static cl::opt<std::string> ropeLayout("rope-layout",
                                       cl::desc("rotate_half (Hugging Face, default) or interleaved (Meta/torchtitan)"),
                                       cl::value_desc("layout"), cl::cat(llamaCategory));
static cl::opt<double> normEps("norm-eps", cl::desc("RMSNorm epsilon"),
                               cl::value_desc("X"), cl::cat(llamaCategory));
static cl::opt<bool> tieEmbeddings("tie-embeddings",
                                   cl::desc("Tie the LM head to the token embedding (=false unties)"),
                                   cl::cat(llamaCategory));
static cl::opt<bool> qkNorm("qk-norm", cl::desc("Qwen3's RMSNorm of q and k over head_dim (=false: off)"),
                            cl::cat(llamaCategory));

static cl::opt<int64_t> inputDim("input", cl::desc("Input features"),
                                 cl::value_desc("N"), cl::cat(mlpCategory));
static cl::list<int64_t> hiddenDims("hidden", cl::desc("Hidden layer widths, comma-separated"),
                                    cl::value_desc("N,N,..."), cl::CommaSeparated,
                                    cl::cat(mlpCategory));
static cl::opt<int64_t> outputDim("output", cl::desc("Output features"),
                                  cl::value_desc("N"), cl::cat(mlpCategory));
static cl::opt<std::string> activation("activation",
                                       cl::desc("Activation between layers: relu (default) or gelu"),
                                       cl::value_desc("relu|gelu"), cl::cat(mlpCategory));
static cl::opt<std::string> mlpLoss("loss",
                                    cl::desc("Loss: mse (default; float targets [B, output]) or "
                                             "cross-entropy (i32 class ids [B] over --output classes)"),
                                    cl::value_desc("mse|cross-entropy"), cl::cat(mlpCategory));

/// Prints "zero-model: error: <message>" and returns exit status 1.
static int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "zero-model") << message << "\n";
  return 1;
}

/// The first option of `options` that was given on the command line, or
/// nullptr.
static cl::Option *firstGiven(std::initializer_list<cl::Option *> options) {
  for (cl::Option *option : options)
    if (option->getNumOccurrences())
      return option;
  return nullptr;
}

/// Sets `field` to the option's value when it was given.
template <typename T>
static void overrideFrom(T &field, const cl::opt<T> &option) {
  if (option.getNumOccurrences())
    field = option;
}

/// The first Llama/Qwen3-only option given, or nullptr.
static cl::Option *firstLlamaOption() {
  return firstGiven({&dim, &nLayers, &nHeads, &nKvHeads, &headDim, &ffnDim,
                     &multipleOf, &ffnDimMultiplier, &ropeTheta, &ropeScaling,
                     &ropeLayout, &normEps, &tieEmbeddings, &qkNorm});
}

/// Parses --rope-scaling: "none", "llama3" or "llama3:f,low,high,original".
static FailureOr<std::optional<RopeScaling>> parseRopeScaling(StringRef spec) {
  if (spec == "none")
    return std::optional<RopeScaling>();
  auto [kind, values] = spec.split(':');
  if (kind != "llama3")
    return failure();
  RopeScaling s;
  if (values.empty() && !spec.contains(':'))
    return std::optional<RopeScaling>(s);
  SmallVector<StringRef> parts;
  values.split(parts, ',');
  if (parts.size() != 4 || parts[0].getAsDouble(s.factor) ||
      parts[1].getAsDouble(s.lowFreqFactor) ||
      parts[2].getAsDouble(s.highFreqFactor) ||
      parts[3].getAsInteger(10, s.originalMaxPositions))
    return failure();
  return std::optional<RopeScaling>(s);
}

/// The preset with the Llama/Qwen3 flags applied; prints the error and
/// fails on a malformed flag.
static FailureOr<LlamaConfig> llamaConfigFromFlags(LlamaConfig config) {
  overrideFrom(config.dim, dim);
  overrideFrom(config.nLayers, nLayers);
  overrideFrom(config.nHeads, nHeads);
  overrideFrom(config.nKvHeads, nKvHeads);
  overrideFrom(config.headDim, headDim);
  overrideFrom(config.vocabSize, vocab);
  overrideFrom(config.ropeTheta, ropeTheta);
  overrideFrom(config.normEps, normEps);
  overrideFrom(config.tieEmbeddings, tieEmbeddings);
  overrideFrom(config.qkNorm, qkNorm);
  overrideFrom(config.seqLen, seqLen);
  overrideFrom(config.batchSize, batchSize);
  bool derive = multipleOf.getNumOccurrences() || ffnDimMultiplier.getNumOccurrences();
  if (derive && ffnDim.getNumOccurrences()) {
    fail("--ffn-dim and --multiple-of/--ffn-dim-multiplier exclude each other");
    return failure();
  }
  overrideFrom(config.ffnDim, ffnDim);
  if (derive) {
    config.ffnDim = 0;
    overrideFrom(config.multipleOf, multipleOf);
    if (ffnDimMultiplier.getNumOccurrences())
      config.ffnDimMultiplier = ffnDimMultiplier.getValue();
  }
  if (ropeScaling.getNumOccurrences()) {
    FailureOr<std::optional<RopeScaling>> s = parseRopeScaling(ropeScaling);
    if (failed(s)) {
      fail("bad --rope-scaling '" + ropeScaling +
           "' (expected none, llama3 or llama3:factor,low,high,original)");
      return failure();
    }
    config.ropeScaling = *s;
  }
  if (ropeLayout.getNumOccurrences()) {
    if (ropeLayout != "rotate_half" && ropeLayout != "interleaved") {
      fail("unknown --rope-layout '" + ropeLayout +
           "' (expected rotate_half or interleaved)");
      return failure();
    }
    config.interleavedRope = ropeLayout == "interleaved";
  }
  return config;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::registerAsmPrinterCLOptions(); // --mlir-print-debuginfo, ...
  cl::HideUnrelatedOptions({&modelCategory, &gptCategory, &mlpCategory, &llamaCategory});
  mlir::zero::setVersionPrinter("zero-model");
  cl::ParseCommandLineOptions(argc, argv, "Zero model generator: writes a training-step "
                                          "input module (train dialect) as MLIR text\n");

  std::optional<ElementType> elementType = ElementType::f32;
  if (dtype.getNumOccurrences()) {
    elementType = parseElementType(dtype);
    if (!elementType)
      return fail("unknown --dtype '" + dtype + "' (expected f32, bf16 or f16)");
  }

  MLIRContext context;
  // Builders report bad configurations as diagnostics: print them as one
  // error line (checkGPTConfig/checkMLPConfig normally catch them first).
  ScopedDiagnosticHandler handler(&context, [](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      fail(diag.str());
    return success();
  });

  FailureOr<OwningOpRef<ModuleOp>> module = failure();
  uint64_t expectedCount = 0;
  if (modelName == "mlp") {
    if (cl::Option *o = firstGiven({&nLayer, &nHead, &nEmbd, &vocab, &paddedVocab, &seqLen}))
      return fail("--" + o->ArgStr + " does not apply to mlp models");
    if (cl::Option *o = firstLlamaOption())
      return fail("--" + o->ArgStr + " does not apply to mlp models");
    if (!inputDim.getNumOccurrences() || !outputDim.getNumOccurrences())
      return fail("mlp needs --input and --output");
    MLPConfig config;
    config.inputDim = inputDim;
    config.hiddenDims.assign(hiddenDims.begin(), hiddenDims.end());
    config.outputDim = outputDim;
    config.batchSize = batchSize.getNumOccurrences() ? batchSize.getValue() : 4;
    config.elementType = *elementType;
    if (activation.getNumOccurrences()) {
      std::optional<Activation> act = parseActivation(activation);
      if (!act)
        return fail("unknown --activation '" + activation + "' (expected relu or gelu)");
      config.activation = *act;
    }
    if (mlpLoss.getNumOccurrences()) {
      std::optional<MLPLoss> loss = parseMLPLoss(mlpLoss);
      if (!loss)
        return fail("unknown --loss '" + mlpLoss + "' (expected mse or cross-entropy)");
      config.loss = *loss;
    }
    if (std::string error = checkMLPConfig(config); !error.empty())
      return fail(error);
    expectedCount = mlpParameterCount(config);
    module = buildMLP(context, config);
  } else if (std::optional<GPTConfig> preset = getGPTPreset(modelName)) {
    if (cl::Option *o = firstGiven({&inputDim, std::addressof(hiddenDims), &outputDim, &activation, &mlpLoss}))
      return fail("--" + o->ArgStr + " does not apply to GPT models");
    if (cl::Option *o = firstLlamaOption())
      return fail("--" + o->ArgStr + " does not apply to GPT models");
    GPTConfig config = *preset;
    overrideFrom(config.nLayer, nLayer);
    overrideFrom(config.nHead, nHead);
    overrideFrom(config.nEmbd, nEmbd);
    overrideFrom(config.vocabSize, vocab);
    overrideFrom(config.paddedVocabSize, paddedVocab);
    overrideFrom(config.seqLen, seqLen);
    overrideFrom(config.batchSize, batchSize);
    config.elementType = *elementType;
    if (std::string error = checkGPTConfig(config); !error.empty())
      return fail(error);
    expectedCount = gptParameterCount(config);
    module = buildGPT(context, config);
  } else if (std::optional<LlamaConfig> preset = getLlamaPreset(modelName)) {
    if (cl::Option *o = firstGiven({&inputDim, std::addressof(hiddenDims), &outputDim,
                                    &activation, &mlpLoss, &nLayer, &nHead, &nEmbd, &paddedVocab}))
      return fail("--" + o->ArgStr + " does not apply to Llama/Qwen3 models");
    FailureOr<LlamaConfig> config = llamaConfigFromFlags(*preset);
    if (failed(config))
      return 1; // llamaConfigFromFlags printed the error.
    config->elementType = *elementType;
    if (std::string error = checkLlamaConfig(*config); !error.empty())
      return fail(error);
    expectedCount = llamaParameterCount(*config);
    module = buildLlama(context, *config);
  } else {
    return fail("unknown model '" + modelName + "' (expected " +
                llvm::join(getGPTPresetNames(), ", ") + ", mlp or " +
                llvm::join(getLlamaPresetNames(), ", ") + ")");
  }
  if (failed(module))
    return 1; // The handler printed the error.
  if (failed(verify(**module)))
    return fail("internal error: the generated module does not verify");

  std::string errorMessage;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &errorMessage);
  if (!output)
    return fail(errorMessage);
  if (printParamCount) {
    uint64_t count = countParameters(**module);
    if (count != expectedCount)
      return fail("internal error: counted " + llvm::Twine(count) +
                  " parameters, closed form gives " + llvm::Twine(expectedCount));
    output->os() << count << "\n";
  } else {
    (*module)->print(output->os());
    output->os() << "\n";
  }
  output->keep();
  return 0;
}
