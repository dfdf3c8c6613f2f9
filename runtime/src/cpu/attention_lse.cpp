//===- attention_lse.cpp - Causal attention that saves log-sum-exp ---------===//
//
// zrt_attention_forward / zrt_attention_backward on the CPU: the interface
// of fused (flash) attention — the forward keeps only the output and the
// per-row log-sum-exp, the backward recomputes the probabilities — computed
// in tiles of kTileRows query rows of each (batch, head) slice, through the
// caller's workspace:
//   forward:  S = s Q K^T (cblas_sgemm), causal row softmax with
//             lse_i = max_i + log(sum_i), O = P V (cblas_sgemm), per query
//             tile over the keys the causal mask leaves (half the work of
//             the whole [T, T]); every (slice, tile) pair is independent;
//   backward: per slice, first per query tile P = exp(s Q K^T - lse),
//             delta_i = dO_i . O_i, dP = dO V^T, dS = P * (dP - delta),
//             then per block of rows dQ = s dS K, dV = P^T dO,
//             dK = s dS^T Q (five cblas_sgemm per tile).
// The tiles go over the OpenMP team, each calling BLAS on its own thread,
// when BLAS shares the team's pool (OpenBLAS's OpenMP build:
// zrt::blasSharesOmpPool); else they run one after another. The tiles
// depend on T only, so the numbers do not depend on the thread count. The
// CUDA backend computes the same with tiled kernels (flash_attention.cu).
//
// The packed forms (zrt_attention_*_packed) run the same slice code on
// q, k, v heads read in place from the [B, T, 3 C] projection (row strides
// for BLAS), out and dout in [B, T, C] rows.
//
// The grouped-query forms (zrt_attention_*_gqa) run the same slices with
// query head h reading K/V head h / (H / Hkv); the backward adds a group's
// K/V gradients in its GEMMs (beta 1 after the group's first head).
//
// The bf16 forms (zrt_attention_forward_bf16 / _backward_bf16) widen each
// slice's bf16 tensors into the f32 slices at the end of their workspace
// (attentionWorkspaceBf16), run the same slice code and round the slice's
// outputs once: the f32 functions on the widened tensors, bit for bit. The
// whole team widens, computes and rounds each slice (worksharing loops in
// one parallel region).
//
//===----------------------------------------------------------------------===//

#include "common/attention_args.h"
#include "common/decoder_args.h"
#include "common/internal.h"

#include "cpu/blas.h"
#include <cmath>

namespace {

/// The workspace of `n` floats (`what` names its size in the message): the
/// caller's, else one allocated into `own` (counted by
/// zrt_heap_allocations).
int workspaceFor(const char *fn, int64_t n, const char *what, float *given,
                 zrt::FloatBuffer &own, float **out) {
  if (given) {
    *out = given;
    return ZRT_OK;
  }
  if (n < 0 || !own.reserve(n))
    return zrt::fail(ZRT_ERR_OUT_OF_MEMORY,
                     "%s: cannot allocate the [%s] workspace", fn, what);
  *out = own.data;
  return ZRT_OK;
}

/// Query rows per tile: a slice's rows [i0, i1) are computed together, the
/// causal mask skipping the key columns >= i1. The tiles depend on T only,
/// never on the thread count, so every thread count computes the same sums
/// in the same order (bit for bit).
constexpr int64_t kTileRows = 32;

/// Tiles of a [T, T] slice: ceil(T / kTileRows).
int64_t tileCount(int64_t T) { return (T + kTileRows - 1) / kTileRows; }

/// Whether an attention call of B*H slices goes parallel over its tiles:
/// more than one thread, not already inside a parallel region, cblas_sgemm
/// running on the calling thread inside one (zrt::blasSharesOmpPool: one
/// pool, no oversubscription), and enough work (B H T^2 D multiply-adds
/// >= 2^20) to pay for the threads' start.
bool parallelTiles(int64_t slices, int64_t T, int64_t D) {
  return omp_get_max_threads() > 1 && !omp_in_parallel() &&
         zrt::blasSharesOmpPool() && slices * T * T * D >= (int64_t(1) << 20);
}

/// Floats of one thread's forward scratch: a kTileRows x T block (fewer
/// rows when T is shorter).
int64_t tileScratch(int64_t T) { return (T < kTileRows ? T : kTileRows) * T; }

/// Threads of a forward over `items` (slice, tile) pairs: the team, cut to
/// the tileScratch blocks the 2 T^2 + T workspace holds (at least
/// 2 T / kTileRows) and to the items.
int64_t forwardTeam(int64_t T, int64_t items) {
  int64_t team = omp_get_max_threads();
  const int64_t blocks = zrt::attentionWorkspace(T) / tileScratch(T);
  team = team < blocks ? team : blocks;
  return team < items ? team : items;
}

/// exp(d) for the attention's probabilities: zrt::expClamped (vectorizable,
/// ~2 ulp) plus (d - d), which is 0 for finite d and NaN for NaN or inf, so
/// that a NaN score still makes the row NaN (expClamped alone would clamp
/// it away).
inline float attentionExp(float d) { return zrt::expClamped(d) + (d - d); }

/// The softmax of one row's n scores (n >= 1) in place: max-subtracted, the
/// exponentials and their sum in f32 (vector lanes: the order is fixed by
/// the machine's vector width, never by the thread count); returns
/// max + log(sum), the row's log-sum-exp.
ZRT_SIMD_CLONES
float softmaxRow(float *row, int64_t n) {
  float mx = -INFINITY;
#pragma omp simd reduction(max : mx)
  for (int64_t j = 0; j < n; ++j)
    mx = row[j] > mx ? row[j] : mx;
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t j = 0; j < n; ++j) {
    const float e = attentionExp(row[j] - mx);
    row[j] = e;
    sum += e;
  }
  const float inv = 1.0f / sum;
#pragma omp simd
  for (int64_t j = 0; j < n; ++j)
    row[j] *= inv;
  return mx + std::log(sum);
}

