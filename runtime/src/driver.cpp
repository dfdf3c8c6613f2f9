//===- driver.cpp - The training driver (zrt_train_main) ------------------===//
//
// Runs a compiled training step (zrt/model.h) end to end: process start-up,
// command line, data, learning-rate schedule, gradient accumulation, logging
// (stdout and a JSON-lines metrics file), validation and sampling.
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

#include "arrays.h"
#include "checkpoint.h"
#include "data_files.h"
#include "describe.h"
#include "fileio.h"
#include "host_comm.h"
#include "import_files.h"
#include "internal.h"
#include "paths.h"
#include "strformat.h"
#include "tensorboard.h"
#include "safetensors.h"
#include "rng_math.h"
#include "loss_scaler.h"
#include "state_io.h"
#include "zrt/model.h"
#include "zrt/zrt.h"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

using zrt::preadAll;
using zrt::pwriteAll;

constexpr int kExitOk = 0;
constexpr int kExitUser = 1;
constexpr int kExitInternal = 2;

constexpr double kPi = 3.14159265358979323846;
constexpr uint64_t kSampleStream = 0x53414d504c45ULL; // "SAMPLE"

const char *const kCollNames[ZRT_COLL_NUM_KINDS] = {
    "all_gather", "reduce_scatter", "all_reduce", "broadcast"};
const char *const kStateNames[5] = {"param", "grad", "master", "exp_avg",
                                    "exp_avg_sq"};

using zrt::format;

double nowSeconds() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

//===----------------------------------------------------------------------===//
// Command line
//===----------------------------------------------------------------------===//

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
  std::string checkpointDir;   // --checkpoint-dir (checkpoint.cpp)
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

const char *const kUsage =
    "usage: %s --data PATH [flags]\n"
    "\n"
    "Trains the compiled model on PATH (a text file read as byte tokens, or\n"
    "an llm.c .bin token file). Launch with `mpirun -np N` for N ranks.\n"
    "\n"
    "  --data PATH          training data (required): for token models a\n"
    "                       text file (bytes) or llm.c .bin tokens, or a\n"
    "                       comma-separated list of them and globs (quoted,\n"
    "                       e.g. 'fineweb_train_*.bin', sorted) read as one\n"
    "                       memory-mapped stream (docs/data.md); for a\n"
    "                       model with named inputs (zero-model mlp), a\n"
    "                       safetensors file or a directory of NAME.npy\n"
    "                       with one array per input (first dim = samples;\n"
    "                       no sampling at the end)\n"
    "  --val-data PATH      validation tokens, the same forms (instead of the\n"
    "                       last --val-fraction of --data)\n"
    "  --steps N            optimizer steps (default 200)\n"
    "  --grad-accum K       micro-batches per step (default 1)\n"
    "  --lr F               maximum learning rate (default 1e-3)\n"
    "  --min-lr F           final learning rate (default lr/10)\n"
    "  --warmup N           linear warmup steps, then cosine decay to\n"
    "                       --min-lr at --steps (default 0)\n"
    "  --lr-schedule S      cosine (default: nanoGPT's warmup + cosine),\n"
    "                       constant (--lr throughout), or DeepSpeed's\n"
    "                       warmup (WarmupLR), warmup-decay (WarmupDecayLR),\n"
    "                       warmup-cosine (WarmupCosineLR): --warmup steps\n"
    "                       (at least 2) from --warmup-min-lr to --lr, then\n"
    "                       --lr / linear to --warmup-min-lr / cosine to\n"
    "                       --min-lr at --decay-steps\n"
    "  --warmup-type T      log (default) or linear (DeepSpeed schedules)\n"
    "  --warmup-min-lr F    learning rate at step 1 (DeepSpeed schedules;\n"
    "                       default 0)\n"
    "  --decay-steps N      end of the decay (total_num_steps; default\n"
    "                       --steps)\n"
    "  --seed S             seed of the initialization and of batch\n"
    "                       sampling (default 1337)\n"
    "  --val-every N        validate every N steps and at the end\n"
    "                       (default 50; 0 = never)\n"
    "  --val-batches N      validation batches (default 8)\n"
    "  --val-fraction F     last fraction of the data used for validation\n"
    "                       (default 0.1)\n"
    "  --metrics FILE       write JSON lines (config, step, val) to FILE\n"
    "  --sample-tokens N    tokens to sample at the end (default 200;\n"
    "                       0 = none)\n"
    "  --temperature F      sampling temperature (default 1.0; 0 = greedy)\n"
    "  --sample-out FILE    rank 0 also writes the sample as one JSON line\n"
    "                       {\"type\":\"sample\",\"step\":N,\"ids\":[...],...}\n"
    "                       (a resumed run appends; `zero-data decode\n"
    "                       --tokenizer TOK FILE` turns the ids into text)\n"
    "  --threads N          OpenMP/BLAS threads per rank (default:\n"
    "                       $OMP_NUM_THREADS, else cores / ranks on the node)\n"
    "  --import PATH        after init, load the parameters (and master\n"
    "                       weights) from a safetensors file (F32, BF16 or F16)\n"
    "  --export PATH        after training, write the parameters as f32\n"
    "                       safetensors (rank 0; the initial weights with\n"
    "                       --steps 0)\n"
    "  --dump-batches PATH  rank 0 writes every training micro-batch (the\n"
    "                       global batch) as int32 records (runtime/README.md)\n"
    "  --checkpoint-dir DIR write sharded checkpoints to DIR/step_<N>/ (every\n"
    "                       --checkpoint-every steps and after the last step)\n"
    "  --checkpoint-every K checkpoint every K steps (default 0: only at the\n"
    "                       end; docs/checkpoints.md)\n"
    "  --tensorboard DIR    rank 0 also writes the metrics' scalars as a\n"
    "                       TensorBoard event file in DIR (a new file per run)\n"
    "  --peak-tflops F      peak TFLOP/s of one rank's device (e.g. 989 for an\n"
    "                       H100/H200's dense bf16): the step line then shows\n"
    "                       MFU = achieved model TFLOP/s / F\n"
    "  --keep-checkpoints K after each save keep only the K newest step\n"
    "                       directories of --checkpoint-dir (and always the\n"
    "                       one `latest` names); default 0: keep all\n"
    "  --resume PATH        continue from a step directory, or from the\n"
    "                       latest checkpoint of a checkpoint directory (any\n"
    "                       world size or ZeRO stage)\n"
    "  --overwrite          let a run that does not resume from DIR write into\n"
    "                       a --checkpoint-dir that already holds checkpoints\n"
    "                       (refused otherwise)\n"
    "  --init-loss-scale F  fp16-mixed programs: the first loss scale S\n"
    "                       (default 65536 = 2^16, as torch.amp.GradScaler)\n"
    "  --loss-scale-growth-interval N\n"
    "                       fp16-mixed: double S after N consecutive steps\n"
    "                       without overflow (default 2000); an overflow\n"
    "                       skips the step on every rank and halves S\n"
    "  --quiet              no per-step lines, no progress bar\n"
    "  --print-config       print what the program was compiled with (model,\n"
    "                       partition, precision, optimizer, collectives,\n"
    "                       memory plan) and exit\n"
    "  --version            print the runtime's and the compiler's versions\n"
    "  --help               print this help\n";

// Parses a whole string as a base-10 integer in [lo, hi].
bool parseInt(const std::string &flag, const std::string &s, int64_t lo,
              int64_t hi, int64_t *out, std::string *err) {
  errno = 0;
  char *end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno == ERANGE) {
    *err = format("%s: '%s' is not an integer", flag.c_str(), s.c_str());
    return false;
  }
  if (v < lo || v > hi) {
    *err = hi == INT64_MAX
               ? format("%s: %lld is out of range (must be >= %lld)",
                        flag.c_str(), v, (long long)lo)
               : format("%s: %lld is out of range [%lld, %lld]", flag.c_str(),
                        v, (long long)lo, (long long)hi);
    return false;
  }
  *out = v;
  return true;
}

// Parses a whole string as a finite floating-point number.
bool parseDouble(const std::string &flag, const std::string &s, double *out,
                 std::string *err) {
  errno = 0;
  char *end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(v)) {
    *err = format("%s: '%s' is not a finite number", flag.c_str(), s.c_str());
    return false;
  }
  *out = v;
  return true;
}

