//===- driver.h - The training driver (zrt_train_main) ----------*- C++ -*-===//
///
/// \file
/// Driver: one run of zrt_train_main, from the command line to the exit
/// status. Its methods live by job: driver.cpp (the phases of run() but
/// the training steps, rank agreement, start-up checks, the banner),
/// train_loop.cpp (the training steps), options.cpp (the command line),
/// train_data.cpp (batches), metrics.cpp (--metrics, --tensorboard),
/// import_export.cpp (--import, --export), sample.cpp (sampling,
/// --dump-batches, --sample-out). Internal to the runtime.
///
//===----------------------------------------------------------------------===//

#ifndef ZRT_SRC_DRIVER_DRIVER_H
#define ZRT_SRC_DRIVER_DRIVER_H

#include "driver/arrays.h"
#include "driver/checkpoint.h"
#include "driver/loss_scaler.h"
#include "driver/metrics.h"
#include "driver/options.h"
#include "driver/param_table.h"
#include "driver/paths.h"
#include "driver/tensorboard.h"
#include "zrt/model.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace zrt::train {

/// Exit statuses of zrt_train_main: success, a user error (flags, data,
/// files), an internal failure (the runtime or the program).
constexpr int kExitOk = 0;
constexpr int kExitUser = 1;
constexpr int kExitInternal = 2;

/// Seconds on a monotonic clock.
double nowSeconds();

/// "ZRT_ERR_X: message" for a failed zrt_ or model call (the message may be
/// missing when a model function returns a status without setting one).
std::string describe(int status);

/// A count with an SI suffix: 950, 65.5k, 1.23M, 4.56G.
std::string humanCount(int64_t n);

/// One run of zrt_train_main over a compiled model (zrt/model.h): parses the
/// command line, starts the runtime, checks the model, data and outputs on
/// every rank and agrees on the verdict, trains, validates, saves, exports
/// and samples. run() returns the exit status (kExit*), the same on every
/// rank.
class Driver {
public:
  Driver(int argc, char **argv, const zrt_model_desc *model)
      : argc_(argc), argv_(argv), m_(model) {}
  ~Driver() { cleanup(); }

  /// run() with exceptions (std::bad_alloc) turned into internalFailure.
  int runGuarded() {
    try {
      return run();
    } catch (const std::exception &e) {
      internalFailure(e.what());
    }
  }

private:
  /// The phases of run(), in order; each returns what run() returns when
  /// the run stops there (its exit status, through finish() once the
  /// runtime is up) or nullopt to go on to the next.
  using Stop = std::optional<int>;
  int run();
  /// 1. The command line (--help, --version and --print-config stop here)
  /// and the runtime's start; no rank talks to another before it.
  Stop startUp();
  /// 2. The model against this runtime and launch: checkModel, the loss
  /// scaling flags, the world size, the mesh; then the global batch and
  /// the thread count.
  Stop checkLaunch();
  /// 3. The data, the output files (checkOutputs, --metrics,
  /// --sample-out, --tensorboard), the --import / --export /
  /// --dump-batches files and the checkpoints (--resume found and
  /// verified, --checkpoint-dir created).
  Stop openFiles();
  /// 4. The model state once the memory plan fits: init, --import,
  /// --resume (firstStep_, lastSaved_ and the sample stream from the
  /// checkpoint; a checkpoint at or past --steps stops the run); then the
  /// banner and the config record.
  Stop loadState();
  /// 5. The steps firstStep_ .. --steps with their logging, validation and
  /// checkpoints (train_loop.cpp); sets tStart_, commStart_, lastLoss_ and
  /// lastVal_.
  Stop trainSteps();
  /// 6. The final checkpoint, --dump-batches closed, the final validation,
  /// the summary line, --export, the sample, and the verdict on the
  /// metrics and sample files: run()'s exit status.
  int finishRun();
  // Agrees with all ranks on whether any of them failed (`err` non-empty on
  // the failing ones). The lowest failing rank prints its message; every
  // rank returns that rank's exit code (0 if none failed).
  int agree(const std::string &err, int code);
  // A failure that the other ranks cannot be told about (they may be inside
  // a collective): prints and aborts the job when it has several ranks.
  [[noreturn]] void internalFailure(const std::string &what);
  int finish(int code);
  void cleanup();

