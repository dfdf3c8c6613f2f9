//===- cuda_decoder_test.cpp - decoder.cu against the CPU runtime ---------===//
//
// The CUDA RMSNorm, SiLU/SwiGLU and RoPE kernels (zrt/decoder.h) on device
// memory against the CPU runtime's on the same inputs: within rounding
// (warp-order row sums, CUDA's expf), bf16 within two bf16 steps; the
// rotary table bit for bit (both backends run rope_table.h on the host).
// The argument rules are the CPU's, message for message (no device
// needed). Runs on a GPU and, unchanged, on the emulator.
//
//===----------------------------------------------------------------------===//

#include "cuda_test_util.h"

namespace {

using namespace zrt_cuda_test;

std::vector<zrt_bf16> toBf16(const std::vector<float> &v) {
  std::vector<zrt_bf16> out(v.size());
  zrt_cast_f32_to_bf16(v.data(), out.data(), static_cast<int64_t>(v.size()));
  return out;
}

std::vector<float> widen(const std::vector<zrt_bf16> &v) {
  std::vector<float> out(v.size());
  zrt_cast_bf16_to_f32(v.data(), out.data(), static_cast<int64_t>(v.size()));
  return out;
}

class CudaDecoder : public CudaKernels {};

TEST_F(CudaDecoder, RmsNormForwardBackwardMatchCpu) {
  for (auto [N, C] : {std::pair<int64_t, int64_t>{3, 40}, {17, 768}}) {
    auto x = randomVec(N * C, 1, -2, 2), w = randomVec(C, 2, 0.5f, 1.5f),
         dy = randomVec(N * C, 3), add = randomVec(N * C, 4),
         b = randomVec(N * C, 5);
    std::vector<float> ref(N * C), sumRef(N * C), outRef(N * C), dxRef(N * C),
        dwRef(C);
    ASSERT_EQ(zrt_rms_norm(x.data(), w.data(), ref.data(), N, C, 1e-5f),
              ZRT_OK);
    ASSERT_EQ(zrt_add_rms_norm(x.data(), b.data(), w.data(), sumRef.data(),
                               outRef.data(), N, C, 1e-5f),
              ZRT_OK);
    ASSERT_EQ(zrt_rms_norm_backward(dy.data(), x.data(), w.data(), add.data(),
                                    dxRef.data(), dwRef.data(), nullptr, N, C,
                                    1e-5f),
              ZRT_OK);
    float *dx_ = dev(x), *dw_ = dev(w), *dy_ = dev(dy), *da = dev(add),
          *db = dev(b), *out = dev(N * C), *sum = dev(N * C),
          *out2 = dev(N * C), *gx = dev(N * C), *gw = dev(C);
    ASSERT_EQ(zrt_cuda::rms_norm(dx_, dw_, out, N, C, 1e-5f), ZRT_OK);
    expectClose(ref, host(out, N * C), 1e-7f, 2e-6f, "check 1");
    ASSERT_EQ(zrt_cuda::add_rms_norm(dx_, db, dw_, sum, out2, N, C, 1e-5f),
              ZRT_OK);
    expectSameBits(sumRef, host(sum, N * C), "sum");
    expectClose(outRef, host(out2, N * C), 1e-7f, 2e-6f, "check 2");
    ASSERT_EQ(zrt_cuda::rms_norm_backward(dy_, dx_, dw_, da, gx, gw, nullptr, N,
                                          C, 1e-5f),
              ZRT_OK);
    expectClose(dxRef, host(gx, N * C), 1e-6f, 1e-5f, "check 3");
    expectClose(dwRef, host(gw, C), 1e-5f, 1e-5f, "check 4");
    // bf16: within two bf16 steps of the CPU's bf16 kernel.
    auto xb = toBf16(x), wb = toBf16(w);
    std::vector<zrt_bf16> cb(N * C);
    ASSERT_EQ(zrt_rms_norm_bf16(xb.data(), wb.data(), cb.data(), N, C, 1e-5f),
              ZRT_OK);
    zrt_bf16 *ob = static_cast<zrt_bf16 *>(devBytes(N * C * 2));
    ASSERT_EQ(zrt_cuda::rms_norm_bf16(devOf(xb), devOf(wb), ob, N, C, 1e-5f),
              ZRT_OK);
    expectClose(widen(cb), widen(hostOf(ob, N * C)), 0.0f, 2.0f / 128,
                "check 5");
    zrt_cuda::arena_reset(arena_);
  }
}

TEST_F(CudaDecoder, SiluSwigluMatchCpu) {
  const int64_t n = 5000;
  auto g = randomVec(n, 6, -6, 6), u = randomVec(n, 7), d = randomVec(n, 8);
  std::vector<float> y(n), s(n), dg(n), du(n), ds(n);
  ASSERT_EQ(zrt_swiglu(g.data(), u.data(), y.data(), n), ZRT_OK);
  ASSERT_EQ(zrt_silu(g.data(), s.data(), n), ZRT_OK);
  ASSERT_EQ(zrt_swiglu_backward(g.data(), u.data(), d.data(), dg.data(),
                                du.data(), n),
            ZRT_OK);
  ASSERT_EQ(zrt_silu_backward(g.data(), d.data(), ds.data(), n), ZRT_OK);
  float *G = dev(g), *U = dev(u), *D = dev(d), *Y = dev(n), *S = dev(n),
        *DG = dev(n), *DU = dev(n), *DS = dev(n);
  ASSERT_EQ(zrt_cuda::swiglu(G, U, Y, n), ZRT_OK);
  ASSERT_EQ(zrt_cuda::silu(G, S, n), ZRT_OK);
  ASSERT_EQ(zrt_cuda::swiglu_backward(G, U, D, DG, DU, n), ZRT_OK);
  ASSERT_EQ(zrt_cuda::silu_backward(G, D, DS, n), ZRT_OK);
  expectClose(y, host(Y, n), 1e-7f, 1e-6f, "check 6");
  expectClose(s, host(S, n), 1e-7f, 1e-6f, "check 7");
  expectClose(dg, host(DG, n), 1e-7f, 1e-6f, "check 8");
  expectClose(du, host(DU, n), 1e-7f, 1e-6f, "check 9");
  expectClose(ds, host(DS, n), 1e-7f, 1e-6f, "check 10");
}

TEST_F(CudaDecoder, RopeTableAndRotationMatchCpu) {
  const int64_t B = 2, T = 33, H = 4, D = 64, half = D / 2, n = B * T * H * D;
  zrt_rope_scaling s{8.0, 1.0, 4.0, 8192};
  std::vector<float> table(T * half * 2);
  ASSERT_EQ(zrt_rope_table(table.data(), T, half, 500000.0, &s), ZRT_OK);
  float *dt = dev(T * half * 2);
  ASSERT_EQ(zrt_cuda::rope_table(dt, T, half, 500000.0, &s), ZRT_OK);
  expectSameBits(table, host(dt, T * half * 2), "table");
  auto x = randomVec(n, 9);
  float *dx = dev(x), *dy = dev(n);
  for (int layout : {ZRT_ROPE_ROTATE_HALF, ZRT_ROPE_INTERLEAVED})
    for (int inverse : {0, 1}) {
      std::vector<float> y(n);
      ASSERT_EQ(zrt_rope(x.data(), table.data(), y.data(), B, T, H, D, layout,
                         inverse),
                ZRT_OK);
      ASSERT_EQ(zrt_cuda::rope(dx, dt, dy, B, T, H, D, layout, inverse),
                ZRT_OK);
      expectClose(y, host(dy, n), 1e-7f, 1e-6f, "check 11");
    }
}

TEST(CudaDecoderArgs, SameErrorsAsTheCpu) {
  float x[8] = {}, y[8] = {};
  EXPECT_SAME_ERROR(zrt_cuda::rms_norm(x, nullptr, y, 1, 0, 1e-5f),
                    zrt_rms_norm(x, nullptr, y, 1, 0, 1e-5f));
  EXPECT_SAME_ERROR(zrt_cuda::rms_norm_backward(x, x, nullptr, x, nullptr,
                                                nullptr, nullptr, 1, 4, 1e-5f),
                    zrt_rms_norm_backward(x, x, nullptr, x, nullptr, nullptr,
                                          nullptr, 1, 4, 1e-5f));
  EXPECT_SAME_ERROR(zrt_cuda::add_rms_norm(x, y, nullptr, x, y, 1, 4, 1e-5f),
                    zrt_add_rms_norm(x, y, nullptr, x, y, 1, 4, 1e-5f));
  EXPECT_SAME_ERROR(zrt_cuda::swiglu(x, nullptr, y, 4),
                    zrt_swiglu(x, nullptr, y, 4));
  EXPECT_SAME_ERROR(zrt_cuda::rope(x, x, y, 1, 1, 1, 3, 0, 0),
                    zrt_rope(x, x, y, 1, 1, 1, 3, 0, 0));
  EXPECT_SAME_ERROR(zrt_cuda::rope(x, x, y, 1, 1, 1, 4, 5, 0),
                    zrt_rope(x, x, y, 1, 1, 1, 4, 5, 0));
  zrt_rope_scaling bad{8.0, 4.0, 1.0, 8192};
  EXPECT_SAME_ERROR(zrt_cuda::rope_table(x, 1, 2, 1e4, &bad),
                    zrt_rope_table(x, 1, 2, 1e4, &bad));
}

} // namespace
