//===- elementwise.cu - CUDA backend: elementwise kernels and casts -------===//
//
// One grid-stride kernel per function; in-place calls (out == an input)
// are fine since every thread reads its element before writing it. The
// arithmetic is the CPU runtime's (runtime/src/cpu/elementwise.cpp, common.cpp,
// lowering_support.cpp) operation for operation; where the CPU evaluates
// a * b + c with two roundings (its baseline x86-64 build has no FMA),
// __fmul_rn / __fadd_rn keep nvcc from contracting it into an FMA, so
// those results are bit-identical to the CPU's (the backend is built
// without fast-math: denormals are kept, `/` and sqrtf are IEEE-rounded).
// The other kernels (gelu's polynomial, the bias kernel) let nvcc contract
// and agree to rounding. zrt_bias_backward sums columns in a fixed order
// (columnSums, device_util.cuh: 16-byte loads of W = 4 floats or 8 bf16
// columns per thread when N is a multiple of W and dout is 16-byte
// aligned, else one column per thread; the same sums either way).
//
// Native bf16 (zrt_add_bf16, zrt_gelu_bf16, zrt_gelu_backward_bf16,
// zrt_bias_backward_bf16): the same per-element functions (AddOp, GeluOp,
// GeluBackwardOp) and column sums on the widened values, each output
// rounded once. The bf16 elementwise kernels (and zrt_accumulate_bf16's
// y += x, through the same mapBf16Kernel) move 8 elements (16 bytes) per
// load and store when the pointers share their offset from a 16-byte
// boundary (a scalar head up to the first boundary and a scalar tail),
// else one element at a time: one read of each input and one write, in
// bf16.
//
//===----------------------------------------------------------------------===//

#include "device_util.cuh"

#include "../src/common/arg_checks.h"

#include <cuda_runtime.h>

#include <cstring>

