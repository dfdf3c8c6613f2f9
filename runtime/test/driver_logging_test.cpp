//===- driver_logging_test.cpp - What a run logs and keeps ----------------===//
//
// The training driver (fake bigram programs, see driver_test_util.h): the
// step line's tokens seen, the metrics' tokens_seen, --tensorboard's event
// file, checkpoint retention (--keep-checkpoints) and the errors of those
// flags. test/e2e/tensorboard.test and test/e2e/mfu.test cover the same on
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

} // namespace
