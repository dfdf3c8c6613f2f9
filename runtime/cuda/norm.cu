//===- norm.cu - CUDA backend: layer normalization and softmax ------------===//
//
// Row-wise kernels over [N, C] with one warp per row (kRowsPerBlock rows
// per block); the row's sums are warp reductions. Softmax's lanes take the
// columns j = lane, lane + 32, ... The layer-norm kernels' lanes take
// chunks of kChunk = 8 contiguous columns, lane l the chunks at (l + 32 k)
// * 8, k = 0, 1, ... (a warp covers 256 contiguous columns per k), with
// 16-byte loads and stores (one per chunk for bf16, two for f32) when C is
// a multiple of 8 and the tensors are 16-byte aligned, element by element
// otherwise (the scalar path). When the lane's chunks fit in registers (C
// <= 1024: K = ceil(C / 256) <= 4 chunks per lane, a template parameter),
// a kernel loads all of its row's chunks first (every load in flight at
// once) and its passes (statistics, then the outputs) reuse them, so each
// tensor is read from DRAM once; longer rows are re-read by each pass
// (mostly from L1). Every path sums a lane's elements in the same order
// (chunk by chunk, column by column), so all of them, and the f32 and bf16
// kernels, give the same bits. Per element the arithmetic is the CPU
// runtime's (runtime/src/cpu/norm.cpp, lowering_support.cpp) operation for
// operation, with __fmul_rn / __fadd_rn / __fsub_rn where nvcc would
// otherwise contract a multiply-add into an FMA, and __fdiv_rn / __fsqrt_rn
// for the divisions and square roots (IEEE-rounded as on the CPU, whatever
// flags the backend is built with; it uses no fast-math). The row sums are
// f32 as on the CPU but in a different order (the CPU's sequential sums
// lose more, growing with C), and softmax's expf is CUDA's (2 ulp), so
// results agree to rounding (about 1e-6 relative), not bit for bit.
// layer_norm_backward's dweight / dbias are deterministic column sums
// (columnSums, device_util.cuh).
//
// The layer-norm kernels are templated over the element type T of x, out,
// dout, weight, bias, dx (float, or zrt_bf16 for the native bf16 functions
// of zrt.h): loads widen exactly (unpackChunk), stores round once
// (packChunk: f32ToBf16, as stf), and everything in between, the
// statistics (f32) included, is the same code, so a bf16 call computes the
// f32 kernel's numbers on the widened values with one rounding per output
// (and reads and writes half the bytes).
//
// The residual-add forms (llm.c's fused_residual_forward and its
// layernorm_backward accumulating into dresidual) are the same kernels with
// the row's source and dx's store generalized: zrt_add_layer_norm's warp
// computes its row of sum = a + b (AddOp, zrt_add's arithmetic), stores it
// and keeps it in registers (or, for longer rows, in shared memory), and
// normalizes it from there with the layer-norm row code (normalizeRow);
// zrt_layer_norm_backward_add's dx kernel adds the addend to each dx value
// as stored (asStored). Both are
// therefore bit for bit the unfused zrt_add + zrt_layer_norm and
// zrt_layer_norm_backward + zrt_add of this backend, in one pass.
//
//===----------------------------------------------------------------------===//

#include "device_util.cuh"

#include "../src/common/arg_checks.h"

#include <cuda_runtime.h>

#include <initializer_list>
#include <type_traits>

