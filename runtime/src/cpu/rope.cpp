//===- rope.cpp - Rotary position embeddings -----------------------------===//
//
// zrt_rope_table (the cos/sin table, computed once at initialization;
// arithmetic in rope_table.h, shared with the CUDA backend) and zrt_rope
// (f32 and bf16; see zrt/decoder.h).
//
//===----------------------------------------------------------------------===//

#include "common/decoder_args.h"
#include "common/internal.h"
#include "common/rope_table.h"

#include <cmath>

namespace {

template <typename T>
int rope(const char *fn, const T *x, const float *table, T *out, int64_t B,
         int64_t T_, int64_t H, int64_t D, int layout, int inverse) {
  if (int st =
          zrt::checkRopeArgs(fn, x, table, out, B, T_, H, D, layout, zrt::fail))
    return st;
  const int64_t half = D / 2, rows = B * T_ * H;
  const float sign = inverse ? -1.0f : 1.0f;
  const bool rotateHalf = layout == ZRT_ROPE_ROTATE_HALF;
#pragma omp parallel for schedule(static) if (rows * D > zrt::kParallelGrain)
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t t = (row / H) % T_;
    const float *tab = table + t * half * 2;
    const T *xi = x + row * D;
    T *oi = out + row * D;
    if (rotateHalf) {
#pragma omp simd
      for (int64_t i = 0; i < half; ++i) {
        const float c = tab[2 * i], s = sign * tab[2 * i + 1];
        const float a = zrt::toF32(xi[i]), b = zrt::toF32(xi[i + half]);
        oi[i] = zrt::fromF32<T>(a * c - b * s);
        oi[i + half] = zrt::fromF32<T>(b * c + a * s);
      }
    } else {
      for (int64_t i = 0; i < half; ++i) {
        const float c = tab[2 * i], s = sign * tab[2 * i + 1];
        const float a = zrt::toF32(xi[2 * i]), b = zrt::toF32(xi[2 * i + 1]);
        oi[2 * i] = zrt::fromF32<T>(a * c - b * s);
        oi[2 * i + 1] = zrt::fromF32<T>(b * c + a * s);
      }
    }
  }
  return ZRT_OK;
}

} // namespace

extern "C" {

int zrt_rope_table(float *table, int64_t T, int64_t half, double theta,
                   const zrt_rope_scaling *scaling) {
  if (int st = zrt::checkRopeTableArgs("zrt_rope_table", table, T, half, theta,
                                       scaling, zrt::fail))
    return st;
  zrt::fillRopeTable(table, T, half, theta, scaling);
  return ZRT_OK;
}

int zrt_rope(const float *x, const float *table, float *out, int64_t B,
             int64_t T, int64_t H, int64_t D, int layout, int inverse) {
  return rope("zrt_rope", x, table, out, B, T, H, D, layout, inverse);
}

int zrt_rope_bf16(const zrt_bf16 *x, const float *table, zrt_bf16 *out,
                  int64_t B, int64_t T, int64_t H, int64_t D, int layout,
                  int inverse) {
  return rope("zrt_rope_bf16", x, table, out, B, T, H, D, layout, inverse);
}

} // extern "C"
