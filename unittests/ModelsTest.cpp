//===- ModelsTest.cpp - tests of the model generators (lib/Models) --------===//

#include "zero/Models/Models.h"

#include "Train/TrainOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

using namespace mlir;
using namespace mlir::zero::models;

namespace {

class ModelsTest : public ::testing::Test {
protected:
  /// Collects error diagnostics into `errors` (and keeps them off stderr).
  ModelsTest()
      : handler(&ctx, [this](Diagnostic &diag) {
          errors += diag.str();
          return success();
        }) {}

  /// A small GPT that builds and verifies in milliseconds.
  static GPTConfig tiny() {
    GPTConfig c;
    c.nLayer = 2;
    c.nHead = 2;
    c.nEmbd = 16;
    c.vocabSize = 100;
    c.seqLen = 8;
    c.batchSize = 2;
    return c;
  }

  /// Builds `config`, expects success and a module that verifies.
  OwningOpRef<ModuleOp> buildValidGPT(const GPTConfig &config) {
    FailureOr<OwningOpRef<ModuleOp>> module = buildGPT(ctx, config);
    EXPECT_TRUE(succeeded(module)) << errors;
    if (failed(module))
      return nullptr;
    EXPECT_TRUE(succeeded(verify(**module))) << errors;
    return std::move(*module);
  }

