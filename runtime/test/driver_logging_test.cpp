//===- driver_logging_test.cpp - What a run logs and keeps ----------------===//
//
// The training driver (fake bigram programs, see driver_test_util.h): the
// step line's tokens seen, the metrics' tokens_seen, --tensorboard's event
// file, checkpoint retention (--keep-checkpoints), the sample's token ids
// (--sample-out) and the errors of those flags. test/e2e/tensorboard.test and test/e2e/mfu.test cover the same on
// compiled programs (the event file read by the tensorboard package; model
// FLOPs and MFU, which the fake programs do not declare).
//
//===----------------------------------------------------------------------===//

#include "driver_test_util.h"

#include <dirent.h>
#include <sys/stat.h>

#include <set>

namespace {

class DriverLoggingTest : public DriverTest {};

/// The names in `dir` (without "." and "..").
std::set<std::string> listDir(const std::string &dir) {
  std::set<std::string> names;
  if (DIR *d = ::opendir(dir.c_str())) {
    while (struct dirent *e = ::readdir(d))
      if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, ".."))
        names.insert(e->d_name);
    ::closedir(d);
  }
  return names;
}

TEST_F(DriverLoggingTest, KeepCheckpointsKeepsTheNewest) {
  const std::string ck = path("ck");
  const std::string base = kFake + " --data " + text_ +
                           " --sample-tokens 0 --val-every 0 --checkpoint-dir " +
                           ck + " --checkpoint-every 1 --keep-checkpoints 2";
  Proc r = launch(base + " --steps 5");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(listDir(ck),
            (std::set<std::string>{"latest", "step_4", "step_5"}));
  EXPECT_EQ(readFile(ck + "/latest"), "step_5\n");
  EXPECT_EQ(count(r.out, "checkpoint: removed " + ck + "/step_"), 3u) << r.out;
  EXPECT_EQ(count(r.out, "checkpoint: removed " + ck +
                             "/step_1 (--keep-checkpoints 2)"),
            1u)
      << r.out;

  // A resumed run goes on pruning; what is not a step directory stays.
  write("ck/notes.txt", "mine");
  ASSERT_EQ(::mkdir(path("ck/step_x").c_str(), 0755), 0);
  r = launch(base + " --steps 7 --resume " + ck);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(listDir(ck), (std::set<std::string>{"latest", "notes.txt",
                                                "step_6", "step_7", "step_x"}));

  // Resumed from an older step, the run's own saves are newest by number
  // only once they pass the others: `latest` is always kept.
  r = launch(base + " --steps 7 --resume " + ck + "/step_6 --keep-checkpoints 1");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(listDir(ck), (std::set<std::string>{"latest", "notes.txt",
                                                "step_7", "step_x"}));
  EXPECT_EQ(readFile(ck + "/latest"), "step_7\n");
}

TEST_F(DriverLoggingTest, TokensSeenAreCounted) {
  const std::string m = path("m.jsonl");
  Proc r = launch(kFake + " --data " + text_ +
                  " --sample-tokens 0 --val-every 0 --steps 3 --grad-accum 2 "
                  "--metrics " + m);
  ASSERT_EQ(r.status, 0) << r.out;
  std::vector<JValue> steps = ofType(readMetrics(m), "step");
  ASSERT_EQ(steps.size(), 3u);
  // Per step: grad-accum 2 x the global batch 4 x T of the fake program.
  const double perStep = steps[0]["tokens_seen"].num;
  ASSERT_GT(perStep, 0);
  EXPECT_EQ(steps[1]["tokens_seen"].num, 2 * perStep);
  EXPECT_EQ(steps[2]["tokens_seen"].num, 3 * perStep);
  EXPECT_FALSE(steps[0].has("mfu")); // the fake program declares no FLOPs
  EXPECT_EQ(count(r.out, " | seen "), 3u) << r.out;
}

TEST_F(DriverLoggingTest, TensorBoardWritesOneNewFilePerRun) {
  const std::string tb = path("tb/run1");
  const std::string cmd = kFake + " --data " + text_ + kQuietRun +
                          " --steps 2 --tensorboard " + tb;
  Proc r = launch(cmd);
  ASSERT_EQ(r.status, 0) << r.out;
  std::set<std::string> files = listDir(tb);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files.begin()->rfind("events.out.tfevents.", 0), 0u);
  const std::string first = readFile(tb + "/" + *files.begin());
  EXPECT_NE(first.find("train/loss"), std::string::npos);
  EXPECT_NE(first.find("brain.Event:2"), std::string::npos);
  r = launch(cmd);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(listDir(tb).size(), 2u);
  EXPECT_EQ(readFile(tb + "/" + *files.begin()), first); // untouched
}

