//===- data_test.cpp - Text / llm.c .bin datasets and the batch sampler ----===//

#include "test_util.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace zrt_test;

namespace {

// A fresh temporary directory per test, removed afterwards.
class DataTest : public ::testing::Test {
protected:
  void SetUp() override {
    char tmpl[] = "/tmp/zrt_data_test_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir = tmpl;
  }
  void TearDown() override {
    for (const std::string &f : files)
      std::remove(f.c_str());
    rmdir(dir.c_str());
    for (zrt_dataset d : open)
      zrt_dataset_close(d);
  }
  std::string path(const std::string &name) {
    files.push_back(dir + "/" + name);
    return files.back();
  }
  std::string writeText(const std::string &name, const std::string &text) {
    std::string p = path(name);
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  // llm.c format: 256 int32 header, then uint16 tokens. `declared` is the
  // header's token count (defaults to tokens.size()).
  std::string writeBin(const std::string &name,
                       const std::vector<uint16_t> &tokens,
                       int32_t magic = ZRT_LLMC_MAGIC, int32_t version = 1,
                       int64_t declared = -1) {
    std::string p = path(name);
    int32_t header[256] = {};
    header[0] = magic;
    header[1] = version;
    header[2] = static_cast<int32_t>(declared < 0 ? tokens.size() : declared);
    std::ofstream f(p, std::ios::binary);
    f.write(reinterpret_cast<const char *>(header), sizeof header);
    f.write(reinterpret_cast<const char *>(tokens.data()),
            static_cast<std::streamsize>(tokens.size() * 2));
    return p;
  }
  zrt_dataset keep(zrt_dataset d) {
    open.push_back(d);
    return d;
  }

  std::string dir;
  std::vector<std::string> files;
  std::vector<zrt_dataset> open;
};

std::string repeat(const std::string &s, int n) {
  std::string r;
  for (int i = 0; i < n; ++i)
    r += s;
  return r;
}

} // namespace

TEST_F(DataTest, TextBytesAreTokensAndSplitIsLastTenPercent) {
  const std::string text = "h\xc3\xa9llo " + repeat("abcdefghij", 9) + "!";
  ASSERT_EQ(text.size(), 98u);
  zrt_dataset ds = nullptr;
  ASSERT_EQ(zrt_dataset_open_text(writeText("a.txt", text).c_str(),
                                  ZRT_DEFAULT_VAL_FRACTION, &ds),
            ZRT_OK);
  keep(ds);
  EXPECT_EQ(zrt_dataset_num_tokens(ds, ZRT_SPLIT_VAL), 9); // floor(9.8)
  EXPECT_EQ(zrt_dataset_num_tokens(ds, ZRT_SPLIT_TRAIN), 89);
  EXPECT_EQ(zrt_dataset_vocab_size(ds), 256);
  std::vector<int32_t> in(4), tg(4);
  ASSERT_EQ(zrt_dataset_batch(ds, ZRT_SPLIT_TRAIN, 1, 4, 0, 0, 0, 0, 1,
                              in.data(), tg.data()),
            ZRT_OK);
  EXPECT_EQ(in, (std::vector<int32_t>{'h', 0xc3, 0xa9, 'l'})); // raw bytes
  EXPECT_EQ(tg, (std::vector<int32_t>{0xc3, 0xa9, 'l', 'l'}));
  // Validation split starts at token 89.
  ASSERT_EQ(zrt_dataset_batch(ds, ZRT_SPLIT_VAL, 1, 4, 0, 0, 0, 0, 1,
                              in.data(), tg.data()),
            ZRT_OK);
  EXPECT_EQ(in[0], static_cast<unsigned char>(text[89]));
  EXPECT_EQ(tg[3], static_cast<unsigned char>(text[93]));
  EXPECT_EQ(zrt_dataset_num_tokens(ds, 7), -1);
}

TEST_F(DataTest, BinFileAndDispatchByExtension) {
  std::vector<uint16_t> toks(200);
  for (size_t i = 0; i < toks.size(); ++i)
    toks[i] = static_cast<uint16_t>((i * 997) % 50257);
  zrt_dataset ds = nullptr;
  ASSERT_EQ(zrt_dataset_open(writeBin("t.bin", toks).c_str(), 0.25, &ds),
            ZRT_OK);
  keep(ds);
  EXPECT_EQ(zrt_dataset_num_tokens(ds, ZRT_SPLIT_TRAIN), 150);
  EXPECT_EQ(zrt_dataset_num_tokens(ds, ZRT_SPLIT_VAL), 50);
  // The uint16 id range: the ids themselves are checked per window.
  EXPECT_EQ(zrt_dataset_vocab_size(ds), 65536);
  EXPECT_EQ(zrt_dataset_is_text(ds), 0);
  EXPECT_EQ(zrt_dataset_num_files(ds), 1);
  // Sequential mode: window w starts at w*T.
  const int B = 2, T = 8;
  std::vector<int32_t> in(B * T), tg(B * T);
  ASSERT_EQ(zrt_dataset_batch(ds, ZRT_SPLIT_TRAIN, B, T, 0, 1, 0, 0, 1,
                              in.data(), tg.data()),
            ZRT_OK);
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t) {
      const int start = (1 * B + b) * T;
      EXPECT_EQ(in[b * T + t], toks[start + t]);
      EXPECT_EQ(tg[b * T + t], toks[start + t + 1]);
    }
  ASSERT_EQ(zrt_dataset_batch(ds, ZRT_SPLIT_VAL, 1, T, 0, 0, 0, 0, 1,
                              in.data(), tg.data()),
            ZRT_OK);
  EXPECT_EQ(in[0], toks[150]);
  // A non-.bin name is read as text even with llm.c content.
  zrt_dataset txt = nullptr;
  std::string p2 = path("t.dat");
  std::rename(files[0].c_str(), p2.c_str());
  ASSERT_EQ(zrt_dataset_open(p2.c_str(), 0.0, &txt), ZRT_OK);
  keep(txt);
  EXPECT_EQ(zrt_dataset_num_tokens(txt, ZRT_SPLIT_TRAIN), 1024 + 400);
  EXPECT_EQ(zrt_dataset_num_tokens(txt, ZRT_SPLIT_VAL), 0);
}

