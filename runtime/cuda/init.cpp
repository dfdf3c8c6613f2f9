//===- init.cpp - CUDA backend: parameter initializers --------------------===//
//
// zrt_init_normal, zrt_init_uniform and zrt_init_param_slice on device
// memory. The values are computed on the HOST with the CPU runtime's own
// per-element code (runtime/src/common/rng_math.h: Philox4x32-10, Box-Muller in
// double), in chunks of a host staging buffer, and copied to the device with
// copy_to_device, so a GPU run starts from exactly the CPU run's bits. These
// run once at start-up: the copies synchronize, and the staging buffer is
// allocated per call (counted by zrt_heap_allocations).
//
//===----------------------------------------------------------------------===//

#include "zrt_cuda.h"

#include "../src/common/arg_checks.h"
#include "../src/common/internal.h"
#include "../src/common/rng_math.h"

#include <algorithm>
#include <cstdint>
#include <new>

namespace {

/// Elements per staging chunk (64 MiB of f32).
constexpr int64_t kStagingElems = int64_t(16) << 20;
/// Chunks below this many elements are filled by the calling thread alone.
constexpr int64_t kParallelMin = int64_t(1) << 16;

/// A host staging buffer of `bytes` bytes, counted as one heap allocation.
struct Staging {
  unsigned char *data = nullptr;
  Staging(const Staging &) = delete;
  Staging &operator=(const Staging &) = delete;
  explicit Staging(int64_t bytes) {
    zrt_cuda::count_allocation();
    data = new (std::nothrow) unsigned char[static_cast<size_t>(bytes)];
  }
  ~Staging() { delete[] data; }
};

/// Writes value(i) for i in [0, n) to the device array `dst` of f32
/// (bf16 == false) or bf16 (bf16 == true, each value rounded with
/// f32ToBf16), through a staging buffer of at most kStagingElems elements.
/// dtype ZRT_F16 rounds each value with f32ToF16 instead.
template <typename Value>
int stageToDevice(const char *fn, void *dst, bool bf16, int64_t n,
                  const Value &value, int dtype = ZRT_F32) {
  const bool f16 = dtype == ZRT_F16;
  const int64_t chunk = std::min(n, kStagingElems);
  const int64_t eb = bf16 || f16 ? 2 : 4;
  Staging staging(chunk * eb);
  if (!staging.data)
    return zrt_cuda::fail(ZRT_ERR_OUT_OF_MEMORY,
                          "%s: cannot allocate %lld bytes of host staging", fn,
                          (long long)(chunk * eb));
  float *f32 = reinterpret_cast<float *>(staging.data);
  uint16_t *b16 = reinterpret_cast<uint16_t *>(staging.data);
  for (int64_t c = 0; c < n; c += chunk) {
    const int64_t m = std::min(chunk, n - c);
    // Host OpenMP threads (zrt_set_num_threads); every element is a pure
    // function of its index, so the split does not change the values.
    if (f16) {
#pragma omp parallel for schedule(static) if (m > kParallelMin)
      for (int64_t i = 0; i < m; ++i)
        b16[i] = zrt::f32ToF16(value(c + i));
    } else if (bf16) {
#pragma omp parallel for schedule(static) if (m > kParallelMin)
      for (int64_t i = 0; i < m; ++i)
        b16[i] = zrt::f32ToBf16(value(c + i));
    } else {
#pragma omp parallel for schedule(static) if (m > kParallelMin)
      for (int64_t i = 0; i < m; ++i)
        f32[i] = value(c + i);
    }
    // Synchronous: the staging buffer may be refilled once this returns.
    if (int st = zrt_cuda::copy_to_device(static_cast<char *>(dst) + c * eb,
                                          staging.data, m * eb))
      return st;
  }
  return ZRT_OK;
}

} // namespace

namespace zrt_cuda {

/// zrt_init_normal: ptr[i] = element offset + i of the normal stream `seed`.
int init_normal(float *ptr, int64_t n, float mean, float std, uint64_t seed,
                int64_t offset) {
  const char *fn = "zrt_init_normal";
  if (int st =
          zrt::checkInitNormalArgs(fn, ptr, n, std, offset, zrt_cuda::fail))
    return st;
  if (n == 0)
    return ZRT_OK;
  return stageToDevice(fn, ptr, false, n, [=](int64_t i) {
    return zrt::normalElement(seed, static_cast<uint64_t>(offset + i), mean,
                              std);
  });
}

/// zrt_init_uniform: ptr[i] = element offset + i of the uniform stream
/// `seed` in [low, high).
int init_uniform(float *ptr, int64_t n, float low, float high, uint64_t seed,
                 int64_t offset) {
  const char *fn = "zrt_init_uniform";
  if (int st = zrt::checkInitUniformArgs(fn, ptr, n, low, high, offset,
                                         zrt_cuda::fail))
    return st;
  if (n == 0)
    return ZRT_OK;
  return stageToDevice(fn, ptr, false, n, [=](int64_t i) {
    return zrt::uniformElement(seed, static_cast<uint64_t>(offset + i), low,
                               high);
  });
}

/// zrt_init_param_slice (lowering_support.cpp): the parameter's elements
/// that fall in the slice get their init value (bf16: rounded RNE); the
/// other elements of `data` are left unchanged.
int init_param_slice(void *data, int dtype, int64_t slice_begin,
                     int64_t slice_n, int64_t member_offset,
                     int64_t member_numel, int init_kind, float std,
                     uint64_t seed) {
  const char *fn = "zrt_init_param_slice";
  if (int st = zrt::checkInitParamSliceArgs(
          fn, data, dtype, slice_begin, slice_n, member_offset, member_numel,
          init_kind, std, zrt_cuda::fail))
    return st;
  const zrt::ParamSliceOverlap o =
      zrt::paramSliceOverlap(slice_begin, slice_n, member_offset, member_numel);
  if (o.n == 0)
    return ZRT_OK;
  const bool bf16 = dtype == ZRT_BF16;
  char *dst = static_cast<char *>(data) + o.at * zrt::dtypeBytes(dtype);
  const int64_t first = o.first;
  return stageToDevice(
      fn, dst, bf16, o.n,
      [=](int64_t i) {
        return zrt::paramInitElement(init_kind, std, seed, first + i);
      },
      dtype);
}

} // namespace zrt_cuda