namespace {

using namespace zrt_cuda;

/// The row handled by the calling warp (kRowsPerBlock warps per block).
__device__ __forceinline__ int64_t warpRow() {
  return blockIdx.x * static_cast<int64_t>(kRowsPerBlock) + (threadIdx.x >> 5);
}

//===----------------------------------------------------------------------===//
// Layer-norm rows in chunks
//===----------------------------------------------------------------------===//

/// Columns per chunk, a lane's unit of a layer-norm row: lane l takes the
/// chunks at columns j = (l + 32 k) * kChunk, k = 0, 1, ..., and sums their
/// elements in that order (k, then the column), on every path (vector or
/// scalar, cached or not) and for both element types, so all of them give
/// the same bits.
constexpr int kChunk = 8;
static_assert(kChunk == kBf16PerVec, "a bf16 chunk is one 16-byte vector");
/// Chunks per lane kept in registers at most (C <= 32 * 8 * 4 = 1024);
/// longer rows are re-read (from L1 / L2) by each pass.
constexpr int kMaxCachedChunks = 4;

/// A chunk of T as loaded and stored: one 16-byte vector of bf16, two of
/// f32.
template <typename T> struct Chunk;
template <> struct Chunk<zrt_bf16> { uint4 w; };
template <> struct Chunk<float> { float4 lo, hi; };

/// The chunk of p at columns [j, j + 8) of a row of C columns: Vec, with
/// 16-byte loads (then j + 8 <= C and p + j is 16-byte aligned); else
/// element by element, the columns from C on zero.
template <bool Vec>
__device__ __forceinline__ Chunk<zrt_bf16> loadChunk(const zrt_bf16 *p,
                                                     int64_t j, int64_t C) {
  Chunk<zrt_bf16> c;
  if constexpr (Vec) {
    c.w = *reinterpret_cast<const uint4 *>(p + j);
  } else {
    uint32_t u[4] = {0u, 0u, 0u, 0u};
#pragma unroll
    for (int e = 0; e < kChunk; ++e)
      if (j + e < C)
        u[e >> 1] |= static_cast<uint32_t>(p[j + e]) << (16 * (e & 1));
    c.w = make_uint4(u[0], u[1], u[2], u[3]);
  }
  return c;
}
template <bool Vec>
__device__ __forceinline__ Chunk<float> loadChunk(const float *p, int64_t j,
                                                  int64_t C) {
  Chunk<float> c;
  if constexpr (Vec) {
    c.lo = *reinterpret_cast<const float4 *>(p + j);
    c.hi = *reinterpret_cast<const float4 *>(p + j + 4);
  } else {
    float f[kChunk];
#pragma unroll
    for (int e = 0; e < kChunk; ++e)
      f[e] = j + e < C ? p[j + e] : 0.0f;
    c.lo = make_float4(f[0], f[1], f[2], f[3]);
    c.hi = make_float4(f[4], f[5], f[6], f[7]);
  }
  return c;
}

/// The chunk's 8 values widened exactly to f32 (ldf).
__device__ __forceinline__ void unpackChunk(const Chunk<zrt_bf16> &c,
                                            float (&f)[kChunk]) {
  unpackBf16x8(c.w, f);
}
__device__ __forceinline__ void unpackChunk(const Chunk<float> &c,
                                            float (&f)[kChunk]) {
  f[0] = c.lo.x, f[1] = c.lo.y, f[2] = c.lo.z, f[3] = c.lo.w;
  f[4] = c.hi.x, f[5] = c.hi.y, f[6] = c.hi.z, f[7] = c.hi.w;
}

/// f32 results as a chunk of T, each rounded once as stf does.
template <typename T>
__device__ __forceinline__ Chunk<T> packChunk(const float (&f)[kChunk]);
template <>
__device__ __forceinline__ Chunk<zrt_bf16> packChunk(const float (&f)[kChunk]) {
  return {packBf16x8(f)};
}
template <>
__device__ __forceinline__ Chunk<float> packChunk(const float (&f)[kChunk]) {
  return {make_float4(f[0], f[1], f[2], f[3]),
          make_float4(f[4], f[5], f[6], f[7])};
}

/// Stores chunk c at columns [j, j + 8) of p, a row of C columns: as
/// loadChunk, with 16-byte stores when Vec, else the columns below C one
/// by one.
template <bool Vec>
__device__ __forceinline__ void storeChunk(zrt_bf16 *p, int64_t j, int64_t C,
                                           const Chunk<zrt_bf16> &c) {
  if constexpr (Vec) {
    *reinterpret_cast<uint4 *>(p + j) = c.w;
  } else {
    const uint32_t u[4] = {c.w.x, c.w.y, c.w.z, c.w.w};
#pragma unroll
    for (int e = 0; e < kChunk; ++e)
      if (j + e < C)
        p[j + e] = static_cast<zrt_bf16>(u[e >> 1] >> (16 * (e & 1)));
  }
}
template <bool Vec>
__device__ __forceinline__ void storeChunk(float *p, int64_t j, int64_t C,
                                           const Chunk<float> &c) {
  if constexpr (Vec) {
    *reinterpret_cast<float4 *>(p + j) = c.lo;
    *reinterpret_cast<float4 *>(p + j + 4) = c.hi;
  } else {
    float f[kChunk];
    unpackChunk(c, f);
#pragma unroll
    for (int e = 0; e < kChunk; ++e)
      if (j + e < C)
        p[j + e] = f[e];
  }
}

/// Calls f(k, j) for the calling lane's chunks k = 0, 1, ... of a row of C
/// columns, j = (lane + 32 k) * kChunk < C, in that order: K > 0 (then
/// C <= 256 K), an unrolled loop (k a constant: it indexes register
/// arrays); K == 0, a loop over the whole row.
template <int K, typename F>
__device__ __forceinline__ void forChunks(int lane, int64_t C, F &&f) {
  if constexpr (K > 0) {
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const int64_t j = static_cast<int64_t>(lane + 32 * k) * kChunk;
      if (j < C)
        f(static_cast<int64_t>(k), j);
    }
  } else {
    int64_t k = 0;
    for (int64_t j = static_cast<int64_t>(lane) * kChunk; j < C;
         j += 32 * kChunk, ++k)
      f(k, j);
  }
}

