//===- GradientTest.cpp - gradient rules against central differences ------===//
///
/// \file
/// For each differentiable op of the Llama/Qwen set (and the attention and
/// cross-entropy forms it extends), builds the op's gradient rule
/// (GradientOpInterface::buildGradient) on a small instance and checks, in
/// f64 through ReferenceEval, that the gradient of every wanted operand
/// equals the central difference of L = Σ_i <c_i, result_i> for random
/// result gradients c_i — element by element. This checks the rule (which
/// ops, operands and attributes it emits) and the backward ops' definitions
/// against the forward's; the runtime kernels are checked against the same
/// definitions in runtime/test.
///
//===----------------------------------------------------------------------===//

#include "ReferenceEval.h"

#include "Train/TrainOps.h"
#include "zero/InitAll.h"
#include "zero/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace mlir;
using ::zero::test::Array;
using ::zero::test::Env;

namespace {

class GradientTest : public ::testing::Test {
protected:
  GradientTest() {
    DialectRegistry registry;
    mlir::zero::registerAllDialects(registry);
    ctx.appendDialectRegistry(registry);
    ctx.loadAllAvailableDialects();
  }

  /// Parses `ir` — a `func.func @f` returning the results of one
  /// differentiable op — builds that op's gradient rule for every operand
  /// that is a float block argument, and checks each gradient element
  /// against a central difference. i32 arguments take `ids` in order.
  void check(StringRef ir, const std::vector<int32_t> &ids = {},
             unsigned seed = 1) {
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(ir, &ctx);
    ASSERT_TRUE(module) << "IR does not parse";
    auto fn = module->lookupSymbol<func::FuncOp>("f");
    ASSERT_TRUE(fn);
    Block &body = fn.getBody().front();
    Operation *ret = body.getTerminator();
    Operation *target = ret->getOperand(0).getDefiningOp();
    auto iface = dyn_cast_or_null<train::GradientOpInterface>(target);
    ASSERT_TRUE(iface) << "the returned value is not a differentiable op's";

    // Result gradients c_i become new block arguments.
    SmallVector<Value> resultGrads, seeds;
    for (OpResult r : target->getResults()) {
      if (!iface.isDifferentiableResult(r.getResultNumber())) {
        resultGrads.push_back(Value());
        continue;
      }
      resultGrads.push_back(body.addArgument(r.getType(), fn.getLoc()));
      seeds.push_back(r);
    }
    SmallVector<bool> needGrad;
    for (OpOperand &operand : target->getOpOperands()) {
      auto arg = dyn_cast<BlockArgument>(operand.get());
      needGrad.push_back(
          arg && arg.getOwner() == &body &&
          isa<FloatType>(getElementTypeOrSelf(arg.getType())) &&
          iface.isDifferentiableOperand(operand.getOperandNumber()));
    }
    SmallVector<Value> operandGrads(target->getNumOperands());
    OpBuilder b(ret);
    ASSERT_TRUE(
        succeeded(iface.buildGradient(b, resultGrads, needGrad, operandGrads)));
    fn.setType(FunctionType::get(&ctx, body.getArgumentTypes(),
                                 fn.getFunctionType().getResults()));
    ASSERT_TRUE(succeeded(verify(*module))) << "the rule's ops do not verify";

    // Random inputs and result gradients.
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    Env inputs;
    size_t nextId = 0;
    for (BlockArgument arg : body.getArguments()) {
      auto t = cast<RankedTensorType>(arg.getType());
      Array a(t.getNumElements());
      for (double &x : a) {
        if (t.getElementType().isInteger(32)) {
          ASSERT_LT(nextId, ids.size()) << "too few ids for the i32 arguments";
          x = ids[nextId++];
        } else {
          x = uniform(rng);
        }
      }
      inputs[arg] = a;
    }

    auto loss = [&](const Env &in) {
      Env env = in;
      std::string failed = ::zero::test::evaluate(fn, env);
      EXPECT_EQ(failed, "") << "no reference for this op";
      double l = 0;
      for (auto [seedValue, c] :
           llvm::zip(seeds, body.getArguments().take_back(seeds.size()))) {
        const Array &r = env[seedValue], &w = env[c];
        for (size_t i = 0; i < r.size(); ++i)
          l += r[i] * w[i];
      }
      return l;
    };

    Env env = inputs;
    ASSERT_EQ(::zero::test::evaluate(fn, env), "");
    int checked = 0;
    for (auto [j, need] : llvm::enumerate(needGrad)) {
      if (!need) {
        EXPECT_FALSE(operandGrads[j]) << "gradient of unwanted operand " << j;
        continue;
      }
      ASSERT_TRUE(operandGrads[j]) << "no gradient for operand " << j;
      const Array grad = env[operandGrads[j]];
      Value x = target->getOperand(j);
      for (size_t k = 0; k < grad.size(); ++k) {
        const double h = 1e-5;
        Env plus = inputs, minus = inputs;
        plus[x][k] += h;
        minus[x][k] -= h;
        double fd = (loss(plus) - loss(minus)) / (2 * h);
        EXPECT_NEAR(grad[k], fd, 1e-7 + 1e-6 * std::abs(fd))
            << target->getName().getStringRef().str() << " operand " << j
            << " element " << k;
        ++checked;
      }
    }
    EXPECT_GT(checked, 0);
  }

