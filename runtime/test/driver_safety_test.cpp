//===- driver_safety_test.cpp - Nothing lost, nothing silent --------------===//
//
// The training driver (fake bigram programs, see driver_test_util.h) against
// a user's mistakes: outputs that would destroy an input or another output,
// a fresh run into another run's checkpoint directory, a resumed run's
// metrics log, resuming under another batch or accumulation, non-finite
// training and damaged checkpoint manifests. Each bad input gets one
// message, a non-zero exit and leaves every file as it was.
//
//===----------------------------------------------------------------------===//

#include "driver_test_util.h"

#include <sys/stat.h>

#include <iterator>

namespace {

/// The DriverTest fixture under its own suite name (the fixture class lives
/// in an anonymous namespace of each test file).
class DriverSafetyTest : public DriverTest {};

bool exists(const std::string &p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

//===----------------------------------------------------------------------===//
// Outputs never clobber inputs or each other
//===----------------------------------------------------------------------===//

TEST_F(DriverSafetyTest, OutputEqualToDataIsRefused) {
  const std::string base = kFake + " --data " + text_ + " --steps 2";
  const std::string before = readFile(text_);
  for (const char *flag : {"--metrics", "--export", "--dump-batches"}) {
    expectUserError(base + " " + flag + " " + text_,
                    std::string("error: ") + flag + " '" + text_ +
                        "' is the --data file");
    // Another spelling of the same path.
    expectUserError(base + " " + flag + " " + dir_ + "/./data.txt",
                    "is the --data file: writing it would destroy the input");
  }
  EXPECT_EQ(readFile(text_), before);
}

TEST_F(DriverSafetyTest, OutputEqualToImportOrAnotherOutputIsRefused) {
  const std::string st = path("w.st");
  Proc r = launch(kFake + " --data " + text_ + " --steps 0" + kQuietRun +
                  " --export " + st);
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string before = readFile(st);
  const std::string base = kFake + " --data " + text_ + " --steps 2";
  expectUserError(base + " --import " + st + " --metrics " + st,
                  "error: --metrics '" + st + "' is the --import file");
  expectUserError(base + " --import " + st + " --dump-batches " + st,
                  "error: --dump-batches '" + st + "' is the --import file");
  EXPECT_EQ(readFile(st), before);
  expectUserError(base + " --metrics " + path("o") + " --export " + path("o"),
                  "error: --export and --metrics name the same file '" +
                      path("o") + "'");
  EXPECT_FALSE(exists(path("o")));
}

TEST_F(DriverSafetyTest, ExportIntoDirectoryFailsAtStartUp) {
  ASSERT_EQ(::mkdir(path("out").c_str(), 0755), 0);
  expectUserError(kFake + " --data " + text_ + " --steps 2 --export " +
                      path("out"),
                  "error: --export '" + path("out") + "' is a directory");
  // Nothing left behind (no temporary file next to it).
  Proc ls = launch("ls -a " + dir_);
  EXPECT_EQ(ls.out.find(".tmp."), std::string::npos) << ls.out;
}

TEST_F(DriverSafetyTest, ResumedRunAppendsToMetrics) {
  const std::string m = path("m.jsonl"), ck = path("ck");
  const std::string base = kFake + " --data " + text_ + kQuietRun +
                           " --steps 4 --metrics " + m +
                           " --checkpoint-dir " + ck;
  Proc r = launch(base + " --checkpoint-every 2");
  ASSERT_EQ(r.status, 0) << r.out;
  r = launch(base + " --steps 6 --resume " + ck);
  ASSERT_EQ(r.status, 0) << r.out;
  std::vector<JValue> lines = readMetrics(m);
  std::vector<JValue> configs = ofType(lines, "config"),
                      steps = ofType(lines, "step");
  ASSERT_EQ(configs.size(), 2u);
  EXPECT_FALSE(configs[0].has("resumed_from_step"));
  EXPECT_EQ(configs[1]["resumed_from_step"].num, 4);
  ASSERT_EQ(steps.size(), 6u); // 1..4, then 5..6: the first run's kept
  for (size_t i = 0; i < steps.size(); ++i)
    EXPECT_EQ(steps[i]["step"].num, static_cast<double>(i + 1));
}

TEST_F(DriverSafetyTest, MetricsWriteFailureIsNeverSilent) {
  // A full disk (/dev/full): a warning at once, training goes on, exit 1.
  Proc r = launch(kFake + " --data " + text_ + " --steps 3" + kQuietRun +
                  " --metrics /dev/full --checkpoint-dir " + path("ck"));
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_EQ(count(r.out, "warning: cannot write --metrics file '/dev/full': "
                         "No space left on device (the log is incomplete); "
                         "training continues"),
            1u)
      << r.out;
  EXPECT_EQ(count(r.out, "error: cannot write --metrics file '/dev/full'"), 1u)
      << r.out;
  EXPECT_EQ(readFile(path("ck") + "/latest"), "step_3\n"); // work kept
  // The same for --dump-batches: reported, exit 1.
  expectUserError(kFake + " --data " + text_ + " --steps 2" + kQuietRun +
                      " --dump-batches /dev/full",
                  "error: cannot write --dump-batches file '/dev/full': No "
                  "space left on device");
}

/// `cmd` with files limited to `kb` KiB (RLIMIT_FSIZE, SIGXFSZ ignored):
/// a larger write fails with EFBIG, as on a full disk. (PMIx's shared-memory
/// data store would hit the limit in MPI_Init: its hash store instead.)
std::string withFileLimit(int kb, const std::string &cmd) {
  return "bash -c 'trap \"\" XFSZ; ulimit -f " + std::to_string(kb) +
         "; PMIX_MCA_gds=hash " + cmd + "'";
}

TEST_F(DriverSafetyTest, FullDiskDuringCheckpointKeepsThePrevious) {
  const std::string ck = path("ck");
  const std::string base = kFake + " --data " + text_ + kQuietRun;
  Proc r = launch(base + " --steps 2 --checkpoint-dir " + ck);
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string shard = readFile(ck + "/step_2/rank_00000.bin");
  // The 786 KB shard file of step 4 does not fit 100 KiB.
  r = launch(withFileLimit(100, base + " --steps 4 --resume " + ck +
                                    " --checkpoint-dir " + ck));
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_EQ(count(r.out, "error: cannot write checkpoint file '" + ck +
                             "/.step_4.tmp/rank_00000.bin': File too large"),
            1u)
      << r.out;
  EXPECT_EQ(readFile(ck + "/latest"), "step_2\n");
  EXPECT_EQ(readFile(ck + "/step_2/rank_00000.bin"), shard);
  Proc ls = launch("ls -a " + ck);
  EXPECT_EQ(ls.out.find("step_4"), std::string::npos) << ls.out; // no .tmp
  // The same on the export: the earlier file stays as it was.
  const std::string st = path("w.st");
  r = launch(base + " --steps 1 --export " + st);
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string before = readFile(st);
  r = launch(withFileLimit(100, base + " --steps 1 --seed 3 --export " + st));
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_EQ(count(r.out, "error: cannot write --export file '" + st + "'"), 1u)
      << r.out;
  EXPECT_EQ(readFile(st), before);
  ls = launch("ls -a " + dir_);
  EXPECT_EQ(ls.out.find(".tmp."), std::string::npos) << ls.out;
}

TEST_F(DriverSafetyTest, ResumeOfAFileNamesTheCause) {
  expectUserError(kFake + " --data " + text_ + " --resume " + text_,
                  "error: --resume: no checkpoint in '" + text_ +
                      "' (it is a file; --resume takes a step directory or a "
                      "checkpoint directory)");
  expectUserError(kFake + " --data " + text_ + " --resume " + path("nope"),
                  "error: --resume: no checkpoint in '" + path("nope") +
                      "' (No such file or directory)");
}

//===----------------------------------------------------------------------===//
// A fresh run does not write into another run's checkpoints
//===----------------------------------------------------------------------===//

TEST_F(DriverSafetyTest, FreshRunIntoUsedCheckpointDirIsRefused) {
  const std::string ck = path("ck");
  const std::string base =
      kFake + " --data " + text_ + kQuietRun + " --checkpoint-dir " + ck;
  Proc r = launch(base + " --steps 4 --checkpoint-every 2");
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string latest = readFile(ck + "/latest"),
                    shard = readFile(ck + "/step_4/rank_00000.bin");
  expectUserError(base + " --steps 4 --seed 5",
                  "error: --checkpoint-dir '" + ck +
                      "' already holds checkpoints (step_4, step_2 and a "
                      "'latest' pointer) of another run; continue that run "
                      "with --resume " +
                      ck + ", or pass --overwrite");
  // Resuming from a checkpoint of another directory is a fresh run here.
  r = launch(kFake + " --data " + text_ + kQuietRun + " --steps 4" +
             " --checkpoint-dir " + path("other"));
  ASSERT_EQ(r.status, 0) << r.out;
  expectUserError(base + " --steps 6 --resume " + path("other"),
                  "already holds checkpoints");
  EXPECT_EQ(readFile(ck + "/latest"), latest);
  EXPECT_EQ(readFile(ck + "/step_4/rank_00000.bin"), shard);
  // Continuing in place (the directory or one of its steps) is allowed, and
  // --overwrite lets a fresh run replace them.
  r = launch(base + " --steps 6 --resume " + ck + "/step_2");
  EXPECT_EQ(r.status, 0) << r.out;
  r = launch(base + " --steps 4 --seed 5 --overwrite");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(readFile(ck + "/step_4/rank_00000.bin"), shard);
  expectUserError(kFake + " --data " + text_ + " --overwrite",
                  "error: --overwrite needs --checkpoint-dir DIR");
  expectUserError(base.substr(0, base.rfind(ck)) + text_,
                  "error: --checkpoint-dir '" + text_ +
                      "' exists and is not a directory");
}

//===----------------------------------------------------------------------===//
// Resume continues the sample stream
//===----------------------------------------------------------------------===//

/// The token rows (inputs then targets) of every --dump-batches record, in
/// order, without the step/micro/B/T header: the samples the run consumed.
std::vector<std::string> dumpedRows(const std::string &bytes, int64_t B,
                                    int64_t T) {
  std::vector<std::string> rows;
  const size_t rec = static_cast<size_t>(4 + 2 * B * T) * 4;
  for (size_t at = 0; at + rec <= bytes.size(); at += rec)
    for (int64_t b = 0; b < B; ++b)
      rows.push_back(bytes.substr(at + 16 + b * T * 4, T * 4) +
                     bytes.substr(at + 16 + (B + b) * T * 4, T * 4));
  return rows;
}

TEST_F(DriverSafetyTest, ResumeContinuesTheSampleStreamAlsoTwoRanks) {
  const int64_t T = 16;
  const std::string ck = path("ck"), full = path("full.bin");
  const std::string base = " --data " + text_ + kQuietRun;
  // Uninterrupted: 6 steps of 2 micro-batches of 4 (48 samples), saved at 2.
  Proc r = launch(kFake + base + " --steps 6 --grad-accum 2 --checkpoint-dir " +
                  ck + " --checkpoint-every 2 --dump-batches " + full);
  ASSERT_EQ(r.status, 0) << r.out;
  const std::vector<std::string> all = dumpedRows(readFile(full), 4, T);
  ASSERT_EQ(all.size(), 48u);
  // Resumed at step 2 (sample 16) under another accumulation, world size
  // or global batch: the same samples 16.., never the first 16 again.
  struct Case {
    std::string cmd;
    int64_t B;
    const char *note;
  } cases[] = {
      {kFake + " --grad-accum 1 --steps 6", 4, "4 x 2 micro-batches when saved, 4 x 1 now"},
      {kFake + " --grad-accum 3 --steps 4", 4, "4 x 3 now"},
      {kMpi + " 2 " + kFakeNp2 + " --grad-accum 1 --steps 5", 4, "4 x 1 now"},
      {kFakeB8 + " --grad-accum 1 --steps 5", 8, "8 x 1 now"},
  };
  for (const Case &c : cases) {
    const std::string dump = path("resumed.bin");
    r = launch(c.cmd + base + " --resume " + ck + "/step_2 --dump-batches " +
               dump);
    ASSERT_EQ(r.status, 0) << c.cmd << "\n" << r.out;
    EXPECT_NE(r.out.find(c.note), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("the data continues at sample 16 of the saved run's "
                         "sample stream"),
              std::string::npos)
        << r.out;
    const std::vector<std::string> got = dumpedRows(readFile(dump), c.B, T);
    ASSERT_FALSE(got.empty()) << c.cmd;
    ASSERT_LE(16 + got.size(), all.size()) << c.cmd;
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_EQ(got[i], all[16 + i]) << c.cmd << ": sample " << 16 + i;
  }
  // The manifest records the position (48 after 6 steps of 8 samples).
  const std::string manifest = readFile(ck + "/step_6/manifest.json");
  EXPECT_NE(manifest.find("\"next_sample_index\": 48"), std::string::npos)
      << manifest;
  EXPECT_NE(manifest.find("\"sample_stream_batch\": 4"), std::string::npos)
      << manifest;
}

TEST_F(DriverSafetyTest, ResumeAtOrPastStepsHasNothingToDo) {
  const std::string ck = path("ck"), m = path("m.jsonl");
  const std::string base = kFake + " --data " + text_ + kQuietRun;
  Proc r = launch(base + " --steps 3 --checkpoint-dir " + ck);
  ASSERT_EQ(r.status, 0) << r.out;
  r = launch(base + " --steps 3 --resume " + ck + " --metrics " + m +
             " --export " + path("w.st"));
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("nothing to do: the checkpoint " + ck +
                       "/step_3 is already at --steps 3 (pass --steps > 3 to "
                       "train further)"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("nan"), std::string::npos) << r.out;
  EXPECT_TRUE(exists(path("w.st"))); // the checkpoint's weights exported
  expectUserError(base + " --steps 2 --resume " + ck,
                  "error: --resume: the checkpoint is at step 3, past --steps "
                  "2");
}

//===----------------------------------------------------------------------===//
// Non-finite training stops with one message; `latest` stays finite
//===----------------------------------------------------------------------===//

TEST_F(DriverSafetyTest, NonFiniteLossStopsTraining) {
  const std::string ck = path("ck"), m = path("m.jsonl");
  // The 5th micro-batch (step 3 at --grad-accum 2) has a NaN loss.
  Proc r = launch("env ZRT_FAKE_NAN_LOSS_CALL=5 " + kFake + " --data " +
                  text_ + " --steps 6 --grad-accum 2 --val-every 0 "
                  "--sample-tokens 0 --checkpoint-dir " +
                  ck + " --checkpoint-every 2 --metrics " + m + " --export " +
                  path("w.st"));
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_EQ(count(r.out, "error: step 3: the loss is nan; training stopped"),
            1u)
      << r.out;
  EXPECT_NE(r.out.find("the last checkpoint, " + ck +
                       "/step_2, stays 'latest'; --export was not written"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("step 4/6"), std::string::npos) << r.out;
  EXPECT_EQ(readFile(ck + "/latest"), "step_2\n");
  EXPECT_FALSE(exists(ck + "/step_3"));
  EXPECT_FALSE(exists(ck + "/step_6"));
  EXPECT_FALSE(exists(path("w.st")));
  // The failing step is logged (loss null) and is the last record.
  std::vector<JValue> steps = ofType(readMetrics(m), "step");
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[2]["loss"].kind, JValue::Null);
  // Resuming from the finite checkpoint trains on.
  r = launch(kFake + " --data " + text_ + kQuietRun +
             " --steps 6 --grad-accum 2 --resume " + ck);
  EXPECT_EQ(r.status, 0) << r.out;
}

TEST_F(DriverSafetyTest, NonFiniteGradNormOnOneRankStopsAllTwoRanks) {
  // Rank 1 alone sees a NaN norm at step 2; both ranks stop, one message.
  Proc r = launch(kMpi + " 2 env ZRT_FAKE_NAN_GRAD_STEP=2 " + kFakeNp2 +
                  " --data " + text_ + " --steps 5" + kQuietRun);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_EQ(count(r.out, "error: step 2: the gradient norm is "), 1u) << r.out;
  EXPECT_NE(r.out.find("training stopped"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no checkpoint was written"), std::string::npos)
      << r.out;
  r = launch("env ZRT_FAKE_NAN_GRAD_STEP=2 " + kFake + " --data " + text_ +
             " --steps 5" + kQuietRun);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_EQ(count(r.out, "error: step 2: the gradient norm is nan; training "
                         "stopped"),
            1u)
      << r.out;
}

TEST_F(DriverSafetyTest, NonFiniteWeightsAreNeverCheckpointed) {
  // A finite loss and norm, but a NaN weight after step 4: the save of
  // step 4 is refused and `latest` stays at step 2.
  const std::string ck = path("ck");
  Proc r = launch("env ZRT_FAKE_POISON_STEP=4 " + kFake + " --data " + text_ +
                  " --steps 6 --checkpoint-dir " + ck +
                  " --checkpoint-every 2" + kQuietRun);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_EQ(count(r.out, "error: checkpoint step 4 not saved: state 'table' on "
                         "rank 0 holds non-finite values (1 NaN or Inf on this "
                         "rank); 'latest' is unchanged"),
            1u)
      << r.out;
  EXPECT_EQ(readFile(ck + "/latest"), "step_2\n");
  Proc ls = launch("ls -a " + ck);
  EXPECT_EQ(ls.out.find("step_4"), std::string::npos) << ls.out;
}

TEST_F(DriverSafetyTest, ImportHeaderWithOverflowingNumberIsAUserError) {
  // Found by fuzz_safetensors: a number beyond double's range made the JSON
  // parser throw out_of_range (not parse_error), an internal error.
  const std::string json = "{\"table\": {\"dtype\": \"F32\", \"shape\": "
                           "[1e999999], \"data_offsets\": [0, 4]}}";
  std::string bytes(8, '\0');
  bytes[0] = static_cast<char>(json.size());
  bytes += json + std::string(4, '\0');
  const std::string bad = write("overflow.st", bytes);
  expectUserError(kFake + " --data " + text_ + " --steps 1 --import " + bad,
                  "error: --import file '" + bad +
                      "' is not a safetensors file (header: "
                      "[json.exception.out_of_range.406] number overflow");
}

TEST_F(DriverSafetyTest, ImportRefusesNonFiniteValues) {
  const std::string st = path("w.st");
  Proc r = launch(kFake + " --data " + text_ + " --steps 0" + kQuietRun +
                  " --export " + st);
  ASSERT_EQ(r.status, 0) << r.out;
  // Two NaN and one Inf at the start of the data.
  std::string bytes = readFile(st);
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  const float bad[3] = {NAN, INFINITY, NAN};
  std::memcpy(&bytes[8 + n], bad, sizeof bad);
  const std::string poisoned = write("bad.st", bytes);
  expectUserError(kFake + " --data " + text_ + " --steps 2 --import " +
                      poisoned,
                  "error: tensor 'table' in --import file '" + poisoned +
                      "' holds 3 non-finite values (NaN or Inf); refusing to "
                      "train from it");
}

//===----------------------------------------------------------------------===//
// The checkpoint manifest is checked, not trusted
//===----------------------------------------------------------------------===//

/// Replaces `from` by `to` (once) in the manifest of step directory `dir`,
/// then, when `reseal`, recomputes the manifest's own checksum as a writer
/// would (to reach the field checks behind it).
void editManifest(const std::string &dir, const std::string &from,
                  const std::string &to, bool reseal) {
  const std::string p = dir + "/manifest.json";
  std::ifstream in(p, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  const size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  if (reseal) {
    const std::string key = "  \"manifest_fnv1a64\": \"";
    const size_t k = text.rfind(key);
    ASSERT_NE(k, std::string::npos);
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < k; ++i) {
      h ^= static_cast<unsigned char>(text[i]);
      h *= 0x100000001b3ULL;
    }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);
    text.replace(k + key.size(), 16, hex);
  }
  std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
}

TEST_F(DriverSafetyTest, DamagedManifestsAreRefused) {
  const std::string ck = path("ck");
  const std::string base = kFake + " --data " + text_ + kQuietRun;
  Proc r = launch(base + " --steps 4 --checkpoint-every 2 --checkpoint-dir " +
                  ck);
  ASSERT_EQ(r.status, 0) << r.out;
  int n = 0;
  // Copies step_4 to a fresh directory, edits its manifest, and expects
  // `message` from resuming it.
  auto expectRefused = [&](const std::string &from, const std::string &to,
                           bool reseal, const std::string &message) {
    const std::string d = path("bad" + std::to_string(n++));
    ASSERT_EQ(std::system(("cp -r " + ck + "/step_4 " + d).c_str()), 0);
    editManifest(d, from, to, reseal);
    expectUserError(base + " --steps 6 --resume " + d, message);
  };
  // Any edit without a matching checksum.
  expectRefused("\"step\": 4,", "\"step\": 3,", false,
                "manifest.json was modified or damaged (its FNV-1a-64 "
                "checksum");
  // Behind a valid checksum, every field is still checked.
  expectRefused("\"step\": 4,", "\"step\": -1,", true,
                "malformed manifest.json: step -1 is negative");
  expectRefused("\"step\": 4,", "\"step\": 3,", true,
                "malformed manifest.json: schedule.next_step 5 is not step + 1 "
                "= 4");
  expectRefused("\"next_step\": 5", "\"next_step\": 4", true,
                "schedule.next_step 4 is not step + 1 = 5");
  expectRefused("\"seed\": \"1337\", \"grad", "\"seed\": \"abc\", \"grad",
                true, "malformed manifest.json: data.seed 'abc' is not a "
                      "decimal uint64");
  expectRefused("\"stage\": 1,", "\"stage\": 7,", true,
                "malformed manifest.json: stage 7 is not a ZeRO stage (0-3)");
  expectRefused("\"offset\": 0, \"numel\"", "\"offset\": 8, \"numel\"", true,
                "malformed manifest.json: group 'flat': member 'table' is at "
                "offset 8, but the members before it end at 0");
  expectRefused("\"bytes\": 786496", "\"bytes\": 786432", true,
                "malformed manifest.json: shard files of 786432 bytes, "
                "expected 786496");
  expectRefused("\"dtype\": \"f32\"", "\"dtype\": \"f8\"", true,
                "malformed manifest.json: field 'layout.states.dtype' is "
                "missing or malformed");
  expectRefused("\"next_sample_index\": 16", "\"next_sample_index\": -16",
                true, "the data position");
  expectRefused("\"format\": \"zero-checkpoint\",",
                "\"format\": \"zero-checkpoint\", \"step\": 9,", true,
                "manifest.json has the key 'step' twice");
  // AdamW's update count (below the step only when fp16-mixed skipped
  // steps) and the fp16-mixed loss scaler.
  expectRefused("\"optimizer\": {\"updates\": 4}",
                "\"optimizer\": {\"updates\": 5}", true,
                "malformed manifest.json: optimizer.updates 5 is not in [0, "
                "step 4]");
  expectRefused("\"optimizer\": {\"updates\": 4},",
                "\"optimizer\": {\"updates\": 4}, \"loss_scaler\": "
                "{\"scale\": -1, \"good_steps\": 0},",
                true,
                "malformed manifest.json: loss_scaler has a scale that is not "
                "finite and > 0");
  // A shard file that is a directory is not called missing.
  const std::string dirShard = path("dirshard");
  ASSERT_EQ(std::system(("cp -r " + ck + "/step_4 " + dirShard + " && rm " +
                         dirShard + "/rank_00000.bin && mkdir " + dirShard +
                         "/rank_00000.bin")
                            .c_str()),
            0);
  expectUserError(base + " --steps 6 --resume " + dirShard,
                  "shard file rank_00000.bin of rank 0 is not a regular file");
  // A shard file of another checkpoint (step 2's, same size and layout).
  const std::string mixed = path("mixed");
  ASSERT_EQ(std::system(("cp -r " + ck + "/step_4 " + mixed + " && cp " + ck +
                         "/step_2/rank_00000.bin " + mixed + "/")
                            .c_str()),
            0);
  expectUserError(base + " --steps 6 --resume " + mixed,
                  "shard file rank_00000.bin does not belong to this "
                  "checkpoint (its header says rank 0 of 1, 3 states, step 2");
  // `latest` naming a temporary directory of a save in progress.
  ASSERT_EQ(std::system(("cp -r " + ck + "/step_4 " + ck + "/.step_6.tmp")
                            .c_str()),
            0);
  write("ck/latest", ".step_6.tmp\n");
  expectUserError(base + " --steps 8 --resume " + ck,
                  "error: --resume: '" + ck + "/latest' names '.step_6.tmp', "
                  "which is not a step directory (step_<N>)");
}

TEST_F(DriverSafetyTest, ShardFilesSwappedBetweenRanksAreRefusedTwoRanks) {
  const std::string ck = path("ck");
  Proc r = launch(kMpi + " 2 " + kFakeNp2 + " --data " + text_ + kQuietRun +
                  " --steps 2 --checkpoint-dir " + ck);
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string d = ck + "/step_2";
  ASSERT_EQ(std::system(("cd " + d + " && mv rank_00000.bin x && mv "
                         "rank_00001.bin rank_00000.bin && mv x rank_00001.bin")
                            .c_str()),
            0);
  expectUserError(kFake + " --data " + text_ + " --steps 4 --resume " + d,
                  "shard file rank_00000.bin does not belong to this "
                  "checkpoint (its header says rank 1 of 2");
}

//===----------------------------------------------------------------------===//
// Options: range-checked, NaN rejected
//===----------------------------------------------------------------------===//

TEST_F(DriverSafetyTest, ScheduleOptionsAreRangeChecked) {
  const std::string base = kFake + " --data " + text_;
  expectUserError(base + " --lr 1e-3 --min-lr 1e-2",
                  "error: --min-lr 0.01 is above --lr 0.001 (the schedule "
                  "decays from --lr to --min-lr)");
  expectUserError(base + " --steps 10 --warmup 11",
                  "error: --warmup 11 is longer than --steps 10");
  expectUserError(base + " --min-lr nan",
                  "error: --min-lr: 'nan' is not a finite number");
  expectUserError(base + " --temperature inf",
                  "error: --temperature: 'inf' is not a finite number");
  expectUserError(base + " --val-fraction=-0.1",
                  "error: --val-fraction: -0.1 must be in [0, 1)");
  expectUserError(base + " --threads 0", "error: --threads: 0 is out of range");
  expectUserError(base + " --val-batches 0",
                  "error: --val-batches: 0 is out of range");
  expectUserError(base + " --steps -1", "error: --steps: -1 is out of range");
  expectUserError(base + " --steps 99999999999999999999",
                  "error: --steps: '99999999999999999999' is not an integer");
  expectUserError(base + " --lr-schedule onecycle",
                  "error: --lr-schedule: 'onecycle' is not cosine, constant, "
                  "warmup, warmup-decay or warmup-cosine");
  expectUserError(base + " --lr-schedule warmup --warmup-type exp",
                  "error: --warmup-type: 'exp' is not log or linear");
  expectUserError(base + " --lr-schedule warmup --lr 1e-3 --warmup-min-lr 1e-2",
                  "error: --warmup-min-lr 0.01 is above --lr 0.001 (the "
                  "warmup rises from --warmup-min-lr to --lr)");
  expectUserError(base + " --warmup-min-lr=-1",
                  "error: --warmup-min-lr: -1 must be >= 0");
  expectUserError(base + " --decay-steps 0",
                  "error: --decay-steps: 0 is out of range");
  // Boundary values are accepted: warmup = steps, min-lr = lr, --steps 0
  // with any warmup; the DeepSpeed schedules take a warmup longer than the
  // run (DeepSpeed warns, and so the rate never reaches --lr).
  for (const char *ok : {" --steps 2 --warmup 2", " --lr 0.01 --min-lr 0.01",
                         " --steps 0 --warmup 5",
                         " --steps 2 --warmup 5 --lr-schedule warmup-decay"}) {
    Proc r = launch(base + ok + kQuietRun);
    EXPECT_EQ(r.status, 0) << ok << "\n" << r.out;
  }
}

} // namespace