TEST_F(DataTest, RankSlicesConcatenateToTheSameGlobalBatch) {
  std::vector<uint16_t> toks(5000);
  for (size_t i = 0; i < toks.size(); ++i)
    toks[i] = static_cast<uint16_t>(i % 4099);
  zrt_dataset ds = nullptr;
  ASSERT_EQ(zrt_dataset_open_bin(writeBin("g.bin", toks).c_str(), 0.1, &ds),
            ZRT_OK);
  keep(ds);
  const int B = 8, T = 16;
  for (int shuffle : {1, 0})
    for (int64_t step : {0, 1, 37}) {
      std::vector<int32_t> ref(B * T), refT(B * T);
      ASSERT_EQ(zrt_dataset_batch(ds, ZRT_SPLIT_TRAIN, B, T, 42, step, shuffle,
                                  0, 1, ref.data(), refT.data()),
                ZRT_OK);
      for (int N : {2, 4}) {
        std::vector<int32_t> cat, catT;
        for (int r = 0; r < N; ++r) {
          std::vector<int32_t> in(B / N * T), tg(B / N * T);
          ASSERT_EQ(zrt_dataset_batch(ds, ZRT_SPLIT_TRAIN, B, T, 42, step,
                                      shuffle, r, N, in.data(), tg.data()),
                    ZRT_OK);
          cat.insert(cat.end(), in.begin(), in.end());
          catT.insert(catT.end(), tg.begin(), tg.end());
        }
        EXPECT_EQ(cat, ref) << "N=" << N << " step=" << step;
        EXPECT_EQ(catT, refT) << "N=" << N << " step=" << step;
      }
      // Targets are inputs shifted by one within the same window.
      for (int b = 0; b < B; ++b)
        for (int t = 0; t + 1 < T; ++t)
          EXPECT_EQ(refT[b * T + t], ref[b * T + t + 1]);
    }
  // Different steps and seeds give different shuffled batches.
  std::vector<int32_t> a(B * T), b(B * T), c(B * T), tg(B * T);
  zrt_dataset_batch(ds, ZRT_SPLIT_TRAIN, B, T, 42, 0, 1, 0, 1, a.data(),
                    tg.data());
  zrt_dataset_batch(ds, ZRT_SPLIT_TRAIN, B, T, 42, 1, 1, 0, 1, b.data(),
                    tg.data());
  zrt_dataset_batch(ds, ZRT_SPLIT_TRAIN, B, T, 43, 0, 1, 0, 1, c.data(),
                    tg.data());
  EXPECT_NE(a, b);
  EXPECT_NE(a, c);
}

