//===- InitAll.cpp - register Zero's dialects and passes ------------------===//

#include "zero/InitAll.h"
#include "zero/Transforms/Passes.h"
#include "zero/Transforms/Pipelines.h"
#include "zero/Conversion/Passes.h"

#include "Train/TrainDialect.h"
#include "Zero/ZeroDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/EmitC/IR/EmitC.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"

void mlir::zero::registerAllPasses() {
  registerTrainPasses();
  registerZeroPasses();
  registerConversionPasses();
  registerTrainingPipeline();
}

void mlir::zero::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<mlir::train::TrainDialect, mlir::zero::ZeroDialect,
                  mlir::func::FuncDialect, mlir::arith::ArithDialect,
                  mlir::cf::ControlFlowDialect,
                  mlir::tensor::TensorDialect, mlir::emitc::EmitCDialect>();
}
