//===- onednn.cpp - One GEMM tile on the calling thread with oneDNN --------===//
//
// dnnl_sgemm for f32 and a matmul primitive for bf16 (onednn.h). The
// primitive is created per call: oneDNN's primitive cache (1,024 entries
// by default) returns the compiled kernel of a shape seen before, measured
// at 4-5 us per creation against 0.1-10 ms per tile GEMM of the training
// shapes. Its scratchpad (the packed B) is the calling thread's buffer,
// kept between calls: with oneDNN's own, every call allocated and freed it
// (malloc_consolidate, page faults: ~8 % of a bf16-mixed C = 768 step).
//
//===----------------------------------------------------------------------===//

#include "cpu/onednn.h"

#include "common/internal.h"

#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <cstdlib>
#include <cstring>
#include <unordered_map>

namespace {

/// The CPU engine, created once (thread-safe static initialization).
dnnl::engine &cpuEngine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

/// The primitive descriptor of C = op(A) op(B) (+ bias) for bf16 A, B,
/// bias and a C of element type `out`; transposes as strides.
dnnl::matmul::primitive_desc bf16Desc(bool transA, bool transB, int64_t M,
                                      int64_t N, int64_t K, int64_t lda,
                                      int64_t ldb, bool bias,
                                      dnnl::memory::data_type out,
                                      int64_t ldc) {
  using dims = dnnl::memory::dims;
  using dt = dnnl::memory::data_type;
  const dnnl::memory::desc a({M, K}, dt::bf16,
                             transA ? dims{1, lda} : dims{lda, 1});
  const dnnl::memory::desc b({K, N}, dt::bf16,
                             transB ? dims{1, ldb} : dims{ldb, 1});
  const dnnl::memory::desc c({M, N}, out, dims{ldc, 1});
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (bias) {
    const dnnl::memory::desc bd({1, N}, dt::bf16, dims{N, 1});
    return dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, bd, c), attr,
                                        cpuEngine());
  }
  return dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, c), attr,
                                      cpuEngine());
}

/// The calling thread's scratchpad of at least `bytes` (64-byte aligned),
/// grown as needed and kept for the thread's next call.
void *threadScratchpad(size_t bytes) {
  struct Buffer {
    void *p = nullptr;
    size_t size = 0;
    ~Buffer() { std::free(p); }
  };
  thread_local Buffer buffer;
  if (buffer.size < bytes) {
    std::free(buffer.p);
    const size_t size = (bytes + 63) / 64 * 64;
    buffer.p = std::aligned_alloc(64, size);
    buffer.size = buffer.p ? size : 0;
  }
  return buffer.p;
}

} // namespace

int zrt::onednn::sgemmTile(bool transA, bool transB, int64_t M, int64_t N,
                           int64_t K, float alpha, const float *A, int64_t lda,
                           const float *B, int64_t ldb, float beta, float *C,
                           int64_t ldc) {
  const dnnl_status_t st =
      dnnl_sgemm(transA ? 'T' : 'N', transB ? 'T' : 'N', M, N, K, alpha, A,
                 lda, B, ldb, beta, C, ldc);
  if (st != dnnl_success)
    return fail(ZRT_ERR_INVALID_ARGUMENT,
                "dnnl_sgemm(M=%lld, N=%lld, K=%lld): oneDNN status %d",
                (long long)M, (long long)N, (long long)K, int(st));
  return ZRT_OK;
}

int zrt::onednn::bf16Tile(bool transA, bool transB, int64_t M, int64_t N,
                          int64_t K, const zrt_bf16 *A, int64_t lda,
                          const zrt_bf16 *B, int64_t ldb, const zrt_bf16 *bias,
                          GemmOut C, int64_t ldc) {
  using dt = dnnl::memory::data_type;
  try {
    const auto pd = bf16Desc(transA, transB, M, N, K, lda, ldb, bias != nullptr,
                             C.bf16 ? dt::bf16 : dt::f32, ldc);
    dnnl::engine &eng = cpuEngine();
    dnnl::stream stream(eng);
    dnnl::memory a(pd.src_desc(), eng, const_cast<zrt_bf16 *>(A)),
        b(pd.weights_desc(), eng, const_cast<zrt_bf16 *>(B)),
        c(pd.dst_desc(), eng,
          C.bf16 ? static_cast<void *>(C.bf16) : static_cast<void *>(C.f32));
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}};
    const dnnl::memory::desc sd = pd.scratchpad_desc();
    if (sd.get_size() > 0) {
      void *scratch = threadScratchpad(sd.get_size());
      if (!scratch)
        return fail(ZRT_ERR_OUT_OF_MEMORY,
                    "oneDNN bf16 matmul: no memory for a %zu-byte scratchpad",
                    sd.get_size());
      args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(sd, eng, scratch));
    }
    if (bias)
      args.emplace(DNNL_ARG_BIAS,
                   dnnl::memory(pd.bias_desc(), eng,
                                const_cast<zrt_bf16 *>(bias)));
    dnnl::matmul(pd).execute(stream, args);
    stream.wait();
  } catch (const dnnl::error &e) {
    return fail(ZRT_ERR_INVALID_ARGUMENT,
                "oneDNN bf16 matmul (M=%lld, N=%lld, K=%lld): %s (status %d)",
                (long long)M, (long long)N, (long long)K, e.what(),
                int(e.status));
  }
  return ZRT_OK;
}

bool zrt::onednn::hasNativeBf16() {
  static const bool native = [] {
    try {
      const auto pd = bf16Desc(false, false, 64, 64, 64, 64, 64, false,
                               dnnl::memory::data_type::f32, 64);
      return std::strncmp(pd.impl_info_str(), "ref", 3) != 0;
    } catch (const dnnl::error &) {
      return false;
    }
  }();
  return native;
}