// The sample stream: sequence s is row s % Bs of shuffled batch s / Bs, so
// any run of it (here across batch boundaries) equals the batches' rows.
TEST_F(DataTest, SequencesAreTheShuffledBatchesRows) {
  std::vector<uint16_t> toks(5000);
  for (size_t i = 0; i < toks.size(); ++i)
    toks[i] = static_cast<uint16_t>(i % 4099);
  zrt_dataset ds = nullptr;
  ASSERT_EQ(zrt_dataset_open_bin(writeBin("s.bin", toks).c_str(), 0.1, &ds),
            ZRT_OK);
  keep(ds);
  const int Bs = 4, T = 8;
  std::vector<int32_t> rows, rowsT; // batches 0..2, row-major
  for (int64_t step = 0; step < 3; ++step) {
    std::vector<int32_t> in(Bs * T), tg(Bs * T);
    ASSERT_EQ(zrt_dataset_batch(ds, ZRT_SPLIT_TRAIN, Bs, T, 9, step, 1, 0, 1,
                                in.data(), tg.data()),
              ZRT_OK);
    rows.insert(rows.end(), in.begin(), in.end());
    rowsT.insert(rowsT.end(), tg.begin(), tg.end());
  }
  for (int64_t first : {0, 3, 5}) {
    const int64_t count = 6;
    std::vector<int32_t> in(count * T), tg(count * T);
    ASSERT_EQ(zrt_dataset_sequences(ds, ZRT_SPLIT_TRAIN, T, 9, Bs, first,
                                    count, in.data(), tg.data()),
              ZRT_OK);
    EXPECT_TRUE(std::equal(in.begin(), in.end(), rows.begin() + first * T))
        << "first=" << first;
    EXPECT_TRUE(std::equal(tg.begin(), tg.end(), rowsT.begin() + first * T))
        << "first=" << first;
  }
  std::vector<int32_t> in(T), tg(T);
  auto expectError = [&](int got, int want, const std::string &needle) {
    EXPECT_EQ(got, want) << zrt_last_error();
    EXPECT_NE(std::string(zrt_last_error()).find(needle), std::string::npos)
        << "message: " << zrt_last_error() << "\nexpected: " << needle;
  };
  expectError(zrt_dataset_sequences(ds, ZRT_SPLIT_TRAIN, T, 9, 0, 0, 1,
                                    in.data(), tg.data()),
              ZRT_ERR_INVALID_ARGUMENT, "stream_batch >= 1");
  expectError(zrt_dataset_sequences(ds, ZRT_SPLIT_TRAIN, T, 9, Bs, -1, 1,
                                    in.data(), tg.data()),
              ZRT_ERR_INVALID_ARGUMENT, "first >= 0");
  expectError(zrt_dataset_sequences(ds, ZRT_SPLIT_TRAIN, T, 9, Bs, INT64_MAX,
                                    2, in.data(), tg.data()),
              ZRT_ERR_INVALID_ARGUMENT, "first + count overflows");
  EXPECT_EQ(zrt_dataset_sequences(ds, ZRT_SPLIT_TRAIN, T, 9, Bs, 0, 0, nullptr,
                                  nullptr),
            ZRT_OK);
}