/// row[j] = exp(row[j] - l) for j < n: the backward's recomputed
/// probabilities, with softmaxRow's exponential.
ZRT_SIMD_CLONES
void expRow(float *row, int64_t n, float l) {
#pragma omp simd
  for (int64_t j = 0; j < n; ++j)
    row[j] = attentionExp(row[j] - l);
}

/// Causal row softmax of the rows i0 .. i0 + m of one slice's scores: row r
/// (query i = i0 + r) of p holds the scores of keys 0 .. i at
/// p[r * ld .. r * ld + i] and becomes their softmax (softmaxRow); entries
/// i + 1 .. n - 1 become 0; lse[i] = max_i + log(sum_i).
void causalSoftmaxRows(float *p, int64_t ld, int64_t i0, int64_t m, int64_t n,
                       float *lse) {
  for (int64_t r = 0; r < m; ++r) {
    const int64_t i = i0 + r;
    float *row = p + r * ld;
    lse[i] = softmaxRow(row, i + 1);
    for (int64_t j = i + 1; j < n; ++j)
      row[j] = 0.0f;
  }
}

/// Query tile `tile` (rows i0 .. i1 of [0, T)) of one (batch, head) slice of
/// zrt_attention_forward: q, k, v [T, D] rows `ldIn` elements apart, out
/// [T, D] rows `ldOut` apart, lse [T]; p: kTileRows x T floats of scratch
/// (the tile's [i1 - i0, i1] probabilities, rows i1 apart); scale = 1 /
/// sqrt(D). Only keys 0 .. i1 - 1 are read (the causal mask). The row
/// strides only change where BLAS reads and writes, not the numbers.
void forwardTile(const float *q, const float *k, const float *v, float *out,
                 float *lse, float *p, int64_t tile, int64_t T, int64_t D,
                 float scale, int64_t ldIn, int64_t ldOut) {
  const int64_t i0 = tile * kTileRows;
  const int64_t i1 = i0 + kTileRows < T ? i0 + kTileRows : T;
  const int m = static_cast<int>(i1 - i0), n = static_cast<int>(i1),
            d = static_cast<int>(D);
  const int ldi = static_cast<int>(ldIn), ldo = static_cast<int>(ldOut);
  // S = scale * Q[i0:i1] K[0:i1]^T : [m, n]
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, d, scale,
              q + i0 * ldIn, ldi, k, ldi, 0.0f, p, n);
  causalSoftmaxRows(p, n, i0, m, n, lse);
  // O[i0:i1] = P V[0:i1] : [m, D]
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, d, n, 1.0f, p, n,
              v, ldi, 0.0f, out + i0 * ldOut, ldo);
}

/// The pointers of one (batch, head) slice of zrt_attention_backward: dO
/// and O [T, D] rows `ldOut` apart; q, k, v, dq, dk, dv rows `ldIn` apart;
/// l (the lse) [T]; work: the zrt_attention_workspace(T) floats of scratch
/// (P [T, T], dP / dS [T, T], delta [T]); scale = 1 / sqrt(D).
///
/// kvBeta 0 overwrites dk and dv; 1 adds into them (the second and later
/// query heads of a grouped-query group, whose K/V gradients sum).
struct BackwardSlice {
  const float *dO, *q, *k, *v, *O, *l;
  float *dq, *dk, *dv, *work;
  int64_t T, D;
  float scale;
  int64_t ldIn, ldOut;
  float kvBeta;
};

