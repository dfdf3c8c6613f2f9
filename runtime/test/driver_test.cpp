//===- driver_test.cpp - The training driver, end to end ------------------===//
//
// Runs the fake bigram model (fake_model.cpp linked with zrt_train_main) as a
// subprocess: `fake_train` is compiled for world size 1 with per-rank batch
// 4, `fake_train_np2` for world size 2 with per-rank batch 2 (the same global
// batch). Paths come from compile definitions:
//   ZRT_FAKE_TRAIN, ZRT_FAKE_TRAIN_NP2: the two executables;
//   ZRT_MPIEXEC: launcher with its flags, ending in the process-count flag
//                (e.g. "mpiexec --allow-run-as-root --oversubscribe -n").
//
//===----------------------------------------------------------------------===//

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

//===----------------------------------------------------------------------===//
// A minimal JSON reader (objects, arrays, strings, numbers, literals).
//===----------------------------------------------------------------------===//

struct JValue {
  enum Kind { Null, Bool, Num, Str, Arr, Obj } kind = Null;
  double num = 0.0;
  bool b = false;
  std::string str;
  std::vector<JValue> arr;
  std::map<std::string, JValue> obj;

  bool has(const std::string &k) const { return kind == Obj && obj.count(k); }
  const JValue &operator[](const std::string &k) const {
    static const JValue null;
    auto it = obj.find(k);
    return it == obj.end() ? null : it->second;
  }
};

class JParser {
public:
  explicit JParser(const std::string &s) : s_(s) {}
  // Parses the whole text as one value; false on any syntax error.
  bool parse(JValue *out) {
    if (!value(out))
      return false;
    ws();
    return i_ == s_.size();
  }

private:
  void ws() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_])))
      ++i_;
  }
  bool lit(const char *w) {
    size_t n = std::strlen(w);
    if (s_.compare(i_, n, w) != 0)
      return false;
    i_ += n;
    return true;
  }
  bool string(std::string *out) {
    if (i_ >= s_.size() || s_[i_] != '"')
      return false;
    ++i_;
    while (i_ < s_.size() && s_[i_] != '"') {
      char c = s_[i_++];
      if (static_cast<unsigned char>(c) < 0x20)
        return false;
      if (c == '\\') {
        if (i_ >= s_.size())
          return false;
        char e = s_[i_++];
        if (e == 'u') {
          if (i_ + 4 > s_.size())
            return false;
          c = static_cast<char>(std::stoi(s_.substr(i_, 4), nullptr, 16));
          i_ += 4;
        } else if (e == 'n') {
          c = '\n';
        } else if (e == 't') {
          c = '\t';
        } else if (e == '"' || e == '\\' || e == '/') {
          c = e;
        } else {
          return false;
        }
      }
      out->push_back(c);
    }
    if (i_ >= s_.size())
      return false;
    ++i_;
    return true;
  }
  bool value(JValue *v) {
    ws();
    if (i_ >= s_.size())
      return false;
    char c = s_[i_];
    if (c == '{') {
      v->kind = JValue::Obj;
      ++i_;
      ws();
      if (i_ < s_.size() && s_[i_] == '}') {
        ++i_;
        return true;
      }
      for (;;) {
        ws();
        std::string k;
        if (!string(&k))
          return false;
        ws();
        if (i_ >= s_.size() || s_[i_++] != ':')
          return false;
        if (v->obj.count(k))
          return false; // duplicate key
        if (!value(&v->obj[k]))
          return false;
        ws();
        if (i_ >= s_.size())
          return false;
        if (s_[i_] == ',') {
          ++i_;
          continue;
        }
        if (s_[i_] == '}') {
          ++i_;
          return true;
        }
        return false;
      }
    }
    if (c == '[') {
      v->kind = JValue::Arr;
      ++i_;
      ws();
      if (i_ < s_.size() && s_[i_] == ']') {
        ++i_;
        return true;
      }
      for (;;) {
        v->arr.emplace_back();
        if (!value(&v->arr.back()))
          return false;
        ws();
        if (i_ >= s_.size())
          return false;
        if (s_[i_] == ',') {
          ++i_;
          continue;
        }
        if (s_[i_] == ']') {
          ++i_;
          return true;
        }
        return false;
      }
    }
    if (c == '"') {
      v->kind = JValue::Str;
      return string(&v->str);
    }
    if (lit("null"))
      return v->kind = JValue::Null, true;
    if (lit("true"))
      return v->kind = JValue::Bool, v->b = true, true;
    if (lit("false"))
      return v->kind = JValue::Bool, v->b = false, true;
    const char *begin = s_.c_str() + i_;
    char *end = nullptr;
    v->num = std::strtod(begin, &end);
    if (end == begin)
      return false;
    v->kind = JValue::Num;
    i_ += static_cast<size_t>(end - begin);
    return true;
  }

  const std::string &s_;
  size_t i_ = 0;
};

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

