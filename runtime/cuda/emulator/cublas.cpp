// The emulated cuBLAS and cuBLASLt (include/cublas_v2.h, include/cublasLt.h):
// GEMMs computed on the host, queued on emulated streams. The semantics come
// from NVIDIA's cuBLAS documentation and the real headers, not from the
// backend's calls: the point is an independent check of those calls.
#include "cublasLt.h"
#include "cublas_v2.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <utility>
#include <vector>

// The cuBLAS handle: a context on the emulated device. A cublasLtHandle_t
// is the same object (the documentation allows casting a cublasHandle_t to
// a cublasLtHandle_t).
struct cublasContext {
  uint64_t magic;
  cudaStream_t stream = nullptr; ///< cublasSetStream; nullptr: default stream
  void *workspace = nullptr;     ///< cublasSetWorkspace (unused)
  size_t workspaceBytes = 0;
  cublasMath_t mathMode = CUBLAS_DEFAULT_MATH;
};
struct cublasLtContext : cublasContext {};

namespace {

constexpr uint64_t kContextMagic = 0x43424c4153435458ull; // "CBLASCTX"
constexpr uint64_t kLayoutMagic = 0x4c544c41594f5554ull;  // "LTLAYOUT"
constexpr uint64_t kDescMagic = 0x4c544d4d44455343ull;    // "LTMMDESC"
constexpr uint64_t kPrefMagic = 0x4c54505245464552ull;    // "LTPREFER"
constexpr uint64_t kAlgoMagic = 0x454d55414c474f31ull;    // "EMUALGO1"

/// Live contexts (cublasCreate / cublasLtCreate, not yet destroyed).
std::set<const void *> &liveContexts() {
  static std::set<const void *> s;
  return s;
}
cublasContext *context(const void *h) {
  if (!h || !liveContexts().count(h))
    return nullptr;
  return static_cast<cublasContext *>(const_cast<void *>(h));
}

// ---------------------------------------------------------------------------
// Elements.

/// Bytes of one element of the types the emulation computes with (0: none).
size_t elemBytes(int t) {
  switch (t) {
  case CUDA_R_32F:
    return 4;
  case CUDA_R_16BF:
    return 2;
  }
  return 0;
}
float bf16ToFloat(uint16_t h) {
  const uint32_t u = uint32_t(h) << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}
/// f32 -> bf16, round to nearest even; NaN stays NaN (quieted, sign kept).
uint16_t floatToBf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return uint16_t((u >> 16) | 0x0040u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}
float loadElem(const void *base, int t, int64_t i) {
  if (t == CUDA_R_32F)
    return static_cast<const float *>(base)[i];
  return bf16ToFloat(static_cast<const uint16_t *>(base)[i]);
}
void storeElem(void *base, int t, int64_t i, float v) {
  if (t == CUDA_R_32F)
    static_cast<float *>(base)[i] = v;
  else
    static_cast<uint16_t *>(base)[i] = floatToBf16(v);
}

// ---------------------------------------------------------------------------
// The computation, shared by cuBLAS and cuBLASLt.

/// A column-major matrix (or the bias vector: rows x 1) in device memory;
/// element (i, j) of batch b at p + b * stride + i + j * ld (elements).
struct Operand {
  const void *p = nullptr;
  int type = CUDA_R_32F;
  int64_t rows = 0, cols = 0, ld = 0, stride = 0;
  size_t bytes() const { return elemBytes(type); }
  /// Bytes one batch spans: ((cols - 1) * ld + rows) elements.
  size_t span() const {
    return rows && cols ? size_t((cols - 1) * ld + rows) * bytes() : 0;
  }
  const char *at(int64_t b) const {
    return static_cast<const char *>(p) + b * stride * int64_t(bytes());
  }
};

/// GELU as cuBLASLt's GELU epilogues apply it: the tanh approximation
/// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), evaluated in f32.
float geluTanh(float x) {
  const float u = 0.7978845608f * (x + 0.044715f * x * x * x);
  return 0.5f * x * (1.0f + std::tanh(u));
}
/// Its derivative (CUBLASLT_EPILOGUE_DGELU), in f32:
/// 0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2).
float geluTanhGrad(float x) {
  const float u = 0.7978845608f * (x + 0.044715f * x * x * x);
  const float t = std::tanh(u);
  return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * 0.7978845608f *
                                 (1.0f + 3.0f * 0.044715f * x * x);
}

/// The pointwise part of an epilogue (after alpha, beta C and the bias).
enum class Pointwise {
  None,     ///< D = v
  Gelu,     ///< D = gelu(v); aux (if any) = v, the GELU input
  GeluGrad, ///< D = v * gelu'(aux): aux is an input
};

/// One GEMM call, everything copied at call time:
/// D[b] = alpha op(A[b]) op(B[b]) + beta C[b] (+ bias[b] broadcast over
/// columns), b < batch, then the pointwise epilogue (aux: m x n like D,
/// its own ld and batch stride).
struct Gemm {
  const char *api = "";
  cublasOperation_t ta = CUBLAS_OP_N, tb = CUBLAS_OP_N;
  int64_t m = 0, n = 0, k = 0, batch = 1;
  float alpha = 0, beta = 0;
  Operand A, B, C, D, bias; // C.p null: not read; bias.p null: no bias
  Pointwise pointwise = Pointwise::None;
  Operand aux; // aux.p null: none
};

/// [lo, hi) byte ranges of the columns of every batch of x.
std::vector<std::pair<uintptr_t, uintptr_t>> columns(const Operand &x,
                                                     int64_t batch) {
  std::vector<std::pair<uintptr_t, uintptr_t>> r;
  if (!x.p || !x.rows || !x.cols)
    return r;
  r.reserve(size_t(batch * x.cols));
  const uintptr_t colBytes = uintptr_t(x.rows) * x.bytes();
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t j = 0; j < x.cols; ++j) {
      const uintptr_t lo = reinterpret_cast<uintptr_t>(x.at(b)) +
                           uintptr_t(j * x.ld) * x.bytes();
      r.push_back({lo, lo + colBytes});
    }
  std::sort(r.begin(), r.end());
  return r;
}
bool intersect(const std::vector<std::pair<uintptr_t, uintptr_t>> &a,
               const std::vector<std::pair<uintptr_t, uintptr_t>> &b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i].second <= b[j].first)
      ++i;
    else if (b[j].second <= a[i].first)
      ++j;
    else
      return true;
  }
  return false;
}

