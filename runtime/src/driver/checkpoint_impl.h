//===- checkpoint_impl.h - The Checkpointer's state (internal) --*- C++ -*-===//
///
/// \file
/// Checkpointer::Impl, whose methods live by job: checkpoint.cpp (the
/// class, --resume's notes), checkpoint_save.cpp (the collective save,
/// retention), checkpoint_shard.cpp (a rank's shard file: writing, checking,
/// reading elements), checkpoint_manifest.cpp (manifest.json: writing and
/// parsing) and checkpoint_resume.cpp (finding, checking and loading a
/// checkpoint, re-partitioned when the layout differs). The format itself:
/// checkpoint_layout.h. Internal to the runtime.
///
//===----------------------------------------------------------------------===//
#ifndef ZRT_SRC_DRIVER_CHECKPOINT_IMPL_H
#define ZRT_SRC_DRIVER_CHECKPOINT_IMPL_H

#include "driver/checkpoint.h"
#include "driver/checkpoint_layout.h"
#include "zrt/model.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace zrt_ckpt {

struct Checkpointer::Impl {
  Impl(const zrt_model_desc *model, int r, int w, Agree a)
      : m(model), rank(r), world(w), agree(std::move(a)) {
    const int tensor = model->tensor_size > 1 ? model->tensor_size : 1;
    dataRank = r / tensor;
    tensorRank = r % tensor;
  }
  const zrt_model_desc *m;
  int rank, world;
  /// This rank's place on the mesh N_d x M: r = dataRank x M + tensorRank.
  int dataRank = 0, tensorRank = 0;
  Agree agree;
  int64_t crashAfter = -1;
  int64_t keepLast = 0;
  Layout cur;
  bool curReady = false;
  std::string curErr;
  // --resume
  Resumed res;
  Layout old;
  std::vector<std::pair<std::string, uint64_t>> files;
  std::vector<int> fds;
  bool manifestUnchecked = false; ///< No manifest_fnv1a64 (older writer).

  /// The current program's layout, computed once: "" or "the model's
  /// states cannot be checkpointed: <why>" (layoutOf), every time.
  std::string ensureLayout() {
    if (!curReady) {
      curErr = layoutOf(m, world, &cur);
      curReady = true;
    }
    return curErr.empty() ? ""
                          : "the model's states cannot be checkpointed: " +
                                curErr;
  }
  /// The path of the resumed checkpoint's shard file of rank `r`.
  std::string filePath(int r) const { return res.dir + "/" + files[r].first; }

  /// Writes this rank's file `path` (header, then every state of `cur`
  /// copied from arena memory, 64-byte aligned, zero padding) and fsyncs
  /// it; *sum: its FNV-1a-64. *nonFinite / *badState: how many NaN or Inf
  /// values its states hold, and the first such state's name. "" or
  /// "cannot write checkpoint file '<path>': <why>". Honours crashAfter.
  /// In checkpoint_shard.cpp.
  std::string writeShard(const std::string &path, int64_t step, uint64_t *sum,
                         int64_t *nonFinite, std::string *badState);
  /// Rank 0: writes <tmpDir>/manifest.json (through manifest.json.tmp and a
  /// rename) for step `step` of run `run`, with every rank's checksum
  /// `sums` (world entries). "" or "cannot write checkpoint manifest
  /// '<path>': <why>". In checkpoint_manifest.cpp.
  std::string writeManifest(const std::string &tmpDir, int64_t step,
                            const RunInfo &run,
                            const std::vector<uint64_t> &sums);
  /// checkShardFile on the resumed checkpoint's file of rank `r`. In
  /// checkpoint_shard.cpp.
  std::string verify(int r);
  /// Elements [lo, hi) of (param, kind) of the checkpoint as tensor rank
  /// `part` of its mesh stored it (its cut; 0 for a parameter kept whole),
  /// as `dtype` into host `dst` ((hi - lo) elements): from the state that
  /// held it when saved (whole, or slices of a shard group over the files
  /// of that tensor rank's data ranks), with the f32 master weights
  /// standing in for parameters of another dtype and the parameters for
  /// missing masters. "" or the message. In checkpoint_resume.cpp.
  std::string readTensor(const std::string &param, int kind, int dtype,
                         int part, int64_t lo, int64_t hi, void *dst);
  /// Elements [lo, hi) of this rank's cut of (param, kind) in the current
  /// layout (the whole tensor when the parameter is not cut), re-cut from
  /// the checkpoint's: read directly when both cut it alike (or neither
  /// does), else assembled whole from every saved tensor rank's cut first
  /// (common/tensor_cut.h). "" or the message. In checkpoint_resume.cpp.
  std::string readLocal(const std::string &param, int kind, int dtype,
                        int64_t lo, int64_t hi, void *dst);
  /// Elements [lo, hi) of the checkpoint's state `s` in shard file `file`,
  /// converted to `dtype` (exact to f32, round to nearest even to bf16 /
  /// f16) into host `dst`; opens the file once (fds). "" or
  /// "checkpoint '<dir>': cannot read shard file <name>: <why>". In
  /// checkpoint_shard.cpp.
  std::string readRaw(const StateRec &s, int file, int64_t lo, int64_t hi,
                      int dtype, void *dst);
};

} // namespace zrt_ckpt

#endif // ZRT_SRC_DRIVER_CHECKPOINT_IMPL_H
