//===- driver.cpp - The training driver (zrt_train_main) ------------------===//
//
// Runs a compiled training step (zrt/model.h) end to end: process start-up,
// command line, data, learning-rate schedule, gradient accumulation, logging
// (stdout and a JSON-lines metrics file), validation and sampling. This
// file holds run() and its phases but the training steps (train_loop.cpp),
// the agreement between ranks, the start-up checks and the exit path;
// driver.h lists the files of the other jobs.
//
// Error handling: every rank validates the same inputs; after each phase
// (flags, model/launch, data, init) the ranks agree on the outcome with one
// all-reduce, so a failure on any rank makes every rank exit with the same
// status and the lowest failing rank prints the message once. A model
// function that fails in the middle of training may leave the other ranks
// blocked inside a collective, so then the failing rank aborts the job
// (exit status 2) when the world has more than one rank.
//
// The driver's own reductions (error agreement, logged loss, validation
// loss, the sampled token) go through host_comm.h (MPI on MPI_COMM_WORLD,
// or nothing in a single-process build), never through the zrt_*
// collectives, so the runtime's per-collective byte counters contain
// exactly the model's traffic and can be compared with its plan.
//
//===----------------------------------------------------------------------===//

#include "driver/driver.h"

#include "comm/host_comm.h"
#include "common/internal.h"
#include "driver/describe.h"
#include "driver/strformat.h"
#include "zrt/model.h"
#include "zrt/zrt.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace zrt::train {

using zrt::format;

double nowSeconds() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

std::string describe(int status) {
  const char *msg = zrt_last_error();
  return msg && *msg ? format("%s: %s", zrt_status_name(status), msg)
                     : std::string(zrt_status_name(status));
}

std::string humanCount(int64_t n) {
  const double v = static_cast<double>(n);
  if (n < 1000)
    return format("%lld", (long long)n);
  if (n < 1000000)
    return format("%.3gk", v / 1e3);
  if (n < 1000000000)
    return format("%.3gM", v / 1e6);
  return format("%.3gG", v / 1e9);
}

int Driver::agree(const std::string &err, int code) {
  // Encode (rank, code) so that MIN picks the lowest failing rank.
  int mine = err.empty() ? INT_MAX : rank_ * 4 + code;
  int first = INT_MAX;
  if (!zrt::host::allReduceMinInt(mine, &first))
    internalFailure("the all-reduce checking for errors failed");
  if (first == INT_MAX)
    return kExitOk;
  if (first / 4 == rank_) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: %s\n", err.c_str());
    std::fflush(stderr);
  }
  return first % 4;
}

void Driver::internalFailure(const std::string &what) {
  std::fflush(stdout);
  if (barShown_)
    std::fputs("\n", stdout);
  std::fprintf(stderr, "error: internal: %s (rank %d)\n", what.c_str(), rank_);
  std::fflush(stderr);
  if (metrics_)
    std::fflush(metrics_);
  if (mpiUp_ && world_ > 1)
    zrt::host::abortAll(kExitInternal);
  cleanup();
  std::exit(kExitInternal);
}

void Driver::cleanup() {
  for (int fd : importFds_)
    if (fd >= 0)
      ::close(fd);
  importFds_.clear();
  if (exportFd_ >= 0) { // training did not get to the export
    ::close(exportFd_);
    ::unlink(exportTmp_.c_str());
  }
  exportFd_ = -1;
  if (dump_)
    std::fclose(dump_);
  dump_ = nullptr;
  if (modelUp_ && m_->destroy)
    m_->destroy();
  modelUp_ = false;
  zrt_dataset_close(ds_);
  ds_ = nullptr;
  arrays_.close();
  if (metrics_) {
    if (std::fclose(metrics_) != 0)
      std::fprintf(stderr, "warning: could not finish writing --metrics %s\n",
                   o_.metrics.c_str());
    metrics_ = nullptr;
  }
  if (sampleOut_) {
    if (std::fclose(sampleOut_) != 0)
      std::fprintf(stderr,
                   "warning: could not finish writing --sample-out %s\n",
                   o_.sampleOut.c_str());
    sampleOut_ = nullptr;
  }
  if (mpiUp_)
    zrt_finalize();
  mpiUp_ = false;
}

