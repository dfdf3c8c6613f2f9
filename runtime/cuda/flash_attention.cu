//===- flash_attention.cu - CUDA backend: fused causal attention ----------===//
//
// zrt_attention_forward / zrt_attention_backward (zrt.h) on device memory:
// causal scaled-dot-product attention that never materializes a [T, T]
// matrix, after FlashAttention-2 (T. Dao, "FlashAttention-2: Faster
// Attention with Better Parallelism and Work Partitioning", 2023; Dao et
// al., "FlashAttention", NeurIPS 2022). f32 throughout, FMAs on the CUDA
// cores (no tensor cores, no TF32), expf / logf (never __expf), no
// floating-point atomics: every output element is written once by one
// thread in a fixed order, so results are bit-reproducible.
//
// Tiling (the fast path, D <= 128). A (batch, head) slice is cut into tiles
// of 64 rows (Br = Bc = 64). D is padded to DP in {16, 32, 64, 128} (a
// template parameter); the padding columns are zero in shared memory, so
// they add nothing to dot products and are never stored. One block of 256
// threads (16 x 16: tx = tid % 16, ty = tid / 16) per (tile, slice); the
// slices go in gridDim.y (at most 65535, more are looped over). A [64, DP]
// tile lives in shared memory with a row stride of DP + 4 floats (rows 4
// banks apart, so float4 reads of 16 different rows hit distinct banks).
// Every [64 x 64] score-like tile is computed as 4 x 4 register micro-tiles
// (contiguous rows ty*4 + a, strided columns tx + 16 b), reading float4s
// along d; every [64 x DP] accumulator as 4 x DP/16 micro-tiles (the same 4
// rows, columns owned by tx in float4 / float2 groups) updated by outer
// products from shared memory.
//
//  * forward (grid: query tile x slice, the longest rows first): Q tile
//    resident; for each key tile kt <= qt (tiles above the diagonal are
//    skipped, the diagonal tile is masked): S = s Q K^T (s = 1/sqrt(D)),
//    online softmax (running row max m, sum l, the 16 tx-lanes of a row
//    reduce by shuffles), P written to shared memory (over the K tile, now
//    read), O = alpha O + P V in registers. Then out = O / l and
//    lse = m + log(l).
//  * backward, kernel KV (grid: key tile x slice): K and V tiles resident,
//    dK and dV in registers; for each query tile qt >= kt: S^T and dP^T
//    micro-tiles (keys x rows), P = exp(S - lse), delta_i = dO_i . O_i
//    (recomputed per query tile, from global memory), dS = P (dP - delta);
//    P and dS to shared memory; dV += P^T dO, dK += dS^T Q. Stores dV and
//    s dK once.
//  * backward, kernel Q (grid: query tile x slice): Q, dO, lse and delta
//    resident; for each key tile kt <= qt: S, dP, dS as above, dS to shared
//    memory (over the V tile), dQ += dS K. Stores s dQ once.
//  Both backward kernels recompute P (the price of determinism without
//  atomics: no dQ accumulation across key-tile blocks).
//
// Cost for GPT-2 124M (B = 16, H = 12, T = 1024, D = 64: 16 tiles, 136
// causal tile pairs per slice; one [64 x 64 x 64] product is 0.52 MFLOP):
// forward 2 products per tile pair = 27.4 GFLOP and 107M expf per layer;
// backward 4 (kernel KV: S, dP, dV, dK) + 3 (kernel Q: S, dP, dQ) products
// = 96 GFLOP and 214M expf. The H200's f32 FMA peak is about 67 TFLOP/s.
// Inner loops: the dot-product micro-tile does 64 FMAs per eight 128-bit
// shared loads (12 shared-memory wavefronts per 16 issue cycles of FMAs on
// an SM), the outer-product step 16 FMAs per two loads (3 wavefronts per 4
// cycles), so FMA issue bounds them, with shared-memory bandwidth close
// behind; occupancy is bounded by registers and shared memory:
//   kernel (256 threads)  DP=64: regs, smem, blocks/SM  DP=128
//   forward               128, 52,224 B, 2              128, 101,376 B, 2
//   backward KV           128, 104,960 B, 2             168, 170,496 B, 1
//   backward Q            128, 70,144 B, 2              168, 135,680 B, 1
// (ptxas -v for sm_90, CUDA 13: no spills, no local memory; dynamic shared
// memory opted in with cudaFuncSetAttribute). The registers are capped by
// __launch_bounds__ (flashMinBlocks); uncapped, ptxas hoists loads up to
// 255. Global loads are plain (no cp.async double buffering): the latency
// of a tile load is hidden by the other resident block only. The diagonal
// tiles waste about half their work (1/17 of the total at T = 1024).
//
// Generic path (D > 128, or a device whose per-block shared memory cannot
// hold a fast kernel's tiles): one warp per row, dot products reduced over
// the warp, output columns in chunks of 128 (4 per lane) with the scores
// recomputed per chunk. Slow (O(T^2 D ceil(D / 128))), simple, correct.
//
// Layouts: every kernel addresses its operands through Strides
// (zrt::AttentionLayout: element (b, h, t, d) at b batch + h head + t row +
// d), one for q, k, v, dq, dk, dv and one for out and dout; lse is always
// [B, H, T]. zrt_attention_forward / _backward (and _bf16) pass
// headsLayout ([B, H, T, D] contiguous); zrt_attention_*_packed(_bf16) the
// rows of the packed projection (qkv [B, T, 3 H D]: q, k, v at columns 0,
// C, 2 C with C = H D, dqkv likewise; out, dout [B, T, C]). Only the
// addresses differ, so the packed results are those of the [B, H, T, D]
// entry points on split copies, bit for bit. Vector tile loads need D == DP
// and 16-byte aligned slices and rows, else scalar loads.
//
// Grouped-query attention (zrt_attention_*_gqa(_bf16), zrt/decoder.h): k,
// v, dk, dv have their own layout of Hkv heads ([B, Hkv, T, D]); query head
// h reads K/V head h / (H / Hkv) where the forward and kernel Q load their
// K / V tiles (no repeated copy). Kernel KV runs on a grid of K/V slices:
// a block owns key tile kt of K/V head g and walks the query tiles qt >= kt
// of the group's query heads g (H / Hkv) + m, m = 0, 1, ... in that order,
// with dK and dV accumulating in the same registers: the group sum
// (repeat_kv's gradient) in f32, in a fixed order, stored (bf16: rounded)
// once, without atomics. With Hkv = H every head is its own group and the
// kernels compute exactly what they did before grouping (same operations,
// same order): zrt_attention_*_gqa with Hkv = H is zrt_attention_* bit for
// bit.
//
// bf16 (zrt_attention_forward_bf16 / _backward_bf16 when the tensor-core
// kernels of flash_attention_tc.cu do not run): every kernel is templated
// over the element type E of q, k, v, out, dout, dq, dk, dv (lse stays
// f32). Tiles are widened into the same f32 shared-memory tiles (16-byte
// loads of 8 bf16 when D == DP and the slice is 16-byte aligned, else one
// element at a time), global reads of the generic path and of delta widen,
// and out / dq / dk / dv are rounded once when stored: the f32 kernels'
// arithmetic, so a bf16 result is the f32 result on the widened inputs,
// rounded (the f32 instantiations compile to the same code as before).
//
//===----------------------------------------------------------------------===//

