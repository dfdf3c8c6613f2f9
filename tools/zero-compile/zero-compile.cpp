//===- zero-compile.cpp - training-step IR to a training executable -------===//
///
/// \file
/// `zero-compile` is the compiler driver: it takes a model's forward graph
/// (train dialect, e.g. from zero-model) and produces a training program.
///
///   zero-compile model.mlir|model.py|HF-dir|gpt2 [--stage=0..3|auto] [--world-size=N]
///       [--precision=fp32|bf16-mixed|fp16-mixed] [--max-grad-norm=F] [--weight-decay=F]
///       [--beta1=F] [--beta2=F] [--eps=F] [--decay-min-rank=N]
///       [--grouping=block|param] [--device-memory=BYTES]
///       [--bucket-bytes=BYTES] [--prefetch=N] [--max-live-bytes=BYTES]
///       [--buffer-assign=true|false]
///       [--emit=mlir|cpp|exe] [--target=cpu|cuda] [-o out] [--keep-temps]
///       [--cxx PATH] [--model-name NAME] [--extra-source FILE]...
///
/// A `.py` file, a Hugging Face model directory or a family name is first
/// imported with zero-import (tools/zero-import, `--import-arg` passes it
/// arguments) into `<output>.import.mlir` (+ `.import.safetensors`, the
/// initial weights for the program's --import).
///
/// Pipeline: train-autodiff, train-optimizer, zero-partition (each skipped
/// when the input already went through it: @forward_backward,
/// @optimizer_step, the zero.stage attribute), zero-bucket and zero-prefetch
/// when their options are given, zero-buffer-assign (unless the input is
/// already assigned; --buffer-assign=false: strategy=bump), then
/// convert-train-to-emitc
/// and mlir::emitc::translateToCpp. `--emit=mlir` stops before the
/// lowering, `--emit=cpp` writes the C++, `--emit=exe` (the default) also
/// runs the host compiler:
///
///   CXX -O2 -fopenmp -std=c++17 -I<runtime include> gen.cpp
///       <libzero_runtime.a> <MPI C link flags> <OpenBLAS> -o out
///
/// or, with --target=cuda, the same C++ linked against the CUDA backend
/// (libzero_runtime_cuda.a, the CUDA runtime, cuBLAS, NCCL and MPI when the
/// runtime was built with them). The generated C++ is the same for both
/// targets: it reaches memory only through the runtime's C ABI.
///
/// with CXX from --cxx, else $ZERO_CXX, else $CXX, else the compiler CMake
/// configured (ZERO_HOST_CXX). The runtime (headers and static libraries) is
/// the one in --runtime-dir DIR, else $ZERO_RUNTIME_DIR, else the prefix
/// zero-compile is installed in (<bin>/../lib/libzero_runtime.a with
/// <bin>/../include/zrt/model.h: `cmake --install`, moved anywhere), else
/// the build tree it was built in (ZeroCompileConfig.h); the link flags of
/// its dependencies (MPI, OpenBLAS; CUDA) are fixed at configure time.
/// zero-compile itself does not link the runtime. When the host compiler fails, its output is printed
/// with a command line that reproduces the failure (the C++ file is kept),
/// and the exit status is 1.
///
//===----------------------------------------------------------------------===//

#include "HostCompile.h"

#include "zero/InitAll.h"
#include "zero/Conversion/Passes.h"
#include "zero/Support/Version.h"
#include "zero/Transforms/Passes.h"
#include "zero/Transforms/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/Cpp/CppEmitter.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

using namespace mlir;
using namespace zero_compile;
namespace cl = llvm::cl;

/// argv[0], for finding the installed prefix (HostCompile.h).
static const char *mainArgv0 = "zero-compile";

static cl::OptionCategory category("zero-compile options");

static cl::opt<std::string> inputFilename(
    cl::Positional, cl::Required,
    cl::desc("<model.mlir | model.py | Hugging Face dir | gpt2|llama|qwen3|"
             "mistral>"),
    cl::cat(category));