  std::string checkModel();
  std::string openData();
  /// The input files of the run for checkOutputs (--data, --val-data and
  /// --import).
  std::vector<zrt::NamedPath> dataInputs() const;
  /// Rank 0: "" or why an output path would destroy a file (paths.h).
  std::string checkOutputs();
  void chooseThreads();
  /// Makes the mesh N_d x M of a tensor-parallel program (zrt_mesh_init)
  /// and sets dataRank_ / dataWorld_; "" or why the mesh cannot be made.
  std::string makeMesh();
  /// "" when the plan's arena bytes fit the backend's free memory
  /// (zrt_device_memory_info), else the message refusing to start.
  std::string checkMemoryPlan();
  void printBanner();
  void writeConfig();
  double allMean(double local); // mean over ranks (host_comm, not counted)
  /// The mean validation loss into *loss; "" or the data error.
  std::string validate(double *loss);
  /// "" or the data error of the prompt.
  std::string sample();
  /// This rank's rows of global batch `index` of `split`
  /// (zrt_dataset_batch); "" or the data error (a token id outside the
  /// vocabulary), the same on every rank.
  std::string fetchBatch(int split, int64_t index, int shuffle);
  /// This rank's rows of the next global training micro-batch: samples
  /// [samplePos_ + rank*B, +B) of the stream; advances samplePos_. "" or
  /// the data error, the same on every rank.
  std::string fetchTrainBatch();
  /// The message of a failed draw: zrt_last_error() (naming the file and
  /// offset) and what stopped.
  std::string dataError(const char *what) const;

  // --import / --export / --dump-batches.
  std::string openImport();
  std::string openImportFile(const std::string &path, int file);
  std::string loadImport();
  std::string openExport();
  std::string writeExport();
  std::string openDump();
  void dumpBatch(int64_t step, int64_t micro);
  void dumpRows(int64_t step, int64_t micro); // dumpBatch of an array model
  /// Rank 0: appends the gathered record (dumpRecord_) to --dump-batches.
  void writeDumpRecord();
  std::string closeDump();

  /// The one line that stops a run whose loss or gradient norm at `step`
  /// is not finite; names what is kept (`lastSaved`: last checkpoint).
  std::string nonFiniteMessage(int64_t step, double loss, float norm,
                               int64_t lastSaved) const;

  void say(const std::string &line); // rank 0, clears the progress bar first
  void drawBar(int64_t step, double elapsed);
  void metric(const Json &j);