int Driver::finish(int code) {
  cleanup();
  return code;
}

std::string Driver::setUpLossScaling() {
  if (!m_->set_loss_scale) {
    const char *flag = o_.initLossScale >= 0 ? "--init-loss-scale"
                       : o_.lossScaleGrowthInterval >= 0
                           ? "--loss-scale-growth-interval"
                       : o_.overflowRank >= 0 ? "--test-overflow-at"
                                              : nullptr;
    if (flag)
      return format("%s applies to fp16-mixed programs only (zero-compile "
                    "--precision=fp16-mixed); this one has no loss scale",
                    flag);
    return "";
  }
  if (o_.overflowRank >= world_)
    return format("--test-overflow-at: rank %lld is not one of the %d ranks",
                  (long long)o_.overflowRank, world_);
  scaler_ = std::make_unique<zrt::LossScaler>(
      o_.initLossScale >= 0 ? o_.initLossScale
                            : zrt::LossScaler::kDefaultInitScale,
      o_.lossScaleGrowthInterval >= 0
          ? o_.lossScaleGrowthInterval
          : zrt::LossScaler::kDefaultGrowthInterval);
  return "";
}

std::string Driver::checkModel() {
  if (!m_)
    return "zrt_model_get() returned NULL";
  if (m_->abi_version != ZRT_MODEL_ABI_VERSION)
    return format("the program was generated for model ABI version %d, but "
                  "this runtime implements version %d (regenerate it with "
                  "the matching zero-compile)",
                  m_->abi_version, ZRT_MODEL_ABI_VERSION);
  if (m_->num_inputs > 0) {
    // An array model (model.h zrt_input_desc).
    if (!m_->init || !m_->forward_inputs || !m_->forward_backward_inputs ||
        !m_->optimizer_step || !m_->inputs || m_->batch < 1 ||
        m_->world_size < 1 || m_->num_states < 0 ||
        (m_->num_states > 0 && !m_->states))
      return "the model description of an array model lacks init/"
             "forward_inputs/forward_backward_inputs/optimizer_step/inputs "
             "or is inconsistent";
    for (int i = 0; i < m_->num_inputs; ++i) {
      const zrt_input_desc &in = m_->inputs[i];
      if (!in.name || in.rank < 1 || !in.shape || in.shape[0] != m_->batch ||
          in.dtype < ZRT_F32 || in.dtype > ZRT_I64)
        return format("the model description's input %d is inconsistent", i);
    }
    return "";
  }
  if (!m_->init || !m_->forward || !m_->forward_backward || !m_->optimizer_step)
    return "the model description lacks init/forward/forward_backward/"
           "optimizer_step";
  if (m_->batch < 1 || m_->seq < 1 || m_->vocab < 1 ||
      m_->padded_vocab < m_->vocab || m_->world_size < 1 ||
      m_->num_states < 0 || (m_->num_states > 0 && !m_->states))
    return format("the model description is inconsistent (batch %lld, seq "
                  "%lld, vocab %lld, padded_vocab %lld, world_size %d)",
                  (long long)m_->batch, (long long)m_->seq,
                  (long long)m_->vocab, (long long)m_->padded_vocab,
                  m_->world_size);
  return "";
}

std::string Driver::checkOutputs() {
  if (std::string err = zrt::checkOutputPaths(
          dataInputs(),
          {{"--metrics", o_.metrics},
           {"--export", o_.exportPath},
           {"--dump-batches", o_.dumpBatches},
           {"--sample-out", o_.sampleOut}});
      !err.empty())
    return err;
  if (!o_.exportPath.empty())
    if (std::string err = zrt::checkExportTarget(o_.exportPath); !err.empty())
      return err;
  if (!o_.checkpointDir.empty() && !o_.overwrite &&
      !zrt::resumesInto(o_.resume, o_.checkpointDir))
    if (std::string held = zrt::existingCheckpoints(o_.checkpointDir);
        !held.empty())
      return format("--checkpoint-dir '%s' already holds checkpoints (%s) "
                    "of another run; continue that run with --resume %s, "
                    "or pass --overwrite to let this run replace them",
                    o_.checkpointDir.c_str(), held.c_str(),
                    o_.checkpointDir.c_str());
  return "";
}