  MLIRContext ctx;
};

TEST_F(GradientTest, RmsNorm) {
  check(R"(
    func.func @f(%x: tensor<2x3x8xf32>, %w: tensor<8xf32>) -> tensor<2x3x8xf32> {
      %y = train.rms_norm %x, %w eps(1.0e-05) : tensor<2x3x8xf32>, tensor<8xf32>
      return %y : tensor<2x3x8xf32>
    })");
}

TEST_F(GradientTest, RmsNormAsQkNormOverHeadDim) {
  check(R"(
    func.func @f(%q: tensor<1x3x2x4xf32>, %w: tensor<4xf32>) -> tensor<1x3x2x4xf32> {
      %y = train.rms_norm %q, %w eps(1.0e-06) : tensor<1x3x2x4xf32>, tensor<4xf32>
      return %y : tensor<1x3x2x4xf32>
    })");
}

TEST_F(GradientTest, AddRmsNormBothResults) {
  check(R"(
    func.func @f(%x: tensor<3x8xf32>, %h: tensor<3x8xf32>, %w: tensor<8xf32>) -> (tensor<3x8xf32>, tensor<3x8xf32>) {
      %s, %y = train.add_rms_norm %x, %h, %w eps(1.0e-05) : tensor<3x8xf32>, tensor<8xf32>
      return %s, %y : tensor<3x8xf32>, tensor<3x8xf32>
    })");
}

TEST_F(GradientTest, Silu) {
  check(R"(
    func.func @f(%x: tensor<3x5xf32>) -> tensor<3x5xf32> {
      %y = train.silu %x : tensor<3x5xf32>
      return %y : tensor<3x5xf32>
    })");
}

TEST_F(GradientTest, Swiglu) {
  check(R"(
    func.func @f(%g: tensor<2x3x6xf32>, %u: tensor<2x3x6xf32>) -> tensor<2x3x6xf32> {
      %y = train.swiglu %g, %u : tensor<2x3x6xf32>
      return %y : tensor<2x3x6xf32>
    })");
}

TEST_F(GradientTest, SwigluGateOnly) {
  // Only the gate's gradient is wanted (up is computed): the rule must not
  // produce the up gradient.
  check(R"(
    func.func @f(%g: tensor<2x6xf32>, %v: tensor<2x6xf32>) -> tensor<2x6xf32> {
      %u = train.silu %v : tensor<2x6xf32>
      %y = train.swiglu %g, %u : tensor<2x6xf32>
      return %y : tensor<2x6xf32>
    })");
}

TEST_F(GradientTest, RopeRotateHalfLlama3Scaled) {
  // theta 1e4, D 16, original 64: frequencies fall in all three llama3
  // bands (kept, smoothed, divided by the factor).
  check(R"(
    func.func @f(%x: tensor<2x5x3x16xf32>) -> tensor<2x5x3x16xf32> {
      %t = train.rope_table theta(1.0e+04) llama3(factor(8.0) low_freq_factor(1.0) high_freq_factor(4.0) original_max_positions(64)) : tensor<5x8x2xf32>
      %y = train.rope %x, %t layout(<rotate_half>) : tensor<2x5x3x16xf32>, tensor<5x8x2xf32>
      return %y : tensor<2x5x3x16xf32>
    })");
}

TEST_F(GradientTest, RopeInterleaved) {
  check(R"(
    func.func @f(%x: tensor<1x6x2x8xf32>) -> tensor<1x6x2x8xf32> {
      %t = train.rope_table theta(1.0e+01) : tensor<6x4x2xf32>
      %y = train.rope %x, %t layout(<interleaved>) : tensor<1x6x2x8xf32>, tensor<6x4x2xf32>
      return %y : tensor<1x6x2x8xf32>
    })");
}

TEST_F(GradientTest, RopeInverse) {
  check(R"(
    func.func @f(%x: tensor<1x4x1x8xf32>) -> tensor<1x4x1x8xf32> {
      %t = train.rope_table theta(1.0e+01) : tensor<4x4x2xf32>
      %y = train.rope %x, %t layout(<rotate_half>) {inverse} : tensor<1x4x1x8xf32>, tensor<4x4x2xf32>
      return %y : tensor<1x4x1x8xf32>
    })");
}

TEST_F(GradientTest, GroupedQueryAttention) {
  // 4 query heads over 2 K/V heads; head_dim 6 is not C / heads of anything.
  check(R"(
    func.func @f(%q: tensor<1x4x5x6xf32>, %k: tensor<1x2x5x6xf32>, %v: tensor<1x2x5x6xf32>) -> tensor<1x4x5x6xf32> {
      %o, %lse = train.causal_attention %q, %k, %v : tensor<1x4x5x6xf32>, tensor<1x2x5x6xf32>
      return %o : tensor<1x4x5x6xf32>
    })");
}

TEST_F(GradientTest, MultiQueryAttention) {
  check(R"(
    func.func @f(%q: tensor<2x3x4x4xf32>, %k: tensor<2x1x4x4xf32>, %v: tensor<2x1x4x4xf32>) -> tensor<2x3x4x4xf32> {
      %o, %lse = train.causal_attention %q, %k, %v : tensor<2x3x4x4xf32>, tensor<2x1x4x4xf32>
      return %o : tensor<2x3x4x4xf32>
    })");
}

TEST_F(GradientTest, MultiHeadAttention) {
  check(R"(
    func.func @f(%q: tensor<2x2x3x4xf32>, %k: tensor<2x2x3x4xf32>, %v: tensor<2x2x3x4xf32>) -> tensor<2x2x3x4xf32> {
      %o, %lse = train.causal_attention %q, %k, %v : tensor<2x2x3x4xf32>
      return %o : tensor<2x2x3x4xf32>
    })");
}

TEST_F(GradientTest, CrossEntropyIgnoreIndex) {
  // Rows 1 and 4 are ignored (-100): they count neither in the sum nor in
  // the mean (M = 4), and get no gradient; 5 of 7 columns are classes.
  check(R"(
    func.func @f(%l: tensor<6x7xf32>, %t: tensor<6xi32>) -> tensor<f32> {
      %loss = train.cross_entropy %l, %t {num_classes = 5 : i64, ignore_index = -100 : i64} : tensor<6x7xf32>, tensor<6xi32> -> tensor<f32>
      return %loss : tensor<f32>
    })",
        {0, -100, 3, 4, -100, 1});
}