// Parses argv into *o. Returns "" or an error message. Deterministic, so
// every rank reaches the same verdict.
std::string parseOptions(int argc, char **argv, Options *o) {
  std::string err;
  bool sawData = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.size() < 3 || arg.compare(0, 2, "--") != 0)
      return format("unexpected argument '%s' (flags start with --; see "
                    "--help)",
                    arg.c_str());
    std::string name = arg, value;
    bool inlineValue = false;
    size_t eq = arg.find('=');
    if (eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      inlineValue = true;
    }
    // Boolean flags.
    if (name == "--quiet" || name == "--help" || name == "--overwrite" ||
        name == "--version" || name == "--print-config") {
      if (inlineValue)
        return format("%s takes no value", name.c_str());
      (name == "--quiet"     ? o->quiet
       : name == "--help"    ? o->help
       : name == "--version" ? o->version
       : name == "--print-config" ? o->printConfig
                                  : o->overwrite) = true;
      continue;
    }
    static const char *const kValueFlags[] = {
        "--data",        "--val-data",     "--steps",        "--grad-accum", "--lr",
        "--min-lr",      "--warmup",       "--seed",       "--val-every",
        "--val-batches", "--val-fraction", "--metrics",    "--sample-tokens",
        "--temperature", "--threads",      "--export",     "--import",
        "--dump-batches", "--checkpoint-dir", "--checkpoint-every",
        "--keep-checkpoints", "--peak-tflops", "--tensorboard",
        "--resume",       "--checkpoint-crash-after-files", "--lr-schedule",
        "--warmup-type",  "--warmup-min-lr", "--decay-steps",
        "--init-loss-scale", "--loss-scale-growth-interval",
        "--test-overflow-at", "--sample-out"};
    bool known = false;
    for (const char *f : kValueFlags)
      known = known || name == f;
    if (!known)
      return format("unknown flag %s (see --help)", name.c_str());
    if (!inlineValue) {
      if (i + 1 >= argc)
        return format("%s needs a value", name.c_str());
      value = argv[++i];
    }
    bool ok = true;
    if (name == "--data" || name == "--val-data") {
      if (value.empty())
        return format("%s: the path is empty", name.c_str());
      (name == "--data" ? o->data : o->valData) = value;
      sawData = sawData || name == "--data";
    } else if (name == "--steps") {
      ok = parseInt(name, value, 0, INT64_MAX / 4, &o->steps, &err);
    } else if (name == "--grad-accum") {
      ok = parseInt(name, value, 1, 1 << 20, &o->gradAccum, &err);
    } else if (name == "--lr") {
      ok = parseDouble(name, value, &o->lr, &err);
      if (ok && o->lr < 0)
        return format("--lr: %s must be >= 0", value.c_str());
    } else if (name == "--min-lr") {
      ok = parseDouble(name, value, &o->minLr, &err);
      if (ok && o->minLr < 0)
        return format("--min-lr: %s must be >= 0", value.c_str());
    } else if (name == "--warmup") {
      ok = parseInt(name, value, 0, INT64_MAX / 4, &o->warmup, &err);
    } else if (name == "--lr-schedule") {
      static const std::pair<const char *, Schedule> kSchedules[] = {
          {"cosine", Schedule::Cosine},
          {"constant", Schedule::Constant},
          {"warmup", Schedule::Warmup},
          {"warmup-decay", Schedule::WarmupDecay},
          {"warmup-cosine", Schedule::WarmupCosine}};
      bool found = false;
      for (const auto &[n, k] : kSchedules)
        if (value == n) {
          o->schedule = k;
          found = true;
        }
      if (!found)
        return format("--lr-schedule: '%s' is not cosine, constant, warmup, "
                      "warmup-decay or warmup-cosine",
                      value.c_str());
    } else if (name == "--warmup-type") {
      if (value != "log" && value != "linear")
        return format("--warmup-type: '%s' is not log or linear",
                      value.c_str());
      o->logWarmup = value == "log";
    } else if (name == "--warmup-min-lr") {
      ok = parseDouble(name, value, &o->warmupMinLr, &err);
      if (ok && o->warmupMinLr < 0)
        return format("--warmup-min-lr: %s must be >= 0", value.c_str());
    } else if (name == "--decay-steps") {
      ok = parseInt(name, value, 1, INT64_MAX / 4, &o->decaySteps, &err);
    } else if (name == "--seed") {
      errno = 0;
      char *end = nullptr;
      unsigned long long v = std::strtoull(value.c_str(), &end, 10);
      if (value.empty() || value[0] == '-' || value[0] == '+' || *end != '\0' ||
          errno == ERANGE)
        return format("--seed: '%s' is not a non-negative integer",
                      value.c_str());
      o->seed = v;
    } else if (name == "--val-every") {
      ok = parseInt(name, value, 0, INT64_MAX / 4, &o->valEvery, &err);
    } else if (name == "--val-batches") {
      ok = parseInt(name, value, 1, INT32_MAX, &o->valBatches, &err);
    } else if (name == "--val-fraction") {
      ok = parseDouble(name, value, &o->valFraction, &err);
      o->valFractionGiven = true;
      if (ok && !(o->valFraction >= 0 && o->valFraction < 1))
        return format("--val-fraction: %s must be in [0, 1)", value.c_str());
    } else if (name == "--metrics") {
      if (value.empty())
        return "--metrics: the path is empty";
      o->metrics = value;
    } else if (name == "--sample-tokens") {
      ok = parseInt(name, value, 0, INT32_MAX, &o->sampleTokens, &err);
    } else if (name == "--sample-out") {
      if (value.empty())
        return "--sample-out: the path is empty";
      o->sampleOut = value;
    } else if (name == "--temperature") {
      ok = parseDouble(name, value, &o->temperature, &err);
      if (ok && o->temperature < 0)
        return format("--temperature: %s must be >= 0", value.c_str());
    } else if (name == "--threads") {
      ok = parseInt(name, value, 1, 4096, &o->threads, &err);
    } else if (name == "--checkpoint-every") {
      ok = parseInt(name, value, 0, INT64_MAX / 4, &o->checkpointEvery, &err);
    } else if (name == "--tensorboard") {
      if (value.empty())
        return "--tensorboard: the directory is empty";
      o->tensorboard = value;
    } else if (name == "--peak-tflops") {
      ok = parseDouble(name, value, &o->peakTflops, &err);
      if (ok && o->peakTflops <= 0)
        return format("--peak-tflops: %s must be > 0", value.c_str());
    } else if (name == "--keep-checkpoints") {
      ok = parseInt(name, value, 0, INT64_MAX / 4, &o->keepCheckpoints, &err);
    } else if (name == "--init-loss-scale") {
      ok = parseDouble(name, value, &o->initLossScale, &err);
      if (ok && !(o->initLossScale >= zrt::LossScaler::kMinScale &&
                  o->initLossScale <= zrt::LossScaler::kMaxScale))
        return format("--init-loss-scale: %s must be in [2^-24, 2^100]",
                      value.c_str());
    } else if (name == "--loss-scale-growth-interval") {
      ok = parseInt(name, value, 1, INT64_MAX, &o->lossScaleGrowthInterval,
                    &err);
    } else if (name == "--test-overflow-at") { // test hook
      size_t colon = value.find(':');
      if (colon == std::string::npos)
        return format("--test-overflow-at: '%s' is not RANK:STEP",
                      value.c_str());
      ok = parseInt(name, value.substr(0, colon), 0, INT32_MAX,
                    &o->overflowRank, &err) &&
           parseInt(name, value.substr(colon + 1), 1, INT64_MAX / 4,
                    &o->overflowStep, &err);
    } else if (name == "--checkpoint-crash-after-files") { // test hook
      ok = parseInt(name, value, 0, INT64_MAX / 4, &o->crashAfterFiles, &err);
    } else if (name == "--checkpoint-dir" || name == "--resume") {
      if (value.empty())
        return format("%s: the path is empty", name.c_str());
      (name == "--resume" ? o->resume : o->checkpointDir) = value;
    } else if (name == "--export" || name == "--import" ||
               name == "--dump-batches") {
      if (value.empty())
        return format("%s: the path is empty", name.c_str());
      (name == "--export"   ? o->exportPath
       : name == "--import" ? o->importPath
                            : o->dumpBatches) = value;
    }
    if (!ok)
      return err;
  }
  if (o->help || o->version || o->printConfig)
    return "";
  if (!sawData)
    return "--data PATH is required (see --help)";
  if (o->valFractionGiven && !o->valData.empty())
    return "--val-fraction splits --data; it cannot be combined with "
           "--val-data (the validation split is then all of --val-data)";
  if (o->checkpointEvery > 0 && o->checkpointDir.empty())
    return "--checkpoint-every needs --checkpoint-dir DIR";
  if (o->keepCheckpoints > 0 && o->checkpointDir.empty())
    return "--keep-checkpoints needs --checkpoint-dir DIR";
  if (o->overwrite && o->checkpointDir.empty())
    return "--overwrite needs --checkpoint-dir DIR (it allows replacing DIR's "
           "checkpoints)";
  if (!o->resume.empty() && !o->importPath.empty())
    return "--resume and --import exclude each other (a checkpoint holds the "
           "parameters)";
  if (!o->sampleOut.empty() && o->sampleTokens == 0)
    return "--sample-out needs --sample-tokens N > 0 (with 0 nothing is "
           "sampled)";
  if (o->minLr < 0)
    o->minLr = o->lr / 10.0;
  if (o->minLr > o->lr)
    return format("--min-lr %g is above --lr %g (the schedule decays from "
                  "--lr to --min-lr)",
                  o->minLr, o->lr);
  if (o->decaySteps < 0)
    o->decaySteps = std::max<int64_t>(o->steps, 1);
  const bool deepSpeed = o->schedule == Schedule::Warmup ||
                         o->schedule == Schedule::WarmupDecay ||
                         o->schedule == Schedule::WarmupCosine;
  if (o->warmupMinLr > o->lr && deepSpeed)
    return format("--warmup-min-lr %g is above --lr %g (the warmup rises "
                  "from --warmup-min-lr to --lr)",
                  o->warmupMinLr, o->lr);
  if (o->schedule == Schedule::Cosine && o->warmup > o->steps && o->steps > 0)
    return format("--warmup %lld is longer than --steps %lld (the learning "
                  "rate would never reach --lr)",
                  (long long)o->warmup, (long long)o->steps);
  return "";
}

