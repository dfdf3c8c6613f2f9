//===- gemm.cpp - The CPU kernels' GEMMs: library choice and tiling --------===//
//
// gemm.h says which library computes what and why; this file chooses it
// (once per process) and runs oneDNN's GEMMs as fixed tiles over the
// OpenMP team.
//
//===----------------------------------------------------------------------===//

#include "cpu/gemm.h"

#include "common/internal.h"
#include "cpu/blas.h"
#if ZRT_HAVE_ONEDNN
#include "cpu/onednn.h"
#endif

#include <cstdlib>
#include <cstring>

namespace {

/// Tiles below this many multiply-adds in all run on the calling thread
/// (a team costs more than it saves).
constexpr int64_t kTeamGrain = int64_t(1) << 20;

/// Makes the OpenMP regions the calling thread starts have one thread,
/// for its lifetime (oneDNN sizes its work split by omp_get_max_threads();
/// inside an active region it runs sequentially anyway, but a single tile
/// runs outside one).
struct OneThread {
  int saved = omp_get_max_threads();
  OneThread() { omp_set_num_threads(1); }
  ~OneThread() { omp_set_num_threads(saved); }
};

/// Runs tile(i0, i1, j0, j1) for every tile of `t` ([i0, i1) rows, [j0,
/// j1) columns of C) on the OpenMP team, each tile on one thread with a
/// library told to use one thread; returns the first error status (every
/// tile runs either way).
template <typename Tile>
int forEachTile(const zrt::GemmTiles &t, int64_t M, int64_t N, int64_t K,
                Tile &&tile) {
  const int64_t count = t.mTiles * t.nTiles;
  int status = ZRT_OK;
#pragma omp parallel for schedule(dynamic, 1)                                 \
    if (count > 1 && M * N * K > kTeamGrain && !omp_in_parallel())
  for (int64_t i = 0; i < count; ++i) {
    const int64_t i0 = (i / t.nTiles) * t.mt, j0 = (i % t.nTiles) * t.nt;
    const int64_t i1 = i0 + t.mt < M ? i0 + t.mt : M,
                  j1 = j0 + t.nt < N ? j0 + t.nt : N;
    OneThread one;
    if (const int st = tile(i0, i1, j0, j1)) {
#pragma omp critical(zrt_gemm_status)
      if (status == ZRT_OK)
        status = st;
    }
  }
  return status;
}

} // namespace

zrt::GemmLibrary zrt::gemmLibrary(int *status) {
  static const char *bad = nullptr;
  static const GemmLibrary library = [] {
    const char *v = std::getenv("ZRT_GEMM_LIBRARY");
    if (v && std::strcmp(v, "openblas") == 0)
      return GemmLibrary::OpenBLAS;
#if ZRT_HAVE_ONEDNN
    if (!v || !*v || std::strcmp(v, "onednn") == 0)
      return GemmLibrary::OneDNN;
#else
    if (!v || !*v)
      return GemmLibrary::OpenBLAS;
#endif
    bad = v;
    return GemmLibrary::OpenBLAS;
  }();
  *status = ZRT_OK;
  if (bad)
    *status = fail(ZRT_ERR_INVALID_ARGUMENT,
                   "ZRT_GEMM_LIBRARY=%s: expected openblas"
#if ZRT_HAVE_ONEDNN
                   " or onednn",
#else
                   " (this runtime is built without oneDNN)",
#endif
                   bad);
  return library;
}

zrt::GemmTiles zrt::gemmTiles(int64_t M, int64_t N) {
  // Row blocks of 256 with all of N: one pass of the library's B packing
  // per block, as fast as the whole GEMM on the C = 768 shapes (bench/gemm
  // at 2 threads; 128-row blocks lost 5-25 %, 256 x 512 tiles 10-15 %).
  GemmTiles t;
  t.mt = M < 256 ? M : 256;
  t.nt = N;
  auto count = [&] {
    t.mTiles = (M + t.mt - 1) / t.mt;
    t.nTiles = (N + t.nt - 1) / t.nt;
    return t.mTiles * t.nTiles;
  };
  // Fewer than 4 blocks (M < 769): halve the columns (to multiples of 64,
  // down to 128), then the rows (to multiples of 16, down to 32).
  while (count() < 4) {
    if (t.nt >= 256)
      t.nt = (t.nt / 2 + 63) / 64 * 64;
    else if (t.mt >= 64)
      t.mt = (t.mt / 2 + 15) / 16 * 16;
    else
      break;
  }
  return t;
}

int zrt::sgemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K,
               float alpha, const float *A, int64_t lda, const float *B,
               int64_t ldb, float beta, float *C, int64_t ldc) {
  int status = ZRT_OK;
  const GemmLibrary library = gemmLibrary(&status);
  if (status)
    return status;
#if ZRT_HAVE_ONEDNN
  if (library == GemmLibrary::OneDNN)
    return forEachTile(
        gemmTiles(M, N), M, N, K,
        [&](int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
          return onednn::sgemmTile(
              transA, transB, i1 - i0, j1 - j0, K, alpha,
              transA ? A + i0 : A + i0 * lda, lda,
              transB ? B + j0 * ldb : B + j0, ldb, beta, C + i0 * ldc + j0,
              ldc);
        });
#else
  (void)library;
#endif
  cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
              transB ? CblasTrans : CblasNoTrans, static_cast<int>(M),
              static_cast<int>(N), static_cast<int>(K), alpha, A,
              static_cast<int>(lda), B, static_cast<int>(ldb), beta, C,
              static_cast<int>(ldc));
  return ZRT_OK;
}

bool zrt::gemmBf16(bool transA, bool transB, int64_t M, int64_t N, int64_t K,
                   const zrt_bf16 *A, int64_t lda, const zrt_bf16 *B,
                   int64_t ldb, const zrt_bf16 *bias, GemmOut C, int64_t ldc,
                   int *status) {
  *status = ZRT_OK;
  const GemmLibrary library = gemmLibrary(status);
  if (*status)
    return true;
#if ZRT_HAVE_ONEDNN
  if (library != GemmLibrary::OneDNN || !onednn::hasNativeBf16())
    return false;
  *status = forEachTile(
      gemmTiles(M, N), M, N, K,
      [&](int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
        GemmOut tileC;
        if (C.bf16)
          tileC.bf16 = C.bf16 + i0 * ldc + j0;
        else
          tileC.f32 = C.f32 + i0 * ldc + j0;
        return onednn::bf16Tile(transA, transB, i1 - i0, j1 - j0, K,
                                transA ? A + i0 : A + i0 * lda, lda,
                                transB ? B + j0 * ldb : B + j0, ldb,
                                bias ? bias + j0 : nullptr, tileC, ldc);
      });
  return true;
#else
  (void)library;
  (void)transA, (void)transB, (void)M, (void)N, (void)K, (void)A, (void)lda,
      (void)B, (void)ldb, (void)bias, (void)C, (void)ldc;
  return false;
#endif
}
