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

#include "driver_test_util.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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
          "peak_bytes", "comm_bytes_micro_measured", "comm_bytes_step_measured",
          "comm_bytes_axis"})
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
        "--seed", "--val-every", "--val-batches", "--val-fraction", "--val-data",
        "--metrics",
        "--sample-tokens", "--temperature", "--threads", "--quiet", "--import",
        "--export", "--dump-batches", "--lr-schedule", "--warmup-type",
        "--warmup-min-lr", "--decay-steps", "--sample-out"})
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
      // Mesh 2 x 1: every byte is on the data axis.
      EXPECT_EQ(s["comm_bytes_axis"]["data"][k].num, s["comm_bytes"][k].num)
          << k;
      EXPECT_EQ(s["comm_bytes_axis"]["tensor"][k].kind, JValue::Num) << k;
      EXPECT_EQ(s["comm_bytes_axis"]["tensor"][k].num, 0) << k;
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
  expectUserError(kFake + " --data " + text_ + " --resume no-such-ckpt",
                  "error: --resume: no checkpoint in 'no-such-ckpt'");
  expectUserError(kFake + " --data " + text_ + " --checkpoint-every 5",
                  "error: --checkpoint-every needs --checkpoint-dir DIR");
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
    tokens[i] = static_cast<uint16_t>(i % 2 ? 300 : i % 256);
  std::string bin = writeBin("big.bin", tokens, 20240520);
  // Found in the first window drawn (the file is never read whole): every
  // window holds a 300, so no step runs.
  expectUserError(kFake + " --data " + bin,
                  "error: data file '" + bin + "': token id ");
  expectUserError(kFake + " --data " + bin,
                  "is outside the vocabulary of 256 (the model's); training "
                  "stopped");
}