static cl::list<std::string> importArgs(
    "import-arg", cl::value_desc("arg"), cl::cat(category),
    cl::desc("With a .py, Hugging Face or family input: an argument for "
             "zero-import (e.g. --import-arg=--batch=8 "
             "--import-arg=--set=n_layer=2)"));
static cl::opt<std::string>
    outputFilename("o", cl::value_desc("file"), cl::cat(category),
                   cl::desc("Output (default: a.out for exe, stdout else)"));
static cl::opt<std::string> emit("emit", cl::init("exe"), cl::cat(category),
                                 cl::value_desc("mlir|cpp|exe"),
                                 cl::desc("What to produce: the partitioned IR "
                                          "(before lowering), the C++, or an "
                                          "executable (default)"));
static cl::opt<std::string> target("target", cl::init("cpu"), cl::cat(category),
                                   cl::value_desc("cpu|cuda"),
                                   cl::desc("Code generation target"));
static cl::opt<bool> keepTemps("keep-temps", cl::cat(category),
                               cl::desc("--emit=exe: keep the C++ as "
                                        "<output>.gen.cpp"));
static cl::opt<std::string>
    cxx("cxx", cl::value_desc("path"), cl::cat(category),
        cl::desc("Host C++ compiler (default: $ZERO_CXX, "
                 "$CXX, then the configured one)"));
static cl::list<std::string>
    extraSources("extra-source", cl::value_desc("file"), cl::cat(category),
                 cl::desc("--emit=exe: also compile and link this C++ file "
                          "(e.g. a test harness that defines zrt_train_main "
                          "in place of the runtime's driver)"));
static cl::opt<std::string> runtimeDir(
    "runtime-dir", cl::value_desc("dir"), cl::cat(category),
    cl::desc("Prefix of the runtime to link: DIR/include/zrt, "
             "DIR/lib/libzero_runtime.a (default: $ZERO_RUNTIME_DIR, else "
             "the prefix zero-compile is installed in, else its build tree)"));
static cl::opt<std::string>
    modelName("model-name", cl::value_desc("name"), cl::cat(category),
              cl::desc("Model name in the program's "
                       "description (zero.model_name)"));

// zero-partition.
static cl::opt<std::string> stage("stage", cl::init("0"), cl::cat(category),
                                  cl::value_desc("0|1|2|3|auto"),
                                  cl::desc("ZeRO stage (zero-partition)"));
static cl::opt<int64_t> tensorParallel(
    "tensor-parallel", cl::init(1), cl::cat(category),
    cl::desc("Tensor-parallel size M (zero-tensor-parallel, Megatron's "
             "MLP/attention cuts; --world-size is N = N_d x M)"));
static cl::opt<bool> vocabParallel(
    "vocab-parallel", cl::init(false), cl::cat(category),
    cl::desc("With --tensor-parallel=M: cut the token embedding, the LM head "
             "and the cross-entropy by vocabulary over the M tensor ranks "
             "(zero-vocab-parallel, Megatron's vocab-parallel embedding and "
             "cross-entropy)"));
static cl::opt<bool> sequenceParallel(
    "sequence-parallel", cl::init(false), cl::cat(category),
    cl::desc("With --tensor-parallel=M: cut the token rows of the norms and "
             "residual adds between the tensor-parallel regions over the M "
             "tensor ranks (zero-sequence-parallel, Korthikanti et al.; the "
             "sequence length must divide by M)"));
static cl::opt<bool> sequenceRegather(
    "sequence-regather", cl::init(true), cl::cat(category),
    cl::desc("With --sequence-parallel: the backward all-gathers the token "
             "rows again instead of keeping the gathered activations "
             "(zero-sequence-regather; default on, as Megatron)"));
static cl::opt<int64_t> worldSize("world-size", cl::init(1), cl::cat(category),
                                  cl::value_desc("N"),
                                  cl::desc("Data-parallel ranks N"));