/// A lane's view of one row p [C] of T: K > 0, its chunks loaded into
/// registers once (load(), or set by the caller), so that the passes over
/// the row read DRAM once and every load is issued before the first use;
/// K == 0, each at() reads the chunk from p. Vec: 16-byte accesses (C a
/// multiple of kChunk, p 16-byte aligned).
template <typename T, int K, bool Vec> struct RowChunks {
  const T *p;
  int64_t C;
  // Value-initialized: a tensor that is NULL (no weight or bias) is never
  // loaded nor read, but host compilers (the emulator) cannot see that.
  Chunk<T> c[K > 0 ? K : 1]{};
  __device__ __forceinline__ RowChunks(const T *p, int64_t C) : p(p), C(C) {}
  /// Loads the lane's chunks (K > 0; nothing to do for K == 0).
  __device__ __forceinline__ void load(int lane) {
    if constexpr (K > 0)
      forChunks<K>(lane, C, [&](int64_t k, int64_t j) {
        c[k] = loadChunk<Vec>(p, j, C);
      });
  }
  /// The lane's chunk k at column j, widened to f32.
  __device__ __forceinline__ void at(int64_t k, int64_t j,
                                     float (&f)[kChunk]) const {
    if constexpr (K > 0)
      unpackChunk(c[k], f);
    else
      unpackChunk(loadChunk<Vec>(p, j, C), f);
  }
};

/// Two-pass f32 mean and 1 / sqrt(var + eps) of the row x, as
/// zrt_layer_norm: mean = sum / C, var = sum (x - mean)^2 / C (biased).
/// Called by all 32 lanes of a warp; every lane gets the same m and s (the
/// xor-butterfly sums are bitwise identical on all lanes).
template <typename T, int K, bool Vec>
__device__ __forceinline__ void rowStats(const RowChunks<T, K, Vec> &x,
                                         float eps, int lane, float &m,
                                         float &s) {
  const int64_t C = x.C;
  float sum = 0.0f;
  forChunks<K>(lane, C, [&](int64_t k, int64_t j) {
    float f[kChunk];
    x.at(k, j, f);
#pragma unroll
    for (int e = 0; e < kChunk; ++e)
      if (Vec || j + e < C)
        sum += f[e];
  });
  m = __fdiv_rn(warpSum(sum), static_cast<float>(C));
  float var = 0.0f;
  forChunks<K>(lane, C, [&](int64_t k, int64_t j) {
    float f[kChunk];
    x.at(k, j, f);
#pragma unroll
    for (int e = 0; e < kChunk; ++e)
      if (Vec || j + e < C) {
        const float d = f[e] - m;
        var = __fadd_rn(var, __fmul_rn(d, d)); // two roundings, as the CPU
      }
  });
  var = __fdiv_rn(warpSum(var), static_cast<float>(C));
  s = __fdiv_rn(1.0f, __fsqrt_rn(var + eps));
}

