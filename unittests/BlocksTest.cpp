//===- BlocksTest.cpp - the block of a parameter name ---------------------===//

#include "zero/Analysis/Blocks.h"

#include <gtest/gtest.h>

using mlir::zero::blockOfParameter;

TEST(BlocksTest, ZeroModelNames) {
  EXPECT_EQ(blockOfParameter("h3.attn.c_attn.weight"), "h3");
  EXPECT_EQ(blockOfParameter("h12.ln_1.bias"), "h12");
  EXPECT_EQ(blockOfParameter("fc1.weight"), "fc1");
  EXPECT_EQ(blockOfParameter("wte"), "");
  EXPECT_EQ(blockOfParameter("ln_f.weight"), "");
  EXPECT_EQ(blockOfParameter("h3"), ""); // a tensor, not a block
}

TEST(BlocksTest, HuggingFaceAndTorchtitanNames) {
  EXPECT_EQ(blockOfParameter("model.layers.3.self_attn.q_proj.weight"),
            "model.layers.3");
  EXPECT_EQ(blockOfParameter("model.layers.31.mlp.down_proj.weight"),
            "model.layers.31");
  EXPECT_EQ(blockOfParameter("transformer.h.0.attn.c_attn.weight"),
            "transformer.h.0");
  EXPECT_EQ(blockOfParameter("layers.7.attention.wq.weight"), "layers.7");
  EXPECT_EQ(blockOfParameter("model.embed_tokens.weight"), "");
  EXPECT_EQ(blockOfParameter("model.norm.weight"), "");
  EXPECT_EQ(blockOfParameter("lm_head.weight"), "");
  EXPECT_EQ(blockOfParameter("transformer.wte.weight"), "");
  // A leading number is no container's index.
  EXPECT_EQ(blockOfParameter("0.weight"), "");
}