  MLIRContext ctx;
  std::string errors;
  ScopedDiagnosticHandler handler;
};

TEST_F(ModelsTest, TinyGPTVerifiesAndHasTheContractSignature) {
  OwningOpRef<ModuleOp> module = buildValidGPT(tiny());
  ASSERT_TRUE(module);
  auto forward = module->lookupSymbol<func::FuncOp>("forward");
  ASSERT_TRUE(forward);
  FunctionType type = forward.getFunctionType();
  ASSERT_EQ(type.getNumInputs(), 2u);
  auto ids = RankedTensorType::get({2, 8}, IntegerType::get(&ctx, 32));
  EXPECT_EQ(type.getInput(0), ids);
  EXPECT_EQ(type.getInput(1), ids);
  ASSERT_EQ(type.getNumResults(), 1u);
  EXPECT_EQ(type.getResult(0), RankedTensorType::get({}, Float32Type::get(&ctx)));

  // Tied head: no lm_head parameter, wte padded to 128 rows, loss over 100.
  EXPECT_FALSE(module->lookupSymbol("lm_head.weight"));
  auto wte = module->lookupSymbol<train::ParamOp>("wte");
  ASSERT_TRUE(wte);
  EXPECT_EQ(wte.getTensorType().getShape(), (ArrayRef<int64_t>{128, 16}));
  int crossEntropies = 0;
  module->walk([&](train::CrossEntropyOp op) {
    ++crossEntropies;
    EXPECT_EQ(op.getEffectiveNumClasses(), 100);
  });
  EXPECT_EQ(crossEntropies, 1);

  // GPT-2's scaled init of the residual projections.
  auto proj = module->lookupSymbol<train::ParamOp>("h1.mlp.c_proj.weight");
  ASSERT_TRUE(proj);
  EXPECT_EQ(proj.getTensorType().getShape(), (ArrayRef<int64_t>{16, 64}));
  EXPECT_EQ(proj.getInit().getKind(), train::InitKind::normal);
  EXPECT_DOUBLE_EQ(proj.getInit().getStdDev(), 0.02 / std::sqrt(4.0));
  auto fc = module->lookupSymbol<train::ParamOp>("h1.mlp.c_fc.weight");
  ASSERT_TRUE(fc);
  EXPECT_DOUBLE_EQ(fc.getInit().getStdDev(), 0.02);
  auto lnWeight = module->lookupSymbol<train::ParamOp>("ln_f.weight");
  ASSERT_TRUE(lnWeight);
  EXPECT_EQ(lnWeight.getInit().getKind(), train::InitKind::ones);
  EXPECT_TRUE(lnWeight.getTrainable());
}

TEST_F(ModelsTest, BF16GPTStoresBF16AndReturnsAnF32Loss) {
  GPTConfig config = tiny();
  config.elementType = ElementType::bf16;
  OwningOpRef<ModuleOp> module = buildValidGPT(config);
  ASSERT_TRUE(module);
  for (auto param : module->getBody()->getOps<train::ParamOp>())
    EXPECT_TRUE(param.getTensorType().getElementType().isBF16()) << param.getSymName().str();
  auto forward = module->lookupSymbol<func::FuncOp>("forward");
  ASSERT_TRUE(forward);
  EXPECT_TRUE(cast<RankedTensorType>(forward.getFunctionType().getResult(0))
                  .getElementType()
                  .isF32());
}

TEST_F(ModelsTest, CountedParametersMatchTheClosedForm) {
  GPTConfig byteLevel = tiny();
  byteLevel.vocabSize = 256;
  GPTConfig explicitPadding = tiny();
  explicitPadding.paddedVocabSize = 100;
  GPTConfig oddHeads = tiny();
  oddHeads.nHead = 4;
  oddHeads.nLayer = 3;
  oddHeads.nEmbd = 12;
  oddHeads.seqLen = 5;
  GPTConfig bigPad = tiny();
  bigPad.paddedVocabSize = 1000;
  for (const GPTConfig &config :
       {tiny(), byteLevel, explicitPadding, oddHeads, bigPad}) {
    OwningOpRef<ModuleOp> module = buildValidGPT(config);
    ASSERT_TRUE(module);
    EXPECT_EQ(countParameters(*module), gptParameterCount(config));
  }
  EXPECT_EQ(byteLevel.getPaddedVocabSize(), 256);
  EXPECT_EQ(explicitPadding.getPaddedVocabSize(), 100);
}

TEST_F(ModelsTest, GPT2PresetHas124MParameters) {
  GPTConfig gpt2 = *getGPTPreset("gpt2");
  EXPECT_EQ(gpt2.getPaddedVocabSize(), 50304);
  EXPECT_EQ(gptParameterCount(gpt2), 124475904u);
  OwningOpRef<ModuleOp> module = buildValidGPT(gpt2);
  ASSERT_TRUE(module);
  EXPECT_EQ(countParameters(*module), 124475904u);

  gpt2.paddedVocabSize = 50257; // Hugging Face's count: no padding rows.
  EXPECT_EQ(gptParameterCount(gpt2), 124439808u);
}

TEST_F(ModelsTest, LargerPresetsCountAsExpected) {
  // Closed forms checked by hand: Vp·C + T·C + L·(12C² + 13C) + 2C.
  EXPECT_EQ(gptParameterCount(GPTConfig::gpt2Medium()), 354871296u);
  EXPECT_EQ(gptParameterCount(GPTConfig::gpt2Large()), 774090240u);
  EXPECT_EQ(gptParameterCount(GPTConfig::gpt2XL()), 1557686400u);
  GPTConfig medium = GPTConfig::gpt2Medium();
  medium.paddedVocabSize = medium.vocabSize;
  EXPECT_EQ(gptParameterCount(medium), 354823168u);
  OwningOpRef<ModuleOp> module = buildValidGPT(medium);
  ASSERT_TRUE(module);
  EXPECT_EQ(countParameters(*module), 354823168u);
  EXPECT_FALSE(getGPTPreset("gpt3"));
}

TEST_F(ModelsTest, BadGPTConfigsFailWithAMessage) {
  GPTConfig heads = tiny();
  heads.nEmbd = 100;
  heads.nHead = 3;
  EXPECT_EQ(checkGPTConfig(heads), "n_embd (100) must be divisible by n_head (3)");
  EXPECT_TRUE(failed(buildGPT(ctx, heads)));
  EXPECT_EQ(errors, "n_embd (100) must be divisible by n_head (3)");

  GPTConfig vocab = tiny();
  vocab.paddedVocabSize = 50;
  EXPECT_EQ(checkGPTConfig(vocab), "vocab_size (100) exceeds padded_vocab_size (50)");
  GPTConfig zeroBatch = tiny();
  zeroBatch.batchSize = 0;
  EXPECT_EQ(checkGPTConfig(zeroBatch), "batch_size must be positive, got 0");
  GPTConfig huge = tiny();
  huge.nEmbd = int64_t(1) << 40;
  huge.nHead = 1;
  EXPECT_NE(checkGPTConfig(huge), "");
  EXPECT_EQ(checkGPTConfig(tiny()), "");
}

TEST_F(ModelsTest, MLPVerifiesAndCounts) {
  MLPConfig config;
  config.inputDim = 4;
  config.hiddenDims = {16, 8};
  config.outputDim = 2;
  config.batchSize = 3;
  config.activation = Activation::gelu;
  for (ElementType type : {ElementType::f32, ElementType::bf16}) {
    config.elementType = type;
    FailureOr<OwningOpRef<ModuleOp>> module = buildMLP(ctx, config);
    ASSERT_TRUE(succeeded(module)) << errors;
    EXPECT_TRUE(succeeded(verify(**module)));
    EXPECT_EQ(countParameters(**module), mlpParameterCount(config));
    EXPECT_EQ(countParameters(**module), 4u * 16 + 16 + 16 * 8 + 8 + 8 * 2 + 2);
    int gelus = 0, mses = 0;
    (*module)->walk([&](Operation *op) {
      gelus += isa<train::GeluOp>(op);
      mses += isa<train::MseOp>(op);
    });
    EXPECT_EQ(gelus, 2); // between layers, not after the last one
    EXPECT_EQ(mses, 1);
    auto w = (*module)->lookupSymbol<train::ParamOp>("fc1.weight");
    ASSERT_TRUE(w);
    EXPECT_EQ(w.getTensorType().getShape(), (ArrayRef<int64_t>{8, 16}));
    EXPECT_DOUBLE_EQ(w.getInit().getStdDev(), 1.0 / std::sqrt(3.0 * 16));
  }

  MLPConfig single;
  single.inputDim = 3;
  single.outputDim = 1;
  single.batchSize = 1;
  FailureOr<OwningOpRef<ModuleOp>> module = buildMLP(ctx, single);
  ASSERT_TRUE(succeeded(module));
  EXPECT_TRUE(succeeded(verify(**module)));
  EXPECT_EQ(countParameters(**module), 4u);

  MLPConfig bad = single;
  bad.hiddenDims = {0};
  EXPECT_TRUE(failed(buildMLP(ctx, bad)));
  EXPECT_EQ(errors, "hidden dim 0 must be positive, got 0");
}

} // namespace