/// Checks the operands against device memory and each other (dies on a
/// violation: the real library would read or write out of bounds, or race),
/// then queues the computation on stream s.
void submit(cudaStream_t s, const Gemm &g) {
  if (!g.m || !g.n || !g.batch)
    return;
  char what[96];
  auto check = [&](const Operand &x, const char *name) {
    if (!x.span())
      return;
    if (!x.p)
      emu::die("%s: %s is NULL", g.api, name);
    snprintf(what, sizeof what, "%s: %s", g.api, name);
    for (int64_t b = 0; b < g.batch; ++b)
      emu::checkDevice(x.at(b), x.span(), what);
  };
  if (g.k) {
    check(g.A, "A");
    check(g.B, "B");
  }
  if (g.C.p)
    check(g.C, "C");
  check(g.D, "D (output)");
  if (g.bias.p)
    check(g.bias, "bias");
  if (g.aux.p)
    check(g.aux, "the epilogue's aux matrix");

  const auto d = columns(g.D, g.batch);
  for (size_t i = 1; i < d.size(); ++i)
    if (d[i].first < d[i - 1].second)
      emu::die("%s: the output's batches or columns overlap (stride %lld, ld "
               "%lld)",
               g.api, (long long)g.D.stride, (long long)g.D.ld);
  if (g.k && intersect(d, columns(g.A, g.batch)))
    emu::die("%s: the output overlaps A", g.api);
  if (g.k && intersect(d, columns(g.B, g.batch)))
    emu::die("%s: the output overlaps B", g.api);
  if (g.bias.p && intersect(d, columns(g.bias, g.batch)))
    emu::die("%s: the output overlaps the bias", g.api);
  const bool sameCD = g.C.p == g.D.p && g.C.type == g.D.type &&
                      g.C.ld == g.D.ld && g.C.stride == g.D.stride;
  if (g.C.p && !sameCD && intersect(d, columns(g.C, g.batch)))
    emu::die("%s: C and D overlap without being the same matrix", g.api);
  if (g.aux.p) {
    // cublasLt.h documents no aliasing of the aux matrix (an output of the
    // GELU forward, an input of DGELU) with D or the inputs.
    const auto x = columns(g.aux, g.batch);
    for (size_t i = 1; g.pointwise == Pointwise::Gelu && i < x.size(); ++i)
      if (x[i].first < x[i - 1].second)
        emu::die("%s: the aux output's batches or columns overlap", g.api);
    if (intersect(d, x))
      emu::die("%s: D overlaps the epilogue's aux matrix", g.api);
    if (g.pointwise == Pointwise::Gelu &&
        ((g.k && (intersect(x, columns(g.A, g.batch)) ||
                  intersect(x, columns(g.B, g.batch)))) ||
         (g.bias.p && intersect(x, columns(g.bias, g.batch))) ||
         (g.C.p && intersect(x, columns(g.C, g.batch)))))
      emu::die("%s: the aux output overlaps an input", g.api);
  }

  emu::enqueue(s, [g] {
    std::vector<float> a(size_t(g.m * g.k)), bt(size_t(g.n * g.k));
    std::vector<float> out(size_t(g.m * g.n));
    for (int64_t b = 0; b < g.batch; ++b) {
      // op(A)(i, l) row-major in a, op(B)(l, j) column-major in bt.
      for (int64_t i = 0; i < g.m; ++i)
        for (int64_t l = 0; l < g.k; ++l)
          a[size_t(i * g.k + l)] =
              g.ta == CUBLAS_OP_N
                  ? loadElem(g.A.at(b), g.A.type, i + l * g.A.ld)
                  : loadElem(g.A.at(b), g.A.type, l + i * g.A.ld);
      for (int64_t j = 0; j < g.n; ++j)
        for (int64_t l = 0; l < g.k; ++l)
          bt[size_t(j * g.k + l)] =
              g.tb == CUBLAS_OP_N
                  ? loadElem(g.B.at(b), g.B.type, l + j * g.B.ld)
                  : loadElem(g.B.at(b), g.B.type, j + l * g.B.ld);
      for (int64_t j = 0; j < g.n; ++j)
        for (int64_t i = 0; i < g.m; ++i) {
          const float *x = a.data() + i * g.k, *y = bt.data() + j * g.k;
          double acc = 0;
          for (int64_t l = 0; l < g.k; ++l)
            acc += double(x[l]) * double(y[l]);
          double v = double(g.alpha) * acc;
          if (g.C.p)
            v += double(g.beta) *
                 double(loadElem(g.C.at(b), g.C.type, i + j * g.C.ld));
          if (g.bias.p)
            v += double(loadElem(g.bias.at(b), g.bias.type, i));
          out[size_t(i + j * g.m)] = float(v);
        }
      // All of batch b is computed before any of it is stored (C == D).
      void *dst = const_cast<char *>(g.D.at(b));
      void *aux = const_cast<char *>(g.aux.p ? g.aux.at(b) : nullptr);
      for (int64_t j = 0; j < g.n; ++j)
        for (int64_t i = 0; i < g.m; ++i) {
          const float v = out[size_t(i + j * g.m)];
          float r = v;
          if (g.pointwise == Pointwise::Gelu) {
            if (aux)
              storeElem(aux, g.aux.type, i + j * g.aux.ld, v);
            r = geluTanh(v);
          } else if (g.pointwise == Pointwise::GeluGrad) {
            r = v * geluTanhGrad(loadElem(aux, g.aux.type, i + j * g.aux.ld));
          }
          storeElem(dst, g.D.type, i + j * g.D.ld, r);
        }
    }
  });
}

