//===- tensor_cut.h - A tensor rank's cut of a whole tensor -----*- C++ -*-===//
//
// The geometry of a tensor-parallel cut (model.h zrt_param_cut, the IR's
// #zero.tensor_split): the whole tensor viewed as [outer, rows, inner]
// around the cut dimension, whose `rows` are `blocks` equal blocks, each in
// `parts` equal slices; tensor rank `part` holds slice `part` of every
// block, back to back. Shared by zrt_init_param_cut (param_cut.cpp), the
// checkpoints' re-cutting (driver/checkpoint_resume.cpp) and --import /
// --export (driver/import_export.cpp), so that all three agree on which
// element of the whole tensor a rank's element is. Header-only, internal.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_SRC_COMMON_TENSOR_CUT_H
#define ZRT_SRC_COMMON_TENSOR_CUT_H

#include <algorithm>
#include <cstdint>

namespace zrt {

struct TensorCut {
  int64_t outer = 1, rows = 1, inner = 1, blocks = 1, parts = 1;

  /// The cut of dimension `dim` of a whole tensor of shape `whole` (`rank`
  /// sizes, row-major) into `blocks` blocks of `parts` slices; dim < 0 (or
  /// parts 1) is the whole tensor, one run. The caller checks that
  /// whole[dim] divides by blocks x parts.
  static TensorCut of(const int64_t *whole, int rank, int dim, int64_t blocks,
                      int64_t parts) {
    TensorCut c;
    if (dim < 0 || parts <= 1) {
      for (int i = 0; i < rank; ++i)
        c.inner *= whole[i];
      return c;
    }
    for (int i = 0; i < dim; ++i)
      c.outer *= whole[i];
    for (int i = dim + 1; i < rank; ++i)
      c.inner *= whole[i];
    c.rows = whole[dim];
    c.blocks = blocks;
    c.parts = parts;
    return c;
  }

  /// Elements of the whole tensor.
  int64_t wholeNumel() const { return outer * rows * inner; }
  /// Elements of one rank's cut.
  int64_t localNumel() const { return outer * (rows / parts) * inner; }

  /// Calls fn(local, whole, n) for the contiguous runs of local elements
  /// [lo, hi) of rank `part`'s cut: local elements [local, local + n) are
  /// whole elements [whole, whole + n). Runs come in increasing order.
  template <typename F>
  void forEachRun(int64_t part, int64_t lo, int64_t hi, F &&fn) const {
    const int64_t s = rows / (blocks * parts); // rows of one slice
    const int64_t run = s * inner;             // local elements of one (o, b)
    if (run <= 0)
      return;
    for (int64_t l = std::max<int64_t>(lo, 0); l < hi;) {
      const int64_t ob = l / run, w = l % run;
      const int64_t o = ob / blocks, b = ob % blocks;
      const int64_t n = std::min(hi - l, run - w);
      fn(l, (o * rows + b * (rows / blocks) + part * s) * inner + w, n);
      l += n;
    }
  }
};

} // namespace zrt

#endif // ZRT_SRC_COMMON_TENSOR_CUT_H