namespace {

using namespace zrt_cuda;

__global__ void fillKernel(float *out, float value, int64_t n) {
  ZRT_GRID_STRIDE(i, n) out[i] = value;
}

// The per-element arithmetic of zrt_add, zrt_gelu and zrt_gelu_backward
// (op(x, y); y unused by the unary ones), shared by the f32 kernels and the
// bf16 ones, is in device_util.cuh: AddOp (shared with the residual adds of
// norm.cu), GeluOp and GeluBackwardOp (shared with the GELU epilogues of
// matmul_bf16.cu).

/// f32: out[i] = op(a[i], b[i]) (Arity 2) or op(a[i], 0) (Arity 1).
template <int Arity, typename Op>
__global__ void mapKernel(Op op, const float *a, const float *b, float *out,
                          int64_t n) {
  ZRT_GRID_STRIDE(i, n) {
    if constexpr (Arity == 2)
      out[i] = op(a[i], b[i]);
    else
      out[i] = op(a[i], 0.0f);
  }
}

/// bf16: out[i] = bf16(op(f32(a[i]), f32(b[i]))) (b unused for Arity 1),
/// i < n. Elements [head, head + 8 vecs) go as 16-byte vectors (all
/// pointers are 16-byte aligned there: mapBf16 checks), the `head` before
/// and the tail after them one by one. out may equal an input: every
/// element is read and written by one thread, reads first.
template <int Arity, typename Op>
__global__ void mapBf16Kernel(Op op, const zrt_bf16 *a, const zrt_bf16 *b,
                              zrt_bf16 *out, int64_t n, int64_t head,
                              int64_t vecs) {
  const int64_t body = head + vecs * kBf16PerVec; // first tail element
  const int64_t scalars = head + (n - body);
  ZRT_GRID_STRIDE(k, scalars) {
    const int64_t i = k < head ? k : body + (k - head);
    const float y = Arity == 2 ? bf16ToF32(b[i]) : 0.0f;
    out[i] = f32ToBf16(op(bf16ToF32(a[i]), y));
  }
  ZRT_GRID_STRIDE(v, vecs) {
    const int64_t i = head + v * kBf16PerVec;
    float x[kBf16PerVec], y[kBf16PerVec], r[kBf16PerVec];
    unpackBf16x8(*reinterpret_cast<const uint4 *>(a + i), x);
    if constexpr (Arity == 2)
      unpackBf16x8(*reinterpret_cast<const uint4 *>(b + i), y);
#pragma unroll
    for (int e = 0; e < kBf16PerVec; ++e)
      r[e] = op(x[e], Arity == 2 ? y[e] : 0.0f);
    *reinterpret_cast<uint4 *>(out + i) = packBf16x8(r);
  }
}

/// Launches mapBf16Kernel: vectors when a, b (Arity 2) and out lie at the
/// same offset from a 16-byte boundary (true for whole tensors: arena
/// allocations are at least 64-byte aligned), one element at a time
/// otherwise. n >= 1.
template <int Arity, typename Op>
int mapBf16(Op op, const zrt_bf16 *a, const zrt_bf16 *b, zrt_bf16 *out,
            int64_t n, const char *fn) {
  const uintptr_t mis = reinterpret_cast<uintptr_t>(a) & 15u;
  const bool together =
      (mis & 1u) == 0 && (reinterpret_cast<uintptr_t>(out) & 15u) == mis &&
      (Arity == 1 || (reinterpret_cast<uintptr_t>(b) & 15u) == mis);
  int64_t head = n, vecs = 0;
  if (together) {
    const int64_t h = bf16HeadToAlign16(a);
    head = h < n ? h : n;
    vecs = (n - head) / kBf16PerVec;
  }
  const int64_t scalars = n - vecs * kBf16PerVec;
  mapBf16Kernel<Arity, Op>
      <<<blocksFor(vecs > scalars ? vecs : scalars), kThreads, 0, stream()>>>(
          op, a, b, out, n, head, vecs);
  return launched(fn);
}

__global__ void scaleKernel(const float *x, float alpha, float *out,
                            int64_t n) {
  ZRT_GRID_STRIDE(i, n) out[i] = alpha * x[i];
}

// mode 0: C = bias; mode 1: C = (beta == 0 ? 0 : beta * C) (+ bias);
// mode 2: C += bias. Over batch matrices [M, N] at stride_c.
__global__ void biasKernel(const float *bias, float *C, float beta, int mode,
                           int64_t batch, int64_t M, int64_t N,
                           int64_t stride_c) {
  const int64_t mn = M * N, total = batch * mn;
  ZRT_GRID_STRIDE(t, total) {
    const int64_t b = t / mn, r = t - b * mn, j = r % N;
    float &c = C[b * stride_c + r];
    const float bj = bias ? bias[j] : 0.0f;
    if (mode == 0)
      c = bj;
    else if (mode == 1)
      c = (beta == 0.0f ? 0.0f : beta * c) + bj;
    else
      c += bj;
  }
}

__global__ void axpyKernel(float alpha, const float *x, float *y, int64_t n) {
  ZRT_GRID_STRIDE(i, n) y[i] = __fadd_rn(y[i], __fmul_rn(alpha, x[i]));
}

__global__ void mulKernel(const float *a, const float *b, float *out,
                          int64_t n) {
  ZRT_GRID_STRIDE(i, n) out[i] = a[i] * b[i];
}

/// da / db may be NULL (skipped); both read before either is written.
__global__ void mulBackwardKernel(const float *a, const float *b,
                                  const float *dout, float *da, float *db,
                                  int64_t n) {
  ZRT_GRID_STRIDE(i, n) {
    const float g = dout[i], av = a[i], bv = b[i];
    if (da)
      da[i] = g * bv;
    if (db)
      db[i] = g * av;
  }
}

/// NaN propagates (NaN < 0 is false), as the CPU runtime and torch.relu.
__global__ void reluKernel(const float *x, float *out, int64_t n) {
  ZRT_GRID_STRIDE(i, n) {
    const float v = x[i];
    out[i] = v < 0.0f ? 0.0f : v;
  }
}

__global__ void reluBackwardKernel(const float *x, const float *dout, float *dx,
                                   int64_t n) {
  ZRT_GRID_STRIDE(i, n) dx[i] = x[i] > 0.0f ? dout[i] : 0.0f;
}

__global__ void castF32ToBf16Kernel(const float *src, zrt_bf16 *dst,
                                    int64_t n) {
  ZRT_GRID_STRIDE(i, n) dst[i] = f32ToBf16(src[i]);
}

__global__ void castBf16ToF32Kernel(const zrt_bf16 *src, float *dst,
                                    int64_t n) {
  ZRT_GRID_STRIDE(i, n) dst[i] = bf16ToF32(src[i]);
}

__global__ void fillBf16Kernel(zrt_bf16 *out, zrt_bf16 value, int64_t n) {
  ZRT_GRID_STRIDE(i, n) out[i] = value;
}

// f16 (fp16-mixed storage): the shared conversions of f16_bits.h, so the
// bits are the CPU runtime's.
__global__ void castF32ToF16Kernel(const float *src, zrt_f16 *dst,
                                   int64_t n) {
  ZRT_GRID_STRIDE(i, n) dst[i] = zrt::f32ToF16(src[i]);
}

__global__ void castF16ToF32Kernel(const zrt_f16 *src, float *dst,
                                   int64_t n) {
  ZRT_GRID_STRIDE(i, n) dst[i] = zrt::f16ToF32(src[i]);
}

/// y[i] = f16(f32(y[i]) + f32(x[i])), as the CPU's zrt_accumulate_f16.
__global__ void accumulateF16Kernel(const zrt_f16 *x, zrt_f16 *y, int64_t n) {
  ZRT_GRID_STRIDE(i, n)
  y[i] = zrt::f32ToF16(
      __fadd_rn(zrt::f16ToF32(y[i]), zrt::f16ToF32(x[i])));
}

/// zrt_accumulate_bf16's per-element arithmetic, op(y, x) = y + x in f32
/// on the widened values (rounded once by the store), through mapBf16.
struct AccumulateOp {
  __device__ __forceinline__ float operator()(float y, float x) const {
    return __fadd_rn(y, x);
  }
};

/// The terms of zrt_bias_backward's column sums (columnSums): dout[r, j]
/// (T = float or zrt_bf16, widened), W columns of a row at a time.
template <typename T> struct BiasTerm {
  static constexpr int kVec = kVecOf<T>;
  const T *dout;
  int64_t N;
  bool aligned() const { return isAligned16(dout); }
  template <int W> struct Row { float g[W]; };
  template <int W> __device__ Row<W> load(int64_t r, int64_t j) const {
    Row<W> v;
    ldfVec<W>(dout + r * N + j, v.g);
    return v;
  }
  template <int W>
  __device__ void add(const Row<W> &v, float (&acc)[1][W]) const {
#pragma unroll
    for (int e = 0; e < W; ++e)
      acc[0][e] += v.g[e];
  }
};

/// f32ToBf16 on the host, for fill_bf16's value (as zrt::f32ToBf16).
zrt_bf16 hostF32ToBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return static_cast<zrt_bf16>((u >> 16) | 0x0040u);
  const uint32_t bias = 0x7fffu + ((u >> 16) & 1u);
  return static_cast<zrt_bf16>((u + bias) >> 16);
}

} // namespace