bool validOp(int op) {
  return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C;
}
bool computeType32F(int c) {
  return c == CUBLAS_COMPUTE_32F || c == CUBLAS_COMPUTE_32F_PEDANTIC ||
         c == CUBLAS_COMPUTE_32F_FAST_16F || c == CUBLAS_COMPUTE_32F_FAST_16BF ||
         c == CUBLAS_COMPUTE_32F_FAST_TF32;
}
/// The f32-compute rows of the cublasGemmEx / cublasLtMatmul type tables
/// that the emulation implements: 32F[_PEDANTIC]: A = B = bf16 with C bf16
/// or f32, or all f32; the FAST types: all f32 only.
bool supportedTypes(int compute, int at, int bt, int ct) {
  if (!computeType32F(compute) || at != bt)
    return false;
  const bool fast = compute != CUBLAS_COMPUTE_32F &&
                    compute != CUBLAS_COMPUTE_32F_PEDANTIC;
  if (at == CUDA_R_32F)
    return ct == CUDA_R_32F;
  return !fast && at == CUDA_R_16BF && (ct == CUDA_R_16BF || ct == CUDA_R_32F);
}
bool validAlgo(int algo) {
  return (algo >= CUBLAS_GEMM_DEFAULT && algo <= CUBLAS_GEMM_ALGO23) ||
         (algo >= CUBLAS_GEMM_DEFAULT_TENSOR_OP &&
          algo <= CUBLAS_GEMM_ALGO15_TENSOR_OP);
}

/// The cuBLAS GEMM family: validation ("Error values" of cublas<t>gemm,
/// cublasGemmEx and the strided batched forms), then the queued GEMM.
cublasStatus_t blasGemm(const char *api, cublasHandle_t handle,
                        cublasOperation_t ta, cublasOperation_t tb, int m,
                        int n, int k, const void *alpha, const void *A, int at,
                        int lda, long long sA, const void *B, int bt, int ldb,
                        long long sB, const void *beta, void *C, int ct,
                        int ldc, long long sC, int batch, int compute,
                        int algo) {
  cublasContext *ctx = context(handle);
  if (!ctx)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!validOp(ta) || !validOp(tb) || m < 0 || n < 0 || k < 0 || batch < 0)
    return CUBLAS_STATUS_INVALID_VALUE;
  const int rowsA = ta == CUBLAS_OP_N ? m : k;
  const int rowsB = tb == CUBLAS_OP_N ? k : n;
  if (lda < std::max(1, rowsA) || ldb < std::max(1, rowsB) ||
      ldc < std::max(1, m))
    return CUBLAS_STATUS_INVALID_VALUE;
  if (!alpha || !beta)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (!supportedTypes(compute, at, bt, ct) || !validAlgo(algo))
    return CUBLAS_STATUS_NOT_SUPPORTED;

  Gemm g;
  g.api = api;
  g.ta = ta;
  g.tb = tb;
  g.m = m;
  g.n = n;
  g.k = k;
  g.batch = batch;
  g.alpha = *static_cast<const float *>(alpha);
  g.beta = *static_cast<const float *>(beta);
  g.A = {A, at, rowsA, ta == CUBLAS_OP_N ? k : m, lda, sA};
  g.B = {B, bt, rowsB, tb == CUBLAS_OP_N ? n : k, ldb, sB};
  g.D = {C, ct, m, n, ldc, sC};
  g.C = g.D;
  if (g.beta == 0.0f)
    g.C.p = nullptr; // "If beta == 0, C does not have to be a valid input."
  submit(ctx->stream, g);
  return CUBLAS_STATUS_SUCCESS;
}

// ---------------------------------------------------------------------------
// cuBLASLt descriptors: the state lives in the caller-visible opaque storage
// (so the *Init forms work too).

struct Layout {
  uint64_t magic;
  uint32_t type;
  int32_t order;
  uint64_t rows, cols;
  int64_t ld;
  int32_t batch;
  uint32_t batchMode;
  int64_t stride;
  int64_t planeOffset;
};
static_assert(sizeof(Layout) <= sizeof(cublasLtMatrixLayoutOpaque_t), "");

struct Desc {
  uint64_t magic;
  int32_t compute, scale, pointerMode, transa, transb, transc, fill;
  uint32_t epilogue;
  const void *bias;
  int64_t biasStride;
  int32_t biasType;
  int32_t smCount;
  int8_t fastAccum;
  const void *aux;   ///< EPILOGUE_AUX_POINTER
  int64_t auxLd;     ///< EPILOGUE_AUX_LD (elements), default 0
  int64_t auxStride; ///< EPILOGUE_AUX_BATCH_STRIDE (elements), default 0
  int32_t auxType;   ///< EPILOGUE_AUX_DATA_TYPE, default -1: D's type
};
static_assert(sizeof(Desc) <= sizeof(cublasLtMatmulDescOpaque_t), "");

struct Pref {
  uint64_t magic;
  uint32_t searchMode, reductionMask;
  uint64_t maxWorkspace;
  uint32_t align[4]; ///< promised alignment of A, B, C, D (bytes)
  float maxWaves;
  uint64_t implMask;
};
static_assert(sizeof(Pref) <= sizeof(cublasLtMatmulPreferenceOpaque_t), "");

