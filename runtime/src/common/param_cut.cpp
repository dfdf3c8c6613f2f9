//===- param_cut.cpp - initializing a tensor-parallel cut of a parameter --===//
//
// zrt_init_param_cut (zrt.h): a tensor rank's cut of a parameter gets the
// values of its part of the whole initialization. Backend-neutral: it maps
// each contiguous run of local elements to the full tensor's elements
// (common/tensor_cut.h) and lets the backend's zrt_init_param_slice draw
// them.
//
//===----------------------------------------------------------------------===//

#include "common/internal.h"
#include "common/tensor_cut.h"

#include <algorithm>

extern "C" int zrt_init_param_cut(void *data, int dtype, int64_t slice_begin,
                                  int64_t slice_n, int64_t member_offset,
                                  int64_t outer, int64_t rows, int64_t inner,
                                  int64_t blocks, int64_t parts, int64_t part,
                                  int init_kind, float std, uint64_t seed) {
  const char *fn = "zrt_init_param_cut";
  ZRT_REQUIRE(outer > 0 && rows > 0 && inner > 0 && blocks > 0 && parts > 0,
              "%s: sizes must be positive (outer %lld, rows %lld, inner %lld, "
              "blocks %lld, parts %lld)",
              fn, (long long)outer, (long long)rows, (long long)inner,
              (long long)blocks, (long long)parts);
  ZRT_REQUIRE(rows % (blocks * parts) == 0,
              "%s: %lld rows are not %lld blocks of %lld equal slices", fn,
              (long long)rows, (long long)blocks, (long long)parts);
  ZRT_REQUIRE(part >= 0 && part < parts, "%s: part %lld is outside [0, %lld)",
              fn, (long long)part, (long long)parts);
  ZRT_REQUIRE(dtype == ZRT_F32 || dtype == ZRT_BF16 || dtype == ZRT_F16,
              "%s: dtype %d is not f32, bf16 or f16", fn, dtype);
  const int64_t local = outer * (rows / parts) * inner;
  // Constants need no mapping: the slice's overlap with the member.
  if (init_kind != ZRT_INIT_NORMAL)
    return zrt_init_param_slice(data, dtype, slice_begin, slice_n,
                                member_offset, local, init_kind, std, seed);
  const int64_t lo = std::max(slice_begin, member_offset);
  const int64_t hi =
      std::min(slice_begin + std::max<int64_t>(slice_n, 0),
               member_offset + local);
  const int64_t es = dtype == ZRT_F32 ? 4 : 2;
  const zrt::TensorCut cut{outer, rows, inner, blocks, parts};
  int st = ZRT_OK;
  cut.forEachRun(part, lo - member_offset, hi - member_offset,
                 [&](int64_t l, int64_t full, int64_t n) {
                   char *dst = static_cast<char *>(data) +
                               (member_offset + l - slice_begin) * es;
                   if (st == ZRT_OK)
                     st = zrt_init_param_slice(dst, dtype, full, n, 0,
                                               outer * rows * inner, init_kind,
                                               std, seed);
                 });
  return st;
}
