//===- flash_attention_tc.cu - CUDA backend: tensor-core attention -------===//
//
// zrt_attention_forward_bf16 / zrt_attention_backward_bf16 (zrt.h) on bf16
// tensor cores: causal scaled-dot-product attention after FlashAttention-2
// (T. Dao, "FlashAttention-2: Faster Attention with Better Parallelism and
// Work Partitioning", 2023). q, k, v, out, dout, dq, dk, dv are bf16
// [B, H, T, D], lse is f32 [B, H, T]; s = 1/sqrt(D) (f32, as the CPU).
// Products are mma.sync.m16n8k16 (bf16 x bf16, f32 accumulation) fed by
// ldmatrix from shared memory; tiles arrive by cp.async (double-buffered).
// abi.cpp dispatches here per direction when attention_tc_*_supported(D)
// (D = 32, 64, 128); otherwise it runs the f32 SIMT kernels of
// flash_attention.cu on widened values.
//
// Layouts. The kernels address every operand through a TcStrides
// (zrt::AttentionLayout): element (b, h, t, d) at b batch + h head + t row
// + d. q, k, v, dq, dk, dv share one layout, out and dout another; lse is
// always [B, H, T]. zrt_attention_*_bf16 pass headsLayout ([B, H, T, D]
// contiguous) for both; zrt_attention_*_packed_bf16 pass the rows of the
// packed projection, qkv [B, T, 3 H D] (q = qkv, k = qkv + C, v = qkv + 2 C
// with C = H D; dqkv likewise) and out / dout [B, T, C], so no head split
// or merge copy is needed. Only the addresses differ: the packed results
// are those of the [B, H, T, D] entry points on split copies, bit for bit.
// Grouped-query attention (zrt_attention_*_gqa_bf16): k, v, dk, dv have a
// layout of their own with Hkv heads; query head h reads K/V head
// h / (H / Hkv) (the forward's and the dQ kernel's K / V tile loads), and
// the dK/dV kernel's work items are (key tile, K/V slice) pairs whose query
// tiles are those of every query head of the group, in head order, one
// prefetched sequence accumulating into the same dK / dV fragments: the
// group sum in f32, rounded once, without atomics. Hkv = H computes what
// the ungrouped entry points do, bit for bit.
//
// Numerics (differences from the CPU's f32 algorithm, all allowed by zrt.h):
//  * P = exp(S - m) (forward) and P = exp(S - lse), dS = P (dP - delta)
//    (backward) are rounded to bf16 (cvt.rn: nearest even) before their
//    products, as FlashAttention-2 and cuDNN do; every accumulation is f32
//    in the tensor core. Each output is rounded to bf16 once (f32ToBf16,
//    nearest even, as zrt_f32_to_bf16).
//  * exp(x) is computed as 2^(x log2 e) with ex2.approx.ftz (about 2 ulp;
//    results below 2^-126 flush to 0), the log2 e folded into the score
//    scale: p = 2^(S s log2e - m s log2e). lse = m s + logf(l) (natural
//    log, f32), with l the f32 sum of the unrounded p.
//  * delta_i = sum_d dout_id out_id from the bf16 out, in f32.
//  Agreement with the CPU measured on the emulator (below): out within
//  5e-3, dq / dk / dv within 7e-3 of their row's magnitude; lse within
//  3e-7 relative.
//
// Tiling. A (batch, head) slice is cut into tiles: 64 keys (Bc), 64 MT
// queries (Br; MT = 2 in the forward and the dQ kernel for D <= 64, else
// 1); the last tile of a slice may be partial: rows past T are zero-filled
// in shared memory and never stored. One block = 4 warps = 128 threads per
// work item; warp w owns MT m16 row tiles (rows 16 MT w .. 16 MT (w + 1) -
// 1) of the block's tile and computes with fragments in registers (the C
// fragment of an m16n8 tile pair is the A fragment of the next product, so
// P and dS never touch shared memory; with MT = 2 each K / V fragment read
// from shared memory feeds two mma). Shared-memory tiles are [64, D] with
// a row stride of D + 8 bf16 (rows 16 bytes apart modulo 128: ldmatrix
// reads are bank-conflict free, as the emulator counts).
// Work items are (tile, slice) pairs on a 1-D grid, the longest first
// (LPT): item w covers slice w % BH and tile w / BH (counted from the last
// query tile down for the forward and dQ, from the first key tile up for
// dK/dV); gridDim.x is min(items, 2^31 - 1) and blocks loop over the rest.
//
//  * forward (item: query tile qt): Q tile -> registers (A fragments);
//    for the key tiles kt up to the tile's last row: K, V tile kt+1
//    prefetched (cp.async) while tile kt is used; S = Q K^T (16 MT x 64 per
//    warp, raw dot products), causal mask on the tiles that cross the
//    diagonal (16-key groups entirely above an m-tile's rows skip their
//    mma), online softmax (running max m and per-lane partial sums l
//    in registers, quad shuffles for the row max), O = alpha O + bf16(P) V.
//    out = O / l, lse = m s + log l.
//  * backward, kernel dK/dV (item: key tile kt): K, V tiles resident (A
//    fragments in registers for D <= 64); for qt = kt .. tiles - 1: Q, dO,
//    O tiles and lse (cp.async, double-buffered for D <= 64), delta from
//    the dO and O tiles; per 16-query chunk: S^T = K Q^T, dP^T = V dO^T
//    (16 keys x 16 queries per warp), P^T = 2^(S^T s log2e - lse log2e),
//    dS^T = P^T (dP^T - delta), dV += bf16(P^T) dO, dK += bf16(dS^T) Q.
//    Stores dV and s dK once.
//  * backward, kernel dQ (item: query tile qt, 64 MT rows): Q, dO
//    fragments in registers, lse and delta of the warp's rows in registers
//    (delta from the dO and O tiles, the 4 lanes of a quad summing a
//    quarter of a row each); for the key tiles up to the tile's last row
//    (double-buffered): per 16-key chunk S = Q K^T, dP = dO V^T,
//    dS = P (dP - delta), dQ += bf16(dS) K. Stores s dQ once.
//  No floating-point atomics: every output element is written once by one
//  thread after a fixed sequence of operations, so results are
//  bit-reproducible (the two backward kernels both recompute P, the price
//  of determinism). Tensors not 16-byte aligned (any base pointer, or a
//  layout whose slice offsets or row stride are not multiples of 16 bytes)
//  switch the tile loads to synchronous 2-byte loads and the stores to
//  2-byte stores: the same arithmetic, the same bits.
//
// Resources (ptxas -v, CUDA 13, sm_90; no spills, no local memory; dynamic
// shared memory opted in with cudaFuncSetAttribute; blocks per SM from
// registers (65536 / (128 x regs rounded up to 8)), shared memory (228 KB
// per SM, 1 KB reserved per block) and __launch_bounds__):
//   kernel    D=32: regs smem(B) blocks | D=64: regs smem(B) blocks |
//   forward         165  30,720    3    |       226  55,296    2    |
//   dK/dV           130  41,984    3    |       168  74,752    3    |
//   dQ              148  40,960    3    |       220  73,728    2    |
//             D=128: regs smem(B) blocks
//   forward         178  87,040    2
//   dK/dV           252  87,552    2
//   dQ              213 104,448    2
// (__launch_bounds__ caps dK/dV at D = 64 to 168 registers, without
// spills; uncapped, ptxas takes 186: one block per SM fewer.)
//
// Speed (GPT-2 124M: B = 16, H = 12, T = 1024, D = 64; not measured yet,
// see DISABLED_TimingGpt2). Per 128 x 64 (query x key) tile a forward
// block issues 512 mma.m16n8k16 (2.1 MFLOP), 128 ldmatrix.x4 (64 KB of
// shared-memory reads; with the 16 KB of cp.async writes about 640 clk of
// shared-memory bandwidth at 128 B/clk/SM) and 8192 ex2 (512 clk at 16 per
// clk): bounds of about 860 and 1070 TFLOP/s on an H200, so the forward is
// bound by the mma.sync rate (about 2/3 of the 989 TFLOP/s wgmma peak),
// latency and occupancy (8 warps per SM). In the backward the dQ kernel
// has MT = 2 as well, but the dK/dV kernel (4 of the 7 products per tile
// pair) keeps 16 keys per warp: about 170 KB of shared-memory traffic per
// 2.1 MFLOP tile pair bounds it near 420 TFLOP/s of its own FLOPs. Faster,
// in order of expected gain:
//  1. 32 keys per warp in the dK/dV kernel: its K and V fragments and dK,
//     dV accumulators then need about 250 registers (spills) or 8 warps per
//     128-key block with the query chunks split between warp pairs.
//  2. Hopper's wgmma (warpgroup mma from shared-memory descriptors) and TMA
//     loads, warp-specialized producer / consumer pipelines
//     (FlashAttention-3): roughly 2x over mma.sync on H100/H200.
//  3. Bc = 128 keys per forward iteration (half the barriers and O
//     rescales); a per-slice precomputed delta (needs a workspace) instead
//     of its recomputation in every dK/dV item; 16-byte coalesced output
//     stores staged through shared memory.
//
// Verification. This file has not run on a GPU when written; its kernels
// run in CI on a CPU emulator of the CUDA execution model
// (runtime/cuda/emulator, ctest zrt.cuda.emulated.*): the text of this file
// with only the DEVICE PRIMITIVES block below replaced, one fiber per thread, real barriers (every thread of a
// block at the same __syncthreads, all 32 lanes in each warp collective),
// ldmatrix and mma.m16n8k16 with the fragment layouts of the PTX ISA,
// cp.async that lands only at the issuing thread's wait_group (its
// destination poisoned before), a per-byte shared-memory race detector
// (epochs separated by barriers), shared memory reachable only through the
// primitives, and several thread and block scheduling orders (bitwise
// identical results), under ASan/UBSan too; mutations of the barriers,
// waits, masks and fragment addressing were all caught.
//
//===----------------------------------------------------------------------===//