namespace zrt_cuda {

int fill(float *out, float value, int64_t n) {
  const char *fn = "zrt_fill";
  if (int st = zrt::checkFillArgs(fn, out, n, zrt_cuda::fail))
    return st;
  if (n == 0)
    return ZRT_OK;
  fillKernel<<<blocksFor(n), kThreads, 0, stream()>>>(out, value, n);
  return launched(fn);
}

int add(const float *a, const float *b, float *out, int64_t n) {
  const char *fn = "zrt_add";
  if (int st = zrt::checkBinaryArgs(fn, a, b, out, n, zrt_cuda::fail))
    return st;
  if (n == 0)
    return ZRT_OK;
  mapKernel<2><<<blocksFor(n), kThreads, 0, stream()>>>(AddOp{}, a, b, out, n);
  return launched(fn);
}

int scale(const float *x, float alpha, float *out, int64_t n) {
  const char *fn = "zrt_scale";
  if (int st = zrt::checkUnaryArgs(fn, x, out, n, zrt_cuda::fail))
    return st;
  if (n == 0)
    return ZRT_OK;
  scaleKernel<<<blocksFor(n), kThreads, 0, stream()>>>(x, alpha, out, n);
  return launched(fn);
}

int gelu(const float *x, float *out, int64_t n) {
  const char *fn = "zrt_gelu";
  if (int st = zrt::checkUnaryArgs(fn, x, out, n, zrt_cuda::fail))
    return st;
  if (n == 0)
    return ZRT_OK;
  mapKernel<1>
      <<<blocksFor(n), kThreads, 0, stream()>>>(GeluOp{}, x, nullptr, out, n);
  return launched(fn);
}

int gelu_backward(const float *x, const float *dout, float *dx, int64_t n) {
  const char *fn = "zrt_gelu_backward";
  if (int st =
          zrt::checkActivationBackwardArgs(fn, x, dout, dx, n, zrt_cuda::fail))
    return st;
  if (n == 0)
    return ZRT_OK;
  mapKernel<2><<<blocksFor(n), kThreads, 0, stream()>>>(GeluBackwardOp{}, x,
                                                        dout, dx, n);
  return launched(fn);
}

int copy(const float *x, float *out, int64_t n) {
  const char *fn = "zrt_copy";
  if (int st = zrt::checkUnaryArgs(fn, x, out, n, zrt_cuda::fail))
    return st;
  return moveBytes(out, x, n * static_cast<int64_t>(sizeof(float)), fn);
}

int add_backward(const float *dout, float *da, float *db, int64_t n) {
  const char *fn = "zrt_add_backward";
  if (int st = zrt::checkAddBackwardArgs(fn, dout, n, zrt_cuda::fail))
    return st;
  const int64_t bytes = n * static_cast<int64_t>(sizeof(float));
  if (da)
    if (int st = moveBytes(da, dout, bytes, fn))
      return st;
  if (db)
    if (int st = moveBytes(db, dout, bytes, fn))
      return st;
  return ZRT_OK;
}

int axpy(float alpha, const float *x, float *y, int64_t n) {
  const char *fn = "zrt_axpy";
  if (int st = zrt::checkAxpyArgs(fn, x, y, n, zrt_cuda::fail))
    return st;
  if (n == 0)
    return ZRT_OK;
  axpyKernel<<<blocksFor(n), kThreads, 0, stream()>>>(alpha, x, y, n);
  return launched(fn);
}

int mul(const float *a, const float *b, float *out, int64_t n) {
  const char *fn = "zrt_mul";
  if (int st = zrt::checkBinaryArgs(fn, a, b, out, n, zrt_cuda::fail))
    return st;
  if (n == 0)
    return ZRT_OK;
  mulKernel<<<blocksFor(n), kThreads, 0, stream()>>>(a, b, out, n);
  return launched(fn);
}

int mul_backward(const float *a, const float *b, const float *dout, float *da,
                 float *db, int64_t n) {
  const char *fn = "zrt_mul_backward";
  if (int st = zrt::checkMulBackwardArgs(fn, a, b, dout, n, zrt_cuda::fail))
    return st;
  if (n == 0 || (!da && !db))
    return ZRT_OK;
  mulBackwardKernel<<<blocksFor(n), kThreads, 0, stream()>>>(a, b, dout, da, db,
                                                             n);
  return launched(fn);
}

int relu(const float *x, float *out, int64_t n) {
  const char *fn = "zrt_relu";
  if (int st = zrt::checkUnaryArgs(fn, x, out, n, zrt_cuda::fail))
    return st;
  if (n == 0)
    return ZRT_OK;
  reluKernel<<<blocksFor(n), kThreads, 0, stream()>>>(x, out, n);
  return launched(fn);
}

int relu_backward(const float *x, const float *dout, float *dx, int64_t n) {
  const char *fn = "zrt_relu_backward";
  if (int st =
          zrt::checkActivationBackwardArgs(fn, x, dout, dx, n, zrt_cuda::fail))
    return st;
  if (n == 0)
    return ZRT_OK;
  reluBackwardKernel<<<blocksFor(n), kThreads, 0, stream()>>>(x, dout, dx, n);
  return launched(fn);
}

int cast_f32_to_bf16(const float *src, zrt_bf16 *dst, int64_t n) {
  const char *fn = "zrt_cast_f32_to_bf16";
  if (int st = zrt::checkCastArgs(fn, src, dst, n, zrt_cuda::fail))
    return st;
  if (n == 0)
    return ZRT_OK;
  castF32ToBf16Kernel<<<blocksFor(n), kThreads, 0, stream()>>>(src, dst, n);
  return launched(fn);
}

int cast_bf16_to_f32(const zrt_bf16 *src, float *dst, int64_t n) {
  const char *fn = "zrt_cast_bf16_to_f32";
  if (int st = zrt::checkCastArgs(fn, src, dst, n, zrt_cuda::fail))
    return st;
  if (n == 0)
    return ZRT_OK;
  castBf16ToF32Kernel<<<blocksFor(n), kThreads, 0, stream()>>>(src, dst, n);
  return launched(fn);
}

int fill_bf16(zrt_bf16 *out, float value, int64_t n) {
  const char *fn = "zrt_fill_bf16";
  if (int st = zrt::checkFillBf16Args(fn, out, n, zrt_cuda::fail))
    return st;
  if (n == 0)
    return ZRT_OK;
  fillBf16Kernel<<<blocksFor(n), kThreads, 0, stream()>>>(
      out, hostF32ToBf16(value), n);
  return launched(fn);
}

int cast_f32_to_f16(const float *src, zrt_f16 *dst, int64_t n) {
  const char *fn = "zrt_cast_f32_to_f16";
  if (int st = zrt::checkCastArgs(fn, src, dst, n, zrt_cuda::fail))
    return st;
  if (n == 0)
    return ZRT_OK;
  castF32ToF16Kernel<<<blocksFor(n), kThreads, 0, stream()>>>(src, dst, n);
  return launched(fn);
}

int cast_f16_to_f32(const zrt_f16 *src, float *dst, int64_t n) {
  const char *fn = "zrt_cast_f16_to_f32";
  if (int st = zrt::checkCastArgs(fn, src, dst, n, zrt_cuda::fail))
    return st;
  if (n == 0)
    return ZRT_OK;
  castF16ToF32Kernel<<<blocksFor(n), kThreads, 0, stream()>>>(src, dst, n);
  return launched(fn);
}

int fill_f16(zrt_f16 *out, float value, int64_t n) {
  const char *fn = "zrt_fill_f16";
  if (int st = zrt::checkFillBf16Args(fn, out, n, zrt_cuda::fail))
    return st;
  if (n == 0)
    return ZRT_OK;
  // The same 16-bit fill kernel: the value's f16 bits.
  fillBf16Kernel<<<blocksFor(n), kThreads, 0, stream()>>>(
      out, zrt::f32ToF16(value), n);
  return launched(fn);
}

int accumulate_f16(const zrt_f16 *x, zrt_f16 *y, int64_t n) {
  const char *fn = "zrt_accumulate_f16";
  if (int st = zrt::checkAccumulateBf16Args(fn, x, y, n, zrt_cuda::fail))
    return st;
  if (n == 0)
    return ZRT_OK;
  accumulateF16Kernel<<<blocksFor(n), kThreads, 0, stream()>>>(x, y, n);
  return launched(fn);
}

int accumulate_bf16(const zrt_bf16 *x, zrt_bf16 *y, int64_t n) {
  const char *fn = "zrt_accumulate_bf16";
  if (int st = zrt::checkAccumulateBf16Args(fn, x, y, n, zrt_cuda::fail))
    return st;
  if (n == 0)
    return ZRT_OK;
  // y += x: mapBf16's 16-byte vectors when x and y share their offset
  // from a 16-byte boundary (scalar head and tail), else element by element.
  return mapBf16<2>(AccumulateOp{}, y, x, y, n, fn);
}

/// As the CPU's zrt_bias_backward (matmul.cpp): f32 column sums; the
/// summation order differs (row chunks, then chunk totals), so results
/// agree to rounding, and rows == 0 writes zeros.
int bias_backward(const float *dout, float *dbias, int64_t rows, int64_t N) {
  const char *fn = "zrt_bias_backward";
  if (int st =
          zrt::checkBiasBackwardArgs(fn, dout, dbias, rows, N, zrt_cuda::fail))
    return st;
  if (N == 0)
    return ZRT_OK;
  return columnSums<1>(BiasTerm<float>{dout, N}, rows, N, dbias, nullptr, fn);
}

//===----------------------------------------------------------------------===//
// Native bf16 (zrt.h "Native bf16 kernels")
//===----------------------------------------------------------------------===//

int add_bf16(const zrt_bf16 *a, const zrt_bf16 *b, zrt_bf16 *out, int64_t n) {
  const char *fn = "zrt_add_bf16";
  if (int st = zrt::checkBinaryArgs(fn, a, b, out, n, zrt_cuda::fail))
    return st;
  if (n == 0)
    return ZRT_OK;
  return mapBf16<2>(AddOp{}, a, b, out, n, fn);
}

int gelu_bf16(const zrt_bf16 *x, zrt_bf16 *out, int64_t n) {
  const char *fn = "zrt_gelu_bf16";
  if (int st = zrt::checkUnaryArgs(fn, x, out, n, zrt_cuda::fail))
    return st;
  if (n == 0)
    return ZRT_OK;
  return mapBf16<1>(GeluOp{}, x, nullptr, out, n, fn);
}

int gelu_backward_bf16(const zrt_bf16 *x, const zrt_bf16 *dout, zrt_bf16 *dx,
                       int64_t n) {
  const char *fn = "zrt_gelu_backward_bf16";
  if (int st =
          zrt::checkActivationBackwardArgs(fn, x, dout, dx, n, zrt_cuda::fail))
    return st;
  if (n == 0)
    return ZRT_OK;
  return mapBf16<2>(GeluBackwardOp{}, x, dout, dx, n, fn);
}

/// zrt_bias_backward on bf16: the f32 column sums of bias_backward over the
/// widened dout, each rounded once.
int bias_backward_bf16(const zrt_bf16 *dout, zrt_bf16 *dbias, int64_t rows,
                       int64_t N) {
  const char *fn = "zrt_bias_backward_bf16";
  if (int st =
          zrt::checkBiasBackwardArgs(fn, dout, dbias, rows, N, zrt_cuda::fail))
    return st;
  if (N == 0)
    return ZRT_OK;
  return columnSums<1>(BiasTerm<zrt_bf16>{dout, N}, rows, N, dbias, nullptr,
                       fn);
}

namespace detail {

int launch_broadcast_bias(const float *bias, float *C, int64_t batch, int64_t M,
                          int64_t N, int64_t stride_c) {
  biasKernel<<<blocksFor(batch * M * N), kThreads, 0, stream()>>>(
      bias, C, 0.0f, 0, batch, M, N, stride_c);
  return cudaGetLastError();
}

int launch_scale_add_bias(const float *bias, float *C, float beta,
                          int64_t batch, int64_t M, int64_t N,
                          int64_t stride_c) {
  biasKernel<<<blocksFor(batch * M * N), kThreads, 0, stream()>>>(
      bias, C, beta, 1, batch, M, N, stride_c);
  return cudaGetLastError();
}

int launch_add_bias(const float *bias, float *C, int64_t batch, int64_t M,
                    int64_t N, int64_t stride_c) {
  biasKernel<<<blocksFor(batch * M * N), kThreads, 0, stream()>>>(
      bias, C, 0.0f, 2, batch, M, N, stride_c);
  return cudaGetLastError();
}

} // namespace detail
} // namespace zrt_cuda