/// Normalizes the row x into oi (and mean[row], rstd[row] when not NULL),
/// as zrt_layer_norm: rowStats, then (x - mean) * rstd * weight + bias.
/// Called by all 32 lanes of a warp. Each lane reads and writes only its
/// own chunks, and reads a chunk before it writes it: oi == x.p is safe.
/// With the row cached (K > 0), weight and bias are loaded before the
/// statistics too, so that their loads overlap the reductions.
template <typename T, int K, bool Vec>
__device__ __forceinline__ void normalizeRow(const RowChunks<T, K, Vec> &x,
                                             const T *weight, const T *bias,
                                             T *oi, float *mean, float *rstd,
                                             int64_t row, float eps, int lane) {
  const int64_t C = x.C;
  RowChunks<T, K, Vec> w(weight, C), b(bias, C);
  if (weight)
    w.load(lane);
  if (bias)
    b.load(lane);
  float m, s;
  rowStats(x, eps, lane, m, s);
  forChunks<K>(lane, C, [&](int64_t k, int64_t j) {
    float v[kChunk], wv[kChunk], bv[kChunk];
    x.at(k, j, v);
    if (weight)
      w.at(k, j, wv);
    if (bias)
      b.at(k, j, bv);
#pragma unroll
    for (int e = 0; e < kChunk; ++e) {
      v[e] = __fmul_rn(__fsub_rn(v[e], m), s);
      if (weight)
        v[e] = __fmul_rn(v[e], wv[e]);
      if (bias)
        v[e] = __fadd_rn(v[e], bv[e]);
    }
    storeChunk<Vec>(oi, j, C, packChunk<T>(v));
  });
  if (lane == 0) {
    if (mean)
      mean[row] = m;
    if (rstd)
      rstd[row] = s;
  }
}

template <typename T, int K, bool Vec>
__global__ void layerNormKernel(const T *x, const T *weight, const T *bias,
                                T *out, float *mean, float *rstd, int64_t N,
                                int64_t C, float eps) {
  const int64_t row = warpRow();
  if (row >= N)
    return; // the whole warp: row is uniform across it
  const int lane = threadIdx.x & 31;
  RowChunks<T, K, Vec> xr(x + row * C, C);
  xr.load(lane);
  normalizeRow(xr, weight, bias, out + row * C, mean, rstd, row, eps, lane);
}

/// Dynamic shared memory of addLayerNormKernel<T, 0, Vec, true>:
/// kRowsPerBlock rows of C elements of T, one per warp.
extern __shared__ uint4 addLayerNormSmem[];

/// zrt_add_layer_norm(_bf16): each warp writes its row of sum = a + b
/// (AddOp, stored as T: zrt_add's numbers) and normalizes the stored values
/// (normalizeRow: zrt_layer_norm's numbers on sum). The lane's chunks of
/// sum are kept in registers (K > 0); else, Staged, the row is kept in
/// shared memory and normalized from there, or (rows too long for it) each
/// lane reads its chunks of sum back. Either way a lane reads only the
/// chunks it wrote, so the add needs no barrier before the statistics.
template <typename T, int K, bool Vec, bool Staged>
__global__ void addLayerNormKernel(const T *a, const T *b, const T *weight,
                                   const T *bias, T *sum, T *out, float *mean,
                                   float *rstd, int64_t N, int64_t C,
                                   float eps) {
  static_assert(K == 0 || !Staged, "cached rows need no shared memory");
  const int64_t row = warpRow();
  if (row >= N)
    return;
  const int lane = threadIdx.x & 31;
  T *si = sum + row * C;
  T *xi = si;
  if constexpr (Staged)
    xi = reinterpret_cast<T *>(addLayerNormSmem) + (threadIdx.x >> 5) * C;
  RowChunks<T, K, Vec> ar(a + row * C, C), br(b + row * C, C), xr(xi, C);
  ar.load(lane);
  br.load(lane);
  forChunks<K>(lane, C, [&](int64_t k, int64_t j) {
    float av[kChunk], bv[kChunk];
    ar.at(k, j, av);
    br.at(k, j, bv);
#pragma unroll
    for (int e = 0; e < kChunk; ++e)
      av[e] = AddOp{}(av[e], bv[e]);
    const Chunk<T> sc = packChunk<T>(av);
    storeChunk<Vec>(si, j, C, sc);
    if constexpr (K > 0)
      xr.c[k] = sc;
    else if constexpr (Staged)
      storeChunk<Vec>(xi, j, C, sc);
  });
  normalizeRow(xr, weight, bias, out + row * C, mean, rstd, row, eps, lane);
}

template <typename T, int K, bool Vec>
__global__ void layerNormStatsKernel(const T *x, float *mean, float *rstd,
                                     int64_t N, int64_t C, float eps) {
  const int64_t row = warpRow();
  if (row >= N)
    return;
  const int lane = threadIdx.x & 31;
  RowChunks<T, K, Vec> xr(x + row * C, C);
  xr.load(lane);
  float m, s;
  rowStats(xr, eps, lane, m, s);
  if (lane == 0) {
    mean[row] = m;
    rstd[row] = s;
  }
}