#include "flash_attention_tc.h"

#include "device_util.cuh"

#include "common/attention_args.h"

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

namespace {

using namespace zrt_cuda;

/// Rows of a shared-memory tile (64 keys = Bc; query tiles are MT of them).
constexpr int kTcRows = 64;
/// Warps of a block; warp w owns rows 16 MT w .. 16 MT (w + 1) - 1 of the
/// block's tile (MT = 1 in the dK/dV kernel).
constexpr int kTcWarps = 4;
constexpr int kTcThreads = 32 * kTcWarps;
/// Largest gridDim.x used; more work items are looped over.
constexpr int64_t kTcMaxGrid = 2147483647;
constexpr float kLog2e = 1.44269504088896340736f;

//===----------------------------------------------------------------------===//
// Device primitives. Every tensor-core instruction, asynchronous copy and
// shared-memory access of the kernels goes through these wrappers (the
// kernels never dereference a shared-memory pointer themselves), so that
// the CPU emulator (see the file header) replaces exactly this block.
// BEGIN DEVICE PRIMITIVES
//===----------------------------------------------------------------------===//

__device__ __forceinline__ uint32_t smemAddr(const void *p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

/// 16-byte asynchronous copy global -> shared (cp.async.cg: L2 only);
/// srcBytes is 16 or 0 (0: the 16 bytes are zero-filled, nothing is read).
/// dst and src 16-byte aligned.
__device__ __forceinline__ void cpAsync16(void *dst, const void *src,
                                          int srcBytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(
                   smemAddr(dst)),
               "l"(src), "r"(srcBytes)
               : "memory");
}

/// 4-byte asynchronous copy global -> shared; srcBytes 4 or 0 (zero-fill).
__device__ __forceinline__ void cpAsync4(void *dst, const void *src,
                                         int srcBytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(
                   smemAddr(dst)),
               "l"(src), "r"(srcBytes)
               : "memory");
}

/// Closes the group of this thread's cp.async issued since the last commit.
__device__ __forceinline__ void cpAsyncCommit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/// Waits until at most N of this thread's committed groups are pending.
/// Other threads see the data only after a following __syncthreads.
template <int N> __device__ __forceinline__ void cpAsyncWait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

/// ldmatrix .x4: lane l gives the address of row l % 8 of 8x8 matrix l / 8
/// (16 bytes, 16-byte aligned); r[i] receives matrix i's elements
/// (l / 4, 2 (l % 4)) and (l / 4, 2 (l % 4) + 1), the first in the low half.
__device__ __forceinline__ void ldsm4(uint32_t (&r)[4], const void *p) {
  asm volatile(
      "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
      : "r"(smemAddr(p)));
}

/// ldmatrix .x4 .trans: as ldsm4 with each 8x8 matrix transposed: r[i]
/// receives elements (2 (l % 4), l / 4) and (2 (l % 4) + 1, l / 4).
__device__ __forceinline__ void ldsm4t(uint32_t (&r)[4], const void *p) {
  asm volatile(
      "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, "
      "[%4];\n"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
      : "r"(smemAddr(p)));
}

/// d += A B on the tensor cores: mma.sync m16n8k16, A row-major 16x16 bf16
/// (a), B 16x8 bf16 "col" (b0, b1), f32 accumulator d. Fragment layouts:
/// PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type".
__device__ __forceinline__ void mma16816(float (&d)[4], const uint32_t (&a)[4],
                                         uint32_t b0, uint32_t b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
               "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
               "{%0, %1, %2, %3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0),
                 "r"(b1));
}

