//===- matmul.cpp - Matrix products (zrt::sgemm, zrt::gemmBf16) ------------===//

#include "common/arg_checks.h"
#include "common/internal.h"
#include "common/matmul_args.h"

#include "cpu/gemm.h"

namespace {

constexpr int64_t kBiasBlock = 64;

// acc[c] += f32(dout[r * N + j0 + c]) for c < w (w <= kBiasBlock) and rows
// r in order: each column's sum in row order (vector lanes run across
// columns, so the order of every sum is the scalar loop's).
template <typename T>
ZRT_SIMD_CLONES void sumColumns(const T *dout, int64_t rows, int64_t N,
                                int64_t j0, int64_t w, float *acc) {
  if (w == kBiasBlock) {
    for (int64_t r = 0; r < rows; ++r) {
      const T *row = dout + r * N + j0;
#pragma omp simd
      for (int64_t c = 0; c < kBiasBlock; ++c)
        acc[c] += zrt::toF32(row[c]);
    }
    return;
  }
  for (int64_t r = 0; r < rows; ++r) {
    const T *row = dout + r * N + j0;
#pragma omp simd
    for (int64_t c = 0; c < w; ++c)
      acc[c] += zrt::toF32(row[c]);
  }
}

// zrt_bias_backward (T = float) and zrt_bias_backward_bf16 (T = zrt_bf16):
// f32 column sums of dout, each rounded once when T is bf16.
template <typename T>
int biasBackward(const char *fn, const T *dout, T *dbias, int64_t rows,
                 int64_t N) {
  if (int st = zrt::checkBiasBackwardArgs(fn, dout, dbias, rows, N, zrt::fail))
    return st;
  // Parallel over column blocks; each thread sums its columns over all rows
  // (row-sequential inner loop keeps the access contiguous).
  const int64_t nblocks = (N + kBiasBlock - 1) / kBiasBlock;
#pragma omp parallel for schedule(static) if (rows * N > zrt::kParallelGrain)
  for (int64_t blk = 0; blk < nblocks; ++blk) {
    const int64_t j0 = blk * kBiasBlock,
                  j1 = j0 + kBiasBlock < N ? j0 + kBiasBlock : N;
    float acc[kBiasBlock] = {};
    sumColumns(dout, rows, N, j0, j1 - j0, acc);
    for (int64_t j = j0; j < j1; ++j)
      dbias[j] = zrt::fromF32<T>(acc[j - j0]);
  }
  return ZRT_OK;
}

} // namespace

extern "C" {

int zrt_matmul(const float *A, const float *B, const float *bias, float *C,
               int64_t batch, int64_t M, int64_t N, int64_t K, int trans_a,
               int trans_b, float alpha, float beta, int64_t stride_a,
               int64_t stride_b, int64_t stride_c) {
  bool empty = true;
  if (int status = zrt::checkMatmulArgs(A, B, C, batch, M, N, K, stride_a,
                                        stride_b, stride_c, &empty, zrt::fail))
    return status;
  if (empty)
    return ZRT_OK;

  // K > 0 wherever the GEMM runs, so both leading dimensions are >= 1.
  const int64_t lda = trans_a ? M : K, ldb = trans_b ? K : N;
  // With beta = 0 the bias is written first and BLAS adds the product to it
  // (beta = 1): one pass over C instead of BLAS zeroing C and a second pass
  // adding the bias. C = alpha A B + bias either way (alpha A B is added to
  // the bias in one rounding, as before).
  const bool biasFirst = bias && beta == 0.0f && K > 0;
  for (int64_t b = 0; b < batch; ++b) {
    float *c = C + b * stride_c;
    if (biasFirst) {
      const size_t rowBytes = static_cast<size_t>(N) * sizeof(float);
#pragma omp parallel for schedule(static) if (M * N > zrt::kParallelGrain)
      for (int64_t i = 0; i < M; ++i)
        std::memcpy(c + i * N, bias, rowBytes);
      if (int st = zrt::sgemm(trans_a, trans_b, M, N, K, alpha,
                              A + b * stride_a, lda, B + b * stride_b, ldb,
                              1.0f, c, N))
        return st;
      continue;
    }
    if (K == 0) {
      // C = beta * C (BLAS semantics with an empty inner dimension).
      for (int64_t i = 0; i < M * N; ++i)
        c[i] = beta == 0.0f ? 0.0f : beta * c[i];
    } else {
      if (int st = zrt::sgemm(trans_a, trans_b, M, N, K, alpha,
                              A + b * stride_a, lda, B + b * stride_b, ldb,
                              beta, c, N))
        return st;
    }
    if (bias) {
#pragma omp parallel for schedule(static) if (M * N > zrt::kParallelGrain)
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j)
          c[i * N + j] += bias[j];
    }
  }
  return ZRT_OK;
}

