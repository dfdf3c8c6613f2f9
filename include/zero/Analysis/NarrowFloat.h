//===- NarrowFloat.h - the 16-bit float storage types of the lowering -----===//
///
/// \file
/// bf16 and f16 are storage types: the CPU and CUDA runtimes compute in f32
/// and keep 16-bit tensors in memory. bf16 has native kernels for the ops
/// of a transformer (zrt_X_bf16); f16 has none, so every f16 compute op is
/// widened to f32 scratch, computed by the f32 kernel and rounded back
/// (round to nearest even, IEEE binary16; overflow gives ±inf, which the
/// fp16-mixed loss scaler detects). The non-compute ops (casts, fills,
/// accumulation, sums of squares, AdamW's gradient read, copies and
/// collectives) call the runtime function of their storage type, named by
/// the suffix below (zrt_cast_f32_to_f16, zrt_fill_f16, ...).
///
//===----------------------------------------------------------------------===//

#ifndef ZERO_ANALYSIS_NARROWFLOAT_H
#define ZERO_ANALYSIS_NARROWFLOAT_H

#include "mlir/IR/Types.h"

#include <optional>
#include <string>

namespace mlir::zero::narrow {

/// Whether `t` is a 16-bit float storage type (bf16 or f16).
inline bool isNarrowFloat(Type t) { return t.isBF16() || t.isF16(); }

/// "bf16" or "f16": the suffix of the runtime functions on `t` (a 16-bit
/// float type).
inline const char *suffix(Type t) { return t.isF16() ? "f16" : "bf16"; }

/// The runtime function `base` + "_" + suffix(t), e.g. zrt_fill_f16.
inline std::string fn(const char *base, Type t) {
  return std::string(base) + "_" + suffix(t);
}

/// zrt_cast_<t>_to_f32 (widening, exact) for a 16-bit float type `t`.
inline std::string castToF32(Type t) {
  return std::string("zrt_cast_") + suffix(t) + "_to_f32";
}

/// zrt_cast_f32_to_<t> (rounding to nearest even) for a 16-bit float `t`.
inline std::string castFromF32(Type t) {
  return std::string("zrt_cast_f32_to_") + suffix(t);
}

/// The enum zrt_dtype name of `t`: ZRT_F32, ZRT_BF16 or ZRT_F16; nullopt
/// for other types.
inline std::optional<const char *> dtype(Type t) {
  if (t.isF32())
    return "ZRT_F32";
  if (t.isBF16())
    return "ZRT_BF16";
  if (t.isF16())
    return "ZRT_F16";
  return std::nullopt;
}

} // namespace mlir::zero::narrow

#endif // ZERO_ANALYSIS_NARROWFLOAT_H
