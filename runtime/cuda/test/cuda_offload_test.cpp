//===- cuda_offload_test.cpp - offload.cpp: P_a+cpu's copies ---------------===//
//
// The pinned host block and the copy stream of P_a+cpu (zrt.h "Checkpoint
// offload to host memory"): a slice offloaded, its device buffer then
// overwritten by the compute stream, and fetched back into another device
// buffer comes back bit for bit; two copies in flight at once; the block's
// size and base; the argument rules (a host range outside the block, NULL
// pointers, a second block). Runs on a GPU and, unchanged, on the emulator
// (zrt.cuda.emulated.unit.CudaOffload.*).
//
//===----------------------------------------------------------------------===//

#include "cuda_test_util.h"

namespace {

using namespace zrt_cuda_test;

class CudaOffload : public CudaKernels {
protected:
  void TearDown() override {
    zrt_cuda::offload_host_destroy();
    CudaKernels::TearDown();
  }
};

TEST_F(CudaOffload, SlicesComeBackBitForBitAfterTheDeviceBufferIsReused) {
  constexpr int64_t kN = 1000, kSlot = 4096; // two 64-byte aligned slots
  ASSERT_EQ(zrt_cuda::offload_host_create(2 * kSlot), ZRT_OK)
      << zrt_cuda::last_error();
  EXPECT_EQ(zrt_cuda::offload_host_bytes(), 2 * kSlot);
  auto *block = static_cast<char *>(zrt_cuda::offload_host_base());
  ASSERT_NE(block, nullptr);
  const std::vector<float> a = randomVec(kN, 1), b = randomVec(kN, 2);
  float *dA = dev(a), *dB = dev(b);
  zrt_offload oa = nullptr, ob = nullptr;
  ASSERT_EQ(zrt_cuda::offload_start(dA, block, kN * 4, &oa), ZRT_OK)
      << zrt_cuda::last_error();
  ASSERT_EQ(zrt_cuda::offload_start(dB, block + kSlot, kN * 4, &ob), ZRT_OK);
  ASSERT_EQ(zrt_cuda::copy_wait("zrt_offload_wait", oa), ZRT_OK);
  ASSERT_EQ(zrt_cuda::copy_wait("zrt_offload_wait", ob), ZRT_OK);
  // The compute stream reuses the device buffers.
  const std::vector<float> junk(kN, -7.0f);
  ASSERT_EQ(zrt_cuda::copy_to_device(dA, junk.data(), kN * 4), ZRT_OK);
  ASSERT_EQ(zrt_cuda::copy_to_device(dB, junk.data(), kN * 4), ZRT_OK);
  float *backA = dev(kN), *backB = dev(kN);
  zrt_offload fa = nullptr, fb = nullptr;
  ASSERT_EQ(zrt_cuda::fetch_start(block + kSlot, backB, kN * 4, &fb), ZRT_OK)
      << zrt_cuda::last_error();
  ASSERT_EQ(zrt_cuda::fetch_start(block, backA, kN * 4, &fa), ZRT_OK);
  ASSERT_EQ(zrt_cuda::copy_wait("zrt_fetch_wait", fb), ZRT_OK);
  ASSERT_EQ(zrt_cuda::copy_wait("zrt_fetch_wait", fa), ZRT_OK);
  EXPECT_EQ(host(backA, kN), a);
  EXPECT_EQ(host(backB, kN), b);
}

TEST_F(CudaOffload, ArgumentsAreChecked) {
  ASSERT_EQ(zrt_cuda::offload_host_create(256), ZRT_OK);
  EXPECT_EQ(zrt_cuda::offload_host_create(256), ZRT_ERR_INVALID_ARGUMENT);
  auto *block = static_cast<char *>(zrt_cuda::offload_host_base());
  float *d = dev(128);
  zrt_offload op = nullptr;
  // 512 bytes do not fit the 256-byte block; nor does a host pointer
  // outside it.
  EXPECT_EQ(zrt_cuda::offload_start(d, block, 512, &op),
            ZRT_ERR_INVALID_ARGUMENT);
  std::vector<char> elsewhere(256);
  EXPECT_EQ(zrt_cuda::fetch_start(elsewhere.data(), d, 256, &op),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zrt_cuda::offload_start(nullptr, block, 64, &op),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zrt_cuda::offload_start(d, block, 64, nullptr),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zrt_cuda::copy_wait("zrt_fetch_wait", nullptr),
            ZRT_ERR_INVALID_ARGUMENT);
  zrt_cuda::offload_host_destroy();
  EXPECT_EQ(zrt_cuda::offload_host_base(), nullptr);
  EXPECT_EQ(zrt_cuda::offload_host_bytes(), 0);
  EXPECT_EQ(zrt_cuda::offload_host_create(-1), ZRT_ERR_INVALID_ARGUMENT);
}

} // namespace
