//===- rope.cpp - Rotary position embeddings -----------------------------===//
//
// zrt_rope_table (the cos/sin table, computed once at initialization) and
// zrt_rope (f32 and bf16; see zrt/decoder.h). The table follows Hugging
// Face's f32 arithmetic (LlamaRotaryEmbedding with
// _compute_default_rope_parameters / _compute_llama3_parameters): the
// frequencies, their llama3 rescaling and the angles are f32 values; cos
// and sin are evaluated in double on those f32 angles and rounded once.
//
//===----------------------------------------------------------------------===//

#include "decoder_args.h"
#include "internal.h"

#include <cmath>

namespace {

/// Frequency i of `half`: f32(1 / f32(theta^(2i / (2 half)))), rescaled as
/// llama3 when `scaling` is set (all in f32, as the PyTorch reference).
float frequency(int64_t i, int64_t half, double theta,
                const zrt_rope_scaling *scaling) {
  const float exponent =
      static_cast<float>(2 * i) / static_cast<float>(2 * half);
  const float base = std::pow(static_cast<float>(theta), exponent);
  float inv = 1.0f / base;
  if (!scaling)
    return inv;
  const float factor = static_cast<float>(scaling->factor);
  const float low = static_cast<float>(scaling->low_freq_factor);
  const float high = static_cast<float>(scaling->high_freq_factor);
  const float original = static_cast<float>(scaling->original_max_positions);
  const float lowWavelen = original / low, highWavelen = original / high;
  const float wavelen = 2.0f * static_cast<float>(M_PI) / inv;
  if (wavelen > lowWavelen)
    return inv / factor;
  if (wavelen < highWavelen)
    return inv;
  const float smooth = (original / wavelen - low) / (high - low);
  return (1.0f - smooth) * inv / factor + smooth * inv;
}

template <typename T>
int rope(const char *fn, const T *x, const float *table, T *out, int64_t B,
         int64_t T_, int64_t H, int64_t D, int layout, int inverse) {
  if (int st = zrt::checkRopeArgs(fn, x, table, out, B, T_, H, D, layout,
                                  zrt::fail))
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
  for (int64_t i = 0; i < half; ++i) {
    const float f = frequency(i, half, theta, scaling);
    for (int64_t t = 0; t < T; ++t) {
      const float angle = static_cast<float>(t) * f;
      table[(t * half + i) * 2] =
          static_cast<float>(std::cos(static_cast<double>(angle)));
      table[(t * half + i) * 2 + 1] =
          static_cast<float>(std::sin(static_cast<double>(angle)));
    }
  }
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
