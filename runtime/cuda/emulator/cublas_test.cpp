// Test of the emulated cuBLAS / cuBLASLt (cublas.cpp) against a reference
// written from the definitions (cuBLAS documentation): op(X)(r, c) read
// straight from the column-major storage, the sum in long double, one
// rounding to f32, then to bf16 by picking the nearer bf16 neighbour (ties
// to the even one). Inputs are small dyadic numbers, so every sum is exact
// and results are compared bit for bit; one test uses arbitrary values with
// a tolerance.
//
// Runs the suite twice: in a child process with ZRT_EMU_STREAMS=late (work
// runs only at synchronization: checks that calls queue their work on the
// right stream and copy their arguments) and in the parent in eager mode.
// Device memory checks are on (emu::strictDevice); operands come from
// cudaMalloc, sized to exactly the span cuBLAS may touch. Death tests (an
// operand outside device memory, an output overlapping an input) run in
// forked children. Prints "ALL OK" (exit 0) or "FAIL ..." lines (exit 1).
#include "cublasLt.h"
#include "cublas_v2.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace {

int failures = 0;
bool lateMode = false;
const char *modeName = "eager";

#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      ++failures;                                                              \
      printf("FAIL [%s] %s:%d: %s: ", modeName, __FILE__, __LINE__, #cond);    \
      printf(__VA_ARGS__);                                                     \
      printf("\n");                                                            \
    }                                                                          \
  } while (0)
#define CHECK_ST(call, expected)                                               \
  do {                                                                         \
    const cublasStatus_t st_ = (call);                                         \
    CHECK(st_ == (expected), "%s returned %s, expected %s", #call,             \
          cublasGetStatusName(st_), cublasGetStatusName(expected));            \
  } while (0)

// --- Reference numerics -----------------------------------------------------

float bitsToFloat(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
uint32_t floatToBits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
double bfValue(uint16_t h) { return double(bitsToFloat(uint32_t(h) << 16)); }

/// Nearest bf16 to f, ties to the even significand: the two candidates are
/// f truncated toward zero and the next bf16 away from zero; their distances
/// to f are compared in double.
uint16_t refBf16(float f) {
  if (std::isnan(f))
    return 0x7fc0;
  const uint32_t u = floatToBits(f);
  const uint16_t lo = uint16_t(u >> 16);
  if ((u & 0xffffu) == 0)
    return lo;
  const double vlo = bfValue(lo);
  double ulp;
  if ((lo & 0x7f80) == 0) {
    ulp = std::ldexp(1.0, -133); // subnormal spacing
  } else {
    int e;
    std::frexp(std::fabs(vlo), &e); // |vlo| = m 2^e, m in [0.5, 1)
    ulp = std::ldexp(1.0, e - 8);   // 8 significant bits
  }
  const double vhi = vlo + std::copysign(ulp, vlo);
  const double dlo = std::fabs(double(f) - vlo), dhi = std::fabs(double(f) - vhi);
  if (dlo < dhi)
    return lo;
  if (dhi < dlo)
    return uint16_t(lo + 1);
  return (lo & 1) ? uint16_t(lo + 1) : lo;
}

size_t esize(cudaDataType t) { return t == CUDA_R_32F ? 4 : 2; }
/// The stored bytes of value v (exactly representable) in type t.
void putElem(std::vector<unsigned char> &buf, cudaDataType t, size_t idx,
             double v) {
  if (t == CUDA_R_32F) {
    const float f = float(v);
    memcpy(&buf[idx * 4], &f, 4);
  } else {
    const uint16_t h = refBf16(float(v));
    memcpy(&buf[idx * 2], &h, 2);
  }
}
double getElem(const std::vector<unsigned char> &buf, cudaDataType t,
               size_t idx) {
  if (t == CUDA_R_32F) {
    float f;
    memcpy(&f, &buf[idx * 4], 4);
    return f;
  }
  uint16_t h;
  memcpy(&h, &buf[idx * 2], 2);
  return bfValue(h);
}

// --- Device buffers ---------------------------------------------------------

std::vector<void *> allocated;
void *dalloc(size_t bytes) {
  void *p = nullptr;
  if (cudaMalloc(&p, bytes) != cudaSuccess || !p) {
    printf("FAIL cudaMalloc(%zu)\n", bytes);
    exit(1);
  }
  allocated.push_back(p);
  return p;
}
void upload(void *d, const std::vector<unsigned char> &h) {
  cudaMemcpy(d, h.data(), h.size(), cudaMemcpyHostToDevice);
}
std::vector<unsigned char> download(const void *d, size_t bytes) {
  std::vector<unsigned char> h(bytes);
  cudaMemcpy(h.data(), d, bytes, cudaMemcpyDeviceToHost);
  return h;
}
void freeAll() {
  cudaDeviceSynchronize();
  for (void *p : allocated)
    cudaFree(p);
  allocated.clear();
}

/// Whether f() dies (abort) in a forked child; its stderr is discarded.
bool dies(const std::function<void()> &f) {
  fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    freopen("/dev/null", "w", stderr);
    f();
    cudaDeviceSynchronize();
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFSIGNALED(status);
}

std::mt19937 rng(12345);
/// A dyadic value in [-2, 2] with a resolution of 1/8 (exact in bf16).
double dyadic() { return double(int(rng() % 33) - 16) / 8.0; }

// --- One GEMM case against the reference ------------------------------------

enum Api { kSgemm, kSgemmSB, kGemmEx, kGemmSBEx, kLt };
const char *apiName[] = {"Sgemm", "SgemmStridedBatched", "GemmEx",
                         "GemmStridedBatchedEx", "LtMatmul"};

struct Case {
  Api api;
  cublasOperation_t ta, tb;
  int m, n, k;
  int padA = 0, padB = 0, padC = 0, padD = 0; ///< ld = rows + pad
  int batch = 1;
  int gapA = 0, gapB = 0, gapC = 0, gapD = 0; ///< stride = span + gap
  bool broadcastA = false;                    ///< strideA = 0
  cudaDataType at = CUDA_R_32F, ct = CUDA_R_32F;
  float alpha = 1, beta = 0;
  int biasType = -1;        ///< Lt: CUDA_R_* of the bias, -1: no epilogue
  bool biasPerBatch = false; ///< Lt: BIAS_BATCH_STRIDE = m
  bool outOfPlace = false;   ///< Lt: C and D distinct buffers
  bool sameLayoutHandle = false; ///< Lt in place: Cdesc == Ddesc handle
  bool setBiasType = true;   ///< Lt: set BIAS_DATA_TYPE (else default)
};

/// A column-major matrix: rows x cols, ld, batch matrices at stride.
struct Mat {
  cudaDataType t;
  int rows, cols, ld, batch;
  long long stride;
  size_t span() const { return size_t(cols - 1) * ld + rows; }
  size_t elems() const { return size_t(batch - 1) * stride + span(); }
  size_t at(int b, int i, int j) const {
    return size_t(b * stride) + i + size_t(j) * ld;
  }
};

/// A cuBLASLt layout of x (batch count and stride set when batched).
cublasLtMatrixLayout_t ltLayout(const Mat &x) {
  cublasLtMatrixLayout_t l;
  cublasLtMatrixLayoutCreate(&l, x.t, x.rows, x.cols, x.ld);
  if (x.batch > 1) {
    const int32_t bc = x.batch;
    const int64_t s = x.stride;
    cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &bc,
                                     sizeof bc);
    cublasLtMatrixLayoutSetAttribute(
        l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &s, sizeof s);
  }
  return l;
}

std::string describe(const Case &c) {
  char s[256];
  snprintf(s, sizeof s,
           "%s %c%c m%d n%d k%d batch%d A%s C%s alpha %g beta %g bias %d "
           "%s",
           apiName[c.api], "NTC"[c.ta], "NTC"[c.tb], c.m, c.n, c.k, c.batch,
           c.at == CUDA_R_32F ? "f32" : "bf16", c.ct == CUDA_R_32F ? "f32" : "bf16",
           c.alpha, c.beta, c.biasType, c.outOfPlace ? "out-of-place" : "");
  return s;
}