#include "device_util.cuh"

#include "common/attention_args.h"
#include "common/decoder_args.h"

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

namespace {

using namespace zrt_cuda;

/// Rows of a tile (Br = Bc).
constexpr int kTile = 64;
/// Threads of a fast-path block (16 x 16).
constexpr int kFlashThreads = 256;
/// Row stride of a [64 x 64] probability / score-gradient tile.
constexpr int kLdp = kTile + 4;
/// Blocks per SM the fast kernels are compiled for (__launch_bounds__): 2
/// (at most 128 registers), except the backward kernels at DP = 128 (1),
/// which spill at 128 registers and whose shared memory allows only one
/// block per SM anyway. Checked with ptxas -v: no kernel spills.
constexpr int flashMinBlocks(int DP, bool backward) {
  return backward && DP > 64 ? 1 : 2;
}

/// Geometry of the fast path for a padded head dimension DP.
template <int DP> struct Geo {
  static_assert(DP == 16 || DP == 32 || DP == 64 || DP == 128, "DP");
  /// Row stride (floats) of a [64, DP] tile in shared memory.
  static constexpr int LD = DP + 4;
  /// Accumulator columns per thread, in groups of VW adjacent columns.
  static constexpr int NCOL = DP / 16;
  static constexpr int VW = NCOL < 4 ? NCOL : 4;
  static constexpr int NG = NCOL / VW;
  /// Floats of one [64, DP] tile.
  static constexpr int TILE = kTile * LD;
  /// Floats of a region that holds a [64, DP] tile or a [64, 64] one.
  static constexpr int TILE_OR_P = kTile * (LD > kLdp ? LD : kLdp);
  /// Dynamic shared memory (bytes) of the three kernels.
  static constexpr int FORWARD_SMEM = (2 * TILE + TILE_OR_P) * 4;
  static constexpr int BACKWARD_Q_SMEM = (3 * TILE + TILE_OR_P + 2 * kTile) * 4;
  static constexpr int BACKWARD_KV_SMEM =
      (4 * TILE + 2 * kTile * kLdp + 2 * kTile) * 4;
  /// Column of accumulator slot n of thread tx.
  static __device__ __forceinline__ int col(int tx, int n) {
    return (n / VW) * 16 * VW + tx * VW + n % VW;
  }
};

/// Where the (batch, head) slices of an operand live (zrt::AttentionLayout
/// on the device): slice bh = b H + h starts b batch + h head elements
/// from the tensor's start, its rows are `row` elements apart, each D
/// contiguous elements. `row` (D, or 3 H D for the packed qkv) is below
/// 2^31 by the argument checks; 32 bits keep the generic path's kernels
/// free of spills.
struct Strides {
  int64_t batch, head;
  int row;
  /// The offset (elements) of slice bh (< 2^31, checked by the caller).
  __device__ __forceinline__ int64_t slice(int64_t bh, int H) const {
    const int b = static_cast<int>(bh) / H;
    return b * batch + (static_cast<int>(bh) - b * H) * head;
  }
};

/// The addressing of a call: q and dq in layout `qkv`, k, v, dk, dv in
/// layout `kv` (its slices are the Hkv K/V heads), out and dout in layout
/// `out`, lse [B, H, T] contiguous. Query slice bh = b H + h reads K/V
/// slice b Hkv + h / group (group = H / Hkv query heads share a K/V head;
/// without grouping Hkv = H, group = 1 and kv = qkv, which addresses every
/// operand as before).
struct Layouts {
  int H, Hkv, group;
  Strides qkv, kv, out;
  /// The offset (elements) of the K/V slice that query slice bh reads.
  __device__ __forceinline__ int64_t kvOfQuery(int64_t bh) const {
    const int b = static_cast<int>(bh) / H;
    const int h = static_cast<int>(bh) - b * H;
    return b * kv.batch + (h / group) * kv.head;
  }
  /// Query slice m (< group) of K/V slice s: b H + kvh group + m.
  __device__ __forceinline__ int64_t queryOfKv(int64_t s, int m) const {
    const int b = static_cast<int>(s) / Hkv;
    const int kvh = static_cast<int>(s) - b * Hkv;
    return int64_t(b) * H + int64_t(kvh) * group + m;
  }
};

__device__ __forceinline__ float4 ld4(const float *p) {
  return *reinterpret_cast<const float4 *>(p);
}
__device__ __forceinline__ void st4(float *p, float a, float b, float c,
                                    float d) {
  *reinterpret_cast<float4 *>(p) = make_float4(a, b, c, d);
}

/// Loads VW adjacent floats of shared memory (aligned to VW floats).
template <int VW>
__device__ __forceinline__ void ldVec(const float *p, float *x) {
  if constexpr (VW == 4) {
    const float4 t = ld4(p);
    x[0] = t.x, x[1] = t.y, x[2] = t.z, x[3] = t.w;
  } else if constexpr (VW == 2) {
    const float2 t = *reinterpret_cast<const float2 *>(p);
    x[0] = t.x, x[1] = t.y;
  } else {
    x[0] = p[0];
  }
}

/// Rows row0 .. row0 + 63 of a [T, D] slice `g` (E = float, or zrt_bf16
/// widened; rows `ld` elements apart) into the f32 [64, DP] tile `s`
/// (stride LD), zeros for rows >= T and columns >= D. All threads.
template <int DP, typename E>
__device__ __forceinline__ void loadTile(float *s, const E *__restrict__ g,
                                         int row0, int T, int D, int64_t ld) {
  using G = Geo<DP>;
  const int rowsLeft = T - row0; // > 0
  const E *g0 = g + int64_t(row0) * ld;
  // Thread t loads columns c.. of rows r0, r0 + RSTEP, ... (W columns per
  // row and thread): one row pointer, stepped.
  if constexpr (std::is_same_v<E, zrt_bf16>) {
    if (D == DP && ld % 8 == 0 && (reinterpret_cast<uintptr_t>(g) & 15) == 0) {
      // Rows are 16-byte aligned (DP is a multiple of 8): 16-byte loads of
      // 8 bf16, widened into two float4 of the tile.
      constexpr int Q8 = DP / 8, RSTEP = kFlashThreads / Q8;
      const int r0 = threadIdx.x / Q8, c = (threadIdx.x % Q8) * 8;
      for (int r = r0; r < kTile; r += RSTEP) {
        float x[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
        if (r < rowsLeft)
          unpackBf16x8(*reinterpret_cast<const uint4 *>(g0 + r * ld + c), x);
        st4(s + r * G::LD + c, x[0], x[1], x[2], x[3]);
        st4(s + r * G::LD + c + 4, x[4], x[5], x[6], x[7]);
      }
      return;
    }
  } else if (D == DP && ld % 4 == 0 &&
             (reinterpret_cast<uintptr_t>(g) & 15) == 0) {
    // Rows are 16-byte aligned: float4 loads.
    constexpr int Q4 = DP / 4, RSTEP = kFlashThreads / Q4;
    const int r0 = threadIdx.x / Q4, c = (threadIdx.x % Q4) * 4;
    for (int r = r0; r < kTile; r += RSTEP) {
      float4 x = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      if (r < rowsLeft)
        x = *reinterpret_cast<const float4 *>(g0 + r * ld + c);
      *reinterpret_cast<float4 *>(s + r * G::LD + c) = x;
    }
    return;
  }
  constexpr int RSTEP = kFlashThreads / DP;
  const int r0 = threadIdx.x / DP, c = threadIdx.x % DP;
  for (int r = r0; r < kTile; r += RSTEP) {
    float x = 0.0f;
    if (r < rowsLeft && c < D)
      x = ldf(g0 + r * ld + c);
    s[r * G::LD + c] = x;
  }
}

/// s[a][b] += A[a] . B[16 b] over DP columns: A points at 4 adjacent rows
/// of a tile, B at the first of 4 rows 16 apart (stride LD). Sequential in d
/// per element. Not unrolled: unrolling hoists the loads and spills at 128
/// registers; the other resident warps hide the shared-memory latency.
template <int DP>
__device__ __forceinline__ void dotTile(float (&s)[4][4], const float *A,
                                        const float *B) {
  constexpr int LD = Geo<DP>::LD;
#pragma unroll 1
  for (int d = 0; d < DP; d += 4) {
    float4 a[4], b[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      a[i] = ld4(A + i * LD + d);
      b[i] = ld4(B + i * 16 * LD + d);
    }
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        float t = s[i][j];
        t = fmaf(a[i].x, b[j].x, t);
        t = fmaf(a[i].y, b[j].y, t);
        t = fmaf(a[i].z, b[j].z, t);
        t = fmaf(a[i].w, b[j].w, t);
        s[i][j] = t;
      }
  }
}

/// acc[a][n] += w[a] * row[col(tx, n)]: one step of an outer-product
/// accumulation; `row` is a tile row in shared memory.
template <int DP>
__device__ __forceinline__ void outerAcc(float (&acc)[4][Geo<DP>::NCOL],
                                         float4 w, const float *row, int tx) {
  using G = Geo<DP>;
  float x[G::NCOL];
#pragma unroll
  for (int g = 0; g < G::NG; ++g)
    ldVec<G::VW>(row + g * 16 * G::VW + tx * G::VW, x + g * G::VW);
#pragma unroll
  for (int n = 0; n < G::NCOL; ++n) {
    acc[0][n] = fmaf(w.x, x[n], acc[0][n]);
    acc[1][n] = fmaf(w.y, x[n], acc[1][n]);
    acc[2][n] = fmaf(w.z, x[n], acc[2][n]);
    acc[3][n] = fmaf(w.w, x[n], acc[3][n]);
  }
}

/// a . b over D floats of global memory by one warp (lane-strided partial
/// sums, then a butterfly): every lane gets the same value.
template <typename E>
__device__ __forceinline__ float warpDot(const E *__restrict__ a,
                                         const E *__restrict__ b, int D) {
  float s = 0.0f;
  for (int c = threadIdx.x & 31; c < D; c += 32)
    s = fmaf(ldf(a + c), ldf(b + c), s);
  return warpSum(s);
}

/// lse and delta (dO_i . O_i) of rows row0 .. row0 + 63 into sL / sDelta
/// (zeros past T), one warp per row; dout and o rows `ld` elements apart.
/// All threads.
template <typename E>
__device__ __forceinline__ void
rowStats(float *sL, float *sDelta, const E *__restrict__ dout,
         const E *__restrict__ o, const float *__restrict__ lse, int row0,
         int T, int D, int64_t ld) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int rowsLeft = T - row0;
  for (int r = warp; r < kTile; r += kFlashThreads / 32) {
    float delta = 0.0f, l = 0.0f;
    if (r < rowsLeft) {
      const int64_t off = (int64_t(row0) + r) * ld;
      delta = warpDot(dout + off, o + off, D);
      l = lse[row0 + r];
    }
    if (lane == 0) {
      sDelta[r] = delta;
      sL[r] = l;
    }
  }
}