static cl::opt<std::string> grouping("grouping", cl::cat(category),
                                     cl::value_desc("block|param"),
                                     cl::desc("Shard groups (zero-partition)"));
static cl::opt<int64_t>
    deviceMemory("device-memory", cl::cat(category), cl::value_desc("bytes"),
                 cl::desc("Bytes per rank for --stage=auto"));

static cl::opt<int64_t> persistThreshold(
    "persist-threshold", cl::cat(category), cl::value_desc("elements"),
    cl::desc("Stage 3: parameters of at most this many elements stay whole "
             "(zero-partition)"));
// train-checkpoint.
static cl::opt<std::string>
    checkpointPolicy("checkpoint", cl::init("none"), cl::cat(category),
                     cl::value_desc("none|block"),
                     cl::desc("Activation checkpointing: recompute each block "
                              "in the backward (train-checkpoint)"));
static cl::opt<std::string> checkpointPartition(
    "checkpoint-partition", cl::init("none"), cl::cat(category),
    cl::value_desc("none|tensor"),
    cl::desc("With --checkpoint=block and --tensor-parallel=M: keep 1/M of "
             "each block input per tensor rank, all-gathered before its "
             "recomputation (ZeRO-R's P_a)"));
static cl::opt<std::string> checkpointOffload(
    "checkpoint-offload", cl::init("none"), cl::cat(category),
    cl::value_desc("none|host"),
    cl::desc("With --checkpoint-partition=tensor: P_a's slices in host "
             "memory (P_a+cpu; on the CPU backend they are already)"));

// train-fuse-epilogues.
static cl::opt<bool> fuseEpilogues(
    "fuse-epilogues", cl::init(true), cl::cat(category),
    cl::desc("Fuse GELU and its gradient into the neighbouring matmuls "
             "(train-fuse-epilogues; default on)"));

// train-fuse-layer-norm.
static cl::opt<bool> fuseLayerNorm(
    "fuse-layer-norm", cl::init(true), cl::cat(category),
    cl::desc("Fuse residual adds into the layer norms next to them, forward "
             "and backward (train-fuse-layer-norm; default on)"));

// zero-fuse-state-runs.
static cl::opt<bool> fuseStateRuns(
    "fuse-state-runs", cl::init(true), cl::cat(category),
    cl::desc("Zero runs of adjacent gradient states with one call "
             "(zero-fuse-state-runs; default on)"));

// train-fuse-adamw-cast.
static cl::opt<bool> fuseAdamWCast(
    "fuse-adamw-cast", cl::init(true), cl::cat(category),
    cl::desc("Let the AdamW call write the bf16 parameter copy "
             "(train-fuse-adamw-cast; default on)"));

// train-fuse-cross-entropy.
static cl::opt<bool> fuseCrossEntropy(
    "fuse-cross-entropy", cl::init(true), cl::cat(category),
    cl::desc("Compute the loss and its gradient in one pass, the gradient "
             "over the logits (train-fuse-cross-entropy; default on)"));

// zero-bucket and zero-prefetch (run only when asked for).
static cl::opt<int64_t> bucketBytes("bucket-bytes", cl::cat(category),
                                    cl::value_desc("bytes"),
                                    cl::desc("Fuse the collectives of shard "
                                             "groups into buckets of at most "
                                             "this size (zero-bucket)"));
static cl::opt<int64_t>
    prefetchDistance("prefetch", cl::cat(category), cl::value_desc("N"),
                     cl::desc("Split collectives into start/wait and hoist "
                              "all-gathers up to N ahead (zero-prefetch)"));
static cl::opt<bool> bufferAssign(
    "buffer-assign", cl::init(true), cl::cat(category),
    cl::desc("Place activations and temporaries by liveness "
             "(zero-buffer-assign; default on); false places them in "
             "program order without reuse (zero-buffer-assign "
             "strategy=bump)"));
