//===- options.h - The training driver's command line -----------*- C++ -*-===//
///
/// \file
/// What zrt_train_main's command line says (Options), how it is parsed
/// (parseOptions: deterministic, so every rank reaches the same verdict) and
/// the learning-rate schedule it selects (learningRate). Internal to the
/// runtime.
///
//===----------------------------------------------------------------------===//

#ifndef ZRT_SRC_DRIVER_OPTIONS_H
#define ZRT_SRC_DRIVER_OPTIONS_H

#include <cstdint>
#include <string>

namespace zrt::train {

/// --lr-schedule: the learning rate over the optimizer steps (learningRate).
enum class Schedule { Cosine, Constant, Warmup, WarmupDecay, WarmupCosine };

struct Options {
  std::string data;    // --data: comma-separated paths and globs (shards)
  std::string valData; // --val-data: the same, the validation split
  int64_t steps = 200;
  int64_t gradAccum = 1;
  double lr = 1e-3;
  double minLr = -1.0; // < 0: lr / 10
  int64_t warmup = 0;
  Schedule schedule = Schedule::Cosine;
  bool logWarmup = true;    // --warmup-type log (DeepSpeed's default) | linear
  double warmupMinLr = 0.0; // --warmup-min-lr: where the warmup starts
  int64_t decaySteps = -1;  // --decay-steps (total_num_steps); < 0: --steps
  uint64_t seed = 1337;
  int64_t valEvery = 50;
  int64_t valBatches = 8;
  double valFraction = 0.1;
  bool valFractionGiven = false; // --val-fraction on the command line
  std::string metrics;
  int64_t sampleTokens = 200;
  std::string sampleOut; // --sample-out: JSON lines of the sampled ids
  double temperature = 1.0;
  int64_t threads = 0; // 0: automatic
  std::string exportPath;  // --export: safetensors of the final parameters
  std::string importPath;  // --import: safetensors loaded after init
  std::string dumpBatches; // --dump-batches: int32 records of every batch
  std::string checkpointDir;   // --checkpoint-dir (checkpoint_save.cpp)
  int64_t checkpointEvery = 0; // --checkpoint-every: 0 = only at the end
  int64_t keepCheckpoints = 0; // --keep-checkpoints: 0 = keep all
  double peakTflops = 0;       // --peak-tflops: per rank; 0 = MFU not shown
  std::string tensorboard;     // --tensorboard DIR: event file (rank 0)
  std::string resume;          // --resume: step dir or checkpoint dir
  int64_t crashAfterFiles = -1; // test hook --checkpoint-crash-after-files
  bool overwrite = false;       // --overwrite: may replace DIR's checkpoints
  // fp16-mixed dynamic loss scaling (loss_scaler.h); < 0: not given.
  double initLossScale = -1.0;         // --init-loss-scale
  int64_t lossScaleGrowthInterval = -1; // --loss-scale-growth-interval
  // Test hook --test-overflow-at RANK:STEP: that rank's backward at that
  // step overflows (runtime/README.md); -1: off.
  int64_t overflowRank = -1, overflowStep = -1;
  bool quiet = false;
  bool help = false;
  bool version = false;     // --version
  bool printConfig = false; // --print-config
};

/// The --help text; a printf format whose one %s is the program name.
extern const char *const kUsage;

/// Parses argv into *o. Returns "" or the one-line error message (no
/// "error: " prefix). Deterministic: every rank reaches the same verdict.
std::string parseOptions(int argc, char **argv, Options *o);

/// The learning rate of 0-based optimizer step `it` under o's schedule
/// (options.cpp has the formulas).
double learningRate(const Options &o, int64_t it);

} // namespace zrt::train

#endif // ZRT_SRC_DRIVER_OPTIONS_H