/// dx of zrt_layer_norm_backward, one warp per row:
///   dx = s * (g - mean(g) - xhat * mean(g * xhat)), g = weight * dout;
/// with addend (zrt_layer_norm_backward_add), dx = addend + that value as
/// stored in T (AddOp: zrt_add's numbers), in the same pass. With the row
/// cached (K > 0), dout, x, weight and addend are all loaded up front.
template <typename T, int K, bool Vec>
__global__ void layerNormBackwardKernel(const T *dout, const T *x,
                                        const T *weight, const float *mean,
                                        const float *rstd, const T *addend,
                                        T *dx, int64_t N, int64_t C) {
  const int64_t row = warpRow();
  if (row >= N)
    return;
  const int lane = threadIdx.x & 31;
  RowChunks<T, K, Vec> gr(dout + row * C, C), xr(x + row * C, C), wr(weight, C),
      ar(addend ? addend + row * C : nullptr, C);
  gr.load(lane);
  xr.load(lane);
  if (weight)
    wr.load(lane);
  if (addend)
    ar.load(lane);
  const float m = mean[row], s = rstd[row];
  float gMean = 0.0f, gxMean = 0.0f;
  forChunks<K>(lane, C, [&](int64_t k, int64_t j) {
    float g[kChunk], xv[kChunk], wv[kChunk];
    gr.at(k, j, g);
    xr.at(k, j, xv);
    if (weight)
      wr.at(k, j, wv);
#pragma unroll
    for (int e = 0; e < kChunk; ++e)
      if (Vec || j + e < C) {
        const float ge = weight ? __fmul_rn(wv[e], g[e]) : g[e];
        gMean += ge;
        gxMean += __fmul_rn(__fmul_rn(ge, __fsub_rn(xv[e], m)), s);
      }
  });
  gMean = __fdiv_rn(warpSum(gMean), static_cast<float>(C));
  gxMean = __fdiv_rn(warpSum(gxMean), static_cast<float>(C));
  T *dxi = dx + row * C;
  forChunks<K>(lane, C, [&](int64_t k, int64_t j) {
    float g[kChunk], xv[kChunk], wv[kChunk], av[kChunk];
    gr.at(k, j, g);
    xr.at(k, j, xv);
    if (weight)
      wr.at(k, j, wv);
    if (addend)
      ar.at(k, j, av);
#pragma unroll
    for (int e = 0; e < kChunk; ++e) {
      const float ge = weight ? __fmul_rn(wv[e], g[e]) : g[e];
      const float xhat = __fmul_rn(__fsub_rn(xv[e], m), s);
      const float d = __fmul_rn(
          s, __fsub_rn(__fsub_rn(ge, gMean), __fmul_rn(xhat, gxMean)));
      g[e] = addend ? AddOp{}(av[e], asStored<T>(d)) : d;
    }
    storeChunk<Vec>(dxi, j, C, packChunk<T>(g));
  });
}

/// The terms of dweight and dbias: dout * (x - mean) * rstd and dout.
template <typename T> struct LayerNormParamTerm {
  static constexpr int kVec = kVecOf<T>;
  const T *dout, *x;
  const float *mean, *rstd;
  int64_t C;
  bool aligned() const { return isAligned16(dout) && isAligned16(x); }
  /// Row r's inputs at W columns: dout and x (one 16-byte load each when
  /// W > 1), mean[r] and rstd[r] once.
  template <int W> struct Row { float g[W], xv[W], mean, rstd; };
  template <int W> __device__ Row<W> load(int64_t r, int64_t j) const {
    Row<W> v;
    ldfVec<W>(dout + r * C + j, v.g);
    ldfVec<W>(x + r * C + j, v.xv);
    v.mean = mean[r];
    v.rstd = rstd[r];
    return v;
  }
  template <int W>
  __device__ void add(const Row<W> &v, float (&acc)[2][W]) const {
#pragma unroll
    for (int e = 0; e < W; ++e) {
      acc[0][e] +=
          __fmul_rn(__fmul_rn(v.g[e], __fsub_rn(v.xv[e], v.mean)), v.rstd);
      acc[1][e] += v.g[e];
    }
  }
};

