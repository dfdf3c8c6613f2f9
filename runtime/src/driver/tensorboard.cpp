//===- tensorboard.cpp - TensorBoard event files of a run ------------------===//

#include "driver/tensorboard.h"

#include "driver/fileio.h"

#include <array>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

namespace {

std::array<uint32_t, 256> makeTable() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k)
      c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    t[i] = c;
  }
  return t;
}

/// Protobuf wire encoding (developers.google.com/protocol-buffers/docs/
/// encoding): varints, and a field key = (field number << 3) | wire type.
void varint(std::string &out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
void key(std::string &out, int field, int wireType) {
  varint(out, static_cast<uint64_t>(field) << 3 | wireType);
}
void bytesField(std::string &out, int field, const std::string &bytes) {
  key(out, field, 2); // length-delimited
  varint(out, bytes.size());
  out += bytes;
}
template <typename T> void fixed(std::string &out, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T)); // little-endian hosts only (x86-64, arm64)
  out.append(b, sizeof(T));
}

double wallTime() {
  struct timeval tv;
  ::gettimeofday(&tv, nullptr);
  return static_cast<double>(tv.tv_sec) + tv.tv_usec * 1e-6;
}

/// Event files this process opened: the last part of their names, so that
/// two writers of one process in one second never meet.
int filesOpened = 0;

} // namespace

uint32_t zrt::crc32c(const void *data, size_t n) {
  static const std::array<uint32_t, 256> table = makeTable();
  const auto *p = static_cast<const unsigned char *>(data);
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i)
    c = table[(c ^ p[i]) & 0xff] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

uint32_t zrt::maskedCrc32c(const void *data, size_t n) {
  const uint32_t c = crc32c(data, n);
  return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

zrt::EventWriter::~EventWriter() {
  if (f_)
    std::fclose(f_);
}

std::string zrt::EventWriter::record(const std::string &payload) {
  std::string rec;
  const uint64_t len = payload.size();
  fixed(rec, len);
  fixed(rec, maskedCrc32c(rec.data(), 8));
  rec += payload;
  fixed(rec, maskedCrc32c(payload.data(), payload.size()));
  if (std::fwrite(rec.data(), 1, rec.size(), f_) != rec.size() ||
      std::fflush(f_) != 0)
    return "--tensorboard: cannot write '" + path_ +
           "': " + std::strerror(errno);
  return "";
}

std::string zrt::EventWriter::open(const std::string &dir) {
  if (!zrt::makeDirs(dir))
    return "--tensorboard: cannot create the directory '" + dir +
           "': " + std::strerror(errno);
  char host[256] = "localhost";
  ::gethostname(host, sizeof host - 1);
  path_ = dir + "/events.out.tfevents." +
          std::to_string(static_cast<long long>(std::time(nullptr))) + "." +
          host + "." + std::to_string(static_cast<long long>(::getpid())) +
          "." + std::to_string(filesOpened++);
  // "x": never replace an existing file.
  f_ = std::fopen(path_.c_str(), "wbx");
  if (!f_)
    return "--tensorboard: cannot create '" + path_ +
           "': " + std::strerror(errno);
  std::string event;
  key(event, 1, 1); // wall_time: double
  fixed(event, wallTime());
  bytesField(event, 3, "brain.Event:2"); // file_version
  return record(event);
}

std::string zrt::EventWriter::scalar(const std::string &tag, int64_t step,
                                     double value) {
  std::string v; // Summary.Value
  bytesField(v, 1, tag);
  key(v, 2, 5); // simple_value: float
  fixed(v, static_cast<float>(value));
  std::string summary;
  bytesField(summary, 1, v); // Summary.value (repeated)
  std::string event;
  key(event, 1, 1);
  fixed(event, wallTime());
  key(event, 2, 0); // step: int64 varint
  varint(event, static_cast<uint64_t>(step));
  bytesField(event, 5, summary); // Event.summary
  return record(event);
}
