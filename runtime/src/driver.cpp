//===- driver.cpp - The training driver (zrt_train_main) ------------------===//
//
// Runs a compiled training step (zrt/model.h) end to end: MPI start-up,
// command line, data, learning-rate schedule, gradient accumulation, logging
// (stdout and a JSON-lines metrics file), validation and sampling.
//
// Error handling: every rank validates the same inputs; after each phase
// (flags, model/launch, data, init) the ranks agree on the outcome with one
// MPI_Allreduce, so a failure on any rank makes every rank exit with the same
// status and the lowest failing rank prints the message once. A model
// function that fails in the middle of training may leave the other ranks
// blocked inside a collective, so then the failing rank calls MPI_Abort
// (exit status 2) when the world has more than one rank.
//
// The driver's own reductions (error agreement, logged loss, validation
// loss, the sampled token) call MPI directly on MPI_COMM_WORLD, never the
// zrt_* collectives, so the runtime's per-collective byte counters contain
// exactly the model's traffic and can be compared with its plan.
//
//===----------------------------------------------------------------------===//

#include "zrt/model.h"
#include "zrt/zrt.h"

#include <mpi.h>

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
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kExitOk = 0;
constexpr int kExitUser = 1;
constexpr int kExitInternal = 2;

constexpr double kPi = 3.14159265358979323846;
constexpr uint64_t kSampleStream = 0x53414d504c45ULL; // "SAMPLE"

const char *const kCollNames[ZRT_COLL_NUM_KINDS] = {
    "all_gather", "reduce_scatter", "all_reduce", "broadcast"};
const char *const kStateNames[5] = {"param", "grad", "master", "exp_avg",
                                    "exp_avg_sq"};

std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char *fmt, ...) {
  char buf[2048];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return buf;
}

double nowSeconds() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

//===----------------------------------------------------------------------===//
// Command line
//===----------------------------------------------------------------------===//

struct Options {
  std::string data;
  int64_t steps = 200;
  int64_t gradAccum = 1;
  double lr = 1e-3;
  double minLr = -1.0; // < 0: lr / 10
  int64_t warmup = 0;
  uint64_t seed = 1337;
  int64_t valEvery = 50;
  int64_t valBatches = 8;
  double valFraction = 0.1;
  std::string metrics;
  int64_t sampleTokens = 200;
  double temperature = 1.0;
  int64_t threads = 0; // 0: automatic
  bool quiet = false;
  bool help = false;
};

const char *const kUsage =
    "usage: %s --data PATH [flags]\n"
    "\n"
    "Trains the compiled model on PATH (a text file read as byte tokens, or\n"
    "an llm.c .bin token file). Launch with `mpirun -np N` for N ranks.\n"
    "\n"
    "  --data PATH          training data (required)\n"
    "  --steps N            optimizer steps (default 200)\n"
    "  --grad-accum K       micro-batches per step (default 1)\n"
    "  --lr F               maximum learning rate (default 1e-3)\n"
    "  --min-lr F           final learning rate (default lr/10)\n"
    "  --warmup N           linear warmup steps, then cosine decay to\n"
    "                       --min-lr at --steps (default 0)\n"
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
    "  --threads N          OpenMP/BLAS threads per rank (default:\n"
    "                       $OMP_NUM_THREADS, else cores / ranks on the node)\n"
    "  --quiet              no per-step lines, no progress bar\n"
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
    if (name == "--quiet" || name == "--help") {
      if (inlineValue)
        return format("%s takes no value", name.c_str());
      (name == "--quiet" ? o->quiet : o->help) = true;
      continue;
    }
    static const char *const kValueFlags[] = {
        "--data",        "--steps",        "--grad-accum", "--lr",
        "--min-lr",      "--warmup",       "--seed",       "--val-every",
        "--val-batches", "--val-fraction", "--metrics",    "--sample-tokens",
        "--temperature", "--threads"};
    bool known = false;
    for (const char *f : kValueFlags)
      known = known || name == f;
    if (!known) {
      // TODO(checkpoints): --checkpoint-dir DIR, --checkpoint-every N and
      // --resume [PATH] belong to the checkpointing task; until it lands they
      // are rejected like any unknown flag (with a more specific hint).
      if (name == "--checkpoint-dir" || name == "--checkpoint-every" ||
          name == "--resume")
        return format("unknown flag %s (checkpointing is not implemented "
                      "yet)",
                      name.c_str());
      return format("unknown flag %s (see --help)", name.c_str());
    }
    if (!inlineValue) {
      if (i + 1 >= argc)
        return format("%s needs a value", name.c_str());
      value = argv[++i];
    }
    bool ok = true;
    if (name == "--data") {
      if (value.empty())
        return "--data: the path is empty";
      o->data = value;
      sawData = true;
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
      if (ok && !(o->valFraction >= 0 && o->valFraction < 1))
        return format("--val-fraction: %s must be in [0, 1)", value.c_str());
    } else if (name == "--metrics") {
      if (value.empty())
        return "--metrics: the path is empty";
      o->metrics = value;
    } else if (name == "--sample-tokens") {
      ok = parseInt(name, value, 0, INT32_MAX, &o->sampleTokens, &err);
    } else if (name == "--temperature") {
      ok = parseDouble(name, value, &o->temperature, &err);
      if (ok && o->temperature < 0)
        return format("--temperature: %s must be >= 0", value.c_str());
    } else if (name == "--threads") {
      ok = parseInt(name, value, 1, 4096, &o->threads, &err);
    }
    if (!ok)
      return err;
  }
  if (o->help)
    return "";
  if (!sawData)
    return "--data PATH is required (see --help)";
  if (o->minLr < 0)
    o->minLr = o->lr / 10.0;
  return "";
}

