//===- metrics.cpp - The driver's banner, --metrics and --tensorboard -----===//
//
// Rank 0's reports of a run: the banner on stdout, JSON lines (the config
// record, and every line the run loop builds) in --metrics, and their
// scalars in the --tensorboard event file (driver.h). A failed write is
// reported at once and fails the run at the end; the training goes on.
//
//===----------------------------------------------------------------------===//

#include "driver/driver.h"

#include "driver/state_io.h"
#include "driver/strformat.h"
#include "zrt/zrt.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

namespace zrt::train {

using zrt::format;

void Driver::scalars(
    int64_t step,
    std::initializer_list<std::pair<const char *, double>> values) {
  if (!tb_ || !metricsErr_.empty())
    return;
  for (const auto &[tag, value] : values) {
    std::string err = tb_->scalar(tag, step, value);
    if (err.empty())
      continue;
    metricsErr_ = err + " (the log is incomplete)";
    std::fprintf(stderr, "warning: %s; training continues\n",
                 metricsErr_.c_str());
    std::fflush(stderr);
    return;
  }
}

void Driver::metric(const Json &j) {
  if (!metrics_ || !metricsErr_.empty())
    return;
  if (std::fputs(j.line().c_str(), metrics_) < 0 ||
      std::fflush(metrics_) != 0) {
    // Reported at once and again at the end (exit 1), never silent; the
    // run itself goes on.
    metricsErr_ = format("cannot write --metrics file '%s': %s (the log is "
                         "incomplete)",
                         o_.metrics.c_str(), std::strerror(errno));
    std::fprintf(stderr, "warning: %s; training continues\n",
                 metricsErr_.c_str());
    std::fflush(stderr);
  }
}

void Driver::printBanner() {
  if (rank_ != 0 || o_.quiet)
    return;
  // On a mesh: N = N_d x M (data x tensor ranks).
  const std::string mesh =
      tensor_ > 1 ? format(" = %d x %d (data x tensor)", dataWorld_, tensor_)
                  : std::string();
  say(format("model %s | world %d%s | ZeRO stage %d | micro-batch %lld x %lld "
             "per rank (global %lld x %lld, %lld micro-batches/step) | params "
             "%lld | threads %d",
             m_->name ? m_->name : "?", world_, mesh.c_str(), m_->stage,
             (long long)m_->batch, (long long)m_->seq,
             (long long)globalBatch_, (long long)m_->seq,
             (long long)o_.gradAccum, (long long)m_->num_params, threads_));
  if (arrayModel()) {
    say(format("data %s | arrays %s | train %lld samples | val %lld samples",
               o_.data.c_str(), arrays_.describe().c_str(),
               (long long)arrays_.samples(0), (long long)arrays_.samples(1)));
  } else {
    // .bin ids are checked window by window (the data is never read whole).
    const std::string files =
        zrt_dataset_num_files(ds_) == 1
            ? std::string()
            : format(" (%lld files)", (long long)zrt_dataset_num_files(ds_));
    const std::string vocab =
        byteLevel_ ? format("vocab 256 (model %lld)", (long long)m_->vocab)
                   : format("ids checked per window against the model's "
                            "vocab %lld",
                            (long long)m_->vocab);
    say(format("data %s%s%s%s | %s, memory-mapped | train %lld tokens | val "
               "%lld tokens | %s",
               o_.data.c_str(), o_.valData.empty() ? "" : ", val ",
               o_.valData.c_str(), files.c_str(),
               byteLevel_ ? "bytes" : "llm.c tokens",
               (long long)zrt_dataset_num_tokens(ds_, ZRT_SPLIT_TRAIN),
               (long long)zrt_dataset_num_tokens(ds_, ZRT_SPLIT_VAL),
               vocab.c_str()));
  }
  int64_t measured[5] = {};
  for (int i = 0; i < m_->num_states; ++i) {
    const zrt_state_desc &s = m_->states[i];
    if (s.kind >= 0 && s.kind < 5)
      measured[s.kind] += s.numel * static_cast<int64_t>(zrt::elementBytes(s.dtype));
  }
  std::string mem = "model state per rank (allocated / plan):";
  for (int k = 0; k < 5; ++k)
    mem +=
        format(" %s %s / %s%s", kStateKindNames[k], megabytes(measured[k]).c_str(),
               megabytes(m_->plan.state_bytes[k]).c_str(), k < 4 ? "," : "");
  say(mem);
  if (scaler_)
    say(format("fp16-mixed: dynamic loss scaling from S = %g (x2 after %lld "
               "steps without overflow, x0.5 and the step skipped on "
               "overflow)",
               scaler_->scale(),
               (long long)(o_.lossScaleGrowthInterval >= 0
                               ? o_.lossScaleGrowthInterval
                               : zrt::LossScaler::kDefaultGrowthInterval)));
}

void Driver::writeConfig() {
  if (!metrics_)
    return;
  int64_t measured[5] = {};
  for (int i = 0; i < m_->num_states; ++i) {
    const zrt_state_desc &s = m_->states[i];
    if (s.kind >= 0 && s.kind < 5)
      measured[s.kind] += s.numel * static_cast<int64_t>(zrt::elementBytes(s.dtype));
  }
  int64_t arena[ZRT_MEM_NUM_KINDS];
  for (int k = 0; k < ZRT_MEM_NUM_KINDS; ++k)
    arena[k] = zrt_memory_bytes(k);
  Json j;
  j.key("type").str("config");
  j.key("model").str(m_->name ? m_->name : "");
  j.key("world_size").integer(world_);
  j.key("stage").integer(m_->stage);
  j.key("batch").integer(m_->batch);
  j.key("seq").integer(m_->seq);
  j.key("vocab").integer(m_->vocab);
  j.key("padded_vocab").integer(m_->padded_vocab);
  j.key("grad_accum").integer(o_.gradAccum);
  j.key("global_batch").integer(globalBatch_);
  j.key("num_params").integer(m_->num_params);
  j.key("steps").integer(o_.steps);
  j.key("lr").num(o_.lr);
  j.key("min_lr").num(o_.minLr);
  j.key("warmup").integer(o_.warmup);
  static const char *const kScheduleNames[] = {
      "cosine", "constant", "warmup", "warmup-decay", "warmup-cosine"};
  j.key("lr_schedule").str(kScheduleNames[static_cast<int>(o_.schedule)]);
  if (o_.schedule != Schedule::Cosine && o_.schedule != Schedule::Constant) {
    j.key("warmup_type").str(o_.logWarmup ? "log" : "linear");
    j.key("warmup_min_lr").num(o_.warmupMinLr);
    j.key("decay_steps").integer(o_.decaySteps);
  }
  j.key("seed").integer(static_cast<int64_t>(o_.seed));
  j.key("threads").integer(threads_);
  j.key("data").str(o_.data);
  if (!o_.valData.empty())
    j.key("val_data").str(o_.valData);
  if (ckpt_ && !o_.resume.empty())
    j.key("resumed_from_step").integer(ckpt_->resumed().step);
  j.key("measured_state_bytes").intArray(measured, 5);
  j.key("arena_bytes").intArray(arena, ZRT_MEM_NUM_KINDS);
  // P_a+cpu: the pinned host block of the checkpoint slices, as allocated.
  if (const int64_t host = zrt_offload_host_bytes(); host > 0)
    j.key("host_slot_bytes").integer(host);
  j.key("plan").open('{');
  j.key("state_bytes").intArray(m_->plan.state_bytes, 5);
  j.key("padding_bytes").integer(m_->plan.padding_bytes);
  j.key("comm_bytes_micro").collBytes(m_->plan.comm_bytes_micro);
  j.key("comm_bytes_step").collBytes(m_->plan.comm_bytes_step);
  j.key("arena_bytes").intArray(m_->plan.arena_bytes, ZRT_MEM_NUM_KINDS);
  j.close('}');
  metric(j);
}

} // namespace zrt::train