int64_t zrt_matmul_bf16_workspace(int64_t batch, int64_t M, int64_t N,
                                  int64_t K, int has_bias) {
  return zrt::matmulBf16Workspace(batch, M, N, K, has_bias != 0);
}

int zrt_matmul_bf16(const zrt_bf16 *A, const zrt_bf16 *B, const zrt_bf16 *bias,
                    zrt_bf16 *C, int64_t batch, int64_t M, int64_t N,
                    int64_t K, int trans_a, int trans_b, float *workspace) {
  return zrt::matmulBf16Chunked(A, B, bias, C, batch, M, N, K, trans_a,
                                trans_b, workspace,
                                zrt::kMatmulBf16ChunkFloats);
}

int zrt_matmul_gelu_bf16(const zrt_bf16 *A, const zrt_bf16 *B,
                         const zrt_bf16 *bias, zrt_bf16 *pre, zrt_bf16 *out,
                         int64_t batch, int64_t M, int64_t N, int64_t K,
                         int trans_a, int trans_b, float *workspace) {
  return zrt::matmulBf16Chunked(A, B, bias, out, batch, M, N, K, trans_a,
                                trans_b, workspace, zrt::kMatmulBf16ChunkFloats,
                                zrt::MatmulBf16Epilogue::gelu(pre));
}

int zrt_matmul_gelu_backward_bf16(const zrt_bf16 *A, const zrt_bf16 *B,
                                  const zrt_bf16 *pre, zrt_bf16 *dpre,
                                  int64_t batch, int64_t M, int64_t N,
                                  int64_t K, int trans_a, int trans_b,
                                  float *workspace) {
  return zrt::matmulBf16Chunked(A, B, nullptr, dpre, batch, M, N, K, trans_a,
                                trans_b, workspace, zrt::kMatmulBf16ChunkFloats,
                                zrt::MatmulBf16Epilogue::geluBackward(pre));
}

} // extern "C"

namespace {

// Writes the bf16 outputs of one chunk of f32 results c (n elements, at
// element `offset` of every output tensor) as `epilogue` says.
void applyEpilogue(const zrt::MatmulBf16Epilogue &epilogue, const float *c,
                   zrt_bf16 *C, int64_t offset, int64_t n) {
  switch (epilogue.kind) {
  case zrt::MatmulBf16Epilogue::Round:
    zrt_cast_f32_to_bf16(c, C + offset, n);
    return;
  case zrt::MatmulBf16Epilogue::Gelu:
    if (epilogue.preOut)
      zrt_cast_f32_to_bf16(c, epilogue.preOut + offset, n);
    zrt::geluF32ToBf16(c, C + offset, n);
    return;
  case zrt::MatmulBf16Epilogue::GeluBackward:
    zrt::geluBackwardBf16F32(epilogue.preIn + offset, c, C + offset, n);
    return;
  }
}

} // namespace

namespace {

// The native bf16 GEMM (zrt::gemmBf16, oneDNN) of every matrix of the
// batch: the Round epilogue takes bf16 C straight from the GEMM (f32
// acc + bias rounded once); the GELU forms get f32 acc per chunk of C's
// rows in the workspace (rows N floats, within the planned K N + rows (K +
// N)) and write their outputs from it. Returns false (nothing written)
// when the process has no native bf16 GEMM; else sets *status.
bool matmulBf16Native(const zrt_bf16 *A, const zrt_bf16 *B,
                      const zrt_bf16 *bias, zrt_bf16 *C, int64_t batch,
                      int64_t M, int64_t N, int64_t K, int trans_a,
                      int trans_b, float *workspace, int64_t chunkFloats,
                      const zrt::MatmulBf16Epilogue &epilogue, int *status) {
  const int64_t lda = trans_a ? M : K, ldb = trans_b ? K : N;
  const int64_t rows = zrt::matmulBf16ChunkRows(M, N, K, chunkFloats);
  for (int64_t s = 0; s < batch; ++s) {
    const zrt_bf16 *As = A + s * M * K, *Bs = B + s * K * N;
    if (epilogue.kind == zrt::MatmulBf16Epilogue::Round) {
      zrt::GemmOut out;
      out.bf16 = C + s * M * N;
      if (!zrt::gemmBf16(trans_a, trans_b, M, N, K, As, lda, Bs, ldb, bias,
                         out, N, status))
        return false;
      if (*status)
        return true;
      continue;
    }
    for (int64_t m0 = 0; m0 < M; m0 += rows) {
      const int64_t mc = rows < M - m0 ? rows : M - m0;
      zrt::GemmOut out;
      out.f32 = workspace;
      if (!zrt::gemmBf16(trans_a, trans_b, mc, N, K,
                         trans_a ? As + m0 : As + m0 * K, lda, Bs, ldb, bias,
                         out, N, status))
        return false;
      if (*status)
        return true;
      applyEpilogue(epilogue, workspace, C, s * M * N + m0 * N, mc * N);
    }
  }
  return true;
}

} // namespace

