//===- attention_packed_test.cpp - zrt_attention_*_packed on the CPU ------===//
//
// The packed attention functions read q, k, v in place from the
// [B, T, 3 C] projection and write out [B, T, C] and dqkv [B, T, 3 C]: they
// must compute exactly what zrt_attention_forward / _backward (and the
// bf16 forms) compute on the split, transposed copies, bit for bit, and
// reject the same bad calls.
//
//===----------------------------------------------------------------------===//

#include "zrt/zrt.h"

#include "test_util.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

using namespace zrt_test;

namespace {

struct Shape {
  int64_t B, T, H, D;
};

/// Shapes with one head, several heads, T not a multiple of anything, and
/// T = 1.
const Shape kShapes[] = {{1, 1, 1, 1}, {2, 17, 3, 8}, {1, 64, 2, 16},
                         {3, 5, 4, 3}};

/// [B, T, W] rows -> [B, H, T, D] heads of the columns [col0, col0 + H D).
template <typename T>
std::vector<T> splitHeads(const std::vector<T> &rows, const Shape &s,
                          int64_t W, int64_t col0) {
  std::vector<T> heads(s.B * s.H * s.T * s.D);
  for (int64_t b = 0; b < s.B; ++b)
    for (int64_t h = 0; h < s.H; ++h)
      for (int64_t t = 0; t < s.T; ++t)
        for (int64_t d = 0; d < s.D; ++d)
          heads[((b * s.H + h) * s.T + t) * s.D + d] =
              rows[(b * s.T + t) * W + col0 + h * s.D + d];
  return heads;
}

/// [B, H, T, D] heads -> the columns [col0, col0 + H D) of [B, T, W] rows.
template <typename T>
void mergeHeads(const std::vector<T> &heads, const Shape &s, int64_t W,
                int64_t col0, std::vector<T> &rows) {
  for (int64_t b = 0; b < s.B; ++b)
    for (int64_t h = 0; h < s.H; ++h)
      for (int64_t t = 0; t < s.T; ++t)
        for (int64_t d = 0; d < s.D; ++d)
          rows[(b * s.T + t) * W + col0 + h * s.D + d] =
              heads[((b * s.H + h) * s.T + t) * s.D + d];
}

template <typename T> bool sameBits(const std::vector<T> &a,
                                    const std::vector<T> &b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

std::string name(const Shape &s) {
  return "B=" + std::to_string(s.B) + " T=" + std::to_string(s.T) +
         " H=" + std::to_string(s.H) + " D=" + std::to_string(s.D);
}

std::vector<zrt_bf16> toBf16(const std::vector<float> &f) {
  std::vector<zrt_bf16> b(f.size());
  for (size_t i = 0; i < f.size(); ++i)
    b[i] = zrt_f32_to_bf16(f[i]);
  return b;
}

/// Runs the packed forward and backward on random data and the unpacked
/// functions on split copies; returns through EXPECTs. `Elem` is float or
/// zrt_bf16; the function pointers are the f32 or bf16 forms.
template <typename Elem, typename FwdPacked, typename BwdPacked, typename Fwd,
          typename Bwd>
void checkAgainstSplit(const Shape &s, int64_t workFloats, FwdPacked fwdPacked,
                       BwdPacked bwdPacked, Fwd fwd, Bwd bwd,
                       std::vector<Elem> (*make)(const std::vector<float> &)) {
  SCOPED_TRACE(name(s));
  const int64_t C = s.H * s.D, rows = s.B * s.T, n = rows * C;
  const std::vector<Elem> qkv = make(randomVec(rows * 3 * C, 7, -2.0f, 2.0f));
  const std::vector<Elem> dout = make(randomVec(n, 8));
  std::vector<float> work(workFloats);

  // Packed.
  std::vector<Elem> out(n), dqkv(rows * 3 * C);
  std::vector<float> lse(s.B * s.H * s.T);
  ASSERT_EQ(fwdPacked(qkv.data(), out.data(), lse.data(), work.data(), s.B,
                      s.T, s.H, s.D),
            ZRT_OK);
  ASSERT_EQ(bwdPacked(dout.data(), qkv.data(), out.data(), lse.data(),
                      dqkv.data(), work.data(), s.B, s.T, s.H, s.D),
            ZRT_OK);

  // Split copies, the [B, H, T, D] functions, merged back.
  const auto q = splitHeads(qkv, s, 3 * C, 0), k = splitHeads(qkv, s, 3 * C, C),
             v = splitHeads(qkv, s, 3 * C, 2 * C),
             dO = splitHeads(dout, s, C, 0);
  std::vector<Elem> o(n), dq(n), dk(n), dv(n);
  std::vector<float> refLse(lse.size());
  ASSERT_EQ(fwd(q.data(), k.data(), v.data(), o.data(), refLse.data(),
                work.data(), s.B, s.H, s.T, s.D),
            ZRT_OK);
  ASSERT_EQ(bwd(dO.data(), q.data(), k.data(), v.data(), o.data(),
                refLse.data(), dq.data(), dk.data(), dv.data(), work.data(),
                s.B, s.H, s.T, s.D),
            ZRT_OK);
  std::vector<Elem> refOut(n), refDqkv(rows * 3 * C);
  mergeHeads(o, s, C, 0, refOut);
  mergeHeads(dq, s, 3 * C, 0, refDqkv);
  mergeHeads(dk, s, 3 * C, C, refDqkv);
  mergeHeads(dv, s, 3 * C, 2 * C, refDqkv);

  EXPECT_TRUE(sameBits(out, refOut)) << "out";
  EXPECT_TRUE(sameBits(lse, refLse)) << "lse";
  EXPECT_TRUE(sameBits(dqkv, refDqkv)) << "dqkv";
}

std::vector<float> copyF32(const std::vector<float> &f) { return f; }

TEST(AttentionPackedTest, F32MatchesSplitHeadsBitForBit) {
  for (const Shape &s : kShapes)
    checkAgainstSplit<float>(s, zrt_attention_workspace(s.T),
                             zrt_attention_forward_packed,
                             zrt_attention_backward_packed,
                             zrt_attention_forward, zrt_attention_backward,
                             copyF32);
}

TEST(AttentionPackedTest, Bf16MatchesSplitHeadsBitForBit) {
  for (const Shape &s : kShapes)
    checkAgainstSplit<zrt_bf16>(s, zrt_attention_workspace_bf16(s.T, s.D),
                                zrt_attention_forward_packed_bf16,
                                zrt_attention_backward_packed_bf16,
                                zrt_attention_forward_bf16,
                                zrt_attention_backward_bf16, toBf16);
}

// Without a workspace each call allocates one (counted) and computes the
// same bits.
TEST(AttentionPackedTest, NullWorkspaceAllocatesAndAgrees) {
  const Shape s{2, 9, 2, 4};
  const int64_t C = s.H * s.D, rows = s.B * s.T;
  const auto qkv = randomVec(rows * 3 * C, 21), dout = randomVec(rows * C, 22);
  std::vector<float> work(zrt_attention_workspace(s.T));
  std::vector<float> out(rows * C), out2(rows * C), lse(s.B * s.H * s.T),
      lse2(lse.size()), dqkv(rows * 3 * C), dqkv2(rows * 3 * C);
  int64_t allocs = zrt_heap_allocations();
  ASSERT_EQ(zrt_attention_forward_packed(qkv.data(), out.data(), lse.data(),
                                         work.data(), s.B, s.T, s.H, s.D),
            ZRT_OK);
  ASSERT_EQ(zrt_attention_backward_packed(dout.data(), qkv.data(), out.data(),
                                          lse.data(), dqkv.data(), work.data(),
                                          s.B, s.T, s.H, s.D),
            ZRT_OK);
  EXPECT_EQ(zrt_heap_allocations(), allocs);
  ASSERT_EQ(zrt_attention_forward_packed(qkv.data(), out2.data(), lse2.data(),
                                         nullptr, s.B, s.T, s.H, s.D),
            ZRT_OK);
  ASSERT_EQ(zrt_attention_backward_packed(dout.data(), qkv.data(), out2.data(),
                                          lse2.data(), dqkv2.data(), nullptr,
                                          s.B, s.T, s.H, s.D),
            ZRT_OK);
  EXPECT_EQ(zrt_heap_allocations(), allocs + 2);
  EXPECT_TRUE(sameBits(out, out2));
  EXPECT_TRUE(sameBits(lse, lse2));
  EXPECT_TRUE(sameBits(dqkv, dqkv2));
}

TEST(AttentionPackedTest, RejectsBadArguments) {
  float f[64] = {};
  zrt_bf16 h[64] = {};
  auto expectInvalid = [](int status, const char *fn, const std::string &why) {
    EXPECT_EQ(status, ZRT_ERR_INVALID_ARGUMENT) << fn << " " << why;
    EXPECT_NE(std::string(zrt_last_error()).find(fn), std::string::npos)
        << zrt_last_error();
  };
  for (Shape s : {Shape{-1, 2, 1, 2}, Shape{1, 0, 1, 2}, Shape{1, 2, -1, 2},
                  Shape{1, 2, 1, 0}, Shape{1, int64_t(INT32_MAX) + 1, 1, 2},
                  // 3 H D above INT32_MAX: the packed row.
                  Shape{1, 2, int64_t(1) << 20, int64_t(1) << 10}}) {
    const std::string why = name(s);
    expectInvalid(zrt_attention_forward_packed(f, f, f, f, s.B, s.T, s.H, s.D),
                  "zrt_attention_forward_packed", why);
    expectInvalid(
        zrt_attention_backward_packed(f, f, f, f, f, f, s.B, s.T, s.H, s.D),
        "zrt_attention_backward_packed", why);
    expectInvalid(
        zrt_attention_forward_packed_bf16(h, h, f, f, s.B, s.T, s.H, s.D),
        "zrt_attention_forward_packed_bf16", why);
    expectInvalid(zrt_attention_backward_packed_bf16(h, h, h, f, h, f, s.B,
                                                     s.T, s.H, s.D),
                  "zrt_attention_backward_packed_bf16", why);
  }
  // Each missing pointer is named.
  expectInvalid(zrt_attention_forward_packed(nullptr, f, f, f, 1, 2, 1, 2),
                "qkv is NULL", "qkv");
  expectInvalid(zrt_attention_forward_packed(f, f, nullptr, f, 1, 2, 1, 2),
                "lse is NULL", "lse");
  expectInvalid(
      zrt_attention_backward_packed(f, f, f, f, nullptr, f, 1, 2, 1, 2),
      "dqkv is NULL", "dqkv");
  expectInvalid(
      zrt_attention_backward_packed_bf16(nullptr, h, h, f, h, f, 1, 2, 1, 2),
      "dout is NULL", "dout");
  // Nothing to compute (B = 0 or H = 0): NULL pointers are fine.
  EXPECT_EQ(zrt_attention_forward_packed(nullptr, nullptr, nullptr, nullptr, 0,
                                         2, 1, 2),
            ZRT_OK);
  EXPECT_EQ(zrt_attention_backward_packed_bf16(nullptr, nullptr, nullptr,
                                               nullptr, nullptr, nullptr, 1, 2,
                                               0, 2),
            ZRT_OK);
}

} // namespace