/// Two f32 -> one bf16x2 register, round to nearest even: lo in the low
/// half (the lower column index of a fragment), hi in the high half.
__device__ __forceinline__ uint32_t packBf16x2(float lo, float hi) {
  uint32_t r;
  // cvt.rn.bf16x2.f32 d, a, b puts a in the upper half, b in the lower.
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

/// 2^x (ex2.approx.ftz: about 2 ulp; subnormal results flush to 0,
/// 2^-inf = 0).
__device__ __forceinline__ float exp2Fast(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

/// Plain shared-memory accesses.
__device__ __forceinline__ void stShared16(void *p, uint4 x) {
  *static_cast<uint4 *>(p) = x;
}
__device__ __forceinline__ uint4 ldShared16(const void *p) {
  return *static_cast<const uint4 *>(p);
}
__device__ __forceinline__ void stSharedF32(float *p, float x) { *p = x; }
__device__ __forceinline__ float2 ldSharedF32x2(const float *p) {
  return *reinterpret_cast<const float2 *>(p);
}

//===----------------------------------------------------------------------===//
// END DEVICE PRIMITIVES
//===----------------------------------------------------------------------===//

/// Geometry of head size D (a multiple of 16, at most 128).
template <int D> struct TcGeo {
  static_assert(D % 16 == 0 && D >= 16 && D <= 128, "D");
  /// Row stride (bf16 elements) of a [64, D] tile in shared memory: D + 8,
  /// so the 8 rows of an ldmatrix 8x8 matrix start 16 bytes apart modulo
  /// 128 (distinct bank quads: conflict-free).
  static constexpr int LD = D + 8;
  /// bf16 elements of one tile.
  static constexpr int TILE = kTcRows * LD;
  /// 16-byte chunks of a row.
  static constexpr int CHUNKS = D / 8;
  /// k-steps of 16 along D; n-tiles of 8 along D.
  static constexpr int KS = D / 16;
  static constexpr int NT = D / 8;
};

/// Where the (batch, head) slices of an operand live (zrt::AttentionLayout
/// on the device): slice bh = b H + h starts b batch + h head elements
/// from the tensor's start, its rows are `row` elements apart, each D
/// contiguous elements.
struct TcStrides {
  int64_t batch, head, row;
  /// The offset (elements) of slice bh (< 2^31, checked by the caller).
  __device__ __forceinline__ int64_t slice(int64_t bh, int H) const {
    const int b = static_cast<int>(bh) / H;
    return b * batch + (static_cast<int>(bh) - b * H) * head;
  }
};

/// The addressing of a call: q and dq in layout `qkv`, k, v, dk, dv in
/// layout `kv` (slices of Hkv K/V heads), out and dout in layout `out`, lse
/// [B, H, T] contiguous. Query slice bh = b H + h reads K/V slice
/// b Hkv + h / group (group = H / Hkv; without grouping Hkv = H, group = 1
/// and kv = qkv: every operand addressed as before).
struct TcLayouts {
  int H, Hkv, group;
  TcStrides qkv, kv, out;
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

/// Rows row0 .. row0 + 63 of a [T, D] slice `g` (rows `ld` elements apart)
/// into the tile `s`, zeros for rows >= T (all of them when row0 >= T).
/// All threads; asynchronous (cp.async, completes at the caller's
/// cpAsyncWait) when `vec` (16-byte aligned slices and rows), otherwise
/// synchronous 2-byte loads.
template <int D>
__device__ __forceinline__ void loadTile(uint16_t *s,
                                         const uint16_t *__restrict__ g,
                                         int64_t row0, int T, int64_t ld,
                                         bool vec) {
  using G = TcGeo<D>;
  constexpr int PER_THREAD = kTcRows * G::CHUNKS / kTcThreads;
  static_assert(kTcRows * G::CHUNKS % kTcThreads == 0, "chunks");
  // Thread t loads chunk c of rows r0 + RSTEP it: one row pointer, stepped.
  constexpr int RSTEP = kTcThreads / G::CHUNKS;
  static_assert(kTcThreads % G::CHUNKS == 0, "rows per step");
  const int r0 = static_cast<int>(threadIdx.x) / G::CHUNKS;
  const int c = (static_cast<int>(threadIdx.x) % G::CHUNKS) * 8;
  const int64_t rowsLeft = T - row0; // may be <= 0: all zeros
  const uint16_t *row = g + row0 * ld + c;
#pragma unroll
  for (int it = 0; it < PER_THREAD; ++it) {
    const int r = r0 + RSTEP * it;
    const bool in = r < rowsLeft;
    // Rows past T read nothing; their (unused) address is row 0's.
    const uint16_t *src = in ? row + int64_t(r) * ld : g + c;
    uint16_t *dst = s + r * G::LD + c;
    if (vec) {
      cpAsync16(dst, src, in ? 16 : 0);
    } else {
      uint32_t w[4] = {0, 0, 0, 0};
      if (in)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          w[e] = static_cast<uint32_t>(src[2 * e]) |
                 (static_cast<uint32_t>(src[2 * e + 1]) << 16);
      stShared16(dst, make_uint4(w[0], w[1], w[2], w[3]));
    }
  }
}

/// lse of rows row0 .. row0 + 63 into sL (zeros past T). Threads 0..63.
__device__ __forceinline__ void loadLse(float *sL, const float *__restrict__ lse,
                                        int row0, int T, bool vec) {
  const int t = static_cast<int>(threadIdx.x);
  if (t >= kTcRows)
    return;
  const bool in = t < T - row0;
  const float *src = lse + row0 + (in ? t : 0);
  if (vec)
    cpAsync4(sL + t, src, in ? 4 : 0);
  else
    stSharedF32(sL + t, in ? *src : 0.0f);
}

/// A operand (16 x 16) at rows r0.., columns c0.. of a row-major tile.
template <int LD>
__device__ __forceinline__ void ldA(uint32_t (&a)[4], const uint16_t *s,
                                    int r0, int c0, int lane) {
  ldsm4(a, s + (r0 + (lane & 15)) * LD + c0 + ((lane >> 4) << 3));
}

/// B operands of two n-tiles (n0 .. n0 + 15) x (k0 .. k0 + 15) of B = S^T
/// for a row-major [n][k] tile S: b[0], b[1] for the first n-tile, b[2],
/// b[3] for the second.
template <int LD>
__device__ __forceinline__ void ldBt(uint32_t (&b)[4], const uint16_t *s,
                                     int n0, int k0, int lane) {
  ldsm4(b, s + (n0 + (lane & 7) + ((lane >> 4) << 3)) * LD + k0 +
               (((lane >> 3) & 1) << 3));
}

/// B operands of two n-tiles (n0 .. n0 + 15) x (k0 .. k0 + 15) of a
/// row-major [k][n] tile (transposing ldmatrix); b as ldBt.
template <int LD>
__device__ __forceinline__ void ldB(uint32_t (&b)[4], const uint16_t *s,
                                    int k0, int n0, int lane) {
  ldsm4t(b, s + (k0 + (lane & 15)) * LD + n0 + ((lane >> 4) << 3));
}

/// The A operand (16 x 16, bf16) of accumulator tiles t0 (columns 0..7)
/// and t1 (columns 8..15): the C fragment of mma.m16n8 is the A fragment
/// of the next product, two columns per register.
__device__ __forceinline__ void accToA(uint32_t (&a)[4], const float (&t0)[4],
                                       const float (&t1)[4]) {
  a[0] = packBf16x2(t0[0], t0[1]);
  a[1] = packBf16x2(t0[2], t0[3]);
  a[2] = packBf16x2(t1[0], t1[1]);
  a[3] = packBf16x2(t1[2], t1[3]);
}

/// Stores x0, x1 (f32, rounded to bf16 as zrt_f32_to_bf16) at p[0], p[1]
/// (global memory); one 4-byte store when `vec`.
__device__ __forceinline__ void storeBf16Pair(uint16_t *p, float x0, float x1,
                                              bool vec) {
  const uint16_t h0 = f32ToBf16(x0), h1 = f32ToBf16(x1);
  if (vec) {
    *reinterpret_cast<uint32_t *>(p) =
        static_cast<uint32_t>(h0) | (static_cast<uint32_t>(h1) << 16);
  } else {
    p[0] = h0;
    p[1] = h1;
  }
}

/// sum_e a_e b_e over the 8 bf16 pairs of two 16-byte chunks (f32 FMAs in
/// order), added to acc.
__device__ __forceinline__ float dot8(uint4 a, uint4 b, float acc) {
  const uint32_t aw[4] = {a.x, a.y, a.z, a.w}, bw[4] = {b.x, b.y, b.z, b.w};
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    acc = fmaf(__uint_as_float(aw[e] << 16), __uint_as_float(bw[e] << 16), acc);
    acc = fmaf(__uint_as_float(aw[e] & 0xffff0000u),
               __uint_as_float(bw[e] & 0xffff0000u), acc);
  }
  return acc;
}

/// Max / sum over the 4 lanes of a quad (the lanes holding one row of an
/// accumulator fragment).
__device__ __forceinline__ float quadMax(float v) {
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
  return fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
}
__device__ __forceinline__ float quadSum(float v) {
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

/// Per-D configuration.
template <int D> struct TcCfg {
  /// Blocks per SM the kernels are compiled for (__launch_bounds__): the
  /// register cap is 65536 / (128 * blocks).
  static constexpr int FWD_MIN_BLOCKS = D <= 32 ? 3 : 2;
  /// m16 row tiles per warp of the forward (query rows per block: 64 MT).
  static constexpr int FWD_MT = D <= 64 ? 2 : 1;
  /// m16 row tiles per warp of the dQ kernel (query rows per block: 64 MT).
  static constexpr int Q_MT = D <= 64 ? 2 : 1;
  static constexpr int KV_MIN_BLOCKS = D <= 64 ? 3 : 2;
  static constexpr int Q_MIN_BLOCKS = D <= 32 ? 3 : 2;
  /// Query-tile buffers of the dK/dV kernel (2: double-buffered).
  static constexpr int KV_STAGES = D <= 64 ? 2 : 1;
  /// Whether the dK/dV kernel keeps the A fragments of K and V in registers.
  static constexpr bool KV_HOLD = D <= 64;
  /// Dynamic shared memory (bytes). Forward: Q (FWD_MT tiles), K x 2,
  /// V x 2. dK/dV: K, V, (Q, dO, O, lse, delta) x KV_STAGES. dQ: Q, dO
  /// (Q_MT tiles each), K x 2, V x 2 (O in K[1], V[1] at first).
  static constexpr int FWD_SMEM = (FWD_MT + 4) * TcGeo<D>::TILE * 2;
  static constexpr int KV_SMEM = (2 + 3 * KV_STAGES) * TcGeo<D>::TILE * 2 +
                                 2 * KV_STAGES * kTcRows * 4;
  static constexpr int Q_SMEM = (2 * Q_MT + 4) * TcGeo<D>::TILE * 2;
};

/// Forward. A block's query tile has ROWS = 64 MT rows; warp w owns the MT
/// m16 row tiles 16 (MT w + mt) (rows 16 MT w .. 16 MT (w + 1) - 1), so
/// every K / V fragment it reads feeds MT mma. Work item w (blockIdx.x,
/// then + gridDim.x ...): query tile qt = tilesQ - 1 - w / BH (the longest
/// first) of slice bh = w % BH; key tiles (64 keys) 0 .. nkt - 1, the last
/// ones up to the tile's last row.
template <int D>
__global__ void __launch_bounds__(kTcThreads, TcCfg<D>::FWD_MIN_BLOCKS)
    tcForwardKernel(const uint16_t *__restrict__ q,
                    const uint16_t *__restrict__ k,
                    const uint16_t *__restrict__ v, uint16_t *__restrict__ out,
                    float *__restrict__ lse, TcLayouts lay, int64_t BH, int T,
                    int64_t items, float scale, float scaleLog2, bool vec) {
  using G = TcGeo<D>;
  constexpr int MT = TcCfg<D>::FWD_MT;
  constexpr int ROWS = kTcRows * MT;
  extern __shared__ __align__(16) unsigned char smemRaw[];
  // Q: ROWS x LD (MT tiles); K[b] = sKV + 2 b TILE, V[b] = K[b] + TILE.
  uint16_t *const sQ = reinterpret_cast<uint16_t *>(smemRaw);
  uint16_t *const sKV = sQ + MT * G::TILE;
  const int warp = static_cast<int>(threadIdx.x) >> 5;
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int g = lane >> 2, tq = lane & 3;
  const int tilesQ = static_cast<int>((int64_t(T) + ROWS - 1) / ROWS);

  for (int64_t w = blockIdx.x; w < items; w += gridDim.x) {
    const int qt = tilesQ - 1 - static_cast<int>(w / BH);
    const int64_t bh = w % BH;
    const int64_t base = lay.qkv.slice(bh, lay.H); // of q
    const int64_t ld = lay.qkv.row;
    const int64_t baseKV = lay.kvOfQuery(bh); // of k, v
    const uint16_t *const kS = k + baseKV, *const vS = v + baseKV;
    const int64_t ldKV = lay.kv.row;
    const int row0 = qt * ROWS;
    const int rowsLeft = T - row0; // > 0; rows >= rowsLeft are padding
    // Key tiles up to the last row of the tile (<= T - 1).
    const int nkt = static_cast<int>(
        (int64_t(row0) + (rowsLeft < ROWS ? rowsLeft : ROWS) + kTcRows - 1) /
        kTcRows);
    __syncthreads(); // the previous item's readers of shared memory are done
#pragma unroll
    for (int i = 0; i < MT; ++i)
      loadTile<D>(sQ + i * G::TILE, q + base, int64_t(row0) + kTcRows * i, T,
                  ld, vec);
    loadTile<D>(sKV, kS, 0, T, ldKV, vec);
    loadTile<D>(sKV + G::TILE, vS, 0, T, ldKV, vec);
    cpAsyncCommit();

    uint32_t qf[MT][G::KS][4];
    float o[MT][G::NT][4];
    float m[MT][2], l[MT][2];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      m[mt][0] = m[mt][1] = -INFINITY;
      l[mt][0] = l[mt][1] = 0.0f;
#pragma unroll
      for (int n = 0; n < G::NT; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          o[mt][n][e] = 0.0f;
    }

    for (int kt = 0; kt < nkt; ++kt) {
      const int buf = kt & 1;
      if (kt + 1 < nkt) {
        uint16_t *nk = sKV + 2 * (buf ^ 1) * G::TILE;
        loadTile<D>(nk, kS, int64_t(kt + 1) * kTcRows, T, ldKV, vec);
        loadTile<D>(nk + G::TILE, vS, int64_t(kt + 1) * kTcRows, T, ldKV,
                    vec);
        cpAsyncCommit();
        cpAsyncWait<1>();
      } else {
        cpAsyncWait<0>();
      }
      __syncthreads(); // tile kt (and Q) visible to all threads
      const uint16_t *sK = sKV + 2 * buf * G::TILE;
      const uint16_t *sV = sK + G::TILE;
      if (kt == 0) {
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
          for (int kk = 0; kk < G::KS; ++kk)
            ldA<G::LD>(qf[mt][kk], sQ, 16 * (MT * warp + mt), 16 * kk, lane);
      }
      // Keys relative to the tile's first row: key kt * 64 + j is local
      // key rel + j (rel a multiple of 64). Tiles with rel >= 0 cross the
      // diagonal: mask key > row; key groups 16 np with rel + 16 np past an
      // m-tile's last row (16 (MT warp + mt) + 15) are all masked for it,
      // and their products are skipped.
      const int rel = kt * kTcRows - row0;
      const bool diag = rel >= 0;
      auto needed = [&](int group, int mt) {
        return !diag || rel + 16 * group <= 16 * (MT * warp + mt) + 15;
      };

      // S = Q K^T (raw dot products; s[mt][nt][e]: row 16 (MT warp + mt) +
      // g + 8 (e / 2), key 8 nt + 2 tq + e % 2).
      float s[MT][8][4];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int n = 0; n < 8; ++n)
#pragma unroll
          for (int e = 0; e < 4; ++e)
            s[mt][n][e] = 0.0f;
#pragma unroll
      for (int kk = 0; kk < G::KS; ++kk)
#pragma unroll
        for (int np = 0; np < 4; ++np)
          if (needed(np, MT - 1)) {
            uint32_t b[4];
            ldBt<G::LD>(b, sK, 16 * np, 16 * kk, lane);
#pragma unroll
            for (int mt = 0; mt < MT; ++mt)
              if (needed(np, mt)) {
                mma16816(s[mt][2 * np], qf[mt][kk], b[0], b[1]);
                mma16816(s[mt][2 * np + 1], qf[mt][kk], b[2], b[3]);
              }
          }
      if (diag) {
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
          for (int n = 0; n < 8; ++n)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              const int row = 16 * (MT * warp + mt) + g + 8 * (e >> 1);
              const int key = rel + 8 * n + 2 * tq + (e & 1);
              if (key > row)
                s[mt][n][e] = -INFINITY;
            }
      }

      // Online softmax (m: running max of the raw scores; P = 2^(s S log2e
      // - s m log2e) = exp(s S - s m)).
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          float mx = -INFINITY;
#pragma unroll
          for (int n = 0; n < 8; ++n)
            mx = fmaxf(mx, fmaxf(s[mt][n][2 * h], s[mt][n][2 * h + 1]));
          const float mNew = fmaxf(m[mt][h], quadMax(mx));
          // mNew is finite: key 0 (tile 0) is unmasked for every row.
          const float mScaled = mNew == -INFINITY ? 0.0f : mNew * scaleLog2;
          const float alpha = exp2Fast(m[mt][h] * scaleLog2 - mScaled);
          m[mt][h] = mNew;
          float rs = 0.0f;
#pragma unroll
          for (int n = 0; n < 8; ++n)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              const float p =
                  exp2Fast(fmaf(s[mt][n][2 * h + e], scaleLog2, -mScaled));
              s[mt][n][2 * h + e] = p;
              rs += p;
            }
          l[mt][h] = fmaf(l[mt][h], alpha, rs); // this lane's columns only
#pragma unroll
          for (int n = 0; n < G::NT; ++n) {
            o[mt][n][2 * h] *= alpha;
            o[mt][n][2 * h + 1] *= alpha;
          }
        }

      // O += P V, P rounded to bf16.
#pragma unroll
      for (int kk = 0; kk < 4; ++kk)
        if (needed(kk, MT - 1)) {
          uint32_t pa[MT][4];
#pragma unroll
          for (int mt = 0; mt < MT; ++mt)
            accToA(pa[mt], s[mt][2 * kk], s[mt][2 * kk + 1]);
#pragma unroll
          for (int dp = 0; dp < G::NT / 2; ++dp) {
            uint32_t b[4];
            ldB<G::LD>(b, sV, 16 * kk, 16 * dp, lane);
#pragma unroll
            for (int mt = 0; mt < MT; ++mt)
              if (needed(kk, mt)) {
                mma16816(o[mt][2 * dp], pa[mt], b[0], b[1]);
                mma16816(o[mt][2 * dp + 1], pa[mt], b[2], b[3]);
              }
          }
        }
      __syncthreads(); // readers of buffer buf are done before its reload
    }

#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float lt = quadSum(l[mt][h]);
        const int r = 16 * (MT * warp + mt) + g + 8 * h;
        if (r >= rowsLeft)
          continue;
        const int row = row0 + r;
        const float inv = 1.0f / lt;
        uint16_t *orow =
            out + lay.out.slice(bh, lay.H) + int64_t(row) * lay.out.row;
#pragma unroll
        for (int n = 0; n < G::NT; ++n)
          storeBf16Pair(orow + 8 * n + 2 * tq, o[mt][n][2 * h] * inv,
                        o[mt][n][2 * h + 1] * inv, vec);
        if (tq == 0)
          lse[bh * T + row] = fmaf(m[mt][h], scale, logf(lt));
      }
  }
}