TEST_F(GradientTest, CrossEntropy) {
  check(R"(
    func.func @f(%l: tensor<4x5xf32>, %t: tensor<4xi32>) -> tensor<f32> {
      %loss = train.cross_entropy %l, %t : tensor<4x5xf32>, tensor<4xi32> -> tensor<f32>
      return %loss : tensor<f32>
    })",
        {4, 0, 2, 2});
}

/// The ignored rows do not dilute the mean: with half the rows ignored the
/// loss equals the mean over the other half.
TEST_F(GradientTest, IgnoredRowsLeaveTheMean) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"(
    func.func @f(%l: tensor<4x3xf32>, %t: tensor<4xi32>) -> tensor<f32> {
      %loss = train.cross_entropy %l, %t {ignore_index = -100 : i64} : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
      return %loss : tensor<f32>
    })",
                                                             &ctx);
  ASSERT_TRUE(module);
  auto fn = module->lookupSymbol<func::FuncOp>("f");
  Env env;
  env[fn.getArgument(0)] = {0, 0, 0, 1, 2, 3, 5, 6, 7, 9, 9, 9};
  env[fn.getArgument(1)] = {1, -100, 2, -100};
  ASSERT_EQ(::zero::test::evaluate(fn, env), "");
  Value loss = fn.getBody().front().getTerminator()->getOperand(0);
  double uniform = std::log(3.0);
  double row2 = std::log(std::exp(5.0) + std::exp(6.0) + std::exp(7.0)) - 7.0;
  EXPECT_NEAR(env[loss][0], (uniform + row2) / 2.0, 1e-12);
}

} // namespace