  int argc_;
  char **argv_;
  const zrt_model_desc *m_;
  Options o_;
  int rank_ = 0, world_ = 1;
  /// The mesh N_d x M (model.h tensor_size): this rank's data index d and
  /// N_d, which choose its micro-batch (the M ranks of a tensor group share
  /// one); rank_ / world_ stay the whole world's.
  int dataRank_ = 0, dataWorld_ = 1, tensor_ = 1;
  bool mpiUp_ = false, modelUp_ = false;
  bool tty_ = false, barShown_ = false;
  int threads_ = 1;
  zrt_dataset ds_ = nullptr;
  /// An array model's data (model.h num_inputs > 0; arrays.h).
  zrt::ArrayData arrays_;
  bool arrayModel() const { return m_->num_inputs > 0; }
  /// Loss of the micro-batch in ids_/targets_ or arrays_ (model.h forward
  /// or forward_inputs, with `backward`: forward_backward[_inputs]).
  int runStep(bool backward, float *loss) {
    if (arrayModel())
      return backward ? m_->forward_backward_inputs(arrays_.inputs(), loss)
                      : m_->forward_inputs(arrays_.inputs(), loss);
    return backward ? m_->forward_backward(ids_.data(), targets_.data(), loss)
                    : m_->forward(ids_.data(), targets_.data(), loss);
  }
  std::vector<std::string> dataFiles_, valFiles_; // expanded --data, --val-data
  /// Every rank draws the whole global batch (inputs, targets), then takes
  /// its rows: a token outside the vocabulary stops all ranks at the same
  /// micro-batch with the same message, with no extra collective.
  std::vector<int32_t> globalIds_, globalTargets_;
  std::FILE *metrics_ = nullptr;
  std::string metricsErr_; // rank 0: the first failed write of --metrics
  std::FILE *sampleOut_ = nullptr; // rank 0, --sample-out
  std::string sampleErr_;          // rank 0: its failed write
  /// Rank 0: appends the sampled ids as one JSON line to --sample-out;
  /// returns "" or why the file could not be written.
  std::string writeSample(const std::vector<int32_t> &prompt,
                          const std::vector<int32_t> &ids, int split);
  std::unique_ptr<zrt::EventWriter> tb_; // rank 0, --tensorboard
  /// Rank 0: appends the scalars of `step` to the --tensorboard file (a
  /// failed write is reported like one of --metrics).
  void scalars(int64_t step,
               std::initializer_list<std::pair<const char *, double>> values);
  int64_t globalBatch_ = 0, dataVocab_ = 0;
  // The training sample stream (zrt_dataset_sequences): the next sample's
  // position and the stream's batch; a resumed run takes both from the
  // checkpoint.
  int64_t samplePos_ = 0, streamBatch_ = 0;
  bool savedInRun_ = false; // this run wrote a checkpoint
  /// The first step to train (1, or the resumed checkpoint's step + 1) and
  /// the step of the last checkpoint written or resumed (0: none).
  int64_t firstStep_ = 1, lastSaved_ = 0;
  /// When training started and the collective bytes then (for the
  /// summary); the last step's mean loss and the last validation loss.
  double tStart_ = 0.0;
  Snapshot commStart_{};
  double lastLoss_ = NAN, lastVal_ = NAN;
  // fp16-mixed (model.h set_loss_scale): the dynamic loss scale; null
  // otherwise. updates_: AdamW updates applied (skipped steps excluded),
  // the step count of its bias correction.
  std::unique_ptr<zrt::LossScaler> scaler_;
  int64_t updates_ = 0;
  /// "" or why the loss-scaling flags do not fit the program.
  std::string setUpLossScaling();
  bool byteLevel_ = false, validation_ = false;
  std::vector<int32_t> ids_, targets_;

  ParamTable params_;
  struct FileTensor {
    int dtype;
    int64_t begin; // byte offset of the data in the file
    int file;      // index into importFds_
  };
  std::vector<int> importFds_;                 // every rank: the files read
  std::map<std::string, FileTensor> imported_; // the --import files' tensors
  // Each imported tensor's shape and file (for messages).
  std::map<std::string, std::pair<std::vector<int64_t>, std::string>>
      importShapes_;
  int exportFd_ = -1;                          // rank 0: the temporary file
  std::string exportTmp_;
  std::FILE *dump_ = nullptr; // rank 0
  std::string dumpErr_;
  std::vector<int32_t> dumpRecord_;
  std::unique_ptr<zrt_ckpt::Checkpointer> ckpt_; // --checkpoint-dir, --resume
  zrt_ckpt::RunInfo runInfo() const {
    zrt_ckpt::RunInfo r{o_.seed,  o_.gradAccum, globalBatch_, m_->seq,
                        o_.lr,    o_.minLr,     o_.warmup,    o_.steps,
                        samplePos_, streamBatch_};
    r.updates = updates_;
    if (scaler_) {
      r.lossScaled = true;
      r.lossScale = scaler_->scale();
      r.lossScaleGoodSteps = scaler_->goodSteps();
    }
    return r;
  }
};

} // namespace zrt::train

#endif // ZRT_SRC_DRIVER_DRIVER_H