/// nanoGPT's get_lr with lr_decay_iters = steps: linear warmup over `warmup`
/// iterations, then cosine decay from lr to min_lr, min_lr afterwards. `it`
/// is the 0-based iteration.
///
/// The DeepSpeed schedules follow deepspeed/runtime/lr_schedules.py with
/// last_batch_iteration = it: warmup over W = max(2, warmup) iterations,
/// gamma = log(it+1)/log(W) (log) or it/W (linear), lr = warmup_min_lr +
/// (lr - warmup_min_lr) * gamma; afterwards `warmup` holds lr,
/// `warmup-decay` multiplies the span by max(0, (T-it)/max(1, T-W)) and
/// `warmup-cosine` gives max(0, min_lr + (lr - min_lr) * (1 + cos(pi *
/// (it-W+1)/(T-W)))/2), T = --decay-steps. The schedule is a pure function
/// of the step, so a resumed run continues it exactly.
double learningRate(const Options &o, int64_t it) {
  if (o.schedule == Schedule::Constant)
    return o.lr;
  if (o.schedule != Schedule::Cosine) {
    const int64_t W = std::max<int64_t>(2, o.warmup), T = o.decaySteps;
    const double span = o.lr - o.warmupMinLr;
    if (it < W) {
      const double gamma =
          o.logWarmup ? std::log(static_cast<double>(it + 1)) /
                            std::log(static_cast<double>(W))
                      : static_cast<double>(it) / static_cast<double>(W);
      return o.warmupMinLr + span * gamma;
    }
    if (o.schedule == Schedule::Warmup)
      return o.lr;
    if (o.schedule == Schedule::WarmupDecay)
      return o.warmupMinLr +
             span * std::max(0.0, static_cast<double>(T - it) /
                                      std::max(1.0, static_cast<double>(T - W)));
    const double progress = static_cast<double>(it - W + 1) /
                            std::max(1.0, static_cast<double>(T - W));
    return std::max(0.0, o.minLr + (o.lr - o.minLr) * 0.5 *
                                       (1.0 + std::cos(kPi * progress)));
  }
  if (it < o.warmup)
    return o.lr * static_cast<double>(it + 1) /
           static_cast<double>(o.warmup + 1);
  if (it > o.steps || o.steps <= o.warmup)
    return o.minLr;
  double ratio = static_cast<double>(it - o.warmup) /
                 static_cast<double>(o.steps - o.warmup);
  double coeff = 0.5 * (1.0 + std::cos(kPi * ratio));
  return o.minLr + coeff * (o.lr - o.minLr);
}

/// Bytes as terminal-safe text: valid UTF-8 sequences, newlines, tabs and
/// printable ASCII as they are; any other byte as \xNN.
std::string printableText(const std::string &bytes) {
  std::string text;
  const size_t n = bytes.size();
  for (size_t i = 0; i < n;) {
    const unsigned char c = static_cast<unsigned char>(bytes[i]);
    size_t len = c < 0x80                          ? 1
                 : (c & 0xE0) == 0xC0 && c >= 0xC2 ? 2
                 : (c & 0xF0) == 0xE0              ? 3
                 : (c & 0xF8) == 0xF0 && c <= 0xF4 ? 4
                                                   : 0;
    bool ok = len > 0 && i + len <= n;
    for (size_t k = 1; ok && k < len; ++k)
      ok = (static_cast<unsigned char>(bytes[i + k]) & 0xC0) == 0x80;
    if (ok && len == 1)
      ok = c == '\n' || c == '\t' || (c >= 0x20 && c != 0x7f);
    if (ok) {
      text.append(bytes, i, len);
      i += len;
    } else {
      text += format("\\x%02x", c);
      ++i;
    }
  }
  return text;
}

//===----------------------------------------------------------------------===//
// JSON lines
//===----------------------------------------------------------------------===//

/// Builds one JSON object (no nesting beyond what the helpers add).
class Json {
public:
  Json &key(const char *k) {
    sep();
    s_ += '"';
    s_ += k;
    s_ += "\":";
    first_ = true; // the value follows directly
    pendingValue_ = true;
    return *this;
  }
  Json &num(double v) {
    sep();
    if (std::isfinite(v))
      s_ += format("%.10g", v);
    else
      s_ += "null";
    return *this;
  }
  Json &integer(int64_t v) {
    sep();
    s_ += format("%lld", (long long)v);
    return *this;
  }
  Json &str(const std::string &v) {
    sep();
    s_ += '"';
    for (unsigned char c : v) {
      if (c == '"' || c == '\\') {
        s_ += '\\';
        s_ += static_cast<char>(c);
      } else if (c < 0x20) {
        s_ += format("\\u%04x", c);
      } else {
        s_ += static_cast<char>(c);
      }
    }
    s_ += '"';
    return *this;
  }
  Json &open(char brace) {
    sep();
    s_ += brace;
    first_ = true;
    return *this;
  }
  Json &close(char brace) {
    s_ += brace;
    first_ = false;
    return *this;
  }
  /// {"all_gather": .., "reduce_scatter": .., "all_reduce": .., "broadcast":
  /// ..}
  Json &collBytes(const int64_t *bytes) {
    open('{');
    for (int k = 0; k < ZRT_COLL_NUM_KINDS; ++k)
      key(kCollNames[k]).integer(bytes[k]);
    return close('}');
  }
  Json &intArray(const int64_t *v, int n) {
    open('[');
    for (int i = 0; i < n; ++i)
      integer(v[i]);
    return close(']');
  }
  std::string line() const { return "{" + s_ + "}\n"; }

private:
  void sep() {
    if (pendingValue_) {
      pendingValue_ = false;
      first_ = false;
      return;
    }
    if (!first_)
      s_ += ',';
    first_ = false;
  }
  std::string s_;
  bool first_ = true;
  bool pendingValue_ = false;
};

//===----------------------------------------------------------------------===//
// Parameters as safetensors (--export / --import)
//
// Format (https://github.com/huggingface/safetensors): 8-byte little-endian
// header length n, n bytes of JSON
//   {"__metadata__": {"k": "v", ..}, "name": {"dtype": "F32", "shape": [..],
//    "data_offsets": [begin, end]}, ..}
// (padded with spaces to a multiple of 8), then the raw little-endian data;
// offsets are relative to the end of the header.
//===----------------------------------------------------------------------===//

/// A JSON string literal (quoted, escaped).
std::string jsonString(const std::string &v) {
  return nlohmann::json(v).dump(-1, ' ', false,
                                nlohmann::json::error_handler_t::replace);
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += format(i ? ", %lld" : "%lld", (long long)shape[i]);
  return s + "]";
}

size_t dtypeBytes(int dtype) { return zrt::elementBytes(dtype); }

/// dst[i] = f32 of src[i] (host memory; src in `dtype`).
void toF32(const void *src, int dtype, float *dst, int64_t n) {
  zrt::hostToF32(src, dtype, dst, n);
}

/// dst (host memory, in `dtype`) = src: a copy, or bf16 round to nearest even.
void fromF32(const float *src, void *dst, int dtype, int64_t n) {
  zrt::hostFromF32(src, dst, dtype, n);
}

/// Where the model keeps one parameter (model.h): whole in a state and/or
/// as a member of a shard group whose slices the states hold.
struct ParamEntry {
  std::string name;
  std::vector<int64_t> shape; // [numel] when the model gives no shapes
  int64_t numel = 0;
  int whole = -1;       ///< Whole ZRT_STATE_PARAM state.
  int wholeMaster = -1; ///< Whole ZRT_STATE_MASTER state "<name>.master".
  int group = -1;       ///< Group with a sharded param/master state, or -1.
  int64_t offset = 0;   ///< Element offset in that group.
};

/// The parameters of a model description, sorted by name (the canonical
/// order of the exported file, the same for every stage and world size).
struct ParamTable {
  struct Shards {
    int param = -1, master = -1; // sharded state indices of a group
  };
  std::vector<ParamEntry> entries;
  std::vector<Shards> groups;
  bool shapesKnown = false;

  /// "" or why the description cannot be consolidated.
  std::string build(const zrt_model_desc *m, int world);

  /// The state an export reads for `e` (master weights first) and whether
  /// it is a group shard.
  int exportSource(const ParamEntry &e, bool *sharded) const {
    *sharded = false;
    if (e.wholeMaster >= 0)
      return e.wholeMaster;
    if (e.group >= 0 && groups[e.group].master >= 0)
      return *sharded = true, groups[e.group].master;
    if (e.whole >= 0)
      return e.whole;
    *sharded = true;
    return groups[e.group].param;
  }
};