/// nanoGPT's get_lr with lr_decay_iters = steps: linear warmup over `warmup`
/// iterations, then cosine decay from lr to min_lr, min_lr afterwards. `it`
/// is the 0-based iteration.
double learningRate(const Options &o, int64_t it) {
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
  void chooseThreads();
  void printBanner();
  void writeConfig();
  double allMean(double local); // MPI mean over ranks (not counted)
  double validate();
  void sample();
  void fetchBatch(int split, int64_t index, int shuffle);

  void say(const std::string &line); // rank 0, clears the progress bar first
  void drawBar(int64_t step, double elapsed);
  void metric(const Json &j);

  int argc_;
  char **argv_;
  const zrt_model_desc *m_;
  Options o_;
  int rank_ = 0, world_ = 1;
  bool mpiUp_ = false, modelUp_ = false;
  bool tty_ = false, barShown_ = false;
  int threads_ = 1;
  zrt_dataset ds_ = nullptr;
  std::FILE *metrics_ = nullptr;
  int64_t globalBatch_ = 0, dataVocab_ = 0;
  bool byteLevel_ = false, validation_ = false;
  std::vector<int32_t> ids_, targets_;
};

int Driver::agree(const std::string &err, int code) {
  // Encode (rank, code) so that MIN picks the lowest failing rank.
  int mine = err.empty() ? INT_MAX : rank_ * 4 + code;
  int first = INT_MAX;
  if (MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) !=
      MPI_SUCCESS)
    internalFailure("MPI_Allreduce failed while checking for errors");
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
    MPI_Abort(MPI_COMM_WORLD, kExitInternal);
  cleanup();
  std::exit(kExitInternal);
}

void Driver::cleanup() {
  if (modelUp_ && m_->destroy)
    m_->destroy();
  modelUp_ = false;
  zrt_dataset_close(ds_);
  ds_ = nullptr;
  if (metrics_) {
    if (std::fclose(metrics_) != 0)
      std::fprintf(stderr, "warning: could not finish writing --metrics %s\n",
                   o_.metrics.c_str());
    metrics_ = nullptr;
  }
  if (mpiUp_)
    zrt_finalize();
  mpiUp_ = false;
}

int Driver::finish(int code) {
  cleanup();
  return code;
}

