//===- tensorboard_test.cpp - TensorBoard event files ---------------------===//
//
// The CRC-32C and TFRecord framing of runtime/src/driver/tensorboard.cpp, read back
// byte by byte here; test/e2e/tensorboard.test reads a training run's file
// with the tensorboard package itself.
//
//===----------------------------------------------------------------------===//

#include "driver/tensorboard.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

TEST(TensorBoard, Crc32cCheckValues) {
  // RFC 3720 B.4 / the CRC catalogue's check value, and 32 zero bytes
  // (RFC 3720 B.4: 0x8A9136AA).
  EXPECT_EQ(zrt::crc32c("123456789", 9), 0xE3069283u);
  const std::vector<unsigned char> zeros(32, 0);
  EXPECT_EQ(zrt::crc32c(zeros.data(), zeros.size()), 0x8A9136AAu);
  const std::vector<unsigned char> ones(32, 0xff);
  EXPECT_EQ(zrt::crc32c(ones.data(), ones.size()), 0x62A8AB43u);
  EXPECT_EQ(zrt::crc32c("", 0), 0u);
}

/// The records of a TFRecord file, each checked against its two masked CRCs.
std::vector<std::string> readRecords(const std::string &bytes) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < bytes.size()) {
    EXPECT_LE(at + 12, bytes.size());
    uint64_t len;
    uint32_t lenCrc, dataCrc;
    std::memcpy(&len, bytes.data() + at, 8);
    std::memcpy(&lenCrc, bytes.data() + at + 8, 4);
    EXPECT_EQ(lenCrc, zrt::maskedCrc32c(bytes.data() + at, 8));
    EXPECT_LE(at + 16 + len, bytes.size());
    std::string payload = bytes.substr(at + 12, len);
    std::memcpy(&dataCrc, bytes.data() + at + 12 + len, 4);
    EXPECT_EQ(dataCrc, zrt::maskedCrc32c(payload.data(), payload.size()));
    out.push_back(payload);
    at += 16 + len;
  }
  return out;
}

TEST(TensorBoard, EventFileHoldsTheScalars) {
  char tmpl[] = "/tmp/zrt_tb_XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = std::string(tmpl) + "/logs/run";
  std::string path;
  {
    zrt::EventWriter w;
    ASSERT_EQ(w.open(dir), "");
    path = w.path();
    EXPECT_NE(path.find(dir + "/events.out.tfevents."), std::string::npos);
    ASSERT_EQ(w.scalar("train/loss", 3, 2.5), "");
    ASSERT_EQ(w.scalar("val/loss", 300, 0.125), "");
  }
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  std::vector<std::string> recs = readRecords(ss.str());
  ASSERT_EQ(recs.size(), 3u);
  // Event{wall_time (1: fixed64), file_version (3: "brain.Event:2")}.
  EXPECT_EQ(recs[0][0], 0x09);
  EXPECT_EQ(recs[0].substr(9), std::string("\x1a\x0d") + "brain.Event:2");
  // Event{wall_time, step (2: varint 300 = ac 02), summary (5)} with
  // Summary{value (1): Value{tag (1), simple_value (2: fixed32)}}.
  const std::string &e = recs[2];
  EXPECT_EQ(e.substr(9, 3), std::string("\x10\xac\x02"));
  const float v = 0.125f;
  std::string value = std::string("\x0a\x08") + "val/loss" + "\x15" +
                      std::string(reinterpret_cast<const char *>(&v), 4);
  std::string summary = std::string("\x0a") + char(value.size()) + value;
  EXPECT_EQ(e.substr(12), std::string("\x2a") + char(summary.size()) + summary);
  // A second writer in the same directory never replaces the first file.
  zrt::EventWriter again;
  ASSERT_EQ(again.open(dir), "");
  EXPECT_NE(again.path(), path);
  EXPECT_EQ(std::system(("rm -rf " + std::string(tmpl)).c_str()), 0);
}

TEST(TensorBoard, UnwritableDirectoryIsAnError) {
  zrt::EventWriter w;
  std::string err = w.open("/proc/zrt-no-such-dir/x");
  EXPECT_NE(err.find("--tensorboard: cannot create the directory "
                     "'/proc/zrt-no-such-dir/x'"),
            std::string::npos)
      << err;
}

} // namespace