std::string ParamTable::build(const zrt_model_desc *m, int world) {
  entries.clear();
  groups.assign(static_cast<size_t>(std::max(0, m->num_groups)), Shards());
  if (m->num_groups > 0 && !m->groups)
    return "the model description has groups but no group table";
  // Sharded param / master states per group.
  for (int i = 0; i < m->num_states; ++i) {
    const zrt_state_desc &s = m->states[i];
    if (!s.name)
      return format("state %d of the model description has no name", i);
    if (s.dtype != ZRT_F32 && s.dtype != ZRT_BF16 && s.dtype != ZRT_F16)
      return format("state '%s' has unknown dtype %d", s.name, s.dtype);
    if (!s.sharded)
      continue;
    if (s.group < 0 || s.group >= m->num_groups)
      return format("sharded state '%s' refers to group %d of %d", s.name,
                    s.group, m->num_groups);
    const zrt_group_desc &g = m->groups[s.group];
    if (s.numel != g.shard || g.shard * world != g.padded)
      return format("sharded state '%s' holds %lld elements, but group '%s' "
                    "has shards of %lld (padded %lld, world size %d)",
                    s.name, (long long)s.numel, g.name ? g.name : "?",
                    (long long)g.shard, (long long)g.padded, world);
    int *slot = s.kind == ZRT_STATE_PARAM    ? &groups[s.group].param
                : s.kind == ZRT_STATE_MASTER ? &groups[s.group].master
                                             : nullptr;
    if (slot && *slot >= 0)
      return format("group %d has two sharded %s states ('%s', '%s')",
                    s.group, kStateNames[s.kind], m->states[*slot].name,
                    s.name);
    if (slot)
      *slot = i;
  }
  // The parameter list: the model's own, else derived from the states.
  std::map<std::string, size_t> index;
  auto add = [&](const std::string &name, std::vector<int64_t> shape,
                 int64_t numel) -> std::string {
    if (index.count(name))
      return format("parameter '%s' is declared twice", name.c_str());
    index[name] = entries.size();
    ParamEntry e;
    e.name = name;
    e.shape = std::move(shape);
    e.numel = numel;
    entries.push_back(std::move(e));
    return "";
  };
  shapesKnown = m->num_param_infos > 0 && m->param_infos;
  if (shapesKnown) {
    for (int i = 0; i < m->num_param_infos; ++i) {
      const zrt_param_info &p = m->param_infos[i];
      if (!p.name || p.rank < 0 || p.rank > 16 || (p.rank > 0 && !p.shape))
        return format("parameter %d of the model description is malformed", i);
      std::vector<int64_t> shape(p.shape, p.shape + p.rank);
      int64_t numel = 1;
      for (int64_t d : shape) {
        if (d < 0 || (d > 0 && numel > INT64_MAX / d))
          return format("parameter '%s' has a bad shape", p.name);
        numel *= d;
      }
      std::string err = add(p.name, std::move(shape), numel);
      if (!err.empty())
        return err;
    }
  } else {
    for (int i = 0; i < m->num_states; ++i) {
      const zrt_state_desc &s = m->states[i];
      if (s.kind == ZRT_STATE_PARAM && !s.sharded)
        if (std::string err = add(s.name, {s.numel}, s.numel); !err.empty())
          return err;
    }
    for (int g = 0; g < m->num_groups; ++g) {
      if (groups[g].param < 0)
        continue;
      const zrt_group_desc &d = m->groups[g];
      for (int j = 0; j < d.num_members; ++j)
        if (!index.count(d.members[j]))
          add(d.members[j], {d.numels[j]}, d.numels[j]);
    }
  }
  // Where each parameter lives.
  for (int i = 0; i < m->num_states; ++i) {
    const zrt_state_desc &s = m->states[i];
    if (s.sharded)
      continue;
    if (s.kind == ZRT_STATE_PARAM) {
      auto it = index.find(s.name);
      if (it == index.end())
        return format("state '%s' holds a parameter the model does not "
                      "declare",
                      s.name);
      ParamEntry &e = entries[it->second];
      if (s.numel != e.numel)
        return format("state '%s' holds %lld elements, but the parameter has "
                      "%lld",
                      s.name, (long long)s.numel, (long long)e.numel);
      e.whole = i;
    } else if (s.kind == ZRT_STATE_MASTER) {
      std::string n = s.name;
      const std::string suffix = ".master";
      if (n.size() <= suffix.size() ||
          n.compare(n.size() - suffix.size(), suffix.size(), suffix) != 0)
        continue;
      auto it = index.find(n.substr(0, n.size() - suffix.size()));
      if (it == index.end())
        continue;
      ParamEntry &e = entries[it->second];
      if (s.numel != e.numel)
        return format("master state '%s' holds %lld elements, but the "
                      "parameter has %lld",
                      s.name, (long long)s.numel, (long long)e.numel);
      e.wholeMaster = i;
    }
  }
  for (int g = 0; g < m->num_groups; ++g) {
    if (groups[g].param < 0 && groups[g].master < 0)
      continue;
    const zrt_group_desc &d = m->groups[g];
    if (d.num_members < 0 || (d.num_members > 0 && (!d.members || !d.offsets ||
                                                    !d.numels)))
      return format("group %d of the model description is malformed", g);
    for (int j = 0; j < d.num_members; ++j) {
      auto it = index.find(d.members[j] ? d.members[j] : "");
      if (it == index.end())
        return format("group '%s' has member '%s', which the model does not "
                      "declare",
                      d.name ? d.name : "?",
                      d.members[j] ? d.members[j] : "(null)");
      ParamEntry &e = entries[it->second];
      if (d.numels[j] != e.numel || d.offsets[j] < 0 ||
          d.offsets[j] + e.numel > d.padded)
        return format("group '%s' places '%s' (%lld elements) at [%lld, "
                      "%lld) of %lld",
                      d.name ? d.name : "?", e.name.c_str(),
                      (long long)e.numel, (long long)d.offsets[j],
                      (long long)(d.offsets[j] + d.numels[j]),
                      (long long)d.padded);
      if (e.group >= 0)
        return format("parameter '%s' is in two groups", e.name.c_str());
      e.group = g;
      e.offset = d.offsets[j];
    }
  }
  for (const ParamEntry &e : entries)
    if (e.whole < 0 && (e.group < 0 || groups[e.group].param < 0))
      return format("parameter '%s' has no storage in the state table",
                    e.name.c_str());
  std::sort(entries.begin(), entries.end(),
            [](const ParamEntry &a, const ParamEntry &b) {
              return a.name < b.name;
            });
  return "";
}




//===----------------------------------------------------------------------===//
// The driver
//===----------------------------------------------------------------------===//

struct Snapshot {
  int64_t bytes[ZRT_COLL_NUM_KINDS];
  static Snapshot take() {
    Snapshot s;
    for (int k = 0; k < ZRT_COLL_NUM_KINDS; ++k)
      s.bytes[k] = zrt_comm_bytes(k);
    return s;
  }
  /// Per-kind bytes since `earlier`.
  Snapshot since(const Snapshot &earlier) const {
    Snapshot d;
    for (int k = 0; k < ZRT_COLL_NUM_KINDS; ++k)
      d.bytes[k] = bytes[k] - earlier.bytes[k];
    return d;
  }
  int64_t total() const {
    int64_t t = 0;
    for (int64_t b : bytes)
      t += b;
    return t;
  }
};

/// "ZRT_ERR_X: message" for a failed zrt_ or model call (the message may be
/// missing when a model function returns a status without setting one).
std::string describe(int status) {
  const char *msg = zrt_last_error();
  return msg && *msg ? format("%s: %s", zrt_status_name(status), msg)
                     : std::string(zrt_status_name(status));
}

std::string megabytes(int64_t bytes) {
  return format("%.2f MB", static_cast<double>(bytes) / 1e6);
}

/// A count with an SI suffix: 950, 65.5k, 1.23M, 4.56G.
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
  int run();
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
  /// Makes the mesh N_d x M of a tensor-parallel program (zrt_mesh_init)
  /// and sets dataRank_ / dataWorld_; the error of an option it cannot
  /// serve yet.
  std::string makeMesh();
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