const Layout *layout(cublasLtMatrixLayout_t l) {
  const Layout *x = reinterpret_cast<const Layout *>(l);
  return x && x->magic == kLayoutMagic ? x : nullptr;
}
const Desc *desc(cublasLtMatmulDesc_t d) {
  const Desc *x = reinterpret_cast<const Desc *>(d);
  return x && x->magic == kDescMagic ? x : nullptr;
}

/// Copies buf into v when sizeInBytes is v's size (the documented check).
template <class T>
cublasStatus_t setValue(T &v, const void *buf, size_t sizeInBytes) {
  if (!buf || sizeInBytes != sizeof(T))
    return CUBLAS_STATUS_INVALID_VALUE;
  memcpy(&v, buf, sizeof(T));
  return CUBLAS_STATUS_SUCCESS;
}

/// Alignment of a pointer in bytes (its lowest set bit), capped at 256.
uint64_t alignmentOf(const void *p) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  return a ? std::min<uint64_t>(256, a & (~a + 1)) : 256;
}

/// The problem a matmul descriptor and four layouts describe.
struct LtShape {
  int64_t m, n, k, batch;
  int biasType, auxType;
};

/// What an epilogue the emulation implements adds to the GEMM (others:
/// supported = false).
struct EpilogueTraits {
  bool supported = false, bias = false, aux = false;
  Pointwise pointwise = Pointwise::None;
};
EpilogueTraits traitsOf(uint32_t epilogue) {
  EpilogueTraits t;
  t.supported = true;
  switch (epilogue) {
  case CUBLASLT_EPILOGUE_DEFAULT:
    break;
  case CUBLASLT_EPILOGUE_BIAS:
    t.bias = true;
    break;
  case CUBLASLT_EPILOGUE_GELU:
  case CUBLASLT_EPILOGUE_GELU_AUX:
  case CUBLASLT_EPILOGUE_GELU_BIAS:
  case CUBLASLT_EPILOGUE_GELU_AUX_BIAS:
    t.pointwise = Pointwise::Gelu;
    t.bias = epilogue == CUBLASLT_EPILOGUE_GELU_BIAS ||
             epilogue == CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
    t.aux = epilogue == CUBLASLT_EPILOGUE_GELU_AUX ||
            epilogue == CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
    break;
  case CUBLASLT_EPILOGUE_DGELU:
    t.pointwise = Pointwise::GeluGrad;
    t.aux = true;
    break;
  default:
    t.supported = false;
  }
  return t;
}

/// Validates desc + layouts (Cdesc NULL: equal to Ddesc) as
/// cublasLtMatmulAlgoGetHeuristic and cublasLtMatmul share it.
cublasStatus_t ltValidate(const Desc *d, const Layout *a, const Layout *b,
                          const Layout *c, const Layout *dd, LtShape &s) {
  if (!d || !a || !b || !dd)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (!c)
    c = dd;
  if (!validOp(d->transa) || !validOp(d->transb))
    return CUBLAS_STATUS_INVALID_VALUE;
  // What the emulation models; the rest of the API surface is not there.
  if (d->scale != CUDA_R_32F || d->pointerMode != CUBLASLT_POINTER_MODE_HOST ||
      d->transc != CUBLAS_OP_N || d->fill != CUBLAS_FILL_MODE_FULL)
    return CUBLAS_STATUS_NOT_SUPPORTED;
  const EpilogueTraits epi = traitsOf(d->epilogue);
  if (!epi.supported)
    return CUBLAS_STATUS_NOT_SUPPORTED;
  for (const Layout *x : {a, b, c, dd})
    if (x->order != CUBLASLT_ORDER_COL || x->batchMode != 0 ||
        x->planeOffset != 0 || x->rows > uint64_t(INT32_MAX) ||
        x->cols > uint64_t(INT32_MAX))
      return CUBLAS_STATUS_NOT_SUPPORTED;
  if (!supportedTypes(d->compute, int(a->type), int(b->type), int(dd->type)) ||
      c->type != dd->type)
    return CUBLAS_STATUS_NOT_SUPPORTED;
  s.biasType = d->biasType == -1 ? int(dd->type) : d->biasType;
  if (epi.bias && s.biasType != int(dd->type))
    return CUBLAS_STATUS_NOT_SUPPORTED;
  // "GELU input matrix elements type is the same as the type of elements of
  // the output matrix" (the fp8 exceptions are not emulated); another type
  // is an unsupported combination: CUBLAS_STATUS_INVALID_VALUE.
  s.auxType = d->auxType == -1 ? int(dd->type) : d->auxType;
  if (epi.aux && s.auxType != int(dd->type))
    return CUBLAS_STATUS_INVALID_VALUE;

  // Shapes: D m x n, op(A) m x k, op(B) k x n, C m x n.
  s.m = int64_t(dd->rows);
  s.n = int64_t(dd->cols);
  const bool na = d->transa == CUBLAS_OP_N, nb = d->transb == CUBLAS_OP_N;
  const int64_t aRowsOp = int64_t(na ? a->rows : a->cols);
  s.k = int64_t(na ? a->cols : a->rows);
  const int64_t bRowsOp = int64_t(nb ? b->rows : b->cols);
  const int64_t bColsOp = int64_t(nb ? b->cols : b->rows);
  if (aRowsOp != s.m || bRowsOp != s.k || bColsOp != s.n ||
      int64_t(c->rows) != s.m || int64_t(c->cols) != s.n)
    return CUBLAS_STATUS_INVALID_VALUE;
  // "must be large enough so that matrix memory locations are not
  // overlapping"; C's ld may be 0 (broadcast of one column).
  for (const Layout *x : {a, b, dd})
    if (x->ld < std::max<int64_t>(1, int64_t(x->rows)))
      return CUBLAS_STATUS_INVALID_VALUE;
  if (c->ld != 0 && c->ld < std::max<int64_t>(1, int64_t(c->rows)))
    return CUBLAS_STATUS_INVALID_VALUE;
  if (dd->batch < 1 || a->batch != dd->batch || b->batch != dd->batch ||
      c->batch != dd->batch)
    return CUBLAS_STATUS_INVALID_VALUE;
  s.batch = dd->batch;
  // GELU aux matrix: "leading dimension ... Must be divisible by 8 and be
  // no less than the number of rows in the output matrix"; batch stride
  // "Must be divisible by 8".
  if (epi.aux && (d->auxLd < std::max<int64_t>(1, s.m) || d->auxLd % 8 != 0 ||
                  (s.batch > 1 && d->auxStride % 8 != 0)))
    return CUBLAS_STATUS_INVALID_VALUE;
  return CUBLAS_STATUS_SUCCESS;
}

