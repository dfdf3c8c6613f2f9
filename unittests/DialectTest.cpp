//===- DialectTest.cpp - C++ API tests of the train and zero dialects -----===//

#include "Train/TrainOps.h"
#include "Zero/ZeroOps.h"
#include "zero/InitAll.h"
#include "zero/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {

class DialectTest : public ::testing::Test {
protected:
  DialectTest() {
    DialectRegistry registry;
    mlir::zero::registerAllDialects(registry);
    ctx.appendDialectRegistry(registry);
    ctx.loadAllAvailableDialects();
  }

  /// Verifies `op` and returns the first diagnostic message ("" when valid).
  std::string verifyMessage(Operation *op) {
    std::string message;
    ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
      if (message.empty())
        message = diag.str();
      return success();
    });
    (void)verify(op);
    return message;
  }

  MLIRContext ctx;
};

TEST_F(DialectTest, ParamBuiltFromCppVerifies) {
  OpBuilder b(&ctx);
  auto module = ModuleOp::create(b.getUnknownLoc());
  b.setInsertionPointToEnd(module.getBody());
  auto type = RankedTensorType::get({16, 8}, b.getBF16Type());
  auto init = train::InitAttr::get(&ctx, train::InitKind::normal, 0.02);
  auto param = train::ParamOp::create(b, b.getUnknownLoc(), "w", type, init,
                                      /*trainable=*/true);
  EXPECT_EQ(verifyMessage(module), "");
  EXPECT_EQ(param.getTensorType().getNumElements(), 128);
  EXPECT_DOUBLE_EQ(param.getInit().getStdDev(), 0.02);
  module->erase();
}

TEST_F(DialectTest, AllGatherSizeRuleIsEnforced) {
  OpBuilder b(&ctx);
  auto module = ModuleOp::create(b.getUnknownLoc());
  b.setInsertionPointToEnd(module.getBody());
  auto shardType = RankedTensorType::get({5}, b.getF32Type());
  auto func = func::FuncOp::create(b, b.getUnknownLoc(), "f",
                                   b.getFunctionType({shardType}, {}));
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToEnd(entry);
  // 3 ranks x 5 elements = 15; 16 must be rejected.
  auto bad = RankedTensorType::get({16}, b.getF32Type());
  zero::AllGatherOp::create(b, b.getUnknownLoc(), bad, entry->getArgument(0),
                            b.getI64IntegerAttr(3));
  func::ReturnOp::create(b, b.getUnknownLoc());
  EXPECT_EQ(verifyMessage(module),
            "'zero.all_gather' op result has 16 elements; expected world_size "
            "(3) x shard size (5) = 15");
  module->erase();
}

} // namespace