/// out = exp(x - max) / sum exp(x - max) per row; the maximum ignores NaN
/// as the CPU's `x > mx ? x : mx` does (fmaxf), and exp(x - max) is
/// recomputed in the last pass instead of stored, so out == x is safe.
__global__ void softmaxKernel(const float *x, float *out, int64_t N,
                              int64_t C) {
  const int64_t row = warpRow();
  if (row >= N)
    return;
  const int lane = threadIdx.x & 31;
  const float *xi = x + row * C;
  float mx = -INFINITY;
  for (int64_t j = lane; j < C; j += 32)
    mx = fmaxf(mx, xi[j]);
  mx = warpMax(mx);
  float sum = 0.0f;
  for (int64_t j = lane; j < C; j += 32)
    sum += expf(xi[j] - mx);
  const float inv = __fdiv_rn(1.0f, warpSum(sum));
  float *oi = out + row * C;
  for (int64_t j = lane; j < C; j += 32)
    oi[j] = __fmul_rn(expf(xi[j] - mx), inv);
}

__global__ void softmaxBackwardKernel(const float *y, const float *dy,
                                      float *dx, int64_t N, int64_t C) {
  const int64_t row = warpRow();
  if (row >= N)
    return;
  const int lane = threadIdx.x & 31;
  const float *yi = y + row * C, *gi = dy + row * C;
  float dot = 0.0f;
  for (int64_t j = lane; j < C; j += 32)
    dot = __fadd_rn(dot, __fmul_rn(yi[j], gi[j]));
  dot = warpSum(dot);
  float *dxi = dx + row * C;
  for (int64_t j = lane; j < C; j += 32)
    dxi[j] = __fmul_rn(yi[j], __fsub_rn(gi[j], dot));
}

/// Whether the layer-norm rows of C columns at these tensors (NULL ones
/// ignored) can take the vector path: C a multiple of kChunk and every
/// tensor 16-byte aligned (true for whole tensors: arena allocations are at
/// least 64-byte aligned), so that every chunk of every row is.
inline bool rowVectors(int64_t C, std::initializer_list<const void *> ptrs) {
  if (C % kChunk != 0)
    return false;
  for (const void *p : ptrs)
    if (reinterpret_cast<uintptr_t>(p) & 15u)
      return false;
  return true;
}

/// launch(K, Vec), with K and Vec as std::integral_constant's, for the rows
/// of C columns: Vec when `vec` (rowVectors), K = the chunks per lane
/// (ceil(C / 256)) when they fit in registers (at most kMaxCachedChunks),
/// else 0 (the passes re-read the row); the scalar path (not Vec) always
/// re-reads.
template <typename Launch>
int withRowPath(int64_t C, bool vec, Launch &&launch) {
  using std::integral_constant;
  static_assert(kMaxCachedChunks == 4, "one case per cached chunk count");
  if (!vec)
    return launch(integral_constant<int, 0>{}, std::false_type{});
  switch ((C + 32 * kChunk - 1) / (32 * kChunk)) {
  case 1:
    return launch(integral_constant<int, 1>{}, std::true_type{});
  case 2:
    return launch(integral_constant<int, 2>{}, std::true_type{});
  case 3:
    return launch(integral_constant<int, 3>{}, std::true_type{});
  case 4:
    return launch(integral_constant<int, 4>{}, std::true_type{});
  default:
    return launch(integral_constant<int, 0>{}, std::true_type{});
  }
}

/// zrt_layer_norm(_bf16) after the argument checks.
template <typename T>
int layerNorm(const char *fn, const T *x, const T *weight, const T *bias,
              T *out, float *mean, float *rstd, int64_t N, int64_t C,
              float eps) {
  if (int st = zrt::checkLayerNormArgs(fn, x, out, N, C, eps, zrt_cuda::fail))
    return st;
  if (N == 0)
    return ZRT_OK;
  const bool vec = rowVectors(C, {x, weight, bias, out});
  return withRowPath(C, vec, [&](auto k, auto v) {
    layerNormKernel<T, decltype(k)::value, decltype(v)::value>
        <<<warpRowBlocks(N), kThreads, 0, stream()>>>(x, weight, bias, out,
                                                      mean, rstd, N, C, eps);
    return launched(fn);
  });
}

