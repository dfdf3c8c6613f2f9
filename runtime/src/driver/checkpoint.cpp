//===- checkpoint.cpp - Sharded training checkpoints ----------------------===//
//
// --checkpoint-dir / --checkpoint-every / --resume of the training driver.
// Format, guarantees and re-partitioning rules: docs/checkpoints.md.
//
// A step directory DIR/step_<S>/ holds one file per rank (rank_<r>.bin: a
// 64-byte header, then every saved state of the rank's state table at
// 64-byte aligned offsets, the same offsets on every rank) and manifest.json,
// which rank 0 writes last. The directory is built under a temporary name
// and renamed into place once complete, and DIR/latest is replaced after
// that, so a crash mid-save leaves the previous checkpoint as it was.
//
// This file: the Checkpointer itself and the notes of a resumed run. The
// rest by job (checkpoint_impl.h): checkpoint_layout.cpp (partitions of the
// states), checkpoint_manifest.cpp (manifest.json), checkpoint_shard.cpp
// (shard files), checkpoint_save.cpp (saving, retention) and
// checkpoint_resume.cpp (--resume, re-partitioning).
//
//===----------------------------------------------------------------------===//

#include "driver/checkpoint.h"
#include "driver/checkpoint_impl.h"

#include "driver/strformat.h"

#include <unistd.h>

#include <string>
#include <utility>
#include <vector>

namespace zrt_ckpt {

using zrt::format;

Checkpointer::Checkpointer(const zrt_model_desc *model, int rank, int world,
                           Agree agree)
    : impl_(new Impl(model, rank, world, std::move(agree))) {}

Checkpointer::~Checkpointer() {
  for (int fd : impl_->fds)
    if (fd >= 0)
      ::close(fd);
}

void Checkpointer::setCrashAfterFiles(int64_t k) { impl_->crashAfter = k; }

void Checkpointer::setKeepLast(int64_t k) { impl_->keepLast = k; }

const Resumed &Checkpointer::resumed() const { return impl_->res; }

std::vector<std::string> Checkpointer::notes(const RunInfo &now) const {
  const Resumed &r = impl_->res;
  std::vector<std::string> out;
  out.push_back(format(
      "resumed from %s: step %lld, saved at world size %d%s, ZeRO stage %d%s "
      "(seed %llu from the checkpoint)",
      r.dir.c_str(), (long long)r.step, r.world,
      r.tensor > 1
          ? format(" (mesh %d x %d)", r.world / r.tensor, r.tensor).c_str()
          : "",
      r.stage,
      r.resharded ? ", re-partitioned for this program" : "",
      (unsigned long long)r.run.seed));
  if (impl_->manifestUnchecked)
    out.push_back("note: its manifest.json has no checksum of its own "
                  "(written by an older runtime); its fields were checked "
                  "against the shard headers and the group rule only");
  if (now.lr != r.run.lr || now.minLr != r.run.minLr ||
      now.warmup != r.run.warmup || now.steps != r.run.steps)
    out.push_back(format(
        "note: the learning-rate schedule differs from the checkpoint's "
        "(--lr %g --min-lr %g --warmup %lld --steps %lld when saved)",
        r.run.lr, r.run.minLr, (long long)r.run.warmup,
        (long long)r.run.steps));
  if (now.gradAccum != r.run.gradAccum || now.globalBatch != r.run.globalBatch)
    out.push_back(format(
        "note: the batches differ from the saved run's (global batch %lld x "
        "%lld micro-batches when saved, %lld x %lld now); the data continues "
        "at sample %lld of the saved run's sample stream",
        (long long)r.run.globalBatch, (long long)r.run.gradAccum,
        (long long)now.globalBatch, (long long)now.gradAccum,
        (long long)r.run.nextSample));
  return out;
}

} // namespace zrt_ckpt