struct Proc {
  int status = -1; // exit status, -1 if killed by a signal
  std::string out; // stdout and stderr together
};

Proc launch(const std::string &cmd) {
  Proc r;
  // `timeout` turns a hang into a failure instead of a stuck test.
  std::string full = "timeout 120 " + cmd + " 2>&1";
  FILE *p = popen(full.c_str(), "r");
  if (!p)
    return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0)
    r.out.append(buf, n);
  int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

size_t count(const std::string &hay, const std::string &needle) {
  size_t c = 0;
  for (size_t pos = hay.find(needle); pos != std::string::npos;
       pos = hay.find(needle, pos + needle.size()))
    ++c;
  return c;
}

std::vector<JValue> readMetrics(const std::string &path) {
  std::vector<JValue> lines;
  std::ifstream in(path);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    JValue v;
    EXPECT_TRUE(JParser(line).parse(&v)) << path << ":" << n << ": " << line;
    EXPECT_EQ(v.kind, JValue::Obj) << path << ":" << n;
    lines.push_back(v);
  }
  return lines;
}

std::vector<JValue> ofType(const std::vector<JValue> &lines,
                           const std::string &type) {
  std::vector<JValue> out;
  for (const JValue &v : lines)
    if (v["type"].str == type)
      out.push_back(v);
  return out;
}

// Deterministic text with a strong bigram structure.
std::string makeText(size_t bytes) {
  static const char *const kWords[] = {"the ", "cat ",  "sat ", "on ",
                                       "a ",   "mat. ", "dog ", "ran\n"};
  std::string s;
  uint32_t x = 12345;
  while (s.size() < bytes) {
    x = x * 1664525u + 1013904223u;
    s += kWords[(x >> 16) % 8];
  }
  s.resize(bytes);
  return s;
}

const std::string kFake = ZRT_FAKE_TRAIN;
const std::string kFakeNp2 = ZRT_FAKE_TRAIN_NP2;
const std::string kMpi = ZRT_MPIEXEC;

class DriverTest : public ::testing::Test {
protected:
  void SetUp() override {
    char tmpl[] = "/tmp/zrt-driver-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    text_ = write("data.txt", makeText(20000));
  }
  void TearDown() override {
    if (!dir_.empty() && !HasFailure())
      std::system(("rm -rf '" + dir_ + "'").c_str());
    else if (!dir_.empty())
      std::fprintf(stderr, "kept %s\n", dir_.c_str());
  }
  std::string write(const std::string &name, const std::string &content) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }
  std::string path(const std::string &name) const { return dir_ + "/" + name; }
  // Writes an llm.c token file with the given tokens.
  std::string writeBin(const std::string &name,
                       const std::vector<uint16_t> &tokens, int magic) {
    std::vector<int32_t> header(256, 0);
    header[0] = magic;
    header[1] = 1;
    header[2] = static_cast<int32_t>(tokens.size());
    std::string bytes(reinterpret_cast<const char *>(header.data()), 1024);
    bytes.append(reinterpret_cast<const char *>(tokens.data()),
                 tokens.size() * 2);
    return write(name, bytes);
  }
  // Expects exit status 1 and `message` exactly once.
  void expectUserError(const std::string &cmd, const std::string &message) {
    Proc r = launch(cmd);
    EXPECT_EQ(r.status, 1) << cmd << "\n" << r.out;
    EXPECT_EQ(count(r.out, message), 1u)
        << cmd << "\nexpected once: " << message << "\ngot:\n"
        << r.out;
    EXPECT_EQ(r.out.find("step 1/"), std::string::npos) << r.out;
  }

  std::string dir_, text_;
};