// With a native bf16 GEMM (matmulBf16Native) the inputs are read as they
// are. Without one (or K = 0): per matrix of the batch, widen op(B) and the
// bias into the workspace, then per chunk of C's rows widen those rows of
// op(A), zrt_matmul in f32 and write the chunk's bf16 outputs from its f32
// values (the epilogue: C rounded once, or GELU / its gradient first). A
// product that fits one chunk (M (K + N) <= chunkFloats) is exactly the
// unchunked one; a larger one is the same sums over K, but the GEMM may
// pick other micro-kernels or tiles for the rows at a chunk's edge, so a
// few bf16 results can differ in the last bit from one whole-matrix GEMM
// (deterministically: the chunking depends on the shape only).
int zrt::matmulBf16Chunked(const zrt_bf16 *A, const zrt_bf16 *B,
                           const zrt_bf16 *bias, zrt_bf16 *C, int64_t batch,
                           int64_t M, int64_t N, int64_t K, int trans_a,
                           int trans_b, float *workspace, int64_t chunkFloats,
                           const MatmulBf16Epilogue &epilogue) {
  bool empty = true;
  if (int status =
          zrt::checkMatmulBf16Args(A, B, bias, C, batch, M, N, K, workspace,
                                   epilogue, &empty, zrt::fail))
    return status;
  if (empty)
    return ZRT_OK;
  int status = ZRT_OK;
  if (K > 0 && matmulBf16Native(A, B, bias, C, batch, M, N, K, trans_a,
                                trans_b, workspace, chunkFloats, epilogue,
                                &status))
    return status;
  const int64_t rows = zrt::matmulBf16ChunkRows(M, N, K, chunkFloats);
  float *b = workspace, *fbias = b + K * N, *a = fbias + (bias ? N : 0),
        *c = a + rows * K;
  if (bias)
    zrt_cast_bf16_to_f32(bias, fbias, N);
  for (int64_t s = 0; s < batch; ++s) {
    const zrt_bf16 *As = A + s * M * K;
    zrt_cast_bf16_to_f32(B + s * K * N, b, K * N);
    for (int64_t m0 = 0; m0 < M; m0 += rows) {
      const int64_t mc = rows < M - m0 ? rows : M - m0;
      // Rows m0 .. m0 + mc of op(A), packed: A's rows, or for A^T the
      // columns m0 .. m0 + mc of each of A's K rows ([K, mc]).
      if (!trans_a)
        zrt_cast_bf16_to_f32(As + m0 * K, a, mc * K);
      else
        for (int64_t k = 0; k < K; ++k)
          zrt_cast_bf16_to_f32(As + k * M + m0, a + k * mc, mc);
      if (int st = zrt_matmul(a, b, bias ? fbias : nullptr, c, 1, mc, N, K,
                              trans_a, trans_b, 1.0f, 0.0f, ZRT_STRIDE_PACKED,
                              ZRT_STRIDE_PACKED, ZRT_STRIDE_PACKED))
        return st;
      applyEpilogue(epilogue, c, C, s * M * N + m0 * N, mc * N);
    }
  }
  return ZRT_OK;
}

extern "C" {

int zrt_bias_backward(const float *dout, float *dbias, int64_t rows,
                      int64_t N) {
  return biasBackward("zrt_bias_backward", dout, dbias, rows, N);
}

int zrt_bias_backward_bf16(const zrt_bf16 *dout, zrt_bf16 *dbias, int64_t rows,
                           int64_t N) {
  return biasBackward("zrt_bias_backward_bf16", dout, dbias, rows, N);
}

int zrt_permute_0213(const float *in, float *out, int64_t A, int64_t B,
                     int64_t C, int64_t D) {
  const char *fn = "zrt_permute_0213";
  if (int st = zrt::checkPermute0213Args(fn, in, out, A, B, C, D, zrt::fail))
    return st;
  const int64_t total = A * B * C * D;
  const size_t rowBytes = static_cast<size_t>(D) * sizeof(float);
#pragma omp parallel for collapse(2) schedule(static) if (total > zrt::kParallelGrain)
  for (int64_t a = 0; a < A; ++a)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t c = 0; c < C; ++c)
        std::memcpy(out + ((a * C + c) * B + b) * D,
                    in + ((a * B + b) * C + c) * D, rowBytes);
  return ZRT_OK;
}

} // extern "C"
