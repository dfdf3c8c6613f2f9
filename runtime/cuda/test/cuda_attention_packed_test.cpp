//===- cuda_attention_packed_test.cpp - attention on the packed qkv -------===//
//
// zrt_cuda::attention_forward_packed / _backward_packed (f32),
// attention_*_packed_bf16_simt and attention_*_packed_bf16_tc: causal
// attention read from the packed projection qkv [B, T, 3 C] (C = H D) and
// written to out [B, T, C] and dqkv [B, T, 3 C] in place. Each must give
// exactly the numbers of the [B, H, T, D] entry point of the same kernels
// on split copies (the heads of q, k, v and dout cut out of their rows),
// merged back: compared bit for bit, out and dqkv pre-filled with NaN (so
// every element must be written), with the packed tensors 16-byte aligned
// (vector / cp.async loads) and one element off (plain loads). Shapes:
// partial tiles, every SIMT head-size class (padded, DP = 16 .. 128, the
// generic path for D > 128) and every tensor-core D (32, 64, 128),
// T = 1, GPT-2's 12 heads. The f32 results also agree with the CPU
// runtime's zrt_attention_*_packed (an independent reading of the layout),
// and the argument checks, which return before any CUDA call, run without
// a device (same status and message as the CPU).
//
//===----------------------------------------------------------------------===//

#include "cuda_test_util.h"

#include "flash_attention_tc.h"

#include <cmath>
#include <string>
#include <vector>