TEST_F(DataTest, ErrorMessages) {
  zrt_dataset ds = nullptr;
  auto expectError = [&](int got, int want, const std::string &needle) {
    EXPECT_EQ(got, want) << zrt_last_error();
    EXPECT_NE(std::string(zrt_last_error()).find(needle), std::string::npos)
        << "message: " << zrt_last_error() << "\nexpected to contain: "
        << needle;
    EXPECT_EQ(ds, nullptr);
  };
  expectError(zrt_dataset_open_text((dir + "/missing.txt").c_str(), 0.1, &ds),
              ZRT_ERR_IO, "cannot open");
  expectError(zrt_dataset_open_text(writeText("e.txt", "").c_str(), 0.1, &ds),
              ZRT_ERR_IO, "is empty");
  expectError(zrt_dataset_open_text(writeText("x.txt", "abc").c_str(), 1.0,
                                    &ds),
              ZRT_ERR_INVALID_ARGUMENT, "val_fraction");
  std::vector<uint16_t> toks(64, 5);
  expectError(zrt_dataset_open_bin(writeBin("m.bin", toks, 1234).c_str(), 0.1,
                                   &ds),
              ZRT_ERR_FORMAT, "bad magic 1234");
  expectError(zrt_dataset_open_bin(writeBin("v.bin", toks, ZRT_LLMC_MAGIC, 2)
                                       .c_str(),
                                   0.1, &ds),
              ZRT_ERR_FORMAT, "unsupported version 2");
  expectError(zrt_dataset_open_bin(writeBin("tr.bin", toks, ZRT_LLMC_MAGIC, 1,
                                            100)
                                       .c_str(),
                                   0.1, &ds),
              ZRT_ERR_FORMAT, "truncated");
  expectError(zrt_dataset_open_bin(writeText("s.bin", "short").c_str(), 0.1,
                                   &ds),
              ZRT_ERR_FORMAT, "header");
  expectError(zrt_dataset_open_bin(writeText("z.bin", "").c_str(), 0.1, &ds),
              ZRT_ERR_IO, "is empty");

  ASSERT_EQ(zrt_dataset_open_bin(writeBin("ok.bin", toks).c_str(), 0.25, &ds),
            ZRT_OK);
  keep(ds);
  std::vector<int32_t> in(256), tg(256);
  EXPECT_EQ(zrt_dataset_batch(ds, ZRT_SPLIT_TRAIN, 2, 48, 0, 0, 1, 0, 1,
                              in.data(), tg.data()),
            ZRT_ERR_OUT_OF_RANGE);
  EXPECT_NE(std::string(zrt_last_error()).find("T + 1 = 49 exceeds the 48 "
                                               "tokens of the train split"),
            std::string::npos)
      << zrt_last_error();
  EXPECT_EQ(zrt_dataset_batch(ds, ZRT_SPLIT_VAL, 1, 16, 0, 0, 1, 0, 1,
                              in.data(), tg.data()),
            ZRT_ERR_OUT_OF_RANGE);
  EXPECT_EQ(zrt_dataset_batch(ds, ZRT_SPLIT_TRAIN, 6, 4, 0, 0, 1, 0, 4,
                              in.data(), tg.data()),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zrt_last_error()).find("not divisible by world size 4"),
            std::string::npos)
      << zrt_last_error();
  EXPECT_EQ(zrt_dataset_batch(ds, ZRT_SPLIT_TRAIN, 4, 4, 0, 0, 1, 4, 4,
                              in.data(), tg.data()),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zrt_dataset_batch(nullptr, ZRT_SPLIT_TRAIN, 4, 4, 0, 0, 1, 0, 1,
                              in.data(), tg.data()),
            ZRT_ERR_INVALID_ARGUMENT);
  // Exactly T + 1 tokens is enough.
  EXPECT_EQ(zrt_dataset_batch(ds, ZRT_SPLIT_TRAIN, 2, 47, 0, 3, 1, 0, 1,
                              in.data(), tg.data()),
            ZRT_OK);
  EXPECT_EQ(zrt_dataset_batch(ds, ZRT_SPLIT_TRAIN, 2, 47, 0, 3, 0, 0, 1,
                              in.data(), tg.data()),
            ZRT_OK);
}

