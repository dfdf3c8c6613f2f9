//===- Blocks.h - which block a parameter belongs to -------------*- C++ -*-===//
///
/// \file
/// The transformer block (decoder layer) of a parameter, read from its
/// name: what zero-partition's grouping=block and train-checkpoint's
/// policy=block use, so both passes cut the model in the same places.
///
//===----------------------------------------------------------------------===//

#ifndef ZERO_ANALYSIS_BLOCKS_H
#define ZERO_ANALYSIS_BLOCKS_H

#include "llvm/ADT/StringRef.h"

namespace mlir::zero {

/// The block prefix of the parameter `name`, or "" for a parameter outside
/// every block. Scanning the dotted components before the last, the prefix
/// ends at the first that is a number (`model.layers.3` in Hugging Face's
/// `model.layers.3.self_attn.q_proj.weight`, `transformer.h.0` in GPT-2's
/// `transformer.h.0.attn.c_attn.weight`, `layers.3` in torchtitan's) or a
/// word followed by a number (`h3` in zero-model's `h3.attn.c_attn.weight`).
/// Embeddings, final norms and heads (`model.embed_tokens.weight`,
/// `lm_head.weight`, `wte`) are outside.
llvm::StringRef blockOfParameter(llvm::StringRef name);

} // namespace mlir::zero

#endif // ZERO_ANALYSIS_BLOCKS_H