//===----------------------------------------------------------------------===//
// Successful runs
//===----------------------------------------------------------------------===//

TEST_F(DriverTest, TrainsAndLossFalls) {
  const std::string metrics = path("m.jsonl");
  Proc r = launch(kFake + " --data " + text_ +
                  " --steps 40 --lr 0.3 --val-every 20 --val-batches 4 "
                  "--sample-tokens 64 --metrics " +
                  metrics);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("step 1/40 | loss "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("step 40/40 | loss "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" tok/s | comm "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" MB | peak "), std::string::npos) << r.out;
  EXPECT_EQ(count(r.out, "val loss "), 3u) << r.out; // 20, 40, summary
  EXPECT_NE(r.out.find("sample (64 tokens"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--- end of sample ---"), std::string::npos) << r.out;
  // Not a terminal: no carriage-return progress bar.
  EXPECT_EQ(r.out.find('\r'), std::string::npos);

  std::vector<JValue> lines = readMetrics(metrics);
  std::vector<JValue> steps = ofType(lines, "step"),
                      vals = ofType(lines, "val");
  ASSERT_EQ(steps.size(), 40u);
  ASSERT_EQ(vals.size(), 2u);
  const double first = steps.front()["loss"].num,
               last = steps.back()["loss"].num;
  EXPECT_NEAR(first, std::log(256.0), 0.1); // near-uniform at init
  EXPECT_LT(last, first - 1.5)
      << "loss did not fall: " << first << " -> " << last;
  EXPECT_EQ(vals[0]["step"].num, 20);
  EXPECT_EQ(vals[1]["step"].num, 40);
  EXPECT_LT(vals[1]["val_loss"].num, first - 1.5);
  // The sample is text of the data's alphabet, never a padding column.
  size_t s = r.out.find("sample (64 tokens");
  size_t e = r.out.find("--- end of sample ---");
  ASSERT_LT(s, e);
  std::string sample = r.out.substr(r.out.find('\n', s) + 1);
  sample = sample.substr(0, sample.find("--- end of sample ---"));
  // 64 bytes and the newline, unless some byte had to be escaped as \xNN.
  EXPECT_GE(sample.size(), 65u) << sample;
  // A trained bigram model mostly emits bytes of the data's alphabet.
  int inAlphabet = 0;
  for (char c : sample.substr(0, 64))
    inAlphabet += std::string("thecatsonmdgr .\n").find(c) != std::string::npos;
  EXPECT_GE(inAlphabet, 48) << sample; // uniform bytes: ~4
}

TEST_F(DriverTest, MetricsFileSchema) {
  const std::string metrics = path("m.jsonl");
  Proc r = launch(kFake + " --data=" + text_ +
                  " --steps=3 --val-every=2 --sample-tokens=0 --quiet "
                  "--metrics=" +
                  metrics);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.find("step 1/3"), std::string::npos) << "--quiet: " << r.out;
  EXPECT_EQ(r.out.find("sample ("), std::string::npos) << r.out;
  std::vector<JValue> lines = readMetrics(metrics);
  ASSERT_EQ(lines.size(), 1u + 3u + 2u); // config, 3 steps, val at 2 and 3
  const JValue &c = lines[0];
  EXPECT_EQ(c["type"].str, "config");
  for (const char *k : {"world_size", "stage", "batch", "seq", "grad_accum",
                        "num_params", "measured_state_bytes", "plan"})
    EXPECT_TRUE(c.has(k)) << k;
  EXPECT_EQ(c["world_size"].num, 1);
  EXPECT_EQ(c["stage"].num, 1);
  EXPECT_EQ(c["batch"].num, 4);
  EXPECT_EQ(c["seq"].num, 16);
  EXPECT_EQ(c["grad_accum"].num, 1);
  EXPECT_EQ(c["num_params"].num, 65536);
  const JValue &plan = c["plan"];
  for (const char *k :
       {"state_bytes", "padding_bytes", "comm_bytes_micro", "comm_bytes_step"})
    EXPECT_TRUE(plan.has(k)) << k;
  ASSERT_EQ(c["measured_state_bytes"].arr.size(), 5u);
  ASSERT_EQ(plan["state_bytes"].arr.size(), 5u);
  for (int k = 0; k < 5; ++k)
    EXPECT_EQ(c["measured_state_bytes"].arr[k].num,
              plan["state_bytes"].arr[k].num)
        << "state kind " << k;
  EXPECT_EQ(c["measured_state_bytes"].arr[0].num, 65536 * 4);
  EXPECT_EQ(c["measured_state_bytes"].arr[2].num, 0);

  // Order: config, step 1, step 2, val 2, step 3, val 3.
  const char *const kOrder[] = {"config", "step", "step", "val", "step", "val"};
  for (size_t i = 0; i < lines.size(); ++i)
    EXPECT_EQ(lines[i]["type"].str, kOrder[i]) << "line " << i + 1;
  std::vector<JValue> steps = ofType(lines, "step");
  ASSERT_EQ(steps.size(), 3u);
  for (int i = 1; i <= 3; ++i) {
    const JValue &s = steps[i - 1];
    EXPECT_EQ(s["step"].num, i);
    for (const char *k :
         {"loss", "lr", "grad_norm", "ms", "tokens_per_s", "comm_bytes",
          "peak_bytes", "comm_bytes_micro_measured",
          "comm_bytes_step_measured"})
      EXPECT_TRUE(s.has(k)) << k;
    EXPECT_EQ(s["loss"].kind, JValue::Num);
    EXPECT_GT(s["grad_norm"].num, 0);
    EXPECT_GT(s["peak_bytes"].num, 3 * 65536 * 4);
    for (const char *k : {"all_gather", "reduce_scatter", "all_reduce"}) {
      EXPECT_EQ(s["comm_bytes"][k].kind, JValue::Num) << k;
      EXPECT_EQ(s["comm_bytes"][k].num, 0) << "world size 1 sends nothing";
    }
  }
  EXPECT_EQ(lines[3]["step"].num, 2);
  EXPECT_EQ(lines[5]["step"].num, 3);
  EXPECT_GT(lines[5]["val_loss"].num, 0);
}

TEST_F(DriverTest, LearningRateSchedule) {
  const std::string metrics = path("m.jsonl");
  Proc r =
      launch(kFake + " --data " + text_ +
             " --steps 20 --warmup 5 --lr 1e-2 --min-lr 1e-3 --val-every 0 "
             "--sample-tokens 0 --quiet --metrics " +
             metrics);
  ASSERT_EQ(r.status, 0) << r.out;
  std::vector<JValue> steps = ofType(readMetrics(metrics), "step");
  ASSERT_EQ(steps.size(), 20u);
  const double kPi = 3.14159265358979323846;
  for (int it = 0; it < 20; ++it) {
    double want;
    if (it < 5)
      want = 1e-2 * (it + 1) / 6.0;
    else
      want = 1e-3 + 0.5 * (1 + std::cos(kPi * (it - 5) / 15.0)) * 9e-3;
    EXPECT_NEAR(steps[it]["lr"].num, want, 1e-12) << "iteration " << it;
  }
  EXPECT_EQ(r.out.find("val loss"), std::string::npos) << r.out;
  // Default --min-lr is lr / 10.
  r = launch(kFake + " --data " + text_ +
             " --steps 2 --lr 4e-3 --val-every 0 --sample-tokens 0 --quiet "
             "--metrics " +
             metrics);
  ASSERT_EQ(r.status, 0) << r.out;
  std::vector<JValue> cfg = ofType(readMetrics(metrics), "config");
  ASSERT_EQ(cfg.size(), 1u);
  EXPECT_NEAR(cfg[0]["min_lr"].num, 4e-4, 1e-15);
}

TEST_F(DriverTest, Help) {
  Proc r = launch(kFake + " --help");
  EXPECT_EQ(r.status, 0) << r.out;
  for (const char *f :
       {"--data", "--steps", "--grad-accum", "--lr", "--min-lr", "--warmup",
        "--seed", "--val-every", "--val-batches", "--val-fraction", "--metrics",
        "--sample-tokens", "--temperature", "--threads", "--quiet"})
    EXPECT_NE(r.out.find(f), std::string::npos) << f;
}

// The same global batch on 2 ranks (per-rank batch 2) and on 1 rank (batch
// 4) gives the same global-mean loss, and the traffic matches the plan.
TEST_F(DriverTest, TwoRanksMatchOneRank) {
  const std::string m1 = path("np1.jsonl"), m2 = path("np2.jsonl");
  const std::string flags =
      " --data " + text_ +
      " --steps 12 --grad-accum 2 --lr 1e-2 --warmup 2 --val-every 6 "
      "--val-batches 3 --sample-tokens 32 --seed 7 --metrics ";
  Proc r1 = launch(kFake + flags + m1);
  ASSERT_EQ(r1.status, 0) << r1.out;
  Proc r2 = launch(kMpi + " 2 " + kFakeNp2 + flags + m2);
  ASSERT_EQ(r2.status, 0) << r2.out;
  // Rank 0 alone prints.
  EXPECT_EQ(count(r2.out, "step 12/12 | loss"), 1u) << r2.out;
  EXPECT_EQ(count(r2.out, "--- end of sample ---"), 1u) << r2.out;

  std::vector<JValue> a = readMetrics(m1), b = readMetrics(m2);
  std::vector<JValue> sa = ofType(a, "step"), sb = ofType(b, "step");
  ASSERT_EQ(sa.size(), 12u);
  ASSERT_EQ(sb.size(), 12u);
  for (size_t i = 0; i < sa.size(); ++i) {
    const double la = sa[i]["loss"].num, lb = sb[i]["loss"].num;
    EXPECT_LE(std::fabs(la - lb), 1e-6 * std::fabs(la))
        << "step " << i + 1 << ": " << la << " vs " << lb;
    EXPECT_LE(std::fabs(sa[i]["grad_norm"].num - sb[i]["grad_norm"].num),
              1e-5 * std::fabs(sa[i]["grad_norm"].num))
        << "step " << i + 1;
    EXPECT_EQ(sa[i]["lr"].num, sb[i]["lr"].num);
  }
  std::vector<JValue> va = ofType(a, "val"), vb = ofType(b, "val");
  ASSERT_EQ(va.size(), 2u);
  ASSERT_EQ(vb.size(), 2u);
  for (size_t i = 0; i < va.size(); ++i)
    EXPECT_LE(std::fabs(va[i]["val_loss"].num - vb[i]["val_loss"].num),
              1e-6 * va[i]["val_loss"].num);

  // Traffic per rank against the plan: one all-reduce of the [256, 256] f32
  // gradient per micro-batch (2 S (N-1)/N = S bytes), one all-gather of the
  // parameter shard per step.
  const JValue cfg = ofType(b, "config").at(0);
  EXPECT_EQ(cfg["world_size"].num, 2);
  EXPECT_EQ(cfg["batch"].num, 2);
  const JValue &plan = cfg["plan"];
  EXPECT_EQ(plan["comm_bytes_micro"]["all_reduce"].num, 262144);
  EXPECT_EQ(plan["comm_bytes_step"]["all_gather"].num, 131072);
  for (int k = 0; k < 5; ++k)
    EXPECT_EQ(cfg["measured_state_bytes"].arr.at(k).num,
              plan["state_bytes"].arr.at(k).num);
  EXPECT_EQ(cfg["measured_state_bytes"].arr.at(3).num, 32768 * 4); // shard
  for (const JValue &s : sb)
    for (const char *k : {"all_gather", "reduce_scatter", "all_reduce"}) {
      EXPECT_EQ(s["comm_bytes_micro_measured"][k].num,
                plan["comm_bytes_micro"][k].num)
          << k;
      EXPECT_EQ(s["comm_bytes_step_measured"][k].num,
                plan["comm_bytes_step"][k].num)
          << k;
      // Whole step: 2 micro-batches + the optimizer step; the driver's own
      // loss reductions are not counted.
      EXPECT_EQ(s["comm_bytes"][k].num, 2 * plan["comm_bytes_micro"][k].num +
                                            plan["comm_bytes_step"][k].num)
          << k;
    }
  // Per step: 2 x 262144 + 131072 bytes.
  EXPECT_NE(r2.out.find("comm 0.66 MB"), std::string::npos) << r2.out;
  // Same sample text on both (same parameters up to rounding, same RNG).
  auto sampleOf = [](const std::string &out) {
    size_t s = out.find("sample (");
    return s == std::string::npos ? std::string() : out.substr(s);
  };
  EXPECT_EQ(sampleOf(r1.out), sampleOf(r2.out));
}

//===----------------------------------------------------------------------===//
// User errors: one message, exit status 1, on every launch form.
//===----------------------------------------------------------------------===//

TEST_F(DriverTest, MissingDataFile) {
  expectUserError(kFake + " --data " + path("nope.txt"),
                  "error: cannot open data file '" + path("nope.txt") +
                      "': No such file or directory");
}

TEST_F(DriverTest, MissingDataFlag) {
  expectUserError(kFake + " --steps 3", "error: --data PATH is required");
}

TEST_F(DriverTest, EmptyDataFile) {
  std::string empty = write("empty.txt", "");
  expectUserError(kFake + " --data " + empty,
                  "error: data file '" + empty + "' is empty");
}

TEST_F(DriverTest, SequenceLongerThanData) {
  std::string tiny = write("tiny.txt", "0123456789");
  expectUserError(kFake + " --data " + tiny,
                  "has 9 tokens, but the model was compiled for sequence "
                  "length 16 and one sequence needs seq + 1 = 17 tokens");
}

TEST_F(DriverTest, ValidationSplitTooShort) {
  std::string small = write("small.txt", makeText(100)); // 10 val tokens
  expectUserError(kFake + " --data " + small,
                  "the validation split of '" + small + "' has 10 tokens");
  // Without validation the same file trains.
  Proc r = launch(kFake + " --data " + small +
                  " --steps 2 --val-every 0 --sample-tokens 5");
  EXPECT_EQ(r.status, 0) << r.out;
}

TEST_F(DriverTest, UnknownFlag) {
  expectUserError(kFake + " --data " + text_ + " --bogus 3",
                  "error: unknown flag --bogus");
  expectUserError(kFake + " --data " + text_ + " stray",
                  "error: unexpected argument 'stray'");
  expectUserError(kFake + " --data " + text_ + " --resume ckpt",
                  "error: unknown flag --resume (checkpointing is not "
                  "implemented yet)");
  expectUserError(kFake + " --data " + text_ + " --quiet=1",
                  "error: --quiet takes no value");
}

TEST_F(DriverTest, BadNumbers) {
  const std::string base = kFake + " --data " + text_;
  expectUserError(base + " --steps abc",
                  "error: --steps: 'abc' is not an integer");
  expectUserError(base + " --steps 10x",
                  "error: --steps: '10x' is not an integer");
  expectUserError(base + " --lr 1e-3x",
                  "error: --lr: '1e-3x' is not a finite number");
  expectUserError(base + " --lr=nan",
                  "error: --lr: 'nan' is not a finite number");
  expectUserError(base + " --grad-accum 0",
                  "error: --grad-accum: 0 is out of range");
  expectUserError(base + " --val-fraction 1.5",
                  "error: --val-fraction: 1.5 must be in [0, 1)");
  expectUserError(base + " --seed -1",
                  "error: --seed: '-1' is not a non-negative integer");
  expectUserError(base + " --steps", "error: --steps needs a value");
}

TEST_F(DriverTest, VocabularyLargerThanModel) {
  std::vector<uint16_t> tokens(400);
  for (size_t i = 0; i < tokens.size(); ++i)
    tokens[i] = static_cast<uint16_t>(i % 301); // max 300 -> vocab 301
  std::string bin = writeBin("big.bin", tokens, 20240520);
  expectUserError(kFake + " --data " + bin,
                  "needs a vocabulary of 301 tokens, but the model was "
                  "compiled for vocab 256");
}

TEST_F(DriverTest, BadTokenFile) {
  std::string bin = writeBin("bad.bin", std::vector<uint16_t>(100, 1), 42);
  expectUserError(kFake + " --data " + bin,
                  "error: cannot load data file '" + bin + "'");
}

TEST_F(DriverTest, TokenFileTrains) {
  std::string text = makeText(4000);
  std::vector<uint16_t> tokens(text.begin(), text.end());
  std::string bin = writeBin("ok.bin", tokens, 20240520);
  Proc r = launch(kFake + " --data " + bin +
                  " --steps 3 --val-every 3 --sample-tokens 5 --temperature 0");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("llm.c tokens"), std::string::npos) << r.out;
  // Token ids, not text: five numbers after the sample header.
  size_t s = r.out.find("sample (5 tokens, temperature 0");
  ASSERT_NE(s, std::string::npos) << r.out;
  std::istringstream ids(r.out.substr(r.out.find('\n', s) + 1));
  for (int i = 0; i < 5; ++i) {
    int id = -1;
    ASSERT_TRUE(ids >> id) << r.out;
    EXPECT_GE(id, 0);
    EXPECT_LT(id, 256);
  }
}