namespace {

using namespace zrt_cuda_test;
using Bits = std::vector<uint16_t>;

struct Shape {
  int64_t B, H, T, D;
  /// Element offset of the packed tensors (qkv, dqkv, out, dout) from a
  /// 64-byte aligned arena block (1: 2- or 4-byte aligned only).
  int shift = 0;
};

std::string describe(const Shape &s) {
  return "B=" + std::to_string(s.B) + " H=" + std::to_string(s.H) +
         " T=" + std::to_string(s.T) + " D=" + std::to_string(s.D) +
         " shift=" + std::to_string(s.shift);
}

/// Operand `col / C` of rows of W elements ([B, T, W], head h at column
/// col + h D) as [B, H, T, D].
template <typename E>
std::vector<E> splitHeads(const std::vector<E> &rows, const Shape &s,
                          int64_t W, int64_t col) {
  std::vector<E> out(static_cast<size_t>(s.B * s.H * s.T * s.D));
  for (int64_t b = 0; b < s.B; ++b)
    for (int64_t h = 0; h < s.H; ++h)
      for (int64_t t = 0; t < s.T; ++t)
        for (int64_t d = 0; d < s.D; ++d)
          out[((b * s.H + h) * s.T + t) * s.D + d] =
              rows[(b * s.T + t) * W + col + h * s.D + d];
  return out;
}

/// The inverse of splitHeads: [B, H, T, D] into columns col.. of `rows`.
template <typename E>
void mergeHeads(const std::vector<E> &heads, const Shape &s, int64_t W,
                int64_t col, std::vector<E> &rows) {
  for (int64_t b = 0; b < s.B; ++b)
    for (int64_t h = 0; h < s.H; ++h)
      for (int64_t t = 0; t < s.T; ++t)
        for (int64_t d = 0; d < s.D; ++d)
          rows[(b * s.T + t) * W + col + h * s.D + d] =
              heads[((b * s.H + h) * s.T + t) * s.D + d];
}

Bits toBf16(const std::vector<float> &x) {
  Bits r(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    r[i] = zrt_f32_to_bf16(x[i]);
  return r;
}

/// The kernels under test: the [B, H, T, D] entry point and the packed
/// one of one implementation. E: the element type of q, k, v, out, dout.
enum class Path { F32, Bf16Simt, Bf16Tc };

template <Path P> struct Ops;
template <> struct Ops<Path::F32> {
  using E = float;
  static int forward(const E *q, const E *k, const E *v, E *out, float *lse,
                     const Shape &s) {
    return zrt_cuda::attention_forward(q, k, v, out, lse, nullptr, s.B, s.H,
                                       s.T, s.D);
  }
  static int backward(const E *dout, const E *q, const E *k, const E *v,
                      const E *out, const float *lse, E *dq, E *dk, E *dv,
                      const Shape &s) {
    return zrt_cuda::attention_backward(dout, q, k, v, out, lse, dq, dk, dv,
                                        nullptr, s.B, s.H, s.T, s.D);
  }
  static int forwardPacked(const E *qkv, E *out, float *lse, const Shape &s) {
    return zrt_cuda::attention_forward_packed(qkv, out, lse, nullptr, s.B, s.T,
                                              s.H, s.D);
  }
  static int backwardPacked(const E *dout, const E *qkv, const E *out,
                            const float *lse, E *dqkv, const Shape &s) {
    return zrt_cuda::attention_backward_packed(dout, qkv, out, lse, dqkv,
                                               nullptr, s.B, s.T, s.H, s.D);
  }
};
template <> struct Ops<Path::Bf16Simt> {
  using E = zrt_bf16;
  static int forward(const E *q, const E *k, const E *v, E *out, float *lse,
                     const Shape &s) {
    return zrt_cuda::attention_forward_bf16_simt(q, k, v, out, lse, nullptr,
                                                 s.B, s.H, s.T, s.D);
  }
  static int backward(const E *dout, const E *q, const E *k, const E *v,
                      const E *out, const float *lse, E *dq, E *dk, E *dv,
                      const Shape &s) {
    return zrt_cuda::attention_backward_bf16_simt(
        dout, q, k, v, out, lse, dq, dk, dv, nullptr, s.B, s.H, s.T, s.D);
  }
  static int forwardPacked(const E *qkv, E *out, float *lse, const Shape &s) {
    return zrt_cuda::attention_forward_packed_bf16_simt(qkv, out, lse, nullptr,
                                                        s.B, s.T, s.H, s.D);
  }
  static int backwardPacked(const E *dout, const E *qkv, const E *out,
                            const float *lse, E *dqkv, const Shape &s) {
    return zrt_cuda::attention_backward_packed_bf16_simt(
        dout, qkv, out, lse, dqkv, nullptr, s.B, s.T, s.H, s.D);
  }
};
template <> struct Ops<Path::Bf16Tc> {
  using E = zrt_bf16;
  static int forward(const E *q, const E *k, const E *v, E *out, float *lse,
                     const Shape &s) {
    return zrt_cuda::attention_forward_bf16_tc(q, k, v, out, lse, s.B, s.H,
                                               s.T, s.D);
  }
  static int backward(const E *dout, const E *q, const E *k, const E *v,
                      const E *out, const float *lse, E *dq, E *dk, E *dv,
                      const Shape &s) {
    return zrt_cuda::attention_backward_bf16_tc(dout, q, k, v, out, lse, dq, dk,
                                                dv, s.B, s.H, s.T, s.D);
  }
  static int forwardPacked(const E *qkv, E *out, float *lse, const Shape &s) {
    return zrt_cuda::attention_forward_packed_bf16_tc(qkv, out, lse, s.B, s.T,
                                                      s.H, s.D);
  }
  static int backwardPacked(const E *dout, const E *qkv, const E *out,
                            const float *lse, E *dqkv, const Shape &s) {
    return zrt_cuda::attention_backward_packed_bf16_tc(dout, qkv, out, lse,
                                                       dqkv, s.B, s.T, s.H,
                                                       s.D);
  }
};

class CudaAttentionPacked : public CudaKernels {
protected:
  /// Device copy of `x` at an offset of `shift` elements from a 64-byte
  /// aligned arena block.
  template <typename E> E *upload(const std::vector<E> &x, int shift) {
    auto *p = static_cast<E *>(
        devBytes(static_cast<int64_t>((x.size() + 8) * sizeof(E))));
    EXPECT_EQ(zrt_cuda::copy_to_device(
                  p + shift, x.data(),
                  static_cast<int64_t>(x.size() * sizeof(E))),
              ZRT_OK)
        << zrt_cuda::last_error();
    return p + shift;
  }
  /// n NaNs (all-ones bits) on the device, `shift` as upload.
  template <typename E> E *nans(int64_t n, int shift) {
    std::vector<E> x(static_cast<size_t>(n));
    std::memset(x.data(), 0xff, x.size() * sizeof(E));
    return upload(x, shift);
  }

  /// The packed entry points of path P against its [B, H, T, D] ones on
  /// split copies: out, lse and dqkv bit for bit (the backward of both
  /// from the [B, H, T, D] forward's out and lse).
  template <Path P> void checkShape(const Shape &s, uint32_t seed) {
    using E = typename Ops<P>::E;
    const std::string what = describe(s);
    SCOPED_TRACE(what);
    const int64_t C = s.H * s.D, W = 3 * C, n = s.B * s.T * C,
                  nl = s.B * s.H * s.T;
    std::vector<E> qkv, dout;
    if constexpr (P == Path::F32) {
      qkv = randomVec(s.B * s.T * W, seed);
      dout = randomVec(n, seed + 1);
    } else {
      qkv = toBf16(randomVec(s.B * s.T * W, seed));
      dout = toBf16(randomVec(n, seed + 1));
    }

    // [B, H, T, D] on split copies (16-byte aligned), merged back.
    E *q = upload(splitHeads(qkv, s, W, 0), 0);
    E *k = upload(splitHeads(qkv, s, W, C), 0);
    E *v = upload(splitHeads(qkv, s, W, 2 * C), 0);
    E *dO = upload(splitHeads(dout, s, C, 0), 0);
    E *o = nans<E>(n, 0), *dq = nans<E>(n, 0), *dk = nans<E>(n, 0),
      *dv = nans<E>(n, 0);
    float *lse = nans<float>(nl, 0);
    ASSERT_EQ(Ops<P>::forward(q, k, v, o, lse, s), ZRT_OK)
        << zrt_cuda::last_error();
    ASSERT_EQ(Ops<P>::backward(dO, q, k, v, o, lse, dq, dk, dv, s), ZRT_OK)
        << zrt_cuda::last_error();
    const std::vector<E> oHeads = hostOf(o, n);
    const std::vector<float> refLse = host(lse, nl);
    std::vector<E> refOut(static_cast<size_t>(n)), refDqkv(qkv.size());
    mergeHeads(oHeads, s, C, 0, refOut);
    mergeHeads(hostOf(dq, n), s, W, 0, refDqkv);
    mergeHeads(hostOf(dk, n), s, W, C, refDqkv);
    mergeHeads(hostOf(dv, n), s, W, 2 * C, refDqkv);

    // Packed, at `shift`.
    E *pqkv = upload(qkv, s.shift), *pdout = upload(dout, s.shift);
    E *pout = nans<E>(n, s.shift), *pdqkv = nans<E>(W * s.B * s.T, s.shift);
    float *plse = nans<float>(nl, 0);
    ASSERT_EQ(Ops<P>::forwardPacked(pqkv, pout, plse, s), ZRT_OK)
        << zrt_cuda::last_error();
    expectSameBits(refOut, hostOf(pout, n), "out");
    expectSameBits(refLse, host(plse, nl), "lse");
    ASSERT_EQ(Ops<P>::backwardPacked(pdout, pqkv, pout, plse, pdqkv, s),
              ZRT_OK)
        << zrt_cuda::last_error();
    expectSameBits(refDqkv,
                   hostOf(pdqkv, static_cast<int64_t>(refDqkv.size())),
                   "dqkv");
    zrt_cuda::arena_reset(arena_);
  }
};

TEST_F(CudaAttentionPacked, F32MatchesSplitHeads) {
  checkShape<Path::F32>({2, 3, 65, 16}, 1);    // DP = 16, float4 loads
  checkShape<Path::F32>({2, 3, 65, 16, 1}, 2); // scalar loads
  checkShape<Path::F32>({1, 2, 130, 64}, 3);   // three tiles
  checkShape<Path::F32>({2, 2, 70, 24}, 4);    // padded to 32
  checkShape<Path::F32>({1, 3, 100, 128}, 5);  // DP = 128
  checkShape<Path::F32>({2, 1, 40, 160}, 6);   // generic path
  checkShape<Path::F32>({3, 2, 1, 3}, 7);      // a single row
}

TEST_F(CudaAttentionPacked, Bf16SimtMatchesSplitHeads) {
  checkShape<Path::Bf16Simt>({2, 3, 65, 16}, 11);   // 16-byte loads
  checkShape<Path::Bf16Simt>({1, 2, 130, 64, 1}, 12); // scalar loads
  checkShape<Path::Bf16Simt>({2, 2, 70, 24}, 13);   // padded to 32
  checkShape<Path::Bf16Simt>({1, 2, 100, 128}, 14); // DP = 128
  checkShape<Path::Bf16Simt>({2, 1, 40, 160, 1}, 15); // generic path
}

TEST_F(CudaAttentionPacked, Bf16TensorCoresMatchSplitHeads) {
  uint32_t seed = 21;
  for (int64_t D : {32, 64, 128}) {
    checkShape<Path::Bf16Tc>({2, 3, 1, D}, seed++);     // a single row
    checkShape<Path::Bf16Tc>({2, 2, 70, D}, seed++);    // cp.async
    checkShape<Path::Bf16Tc>({2, 2, 70, D, 1}, seed++); // plain loads
    checkShape<Path::Bf16Tc>({1, 3, 130, D}, seed++);   // partial tiles
  }
}

TEST_F(CudaAttentionPacked, Bf16TensorCoresGpt2Heads) {
  // GPT-2 124M's heads (C = 768, rows of 2304), 4 key tiles.
  checkShape<Path::Bf16Tc>({2, 12, 256, 64}, 40);
  checkShape<Path::Bf16Simt>({1, 12, 130, 64}, 41);
}

TEST_F(CudaAttentionPacked, F32AgreesWithCpuRuntime) {
  // The CPU runtime's zrt_attention_forward_packed / _backward_packed
  // (attention_lse.cpp, f32 BLAS): an independent reading of the packed
  // layout; both f32, so the tolerance covers two roundings.
  for (const Shape s : {Shape{1, 2, 256, 64}, Shape{2, 3, 100, 24}}) {
    SCOPED_TRACE(describe(s));
    const int64_t C = s.H * s.D, n = s.B * s.T * C, nl = s.B * s.H * s.T;
    const auto qkv = randomVec(3 * n, 50), dout = randomVec(n, 51);
    std::vector<float> out(n), lse(nl), dqkv(3 * n);
    ASSERT_EQ(zrt_attention_forward_packed(qkv.data(), out.data(), lse.data(),
                                           nullptr, s.B, s.T, s.H, s.D),
              ZRT_OK)
        << zrt_last_error();
    ASSERT_EQ(zrt_attention_backward_packed(dout.data(), qkv.data(),
                                            out.data(), lse.data(),
                                            dqkv.data(), nullptr, s.B, s.T,
                                            s.H, s.D),
              ZRT_OK)
        << zrt_last_error();
    float *gqkv = dev(qkv), *gdout = dev(dout), *gout = dev(n),
          *glse = dev(nl), *gdqkv = dev(3 * n);
    ASSERT_EQ(zrt_cuda::attention_forward_packed(gqkv, gout, glse, nullptr,
                                                 s.B, s.T, s.H, s.D),
              ZRT_OK)
        << zrt_cuda::last_error();
    // The backward from the CPU's out and lse, so that both see one input.
    ASSERT_EQ(zrt_cuda::attention_backward_packed(gdout, gqkv, dev(out),
                                                  dev(lse), gdqkv, nullptr,
                                                  s.B, s.T, s.H, s.D),
              ZRT_OK)
        << zrt_cuda::last_error();
    const float rtol = 1e-5f;
    const float atol = 1e-6f * std::sqrt(static_cast<float>(s.T));
    expectClose(out, host(gout, n), atol, rtol, "out");
    expectClose(lse, host(glse, nl), atol, rtol, "lse");
    expectClose(dqkv, host(gdqkv, 3 * n), atol, rtol, "dqkv");
  }
}

//===----------------------------------------------------------------------===//
// Argument checks (no device needed: they return before any CUDA call)
//===----------------------------------------------------------------------===//

TEST(CudaAttentionPackedArgs, SameErrorsAsCpu) {
  float buf[4] = {};
  float *p = buf;
  zrt_bf16 hbuf[4] = {};
  zrt_bf16 *h = hbuf;
  const int64_t big = int64_t(1) << 30; // 3 H D above INT32_MAX
  EXPECT_SAME_ERROR(
      zrt_cuda::attention_forward_packed(p, p, p, nullptr, -1, 4, 2, 8),
      zrt_attention_forward_packed(p, p, p, nullptr, -1, 4, 2, 8));
  EXPECT_SAME_ERROR(
      zrt_cuda::attention_forward_packed(p, p, p, nullptr, 1, 0, 2, 8),
      zrt_attention_forward_packed(p, p, p, nullptr, 1, 0, 2, 8));
  EXPECT_SAME_ERROR(
      zrt_cuda::attention_forward_packed(nullptr, p, p, nullptr, 1, 4, 2, 8),
      zrt_attention_forward_packed(nullptr, p, p, nullptr, 1, 4, 2, 8));
  EXPECT_SAME_ERROR(
      zrt_cuda::attention_forward_packed(p, p, nullptr, nullptr, 1, 4, 2, 8),
      zrt_attention_forward_packed(p, p, nullptr, nullptr, 1, 4, 2, 8));
  EXPECT_SAME_ERROR(
      zrt_cuda::attention_forward_packed(p, p, p, nullptr, 1, 4, big, 1),
      zrt_attention_forward_packed(p, p, p, nullptr, 1, 4, big, 1));
  EXPECT_SAME_ERROR(
      zrt_cuda::attention_backward_packed(p, p, p, p, nullptr, nullptr, 1, 4,
                                          2, 8),
      zrt_attention_backward_packed(p, p, p, p, nullptr, nullptr, 1, 4, 2, 8));
  EXPECT_SAME_ERROR(
      zrt_cuda::attention_backward_packed(nullptr, p, p, p, p, nullptr, 1, 4,
                                          2, 8),
      zrt_attention_backward_packed(nullptr, p, p, p, p, nullptr, 1, 4, 2, 8));
  EXPECT_SAME_ERROR(
      zrt_cuda::attention_backward_packed(p, p, p, p, p, nullptr, 1, 4, 2, 0),
      zrt_attention_backward_packed(p, p, p, p, p, nullptr, 1, 4, 2, 0));
  EXPECT_SAME_ERROR(zrt_cuda::attention_backward_packed(p, p, p, p, p, nullptr,
                                                        1, 4, big, 1),
                    zrt_attention_backward_packed(p, p, p, p, p, nullptr, 1, 4,
                                                  big, 1));
  EXPECT_SAME_ERROR(zrt_cuda::attention_forward_packed_bf16_simt(
                        h, h, nullptr, nullptr, 1, 4, 2, 8),
                    zrt_attention_forward_packed_bf16(h, h, nullptr, nullptr, 1,
                                                      4, 2, 8));
  EXPECT_SAME_ERROR(zrt_cuda::attention_forward_packed_bf16_simt(
                        h, h, p, nullptr, 1, 4, -3, 8),
                    zrt_attention_forward_packed_bf16(h, h, p, nullptr, 1, 4,
                                                      -3, 8));
  EXPECT_SAME_ERROR(zrt_cuda::attention_backward_packed_bf16_simt(
                        h, nullptr, h, p, h, nullptr, 1, 4, 2, 8),
                    zrt_attention_backward_packed_bf16(h, nullptr, h, p, h,
                                                       nullptr, 1, 4, 2, 8));
  EXPECT_SAME_ERROR(zrt_cuda::attention_backward_packed_bf16_simt(
                        h, h, h, p, h, nullptr, 1, 4, big, 1),
                    zrt_attention_backward_packed_bf16(h, h, h, p, h, nullptr,
                                                       1, 4, big, 1));
}

/// `call` returns ZRT_ERR_INVALID_ARGUMENT with zrt_last_error() `message`.
#define EXPECT_PACKED_ERROR(call, message)                                     \
  do {                                                                         \
    zrt_cuda::clear_error();                                                   \
    EXPECT_EQ((call), ZRT_ERR_INVALID_ARGUMENT) << #call;                      \
    EXPECT_EQ(std::string(zrt_cuda::last_error()), message) << #call;          \
  } while (0)

TEST(CudaAttentionPackedArgs, MessagesNameThePackedFunctions) {
  float buf[4] = {};
  float *p = buf;
  zrt_bf16 hbuf[4] = {};
  zrt_bf16 *h = hbuf;
  EXPECT_PACKED_ERROR(
      zrt_cuda::attention_forward_packed(p, nullptr, p, nullptr, 1, 4, 2, 8),
      "zrt_attention_forward_packed: out is NULL");
  EXPECT_PACKED_ERROR(zrt_cuda::attention_backward_packed(
                          p, p, nullptr, p, p, nullptr, 1, 4, 2, 8),
                      "zrt_attention_backward_packed: out is NULL");
  EXPECT_PACKED_ERROR(zrt_cuda::attention_forward_packed_bf16_simt(
                          nullptr, h, p, nullptr, 1, 4, 2, 8),
                      "zrt_attention_forward_packed_bf16: qkv is NULL");
  EXPECT_PACKED_ERROR(zrt_cuda::attention_backward_packed_bf16_simt(
                          h, h, h, p, nullptr, nullptr, 1, 4, 2, 8),
                      "zrt_attention_backward_packed_bf16: dqkv is NULL");
}

TEST(CudaAttentionPackedArgs, EmptyBatchNeedsNoPointers) {
  // B * H == 0: nothing to compute, no pointer checked, nothing queued.
  EXPECT_EQ(zrt_cuda::attention_forward_packed(nullptr, nullptr, nullptr,
                                               nullptr, 0, 1024, 12, 64),
            ZRT_OK);
  EXPECT_EQ(zrt_cuda::attention_backward_packed(nullptr, nullptr, nullptr,
                                                nullptr, nullptr, nullptr, 16,
                                                1024, 0, 64),
            ZRT_OK);
  EXPECT_EQ(zrt_cuda::attention_forward_packed_bf16_simt(
                nullptr, nullptr, nullptr, nullptr, 0, 1024, 12, 64),
            ZRT_OK);
  EXPECT_EQ(zrt_cuda::attention_backward_packed_bf16_simt(
                nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 16, 1024,
                0, 64),
            ZRT_OK);
  EXPECT_EQ(zrt_cuda::attention_forward_packed_bf16_tc(nullptr, nullptr,
                                                       nullptr, 0, 1024, 12,
                                                       64),
            ZRT_OK);
  EXPECT_EQ(zrt_cuda::attention_backward_packed_bf16_tc(
                nullptr, nullptr, nullptr, nullptr, nullptr, 16, 1024, 0, 64),
            ZRT_OK);
}

TEST(CudaAttentionPackedArgs, TensorCoresRejectUnsupportedHeadSize) {
  std::vector<zrt_bf16> hbuf(3 * 96);
  float lbuf[8] = {};
  zrt_bf16 *h = hbuf.data();
  EXPECT_PACKED_ERROR(
      zrt_cuda::attention_forward_packed_bf16_tc(h, h, lbuf, 1, 8, 1, 48),
      "zrt_attention_forward_packed_bf16: no tensor-core kernel for D = 48");
  EXPECT_PACKED_ERROR(
      zrt_cuda::attention_backward_packed_bf16_tc(h, h, h, lbuf, h, 1, 8, 1,
                                                  96),
      "zrt_attention_backward_packed_bf16: no tensor-core kernel for D = 96");
}

} // namespace