/// The types and epilogue an algorithm was chosen for (algo.data[4..5]).
uint64_t signature(const Desc *d, const Layout *a, const Layout *b,
                   const Layout *dd) {
  return uint64_t(a->type & 0xff) | uint64_t(b->type & 0xff) << 8 |
         uint64_t(dd->type & 0xff) << 16 | uint64_t(d->compute & 0xff) << 24 |
         uint64_t(d->scale & 0xff) << 32 |
         uint64_t(d->epilogue & 0xffff) << 40;
}

const char *statusName(cublasStatus_t s) {
  switch (s) {
  case CUBLAS_STATUS_SUCCESS:
    return "CUBLAS_STATUS_SUCCESS";
  case CUBLAS_STATUS_NOT_INITIALIZED:
    return "CUBLAS_STATUS_NOT_INITIALIZED";
  case CUBLAS_STATUS_ALLOC_FAILED:
    return "CUBLAS_STATUS_ALLOC_FAILED";
  case CUBLAS_STATUS_INVALID_VALUE:
    return "CUBLAS_STATUS_INVALID_VALUE";
  case CUBLAS_STATUS_ARCH_MISMATCH:
    return "CUBLAS_STATUS_ARCH_MISMATCH";
  case CUBLAS_STATUS_MAPPING_ERROR:
    return "CUBLAS_STATUS_MAPPING_ERROR";
  case CUBLAS_STATUS_EXECUTION_FAILED:
    return "CUBLAS_STATUS_EXECUTION_FAILED";
  case CUBLAS_STATUS_INTERNAL_ERROR:
    return "CUBLAS_STATUS_INTERNAL_ERROR";
  case CUBLAS_STATUS_NOT_SUPPORTED:
    return "CUBLAS_STATUS_NOT_SUPPORTED";
  case CUBLAS_STATUS_LICENSE_ERROR:
    return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "<unknown>";
}

} // namespace

// ---------------------------------------------------------------------------
// cuBLAS.

cublasStatus_t cublasCreate_v2(cublasHandle_t *handle) {
  if (!handle)
    return CUBLAS_STATUS_INVALID_VALUE;
  auto *c = new cublasContext;
  c->magic = kContextMagic;
  liveContexts().insert(c);
  *handle = c;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
  cublasContext *c = context(handle);
  if (!c)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  cudaStreamSynchronize(c->stream);
  liveContexts().erase(c);
  delete c;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t s) {
  cublasContext *c = context(handle);
  if (!c)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  c->stream = s;
  c->workspace = nullptr; // "resets the ... workspace to the default pool"
  c->workspaceBytes = 0;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasGetStream_v2(cublasHandle_t handle, cudaStream_t *s) {
  cublasContext *c = context(handle);
  if (!c)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!s)
    return CUBLAS_STATUS_INVALID_VALUE;
  *s = c->stream;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void *workspace,
                                     size_t bytes) {
  cublasContext *c = context(handle);
  if (!c)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (reinterpret_cast<uintptr_t>(workspace) % 256 != 0)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (workspace && bytes)
    emu::checkDevice(workspace, bytes, "cublasSetWorkspace: workspace");
  c->workspace = workspace;
  c->workspaceBytes = bytes;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t *mode) {
  cublasContext *c = context(handle);
  if (!c)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!mode)
    return CUBLAS_STATUS_INVALID_VALUE;
  *mode = c->mathMode;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  cublasContext *c = context(handle);
  if (!c)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  const int base = mode & 0xf, flags = mode & ~0xf;
  if (base > CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH ||
      (flags & ~int(CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)))
    return CUBLAS_STATUS_INVALID_VALUE;
  c->mathMode = mode;
  return CUBLAS_STATUS_SUCCESS;
}
const char *cublasGetStatusName(cublasStatus_t status) {
  return statusName(status);
}
const char *cublasGetStatusString(cublasStatus_t status) {
  switch (status) {
  case CUBLAS_STATUS_SUCCESS:
    return "success";
  case CUBLAS_STATUS_NOT_INITIALIZED:
    return "the library was not initialized";
  case CUBLAS_STATUS_INVALID_VALUE:
    return "an invalid numeric value was used as an argument";
  case CUBLAS_STATUS_NOT_SUPPORTED:
    return "the functionality requested is not supported";
  default:
    return statusName(status);
  }
}

cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                              cublasOperation_t transb, int m, int n, int k,
                              const float *alpha, const float *A, int lda,
                              const float *B, int ldb, const float *beta,
                              float *C, int ldc) {
  return blasGemm("cublasSgemm", handle, transa, transb, m, n, k, alpha, A,
                  CUDA_R_32F, lda, 0, B, CUDA_R_32F, ldb, 0, beta, C,
                  CUDA_R_32F, ldc, 0, 1, CUBLAS_COMPUTE_32F,
                  CUBLAS_GEMM_DEFAULT);
}
cublasStatus_t cublasSgemmStridedBatched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
    int m, int n, int k, const float *alpha, const float *A, int lda,
    long long int strideA, const float *B, int ldb, long long int strideB,
    const float *beta, float *C, int ldc, long long int strideC,
    int batchCount) {
  return blasGemm("cublasSgemmStridedBatched", handle, transa, transb, m, n, k,
                  alpha, A, CUDA_R_32F, lda, strideA, B, CUDA_R_32F, ldb,
                  strideB, beta, C, CUDA_R_32F, ldc, strideC, batchCount,
                  CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}
cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k,
                            const void *alpha, const void *A,
                            cudaDataType Atype, int lda, const void *B,
                            cudaDataType Btype, int ldb, const void *beta,
                            void *C, cudaDataType Ctype, int ldc,
                            cublasComputeType_t computeType,
                            cublasGemmAlgo_t algo) {
  return blasGemm("cublasGemmEx", handle, transa, transb, m, n, k, alpha, A,
                  Atype, lda, 0, B, Btype, ldb, 0, beta, C, Ctype, ldc, 0, 1,
                  computeType, algo);
}
cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
    int m, int n, int k, const void *alpha, const void *A, cudaDataType Atype,
    int lda, long long int strideA, const void *B, cudaDataType Btype, int ldb,
    long long int strideB, const void *beta, void *C, cudaDataType Ctype,
    int ldc, long long int strideC, int batchCount,
    cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  return blasGemm("cublasGemmStridedBatchedEx", handle, transa, transb, m, n,
                  k, alpha, A, Atype, lda, strideA, B, Btype, ldb, strideB,
                  beta, C, Ctype, ldc, strideC, batchCount, computeType, algo);
}

// ---------------------------------------------------------------------------
// cuBLASLt.

