//===- offload_test.cpp - the CPU backend's P_a+cpu ABI -------------------===//
//
// zrt.h "Checkpoint offload to host memory" on the CPU backend, whose
// arenas are host memory (zero-offload-checkpoints leaves a CPU step alone;
// the functions keep the one C ABI linkable): a copy is done when it
// starts, a wait does nothing, and the argument rules are the CUDA
// backend's (runtime/cuda/test/cuda_offload_test.cpp).
//
//===----------------------------------------------------------------------===//

#include "zrt/zrt.h"

#include <gtest/gtest.h>

#include <vector>

namespace {

TEST(Offload, CopiesToTheBlockAndBack) {
  ASSERT_EQ(zrt_offload_host_create(256), ZRT_OK);
  EXPECT_EQ(zrt_offload_host_bytes(), 256);
  auto *block = static_cast<char *>(zrt_offload_host_base());
  ASSERT_NE(block, nullptr);
  std::vector<float> a(32), back(32, -1.0f);
  for (int i = 0; i < 32; ++i)
    a[i] = 0.5f * i - 3.0f;
  zrt_offload op = nullptr;
  ASSERT_EQ(zrt_offload_start(a.data(), block + 64, 128, &op), ZRT_OK);
  ASSERT_EQ(zrt_offload_wait(op), ZRT_OK);
  std::fill(a.begin(), a.end(), 9.0f);
  ASSERT_EQ(zrt_fetch_start(block + 64, back.data(), 128, &op), ZRT_OK);
  ASSERT_EQ(zrt_fetch_wait(op), ZRT_OK);
  for (int i = 0; i < 32; ++i)
    EXPECT_EQ(back[i], 0.5f * i - 3.0f);
  // Outside the block, NULL pointers, a second block: refused.
  EXPECT_EQ(zrt_offload_start(a.data(), block + 192, 128, &op),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(zrt_last_error(),
               "zrt_offload_start: NULL pointer, bytes < 0, or a host range "
               "outside the host block");
  EXPECT_EQ(zrt_offload_start(a.data(), block + 64, -1, &op),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zrt_fetch_start(a.data(), back.data(), 16, &op),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zrt_offload_start(nullptr, block, 16, &op),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zrt_fetch_wait(nullptr), ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zrt_offload_host_create(64), ZRT_ERR_INVALID_ARGUMENT);
  zrt_offload_host_destroy();
  EXPECT_EQ(zrt_offload_host_base(), nullptr);
  EXPECT_EQ(zrt_offload_host_bytes(), 0);
}

} // namespace