void runCase(const Case &c) {
  const std::string name = describe(c);
  const bool na = c.ta == CUBLAS_OP_N, nb = c.tb == CUBLAS_OP_N;
  Mat A{c.at, na ? c.m : c.k, na ? c.k : c.m, 0, c.batch, 0};
  A.ld = std::max(1, A.rows + c.padA);
  A.stride = c.broadcastA ? 0 : (long long)A.span() + c.gapA;
  Mat B{c.at, nb ? c.k : c.n, nb ? c.n : c.k, 0, c.batch, 0};
  B.ld = std::max(1, B.rows + c.padB);
  B.stride = (long long)B.span() + c.gapB;
  Mat C{c.ct, c.m, c.n, c.m + c.padC, c.batch, 0};
  C.stride = (long long)C.span() + c.gapC;
  Mat D = C;
  if (c.outOfPlace) {
    D.ld = c.m + c.padD;
    D.stride = (long long)D.span() + c.gapD;
  }

  // Host images: gaps of A, B, C hold NaN (0xFF bytes: must not be read);
  // D's gaps hold 0x5A bytes (must not be written); C's elements hold NaN
  // when beta == 0 (must not be read).
  std::vector<unsigned char> hA(A.elems() * esize(A.t), 0xff),
      hB(B.elems() * esize(B.t), 0xff), hC(C.elems() * esize(C.t), 0xff),
      hD(D.elems() * esize(D.t), 0x5a);
  for (int b = 0; b < (c.broadcastA ? 1 : c.batch); ++b)
    for (int j = 0; j < A.cols; ++j)
      for (int i = 0; i < A.rows; ++i)
        putElem(hA, A.t, A.at(b, i, j), dyadic());
  for (int b = 0; b < c.batch; ++b)
    for (int j = 0; j < B.cols; ++j)
      for (int i = 0; i < B.rows; ++i)
        putElem(hB, B.t, B.at(b, i, j), dyadic());
  std::vector<unsigned char> &hCD = c.outOfPlace ? hC : hD;
  for (int b = 0; b < c.batch; ++b)
    for (int j = 0; j < C.cols; ++j)
      for (int i = 0; i < C.rows; ++i) {
        if (c.beta != 0)
          putElem(hCD, C.t, C.at(b, i, j), dyadic());
        else
          memset(&hCD[C.at(b, i, j) * esize(C.t)], 0xff, esize(C.t));
        if (c.outOfPlace) // D's elements: NaN (write only)
          memset(&hD[D.at(b, i, j) * esize(D.t)], 0xff, esize(D.t));
      }
  const int biasCount = c.biasType < 0 ? 0 : (c.biasPerBatch ? c.batch : 1) * c.m;
  const cudaDataType biasT = cudaDataType(c.biasType < 0 ? 0 : c.biasType);
  std::vector<unsigned char> hBias(size_t(biasCount) * esize(biasT));
  for (int i = 0; i < biasCount; ++i)
    putElem(hBias, biasT, size_t(i), dyadic());

  void *dA = dalloc(hA.size()), *dB = dalloc(hB.size()),
       *dD = dalloc(hD.size());
  void *dC = c.outOfPlace ? dalloc(hC.size()) : dD;
  void *dBias = biasCount ? dalloc(hBias.size()) : nullptr;
  upload(dA, hA);
  upload(dB, hB);
  upload(dD, hD);
  if (c.outOfPlace)
    upload(dC, hC);
  if (biasCount)
    upload(dBias, hBias);

  // Expected D (from the host images, before the call).
  std::vector<unsigned char> want = hD;
  for (int b = 0; b < c.batch; ++b)
    for (int j = 0; j < c.n; ++j)
      for (int i = 0; i < c.m; ++i) {
        long double acc = 0;
        for (int l = 0; l < c.k; ++l) {
          // op(A)(i, l) and op(B)(l, j) from their definitions.
          const int ab = c.broadcastA ? 0 : b;
          const double a = na ? getElem(hA, A.t, A.at(ab, i, l))
                              : getElem(hA, A.t, A.at(ab, l, i));
          const double bv = nb ? getElem(hB, B.t, B.at(b, l, j))
                               : getElem(hB, B.t, B.at(b, j, l));
          acc += (long double)a * bv;
        }
        long double v = (long double)c.alpha * acc;
        if (c.beta != 0)
          v += (long double)c.beta * getElem(hCD, C.t, C.at(b, i, j));
        if (biasCount)
          v += getElem(hBias, biasT, size_t((c.biasPerBatch ? b * c.m : 0) + i));
        const float f = float(v);
        if (D.t == CUDA_R_32F) {
          memcpy(&want[D.at(b, i, j) * 4], &f, 4);
        } else {
          const uint16_t h = refBf16(f);
          memcpy(&want[D.at(b, i, j) * 2], &h, 2);
        }
      }

  cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
  const float alpha = c.alpha, beta = c.beta;
  cublasHandle_t h = nullptr;
  cublasLtHandle_t lt = nullptr;
  if (c.api != kLt) {
    cublasCreate(&h);
    float *fA = static_cast<float *>(dA), *fB = static_cast<float *>(dB),
          *fC = static_cast<float *>(dD);
    switch (c.api) {
    case kSgemm:
      st = cublasSgemm(h, c.ta, c.tb, c.m, c.n, c.k, &alpha, fA, A.ld, fB,
                       B.ld, &beta, fC, C.ld);
      break;
    case kSgemmSB:
      st = cublasSgemmStridedBatched(h, c.ta, c.tb, c.m, c.n, c.k, &alpha, fA,
                                     A.ld, A.stride, fB, B.ld, B.stride, &beta,
                                     fC, C.ld, C.stride, c.batch);
      break;
    case kGemmEx:
      st = cublasGemmEx(h, c.ta, c.tb, c.m, c.n, c.k, &alpha, dA, c.at, A.ld,
                        dB, c.at, B.ld, &beta, dD, c.ct, C.ld,
                        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
      break;
    default:
      st = cublasGemmStridedBatchedEx(
          h, c.ta, c.tb, c.m, c.n, c.k, &alpha, dA, c.at, A.ld, A.stride, dB,
          c.at, B.ld, B.stride, &beta, dD, c.ct, C.ld, C.stride, c.batch,
          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP);
    }
  } else {
    cublasLtCreate(&lt);
    cublasLtMatmulDesc_t op;
    cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    const int32_t ta = c.ta, tb = c.tb;
    CHECK_ST(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA,
                                            &ta, sizeof ta),
             CUBLAS_STATUS_SUCCESS);
    CHECK_ST(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB,
                                            &tb, sizeof tb),
             CUBLAS_STATUS_SUCCESS);
    if (biasCount) {
      const uint32_t epi = CUBLASLT_EPILOGUE_BIAS;
      cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi,
                                     sizeof epi);
      cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                     &dBias, sizeof dBias);
      if (c.setBiasType) {
        const int32_t bt = c.biasType;
        cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                                       &bt, sizeof bt);
      }
      if (c.biasPerBatch) {
        const int64_t bs = c.m;
        cublasLtMatmulDescSetAttribute(
            op, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, &bs, sizeof bs);
      }
    }
    cublasLtMatrixLayout_t lA = ltLayout(A), lB = ltLayout(B), lD = ltLayout(D);
    cublasLtMatrixLayout_t lC = c.sameLayoutHandle ? lD : ltLayout(C);
    cublasLtMatmulPreference_t pref;
    cublasLtMatmulPreferenceCreate(&pref);
    const uint64_t ws = 1 << 20;
    cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    cublasLtMatmulHeuristicResult_t r[4] = {};
    int count = -1;
    st = cublasLtMatmulAlgoGetHeuristic(lt, op, lA, lB, lC, lD, pref, 4, r,
                                        &count);
    CHECK(st == CUBLAS_STATUS_SUCCESS && count == 1 &&
              r[0].state == CUBLAS_STATUS_SUCCESS && r[0].workspaceSize == 0,
          "%s: heuristic %s, count %d", name.c_str(), cublasGetStatusName(st),
          count);
    void *dWs = dalloc(ws);
    if (st == CUBLAS_STATUS_SUCCESS)
      st = cublasLtMatmul(lt, op, &alpha, dA, lA, dB, lB, &beta, dC, lC, dD, lD,
                          &r[0].algo, dWs, ws, nullptr);
    // Everything the call took is now free to change.
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(lA);
    cublasLtMatrixLayoutDestroy(lB);
    if (lC != lD)
      cublasLtMatrixLayoutDestroy(lC);
    cublasLtMatrixLayoutDestroy(lD);
    cublasLtMatmulDescDestroy(op);
  }
  CHECK(st == CUBLAS_STATUS_SUCCESS, "%s: %s", name.c_str(),
        cublasGetStatusName(st));
  cudaDeviceSynchronize();
  const std::vector<unsigned char> got = download(dD, hD.size());
  size_t bad = 0, firstBad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i] && !bad++)
      firstBad = i;
  CHECK(bad == 0, "%s: %zu bytes of D differ, first at byte %zu (got %02x, want "
                  "%02x)",
        name.c_str(), bad, firstBad, got[firstBad], want[firstBad]);
  CHECK(download(dA, hA.size()) == hA && download(dB, hB.size()) == hB,
        "%s: an input changed", name.c_str());
  if (c.outOfPlace)
    CHECK(download(dC, hC.size()) == hC, "%s: C changed", name.c_str());
  if (h)
    cublasDestroy(h);
  if (lt)
    cublasLtDestroy(lt);
  freeAll();
}