cublasStatus_t cublasLtCreate(cublasLtHandle_t *lightHandle) {
  if (!lightHandle)
    return CUBLAS_STATUS_INVALID_VALUE;
  auto *c = new cublasLtContext;
  c->magic = kContextMagic;
  liveContexts().insert(static_cast<cublasContext *>(c));
  *lightHandle = c;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtDestroy(cublasLtHandle_t lightHandle) {
  cublasContext *c = context(static_cast<cublasContext *>(lightHandle));
  if (!c)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  liveContexts().erase(c);
  delete lightHandle;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutInit_internal(cublasLtMatrixLayout_t l,
                                                 size_t size,
                                                 cudaDataType type,
                                                 uint64_t rows, uint64_t cols,
                                                 int64_t ld) {
  if (!l || size < sizeof(Layout))
    return CUBLAS_STATUS_ALLOC_FAILED;
  memset(l, 0, sizeof(*l));
  Layout x{};
  x.magic = kLayoutMagic;
  x.type = uint32_t(type);
  x.order = CUBLASLT_ORDER_COL;
  x.rows = rows;
  x.cols = cols;
  x.ld = ld;
  x.batch = 1;
  memcpy(l, &x, sizeof x);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *l,
                                          cudaDataType type, uint64_t rows,
                                          uint64_t cols, int64_t ld) {
  if (!l)
    return CUBLAS_STATUS_INVALID_VALUE;
  *l = new cublasLtMatrixLayoutOpaque_t;
  return cublasLtMatrixLayoutInit_internal(*l, sizeof(**l), type, rows, cols,
                                           ld);
}
cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l) {
  if (l)
    reinterpret_cast<Layout *>(l)->magic = 0;
  delete l;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatrixLayoutSetAttribute(
    cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t attr,
    const void *buf, size_t sizeInBytes) {
  if (!layout(l))
    return CUBLAS_STATUS_INVALID_VALUE;
  Layout &x = *reinterpret_cast<Layout *>(l);
  switch (attr) {
  case CUBLASLT_MATRIX_LAYOUT_TYPE:
    return setValue(x.type, buf, sizeInBytes);
  case CUBLASLT_MATRIX_LAYOUT_ORDER:
    return setValue(x.order, buf, sizeInBytes);
  case CUBLASLT_MATRIX_LAYOUT_ROWS:
    return setValue(x.rows, buf, sizeInBytes);
  case CUBLASLT_MATRIX_LAYOUT_COLS:
    return setValue(x.cols, buf, sizeInBytes);
  case CUBLASLT_MATRIX_LAYOUT_LD:
    return setValue(x.ld, buf, sizeInBytes);
  case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT:
    return setValue(x.batch, buf, sizeInBytes);
  case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET:
    return setValue(x.stride, buf, sizeInBytes);
  case CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET:
    return setValue(x.planeOffset, buf, sizeInBytes);
  case CUBLASLT_MATRIX_LAYOUT_BATCH_MODE:
    return setValue(x.batchMode, buf, sizeInBytes);
  }
  return CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t cublasLtMatmulDescInit_internal(cublasLtMatmulDesc_t d,
                                               size_t size,
                                               cublasComputeType_t compute,
                                               cudaDataType_t scale) {
  if (!d || size < sizeof(Desc))
    return CUBLAS_STATUS_ALLOC_FAILED;
  memset(d, 0, sizeof(*d));
  Desc x{};
  x.magic = kDescMagic;
  x.compute = compute;
  x.scale = scale;
  x.pointerMode = CUBLASLT_POINTER_MODE_HOST;
  x.transa = x.transb = x.transc = CUBLAS_OP_N;
  x.fill = CUBLAS_FILL_MODE_FULL;
  x.epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  x.biasType = -1;
  x.auxType = -1;
  memcpy(d, &x, sizeof x);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *d,
                                        cublasComputeType_t compute,
                                        cudaDataType_t scale) {
  if (!d)
    return CUBLAS_STATUS_INVALID_VALUE;
  *d = new cublasLtMatmulDescOpaque_t;
  return cublasLtMatmulDescInit_internal(*d, sizeof(**d), compute, scale);
}
cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d) {
  if (d)
    reinterpret_cast<Desc *>(d)->magic = 0;
  delete d;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d,
                                              cublasLtMatmulDescAttributes_t attr,
                                              const void *buf,
                                              size_t sizeInBytes) {
  if (!desc(d))
    return CUBLAS_STATUS_INVALID_VALUE;
  Desc &x = *reinterpret_cast<Desc *>(d);
  switch (attr) {
  case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE:
    return setValue(x.compute, buf, sizeInBytes);
  case CUBLASLT_MATMUL_DESC_SCALE_TYPE:
    return setValue(x.scale, buf, sizeInBytes);
  case CUBLASLT_MATMUL_DESC_POINTER_MODE:
    return setValue(x.pointerMode, buf, sizeInBytes);
  case CUBLASLT_MATMUL_DESC_TRANSA:
    return setValue(x.transa, buf, sizeInBytes);
  case CUBLASLT_MATMUL_DESC_TRANSB:
    return setValue(x.transb, buf, sizeInBytes);
  case CUBLASLT_MATMUL_DESC_TRANSC:
    return setValue(x.transc, buf, sizeInBytes);
  case CUBLASLT_MATMUL_DESC_FILL_MODE:
    return setValue(x.fill, buf, sizeInBytes);
  case CUBLASLT_MATMUL_DESC_EPILOGUE:
    return setValue(x.epilogue, buf, sizeInBytes);
  case CUBLASLT_MATMUL_DESC_BIAS_POINTER:
    return setValue(x.bias, buf, sizeInBytes);
  case CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE:
    return setValue(x.biasStride, buf, sizeInBytes);
  case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE:
    return setValue(x.biasType, buf, sizeInBytes);
  case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER:
    return setValue(x.aux, buf, sizeInBytes);
  case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD:
    return setValue(x.auxLd, buf, sizeInBytes);
  case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE:
    return setValue(x.auxStride, buf, sizeInBytes);
  case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE:
    return setValue(x.auxType, buf, sizeInBytes);
  case CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET:
    return setValue(x.smCount, buf, sizeInBytes);
  case CUBLASLT_MATMUL_DESC_FAST_ACCUM:
    return setValue(x.fastAccum, buf, sizeInBytes);
  default:
    return CUBLAS_STATUS_NOT_SUPPORTED; // not modeled by the emulation
  }
}

cublasStatus_t cublasLtMatmulPreferenceInit_internal(cublasLtMatmulPreference_t p,
                                                     size_t size) {
  if (!p || size < sizeof(Pref))
    return CUBLAS_STATUS_ALLOC_FAILED;
  memset(p, 0, sizeof(*p));
  Pref x{};
  x.magic = kPrefMagic;
  x.reductionMask = CUBLASLT_REDUCTION_SCHEME_MASK;
  for (uint32_t &a : x.align)
    a = 256;
  x.implMask = ~uint64_t(0);
  memcpy(p, &x, sizeof x);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *p) {
  if (!p)
    return CUBLAS_STATUS_INVALID_VALUE;
  *p = new cublasLtMatmulPreferenceOpaque_t;
  return cublasLtMatmulPreferenceInit_internal(*p, sizeof(**p));
}
cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p) {
  if (p)
    reinterpret_cast<Pref *>(p)->magic = 0;
  delete p;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t
cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t p,
                                     cublasLtMatmulPreferenceAttributes_t attr,
                                     const void *buf, size_t sizeInBytes) {
  Pref *x = reinterpret_cast<Pref *>(p);
  if (!x || x->magic != kPrefMagic)
    return CUBLAS_STATUS_INVALID_VALUE;
  switch (attr) {
  case CUBLASLT_MATMUL_PREF_SEARCH_MODE:
    return setValue(x->searchMode, buf, sizeInBytes);
  case CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES:
    return setValue(x->maxWorkspace, buf, sizeInBytes);
  case CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK:
    return setValue(x->reductionMask, buf, sizeInBytes);
  case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES:
  case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES:
  case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES:
  case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES:
    return setValue(x->align[attr - CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES],
                    buf, sizeInBytes);
  case CUBLASLT_MATMUL_PREF_MAX_WAVES_COUNT:
    return setValue(x->maxWaves, buf, sizeInBytes);
  case CUBLASLT_MATMUL_PREF_IMPL_MASK:
    return setValue(x->implMask, buf, sizeInBytes);
  }
  return CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t operationDesc,
    cublasLtMatrixLayout_t Adesc, cublasLtMatrixLayout_t Bdesc,
    cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
    cublasLtMatmulPreference_t preference, int requestedAlgoCount,
    cublasLtMatmulHeuristicResult_t heuristicResultsArray[],
    int *returnAlgoCount) {
  if (!context(static_cast<cublasContext *>(lightHandle)))
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!returnAlgoCount)
    return CUBLAS_STATUS_INVALID_VALUE;
  *returnAlgoCount = 0;
  const Pref *pref = reinterpret_cast<const Pref *>(preference);
  if (requestedAlgoCount <= 0 || !heuristicResultsArray || !pref ||
      pref->magic != kPrefMagic)
    return CUBLAS_STATUS_INVALID_VALUE;
  const Desc *d = desc(operationDesc);
  const Layout *a = layout(Adesc), *b = layout(Bdesc), *dd = layout(Ddesc);
  const Layout *c = Cdesc ? layout(Cdesc) : dd;
  if (!c)
    return CUBLAS_STATUS_INVALID_VALUE;
  LtShape s;
  const cublasStatus_t st = ltValidate(d, a, b, c, dd, s);
  if (st != CUBLAS_STATUS_SUCCESS)
    return st;

  cublasLtMatmulHeuristicResult_t r;
  memset(&r, 0, sizeof r);
  r.algo.data[0] = kAlgoMagic;
  r.algo.data[1] = uint64_t(pref->align[0]) | uint64_t(pref->align[1]) << 32;
  r.algo.data[2] = uint64_t(pref->align[2]) | uint64_t(pref->align[3]) << 32;
  // The bias and aux pointers' values at this time fix their expected
  // alignment (CUBLASLT_MATMUL_DESC_BIAS_POINTER, _EPILOGUE_AUX_POINTER:
  // "Routines that don't dereference this pointer, like
  // cublasLtMatmulAlgoGetHeuristic() depend on its value to determine
  // expected pointer alignment").
  const EpilogueTraits epi = traitsOf(d->epilogue);
  r.algo.data[3] = epi.bias ? alignmentOf(d->bias) : 0;
  r.algo.data[4] = signature(d, a, b, dd);
  r.algo.data[5] = uint64_t(uint32_t(s.biasType));
  r.algo.data[6] = epi.aux ? alignmentOf(d->aux) : 0;
  r.workspaceSize = 0;
  r.state = CUBLAS_STATUS_SUCCESS;
  r.wavesCount = 1.0f;
  heuristicResultsArray[0] = r;
  *returnAlgoCount = 1;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t lightHandle,
                              cublasLtMatmulDesc_t computeDesc,
                              const void *alpha, const void *A,
                              cublasLtMatrixLayout_t Adesc, const void *B,
                              cublasLtMatrixLayout_t Bdesc, const void *beta,
                              const void *C, cublasLtMatrixLayout_t Cdesc,
                              void *D, cublasLtMatrixLayout_t Ddesc,
                              const cublasLtMatmulAlgo_t *algo, void *workspace,
                              size_t workspaceSizeInBytes, cudaStream_t stream) {
  if (!context(static_cast<cublasContext *>(lightHandle)))
    return CUBLAS_STATUS_NOT_INITIALIZED;
  const Desc *d = desc(computeDesc);
  const Layout *a = layout(Adesc), *b = layout(Bdesc), *dd = layout(Ddesc);
  const Layout *c = Cdesc ? layout(Cdesc) : dd;
  if (!c)
    return CUBLAS_STATUS_INVALID_VALUE;
  LtShape s;
  cublasStatus_t st = ltValidate(d, a, b, c, dd, s);
  if (st != CUBLAS_STATUS_SUCCESS)
    return st;
  if (!alpha || !beta)
    return CUBLAS_STATUS_INVALID_VALUE;
  const float alphaV = *static_cast<const float *>(alpha);
  const float betaV = *static_cast<const float *>(beta);
  if (betaV != 0.0f && !C)
    return CUBLAS_STATUS_INVALID_VALUE;
  // "in-place matrix multiplication (C == D and Cdesc == Ddesc)".
  if (C && C == D &&
      (c->type != dd->type || c->ld != dd->ld || c->stride != dd->stride))
    return CUBLAS_STATUS_INVALID_VALUE;
  const EpilogueTraits epi = traitsOf(d->epilogue);
  if ((epi.bias && !d->bias) || (epi.aux && !d->aux))
    return CUBLAS_STATUS_INVALID_VALUE;
  if (algo) {
    // The algorithm must come from cublasLtMatmulAlgoGetHeuristic for these
    // types and epilogue, and the pointers must be as aligned as promised.
    if (algo->data[0] != kAlgoMagic ||
        algo->data[4] != signature(d, a, b, dd) ||
        algo->data[5] != uint64_t(uint32_t(s.biasType)))
      return CUBLAS_STATUS_INVALID_VALUE;
    const uint64_t promised[4] = {
        algo->data[1] & 0xffffffffu, algo->data[1] >> 32,
        algo->data[2] & 0xffffffffu, algo->data[2] >> 32};
    const void *ptr[4] = {A, B, C, D};
    for (int i = 0; i < 4; ++i)
      if (ptr[i] &&
          reinterpret_cast<uintptr_t>(ptr[i]) % std::max<uint64_t>(1, promised[i]))
        return CUBLAS_STATUS_INVALID_VALUE;
    if (epi.bias && (!algo->data[3] ||
                     reinterpret_cast<uintptr_t>(d->bias) % algo->data[3]))
      return CUBLAS_STATUS_INVALID_VALUE;
    if (epi.aux &&
        (!algo->data[6] || reinterpret_cast<uintptr_t>(d->aux) % algo->data[6]))
      return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (workspace && workspaceSizeInBytes)
    emu::checkDevice(workspace, workspaceSizeInBytes,
                     "cublasLtMatmul: workspace");

  Gemm g;
  g.api = "cublasLtMatmul";
  g.ta = cublasOperation_t(d->transa);
  g.tb = cublasOperation_t(d->transb);
  g.m = s.m;
  g.n = s.n;
  g.k = s.k;
  g.batch = s.batch;
  g.alpha = alphaV;
  g.beta = betaV;
  g.A = {A, int(a->type), int64_t(a->rows), int64_t(a->cols), a->ld,
         a->stride};
  g.B = {B, int(b->type), int64_t(b->rows), int64_t(b->cols), b->ld,
         b->stride};
  g.D = {D, int(dd->type), s.m, s.n, dd->ld, dd->stride};
  if (betaV != 0.0f) {
    g.C = {C, int(c->type), s.m, s.n, c->ld, c->stride};
    if (c->ld == 0)
      g.C.cols = 1; // every column of C is its first one
  }
  if (epi.bias)
    g.bias = {d->bias, s.biasType, s.m, 1, s.m, d->biasStride};
  g.pointwise = epi.pointwise;
  if (epi.aux)
    g.aux = {d->aux, s.auxType, s.m, s.n, d->auxLd, d->auxStride};
  submit(stream, g);
  return CUBLAS_STATUS_SUCCESS;
}