TEST_F(DriverTest, BadTokenFile) {
  std::string bin = writeBin("bad.bin", std::vector<uint16_t>(100, 1), 42);
  expectUserError(kFake + " --data " + bin,
                  "error: data file '" + bin + "' has bad magic 42");
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

TEST_F(DriverTest, PlanLargerThanFreeMemoryIsRefusedBeforeInit) {
  // 1 PB of planned activations: refused with the numbers, nothing trained.
  Proc r = launch("env ZRT_FAKE_PLAN_BYTES=1000000000000000 " + kFake +
                  " --data " + text_ + " --steps 2");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("error: the compiled plan needs 1000000000.00 MB "
                       "(1000000000000000 bytes) per rank (activations "
                       "1000000000.00 MB) but only "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("are free"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("step 1/2"), std::string::npos) << r.out;
  // A plan that fits trains as usual.
  Proc ok = launch("env ZRT_FAKE_PLAN_BYTES=4096 " + kFake + " --data " +
                   text_ + " --steps 2");
  EXPECT_EQ(ok.status, 0) << ok.out;
}

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

//===----------------------------------------------------------------------===//
// --export / --import (safetensors) and --dump-batches
//===----------------------------------------------------------------------===//

struct StTensor {
  std::string dtype;
  std::vector<int64_t> shape;
  std::string data;
};

struct StFile {
  std::string error; // empty when the file is well formed
  std::string header;
  JValue meta;
  std::map<std::string, StTensor> tensors;
};

// Parses a safetensors file and checks the spec's invariants: header length,
// JSON, offsets that tile the data section without holes or overlap.
StFile parseSafetensors(const std::string &bytes) {
  StFile f;
  if (bytes.size() < 8)
    return f.error = "shorter than 8 bytes", f;
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i)
    n = (n << 8) | static_cast<unsigned char>(bytes[i]);
  if (n > bytes.size() - 8)
    return f.error = "header length beyond the file", f;
  f.header = bytes.substr(8, n);
  if (n % 8 != 0)
    return f.error = "header not padded to 8 bytes", f;
  JValue root;
  if (!JParser(f.header).parse(&root) || root.kind != JValue::Obj)
    return f.error = "header is not a JSON object: " + f.header, f;
  const std::string data = bytes.substr(8 + n);
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (const auto &[name, v] : root.obj) {
    if (name == "__metadata__") {
      f.meta = v;
      continue;
    }
    StTensor t;
    t.dtype = v["dtype"].str;
    int64_t numel = 1;
    for (const JValue &d : v["shape"].arr) {
      t.shape.push_back(static_cast<int64_t>(d.num));
      numel *= t.shape.back();
    }
    const JValue &off = v["data_offsets"];
    if (off.arr.size() != 2)
      return f.error = "bad data_offsets for " + name, f;
    const int64_t b = static_cast<int64_t>(off.arr[0].num),
                  e = static_cast<int64_t>(off.arr[1].num);
    const int64_t esize = t.dtype == "F32" ? 4 : t.dtype == "BF16" ? 2 : 0;
    if (esize == 0 || e - b != numel * esize || b < 0 ||
        e > static_cast<int64_t>(data.size()))
      return f.error = "bad dtype/shape/offsets for " + name, f;
    t.data = data.substr(b, e - b);
    ranges.push_back({b, e});
    f.tensors[name] = t;
  }
  std::sort(ranges.begin(), ranges.end());
  int64_t at = 0;
  for (const auto &[b, e] : ranges) {
    if (b != at)
      return f.error = "data section has a hole or overlap", f;
    at = e;
  }
  if (at != static_cast<int64_t>(data.size()))
    return f.error = "data section has trailing bytes", f;
  return f;
}

std::vector<float> floatsOf(const StTensor &t) {
  std::vector<float> v(t.data.size() / 4);
  std::memcpy(v.data(), t.data.data(), t.data.size());
  return v;
}

struct NewTensor {
  std::string name, dtype;
  std::vector<int64_t> shape;
  std::string data;
};

// A safetensors file with the given tensors (in order).
std::string safetensorsBytes(const std::vector<NewTensor> &tensors) {
  std::string header = "{\"__metadata__\":{\"format\":\"pt\"}";
  std::string data;
  for (const NewTensor &t : tensors) {
    header += ",\"" + t.name + "\":{\"dtype\":\"" + t.dtype + "\",\"shape\":[";
    for (size_t i = 0; i < t.shape.size(); ++i)
      header += (i ? "," : "") + std::to_string(t.shape[i]);
    header += "],\"data_offsets\":[" + std::to_string(data.size()) + "," +
              std::to_string(data.size() + t.data.size()) + "]}";
    data += t.data;
  }
  header += "}";
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i)
    out[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

std::string floatBytes(const std::vector<float> &v) {
  return std::string(reinterpret_cast<const char *>(v.data()), v.size() * 4);
}

// Largest |a - b| over two tensors of the same size.
double maxAbsDiff(const StTensor &a, const StTensor &b) {
  std::vector<float> x = floatsOf(a), y = floatsOf(b);
  EXPECT_EQ(x.size(), y.size());
  double d = 0;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i)
    d = std::max(d, std::fabs(static_cast<double>(x[i]) - y[i]));
  return d;
}


TEST_F(DriverTest, ExportWritesSafetensors) {
  const std::string out = path("w.safetensors");
  Proc r = launch(kFake + " --data " + text_ + " --steps 3 --lr 0.1" +
                  kQuietRun + " --export " + out);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(count(r.out, "exported 1 parameters (0.26 MB of f32) to " + out),
            1u)
      << r.out;
  const std::string bytes = readFile(out);
  StFile f = parseSafetensors(bytes);
  ASSERT_EQ(f.error, "");
  ASSERT_EQ(f.tensors.size(), 1u);
  const StTensor &t = f.tensors.at("table");
  EXPECT_EQ(t.dtype, "F32");
  EXPECT_EQ(t.shape, (std::vector<int64_t>{256, 256}));
  EXPECT_EQ(bytes.size(), 8 + f.header.size() + 256 * 256 * 4);
  EXPECT_EQ(f.meta["model"].str, "fake-bigram");
  EXPECT_EQ(f.meta["step"].str, "3");
  // No temporary file is left next to it.
  Proc ls = launch("ls -a " + dir_);
  EXPECT_EQ(ls.out.find(".tmp."), std::string::npos) << ls.out;
  // Trained: the values moved away from the N(0, 0.02) initialization.
  Proc r0 = launch(kFake + " --data " + text_ + " --steps 0" + kQuietRun +
                   " --export " + path("init.safetensors"));
  ASSERT_EQ(r0.status, 0) << r0.out;
  StFile f0 = parseSafetensors(readFile(path("init.safetensors")));
  ASSERT_EQ(f0.error, "");
  EXPECT_EQ(f0.meta["step"].str, "0");
  EXPECT_GT(maxAbsDiff(f0.tensors.at("table"), t), 0.05);
}

// export -> import -> export gives the same bytes, and an imported model
// trains from the imported weights (same losses as the original run).
TEST_F(DriverTest, ExportImportRoundTrip) {
  const std::string a = path("a.safetensors"), b = path("b.safetensors");
  const std::string m1 = path("m1.jsonl"), m2 = path("m2.jsonl");
  Proc r = launch(kFake + " --data " + text_ + " --steps 4 --lr 0.05" +
                  kQuietRun + " --export " + a);
  ASSERT_EQ(r.status, 0) << r.out;
  r = launch(kFake + " --data " + text_ + " --steps 0" + kQuietRun +
             " --import " + a + " --export " + b);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(count(r.out, "imported 1 parameters from " + a), 1u) << r.out;
  const std::string ba = readFile(a), bb = readFile(b);
  ASSERT_FALSE(ba.empty());
  // Same tensors, same bytes; the metadata differs only in the step.
  StFile fa = parseSafetensors(ba), fb = parseSafetensors(bb);
  ASSERT_EQ(fa.error, "");
  ASSERT_EQ(fb.error, "");
  EXPECT_EQ(fa.tensors.at("table").data, fb.tensors.at("table").data);
  // With the same step count the files are identical byte for byte.
  r = launch(kFake + " --data " + text_ + " --steps 0" + kQuietRun +
             " --import " + b + " --export " + path("c.safetensors"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(readFile(path("c.safetensors")) == bb);

  // Training from an import of the initial weights reproduces the run
  // that starts from the initialization (same seed: same batches).
  const std::string init = path("init.safetensors");
  r = launch(kFake + " --data " + text_ + " --steps 0 --seed 5" + kQuietRun +
             " --export " + init);
  ASSERT_EQ(r.status, 0) << r.out;
  r = launch(kFake + " --data " + text_ + " --steps 3 --seed 5" + kQuietRun +
             " --metrics " + m1);
  ASSERT_EQ(r.status, 0) << r.out;
  r = launch(kFake + " --data " + text_ + " --steps 3 --seed 5" + kQuietRun +
             " --import " + init + " --metrics " + m2);
  ASSERT_EQ(r.status, 0) << r.out;
  std::vector<JValue> s1 = ofType(readMetrics(m1), "step"),
                      s2 = ofType(readMetrics(m2), "step");
  ASSERT_EQ(s1.size(), 3u);
  ASSERT_EQ(s2.size(), 3u);
  for (size_t i = 0; i < 3; ++i)
    EXPECT_EQ(s1[i]["loss"].num, s2[i]["loss"].num) << "step " << i + 1;
}

// Stage-3 bf16-mixed fake: sharded parameters and master weights are
// gathered; the export holds the f32 master weights; an import sets the
// master to the file's values and the bf16 parameter to their rounding.
TEST_F(DriverTest, ExportImportShardedMasterTwoRanks) {
  const std::string a = path("a.safetensors"), b = path("b.safetensors");
  Proc r = launch(kMpi + " 2 " + kFakeS3Np2 + " --data " + text_ +
                  " --steps 5 --lr 0.05" + kQuietRun + " --export " + a);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(count(r.out, "exported 2 parameters"), 1u) << r.out;
  StFile fa = parseSafetensors(readFile(a));
  ASSERT_EQ(fa.error, "");
  ASSERT_EQ(fa.tensors.size(), 2u);
  EXPECT_EQ(fa.tensors.at("table").shape, (std::vector<int64_t>{256, 256}));
  EXPECT_EQ(fa.tensors.at("bias").shape, (std::vector<int64_t>{256}));
  // Master weights, not the bf16 working copy: most values have low bits.
  int notBf16 = 0;
  for (float x : floatsOf(fa.tensors.at("table"))) {
    uint32_t bits;
    std::memcpy(&bits, &x, 4);
    notBf16 += (bits & 0xffff) != 0;
  }
  EXPECT_GT(notBf16, 60000);
  // Members cut at their offsets: at initialization the bias (second
  // member, after the table) is 0.1 + N(0, 0.01), the table N(0, 0.02).
  r = launch(kMpi + " 2 " + kFakeS3Np2 + " --data " + text_ + " --steps 0" +
             kQuietRun + " --export " + path("init.safetensors"));
  ASSERT_EQ(r.status, 0) << r.out;
  StFile fi = parseSafetensors(readFile(path("init.safetensors")));
  ASSERT_EQ(fi.error, "");
  for (float x : floatsOf(fi.tensors.at("bias")))
    ASSERT_NEAR(x, 0.1, 0.06);
  for (float x : floatsOf(fi.tensors.at("table")))
    ASSERT_NEAR(x, 0.0, 0.12);
  // Import into the sharded program and export again: the same bytes.
  r = launch(kMpi + " 2 " + kFakeS3Np2 + " --data " + text_ + " --steps 0" +
             kQuietRun + " --import " + a + " --export " + b);
  ASSERT_EQ(r.status, 0) << r.out;
  StFile fb = parseSafetensors(readFile(b));
  ASSERT_EQ(fb.error, "");
  for (const char *n : {"table", "bias"})
    EXPECT_TRUE(fa.tensors.at(n).data == fb.tensors.at(n).data) << n;
  // ... and into the one-rank build of the same program.
  r = launch(kFakeS3 + " --data " + text_ + " --steps 0" + kQuietRun +
             " --import " + a + " --export " + path("c.safetensors"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(readFile(path("c.safetensors")) == readFile(b));
}

// A BF16 file is widened exactly; tensors may come in any order.
TEST_F(DriverTest, ImportBf16File) {
  std::vector<uint16_t> table(256 * 256), bias(256);
  for (size_t i = 0; i < table.size(); ++i)
    table[i] = static_cast<uint16_t>(0x3c00 + (i * 7919) % 1024); // ~0.01
  for (size_t i = 0; i < bias.size(); ++i)
    bias[i] = static_cast<uint16_t>(0xbd00 + i); // ~-0.03
  const std::string in = write(
      "in.safetensors",
      safetensorsBytes(
          {{"bias", "BF16", {256},
            std::string(reinterpret_cast<const char *>(bias.data()), 512)},
           {"table", "BF16", {256, 256},
            std::string(reinterpret_cast<const char *>(table.data()),
                        table.size() * 2)}}));
  Proc r = launch(kFakeS3 + " --data " + text_ + " --steps 0" + kQuietRun +
                  " --import " + in + " --export " + path("out.safetensors"));
  ASSERT_EQ(r.status, 0) << r.out;
  StFile f = parseSafetensors(readFile(path("out.safetensors")));
  ASSERT_EQ(f.error, "");
  std::vector<float> t = floatsOf(f.tensors.at("table")),
                     b = floatsOf(f.tensors.at("bias"));
  for (size_t i = 0; i < table.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &t[i], 4);
    ASSERT_EQ(bits, static_cast<uint32_t>(table[i]) << 16) << i;
  }
  for (size_t i = 0; i < bias.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &b[i], 4);
    ASSERT_EQ(bits, static_cast<uint32_t>(bias[i]) << 16) << i;
  }
}

// The consolidated file does not depend on the world size: byte-identical
// at initialization, equal up to f32 rounding after training.
TEST_F(DriverTest, ExportTwoRanksMatchesOneRank) {
  for (const auto &[one, two] :
       {std::pair<std::string, std::string>{kFake, kFakeNp2},
        std::pair<std::string, std::string>{kFakeS3, kFakeS3Np2}}) {
    SCOPED_TRACE(one);
    const std::string i1 = path("i1.st"), i2 = path("i2.st");
    const std::string t1 = path("t1.st"), t2 = path("t2.st");
    const std::string init = " --data " + text_ + " --steps 0" +
                             std::string(kQuietRun) + " --export ";
    Proc r = launch(one + init + i1);
    ASSERT_EQ(r.status, 0) << r.out;
    r = launch(kMpi + " 2 " + two + init + i2);
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_TRUE(readFile(i1) == readFile(i2));
    const std::string train = " --data " + text_ +
                              " --steps 6 --grad-accum 2 --lr 0.02 --warmup 2" +
                              std::string(kQuietRun) + " --export ";
    r = launch(one + train + t1);
    ASSERT_EQ(r.status, 0) << r.out;
    r = launch(kMpi + " 2 " + two + train + t2);
    ASSERT_EQ(r.status, 0) << r.out;
    StFile f1 = parseSafetensors(readFile(t1)),
           f2 = parseSafetensors(readFile(t2));
    ASSERT_EQ(f1.error, "");
    ASSERT_EQ(f2.error, "");
    EXPECT_EQ(f1.header, f2.header);
    ASSERT_EQ(f1.tensors.size(), f2.tensors.size());
    for (const auto &[name, t] : f1.tensors) {
      EXPECT_LT(maxAbsDiff(t, f2.tensors.at(name)), 1e-5) << name;
      EXPECT_GT(maxAbsDiff(t, parseSafetensors(readFile(i1)).tensors.at(name)),
                1e-3)
          << name << " did not train";
    }
  }
}

TEST_F(DriverTest, ImportErrors) {
  const std::vector<float> table(256 * 256, 0.01f);
  const std::string base = kFake + " --data " + text_ + " --steps 2 --import ";
  std::string f = write("missing.st", safetensorsBytes({}));
  expectUserError(base + f, "error: parameter 'table' is missing from "
                            "--import file '" +
                                f + "'");
  f = write("shape.st", safetensorsBytes({{"table", "F32", {65536},
                                           floatBytes(table)}}));
  expectUserError(base + f, "error: parameter 'table' has shape [65536] in "
                            "--import file '" +
                                f + "', but the model's is [256, 256]");
  f = write("extra.st",
            safetensorsBytes({{"table", "F32", {256, 256}, floatBytes(table)},
                              {"lm_head.weight", "F32", {2}, floatBytes({1, 2})}}));
  expectUserError(base + f, "error: tensor 'lm_head.weight' in --import file '" +
                                f + "' is not a parameter of the model");
  f = write("f64.st", safetensorsBytes({{"table", "F64", {256, 256},
                                         std::string(65536 * 8, '\0')}}));
  expectUserError(base + f,
                  "has dtype F64 (only F32, BF16 and F16 are supported)");
  f = write("short.st",
            safetensorsBytes({{"table", "F32", {256, 256}, floatBytes(table)}})
                .substr(0, 1000));
  expectUserError(base + f, "has data_offsets that do not match");
  f = write("text.st", "definitely not a safetensors file");
  expectUserError(base + f, "is not a safetensors file");
  // Headers written by hand: malformed JSON, not an object, a name twice,
  // a non-integer dimension.
  auto raw = [](const std::string &h) {
    std::string s(8, '\0');
    for (int i = 0; i < 8; ++i)
      s[i] = static_cast<char>((uint64_t(h.size()) >> (8 * i)) & 0xff);
    return s + h;
  };
  f = write("badjson.st", raw("{\"table\": {"));
  expectUserError(base + f,
                  "is not a safetensors file (header: invalid JSON at byte");
  f = write("array.st", raw("[1, 2]"));
  expectUserError(base + f,
                  "is not a safetensors file (header: not a JSON object)");
  const std::string empty =
      "{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]}";
  f = write("dup.st", raw("{\"table\":" + empty + ",\"table\":" + empty + "}"));
  expectUserError(base + f, "error: tensor 'table' in --import file '" + f +
                                "' appears twice");
  f = write("float.st", raw("{\"table\":{\"dtype\":\"F32\",\"shape\":[256.0,"
                            "256],\"data_offsets\":[0,0]}}"));
  expectUserError(base + f, "has a malformed shape");
  expectUserError(base + path("nope.st"), "error: cannot open --import file '" +
                                              path("nope.st") +
                                              "': No such file or directory");
  // Several problems: the first is named, the rest counted.
  f = write("two.st", safetensorsBytes({{"table", "F32", {2}, floatBytes({1, 2})},
                                        {"x", "F32", {1}, floatBytes({1})}}));
  expectUserError(base + f, "but the model's is [256, 256] (and 1 more "
                            "problem)");
}

TEST_F(DriverTest, ImportErrorTwoRanks) {
  // Every rank reads the file; both fail; one message, exit 1.
  std::string f = write("s3.st", safetensorsBytes({{"table", "F32", {256, 256},
                                                    std::string(262144, '\0')}}));
  expectUserError(kMpi + " 2 " + kFakeS3Np2 + " --data " + text_ +
                      " --import " + f,
                  "error: parameter 'bias' is missing from --import file '" +
                      f + "'");
}

TEST_F(DriverTest, OutputFileErrors) {
  const std::string base = kFake + " --data " + text_ + " --steps 2";
  // Checked before training starts, not after it.
  expectUserError(base + " --export " + path("no/dir/w.st"),
                  "error: cannot write --export file '" + path("no/dir/w.st") +
                      "'");
  expectUserError(base + " --dump-batches " + path("no/dir/b.bin"),
                  "error: cannot write --dump-batches file '" +
                      path("no/dir/b.bin") + "'");
  expectUserError(base + " --export=", "error: --export: the path is empty");
}

// --dump-batches writes the global batch of every micro-step; it does not
// depend on the world size.
TEST_F(DriverTest, DumpBatchesTwoRanksMatchOneRank) {
  const std::string d1 = path("b1.bin"), d2 = path("b2.bin");
  const std::string flags = " --data " + text_ +
                            " --steps 3 --grad-accum 2" + kQuietRun +
                            " --dump-batches ";
  Proc r = launch(kFake + flags + d1);
  ASSERT_EQ(r.status, 0) << r.out;
  r = launch(kMpi + " 2 " + kFakeNp2 + flags + d2);
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string b1 = readFile(d1), b2 = readFile(d2);
  const int64_t B = 4, T = 16, rec = 4 + 2 * B * T;
  ASSERT_EQ(b1.size(), static_cast<size_t>(6 * rec * 4));
  EXPECT_TRUE(b1 == b2);
  std::vector<int32_t> v(b1.size() / 4);
  std::memcpy(v.data(), b1.data(), b1.size());
  const std::string text = readFile(text_);
  for (int i = 0; i < 6; ++i) {
    const int32_t *p = v.data() + i * rec;
    EXPECT_EQ(p[0], i / 2 + 1); // step
    EXPECT_EQ(p[1], i % 2);     // micro-batch
    EXPECT_EQ(p[2], B);
    EXPECT_EQ(p[3], T);
    const int32_t *ids = p + 4, *targets = p + 4 + B * T;
    for (int64_t b = 0; b < B; ++b) {
      std::string row;
      for (int64_t t = 0; t < T; ++t) {
        row += static_cast<char>(ids[b * T + t]);
        if (t + 1 < T)
          EXPECT_EQ(targets[b * T + t], ids[b * T + t + 1]);
      }
      row += static_cast<char>(targets[b * T + T - 1]);
      EXPECT_NE(text.find(row), std::string::npos) << "a window of the data";
    }
  }
  // Different micro-batches hold different windows.
  EXPECT_NE(b1.substr(16, B * T * 4), b1.substr(rec * 4 + 16, B * T * 4));
}

// --import of a Hugging Face sharded checkpoint (model.safetensors.index.json
// and its shards) or model directory: the same weights as one file, on two
// ranks at stage 3; a broken index is one user error.
TEST_F(DriverTest, ImportShardedCheckpoint) {
  const std::string one = path("one.safetensors");
  Proc r = launch(kMpi + " 2 " + kFakeS3Np2 + " --data " + text_ + " --steps 0" +
                  kQuietRun + " --export " + one);
  ASSERT_EQ(r.status, 0) << r.out;
  StFile f = parseSafetensors(readFile(one));
  ASSERT_EQ(f.error, "");
  const StTensor &table = f.tensors.at("table"), &bias = f.tensors.at("bias");
  ASSERT_EQ(::mkdir(path("hf").c_str(), 0755), 0);
  write("hf/model-00001-of-00002.safetensors",
        safetensorsBytes({{"table", "F32", {256, 256}, table.data}}));
  write("hf/model-00002-of-00002.safetensors",
        safetensorsBytes({{"bias", "F32", {256}, bias.data}}));
  const std::string index = write(
      "hf/model.safetensors.index.json",
      "{\"metadata\": {\"total_size\": 263168}, \"weight_map\": {"
      "\"bias\": \"model-00002-of-00002.safetensors\", "
      "\"table\": \"model-00001-of-00002.safetensors\"}}");
  const std::string base = kMpi + " 2 " + kFakeS3Np2 + " --data " + text_ +
                           " --steps 0" + kQuietRun + " --import ";
  for (const std::string &in : {index, path("hf")}) {
    r = launch(base + in + " --export " + path("back.safetensors"));
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_TRUE(readFile(path("back.safetensors")) == readFile(one)) << in;
  }
  // A model directory without an index: its model.safetensors.
  ASSERT_EQ(::mkdir(path("single").c_str(), 0755), 0);
  write("single/model.safetensors", readFile(one));
  r = launch(base + path("single") + " --export " + path("back2.safetensors"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(readFile(path("back2.safetensors")) == readFile(one));

  const std::string run1 = kFakeS3 + " --data " + text_ + " --steps 0" +
                           kQuietRun + " --import ";
  ASSERT_EQ(::mkdir(path("empty").c_str(), 0755), 0);
  expectUserError(run1 + path("empty"),
                  "error: --import directory '" + path("empty") +
                      "' has neither model.safetensors nor "
                      "model.safetensors.index.json");
  auto badIndex = [&](const std::string &name, const std::string &json,
                      const std::string &message) {
    expectUserError(run1 + write("hf/" + name, json), message);
  };
  badIndex("a.index.json", "{\"weight_map\": ", "is not JSON (at byte");
  badIndex("b.index.json", "{\"metadata\": {}}",
           "has no \"weight_map\" object of tensor names to shard files");
  badIndex("c.index.json", "{\"weight_map\": {\"table\": \"../x.safetensors\"}}",
           "shard '../x.safetensors' of tensor 'table' is not a file next to "
           "the index");
  badIndex("d.index.json",
           "{\"weight_map\": {\"bias\": \"model-00001-of-00002.safetensors\", "
           "\"table\": \"model-00002-of-00002.safetensors\"}}",
           "error: tensor 'bias' of --import index '" + path("hf/d.index.json") +
               "' is not in its shard '" + path("hf") +
               "/model-00001-of-00002.safetensors'");
  badIndex("e.index.json",
           "{\"weight_map\": {\"table\": \"model-00001-of-00002.safetensors\"}}",
           "error: parameter 'bias' is missing from --import checkpoint '" +
               path("hf/e.index.json") + "'");
  write("hf/dup.safetensors",
        safetensorsBytes({{"table", "F32", {256, 256}, table.data}}));
  badIndex("f.index.json",
           "{\"weight_map\": {\"table\": \"model-00001-of-00002.safetensors\", "
           "\"bias\": \"dup.safetensors\"}}",
           "error: tensor 'table' is in two --import shards");
}

} // namespace