std::string Driver::openData() {
  if (arrayModel()) {
    if (!o_.valData.empty())
      return "--val-data takes token files; a model with named inputs "
             "validates on the last --val-fraction of its --data arrays";
    validation_ = o_.valEvery > 0;
    return arrays_.open(o_.data, m_, o_.valFraction, validation_);
  }
  if (std::string err = zrt::expandDataFiles("--data", o_.data, &dataFiles_);
      !err.empty())
    return err;
  if (!o_.valData.empty())
    if (std::string err =
            zrt::expandDataFiles("--val-data", o_.valData, &valFiles_);
        !err.empty())
      return err;
  std::vector<const char *> train, val;
  for (const std::string &f : dataFiles_)
    train.push_back(f.c_str());
  for (const std::string &f : valFiles_)
    val.push_back(f.c_str());
  for (const std::string &f : dataFiles_) {
    auto endsWith = [&](const char *ext) {
      const size_t n = std::strlen(ext);
      return f.size() >= n && f.compare(f.size() - n, n, ext) == 0;
    };
    if (endsWith(".safetensors") || endsWith(".npy"))
      return format("data file '%s' holds arrays, which feed models with "
                    "named inputs only; this one takes token ids (a text "
                    "file or llm.c .bin tokens)",
                    f.c_str());
  }
  zrt_clear_error();
  if (zrt_dataset_open_shards(train.data(), static_cast<int>(train.size()),
                              val.data(), static_cast<int>(val.size()),
                              valFiles_.empty() ? o_.valFraction : 0.0,
                              &ds_) != ZRT_OK) {
    // The runtime's message names the file: "zrt_dataset_open_shards:
    // 'x.bin' has bad magic ...".
    std::string why = zrt_last_error();
    const std::string prefix = "zrt_dataset_open_shards: ";
    if (why.compare(0, prefix.size(), prefix) == 0)
      why = why.substr(prefix.size());
    return "data file " + why;
  }
  byteLevel_ = zrt_dataset_is_text(ds_) == 1;
  dataVocab_ = zrt_dataset_vocab_size(ds_);
  // Every window drawn checks its ids against the model's vocabulary.
  zrt_dataset_set_vocab_limit(ds_, m_->vocab);
  const std::string what =
      dataFiles_.size() == 1 ? "'" + dataFiles_[0] + "'"
                             : format("--data (%zu files)", dataFiles_.size());
  const int64_t T = m_->seq;
  const int64_t nTrain = zrt_dataset_num_tokens(ds_, ZRT_SPLIT_TRAIN);
  const int64_t nVal = zrt_dataset_num_tokens(ds_, ZRT_SPLIT_VAL);
  if (nTrain < T + 1)
    return format("the training split of %s has %lld tokens, but the model "
                  "was compiled for sequence length %lld and one sequence "
                  "needs seq + 1 = %lld tokens (more data%s)",
                  what.c_str(), (long long)nTrain, (long long)T,
                  (long long)(T + 1),
                  valFiles_.empty() ? ", or a smaller --val-fraction" : "");
  if (byteLevel_ && dataVocab_ > m_->vocab)
    return format("data file %s needs a vocabulary of %lld tokens (text is "
                  "read as bytes 0..255), but the model was compiled for "
                  "vocab %lld",
                  what.c_str(), (long long)dataVocab_, (long long)m_->vocab);
  validation_ = o_.valEvery > 0;
  if (validation_ && nVal < T + 1) {
    if (!valFiles_.empty())
      return format("--val-data has %lld tokens, fewer than seq + 1 = %lld; "
                    "use more validation data, or --val-every 0",
                    (long long)nVal, (long long)(T + 1));
    return format("the validation split of %s has %lld tokens (last %g of "
                  "the data), fewer than seq + 1 = %lld; use a larger "
                  "--val-fraction, more data, --val-data, or --val-every 0",
                  what.c_str(), (long long)nVal, o_.valFraction,
                  (long long)(T + 1));
  }
  return "";
}

