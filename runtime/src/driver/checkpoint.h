//===- checkpoint.h - Sharded training checkpoints (internal) --*- C++ -*-===//
//
// The training driver's --checkpoint-dir / --checkpoint-every / --resume
// (docs/checkpoints.md). Each rank writes its own model states (the state
// table of zrt/model.h, gradients excepted) to one file of a step directory;
// rank 0 writes manifest.json last, with the partition layout, so that a run
// at another world size or ZeRO stage can re-partition the states.
//
// Not part of the public ABI: only the driver (driver.h) includes this header.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_SRC_CHECKPOINT_H
#define ZRT_SRC_CHECKPOINT_H

#include "zrt/model.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace zrt_ckpt {

/// The driver's error agreement: every rank calls it with its own error
/// ("" when fine); returns 0 when no rank failed, else the exit code of the
/// lowest failing rank, which has printed its message once.
using Agree = std::function<int(const std::string &err, int code)>;

/// What the manifest records about the run (to continue it identically).
struct RunInfo {
  uint64_t seed = 0;
  int64_t gradAccum = 1, globalBatch = 0, seq = 0;
  double lr = 0, minLr = 0;
  int64_t warmup = 0, steps = 0;
  /// The training sample stream (zrt_dataset_sequences): the position of
  /// the next sample, and the stream's batch (the global batch of the run
  /// that started it).
  int64_t nextSample = 0, streamBatch = 0;
  /// AdamW updates applied (its bias-correction step count; below the step
  /// when fp16-mixed skipped steps); -1 when a manifest does not say.
  int64_t updates = -1;
  /// fp16-mixed: the dynamic loss scale and its run of finite steps
  /// (loss_scaler.h).
  bool lossScaled = false;
  double lossScale = 0;
  int64_t lossScaleGoodSteps = 0;
};

/// What --resume found in the manifest.
struct Resumed {
  std::string dir;     ///< The step directory.
  int64_t step = 0;    ///< Optimizer steps done; training continues at step+1.
  int world = 0, stage = 0;
  int tensor = 1;         ///< The mesh's tensor axis M when saved.
  bool resharded = false; ///< The layout differs from this program's.
  RunInfo run;
};

class Checkpointer {
public:
  Checkpointer(const zrt_model_desc *model, int rank, int world, Agree agree);
  ~Checkpointer();
  Checkpointer(const Checkpointer &) = delete;
  Checkpointer &operator=(const Checkpointer &) = delete;

  /// Test hook (--checkpoint-crash-after-files K): the process calls
  /// _exit(1) right after writing its K-th shard file (counted over the run).
  void setCrashAfterFiles(int64_t k);

  /// Retention (--keep-checkpoints K, K >= 1; 0 keeps everything): after
  /// each successful save rank 0 removes the step directories of DIR
  /// (`step_<digits>`) other than the K with the highest step numbers and
  /// the one `latest` names. Runs only once `latest` points at the new save,
  /// so an interrupted removal leaves extra checkpoints, never fewer than K.
  void setKeepLast(int64_t k);

  /// Before training: "" or why the model's state table cannot be
  /// checkpointed, or (rank 0) why DIR cannot be created. Local; agree after.
  std::string prepare(const std::string &dir);

  /// Collective: writes DIR/step_<step>/ atomically and points DIR/latest
  /// at it. Returns 0 or the agreed exit code (the message is printed).
  /// Rank 0 appends to `notes` (when given) a line per step directory that
  /// retention (setKeepLast) removed or could not remove.
  int save(const std::string &dir, int64_t step, const RunInfo &run,
           std::vector<std::string> *notes = nullptr);

  /// Before init: finds the checkpoint (a step directory, or a checkpoint
  /// directory's `latest`), reads its manifest, checks the format version,
  /// the model fingerprint and the shard files (present, complete; rank r
  /// verifies the checksums of files r, r+N, ...). Local; agree after.
  std::string open(const std::string &path);

  /// After init: overwrites this rank's states with the checkpoint's
  /// (re-partitioned when the layout differs). Local; agree after.
  std::string load();

  const Resumed &resumed() const;

  /// Rank 0's lines about the resumed run: where from, and which settings
  /// differ from the checkpoint's (schedule, batch) so that the run will not
  /// continue exactly as the saved one would have.
  std::vector<std::string> notes(const RunInfo &now) const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Parses and checks a manifest's text exactly as --resume does (JSON, format
/// and version, its own checksum, every field and the layout rule), without
/// a model or shard files: "" or the message. For the fuzz target
/// (test/fuzz/fuzz_manifest.cpp).
std::string checkManifestText(const std::string &text);

/// Checks a shard file (rank_<r>.bin) against what its manifest says of it
/// exactly as --resume does: the header (magic, format version, rank r of
/// `world`, `states` states, `step`, `fileBytes` bytes) and the whole
/// file's FNV-1a-64 `checksum`. `dir` and `name` name it in the message.
/// "" or the message. Used by --resume and by the fuzz target
/// (test/fuzz/fuzz_shard.cpp).
std::string checkShardFile(const std::string &dir, const std::string &path,
                           const std::string &name, int r, int world,
                           int64_t states, int64_t step, int64_t fileBytes,
                           uint64_t checksum);

} // namespace zrt_ckpt

#endif // ZRT_SRC_CHECKPOINT_H