// Shards are one stream: cut anywhere (windows spanning two or three files),
// they give the batches and sample stream of the one file, and separate
// validation files give the split --val-fraction would.
TEST_F(DataTest, ShardsReadAsOneStream) {
  std::vector<uint16_t> toks(3000);
  for (size_t i = 0; i < toks.size(); ++i)
    toks[i] = static_cast<uint16_t>((i * 7919) % 50257);
  auto piece = [&](size_t b, size_t e) {
    return std::vector<uint16_t>(toks.begin() + b, toks.begin() + e);
  };
  const std::string one = writeBin("one.bin", toks);
  // A 5-token shard is shorter than one window of T + 1 = 17 tokens.
  const std::string s0 = writeBin("s0.bin", piece(0, 1001));
  const std::string s1 = writeBin("s1.bin", piece(1001, 1006));
  const std::string s2 = writeBin("s2.bin", piece(1006, 2700));
  const std::string v0 = writeBin("v0.bin", piece(2700, 3000));
  zrt_dataset whole = nullptr, shards = nullptr, split = nullptr;
  ASSERT_EQ(zrt_dataset_open(one.c_str(), 0.1, &whole), ZRT_OK);
  keep(whole);
  const char *three[] = {s0.c_str(), s1.c_str(), s2.c_str(), v0.c_str()};
  ASSERT_EQ(zrt_dataset_open_shards(three, 4, nullptr, 0, 0.1, &shards),
            ZRT_OK) << zrt_last_error();
  keep(shards);
  ASSERT_EQ(zrt_dataset_open_shards(three, 3, three + 3, 1, 0.0, &split),
            ZRT_OK) << zrt_last_error();
  keep(split);
  EXPECT_EQ(zrt_dataset_num_files(split), 4);
  for (zrt_dataset d : {shards, split}) {
    EXPECT_EQ(zrt_dataset_num_tokens(d, ZRT_SPLIT_TRAIN), 2700);
    EXPECT_EQ(zrt_dataset_num_tokens(d, ZRT_SPLIT_VAL), 300);
  }
  const int T = 16, n = 400;
  std::vector<int32_t> in(n * T), tg(n * T), in2(n * T), tg2(n * T);
  ASSERT_EQ(zrt_dataset_sequences(whole, ZRT_SPLIT_TRAIN, T, 3, 8, 0, n,
                                  in.data(), tg.data()),
            ZRT_OK);
  for (zrt_dataset d : {shards, split}) {
    ASSERT_EQ(zrt_dataset_sequences(d, ZRT_SPLIT_TRAIN, T, 3, 8, 0, n,
                                    in2.data(), tg2.data()),
              ZRT_OK);
    EXPECT_EQ(in, in2);
    EXPECT_EQ(tg, tg2);
  }
  // Sequential windows 62..63 start at 992 and 1008: across s0|s1|s2.
  for (int split_ : {ZRT_SPLIT_TRAIN, ZRT_SPLIT_VAL})
    for (int64_t step : {0, 31}) {
      std::vector<int32_t> a(2 * T), at(2 * T), b(2 * T), bt(2 * T);
      ASSERT_EQ(zrt_dataset_batch(whole, split_, 2, T, 0, step, 0, 0, 1,
                                  a.data(), at.data()),
                ZRT_OK);
      ASSERT_EQ(zrt_dataset_batch(split, split_, 2, T, 0, step, 0, 0, 1,
                                  b.data(), bt.data()),
                ZRT_OK);
      EXPECT_EQ(a, b);
      EXPECT_EQ(at, bt);
    }
  std::vector<int32_t> a(2 * T), at(2 * T);
  ASSERT_EQ(zrt_dataset_batch(split, ZRT_SPLIT_TRAIN, 2, T, 0, 31, 0, 0, 1,
                              a.data(), at.data()),
            ZRT_OK);
  for (int t = 0; t < T; ++t) {
    EXPECT_EQ(a[t], toks[992 + t]);
    EXPECT_EQ(at[T + t], toks[1008 + t + 1]);
  }
}