TEST_F(DriverLoggingTest, FlagErrors) {
  const std::string base = kFake + " --data " + text_;
  expectUserError(base + " --keep-checkpoints 2",
                  "error: --keep-checkpoints needs --checkpoint-dir DIR");
  expectUserError(base + " --checkpoint-dir " + path("c") +
                      " --keep-checkpoints=-1",
                  "error: --keep-checkpoints: -1 is out of range");
  expectUserError(base + " --peak-tflops 0",
                  "error: --peak-tflops: 0 must be > 0");
  expectUserError(base + " --peak-tflops fast",
                  "error: --peak-tflops: 'fast' is not a finite number");
  expectUserError(base + " --tensorboard=", "error: --tensorboard: the directory is empty");
  expectUserError(base + " --tensorboard " + text_ + "/sub",
                  "error: --tensorboard: cannot create the directory '" +
                      text_ + "/sub'");
}

//===----------------------------------------------------------------------===//
// --sample-out: the sampled token ids as JSON lines
//===----------------------------------------------------------------------===//

TEST_F(DriverLoggingTest, SampleOutHoldsTheSampledIds) {
  const std::string out = path("s.jsonl"), ck = path("ck");
  const std::string base = kFake + " --data " + text_ +
                           " --val-every 0 --sample-tokens 24 --temperature 0"
                           " --lr 0.3 --checkpoint-dir " + ck +
                           " --sample-out " + out;
  // Trained, the greedy bigram emits the data's (printable) letters.
  Proc r = launch(base + " --steps 40");
  ASSERT_EQ(r.status, 0) << r.out;
  std::vector<JValue> lines = readMetrics(out);
  ASSERT_EQ(lines.size(), 1u);
  const JValue &s = lines[0];
  EXPECT_EQ(s["type"].str, "sample");
  EXPECT_EQ(s["step"].num, 40);
  EXPECT_EQ(s["tokens"].num, 24);
  EXPECT_EQ(s["temperature"].num, 0);
  EXPECT_EQ(s["data"].str, "bytes"); // a text file: byte tokens
  ASSERT_EQ(s["ids"].arr.size(), 24u);
  ASSERT_FALSE(s["prompt"].arr.empty());
  // The ids are the printed sample (byte tokens of the data's alphabet),
  // and the prompt is a piece of the data.
  std::string ids, prompt;
  for (const JValue &v : s["ids"].arr) {
    ASSERT_TRUE(v.num >= 0 && v.num < 256) << v.num;
    ids += static_cast<char>(v.num);
  }
  for (const JValue &v : s["prompt"].arr)
    prompt += static_cast<char>(v.num);
  const size_t at = r.out.find("sample (24 tokens");
  ASSERT_NE(at, std::string::npos) << r.out;
  EXPECT_EQ(r.out.substr(r.out.find('\n', at) + 1, ids.size()), ids) << r.out;
  EXPECT_NE(readFile(text_).find(prompt), std::string::npos) << prompt;

  // A resumed run appends its own sample.
  r = launch(base + " --steps 42 --resume " + ck);
  ASSERT_EQ(r.status, 0) << r.out;
  lines = readMetrics(out);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["step"].num, 40);
  EXPECT_EQ(lines[1]["step"].num, 42);
}

TEST_F(DriverLoggingTest, SampleOutErrors) {
  const std::string base = kFake + " --data " + text_ + " --steps 2 --val-every 0";
  expectUserError(base + " --sample-tokens 0 --sample-out " + path("s"),
                  "error: --sample-out needs --sample-tokens N > 0 (with 0 "
                  "nothing is sampled)");
  expectUserError(base + " --sample-out=", "error: --sample-out: the path is empty");
  const std::string before = readFile(text_);
  expectUserError(base + " --sample-out " + text_,
                  "error: --sample-out '" + text_ + "' is the --data file");
  EXPECT_EQ(readFile(text_), before);
  expectUserError(base + " --metrics " + path("m") + " --sample-out " + path("m"),
                  "error: --sample-out and --metrics name the same file '" +
                      path("m") + "'");
  expectUserError(base + " --sample-out " + path("no/such/dir/s.jsonl"),
                  "error: cannot write --sample-out file '" +
                      path("no/such/dir/s.jsonl") + "': No such file or directory");
  // A failed write (a full disk): reported, exit 1, after the training.
  Proc r = launch(base + " --sample-tokens 8 --sample-out /dev/full");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_EQ(count(r.out, "error: cannot write --sample-out file '/dev/full': "
                         "No space left on device"),
            1u)
      << r.out;
  EXPECT_NE(r.out.find("done: 2 steps"), std::string::npos) << r.out;
}

} // namespace