/// zrt_add_layer_norm(_bf16) after the argument checks: rows cached in
/// registers when withRowPath allows, else the staged kernel when a block's
/// kRowsPerBlock rows of T fit in its shared memory (C up to 7264 f32 or
/// 14528 bf16 on an H100 / H200), else the unstaged one.
template <typename T>
int addLayerNorm(const char *fn, const T *a, const T *b, const T *weight,
                 const T *bias, T *sum, T *out, float *mean, float *rstd,
                 int64_t N, int64_t C, float eps) {
  if (int st = zrt::checkAddLayerNormArgs(fn, a, b, sum, out, N, C, eps,
                                          sizeof(T), zrt_cuda::fail))
    return st;
  if (N == 0)
    return ZRT_OK;
  const bool vec = rowVectors(C, {a, b, weight, bias, sum, out});
  return withRowPath(C, vec, [&](auto k, auto v) -> int {
    constexpr int K = decltype(k)::value;
    constexpr bool Vec = decltype(v)::value;
    if constexpr (K > 0) {
      addLayerNormKernel<T, K, Vec, false>
          <<<warpRowBlocks(N), kThreads, 0, stream()>>>(
              a, b, weight, bias, sum, out, mean, rstd, N, C, eps);
      return launched(fn);
    } else {
      int optin = 0;
      if (int st = sharedMemoryOptin(&optin, fn))
        return st;
      const int64_t smem = kRowsPerBlock * C * static_cast<int64_t>(sizeof(T));
      if (smem > optin) {
        addLayerNormKernel<T, 0, Vec, false>
            <<<warpRowBlocks(N), kThreads, 0, stream()>>>(
                a, b, weight, bias, sum, out, mean, rstd, N, C, eps);
        return launched(fn);
      }
      if (int st = allowDynamicSharedMemory(addLayerNormKernel<T, 0, Vec, true>,
                                            smem, fn))
        return st;
      addLayerNormKernel<T, 0, Vec, true>
          <<<warpRowBlocks(N), kThreads, smem, stream()>>>(
              a, b, weight, bias, sum, out, mean, rstd, N, C, eps);
      return launched(fn);
    }
  });
}

/// zrt_layer_norm_backward(_bf16) (addend NULL), or with Add its _add form
/// zrt_layer_norm_backward_add(_bf16): addend and dx required, dx = addend +
/// dx in the dx kernel.
template <bool Add, typename T>
int layerNormBackward(const char *fn, const T *dout, const T *x,
                      const T *weight, const float *mean, const float *rstd,
                      const T *addend, T *dx, T *dweight, T *dbias, int64_t N,
                      int64_t C) {
  if (int st = Add ? zrt::checkLayerNormBackwardAddArgs(
                         fn, dout, x, mean, rstd, addend, dx, N, C, sizeof(T),
                         zrt_cuda::fail)
                   : zrt::checkLayerNormBackwardArgs(fn, dout, x, mean, rstd, N,
                                                     C, zrt_cuda::fail))
    return st;
  // dx first, then the column sums, in the CPU's order.
  if (dx && N > 0) {
    const bool vec = rowVectors(C, {dout, x, weight, addend, dx});
    if (int st = withRowPath(C, vec, [&](auto k, auto v) {
          layerNormBackwardKernel<T, decltype(k)::value, decltype(v)::value>
              <<<warpRowBlocks(N), kThreads, 0, stream()>>>(
                  dout, x, weight, mean, rstd, addend, dx, N, C);
          return launched(fn);
        }))
      return st;
  }
  if (!dweight && !dbias)
    return ZRT_OK;
  // N == 0 writes zeros, as the CPU's empty sums.
  return columnSums<2>(LayerNormParamTerm<T>{dout, x, mean, rstd, C}, N, C,
                       dweight, dbias, fn);
}

template <typename T>
int layerNormStats(const char *fn, const T *x, float *mean, float *rstd,
                   int64_t N, int64_t C, float eps) {
  if (int st = zrt::checkLayerNormStatsArgs(fn, x, mean, rstd, N, C, eps,
                                            zrt_cuda::fail))
    return st;
  if (N == 0)
    return ZRT_OK;
  return withRowPath(C, rowVectors(C, {x}), [&](auto k, auto v) {
    layerNormStatsKernel<T, decltype(k)::value, decltype(v)::value>
        <<<warpRowBlocks(N), kThreads, 0, stream()>>>(x, mean, rstd, N, C, eps);
    return launched(fn);
  });
}

} // namespace