/// Backward, dK and dV. Work item w: key tile kt = w / BHkv (the longest
/// first) of K/V slice w % BHkv; visits the query tiles qt >= kt of each
/// query head of the slice's group, in head order, as one sequence of
/// steps (prefetched as one), dK and dV accumulating over all of them.
template <int D>
__global__ void __launch_bounds__(kTcThreads, TcCfg<D>::KV_MIN_BLOCKS)
    tcBackwardKVKernel(const uint16_t *__restrict__ dout,
                       const uint16_t *__restrict__ q,
                       const uint16_t *__restrict__ k,
                       const uint16_t *__restrict__ v,
                       const uint16_t *__restrict__ o,
                       const float *__restrict__ lse, uint16_t *__restrict__ dk,
                       uint16_t *__restrict__ dv, TcLayouts lay,
                       int64_t BHkv, int T, int64_t items, float scale,
                       float scaleLog2, bool vec) {
  using G = TcGeo<D>;
  constexpr int S = TcCfg<D>::KV_STAGES;
  constexpr bool HOLD = TcCfg<D>::KV_HOLD;
  extern __shared__ __align__(16) unsigned char smemRaw[];
  uint16_t *const sK = reinterpret_cast<uint16_t *>(smemRaw);
  uint16_t *const sV = sK + G::TILE;
  // Stage b: Q = sQb + 3 b TILE, dO = Q + TILE, O = Q + 2 TILE.
  uint16_t *const sQb = sV + G::TILE;
  // Stage b: lse = sStat + 2 b 64, delta = lse + 64.
  float *const sStat = reinterpret_cast<float *>(sQb + 3 * S * G::TILE);
  const int warp = static_cast<int>(threadIdx.x) >> 5;
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int g = lane >> 2, tq = lane & 3;
  const int tiles = static_cast<int>((int64_t(T) + kTcRows - 1) / kTcRows);

  for (int64_t w = blockIdx.x; w < items; w += gridDim.x) {
    const int kt = static_cast<int>(w / BHkv);
    const int64_t kvs = w % BHkv;
    const int64_t baseKV = lay.kv.slice(kvs, lay.Hkv); // of k, v, dk, dv
    const int key0 = kt * kTcRows;
    __syncthreads(); // the previous item's readers of shared memory are done
    loadTile<D>(sK, k + baseKV, key0, T, lay.kv.row, vec);
    loadTile<D>(sV, v + baseKV, key0, T, lay.kv.row, vec);
    // Step it: query tile kt + it % perHead of the group's query head
    // it / perHead.
    const int perHead = tiles - kt;
    const int steps = lay.group * perHead;
    // The query tile of step it into stage b (all threads).
    auto loadQueryTile = [&](int it, int b) {
      const int m = it / perHead;
      const int qt = kt + (it - m * perHead);
      const int64_t bh = lay.queryOfKv(kvs, m);
      const int64_t base = lay.qkv.slice(bh, lay.H);  // of q
      const int64_t baseO = lay.out.slice(bh, lay.H); // of dout, o
      uint16_t *sq = sQb + 3 * b * G::TILE;
      loadTile<D>(sq, q + base, qt * kTcRows, T, lay.qkv.row, vec);
      loadTile<D>(sq + G::TILE, dout + baseO, qt * kTcRows, T, lay.out.row,
                  vec);
      loadTile<D>(sq + 2 * G::TILE, o + baseO, qt * kTcRows, T, lay.out.row,
                  vec);
      loadLse(sStat + 2 * b * kTcRows, lse + bh * T, qt * kTcRows, T, vec);
    };
    loadQueryTile(0, 0);
    cpAsyncCommit();

    uint32_t kf[HOLD ? G::KS : 1][4], vf[HOLD ? G::KS : 1][4];
    float dK[G::NT][4], dV[G::NT][4];
#pragma unroll
    for (int n = 0; n < G::NT; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        dK[n][e] = dV[n][e] = 0.0f;

    for (int it = 0; it < steps; ++it) {
      const int qt = kt + it % perHead;
      const int buf = S == 2 ? (it & 1) : 0;
      if (S == 2) {
        if (it + 1 < steps) {
          loadQueryTile(it + 1, buf ^ 1);
          cpAsyncCommit();
          cpAsyncWait<1>();
        } else {
          cpAsyncWait<0>();
        }
      } else {
        if (it > 0) {
          loadQueryTile(it, 0);
          cpAsyncCommit();
        }
        cpAsyncWait<0>();
      }
      __syncthreads(); // query tile qt visible to all threads
      const uint16_t *sQ = sQb + 3 * buf * G::TILE;
      const uint16_t *sDO = sQ + G::TILE;
      const uint16_t *sO = sQ + 2 * G::TILE;
      float *sL = sStat + 2 * buf * kTcRows;
      float *sDelta = sL + kTcRows;
      {
        // delta_r = dO_r . O_r: thread pairs split a row in halves.
        const int r = static_cast<int>(threadIdx.x) >> 1;
        const int half = static_cast<int>(threadIdx.x) & 1;
        float acc = 0.0f;
#pragma unroll
        for (int c = 0; c < G::CHUNKS / 2; ++c) {
          const int off = r * G::LD + half * (D / 2) + 8 * c;
          acc = dot8(ldShared16(sDO + off), ldShared16(sO + off), acc);
        }
        acc += __shfl_xor_sync(0xffffffffu, acc, 1);
        if (half == 0)
          stSharedF32(sDelta + r, acc);
      }
      if (HOLD && it == 0) {
#pragma unroll
        for (int kk = 0; kk < (HOLD ? G::KS : 0); ++kk) {
          ldA<G::LD>(kf[kk], sK, 16 * warp, 16 * kk, lane);
          ldA<G::LD>(vf[kk], sV, 16 * warp, 16 * kk, lane);
        }
      }
      __syncthreads(); // delta visible

      const int rowsLeft = T - qt * kTcRows;
      const bool diag = qt == kt;
      const bool tail = rowsLeft < kTcRows;
      // Chunks of 16 queries: S^T and dP^T (16 keys of this warp x 16
      // queries; [nt][e]: key 16 warp + g + 8 (e / 2), query 16 c + 8 nt +
      // 2 tq + e % 2), then dV += P^T dO, dK += dS^T Q over the chunk.
#pragma unroll 1
      for (int c = 0; c < 4; ++c) {
        if (diag && c < warp)
          continue; // every query of the chunk precedes every key
        float st[2][4], dpt[2][4];
#pragma unroll
        for (int n = 0; n < 2; ++n)
#pragma unroll
          for (int e = 0; e < 4; ++e)
            st[n][e] = dpt[n][e] = 0.0f;
#pragma unroll
        for (int kk = 0; kk < G::KS; ++kk) {
          uint32_t b[4], ka[4], va[4];
          if constexpr (HOLD) {
#pragma unroll
            for (int e = 0; e < 4; ++e)
              ka[e] = kf[kk][e], va[e] = vf[kk][e];
          } else {
            ldA<G::LD>(ka, sK, 16 * warp, 16 * kk, lane);
            ldA<G::LD>(va, sV, 16 * warp, 16 * kk, lane);
          }
          ldBt<G::LD>(b, sQ, 16 * c, 16 * kk, lane);
          mma16816(st[0], ka, b[0], b[1]);
          mma16816(st[1], ka, b[2], b[3]);
          ldBt<G::LD>(b, sDO, 16 * c, 16 * kk, lane);
          mma16816(dpt[0], va, b[0], b[1]);
          mma16816(dpt[1], va, b[2], b[3]);
        }
#pragma unroll
        for (int n = 0; n < 2; ++n) {
          const int col = 16 * c + 8 * n + 2 * tq;
          const float2 lq = ldSharedF32x2(sL + col);
          const float2 dq = ldSharedF32x2(sDelta + col);
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int key = 16 * warp + g + 8 * (e >> 1);
            const int query = col + (e & 1);
            const float lrow = (e & 1) ? lq.y : lq.x;
            const float drow = (e & 1) ? dq.y : dq.x;
            float p = exp2Fast(fmaf(st[n][e], scaleLog2, -lrow * kLog2e));
            if ((diag && key > query) || (tail && query >= rowsLeft))
              p = 0.0f;
            st[n][e] = p;
            dpt[n][e] = p * (dpt[n][e] - drow); // dS^T
          }
        }
        uint32_t pa[4], da[4];
        accToA(pa, st[0], st[1]);
        accToA(da, dpt[0], dpt[1]);
#pragma unroll
        for (int dp = 0; dp < G::NT / 2; ++dp) {
          uint32_t b[4];
          ldB<G::LD>(b, sDO, 16 * c, 16 * dp, lane);
          mma16816(dV[2 * dp], pa, b[0], b[1]);
          mma16816(dV[2 * dp + 1], pa, b[2], b[3]);
          ldB<G::LD>(b, sQ, 16 * c, 16 * dp, lane);
          mma16816(dK[2 * dp], da, b[0], b[1]);
          mma16816(dK[2 * dp + 1], da, b[2], b[3]);
        }
      }
      __syncthreads(); // readers of stage buf are done before its reload
    }

#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int j = 16 * warp + g + 8 * h;
      if (j >= T - key0)
        continue;
      const int64_t off = baseKV + (int64_t(key0) + j) * lay.kv.row;
#pragma unroll
      for (int n = 0; n < G::NT; ++n) {
        storeBf16Pair(dv + off + 8 * n + 2 * tq, dV[n][2 * h], dV[n][2 * h + 1],
                      vec);
        storeBf16Pair(dk + off + 8 * n + 2 * tq, dK[n][2 * h] * scale,
                      dK[n][2 * h + 1] * scale, vec);
      }
    }
  }
}