void testGemmMatrix() {
  // CUBLAS_OP_C is CUBLAS_OP_T for real types.
  const cublasOperation_t ops[3] = {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C};
  const cudaDataType types[3][2] = {{CUDA_R_32F, CUDA_R_32F},
                                    {CUDA_R_16BF, CUDA_R_16BF},
                                    {CUDA_R_16BF, CUDA_R_32F}};
  for (int api = kSgemm; api <= kLt; ++api)
    for (cublasOperation_t ta : ops)
      for (cublasOperation_t tb : ops)
        for (int ty = 0; ty < 3; ++ty) {
          if ((api == kSgemm || api == kSgemmSB) && ty > 0)
            continue;
          const bool batched = api == kSgemmSB || api == kGemmSBEx || api == kLt;
          Case c{Api(api), ta, tb, 3, 5, 4};
          c.at = types[ty][0];
          c.ct = types[ty][1];
          c.padA = 2;
          c.padB = 1;
          c.padC = 3;
          c.padD = 1;
          c.batch = batched ? 3 : 1;
          c.gapA = 3;
          c.gapB = 1;
          c.gapC = 2;
          c.gapD = 5;
          c.alpha = 0.75f;
          c.beta = 0.5f;
          runCase(c);
          // beta == 0 with NaN in C; other scalars; no padding.
          c.padA = c.padB = c.padC = c.padD = 0;
          c.gapA = c.gapB = c.gapC = c.gapD = 0;
          c.beta = 0;
          c.alpha = -1.5f;
          runCase(c);
          // Larger, bf16 rounding exercised on many elements.
          Case d{Api(api), ta, tb, 37, 29, 67};
          d.at = c.at;
          d.ct = c.ct;
          d.padA = 1;
          d.padB = 4;
          d.padC = 2;
          d.batch = batched ? 2 : 1;
          d.alpha = 1;
          d.beta = -2;
          runCase(d);
          if (api == kLt) { // out of place, C and D with different ld
            d.outOfPlace = true;
            d.padD = 5;
            d.gapD = 7;
            runCase(d);
          }
        }
  // Edges: k == 0 (D = beta C), m == 1 / n == 1, a broadcast A (stride 0).
  for (int api = kSgemm; api <= kLt; ++api) {
    Case c{Api(api), CUBLAS_OP_T, CUBLAS_OP_N, 4, 3, 0};
    c.beta = 0.5f;
    c.padC = 1;
    runCase(c);
    Case e{Api(api), CUBLAS_OP_N, CUBLAS_OP_T, 1, 7, 5};
    e.beta = 1;
    e.padA = 2;
    runCase(e);
    e.m = 6;
    e.n = 1;
    runCase(e);
    if (api == kSgemmSB || api == kGemmSBEx || api == kLt) {
      Case b{Api(api), CUBLAS_OP_N, CUBLAS_OP_N, 4, 3, 5};
      b.batch = 4;
      b.broadcastA = true;
      b.beta = 0.25f;
      runCase(b);
    }
  }
}

void testLtBias() {
  const cublasOperation_t ops[2] = {CUBLAS_OP_N, CUBLAS_OP_T};
  for (cublasOperation_t ta : ops)
    for (cublasOperation_t tb : ops)
      for (int ty = 0; ty < 3; ++ty) {
        Case c{kLt, ta, tb, 6, 4, 5};
        c.at = ty == 0 ? CUDA_R_32F : CUDA_R_16BF;
        c.ct = ty == 1 ? CUDA_R_16BF : CUDA_R_32F;
        c.biasType = c.ct; // "the same type as the elements of ... D"
        c.padA = 1;
        c.padC = 2;
        c.alpha = 1.25f;
        c.beta = 0.5f;
        runCase(c); // in place, Cdesc a separate equal layout
        c.sameLayoutHandle = true;
        c.beta = 0;
        c.setBiasType = false; // default: D's type
        runCase(c);
        c.sameLayoutHandle = false;
        c.outOfPlace = true;
        c.padD = 3;
        c.beta = -1;
        c.batch = 3;
        c.gapA = 2;
        c.gapD = 1;
        c.biasPerBatch = ty == 2;
        runCase(c);
      }
}

/// The bits D holds after a 1 x 1 GEMM with k = 3: sum of a[l] b[l].
uint32_t tinyGemm(Api api, cudaDataType at, cudaDataType ct, const double a[3],
                  const double b[3], int biasType = -1, double bias = 0,
                  uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT) {
  std::vector<unsigned char> hA(3 * esize(at)), hB(3 * esize(at)),
      hD(esize(ct), 0xff), hBias(4);
  for (int l = 0; l < 3; ++l) {
    putElem(hA, at, l, a[l]);
    putElem(hB, at, l, b[l]);
  }
  void *dA = dalloc(hA.size()), *dB = dalloc(hB.size()),
       *dD = dalloc(hD.size()), *dBias = dalloc(4);
  upload(dA, hA);
  upload(dB, hB);
  if (biasType >= 0) {
    putElem(hBias, cudaDataType(biasType), 0, bias);
    upload(dBias, hBias);
  }
  const float one = 1, zero = 0;
  cublasStatus_t st;
  if (api == kGemmEx) {
    cublasHandle_t h;
    cublasCreate(&h);
    // A is 1 x 3 (lda 1), B is 3 x 1.
    st = cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 3, &one, dA, at, 1,
                      dB, at, 3, &zero, dD, ct, 1, CUBLAS_COMPUTE_32F,
                      CUBLAS_GEMM_DEFAULT);
    cublasDestroy(h);
  } else {
    cublasLtHandle_t lt;
    cublasLtCreate(&lt);
    cublasLtMatmulDesc_t op;
    cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                   sizeof epilogue);
    if (biasType >= 0) {
      const uint32_t epi = CUBLASLT_EPILOGUE_BIAS;
      const int32_t bt = biasType;
      cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi,
                                     sizeof epi);
      cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                     &dBias, sizeof dBias);
      cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                                     &bt, sizeof bt);
    }
    cublasLtMatrixLayout_t lA, lB, lD;
    cublasLtMatrixLayoutCreate(&lA, at, 1, 3, 1);
    cublasLtMatrixLayoutCreate(&lB, at, 3, 1, 3);
    cublasLtMatrixLayoutCreate(&lD, ct, 1, 1, 1);
    st = cublasLtMatmul(lt, op, &one, dA, lA, dB, lB, &zero, dD, lD, dD, lD,
                        nullptr, nullptr, 0, nullptr);
    cublasLtMatrixLayoutDestroy(lA);
    cublasLtMatrixLayoutDestroy(lB);
    cublasLtMatrixLayoutDestroy(lD);
    cublasLtMatmulDescDestroy(op);
    cublasLtDestroy(lt);
  }
  CHECK(st == CUBLAS_STATUS_SUCCESS, "tiny gemm: %s", cublasGetStatusName(st));
  cudaDeviceSynchronize();
  const std::vector<unsigned char> got = download(dD, hD.size());
  freeAll();
  uint32_t bits = 0;
  memcpy(&bits, got.data(), got.size());
  return bits;
}

void testRounding() {
  const double e8 = std::ldexp(1.0, -8), e7 = std::ldexp(1.0, -7);
  const double ones[3] = {1, 1, 1};
  struct {
    double b[3];
    uint16_t want;
    const char *what;
  } bf[] = {
      {{1, e8, 0}, 0x3f80, "1 + 2^-8: tie, to even 1.0"},
      {{1 + e7, e8, 0}, 0x3f82, "1 + 2^-7 + 2^-8: tie, to even 1 + 2^-6"},
      {{1, e8, std::ldexp(1.0, -20)}, 0x3f81, "just above the tie: up"},
      {{1, e8, std::ldexp(1.0, -30)}, 0x3f80,
       "1 + 2^-8 + 2^-30: f32 rounds to the tie first, then to even"},
      {{-1, -e8, 0}, 0xbf80, "negative tie to even"},
      {{-1 - e7, -e8, 0}, 0xbf82, "negative tie to even (up in magnitude)"},
      {{1, -e8 / 2, 0}, 0x3f80, "1 - 2^-9: tie below 1.0, to even 1.0"},
      {{1, -3 * e8 / 2, 0}, 0x3f7e, "1 - 3 2^-9: tie, to even 0x3f7e"},
  };
  for (Api api : {kGemmEx, kLt})
    for (const auto &t : bf) {
      const uint32_t got = tinyGemm(api, CUDA_R_16BF, CUDA_R_16BF, ones, t.b);
      CHECK(got == t.want, "%s bf16 %s: got %04x want %04x", apiName[api],
            t.what, got, t.want);
      CHECK(refBf16(float(t.b[0] + t.b[1] + t.b[2])) == t.want ||
                std::string(t.what).find("f32 rounds") != std::string::npos,
            "reference rounding disagrees on %s", t.what);
    }
  // f32 output: one rounding from the exact sum.
  const double e24 = std::ldexp(1.0, -24), e23 = std::ldexp(1.0, -23);
  struct {
    double b[3];
    float want;
    const char *what;
  } f32[] = {
      {{1, e24, 0}, 1.0f, "1 + 2^-24: tie, to even 1.0"},
      {{1 + e23, e24, 0}, float(1 + 2 * e23), "1 + 2^-23 + 2^-24: to even"},
      {{1, e24, std::ldexp(1.0, -40)}, float(1 + e23), "above the tie: up"},
  };
  for (Api api : {kGemmEx, kLt})
    for (const auto &t : f32) {
      const uint32_t got = tinyGemm(api, CUDA_R_32F, CUDA_R_32F, ones, t.b);
      CHECK(got == floatToBits(t.want), "%s f32 %s: got %08x want %08x",
            apiName[api], t.what, got, floatToBits(t.want));
    }
  // The bias joins the sum before the rounding to D's type: 1 + 2^-8 alone
  // would round to 1.0, with a bias of 2^-8 the sum is 1 + 2^-7 exactly.
  const double b1[3] = {1, e8, 0};
  uint32_t got = tinyGemm(kLt, CUDA_R_16BF, CUDA_R_16BF, ones, b1, CUDA_R_16BF, e8);
  CHECK(got == 0x3f81, "bias before rounding: got %04x want 3f81", got);
  const double b2[3] = {1, e24, 0};
  got = tinyGemm(kLt, CUDA_R_32F, CUDA_R_32F, ones, b2, CUDA_R_32F, e24);
  CHECK(got == floatToBits(float(1 + e23)), "f32 bias before rounding: %08x",
        got);
  // NaN stays NaN in bf16.
  const double nanb[3] = {NAN, 1, 1};
  got = tinyGemm(kGemmEx, CUDA_R_32F, CUDA_R_32F, ones, nanb);
  CHECK(std::isnan(bitsToFloat(got)), "NaN input: %08x", got);
}

