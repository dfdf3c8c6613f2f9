//===- data_test.cpp - Text / llm.c .bin datasets and the batch sampler ----===//

#include "test_util.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
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
  uint16_t mx = 0;
  for (uint16_t t : toks)
    mx = std::max(mx, t);
  EXPECT_EQ(zrt_dataset_vocab_size(ds), mx + 1);
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