/// The first phase of a slice's backward for query tile `tile` (rows i0 ..
/// i1): P = exp(scale * Q K^T - lse), delta_i = dO_i . O_i, dP = dO V^T and
/// dS = P * (dP - delta) in rows i0 .. i1 - 1, columns 0 .. i1 - 1 of the
/// slice's [T, T] P and dS (columns above the diagonal 0).
void backwardRows(const BackwardSlice &a, int64_t tile) {
  const int64_t T = a.T, D = a.D;
  float *p = a.work, *g = a.work + T * T, *delta = a.work + 2 * T * T;
  const int64_t i0 = tile * kTileRows;
  const int64_t i1 = i0 + kTileRows < T ? i0 + kTileRows : T;
  const int m = static_cast<int>(i1 - i0), n = static_cast<int>(i1),
            t = static_cast<int>(T), d = static_cast<int>(D);
  const int ldi = static_cast<int>(a.ldIn), ldo = static_cast<int>(a.ldOut);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, d, a.scale,
              a.q + i0 * a.ldIn, ldi, a.k, ldi, 0.0f, p + i0 * T, t);
  for (int64_t i = i0; i < i1; ++i) {
    float *row = p + i * T;
    expRow(row, i + 1, a.l[i]);
    for (int64_t j = i + 1; j < i1; ++j)
      row[j] = 0.0f;
    float dot = 0.0f;
    for (int64_t c = 0; c < D; ++c)
      dot += a.dO[i * a.ldOut + c] * a.O[i * a.ldOut + c];
    delta[i] = dot;
  }
  // dP = dO[i0:i1] V[0:i1]^T, then dS = P * (dP - delta) in place.
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, d, 1.0f,
              a.dO + i0 * a.ldOut, ldo, a.v, ldi, 0.0f, g + i0 * T, t);
  for (int64_t i = i0; i < i1; ++i) {
    const float *pi = p + i * T;
    float *gi = g + i * T;
    for (int64_t j = 0; j <= i; ++j)
      gi[j] = pi[j] * (gi[j] - delta[i]);
    for (int64_t j = i + 1; j < i1; ++j)
      gi[j] = 0.0f;
  }
}

/// The second phase for block `tile` (rows c0 .. c1 of dQ, dK and dV):
/// dQ = scale * dS K over keys 0 .. c1 - 1; dV = P^T dO and dK = scale *
/// dS^T Q over queries c0 .. T - 1 (the causal mask: the other terms are
/// 0). Reads only what backwardRows wrote for the tiles >= `tile`.
void backwardCols(const BackwardSlice &a, int64_t tile) {
  const int64_t T = a.T;
  const float *p = a.work, *g = a.work + T * T;
  const int64_t c0 = tile * kTileRows;
  const int64_t c1 = c0 + kTileRows < T ? c0 + kTileRows : T;
  const int m = static_cast<int>(c1 - c0), t = static_cast<int>(T),
            d = static_cast<int>(a.D), below = static_cast<int>(T - c0);
  const int ldi = static_cast<int>(a.ldIn), ldo = static_cast<int>(a.ldOut);
  // dQ[c0:c1] = scale * dS[c0:c1, 0:c1] K[0:c1] : [m, D]
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, d,
              static_cast<int>(c1), a.scale, g + c0 * T, t, a.k, ldi, 0.0f,
              a.dq + c0 * a.ldIn, ldi);
  // dV[c0:c1] = P[c0:T, c0:c1]^T dO[c0:T] : [m, D]
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, m, d, below, 1.0f,
              p + c0 * T + c0, t, a.dO + c0 * a.ldOut, ldo, a.kvBeta,
              a.dv + c0 * a.ldIn, ldi);
  // dK[c0:c1] = scale * dS[c0:T, c0:c1]^T Q[c0:T] : [m, D]
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, m, d, below, a.scale,
              g + c0 * T + c0, t, a.q + c0 * a.ldIn, ldi, a.kvBeta,
              a.dk + c0 * a.ldIn, ldi);
}