static cl::opt<int64_t> maxLiveBytes(
    "max-live-bytes", cl::cat(category), cl::value_desc("bytes"),
    cl::desc("zero-prefetch: bound on gathered bytes live at once"));

// train-optimizer.
static cl::opt<std::string> precision("precision", cl::cat(category),
                                      cl::value_desc("fp32|bf16-mixed|fp16-mixed"),
                                      cl::desc("Precision (train-optimizer; "
                                               "fp16-mixed: f16 storage, f32 "
                                               "arithmetic, dynamic loss "
                                               "scaling)"));
static cl::opt<std::string> maxGradNorm("max-grad-norm", cl::cat(category),
                                        cl::value_desc("F"),
                                        cl::desc("Gradient clipping norm"));
static cl::opt<std::string> weightDecay("weight-decay", cl::cat(category),
                                        cl::value_desc("F"),
                                        cl::desc("AdamW weight decay"));
static cl::opt<std::string> beta1("beta1", cl::cat(category),
                                  cl::value_desc("F"), cl::desc("AdamW beta1"));
static cl::opt<std::string> beta2("beta2", cl::cat(category),
                                  cl::value_desc("F"), cl::desc("AdamW beta2"));
static cl::opt<std::string> eps("eps", cl::cat(category), cl::value_desc("F"),
                                cl::desc("AdamW epsilon"));
static cl::opt<std::string> decayMinRank("decay-min-rank", cl::cat(category),
                                         cl::value_desc("N"),
                                         cl::desc("Only parameters of at least "
                                                  "this rank decay"));

/// `name=value` for each option given on the command line.
static std::string passOptions(
    std::initializer_list<std::pair<const char *, cl::opt<std::string> *>>
        opts) {
  std::string out;
  for (auto [name, opt] : opts)
    if (opt->getNumOccurrences())
      out += std::string(out.empty() ? "" : " ") + name + "=" + opt->getValue();
  return out;
}

/// An explicit flag whose pass the input already went through must agree
/// with the input: --stage / --world-size with the module's zero.stage /
/// zero.world_size; the flags of train-optimizer, train-checkpoint and the
/// partition's other options cannot be applied again, so giving them is an
/// error (never silently dropped).
static LogicalResult checkAgainstInput(ModuleOp module, bool hasStep,
                                       bool hasOptimizer, bool partitioned) {
  auto refuse = [&](StringRef flag, StringRef done) {
    error("the input " + done + ", so " + flag +
          " cannot change it; drop the flag, or compile the forward graph");
    return failure();
  };
  for (cl::opt<std::string> *opt :
       {&checkpointPolicy, &checkpointPartition, &checkpointOffload})
    if (hasStep && opt->getNumOccurrences())
      return refuse("--" + opt->ArgStr.str(),
                    "already has @forward_backward (train-autodiff ran)");
  if (hasOptimizer)
    for (cl::opt<std::string> *opt : {&precision, &maxGradNorm, &weightDecay,
                                      &beta1, &beta2, &eps, &decayMinRank})
      if (opt->getNumOccurrences())
        return refuse("--" + opt->ArgStr.str(),
                      "already has @optimizer_step (train-optimizer ran)");
  if (!partitioned)
    return success();
  auto attrValue = [&](StringRef name) -> int64_t {
    auto a = module->getAttrOfType<IntegerAttr>(name);
    return a ? a.getInt() : -1;
  };
  const int64_t inStage = attrValue("zero.stage"),
                inWorld = attrValue("zero.world_size");
  const std::string was = "is already partitioned (stage " +
                          std::to_string(inStage) + ", world size " +
                          std::to_string(inWorld) + ")";
  if (stage.getNumOccurrences() && stage != std::to_string(inStage))
    return refuse("--stage=" + stage, was);
  if (worldSize.getNumOccurrences() && worldSize != inWorld)
    return refuse("--world-size=" + std::to_string(worldSize), was);
  for (cl::Option *opt : std::initializer_list<cl::Option *>{
           &grouping, &deviceMemory, &persistThreshold})
    if (opt->getNumOccurrences())
      return refuse("--" + opt->ArgStr.str(), was);
  return success();
}