std::string Driver::checkModel() {
  if (!m_)
    return "zrt_model_get() returned NULL";
  if (m_->abi_version != ZRT_MODEL_ABI_VERSION)
    return format("the program was generated for model ABI version %d, but "
                  "this runtime implements version %d (regenerate it with "
                  "the matching zero-compile)",
                  m_->abi_version, ZRT_MODEL_ABI_VERSION);
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
  const std::string &path = o_.data;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return format("cannot open data file '%s': %s", path.c_str(),
                  std::strerror(errno));
  if (S_ISDIR(st.st_mode))
    return format("data file '%s' is a directory", path.c_str());
  if (st.st_size == 0)
    return format("data file '%s' is empty", path.c_str());
  zrt_clear_error();
  if (zrt_dataset_open(path.c_str(), o_.valFraction, &ds_) != ZRT_OK)
    return format("cannot load data file '%s': %s", path.c_str(),
                  zrt_last_error());
  byteLevel_ =
      !(path.size() >= 4 && path.compare(path.size() - 4, 4, ".bin") == 0);
  dataVocab_ = zrt_dataset_vocab_size(ds_);
  const int64_t T = m_->seq;
  const int64_t nTrain = zrt_dataset_num_tokens(ds_, ZRT_SPLIT_TRAIN);
  const int64_t nVal = zrt_dataset_num_tokens(ds_, ZRT_SPLIT_VAL);
  if (nTrain < T + 1)
    return format("the training split of '%s' has %lld tokens, but the model "
                  "was compiled for sequence length %lld and one sequence "
                  "needs seq + 1 = %lld tokens (more data, or a smaller "
                  "--val-fraction)",
                  path.c_str(), (long long)nTrain, (long long)T,
                  (long long)(T + 1));
  if (dataVocab_ > m_->vocab)
    return format("data file '%s' needs a vocabulary of %lld tokens%s, but "
                  "the model was compiled for vocab %lld",
                  path.c_str(), (long long)dataVocab_,
                  byteLevel_ ? " (text is read as bytes 0..255)" : "",
                  (long long)m_->vocab);
  validation_ = o_.valEvery > 0;
  if (validation_ && nVal < T + 1)
    return format("the validation split of '%s' has %lld tokens (last %g of "
                  "the data), fewer than seq + 1 = %lld; use a larger "
                  "--val-fraction, more data, or --val-every 0",
                  path.c_str(), (long long)nVal, o_.valFraction,
                  (long long)(T + 1));
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
      // (A singleton skips MPI_Comm_split_type, which makes Open MPI 4's
      // singleton poll slowly afterwards: ~40 ms per step.)
      int local = 1;
      MPI_Comm node;
      if (world_ > 1 &&
          MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                              MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_size(node, &local);
        MPI_Comm_free(&node);
      }
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

void Driver::metric(const Json &j) {
  if (!metrics_)
    return;
  std::fputs(j.line().c_str(), metrics_);
  std::fflush(metrics_);
}

double Driver::allMean(double local) {
  double sum = 0.0;
  if (MPI_Allreduce(&local, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD) !=
      MPI_SUCCESS)
    internalFailure("MPI_Allreduce of a logged value failed");
  return sum / world_;
}

void Driver::fetchBatch(int split, int64_t index, int shuffle) {
  zrt_clear_error();
  if (int st = zrt_dataset_batch(ds_, split, globalBatch_, m_->seq, o_.seed,
                                 index, shuffle, rank_, world_, ids_.data(),
                                 targets_.data()))
    internalFailure("zrt_dataset_batch: " + describe(st));
}

double Driver::validate() {
  double sum = 0.0;
  for (int64_t i = 0; i < o_.valBatches; ++i) {
    fetchBatch(ZRT_SPLIT_VAL, i, /*shuffle=*/0);
    float loss = 0.0f;
    zrt_clear_error();
    if (int st = m_->forward(ids_.data(), targets_.data(), &loss))
      internalFailure("forward (validation): " + describe(st));
    sum += loss;
  }
  return allMean(sum / static_cast<double>(o_.valBatches));
}

void Driver::sample() {
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
                                 unused.data()))
    internalFailure("zrt_dataset_batch: " + describe(st));
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
      float u = 0.0f;
      zrt_init_uniform(&u, 1, 0.0f, 1.0f, o_.seed ^ kSampleStream, i);
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
    if (MPI_Bcast(&tok, 1, MPI_INT32_T, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
      internalFailure("MPI_Bcast of a sampled token failed");
    out.push_back(tok);
    std::rotate(ctx.begin(), ctx.begin() + 1, ctx.end());
    ctx.back() = tok;
  }
  if (rank_ != 0)
    return;
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
  say(format("data %s | %s | train %lld tokens | val %lld tokens | vocab %lld "
             "(model %lld)",
             o_.data.c_str(), byteLevel_ ? "bytes" : "llm.c tokens",
             (long long)zrt_dataset_num_tokens(ds_, ZRT_SPLIT_TRAIN),
             (long long)zrt_dataset_num_tokens(ds_, ZRT_SPLIT_VAL),
             (long long)dataVocab_, (long long)m_->vocab));
  int64_t measured[5] = {};
  for (int i = 0; i < m_->num_states; ++i) {
    const zrt_state_desc &s = m_->states[i];
    if (s.kind >= 0 && s.kind < 5)
      measured[s.kind] += s.numel * (s.dtype == ZRT_BF16 ? 2 : 4);
  }
  std::string mem = "model state per rank (allocated / plan):";
  for (int k = 0; k < 5; ++k)
    mem +=
        format(" %s %s / %s%s", kStateNames[k], megabytes(measured[k]).c_str(),
               megabytes(m_->plan.state_bytes[k]).c_str(), k < 4 ? "," : "");
  say(mem);
}

