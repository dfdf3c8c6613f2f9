//===- Flops.h - model FLOPs of a training step -----------------*- C++ -*-===//
///
/// \file
/// Model FLOPs of one micro-batch, the numerator of MFU (model FLOPs
/// utilization; Chowdhery et al., PaLM, arXiv 2204.02311, appendix B):
/// 3 × the FLOPs of the forward's matrix products — the forward once, the
/// backward twice (the gradients of both operands) — whatever the program
/// recomputes (activation checkpointing adds hardware FLOPs, not model
/// FLOPs). Counted on the IR's @forward:
///   train.matmul / matmul_gelu        2 · numel(result) · K
///   train.causal_attention            4 · B · H · T · T · D  (q·kᵀ and p·v)
///   train.causal_attention_packed     4 · B · T · T · C
/// Attention is counted over the whole T × T square, as PaLM's and
/// torchtitan's 12·L·H·D·T per token do, although the causal kernels skip
/// the upper triangle; element-wise ops, norms and the loss are not
/// counted (under 1 % of a transformer's at any useful width).
///
//===----------------------------------------------------------------------===//

#ifndef ZERO_ANALYSIS_FLOPS_H
#define ZERO_ANALYSIS_FLOPS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <cstdint>

namespace mlir::zero {

/// FLOPs of the matrix products and attention ops of `fn` (one call),
/// as a double (an 8B model at a large batch exceeds 2^63 only far beyond
/// any real micro-batch, but the product is formed in floating point so
/// that it cannot overflow).
double matmulFlops(func::FuncOp fn);

/// Model FLOPs of one @forward_backward on this rank's micro-batch:
/// 3 · matmulFlops(@forward); 0 when the module has no @forward.
double modelFlopsPerMicroBatch(ModuleOp module);

} // namespace mlir::zero

#endif // ZERO_ANALYSIS_FLOPS_H