TEST_F(DriverTest, WrongWorldSizeWithoutMpirun) {
  expectUserError(kFakeNp2 + " --data " + text_,
                  "error: this program was compiled for world size 2 but "
                  "runs on 1 rank (mpirun -np 2)");
}

TEST_F(DriverTest, WrongWorldSizeMpirunNp1) {
  expectUserError(kMpi + " 1 " + kFakeNp2 + " --data " + text_,
                  "error: this program was compiled for world size 2 but "
                  "runs on 1 rank (mpirun -np 2)");
}

TEST_F(DriverTest, WrongWorldSizeMpirunNp2) {
  // Both ranks refuse; one message; no hang.
  expectUserError(kMpi + " 2 " + kFake + " --data " + text_,
                  "error: this program was compiled for world size 1 but "
                  "runs on 2 ranks (mpirun -np 1)");
}

TEST_F(DriverTest, MpirunUserErrorsExitOnEveryRank) {
  expectUserError(kMpi + " 2 " + kFakeNp2 + " --data " + path("nope.txt"),
                  "error: cannot open data file");
  expectUserError(kMpi + " 2 " + kFakeNp2 + " --data " + text_ + " --bogus",
                  "error: unknown flag --bogus");
  // Only rank 0 opens the metrics file: the other rank learns of the
  // failure through the agreement and exits too.
  expectUserError(kMpi + " 2 " + kFakeNp2 + " --data " + text_ + " --metrics " +
                      path("no/such/dir.jsonl"),
                  "error: cannot write --metrics file '" +
                      path("no/such/dir.jsonl") +
                      "': No such file or directory");
}

//===----------------------------------------------------------------------===//
// Internal errors: a model call failing mid-training exits with status 2 and
// does not leave the other ranks hanging.
//===----------------------------------------------------------------------===//

TEST_F(DriverTest, ModelFailureSingleRank) {
  Proc r = launch("env ZRT_FAKE_FAIL_STEP=3 " + kFake + " --data " + text_ +
                  " --steps 5");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("error: internal: optimizer_step (step 3)"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("step 3/5"), std::string::npos) << r.out;
}

TEST_F(DriverTest, ModelFailureMpirunAbortsAllRanks) {
  // Rank 1 fails while rank 0 waits in the all-gather: MPI_Abort.
  Proc r = launch("env ZRT_FAKE_FAIL_STEP=2 " + kMpi + " 2 " + kFakeNp2 +
                  " --data " + text_ + " --steps 5");
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_NE(r.status, -1) << "killed by the timeout? " << r.out;
  EXPECT_NE(r.out.find("error: internal: optimizer_step (step 2)"),
            std::string::npos)
      << r.out;
}

} // namespace