// --- GELU epilogues ----------------------------------------------------------

/// The GELU epilogues under test (cublasLt.h).
struct GeluEpi {
  uint32_t epi;
  bool bias, aux, grad; ///< adds a bias; has an aux matrix; is DGELU
  const char *name;
};
const GeluEpi geluEpis[] = {
    {CUBLASLT_EPILOGUE_GELU, false, false, false, "GELU"},
    {CUBLASLT_EPILOGUE_GELU_AUX, false, true, false, "GELU_AUX"},
    {CUBLASLT_EPILOGUE_GELU_BIAS, true, false, false, "GELU_BIAS"},
    {CUBLASLT_EPILOGUE_GELU_AUX_BIAS, true, true, false, "GELU_AUX_BIAS"},
    {CUBLASLT_EPILOGUE_DGELU, false, true, true, "DGELU"},
};

/// GELU (tanh approximation) and its derivative from their definitions,
/// in long double.
long double refGelu(long double x) {
  const long double c = std::sqrt(2.0L / 3.14159265358979323846L);
  return 0.5L * x * (1.0L + std::tanh(c * (x + 0.044715L * x * x * x)));
}
long double refGeluGrad(long double x) {
  const long double c = std::sqrt(2.0L / 3.14159265358979323846L);
  const long double t = std::tanh(c * (x + 0.044715L * x * x * x));
  return 0.5L * (1.0L + t) +
         0.5L * x * (1.0L - t * t) * c * (1.0L + 3.0L * 0.044715L * x * x);
}

/// Sets a descriptor attribute of type T, expecting success.
template <class T>
void setAttr(cublasLtMatmulDesc_t op, cublasLtMatmulDescAttributes_t attr,
             const T &v) {
  CHECK_ST(cublasLtMatmulDescSetAttribute(op, attr, &v, sizeof v),
           CUBLAS_STATUS_SUCCESS);
}

/// One GELU-epilogue matmul: D (m x n, ld m + 2, batches 3 elements apart)
/// of type ct from bf16 A, B (dyadic: exact sums), a dyadic bias of D's
/// type, and the aux matrix (ld 16, batches 8 elements apart; for DGELU
/// dyadic GELU inputs in [-6, 6]). The aux output must hold the f32 sum
/// (+ bias) rounded to its type bit for bit; D must be within the f32
/// evaluation error of the long double GELU / GELU' of that sum, plus its
/// own rounding (one bf16 step, or 2^-20 relative in f32; GELU's negative
/// tail: 2^-20 of the sum's size absolute, where the tanh form cancels).
/// Gaps of D and aux must stay untouched, the inputs unchanged.
void runGeluCase(const GeluEpi &e, cublasOperation_t ta, cudaDataType ct,
                 int batch) {
  char name[128];
  snprintf(name, sizeof name, "%s %c %s batch %d", e.name, "NTC"[ta],
           ct == CUDA_R_32F ? "f32" : "bf16", batch);
  const int m = 9, n = 5, k = 6;
  const bool na = ta == CUBLAS_OP_N;
  Mat A{CUDA_R_16BF, na ? m : k, na ? k : m, 0, batch, 0};
  A.ld = A.rows;
  A.stride = (long long)A.span();
  Mat B{CUDA_R_16BF, k, n, k, batch, 0};
  B.stride = (long long)B.span();
  Mat D{ct, m, n, m + 2, batch, 0};
  D.stride = (long long)D.span() + 3;
  Mat X{ct, m, n, 16, batch, 0}; // the aux matrix
  X.stride = (long long)X.span() + 8 + (16 - X.span() % 8) % 8;
  std::vector<unsigned char> hA(A.elems() * 2), hB(B.elems() * 2),
      hD(D.elems() * esize(ct), 0x5a), hX(X.elems() * esize(ct), 0x5a),
      hBias(size_t(m) * esize(ct));
  for (size_t i = 0; i < A.elems(); ++i)
    putElem(hA, A.t, i, dyadic());
  for (size_t i = 0; i < B.elems(); ++i)
    putElem(hB, B.t, i, dyadic());
  for (int i = 0; i < m; ++i)
    putElem(hBias, ct, size_t(i), dyadic());
  for (int b = 0; b < batch; ++b)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        memset(&hD[D.at(b, i, j) * esize(ct)], 0xff, esize(ct));
        if (e.grad)
          putElem(hX, ct, X.at(b, i, j), double(int(rng() % 49) - 24) / 4.0);
        else
          memset(&hX[X.at(b, i, j) * esize(ct)], 0xff, esize(ct));
      }
  void *dA = dalloc(hA.size()), *dB = dalloc(hB.size()),
       *dD = dalloc(hD.size()), *dX = dalloc(hX.size()),
       *dBias = dalloc(hBias.size());
  upload(dA, hA);
  upload(dB, hB);
  upload(dD, hD);
  upload(dX, hX);
  upload(dBias, hBias);

  cublasLtHandle_t lt;
  cublasLtCreate(&lt);
  cublasLtMatmulDesc_t op;
  cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  setAttr(op, CUBLASLT_MATMUL_DESC_TRANSA, int32_t(ta));
  setAttr(op, CUBLASLT_MATMUL_DESC_EPILOGUE, e.epi);
  if (e.bias)
    setAttr(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, (const void *)dBias);
  if (e.aux) {
    setAttr(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, (const void *)dX);
    setAttr(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, int64_t(X.ld));
    setAttr(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, int32_t(ct));
    if (batch > 1)
      setAttr(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE,
              int64_t(X.stride));
  }
  cublasLtMatrixLayout_t lA = ltLayout(A), lB = ltLayout(B), lD = ltLayout(D);
  cublasLtMatmulPreference_t pref;
  cublasLtMatmulPreferenceCreate(&pref);
  cublasLtMatmulHeuristicResult_t r = {};
  int count = 0;
  cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(lt, op, lA, lB, lD, lD,
                                                     pref, 1, &r, &count);
  const float one = 1, zero = 0;
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasLtMatmul(lt, op, &one, dA, lA, dB, lB, &zero, dD, lD, dD, lD,
                        &r.algo, nullptr, 0, nullptr);
  CHECK(st == CUBLAS_STATUS_SUCCESS, "%s: %s", name, cublasGetStatusName(st));
  cudaDeviceSynchronize();
  const std::vector<unsigned char> gotD = download(dD, hD.size()),
                                   gotX = download(dX, hX.size());
  std::vector<unsigned char> wantX = hX;
  int bad = 0;
  for (int b = 0; b < batch; ++b)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        long double v = 0;
        for (int l = 0; l < k; ++l)
          v += (long double)getElem(hA, A.t,
                                    na ? A.at(b, i, l) : A.at(b, l, i)) *
               getElem(hB, B.t, B.at(b, l, j));
        if (e.bias)
          v += getElem(hBias, ct, size_t(i));
        const long double x = getElem(hX, ct, X.at(b, i, j));
        const long double want = e.grad ? v * refGeluGrad(x) : refGelu(v);
        const long double scale =
            e.grad ? std::fabs(v) * (1 + x * x) : std::fabs(v);
        const double rel =
            ct == CUDA_R_32F ? std::ldexp(1.0, -20) : std::ldexp(1.0, -8);
        const double got = getElem(gotD, ct, D.at(b, i, j));
        if (std::fabs(got - want) >
                rel * std::fabs(want) + std::ldexp(1.0, -20) * scale &&
            !bad++)
          CHECK(false, "%s: D(%d, %d, %d) = %.9g, want %.9Lg (sum %.9Lg)", name,
                b, i, j, got, want, v);
        if (e.aux && !e.grad)
          putElem(wantX, ct, X.at(b, i, j), double(v));
        memcpy(&hD[D.at(b, i, j) * esize(ct)], &gotD[D.at(b, i, j) * esize(ct)],
               esize(ct));
      }
  CHECK(bad == 0, "%s: %d elements of D off", name, bad);
  CHECK(gotD == hD, "%s: D's gaps were written", name);
  CHECK(gotX == wantX, "%s: the aux matrix differs (values or gaps)", name);
  CHECK(download(dA, hA.size()) == hA && download(dB, hB.size()) == hB &&
            download(dBias, hBias.size()) == hBias,
        "%s: an input changed", name);
  cublasLtMatmulPreferenceDestroy(pref);
  for (cublasLtMatrixLayout_t l : {lA, lB, lD})
    cublasLtMatrixLayoutDestroy(l);
  cublasLtMatmulDescDestroy(op);
  cublasLtDestroy(lt);
  freeAll();
}