/// One slice's backward over its tiles: both phases, each a worksharing
/// loop when called inside a parallel region (every thread of the team
/// must call it; the loops' barriers order the phases and the slices), the
/// tiles one after another otherwise. The tiles are the same either way.
void backwardSliceTiles(const BackwardSlice &a) {
  const int64_t n = tileCount(a.T);
  // Largest first: query tile i has i + 1 blocks of work.
#pragma omp for schedule(dynamic, 1)
  for (int64_t w = 0; w < n; ++w)
    backwardRows(a, n - 1 - w);
#pragma omp for schedule(dynamic, 1)
  for (int64_t w = 0; w < n; ++w)
    backwardCols(a, w);
}

/// One (batch, head) slice of zrt_attention_backward on the calling thread
/// (the bf16 forms); see BackwardSlice for the operands.
void backwardSlice(const float *dO, const float *q, const float *k,
                   const float *v, const float *O, const float *l, float *dq,
                   float *dk, float *dv, float *work, int64_t T, int64_t D,
                   float scale, int64_t ldIn, int64_t ldOut,
                   float kvBeta = 0.0f) {
  backwardSliceTiles(
      {dO, q, k, v, O, l, dq, dk, dv, work, T, D, scale, ldIn, ldOut, kvBeta});
}

/// Where one call's operands are: q (and dq) with layout `in`, k, v (and
/// dk, dv) with layout `kv` (the same row stride as `in`), whose head h /
/// `group` serves query head h; out (and dout) with layout `io`; lse [B, H,
/// T] contiguous.
struct Operands {
  zrt::AttentionLayout in, io, kv;
  int64_t group = 1;
};

/// The [B, H, T, D] operands of zrt_attention_forward / _backward, with
/// K/V [B, Hkv, T, D] (Hkv = H: multi-head).
Operands headsOperands(int64_t H, int64_t T, int64_t D, int64_t Hkv) {
  const zrt::AttentionLayout l = zrt::headsLayout(H, T, D);
  return {l, l, zrt::headsLayout(Hkv, T, D), Hkv > 0 ? H / Hkv : 1};
}
Operands headsOperands(int64_t H, int64_t T, int64_t D) {
  return headsOperands(H, T, D, H);
}

/// The packed operands of zrt_attention_*_packed: qkv rows of 3 H D, out
/// rows of H D.
Operands packedOperands(int64_t T, int64_t H, int64_t D) {
  const zrt::AttentionLayout in = zrt::rowsLayout(T, 3 * H * D, D);
  return {in, zrt::rowsLayout(T, H * D, D), in, 1};
}

/// zrt_attention_forward on operands anywhere (`ops`); arguments checked.
int forward(const char *fn, const float *q, const float *k, const float *v,
            float *out, float *lse, float *workspace, int64_t B, int64_t H,
            int64_t T, int64_t D, Operands ops) {
  if (B * H == 0)
    return ZRT_OK;
  zrt::FloatBuffer own;
  float *p = nullptr;
  if (int st = workspaceFor(fn, zrt::attentionWorkspace(T), "2 T^2 + T",
                            workspace, own, &p))
    return st;
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  // Every (slice, query tile) pair is independent: thread t uses the t-th
  // kTileRows x T block of the workspace (2 T^2 + T floats hold at least
  // 2 T / kTileRows of them), the pairs go to the threads dynamically, each
  // slice's largest tile first.
  const int64_t tiles = tileCount(T), items = B * H * tiles;
  const int64_t scratch = tileScratch(T), team = forwardTeam(T, items);
#pragma omp parallel num_threads(static_cast<int>(team)) if (team > 1 && parallelTiles(B * H, T, D))
  {
    float *mine = p + omp_get_thread_num() * scratch;
#pragma omp for schedule(dynamic, 1)
    for (int64_t w = 0; w < items; ++w) {
      const int64_t s = w / tiles, tile = tiles - 1 - w % tiles;
      const int64_t b = s / H, h = s % H;
      const int64_t in = ops.in.slice(b, h), io = ops.io.slice(b, h),
                    kv = ops.kv.slice(b, h / ops.group);
      forwardTile(q + in, k + kv, v + kv, out + io, lse + s * T, mine, tile,
                  T, D, scale, ops.in.row, ops.io.row);
    }
  }
  return ZRT_OK;
}