TEST_F(DataTest, VocabLimitNamesFileAndOffset) {
  std::vector<uint16_t> good(100, 7), bad(100, 7);
  bad[42] = 300;
  const std::string g = writeBin("g.bin", good), b = writeBin("b.bin", bad);
  const char *files[] = {g.c_str(), b.c_str()};
  zrt_dataset ds = nullptr;
  ASSERT_EQ(zrt_dataset_open_shards(files, 2, nullptr, 0, 0.0, &ds), ZRT_OK);
  keep(ds);
  std::vector<int32_t> in(10 * 8), tg(10 * 8);
  // Without a limit every id passes; window 17 holds token 136 = b[36..44].
  EXPECT_EQ(zrt_dataset_batch(ds, ZRT_SPLIT_TRAIN, 1, 8, 0, 17, 0, 0, 1,
                              in.data(), tg.data()),
            ZRT_OK);
  EXPECT_EQ(in[6], 300);
  ASSERT_EQ(zrt_dataset_set_vocab_limit(ds, 301), ZRT_OK);
  EXPECT_EQ(zrt_dataset_batch(ds, ZRT_SPLIT_TRAIN, 1, 8, 0, 17, 0, 0, 1,
                              in.data(), tg.data()),
            ZRT_OK);
  ASSERT_EQ(zrt_dataset_set_vocab_limit(ds, 300), ZRT_OK);
  // Windows without the bad token still pass.
  EXPECT_EQ(zrt_dataset_batch(ds, ZRT_SPLIT_TRAIN, 1, 8, 0, 3, 0, 0, 1,
                              in.data(), tg.data()),
            ZRT_OK);
  EXPECT_EQ(zrt_dataset_batch(ds, ZRT_SPLIT_TRAIN, 1, 8, 0, 17, 0, 0, 1,
                              in.data(), tg.data()),
            ZRT_ERR_OUT_OF_RANGE);
  EXPECT_EQ(std::string(zrt_last_error()),
            "'" + b + "': token id 300 at token 42 of the file (byte offset "
                      "1108) is outside the vocabulary of 300");
  // The last token of a window (a target only) is checked too: window 1
  // of T = 71 has inputs 71..141 and targets 72..142.
  EXPECT_EQ(zrt_dataset_batch(ds, ZRT_SPLIT_TRAIN, 1, 71, 0, 1, 0, 0, 1,
                              in.data(), tg.data()),
            ZRT_ERR_OUT_OF_RANGE);
  EXPECT_NE(std::string(zrt_last_error()).find("at token 42 of the file"),
            std::string::npos)
      << zrt_last_error();
  EXPECT_EQ(zrt_dataset_batch(ds, ZRT_SPLIT_TRAIN, 1, 70, 0, 1, 0, 0, 1,
                              in.data(), tg.data()),
            ZRT_OK); // inputs 70..139, targets 71..140
  EXPECT_EQ(zrt_dataset_set_vocab_limit(ds, -1), ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zrt_dataset_set_vocab_limit(nullptr, 5), ZRT_ERR_INVALID_ARGUMENT);
}

TEST_F(DataTest, ShardErrors) {
  zrt_dataset ds = nullptr;
  auto expectError = [&](std::vector<std::string> paths, int want,
                         const std::string &needle) {
    std::vector<const char *> p;
    for (const std::string &s : paths)
      p.push_back(s.c_str());
    EXPECT_EQ(zrt_dataset_open_shards(p.data(), static_cast<int>(p.size()),
                                      nullptr, 0, 0.1, &ds),
              want)
        << zrt_last_error();
    EXPECT_EQ(std::string(zrt_last_error()), needle);
    EXPECT_EQ(ds, nullptr);
  };
  const std::string ok = writeBin("ok.bin", std::vector<uint16_t>(64, 5));
  const std::string txt = writeText("t.txt", "hello");
  expectError({ok, txt}, ZRT_ERR_FORMAT,
              "zrt_dataset_open_shards: '" + txt + "' is text but '" + ok +
                  "' is an llm.c .bin token file: the files of one dataset "
                  "must all be llm.c .bin token files or all text");
  expectError({txt, ok}, ZRT_ERR_FORMAT,
              "zrt_dataset_open_shards: '" + ok +
                  "' is an llm.c .bin token file but '" + txt +
                  "' is text: the files of one dataset must all be llm.c "
                  ".bin token files or all text");
  const std::string empty = writeText("e.bin", "");
  expectError({ok, empty}, ZRT_ERR_IO,
              "zrt_dataset_open_shards: '" + empty + "' is empty");
  const std::string trunc =
      writeBin("tr.bin", std::vector<uint16_t>(10, 1), ZRT_LLMC_MAGIC, 1, 11);
  expectError({ok, trunc}, ZRT_ERR_FORMAT,
              "zrt_dataset_open_shards: '" + trunc +
                  "' is truncated: header declares 11 tokens but the file "
                  "holds 10");
  const std::string sub = path("sub.bin"); // removed by TearDown
  ASSERT_EQ(mkdir(sub.c_str(), 0700), 0);
  expectError({ok, sub}, ZRT_ERR_IO,
              "zrt_dataset_open_shards: '" + sub + "' is not a regular file");
  const char *one[] = {ok.c_str()};
  EXPECT_EQ(zrt_dataset_open_shards(one, 0, nullptr, 0, 0.1, &ds),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zrt_dataset_open_shards(one, 1, one, 1, 0.1, &ds),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zrt_last_error()).find("must be 0"), std::string::npos);
}