void testLtGelu() {
  for (const GeluEpi &e : geluEpis)
    for (cublasOperation_t ta : {CUBLAS_OP_N, CUBLAS_OP_T})
      for (cudaDataType ct : {CUDA_R_16BF, CUDA_R_32F})
        for (int batch : {1, 2})
          runGeluCase(e, ta, ct, batch);
  // GELU on the f32 result: 1 + 2^-8 + 2^-9 rounds to bf16 1 + 2^-7, but
  // gelu(1 + 2^-8 + 2^-9) = 0.8457... is taken from the unrounded sum.
  const double e8 = std::ldexp(1.0, -8), e9 = std::ldexp(1.0, -9);
  const double ones[3] = {1, 1, 1}, b[3] = {1, e8, e9};
  const uint32_t got = tinyGemm(kLt, CUDA_R_16BF, CUDA_R_16BF, ones, b, -1, 0,
                                CUBLASLT_EPILOGUE_GELU);
  const uint16_t want = refBf16(float(refGelu(1 + e8 + e9)));
  CHECK(got == want, "GELU of the f32 sum: got %04x want %04x", got, want);
}

/// The documented rules of the aux matrix and GELU epilogues' pointers.
void testLtGeluInvalid() {
  const auto INV = CUBLAS_STATUS_INVALID_VALUE, OK = CUBLAS_STATUS_SUCCESS;
  const auto BF = CUDA_R_16BF;
  cublasLtHandle_t lt;
  cublasLtCreate(&lt);
  cublasLtMatmulPreference_t pref;
  cublasLtMatmulPreferenceCreate(&pref);
  // D 9 x 4 = A (9 x 5) B (5 x 4), bf16.
  cublasLtMatrixLayout_t lA, lB, lD;
  cublasLtMatrixLayoutCreate(&lA, BF, 9, 5, 9);
  cublasLtMatrixLayoutCreate(&lB, BF, 5, 4, 5);
  cublasLtMatrixLayoutCreate(&lD, BF, 9, 4, 9);
  char *dA = static_cast<char *>(dalloc(512)),
       *dB = static_cast<char *>(dalloc(512)),
       *dD = static_cast<char *>(dalloc(512)),
       *dX = static_cast<char *>(dalloc(512)),
       *dBias = static_cast<char *>(dalloc(512));
  for (char *p : {dA, dB, dX, dBias})
    cudaMemset(p, 0, 512);
  cublasLtMatmulHeuristicResult_t r = {};
  int count = 0;
  const float one = 1, zero = 0;
  auto heuristic = [&](cublasLtMatmulDesc_t op) {
    return cublasLtMatmulAlgoGetHeuristic(lt, op, lA, lB, lD, lD, pref, 1, &r,
                                          &count);
  };
  auto mm = [&](cublasLtMatmulDesc_t op, const cublasLtMatmulAlgo_t *algo) {
    return cublasLtMatmul(lt, op, &one, dA, lA, dB, lB, &zero, dD, lD, dD, lD,
                          algo, nullptr, 0, nullptr);
  };
  for (const GeluEpi &e : geluEpis) {
    cublasLtMatmulDesc_t op;
    cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    setAttr(op, CUBLASLT_MATMUL_DESC_EPILOGUE, e.epi);
    setAttr(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, (const void *)dBias);
    if (e.aux) {
      // The aux ld must be set, >= the rows of D and divisible by 8.
      CHECK_ST(heuristic(op), INV);
      setAttr(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, int64_t(12));
      CHECK_ST(heuristic(op), INV);
      setAttr(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, int64_t(8));
      CHECK_ST(heuristic(op), INV);
      setAttr(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, int64_t(16));
      // The aux type is D's.
      setAttr(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE,
              int32_t(CUDA_R_32F));
      CHECK_ST(heuristic(op), INV);
      setAttr(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, int32_t(BF));
      // No aux pointer at the call.
      CHECK_ST(heuristic(op), OK);
      CHECK_ST(mm(op, nullptr), INV);
      // The aux pointer's alignment at heuristic time is a promise.
      setAttr(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, (const void *)dX);
      CHECK_ST(heuristic(op), OK);
      const cublasLtMatmulAlgo_t algo = r.algo;
      setAttr(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER,
              (const void *)(dX + 2));
      CHECK_ST(mm(op, &algo), INV);
      setAttr(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, (const void *)dX);
      CHECK_ST(mm(op, &algo), OK);
      // The aux matrix must not overlap D (DGELU: an input; GELU: an
      // output), nor, as an output, an input.
      setAttr(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, (const void *)dD);
      CHECK(dies([&] { mm(op, nullptr); }), "%s: aux == D accepted", e.name);
      setAttr(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, (const void *)dA);
      CHECK(dies([&] { mm(op, nullptr); }) == !e.grad, "%s: aux == A %s",
            e.name, e.grad ? "rejected" : "accepted");
    } else {
      CHECK_ST(heuristic(op), OK);
      CHECK_ST(mm(op, &r.algo), OK);
    }
    if (e.bias) { // the bias epilogues need their bias pointer
      setAttr(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, (const void *)nullptr);
      CHECK_ST(mm(op, nullptr), INV);
    }
    cublasLtMatmulDescDestroy(op);
  }
  cudaDeviceSynchronize();
  for (cublasLtMatrixLayout_t l : {lA, lB, lD})
    cublasLtMatrixLayoutDestroy(l);
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtDestroy(lt);
  freeAll();
}

/// Arbitrary (non-dyadic) values: f32 and bf16 inputs vs a long double
/// reference, within the rounding of the output plus the f32 accumulation
/// bound of the real library.
void testArbitraryValues() {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const int m = 33, n = 20, k = 150;
  for (cudaDataType at : {CUDA_R_32F, CUDA_R_16BF}) {
    std::vector<unsigned char> hA(size_t(m) * k * esize(at)),
        hB(size_t(k) * n * esize(at));
    for (int i = 0; i < m * k; ++i)
      putElem(hA, at, i, at == CUDA_R_32F ? u(rng) : bfValue(refBf16(u(rng))));
    for (int i = 0; i < k * n; ++i)
      putElem(hB, at, i, at == CUDA_R_32F ? u(rng) : bfValue(refBf16(u(rng))));
    void *dA = dalloc(hA.size()), *dB = dalloc(hB.size()),
         *dD = dalloc(size_t(m) * n * 4);
    upload(dA, hA);
    upload(dB, hB);
    cublasHandle_t h;
    cublasCreate(&h);
    const float alpha = 0.3f, beta = 0;
    // D = alpha A^T B with A stored k x m.
    CHECK_ST(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, dA, at,
                          k, dB, at, k, &beta, dD, CUDA_R_32F, m,
                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
             CUBLAS_STATUS_SUCCESS);
    cudaDeviceSynchronize();
    const std::vector<unsigned char> got = download(dD, size_t(m) * n * 4);
    double worst = 0;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        long double acc = 0, mag = 0;
        for (int l = 0; l < k; ++l) {
          const long double p = (long double)getElem(hA, at, size_t(l + i * k)) *
                                getElem(hB, at, size_t(l + j * k));
          acc += p;
          mag += std::fabs((double)p);
        }
        const double want = double(alpha * acc);
        const double err =
            std::fabs(getElem(got, CUDA_R_32F, size_t(i + j * m)) - want) /
            double(std::fabs(alpha) * mag + 1e-30L);
        worst = std::max(worst, err);
      }
    CHECK(worst < 1e-6, "arbitrary values %s: relative error %g",
          at == CUDA_R_32F ? "f32" : "bf16", worst);
    cublasDestroy(h);
    freeAll();
  }
}

