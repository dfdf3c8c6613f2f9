//===- rope_table.h - the rotary cos/sin table, host code ------*- C++ -*-===//
///
/// \file
/// zrt_rope_table's arithmetic (zrt/decoder.h), shared by the CPU and CUDA
/// backends (the table is computed once at initialization on the host, so
/// both have the same bits): Hugging Face's f32 frequencies
/// (`1 / theta ** (arange(0, D, 2) / D)`), llama3's f32 rescaling
/// (`_compute_llama3_parameters`), f32 angles, cos and sin evaluated in
/// double and rounded once. Arguments checked by the caller. Internal.
///
//===----------------------------------------------------------------------===//

#ifndef ZRT_SRC_ROPE_TABLE_H
#define ZRT_SRC_ROPE_TABLE_H

#include "zrt/zrt.h"

#include <cmath>
#include <cstdint>

namespace zrt {

/// Frequency i of `half` pairs (see the file comment).
inline float ropeFrequency(int64_t i, int64_t half, double theta,
                           const zrt_rope_scaling *scaling) {
  const float exponent =
      static_cast<float>(2 * i) / static_cast<float>(2 * half);
  const float inv = 1.0f / std::pow(static_cast<float>(theta), exponent);
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

/// table [T, half, 2] = {cos, sin} of f32(t * f_i), on the host.
inline void fillRopeTable(float *table, int64_t T, int64_t half, double theta,
                          const zrt_rope_scaling *scaling) {
  for (int64_t i = 0; i < half; ++i) {
    const float f = ropeFrequency(i, half, theta, scaling);
    for (int64_t t = 0; t < T; ++t) {
      const double angle = static_cast<double>(static_cast<float>(t) * f);
      table[(t * half + i) * 2] = static_cast<float>(std::cos(angle));
      table[(t * half + i) * 2 + 1] = static_cast<float>(std::sin(angle));
    }
  }
}

} // namespace zrt

#endif // ZRT_SRC_ROPE_TABLE_H