/// Backward, dQ. A block's query tile has ROWS = 64 MT rows, warp w owns
/// the m16 row tiles 16 (MT w + mt) (as the forward). Work item w: query
/// tile qt = tilesQ - 1 - w / BH of slice bh = w % BH; visits the key tiles
/// up to the tile's last row.
template <int D>
__global__ void __launch_bounds__(kTcThreads, TcCfg<D>::Q_MIN_BLOCKS)
    tcBackwardQKernel(const uint16_t *__restrict__ dout,
                      const uint16_t *__restrict__ q,
                      const uint16_t *__restrict__ k,
                      const uint16_t *__restrict__ v,
                      const uint16_t *__restrict__ o,
                      const float *__restrict__ lse, uint16_t *__restrict__ dq,
                      TcLayouts lay, int64_t BH, int T, int64_t items,
                      float scale, float scaleLog2, bool vec) {
  using G = TcGeo<D>;
  constexpr int MT = TcCfg<D>::Q_MT;
  constexpr int ROWS = kTcRows * MT;
  static_assert(MT <= 2, "O shares K[1], V[1]");
  extern __shared__ __align__(16) unsigned char smemRaw[];
  uint16_t *const sQ = reinterpret_cast<uint16_t *>(smemRaw);
  uint16_t *const sDO = sQ + MT * G::TILE;
  // K[b] = sKV + 2 b TILE, V[b] = K[b] + TILE; O (MT tiles) shares K[1],
  // V[1] (read before key tile 1 is loaded).
  uint16_t *const sKV = sDO + MT * G::TILE;
  uint16_t *const sO = sKV + 2 * G::TILE;
  const int warp = static_cast<int>(threadIdx.x) >> 5;
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int g = lane >> 2, tq = lane & 3;
  const int tilesQ = static_cast<int>((int64_t(T) + ROWS - 1) / ROWS);

  for (int64_t w = blockIdx.x; w < items; w += gridDim.x) {
    const int qt = tilesQ - 1 - static_cast<int>(w / BH);
    const int64_t bh = w % BH;
    const int64_t base = lay.qkv.slice(bh, lay.H); // of q, dq
    const int64_t ld = lay.qkv.row;
    const int64_t baseKV = lay.kvOfQuery(bh); // of k, v
    const uint16_t *const kS = k + baseKV, *const vS = v + baseKV;
    const int64_t ldKV = lay.kv.row;
    const int row0 = qt * ROWS;
    const int rowsLeft = T - row0; // > 0; rows >= rowsLeft are padding
    const int nkt = static_cast<int>(
        (int64_t(row0) + (rowsLeft < ROWS ? rowsLeft : ROWS) + kTcRows - 1) /
        kTcRows);
    __syncthreads(); // the previous item's readers of shared memory are done
    {
      const int64_t baseO = lay.out.slice(bh, lay.H); // of dout, o
#pragma unroll
      for (int i = 0; i < MT; ++i) {
        const int64_t r0 = int64_t(row0) + kTcRows * i;
        loadTile<D>(sQ + i * G::TILE, q + base, r0, T, ld, vec);
        loadTile<D>(sDO + i * G::TILE, dout + baseO, r0, T, lay.out.row, vec);
        loadTile<D>(sO + i * G::TILE, o + baseO, r0, T, lay.out.row, vec);
      }
    }
    loadTile<D>(sKV, kS, 0, T, ldKV, vec);
    loadTile<D>(sKV + G::TILE, vS, 0, T, ldKV, vec);
    cpAsyncCommit();
    cpAsyncWait<0>();
    __syncthreads();

    // Rows 16 (MT warp + mt) + g + 8 h: lse (log2 units) and delta = dO . O,
    // the 4 lanes of a quad summing a quarter of the row each.
    float lse2[MT][2], delta[MT][2];
    uint32_t qf[MT][G::KS][4], df[MT][G::KS][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = 16 * (MT * warp + mt) + g + 8 * h;
        float acc = 0.0f;
#pragma unroll
        for (int c = 0; c < G::CHUNKS / 4; ++c) {
          const int off = r * G::LD + tq * (D / 4) + 8 * c;
          acc = dot8(ldShared16(sDO + off), ldShared16(sO + off), acc);
        }
        delta[mt][h] = quadSum(acc);
        lse2[mt][h] =
            r < rowsLeft ? lse[bh * T + row0 + r] * kLog2e : 0.0f;
      }
#pragma unroll
      for (int kk = 0; kk < G::KS; ++kk) {
        ldA<G::LD>(qf[mt][kk], sQ, 16 * (MT * warp + mt), 16 * kk, lane);
        ldA<G::LD>(df[mt][kk], sDO, 16 * (MT * warp + mt), 16 * kk, lane);
      }
    }
    __syncthreads(); // readers of sO are done before key tile 1 replaces it

    float acc[MT][G::NT][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int n = 0; n < G::NT; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          acc[mt][n][e] = 0.0f;

    for (int kt = 0; kt < nkt; ++kt) {
      const int buf = kt & 1;
      if (kt + 1 < nkt) {
        uint16_t *nk = sKV + 2 * (buf ^ 1) * G::TILE;
        loadTile<D>(nk, kS, int64_t(kt + 1) * kTcRows, T, ldKV, vec);
        loadTile<D>(nk + G::TILE, vS, int64_t(kt + 1) * kTcRows, T, ldKV,
                    vec);
        cpAsyncCommit();
        cpAsyncWait<1>();
      } else {
        cpAsyncWait<0>();
      }
      __syncthreads(); // key tile kt visible to all threads
      const uint16_t *sK = sKV + 2 * buf * G::TILE;
      const uint16_t *sV = sK + G::TILE;
      // Keys relative to the tile's first row, as in the forward.
      const int rel = kt * kTcRows - row0;
      const bool diag = rel >= 0;
      auto needed = [&](int group, int mt) {
        return !diag || rel + 16 * group <= 16 * (MT * warp + mt) + 15;
      };
      // Chunks of 16 keys: S and dP (s[mt][nt][e]: row 16 (MT warp + mt) +
      // g + 8 (e / 2), local key rel + 16 c + 8 nt + 2 tq + e % 2), then
      // dQ += dS K over the chunk.
#pragma unroll 1
      for (int c = 0; c < 4; ++c) {
        if (!needed(c, MT - 1))
          continue; // every key of the chunk follows every row of the warp
        float s[MT][2][4], dp[MT][2][4];
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
          for (int n = 0; n < 2; ++n)
#pragma unroll
            for (int e = 0; e < 4; ++e)
              s[mt][n][e] = dp[mt][n][e] = 0.0f;
#pragma unroll
        for (int kk = 0; kk < G::KS; ++kk) {
          uint32_t b[4];
          ldBt<G::LD>(b, sK, 16 * c, 16 * kk, lane);
#pragma unroll
          for (int mt = 0; mt < MT; ++mt)
            if (needed(c, mt)) {
              mma16816(s[mt][0], qf[mt][kk], b[0], b[1]);
              mma16816(s[mt][1], qf[mt][kk], b[2], b[3]);
            }
          ldBt<G::LD>(b, sV, 16 * c, 16 * kk, lane);
#pragma unroll
          for (int mt = 0; mt < MT; ++mt)
            if (needed(c, mt)) {
              mma16816(dp[mt][0], df[mt][kk], b[0], b[1]);
              mma16816(dp[mt][1], df[mt][kk], b[2], b[3]);
            }
        }
        uint32_t da[MT][4];
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
          for (int n = 0; n < 2; ++n)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              const int row = 16 * (MT * warp + mt) + g + 8 * (e >> 1);
              const int key = rel + 16 * c + 8 * n + 2 * tq + (e & 1);
              float p = exp2Fast(fmaf(s[mt][n][e], scaleLog2, -lse2[mt][e >> 1]));
              if (diag && key > row)
                p = 0.0f;
              dp[mt][n][e] = p * (dp[mt][n][e] - delta[mt][e >> 1]); // dS
            }
          accToA(da[mt], dp[mt][0], dp[mt][1]);
        }
#pragma unroll
        for (int dn = 0; dn < G::NT / 2; ++dn) {
          uint32_t b[4];
          ldB<G::LD>(b, sK, 16 * c, 16 * dn, lane);
#pragma unroll
          for (int mt = 0; mt < MT; ++mt)
            if (needed(c, mt)) {
              mma16816(acc[mt][2 * dn], da[mt], b[0], b[1]);
              mma16816(acc[mt][2 * dn + 1], da[mt], b[2], b[3]);
            }
        }
      }
      __syncthreads(); // readers of buffer buf are done before its reload
    }