/// Documented error statuses; a failed call must queue nothing.
void testInvalidArguments() {
  cublasHandle_t h;
  CHECK_ST(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
  float *A = static_cast<float *>(dalloc(64 * 4)),
        *B = static_cast<float *>(dalloc(64 * 4)),
        *C = static_cast<float *>(dalloc(64 * 4));
  cudaMemset(C, 0x5a, 64 * 4);
  const std::vector<unsigned char> c0 = download(C, 64 * 4);
  const float one = 1, zero = 0;
  const auto N = CUBLAS_OP_N, T = CUBLAS_OP_T;
  const auto INV = CUBLAS_STATUS_INVALID_VALUE, NS = CUBLAS_STATUS_NOT_SUPPORTED,
             OK = CUBLAS_STATUS_SUCCESS;

  CHECK_ST(cublasSgemm(nullptr, N, N, 2, 2, 2, &one, A, 2, B, 2, &zero, C, 2),
           CUBLAS_STATUS_NOT_INITIALIZED);
  CHECK_ST(cublasSgemm(h, N, N, -1, 2, 2, &one, A, 2, B, 2, &zero, C, 2), INV);
  CHECK_ST(cublasSgemm(h, N, N, 2, -1, 2, &one, A, 2, B, 2, &zero, C, 2), INV);
  CHECK_ST(cublasSgemm(h, N, N, 2, 2, -1, &one, A, 2, B, 2, &zero, C, 2), INV);
  CHECK_ST(cublasSgemm(h, cublasOperation_t(3), N, 2, 2, 2, &one, A, 2, B, 2,
                       &zero, C, 2),
           INV);
  CHECK_ST(cublasSgemm(h, N, cublasOperation_t(7), 2, 2, 2, &one, A, 2, B, 2,
                       &zero, C, 2),
           INV);
  // lda >= max(1, m) for op N, max(1, k) otherwise; likewise ldb; ldc.
  CHECK_ST(cublasSgemm(h, N, N, 4, 2, 6, &one, A, 3, B, 6, &zero, C, 4), INV);
  CHECK_ST(cublasSgemm(h, T, N, 4, 2, 6, &one, A, 4, B, 6, &zero, C, 4), INV);
  CHECK_ST(cublasSgemm(h, N, N, 4, 2, 6, &one, A, 4, B, 5, &zero, C, 4), INV);
  CHECK_ST(cublasSgemm(h, N, T, 4, 2, 6, &one, A, 4, B, 1, &zero, C, 4), INV);
  CHECK_ST(cublasSgemm(h, N, N, 4, 2, 6, &one, A, 4, B, 6, &zero, C, 3), INV);
  CHECK_ST(cublasSgemm(h, N, N, 0, 2, 2, &one, A, 0, B, 2, &zero, C, 1), INV);
  CHECK_ST(cublasSgemm(h, N, N, 2, 2, 2, nullptr, A, 2, B, 2, &zero, C, 2),
           INV);
  CHECK_ST(cublasSgemm(h, N, N, 2, 2, 2, &one, A, 2, B, 2, nullptr, C, 2), INV);
  // Valid but empty: nothing happens.
  CHECK_ST(cublasSgemm(h, N, N, 0, 2, 2, &one, A, 1, B, 2, &zero, C, 1), OK);
  CHECK_ST(cublasSgemmStridedBatched(h, N, N, 2, 2, 2, &one, A, 2, 4, B, 2, 4,
                                     &zero, C, 2, 4, 0),
           OK);
  CHECK_ST(cublasSgemmStridedBatched(h, N, N, 2, 2, 2, &one, A, 2, 4, B, 2, 4,
                                     &zero, C, 2, 4, -1),
           INV);
  // cublasGemmEx type table (compute 32F): A = B; f32 -> f32; bf16 -> bf16
  // or f32; FAST compute types with f32 only.
  auto ex = [&](cudaDataType at, cudaDataType bt, cudaDataType ct,
                cublasComputeType_t comp, cublasGemmAlgo_t algo) {
    return cublasGemmEx(h, N, N, 2, 2, 2, &one, A, at, 2, B, bt, 2, &zero, C,
                        ct, 2, comp, algo);
  };
  const auto F = CUDA_R_32F, BF = CUDA_R_16BF;
  const auto DEF = CUBLAS_GEMM_DEFAULT;
  CHECK_ST(ex(F, BF, F, CUBLAS_COMPUTE_32F, DEF), NS);
  CHECK_ST(ex(BF, F, F, CUBLAS_COMPUTE_32F, DEF), NS);
  CHECK_ST(ex(F, F, BF, CUBLAS_COMPUTE_32F, DEF), NS);
  CHECK_ST(ex(CUDA_R_16F, CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, DEF), NS);
  CHECK_ST(ex(CUDA_R_64F, CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F, DEF), NS);
  CHECK_ST(ex(BF, BF, BF, CUBLAS_COMPUTE_32F_FAST_16BF, DEF), NS);
  CHECK_ST(ex(BF, BF, F, CUBLAS_COMPUTE_32F_FAST_TF32, DEF), NS);
  CHECK_ST(ex(BF, BF, BF, CUBLAS_COMPUTE_16F, DEF), NS);
  CHECK_ST(ex(F, F, F, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_AUTOTUNE), NS);
  CHECK_ST(ex(F, F, F, CUBLAS_COMPUTE_32F, cublasGemmAlgo_t(42)), NS);
  cudaDeviceSynchronize();
  CHECK(download(C, 64 * 4) == c0, "a failed call wrote C");
  // Supported: these write C.
  CHECK_ST(ex(F, F, F, CUBLAS_COMPUTE_32F_FAST_TF32, DEF), OK);
  CHECK_ST(ex(F, F, F, CUBLAS_COMPUTE_32F_FAST_16BF, CUBLAS_GEMM_ALGO3), OK);
  CHECK_ST(ex(BF, BF, BF, CUBLAS_COMPUTE_32F_PEDANTIC,
              CUBLAS_GEMM_DEFAULT_TENSOR_OP),
           OK);
  // The C++ overload taking a cudaDataType compute type (pre-CUDA 11 form).
  CHECK_ST(cublasGemmEx(h, N, N, 2, 2, 2, &one, A, F, 2, B, F, 2, &zero, C, F,
                        2, CUDA_R_32F, DEF),
           OK);
  CHECK_ST(cublasGemmEx(h, N, N, 2, 2, 2, &one, A, BF, 2, B, BF, 2, &zero, C,
                        BF, 2, CUDA_R_16BF, DEF),
           NS);
  // Workspace: 256-byte aligned.
  char *ws = static_cast<char *>(dalloc(4096));
  CHECK_ST(cublasSetWorkspace(h, ws + 128, 1024), INV);
  CHECK_ST(cublasSetWorkspace(h, ws, 4096), OK);
  CHECK_ST(cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH), OK);
  cublasMath_t mm;
  CHECK(cublasGetMathMode(h, &mm) == OK && mm == CUBLAS_TF32_TENSOR_OP_MATH,
        "math mode");
  cudaStream_t s = reinterpret_cast<cudaStream_t>(1);
  CHECK(cublasGetStream(h, &s) == OK && s == nullptr, "default stream");
  CHECK_ST(cublasDestroy(h), OK);
  CHECK_ST(cublasSgemm(h, N, N, 2, 2, 2, &one, A, 2, B, 2, &zero, C, 2),
           CUBLAS_STATUS_NOT_INITIALIZED);
  CHECK_ST(cublasDestroy(h), CUBLAS_STATUS_NOT_INITIALIZED);
  freeAll();
}