/// zrt_attention_backward on operands anywhere (`ops`); arguments checked.
int backward(const char *fn, const float *dout, const float *q, const float *k,
             const float *v, const float *out, const float *lse, float *dq,
             float *dk, float *dv, float *workspace, int64_t B, int64_t H,
             int64_t T, int64_t D, Operands ops) {
  if (B * H == 0)
    return ZRT_OK;
  zrt::FloatBuffer own;
  float *work = nullptr;
  if (int st = workspaceFor(fn, zrt::attentionWorkspace(T), "2 T^2 + T",
                            workspace, own, &work))
    return st;
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  // Query heads in order; a group's first head overwrites its K/V
  // gradients, the others add into them. One slice at a time (its P and dS
  // fill the workspace), its tiles over the team.
#pragma omp parallel if (parallelTiles(B * H, T, D))
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      const int64_t in = ops.in.slice(b, h), io = ops.io.slice(b, h),
                    kv = ops.kv.slice(b, h / ops.group);
      backwardSliceTiles({dout + io, q + in, k + kv, v + kv, out + io,
                          lse + (b * H + h) * T, dq + in, dk + kv, dv + kv,
                          work, T, D, scale, ops.in.row, ops.io.row,
                          h % ops.group == 0 ? 0.0f : 1.0f});
    }
  return ZRT_OK;
}

/// Rows [t0, t1) of a [T, D] slice with rows `ldSrc` apart, converted
/// into rows `ldDst` apart: bf16 -> f32 widens (exact), f32 -> bf16 rounds
/// to nearest even (zrt::toF32, zrt::fromF32).
template <typename From, typename To>
void convertRows(const From *src, int64_t ldSrc, To *dst, int64_t ldDst,
                 int64_t D, int64_t t0, int64_t t1) {
  for (int64_t t = t0; t < t1; ++t) {
    const From *s = src + t * ldSrc;
    To *d = dst + t * ldDst;
#pragma omp simd
    for (int64_t c = 0; c < D; ++c)
      d[c] = zrt::fromF32<To>(zrt::toF32(s[c]));
  }
}

/// Widens rows [t0, t1) of a bf16 slice with rows `ld` apart into the
/// contiguous f32 [T, D] dst.
void widenRows(const zrt_bf16 *src, int64_t ld, float *dst, int64_t D,
               int64_t t0, int64_t t1) {
  convertRows(src, ld, dst, D, D, t0, t1);
}

/// Rounds rows [t0, t1) of the contiguous f32 [T, D] src into bf16 rows
/// `ld` apart.
void narrowRows(const float *src, zrt_bf16 *dst, int64_t ld, int64_t D,
                int64_t t0, int64_t t1) {
  convertRows(src, D, dst, ld, D, t0, t1);
}

/// Rows per worksharing chunk of the bf16 forms' widening and rounding
/// (whole rows: which thread converts a row changes no bit).
constexpr int64_t kConvertRows = 16;

/// The bf16 forms' scratch: the caller's workspace (else one allocated
/// into `own`) of attentionWorkspaceBf16(T, D) floats: *work the f32
/// workspace of attentionWorkspace(T) floats, *slices the 8 [T, D] f32
/// slices after it.
int bf16Scratch(const char *fn, float *given, int64_t T, int64_t D,
                zrt::FloatBuffer &own, float **work, float **slices) {
  if (int st = workspaceFor(fn, zrt::attentionWorkspaceBf16(T, D),
                            "2 T^2 + T + 8 T D", given, own, work))
    return st;
  *slices = *work + zrt::attentionWorkspace(T);
  return ZRT_OK;
}

/// zrt_attention_forward_bf16 on operands anywhere; arguments checked.
/// Slice after slice (their f32 copies share the workspace's slices), each
/// widened, its query tiles and rounded by the whole team: the tiles and
/// their f32 sums are those of zrt_attention_forward, and each tile's
/// cblas_sgemm runs inside the same parallel region as there.
int forwardBf16(const char *fn, const zrt_bf16 *q, const zrt_bf16 *k,
                const zrt_bf16 *v, zrt_bf16 *out, float *lse, float *workspace,
                int64_t B, int64_t H, int64_t T, int64_t D, Operands ops) {
  if (B * H == 0)
    return ZRT_OK;
  zrt::FloatBuffer own;
  float *work = nullptr, *fq = nullptr;
  if (int st = bf16Scratch(fn, workspace, T, D, own, &work, &fq))
    return st;
  // The f32 slices of q, k, v, out.
  const int64_t n = T * D;
  float *fk = fq + n, *fv = fk + n, *fo = fv + n;
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  // Thread t's tileScratch(T) block of the f32 workspace; the team of
  // zrt_attention_forward on the same shape.
  const int64_t tiles = tileCount(T);
  const int64_t scratch = tileScratch(T),
                team = forwardTeam(T, B * H * tiles);
#pragma omp parallel num_threads(static_cast<int>(team)) if (team > 1 && parallelTiles(B * H, T, D))
  {
    float *mine = work + omp_get_thread_num() * scratch;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h) {
        const int64_t in = ops.in.slice(b, h), io = ops.io.slice(b, h),
                      kv = ops.kv.slice(b, h / ops.group);
        const bool widenKv = h % ops.group == 0; // the group's K/V, once
#pragma omp for schedule(static)
        for (int64_t t0 = 0; t0 < T; t0 += kConvertRows) {
          const int64_t t1 = t0 + kConvertRows < T ? t0 + kConvertRows : T;
          widenRows(q + in, ops.in.row, fq, D, t0, t1);
          if (widenKv) {
            widenRows(k + kv, ops.kv.row, fk, D, t0, t1);
            widenRows(v + kv, ops.kv.row, fv, D, t0, t1);
          }
        }
#pragma omp for schedule(dynamic, 1)
        for (int64_t w = 0; w < tiles; ++w)
          forwardTile(fq, fk, fv, fo, lse + (b * H + h) * T, mine,
                      tiles - 1 - w, T, D, scale, D, D);
        // No barrier after the rounding: the next slice's widening writes
        // fq, fk, fv only, and its tiles (which write fo) start after the
        // widening's barrier.
#pragma omp for schedule(static) nowait
        for (int64_t t0 = 0; t0 < T; t0 += kConvertRows)
          narrowRows(fo, out + io, ops.io.row, D, t0,
                     t0 + kConvertRows < T ? t0 + kConvertRows : T);
      }
  }
  return ZRT_OK;
}