#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = 16 * (MT * warp + mt) + g + 8 * h;
        if (r >= rowsLeft)
          continue;
        uint16_t *drow = dq + base + (int64_t(row0) + r) * ld;
#pragma unroll
        for (int n = 0; n < G::NT; ++n)
          storeBf16Pair(drow + 8 * n + 2 * tq, acc[mt][n][2 * h] * scale,
                        acc[mt][n][2 * h + 1] * scale, vec);
      }
  }
}

//===----------------------------------------------------------------------===//
// Launchers
//===----------------------------------------------------------------------===//

bool aligned16(const void *p) {
  return (reinterpret_cast<uintptr_t>(p) & 15) == 0;
}

/// Whether every slice and row of layout `s` starts a multiple of 16 bytes
/// from its tensor's start (bf16: strides that are multiples of 8).
bool strides16(const TcStrides &s) {
  return s.batch % 8 == 0 && s.head % 8 == 0 && s.row % 8 == 0;
}

/// The device form of a call's layouts (zrt::AttentionLayout, H < 2^31):
/// q, dq in `qkv`; k, v, dk, dv in `kv` (Hkv heads, Hkv dividing H); out,
/// dout in `out`.
TcLayouts tcLayouts(int64_t H, int64_t Hkv, const zrt::AttentionLayout &qkv,
                    const zrt::AttentionLayout &kv,
                    const zrt::AttentionLayout &out) {
  return {static_cast<int>(H),
          static_cast<int>(Hkv),
          static_cast<int>(H / Hkv),
          {qkv.batch, qkv.head, qkv.row},
          {kv.batch, kv.head, kv.row},
          {out.batch, out.head, out.row}};
}