/// cuBLASLt: attribute sizes, heuristic validation, alignment promises,
/// in-place rules, algorithm / problem agreement.
void testLtInvalid() {
  const auto INV = CUBLAS_STATUS_INVALID_VALUE, NS = CUBLAS_STATUS_NOT_SUPPORTED,
             OK = CUBLAS_STATUS_SUCCESS;
  cublasLtHandle_t lt;
  CHECK_ST(cublasLtCreate(&lt), OK);
  cublasLtMatmulDesc_t op;
  CHECK_ST(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F), OK);
  // Attribute value sizes must match the documented types.
  const int32_t t32 = CUBLAS_OP_T;
  const int64_t t64 = CUBLAS_OP_T;
  CHECK_ST(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &t64,
                                          sizeof t64),
           INV);
  CHECK_ST(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA,
                                          nullptr, 4),
           INV);
  const uint64_t epi64 = CUBLASLT_EPILOGUE_BIAS;
  CHECK_ST(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                          &epi64, sizeof epi64),
           INV);
  const int32_t p32 = 0;
  CHECK_ST(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                          &p32, sizeof p32),
           INV);
  cublasLtMatmulPreference_t pref;
  CHECK_ST(cublasLtMatmulPreferenceCreate(&pref), OK);
  const uint32_t ws32 = 1024;
  CHECK_ST(cublasLtMatmulPreferenceSetAttribute(
               pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws32,
               sizeof ws32),
           INV);
  const uint64_t al64 = 16;
  CHECK_ST(cublasLtMatmulPreferenceSetAttribute(
               pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al64,
               sizeof al64),
           INV);
  const uint32_t mask = CUBLASLT_REDUCTION_SCHEME_INPLACE |
                        CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
  CHECK_ST(cublasLtMatmulPreferenceSetAttribute(
               pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &mask,
               sizeof mask),
           OK);

  // D (6 x 4) = op(A) (6 x 5) op(B) (5 x 4), bf16, A transposed: A is 5 x 6.
  CHECK_ST(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &t32,
                                          sizeof t32),
           OK);
  const auto BF = CUDA_R_16BF;
  cublasLtMatrixLayout_t lA, lB, lD, lBad, lD2, lF;
  cublasLtMatrixLayoutCreate(&lA, BF, 5, 6, 5);
  cublasLtMatrixLayoutCreate(&lB, BF, 5, 4, 5);
  cublasLtMatrixLayoutCreate(&lD, BF, 6, 4, 6);
  cublasLtMatrixLayoutCreate(&lBad, BF, 6, 5, 6); // A untransposed shape
  cublasLtMatrixLayoutCreate(&lD2, BF, 6, 4, 8);  // D with another ld
  cublasLtMatrixLayoutCreate(&lF, CUDA_R_32F, 6, 4, 6);
  cublasLtMatmulHeuristicResult_t r[2] = {};
  int count = -1;
  CHECK_ST(cublasLtMatmulAlgoGetHeuristic(lt, op, lA, lB, lD, lD, pref, 0, r,
                                          &count),
           INV);
  CHECK_ST(cublasLtMatmulAlgoGetHeuristic(lt, op, lBad, lB, lD, lD, pref, 2, r,
                                          &count),
           INV);
  CHECK(count == 0, "count %d after a failed heuristic", count);
  CHECK_ST(cublasLtMatmulAlgoGetHeuristic(lt, op, lA, lD, lD, lD, pref, 2, r,
                                          &count),
           INV); // B's rows != k
  CHECK_ST(cublasLtMatmulAlgoGetHeuristic(lt, op, lA, lB, lF, lD, pref, 2, r,
                                          &count),
           NS); // C type != D type
  CHECK_ST(cublasLtMatmulAlgoGetHeuristic(lt, op, lA, lF, lD, lD, pref, 2, r,
                                          &count),
           NS); // A bf16, B f32
  cublasLtMatrixLayout_t lShortLd;
  cublasLtMatrixLayoutCreate(&lShortLd, BF, 5, 6, 4);
  CHECK_ST(cublasLtMatmulAlgoGetHeuristic(lt, op, lShortLd, lB, lD, lD, pref,
                                          2, r, &count),
           INV); // ld < rows
  const int32_t three = 3;
  CHECK_ST(cublasLtMatrixLayoutSetAttribute(lShortLd,
                                            CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                            &three, sizeof three),
           OK);
  const int64_t ld5 = 5;
  cublasLtMatrixLayoutSetAttribute(lShortLd, CUBLASLT_MATRIX_LAYOUT_LD, &ld5,
                                   sizeof ld5);
  CHECK_ST(cublasLtMatmulAlgoGetHeuristic(lt, op, lShortLd, lB, lD, lD, pref,
                                          2, r, &count),
           INV); // batch counts differ
  const uint32_t relu = CUBLASLT_EPILOGUE_RELU; // not emulated
  cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &relu,
                                 sizeof relu);
  CHECK_ST(cublasLtMatmulAlgoGetHeuristic(lt, op, lA, lB, lD, lD, pref, 2, r,
                                          &count),
           NS);
  // Bias of f32 with a bf16 D: not the documented bias type.
  const uint32_t epiBias = CUBLASLT_EPILOGUE_BIAS;
  cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epiBias,
                                 sizeof epiBias);
  const int32_t f32t = CUDA_R_32F, bf16t = CUDA_R_16BF;
  cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &f32t,
                                 sizeof f32t);
  CHECK_ST(cublasLtMatmulAlgoGetHeuristic(lt, op, lA, lB, lD, lD, pref, 2, r,
                                          &count),
           NS);
  cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                                 &bf16t, sizeof bf16t);

  // Device buffers, 256-byte aligned (cudaMalloc); element offsets below
  // make them less aligned.
  char *dA = static_cast<char *>(dalloc(512)), *dB = static_cast<char *>(dalloc(512)),
       *dD = static_cast<char *>(dalloc(512)), *dBias = static_cast<char *>(dalloc(512));
  cudaMemset(dA, 0, 512);
  cudaMemset(dB, 0, 512);
  cudaMemset(dBias, 0, 512);
  cudaMemset(dD, 0x5a, 512);
  const std::vector<unsigned char> d0 = download(dD, 512);
  const float one = 1, zero = 0;
  cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &dBias,
                                 sizeof(void *));
  // Default preference: 256-byte alignment promised.
  CHECK_ST(cublasLtMatmulAlgoGetHeuristic(lt, op, lA, lB, lD, lD, pref, 2, r,
                                          &count),
           OK);
  CHECK(count == 1 && r[0].state == OK, "heuristic count %d", count);
  const cublasLtMatmulAlgo_t algo256 = r[0].algo;
  auto mm = [&](const void *a, const void *b, void *d,
                const cublasLtMatmulAlgo_t *algo,
                cublasLtMatrixLayout_t lc) {
    return cublasLtMatmul(lt, op, &one, a, lA, b, lB, &zero, d, lc, d, lD,
                          algo, nullptr, 0, nullptr);
  };
  CHECK_ST(mm(dA + 64, dB, dD, &algo256, lD), INV);
  CHECK_ST(mm(dA, dB + 128, dD, &algo256, lD), INV);
  CHECK_ST(mm(dA, dB, dD + 32, &algo256, lD), INV);
  // In place with Cdesc != Ddesc (another ld).
  CHECK_ST(mm(dA, dB, dD, &algo256, lD2), INV);
  // Bias moved to a less aligned address than at heuristic time.
  char *biasOff = dBias + 2;
  cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                 &biasOff, sizeof(void *));
  CHECK_ST(mm(dA, dB, dD, &algo256, lD), INV);
  cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &dBias,
                                 sizeof(void *));
  // An algorithm chosen for other types.
  cublasLtMatmulAlgo_t foreign = algo256;
  {
    cublasLtMatmulDesc_t opF;
    cublasLtMatmulDescCreate(&opF, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    cublasLtMatrixLayout_t fA, fB;
    cublasLtMatrixLayoutCreate(&fA, CUDA_R_32F, 6, 5, 6);
    cublasLtMatrixLayoutCreate(&fB, CUDA_R_32F, 5, 4, 5);
    CHECK_ST(cublasLtMatmulAlgoGetHeuristic(lt, opF, fA, fB, lF, lF, pref, 1, r,
                                            &count),
             OK);
    foreign = r[0].algo;
    cublasLtMatrixLayoutDestroy(fA);
    cublasLtMatrixLayoutDestroy(fB);
    cublasLtMatmulDescDestroy(opF);
  }
  CHECK_ST(mm(dA, dB, dD, &foreign, lD), INV);
  cublasLtMatmulAlgo_t junk = {};
  CHECK_ST(mm(dA, dB, dD, &junk, lD), INV);
  cudaDeviceSynchronize();
  CHECK(download(dD, 512) == d0, "a failed cublasLtMatmul wrote D");

  // A 2-byte promise for A and B, 16 for D: element offsets are fine then.
  const uint32_t two = 2, sixteen = 16;
  cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &two, sizeof two);
  cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &two, sizeof two);
  cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &sixteen, sizeof sixteen);
  cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &sixteen, sizeof sixteen);
  CHECK_ST(cublasLtMatmulAlgoGetHeuristic(lt, op, lA, lB, lD, lD, pref, 1, r,
                                          &count),
           OK);
  const cublasLtMatmulAlgo_t algo2 = r[0].algo;
  CHECK_ST(mm(dA + 2, dB + 6, dD + 16, &algo2, lD), OK);
  CHECK_ST(mm(dA + 2, dB + 6, dD + 8, &algo2, lD), INV);
  CHECK_ST(mm(dA + 2, dB + 6, dD + 8, nullptr, lD), OK); // implicit heuristic
  // The bias pointer is required by the bias epilogue.
  void *nullBias = nullptr;
  cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                 &nullBias, sizeof nullBias);
  CHECK_ST(mm(dA, dB, dD, nullptr, lD), INV);
  // beta != 0 needs C; alpha / beta pointers needed.
  cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &dBias,
                                 sizeof(void *));
  CHECK_ST(cublasLtMatmul(lt, op, &one, dA, lA, dB, lB, &one, nullptr, lD, dD,
                          lD, nullptr, nullptr, 0, nullptr),
           INV);
  CHECK_ST(cublasLtMatmul(lt, op, nullptr, dA, lA, dB, lB, &zero, dD, lD, dD,
                          lD, nullptr, nullptr, 0, nullptr),
           INV);
  CHECK_ST(cublasLtMatmul(nullptr, op, &one, dA, lA, dB, lB, &zero, dD, lD, dD,
                          lD, nullptr, nullptr, 0, nullptr),
           CUBLAS_STATUS_NOT_INITIALIZED);
  // Cdesc NULL: taken equal to Ddesc.
  CHECK_ST(cublasLtMatmul(lt, op, &one, dA, lA, dB, lB, &zero, dD, nullptr, dD,
                          lD, nullptr, nullptr, 0, nullptr),
           OK);
  cudaDeviceSynchronize();
  for (cublasLtMatrixLayout_t l : {lA, lB, lD, lBad, lD2, lF, lShortLd})
    cublasLtMatrixLayoutDestroy(l);
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatmulDescDestroy(op);
  CHECK_ST(cublasLtDestroy(lt), OK);
  freeAll();
}