/// Whether the input is a model for zero-import rather than MLIR: a .py
/// file, a directory (Hugging Face), or a family name that is not a file.
static bool isImportInput(StringRef input) {
  if (input.ends_with(".py") || llvm::sys::fs::is_directory(input))
    return true;
  return !llvm::sys::fs::exists(input) &&
         llvm::is_contained({"gpt2", "llama", "qwen3", "mistral"}, input);
}

/// Runs zero-import (next to this executable) on the input; returns the
/// module it wrote, `<output>.import.mlir` (its initial weights, when the
/// model has any, are `<output>.import.safetensors`: the program's --import).
static FailureOr<std::string> importModel(const char *argv0) {
  std::string self = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&isImportInput));
  SmallString<256> tool(llvm::sys::path::parent_path(self));
  llvm::sys::path::append(tool, "zero-import");
  if (!llvm::sys::fs::can_execute(tool)) {
    error("'" + inputFilename + "' is a model for zero-import, which is not "
          "at " + tool.str().str());
    return failure();
  }
  SmallString<256> base(!outputFilename.empty() && outputFilename != "-"
                             ? outputFilename.getValue()
                             : (emit == "exe" ? "a.out" : "model"));
  if (llvm::sys::path::extension(base) == ".mlir" ||
      llvm::sys::path::extension(base) == ".cpp")
    llvm::sys::path::replace_extension(base, "");
  std::string module = base.str().str() + ".import.mlir";
  SmallVector<std::string> args = {tool.str().str(), inputFilename, "-o",
                                   module};
  args.append(importArgs.begin(), importArgs.end());
  SmallVector<StringRef> argRefs(args.begin(), args.end());
  std::string message;
  int status = llvm::sys::ExecuteAndWait(tool, argRefs, std::nullopt, {}, 0,
                                         0, &message);
  if (status != 0) {
    // zero-import printed its one-line error.
    if (!message.empty())
      error("zero-import failed: " + message);
    return failure();
  }
  return module;
}

