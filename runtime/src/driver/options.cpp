//===- options.cpp - The training driver's command line -------------------===//
//
// The --help text, the flag parser and the learning-rate schedules of
// zrt_train_main (options.h).
//
//===----------------------------------------------------------------------===//

#include "driver/options.h"

#include "driver/loss_scaler.h"
#include "driver/strformat.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

namespace zrt::train {

using zrt::format;

namespace {

constexpr double kPi = 3.14159265358979323846;

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

} // namespace

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

} // namespace zrt::train