/// Streams: work goes to the handle's stream (cuBLAS) or the stream
/// argument (cuBLASLt) and uses the arguments as they were at the call.
void testStreams() {
  cudaStream_t s1;
  cudaStreamCreate(&s1);
  cublasHandle_t h;
  cublasCreate(&h);
  CHECK_ST(cublasSetStream(h, s1), CUBLAS_STATUS_SUCCESS);
  cudaStream_t got = nullptr;
  CHECK(cublasGetStream(h, &got) == CUBLAS_STATUS_SUCCESS && got == s1,
        "cublasGetStream");
  // 2 x 2: C = alpha A B, A = B = identity * 2 -> C = 4 alpha I.
  float *A = static_cast<float *>(dalloc(16)), *C = static_cast<float *>(dalloc(16));
  const float two[4] = {2, 0, 0, 2};
  cudaMemcpy(A, two, 16, cudaMemcpyHostToDevice);
  cudaMemset(C, 0, 16);
  float alpha = 1.5f, beta = 0;
  CHECK_ST(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &alpha, A, 2, A, 2,
                       &beta, C, 2),
           CUBLAS_STATUS_SUCCESS);
  alpha = 100; // the call took 1.5
  beta = NAN;
  if (lateMode) {
    CHECK(C[0] == 0, "late mode: the GEMM ran before its stream was synchronized");
    cudaStreamSynchronize(nullptr);
    CHECK(C[0] == 0, "the GEMM ran on the default stream, not the handle's");
  }
  cudaStreamSynchronize(s1);
  CHECK(C[0] == 6 && C[1] == 0 && C[3] == 6, "stream GEMM: C = %g %g %g %g",
        C[0], C[1], C[2], C[3]);

  // cuBLASLt: the descriptor, layouts and bias pointer are taken at the call.
  cublasLtHandle_t lt;
  cublasLtCreate(&lt);
  cublasLtMatmulDesc_t op;
  cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  const uint32_t epi = CUBLASLT_EPILOGUE_BIAS;
  cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi,
                                 sizeof epi);
  float *bias = static_cast<float *>(dalloc(8)), *bias2 = static_cast<float *>(dalloc(8));
  const float bv[2] = {10, 20}, bv2[2] = {-1000, -1000};
  cudaMemcpy(bias, bv, 8, cudaMemcpyHostToDevice);
  cudaMemcpy(bias2, bv2, 8, cudaMemcpyHostToDevice);
  cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                 sizeof bias);
  float *B = static_cast<float *>(dalloc(16)), *D = static_cast<float *>(dalloc(16));
  const float bm[4] = {1, 2, 3, 4}; // B = [[1, 3], [2, 4]]
  cudaMemcpy(B, bm, 16, cudaMemcpyHostToDevice);
  cudaMemset(D, 0, 16);
  cublasLtMatrixLayout_t l;
  cublasLtMatrixLayoutCreate(&l, CUDA_R_32F, 2, 2, 2);
  alpha = 0.5f;
  beta = 0;
  CHECK_ST(cublasLtMatmul(lt, op, &alpha, A, l, B, l, &beta, D, l, D, l,
                          nullptr, nullptr, 0, s1),
           CUBLAS_STATUS_SUCCESS);
  alpha = 7;
  const int32_t t = CUBLAS_OP_T;
  cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &t, sizeof t);
  cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias2,
                                 sizeof bias2);
  cublasLtMatrixLayoutDestroy(l);
  cublasLtMatmulDescDestroy(op);
  if (lateMode)
    CHECK(D[0] == 0, "late mode: cublasLtMatmul ran before synchronization");
  cudaStreamSynchronize(s1);
  // D = 0.5 (2 I) B + bias = B + bias (rows): [[11, 13], [22, 24]].
  CHECK(D[0] == 11 && D[1] == 22 && D[2] == 13 && D[3] == 24,
        "Lt on a stream: D = %g %g %g %g", D[0], D[1], D[2], D[3]);
  cublasLtDestroy(lt);
  cublasDestroy(h);
  freeAll();
  cudaStreamDestroy(s1);
}

/// Operand ranges are checked against device memory (exact spans are fine,
/// one element more is not), outputs must not overlap inputs.
void testDeviceChecks() {
  cublasHandle_t h;
  cublasCreate(&h);
  const float one = 1, zero = 0;
  // A: 3 x 4 (lda 5), 2 batches at stride 20: exactly 20 + (3 * 5 + 3) = 38
  // elements; B 4 x 2 (ldb 4) 2 batches at stride 8: 16; C 3 x 2 (ldc 3)
  // stride 6: 12.
  auto run = [&](float *A, float *B, float *C, int lda) {
    return cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, 3, 2, 4,
                                     &one, A, lda, 20, B, 4, 8, &zero, C, 3, 6,
                                     2);
  };
  float *A = static_cast<float *>(dalloc(38 * 4)),
        *B = static_cast<float *>(dalloc(16 * 4)),
        *C = static_cast<float *>(dalloc(12 * 4));
  cudaMemset(A, 0, 38 * 4);
  cudaMemset(B, 0, 16 * 4);
  CHECK(!dies([&] { run(A, B, C, 5); }), "exact spans were rejected");
  CHECK(dies([&] { run(A, B, C, 6); }), "A past its allocation accepted");
  CHECK(dies([&] { run(A + 1, B, C, 5); }), "A shifted by one accepted");
  std::vector<float> host(64);
  CHECK(dies([&] { run(host.data(), B, C, 5); }), "host memory accepted as A");
  CHECK(dies([&] { run(A, B, host.data(), 5); }), "host memory accepted as C");
  // Output overlapping an input.
  float *big = static_cast<float *>(dalloc(256 * 4));
  CHECK(dies([&] {
          cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, big, 4,
                      big + 64, 4, &zero, big + 8, 4);
        }),
        "output overlapping A accepted");
  // Interleaved columns that do not overlap: A in even, C in odd columns.
  CHECK(!dies([&] {
          cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, big, 8,
                      big + 128, 4, &zero, big + 4, 8);
        }),
        "disjoint interleaved operands rejected");
  // Output batches overlapping each other (stride 0).
  CHECK(dies([&] {
          cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one,
                                    big, 2, 4, big + 64, 2, 4, &zero, big + 128,
                                    2, 0, 2);
        }),
        "output batches at stride 0 accepted");
  cublasDestroy(h);
  freeAll();
}

int suite() {
  emu::strictDevice = true;
  testRounding();
  testGemmMatrix();
  testLtBias();
  testLtGelu();
  testLtGeluInvalid();
  testArbitraryValues();
  testInvalidArguments();
  testLtInvalid();
  testStreams();
  testDeviceChecks();
  return failures;
}

} // namespace

int main() {
  fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    setenv("ZRT_EMU_STREAMS", "late", 1);
    lateMode = true;
    modeName = "late";
    const int f = suite();
    fflush(stdout);
    _exit(f ? 1 : 0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  const bool lateOk = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!lateOk && !(WIFEXITED(status) && WEXITSTATUS(status) == 1))
    printf("FAIL [late] the suite crashed (status %d)\n", status);
  if (const char *m = getenv("ZRT_EMU_STREAMS"); m && *m) {
    modeName = m; // the parent runs in the mode of the environment
    lateMode = !strcmp(m, "late");
  }
  suite();
  if (failures || !lateOk) {
    printf("FAIL: %d failures (eager), late mode %s\n", failures,
           lateOk ? "ok" : "failed");
    return 1;
  }
  printf("ALL OK\n");
  return 0;
}
