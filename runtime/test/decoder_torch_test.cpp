//===- decoder_torch_test.cpp - The decoder kernels against PyTorch -------===//
//
// The f32 kernels of zrt/decoder.h on the inputs of
// decoder_torch_reference.inc, against what Hugging Face transformers'
// Llama modules and PyTorch computed on them (gen_decoder_reference.py):
// LlamaRMSNorm, LlamaRotaryEmbedding (llama3) + apply_rotary_pos_emb,
// repeat_kv + SDPA(is_causal=True), silu(gate) * up, cross_entropy with
// ignore_index -100 — forward and autograd backward. Differences are f32
// rounding of different summation orders (tolerances ~1e-6).
//
//===----------------------------------------------------------------------===//

#include "test_util.h"

#include <cstdint>
#include <vector>

#include "decoder_torch_reference.inc"

using namespace zrt_test;
using namespace torch_ref;

namespace {

template <size_t N> std::vector<double> asDouble(const float (&a)[N]) {
  return std::vector<double>(a, a + N);
}

TEST(TorchReference, LlamaRMSNorm) {
  std::vector<float> y(kRmsN * kRmsC), dx(y.size()), dw(kRmsC), work(kRmsN);
  ASSERT_EQ(zrt_rms_norm(rms_x, rms_w, y.data(), kRmsN, kRmsC, 1e-6f), ZRT_OK);
  expectAllNear(y.data(), asDouble(rms_y), "y", 2e-6, 1e-6);
  ASSERT_EQ(zrt_rms_norm_backward(rms_dy, rms_x, rms_w, nullptr, dx.data(),
                                  dw.data(), work.data(), kRmsN, kRmsC, 1e-6f),
            ZRT_OK);
  expectAllNear(dx.data(), asDouble(rms_dx), "dx", 1e-5, 2e-6);
  expectAllNear(dw.data(), asDouble(rms_dw), "dw", 1e-5, 2e-6);
}

/// [B=1, H, T, D] -> [1, T, H, D] (HF's layout to zrt_rope's).
std::vector<float> toTokensMajor(const float *x, int64_t H, int64_t T,
                                 int64_t D) {
  std::vector<float> out(H * T * D);
  for (int64_t h = 0; h < H; ++h)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t d = 0; d < D; ++d)
        out[(t * H + h) * D + d] = x[(h * T + t) * D + d];
  return out;
}

TEST(TorchReference, Llama3RotaryEmbedding) {
  const int64_t half = kRopeD / 2;
  zrt_rope_scaling s{8.0, 1.0, 4.0, 16};
  std::vector<float> table(kRopeT * half * 2);
  ASSERT_EQ(zrt_rope_table(table.data(), kRopeT, half, 10000.0, &s), ZRT_OK);
  for (int64_t t = 0; t < kRopeT; ++t)
    for (int64_t i = 0; i < half; ++i)
      for (int64_t rep : {int64_t(0), half}) {
        EXPECT_NEAR(table[(t * half + i) * 2], rope_cos[t * kRopeD + i + rep],
                    2e-7)
            << t << " " << i;
        EXPECT_NEAR(table[(t * half + i) * 2 + 1],
                    rope_sin[t * kRopeD + i + rep], 2e-7)
            << t << " " << i;
      }
  for (auto [x, ref, heads] : {std::tuple{rope_q, rope_q_embed, kRopeH},
                               std::tuple{rope_k, rope_k_embed, kRopeHk}}) {
    std::vector<float> in = toTokensMajor(x, heads, kRopeT, kRopeD),
                       expected = toTokensMajor(ref, heads, kRopeT, kRopeD),
                       out(in.size());
    ASSERT_EQ(zrt_rope(in.data(), table.data(), out.data(), 1, kRopeT, heads,
                       kRopeD, ZRT_ROPE_ROTATE_HALF, 0),
              ZRT_OK);
    expectAllNear(out.data(),
                  std::vector<double>(expected.begin(), expected.end()),
                  "embed", 1e-6, 1e-6);
  }
}

TEST(TorchReference, RepeatKvCausalSdpa) {
  std::vector<float> o(kGqaH * kGqaT * kGqaD), lse(kGqaH * kGqaT), dq(o.size()),
      dk(kGqaHkv * kGqaT * kGqaD), dv(dk.size());
  ASSERT_EQ(zrt_attention_forward_gqa(gqa_q, gqa_k, gqa_v, o.data(), lse.data(),
                                      nullptr, 1, kGqaH, kGqaHkv, kGqaT, kGqaD),
            ZRT_OK);
  expectAllNear(o.data(), asDouble(gqa_o), "o", 1e-5, 1e-6);
  ASSERT_EQ(zrt_attention_backward_gqa(
                gqa_do, gqa_q, gqa_k, gqa_v, o.data(), lse.data(), dq.data(),
                dk.data(), dv.data(), nullptr, 1, kGqaH, kGqaHkv, kGqaT, kGqaD),
            ZRT_OK);
  expectAllNear(dq.data(), asDouble(gqa_dq), "dq", 1e-5, 2e-6);
  expectAllNear(dk.data(), asDouble(gqa_dk), "dk", 1e-5, 2e-6);
  expectAllNear(dv.data(), asDouble(gqa_dv), "dv", 1e-5, 2e-6);
}

TEST(TorchReference, SiluTimesUp) {
  const int64_t n = sizeof(swiglu_gate) / sizeof(float);
  std::vector<float> h(n), dg(n), du(n);
  ASSERT_EQ(zrt_swiglu(swiglu_gate, swiglu_up, h.data(), n), ZRT_OK);
  expectAllNear(h.data(), asDouble(swiglu_h), "h", 1e-6, 1e-7);
  ASSERT_EQ(zrt_swiglu_backward(swiglu_gate, swiglu_up, swiglu_dh, dg.data(),
                                du.data(), n),
            ZRT_OK);
  expectAllNear(dg.data(), asDouble(swiglu_dgate), "dgate", 1e-6, 1e-7);
  expectAllNear(du.data(), asDouble(swiglu_dup), "dup", 1e-6, 1e-7);
}

TEST(TorchReference, CrossEntropyIgnoreIndex) {
  float loss = 0, one = 1.0f;
  ASSERT_EQ(zrt_cross_entropy_masked(ce_logits, ce_targets, &loss, kCeN, kCeV,
                                     kCeV, -100),
            ZRT_OK);
  EXPECT_NEAR(loss, ce_loss, 1e-6 * std::fabs(ce_loss));
  std::vector<float> dl(kCeN * kCeV);
  ASSERT_EQ(zrt_cross_entropy_masked_backward(
                ce_logits, ce_targets, &one, dl.data(), kCeN, kCeV, kCeV, -100),
            ZRT_OK);
  expectAllNear(dl.data(), asDouble(ce_dlogits), "dlogits", 1e-6, 1e-7);
}

} // namespace