/// Without grouping: k, v, dk, dv in q's layout.
TcLayouts tcLayouts(int64_t H, const zrt::AttentionLayout &qkv,
                    const zrt::AttentionLayout &out) {
  return tcLayouts(H, H, qkv, qkv, out);
}

/// Sizes of a call.
struct TcLaunch {
  const char *fn;
  int64_t BH, items;
  int T;
  float scale, scaleLog2;
  unsigned grid;
};

/// Sizes of a launch whose work items are tiles of `rows` rows of B H
/// slices (H: the K/V heads for the dK/dV kernel).
int prepareTc(TcLaunch &L, const char *fn, int64_t B, int64_t H, int64_t T,
              int64_t D, int smemBytes, int rows) {
  L.fn = fn;
  L.BH = B * H;
  L.T = static_cast<int>(T);
  L.scale = 1.0f / std::sqrt(static_cast<float>(D)); // as the CPU
  L.scaleLog2 = L.scale * kLog2e;
  const int64_t tiles = (T + rows - 1) / rows;
  L.items = tiles * L.BH;
  L.grid = static_cast<unsigned>(L.items < kTcMaxGrid ? L.items : kTcMaxGrid);
  int optin = 0;
  if (int st = sharedMemoryOptin(&optin, fn))
    return st;
  if (smemBytes > optin)
    return fail(ZRT_ERR_INVALID_ARGUMENT,
                "%s: the tensor-core kernels need %d bytes of shared memory "
                "per block, the device allows %d",
                fn, smemBytes, optin);
  return ZRT_OK;
}

/// The cp.async path (`vec`) needs every base pointer, slice offset and
/// row stride 16-byte aligned; otherwise the plain-load path runs (the same
/// bits).
template <int D>
int forwardTc(const char *fn, const uint16_t *q, const uint16_t *k,
              const uint16_t *v, uint16_t *out, float *lse, int64_t B,
              int64_t H, int64_t T, const TcLayouts &lay) {
  constexpr int smem = TcCfg<D>::FWD_SMEM;
  TcLaunch L;
  if (int st = prepareTc(L, fn, B, H, T, D, smem, 64 * TcCfg<D>::FWD_MT))
    return st;
  const bool vec = aligned16(q) && aligned16(k) && aligned16(v) &&
                   aligned16(out) && strides16(lay.qkv) && strides16(lay.kv) &&
                   strides16(lay.out);
  if (int st = allowDynamicSharedMemory(tcForwardKernel<D>, smem, fn))
    return st;
  tcForwardKernel<D><<<L.grid, kTcThreads, smem, stream()>>>(
      q, k, v, out, lse, lay, L.BH, L.T, L.items, L.scale, L.scaleLog2, vec);
  return launched(fn);
}