/// zrt_attention_backward_bf16 on operands anywhere; arguments checked.
int backwardBf16(const char *fn, const zrt_bf16 *dout, const zrt_bf16 *q,
                 const zrt_bf16 *k, const zrt_bf16 *v, const zrt_bf16 *out,
                 const float *lse, zrt_bf16 *dq, zrt_bf16 *dk, zrt_bf16 *dv,
                 float *workspace, int64_t B, int64_t H, int64_t T, int64_t D,
                 Operands ops) {
  if (B * H == 0)
    return ZRT_OK;
  zrt::FloatBuffer own;
  float *work = nullptr, *fq = nullptr;
  if (int st = bf16Scratch(fn, workspace, T, D, own, &work, &fq))
    return st;
  // The f32 slices of q, k, v, out, dout, dq, dk, dv.
  const int64_t n = T * D;
  float *fk = fq + n, *fv = fk + n, *fo = fv + n, *fdo = fo + n,
        *fdq = fdo + n, *fdk = fdq + n, *fdv = fdk + n;
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  // The slice's tiles over the team exactly as zrt_attention_backward runs
  // them (the same parallel region, the same condition), so that each
  // cblas_sgemm runs in the same threading context as there: a BLAS whose
  // bits depend on it (OpenBLAS's Haswell kernels, threaded outside a
  // parallel region, single-threaded inside) still gives the f32 bits.
  // Widening and rounding are worksharing loops over whole rows; their
  // barriers order them against the tiles.
#pragma omp parallel if (parallelTiles(B * H, T, D))
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      const int64_t in = ops.in.slice(b, h), io = ops.io.slice(b, h),
                    kv = ops.kv.slice(b, h / ops.group);
      const int64_t member = h % ops.group;
#pragma omp for schedule(static)
      for (int64_t t0 = 0; t0 < T; t0 += kConvertRows) {
        const int64_t t1 = t0 + kConvertRows < T ? t0 + kConvertRows : T;
        widenRows(q + in, ops.in.row, fq, D, t0, t1);
        if (member == 0) { // the group's K/V, widened once
          widenRows(k + kv, ops.kv.row, fk, D, t0, t1);
          widenRows(v + kv, ops.kv.row, fv, D, t0, t1);
        }
        widenRows(out + io, ops.io.row, fo, D, t0, t1);
        widenRows(dout + io, ops.io.row, fdo, D, t0, t1);
      }
      // The group's dK and dV sum in the f32 slices, rounded once after
      // its last query head.
      backwardSlice(fdo, fq, fk, fv, fo, lse + (b * H + h) * T, fdq, fdk, fdv,
                    work, T, D, scale, D, D, member == 0 ? 0.0f : 1.0f);
#pragma omp for schedule(static)
      for (int64_t t0 = 0; t0 < T; t0 += kConvertRows) {
        const int64_t t1 = t0 + kConvertRows < T ? t0 + kConvertRows : T;
        narrowRows(fdq, dq + in, ops.in.row, D, t0, t1);
        if (member == ops.group - 1) {
          narrowRows(fdk, dk + kv, ops.kv.row, D, t0, t1);
          narrowRows(fdv, dv + kv, ops.kv.row, D, t0, t1);
        }
      }
    }
  return ZRT_OK;
}

} // namespace

