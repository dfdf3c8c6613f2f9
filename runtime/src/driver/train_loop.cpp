//===- train_loop.cpp - The training driver: the training steps -----------===//
//
// Driver::trainSteps (driver.h), phase 5 of Driver::run: each optimizer
// step's K micro-batches (forward_backward), the optimizer step, the
// dynamic loss scale of fp16-mixed, the step line, --metrics and
// --tensorboard records, the non-finite stop, validation and checkpoints.
// The phases before and after it are in driver.cpp.
//
//===----------------------------------------------------------------------===//

#include "driver/driver.h"

#include "driver/strformat.h"
#include "zrt/model.h"
#include "zrt/zrt.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace zrt::train {

using zrt::format;

Driver::Stop Driver::trainSteps() {
  // 5. Training.
  const int64_t K = o_.gradAccum;
  const int64_t tokensPerStep = globalBatch_ * m_->seq * K;
  tStart_ = nowSeconds();
  commStart_ = Snapshot::take();
  bool planNoted = false;
  for (int64_t step = firstStep_; step <= o_.steps; ++step) {
    const double lr = learningRate(o_, step - 1);
    const double t0 = nowSeconds();
    const Snapshot s0 = Snapshot::take();
    const double wait0 = zrt_comm_wait_seconds();
    const int64_t allocs0 = zrt_heap_allocations();
    Snapshot micro{};
    double lossSum = 0.0;
    // fp16-mixed: S for this step's backward (the test hook's rank and
    // step overflow: S = 2^120 makes its f16 gradients infinite).
    const double lossScale = scaler_ ? scaler_->scale() : 1.0;
    if (scaler_) {
      const bool poison = rank_ == o_.overflowRank && step == o_.overflowStep;
      zrt_clear_error();
      if (int st = m_->set_loss_scale(
              poison ? 1.329228e36f : static_cast<float>(lossScale)))
        internalFailure(format("set_loss_scale (step %lld): ",
                               (long long)step) +
                        describe(st));
    }
    for (int64_t k = 0; k < K; ++k) {
      if (std::string err = fetchTrainBatch(); !err.empty())
        return finish(agree(err, kExitUser));
      if (!o_.dumpBatches.empty())
        dumpBatch(step, k);
      const Snapshot before = Snapshot::take();
      float loss = 0.0f;
      zrt_clear_error();
      if (int st = runStep(/*backward=*/true, &loss))
        internalFailure(
            format("forward_backward (step %lld): ", (long long)step) +
            describe(st));
      if (k == 0)
        micro = Snapshot::take().since(before);
      lossSum += loss;
    }
    const Snapshot beforeOpt = Snapshot::take();
    float norm = 0.0f;
    zrt_clear_error();
    // AdamW's step: updates applied so far + 1 (= step unless fp16-mixed
    // skipped some); the gradients hold S times the true sum over K.
    if (int st = m_->optimizer_step(
            static_cast<float>(lr), updates_ + 1,
            static_cast<float>(1.0 / (static_cast<double>(K) * lossScale)),
            &norm))
      internalFailure(format("optimizer_step (step %lld): ", (long long)step) +
                      describe(st));
    const Snapshot after = Snapshot::take();
    const Snapshot opt = after.since(beforeOpt);
    const Snapshot total = after.since(s0);
    const double secs = nowSeconds() - t0;
    // Logging reduction (host_comm: not in the zrt byte counters). A
    // non-finite norm on any rank makes the sum of the flags non-zero.
    const double loss = allMean(lossSum / static_cast<double>(K));
    const bool normFinite = allMean(std::isfinite(norm) ? 0.0 : 1.0) == 0.0;
    lastLoss_ = loss;
    // fp16-mixed: a non-finite norm skipped the update on every rank
    // (train.adamw skip_nonfinite on the global norm); halve S.
    zrt::LossScaler::Outcome scaled = zrt::LossScaler::Outcome::Applied;
    if (scaler_ && std::isfinite(loss)) {
      scaled = scaler_->update(normFinite);
      if (normFinite)
        ++updates_;
      if (scaled == zrt::LossScaler::Outcome::Skipped)
        say(format("step %lld: gradient overflow at loss scale %g (norm %s): "
                   "the update is skipped on every rank; loss scale -> %g",
                   (long long)step, lossScale,
                   std::isnan(norm) ? "nan" : "inf", scaler_->scale()));
    } else if (normFinite) {
      ++updates_;
    }
    const int64_t peak = zrt_memory_peak_total_bytes();
    const double tokPerS = secs > 0 ? tokensPerStep / secs : 0.0;
    const int64_t tokensSeen = samplePos_ * m_->seq;
    // Model TFLOP/s of this rank (zrt_plan_desc::model_flops_micro), and
    // MFU against --peak-tflops; < 0 when the program does not say.
    const double tflops = m_->plan.model_flops_micro > 0 && secs > 0
                              ? m_->plan.model_flops_micro * K / secs / 1e12
                              : -1.0;

    if (!o_.quiet) {
      // An array model counts samples (seq = 1), a token model tokens.
      const char *unit = arrayModel() ? "samples" : "tok";
      std::string line = format(
          "step %lld/%lld | loss %.4f | lr %.2e | norm %.4f | %.1f ms "
          "| %.0f %s/s | comm %s | peak %s | seen %s %s",
          (long long)step, (long long)o_.steps, loss, lr, norm, secs * 1e3,
          tokPerS, unit, megabytes(total.total()).c_str(),
          megabytes(peak).c_str(), humanCount(tokensSeen).c_str(), unit);
      if (tflops >= 0)
        line += format(" | %.3g TFLOP/s", tflops);
      if (tflops >= 0 && o_.peakTflops > 0)
        line += format(" | mfu %.1f%%", 100.0 * tflops / o_.peakTflops);
      say(line);
    }
    if (!planNoted && !o_.quiet) {
      planNoted = true;
      say(format("comm per rank: forward_backward %lld B (plan %lld B), "
                 "optimizer_step %lld B (plan %lld B)",
                 (long long)micro.total(),
                 (long long)(m_->plan.comm_bytes_micro[0] +
                             m_->plan.comm_bytes_micro[1] +
                             m_->plan.comm_bytes_micro[2] +
                             m_->plan.comm_bytes_micro[3]),
                 (long long)opt.total(),
                 (long long)(m_->plan.comm_bytes_step[0] +
                             m_->plan.comm_bytes_step[1] +
                             m_->plan.comm_bytes_step[2] +
                             m_->plan.comm_bytes_step[3])));
    }
    Json j;
    j.key("type").str("step");
    j.key("step").integer(step);
    j.key("loss").num(loss);
    j.key("lr").num(lr);
    j.key("grad_norm").num(norm);
    if (scaler_) {
      j.key("loss_scale").num(lossScale);
      j.key("skipped").integer(
          scaled == zrt::LossScaler::Outcome::Skipped ||
                  scaled == zrt::LossScaler::Outcome::Underflow
              ? 1
              : 0);
    }
    j.key("ms").num(secs * 1e3);
    j.key("tokens_per_s").num(tokPerS);
    j.key("tokens_seen").integer(tokensSeen);
    if (tflops >= 0)
      j.key("model_tflops_per_rank").num(tflops);
    if (tflops >= 0 && o_.peakTflops > 0)
      j.key("mfu").num(tflops / o_.peakTflops);
    scalars(step, {{"train/loss", loss},
                   {"train/lr", lr},
                   {"train/grad_norm", norm},
                   {"train/tokens_per_s", tokPerS},
                   {"train/tokens_seen", double(tokensSeen)},
                   {"train/peak_bytes", double(peak)}});
    if (tflops >= 0)
      scalars(step, {{"train/model_tflops_per_rank", tflops}});
    if (tflops >= 0 && o_.peakTflops > 0)
      scalars(step, {{"train/mfu", tflops / o_.peakTflops}});
    if (scaler_)
      scalars(step, {{"train/loss_scale", lossScale}});
    j.key("comm_bytes").collBytes(total.bytes);
    j.key("comm_bytes_micro_measured").collBytes(micro.bytes);
    j.key("comm_bytes_step_measured").collBytes(opt.bytes);
    // Of them on the tensor axis (zero-report's by-axis plan; 0 at M = 1).
    j.key("comm_bytes_tensor_micro_measured").collBytes(micro.axis[ZRT_AXIS_TENSOR]);
    j.key("comm_bytes_tensor_step_measured").collBytes(opt.axis[ZRT_AXIS_TENSOR]);
    // The whole step's bytes per mesh axis (N_d x M; M = 1: all on data).
    j.key("comm_bytes_axis").open('{');
    j.key("data").collBytes(total.axis[ZRT_AXIS_DATA]);
    j.key("tensor").collBytes(total.axis[ZRT_AXIS_TENSOR]);
    j.close('}');
    j.key("comm_wait_s").num(zrt_comm_wait_seconds() - wait0);
    j.key("peak_bytes").integer(peak);
    j.key("allocations").integer(zrt_heap_allocations() - allocs0);
    metric(j);
    // Non-finite training stops here, before any checkpoint of this step:
    // `latest` keeps naming the last finite one.
    if (!std::isfinite(loss) ||
        (!normFinite && (!scaler_ || scaled ==
                                         zrt::LossScaler::Outcome::Underflow)))
      return finish(
          agree(nonFiniteMessage(step, loss, norm, lastSaved_), kExitUser));

    if (validation_ && step % o_.valEvery == 0) {
      if (std::string err = validate(&lastVal_); !err.empty())
        return finish(agree(err, kExitUser));
      say(format("val loss %.4f", lastVal_));
      Json v;
      v.key("type").str("val").key("step").integer(step);
      v.key("val_loss").num(lastVal_);
      metric(v);
      scalars(step, {{"val/loss", lastVal_}});
    }
    if (o_.checkpointEvery > 0 && step % o_.checkpointEvery == 0) {
      std::vector<std::string> removed;
      if (int code = ckpt_->save(o_.checkpointDir, step, runInfo(), &removed))
        return finish(code);
      lastSaved_ = step;
      savedInRun_ = true;
      say(format("checkpoint: saved step %lld to %s/step_%lld",
                 (long long)step, o_.checkpointDir.c_str(), (long long)step));
      for (const std::string &line : removed)
        say(line);
    }
    drawBar(step, nowSeconds() - tStart_);
  }
  return std::nullopt;
}

} // namespace zrt::train