void Driver::writeConfig() {
  if (!metrics_)
    return;
  int64_t measured[5] = {};
  for (int i = 0; i < m_->num_states; ++i) {
    const zrt_state_desc &s = m_->states[i];
    if (s.kind >= 0 && s.kind < 5)
      measured[s.kind] += s.numel * (s.dtype == ZRT_BF16 ? 2 : 4);
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
  j.key("seed").integer(static_cast<int64_t>(o_.seed));
  j.key("threads").integer(threads_);
  j.key("data").str(o_.data);
  j.key("measured_state_bytes").intArray(measured, 5);
  j.key("arena_bytes").intArray(arena, ZRT_MEM_NUM_KINDS);
  j.key("plan").open('{');
  j.key("state_bytes").intArray(m_->plan.state_bytes, 5);
  j.key("padding_bytes").integer(m_->plan.padding_bytes);
  j.key("comm_bytes_micro").collBytes(m_->plan.comm_bytes_micro);
  j.key("comm_bytes_step").collBytes(m_->plan.comm_bytes_step);
  j.close('}');
  metric(j);
}

int Driver::run() {
  int argc = argc_;
  char **argv = argv_;
  if (zrt_init(&argc, &argv) != ZRT_OK) {
    std::fprintf(stderr, "error: cannot start MPI: %s\n", zrt_last_error());
    return kExitInternal;
  }
  mpiUp_ = true;
  rank_ = zrt_rank();
  world_ = zrt_world_size();
  // mpirun (Open MPI) hands rank 0 a pseudo-terminal whatever its own
  // stdout is, so under a launcher isatty() says nothing: no progress bar.
  tty_ = rank_ == 0 && isatty(STDOUT_FILENO) &&
         !std::getenv("OMPI_COMM_WORLD_SIZE") && !std::getenv("PMI_SIZE");

  // 1. Flags (deterministic: the same verdict on every rank).
  if (int code = agree(parseOptions(argc, argv, &o_), kExitUser))
    return finish(code);
  if (o_.help) {
    if (rank_ == 0)
      std::printf(kUsage, argc > 0 ? argv[0] : "program");
    return finish(kExitOk);
  }

  // 2. The model against this runtime and this launch.
  if (int code = agree(checkModel(), kExitInternal))
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
  globalBatch_ = m_->batch * world_;
  chooseThreads();

  // 3. Data and output files.
  std::string err = openData();
  if (err.empty() && rank_ == 0 && !o_.metrics.empty()) {
    metrics_ = std::fopen(o_.metrics.c_str(), "w");
    if (!metrics_)
      err = format("cannot write --metrics file '%s': %s", o_.metrics.c_str(),
                   std::strerror(errno));
  }
  if (int code = agree(err, kExitUser))
    return finish(code);

  // 4. Model state.
  err.clear();
  zrt_clear_error();
  if (int st = m_->init(o_.seed))
    err = "model init failed: " + describe(st);
  else
    modelUp_ = true;
  if (int code = agree(err, kExitInternal))
    return finish(code);

  ids_.resize(static_cast<size_t>(m_->batch * m_->seq));
  targets_.resize(ids_.size());
  printBanner();
  writeConfig();

  // 5. Training.
  const int64_t K = o_.gradAccum;
  const int64_t tokensPerStep = globalBatch_ * m_->seq * K;
  const double tStart = nowSeconds();
  const Snapshot commStart = Snapshot::take();
  double lastLoss = NAN, lastVal = NAN;
  bool planNoted = false;
  for (int64_t step = 1; step <= o_.steps; ++step) {
    const double lr = learningRate(o_, step - 1);
    const double t0 = nowSeconds();
    const Snapshot s0 = Snapshot::take();
    const double wait0 = zrt_comm_wait_seconds();
    Snapshot micro{};
    double lossSum = 0.0;
    for (int64_t k = 0; k < K; ++k) {
      fetchBatch(ZRT_SPLIT_TRAIN, (step - 1) * K + k, /*shuffle=*/1);
      const Snapshot before = Snapshot::take();
      float loss = 0.0f;
      zrt_clear_error();
      if (int st = m_->forward_backward(ids_.data(), targets_.data(), &loss))
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
    if (int st = m_->optimizer_step(static_cast<float>(lr), step,
                                    1.0f / static_cast<float>(K), &norm))
      internalFailure(format("optimizer_step (step %lld): ", (long long)step) +
                      describe(st));
    const Snapshot after = Snapshot::take();
    const Snapshot opt = after.since(beforeOpt);
    const Snapshot total = after.since(s0);
    const double secs = nowSeconds() - t0;
    // Logging reduction (plain MPI: not in the zrt byte counters).
    const double loss = allMean(lossSum / static_cast<double>(K));
    lastLoss = loss;
    const int64_t peak = zrt_memory_peak_total_bytes();
    const double tokPerS = secs > 0 ? tokensPerStep / secs : 0.0;

    if (!o_.quiet)
      say(format("step %lld/%lld | loss %.4f | lr %.2e | norm %.4f | %.1f ms "
                 "| %.0f tok/s | comm %s | peak %s",
                 (long long)step, (long long)o_.steps, loss, lr, norm,
                 secs * 1e3, tokPerS, megabytes(total.total()).c_str(),
                 megabytes(peak).c_str()));
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
    j.key("ms").num(secs * 1e3);
    j.key("tokens_per_s").num(tokPerS);
    j.key("comm_bytes").collBytes(total.bytes);
    j.key("comm_bytes_micro_measured").collBytes(micro.bytes);
    j.key("comm_bytes_step_measured").collBytes(opt.bytes);
    j.key("comm_wait_s").num(zrt_comm_wait_seconds() - wait0);
    j.key("peak_bytes").integer(peak);
    metric(j);

    if (validation_ && step % o_.valEvery == 0) {
      lastVal = validate();
      say(format("val loss %.4f", lastVal));
      Json v;
      v.key("type").str("val").key("step").integer(step);
      v.key("val_loss").num(lastVal);
      metric(v);
    }
    drawBar(step, nowSeconds() - tStart);
  }
  // Final validation unless the last step just ran one.
  if (validation_ && (o_.steps == 0 || o_.steps % o_.valEvery != 0)) {
    lastVal = validate();
    say(format("val loss %.4f", lastVal));
    Json v;
    v.key("type").str("val").key("step").integer(o_.steps);
    v.key("val_loss").num(lastVal);
    metric(v);
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

  // 6. Sample.
  if (m_->last_logits && o_.sampleTokens > 0)
    sample();
  return finish(kExitOk);
}

} // namespace

extern "C" int zrt_train_main(int argc, char **argv,
                              const zrt_model_desc *model) {
  Driver driver(argc, argv, model);
  return driver.runGuarded();
}