namespace zrt_cuda {

int layer_norm(const float *x, const float *weight, const float *bias,
               float *out, float *mean, float *rstd, int64_t N, int64_t C,
               float eps) {
  return layerNorm("zrt_layer_norm", x, weight, bias, out, mean, rstd, N, C,
                   eps);
}

int layer_norm_backward(const float *dout, const float *x, const float *weight,
                        const float *mean, const float *rstd, float *dx,
                        float *dweight, float *dbias, int64_t N, int64_t C) {
  return layerNormBackward<false, float>("zrt_layer_norm_backward", dout, x,
                                         weight, mean, rstd, nullptr, dx,
                                         dweight, dbias, N, C);
}

int add_layer_norm(const float *a, const float *b, const float *weight,
                   const float *bias, float *sum, float *out, float *mean,
                   float *rstd, int64_t N, int64_t C, float eps) {
  return addLayerNorm("zrt_add_layer_norm", a, b, weight, bias, sum, out, mean,
                      rstd, N, C, eps);
}

int layer_norm_backward_add(const float *dout, const float *x,
                            const float *weight, const float *mean,
                            const float *rstd, const float *addend, float *dx,
                            float *dweight, float *dbias, int64_t N,
                            int64_t C) {
  return layerNormBackward<true>("zrt_layer_norm_backward_add", dout, x, weight,
                                 mean, rstd, addend, dx, dweight, dbias, N, C);
}

int layer_norm_stats(const float *x, float *mean, float *rstd, int64_t N,
                     int64_t C, float eps) {
  return layerNormStats("zrt_layer_norm_stats", x, mean, rstd, N, C, eps);
}

int layer_norm_bf16(const zrt_bf16 *x, const zrt_bf16 *weight,
                    const zrt_bf16 *bias, zrt_bf16 *out, float *mean,
                    float *rstd, int64_t N, int64_t C, float eps) {
  return layerNorm("zrt_layer_norm_bf16", x, weight, bias, out, mean, rstd, N,
                   C, eps);
}

int layer_norm_backward_bf16(const zrt_bf16 *dout, const zrt_bf16 *x,
                             const zrt_bf16 *weight, const float *mean,
                             const float *rstd, zrt_bf16 *dx, zrt_bf16 *dweight,
                             zrt_bf16 *dbias, int64_t N, int64_t C) {
  return layerNormBackward<false, zrt_bf16>("zrt_layer_norm_backward_bf16",
                                            dout, x, weight, mean, rstd,
                                            nullptr, dx, dweight, dbias, N, C);
}

int add_layer_norm_bf16(const zrt_bf16 *a, const zrt_bf16 *b,
                        const zrt_bf16 *weight, const zrt_bf16 *bias,
                        zrt_bf16 *sum, zrt_bf16 *out, float *mean, float *rstd,
                        int64_t N, int64_t C, float eps) {
  return addLayerNorm("zrt_add_layer_norm_bf16", a, b, weight, bias, sum, out,
                      mean, rstd, N, C, eps);
}

int layer_norm_backward_add_bf16(const zrt_bf16 *dout, const zrt_bf16 *x,
                                 const zrt_bf16 *weight, const float *mean,
                                 const float *rstd, const zrt_bf16 *addend,
                                 zrt_bf16 *dx, zrt_bf16 *dweight,
                                 zrt_bf16 *dbias, int64_t N, int64_t C) {
  return layerNormBackward<true>("zrt_layer_norm_backward_add_bf16", dout, x,
                                 weight, mean, rstd, addend, dx, dweight, dbias,
                                 N, C);
}

int layer_norm_stats_bf16(const zrt_bf16 *x, float *mean, float *rstd,
                          int64_t N, int64_t C, float eps) {
  return layerNormStats("zrt_layer_norm_stats_bf16", x, mean, rstd, N, C, eps);
}

int softmax(const float *x, float *out, int64_t N, int64_t C) {
  const char *fn = "zrt_softmax";
  if (int st = zrt::checkSoftmaxArgs(fn, x, out, N, C, zrt_cuda::fail))
    return st;
  if (N == 0)
    return ZRT_OK;
  softmaxKernel<<<warpRowBlocks(N), kThreads, 0, stream()>>>(x, out, N, C);
  return launched(fn);
}

int softmax_backward(const float *y, const float *dy, float *dx, int64_t N,
                     int64_t C) {
  const char *fn = "zrt_softmax_backward";
  if (int st =
          zrt::checkSoftmaxBackwardArgs(fn, y, dy, dx, N, C, zrt_cuda::fail))
    return st;
  if (N == 0)
    return ZRT_OK;
  softmaxBackwardKernel<<<warpRowBlocks(N), kThreads, 0, stream()>>>(y, dy, dx,
                                                                     N, C);
  return launched(fn);
}

} // namespace zrt_cuda
