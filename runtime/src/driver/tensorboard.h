//===- tensorboard.h - TensorBoard event files of a run ------*- C++ -*-===//
///
/// \file
/// The training driver's `--tensorboard DIR`: the scalars of the JSONL
/// metrics (loss, lr, grad_norm, tokens/s, validation loss, ...) also as a
/// TensorBoard event file, DIR/events.out.tfevents.<unix time>.<host>.<pid>.<n>,
/// which `tensorboard --logdir DIR` and tensorboard's EventAccumulator read.
///
/// Format (TensorFlow's tensorflow/core/util/event.proto and
/// tensorflow/core/lib/io/record_writer.cc): a TFRecord file — per record
/// a little-endian uint64 length, the masked CRC-32C of those 8 bytes, the
/// payload, the masked CRC-32C of the payload — whose payloads are `Event`
/// protobuf messages: the first holds file_version "brain.Event:2", each
/// later one a wall time, a step and a Summary with one simple_value.
/// The protobuf wire encoding of those five fields is written directly
/// (no libprotobuf dependency). Internal to the runtime (the driver); rank 0
/// writes, flushing after every record so a crash loses nothing logged.
///
//===----------------------------------------------------------------------===//

#ifndef ZRT_SRC_TENSORBOARD_H
#define ZRT_SRC_TENSORBOARD_H

#include <cstdint>
#include <cstdio>
#include <string>

namespace zrt {

/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78) of `n` bytes, as
/// TFRecord uses it (RFC 3720 appendix B.4; check value of "123456789":
/// 0xE3069283).
uint32_t crc32c(const void *data, size_t n);

/// TFRecord's masked CRC: ((crc >> 15) | (crc << 17)) + 0xa282ead8.
uint32_t maskedCrc32c(const void *data, size_t n);

class EventWriter {
public:
  EventWriter() = default;
  ~EventWriter();
  EventWriter(const EventWriter &) = delete;
  EventWriter &operator=(const EventWriter &) = delete;

  /// Creates DIR (mkdir -p) and a new event file in it (a name no other run
  /// has: time, host and pid), and writes the file-version event. Returns
  /// "" or why not (DIR is a file, not writable, ...).
  std::string open(const std::string &dir);

  /// Appends one scalar: tag (e.g. "train/loss"), step, value. Returns ""
  /// or the write error.
  std::string scalar(const std::string &tag, int64_t step, double value);

  /// The event file's path ("" before open).
  const std::string &path() const { return path_; }

private:
  std::string record(const std::string &payload);
  std::FILE *f_ = nullptr;
  std::string path_;
};

} // namespace zrt

#endif // ZRT_SRC_TENSORBOARD_H