/// --version's lines after the version: what a compiled program is made of
/// (zero-train hashes them into its cache key).
static void printCompileVersion(llvm::raw_ostream &os) {
  const RuntimePaths &rt = runtimePaths(runtimeDir, mainArgv0);
  if (!rt.error.empty()) {
    os << "runtime: none (" << rt.error << ")\n";
  } else {
    os << "runtime library: " << rt.library << "\n";
    os << "runtime headers: " << rt.include << "\n";
    if (!rt.cudaLibrary.empty())
      os << "cuda runtime library: " << rt.cudaLibrary << "\n";
    os << "runtime from: " << rt.from << "\n";
  }
  os << "host compiler: " << hostCompiler(cxx) << "\n";
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mainArgv0 = argv[0];
  zero::setVersionPrinter("zero-compile", printCompileVersion);
  zero::registerAllPasses();
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "Zero compiler driver: training-step IR -> "
                              "training executable\n");

  if (emit != "mlir" && emit != "cpp" && emit != "exe")
    return error("unknown --emit '" + emit + "' (expected mlir, cpp or exe)");
  if (target != "cpu" && target != "cuda")
    return error("unknown --target '" + target + "' (expected cpu or cuda)");
  if (worldSize < 1)
    return error("--world-size must be at least 1");
  if (tensorParallel < 1 || worldSize % tensorParallel != 0)
    return error("--tensor-parallel=" + std::to_string(tensorParallel) +
                 " must be at least 1 and divide --world-size=" +
                 std::to_string(worldSize));
  if (checkpointPartition.getNumOccurrences() &&
      checkpointPartition != "none") {
    if (checkpointPolicy != "block")
      return error("--checkpoint-partition=" + checkpointPartition +
                   " partitions the checkpoints of --checkpoint=block; add "
                   "it");
    if (checkpointPartition == "tensor" && tensorParallel < 2)
      return error("--checkpoint-partition=tensor keeps 1/M of each "
                   "checkpoint on each of M tensor ranks; it needs "
                   "--tensor-parallel=M with M > 1 (got " +
                   std::to_string(tensorParallel) + ")");
  }
  if (checkpointOffload != "none" && checkpointOffload != "host")
    return error("unknown --checkpoint-offload '" + checkpointOffload +
                 "' (expected none or host)");
  if (checkpointOffload == "host" && checkpointPolicy != "block")
    return error("--checkpoint-offload=host moves the checkpoints of "
                 "--checkpoint=block to host memory; add --checkpoint=block "
                 "--checkpoint-partition=tensor");
  if (checkpointOffload == "host" && checkpointPartition != "tensor")
    return error("--checkpoint-offload=host moves P_a's 1/M checkpoint slices "
                 "to host memory; it needs --checkpoint-partition=tensor");
  if (vocabParallel && tensorParallel < 2)
    return error("--vocab-parallel cuts the vocabulary over the M tensor "
                 "ranks; it needs --tensor-parallel=M with M > 1 (got " +
                 std::to_string(tensorParallel) + ")");
  if (sequenceParallel && tensorParallel < 2)
    return error("--sequence-parallel cuts token rows over the M tensor "
                 "ranks; it needs --tensor-parallel=M with M > 1 (got " +
                 std::to_string(tensorParallel) + ")");
  if (sequenceRegather.getNumOccurrences() && !sequenceParallel)
    return error("--sequence-regather chooses how --sequence-parallel keeps "
                 "the token rows for the backward; add --sequence-parallel");
  if (sequenceParallel && checkpointPartition == "tensor")
    return error("--sequence-parallel with --checkpoint-partition=tensor: "
                 "the block inputs are cut over the tensor ranks already "
                 "(P_a partitions replicated checkpoints); drop one");
  if (modelName.getNumOccurrences() && modelName.empty())
    return error("--model-name: the name is empty");
  // Files: every --extra-source exists, and the output replaces no input.
  for (const std::string &extra : extraSources)
    if (!llvm::sys::fs::is_regular_file(extra))
      return error("--extra-source '" + extra + "': no such file");
  if (!outputFilename.empty() && outputFilename != "-") {
    auto same = [&](StringRef input) {
      return input != "-" && llvm::sys::fs::equivalent(input, outputFilename);
    };
    if (same(inputFilename))
      return error("-o '" + outputFilename +
                   "' is the input file: writing it would destroy the input "
                   "(choose another path)");
    for (const std::string &extra : extraSources)
      if (same(extra))
        return error("-o '" + outputFilename + "' is the --extra-source file '" +
                     extra + "'");
  }
  // Options that only turn a pass on: an explicit value must be in range
  // (zero-opt's passes reject the same values), never "off" in disguise.
  if (bucketBytes.getNumOccurrences() && bucketBytes < 1)
    return error("--bucket-bytes must be at least 1 (got " +
                 std::to_string(bucketBytes) +
                 "); omit it to keep one collective per shard group");
  if (prefetchDistance.getNumOccurrences() && prefetchDistance < 0)
    return error("--prefetch must be >= 0 (got " +
                 std::to_string(prefetchDistance) +
                 "; 0 splits collectives without hoisting); omit it to keep "
                 "them blocking");
  if (maxLiveBytes.getNumOccurrences() && maxLiveBytes < 0)
    return error("--max-live-bytes must be >= 0 (got " +
                 std::to_string(maxLiveBytes) + "; 0 = unbounded)");
  if (deviceMemory.getNumOccurrences() && deviceMemory < 1)
    return error("--device-memory must be at least 1 byte (got " +
                 std::to_string(deviceMemory) + ")");
  if (persistThreshold.getNumOccurrences() && persistThreshold < 0)
    return error("--persist-threshold must be >= 0 (got " +
                 std::to_string(persistThreshold) + ")");

  DialectRegistry registry;
  zero::registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // A diagnostic names its location; it does not append the op it is
  // attached to (for a pass option error, the whole module).
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  std::string input = inputFilename;
  if (isImportInput(input)) {
    FailureOr<std::string> imported = importModel(argv[0]);
    if (failed(imported))
      return 1;
    input = *imported;
  } else if (!importArgs.empty()) {
    return error("--import-arg applies to .py, Hugging Face and family "
                 "inputs, not to '" + inputFilename + "'");
  }
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(input, sourceMgr, &context);
  if (!module)
    return 1;
  if (!modelName.empty())
    (*module)->setAttr("zero.model_name", StringAttr::get(&context, modelName));

  // The training-step pipeline (the builder zero-opt registers as
  // --zero-training-pipeline), skipping what the input already went through.
  std::string pipeline;
  auto add = [&](const std::string &option) {
    pipeline += (pipeline.empty() ? "" : " ") + option;
  };
  bool hasStep = static_cast<bool>(module->lookupSymbol("forward_backward"));
  bool hasOptimizer = static_cast<bool>(module->lookupSymbol("optimizer_step"));
  bool partitioned = (*module)->hasAttr("zero.stage");
  if (failed(checkAgainstInput(*module, hasStep, hasOptimizer, partitioned)))
    return 1;
  if (tensorParallel != 1) {
    if (hasStep)
      return error("--tensor-parallel=" + std::to_string(tensorParallel) +
                   ": the input is differentiated already; "
                   "zero-tensor-parallel cuts the forward graph");
    add("tensor-parallel=" + std::to_string(tensorParallel));
    if (vocabParallel)
      add("vocab-parallel=true");
    if (sequenceParallel)
      add("sequence-parallel=true");
    if (sequenceParallel && !sequenceRegather)
      add("sequence-regather=false");
  }
  add(std::string("autodiff=") + (hasStep ? "false" : "true"));
  if (!hasStep)  {
    add("checkpoint=" + checkpointPolicy);
    add("checkpoint-partition=" + checkpointPartition);
    add("checkpoint-offload=" + checkpointOffload);
    if (checkpointOffload == "host")
      add("target=" + target);
  }
  add(std::string("fuse-epilogues=") + (fuseEpilogues ? "true" : "false"));
  add(std::string("fuse-layer-norm=") + (fuseLayerNorm ? "true" : "false"));
  add(std::string("fuse-cross-entropy=") +
      (fuseCrossEntropy ? "true" : "false"));
  add(std::string("optimizer=") + (hasOptimizer ? "false" : "true"));
  if (!hasOptimizer) {
    std::string opts = passOptions({{"precision", &precision},
                                    {"max-grad-norm", &maxGradNorm},
                                    {"weight-decay", &weightDecay},
                                    {"beta1", &beta1},
                                    {"beta2", &beta2},
                                    {"eps", &eps},
                                    {"decay-min-rank", &decayMinRank}});
    if (!opts.empty())
      add(opts);
  }
  add(std::string("partition=") + (partitioned ? "false" : "true"));
  if (!partitioned) {
    add("stage=" + stage + " world-size=" + std::to_string(worldSize));
    if (grouping.getNumOccurrences())
      add("grouping=" + grouping);
    if (deviceMemory.getNumOccurrences())
      add("device-memory=" + std::to_string(deviceMemory));
    if (persistThreshold.getNumOccurrences())
      add("persist-threshold=" + std::to_string(persistThreshold));
  }
  if (bucketBytes.getNumOccurrences())
    add("bucket-bytes=" + std::to_string(bucketBytes));
  if (prefetchDistance.getNumOccurrences() || maxLiveBytes.getNumOccurrences())
    add("prefetch=" +
        std::to_string(prefetchDistance.getNumOccurrences() ? prefetchDistance
                                                            : int64_t(1)));
  if (maxLiveBytes.getNumOccurrences())
    add("max-live-bytes=" + std::to_string(maxLiveBytes));
  add(std::string("fuse-adamw-cast=") +
      (fuseAdamWCast && !(*module)->hasAttr("zero.arena_bytes") ? "true"
                                                                : "false"));
  add(std::string("fuse-state-runs=") +
      (fuseStateRuns && !(*module)->hasAttr("zero.arena_bytes") ? "true"
                                                                : "false"));
  // zero-buffer-assign owns storage and the lowering needs it: it runs
  // unless the input is assigned already; --buffer-assign=false only
  // changes its strategy.
  add(std::string("buffer-assign=") +
      (!(*module)->hasAttr("zero.arena_bytes") ? "true" : "false"));
  if (!bufferAssign)
    add("buffer-strategy=bump");
  std::unique_ptr<zero::TrainingPipelineOptions> pipelineOptions =
      zero::TrainingPipelineOptions::createFromString(pipeline);
  if (!pipelineOptions)
    return error("bad pipeline options: " + pipeline);
  PassManager pm(&context);
  zero::buildTrainingPipeline(pm, *pipelineOptions);
  if (failed(pm.run(*module)))
    return 1;

  std::string defaultOut = emit == "exe" ? "a.out" : "-";
  std::string out = outputFilename.empty() ? defaultOut : outputFilename;
  std::string errorMessage;
  if (emit == "mlir") {
    auto file = openOutputFile(out, &errorMessage);
    if (!file)
      return error(errorMessage);
    module->print(file->os());
    file->keep();
    return 0;
  }

  // What the program says about itself (--print-config, --version): the
  // compiler and the pass pipeline, not the target (the C++ is the same for
  // both targets).
  (*module)->setAttr("zero.compile_version",
                     StringAttr::get(&context, std::string("zero-compile (Zero) ") +
                                                   zero::versionString()));
  (*module)->setAttr("zero.compile_flags", StringAttr::get(&context, pipeline));
  PassManager lower(&context);
  lower.addPass(zero::createConvertTrainToEmitC());
  if (failed(lower.run(*module)))
    return 1;
  std::string cpp;
  llvm::raw_string_ostream cppStream(cpp);
  if (failed(emitc::translateToCpp(*module, cppStream)))
    return 1;

  if (emit == "cpp") {
    auto file = openOutputFile(out, &errorMessage);
    if (!file)
      return error(errorMessage);
    file->os() << cpp;
    file->keep();
    return 0;
  }

  // --emit=exe: the output's directory must exist before the host compiler
  // runs.
  StringRef outDir = llvm::sys::path::parent_path(out);
  if (!outDir.empty() && !llvm::sys::fs::is_directory(outDir))
    return error("cannot write '" + out + "': no directory '" + outDir.str() +
                 "'");
  // The C++ goes to a temporary file (or <out>.gen.cpp).
  SmallString<128> cppPath;
  if (keepTemps) {
    cppPath = out + ".gen.cpp";
  } else if (llvm::sys::fs::createTemporaryFile("zero-compile-gen", "cpp",
                                                cppPath)) {
    return error("cannot create a temporary file");
  }
  {
    auto file = openOutputFile(cppPath, &errorMessage);
    if (!file)
      return error(errorMessage);
    file->os() << cpp;
    file->keep();
  }
  int status = compileExecutable(
      cppPath, out,
      {runtimeDir, cxx, target == "cuda",
       std::vector<std::string>(extraSources.begin(), extraSources.end())},
      mainArgv0);
  if (status != 0) {
    llvm::errs() << "zero-compile: the generated C++ is kept at " << cppPath
                 << "\n";
    return status;
  }
  if (!keepTemps)
    llvm::sys::fs::remove(cppPath);
  return 0;
}
