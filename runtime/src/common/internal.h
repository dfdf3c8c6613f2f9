//===- internal.h - Zero runtime private helpers -----------------*- C++ -*-===//
//
// Shared helpers for the runtime sources: error reporting, argument checks,
// bf16 bit manipulation (and the element-type loads/stores of the kernels
// templated over f32 / bf16) and the Philox counter-based generator.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_SRC_INTERNAL_H
#define ZRT_SRC_INTERNAL_H

#include "common/f16_bits.h"
#include "common/matmul_args.h"
#include "zrt/zrt.h"

#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <omp.h>

namespace zrt {

/// Records a printf-style message as the thread's last error and returns
/// `status`.
int fail(int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/// Returns ZRT_ERR_INVALID_ARGUMENT from the enclosing function with a
/// message "<fn>: <msg>" when `cond` is false.
#define ZRT_REQUIRE(cond, ...)                                                 \
  do {                                                                         \
    if (!(cond))                                                               \
      return ::zrt::fail(ZRT_ERR_INVALID_ARGUMENT, __VA_ARGS__);               \
  } while (0)

/// Checks that n >= 0 and that every pointer is non-NULL when n > 0.
#define ZRT_REQUIRE_BUF(fn, n, ptr)                                            \
  ZRT_REQUIRE((n) == 0 || (ptr) != nullptr, "%s: %s is NULL", fn, #ptr)

/// Every heap allocation the runtime makes goes through these two (arenas,
/// the request pool, staging buffers, kernel fallbacks), so that
/// zrt_heap_allocations() counts them all. `allocate` returns nullptr on
/// failure; `release(nullptr)` does nothing.
void *allocate(size_t bytes, size_t align = 64);
void release(void *p);

/// A grow-only float buffer on the counting allocator (no std::vector in the
/// runtime's step path): `reserve(n)` allocates only when n exceeds what it
/// already holds.
struct FloatBuffer {
  float *data = nullptr;
  int64_t capacity = 0;
  FloatBuffer() = default;
  FloatBuffer(const FloatBuffer &) = delete;
  FloatBuffer &operator=(const FloatBuffer &) = delete;
  ~FloatBuffer() { release(data); }
  bool reserve(int64_t n) {
    if (n <= capacity)
      return true;
    release(data);
    data = static_cast<float *>(
        allocate(static_cast<size_t>(n) * sizeof(float)));
    capacity = data ? n : 0;
    return data != nullptr;
  }
};

/// Re-executes the program with $OPENBLAS_CORETYPE set when OpenBLAS fell
/// back to SSE kernels on an AVX2/AVX-512 CPU it does not know
/// (blasCoreFor), and OMP_WAIT_POLICY=passive on an oversubscribed node
/// (waitPolicyFor; blas_core.cpp). Call first thing in main, before MPI starts; returns
/// when nothing is to be done or the exec failed.
void ensureBlasCore(int argc, char **argv);
/// The OPENBLAS_CORETYPE ensureBlasCore sets, from the core OpenBLAS chose
/// (`corename`, openblas_get_corename, any case) and what the CPU runs:
/// "SkylakeX" when it has AVX-512 F/BW/DQ/VL and OpenBLAS chose an SSE-era
/// fallback (a CPU it does not know, e.g. Intel Emerald Rapids under
/// 0.3.21), "Haswell" for a fallback on an AVX2 + FMA CPU; null (keep
/// OpenBLAS's choice) otherwise.
const char *blasCoreFor(const char *corename, bool avx512, bool avx2Fma);
/// The driver's default team size per rank: the node's `cores` over its
/// `localRanks` (at least 1), within the process's `affinityCpus` (ignored
/// when <= 0).
int defaultThreads(int cores, int localRanks, int affinityCpus);
/// The integer in `s` when it is one in [1, 4096], else 0 (NULL, empty,
/// trailing characters, out of range): how the runtime reads a thread or
/// rank count from a flag or the environment.
int positiveCount(const char *s);
/// The driver's team size per rank: `flagThreads` (--threads) when >= 1,
/// else $OMP_NUM_THREADS when positiveCount accepts it, else
/// defaultThreads over the node's cores, localRanks() and this process's
/// affinity. localRanks is called only in that last case (on MPI it is a
/// collective: every rank takes the same branch when flags and environment
/// agree).
int teamThreads(int flagThreads, int (*localRanks)(void *), void *context);
/// The OMP_WAIT_POLICY ensureBlasCore sets for a team of `threads` threads
/// in each of `localRanks` ranks on a node of `cores` cores while
/// `otherTasks` other tasks are runnable: "passive" when they oversubscribe
/// the cores (threads x localRanks + otherTasks > cores, and threads > 1),
/// null (libgomp's default: spin, then sleep) otherwise. Measurements in
/// blas_core.cpp.
const char *waitPolicyFor(int threads, int localRanks, int cores,
                          int otherTasks);

/// What a backend does first thing in zrt_train_main, before the runtime
/// starts: the CPU backend calls ensureBlasCore (blas_core.cpp); the CUDA
/// backend nothing (it picks its device in zrt_init).
void backendStartup(int argc, char **argv);

/// Causal row softmax of the scores in p ([T, T], row-major), in place
/// (max-subtracted, f32); entries above the diagonal become 0. When `lse`
/// is not NULL, lse[i] = max_i + log(sum_i) (attention.cpp; shared by
/// zrt_causal_attention and zrt_attention_forward).
void causalSoftmax(float *p, int64_t T, float *lse);

/// zrt_matmul_bf16 and its GELU forms (`epilogue`, matmul_args.h) on the
/// CPU with row chunks of at most `chunkFloats` f32 elements of op(A) and C
/// rows together (the zrt.h functions pass kMatmulBf16ChunkFloats; tests
/// pass small budgets to run many chunks). workspace:
/// matmulBf16Workspace(batch, M, N, K, bias, chunkFloats) floats. Errors:
/// as the zrt.h function (checkMatmulBf16Args).
int matmulBf16Chunked(const zrt_bf16 *A, const zrt_bf16 *B,
                      const zrt_bf16 *bias, zrt_bf16 *C, int64_t batch,
                      int64_t M, int64_t N, int64_t K, int trans_a, int trans_b,
                      float *workspace, int64_t chunkFloats,
                      const MatmulBf16Epilogue &epilogue = {});

/// out[i] = bf16(gelu(x[i])) for i < n: zrt_gelu's f32 arithmetic (the
/// same loop) on f32 inputs, rounded once (elementwise.cpp; no argument
/// checks, OpenMP-parallel like zrt_gelu).
void geluF32ToBf16(const float *x, zrt_bf16 *out, int64_t n);

/// dx[i] = bf16(gelu'(f32(x[i])) * dout[i]) for i < n: zrt_gelu_backward's
/// f32 arithmetic (the same loop) on bf16 x and f32 dout, rounded once; dx
/// may equal x (elementwise.cpp; no argument checks).
void geluBackwardBf16F32(const zrt_bf16 *x, const float *dout, zrt_bf16 *dx,
                         int64_t n);

/// Minimum element count before an elementwise loop goes parallel.
constexpr int64_t kParallelGrain = 1 << 15;

/// Function multi-versioning for the hot elementwise loops: GCC/Clang emit
/// AVX-512, AVX2+FMA and baseline clones and pick one at load time (ifunc),
/// so the library stays portable while using the machine's vector width.
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__) &&        \
    defined(__linux__) && !defined(ZRT_NO_TARGET_CLONES)
#define ZRT_SIMD_CLONES                                                        \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define ZRT_SIMD_CLONES
#endif

/// Splits [0, n) into one contiguous chunk per OpenMP thread (when n is
/// above `grain`) and calls f(begin, end) on each; chunk boundaries are
/// multiples of 16 floats so every thread's vector loop starts on a cache
/// line. Runs f(0, n) on the caller when n <= grain, with one thread, or
/// inside a parallel region.
template <typename F> void parallelChunks(int64_t n, int64_t grain, F &&f) {
  if (n <= grain || omp_get_max_threads() == 1 || omp_in_parallel()) {
    f(0, n);
    return;
  }
#pragma omp parallel
  {
    const int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
    const int64_t per = ((n + nt - 1) / nt + 15) / 16 * 16;
    const int64_t b = t * per < n ? t * per : n;
    const int64_t e = b + per < n ? b + per : n;
    if (b < e)
      f(b, e);
  }
}

/// Lanes of a deterministic reduction (fixedLaneSum).
constexpr int kReduceLanes = 64;

/// The sum of f(b, e) — a double partial over elements (or rows) [b, e) —
/// over kReduceLanes contiguous lanes of [0, n) whose bounds depend on n
/// only (multiples of 16), added in lane order on the calling thread: the
/// same bits for every thread count (an OpenMP `reduction` adds per-thread
/// partials, whose grouping follows the team size). The lanes go over the
/// team when `parallel` holds, there is more than one thread and the caller
/// is not already inside a parallel region.
template <typename F> double fixedLaneSum(int64_t n, bool parallel, F &&f) {
  double part[kReduceLanes];
  const int64_t per =
      ((n + kReduceLanes - 1) / kReduceLanes + 15) / 16 * 16;
  const bool team =
      parallel && omp_get_max_threads() > 1 && !omp_in_parallel();
#pragma omp parallel for schedule(static) if (team)
  for (int l = 0; l < kReduceLanes; ++l) {
    const int64_t b = l * per < n ? l * per : n;
    const int64_t e = b + per < n ? b + per : n;
    part[l] = b < e ? f(b, e) : 0.0;
  }
  double total = 0.0;
  for (int l = 0; l < kReduceLanes; ++l)
    total += part[l];
  return total;
}

/// exp(x) for f32 in a form the compiler vectorizes (no libm call): Cody-Waite
/// range reduction x = n ln2 + r, |r| <= ln2/2, a degree-6 polynomial for
/// e^r (Cephes expf, max relative error ~2 ulp) and 2^n built in the
/// exponent bits. x is clamped to [-87.3, 88.3] (results in
/// [1.2e-38, 2.1e38]: never inf or denormal); NaN is not propagated, so
/// callers must keep NaN flowing through another operand.
inline float expClamped(float x) {
  x = x < -87.3f ? -87.3f : x;
  x = x > 88.3f ? 88.3f : x;
  // Round x / ln2 to nearest with the 1.5 * 2^23 trick (no rounding call).
  const float magic = 12582912.0f;
  const float n = (x * 1.44269504088896341f + magic) - magic;
  float r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

inline float bf16ToF32(uint16_t h) {
  uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline uint16_t f32ToBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) // NaN: keep sign/payload, force quiet.
    return static_cast<uint16_t>((u >> 16) | 0x0040u);
  uint32_t bias = 0x7fffu + ((u >> 16) & 1u); // round to nearest even
  return static_cast<uint16_t>((u + bias) >> 16);
}

/// Loads and stores of the kernels templated over their tensors' element
/// type T (float for zrt_X, zrt_bf16 for zrt_X_bf16): every input element
/// is read through toF32 (bf16 widens exactly), the arithmetic is f32, and
/// every output element is written through fromF32<T> (bf16 rounds to
/// nearest even, f32ToBf16). The float instantiation is the f32 kernel
/// unchanged, so zrt_X_bf16 computes zrt_X on the widened inputs with the
/// same operations in the same order and rounds each output once.
inline float toF32(float x) { return x; }
inline float toF32(zrt_bf16 x) { return bf16ToF32(x); }
template <typename T> T fromF32(float x);
template <> inline float fromF32<float>(float x) { return x; }
template <> inline zrt_bf16 fromF32<zrt_bf16>(float x) { return f32ToBf16(x); }

/// zrt_add's arithmetic on one element of T: the f32 sum of the widened
/// values, rounded once (zrt_add(_bf16), and the residual adds of
/// zrt_add_layer_norm(_bf16) and zrt_layer_norm_backward_add(_bf16)).
template <typename T> inline T addElement(T a, T b) {
  return fromF32<T>(toF32(a) + toF32(b));
}

/// A templated loop body behind ZRT_SIMD_CLONES functions (one non-template
/// overload per element type, as Clang does not multi-version templates):
/// inlined into every clone, so each clone vectorizes it for its target.
#define ZRT_INLINE_LOOP inline __attribute__((always_inline))

/// Philox4x32-10 (Salmon et al., SC'11): 4x32-bit output for a 128-bit
/// counter and a 64-bit key.
struct Philox4x32 {
  uint32_t v[4];
};

inline Philox4x32 philox4x32(uint32_t c0, uint32_t c1, uint32_t c2,
                             uint32_t c3, uint64_t key) {
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = static_cast<uint64_t>(0xD2511F53u) * c0;
    uint64_t p1 = static_cast<uint64_t>(0xCD9E8D57u) * c2;
    uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    uint32_t n0 = hi1 ^ c1 ^ k0, n1 = lo1, n2 = hi0 ^ c3 ^ k1, n3 = lo0;
    c0 = n0; c1 = n1; c2 = n2; c3 = n3;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return {{c0, c1, c2, c3}};
}

/// The runtime's version: "0.1.0 (git <revision>)" (version.cpp).
const char *runtimeVersion();

} // namespace zrt

#endif // ZRT_SRC_INTERNAL_H