/// Max / sum over the 16 lanes of a half-warp (the tx lanes of a row).
__device__ __forceinline__ float halfMax(float v) {
#pragma unroll
  for (int o = 8; o > 0; o >>= 1)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ float halfSum(float v) {
#pragma unroll
  for (int o = 8; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

//===----------------------------------------------------------------------===//
// Fast path
//===----------------------------------------------------------------------===//

/// Forward: block (blockIdx.x, slices blockIdx.y + k gridDim.y) computes
/// query tile qt = tiles - 1 - blockIdx.x.
template <int DP, typename E>
__global__ void __launch_bounds__(kFlashThreads, flashMinBlocks(DP, false))
    flashForwardKernel(const E *__restrict__ q, const E *__restrict__ k,
                       const E *__restrict__ v, E *__restrict__ out,
                       float *__restrict__ lse, Layouts lay, int64_t BH, int T,
                       int D, float scale) {
  using G = Geo<DP>;
  extern __shared__ float4 smemRaw[];
  float *sQ = reinterpret_cast<float *>(smemRaw);
  float *sV = sQ + G::TILE;
  float *sK = sV + G::TILE;
  float *sP = sK; // P [key][row] replaces K once S is computed
  const int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;
  const int tiles = static_cast<int>((int64_t(T) + kTile - 1) / kTile);
  const int qt = tiles - 1 - static_cast<int>(blockIdx.x);
  const int row0 = qt * kTile;
  const int rowsLeft = T - row0;

  for (int64_t bh = blockIdx.y; bh < BH; bh += gridDim.y) {
    const int64_t base = lay.qkv.slice(bh, lay.H); // of q
    const int64_t baseKV = lay.kvOfQuery(bh);      // of k, v
    // The previous slice's readers of sQ are done (the barriers of its last
    // tile already ensure it; kept so the loop body stands alone).
    __syncthreads();
    loadTile<DP>(sQ, q + base, row0, T, D, lay.qkv.row);

    float o[4][G::NCOL];
    float m[4], l[4];
#pragma unroll
    for (int a = 0; a < 4; ++a) {
      m[a] = -INFINITY;
      l[a] = 0.0f;
#pragma unroll
      for (int n = 0; n < G::NCOL; ++n)
        o[a][n] = 0.0f;
    }

    for (int kt = 0; kt <= qt; ++kt) {
      __syncthreads(); // readers of sP / sV (previous tile) are done
      loadTile<DP>(sK, k + baseKV, kt * kTile, T, D, lay.kv.row);
      loadTile<DP>(sV, v + baseKV, kt * kTile, T, D, lay.kv.row);
      __syncthreads();

      float s[4][4];
#pragma unroll
      for (int a = 0; a < 4; ++a)
#pragma unroll
        for (int b = 0; b < 4; ++b)
          s[a][b] = 0.0f;
      dotTile<DP>(s, sQ + ty * 4 * G::LD, sK + tx * G::LD);

      // Online softmax of rows ty*4 + a over keys tx + 16 b. Key 0 of the
      // first tile is never masked, so m is finite from the first tile on.
      const bool diag = kt == qt;
#pragma unroll
      for (int a = 0; a < 4; ++a) {
        const int i = ty * 4 + a;
        float mt = -INFINITY;
#pragma unroll
        for (int b = 0; b < 4; ++b) {
          const int j = tx + 16 * b;
          s[a][b] = (diag && j > i) ? -INFINITY : __fmul_rn(s[a][b], scale);
          mt = fmaxf(mt, s[a][b]);
        }
        const float mNew = fmaxf(m[a], halfMax(mt));
        const float alpha = expf(m[a] - mNew); // 0 on the first tile
        float rs = 0.0f;
#pragma unroll
        for (int b = 0; b < 4; ++b) {
          s[a][b] = expf(s[a][b] - mNew); // masked: expf(-inf) = 0
          rs += s[a][b];
        }
        l[a] = fmaf(l[a], alpha, halfSum(rs));
        m[a] = mNew;
#pragma unroll
        for (int n = 0; n < G::NCOL; ++n)
          o[a][n] *= alpha;
      }

      __syncthreads(); // everyone is done reading sK
#pragma unroll
      for (int b = 0; b < 4; ++b)
        st4(sP + (tx + 16 * b) * kLdp + ty * 4, s[0][b], s[1][b], s[2][b],
            s[3][b]);
      __syncthreads();
#pragma unroll 4
      for (int j = 0; j < kTile; ++j)
        outerAcc<DP>(o, ld4(sP + j * kLdp + ty * 4), sV + j * G::LD, tx);
    }

#pragma unroll
    for (int a = 0; a < 4; ++a) {
      const int i = ty * 4 + a;
      if (i >= rowsLeft)
        continue;
      const int64_t row = int64_t(row0) + i;
      E *orow = out + lay.out.slice(bh, lay.H) + row * lay.out.row;
#pragma unroll
      for (int n = 0; n < G::NCOL; ++n) {
        const int c = G::col(tx, n);
        if (c < D)
          stf(orow + c, o[a][n] / l[a]);
      }
      if (tx == 0)
        lse[bh * T + row] = m[a] + logf(l[a]);
    }
  }
}

/// Backward, dK and dV: block (blockIdx.x, K/V slices blockIdx.y + k
/// gridDim.y < BHkv) owns key tile kt = blockIdx.x of a K/V slice and
/// visits the query tiles qt >= kt of each query head of its group in head
/// order, accumulating dK and dV over all of them in registers (the group
/// sum of grouped-query attention, in a fixed order, without atomics).
template <int DP, typename E>
__global__ void __launch_bounds__(kFlashThreads, flashMinBlocks(DP, true))
    flashBackwardKVKernel(const E *__restrict__ dout, const E *__restrict__ q,
                          const E *__restrict__ k, const E *__restrict__ v,
                          const E *__restrict__ o,
                          const float *__restrict__ lse, E *__restrict__ dk,
                          E *__restrict__ dv, Layouts lay, int64_t BHkv,
                          int T, int D, float scale) {
  using G = Geo<DP>;
  extern __shared__ float4 smemRaw[];
  float *sK = reinterpret_cast<float *>(smemRaw);
  float *sV = sK + G::TILE;
  float *sQ = sV + G::TILE;
  float *sDO = sQ + G::TILE;
  float *sP = sDO + G::TILE;      // P [row][key]
  float *sDS = sP + kTile * kLdp; // dS [row][key]
  float *sL = sDS + kTile * kLdp;
  float *sDelta = sL + kTile;
  const int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;
  const int tiles = static_cast<int>((int64_t(T) + kTile - 1) / kTile);
  const int kt = static_cast<int>(blockIdx.x);
  const int key0 = kt * kTile;
  const int keysLeft = T - key0;

  for (int64_t kvs = blockIdx.y; kvs < BHkv; kvs += gridDim.y) {
    const int64_t baseKV = lay.kv.slice(kvs, lay.Hkv); // of k, v, dk, dv
    // The previous slice's readers of sK / sV are done (as in the forward).
    __syncthreads();
    loadTile<DP>(sK, k + baseKV, key0, T, D, lay.kv.row);
    loadTile<DP>(sV, v + baseKV, key0, T, D, lay.kv.row);

    float accK[4][G::NCOL], accV[4][G::NCOL];
#pragma unroll
    for (int a = 0; a < 4; ++a)
#pragma unroll
      for (int n = 0; n < G::NCOL; ++n)
        accK[a][n] = accV[a][n] = 0.0f;

    // Query tiles qt >= kt of the group's heads m = 0 .. group - 1, as one
    // sequence of (head, tile) steps.
    const int perHead = tiles - kt;
    const int steps = lay.group * perHead;
    for (int step = 0; step < steps; ++step) {
      const int m = step / perHead;
      const int qt = kt + (step - m * perHead);
      const int64_t bh = lay.queryOfKv(kvs, m);
      const int64_t base = lay.qkv.slice(bh, lay.H);  // of q
      const int64_t baseO = lay.out.slice(bh, lay.H); // of dout, o
      const int row0 = qt * kTile;
      const int rowsLeft = T - row0;
      __syncthreads(); // readers of sQ / sDO / sP / sDS are done
      loadTile<DP>(sQ, q + base, row0, T, D, lay.qkv.row);
      loadTile<DP>(sDO, dout + baseO, row0, T, D, lay.out.row);
      rowStats(sL, sDelta, dout + baseO, o + baseO, lse + bh * T, row0, T, D,
               lay.out.row);
      __syncthreads();

      // Transposed micro-tiles: [a][b] is key ty*4 + a, row tx + 16 b.
      float s[4][4], dp[4][4];
#pragma unroll
      for (int a = 0; a < 4; ++a)
#pragma unroll
        for (int b = 0; b < 4; ++b)
          s[a][b] = dp[a][b] = 0.0f;
      dotTile<DP>(s, sK + ty * 4 * G::LD, sQ + tx * G::LD);
      dotTile<DP>(dp, sV + ty * 4 * G::LD, sDO + tx * G::LD);

      const bool diag = qt == kt;
#pragma unroll
      for (int b = 0; b < 4; ++b) {
        const int i = tx + 16 * b;
        const float li = sL[i], di = sDelta[i];
        float p[4], ds[4];
#pragma unroll
        for (int a = 0; a < 4; ++a) {
          const int j = ty * 4 + a;
          const bool keep = i < rowsLeft && !(diag && j > i);
          p[a] = keep ? expf(__fmul_rn(s[a][b], scale) - li) : 0.0f;
          ds[a] = p[a] * (dp[a][b] - di);
        }
        st4(sP + i * kLdp + ty * 4, p[0], p[1], p[2], p[3]);
        st4(sDS + i * kLdp + ty * 4, ds[0], ds[1], ds[2], ds[3]);
      }
      __syncthreads();
#pragma unroll 2
      for (int i = 0; i < kTile; ++i) {
        outerAcc<DP>(accV, ld4(sP + i * kLdp + ty * 4), sDO + i * G::LD, tx);
        outerAcc<DP>(accK, ld4(sDS + i * kLdp + ty * 4), sQ + i * G::LD, tx);
      }
    }

#pragma unroll
    for (int a = 0; a < 4; ++a) {
      const int j = ty * 4 + a;
      if (j >= keysLeft)
        continue;
      const int64_t off = baseKV + (int64_t(key0) + j) * lay.kv.row;
#pragma unroll
      for (int n = 0; n < G::NCOL; ++n) {
        const int c = G::col(tx, n);
        if (c < D) {
          stf(dv + off + c, accV[a][n]);
          stf(dk + off + c, __fmul_rn(accK[a][n], scale));
        }
      }
    }
  }
}

/// Backward, dQ: block (blockIdx.x, slices) owns query tile
/// qt = tiles - 1 - blockIdx.x and visits the key tiles kt <= qt.
template <int DP, typename E>
__global__ void __launch_bounds__(kFlashThreads, flashMinBlocks(DP, true))
    flashBackwardQKernel(const E *__restrict__ dout, const E *__restrict__ q,
                         const E *__restrict__ k, const E *__restrict__ v,
                         const E *__restrict__ o, const float *__restrict__ lse,
                         E *__restrict__ dq, Layouts lay, int64_t BH, int T,
                         int D, float scale) {
  using G = Geo<DP>;
  extern __shared__ float4 smemRaw[];
  float *sQ = reinterpret_cast<float *>(smemRaw);
  float *sDO = sQ + G::TILE;
  float *sK = sDO + G::TILE;
  float *sV = sK + G::TILE;
  float *sDS = sV; // dS [key][row] replaces V once dP is computed
  float *sL = sV + G::TILE_OR_P;
  float *sDelta = sL + kTile;
  const int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;
  const int tiles = static_cast<int>((int64_t(T) + kTile - 1) / kTile);
  const int qt = tiles - 1 - static_cast<int>(blockIdx.x);
  const int row0 = qt * kTile;
  const int rowsLeft = T - row0;

  for (int64_t bh = blockIdx.y; bh < BH; bh += gridDim.y) {
    const int64_t base = lay.qkv.slice(bh, lay.H); // of q, dq
    const int64_t baseKV = lay.kvOfQuery(bh);      // of k, v
    // The previous slice's readers are done (as in the forward).
    __syncthreads();
    loadTile<DP>(sQ, q + base, row0, T, D, lay.qkv.row);
    {
      const int64_t baseO = lay.out.slice(bh, lay.H); // of dout, o
      loadTile<DP>(sDO, dout + baseO, row0, T, D, lay.out.row);
      rowStats(sL, sDelta, dout + baseO, o + baseO, lse + bh * T, row0, T, D,
               lay.out.row);
    }

    float acc[4][G::NCOL];
#pragma unroll
    for (int a = 0; a < 4; ++a)
#pragma unroll
      for (int n = 0; n < G::NCOL; ++n)
        acc[a][n] = 0.0f;

    for (int kt = 0; kt <= qt; ++kt) {
      __syncthreads(); // readers of sK / sDS (previous tile) are done
      loadTile<DP>(sK, k + baseKV, kt * kTile, T, D, lay.kv.row);
      loadTile<DP>(sV, v + baseKV, kt * kTile, T, D, lay.kv.row);
      __syncthreads();

      // [a][b] is row ty*4 + a, key tx + 16 b.
      float s[4][4], dp[4][4];
#pragma unroll
      for (int a = 0; a < 4; ++a)
#pragma unroll
        for (int b = 0; b < 4; ++b)
          s[a][b] = dp[a][b] = 0.0f;
      dotTile<DP>(s, sQ + ty * 4 * G::LD, sK + tx * G::LD);
      dotTile<DP>(dp, sDO + ty * 4 * G::LD, sV + tx * G::LD);

      const bool diag = kt == qt;
#pragma unroll
      for (int a = 0; a < 4; ++a) {
        const int i = ty * 4 + a;
        const float li = sL[i], di = sDelta[i];
#pragma unroll
        for (int b = 0; b < 4; ++b) {
          const int j = tx + 16 * b;
          const float p =
              (diag && j > i) ? 0.0f : expf(__fmul_rn(s[a][b], scale) - li);
          s[a][b] = p * (dp[a][b] - di); // dS
        }
      }
      __syncthreads(); // everyone is done reading sV
#pragma unroll
      for (int b = 0; b < 4; ++b)
        st4(sDS + (tx + 16 * b) * kLdp + ty * 4, s[0][b], s[1][b], s[2][b],
            s[3][b]);
      __syncthreads();
#pragma unroll 4
      for (int j = 0; j < kTile; ++j)
        outerAcc<DP>(acc, ld4(sDS + j * kLdp + ty * 4), sK + j * G::LD, tx);
    }

#pragma unroll
    for (int a = 0; a < 4; ++a) {
      const int i = ty * 4 + a;
      if (i >= rowsLeft)
        continue;
      E *row = dq + base + (int64_t(row0) + i) * lay.qkv.row;
#pragma unroll
      for (int n = 0; n < G::NCOL; ++n) {
        const int c = G::col(tx, n);
        if (c < D)
          stf(row + c, __fmul_rn(acc[a][n], scale));
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Generic path: one warp per row, any D
//===----------------------------------------------------------------------===//

/// Threads of a generic-path block (8 warps, one row each).
constexpr int kRowThreads = 256;
/// Output columns per lane per pass.
constexpr int kColsPerLane = 4;
constexpr int kColChunk = 32 * kColsPerLane;

/// Rows per generic-path block.
constexpr int kRowsPerRowBlock = kRowThreads / 32;

/// The row of the calling warp in a generic-path grid (x: rows of a slice,
/// one per warp; y: slices, folded beyond 65535); >= T for idle warps.
__device__ __forceinline__ int warpRow() {
  return static_cast<int>(blockIdx.x) * kRowsPerRowBlock +
         static_cast<int>(threadIdx.x >> 5);
}

template <typename E>
__global__ void __launch_bounds__(kRowThreads)
    rowForwardKernel(const E *__restrict__ q, const E *__restrict__ k,
                     const E *__restrict__ v, E *__restrict__ out,
                     float *__restrict__ lse, Layouts lay, int64_t BH, int T,
                     int D, float scale) {
  const int lane = threadIdx.x & 31;
  const int i = warpRow();
  if (i >= T)
    return; // the whole warp
  const int64_t ld = lay.kv.row; // of k, v
  for (int64_t bh = blockIdx.y; bh < BH; bh += gridDim.y) {
    const int64_t base = lay.kvOfQuery(bh); // of k, v
    const E *qi = q + lay.qkv.slice(bh, lay.H) + int64_t(i) * lay.qkv.row;
    E *orow = out + lay.out.slice(bh, lay.H) + int64_t(i) * lay.out.row;
    float m = -INFINITY, l = 0.0f;
    for (int j = 0; j <= i; ++j) {
      const float s =
          __fmul_rn(warpDot(qi, k + base + int64_t(j) * ld, D), scale);
      const float mNew = fmaxf(m, s);
      l = fmaf(l, expf(m - mNew), expf(s - mNew));
      m = mNew;
    }
    const float L = m + logf(l);
    if (lane == 0)
      lse[bh * T + i] = L;
    for (int c0 = 0; c0 < D; c0 += kColChunk) {
      float acc[kColsPerLane] = {};
      for (int j = 0; j <= i; ++j) {
        const E *vj = v + base + int64_t(j) * ld;
        const float p = expf(
            __fmul_rn(warpDot(qi, k + base + int64_t(j) * ld, D), scale) - L);
#pragma unroll
        for (int t = 0; t < kColsPerLane; ++t) {
          const int c = c0 + lane + 32 * t;
          if (c < D)
            acc[t] = fmaf(p, ldf(vj + c), acc[t]);
        }
      }
#pragma unroll
      for (int t = 0; t < kColsPerLane; ++t) {
        const int c = c0 + lane + 32 * t;
        if (c < D)
          stf(orow + c, acc[t]);
      }
    }
  }
}

/// dQ of row r: sum over keys j <= i of dS_ij k_j, times s.
template <typename E>
__global__ void __launch_bounds__(kRowThreads)
    rowBackwardQKernel(const E *__restrict__ dout, const E *__restrict__ q,
                       const E *__restrict__ k, const E *__restrict__ v,
                       const E *__restrict__ o, const float *__restrict__ lse,
                       E *__restrict__ dq, Layouts lay, int64_t BH, int T,
                       int D, float scale) {
  const int lane = threadIdx.x & 31;
  const int i = warpRow();
  if (i >= T)
    return; // the whole warp
  const int64_t ld = lay.kv.row; // of k, v
  for (int64_t bh = blockIdx.y; bh < BH; bh += gridDim.y) {
    const int64_t base = lay.kvOfQuery(bh); // of k, v
    const int64_t off =
        lay.qkv.slice(bh, lay.H) + int64_t(i) * lay.qkv.row; // row i of q, dq
    const int64_t offO =
        lay.out.slice(bh, lay.H) + int64_t(i) * lay.out.row; // of dout, o
    const float delta = warpDot(dout + offO, o + offO, D);
    const float L = lse[bh * T + i];
    for (int c0 = 0; c0 < D; c0 += kColChunk) {
      float acc[kColsPerLane] = {};
      for (int j = 0; j <= i; ++j) {
        const E *kj = k + base + int64_t(j) * ld;
        const float p = expf(__fmul_rn(warpDot(q + off, kj, D), scale) - L);
        const float dp = warpDot(dout + offO, v + base + int64_t(j) * ld, D);
        const float ds = p * (dp - delta);
#pragma unroll
        for (int t = 0; t < kColsPerLane; ++t) {
          const int c = c0 + lane + 32 * t;
          if (c < D)
            acc[t] = fmaf(ds, ldf(kj + c), acc[t]);
        }
      }
#pragma unroll
      for (int t = 0; t < kColsPerLane; ++t) {
        const int c = c0 + lane + 32 * t;
        if (c < D)
          stf(dq + off + c, __fmul_rn(acc[t], scale));
      }
    }
  }
}

/// dK, dV of key row j of K/V slice kvs (gridDim.y: K/V slices): sums
/// over rows i >= j of the group's query heads, in head order.
template <typename E>
__global__ void __launch_bounds__(kRowThreads)
    rowBackwardKVKernel(const E *__restrict__ dout, const E *__restrict__ q,
                        const E *__restrict__ k, const E *__restrict__ v,
                        const E *__restrict__ o, const float *__restrict__ lse,
                        E *__restrict__ dk, E *__restrict__ dv, Layouts lay,
                        int64_t BHkv, int T, int D, float scale) {
  const int lane = threadIdx.x & 31;
  const int j = warpRow();
  if (j >= T)
    return; // the whole warp
  const int64_t ld = lay.qkv.row, ldO = lay.out.row;
  for (int64_t kvs = blockIdx.y; kvs < BHkv; kvs += gridDim.y) {
    // Row j of k, v, dk, dv.
    const int64_t off = lay.kv.slice(kvs, lay.Hkv) + int64_t(j) * lay.kv.row;
    for (int c0 = 0; c0 < D; c0 += kColChunk) {
      float accK[kColsPerLane] = {}, accV[kColsPerLane] = {};
      for (int m = 0; m < lay.group; ++m) {
        const int64_t bh = lay.queryOfKv(kvs, m);
        const int64_t base = lay.qkv.slice(bh, lay.H);
        const int64_t baseO = lay.out.slice(bh, lay.H);
        for (int i = j; i < T; ++i) {
          const int64_t offI = base + int64_t(i) * ld;    // row i of q
          const int64_t offO = baseO + int64_t(i) * ldO; // of dout, o
          const float p =
              expf(__fmul_rn(warpDot(q + offI, k + off, D), scale) -
                   lse[bh * T + i]);
          const float delta = warpDot(dout + offO, o + offO, D);
          const float dp = warpDot(dout + offO, v + off, D);
          const float ds = p * (dp - delta);
#pragma unroll
          for (int t = 0; t < kColsPerLane; ++t) {
            const int c = c0 + lane + 32 * t;
            if (c < D) {
              accV[t] = fmaf(p, ldf(dout + offO + c), accV[t]);
              accK[t] = fmaf(ds, ldf(q + offI + c), accK[t]);
            }
          }
        }
      }
#pragma unroll
      for (int t = 0; t < kColsPerLane; ++t) {
        const int c = c0 + lane + 32 * t;
        if (c < D) {
          stf(dv + off + c, accV[t]);
          stf(dk + off + c, __fmul_rn(accK[t], scale));
        }
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Launchers
//===----------------------------------------------------------------------===//

/// The launch of a call: sizes, layouts, grid, and the device's
/// shared-memory limit.
struct Launch {
  const char *fn;
  int64_t BH;   ///< query slices, B H
  int64_t BHkv; ///< K/V slices, B Hkv (the grid of the dK/dV kernels)
  int T, D;
  float scale;
  int smemOptin; ///< cudaDevAttrMaxSharedMemoryPerBlockOptin
  Layouts lay;
  /// Grid of the fast kernels over `slices` (BH, or BHkv for the dK/dV
  /// kernel) in gridDim.y, folded beyond 65535.
  dim3 grid(int64_t slices) const {
    const int64_t tiles = (int64_t(T) + kTile - 1) / kTile;
    return dim3(static_cast<unsigned>(tiles),
                static_cast<unsigned>(slices < 65535 ? slices : 65535));
  }
  /// Grid of the generic path: a warp per row.
  dim3 rowGrid(int64_t slices) const {
    return dim3(static_cast<unsigned>((int64_t(T) + kRowsPerRowBlock - 1) /
                                      kRowsPerRowBlock),
                static_cast<unsigned>(slices < 65535 ? slices : 65535));
  }
};

/// The device form of zrt::AttentionLayout (row < 2^31, see Strides).
Strides strides(const zrt::AttentionLayout &l) {
  return {l.batch, l.head, static_cast<int>(l.row)};
}

/// The operands of a call (zrt::AttentionLayout of each): q, dq in `q`;
/// k, v, dk, dv in `kv`, whose slices are Hkv K/V heads (Hkv divides H);
/// out, dout in `out`.
struct Operands {
  zrt::AttentionLayout q, kv, out;
  int64_t Hkv;
};

/// [B, H, T, D] q and out, [B, Hkv, T, D] k and v.
Operands headsOperands(int64_t H, int64_t Hkv, int64_t T, int64_t D) {
  const zrt::AttentionLayout heads = zrt::headsLayout(H, T, D);
  return {heads, zrt::headsLayout(Hkv, T, D), heads, Hkv};
}

/// The packed projection's rows (qkv [B, T, 3 H D], out [B, T, H D]).
Operands packedOperands(int64_t H, int64_t T, int64_t D) {
  const zrt::AttentionLayout in = zrt::rowsLayout(T, 3 * H * D, D);
  return {in, in, zrt::rowsLayout(T, H * D, D), H};
}

int prepare(Launch &L, const char *fn, int64_t B, int64_t H, int64_t T,
            int64_t D, const Operands &ops) {
  L.fn = fn;
  L.BH = B * H;
  L.BHkv = B * ops.Hkv;
  L.T = static_cast<int>(T);
  L.D = static_cast<int>(D);
  L.scale = 1.0f / std::sqrt(static_cast<float>(D)); // as the CPU
  L.lay = {static_cast<int>(H), static_cast<int>(ops.Hkv),
           static_cast<int>(H / ops.Hkv), strides(ops.q), strides(ops.kv),
           strides(ops.out)};
  return sharedMemoryOptin(&L.smemOptin, fn);
}

template <int DP, typename E>
int forwardFast(const Launch &L, const E *q, const E *k, const E *v, E *out,
                float *lse) {
  using G = Geo<DP>;
  if (G::FORWARD_SMEM > L.smemOptin) {
    rowForwardKernel<E><<<L.rowGrid(L.BH), kRowThreads, 0, stream()>>>(
        q, k, v, out, lse, L.lay, L.BH, L.T, L.D, L.scale);
    return launched(L.fn);
  }
  if (int st = allowDynamicSharedMemory(flashForwardKernel<DP, E>, G::FORWARD_SMEM, L.fn))
    return st;
  flashForwardKernel<DP, E>
      <<<L.grid(L.BH), kFlashThreads, G::FORWARD_SMEM, stream()>>>(
          q, k, v, out, lse, L.lay, L.BH, L.T, L.D, L.scale);
  return launched(L.fn);
}

template <int DP, typename E>
int backwardFast(const Launch &L, const E *dout, const E *q, const E *k,
                 const E *v, const E *o, const float *lse, E *dq, E *dk,
                 E *dv) {
  using G = Geo<DP>;
  if (G::BACKWARD_KV_SMEM > L.smemOptin) {
    rowBackwardKVKernel<E><<<L.rowGrid(L.BHkv), kRowThreads, 0, stream()>>>(
        dout, q, k, v, o, lse, dk, dv, L.lay, L.BHkv, L.T, L.D, L.scale);
  } else {
    if (int st =
            allowDynamicSharedMemory(flashBackwardKVKernel<DP, E>, G::BACKWARD_KV_SMEM, L.fn))
      return st;
    flashBackwardKVKernel<DP, E>
        <<<L.grid(L.BHkv), kFlashThreads, G::BACKWARD_KV_SMEM, stream()>>>(
            dout, q, k, v, o, lse, dk, dv, L.lay, L.BHkv, L.T, L.D, L.scale);
  }
  if (int st = launched(L.fn))
    return st;
  if (G::BACKWARD_Q_SMEM > L.smemOptin) {
    rowBackwardQKernel<E><<<L.rowGrid(L.BH), kRowThreads, 0, stream()>>>(
        dout, q, k, v, o, lse, dq, L.lay, L.BH, L.T, L.D, L.scale);
  } else {
    if (int st =
            allowDynamicSharedMemory(flashBackwardQKernel<DP, E>, G::BACKWARD_Q_SMEM, L.fn))
      return st;
    flashBackwardQKernel<DP, E>
        <<<L.grid(L.BH), kFlashThreads, G::BACKWARD_Q_SMEM, stream()>>>(
            dout, q, k, v, o, lse, dq, L.lay, L.BH, L.T, L.D, L.scale);
  }
  return launched(L.fn);
}

/// zrt_attention_forward(_bf16), the packed and the grouped-query forms:
/// E = float or zrt_bf16; operands laid out as `ops`. Arguments checked
/// by the caller, B * H > 0.
template <typename E>
int attentionForward(const char *fn, const E *q, const E *k, const E *v,
                     E *out, float *lse, int64_t B, int64_t H, int64_t T,
                     int64_t D, const Operands &ops) {
  Launch L;
  if (int st = prepare(L, fn, B, H, T, D, ops))
    return st;
  if (D <= 16)
    return forwardFast<16>(L, q, k, v, out, lse);
  if (D <= 32)
    return forwardFast<32>(L, q, k, v, out, lse);
  if (D <= 64)
    return forwardFast<64>(L, q, k, v, out, lse);
  if (D <= 128)
    return forwardFast<128>(L, q, k, v, out, lse);
  rowForwardKernel<E><<<L.rowGrid(L.BH), kRowThreads, 0, stream()>>>(
      q, k, v, out, lse, L.lay, L.BH, L.T, L.D, L.scale);
  return launched(fn);
}

/// zrt_attention_backward(_bf16), the packed and the grouped-query forms:
/// operands laid out as `ops`. Arguments checked by the caller, B * H > 0.
template <typename E>
int attentionBackward(const char *fn, const E *dout, const E *q, const E *k,
                      const E *v, const E *out, const float *lse, E *dq, E *dk,
                      E *dv, int64_t B, int64_t H, int64_t T, int64_t D,
                      const Operands &ops) {
  Launch L;
  if (int st = prepare(L, fn, B, H, T, D, ops))
    return st;
  if (D <= 16)
    return backwardFast<16>(L, dout, q, k, v, out, lse, dq, dk, dv);
  if (D <= 32)
    return backwardFast<32>(L, dout, q, k, v, out, lse, dq, dk, dv);
  if (D <= 64)
    return backwardFast<64>(L, dout, q, k, v, out, lse, dq, dk, dv);
  if (D <= 128)
    return backwardFast<128>(L, dout, q, k, v, out, lse, dq, dk, dv);
  rowBackwardKVKernel<E><<<L.rowGrid(L.BHkv), kRowThreads, 0, stream()>>>(
      dout, q, k, v, out, lse, dk, dv, L.lay, L.BHkv, L.T, L.D, L.scale);
  if (int st = launched(fn))
    return st;
  rowBackwardQKernel<E><<<L.rowGrid(L.BH), kRowThreads, 0, stream()>>>(
      dout, q, k, v, out, lse, dq, L.lay, L.BH, L.T, L.D, L.scale);
  return launched(fn);
}

/// zrt_attention_forward(_bf16) (Hkv = H) and zrt_attention_forward_gqa
/// (_bf16) (`gqa`: Hkv checked first): q, out [B, H, T, D], k, v [B, Hkv,
/// T, D], checked here.
template <typename E>
int forwardHeads(const char *fn, bool gqa, const E *q, const E *k, const E *v,
                 E *out, float *lse, int64_t B, int64_t H, int64_t Hkv,
                 int64_t T, int64_t D) {
  if (gqa) {
    if (int st = zrt::checkKvHeads(fn, H, Hkv, fail))
      return st;
  }
  if (int st = zrt::checkAttentionForwardArgs(fn, q, k, v, out, lse, B, H, T,
                                              D, fail))
    return st;
  if (B * H == 0)
    return ZRT_OK;
  return attentionForward(fn, q, k, v, out, lse, B, H, T, D,
                          headsOperands(H, Hkv, T, D));
}

/// zrt_attention_backward(_bf16) and zrt_attention_backward_gqa(_bf16):
/// dout, q, out, dq [B, H, T, D], k, v, dk, dv [B, Hkv, T, D], checked
/// here.
template <typename E>
int backwardHeads(const char *fn, bool gqa, const E *dout, const E *q,
                  const E *k, const E *v, const E *out, const float *lse,
                  E *dq, E *dk, E *dv, int64_t B, int64_t H, int64_t Hkv,
                  int64_t T, int64_t D) {
  if (gqa) {
    if (int st = zrt::checkKvHeads(fn, H, Hkv, fail))
      return st;
  }
  if (int st = zrt::checkAttentionBackwardArgs(fn, dout, q, k, v, out, lse, dq,
                                               dk, dv, B, H, T, D, fail))
    return st;
  if (B * H == 0)
    return ZRT_OK;
  return attentionBackward(fn, dout, q, k, v, out, lse, dq, dk, dv, B, H, T, D,
                           headsOperands(H, Hkv, T, D));
}

/// zrt_attention_forward_packed(_bf16): qkv [B, T, 3 C], out [B, T, C]
/// (C = H D), checked here.
template <typename E>
int forwardPacked(const char *fn, const E *qkv, E *out, float *lse, int64_t B,
                  int64_t T, int64_t H, int64_t D) {
  if (int st = zrt::checkAttentionPackedForwardArgs(fn, qkv, out, lse, B, T, H,
                                                    D, fail))
    return st;
  if (B * H == 0)
    return ZRT_OK;
  const int64_t C = H * D;
  return attentionForward(fn, qkv, qkv + C, qkv + 2 * C, out, lse, B, H, T, D,
                          packedOperands(H, T, D));
}

/// zrt_attention_backward_packed(_bf16): dout, out [B, T, C], qkv and dqkv
/// [B, T, 3 C], checked here.
template <typename E>
int backwardPacked(const char *fn, const E *dout, const E *qkv, const E *out,
                   const float *lse, E *dqkv, int64_t B, int64_t T, int64_t H,
                   int64_t D) {
  if (int st = zrt::checkAttentionPackedBackwardArgs(fn, dout, qkv, out, lse,
                                                     dqkv, B, T, H, D, fail))
    return st;
  if (B * H == 0)
    return ZRT_OK;
  const int64_t C = H * D;
  return attentionBackward(fn, dout, qkv, qkv + C, qkv + 2 * C, out, lse, dqkv,
                           dqkv + C, dqkv + 2 * C, B, H, T, D,
                           packedOperands(H, T, D));
}

} // namespace

namespace zrt_cuda {

int attention_forward(const float *q, const float *k, const float *v,
                      float *out, float *lse, float * /*workspace*/, int64_t B,
                      int64_t H, int64_t T, int64_t D) {
  return forwardHeads("zrt_attention_forward", false, q, k, v, out, lse, B, H,
                      H, T, D);
}

int attention_backward(const float *dout, const float *q, const float *k,
                       const float *v, const float *out, const float *lse,
                       float *dq, float *dk, float *dv, float * /*workspace*/,
                       int64_t B, int64_t H, int64_t T, int64_t D) {
  return backwardHeads("zrt_attention_backward", false, dout, q, k, v, out,
                       lse, dq, dk, dv, B, H, H, T, D);
}

int attention_forward_bf16_simt(const zrt_bf16 *q, const zrt_bf16 *k,
                                const zrt_bf16 *v, zrt_bf16 *out, float *lse,
                                float * /*workspace*/, int64_t B, int64_t H,
                                int64_t T, int64_t D) {
  return forwardHeads("zrt_attention_forward_bf16", false, q, k, v, out, lse,
                      B, H, H, T, D);
}

int attention_backward_bf16_simt(const zrt_bf16 *dout, const zrt_bf16 *q,
                                 const zrt_bf16 *k, const zrt_bf16 *v,
                                 const zrt_bf16 *out, const float *lse,
                                 zrt_bf16 *dq, zrt_bf16 *dk, zrt_bf16 *dv,
                                 float * /*workspace*/, int64_t B, int64_t H,
                                 int64_t T, int64_t D) {
  return backwardHeads("zrt_attention_backward_bf16", false, dout, q, k, v,
                       out, lse, dq, dk, dv, B, H, H, T, D);
}

int attention_forward_gqa(const float *q, const float *k, const float *v,
                          float *out, float *lse, float * /*workspace*/,
                          int64_t B, int64_t H, int64_t Hkv, int64_t T,
                          int64_t D) {
  return forwardHeads("zrt_attention_forward_gqa", true, q, k, v, out, lse, B,
                      H, Hkv, T, D);
}

int attention_backward_gqa(const float *dout, const float *q, const float *k,
                           const float *v, const float *out, const float *lse,
                           float *dq, float *dk, float *dv,
                           float * /*workspace*/, int64_t B, int64_t H,
                           int64_t Hkv, int64_t T, int64_t D) {
  return backwardHeads("zrt_attention_backward_gqa", true, dout, q, k, v, out,
                       lse, dq, dk, dv, B, H, Hkv, T, D);
}

int attention_forward_gqa_bf16_simt(const zrt_bf16 *q, const zrt_bf16 *k,
                                    const zrt_bf16 *v, zrt_bf16 *out,
                                    float *lse, float * /*workspace*/,
                                    int64_t B, int64_t H, int64_t Hkv,
                                    int64_t T, int64_t D) {
  return forwardHeads("zrt_attention_forward_gqa_bf16", true, q, k, v, out,
                      lse, B, H, Hkv, T, D);
}

int attention_backward_gqa_bf16_simt(const zrt_bf16 *dout, const zrt_bf16 *q,
                                     const zrt_bf16 *k, const zrt_bf16 *v,
                                     const zrt_bf16 *out, const float *lse,
                                     zrt_bf16 *dq, zrt_bf16 *dk, zrt_bf16 *dv,
                                     float * /*workspace*/, int64_t B,
                                     int64_t H, int64_t Hkv, int64_t T,
                                     int64_t D) {
  return backwardHeads("zrt_attention_backward_gqa_bf16", true, dout, q, k, v,
                       out, lse, dq, dk, dv, B, H, Hkv, T, D);
}

int attention_forward_packed(const float *qkv, float *out, float *lse,
                             float * /*workspace*/, int64_t B, int64_t T,
                             int64_t H, int64_t D) {
  return forwardPacked("zrt_attention_forward_packed", qkv, out, lse, B, T, H,
                       D);
}

int attention_backward_packed(const float *dout, const float *qkv,
                              const float *out, const float *lse, float *dqkv,
                              float * /*workspace*/, int64_t B, int64_t T,
                              int64_t H, int64_t D) {
  return backwardPacked("zrt_attention_backward_packed", dout, qkv, out, lse,
                        dqkv, B, T, H, D);
}

int attention_forward_packed_bf16_simt(const zrt_bf16 *qkv, zrt_bf16 *out,
                                       float *lse, float * /*workspace*/,
                                       int64_t B, int64_t T, int64_t H,
                                       int64_t D) {
  return forwardPacked("zrt_attention_forward_packed_bf16", qkv, out, lse, B,
                       T, H, D);
}

int attention_backward_packed_bf16_simt(const zrt_bf16 *dout,
                                        const zrt_bf16 *qkv,
                                        const zrt_bf16 *out, const float *lse,
                                        zrt_bf16 *dqkv, float * /*workspace*/,
                                        int64_t B, int64_t T, int64_t H,
                                        int64_t D) {
  return backwardPacked("zrt_attention_backward_packed_bf16", dout, qkv, out,
                        lse, dqkv, B, T, H, D);
}

} // namespace zrt_cuda