template <int D>
int backwardTc(const char *fn, const uint16_t *dout, const uint16_t *q,
               const uint16_t *k, const uint16_t *v, const uint16_t *o,
               const float *lse, uint16_t *dq, uint16_t *dk, uint16_t *dv,
               int64_t B, int64_t H, int64_t T, const TcLayouts &lay) {
  constexpr int smemKV = TcCfg<D>::KV_SMEM;
  constexpr int smemQ = TcCfg<D>::Q_SMEM;
  TcLaunch L, LQ;
  if (int st = prepareTc(L, fn, B, lay.Hkv, T, D, smemKV, kTcRows))
    return st;
  if (int st = prepareTc(LQ, fn, B, H, T, D, smemQ, 64 * TcCfg<D>::Q_MT))
    return st;
  const bool vec = aligned16(dout) && aligned16(q) && aligned16(k) &&
                   aligned16(v) && aligned16(o) && aligned16(dq) &&
                   aligned16(dk) && aligned16(dv) && strides16(lay.qkv) &&
                   strides16(lay.kv) && strides16(lay.out);
  if (int st = allowDynamicSharedMemory(tcBackwardKVKernel<D>, smemKV, fn))
    return st;
  tcBackwardKVKernel<D><<<L.grid, kTcThreads, smemKV, stream()>>>(
      dout, q, k, v, o, lse, dk, dv, lay, L.BH, L.T, L.items, L.scale,
      L.scaleLog2, vec);
  if (int st = launched(fn))
    return st;
  if (int st = allowDynamicSharedMemory(tcBackwardQKernel<D>, smemQ, fn))
    return st;
  tcBackwardQKernel<D><<<LQ.grid, kTcThreads, smemQ, stream()>>>(
      dout, q, k, v, o, lse, dq, lay, LQ.BH, LQ.T, LQ.items, LQ.scale,
      LQ.scaleLog2, vec);
  return launched(fn);
}

/// The forward for any supported D (checked arguments, B * H > 0).
int forwardTcAny(const char *fn, const uint16_t *q, const uint16_t *k,
                 const uint16_t *v, uint16_t *out, float *lse, int64_t B,
                 int64_t H, int64_t T, int64_t D, const TcLayouts &lay) {
  switch (D) {
  case 32:
    return forwardTc<32>(fn, q, k, v, out, lse, B, H, T, lay);
  case 64:
    return forwardTc<64>(fn, q, k, v, out, lse, B, H, T, lay);
  case 128:
    return forwardTc<128>(fn, q, k, v, out, lse, B, H, T, lay);
  default:
    return fail(ZRT_ERR_INVALID_ARGUMENT,
                "%s: no tensor-core kernel for D = %lld", fn,
                static_cast<long long>(D));
  }
}

/// The backward for any supported D (checked arguments, B * H > 0).
int backwardTcAny(const char *fn, const uint16_t *dout, const uint16_t *q,
                  const uint16_t *k, const uint16_t *v, const uint16_t *o,
                  const float *lse, uint16_t *dq, uint16_t *dk, uint16_t *dv,
                  int64_t B, int64_t H, int64_t T, int64_t D,
                  const TcLayouts &lay) {
  switch (D) {
  case 32:
    return backwardTc<32>(fn, dout, q, k, v, o, lse, dq, dk, dv, B, H, T, lay);
  case 64:
    return backwardTc<64>(fn, dout, q, k, v, o, lse, dq, dk, dv, B, H, T, lay);
  case 128:
    return backwardTc<128>(fn, dout, q, k, v, o, lse, dq, dk, dv, B, H, T,
                           lay);
  default:
    return fail(ZRT_ERR_INVALID_ARGUMENT,
                "%s: no tensor-core kernel for D = %lld", fn,
                static_cast<long long>(D));
  }
}

} // namespace

namespace zrt_cuda {

bool attention_tc_forward_supported(int64_t D) {
  return D == 32 || D == 64 || D == 128;
}

bool attention_tc_backward_supported(int64_t D) {
  return D == 32 || D == 64 || D == 128;
}

int attention_forward_bf16_tc(const zrt_bf16 *q, const zrt_bf16 *k,
                              const zrt_bf16 *v, zrt_bf16 *out, float *lse,
                              int64_t B, int64_t H, int64_t T, int64_t D) {
  if (B * H == 0)
    return ZRT_OK;
  const zrt::AttentionLayout heads = zrt::headsLayout(H, T, D);
  return forwardTcAny("zrt_attention_forward_bf16", q, k, v, out, lse, B, H, T,
                      D, tcLayouts(H, heads, heads));
}

int attention_backward_bf16_tc(const zrt_bf16 *dout, const zrt_bf16 *q,
                               const zrt_bf16 *k, const zrt_bf16 *v,
                               const zrt_bf16 *out, const float *lse,
                               zrt_bf16 *dq, zrt_bf16 *dk, zrt_bf16 *dv,
                               int64_t B, int64_t H, int64_t T, int64_t D) {
  if (B * H == 0)
    return ZRT_OK;
  const zrt::AttentionLayout heads = zrt::headsLayout(H, T, D);
  return backwardTcAny("zrt_attention_backward_bf16", dout, q, k, v, out, lse,
                       dq, dk, dv, B, H, T, D, tcLayouts(H, heads, heads));
}

int attention_forward_packed_bf16_tc(const zrt_bf16 *qkv, zrt_bf16 *out,
                                     float *lse, int64_t B, int64_t T,
                                     int64_t H, int64_t D) {
  if (B * H == 0)
    return ZRT_OK;
  const int64_t C = H * D;
  return forwardTcAny("zrt_attention_forward_packed_bf16", qkv, qkv + C,
                      qkv + 2 * C, out, lse, B, H, T, D,
                      tcLayouts(H, zrt::rowsLayout(T, 3 * C, D),
                                zrt::rowsLayout(T, C, D)));
}

int attention_forward_gqa_bf16_tc(const zrt_bf16 *q, const zrt_bf16 *k,
                                  const zrt_bf16 *v, zrt_bf16 *out, float *lse,
                                  int64_t B, int64_t H, int64_t Hkv, int64_t T,
                                  int64_t D) {
  if (B * H == 0)
    return ZRT_OK;
  const zrt::AttentionLayout heads = zrt::headsLayout(H, T, D);
  return forwardTcAny("zrt_attention_forward_gqa_bf16", q, k, v, out, lse, B,
                      H, T, D,
                      tcLayouts(H, Hkv, heads, zrt::headsLayout(Hkv, T, D),
                                heads));
}

int attention_backward_gqa_bf16_tc(const zrt_bf16 *dout, const zrt_bf16 *q,
                                   const zrt_bf16 *k, const zrt_bf16 *v,
                                   const zrt_bf16 *out, const float *lse,
                                   zrt_bf16 *dq, zrt_bf16 *dk, zrt_bf16 *dv,
                                   int64_t B, int64_t H, int64_t Hkv,
                                   int64_t T, int64_t D) {
  if (B * H == 0)
    return ZRT_OK;
  const zrt::AttentionLayout heads = zrt::headsLayout(H, T, D);
  return backwardTcAny("zrt_attention_backward_gqa_bf16", dout, q, k, v, out,
                       lse, dq, dk, dv, B, H, T, D,
                       tcLayouts(H, Hkv, heads, zrt::headsLayout(Hkv, T, D),
                                 heads));
}

int attention_backward_packed_bf16_tc(const zrt_bf16 *dout,
                                      const zrt_bf16 *qkv, const zrt_bf16 *out,
                                      const float *lse, zrt_bf16 *dqkv,
                                      int64_t B, int64_t T, int64_t H,
                                      int64_t D) {
  if (B * H == 0)
    return ZRT_OK;
  const int64_t C = H * D;
  return backwardTcAny("zrt_attention_backward_packed_bf16", dout, qkv,
                       qkv + C, qkv + 2 * C, out, lse, dqkv, dqkv + C,
                       dqkv + 2 * C, B, H, T, D,
                       tcLayouts(H, zrt::rowsLayout(T, 3 * C, D),
                                 zrt::rowsLayout(T, C, D)));
}

} // namespace zrt_cuda
