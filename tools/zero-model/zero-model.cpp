//===- zero-model.cpp - generate model training graphs --------------------===//
///
/// \file
/// `zero-model` writes the input of Zero's training-step contract (train
/// dialect parameters + `func.func @forward` returning the loss) for a
/// named model, as MLIR text:
///
///   zero-model gpt2 [--n-layer N --n-head N --n-embd N --vocab N
///                    --padded-vocab N --seq N --batch N --dtype f32|bf16]
///                   [--print-param-count] [-o file]
///   zero-model mlp --input N [--hidden 64,64] --output N [--batch N]
///                  [--activation relu|gelu] [--dtype f32|bf16] [-o file]
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

static cl::opt<std::string>
    modelName(cl::Positional, cl::Required,
              cl::desc("<model: gpt | gpt2 | gpt2-medium | gpt2-large | gpt2-xl | mlp>"),
              cl::cat(modelCategory));
static cl::opt<std::string> outputFilename("o", cl::desc("Output file (default: stdout)"),
                                           cl::value_desc("file"), cl::init("-"),
                                           cl::cat(modelCategory));
static cl::opt<int64_t> batchSize("batch", cl::desc("Batch size B (default 4)"),
                                  cl::value_desc("N"), cl::cat(modelCategory));
static cl::opt<std::string> dtype("dtype",
                                  cl::desc("Element type of parameters and activations: f32 (default) or bf16"),
                                  cl::value_desc("f32|bf16"), cl::cat(modelCategory));
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

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::registerAsmPrinterCLOptions(); // --mlir-print-debuginfo, ...
  cl::HideUnrelatedOptions({&modelCategory, &gptCategory, &mlpCategory});
  cl::ParseCommandLineOptions(argc, argv, "Zero model generator: writes a training-step "
                                          "input module (train dialect) as MLIR text\n");

  std::optional<ElementType> elementType = ElementType::f32;
  if (dtype.getNumOccurrences()) {
    elementType = parseElementType(dtype);
    if (!elementType)
      return fail("unknown --dtype '" + dtype + "' (expected f32 or bf16)");
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
    if (std::string error = checkMLPConfig(config); !error.empty())
      return fail(error);
    expectedCount = mlpParameterCount(config);
    module = buildMLP(context, config);
  } else if (std::optional<GPTConfig> preset = getGPTPreset(modelName)) {
    if (cl::Option *o = firstGiven({&inputDim, std::addressof(hiddenDims), &outputDim, &activation}))
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
  } else {
    return fail("unknown model '" + modelName + "' (expected " +
                llvm::join(getGPTPresetNames(), ", ") + " or mlp)");
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