void Driver::chooseThreads() {
  // Cores of the node shared by its ranks, within this rank's affinity,
  // when neither --threads nor $OMP_NUM_THREADS says.
  const int n = zrt::teamThreads(
      static_cast<int>(o_.threads),
      [](void *world) {
        return zrt::host::localRanks(*static_cast<int *>(world));
      },
      &world_);
  threads_ = n;
  zrt_set_num_threads(n);
}

void Driver::say(const std::string &line) {
  if (rank_ != 0)
    return;
  if (barShown_) {
    std::fputs("\r\033[K", stdout);
    barShown_ = false;
  }
  std::fputs(line.c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

void Driver::drawBar(int64_t step, double elapsed) {
  if (rank_ != 0 || !tty_ || o_.quiet || o_.steps == 0)
    return;
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(kWidth * step / o_.steps);
  std::string bar(static_cast<size_t>(filled), '#');
  bar.append(static_cast<size_t>(kWidth - filled), '.');
  const double left = step > 0 ? elapsed / static_cast<double>(step) *
                                     static_cast<double>(o_.steps - step)
                               : 0.0;
  std::fprintf(stdout, "\r\033[K[%s] %lld/%lld  %.0f s left", bar.c_str(),
               (long long)step, (long long)o_.steps, left);
  std::fflush(stdout);
  barShown_ = true;
}

double Driver::allMean(double local) {
  double sum = 0.0;
  if (!zrt::host::allReduceSumDouble(local, &sum))
    internalFailure("the all-reduce of a logged value failed");
  return sum / world_;
}

std::string Driver::nonFiniteMessage(int64_t step, double loss, float norm,
                                     int64_t lastSaved) const {
  std::string what =
      !std::isfinite(loss)
          ? format("the loss is %s", std::isnan(loss) ? "nan" : "inf")
          : format("the gradient norm is %s",
                   std::isfinite(norm) ? "not finite on another rank"
                   : std::isnan(norm)  ? "nan"
                                       : "inf");
  if (scaler_ && std::isfinite(loss) && !std::isfinite(norm))
    what += format(" at every loss scale down to %g (fp16-mixed: not an "
                   "overflow that a smaller scale avoids)",
                   scaler_->scale());
  std::string kept = "no checkpoint was written";
  if (savedInRun_)
    kept = format("the last checkpoint, %s/step_%lld, stays 'latest'",
                  o_.checkpointDir.c_str(), (long long)lastSaved);
  else if (!o_.resume.empty())
    kept = format("the checkpoint it resumed from (step %lld) is unchanged",
                  (long long)lastSaved);
  return format("step %lld: %s; training stopped (the weights would be "
                "non-finite from here on; try a lower --lr, or check the "
                "data); %s%s",
                (long long)step, what.c_str(), kept.c_str(),
                o_.exportPath.empty() ? "" : "; --export was not written");
}

std::string Driver::checkMemoryPlan() {
  static const char *const kNames[ZRT_MEM_NUM_KINDS] = {
      "parameters",  "gradients",   "master weights", "moments",
      "activations", "temporaries", "comm buffers", "constants"};
  int64_t planned = 0;
  std::string parts;
  for (int k = 0; k < ZRT_MEM_NUM_KINDS; ++k) {
    const int64_t b = m_->plan.arena_bytes[k];
    planned += b;
    if (b > 0)
      parts += format("%s%s %s", parts.empty() ? "" : ", ", kNames[k],
                      megabytes(b).c_str());
  }
  if (planned <= 0) // the program does not say
    return "";
  int64_t freeBytes = 0, totalBytes = 0;
  if (zrt_device_memory_info(&freeBytes, &totalBytes) != ZRT_OK)
    return format("cannot query the free memory: %s", zrt_last_error());
  if (planned <= freeBytes)
    return "";
  return format("the compiled plan needs %s (%lld bytes) per rank (%s) but "
                "only %s (%lld bytes) of %s are free; compile for a higher "
                "ZeRO stage, more ranks, --checkpoint=block or a smaller "
                "micro-batch",
                megabytes(planned).c_str(), (long long)planned, parts.c_str(),
                megabytes(freeBytes).c_str(), (long long)freeBytes,
                megabytes(totalBytes).c_str());
}

/// Rank of this process in its launch from the launcher's environment
/// (Open MPI, PMI/PMIx), before any runtime exists; 0 without a launcher.
static int launchRank() {
  for (const char *var : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"})
    if (const char *v = std::getenv(var); v && *v)
      return std::atoi(v);
  return 0;
}

std::string Driver::makeMesh() {
  tensor_ = std::max(1, m_->tensor_size);
  dataRank_ = rank_;
  dataWorld_ = world_;
  if (tensor_ == 1)
    return "";
  if (zrt_mesh_init(tensor_) != ZRT_OK)
    return format("cannot make the mesh of %d x %d ranks: %s",
                  world_ / std::max(tensor_, 1), tensor_, zrt_last_error());
  dataRank_ = zrt_axis_rank(ZRT_AXIS_DATA);
  dataWorld_ = zrt_axis_size(ZRT_AXIS_DATA);
  return "";
}

int Driver::run() {
  if (Stop stop = startUp())
    return *stop;
  if (Stop stop = checkLaunch())
    return *stop;
  if (Stop stop = openFiles())
    return *stop;
  if (Stop stop = loadState())
    return *stop;
  if (Stop stop = trainSteps()) // train_loop.cpp
    return *stop;
  return finishRun();
}

Driver::Stop Driver::startUp() {
  int argc = argc_;
  char **argv = argv_;
  // 1. Flags, before the runtime starts: parsing is deterministic, so every
  //    process reaches the same verdict without talking to the others, and
  //    --help and flag errors need neither MPI nor a GPU. The launch's first
  //    process prints.
  const bool first = launchRank() == 0;
  if (std::string err = parseOptions(argc, argv, &o_); !err.empty()) {
    if (first)
      std::fprintf(stderr, "error: %s\n", err.c_str());
    return kExitUser;
  }
  if (o_.help) {
    if (first)
      std::printf(kUsage, argc > 0 ? argv[0] : "program");
    return kExitOk;
  }
  if (o_.version || o_.printConfig) {
    if (first)
      std::fputs((o_.version ? zrt::versionText(m_)
                             : zrt::describeProgram(m_))
                     .c_str(),
                 stdout);
    return kExitOk;
  }
  // A runtime that cannot start (no MPI, no GPU) is the machine's problem,
  // not an internal one: exit status 1.
  if (zrt_init(&argc, &argv) != ZRT_OK) {
    std::fprintf(stderr, "error: cannot start the runtime: %s\n",
                 zrt_last_error());
    return kExitUser;
  }
  mpiUp_ = true;
  rank_ = zrt_rank();
  world_ = zrt_world_size();
  // mpirun (Open MPI) hands rank 0 a pseudo-terminal whatever its own
  // stdout is, so under a launcher isatty() says nothing: no progress bar.
  tty_ = rank_ == 0 && isatty(STDOUT_FILENO) &&
         !std::getenv("OMPI_COMM_WORLD_SIZE") && !std::getenv("PMI_SIZE");
  return std::nullopt;
}

Driver::Stop Driver::checkLaunch() {
  // 2. The model against this runtime and this launch.
  if (int code = agree(checkModel(), kExitInternal))
    return finish(code);
  if (int code = agree(setUpLossScaling(), kExitUser))
    return finish(code);
  if (int code = agree(
          world_ == m_->world_size
              ? std::string()
              : format("this program was compiled for world size %d but runs "
                       "on %d rank%s (mpirun -np %d)",
                       m_->world_size, world_, world_ == 1 ? "" : "s",
                       m_->world_size),
          kExitUser))
    return finish(code);
  if (int code = agree(makeMesh(), kExitUser))
    return finish(code);
  globalBatch_ = m_->batch * dataWorld_;
  streamBatch_ = globalBatch_;
  chooseThreads();
  return std::nullopt;
}

Driver::Stop Driver::openFiles() {
  // 3. Data and output files: no output may be an input or another output,
  //    and a fresh run does not write into another run's checkpoints.
  std::string err = openData();
  if (err.empty() && rank_ == 0)
    err = checkOutputs();
  if (err.empty() && rank_ == 0 && !o_.metrics.empty()) {
    // A resumed run continues the log of the run it resumes.
    metrics_ = std::fopen(o_.metrics.c_str(), o_.resume.empty() ? "w" : "a");
    if (!metrics_)
      err = format("cannot write --metrics file '%s': %s", o_.metrics.c_str(),
                   std::strerror(errno));
  }
  if (err.empty() && !o_.sampleOut.empty() && !m_->last_logits)
    err = format("--sample-out: model '%s' has no @logits function, so the "
                 "program cannot sample",
                 m_->name ? m_->name : "?");
  if (err.empty() && rank_ == 0 && !o_.sampleOut.empty()) {
    // Opened now, so an unwritable path fails before training; a resumed
    // run appends its sample to those of the run it resumes.
    sampleOut_ =
        std::fopen(o_.sampleOut.c_str(), o_.resume.empty() ? "w" : "a");
    if (!sampleOut_)
      err = format("cannot write --sample-out file '%s': %s",
                   o_.sampleOut.c_str(), std::strerror(errno));
  }
  if (err.empty() && rank_ == 0 && !o_.tensorboard.empty()) {
    tb_ = std::make_unique<zrt::EventWriter>();
    err = tb_->open(o_.tensorboard);
  }
  if (int code = agree(err, kExitUser))
    return finish(code);
  // The parameters' storage (for --import / --export), then the files.
  if (!o_.importPath.empty() || !o_.exportPath.empty()) {
    err = params_.build(m_, dataWorld_);
    if (int code = agree(err.empty() ? err
                                     : "the model description cannot be "
                                       "imported or exported: " +
                                           err,
                         kExitInternal))
      return finish(code);
  }
  err.clear();
  if (!o_.importPath.empty())
    err = openImport();
  if (err.empty() && !o_.exportPath.empty())
    err = openExport();
  if (err.empty() && !o_.dumpBatches.empty())
    err = openDump();
  if (int code = agree(err, kExitUser))
    return finish(code);
  // Checkpoints (checkpoint.cpp): find and verify --resume, create the dir.
  if (!o_.checkpointDir.empty() || !o_.resume.empty()) {
    ckpt_ = std::make_unique<zrt_ckpt::Checkpointer>(
        m_, rank_, world_,
        [this](const std::string &e, int c) { return agree(e, c); });
    ckpt_->setCrashAfterFiles(o_.crashAfterFiles);
    ckpt_->setKeepLast(o_.keepCheckpoints);
    if (!o_.resume.empty())
      if (int code = agree(ckpt_->open(o_.resume), kExitUser))
        return finish(code);
    if (!o_.checkpointDir.empty())
      if (int code = agree(ckpt_->prepare(o_.checkpointDir), kExitUser))
        return finish(code);
  }
  return std::nullopt;
}

Driver::Stop Driver::loadState() {
  // 4. Model state, once the plan is known to fit (never an out-of-memory
  //    error in the middle of training).
  if (int code = agree(checkMemoryPlan(), kExitUser))
    return finish(code);
  std::string err;
  zrt_clear_error();
  if (int st = m_->init(o_.seed))
    err = "model init failed: " + describe(st);
  else
    modelUp_ = true;
  if (int code = agree(err, kExitInternal))
    return finish(code);
  if (!o_.importPath.empty())
    if (int code = agree(loadImport(), kExitUser))
      return finish(code);
  std::vector<std::string> resumeNotes;
  if (!o_.resume.empty()) {
    if (int code = agree(ckpt_->load(), kExitUser))
      return finish(code);
    resumeNotes = ckpt_->notes(runInfo());
    lastSaved_ = ckpt_->resumed().step;
    firstStep_ = lastSaved_ + 1;
    // The sample stream continues where the checkpoint left it, whatever
    // this run's batch, accumulation or world size.
    o_.seed = ckpt_->resumed().run.seed;
    samplePos_ = ckpt_->resumed().run.nextSample;
    streamBatch_ = ckpt_->resumed().run.streamBatch;
    // AdamW's step count and the loss scaler continue as well (a
    // checkpoint without them: every step was an update, S restarts).
    const zrt_ckpt::RunInfo &was = ckpt_->resumed().run;
    updates_ = was.updates >= 0 ? was.updates : lastSaved_;
    if (scaler_ && was.lossScaled && o_.initLossScale < 0)
      scaler_->restore(was.lossScale, was.lossScaleGoodSteps);
  }

  // A checkpoint at or past --steps leaves nothing to train.
  if (!o_.resume.empty() && lastSaved_ > o_.steps)
    return finish(agree(
        format("--resume: the checkpoint is at step %lld, past --steps %lld "
               "(--steps counts from the start of the run: pass --steps > "
               "%lld to train further)",
               (long long)lastSaved_, (long long)o_.steps,
               (long long)lastSaved_),
        kExitUser));
  if (!o_.resume.empty() && lastSaved_ == o_.steps) {
    say(format("nothing to do: the checkpoint %s is already at --steps %lld "
               "(pass --steps > %lld to train further)",
               ckpt_->resumed().dir.c_str(), (long long)o_.steps,
               (long long)o_.steps));
    if (!o_.exportPath.empty())
      if (int code = agree(writeExport(), kExitUser))
        return finish(code);
    return finish(kExitOk);
  }

  ids_.resize(static_cast<size_t>(m_->batch * m_->seq));
  targets_.resize(ids_.size());
  printBanner();
  if (!o_.importPath.empty())
    say(format("imported %zu parameters from %s", params_.entries.size(),
               o_.importPath.c_str()));
  for (const std::string &note : resumeNotes)
    say(note);
  writeConfig();
  return std::nullopt;
}

int Driver::finishRun() {
  if (!o_.checkpointDir.empty() && o_.steps > lastSaved_) { // the final one
    std::vector<std::string> removed;
    if (int code =
            ckpt_->save(o_.checkpointDir, o_.steps, runInfo(), &removed))
      return finish(code);
    say(format("checkpoint: saved step %lld to %s/step_%lld",
               (long long)o_.steps, o_.checkpointDir.c_str(),
               (long long)o_.steps));
    for (const std::string &line : removed)
      say(line);
  }
  if (!o_.dumpBatches.empty())
    if (int code = agree(closeDump(), kExitUser))
      return finish(code);
  // Final validation unless the last step just ran one.
  if (validation_ && (o_.steps == 0 || o_.steps % o_.valEvery != 0)) {
    if (std::string err = validate(&lastVal_); !err.empty())
      return finish(agree(err, kExitUser));
    say(format("val loss %.4f", lastVal_));
    Json v;
    v.key("type").str("val").key("step").integer(o_.steps);
    v.key("val_loss").num(lastVal_);
    metric(v);
    scalars(o_.steps, {{"val/loss", lastVal_}});
  }
  const double elapsed = nowSeconds() - tStart_;
  const int64_t commAll = Snapshot::take().since(commStart_).total();
  std::string summary =
      format("done: %lld steps in %.1f s", (long long)o_.steps, elapsed);
  if (o_.steps > 0)
    summary += format(" | final loss %.4f", lastLoss_);
  if (validation_)
    summary += format(" | val loss %.4f", lastVal_);
  summary += format(" | comm %s | peak %s", megabytes(commAll).c_str(),
                    megabytes(zrt_memory_peak_total_bytes()).c_str());
  say(summary);
  if (!o_.exportPath.empty())
    if (int code = agree(writeExport(), kExitUser))
      return finish(code);

  // 6. Sample.
  if (m_->last_logits && o_.sampleTokens > 0)
    if (std::string err = sample(); !err.empty())
      return finish(agree(err, kExitUser));
  // A metrics log or sample file that could not be written fails the run
  // (after everything else was done and saved).
  return finish(
      agree(metricsErr_.empty() ? sampleErr_ : metricsErr_, kExitUser));
}

} // namespace zrt::train

extern "C" int zrt_train_main(int argc, char **argv,
                              const zrt_model_desc *model) {
  zrt::backendStartup(argc, argv); // may exec the program again
  zrt::train::Driver driver(argc, argv, model);
  return driver.runGuarded();
}