extern "C" {

int64_t zrt_attention_workspace(int64_t T) { return zrt::attentionWorkspace(T); }

int64_t zrt_attention_workspace_bf16(int64_t T, int64_t D) {
  return zrt::attentionWorkspaceBf16(T, D);
}

int zrt_attention_forward(const float *q, const float *k, const float *v,
                          float *out, float *lse, float *workspace, int64_t B,
                          int64_t H, int64_t T, int64_t D) {
  const char *fn = "zrt_attention_forward";
  if (int st = zrt::checkAttentionForwardArgs(fn, q, k, v, out, lse, B, H, T,
                                              D, zrt::fail))
    return st;
  return forward(fn, q, k, v, out, lse, workspace, B, H, T, D,
                 headsOperands(H, T, D));
}

int zrt_attention_backward(const float *dout, const float *q, const float *k,
                           const float *v, const float *out, const float *lse,
                           float *dq, float *dk, float *dv, float *workspace,
                           int64_t B, int64_t H, int64_t T, int64_t D) {
  const char *fn = "zrt_attention_backward";
  if (int st = zrt::checkAttentionBackwardArgs(
          fn, dout, q, k, v, out, lse, dq, dk, dv, B, H, T, D, zrt::fail))
    return st;
  return backward(fn, dout, q, k, v, out, lse, dq, dk, dv, workspace, B, H, T,
                  D, headsOperands(H, T, D));
}

int zrt_attention_forward_bf16(const zrt_bf16 *q, const zrt_bf16 *k,
                               const zrt_bf16 *v, zrt_bf16 *out, float *lse,
                               float *workspace, int64_t B, int64_t H,
                               int64_t T, int64_t D) {
  const char *fn = "zrt_attention_forward_bf16";
  if (int st = zrt::checkAttentionForwardArgs(fn, q, k, v, out, lse, B, H, T,
                                              D, zrt::fail))
    return st;
  return forwardBf16(fn, q, k, v, out, lse, workspace, B, H, T, D,
                     headsOperands(H, T, D));
}

int zrt_attention_backward_bf16(const zrt_bf16 *dout, const zrt_bf16 *q,
                                const zrt_bf16 *k, const zrt_bf16 *v,
                                const zrt_bf16 *out, const float *lse,
                                zrt_bf16 *dq, zrt_bf16 *dk, zrt_bf16 *dv,
                                float *workspace, int64_t B, int64_t H,
                                int64_t T, int64_t D) {
  const char *fn = "zrt_attention_backward_bf16";
  if (int st = zrt::checkAttentionBackwardArgs(
          fn, dout, q, k, v, out, lse, dq, dk, dv, B, H, T, D, zrt::fail))
    return st;
  return backwardBf16(fn, dout, q, k, v, out, lse, dq, dk, dv, workspace, B, H,
                      T, D, headsOperands(H, T, D));
}

int zrt_attention_forward_packed(const float *qkv, float *out, float *lse,
                                 float *workspace, int64_t B, int64_t T,
                                 int64_t H, int64_t D) {
  const char *fn = "zrt_attention_forward_packed";
  if (int st = zrt::checkAttentionPackedForwardArgs(fn, qkv, out, lse, B, T, H,
                                                    D, zrt::fail))
    return st;
  const int64_t C = H * D;
  return forward(fn, qkv, qkv + C, qkv + 2 * C, out, lse, workspace, B, H, T,
                 D, packedOperands(T, H, D));
}

int zrt_attention_backward_packed(const float *dout, const float *qkv,
                                  const float *out, const float *lse,
                                  float *dqkv, float *workspace, int64_t B,
                                  int64_t T, int64_t H, int64_t D) {
  const char *fn = "zrt_attention_backward_packed";
  if (int st = zrt::checkAttentionPackedBackwardArgs(fn, dout, qkv, out, lse,
                                                     dqkv, B, T, H, D,
                                                     zrt::fail))
    return st;
  const int64_t C = H * D;
  return backward(fn, dout, qkv, qkv + C, qkv + 2 * C, out, lse, dqkv,
                  dqkv + C, dqkv + 2 * C, workspace, B, H, T, D,
                  packedOperands(T, H, D));
}

int zrt_attention_forward_packed_bf16(const zrt_bf16 *qkv, zrt_bf16 *out,
                                      float *lse, float *workspace, int64_t B,
                                      int64_t T, int64_t H, int64_t D) {
  const char *fn = "zrt_attention_forward_packed_bf16";
  if (int st = zrt::checkAttentionPackedForwardArgs(fn, qkv, out, lse, B, T, H,
                                                    D, zrt::fail))
    return st;
  const int64_t C = H * D;
  return forwardBf16(fn, qkv, qkv + C, qkv + 2 * C, out, lse, workspace, B, H,
                     T, D, packedOperands(T, H, D));
}

int zrt_attention_backward_packed_bf16(const zrt_bf16 *dout,
                                       const zrt_bf16 *qkv,
                                       const zrt_bf16 *out, const float *lse,
                                       zrt_bf16 *dqkv, float *workspace,
                                       int64_t B, int64_t T, int64_t H,
                                       int64_t D) {
  const char *fn = "zrt_attention_backward_packed_bf16";
  if (int st = zrt::checkAttentionPackedBackwardArgs(fn, dout, qkv, out, lse,
                                                     dqkv, B, T, H, D,
                                                     zrt::fail))
    return st;
  const int64_t C = H * D;
  return backwardBf16(fn, dout, qkv, qkv + C, qkv + 2 * C, out, lse, dqkv,
                      dqkv + C, dqkv + 2 * C, workspace, B, H, T, D,
                      packedOperands(T, H, D));
}

int zrt_attention_forward_gqa(const float *q, const float *k, const float *v,
                              float *out, float *lse, float *workspace,
                              int64_t B, int64_t H, int64_t Hkv, int64_t T,
                              int64_t D) {
  const char *fn = "zrt_attention_forward_gqa";
  if (int st = zrt::checkKvHeads(fn, H, Hkv, zrt::fail))
    return st;
  if (int st = zrt::checkAttentionForwardArgs(fn, q, k, v, out, lse, B, H, T,
                                              D, zrt::fail))
    return st;
  return forward(fn, q, k, v, out, lse, workspace, B, H, T, D,
                 headsOperands(H, T, D, Hkv));
}

int zrt_attention_backward_gqa(const float *dout, const float *q,
                               const float *k, const float *v,
                               const float *out, const float *lse, float *dq,
                               float *dk, float *dv, float *workspace,
                               int64_t B, int64_t H, int64_t Hkv, int64_t T,
                               int64_t D) {
  const char *fn = "zrt_attention_backward_gqa";
  if (int st = zrt::checkKvHeads(fn, H, Hkv, zrt::fail))
    return st;
  if (int st = zrt::checkAttentionBackwardArgs(
          fn, dout, q, k, v, out, lse, dq, dk, dv, B, H, T, D, zrt::fail))
    return st;
  return backward(fn, dout, q, k, v, out, lse, dq, dk, dv, workspace, B, H, T,
                  D, headsOperands(H, T, D, Hkv));
}

int zrt_attention_forward_gqa_bf16(const zrt_bf16 *q, const zrt_bf16 *k,
                                   const zrt_bf16 *v, zrt_bf16 *out,
                                   float *lse, float *workspace, int64_t B,
                                   int64_t H, int64_t Hkv, int64_t T,
                                   int64_t D) {
  const char *fn = "zrt_attention_forward_gqa_bf16";
  if (int st = zrt::checkKvHeads(fn, H, Hkv, zrt::fail))
    return st;
  if (int st = zrt::checkAttentionForwardArgs(fn, q, k, v, out, lse, B, H, T,
                                              D, zrt::fail))
    return st;
  return forwardBf16(fn, q, k, v, out, lse, workspace, B, H, T, D,
                     headsOperands(H, T, D, Hkv));
}

int zrt_attention_backward_gqa_bf16(const zrt_bf16 *dout, const zrt_bf16 *q,
                                    const zrt_bf16 *k, const zrt_bf16 *v,
                                    const zrt_bf16 *out, const float *lse,
                                    zrt_bf16 *dq, zrt_bf16 *dk, zrt_bf16 *dv,
                                    float *workspace, int64_t B, int64_t H,
                                    int64_t Hkv, int64_t T, int64_t D) {
  const char *fn = "zrt_attention_backward_gqa_bf16";
  if (int st = zrt::checkKvHeads(fn, H, Hkv, zrt::fail))
    return st;
  if (int st = zrt::checkAttentionBackwardArgs(
          fn, dout, q, k, v, out, lse, dq, dk, dv, B, H, T, D, zrt::fail))
    return st;
  return backwardBf16(fn, dout, q, k, v, out, lse, dq, dk, dv, workspace, B, H,
                      T, D, headsOperands(H, T, D, Hkv));
}

} // extern "C"