std::vector<zrt::NamedPath> Driver::dataInputs() const {
  std::vector<zrt::NamedPath> in;
  if (dataFiles_.empty()) // an array model's file or directory
    in.push_back({"--data", o_.data});
  for (const std::string &f : dataFiles_)
    in.push_back({"--data", f});
  for (const std::string &f : valFiles_)
    in.push_back({"--val-data", f});
  in.push_back({"--import", o_.importPath});
  return in;
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
  int n = static_cast<int>(o_.threads);
  if (n < 1) {
    const char *env = std::getenv("OMP_NUM_THREADS");
    char *end = nullptr;
    long e = env ? std::strtol(env, &end, 10) : 0;
    if (env && *env && *end == '\0' && e >= 1 && e <= 4096) {
      n = static_cast<int>(e);
    } else {
      // Cores of the node shared by its ranks, within this rank's affinity.
      const int local = zrt::host::localRanks(world_);
      int cores = static_cast<int>(std::thread::hardware_concurrency());
      if (cores < 1)
        cores = 1;
      n = std::max(1, cores / std::max(1, local));
      cpu_set_t set;
      CPU_ZERO(&set);
      if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        n = std::min(n, CPU_COUNT(&set));
    }
  }
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

std::string Driver::makeMesh() {
  tensor_ = std::max(1, m_->tensor_size);
  dataRank_ = rank_;
  dataWorld_ = world_;
  if (tensor_ == 1)
    return "";
  // What keeps whole tensors per rank cannot read a tensor rank's cut yet.
  const char *unsupported = !o_.importPath.empty()      ? "--import"
                            : !o_.exportPath.empty()    ? "--export"
                            : !o_.checkpointDir.empty() ? "--checkpoint-dir"
                            : !o_.resume.empty()        ? "--resume"
                                                        : nullptr;
  if (unsupported)
    return format("%s: this program is tensor-parallel (M = %d), and its "
                  "parameters' tensor cuts cannot be exported, imported or "
                  "checkpointed yet",
                  unsupported, tensor_);
  if (zrt_mesh_init(tensor_) != ZRT_OK)
    return format("cannot make the mesh of %d x %d ranks: %s",
                  world_ / std::max(tensor_, 1), tensor_, zrt_last_error());
  dataRank_ = zrt_axis_rank(ZRT_AXIS_DATA);
  dataWorld_ = zrt_axis_size(ZRT_AXIS_DATA);
  return "";
}

double Driver::allMean(double local) {
  double sum = 0.0;
  if (!zrt::host::allReduceSumDouble(local, &sum))
    internalFailure("the all-reduce of a logged value failed");
  return sum / world_;
}

std::string Driver::dataError(const char *what) const {
  // zrt_last_error(): "'x.bin': token id 300 at token 7 of the file (byte
  // offset 1038) is outside the vocabulary of 256".
  return format("data file %s (the model's); %s stopped", zrt_last_error(),
                what);
}

std::string Driver::fetchBatch(int split, int64_t index, int shuffle) {
  if (arrayModel()) { // validation batches only (fetchTrainBatch trains)
    arrays_.fetchVal(index, globalBatch_, dataRank_);
    return "";
  }
  const size_t rows = static_cast<size_t>(m_->batch * m_->seq);
  globalIds_.resize(rows * static_cast<size_t>(dataWorld_));
  globalTargets_.resize(globalIds_.size());
  zrt_clear_error();
  if (int st = zrt_dataset_batch(ds_, split, globalBatch_, m_->seq, o_.seed,
                                 index, shuffle, 0, 1, globalIds_.data(),
                                 globalTargets_.data())) {
    if (st == ZRT_ERR_OUT_OF_RANGE)
      return dataError(split == ZRT_SPLIT_VAL ? "validation" : "training");
    internalFailure("zrt_dataset_batch: " + describe(st));
  }
  const size_t off = rows * static_cast<size_t>(dataRank_);
  std::copy_n(globalIds_.begin() + off, rows, ids_.begin());
  std::copy_n(globalTargets_.begin() + off, rows, targets_.begin());
  return "";
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

std::string Driver::fetchTrainBatch() {
  if (arrayModel()) {
    arrays_.fetchTrain(o_.seed, streamBatch_,
                       samplePos_ + static_cast<int64_t>(dataRank_) * m_->batch);
    samplePos_ += globalBatch_;
    return "";
  }
  const size_t rows = static_cast<size_t>(m_->batch * m_->seq);
  globalIds_.resize(rows * static_cast<size_t>(dataWorld_));
  globalTargets_.resize(globalIds_.size());
  zrt_clear_error();
  if (int st = zrt_dataset_sequences(ds_, ZRT_SPLIT_TRAIN, m_->seq, o_.seed,
                                     streamBatch_, samplePos_, globalBatch_,
                                     globalIds_.data(),
                                     globalTargets_.data())) {
    if (st == ZRT_ERR_OUT_OF_RANGE)
      return dataError("training");
    internalFailure("zrt_dataset_sequences: " + describe(st));
  }
  const size_t off = rows * static_cast<size_t>(dataRank_);
  std::copy_n(globalIds_.begin() + off, rows, ids_.begin());
  std::copy_n(globalTargets_.begin() + off, rows, targets_.begin());
  samplePos_ += globalBatch_;
  return "";
}

//===----------------------------------------------------------------------===//
// --import / --export / --dump-batches
//===----------------------------------------------------------------------===//

/// One safetensors file of --import (its tensors into imported_).
std::string Driver::openImportFile(const std::string &path, int file) {
  const std::string what = format("--import file '%s'", path.c_str());
  importFds_.push_back(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  const int fd = importFds_.back();
  if (fd < 0)
    return format("cannot open %s: %s", what.c_str(), std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    return format("%s is not a regular file", what.c_str());
  const int64_t size = st.st_size;
  unsigned char len[8];
  if (size < 8 || !preadAll(fd, len, 8, 0))
    return format("%s is not a safetensors file (shorter than the 8-byte "
                  "header length)",
                  what.c_str());
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i)
    n = (n << 8) | len[i];
  // The reference implementation refuses headers over 100 MB.
  if (n < 2 || n > 100000000 || static_cast<int64_t>(n) > size - 8)
    return format("%s is not a safetensors file (header length %llu, file "
                  "size %lld bytes)",
                  what.c_str(), (unsigned long long)n, (long long)size);
  std::string header(static_cast<size_t>(n), '\0');
  if (!preadAll(fd, &header[0], header.size(), 8))
    return format("cannot read %s: %s", what.c_str(), std::strerror(errno));
  const int64_t dataStart = 8 + static_cast<int64_t>(n);
  std::map<std::string, zrt::SafetensorsEntry> entries;
  if (std::string err = zrt::parseSafetensorsHeader(header, size - dataStart,
                                                    what, &entries);
      !err.empty())
    return err;
  for (const auto &[name, e] : entries) {
    if (imported_.count(name))
      return format("tensor '%s' is in two --import shards (%s and %s)",
                    name.c_str(), path.c_str(),
                    importShapes_.at(name).second.c_str());
    importShapes_[name] = {e.shape, path};
    imported_[name] = FileTensor{e.dtype, dataStart + e.begin, file};
  }
  return "";
}

/// --import PATH: a safetensors file, a sharded checkpoint's index, or a
/// Hugging Face model directory (import_files.h); every parameter must be
/// in it with the model's shape, and nothing else.
std::string Driver::openImport() {
  const std::string &path = o_.importPath;
  zrt::ImportFiles files;
  if (std::string err = zrt::resolveImportFiles(path, &files); !err.empty())
    return err;
  imported_.clear();
  importShapes_.clear();
  for (size_t f = 0; f < files.files.size(); ++f)
    if (std::string err = openImportFile(files.files[f], static_cast<int>(f));
        !err.empty())
      return err;
  for (const auto &[name, f] : files.weightMap) {
    auto it = imported_.find(name);
    if (it == imported_.end() || it->second.file != static_cast<int>(f))
      return format("tensor '%s' of --import index '%s' is not in its shard "
                    "'%s'",
                    name.c_str(), files.index.c_str(), files.files[f].c_str());
  }
  if (!files.index.empty() && files.weightMap.size() != imported_.size())
    for (const auto &[name, t] : imported_)
      if (!files.weightMap.count(name))
        return format("tensor '%s' of shard '%s' is not in --import index "
                      "'%s'",
                      name.c_str(), files.files[t.file].c_str(),
                      files.index.c_str());
  const std::string what = format("--import %s '%s'",
                                  files.index.empty() && files.files[0] == path
                                      ? "file"
                                      : "checkpoint",
                                  path.c_str());
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const auto &[name, entry] : importShapes_)
    shapes[name] = entry.first;
  // Every parameter with its shape, nothing else.
  std::vector<std::string> problems;
  for (const ParamEntry &e : params_.entries) {
    auto it = shapes.find(e.name);
    if (it == shapes.end()) {
      problems.push_back(format("parameter '%s' is missing from %s",
                                e.name.c_str(), what.c_str()));
      continue;
    }
    int64_t numel = 1;
    for (int64_t d : it->second)
      numel *= d;
    if (params_.shapesKnown ? it->second != e.shape : numel != e.numel)
      problems.push_back(format("parameter '%s' has shape %s in %s, but the "
                                "model's is %s",
                                e.name.c_str(), shapeText(it->second).c_str(),
                                what.c_str(), shapeText(e.shape).c_str()));
  }
  for (const auto &[name, dims] : shapes) {
    bool known = false;
    for (const ParamEntry &e : params_.entries)
      known = known || e.name == name;
    if (!known)
      problems.push_back(format("tensor '%s' in %s is not a parameter of the "
                                "model",
                                name.c_str(), what.c_str()));
  }
  if (problems.empty())
    return "";
  if (problems.size() > 1)
    problems[0] += format(" (and %zu more problem%s)", problems.size() - 1,
                          problems.size() == 2 ? "" : "s");
  return problems[0];
}

std::string Driver::loadImport() {
  const std::string what = format("--import file '%s'", o_.importPath.c_str());
  std::vector<float> buf;
  std::vector<char> raw;
  // Reads elements [lo, hi) of `t` as f32 into buf.
  auto read = [&](const FileTensor &t, int64_t lo, int64_t hi) {
    const size_t eb = dtypeBytes(t.dtype);
    raw.resize(static_cast<size_t>(hi - lo) * eb);
    buf.resize(static_cast<size_t>(hi - lo));
    if (!preadAll(importFds_[t.file], raw.data(), raw.size(),
                  static_cast<off_t>(t.begin + lo * static_cast<int64_t>(eb))))
      return false;
    toF32(raw.data(), t.dtype, buf.data(), hi - lo);
    return true;
  };
  // NaN or Inf in the file: refused, with the count, before any training.
  const char *sliceNote = "";
  auto nonFinite = [&](const std::string &name) {
    int64_t bad = 0;
    for (float v : buf)
      bad += !std::isfinite(v);
    return bad == 0 ? std::string()
                    : format("tensor '%s' in %s holds %lld non-finite values "
                             "(NaN or Inf)%s; refusing to train from it",
                             name.c_str(), what.c_str(), (long long)bad,
                             sliceNote);
  };
  auto element = [](const zrt_state_desc &s, int64_t i) {
    return static_cast<char *>(s.data) + i * dtypeBytes(s.dtype);
  };
  // Converts buf's n values to the state's dtype on the host and copies
  // them to `dst` (arena memory) across the host/device boundary.
  std::vector<char> staged;
  auto store = [&](const zrt_state_desc &s, void *dst, int64_t n) {
    staged.resize(static_cast<size_t>(n) * dtypeBytes(s.dtype));
    fromF32(buf.data(), staged.data(), s.dtype, n);
    return zrt::stageToDevice(dst, staged.data(),
                              static_cast<int64_t>(staged.size()));
  };
  for (const ParamEntry &e : params_.entries) {
    const FileTensor &t = imported_.at(e.name);
    // Whole copies: the parameter and its master weights.
    if (e.whole >= 0 || e.wholeMaster >= 0) {
      if (!read(t, 0, e.numel))
        return format("cannot read '%s' from %s: %s", e.name.c_str(),
                      what.c_str(), std::strerror(errno));
      sliceNote = "";
      if (std::string bad = nonFinite(e.name); !bad.empty())
        return bad;
      for (int i : {e.whole, e.wholeMaster})
        if (i >= 0)
          if (std::string err = store(m_->states[i], m_->states[i].data,
                                      e.numel);
              !err.empty())
            return err;
    }
    // This rank's slice of the group's flat buffer.
    if (e.group >= 0) {
      const zrt_group_desc &g = m_->groups[e.group];
      const int64_t own = static_cast<int64_t>(rank_) * g.shard;
      const int64_t lo = std::max(own, e.offset),
                    hi = std::min(own + g.shard, e.offset + e.numel);
      if (lo < hi) {
        if (!read(t, lo - e.offset, hi - e.offset))
          return format("cannot read '%s' from %s: %s", e.name.c_str(),
                        what.c_str(), std::strerror(errno));
        sliceNote = " in the slice this rank loads";
        if (std::string bad = nonFinite(e.name); !bad.empty())
          return bad;
        for (int i : {params_.groups[e.group].param,
                      params_.groups[e.group].master})
          if (i >= 0)
            if (std::string err = store(m_->states[i],
                                        element(m_->states[i], lo - own),
                                        hi - lo);
                !err.empty())
              return err;
      }
    }
  }
  for (int fd : importFds_)
    ::close(fd);
  importFds_.clear();
  return "";
}

std::string Driver::openExport() {
  if (rank_ != 0)
    return "";
  exportTmp_ = o_.exportPath + ".tmp.XXXXXX";
  exportFd_ = ::mkstemp(&exportTmp_[0]);
  if (exportFd_ < 0)
    return format("cannot write --export file '%s': %s",
                  o_.exportPath.c_str(), std::strerror(errno));
  ::fchmod(exportFd_, 0644);
  return "";
}

std::string Driver::writeExport() {
  // Header: names sorted, f32, back to back.
  std::string header = "{\"__metadata__\":{\"format\":\"pt\",\"producer\":"
                       "\"zero\",\"model\":" +
                       jsonString(m_->name ? m_->name : "") +
                       format(",\"step\":\"%lld\"}", (long long)o_.steps);
  std::vector<int64_t> begin;
  int64_t offset = 0;
  for (const ParamEntry &e : params_.entries) {
    begin.push_back(offset);
    header += "," + jsonString(e.name) + ":{\"dtype\":\"F32\",\"shape\":[";
    for (size_t i = 0; i < e.shape.size(); ++i)
      header += format(i ? ",%lld" : "%lld", (long long)e.shape[i]);
    header += format("],\"data_offsets\":[%lld,%lld]}", (long long)offset,
                     (long long)(offset + 4 * e.numel));
    offset += 4 * e.numel;
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');
  const int64_t dataStart = 8 + static_cast<int64_t>(header.size());

  std::string err; // rank 0: the first write error
  auto put = [&](const void *p, size_t n, int64_t at) {
    if (err.empty() && !pwriteAll(exportFd_, p, n, static_cast<off_t>(at)))
      err = format("cannot write --export file '%s': %s",
                   o_.exportPath.c_str(), std::strerror(errno));
  };
  std::vector<float> f32;
  std::vector<char> staged; // a state's bytes copied from arena memory
  if (rank_ == 0) {
    unsigned char len[8];
    for (int i = 0; i < 8; ++i)
      len[i] = static_cast<unsigned char>(header.size() >> (8 * i));
    put(len, 8, 0);
    put(header.data(), header.size(), 8);
    // Whole tensors need no communication.
    for (size_t k = 0; k < params_.entries.size(); ++k) {
      const ParamEntry &e = params_.entries[k];
      bool sharded;
      const int src = params_.exportSource(e, &sharded);
      if (sharded)
        continue;
      const zrt_state_desc &s = m_->states[src];
      staged.resize(static_cast<size_t>(e.numel) * dtypeBytes(s.dtype));
      if (std::string e2 = zrt::stageToHost(
              staged.data(), s.data, static_cast<int64_t>(staged.size()));
          !e2.empty())
        internalFailure(e2);
      f32.resize(static_cast<size_t>(e.numel));
      toF32(staged.data(), s.dtype, f32.data(), e.numel);
      put(f32.data(), f32.size() * 4, dataStart + begin[k]);
    }
  }
  // Sharded sources: gather each such state's slices to rank 0 (host
  // coordination, outside the zrt byte counters), in state order on every
  // rank.
  std::vector<char> full;
  for (int i = 0; i < m_->num_states; ++i) {
    bool used = false;
    for (const ParamEntry &e : params_.entries) {
      bool sharded;
      used = used || (params_.exportSource(e, &sharded) == i && sharded);
    }
    if (!used)
      continue;
    const zrt_state_desc &s = m_->states[i];
    const int64_t bytes = s.numel * static_cast<int64_t>(dtypeBytes(s.dtype));
    full.resize(rank_ == 0 ? static_cast<size_t>(bytes * world_) : 0);
    staged.resize(static_cast<size_t>(bytes));
    if (std::string e2 = zrt::stageToHost(staged.data(), s.data, bytes);
        !e2.empty())
      internalFailure(e2);
    if (!zrt::host::gatherBytes(staged.data(), bytes, full.data()))
      internalFailure(format("the gather of '%s' for --export failed", s.name));
    if (rank_ != 0)
      continue;
    for (size_t k = 0; k < params_.entries.size(); ++k) {
      const ParamEntry &e = params_.entries[k];
      bool sharded;
      if (params_.exportSource(e, &sharded) != i)
        continue;
      f32.resize(static_cast<size_t>(e.numel));
      toF32(full.data() + e.offset * static_cast<int64_t>(dtypeBytes(s.dtype)),
            s.dtype, f32.data(), e.numel);
      put(f32.data(), f32.size() * 4, dataStart + begin[k]);
    }
  }
  if (rank_ == 0) {
    // Atomic replacement: data on disk, then the rename, then the directory.
    if (err.empty() && ::fsync(exportFd_) != 0)
      err = format("cannot write --export file '%s': %s",
                   o_.exportPath.c_str(), std::strerror(errno));
    if (::close(exportFd_) != 0 && err.empty())
      err = format("cannot write --export file '%s': %s",
                   o_.exportPath.c_str(), std::strerror(errno));
    exportFd_ = -1;
    if (err.empty() &&
        std::rename(exportTmp_.c_str(), o_.exportPath.c_str()) != 0)
      err = format("cannot rename '%s' to --export file '%s': %s",
                   exportTmp_.c_str(), o_.exportPath.c_str(),
                   std::strerror(errno));
    if (!err.empty()) {
      ::unlink(exportTmp_.c_str());
    } else {
      std::string dir = o_.exportPath;
      size_t slash = dir.rfind('/');
      dir = slash == std::string::npos ? "." : dir.substr(0, slash + 1);
      int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (dfd >= 0) {
        ::fsync(dfd);
        ::close(dfd);
      }
      say(format("exported %zu parameters (%s of f32) to %s",
                 params_.entries.size(), megabytes(offset).c_str(),
                 o_.exportPath.c_str()));
    }
  }
  return err;
}

std::string Driver::openDump() {
  if (o_.steps > INT32_MAX || globalBatch_ * m_->seq > INT32_MAX ||
      (arrayModel() && arrays_.samples(0) + arrays_.samples(1) > INT32_MAX))
    return "--dump-batches: the step, micro-batch and batch fields are "
           "int32, and this run does not fit them";
  if (rank_ != 0)
    return "";
  dump_ = std::fopen(o_.dumpBatches.c_str(), "wb");
  if (!dump_)
    return format("cannot write --dump-batches file '%s': %s",
                  o_.dumpBatches.c_str(), std::strerror(errno));
  return "";
}

void Driver::dumpBatch(int64_t step, int64_t micro) {
  if (arrayModel())
    return dumpRows(step, micro);
  // The driver's batch slicing gives rank r rows [r*B, (r+1)*B) of the
  // global batch, so a gather in rank order rebuilds it.
  const int64_t n = m_->batch * m_->seq, global = n * world_;
  if (rank_ == 0) {
    dumpRecord_.resize(static_cast<size_t>(4 + 2 * global));
    dumpRecord_[0] = static_cast<int32_t>(step);
    dumpRecord_[1] = static_cast<int32_t>(micro);
    dumpRecord_[2] = static_cast<int32_t>(globalBatch_);
    dumpRecord_[3] = static_cast<int32_t>(m_->seq);
  }
  int32_t *rec = rank_ == 0 ? dumpRecord_.data() : nullptr;
  const int64_t bytes = static_cast<int64_t>(n) * 4;
  if (!zrt::host::gatherBytes(ids_.data(), bytes, rec ? rec + 4 : nullptr) ||
      !zrt::host::gatherBytes(targets_.data(), bytes,
                              rec ? rec + 4 + global : nullptr))
    internalFailure("the gather of a batch for --dump-batches failed");
  writeDumpRecord();
}

void Driver::writeDumpRecord() {
  if (rank_ != 0 || !dumpErr_.empty())
    return;
  // Little-endian int32 (the host order of every target we build for).
  if (std::fwrite(dumpRecord_.data(), sizeof(int32_t), dumpRecord_.size(),
                  dump_) != dumpRecord_.size())
    dumpErr_ = format("cannot write --dump-batches file '%s': %s",
                      o_.dumpBatches.c_str(), std::strerror(errno));
}

void Driver::dumpRows(int64_t step, int64_t micro) {
  // An array model's record: step, micro, G, 0, then the G sample rows
  // (indices into the arrays) of the global batch in rank order.
  const int64_t B = m_->batch, global = B * world_;
  std::vector<int32_t> mine(static_cast<size_t>(B));
  for (int64_t j = 0; j < B; ++j)
    mine[static_cast<size_t>(j)] =
        static_cast<int32_t>(arrays_.rows()[static_cast<size_t>(j)]);
  if (rank_ == 0) {
    dumpRecord_.resize(static_cast<size_t>(4 + global));
    dumpRecord_[0] = static_cast<int32_t>(step);
    dumpRecord_[1] = static_cast<int32_t>(micro);
    dumpRecord_[2] = static_cast<int32_t>(globalBatch_);
    dumpRecord_[3] = 0;
  }
  int32_t *rec = rank_ == 0 ? dumpRecord_.data() : nullptr;
  if (!zrt::host::gatherBytes(mine.data(), B * 4, rec ? rec + 4 : nullptr))
    internalFailure("the gather of a batch for --dump-batches failed");
  writeDumpRecord();
}

std::string Driver::closeDump() {
  if (dump_) {
    if (std::fclose(dump_) != 0 && dumpErr_.empty())
      dumpErr_ = format("cannot write --dump-batches file '%s': %s",
                        o_.dumpBatches.c_str(), std::strerror(errno));
    dump_ = nullptr;
  }
  return dumpErr_;
}

std::string Driver::validate(double *mean) {
  double sum = 0.0;
  for (int64_t i = 0; i < o_.valBatches; ++i) {
    if (std::string err = fetchBatch(ZRT_SPLIT_VAL, i, /*shuffle=*/0);
        !err.empty())
      return err;
    float loss = 0.0f;
    zrt_clear_error();
    if (int st = runStep(/*backward=*/false, &loss))
      internalFailure("forward (validation): " + describe(st));
    sum += loss;
  }
  *mean = allMean(sum / static_cast<double>(o_.valBatches));
  return "";
}

std::string Driver::sample() {
  const int64_t B = m_->batch, T = m_->seq, Vp = m_->padded_vocab;
  // Byte-level data: only the 256 byte tokens are meaningful.
  const int64_t V = byteLevel_ ? std::min<int64_t>(m_->vocab, 256) : m_->vocab;
  // Prompt: the first T tokens of the validation split (train if too short).
  const int split = zrt_dataset_num_tokens(ds_, ZRT_SPLIT_VAL) >= T + 1
                        ? ZRT_SPLIT_VAL
                        : ZRT_SPLIT_TRAIN;
  std::vector<int32_t> ctx(static_cast<size_t>(T)), unused(ctx.size());
  zrt_clear_error();
  if (int st = zrt_dataset_batch(ds_, split, 1, T, 0, 0, 0, 0, 1, ctx.data(),
                                 unused.data())) {
    if (st == ZRT_ERR_OUT_OF_RANGE)
      return dataError("sampling");
    internalFailure("zrt_dataset_batch: " + describe(st));
  }
  const std::vector<int32_t> prompt = ctx;
  std::vector<int32_t> ids(static_cast<size_t>(B * T));
  std::vector<float> logits(static_cast<size_t>(B * Vp));
  std::vector<double> p(static_cast<size_t>(V));
  std::vector<int32_t> out;
  for (int64_t i = 0; i < o_.sampleTokens; ++i) {
    for (int64_t b = 0; b < B; ++b) // every row holds the same context
      std::copy(ctx.begin(), ctx.end(), ids.begin() + b * T);
    // Every rank calls last_logits (it may run collectives).
    zrt_clear_error();
    if (int st = m_->last_logits(ids.data(), logits.data()))
      internalFailure("last_logits: " + describe(st));
    int32_t tok = 0;
    if (o_.temperature == 0.0) {
      for (int64_t j = 1; j < V; ++j)
        if (logits[j] > logits[tok])
          tok = static_cast<int32_t>(j);
    } else {
      double mx = -INFINITY;
      for (int64_t j = 0; j < V; ++j)
        mx = std::max(mx, static_cast<double>(logits[j]));
      double total = 0.0;
      for (int64_t j = 0; j < V; ++j) {
        p[j] = std::exp((logits[j] - mx) / o_.temperature);
        total += p[j];
      }
      // Element i of the uniform stream (zrt_init_uniform's values,
      // computed on the host: zrt_init_uniform writes arena memory).
      const float u = zrt::uniformElement(o_.seed ^ kSampleStream,
                                          static_cast<uint64_t>(i), 0.0f, 1.0f);
      double target = static_cast<double>(u) * total, acc = 0.0;
      tok = static_cast<int32_t>(V - 1);
      for (int64_t j = 0; j < V; ++j) {
        acc += p[j];
        if (acc > target) {
          tok = static_cast<int32_t>(j);
          break;
        }
      }
    }
    // Rank 0's choice (identical anyway) keeps the contexts bit-identical.
    if (!zrt::host::broadcastBytes(&tok, sizeof tok, 0))
      internalFailure("the broadcast of a sampled token failed");
    out.push_back(tok);
    std::rotate(ctx.begin(), ctx.begin() + 1, ctx.end());
    ctx.back() = tok;
  }
  if (rank_ != 0)
    return "";
  std::string text;
  if (byteLevel_) {
    std::string bytes(out.begin(), out.end());
    text = printableText(bytes);
  } else {
    for (size_t i = 0; i < out.size(); ++i)
      text += format(i ? " %d" : "%d", out[i]);
  }
  say(format("sample (%lld tokens, temperature %g, prompt: first %lld tokens "
             "of the %s split):",
             (long long)o_.sampleTokens, o_.temperature, (long long)T,
             split == ZRT_SPLIT_VAL ? "validation" : "training"));
  say(text);
  say("--- end of sample ---");
  if (sampleOut_)
    sampleErr_ = writeSample(prompt, out, split);
  return "";
}

std::string Driver::writeSample(const std::vector<int32_t> &prompt,
                                const std::vector<int32_t> &ids, int split) {
  auto array = [](Json &j, const std::vector<int32_t> &v) {
    j.open('[');
    for (int32_t t : v)
      j.integer(t);
    j.close(']');
  };
  Json j;
  j.key("type").str("sample").key("step").integer(o_.steps);
  j.key("tokens").integer(static_cast<int64_t>(ids.size()));
  j.key("temperature").num(o_.temperature);
  j.key("data").str(byteLevel_ ? "bytes" : "tokens");
  j.key("prompt_split").str(split == ZRT_SPLIT_VAL ? "val" : "train");
  j.key("prompt");
  array(j, prompt);
  j.key("ids");
  array(j, ids);
  if (std::fputs(j.line().c_str(), sampleOut_) < 0 ||
      std::fflush(sampleOut_) != 0)
    return format("cannot write --sample-out file '%s': %s",
                  o_.sampleOut.c_str(), std::strerror(errno));
  return "";
}

void Driver::printBanner() {
  if (rank_ != 0 || o_.quiet)
    return;
  say(format("model %s | world %d | ZeRO stage %d | micro-batch %lld x %lld "
             "per rank (global %lld x %lld, %lld micro-batches/step) | params "
             "%lld | threads %d",
             m_->name ? m_->name : "?", world_, m_->stage, (long long)m_->batch,
             (long long)m_->seq, (long long)globalBatch_, (long long)m_->seq,
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
        format(" %s %s / %s%s", kStateNames[k], megabytes(measured[k]).c_str(),
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
  j.key("plan").open('{');
  j.key("state_bytes").intArray(m_->plan.state_bytes, 5);
  j.key("padding_bytes").integer(m_->plan.padding_bytes);
  j.key("comm_bytes_micro").collBytes(m_->plan.comm_bytes_micro);
  j.key("comm_bytes_step").collBytes(m_->plan.comm_bytes_step);
  j.key("arena_bytes").intArray(m_->plan.arena_bytes, ZRT_MEM_NUM_KINDS);
  j.close('}');
  metric(j);
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

int Driver::run() {
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
    err = params_.build(m_, world_);
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

  // 4. Model state, once the plan is known to fit (never an out-of-memory
  //    error in the middle of training).
  if (int code = agree(checkMemoryPlan(), kExitUser))
    return finish(code);
  err.clear();
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
  int64_t firstStep = 1, lastSaved = 0;
  std::vector<std::string> resumeNotes;
  if (!o_.resume.empty()) {
    if (int code = agree(ckpt_->load(), kExitUser))
      return finish(code);
    resumeNotes = ckpt_->notes(runInfo());
    lastSaved = ckpt_->resumed().step;
    firstStep = lastSaved + 1;
    // The sample stream continues where the checkpoint left it, whatever
    // this run's batch, accumulation or world size.
    o_.seed = ckpt_->resumed().run.seed;
    samplePos_ = ckpt_->resumed().run.nextSample;
    streamBatch_ = ckpt_->resumed().run.streamBatch;
    // AdamW's step count and the loss scaler continue as well (a
    // checkpoint without them: every step was an update, S restarts).
    const zrt_ckpt::RunInfo &was = ckpt_->resumed().run;
    updates_ = was.updates >= 0 ? was.updates : lastSaved;
    if (scaler_ && was.lossScaled && o_.initLossScale < 0)
      scaler_->restore(was.lossScale, was.lossScaleGoodSteps);
  }

  // A checkpoint at or past --steps leaves nothing to train.
  if (!o_.resume.empty() && lastSaved > o_.steps)
    return finish(agree(
        format("--resume: the checkpoint is at step %lld, past --steps %lld "
               "(--steps counts from the start of the run: pass --steps > "
               "%lld to train further)",
               (long long)lastSaved, (long long)o_.steps,
               (long long)lastSaved),
        kExitUser));
  if (!o_.resume.empty() && lastSaved == o_.steps) {
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

  // 5. Training.
  const int64_t K = o_.gradAccum;
  const int64_t tokensPerStep = globalBatch_ * m_->seq * K;
  const double tStart = nowSeconds();
  const Snapshot commStart = Snapshot::take();
  double lastLoss = NAN, lastVal = NAN;
  bool planNoted = false;
  for (int64_t step = firstStep; step <= o_.steps; ++step) {
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
    lastLoss = loss;
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
          agree(nonFiniteMessage(step, loss, norm, lastSaved), kExitUser));

    if (validation_ && step % o_.valEvery == 0) {
      if (std::string err = validate(&lastVal); !err.empty())
        return finish(agree(err, kExitUser));
      say(format("val loss %.4f", lastVal));
      Json v;
      v.key("type").str("val").key("step").integer(step);
      v.key("val_loss").num(lastVal);
      metric(v);
      scalars(step, {{"val/loss", lastVal}});
    }
    if (o_.checkpointEvery > 0 && step % o_.checkpointEvery == 0) {
      std::vector<std::string> removed;
      if (int code = ckpt_->save(o_.checkpointDir, step, runInfo(), &removed))
        return finish(code);
      lastSaved = step;
      savedInRun_ = true;
      say(format("checkpoint: saved step %lld to %s/step_%lld",
                 (long long)step, o_.checkpointDir.c_str(), (long long)step));
      for (const std::string &line : removed)
        say(line);
    }
    drawBar(step, nowSeconds() - tStart);
  }
  if (!o_.checkpointDir.empty() && o_.steps > lastSaved) { // the final one
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
    if (std::string err = validate(&lastVal); !err.empty())
      return finish(agree(err, kExitUser));
    say(format("val loss %.4f", lastVal));
    Json v;
    v.key("type").str("val").key("step").integer(o_.steps);
    v.key("val_loss").num(lastVal);
    metric(v);
    scalars(o_.steps, {{"val/loss", lastVal}});
  }
  const double elapsed = nowSeconds() - tStart;
  const int64_t commAll = Snapshot::take().since(commStart).total();
  std::string summary =
      format("done: %lld steps in %.1f s", (long long)o_.steps, elapsed);
  if (o_.steps > 0)
    summary += format(" | final loss %.4f", lastLoss);
  if (validation_)
    summary += format(" | val loss %.4f", lastVal);
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

} // namespace

extern "C" int zrt_train_main(int argc, char **argv,
                              const zrt_model_desc *model) {
  zrt::backendStartup(argc, argv); // may exec the program again
  Driver driver(argc, argv, model);
  return driver.runGuarded();
}
