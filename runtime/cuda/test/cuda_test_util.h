//===- cuda_test_util.h - shared fixture of the CUDA backend tests -*- C++ -*-===//
//
// Random inputs, tolerance checks and the CudaKernels fixture: a 64 MiB
// device arena per test with dev() (upload) and host() (download) helpers.
// Device tests skip (GTEST_SKIP) when cudaGetDeviceCount reports no device.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CUDA_TEST_UTIL_H
#define ZRT_CUDA_TEST_UTIL_H

#include "zrt_cuda.h"

#include "zrt/zrt.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace zrt_cuda_test {

inline std::vector<float> randomVec(int64_t n, uint32_t seed, float lo = -1.0f,
                                    float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float &x : v)
    x = dist(gen);
  return v;
}

inline void expectClose(const std::vector<float> &ref,
                        const std::vector<float> &got, float atol, float rtol,
                        const std::string &what) {
  ASSERT_EQ(ref.size(), got.size()) << what;
  for (size_t i = 0; i < ref.size(); ++i)
    ASSERT_NEAR(ref[i], got[i], atol + rtol * std::fabs(ref[i]))
        << what << " at " << i;
}

/// True when a CUDA device is usable; `why` says why not.
inline bool haveDevice(std::string *why) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err == cudaSuccess && count > 0)
    return true;
  *why = std::string("no CUDA device (cudaGetDeviceCount: ") +
         (err == cudaSuccess ? "0 devices" : cudaGetErrorString(err)) +
         "); run scripts/gpu-check on a machine with a GPU";
  return false;
}

class CudaKernels : public ::testing::Test {
protected:
  void SetUp() override {
    std::string why;
    if (!haveDevice(&why))
      GTEST_SKIP() << why;
    ASSERT_EQ(zrt_cuda::arena_create(64 << 20, ZRT_MEM_TEMPORARIES, &arena_),
              ZRT_OK)
        << zrt_cuda::last_error();
  }
  void TearDown() override { zrt_cuda::arena_destroy(arena_); }

  /// A device buffer of `bytes` bytes in the test arena (64-byte aligned),
  /// holding the bytes at `init` if given.
  void *devBytes(int64_t bytes, const void *init = nullptr) {
    int64_t off = 0;
    EXPECT_EQ(zrt_cuda::arena_alloc(arena_, bytes, 0, &off), ZRT_OK)
        << zrt_cuda::last_error();
    void *p = static_cast<char *>(zrt_cuda::arena_base(arena_)) + off;
    if (init) {
      EXPECT_EQ(zrt_cuda::copy_to_device(p, init, bytes), ZRT_OK)
          << zrt_cuda::last_error();
    }
    return p;
  }
  /// A device buffer of n floats in the test arena, holding `init` if given.
  float *dev(int64_t n, const std::vector<float> *init = nullptr) {
    return static_cast<float *>(devBytes(n * 4, init ? init->data() : nullptr));
  }
  float *dev(const std::vector<float> &init) {
    return dev(static_cast<int64_t>(init.size()), &init);
  }
  /// Device copy of a host vector of any trivially copyable T.
  template <typename T> T *devOf(const std::vector<T> &init) {
    return static_cast<T *>(
        devBytes(static_cast<int64_t>(init.size() * sizeof(T)), init.data()));
  }
  std::vector<float> host(const float *p, int64_t n) {
    return hostOf<float>(p, n);
  }
  /// n elements of T copied back from the device.
  template <typename T> std::vector<T> hostOf(const T *p, int64_t n) {
    std::vector<T> v(static_cast<size_t>(n));
    EXPECT_EQ(zrt_cuda::copy_to_host(v.data(), p,
                                     n * static_cast<int64_t>(sizeof(T))),
              ZRT_OK)
        << zrt_cuda::last_error();
    return v;
  }

  /// The first n doubles of the backend's workspace (zrt_cuda::workspace,
  /// not grown when it holds them): where the cross-entropy forward and the
  /// fused call leave their per-row losses (loss.cu), to compare the block
  /// reductions bit for bit (the f32 mean rounds most differences away).
  std::vector<double> workspaceDoubles(int64_t n) {
    void *p = nullptr;
    EXPECT_EQ(zrt_cuda::workspace(n * static_cast<int64_t>(sizeof(double)), &p,
                                  "workspaceDoubles"),
              ZRT_OK)
        << zrt_cuda::last_error();
    return hostOf(static_cast<const double *>(p), n);
  }

  zrt_arena arena_ = nullptr;
};

/// Bitwise equality of two vectors (NaN payloads and -0 included), with the
/// first differing index and both bit patterns on failure.
template <typename T>
void expectSameBits(const std::vector<T> &ref, const std::vector<T> &got,
                    const std::string &what) {
  ASSERT_EQ(ref.size(), got.size()) << what;
  for (size_t i = 0; i < ref.size(); ++i) {
    uint64_t a = 0, b = 0;
    std::memcpy(&a, &ref[i], sizeof(T));
    std::memcpy(&b, &got[i], sizeof(T));
    ASSERT_EQ(a, b) << what << " at " << i << ": expected bits 0x" << std::hex
                    << a << ", got 0x" << b << std::dec;
  }
}

/// A float from its IEEE bits.
inline float bitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

/// Milliseconds per call of `fn` on the compute stream (2 warm-up calls,
/// then `reps` timed); -1 when a call fails.
template <typename Fn> float timeOnStream(int reps, Fn fn) {
  for (int i = 0; i < 2; ++i)
    if (fn() != ZRT_OK)
      return -1.0f;
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaEventRecord(start, zrt_cuda::stream());
  for (int i = 0; i < reps; ++i)
    if (fn() != ZRT_OK)
      return -1.0f;
  cudaEventRecord(stop, zrt_cuda::stream());
  cudaEventSynchronize(stop);
  float ms = 0.0f;
  cudaEventElapsedTime(&ms, start, stop);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms / reps;
}

} // namespace zrt_cuda_test

/// Runs a zrt_cuda call and the CPU runtime's same call, which must both
/// fail: the same status and the same zrt_last_error() message.
#define EXPECT_SAME_ERROR(cudaCall, cpuCall)                                   \
  do {                                                                         \
    zrt_cuda::clear_error();                                                   \
    const int cudaStatus = (cudaCall);                                         \
    const std::string cudaMessage = zrt_cuda::last_error();                    \
    zrt_cuda::clear_error();                                                   \
    const int cpuStatus = (cpuCall);                                           \
    const std::string cpuMessage = zrt_last_error();                           \
    EXPECT_NE(cpuStatus, ZRT_OK) << #cpuCall;                                  \
    EXPECT_EQ(cudaStatus, cpuStatus) << #cudaCall;                             \
    EXPECT_EQ(cudaMessage, cpuMessage) << #cudaCall;                           \
  } while (0)

#endif // ZRT_CUDA_TEST_UTIL_H
